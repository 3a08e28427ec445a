"""``engines.paired.JointRows``: the systems' joint histogram merged as its blocks come, its rows
held in the narrowest unsigned integers (bytes for a document's small counts). Whatever the
blocks, their order, their types (as a worker ships them or as they are counted) and the merges,
it gives the histogram that merging the blocks as ``Histogram``s gives, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.engines import paired
from spanscore.engines.paired import JointRows, landed, shipped
from spanscore.stages.documents import Histogram

FIELDS = tuple(f"{s}:c{j}" for s in (0, 1) for j in range(6))


def _blocks(rng: np.random.Generator, n: int, top: int, low: int = 0) -> list[Histogram]:
    """``n`` blocks of per-document rows (a few hundred documents each, repeats among them)."""
    out = []
    for _ in range(n):
        docs = int(rng.integers(1, 400))
        stats = rng.integers(low, top + 1, size=(docs, len(FIELDS))) * (rng.random((docs, len(FIELDS))) < 0.3)
        out.append(Histogram.of(stats.astype(np.int64), FIELDS))
    return out


def _reference(blocks: list[Histogram]) -> Histogram:
    whole = blocks[0]
    for b in blocks[1:]:
        whole = whole.pile(landed(b))
    return whole.compacted()


def _same(got: Histogram | None, want: Histogram) -> None:
    assert got is not None
    assert got.fields == want.fields
    assert got.rows.dtype == want.rows.dtype
    assert np.array_equal(got.rows, want.rows)
    assert got.counts.dtype == want.counts.dtype == np.int64
    assert np.array_equal(got.counts, want.counts)


@pytest.mark.parametrize("merge_rows", [1, 50, 8192])
@pytest.mark.parametrize("top", [3, 300, 70_000])
def test_the_merged_rows_are_the_histograms_merge(monkeypatch: pytest.MonkeyPatch, merge_rows: int, top: int) -> None:
    monkeypatch.setattr(paired, "MERGE_ROWS", merge_rows)
    rng = np.random.default_rng(top + merge_rows)
    blocks = _blocks(rng, 30, top)
    joint = JointRows()
    for k, b in enumerate(blocks):
        # Some blocks as a worker ships them (bytes, 16-bit counts), some as counted here.
        joint.add(shipped(b, home=-1) if k % 2 else b)
    _same(joint.histogram(), _reference(blocks))


def test_rows_of_small_counts_are_held_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paired, "MERGE_ROWS", 10)
    rng = np.random.default_rng(1)
    joint = JointRows()
    for b in _blocks(rng, 5, 9):
        joint.add(b)
    assert joint.rows is not None and joint.rows.dtype == np.uint8
    assert all(r.dtype == np.uint8 for r, _ in joint.waiting)
    # A count past a byte widens the merged rows to what holds it, and only then.
    big = Histogram.of(np.full((1, len(FIELDS)), 1000, dtype=np.int64), FIELDS)
    joint.add(big)
    joint._merge()
    assert joint.rows is not None and joint.rows.dtype == np.uint16
    h = joint.histogram()
    assert h is not None and h.rows.dtype == np.int16 and int(h.rows.max()) == 1000


def test_negative_rows_merge_as_histograms_do() -> None:
    rng = np.random.default_rng(2)
    blocks = _blocks(rng, 6, 5, low=-5)
    joint = JointRows()
    for b in blocks:
        joint.add(b)
    _same(joint.histogram(), _reference(blocks))


def test_piled_blocks_and_other_statistics() -> None:
    rng = np.random.default_rng(3)
    a, b, c = _blocks(rng, 3, 4)
    joint = JointRows()
    joint.add(a.pile(b))  # a block with histograms still piled up in it
    joint.add(c)
    _same(joint.histogram(), _reference([a, b, c]))
    other = Histogram.of(np.ones((2, 3), dtype=np.int64), ("x", "y", "z"))
    with pytest.raises(ValueError):
        joint.add(other)
    assert JointRows().histogram() is None


def test_blocks_waiting_are_merged_past_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows waiting beside the merged ones never pass ``MERGE_ROWS`` (or half the merged rows)
    by more than one block."""
    monkeypatch.setattr(paired, "MERGE_ROWS", 300)
    rng = np.random.default_rng(4)
    blocks = _blocks(rng, 60, 6)
    joint = JointRows()
    for b in blocks:
        joint.add(b)
        merged = 0 if joint.rows is None else joint.rows.shape[0]
        assert joint.waiting_rows <= max(300, merged // 2)
        assert joint.waiting_rows == sum(r.shape[0] for r, _ in joint.waiting)
    _same(joint.histogram(), _reference(blocks))


def test_a_small_histogram_piles_up_at_most_pile_rows() -> None:
    """``Histogram.pile``: a small histogram (one bucket's, one type's) merges what is piled up
    once it passes ``PILE_ROWS`` rows, so dozens of them hold a bounded number of rows whatever
    the corpus; the merge is the same histogram."""
    from spanscore.stages import documents

    rng = np.random.default_rng(5)
    blocks = _blocks(rng, 200, 2)
    h = blocks[0]
    for b in blocks[1:]:
        h = h.pile(b)
        piled = h.rows.shape[0] + sum(p.rows.shape[0] for p in h.pending)
        assert piled <= max(documents.PILE_ROWS, 2 * h.base) + b.rows.shape[0]
    whole = Histogram.of(
        np.concatenate([b.rows for b in blocks]).astype(np.int64), FIELDS, np.concatenate([b.counts for b in blocks])
    )
    _same(h.compacted(), whole)
