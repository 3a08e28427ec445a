"""compare's bootstrap draws every row of a family through Poisson counts (``_FamilySampler``:
its rows held by one or two documents too), each read from a small table of its Poisson table's
bins by the first 12 bits of its 53-bit uniform, the other 41 bits drawn only where a bound of
the table falls inside the bin (``_QuickCounts``). Checked here: each count is the one the full
table gives its 53-bit uniform (every bin's ends, every bound, random uniforms), the draws are
built from the generator's bits as that uniform, the resamples are multinomial, and the sums
are the counts times the rows. That the intervals and p-values agree with resampling the
documents within Monte Carlo error is tests/test_compare_families.py's check (it runs the
compare path, whose families now draw this way)."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll
from test_compare_swap_counts import words_trials

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import (
    QUICK_BITS,
    UNIFORM_BITS,
    CountTables,
    Resampling,
    _FamilySampler,
    _poisson_ratio,
    _QuickCounts,
    _Sampler,
    _Swaps,
    compare,
    poisson_support,
)

RATES = np.array([0.3, 0.94, 1.9, 4.7, 9.5, 33.0, 180.0, 1000.0])


def tables_of(rates: np.ndarray, columns: list[int]) -> tuple[CountTables, _QuickCounts]:
    tables = CountTables(*poisson_support(rates), functools.partial(_poisson_ratio, rates))
    return tables, _QuickCounts(tables, tables.columns(np.array(columns, dtype=np.int64)))


def reference(tables: CountTables, table: int, j: np.ndarray) -> np.ndarray:
    """The smallest k with j < K(k) in one table, from its bounds alone."""
    start = int(tables.start[table])
    end = int(tables.start[table + 1]) if table + 1 < tables.start.shape[0] else tables.bounds.shape[0]
    out: np.ndarray = np.searchsorted(tables.bounds[start:end], j, side="right") + int(tables.lo[table])
    return out


def test_each_bins_count_is_the_tables_count_of_every_uniform_in_it() -> None:
    columns = list(range(RATES.shape[0]))
    tables, quick = tables_of(RATES, columns)
    shift = UNIFORM_BITS - QUICK_BITS
    bins = np.arange(1 << QUICK_BITS, dtype=np.int64)
    rng = np.random.default_rng(1)
    for t in columns:
        start = int(tables.start[t])
        end = int(tables.start[t + 1]) if t + 1 < len(columns) else tables.bounds.shape[0]
        bounds = tables.bounds[start:end]
        # Every bin's first and last uniform, every bound and its neighbours, random uniforms.
        j = np.concatenate((
            bins << shift, ((bins + 1) << shift) - 1, bounds, bounds - 1, bounds + 1,
            rng.integers(0, 1 << UNIFORM_BITS, size=20_000),
        ))
        j = j[(j >= 0) & (j < (1 << UNIFORM_BITS))]
        want = reference(tables, t, j)
        read = quick.quick[(t << QUICK_BITS) + (j >> shift)]
        pure = read >= 0
        assert np.array_equal(read[pure], want[pure]), t
        # Where a bound falls inside the bin the full search decides, and gives the same.
        column = np.full(j.shape[0], t)
        assert np.array_equal(quick.lookup(j, column), want), t
        # Almost every bin is decided by its first bits alone.
        assert float(np.mean(quick.quick[t << QUICK_BITS : (t + 1) << QUICK_BITS] >= 0)) > 0.94, t


def test_the_bins_are_the_narrowest_integers_that_hold_every_count() -> None:
    # Bytes while every count stays below 128 (small rates), 16 bits past it; the same counts.
    small, large = RATES[RATES < 20], RATES
    tables, quick = tables_of(small, list(range(small.shape[0])))
    assert quick.quick.dtype == np.int8 and 0 < int(quick.quick.max()) < 128 and int(tables.lo.max()) < 128
    wide = tables_of(large, list(range(large.shape[0])))[1]
    assert wide.quick.dtype == np.int16 and int(wide.quick.max()) > 127
    # The small rates' tables, made among the large ones, give the same bins.
    assert np.array_equal(quick.quick, wide.quick[: small.shape[0] << QUICK_BITS])


@pytest.mark.parametrize("piece", [1 << 16, 25, 7])
def test_a_draw_is_the_count_of_a_uniform_made_of_the_generators_bits(
    piece: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Columns reading the tables in any order, some twice; the counts rebuilt here from the same
    # generator's words, piece by piece of rows (``LOOKUP_CELLS`` counts, at least a row): 16
    # bits a count (its first 12 used), then 41 more bits for each count whose bin a bound cuts,
    # in the order of the cells.
    monkeypatch.setattr(significance, "LOOKUP_CELLS", piece)
    columns = [3, 0, 7, 7, 1, 5, 2, 6, 4, 0]
    tables, quick = tables_of(RATES, columns)
    size, width = 300, len(columns)
    got = quick.draw(np.random.default_rng(5), size)
    rng = np.random.default_rng(5)
    shift = UNIFORM_BITS - QUICK_BITS
    rows = max(1, piece // width)
    j_parts, open_parts = [], []
    for start in range(0, size, rows):
        cells = min(rows, size - start) * width
        first = rng.bit_generator.random_raw((cells + 3) // 4).astype("<u8").view(np.uint16)[:cells]
        top = (first >> np.uint16(16 - QUICK_BITS)).astype(np.int64)
        read = quick.quick[(np.tile(np.array(columns), cells // width) << QUICK_BITS) + top]
        open_ = np.flatnonzero(read < 0)
        rest = rng.bit_generator.random_raw(open_.shape[0]) >> np.uint64(64 - shift)
        j = top << shift
        j[open_] |= rest.astype(np.int64)
        j_parts.append(j)
        open_parts.append(open_ + start * width)
    j, open_ = np.concatenate(j_parts), np.concatenate(open_parts)
    assert open_.shape[0] > 0  # the test reaches the second draw
    for c, t in enumerate(columns):
        mine = np.arange(size) * width + c
        settled = np.setdiff1d(mine, open_)
        # A settled count holds for every uniform of its bin: any low bits give it.
        assert np.array_equal(got.reshape(-1)[settled], reference(tables, t, j[settled]))
        cut = np.intersect1d(mine, open_)
        assert np.array_equal(got.reshape(-1)[cut], reference(tables, t, j[cut]))
    # Written into a table of floats, the same counts.
    into = np.zeros((size, width))
    quick.draw(np.random.default_rng(5), size, into)
    assert np.array_equal(into, got)


@pytest.mark.parametrize(
    "counts",
    [
        [1, 1, 1, 2, 3, 11, 40, 40, 300, 5000],
        [1] * 300 + [2] * 100 + [3, 7, 50],  # rows of one or two documents: the rare rows a family has
        [90_000, 1, 1, 2, 5, 30, 400],  # one row holding most documents: a binomial first
        [1, 11, 12],  # a dozen documents: the Poisson counts often pass the total
    ],
)
def test_a_familys_resamples_are_multinomial(counts: list[int]) -> None:
    c = np.array(counts, dtype=np.int64)
    n, sampler = int(c.sum()), _FamilySampler(c)
    assert sampler.rare.shape[0] == 0 and sampler.common.shape[0] == c.shape[0]
    rows = np.eye(c.shape[0])
    w = np.concatenate([sampler.summed(np.random.default_rng([7, k]), 256, rows) for k in range(60)])
    assert (w.sum(axis=1) == n).all() and (w >= 0).all() and np.array_equal(w, np.round(w))
    p = c / n
    assert w.mean(axis=0) == pytest.approx(n * p, rel=0.03, abs=0.05)
    assert w.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.12, abs=0.02)
    i, k = np.argsort(c)[-2:]
    # The two largest rows' covariance, within 5 standard errors of its estimate.
    error = 5 * np.sqrt(n * p[i] * (1 - p[i]) * n * p[k] * (1 - p[k]) / w.shape[0])
    assert abs(np.cov(w[:, i], w[:, k])[0, 1] + n * p[i] * p[k]) < error
    # Every row's counts as the sampler's own multinomial gives them: the sums are the counts
    # times the rows, whatever the rows.
    mixed = np.random.default_rng(2).integers(0, 9, size=(c.shape[0], 4)).astype(np.float64)
    counts_drawn = sampler.summed(np.random.default_rng(3), 40, rows)
    assert np.array_equal(sampler.summed(np.random.default_rng(3), 40, mixed), counts_drawn @ mixed)


SEEDS = 20


def test_intervals_and_p_values_agree_with_the_draws_before_within_monte_carlo_error(
    btc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Against the implementation before (rare rows' documents picked one by one, the other rows'
    # Poisson counts looked up from 53 bits; every swap counted in 64-bit words), over 20 seeds
    # on the BTC test split with two perturbed systems.
    gold = sentences(btc / "test.txt")
    paths = [write_conll(tmp_path / f"{n}.conll", rows) for n, rows in
             (("gold", gold), ("a", perturb(gold, 1, 0.4)), ("b", perturb(gold, 4, 0.4)))]
    a, b = (
        spanscore.evaluate(reference=paths[0], predicted=p, documents=True, keep_details=False).documents
        for p in paths[1:]
    )
    assert a is not None and b is not None
    names = ("strict", "overlap", "token")
    bounds: dict[str, list[float]] = {n: [] for n in names}
    widths: dict[str, list[float]] = {n: [] for n in names}
    p_new: dict[str, list[float]] = {n: [] for n in names}
    p_old: dict[str, list[float]] = {n: [] for n in names}
    for seed in range(SEEDS):
        options: dict[str, Any] = {"zero_division": 0.0, "credit": "0.5", "resampling": Resampling(seed=seed)}
        new = compare([a, b], ["a", "b"], **options)
        with monkeypatch.context() as m:
            m.setattr(significance, "_FamilySampler", _Sampler)
            m.setattr(_Swaps, "trials", words_trials)
            old = compare([a, b], ["a", "b"], **options)
        for name in names:
            entries = [
                (new.intervals[s][name]["f1"], old.intervals[s][name]["f1"]) for s in (0, 1)
            ] + [tuple(
                next(c for c in t.comparisons if c["criterion"] == name and c["metric"] == "f1") for t in (new, old)
            )]
            for got, want in entries:
                bounds[name] += [got["low"] - want["low"], got["high"] - want["high"]]
                widths[name].append((got["high"] - got["low"]) / (want["high"] - want["low"]))
            p_new[name].append(entries[-1][0]["p_bootstrap"])
            p_old[name].append(entries[-1][1]["p_bootstrap"])
    for name in names:
        # Each bound's Monte Carlo error with 1000 resamples is about 0.2 F1 points: the mean
        # difference over 20 seeds and 3 intervals under 0.1 points, the mean size under 0.3.
        assert abs(float(np.mean(bounds[name]))) < 0.001, (name, float(np.mean(bounds[name])))
        assert float(np.mean(np.abs(bounds[name]))) < 0.003, (name, float(np.mean(np.abs(bounds[name]))))
        assert abs(float(np.mean(widths[name])) - 1) < 0.03, (name, float(np.mean(widths[name])))
        p = float(np.mean(p_old[name]))
        assert 0.02 < p < 0.98, (name, p)
        se = math.sqrt(p * (1 - p) / 1000)
        assert abs(float(np.mean(p_new[name])) - p) < 4 * se * math.sqrt(2 / SEEDS), name


def test_a_familys_tables_are_let_go_once_its_bins_are_made() -> None:
    # Counts of many sizes (rows of one or two documents, a few large ones): the tables made
    # when queued, let go at the first draw (the bins keep what the open bins look up), never made
    # again; every draw the same as a sampler's whose tables are made at its first draw.
    counts = np.random.default_rng(3).integers(1, 40, size=2_000)
    counts[:5] = [900, 2_500, 1, 2, 120]
    kept, fresh = _FamilySampler(counts), _FamilySampler(counts)
    kept.prepare()
    assert kept._tables is not None and kept._quick is None
    wanted = np.full(64, int(counts.sum()))
    first = kept._pooled(np.random.default_rng(8), wanted)
    assert kept._tables is None and kept._quick is not None
    kept.prepare()
    assert kept._tables is None
    second = kept._pooled(np.random.default_rng(9), wanted)
    assert np.array_equal(first, fresh._pooled(np.random.default_rng(8), wanted))
    assert np.array_equal(second, fresh._pooled(np.random.default_rng(9), wanted))
    assert np.array_equal(first.sum(axis=1), wanted)
