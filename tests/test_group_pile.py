"""``analysis.buckets._Pile``: a group's joint histogram in a bucket comparison, merged as its
blocks come and held as ``engines.paired.JointRows`` holds the corpus's (rows in bytes where the
counts fit). Whatever the blocks (as counted here, in 16-bit rows, or as a worker ships them, in
bytes with 16-bit counts), their counts and the merge bounds, it gives what merging the blocks'
rows as one ``Histogram`` gives (the pile as first written), byte for byte, zero rows included."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.analysis.buckets import _Pile
from spanscore.engines.paired import shipped
from spanscore.stages import documents
from spanscore.stages.documents import Histogram

FIELDS = tuple(f"{s}:c{j}" for s in (0, 1) for j in range(5))


def _blocks(rng: np.random.Generator, n: int, top: int, low: int = 0) -> list[Histogram]:
    """``n`` blocks of a group's per-document joint rows (repeats among them, many zeros)."""
    out = []
    for _ in range(n):
        docs = int(rng.integers(1, 300))
        stats = rng.integers(low, top + 1, size=(docs, len(FIELDS))) * (rng.random((docs, len(FIELDS))) < 0.3)
        out.append(Histogram.of(stats.astype(np.int64), FIELDS))
    return out


def _old_pile(blocks: list[Histogram], documents_: int) -> Histogram:
    """The pile as first written: every block's rows and counts merged by ``Histogram.of`` (in
    64-bit integers), then the documents without a row added as zero rows."""
    rows = np.concatenate([b.rows.astype(np.int64) for b in blocks])
    counts = np.concatenate([b.counts.astype(np.int64) for b in blocks])
    missing = documents_ - int(counts.sum())
    if missing > 0:
        rows = np.concatenate((rows, np.zeros((1, len(FIELDS)), dtype=np.int64)))
        counts = np.concatenate((counts, [missing]))
    return Histogram.of(rows, FIELDS, counts)


def _same(got: Histogram, want: Histogram) -> None:
    assert got.fields == want.fields
    assert got.rows.dtype == want.rows.dtype
    assert np.array_equal(got.rows, want.rows)
    assert got.counts.dtype == want.counts.dtype == np.int64
    assert np.array_equal(got.counts, want.counts)


@pytest.mark.parametrize("pile_rows", [1, 16, 2048])
@pytest.mark.parametrize("top", [3, 300, 70_000])
@pytest.mark.parametrize("extra", [0, 1, 5000])
def test_the_pile_is_the_old_merge(monkeypatch: pytest.MonkeyPatch, pile_rows: int, top: int, extra: int) -> None:
    """Counts within a byte, past a byte and past 16 bits; merge bounds of one row, a few and
    the default; no document left out, one, and many (zero rows)."""
    monkeypatch.setattr(documents, "PILE_ROWS", pile_rows)
    rng = np.random.default_rng(top + pile_rows + extra)
    blocks = _blocks(rng, 25, top)
    pile = _Pile(FIELDS)
    for k, b in enumerate(blocks):
        # Some blocks as a worker ships them (bytes, 16-bit counts), some as counted here.
        pile.add(shipped(b, home=-1) if k % 2 else b)
    total = sum(b.documents for b in blocks) + extra
    _same(pile.with_zeros(total), _old_pile(blocks, total))


def test_rows_wait_and_merge_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group's small counts are held in bytes, merged and waiting, whether the blocks came in
    16 bits or in bytes; a count past a byte widens what holds it, and the histogram comes out
    in 16-bit rows, as ``Histogram.of`` makes it."""
    monkeypatch.setattr(documents, "PILE_ROWS", 40)
    rng = np.random.default_rng(1)
    blocks = _blocks(rng, 12, 9)
    assert all(b.rows.dtype == np.int16 for b in blocks)
    pile = _Pile(FIELDS)
    for b in blocks:
        pile.add(b)
    assert pile.merged.rows.shape[0] and pile.merged.rows.dtype == np.uint8
    assert all(w.rows.dtype == np.uint8 for w in pile.waiting)
    assert all(w.counts.dtype.itemsize <= 2 for w in pile.waiting)  # a block's counts are small too
    big = Histogram.of(np.full((1, len(FIELDS)), 1000, dtype=np.int64), FIELDS)
    pile.add(big)
    pile.joint._merge()
    assert pile.merged.rows.dtype == np.uint16
    got = pile.merge()  # the merged rows handed over, widened where they lie
    assert got.rows.dtype == np.int16 and int(got.rows.max()) == 1000
    _same(got, _old_pile([*blocks, big], 0))


def test_blocks_waiting_stay_within_the_piles_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows waiting beside the merged ones never pass ``PILE_ROWS`` or twice the merged rows by
    more than one block (``Histogram.pile``'s rule), whatever type they came in."""
    monkeypatch.setattr(documents, "PILE_ROWS", 100)
    rng = np.random.default_rng(4)
    blocks = _blocks(rng, 80, 4)
    pile = _Pile(FIELDS)
    for k, b in enumerate(blocks):
        pile.add(shipped(b, home=-1) if k % 3 else b)
        waiting = sum(w.rows.shape[0] for w in pile.waiting)
        assert waiting <= max(100, 2 * pile.merged.rows.shape[0])
    _same(pile.with_zeros(0), _old_pile(blocks, 0))


def test_negative_rows_merge_as_histograms_do() -> None:
    rng = np.random.default_rng(2)
    blocks = _blocks(rng, 6, 5, low=-5)
    pile = _Pile(FIELDS)
    for b in blocks:
        pile.add(b)
    total = sum(b.documents for b in blocks) + 7
    _same(pile.with_zeros(total), _old_pile(blocks, total))


def test_an_empty_pile_is_its_zero_documents() -> None:
    pile = _Pile(FIELDS)
    assert pile.merge().rows.shape == (0, len(FIELDS))
    got = pile.with_zeros(4)
    assert got.rows.dtype == np.int16 and np.array_equal(got.rows, np.zeros((1, len(FIELDS))))
    assert got.counts.tolist() == [4]
    assert pile.with_zeros(0).documents == 0
