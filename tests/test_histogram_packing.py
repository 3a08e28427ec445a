"""A histogram's rows sort by a few 64-bit words each, every column packed into the bits its
largest value needs: by a shift and an or per column for large blocks, by one integer product
for small ones. Both give the distinct rows in lexicographic order and the documents (or
weights) of each, whatever the layout and integer type of the table."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.stages import documents
from spanscore.stages.documents import Histogram


def _expected(table: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows, inverse = np.unique(table.astype(np.int64), axis=0, return_inverse=True)
    return rows, np.bincount(inverse.reshape(-1), weights=weights, minlength=rows.shape[0]).astype(np.int64)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [1, 7, documents._BY_PRODUCT - 1, documents._BY_PRODUCT, 2500])
def test_both_packings_give_the_sorted_distinct_rows(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    width = int(rng.integers(1, 90))
    # Small counts mostly, some columns always zero, a few wide ones (up to 62 bits: fields
    # that fill a word and spill into the next).
    table = rng.poisson(0.4, size=(n, width)) * (rng.random(width) < 0.7)
    wide = rng.random(width) < 0.1
    table[:, wide] = rng.integers(0, 1 << int(rng.integers(1, 63)), size=(n, int(wide.sum())))
    table[rng.random(n) < 0.5] = table[0]  # many equal rows
    weights = rng.integers(1, 9, n)
    want_rows, want_counts = _expected(table, weights)
    layouts = [table, np.ascontiguousarray(table.T).T]
    if int(table.max(initial=0)) < (1 << 15):
        layouts.append(table.astype(np.int16))
    for layout in layouts:
        h = Histogram.of(layout, tuple(f"c{i}" for i in range(width)), weights)
        assert np.array_equal(h.rows.astype(np.int64), want_rows) and np.array_equal(h.counts, want_counts)
        rows, counts = documents._counted_by_words(layout, None)
        assert np.array_equal(rows.astype(np.int64), want_rows)
        assert counts.sum() == n


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [5, documents._BY_PRODUCT, 3000])
def test_a_leading_column_sorts_as_the_first_column(seed: int, n: int) -> None:
    # A type's rank before each row (the histograms per document and type): the same order and
    # groups as the table with that column put first, without the copy.
    rng = np.random.default_rng(100 + seed)
    width = int(rng.integers(1, 50))
    table = rng.poisson(0.6, size=(n, width))
    table[rng.random(n) < 0.4] = table[0]
    lead = rng.integers(0, int(rng.integers(1, 40)), size=n)
    whole = np.column_stack((lead, table))
    want_rows, want_counts = _expected(whole, np.ones(n))
    for layout in (table, np.ascontiguousarray(table.T).T):
        firsts, counts = documents._grouped_by_words(layout, None, lead)
        assert np.array_equal(whole[firsts], want_rows) and np.array_equal(counts, want_counts)


@pytest.mark.parametrize("seed", range(6))
def test_zero_rows_added_in_front_are_the_merged_histogram(seed: int) -> None:
    # A group's documents without a mention in it, added as a zero row: in front of rows of
    # counts (or onto a zero row already there), the same rows, counts and type as merging it.
    rng = np.random.default_rng(200 + seed)
    n, width = int(rng.integers(1, 400)), int(rng.integers(1, 30))
    table = rng.poisson(0.5, size=(n, width)) * (rng.random((n, 1)) < 0.8)
    if seed == 0:
        table[:] = 0  # every row a zero row
    if seed == 1:
        table[:, 0] = 40_000  # 32-bit rows
    fields = tuple(f"c{i}" for i in range(width))
    hist = Histogram.of(table, fields)
    for total in (n, n + 1, n + 5_000):
        got = hist.with_zeros(total)
        zero = Histogram(np.zeros((1, width), dtype=np.int64), np.array([total - n or 1]), fields)
        want = hist.merge(zero) if total > n else hist
        assert np.array_equal(got.rows, want.rows) and got.rows.dtype == want.rows.dtype
        assert np.array_equal(got.counts, want.counts) and got.documents == total
    empty = Histogram.of(np.zeros((0, width), dtype=np.int64), fields)
    assert np.array_equal(empty.with_zeros(3).rows, np.zeros((1, width))) and empty.with_zeros(3).documents == 3

