"""compare's randomisation trials draw each distinct difference's swaps with about as few random
bits as the count needs (``_SwapCounts``): one random byte for a row of at most 8 documents, one
64-bit word for a row of at most 64, a binomial table looked up (or numpy's binomial where the
tables would grow too large) for larger rows. Checked here: the tables' probabilities are the
binomial's to within the 53 random bits; every path's counts are binomial; the p-values agree
with the implementation before (every row's bits in whole 64-bit words, numpy's binomial past
1,024 documents) within Monte Carlo error over 20 seeds on the BTC test split; and the numbers
are the same for every ``--jobs``, chunk size and engine."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore import api
from spanscore.analysis import significance
from spanscore.analysis.significance import (
    UNIFORM_BITS,
    Draws,
    Resampling,
    _Family,
    _SwapCounts,
    _Swaps,
    binomial_support,
    compare,
)
from spanscore.stages.documents import DocCounts, Histogram

SEEDS = 20


def test_binomial_tables_hold_each_count_with_its_probability() -> None:
    counts = np.array([65, 66, 100, 257, 1000, 4096], dtype=np.int64)
    draws = _SwapCounts(counts)
    assert draws.bytes == draws.words == 0 and draws.looked_up == counts.shape[0]
    tables, _ = draws._binomial_tables()
    lo, hi = binomial_support(counts)
    one = 1 << UNIFORM_BITS
    for t, c in enumerate(counts.tolist()):
        start = int(tables.start[t])
        bounds = tables.bounds[start : start + int(hi[t] - lo[t]) + 1].tolist()
        assert bounds[-1] == one  # the last count takes every bit pattern left
        below = Fraction(0)
        for k, bound in zip(range(int(lo[t]), int(hi[t]) + 1), bounds, strict=True):
            below += Fraction(math.comb(c, k), 1 << c)
            if k < hi[t]:
                # The bound is the probability of at most k on the bits' grid, within a few tens
                # of units of 2^-53 (the log ratios' running sum rounds a little at each count).
                assert abs(Fraction(bound, one) - below) < Fraction(64, one), (c, k)
        # What the table leaves out is below 2^-64 on each side.
        assert Fraction(sum(math.comb(c, k) for k in range(int(lo[t]))), 1 << c) < Fraction(1, 1 << 64)


@pytest.mark.parametrize("tables", [True, False])
def test_every_rows_swaps_are_binomial(tables: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not tables:  # every large row drawn by numpy's binomial
        monkeypatch.setattr(significance, "SWAP_TABLE_ENTRIES", 0)
    counts = np.array([1, 2, 3, 7, 8, 9, 33, 63, 64, 65, 200, 3000, 1, 8, 64, 5000], dtype=np.int64)
    draws = _SwapCounts(counts)
    assert (draws.bytes, draws.words) == (7, 5)
    assert draws.looked_up == (3 if tables else 0)
    assert draws.generated.tolist() == ([5000] if tables else [65, 200, 3000, 5000])
    assert sorted(draws.order.tolist()) == list(range(counts.shape[0]))
    got = np.concatenate([draws.drawn(np.random.default_rng([3, k]), 500) for k in range(40)])
    n = got.shape[0]
    for column, row in enumerate(draws.order.tolist()):
        c = int(counts[row])
        values = got[:, column]
        assert values.min() >= 0 and values.max() <= c and np.all(values == np.round(values))
        # Mean and variance of c fair bits (each within 5 standard errors).
        assert abs(values.mean() - c / 2) < 5 * math.sqrt(c / 4 / n), (c, values.mean())
        assert abs(values.var() / (c / 4) - 1) < 5 * math.sqrt(2 / n), (c, values.var())
        # Chi-square over the counts, the tails pooled where fewer than 20 are expected.
        seen = np.bincount(values.astype(np.int64), minlength=c + 1)
        expected = np.array([float(Fraction(math.comb(c, k) * n, 1 << c)) for k in range(c + 1)])
        keep = expected >= 20
        pooled_o = np.append(seen[keep], seen[~keep].sum())
        pooled_e = np.append(expected[keep], expected[~keep].sum())
        stat = float(np.sum((pooled_o - pooled_e) ** 2 / np.maximum(pooled_e, 1e-9)))
        df = max(int(keep.sum()), 1)
        assert stat < df + 6 * math.sqrt(2 * df) + 10, (c, stat, df)


def test_a_byte_rows_bits_are_its_own() -> None:
    # Rows of 1 document swap in half the trials, whatever the rows beside them in the same byte.
    counts = np.ones(24, dtype=np.int64)
    got = _SwapCounts(counts).drawn(np.random.default_rng(11), 20_000)
    assert got.max() == 1
    share = got.mean(axis=0)
    assert np.all(np.abs(share - 0.5) < 5 * math.sqrt(0.25 / 20_000))
    # Neighbouring rows (bits of one byte, bytes of one word) are independent.
    both = (got[:, :-1] * got[:, 1:]).mean(axis=0)
    assert np.all(np.abs(both - 0.25) < 5 * math.sqrt(0.1875 / 20_000))


def test_a_familys_differences_are_each_documents_counted_apart() -> None:
    # Rows with negative differences (and columns whose least is positive or negative): the
    # distinct differences in lexicographic order and the documents of each, as counted by hand.
    rng = np.random.default_rng(5)
    docs = rng.integers(0, 4, size=(3_000, 6))
    docs[:, 3:] = np.where(rng.random((3_000, 3)) < 0.5, docs[:, :3], docs[:, 3:])
    docs[:, 4] = np.maximum(docs[:, 4], 2)  # the second system's column 1 never below 2
    joint = Histogram.of(docs, tuple(f"f{i}" for i in range(6)))
    family = _Family("spans", joint, [[0, 1, 2], [3, 4, 5]], [0, 1, 2])
    swaps = family.differences(1)
    want: dict[tuple[int, ...], int] = {}
    for row in (docs[:, 3:] - docs[:, :3]).tolist():
        if any(row):
            want[tuple(row)] = want.get(tuple(row), 0) + 1
    ordered = sorted(want)
    assert min(r[1] for r in ordered) < 0 < max(r[1] for r in ordered)
    got_rows = swaps.distinct[:, swaps.expand]
    assert got_rows.tolist() == [list(map(float, r)) for r in ordered]
    assert swaps.draws.counts.tolist() == [want[r] for r in ordered]


def words_trials(swaps: _Swaps, rng: np.random.Generator, size: int) -> Any:
    """The trials as drawn before: every row's bits in whole 64-bit words, numpy's binomial past
    1,024 documents (``Draws.swap_sums``, kept for the intervals' module)."""
    if not swaps.distinct.shape[1]:
        return np.zeros((size, swaps.expand.shape[0]))
    draws = Draws(swaps.draws.counts)
    return draws.swap_sums(rng, size, draws.swap_rows(swaps.distinct))[:, swaps.expand]


@pytest.fixture(scope="module")
def btc_systems(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[DocCounts, DocCounts]:
    # Two systems of about the same quality (the same perturbation, other seeds): p-values spread
    # over (0, 1) rather than all at 1/1001.
    folder = tmp_path_factory.mktemp("swaps")
    gold = sentences(btc / "test.txt")
    paths = {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.4)),
        "b": write_conll(folder / "b.conll", perturb(gold, 4, 0.4)),
    }

    def docs(pred: Path) -> DocCounts:
        got = spanscore.evaluate(reference=paths["gold"], predicted=pred, documents=True, keep_details=False)
        assert got.documents is not None
        return got.documents

    return docs(paths["a"]), docs(paths["b"])


