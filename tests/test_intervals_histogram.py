"""Intervals and paired tests drawn over the histogram of per-document counts: the draws have the
distribution of resampling documents, the intervals and p-values agree with resampling the
documents themselves (an independent implementation here) within Monte Carlo error, and they are
the same numbers whatever the chunk size, the number of processes or the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis.significance import Draws, Resampling, bootstrap, compare
from spanscore.cli.main import cli
from spanscore.stages.documents import DocCounts, Histogram, scores_per_row

SEEDS = 20


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("histogram")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


def docs_of(gold: Path, pred: Path) -> DocCounts:
    docs = spanscore.evaluate(reference=gold, predicted=pred, documents=True, keep_details=False).documents
    assert docs is not None
    return docs


def by_documents(docs: DocCounts, seed: int, resamples: int, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """The percentile bootstrap as first written: draw document indices with replacement, sum
    their rows, score, take the quantiles."""
    rng = np.random.default_rng([seed, 99])
    n = docs.stats.shape[0]
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(resamples)])
    totals = weights.astype(np.float64) @ docs.stats.astype(np.float64)
    scores = scores_per_row(DocCounts(np.arange(resamples), totals, docs.fields), 0.0, "0.5")  # type: ignore[arg-type]
    q = [(1 - level) / 2, (1 + level) / 2]
    return {name: tuple(np.quantile(scores[name]["f1"], q)) for name in ("strict", "overlap")}  # type: ignore[misc]


def test_bootstrap_draws_are_multinomial_over_the_distinct_rows() -> None:
    # Counts of 1, 2, 3, 40 and 500 documents: every branch of the draws (one row in a level,
    # rare rows drawn document by document, common rows by a multinomial).
    counts = np.array([1, 1, 1, 2, 2, 3, 40, 40, 40, 500], dtype=np.int64)
    n, draws = int(counts.sum()), Draws(counts)
    w = np.concatenate([draws.bootstrap(np.random.default_rng([7, k]), 256) for k in range(80)])
    assert (w.sum(axis=1) == n).all()
    p = counts / n
    # Multinomial moments: mean n p, variance n p (1 - p), covariance -n p_i p_j.
    assert w.mean(axis=0) == pytest.approx(n * p, rel=0.05, abs=0.05)
    assert w.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.1)
    assert np.cov(w[:, 6], w[:, 9])[0, 1] == pytest.approx(-n * p[6] * p[9], rel=0.15)
    swaps = np.concatenate([draws.swaps(np.random.default_rng([8, k]), 256) for k in range(80)])
    assert ((swaps >= 0) & (swaps <= counts)).all()
    assert swaps.mean(axis=0) == pytest.approx(counts / 2, rel=0.05, abs=0.05)
    assert swaps.var(axis=0) == pytest.approx(counts / 4, rel=0.1)


def test_a_histogram_is_the_same_whatever_the_order_and_merges_like_counts() -> None:
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 3, size=(500, 4))
    fields = ("a", "b", "c", "d")
    whole = Histogram.of(rows, fields)
    shuffled = Histogram.of(rows[rng.permutation(500)], fields)
    merged = Histogram.of(rows[:123], fields).merge(Histogram.of(rows[123:], fields))
    for other in (shuffled, merged):
        assert np.array_equal(other.rows, whole.rows) and np.array_equal(other.counts, whole.counts)
    assert whole.documents == 500 and np.array_equal(whole.total(), rows.sum(axis=0))


def test_intervals_agree_with_resampling_documents_within_monte_carlo_error(runs: dict[str, Path]) -> None:
    docs = docs_of(runs["gold"], runs["a"])
    assert docs.stats.shape[0] > 2000
    diffs: dict[str, list[float]] = {"strict": [], "overlap": []}
    for seed in range(SEEDS):
        new = bootstrap(docs, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=1000, seed=seed))
        old = by_documents(docs, seed, 1000)
        for name in diffs:
            diffs[name] += [new[name]["f1"]["low"] - old[name][0], new[name]["f1"]["high"] - old[name][1]]
    for name, d in diffs.items():
        # 0.3 F1 points: the mean bound difference over 20 seeds (each bound's Monte Carlo error
        # with 1000 resamples is about 0.2 points, so a biased draw would show).
        assert abs(float(np.mean(d))) < 0.003, name
        assert float(np.mean(np.abs(d))) < 0.006, name


def by_documents_paired(a: DocCounts, b: DocCounts, seed: int, trials: int) -> dict[str, float]:
    """Approximate randomisation as first written: swap each document with probability 1/2."""
    rng = np.random.default_rng([seed, 98])
    n = a.stats.shape[0]
    swaps = rng.integers(0, 2, size=(trials, n)).astype(np.float64)
    delta = (b.stats - a.stats).astype(np.float64)
    ta, tb = a.stats.sum(axis=0).astype(np.float64), b.stats.sum(axis=0).astype(np.float64)
    moved = swaps @ delta
    sa = scores_per_row(DocCounts(np.arange(trials), ta + moved, a.fields), 0.0, "0.5")  # type: ignore[arg-type]
    sb = scores_per_row(DocCounts(np.arange(trials), tb - moved, a.fields), 0.0, "0.5")  # type: ignore[arg-type]
    point = scores_per_row(DocCounts(np.arange(2), np.stack([ta, tb]), a.fields), 0.0, "0.5")  # type: ignore[arg-type]
    out = {}
    for name in ("strict", "overlap"):
        observed = point[name]["f1"][1] - point[name]["f1"][0]
        d = sb[name]["f1"] - sa[name]["f1"]
        out[name] = (np.count_nonzero(np.abs(d) >= abs(observed) - 1e-12) + 1) / (trials + 1)
    return out


def test_p_values_agree_with_swapping_documents_within_monte_carlo_error(runs: dict[str, Path]) -> None:
    # Two systems close enough that the p-values are neither 0 nor 1: the first 80 sentences.
    a, b = docs_of(runs["gold"], runs["a"]), docs_of(runs["gold"], runs["b"])
    a = DocCounts(a.keys[:80], a.stats[:80], a.fields)
    b = DocCounts(b.keys[:80], b.stats[:80], b.fields)
    new: dict[str, list[float]] = {"strict": [], "overlap": []}
    old: dict[str, list[float]] = {"strict": [], "overlap": []}
    for seed in range(SEEDS):
        tests = compare(
            [a, b], ["a", "b"], zero_division=0.0, credit="0.5", resampling=Resampling(trials=1000, seed=seed)
        )
        for c in tests.comparisons:
            if c["metric"] == "f1" and c["criterion"] in new:
                new[c["criterion"]].append(c["p_randomization"])
        for name, p in by_documents_paired(a, b, seed, 1000).items():
            old[name].append(p)
    for name in new:
        mean_old = float(np.mean(old[name]))
        assert 0.01 < mean_old < 0.99, (name, mean_old)  # a p-value with room to differ
        # The mean of 20 p-values of 1000 trials each: standard error about sqrt(p(1-p)/20000).
        se = np.sqrt(mean_old * (1 - mean_old) / (SEEDS * 1000))
        assert abs(float(np.mean(new[name])) - mean_old) < 5 * se + 1e-3, name


def cli_json(args: list[str]) -> dict[str, Any]:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


@pytest.mark.parametrize("kind", ["evaluate", "compare"])
def test_the_same_seed_gives_the_same_numbers_whatever_the_chunks_and_processes(
    runs: dict[str, Path], kind: str
) -> None:
    if kind == "evaluate":
        base = [
            "evaluate",
            str(runs["gold"]),
            str(runs["a"]),
            "--json",
            "--ci",
            "0.9",
            "--resamples",
            "200",
            "--seed",
            "4",
        ]
    else:
        base = [
            "compare",
            str(runs["gold"]),
            str(runs["a"]),
            str(runs["b"]),
            "--json",
            "--resamples",
            "200",
            "--trials",
            "200",
            "--seed",
            "4",
            "--per-type",
        ]
    # compare reads with the default chunks; its per-document rows are evaluate's.
    settings = ((1 << 22, 1), (4096, 1), (5000, 2)) if kind == "evaluate" else ((None, 1), (None, 2))
    outputs = [
        cli_json([*base, *(["--chunk-size", str(chunk)] if chunk else []), "--jobs", str(jobs)])
        for chunk, jobs in settings
    ]
    assert all(o == outputs[0] for o in outputs)


def test_intervals_from_the_additive_state_equal_those_from_the_rows(runs: dict[str, Path]) -> None:
    # --ci alone keeps the per-document statistics as a histogram; with per-document rows asked
    # for, the intervals (and the mean over documents) are computed from the rows: the same bits.
    options: dict[str, Any] = {"reference": runs["gold"], "predicted": runs["a"], "keep_details": False}
    ci: dict[str, Any] = {"ci": 0.95, "resamples": 300, "seed": 2}
    light = spanscore.evaluate(chunk_bytes=3000, **options, **ci)
    rows = spanscore.evaluate(documents=True, **options, **ci)
    assert light.documents is None and light.document_state is not None and rows.documents is not None
    assert light.to_dict() == rows.to_dict()
    assert light.intervals is not None and light.intervals["count"] == rows.documents.stats.shape[0]
    # The state holds the distinct rows, not the documents.
    assert light.document_state.closed.rows.shape[0] < light.intervals["count"]


def test_the_per_type_interval_table_has_every_criterion_and_semeval_scheme(runs: dict[str, Path]) -> None:
    from spanscore.presentation.comparison import per_type_interval_table

    r = spanscore.evaluate(reference=runs["gold"], predicted=runs["a"], ci=0.95, resamples=50, keep_details=False)
    assert r.intervals is not None
    table = per_type_interval_table(r.intervals["per_type"], "F1 per type")
    names = [c.name for c in table.columns]
    assert names[0] == "type"
    for scheme in ("strict", "exact", "partial", "type"):
        assert f"semeval_{scheme}" in names
    assert {"strict", "boundary", "left", "right", "overlap", "token"} <= set(names)
    assert len(table.rows) == len(r.intervals["per_type"])


def test_a_histogram_keeps_its_rows_in_the_narrowest_integers_and_exactly() -> None:
    # Per-document counts are small: 16-bit rows where they fit, 32 or 64 bits where one does not;
    # histograms of different widths merge into the histogram of all their rows.
    rng = np.random.default_rng(2)
    fields = ("a", "b", "c")
    small = rng.integers(-5, 50, size=(300, 3))
    wide = small.copy()
    wide[7, 1] = 40_000
    huge = small.copy()
    huge[3, 2] = 1 << 40
    assert Histogram.of(small, fields).rows.dtype == np.int16
    assert Histogram.of(wide, fields).rows.dtype == np.int32
    assert Histogram.of(huge, fields).rows.dtype == np.int64
    merged = Histogram.of(small, fields).merge(Histogram.of(wide, fields)).merge(Histogram.of(huge, fields))
    whole = Histogram.of(np.concatenate((small, wide, huge)), fields)
    assert np.array_equal(merged.rows, whole.rows) and np.array_equal(merged.counts, whole.counts)
    assert np.array_equal(whole.total(), np.concatenate((small, wide, huge)).sum(axis=0))
    assert int(whole.total()[2]) == 3 * int(small[:, 2].sum()) - int(small[3, 2]) + (1 << 40)


def test_intervals_are_the_same_drawn_in_processes_or_on_threads(runs: dict[str, Path]) -> None:
    # Blocks of resamples go to forked processes, or to threads where another thread runs (a
    # fork beside it is unsafe): each block has its own generator, so the numbers are the same.
    import threading

    docs = docs_of(runs["gold"], runs["a"])
    resampling = Resampling(resamples=600, seed=5)
    alone = bootstrap(docs, zero_division=0.0, credit="0.5", resampling=resampling)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        beside = bootstrap(docs, zero_division=0.0, credit="0.5", resampling=resampling)
    finally:
        stop.set()
        other.join()
    assert beside == alone
    assert alone["strict"]["f1"]["low"] < alone["strict"]["f1"]["value"] < alone["strict"]["f1"]["high"]


def test_a_document_cut_by_a_chunk_boundary_sums_exactly_from_compact_rows() -> None:
    # Workers may send compact rows (compare's paired counting): the halves of a cut document
    # add up in 64 bits, never wrapping in 16.
    from spanscore.stages.documents import compact_rows

    fields = ("reference", "predicted")
    first = DocCounts(np.array([0, 1]), compact_rows(np.array([[1, 2], [30_000, 5]])), fields)
    second = DocCounts(np.array([0, 1]), compact_rows(np.array([[30_000, 7], [4, 4]])), fields)
    assert first.stats.dtype == np.int16 and second.stats.dtype == np.int16
    for joined in (first.then(second, 1), DocCounts.join([(first, 0), (second, 1)])):
        assert joined.keys.tolist() == [0, 1, 2]
        assert joined.stats.tolist() == [[1, 2], [60_000, 12], [4, 4]]
