"""Intervals draw each family of a histogram's columns (the mentions' criteria and schemes; the
token score) from its own narrowing of the histogram where that is cheaper, and randomisation
trials count each row's swaps as the set bits of random words. Checked here: the families hold
every column and each score reads one family only; the choice depends on the histogram alone;
over 20 seeds the family draws' intervals agree with the whole table's within Monte Carlo
error; the swap counts have the binomial's exact
probabilities, every branch; and a seed gives the same numbers for every chunk size and --jobs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import (
    SWAP_WORDS,
    Draws,
    Resampling,
    _draw_cost,
    _Table,
    histogram_of,
    interval_families,
    intervals,
    score_columns,
)
from spanscore.stages.documents import Histogram

SEEDS = 20


@pytest.fixture(scope="module")
def state(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    folder = tmp_path_factory.mktemp("families")
    gold = sentences(btc / "test.txt")
    g = write_conll(folder / "gold.conll", gold)
    p = write_conll(folder / "pred.conll", perturb(gold, 1, 0.45))
    report = spanscore.evaluate(reference=g, predicted=p, ci=0.95, keep_details=False)
    assert report.document_state is not None
    return report.document_state, report.counts.credit


def whole_table(fields: Any) -> dict[str, list[int]]:
    """Every column of a histogram drawn together, as before families."""
    return {"": list(range(len(fields)))}


@pytest.mark.parametrize("credit", ["0.5", "dice"])
def test_families_hold_every_column_and_each_score_reads_one(state: tuple[Any, str], credit: str) -> None:
    doc_state, _ = state
    hist = histogram_of(doc_state.closed, credit)
    families = interval_families(hist.fields)
    assert set(families) == {"spans", "token"}
    assert sorted(i for cols in families.values() for i in cols) == list(range(len(hist.fields)))
    for name, cols in score_columns(hist.fields).items():
        assert sum(set(cols) <= set(mine) for mine in families.values()) == 1, name
    # A table whose scores read a column outside the families is drawn whole.
    assert interval_families((*hist.fields, "extra")) == whole_table((*hist.fields, "extra"))


def test_a_table_drawn_whole_has_its_draws_intervals(state: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Drawn whole, a table's intervals are those of its draws from the generators of its blocks
    # (rebuilt here from the same generator calls), as before families.
    doc_state, credit = state
    hist = histogram_of(doc_state.closed, credit)
    monkeypatch.setattr(significance, "interval_families", whole_table)
    resampling = Resampling(resamples=300, seed=3)
    got = intervals(doc_state, zero_division=0.0, credit=credit, resampling=resampling)["scores"]
    table, draws = _Table(hist.rows, hist.counts, hist.fields), Draws(hist.counts, quick=True)
    rows = (table.distinct[draws.rare], table.distinct[draws.common])
    sums = np.concatenate([
        table.drawn_sums(draws, rows, np.random.default_rng([3, 0, k]), size)
        for k, size in enumerate(draws.plan(300))
    ])
    scores = significance.score_totals(sums, table.fields, 0.0, credit)
    for name in ("strict", "overlap", "token"):
        low, high = np.quantile(scores[name]["f1"], [0.025, 0.975])
        assert (got[name]["f1"]["low"], got[name]["f1"]["high"]) == (low, high)


def costs(n: int, seed: int = 0) -> tuple[float, float, Histogram]:
    """A synthetic table of ``n`` documents (mentions and tokens drawn apart, as sentences of
    every length have), its whole draws' cost and its families' together."""
    rng = np.random.default_rng(seed)
    mentions = rng.poisson(2.0, size=n)
    found = rng.binomial(mentions, 0.7)
    partial = rng.binomial(mentions - found, 0.5)
    predicted = found + partial + rng.poisson(0.3, size=n)
    ref_tokens = rng.binomial(3 * mentions, 0.9)
    tp = rng.binomial(ref_tokens, 0.8)
    pred_tokens = tp + rng.poisson(0.5, size=n)
    fields = ("reference", "predicted", "strict.full_ref", "strict.partial_ref", "strict.full_pred",
              "strict.partial_pred", "token.true_positive", "token.reference", "token.predicted")
    rows = np.stack([mentions, predicted, found, partial, found, partial, tp, ref_tokens, pred_tokens], axis=1)
    hist = Histogram.of(rows[rng.permutation(n)], fields)
    whole = _draw_cost(Draws(hist.counts), len(fields))
    apart = 0.0
    for cols in interval_families(fields).values():
        narrow = Histogram.of(hist.rows[:, cols], tuple(fields[i] for i in cols), hist.counts)
        assert narrow.rows.shape[0] < hist.rows.shape[0]
        apart += _draw_cost(Draws(narrow.counts), len(cols))
    return whole, apart, hist


def test_the_cheaper_draws_are_chosen_by_the_histogram_alone() -> None:
    # Many documents: the mentions' and tokens' counts multiply each other's distinct rows, and
    # drawn apart each family has far fewer rows and rare documents.
    whole, apart, hist = costs(50_000)
    assert apart < whole / 1.5
    # Few documents: each family's fixed cost (the top-up of its Poisson counts) outweighs the
    # rows it saves, and the table is drawn whole (500 documents: whole 3.6 ms, by family 4.5 ms
    # for 1,000 resamples on the 2-core benchmark machine; at 2,000 the families are cheaper).
    small_whole, small_apart, _ = costs(500)
    assert small_whole < small_apart
    # The same documents in another order: the same histogram, costs and choice.
    again_whole, again_apart, again = costs(50_000)
    assert np.array_equal(again.rows, hist.rows) and (again_whole, again_apart) == (whole, apart)


def test_a_types_table_is_drawn_by_family() -> None:
    # A type's table: the documents with a mention of the type (5,000 here), and the others on
    # its zero row, drawn first by a binomial. Each family's own cost is a fraction of a
    # microsecond a resample in a process that keeps freed memory (the calls; the top-up follows
    # the draws left after the zero row's), so the families' far fewer rows and rare documents
    # make them the cheaper draws, as the clock says too (whole 20 us, by family 14 us a resample
    # on the 2-core benchmark machine). The cost model of before (16 us a family) drew it whole.
    _, _, hist = costs(5000, seed=1)
    table = hist.with_zeros(12_000)
    assert Draws(table.counts).sampler.big_share > 0.5
    whole = _draw_cost(Draws(table.counts), len(table.fields))
    apart = 0.0
    for cols in interval_families(table.fields).values():
        narrow = Histogram.of(table.rows[:, cols], tuple(table.fields[i] for i in cols), table.counts)
        apart += _draw_cost(Draws(narrow.counts), len(cols))
    assert apart < whole
    parts = significance._draw_parts(table, _Table(table.rows, table.counts, table.fields))
    assert sorted(name for name, *_ in parts) == ["spans", "token"]


def test_family_draws_agree_with_the_whole_tables_within_monte_carlo_error(
    state: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc_state, credit = state
    picked = [("strict", None), ("overlap", None), ("token", None), ("strict", "PER"), ("token", "PER")]

    def bounds(out: dict[str, Any]) -> list[tuple[float, float]]:
        got = []
        for name, kind in picked:
            f1 = (out["per_type"][kind] if kind else out["scores"])[name]["f1"]
            got.append((f1["low"], f1["high"]))
        return got

    new, old = [], []
    with monkeypatch.context() as m:
        # Families drawn apart for every table, large or small: their distribution is the test.
        m.setattr(significance, "_draw_cost", lambda draws, columns: float(draws.k))
        for seed in range(SEEDS):
            new.append(bounds(intervals(doc_state, zero_division=0.0, credit=credit, resampling=Resampling(seed=seed))))
    with monkeypatch.context() as m:
        m.setattr(significance, "interval_families", whole_table)
        for seed in range(SEEDS):
            old.append(bounds(intervals(doc_state, zero_division=0.0, credit=credit, resampling=Resampling(seed=seed))))
    a, b = np.array(new), np.array(old)  # [seed, score, low/high]
    assert not np.array_equal(a, b)  # another stream
    for j, (name, kind) in enumerate(picked):
        diff = a[:, j, :] - b[:, j, :]
        # 0.3 F1 points: the mean bound difference over 20 seeds (each bound's Monte Carlo error
        # with 1000 resamples is about 0.2 points, so a biased draw would show).
        assert abs(float(diff[:, 0].mean())) < 0.003, (name, kind, "low")
        assert abs(float(diff[:, 1].mean())) < 0.003, (name, kind, "high")
        assert float(np.abs(diff).mean()) < 0.006, (name, kind)
        widths = (a[:, j, 1] - a[:, j, 0]) / (b[:, j, 1] - b[:, j, 0])
        assert abs(float(widths.mean()) - 1) < 0.03, (name, kind, float(widths.mean()))


def test_the_same_seed_gives_the_same_family_intervals_whatever_the_chunks_and_jobs(
    btc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(significance, "_draw_cost", lambda draws, columns: float(draws.k))  # families everywhere
    gold = sentences(btc / "test.txt")
    g = write_conll(tmp_path / "gold.conll", gold)
    p = write_conll(tmp_path / "pred.conll", perturb(gold, 1, 0.45))
    outputs = [
        spanscore.evaluate(
            reference=g, predicted=p, ci=0.9, resamples=300, seed=5, chunk_bytes=chunk, jobs=jobs, keep_details=False
        ).intervals
        for chunk, jobs in ((1 << 22, 1), (4096, 1), (5000, 2))
    ]
    assert all(o == outputs[0] for o in outputs)


def binomial_pmf(k: int, c: int) -> float:
    return math.exp(math.lgamma(c + 1) - math.lgamma(k + 1) - math.lgamma(c - k + 1) - c * math.log(2))


@pytest.mark.parametrize(
    "counts",
    [
        [1, 2, 7, 16, 17, 40, 63, 64],  # one word each
        [1, 65, 127, 128, 129, 300, 64 * SWAP_WORDS],  # several words, the last masked or full
        [3, 64 * SWAP_WORDS + 1, 5000],  # binomials beyond the words
    ],
)
def test_swap_counts_have_the_binomials_exact_probabilities(counts: list[int]) -> None:
    draws = Draws(np.array(counts, dtype=np.int64))
    layout = draws._swap_layout()
    swaps = np.concatenate([draws.swaps(np.random.default_rng([21, k]), 256) for k in range(40)])
    assert swaps.shape == (40 * 256, len(counts))
    assert ((swaps >= 0) & (swaps <= np.array(counts)) & (swaps == np.floor(swaps))).all()
    assert layout.large.tolist() == [i for i, c in enumerate(counts) if c > 64 * SWAP_WORDS]
    for i, c in enumerate(counts):
        observed = np.bincount(swaps[:, i].astype(np.int64), minlength=c + 1)
        expected = np.array([binomial_pmf(k, c) for k in range(c + 1)]) * swaps.shape[0]
        big = expected >= 5
        obs = np.append(observed[big], observed[~big].sum()).astype(float)
        want = np.append(expected[big], expected[~big].sum())
        keep = want > 0
        chi2 = float(((obs[keep] - want[keep]) ** 2 / want[keep]).sum())
        dof = max(int(keep.sum()) - 1, 1)
        assert chi2 < dof + 6 * math.sqrt(2 * dof), (c, chi2, dof)
    # Rows swap independently: no correlation between neighbours sharing a word's draw.
    corr = np.corrcoef(swaps.T)
    off = corr[~np.eye(len(counts), dtype=bool)]
    assert np.abs(off).max() < 6 / math.sqrt(swaps.shape[0])


@pytest.mark.parametrize("per_resample", [3, 5000])
def test_tallies_per_resample_or_in_one_bincount_are_the_counts(per_resample: int) -> None:
    # Few picks a resample: one bincount over every (resample, row) cell; many: one per resample.
    rng = np.random.default_rng(per_resample)
    width, size = 300, 17
    counts = rng.poisson(per_resample, size=size)
    counts[3] = 0  # a resample that picks nothing
    picked = rng.integers(0, width, size=int(counts.sum()))
    got = significance._tallies(picked, counts, width)
    ends = np.cumsum(counts)
    want = np.array([np.bincount(picked[e - c : e], minlength=width) for c, e in zip(counts, ends, strict=True)])
    assert got.shape == (size, width) and np.array_equal(got, want)
    assert (picked.shape[0] < significance.TALLY_LOOP * size) == (per_resample == 3)  # each branch once


@pytest.mark.parametrize("counts", [[1, 2, 64], [1, 65, 2000, 7], [5000, 3000], [70, 80]])
def test_swap_sums_are_the_swaps_times_the_rows(counts: list[int]) -> None:
    # compare's trials multiply each part of the rows (one word, several, binomial) by its own
    # draws: the same numbers as the table of swaps times every row, from the same generator.
    draws = Draws(np.array(counts, dtype=np.int64))
    rows = np.random.default_rng(1).integers(-3, 9, size=(len(counts), 4)).astype(np.float64)
    for seed in range(3):
        table = draws.swaps(np.random.default_rng(seed), 50)
        summed = draws.swap_sums(np.random.default_rng(seed), 50, draws.swap_rows(rows))
        assert np.array_equal(summed, table @ rows)


@pytest.mark.parametrize("forced", [False, True])
def test_resampled_totals_are_the_intervals_draws(
    state: tuple[Any, str], monkeypatch: pytest.MonkeyPatch, forced: bool
) -> None:
    # bench/coverage_study.py reads every resample through resampled_totals: the intervals' own,
    # whether the table is drawn whole (BTC's is small) or by family.
    doc_state, credit = state
    if forced:
        monkeypatch.setattr(significance, "_draw_cost", lambda draws, columns: float(draws.k))
    hist = histogram_of(doc_state.closed, credit)
    resampling = Resampling(resamples=400, seed=9)
    totals = significance.resampled_totals(hist, lambda k, name: significance._overall_rng(9, k, name), 400)
    scores = significance.score_totals(totals, hist.fields, 0.0, credit)
    got = significance.bootstrap(hist, zero_division=0.0, credit=credit, resampling=resampling)
    for name in ("strict", "overlap", "token"):
        low, high = np.quantile(scores[name]["f1"], [0.025, 0.975])
        assert (got[name]["f1"]["low"], got[name]["f1"]["high"]) == (low, high)
