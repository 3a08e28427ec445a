"""The pairing's histograms finished in bytes (engines/paired.py, analysis/buckets.py): the corpus's
joint histogram and every group's, with its zero row, are handed on in bytes as they are merged
(``JointRows.histogram(in_bytes=True)``, ``_Pile.finished``), never copied to 16 bits and back.
They are the histograms the 16-bit path gives narrowed to bytes (``in_bytes``): the same rows,
order, types and counts, for every kind of rows (bytes, past 255, negative, no rows at all), and
finishing the groups holds little more than their bytes (the 16-bit path held five times them)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from spanscore.analysis.buckets import _Groups, _Pile, in_bytes
from spanscore.engines.paired import JointRows, shipped
from spanscore.stages.documents import Histogram

FIELDS = tuple(f"{k}:{f}" for k in range(2) for f in ("reference", "predicted", "tp", "fp", "tok"))
WIDE = tuple(f"{k}:c{j}" for k in range(2) for j in range(20))  # as wide as a joint row's share


def _blocks(
    rng: np.random.Generator, n: int, size: int, top: int, zero: bool, sign: int = 1, fields: tuple[str, ...] = FIELDS
) -> list[Histogram]:
    """``n`` blocks of ``size`` documents' rows of counts up to ``top`` (a zero row among them
    where ``zero``), each a histogram as a chunk's are (some shipped in bytes, as workers send)."""
    out = []
    for k in range(n):
        rows = rng.integers(0, top + 1, size=(size, len(fields)))
        rows[:, 0] += 1
        if zero and k == n // 2:
            rows[0] = 0
        h = Histogram.of(sign * rows, fields)
        out.append(shipped(h, -1) if k % 2 else h)
    return out


def _same(got: Histogram, want: Histogram) -> None:
    assert got.rows.dtype == want.rows.dtype
    assert got.rows.flags.c_contiguous
    np.testing.assert_array_equal(got.rows, want.rows)
    np.testing.assert_array_equal(got.counts, want.counts)
    assert got.counts.dtype == want.counts.dtype
    assert got.fields == want.fields
    assert got.documents == want.documents
    assert not got.pending


CASES = [
    pytest.param(3, True, 1, id="bytes, a zero row"),
    pytest.param(3, False, 1, id="bytes"),
    pytest.param(300, False, 1, id="past 255"),
    pytest.param(3, False, -1, id="negative"),
]


@pytest.mark.parametrize(("top", "zero", "sign"), CASES)
@pytest.mark.parametrize("least", [0, 64])
def test_joint_histogram_in_bytes_is_the_narrowed_one(top: int, zero: bool, sign: int, least: int) -> None:
    rng = np.random.default_rng(top + least)
    blocks = _blocks(rng, 7, 300, top, zero, sign)
    sides = [JointRows(least=least), JointRows(least=least)]
    for block in blocks:
        for joint in sides:
            joint.add(block)
    wide = sides[0].histogram()
    got = sides[1].histogram(in_bytes=True)
    assert wide is not None and got is not None
    _same(got, in_bytes(wide))
    assert (got.rows.dtype == np.uint8) == (top <= 255 and sign > 0)
    assert JointRows().histogram(in_bytes=True) is None


@pytest.mark.parametrize(("top", "zero", "sign"), CASES)
@pytest.mark.parametrize("extra", [0, 1, 1000])
def test_group_finished_in_bytes_is_the_narrowed_one(top: int, zero: bool, sign: int, extra: int) -> None:
    # ``_Pile.finished`` against the 16-bit path it replaces: ``in_bytes(_Pile.with_zeros(n))``.
    rng = np.random.default_rng(top + extra)
    blocks = _blocks(rng, 9, 200, top, zero, sign)
    sides = [_Pile(FIELDS), _Pile(FIELDS)]
    for block in blocks:
        for pile in sides:
            pile.add(block)
    documents = sum(b.documents for b in blocks) + extra
    _same(sides[1].finished(documents), in_bytes(sides[0].with_zeros(documents)))


@pytest.mark.parametrize("documents", [0, 1, 50])
def test_empty_group_finished_as_before(documents: int) -> None:
    _same(_Pile(FIELDS).finished(documents), in_bytes(_Pile(FIELDS).with_zeros(documents)))


def _groups(blocks: list[Histogram]) -> _Groups:
    groups = _Groups(2)
    groups.name(0, ["A", "B"])
    groups.fields = WIDE
    for k, block in enumerate(blocks):
        pile = groups.hists.setdefault(k % 2, _Pile(WIDE))
        pile.add(block)
    return groups


