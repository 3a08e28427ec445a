"""The common rows' Poisson counts are looked up in tables (``CountTables``: inverse distribution
function with a guide) at one rate per histogram. Checked here: each table's probabilities against
the closed-form Poisson probabilities (and its tails against scipy's), the drawn counts' frequencies
against them (chi-square, and a check that the test sees a rate 1% off), the guide's steps and
binary search against a plain search of each table, and the sampler's resamples against the exact
multinomial probabilities where some rows are looked up, some drawn by numpy, and where the draws
wanted fall below the tables' rate; the tables' counts capped (``TABLE_ENTRIES``) whatever the
corpus, the rows past the cap drawn by numpy in the same multinomial, and tables made a few at a
time equal to those made at once. The intervals' agreement with the earlier draws over 20 seeds
is tests/test_draws_poisson.py's and tests/test_interval_families.py's."""

from __future__ import annotations

import functools
import math
from itertools import product

import numpy as np
import pytest
from scipy import stats

from spanscore.analysis import significance
from spanscore.analysis.significance import (
    TABLE_ENTRIES,
    UNIFORM_BITS,
    CountTables,
    Draws,
    _poisson_ratio,
    _Sampler,
    poisson_support,
)

RATES = np.array([1e-3, 0.3, 1.0, 5.5, 40.0, 333.3, 1024.0])


def tables_of(rates: np.ndarray) -> CountTables:
    return CountTables(*poisson_support(rates), functools.partial(_poisson_ratio, rates))


def poisson_pmf(k: int, rate: float) -> float:
    return math.exp(k * math.log(rate) - rate - math.lgamma(k + 1))


