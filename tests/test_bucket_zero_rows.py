"""A bucket's joint histogram finished in its rows' own integers (analysis/buckets.py): the
documents without a mention in the bucket added as a zero row (``_Pile.with_zeros``) and the
mention totals read column by column (``_column_total``) give what ``Histogram.with_zeros`` and
``Histogram.total`` give, the same rows, type and counts (tests/test_histogram_narrow.py: neither
makes a 64-bit copy of the rows). The
groups' histograms held in bytes (``in_bytes``) give the paired tests the same numbers as in
16 bits, and handing the heap's free pages back changes no result."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import buckets
from spanscore.analysis.buckets import _column_total, _Pile, compare_groupings, in_bytes, joint_groups
from spanscore.analysis.significance import Resampling
from spanscore.runtime import memory
from spanscore.stages.documents import Histogram

FIELDS = tuple(f"{k}:{f}" for k in range(2) for f in ("reference", "predicted", "tp", "fp"))


def _rows(rng: np.random.Generator, n: int, top: int, zero: bool) -> Any:
    """``n`` random documents' rows of small counts (one of them all zeros where ``zero``)."""
    rows = rng.integers(0, top + 1, size=(n, len(FIELDS)))
    rows[:, 0] += 1  # no zero row by chance
    if zero:
        rows[n // 2] = 0
    return rows


def _same(got: Histogram, want: Histogram) -> None:
    assert got.rows.dtype == want.rows.dtype
    assert got.rows.flags.c_contiguous
    np.testing.assert_array_equal(got.rows, want.rows)
    np.testing.assert_array_equal(got.counts, want.counts)
    assert got.counts.dtype == want.counts.dtype
    assert got.fields == want.fields
    assert got.documents == want.documents


def test_pile_adds_zero_rows_as_before() -> None:
    # A group's pile merged from blocks (bytes, as the workers ship them), then finished.
    rng = np.random.default_rng(3)
    pile = _Pile(FIELDS)
    blocks = [Histogram.of(_rows(rng, 500, 2, False), FIELDS) for _ in range(9)]
    for block in blocks:
        pile.add(block)
    whole = blocks[0]
    for block in blocks[1:]:
        whole = whole.merge(block)
    _same(pile.with_zeros(whole.documents + 1000), whole.with_zeros(whole.documents + 1000))


@pytest.mark.parametrize("top", [3, 40_000])
def test_column_totals_as_the_whole_total(top: int) -> None:
    rng = np.random.default_rng(top)
    hist = Histogram.of(_rows(rng, 400, top, True), FIELDS)
    piled = hist.pile(Histogram.of(_rows(rng, 50, top, False), FIELDS))
    for h in (hist, piled):
        total = h.total()
        for j, name in enumerate(FIELDS):
            got = _column_total(h, name)
            assert type(got) is int
            assert got == int(total[j])
    # 32-bit rows whose total needs 64 bits: summed in 64-bit integers, as ``total``.
    big = Histogram(np.full((3, len(FIELDS)), 2**31 - 1, dtype=np.int32), np.array([2**20, 5, 7]), FIELDS)
    assert _column_total(big, FIELDS[2]) == (2**31 - 1) * (2**20 + 12) == int(big.total()[2])


def test_rows_in_bytes_where_they_fit() -> None:
    rng = np.random.default_rng(5)
    small = Histogram.of(_rows(rng, 200, 3, True), FIELDS)
    narrow = in_bytes(small)
    assert narrow.rows.dtype == np.uint8 and small.rows.dtype == np.int16
    np.testing.assert_array_equal(narrow.rows, small.rows)
    assert narrow.counts is small.counts and narrow.fields == small.fields
    for kept in (Histogram.of(_rows(rng, 50, 300, False), FIELDS), Histogram.of(-_rows(rng, 5, 2, False), FIELDS)):
        assert in_bytes(kept) is kept  # a count past 255, or a negative one: as they are


def test_paired_tests_equal_on_rows_in_bytes(btc: Path, tmp_path: Path) -> None:
    # BTC's test split with two perturbed systems: every group's paired tests (per type, per
    # length bucket) from the groups' histograms as held (bytes) and widened to 16 bits (as
    # ``Histogram.of`` keeps them) are the same numbers, with the heap's pages handed back or not.
    gold = sentences(btc / "test.txt")[:1500]
    files = [
        write_conll(tmp_path / "gold.conll", gold),
        write_conll(tmp_path / "a.conll", perturb(gold, 1, 0.45)[:1500]),
        write_conll(tmp_path / "b.conll", perturb(gold, 2, 0.35)[:1500]),
    ]
    reports = [
        spanscore.evaluate(
            reference=files[0], predicted=p, documents=True, document_types=True, buckets=["length"],
            keep_details=False,
        )
        for p in files[1:]
    ]
    groupings = {
        "per_type": joint_groups([(r.documents, r.documents.type_rows) for r in reports if r.documents], "0.5"),
        "length": joint_groups([(r.documents, (r.bucket_rows or {})["length"]) for r in reports if r.documents], "0.5"),
    }
    held = [h for groups in groupings.values() for _, h in groups]
    assert held and all(h.rows.dtype == np.uint8 for h in held)
    wide = {
        g: [(label, replace(h, rows=h.rows.astype(np.int16))) for label, h in groups] for g, groups in groupings.items()
    }
    options: dict[str, Any] = {
        "zero_division": 0.0, "credit": "0.5", "resampling": Resampling(resamples=200, trials=200, seed=3),
    }
    expected = compare_groupings(None, wide, ["a", "b"], **options)[1]
    assert compare_groupings(None, groupings, ["a", "b"], **options)[1] == expected
    calls = []
    original = memory.release_freed_memory

    def counted() -> bool:
        calls.append(1)
        return original()

    buckets.release_freed_memory = counted  # type: ignore[assignment]
    try:
        assert compare_groupings(None, groupings, ["a", "b"], **options)[1] == expected
    finally:
        buckets.release_freed_memory = original
    assert calls


def test_release_hands_free_pages_back_on_glibc() -> None:
    # In a process set up as the CLI sets it up (freed blocks kept for reuse), the pages of
    # freed 8 MB blocks stay resident until they are handed back. Run apart: the settings are
    # the whole process's.
    import os
    import subprocess
    import sys

    if not os.confstr("CS_GNU_LIBC_VERSION"):
        pytest.skip("not glibc")
    script = """
import os
from spanscore.runtime import memory
assert memory.keep_freed_memory()
import numpy as np
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
blocks = [np.ones(1 << 20) for _ in range(8)]  # 8 MB each, written
keep = np.ones(1 << 10)  # above them in the heap, so they are not its top
full = resident()
del blocks
kept = resident()
assert memory.release_freed_memory()
print(full, kept, resident())
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    full, kept, released = map(int, out.stdout.split())
    assert kept > full - 8  # freed, but kept resident for reuse
    assert released < kept - 48  # handed back