def test_p_values_agree_with_the_words_drawn_before_within_monte_carlo_error(
    btc_systems: tuple[DocCounts, DocCounts], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = btc_systems
    seen: list[_SwapCounts] = []
    made = _SwapCounts.__init__

    def noted(self: _SwapCounts, counts: Any) -> None:
        made(self, counts)
        seen.append(self)

    criteria = ("strict", "overlap", "token")
    new: dict[str, list[float]] = {c: [] for c in criteria}
    old: dict[str, list[float]] = {c: [] for c in criteria}
    for seed in range(SEEDS):
        resampling = Resampling(seed=seed, resamples=1)
        for got, trials in ((new, _Swaps.trials), (old, words_trials)):
            with monkeypatch.context() as m:
                m.setattr(_Swaps, "trials", trials)
                m.setattr(_SwapCounts, "__init__", noted)
                tests = compare([a, b], ["a", "b"], zero_division=0.0, credit="0.5", resampling=resampling)
            for name in criteria:
                entry = next(c for c in tests.comparisons if c["criterion"] == name and c["metric"] == "f1")
                got[name].append(entry["p_randomization"])
    # Every path of the new draws was taken: bytes, words and tables.
    assert sum(s.bytes for s in seen) and sum(s.words for s in seen) and sum(s.looked_up for s in seen)
    for name in criteria:
        p = float(np.mean(old[name]))
        assert 0.02 < p < 0.98, (name, p)
        trial_se = math.sqrt(p * (1 - p) / 1000)  # one p-value's Monte Carlo error
        diffs = np.array(new[name]) - np.array(old[name])
        # Independent draws: each difference about sqrt(2) trial errors, its mean over 20 seeds
        # about a third of one; a biased swap (a 0.55 coin) moves every p-value by several.
        assert abs(float(diffs.mean())) < 4 * trial_se * math.sqrt(2 / SEEDS), (name, diffs.mean(), trial_se)
        assert float(np.mean(np.abs(diffs))) < 2 * trial_se, (name, np.mean(np.abs(diffs)), trial_se)


def test_unmasked_bytes_would_fail_the_check(btc_systems: tuple[DocCounts, DocCounts]) -> None:
    # The check above can fail: trials whose rows of few documents counted every bit of their
    # byte (the mask left out: 8 coins where a row has 1 to 8 documents) give other p-values, far
    # outside its bounds.
    a, b = btc_systems

    def unmasked(swaps: _Swaps, rng: np.random.Generator, size: int) -> Any:
        counts = np.maximum(swaps.draws.counts, 8)
        drawn = rng.binomial(counts, 0.5, size=(size, swaps.draws.k)).astype(np.float64)
        return (drawn @ swaps.distinct)[:, swaps.expand]

    seeds = 3
    fair, wrong = [], []
    for seed in range(seeds):
        resampling = Resampling(seed=seed, resamples=1)
        for got, trials in ((fair, _Swaps.trials), (wrong, unmasked)):
            with pytest.MonkeyPatch.context() as m:
                m.setattr(_Swaps, "trials", trials)
                tests = compare([a, b], ["a", "b"], zero_division=0.0, credit="0.5", resampling=resampling)
            got.append(next(c for c in tests.comparisons if c["criterion"] == "strict")["p_randomization"])
    p = float(np.mean(fair))
    assert abs(float(np.mean(wrong)) - p) > 4 * math.sqrt(p * (1 - p) / 1000) * math.sqrt(2 / seeds), (fair, wrong)


@pytest.fixture(scope="module")
def synth(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A synthetic reference, its output, and a second output with every third PER made LOC."""
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "3000", str(prefix)], check=True)
    gold, a = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    lines = a.read_text().split("\n")
    seen = 0
    for k, line in enumerate(lines):
        if line.endswith("B-PER"):
            seen += 1
        if line.endswith("-PER") and seen % 3 == 0:
            lines[k] = line[: -len("PER")] + "LOC"
    b = prefix.with_suffix(".alt")
    b.write_text("\n".join(lines))
    return gold, a, b


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    import dask

    from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG

    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
    ):
        yield cluster.scheduler_address


@pytest.mark.parametrize("groups", [{}, {"per_type": True, "buckets": ["length"]}])
def test_compare_is_the_same_for_every_jobs_chunk_and_engine(
    synth: tuple[Path, Path, Path], scheduler: str, groups: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from spanscore.engines.dask_engine import DaskEngine

    gold, a, b = synth
    options: dict[str, Any] = {"resamples": 50, "trials": 300, "seed": 9, **groups}
    seen: list[_SwapCounts] = []
    made = _SwapCounts.__init__

    def noted(self: _SwapCounts, counts: Any) -> None:
        made(self, counts)
        seen.append(self)

    monkeypatch.setattr(_SwapCounts, "__init__", noted)
    first = spanscore.compare(reference=gold, systems=[a, b], jobs=1, **options).to_dict()
    # The trials take every path (rows of one byte, of one word, looked up).
    assert sum(s.bytes for s in seen) and sum(s.words for s in seen) and sum(s.looked_up for s in seen)
    ps = [c["p_randomization"] for c in first["comparisons"] if c["p_randomization"] is not None]
    assert len(set(ps)) > 1  # the trials decide something
    for chunk in (0, 9000):
        with monkeypatch.context() as m:
            if chunk:
                m.setattr(api, "DEFAULT_CHUNK", chunk)
            for jobs in (1, 2):
                assert spanscore.compare(reference=gold, systems=[a, b], jobs=jobs, **options).to_dict() == first
            engine = DaskEngine(scheduler=scheduler, partition_bytes=60_000)
            assert spanscore.compare(reference=gold, systems=[a, b], engine=engine, **options).to_dict() == first
