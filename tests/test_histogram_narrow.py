"""``Histogram.with_zeros`` and ``Histogram.total`` in the rows' own integers (stages/documents.py).

A histogram's rows are held in 16 bits (bytes for a bucket's groups); ``with_zeros`` used to write
them beside a 64-bit zero row and ``total`` to sum them as ``counts @ rows``, both a 64-bit copy
of every row for a moment: eight times a 16-bit histogram's bytes (at 1M sentences a bucket's
166,000 rows of 84 columns, 112 MB). Each is checked against an independent count (the histogram
of the rows with a zero row weighted by the documents missing; the sum of every document's row
written out), and its peak memory held under a copy of the rows."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from spanscore.analysis.buckets import _Pile
from spanscore.stages.documents import TOTAL_BLOCK, Histogram

FIELDS = tuple(f"{k}:{f}" for k in range(2) for f in ("reference", "predicted", "tp", "fp"))


def _rows(rng: np.random.Generator, n: int, top: int, zero: bool) -> Any:
    rows = rng.integers(0, top + 1, size=(n, len(FIELDS)))
    rows[:, 0] += 1  # no zero row by chance
    if zero:
        rows[n // 2] = 0
    return rows


def _reference(hist: Histogram, documents: int) -> Histogram:
    """The documents missing as one more distinct row of zeros, the histogram made afresh."""
    missing = documents - hist.documents
    zero = np.zeros((1, len(hist.fields)), dtype=np.int64)
    rows = np.concatenate((zero, hist.rows.astype(np.int64))) if hist.rows.size else zero
    return Histogram.of(rows, hist.fields, np.concatenate(([missing], hist.counts)).astype(np.int64))


def _same(got: Histogram, want: Histogram) -> None:
    assert got.rows.dtype == want.rows.dtype
    assert got.rows.flags.c_contiguous
    np.testing.assert_array_equal(got.rows, want.rows)
    np.testing.assert_array_equal(got.counts, want.counts)
    assert got.counts.dtype == want.counts.dtype
    assert got.fields == want.fields
    assert got.documents == want.documents


@pytest.mark.parametrize("top", [3, 200, 40_000, 3_000_000_000])  # 16, 16, 32 and 64-bit rows
@pytest.mark.parametrize("zero", [False, True])
@pytest.mark.parametrize("missing", [0, 1, 17])
@pytest.mark.parametrize("narrow", [False, True])  # rows in bytes where they fit (a bucket's groups)
def test_with_zeros_as_a_fresh_histogram(top: int, zero: bool, missing: int, narrow: bool) -> None:
    rng = np.random.default_rng(top + 7 * zero + missing)
    hist = Histogram.of(_rows(rng, 300, top, zero), FIELDS)
    if narrow and top < 256:
        hist = Histogram(hist.rows.astype(np.uint8), hist.counts, FIELDS)
    documents = hist.documents + missing
    got = hist.with_zeros(documents)
    if missing == 0:
        assert got is hist
    else:
        _same(got, _reference(hist, documents))
        assert got.documents == documents


def test_with_zeros_of_an_empty_histogram_of_negative_rows_and_of_too_few() -> None:
    empty = Histogram(np.zeros((0, len(FIELDS)), dtype=np.int64), np.zeros(0, dtype=np.int64), FIELDS)
    got = empty.with_zeros(5)
    assert got.rows.dtype == np.int16 and got.rows.shape == (1, len(FIELDS)) and not got.rows.any()
    assert got.counts.tolist() == [5]
    signed = Histogram.of(np.array([[-1, 2, 0, 0, 1, 1, 0, 0], [3, -2, 1, 0, 0, 0, 1, 1]]), FIELDS)
    _same(signed.with_zeros(9), _reference(signed, 9))
    with pytest.raises(ValueError, match="more documents"):
        signed.with_zeros(1)
    # A group's pile finished with fewer documents than it holds: as it is.
    pile = _Pile(FIELDS)
    pile.add(Histogram.of(_rows(np.random.default_rng(1), 40, 2, False), FIELDS))
    assert pile.with_zeros(3).documents == 40


@pytest.mark.parametrize("top", [3, 40_000, 3_000_000_000])
@pytest.mark.parametrize("n", [0, 1, TOTAL_BLOCK, 2 * TOTAL_BLOCK + 5])
def test_total_as_every_document_summed(top: int, n: int) -> None:
    rng = np.random.default_rng(top + n)
    hist = Histogram.of(_rows(rng, n, top, n > 2) if n else np.zeros((0, 8), dtype=np.int64), FIELDS)
    piled = hist.pile(Histogram.of(_rows(rng, 50, top, False), FIELDS))
    for h in (hist, piled, Histogram(hist.rows.astype(np.uint8), hist.counts, FIELDS) if top < 256 else hist):
        want = np.zeros(len(FIELDS), dtype=object)  # Python integers: no overflow to hide
        for part in (h, *h.pending):
            for row, count in zip(part.rows.tolist(), part.counts.tolist(), strict=True):
                want += np.array(row, dtype=object) * count
        got = h.total()
        assert got.dtype == np.int64
        assert got.tolist() == want.tolist()
    # 32-bit rows whose total needs 64 bits: summed in 64-bit integers.
    big = Histogram(np.full((3, len(FIELDS)), 2**31 - 1, dtype=np.int32), np.array([2**20, 5, 7]), FIELDS)
    assert int(big.total()[2]) == (2**31 - 1) * (2**20 + 12)


def _peak(work: Any) -> int:
    tracemalloc.start()
    try:
        out = work()
        return int(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
        del out


def test_with_zeros_and_total_hold_no_wide_copy_of_the_rows() -> None:
    # 40,000 rows of 84 16-bit columns: 6.7 MB. The zero row put in front costs one copy of them
    # in their own integers; the total a block's 64-bit copy. The old code widened all of them:
    # with_zeros about 8.6 times the rows' bytes at its peak, total 4 times.
    rng = np.random.default_rng(11)
    fields = tuple(f"c{j}" for j in range(84))
    hist = Histogram.of(rng.integers(1, 4, size=(40_000, 84), dtype=np.int64), fields)
    assert hist.rows.dtype == np.int16
    size = hist.rows.nbytes
    assert _peak(lambda: hist.with_zeros(hist.documents + 10)) < 1.2 * size
    assert _peak(hist.total) < 0.5 * size
    narrow = Histogram(hist.rows.astype(np.uint8), hist.counts, fields)  # a bucket's group, in bytes
    assert _peak(lambda: narrow.with_zeros(narrow.documents + 10)) < 1.2 * size  # 16 bits out, as before, written once
    assert _peak(narrow.total) < 0.5 * size
