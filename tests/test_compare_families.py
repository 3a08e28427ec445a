"""compare resamples each family of columns (the mentions' criteria and schemes; the token score)
from its own narrowing of the systems' joint histogram, draws the multinomials through Poisson
counts, and scores every group's resamples at once. Checked here: the draws are multinomial, each
score reads only its family's columns, batching and processes change no number, and the paired
intervals and p-values agree with resampling the documents themselves (an independent
implementation here) within Monte Carlo error over 20 seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.buckets import _Pile, joint_groups
from spanscore.analysis.significance import (
    Resampling,
    _Sampler,
    compare,
    compare_histogram,
    compare_histograms,
    draw_families,
    joint_histogram,
    score_columns,
    score_totals,
)
from spanscore.stages.documents import DocCounts, Histogram, scores_per_row

SEEDS = 20


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("families")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


def docs_of(gold: Path, pred: Path, types: bool = False) -> DocCounts:
    docs = spanscore.evaluate(
        reference=gold, predicted=pred, documents=True, document_types=types, keep_details=False
    ).documents
    assert docs is not None
    return docs


def test_poisson_drawn_resamples_are_multinomial() -> None:
    # Rows held by 1 and 2 documents (drawn one document at a time) and by 3 to 5000 (Poisson
    # counts topped up to the total): the sum is always the corpus, the moments multinomial.
    counts = np.array([1, 1, 1, 2, 3, 11, 40, 40, 300, 5000], dtype=np.int64)
    n, sampler = int(counts.sum()), _Sampler(counts)
    assert sampler.picks.table is not None and sampler.common.shape[0] == int((counts > _Sampler.RARE).sum()) == 6
    w = np.concatenate([sampler.draw(np.random.default_rng([7, k]), 256) for k in range(80)])
    assert (w.sum(axis=1) == n).all() and (w >= 0).all()
    p = counts / n
    assert w.mean(axis=0) == pytest.approx(n * p, rel=0.03, abs=0.05)
    assert w.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.1)
    assert np.cov(w[:, 8], w[:, 9])[0, 1] == pytest.approx(-n * p[8] * p[9], rel=0.15)
    # The table's picks are a search of the cumulative counts for uniform documents.
    documents = np.random.default_rng(3).integers(0, sampler.pooled, size=1000)
    searched = np.searchsorted(np.cumsum(sampler._pool), documents, side="right")
    assert np.array_equal(sampler.picks.rows(np.random.default_rng(3), 1000), searched)


def test_few_draws_are_multinomial_too() -> None:
    # A dozen documents: the Poisson counts often pass the total and are drawn again.
    counts = np.array([1, 11, 12], dtype=np.int64)
    sampler = _Sampler(counts)
    w = np.concatenate([sampler.draw(np.random.default_rng([9, k]), 256) for k in range(40)])
    assert (w.sum(axis=1) == 24).all()
    p = counts / 24
    assert w.mean(axis=0) == pytest.approx(24 * p, rel=0.03)
    assert w.var(axis=0) == pytest.approx(24 * p * (1 - p), rel=0.1)


def test_each_score_reads_only_its_columns(runs: dict[str, Path]) -> None:
    docs = docs_of(runs["gold"], runs["a"])
    hist = joint_histogram([docs], "0.5")
    fields = tuple(f.split(":", 1)[1] for f in hist.fields)
    rng = np.random.default_rng(0)
    totals = np.repeat(hist.total()[None, :].astype(np.float64), 2, axis=0)
    per_score = score_columns(fields)
    assert set(per_score) == set(scores_per_row(DocCounts(np.arange(1), totals[:1], fields), 0.0, "0.5"))  # type: ignore[arg-type]
    families = draw_families(fields)
    assert sorted(i for cols in families.values() for i in cols) == list(range(len(fields)))
    for name, cols in per_score.items():
        assert [f for f in families if set(cols) <= set(families[f])], name
        other = [i for i in range(len(fields)) if i not in cols]
        changed = totals.copy()
        changed[1, other] = rng.integers(1, 1000, size=len(other))
        scored = score_totals(changed, fields, 0.0, "0.5")
        for metric, values in scored[name].items():
            assert values[0] == values[1], (name, metric)


def test_batched_threaded_and_serial_draws_give_the_same_numbers(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    systems = [docs_of(runs["gold"], runs[n], types=True) for n in ("a", "b")]
    joint = joint_histogram(systems, "0.5")
    rows = [d.type_rows for d in systems]
    assert rows[0] is not None and rows[1] is not None
    groups = joint_groups([(systems[0], rows[0]), (systems[1], rows[1])], "0.5")
    hists = [joint, *(h for _, h in groups)]
    resampling = Resampling(resamples=300, trials=300, seed=4)
    options = {"zero_division": 0.0, "credit": "0.5", "resampling": resampling}
    alone = [compare_histogram(h, ["a", "b"], **options) for h in hists]  # type: ignore[arg-type]
    monkeypatch.setattr(significance, "PARALLEL_WORK", 0)  # every pass on threads
    assert compare_histograms(hists, ["a", "b"], **options) == alone  # type: ignore[arg-type]
    monkeypatch.setattr(significance, "PARALLEL_WORK", 1 << 60)
    assert compare_histograms(hists[::-1], ["a", "b"], **options) == alone[::-1]  # type: ignore[arg-type]
    # A few histograms at a time (as many as threads draw them), or all in one batch: the same.
    batches: list[int] = []
    batch = significance._compare_batch
    monkeypatch.setattr(
        significance, "_compare_batch", lambda joints, *rest: batches.append(len(joints)) or batch(joints, *rest)
    )
    for threads in (1, 2, len(hists)):
        batches.clear()
        monkeypatch.setattr(significance, "_threads", lambda n=threads: n)
        assert compare_histograms(hists, ["a", "b"], **options) == alone  # type: ignore[arg-type]
        assert max(batches) == threads and sum(batches) == len(hists)


@pytest.mark.parametrize("big_share", [True, False])
def test_common_rows_summed_apart_are_the_counts_times_the_rows(big_share: bool) -> None:
    counts = np.array([900, 40, 25, 12, 3, 1] if big_share else [40, 35, 25, 12, 3, 1])
    sampler = _Sampler(counts)
    assert bool(sampler.big_share) is big_share
    rows = np.random.default_rng(1).integers(0, 9, size=(sampler.common.shape[0], 5)).astype(np.float64)
    wanted = np.random.default_rng(2).integers(0, 1000, size=40)
    counted = sampler._common(np.random.default_rng(3), wanted).astype(np.float64) @ rows
    assert np.array_equal(sampler._common_summed(np.random.default_rng(3), wanted, rows), counted)



def test_equal_histograms_are_tested_once_with_the_numbers_of_each_alone(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    systems = [docs_of(runs["gold"], runs[n], types=True) for n in ("a", "b")]
    joint = joint_histogram(systems, "0.5")
    rows = [d.type_rows for d in systems]
    assert rows[0] is not None and rows[1] is not None
    group = joint_groups([(systems[0], rows[0]), (systems[1], rows[1])], "0.5")[0][1]
    resampling = Resampling(resamples=200, trials=200, seed=9)
    options = {"zero_division": 0.0, "credit": "0.5", "resampling": resampling}
    alone = [compare_histogram(h, ["a", "b"], **options) for h in (joint, group)]  # type: ignore[arg-type]
    drawn: list[int] = []
    resampled = significance._Family.resampled
    monkeypatch.setattr(
        significance._Family, "resampled",
        lambda self, rng, size: drawn.append(size) or resampled(self, rng, size),
    )
    tested = compare_histograms([joint, group, joint, group], ["a", "b"], **options)  # type: ignore[arg-type]
    assert tested == [*alone, *alone]
    assert tested[0] is not tested[2]  # copies: a caller may change one
    # Two histograms' families drawn, not four: 200 resamples each of two families apiece.
    assert sum(drawn) == 2 * 2 * 200


def test_a_group_of_every_mention_of_the_only_type_has_the_corpus_numbers(tmp_path: Path, btc: Path) -> None:
    def one_type(blocks: list[list[str]]) -> list[list[str]]:
        """Every mention's type X (the systems' relabelled mentions too)."""
        rows = [[line.rsplit("\t", 1) for line in block] for block in blocks]
        return [[f"{w}\t{t if t == 'O' else t[:2] + 'X'}" for w, t in block] for block in rows]

    gold = sentences(btc / "test.txt")[:400]
    paths = [
        write_conll(tmp_path / f"{name}.conll", one_type(blocks))
        for name, blocks in (("gold", gold), ("a", perturb(gold, 1, 0.45)), ("b", perturb(gold, 2, 0.35)))
    ]
    c = spanscore.compare(reference=paths[0], systems=paths[1:], per_type=True, resamples=200, trials=200, seed=3)
    out = c.to_dict()
    (group,) = out["per_type"]
    assert group["bucket"] == "X"
    assert [s["metrics"] for s in group["systems"]] == [s["metrics"] for s in out["systems"]]
    assert group["comparisons"] == out["comparisons"]



@pytest.mark.parametrize("with_zero_row", [False, True])
def test_a_groups_documents_without_a_mention_are_its_histograms_zero_row(with_zero_row: bool) -> None:
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 3, size=(400, 6))
    rows[:, 0] += 1  # no document of the group is all zeros...
    if with_zero_row:
        rows[::50] = 0  # ...unless some are
    fields = tuple(map(str, range(6)))
    pile = _Pile(fields)
    for block in np.array_split(rows, 7):
        pile.add(Histogram.of(block, fields))
    got = pile.with_zeros(1000)
    want = Histogram.of(np.concatenate((rows, np.zeros((600, 6), dtype=rows.dtype))), fields)
    assert got.rows.dtype == want.rows.dtype
    assert np.array_equal(got.rows, want.rows) and np.array_equal(got.counts, want.counts)


def by_documents(
    a: DocCounts, b: DocCounts, seed: int, resamples: int, level: float = 0.95
) -> dict[str, dict[str, float]]:
    """The paired bootstrap as first written: draw document indices with replacement, the same
    for both systems, sum their rows, score; each system's interval, the difference's interval
    and its p-value."""
    rng = np.random.default_rng([seed, 97])
    n = a.stats.shape[0]
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(resamples)]).astype(float)
    scores = [
        scores_per_row(DocCounts(np.arange(resamples), weights @ d.stats.astype(float), d.fields), 0.0, "0.5")
        for d in (a, b)
    ]
    points = [
        scores_per_row(DocCounts(np.arange(1), d.stats.sum(axis=0)[None, :], d.fields), 0.0, "0.5") for d in (a, b)
    ]
    q = [(1 - level) / 2, (1 + level) / 2]
    out = {}
    for name in ("strict", "overlap", "token"):
        diff = scores[1][name]["f1"] - scores[0][name]["f1"]
        observed = float(points[1][name]["f1"][0] - points[0][name]["f1"][0])
        hits = np.count_nonzero(np.abs(diff - observed) >= abs(observed) - 1e-12)
        out[name] = {
            "a_low": float(np.quantile(scores[0][name]["f1"], q[0])),
            "a_high": float(np.quantile(scores[0][name]["f1"], q[1])),
            "b_low": float(np.quantile(scores[1][name]["f1"], q[0])),
            "b_high": float(np.quantile(scores[1][name]["f1"], q[1])),
            "low": float(np.quantile(diff, q[0])),
            "high": float(np.quantile(diff, q[1])),
            "p": (hits + 1) / (resamples + 1),
        }
    return out


def test_paired_intervals_agree_with_resampling_documents_within_monte_carlo_error(runs: dict[str, Path]) -> None:
    a, b = docs_of(runs["gold"], runs["a"]), docs_of(runs["gold"], runs["b"])
    assert a.stats.shape[0] > 2000
    bounds: dict[str, list[float]] = {"strict": [], "overlap": [], "token": []}
    lows: dict[str, list[float]] = {name: [] for name in bounds}
    widths: dict[str, list[float]] = {name: [] for name in bounds}
    for seed in range(SEEDS):
        tests = compare([a, b], ["a", "b"], zero_division=0.0, credit="0.5", resampling=Resampling(seed=seed))
        old = by_documents(a, b, seed, 1000)
        for name in bounds:
            new = {
                "a": tests.intervals[0][name]["f1"],
                "b": tests.intervals[1][name]["f1"],
                "": next(c for c in tests.comparisons if c["criterion"] == name and c["metric"] == "f1"),
            }
            for side, entry in new.items():
                prefix = f"{side}_" if side else ""
                low, high = old[name][f"{prefix}low"], old[name][f"{prefix}high"]
                bounds[name] += [entry["low"] - low, entry["high"] - high]
                lows[name].append(entry["low"] - low)
                widths[name].append((entry["high"] - entry["low"]) / (high - low))
    for name, d in bounds.items():
        # 0.3 F1 points: the mean bound difference over 20 seeds (each bound's Monte Carlo error
        # with 1000 resamples is about 0.2 points, so a biased draw would show).
        assert abs(float(np.mean(d))) < 0.003, name
        assert abs(float(np.mean(lows[name]))) < 0.003, name
        assert float(np.mean(np.abs(d))) < 0.006, name
        # Resamples of the wrong size or spread would widen or narrow every interval alike.
        assert abs(float(np.mean(widths[name])) - 1) < 0.03, (name, float(np.mean(widths[name])))


def test_bootstrap_p_values_agree_with_resampling_documents_within_monte_carlo_error(
    runs: dict[str, Path],
) -> None:
    # The first 80 sentences: the difference is small enough that the p-values are neither 0 nor 1.
    a, b = docs_of(runs["gold"], runs["a"]), docs_of(runs["gold"], runs["b"])
    a = DocCounts(a.keys[:80], a.stats[:80], a.fields)
    b = DocCounts(b.keys[:80], b.stats[:80], b.fields)
    new: dict[str, list[float]] = {"strict": [], "overlap": []}
    old: dict[str, list[float]] = {"strict": [], "overlap": []}
    for seed in range(SEEDS):
        tests = compare([a, b], ["a", "b"], zero_division=0.0, credit="0.5", resampling=Resampling(seed=seed))
        reference = by_documents(a, b, seed, 1000)
        for name in new:
            entry = next(c for c in tests.comparisons if c["criterion"] == name and c["metric"] == "f1")
            new[name].append(entry["p_bootstrap"])
            old[name].append(reference[name]["p"])
    for name in new:
        mean_old = float(np.mean(old[name]))
        assert 0.01 < mean_old < 0.99, (name, mean_old)
        # Paired bootstrap p-values of 1000 resamples: each about sqrt(p(1-p)/1000) apart by chance.
        se = np.sqrt(mean_old * (1 - mean_old) / (SEEDS * 1000))
        assert abs(float(np.mean(new[name])) - mean_old) < 5 * se + 2e-3, name


def dense(docs: DocCounts, group: str) -> DocCounts:
    """One group's statistics per document, every document (zeros where it has no mention)."""
    rows = docs.type_rows
    assert rows is not None
    mine = np.flatnonzero(rows.type_index == rows.names.index(group))
    out = np.zeros_like(docs.stats)
    np.add.at(out, np.searchsorted(docs.keys, rows.keys[mine]), rows.stats[mine])
    return DocCounts(docs.keys, out, docs.fields)