def chi_square(observed: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """Chi-square of counts against expected counts: outcomes expected fewer than 5 times pooled
    into one cell, itself joined to the least expected of the others where it is still below 5."""
    big = expected >= 5
    o, e = observed[big].astype(float), expected[big].astype(float)
    rest_o, rest_e = float(observed[~big].sum()), float(expected[~big].sum())
    if rest_e >= 5:
        o, e = np.append(o, rest_o), np.append(e, rest_e)
    else:
        least = int(np.argmin(e))
        o[least] += rest_o
        e[least] += rest_e
    return float(((o - e) ** 2 / e).sum()), int(e.shape[0]) - 1


def test_each_tables_probabilities_are_the_poissons() -> None:
    tables = tables_of(RATES)
    for t, rate in enumerate(RATES.tolist()):
        start, lo = int(tables.start[t]), int(tables.lo[t])
        end = int(tables.start[t + 1]) if t + 1 < RATES.shape[0] else tables.bounds.shape[0]
        bounds = tables.bounds[start:end]
        # Whole numbers of 2^-53, rising to exactly 1: every count's probability a share of the bits.
        assert (np.diff(bounds) >= 0).all() and int(bounds[-1]) == 1 << UNIFORM_BITS
        probability = np.diff(np.concatenate(([0], bounds))) / 2.0**UNIFORM_BITS
        exact = np.array([poisson_pmf(k, rate) for k in range(lo, lo + bounds.shape[0])])
        # Within a few units of 2^-53 (the closed form's own rounding is about 1e-13 of each).
        assert np.abs(probability - exact).max() < 4 * 2.0**-UNIFORM_BITS + 1e-12 * exact.max(), rate
        # What the table leaves out is below 2^-64 on each side.
        hi = lo + bounds.shape[0] - 1
        assert stats.poisson.cdf(lo - 1, rate) < 2.0**-64 and stats.poisson.sf(hi, rate) < 2.0**-64, rate


def test_drawn_counts_have_the_poisson_frequencies() -> None:
    tables = tables_of(RATES)
    # Columns reading the tables in another order, some the same table.
    which = np.array([6, 0, 3, 3, 1, 2, 5, 4, 6])
    drawn = tables.draw(np.random.default_rng(2024), tables.columns(which), 60_000)
    for c, t in enumerate(which.tolist()):
        x = drawn[:, c]
        assert x.min() >= 0
        ks = np.arange(x.max() + 2)
        observed = np.bincount(x, minlength=ks.shape[0])
        for rate, should_pass in ((RATES[t], True), (RATES[t] * 1.01, False)):
            expected = stats.poisson.pmf(ks, rate) * x.shape[0]
            expected[-1] += stats.poisson.sf(ks[-1], rate) * x.shape[0]
            chi2, dof = chi_square(observed, expected)
            # Mean dof, sd sqrt(2 dof): 6 sd is far out for the right rate.
            if should_pass:
                assert chi2 < dof + 6 * math.sqrt(2 * dof), (RATES[t], chi2, dof)
            elif RATES[t] >= 40:
                # A rate 1% off is seen where the draws resolve it (60,000 counts of rate 40 and up).
                assert chi2 > dof + 6 * math.sqrt(2 * dof), (RATES[t], chi2, dof)


@pytest.mark.parametrize("guide", [-3, 0, 2])
def test_the_guide_and_its_searches_find_each_count_as_a_plain_search_does(
    guide: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A guide of an eighth as many bins as counts sends most counts on a step and many to the
    # binary search; the counts are the plain inverse of each table's bounds all the same.
    monkeypatch.setattr(CountTables, "GUIDE", guide)
    rates = RATES[1:]
    tables = tables_of(rates)
    which = np.array([0, 5, 2, 4, 1, 3, 5])
    size = 3000
    drawn = tables.draw(np.random.default_rng(7), tables.columns(which), size)
    bits = np.random.default_rng(7).integers(0, 1 << 64, size=(size, which.shape[0]), dtype=np.uint64)
    j = (bits >> np.uint64(64 - UNIFORM_BITS)).astype(np.int64)
    for c, t in enumerate(which.tolist()):
        start = int(tables.start[t])
        end = int(tables.start[t + 1]) if t + 1 < rates.shape[0] else tables.bounds.shape[0]
        plain = tables.lo[t] + np.searchsorted(tables.bounds[start:end], j[:, c], side="right")
        assert np.array_equal(drawn[:, c], plain), (guide, t)


def multinomial_pmf(x: tuple[int, ...], n: int, p: np.ndarray) -> float:
    if sum(x) != n:
        return 0.0
    log = math.lgamma(n + 1) + sum(k * math.log(q) - math.lgamma(k + 1) for k, q in zip(x, p, strict=True))
    return math.exp(log)


def assert_multinomial(drawn: np.ndarray, n: int, p: np.ndarray) -> None:
    """Every outcome's frequency against its multinomial probability (chi-square)."""
    assert (drawn.sum(axis=1) == n).all() and (drawn >= 0).all()
    width = p.shape[0]
    outcomes = [x for x in product(range(n + 1), repeat=width - 1) if sum(x) <= n]
    expected = np.array([multinomial_pmf((*x, n - sum(x)), n, p) for x in outcomes])
    assert expected.sum() == pytest.approx(1.0, abs=1e-12)
    index = {x: i for i, x in enumerate(outcomes)}
    seen = np.bincount([index[tuple(row[: width - 1])] for row in drawn.tolist()], minlength=len(outcomes))
    chi2, dof = chi_square(seen, expected * drawn.shape[0])
    assert chi2 < dof + 6 * math.sqrt(2 * dof), (chi2, dof)


def test_resamples_with_looked_up_and_generated_rows_are_multinomial(monkeypatch: pytest.MonkeyPatch) -> None:
    # 17 documents: one rare row (picked one document at a time), four pooled rows at a rate of 8
    # (Poisson rates 1.6 to 2.7): with tables up to rate 2, two rows are looked up and two drawn
    # by numpy, and the sum often passes the draws wanted and is drawn again.
    monkeypatch.setattr(significance, "POISSON_TABLE", 2.0)
    counts = np.array([2, 3, 3, 4, 5], dtype=np.int64)
    draws = Draws(counts)
    sampler = draws.sampler
    assert sampler.rate == pytest.approx(15 - 1.5 * math.sqrt(15 * (2 - 15 / 17)) - 1)
    assert 0 < sampler.looked_up < sampler.share.shape[0] and sampler.big_share == 0.0
    drawn = np.concatenate([draws.bootstrap(np.random.default_rng([3, k]), 256) for k in range(120)]).astype(int)
    assert_multinomial(drawn, 17, counts / 17)


def test_draws_wanted_below_the_tables_rate_are_multinomial_too() -> None:
    # A sampler's tables are drawn at a rate for the draws a resample of its corpus leaves its
    # pooled rows; asked for far fewer (4 of 60 here), it draws each resample's own rate instead
    # of drawing the tables' counts again and again.
    counts = np.array([10, 12, 15, 23], dtype=np.int64)
    sampler = _Sampler(counts)
    assert sampler.rate > 4 and sampler.looked_up == 4 and sampler.big_share == 0.0
    wanted = np.full(256, 4)
    drawn = np.concatenate([sampler._common(np.random.default_rng([5, k]), wanted) for k in range(100)])
    # _common's counts are in the order of ``common``.
    assert_multinomial(drawn[:, np.argsort(sampler.common)], 4, counts / counts.sum())
    # Wanted around the corpus (the tables) and far below (numpy) in one block: each its total.
    mixed = np.array([60, 4, 58, 2, 61, 0] * 10)
    assert np.array_equal(sampler._common(np.random.default_rng(6), mixed).sum(axis=1), mixed)


def table_entries(sampler: _Sampler) -> int:
    tables, _ = sampler._poisson_tables()
    return int(tables.bounds.shape[0])


@pytest.mark.parametrize("documents", [30_000, 300_000, 3_000_000])
def test_the_tables_hold_at_most_table_entries_counts_whatever_the_corpus(documents: int) -> None:
    # A larger corpus holds rows of more distinct sizes, so more distinct Poisson rates: rows held
    # by 3 to 1,400 documents (two of each size; rates up to POISSON_TABLE are looked up), the
    # rest of the corpus in one row. Without the cap their tables would hold some 450,000 counts.
    sizes = np.arange(3, 1400)
    sizes = np.repeat(sizes[np.cumsum(sizes) * 2 < documents // 2], 2)
    counts = np.concatenate(([documents - sizes.sum()], sizes)).astype(np.int64)
    sampler = _Sampler(counts)
    looked_up = sampler._pool[: sampler.looked_up]
    generated = sampler._pool[sampler.looked_up :]
    held = np.unique(looked_up)
    lo, hi = poisson_support(sampler.rate * held / sampler.pooled)
    assert table_entries(sampler) == int((hi - lo + 1).sum()) <= TABLE_ENTRIES
    # The smallest rates (the sizes most rows share) are looked up, the largest drawn by numpy,
    # and one more distinct rate would pass the cap.
    if generated.shape[0]:
        assert looked_up.max() < generated.min()
        more = np.unique(sampler._pool[sampler._pool <= generated.min()])
        lo, hi = poisson_support(sampler.rate * more / sampler.pooled)
        assert int((hi - lo + 1).sum()) > TABLE_ENTRIES
    else:
        assert documents == 30_000  # the small corpus's tables fit whole
    # Every row is drawn, looked up or not: each resample's counts sum to the corpus.
    drawn = sampler.draw(np.random.default_rng(2), 20)
    assert np.array_equal(drawn.sum(axis=1), np.full(20, float(documents)))


def test_resamples_with_rows_past_the_cap_are_multinomial(monkeypatch: pytest.MonkeyPatch) -> None:
    # The four pooled rows' rates are 1.6 to 2.7 (tables of 66, 68 and 69 counts): tables of at
    # most 140 counts hold the first two distinct rates' (the rows of 3 documents and of 4), the
    # row of 5 documents is drawn by numpy.
    monkeypatch.setattr(significance, "TABLE_ENTRIES", 140)
    counts = np.array([2, 3, 3, 4, 5], dtype=np.int64)
    draws = Draws(counts)
    sampler = draws.sampler
    assert sampler.looked_up == 3 and list(sampler._pool) == [3, 3, 4, 5]
    assert table_entries(sampler) == 134
    drawn = np.concatenate([draws.bootstrap(np.random.default_rng([3, k]), 256) for k in range(120)]).astype(int)
    assert_multinomial(drawn, 17, counts / 17)


def test_tables_made_a_few_at_a_time_are_the_tables_made_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rates = np.concatenate((RATES, np.linspace(3.0, 1000.0, 97)))
    made = {}
    for rows in (1, 5, 1000):
        monkeypatch.setattr(CountTables, "ROWS", rows)
        tables = tables_of(rates)
        made[rows] = (tables.bounds, tables.guide, tables.keys)
    for rows in (1, 5):
        assert all(np.array_equal(a, b) for a, b in zip(made[rows], made[1000], strict=True))
