"""Intervals draw a histogram's largest rows (the heads) last, a multinomial of the draws its pool
leaves them, and couple how many draws the pool gets with its Poisson sum (``_IntervalSampler``):
the pool's top-up is then a few single draws where it was a few hundred. Checked here: the
resamples are exactly multinomial (a chi-square of the joint counts of a small histogram, with
the coupling's margin as chosen and with none, so that most resamples are drawn again); the pool's
draws are binomial; the heads chosen; and over 20 seeds on the BTC test split with a perturbed
prediction the intervals agree with the draws before (no heads) within Monte Carlo error,
overall, for the largest type and for the largest length bucket."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll
from test_interval_quick_draws import SEEDS, agree

import spanscore
from spanscore.analysis import buckets as bucket_module
from spanscore.analysis import significance
from spanscore.analysis.significance import Draws, Resampling, _IntervalSampler, _Sampler, intervals


@pytest.fixture(scope="module")
def files(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("coupled")
    gold = sentences(btc / "test.txt")
    return write_conll(folder / "gold.conll", gold), write_conll(folder / "pred.conll", perturb(gold, 1, 0.45))


def before(m: pytest.MonkeyPatch) -> None:
    """The intervals' draws as they were: no heads but a row that holds most of the documents,
    drawn first (a binomial), and the pool's rate ``MARGIN`` standard deviations below."""
    m.setattr(_IntervalSampler, "COUPLED", False)
    m.setattr(_IntervalSampler, "_heads", _Sampler._heads)
    m.setattr(_IntervalSampler, "_rate", _Sampler._rate)
    m.setattr(_IntervalSampler, "_common", _Sampler._common)


class _TwoHeads(_IntervalSampler):
    def _heads(self, held: Any) -> Any:
        return np.argsort(-held, kind="stable")[:2]


class _OneHead(_IntervalSampler):
    def _heads(self, held: Any) -> Any:
        return np.argsort(-held, kind="stable")[:1]


def multinomial_pmf(n: int, p: np.ndarray) -> dict[tuple[int, ...], float]:
    """Every outcome of a multinomial of ``n`` draws over ``p``, and its probability."""
    out: dict[tuple[int, ...], float] = {}

    def walk(left: int, i: int, got: tuple[int, ...], logp: float) -> None:
        if i == p.shape[0] - 1:
            out[(*got, left)] = math.exp(logp + left * math.log(p[i]) - math.lgamma(left + 1))
            return
        for c in range(left + 1):
            walk(left - c, i + 1, (*got, c), logp + c * math.log(p[i]) - math.lgamma(c + 1))

    walk(n, 0, (), math.lgamma(n + 1))
    return out


