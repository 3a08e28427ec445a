"""The bootstrap's top-up picks above ``TABLE_LIMIT`` pooled documents come from an alias table
(``_Picks``, ``alias_table``): exact, each row with probability its documents' share. Checked
here: every row's share of the table's (column, uniform) pairs is its weight's, as whole numbers;
every pair's pick enumerated (both ways of drawing the pair); the picks' frequencies by a
chi-square; the samplers' resamples multinomial with the limit lowered; and below the limit the
picks are still those of the per-document table (the same stream as before)."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll
from test_interval_quick_draws import agree

import spanscore
from spanscore import api
from spanscore.analysis import significance
from spanscore.analysis.significance import (
    Resampling,
    _FamilySampler,
    _IntervalSampler,
    _Picks,
    _Sampler,
    alias_table,
    compare,
    intervals,
)


def shares(threshold: np.ndarray, alias: np.ndarray, rows: int, capacity: int) -> list[int]:
    """Each row's (column, uniform) pairs, counted column by column."""
    got = [0] * threshold.shape[0]
    for j, (t, a) in enumerate(zip(threshold.tolist(), alias.tolist(), strict=True)):
        got[j] += t
        got[a] += capacity - t
    assert all(g == 0 for g in got[rows:])  # the columns added to reach a power of two hold nothing
    return got[:rows]


def weights_to_check() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    cases = [
        np.array([1]), np.array([5]), np.array([3, 3, 3, 3]), np.array([1, 1, 1, 1, 1, 1, 1, 1]),
        np.array([1, 10**9]), np.array([10**9, 1, 1, 1, 1]), np.array([7, 1, 7, 1, 7]),
        np.array([2, 2, 4]),  # a heavy row of exactly the capacity
    ]
    for trial in range(300):
        k = int(rng.integers(1, 70))
        w = rng.integers(1, (3, 40, 2_000, 10**6)[trial % 4], size=k)
        if trial % 5 == 0:
            w[int(rng.integers(0, k))] = int(w.sum()) * 30  # one row holding most documents
        cases.append(w)
    return [c.astype(np.int64) for c in cases]


def test_each_rows_share_of_the_alias_table_is_its_weights_exactly() -> None:
    for w in weights_to_check():
        rows, capacity = int(w.shape[0]), int(w.sum())
        for columns in {1 << max(rows - 1, 0).bit_length(), 1 << (rows.bit_length() + 1)}:
            threshold, alias = alias_table(w, columns)
            assert ((threshold >= 0) & (threshold <= capacity)).all()
            assert ((alias >= 0) & (alias < rows)).all()
            got = shares(threshold, alias, rows, capacity)
            assert got == [columns * int(x) for x in w.tolist()]
            # So each row's probability, as a fraction, is its share of the documents.
            total = columns * capacity
            assert [Fraction(g, total) for g in got] == [Fraction(int(x), capacity) for x in w.tolist()]


