"""Interval resamples (``Draws``: evaluate's --ci, per type, per bucket, discontinuous and LLM-class
intervals) draw their common rows' multinomial through compare's Poisson counts topped up to the
exact total. Checked here: the draws are compare's, number for number; their joint distribution is
the multinomial's (exact probabilities of a small corpus, and the moments of a larger one); and
over 20 seeds the intervals agree with those of numpy's multinomial draws (the earlier
implementation, rebuilt here) within Monte Carlo error."""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import Draws, Resampling, _Sampler, intervals

SEEDS = 20


def multinomial_pmf(x: tuple[int, ...], n: int, p: np.ndarray) -> float:
    if sum(x) != n:
        return 0.0
    log = math.lgamma(n + 1) + sum(k * math.log(q) - math.lgamma(k + 1) for k, q in zip(x, p, strict=True))
    return math.exp(log)


def test_the_draws_are_compares_number_for_number() -> None:
    # One implementation: the same generator gives evaluate's resamples and compare's.
    counts = np.array([1, 1, 2, 3, 9, 10, 11, 40, 300, 5000], dtype=np.int64)
    for seed, size in ((0, 1), (1, 17), (2, 256)):
        drawn = Draws(counts).bootstrap(np.random.default_rng(seed), size)
        assert np.array_equal(drawn, _Sampler(counts).draw(np.random.default_rng(seed), size))
    draws = Draws(counts)
    # Held by more than _Sampler.RARE documents (2: rows of 1 and 2 documents are picked one by one).
    assert sorted(draws.common.tolist()) == np.flatnonzero(counts > _Sampler.RARE).tolist() == [3, 4, 5, 6, 7, 8, 9]
    # The row of 5,000 holds most of the common documents: it comes first and draws a binomial.
    common = int(counts[counts > _Sampler.RARE].sum())
    assert draws.common.tolist()[0] == 9 and draws.sampler.big_share == pytest.approx(5000 / common)
    assert draws.rare_weight == int(counts[counts <= _Sampler.RARE].sum())


def test_small_corpus_draws_have_the_multinomials_exact_probabilities() -> None:
    # 26 documents: two rare rows (drawn one document at a time) and two common ones (Poisson
    # counts that often pass the total and are drawn again). Every outcome's frequency over
    # 51,200 resamples against its multinomial probability (a chi-square test, outcomes of small
    # probability pooled), and the same for numpy's multinomial as a check of the test.
    counts = np.array([1, 2, 11, 12], dtype=np.int64)
    n, p = int(counts.sum()), counts / counts.sum()
    draws = Draws(counts)
    assert sorted(draws.common.tolist()) == [2, 3] and draws.rare_weight == 3
    assert draws.sampler.big_share == pytest.approx(12 / 23)  # the larger common row drawn first
    drawn = np.concatenate([draws.bootstrap(np.random.default_rng([11, k]), 256) for k in range(200)]).astype(int)
    numpy_drawn = np.random.default_rng(12).multinomial(n, p, size=drawn.shape[0])
    outcomes = [x for x in product(range(n + 1), repeat=3) if sum(x) <= n]
    expected = np.array([multinomial_pmf((*x, n - sum(x)), n, p) for x in outcomes])
    assert expected.sum() == pytest.approx(1.0, abs=1e-12)
    index = {x: i for i, x in enumerate(outcomes)}
    big = expected * drawn.shape[0] >= 5
    for sample in (drawn, numpy_drawn):
        assert (sample.sum(axis=1) == n).all() and (sample >= 0).all()
        seen = np.bincount([index[tuple(row[:3])] for row in sample.tolist()], minlength=len(outcomes))
        observed = np.append(seen[big], seen[~big].sum()).astype(float)
        wanted = np.append(expected[big], expected[~big].sum()) * sample.shape[0]
        chi2 = float(((observed - wanted) ** 2 / wanted).sum())
        dof = observed.shape[0] - 1
        # A chi-square of dof degrees of freedom: mean dof, sd sqrt(2 dof); 6 sd is far out.
        assert chi2 < dof + 6 * math.sqrt(2 * dof), (chi2, dof)