@pytest.mark.parametrize("sampler", [_OneHead, _TwoHeads])
@pytest.mark.parametrize("coupling", [significance.COUPLING, -6.0])
def test_the_coupled_resamples_are_exactly_multinomial(
    sampler: type[_IntervalSampler], coupling: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 14 documents over four rows: every one of the 680 outcomes' frequency against its
    # probability. With a negative margin (the pool's rate above its mean draws), its Poisson sum
    # passes its draws in many resamples, which are drawn again: the fallback is checked too.
    monkeypatch.setattr(significance, "COUPLING", coupling)
    counts = np.array([6, 4, 3, 1], dtype=np.int64)
    n = int(counts.sum())
    drawn = sampler(counts)
    assert drawn.heads == (2 if sampler is _TwoHeads else 1) and drawn.rate > 0
    again = 0
    poisson = drawn._poisson

    def counted(rng: np.random.Generator, wanted: Any) -> Any:
        nonlocal again
        again += wanted.shape[0]
        return poisson(rng, wanted)

    drawn._poisson = counted  # type: ignore[method-assign]
    blocks = 300
    got = np.concatenate([drawn._common(np.random.default_rng([11, k]), np.full(256, n)) for k in range(blocks)])
    # Floats (the rows they multiply are), whole numbers.
    assert (got == np.floor(got)).all() and (got.sum(axis=1) == n).all() and (got >= 0).all()
    got = got.astype(np.int64)
    if coupling < 0:
        assert again > got.shape[0] // 20
    rows = got[:, np.argsort(drawn.common)]  # back in the histogram's order
    pmf = multinomial_pmf(n, counts / n)
    seen: dict[tuple[int, ...], int] = {}
    for row in map(tuple, rows.tolist()):
        seen[row] = seen.get(row, 0) + 1
    assert set(seen) <= set(pmf)
    total = rows.shape[0]
    # Outcomes of small expected counts pooled into one cell.
    small = [o for o, p in pmf.items() if p * total < 5]
    cells = [(seen.get(o, 0), p * total) for o, p in pmf.items() if p * total >= 5]
    cells.append((sum(seen.get(o, 0) for o in small), sum(pmf[o] for o in small) * total))
    chi2 = sum((o - e) ** 2 / e for o, e in cells)
    dof = len(cells) - 1
    # A bias in any outcome of a few thousandths would show; 6 standard deviations of the statistic.
    assert chi2 < dof + 6 * math.sqrt(2 * dof), (chi2, dof)


@pytest.mark.parametrize("coupling", [significance.COUPLING, 0.5, -2.0])
def test_the_pools_draws_are_binomial_and_the_rows_multinomial(
    coupling: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(significance, "COUPLING", coupling)
    rng = np.random.default_rng(3)
    counts = np.append(rng.integers(1, 9, size=200), [5000, 3000, 1500]).astype(np.int64)
    drawn = _TwoHeads(counts) if coupling < 0 else _IntervalSampler(counts)
    n = int(counts.sum())
    assert drawn.heads >= 2
    got = np.concatenate([drawn._common(np.random.default_rng([5, k]), np.full(256, n)) for k in range(120)])
    assert (got.sum(axis=1) == n).all()
    total = got.shape[0]
    left = got[:, drawn.heads :].sum(axis=1)
    q = drawn.pooled / n
    assert abs(left.mean() - n * q) < 4.5 * math.sqrt(n * q * (1 - q) / total)
    assert left.var() / (n * q * (1 - q)) == pytest.approx(1, abs=0.06)
    p = counts[drawn.common] / n
    assert np.abs((got.mean(axis=0) - n * p) / np.sqrt(n * p * (1 - p) / total)).max() < 4.5
    assert got.var(axis=0)[:8] / (n * p * (1 - p))[:8] == pytest.approx(np.ones(8), abs=0.06)
    assert np.cov(got[:, 0], got[:, 1])[0, 1] == pytest.approx(-n * p[0] * p[1], rel=0.1)
    assert np.cov(got[:, 0], left)[0, 1] == pytest.approx(-n * p[0] * q, rel=0.1)
    # Where the draws wanted are not every document's (never for the intervals: no rare rows),
    # the pool's draws are a binomial drawn first.
    wanted = np.random.default_rng(1).integers(n // 2, n, size=256)
    some = np.concatenate([drawn._common(np.random.default_rng([6, k]), wanted) for k in range(40)])
    assert (some.sum(axis=1) == np.tile(wanted, 40)).all()
    assert some.mean(axis=0)[:3] == pytest.approx(wanted.mean() * p[:3], rel=0.01)


def test_the_heads_chosen() -> None:
    # A group's documents without a mention (most of them) and rows numpy's Poisson counts drew:
    # heads; a histogram of small rows: none (its draws as compare's families draw theirs).
    rng = np.random.default_rng(0)
    group = np.append(rng.integers(1, 9, size=200), [60_000, 20_000, 3_000]).astype(np.int64)
    assert _IntervalSampler(group).heads == 3
    small = rng.integers(1, 40, size=300).astype(np.int64)
    mine = _IntervalSampler(small)
    assert mine.heads == 0
    wanted = np.full(300, int(small.sum()))
    assert np.array_equal(
        mine._common(np.random.default_rng(4), wanted),
        significance._FamilySampler(small)._common(np.random.default_rng(4), wanted),
    )
    assert _IntervalSampler(np.array([7], dtype=np.int64)).heads == 0
    assert isinstance(Draws(group, quick=True).sampler, _IntervalSampler)
    # The heads' draws cost about as much as numpy's Poisson counts of them did; the top-up is
    # what shrinks.
    assert _IntervalSampler(group).top_up_ns < significance._FamilySampler(group).top_up_ns / 3


def test_intervals_agree_with_the_draws_before_within_monte_carlo_error(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = spanscore.evaluate(reference=files[0], predicted=files[1], ci=0.95, keep_details=False)
    state, credit = report.document_state, report.counts.credit
    assert state is not None
    kind = max(state.types or {}, key=lambda t: int((state.types or {})[t].counts.sum()))
    picked = [("strict", None), ("overlap", None), ("strict", kind), ("overlap", kind)]

    def bounds(out: dict[str, Any]) -> list[tuple[float, float]]:
        return [
            ((f1 := (out["per_type"][t] if t else out["scores"])[name]["f1"])["low"], f1["high"]) for name, t in picked
        ]

    def run() -> list[list[tuple[float, float]]]:
        return [
            bounds(intervals(state, zero_division=0.0, credit=credit, resampling=Resampling(seed=seed)))
            for seed in range(SEEDS)
        ]

    new = run()
    with monkeypatch.context() as m:
        before(m)
        old = run()
    agree(new, old, picked)


def test_bucket_intervals_agree_with_the_draws_before_within_monte_carlo_error(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Any, int, dict[str, Any]]] = []
    histograms = bucket_module.bootstrap_histograms

    def capture(hists: Any, documents: int, **options: Any) -> Any:
        seen.append((hists, documents, options))
        return histograms(hists, documents, **options)

    with monkeypatch.context() as m:
        m.setattr(bucket_module, "bootstrap_histograms", capture)
        spanscore.evaluate(reference=files[0], predicted=files[1], buckets=("length",), ci=0.95, keep_details=False)
    hists, documents, options = seen[0]
    label = max(hists, key=lambda b: int(hists[b].counts.sum()))
    picked = ["strict", "overlap"]

    def run() -> list[list[tuple[float, float]]]:
        out = []
        for seed in range(SEEDS):
            got = histograms(hists, documents, **{**options, "resampling": Resampling(seed=seed)})[label]
            out.append([(got[name]["f1"]["low"], got[name]["f1"]["high"]) for name in picked])
        return out

    new = run()
    with monkeypatch.context() as m:
        before(m)
        old = run()
    agree(new, old, picked)