class Enumerated:
    """A generator whose integers are every value below ``high`` in turn (and, drawn as two
    numbers, every pair): so the picks of ``size = columns * pooled`` are every pair's."""

    def __init__(self, columns: int) -> None:
        self.columns = columns
        self.calls: list[int] = []

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        self.calls.append(high)
        if high == size:
            return np.arange(size, dtype=np.int64)
        if high == self.columns:  # the column, then the uniform: every column for each uniform
            return np.tile(np.arange(high, dtype=np.int64), size // high)
        return np.repeat(np.arange(high, dtype=np.int64), size // high)


@pytest.mark.parametrize("one_word", [True, False])
def test_every_pair_picks_the_rows_in_their_shares(monkeypatch: pytest.MonkeyPatch, one_word: bool) -> None:
    monkeypatch.setattr(significance, "TABLE_LIMIT", 0)
    monkeypatch.setattr(significance, "WIDE_PICKS", 0)  # as few columns as rows: pairs few enough to list
    if not one_word:
        monkeypatch.setattr(significance, "PICK_RANGE", 0)
    for w in weights_to_check()[:120]:
        if int(w.sum()) * 128 > 200_000:
            continue
        picks = _Picks(w)
        assert picks.table is None
        rng = Enumerated(picks.columns)
        size = picks.columns * picks.pooled
        got = picks.rows(rng, size)  # type: ignore[arg-type]
        assert picks.packed == one_word
        assert rng.calls == ([size] if one_word else [picks.columns, picks.pooled])
        assert got.dtype == np.intp
        assert np.bincount(got, minlength=w.shape[0]).tolist() == [picks.columns * int(x) for x in w.tolist()]


def test_the_alias_picks_frequencies_pass_a_chi_square(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(significance, "TABLE_LIMIT", 0)
    rng = np.random.default_rng(4)
    for w in (rng.integers(3, 400, size=300), np.append(rng.integers(1, 9, size=1000), 80_000)):
        w = w.astype(np.int64)
        picks = _Picks(w)
        n = 2_000_000
        observed = np.bincount(picks.rows(np.random.default_rng(5), n), minlength=w.shape[0])
        expected = n * w / w.sum()
        chi2 = float(((observed - expected) ** 2 / expected).sum())
        df = w.shape[0] - 1
        # Chi-square of df degrees of freedom: mean df, sd sqrt(2 df); 5 sd either way.
        assert abs(chi2 - df) < 5 * np.sqrt(2 * df), (chi2, df)


def test_below_the_limit_the_picks_are_the_documents_table() -> None:
    # The stream of every run of at most TABLE_LIMIT pooled documents is unchanged: a uniform
    # document and its row.
    w = np.random.default_rng(6).integers(3, 500, size=400).astype(np.int64)
    picks = _Picks(w)
    assert picks.table is not None and picks.table.nbytes == 4 * int(w.sum())
    documents = np.random.default_rng(7).integers(0, int(w.sum()), size=5000)
    want = np.searchsorted(np.cumsum(w), documents, side="right")
    assert np.array_equal(picks.rows(np.random.default_rng(7), 5000), want)


def test_above_the_limit_the_picks_hold_arrays_of_the_rows_not_the_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    w = np.full(1000, 1000, dtype=np.int64)  # a million documents: past TABLE_LIMIT
    picks = _Picks(w)
    # 1,024 columns would make the pick's range 2^29.9: doubled to pass 2^32, 8,192 columns, 64 KB.
    assert picks.table is None and picks.columns == 1 << 13 and picks.columns * picks.pooled > (1 << 32)
    assert picks.packed and picks.keys.nbytes == 8 << 13
    with monkeypatch.context() as m:
        m.setattr(significance, "PICK_RANGE", 0)
        apart = _Picks(w)
    assert not apart.packed and apart.threshold.nbytes + apart.alias.nbytes == 2 * 8 << 13
    # Otherwise the columns follow the rows alone: 8 bytes each.
    many = _Picks(np.full(40_000, 30, dtype=np.int64))
    assert many.columns == 1 << 16 and many.keys.nbytes == 8 << 16
    for rows, size in ((2, (1 << 18) + 2), (300, 435_000), (1500, 10**6), (1500, 10**9), (5, 1 << 40)):
        got = _Picks(np.full(rows, size // rows, dtype=np.int64))
        assert got.table is None and not (1 << 28) < got.columns * got.pooled <= (1 << 32)
        assert got.columns < 32 * rows


@pytest.mark.parametrize("kind", [_Sampler, _FamilySampler, _IntervalSampler])
@pytest.mark.parametrize(
    "counts",
    [
        [3, 4, 5, 9, 40, 40, 300, 2_000, 5_000],
        [90_000, 3, 3, 7, 50, 400, 1_200],  # one row holding most documents: a binomial first
        [1, 1, 2, 11, 12],  # a few dozen documents: the Poisson counts often pass the total
    ],
)
def test_the_samplers_resamples_are_multinomial_with_alias_picks(
    monkeypatch: pytest.MonkeyPatch, kind: Any, counts: list[int]
) -> None:
    monkeypatch.setattr(significance, "TABLE_LIMIT", 0)
    c = np.array(counts, dtype=np.int64)
    n, sampler = int(c.sum()), kind(c)
    assert sampler.picks.table is None or sampler.pooled == 0
    rows = np.eye(c.shape[0])
    w = np.concatenate([sampler.summed(np.random.default_rng([7, k]), 256, rows) for k in range(60)])
    assert (w.sum(axis=1) == n).all() and (w >= 0).all() and np.array_equal(w, np.round(w))
    p = c / n
    assert w.mean(axis=0) == pytest.approx(n * p, rel=0.03, abs=0.05)
    assert w.var(axis=0) == pytest.approx(n * p * (1 - p), rel=0.12, abs=0.02)
    i, k = np.argsort(c)[-2:]
    error = 5 * np.sqrt(n * p[i] * (1 - p[i]) * n * p[k] * (1 - p[k]) / w.shape[0])
    assert abs(np.cov(w[:, i], w[:, k])[0, 1] + n * p[i] * p[k]) < error


def test_an_alias_samplers_top_up_draws_the_same_in_pieces_of_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(significance, "TABLE_LIMIT", 0)
    counts = np.random.default_rng(8).integers(3, 60, size=500).astype(np.int64)
    wanted = np.full(40, int(counts.sum()))
    got = {}
    for piece in (1, 13, 1 << 16):
        monkeypatch.setattr(significance, "TOP_UP_PIECE", piece)
        got[piece] = [kind(counts)._common(np.random.default_rng(9), wanted) for kind in (_Sampler, _FamilySampler)]
    assert all(np.array_equal(a, b) for g in got.values() for a, b in zip(g, got[1 << 16], strict=True))


# Over the BTC test split with perturbed predictions: the intervals and compare's bounds and
# p-values with every top-up's picks from alias tables (the limit lowered to nothing) agree with
# the per-document table's within Monte Carlo error, and they are the same for every chunk size,
# --jobs and the Dask engine.

SEEDS = 20


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("alias")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.4)),
        "b": write_conll(folder / "b.conll", perturb(gold, 4, 0.4)),
    }


def test_intervals_with_alias_picks_agree_with_the_tables_within_monte_carlo_error(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = spanscore.evaluate(reference=runs["gold"], predicted=runs["a"], ci=0.95, keep_details=False)
    state, credit = report.document_state, report.counts.credit
    assert state is not None
    kind = max(state.types or {}, key=lambda t: int((state.types or {})[t].counts.sum()))
    picked = [("strict", None), ("overlap", None), ("strict", kind), ("overlap", kind)]

    def run() -> list[list[tuple[float, float]]]:
        out = []
        for seed in range(SEEDS):
            got = intervals(state, zero_division=0.0, credit=credit, resampling=Resampling(seed=seed))
            out.append([
                ((f1 := (got["per_type"][t] if t else got["scores"])[name]["f1"])["low"], f1["high"])
                for name, t in picked
            ])
        return out

    table = run()
    with monkeypatch.context() as m:
        m.setattr(significance, "TABLE_LIMIT", 0)
        aliased = run()
    agree(aliased, table, picked)


def test_compare_with_alias_picks_agrees_with_the_tables_within_monte_carlo_error(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = (
        spanscore.evaluate(reference=runs["gold"], predicted=runs[s], documents=True, keep_details=False).documents
        for s in ("a", "b")
    )
    assert a is not None and b is not None
    names = ("strict", "overlap", "token")
    bounds: dict[str, list[float]] = {n: [] for n in names}
    widths: dict[str, list[float]] = {n: [] for n in names}
    p_new: dict[str, list[float]] = {n: [] for n in names}
    p_old: dict[str, list[float]] = {n: [] for n in names}
    for seed in range(SEEDS):
        options: dict[str, Any] = {"zero_division": 0.0, "credit": "0.5", "resampling": Resampling(seed=seed)}
        old = compare([a, b], ["a", "b"], **options)
        with monkeypatch.context() as m:
            m.setattr(significance, "TABLE_LIMIT", 0)
            new = compare([a, b], ["a", "b"], **options)
        for name in names:
            entries = [(new.intervals[s][name]["f1"], old.intervals[s][name]["f1"]) for s in (0, 1)] + [tuple(
                next(c for c in t.comparisons if c["criterion"] == name and c["metric"] == "f1") for t in (new, old)
            )]
            for got, want in entries:
                bounds[name] += [got["low"] - want["low"], got["high"] - want["high"]]
                widths[name].append((got["high"] - got["low"]) / (want["high"] - want["low"]))
            p_new[name].append(entries[-1][0]["p_bootstrap"])
            p_old[name].append(entries[-1][1]["p_bootstrap"])
    assert any(d != 0 for d in bounds["strict"])  # another stream
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


def test_alias_picks_give_the_same_results_whatever_the_chunks_jobs_and_engine(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ci: dict[str, Any] = {
        "reference": runs["gold"], "predicted": runs["a"], "ci": 0.9, "resamples": 300, "seed": 5,
        "document_types": True, "keep_details": False,
    }
    pair: dict[str, Any] = {
        "reference": runs["gold"], "systems": [runs["a"], runs["b"]], "resamples": 300, "trials": 300, "seed": 5,
    }
    with_tables = spanscore.evaluate(**ci).to_dict(), spanscore.compare(**pair).to_dict()
    monkeypatch.setattr(significance, "TABLE_LIMIT", 0)
    made = _Picks.__init__
    aliased: list[bool] = []

    def counted(self: _Picks, pool: np.ndarray) -> None:
        made(self, pool)
        aliased.append(self.table is None)

    monkeypatch.setattr(_Picks, "__init__", counted)
    outputs = [
        spanscore.evaluate(chunk_bytes=chunk, jobs=jobs, **ci).to_dict()
        for chunk, jobs in ((30_000, 1), (524_288, 2), (65_536, 3))
    ]
    buckets = [
        spanscore.evaluate(chunk_bytes=chunk, jobs=jobs, buckets=("length",), **ci).to_dict()
        for chunk, jobs in ((30_000, 2), (524_288, 1))
    ]
    compares = []
    for chunk, jobs in ((30_000, 2), (524_288, 1)):
        with monkeypatch.context() as m:
            m.setattr(api, "DEFAULT_CHUNK", chunk)
            compares.append(spanscore.compare(jobs=jobs, **pair).to_dict())
    assert aliased and all(aliased)  # every sampler of these runs picks from an alias table
    assert outputs[0]["intervals"] != with_tables[0]["intervals"] and compares[0] != with_tables[1]  # another stream
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    engine = DaskEngine(n_workers=2, partition_bytes=40000)
    outputs.append(spanscore.evaluate(engine=engine, chunk_bytes=30_000, **ci).to_dict())
    buckets.append(spanscore.evaluate(engine=engine, buckets=("length",), **ci).to_dict())
    compares.append(spanscore.compare(engine=engine, **pair).to_dict())
    assert all(o == outputs[0] for o in outputs)
    assert all(b == buckets[0] for b in buckets)
    assert all(c == compares[0] for c in compares)
