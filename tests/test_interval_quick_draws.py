"""Intervals draw every row of a histogram as a Poisson count read from 12-bit bins of its table
(``_IntervalSampler``: rows of one or two documents too, which were picked one document at a
time), topped up to the exact total. Checked here: the resamples are multinomial and sum to the
corpus; over 20 seeds on the BTC test split with a perturbed prediction the intervals agree with
the draws before (``_Sampler``) within Monte Carlo error, overall, for one type and for one
bucket; and a seed gives the same numbers for every chunk size, --jobs and the dask engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import buckets as bucket_module
from spanscore.analysis import significance
from spanscore.analysis.significance import Draws, Resampling, _IntervalSampler, _Sampler, intervals

SEEDS = 20


@pytest.fixture(scope="module")
def files(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("quick")
    gold = sentences(btc / "test.txt")
    return write_conll(folder / "gold.conll", gold), write_conll(folder / "pred.conll", perturb(gold, 1, 0.45))


def test_the_quick_draws_are_multinomial() -> None:
    counts = np.array([1, 1, 2, 2, 3, 11, 40, 40, 300, 5000, 9000], dtype=np.int64)
    n, draws = int(counts.sum()), Draws(counts, quick=True)
    assert isinstance(draws.sampler, _IntervalSampler) and draws.rare_weight == 0
    rows = np.eye(counts.shape[0])
    w = np.concatenate([
        significance._Table(rows, counts, tuple("abcdefghijk")).drawn_sums(
            draws, (rows[draws.rare], rows[draws.common]), np.random.default_rng([7, k]), 256
        )
        for k in range(80)
    ])
    assert (w.sum(axis=1) == n).all() and (w >= 0).all() and (w == np.floor(w)).all()
    p = counts / n
    assert w.mean(axis=0) == pytest.approx(n * p, rel=0.03, abs=0.05)
    assert w.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.1, abs=0.05)
    assert np.cov(w[:, 8], w[:, 9])[0, 1] == pytest.approx(-n * p[8] * p[9], rel=0.15)


def old_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every histogram drawn as before: rare rows' documents picked one by one, ``CountTables``."""
    made = Draws.__init__

    def before(self: Draws, counts: Any, *, quick: bool = False) -> None:
        made(self, counts, quick=False)

    monkeypatch.setattr(Draws, "__init__", before)


def agree(new: list[list[tuple[float, float]]], old: list[list[tuple[float, float]]], picked: list[Any]) -> None:
    a, b = np.array(new, dtype=np.float64), np.array(old, dtype=np.float64)  # [seed, score, low/high]
    assert not np.array_equal(a, b)  # another stream
    for j, name in enumerate(picked):
        diff = a[:, j, :] - b[:, j, :]
        # 0.3 F1 points: the mean bound difference over 20 seeds (each bound's Monte Carlo error
        # with 1000 resamples is a few tenths of a point, so a biased draw would show).
        assert abs(float(diff[:, 0].mean())) < 0.003, (name, "low", float(diff[:, 0].mean()))
        assert abs(float(diff[:, 1].mean())) < 0.003, (name, "high", float(diff[:, 1].mean()))
        widths = (a[:, j, 1] - a[:, j, 0]) / (b[:, j, 1] - b[:, j, 0])
        assert abs(float(widths.mean()) - 1) < 0.05, (name, float(widths.mean()))


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
        old_draws(m)
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
    assert len(seen) == 1
    hists, documents, options = seen[0]
    label = max(hists, key=lambda b: int(hists[b].counts.sum()))  # the bucket of the most documents
    picked = ["strict", "overlap"]

    def run() -> list[list[tuple[float, float]]]:
        out = []
        for seed in range(SEEDS):
            got = histograms(hists, documents, **{**options, "resampling": Resampling(seed=seed)})[label]
            out.append([(got[name]["f1"]["low"], got[name]["f1"]["high"]) for name in picked])
        return out

    new = run()
    with monkeypatch.context() as m:
        old_draws(m)
        old = run()
    agree(new, old, picked)


def test_the_same_seed_gives_the_same_intervals_whatever_the_chunks_jobs_and_engine(files: tuple[Path, Path]) -> None:
    options: dict[str, Any] = {
        "reference": files[0], "predicted": files[1], "ci": 0.9, "resamples": 300, "seed": 5,
        "document_types": True, "keep_details": False,
    }
    outputs = [
        spanscore.evaluate(chunk_bytes=chunk, jobs=jobs, **options).to_dict()
        for chunk in (30_000, 65_536, 524_288)
        for jobs in (1, 2)
    ]
    buckets = [
        spanscore.evaluate(chunk_bytes=chunk, jobs=jobs, buckets=("length",), **options).to_dict()
        for chunk, jobs in ((30_000, 2), (524_288, 1))
    ]
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    engine = DaskEngine(n_workers=2, partition_bytes=40000)
    outputs.append(spanscore.evaluate(engine=engine, chunk_bytes=30_000, **options).to_dict())
    buckets.append(spanscore.evaluate(engine=engine, buckets=("length",), **options).to_dict())
    assert outputs[0]["intervals"]["per_type"]
    assert all(o == outputs[0] for o in outputs)
    assert all(b == buckets[0] for b in buckets)
    # Drawn as before, the same seed gives other numbers (the stream changed), the same shape.
    assert isinstance(Draws(np.array([1, 5, 9]), quick=False).sampler, _Sampler)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_intervals_draws_are_those_of_compares_families(seed: int) -> None:
    # The same generator calls in the same order: where no row is drawn apart (no heads,
    # ``_IntervalSampler._heads``), a family's resamples and an interval's are the same numbers
    # (only how the top-up's picks are tallied differs). Where a row holds most of the documents,
    # the intervals draw it after the others (tests/test_interval_coupled_draws.py): other numbers.
    rng = np.random.default_rng(seed)
    for counts in (rng.integers(1, 40, size=300), np.append(rng.integers(1, 9, size=200), 5000)):
        counts = counts.astype(np.int64)
        wanted = np.full(700, int(counts.sum()))
        drawn = _IntervalSampler(counts)
        mine = drawn._common(np.random.default_rng([seed, 1]), wanted)
        theirs = significance._FamilySampler(counts)._common(np.random.default_rng([seed, 1]), wanted)
        assert (mine == np.floor(mine)).all() and np.array_equal(mine, theirs) == (drawn.heads == 0)
        assert (mine.sum(axis=1) == wanted).all()
    assert drawn.heads == 1
