"""The work the intervals do after the counting, done in fewer or cheaper steps, with the same
numbers: each table's point scores computed in the call that scores its resamples; its repeated
columns confirmed in one comparison; the Poisson tables' guide made from each table's numbers
repeated over its counts; each family's narrowing sorted on the columns that do not repeat an
earlier one. Each is checked here against an independent computation: the point scores and
bounds against ``np.quantile`` of the resamples' scores scored apart, the repeated columns
against a plain search for the first equal column, the guide against a search of each table's
bounds, and the narrowings against the same narrowing made without the repeats."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import (
    UNIFORM_BITS,
    CountTables,
    Resampling,
    _distinct_columns,
    _kept_repeats,
    _poisson_ratio,
    _Sampler,
    histogram_of,
    interval_families,
    poisson_support,
)
from spanscore.stages.documents import Histogram


@pytest.fixture(scope="module")
def state(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    folder = tmp_path_factory.mktemp("serial_end")
    gold = sentences(btc / "test.txt")
    g = write_conll(folder / "gold.conll", gold)
    p = write_conll(folder / "pred.conll", perturb(gold, 1, 0.45))
    report = spanscore.evaluate(reference=g, predicted=p, ci=0.95, keep_details=False)
    assert report.document_state is not None
    return report.document_state, report.counts.credit


@pytest.mark.parametrize(("beta", "level", "forced"), [(1.0, 0.95, False), (2.0, 0.9, False), (1.0, 0.95, True)])
def test_point_scores_and_bounds_are_those_scored_apart(
    state: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, beta: float, level: float, forced: bool
) -> None:
    doc_state, credit = state
    if forced:  # drawn by family, as large tables are
        monkeypatch.setattr(significance, "_draw_cost", lambda draws, columns: float(draws.k))
    hist = histogram_of(doc_state.closed, credit)
    resampling = Resampling(level=level, resamples=300, seed=4)
    totals = significance.resampled_totals(hist, lambda k, name: significance._overall_rng(4, k, name), 300)
    scores = significance.score_totals(totals, hist.fields, 0.0, credit, beta)
    point = significance.score_totals(
        significance.column_totals(hist.counts, hist.rows)[None, :], hist.fields, 0.0, credit, beta
    )
    got = significance.bootstrap(hist, zero_division=0.0, credit=credit, resampling=resampling, beta=beta)
    assert set(got) == set(scores)
    checked = 0
    for name, block in scores.items():
        for metric, values in block.items():
            entry = got[name][metric]
            value = float(point[name][metric][0])
            kept = values[~np.isnan(values)]
            if math.isnan(value):
                assert entry == {"value": None, "low": None, "high": None}
                continue
            assert entry["value"] == value
            if kept.shape[0]:
                low, high = np.quantile(kept, [(1 - level) / 2, (1 + level) / 2])
                assert (entry["low"], entry["high"]) == (low, high)
                checked += 1
    assert checked > 20


def first_equal_columns(stats: np.ndarray) -> tuple[list[int], list[int]]:
    """Each column's first equal column, searched plainly: the kept ones and each one's place."""
    keep: list[int] = []
    expand = []
    for c in range(stats.shape[1]):
        for i, k in enumerate(keep):
            if np.array_equal(stats[:, k], stats[:, c]):
                expand.append(i)
                break
        else:
            expand.append(len(keep))
            keep.append(c)
    return keep, expand


def test_repeated_columns_are_the_first_equal_ones() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        rows, cols = int(rng.integers(1, 40)), int(rng.integers(1, 30))
        base = rng.integers(0, int(rng.choice([2, 5, 1000])), size=(rows, cols))
        pick = rng.integers(0, cols, size=cols)  # columns copied from others, zero columns
        stats = np.where(rng.random(cols) < 0.5, base[:, pick], base)
        stats[:, rng.random(cols) < 0.1] = 0
        stats = stats.astype((np.int16, np.int64)[int(rng.integers(0, 2))])
        keep, expand = _distinct_columns(stats)
        assert (keep, expand.tolist()) == first_equal_columns(stats)


def test_columns_of_equal_sums_that_differ_are_told_apart() -> None:
    # Two columns with the same plain and weighted sums (the weights the function draws) but
    # different numbers: found equal by the sums, then told apart by the comparison.
    w = np.random.default_rng(0).integers(1, 1 << 20, size=3)
    d = np.array([w[2] - w[1], w[0] - w[2], w[1] - w[0]])
    b = np.full(3, 1 << 21)
    stats = np.stack([b + d, b, b + d, b - d, b], axis=1).astype(np.int64)
    assert stats[:, 0].sum() == stats[:, 1].sum() and w @ stats[:, 0] == w @ stats[:, 1]
    keep, expand = _distinct_columns(stats)
    assert (keep, expand.tolist()) == first_equal_columns(stats) == ([0, 1, 3], [0, 1, 0, 2, 1])


@pytest.mark.parametrize("seed", range(4))
def test_the_guide_starts_each_bin_at_its_first_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rates = np.sort(np.concatenate((rng.uniform(0.01, 5, 20), rng.uniform(5, 1024, 40))))
    lo, hi = poisson_support(rates)
    tables = CountTables(lo, hi, functools.partial(_poisson_ratio, rates))
    length = hi - lo + 1
    for t in range(rates.shape[0]):
        start = int(tables.start[t])
        mine = tables.bounds[start : start + int(length[t])]
        assert np.array_equal(tables.keys[start : start + int(length[t])], (t << UNIFORM_BITS) + mine)
        shift = int(tables.shift[t])
        bins = (1 << (UNIFORM_BITS - shift)) + 1
        first = np.arange(bins, dtype=np.int64) << shift  # each bin's first value
        # The first count whose bound passes the bin's first value (the last count at most).
        want = start + np.searchsorted(mine[:-1], first, side="right")
        got = tables.guide[int(tables.first_bin[t]) : int(tables.first_bin[t]) + bins]
        assert np.array_equal(got, want)


def test_narrowings_with_repeats_are_those_without(state: tuple[Any, str]) -> None:
    doc_state, credit = state
    hists = [doc_state.closed, *(h.with_zeros(doc_state.documents) for h in doc_state.types.values())]
    checked = 0
    for whole in hists:
        hist = histogram_of(whole, credit)
        assert hist.repeats == whole.repeats  # carried through to the families
        for name, cols in interval_families(hist.fields).items():
            fields = tuple(hist.fields[i] for i in cols)
            repeats = _kept_repeats(hist, cols)
            plain = Histogram.of(hist.rows[:, cols], fields, hist.counts)
            fast = Histogram.of(hist.rows[:, cols], fields, hist.counts, repeats)
            assert np.array_equal(plain.rows, fast.rows) and plain.rows.dtype == fast.rows.dtype
            assert np.array_equal(plain.counts, fast.counts)
            for j, i in repeats or ():
                assert i < j and np.array_equal(fast.rows[:, i], fast.rows[:, j])
            checked += bool(repeats) and name == "spans"
    assert checked


def test_repeats_whose_column_is_left_out_are_dropped() -> None:
    rows = np.array([[1, 2, 1, 2, 3], [0, 5, 0, 5, 1], [4, 4, 4, 4, 0]])
    hist = Histogram(rows, np.array([3, 1, 2]), ("a", "b", "c", "d", "e"), repeats=((2, 0), (3, 1)))
    assert _kept_repeats(hist, [0, 2, 4]) == ((1, 0),)
    assert _kept_repeats(hist, [1, 2, 3]) == ((2, 0),)
    assert _kept_repeats(hist, [2, 3, 4]) is None
    no_repeats = Histogram(rows, np.array([3, 1, 2]), ("a", "b", "c", "d", "e"))
    assert _kept_repeats(no_repeats, [0, 2]) is None


def test_tables_side_by_side_or_apart_hold_the_same_bounds() -> None:
    # Rates of two lengths of table, in order (each part's tables side by side: written as one
    # slice) and alternating (each part's tables apart: written one by one); the same parts.
    rng = np.random.default_rng(5)
    short, long = np.sort(rng.uniform(3, 4, 6)), np.sort(rng.uniform(600, 700, 6))
    apart = np.ravel(np.column_stack((short, long)))
    side = np.concatenate((short, long))
    made = {}
    for name, rates in (("apart", apart), ("side", side)):
        lo, hi = poisson_support(rates)
        tables = CountTables(lo, hi, functools.partial(_poisson_ratio, rates))
        made[name] = {
            float(r): tables.bounds[int(tables.start[t]) : int(tables.start[t] + hi[t] - lo[t] + 1)]
            for t, r in enumerate(rates)
        }
    assert made["apart"].keys() == made["side"].keys()
    for rate, bounds in made["side"].items():
        assert np.array_equal(made["apart"][rate], bounds)
        assert np.all(np.diff(bounds) >= 0) and bounds[-1] == 1 << UNIFORM_BITS


def pooled_recounted(sampler: _Sampler, rng: np.random.Generator, wanted: np.ndarray) -> np.ndarray:
    """``_Sampler._pooled`` with each resample's sum counted again from its rows after each
    redraw (as it was before the sums were kept): the same draws in the same order."""
    k = sampler.share.shape[0]
    counts = sampler._poisson(rng, wanted)
    over = np.flatnonzero(counts.sum(axis=1) > wanted)
    while over.shape[0]:
        counts[over] = sampler._poisson(rng, wanted[over])
        over = over[counts[over].sum(axis=1) > wanted[over]]
    for r, missing in enumerate((wanted - counts.sum(axis=1)).tolist()):
        documents = rng.integers(0, sampler.pooled, size=missing)  # the same words as in pieces
        counts[r] += np.bincount(np.searchsorted(np.cumsum(sampler._pool), documents, side="right"), minlength=k)
    return counts


@pytest.mark.parametrize("seed", range(3))
def test_pooled_counts_keep_their_sums_as_rows_are_drawn_again(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(3, 400, size=300)
    sampler = _Sampler(counts)
    wanted = sampler.pooled - rng.integers(0, 40, size=256)
    got = sampler._pooled(np.random.default_rng(seed + 10), wanted.copy())
    assert np.array_equal(got.sum(axis=1), wanted)
    assert np.array_equal(got, pooled_recounted(sampler, np.random.default_rng(seed + 10), wanted.copy()))