def test_a_groups_paired_intervals_agree_with_resampling_its_documents(runs: dict[str, Path]) -> None:
    # A type's group: its documents without a mention hold most of its documents (ORG: 70%;
    # PER's hold half, and draw with the others), so its draws take that row first (a binomial)
    # and the others' multinomial over the draws left.
    systems = [docs_of(runs["gold"], runs[n], types=True) for n in ("a", "b")]
    rows = [d.type_rows for d in systems]
    assert rows[0] is not None and rows[1] is not None
    group = dict(joint_groups([(systems[0], rows[0]), (systems[1], rows[1])], "0.5"))["ORG"]
    family = significance._Family("spans", group.compacted(), significance._system_columns(group)[1],
                                  draw_families(significance._system_columns(group)[0])["spans"])
    assert family.draws.big_share > 0.5
    a, b = dense(systems[0], "ORG"), dense(systems[1], "ORG")
    bounds: dict[str, list[float]] = {"strict": [], "overlap": []}
    widths: dict[str, list[float]] = {name: [] for name in bounds}
    for seed in range(SEEDS):
        tests = compare_histogram(group, ["a", "b"], zero_division=0.0, credit="0.5", resampling=Resampling(seed=seed))
        old = by_documents(a, b, seed, 1000)
        for name in bounds:
            new = {
                "a": tests.intervals[0][name]["f1"],
                "b": tests.intervals[1][name]["f1"],
                "": next(c for c in tests.comparisons if c["criterion"] == name and c["metric"] == "f1"),
            }
            for side, entry in new.items():
                prefix = f"{side}_" if side else ""
                low, high = old[name][f"{prefix}low"], old[name][f"{prefix}high"]
                bounds[name] += [entry["low"] - low, entry["high"] - high]
                widths[name].append((entry["high"] - entry["low"]) / (high - low))
    for name, d in bounds.items():
        # The mean bound difference over 20 seeds and 3 intervals (each bound's Monte Carlo error
        # about 0.2 F1 points: their mean's about 0.02) under 0.1 F1 points, the widths within 3%:
        # a group's row drawn first with a tenth too small a share is 0.2 points off.
        assert abs(float(np.mean(d))) < 0.001, (name, float(np.mean(d)))
        assert abs(float(np.mean(widths[name])) - 1) < 0.03, (name, float(np.mean(widths[name])))
