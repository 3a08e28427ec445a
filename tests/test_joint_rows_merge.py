"""The systems' joint histogram merged as its blocks come (``engines.paired.JointRows``): each
merge merges the blocks waiting on their own, then writes them and the merged rows into one new
array by their places in the merged order (no concatenation of the merged rows beside them).
Checked against the histogram of every block's rows concatenated and counted at once
(``Histogram.of``, the old way and an independent count with ``np.unique``), for random blocks
and orders, merge thresholds, narrow and wide counts and negative columns."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.engines import paired
from spanscore.engines.paired import JointRows
from spanscore.stages.documents import Histogram, compact_rows


def _blocks(rng: np.random.Generator, top: int, width: int, negative: bool) -> list[Histogram]:
    fields = tuple(f"c{j}" for j in range(width))
    out = []
    for _ in range(int(rng.integers(1, 25))):
        n = int(rng.integers(1, 300))
        stats = rng.integers(-top if negative else 0, top + 1, size=(n, width))
        stats[:, rng.integers(0, width)] = 0  # a column always zero
        if rng.random() < 0.5:
            stats[: n // 2] = stats[0]  # repeated rows within a block
        out.append(Histogram.of(stats, fields))
    return out


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("top", [1, 3, 300, 40000, 1 << 40])
def test_the_merged_histogram_is_every_blocks_rows_counted_at_once(seed: int, top: int) -> None:
    rng = np.random.default_rng(seed * 101 + top % 997)
    width = int(rng.integers(1, 9))
    negative = seed % 4 == 3
    blocks = _blocks(rng, top, width, negative)
    whole = Histogram.of(
        np.concatenate([b.rows.astype(np.int64) for b in blocks]),
        blocks[0].fields,
        np.concatenate([b.counts for b in blocks]),
    )
    # An independent count of the same rows: np.unique over the rows each document holds.
    every = np.repeat(
        np.concatenate([b.rows.astype(np.int64) for b in blocks]), np.concatenate([b.counts for b in blocks]), axis=0
    )
    distinct, counts = np.unique(every, axis=0, return_counts=True)
    for least, share in ((0, 0.5), (1, 0.0), (50, 2.0), (10**9, 0.5)):
        for order in (range(len(blocks)), rng.permutation(len(blocks))):
            joint = JointRows(least=least, share=share)
            for i in order:
                joint.add(blocks[int(i)])
            got = joint.histogram()
            assert got is not None
            assert got.rows.dtype == whole.rows.dtype
            assert np.array_equal(got.rows, whole.rows)
            assert np.array_equal(got.counts, whole.counts)
            assert np.array_equal(got.rows.astype(np.int64), distinct)
            assert np.array_equal(got.counts, counts)
            assert got.rows.flags.c_contiguous


def test_no_block_is_no_histogram() -> None:
    assert JointRows().histogram() is None


@pytest.mark.parametrize("top", [0, 200, 255, 256, 32767, 32768, 70000, (1 << 31) - 1, 1 << 31, 1 << 40])
@pytest.mark.parametrize("kind", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_rows_widened_where_they_lie_are_compact_rows(top: int, kind: type) -> None:
    """``_widened`` against ``compact_rows`` of the same rows (a copy made first): the same
    numbers in the same type, for every unsigned type, each side of each type's bound, and with
    more rows than one block widened at a time (the blocks from the last: no narrow number is
    overwritten before it is read)."""
    if top > np.iinfo(kind).max:
        return
    rng = np.random.default_rng(top % 1000)
    for n in (0, 1, 7, paired._FILL_ROWS * 2 + 3):
        rows = rng.integers(0, top + 1, size=(n, 5), dtype=np.uint64).astype(kind)
        if n:
            rows[-1, -1] = top
        expected = compact_rows(rows.astype(np.int64)) if n else rows
        if n and expected.dtype == np.int64:
            expected = rows  # past 32 bits: ``compact_rows`` leaves the rows as they are
        got = paired._widened(rows.copy())
        assert got.dtype == expected.dtype
        assert np.array_equal(got, expected)