def test_large_corpus_draws_have_the_multinomials_moments() -> None:
    # Many common rows, as a corpus of 100,000 sentences has: every resample sums to the corpus,
    # each row's count has the binomial's mean and variance, and rows' counts the multinomial's
    # covariance.
    rng = np.random.default_rng(4)
    counts = np.concatenate([rng.integers(1, 11, size=300), rng.integers(11, 3000, size=200), [40_000]])
    n, draws = int(counts.sum()), Draws(counts)
    # No row holds most of them; rows of 3 to 10 documents are common too (their Poisson tables are short).
    assert draws.common.shape[0] == int((counts > _Sampler.RARE).sum()) > 201 and draws.sampler.big_share == 0.0
    w = np.concatenate([draws.bootstrap(np.random.default_rng([5, k]), 256) for k in range(16)])
    assert (w.sum(axis=1) == n).all() and (w >= 0).all()
    p = counts / n
    se_mean = np.sqrt(n * p * (1 - p) / w.shape[0])
    assert (np.abs(w.mean(axis=0) - n * p) < 5 * se_mean + 1e-9).all()
    common = draws.common
    variance = w[:, common].var(axis=0) / (n * p[common] * (1 - p[common]))
    assert float(variance.mean()) == pytest.approx(1.0, abs=0.03)
    # Half the common rows together (their covariances summed): a binomial of their summed share;
    # and against the largest row, the multinomial's covariance (within 5 standard errors).
    half, last = common[: common.shape[0] // 2], counts.shape[0] - 1
    p_half = float(p[half].sum())
    summed = w[:, half].sum(axis=1)
    assert float(summed.var()) == pytest.approx(n * p_half * (1 - p_half), rel=0.1)
    se_cov = math.sqrt(float(summed.var() * w[:, last].var()) / w.shape[0])
    assert abs(float(np.cov(w[:, last], summed)[0, 1]) + n * p[last] * p_half) < 5 * se_cov


def numpy_multinomial(monkeypatch: pytest.MonkeyPatch) -> None:
    """The earlier draws: rows of at most 8 documents drawn one by one, the others by numpy's
    multinomial over every common row (the generator calls of the earlier implementation)."""

    def common(self: _Sampler, rng: np.random.Generator, wanted: np.ndarray) -> np.ndarray:
        # The common rows' shares in the order the rows have (a row holding most of them first),
        # drawn in the histogram's order as before.
        share = np.concatenate(([self.big_share], (1 - self.big_share) * self.share)) if self.big_share else self.share
        order = np.argsort(self.common)
        out: np.ndarray = np.empty((wanted.shape[0], share.shape[0]), dtype=np.int64)
        out[:, order] = rng.multinomial(wanted, share[order])
        return out

    monkeypatch.setattr(_Sampler, "RARE", 8)
    monkeypatch.setattr(_Sampler, "_common", common)
    # The intervals' sampler as well, its heads drawn first as the row holding most documents was.
    monkeypatch.setattr(significance._IntervalSampler, "COUPLED", False)
    monkeypatch.setattr(significance._IntervalSampler, "_heads", _Sampler._heads)
    monkeypatch.setattr(significance._IntervalSampler, "_rate", _Sampler._rate)
    monkeypatch.setattr(significance._IntervalSampler, "_common", common)


@pytest.fixture(scope="module")
def state(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    folder = tmp_path_factory.mktemp("draws")
    gold = sentences(btc / "test.txt")
    g = write_conll(folder / "gold.conll", gold)
    p = write_conll(folder / "pred.conll", perturb(gold, 1, 0.45))
    report = spanscore.evaluate(reference=g, predicted=p, ci=0.95, keep_details=False)
    assert report.document_state is not None
    return report.document_state, report.counts.credit


def test_intervals_agree_with_numpy_multinomial_draws_within_monte_carlo_error(
    state: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc_state, credit = state
    hist = significance.histogram_of(doc_state.closed, credit)
    draws = Draws(hist.counts)
    # The corpus's common rows hold most of its documents: the Poisson draws are what is tested.
    assert draws.common.shape[0] > 0 and draws.rare_weight < draws.n / 2
    # PER's table: the documents without a PER mention are its largest row (drawn first, by a
    # binomial, where it holds most of the common documents: the small corpus's exact
    # probabilities above check that path); the corpus's have no such row.
    per = significance.histogram_of(doc_state.types["PER"], credit).with_zeros(doc_state.documents)
    assert Draws(per.counts).sampler.common.shape[0] > 1 and draws.sampler.big_share == 0.0
    picked = [("strict", None), ("overlap", None), ("strict", "PER")]

    def bounds(out: dict[str, Any]) -> list[tuple[float, float]]:
        got = []
        for name, kind in picked:
            f1 = (out["per_type"][kind] if kind else out["scores"])[name]["f1"]
            got.append((f1["low"], f1["high"]))
        return got

    new, old = [], []
    for seed in range(SEEDS):
        resampling = Resampling(seed=seed)
        new.append(bounds(intervals(doc_state, zero_division=0.0, credit=credit, resampling=resampling)))
    with monkeypatch.context() as m:
        numpy_multinomial(m)
        for seed in range(SEEDS):
            resampling = Resampling(seed=seed)
            old.append(bounds(intervals(doc_state, zero_division=0.0, credit=credit, resampling=resampling)))
    a, b = np.array(new), np.array(old)  # [seed, score, low/high]
    assert not np.array_equal(a, b)  # a new stream, not the old one
    for j, (name, kind) in enumerate(picked):
        diff = a[:, j, :] - b[:, j, :]
        # 0.3 F1 points: the mean bound difference over 20 seeds (each bound's Monte Carlo error
        # with 1000 resamples is about 0.2 points, so a biased draw would show).
        assert abs(float(diff[:, 0].mean())) < 0.003, (name, kind, "low")
        assert abs(float(diff[:, 1].mean())) < 0.003, (name, kind, "high")
        assert float(np.abs(diff).mean()) < 0.006, (name, kind)
        # Resamples of the wrong spread would widen or narrow every interval alike.
        widths = (a[:, j, 1] - a[:, j, 0]) / (b[:, j, 1] - b[:, j, 0])
        assert abs(float(widths.mean()) - 1) < 0.03, (name, kind, float(widths.mean()))
