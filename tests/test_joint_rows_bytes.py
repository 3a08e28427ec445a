"""The joint histogram's merges by the rows' bytes (``engines.paired._keys``, ``_distinct``,
``_merged``): rows of unsigned counts as big-endian byte strings order as the rows do, the
blocks waiting are merged by a stable sort of those strings, and the merged rows take the new
ones by a binary search of their bytes. Checked against ``np.lexsort`` and ``np.unique`` over
the rows (independent of the bytes), for every unsigned type, rows that all come before, after,
between or on the merged ones, and rows of no column."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.engines import paired

KINDS = [np.uint8, np.uint16, np.uint32, np.uint64]


def _rows(rng: np.random.Generator, n: int, width: int, kind: type, top: int) -> np.ndarray:
    top = min(top, int(np.iinfo(kind).max))
    # Numbers on each side of every byte's edge, so that a little-endian comparison would fail.
    near = {0, 1, 255, 256, 257, 65535, 65536, top - 1, top}
    edges = np.array(sorted(e for e in near if 0 <= e <= top), dtype=np.uint64)
    rows = rng.integers(0, top + 1, size=(n, width), dtype=np.uint64)
    mask = rng.random((n, width)) < 0.3
    rows[mask] = edges[rng.integers(0, edges.size, size=int(mask.sum()))]
    return rows.astype(kind)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_byte_keys_order_as_the_rows_do(kind: type, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = _rows(rng, 500, int(rng.integers(1, 7)), kind, 1 << 62)
    order = np.argsort(paired._keys(rows), kind="stable")
    expected = np.lexsort(rows.T[::-1])  # stable too: equal rows keep their order
    assert np.array_equal(order, expected)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_distinct_rows_and_their_weights(kind: type, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    width = int(rng.integers(1, 6))
    # Runs of sorted rows (blocks of histograms) and unsorted rows alike.
    runs = [np.unique(_rows(rng, int(rng.integers(1, 80)), width, kind, 3), axis=0) for _ in range(6)]
    rows = np.concatenate([*runs, _rows(rng, 50, width, kind, 300)])
    weights = rng.integers(1, 1000, size=rows.shape[0]).astype(np.int64)
    got_rows, got_counts = paired._distinct(rows, weights)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    assert got_rows.dtype == rows.dtype
    assert np.array_equal(got_rows, distinct)
    assert np.array_equal(got_counts, np.bincount(inverse.reshape(-1), weights=weights).astype(np.int64))


def _histogram(rows: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    distinct = np.unique(rows, axis=0)
    return distinct, rng.integers(1, 50, size=distinct.shape[0]).astype(np.int64)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["mixed", "before", "after", "same", "inside"])
def test_merged_is_both_histograms_counted_at_once(kind: type, where: str) -> None:
    rng = np.random.default_rng(KINDS.index(kind) * 10 + len(where))
    width = 4
    rows, counts = _histogram(_rows(rng, 400, width, kind, 5), rng)
    if where == "mixed":
        more_rows = _rows(rng, 300, width, kind, 7)
    elif where == "before":
        more_rows = rows[:50].copy()
        more_rows[:, 0] = 0
        rows = rows[rows[:, 0] > 0]
        counts = counts[: rows.shape[0]]
    elif where == "after":
        more_rows = _rows(rng, 60, width, kind, 5)
        more_rows[:, 0] = 6
    elif where == "same":
        more_rows = rows[rng.permutation(rows.shape[0])[:100]]
    else:  # new rows between merged ones only
        more_rows = _rows(rng, 200, width, kind, 5)
        more_rows[:, -1] = 6
    more, more_counts = _histogram(more_rows, rng)
    got_rows, got_counts = paired._merged(rows, counts, more, more_counts)
    both = np.concatenate((rows, more))
    distinct, inverse = np.unique(both, axis=0, return_inverse=True)
    expected = np.bincount(inverse.reshape(-1), weights=np.concatenate((counts, more_counts))).astype(np.int64)
    assert got_rows.dtype == rows.dtype
    assert np.array_equal(got_rows, distinct)
    assert np.array_equal(got_counts, expected)
    assert got_rows.flags.c_contiguous and got_rows.flags.owndata


def test_rows_of_no_column_are_one_row() -> None:
    rows = np.zeros((5, 0), dtype=np.uint8)
    got_rows, got_counts = paired._distinct(rows, np.arange(1, 6, dtype=np.int64))
    assert got_rows.shape == (1, 0) and got_counts.tolist() == [15]
    merged_rows, merged_counts = paired._merged(got_rows, got_counts, got_rows, np.array([4], dtype=np.int64))
    assert merged_rows.shape == (1, 0) and merged_counts.tolist() == [19]
