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