def test_groups_finished_holds_little_more_than_their_bytes() -> None:
    # Two groups of 40,000 distinct rows each in bytes, finished with their zero rows: the traced
    # peak beyond what the piles held is one group's finished rows (its rows with a zero row in
    # front) and counts, not a 16-bit copy of its rows and a 16-bit copy with zeros besides.
    rng = np.random.default_rng(11)
    blocks = _blocks(rng, 8, 10_000, 200, False, fields=WIDE)
    documents = sum(b.documents for b in blocks) + 5
    want = {
        k: in_bytes(p.with_zeros(documents)) for k, p in _groups(blocks).hists.items()
    }
    tracemalloc.start()  # before the piles are made: their rows' frees are traced too
    try:
        groups = _groups(blocks)
        for pile in groups.hists.values():
            pile.joint._merge()  # every block merged: what is held is the merged rows
        held = sum(p.joint.rows.nbytes for p in groups.hists.values() if p.joint.rows is not None)
        del pile
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out = groups.finished(documents)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert held > 2_000_000
    got = dict(out["per_type"])
    for k, label in enumerate(("A", "B")):
        _same(got[label], want[k])
    # The 16-bit path held a group's 16-bit rows, its 16-bit copy with zeros and its bytes: twice
    # and a half what both groups hold.
    assert peak < 0.8 * held, (peak, held)


def test_compare_joint_in_bytes(tmp_path: Any) -> None:
    # ``compare``'s corpus histogram (``run_paired``) comes in bytes, and its tests and each
    # system's per-document state are those of the 16-bit histogram.
    from dataclasses import replace

    from test_compare import perturb, write_conll

    import spanscore
    from spanscore.analysis.buckets import compare_groupings
    from spanscore.analysis.significance import Resampling
    from spanscore.api import _system_state
    from spanscore.engines import paired

    rng = np.random.default_rng(2)
    words = [
        [f"w{rng.integers(50)}\t{'B-PER' if rng.random() < 0.2 else 'O'}" for _ in range(8)] for _ in range(400)
    ]
    gold = write_conll(tmp_path / "gold.conll", words)
    a = write_conll(tmp_path / "a.conll", perturb(words, 1, 0.4))
    b = write_conll(tmp_path / "b.conll", perturb(words, 2, 0.3))
    seen: list[Any] = []
    original = paired.run_paired

    def kept(*args: Any, **kwargs: Any) -> Any:
        got = original(*args, **kwargs)
        seen.append(got.joint)
        return got

    paired.run_paired = kept  # type: ignore[assignment]
    try:
        result = spanscore.compare(reference=gold, systems=[a, b], resamples=100, trials=100, seed=1)
    finally:
        paired.run_paired = original  # type: ignore[assignment]
    (joint,) = seen
    assert joint.rows.dtype == np.uint8
    wide = replace(joint, rows=joint.rows.astype(np.int16))
    options: dict[str, Any] = {
        "zero_division": 0.0, "credit": "0.5", "resampling": Resampling(resamples=100, trials=100, seed=1),
    }
    narrow_tests = compare_groupings(joint, {}, ["a", "b"], **options)[0]
    wide_tests = compare_groupings(wide, {}, ["a", "b"], **options)[0]
    assert narrow_tests is not None and wide_tests is not None
    assert narrow_tests.comparisons == wide_tests.comparisons and narrow_tests.intervals == wide_tests.intervals
    for k in range(2):
        one, other = _system_state(joint, k, "document"), _system_state(wide, k, "document")
        np.testing.assert_array_equal(one.closed.rows, other.closed.rows)
        np.testing.assert_array_equal(one.closed.counts, other.closed.counts)
    assert result.tests is not None


@pytest.mark.parametrize(("least", "share", "most"), [(0, 0.5, 300), (64, 1.0, 500), (64, 2.0, 0), (0, 0.5, 0)])
def test_waiting_rows_bounded_and_the_same_histogram(least: int, share: float, most: int) -> None:
    # Blocks wait for at most ``most`` rows (and one block) once the merged rows are many; the
    # histogram is every block's rows counted at once, whatever the bound.
    rng = np.random.default_rng(most + least)
    blocks = _blocks(rng, 40, 120, 2, True)
    joint = JointRows(least=least or 1, share=share, most=most)
    waited = 0
    for block in blocks:
        joint.add(block)
        waited = max(waited, joint.waiting_rows)
        merged = 0 if joint.rows is None else joint.rows.shape[0]
        bound = int(merged * share) if not most else min(int(merged * share), most)
        assert joint.waiting_rows <= max(least or 1, bound)
    if most:
        assert waited <= most
    rows = np.concatenate([b.rows.astype(np.int64) for b in blocks])
    whole = Histogram.of(rows, FIELDS, np.concatenate([b.counts.astype(np.int64) for b in blocks]))
    got = joint.histogram()
    assert got is not None
    _same(got, whole)
