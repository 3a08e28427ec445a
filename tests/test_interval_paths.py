"""The ways an evaluation's intervals are computed give the same numbers: the quantiles are
``np.quantile``'s bits, the bootstrap's blocks give the same intervals on one thread or several,
the per-type histograms are the same whether a chunk's rows repeat a document and type or not,
only the scored columns counted per document and type are those columns of the whole table,
and ``--ci`` loads only what it uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import Draws, Resampling, _quantiles, _Table, intervals
from spanscore.stages.counts import Groups, Options, count_grouped, group_fields
from spanscore.stages.criteria import CRITERIA
from spanscore.stages.documents import DocState, Histogram, TypeRows, _by_type_fields, scored_columns
from spanscore.stages.spans import Spans

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("seed", range(5))
def test_quantiles_are_numpys_bits(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(400):
        n = int(rng.integers(1, 1500))
        values = [
            rng.random(n),
            rng.integers(0, 6, n) / 7.0,  # many ties, as scores of small corpora have
            0.7 + np.round(rng.random(n), 3) * 1e-3,
            rng.standard_normal(n) * 1e6,
        ][trial % 4]
        level = [0.95, 0.9, 0.5, 0.99, 0.999, float(rng.random())][trial % 6]
        q = np.array([(1 - level) / 2, (1 + level) / 2])
        got, want = _quantiles(values, q), np.quantile(values, q)
        assert np.array_equal(got, want), (n, level, got, want)


def test_quantiles_of_one_value() -> None:
    assert _quantiles(np.array([0.25]), np.array([0.025, 0.975])).tolist() == [0.25, 0.25]


def _state() -> tuple[DocState, str]:
    report = spanscore.evaluate(
        reference=str(DATA / "small.gold.conll"), predicted=str(DATA / "small.pred.conll"), ci=0.95, chunk_bytes=300
    )
    assert report.document_state is not None
    return report.document_state, report.counts.credit


@pytest.mark.filterwarnings("ignore:intervals over")
def test_intervals_are_the_same_on_one_thread_or_several(monkeypatch: pytest.MonkeyPatch) -> None:
    state, credit = _state()
    resampling = Resampling(resamples=700, seed=3)
    monkeypatch.setattr(significance, "SHARED_DRAWS", 1 << 60)  # every block in this thread
    monkeypatch.setattr(significance, "_threads", lambda: 4)
    alone = intervals(state, zero_division=0.0, credit=credit, resampling=resampling)
    monkeypatch.setattr(significance, "SHARED_DRAWS", 1)  # as many threads as blocks allow
    shared = intervals(state, zero_division=0.0, credit=credit, resampling=resampling)
    assert json.dumps(alone, sort_keys=True) == json.dumps(shared, sort_keys=True)
    assert alone["per_type"]  # the per-type tables were drawn too


def test_the_threads_a_run_uses_follow_its_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(significance, "_threads", lambda: 4)
    assert significance._helpers(10) == 0  # a few draws: this thread alone
    assert significance._helpers(significance.SHARED_DRAWS) == 1
    assert significance._helpers(100 * significance.SHARED_DRAWS) == 3  # a CPU each, at most
    monkeypatch.setattr(significance, "_threads", lambda: 1)
    assert significance._helpers(100 * significance.SHARED_DRAWS) == 0


def _type_histograms_by_hand(rows: TypeRows, keep: np.ndarray, fields: tuple[str, ...]) -> dict[str, Histogram]:
    """Each type's rows summed per document, one histogram per type (an independent count)."""
    out: dict[str, Histogram] = {}
    for t, name in enumerate(rows.names):
        mine = keep & (rows.type_index == t)
        if not mine.any():
            continue
        per_doc: dict[int, np.ndarray] = {}
        for key, stats in zip(rows.keys[mine].tolist(), rows.stats[mine], strict=True):
            per_doc[key] = per_doc.get(key, np.zeros(len(fields), dtype=np.int64)) + stats
        out[name] = Histogram.of(np.array(list(per_doc.values())), fields)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_per_type_histograms_of_ordered_and_repeated_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    fields = ("reference", "predicted", "x.full_ref")
    n = int(rng.integers(5, 200))
    keys = np.sort(rng.integers(0, 40, n))
    types = rng.integers(0, 3, n)
    if seed % 2 == 0:  # a chunk's rows: one per document and type, in that order
        pair = np.unique(keys * 3 + types)
        keys, types = pair // 3, pair % 3
    stats = rng.integers(0, 4, (keys.shape[0], 3))
    if seed % 3 == 0:  # as a chunk's table comes: the transpose of a row per column
        stats = np.asfortranarray(stats)
    rows = TypeRows(keys, types, ("LOC", "ORG", "PER"), stats)
    keep = np.asarray(rng.random(keys.shape[0]), dtype=np.float64) < np.float64(0.8)
    got = _by_type_fields(rows, keep, fields)
    want = _type_histograms_by_hand(rows, keep, fields)
    assert sorted(got) == sorted(want)
    for name, h in want.items():
        assert np.array_equal(got[name].rows, h.rows) and np.array_equal(got[name].counts, h.counts)


def _random_spans(rng: np.random.Generator, n: int, units: int, nested: bool) -> Spans:
    unit = np.sort(rng.integers(0, units, n))
    start = unit * 40 + rng.integers(0, 30, n)
    end = start + rng.integers(1, 9 if nested else 3, n)
    if not nested:  # at most one mention per unit and position: disjoint within each side
        keep = np.concatenate(([True], start[1:] >= end[:-1]))
        unit, start, end = unit[keep], start[keep], end[keep]
    return Spans.build(start, end, rng.integers(0, 3, start.shape[0]), unit, ("LOC", "ORG", "PER"))


@pytest.mark.parametrize("seed", range(8))
def test_type_columns_are_those_columns_of_the_whole_table(seed: int) -> None:
    """Per document and type, only the columns asked for are counted: they are those columns
    of the table of every statistic (the scored ones, and any other choice in any order)."""
    rng = np.random.default_rng(seed)
    units, nested = int(rng.integers(3, 30)), seed % 2 == 1
    ref = _random_spans(rng, int(rng.integers(0, 80)), units, nested)
    pred = _random_spans(rng, int(rng.integers(0, 80)), units, nested)
    credit = (0.5, "dice", "iou", 0.25)[seed % 4]
    options = Options(credit=credit, min_overlap=0.3 if seed > 5 else 0.0)
    key = lambda s: s.unit * 3 + s.type  # noqa: E731
    groups = Groups(key(ref), key(pred), units * 3)
    whole = count_grouped(ref, pred, options, type_groups=groups).type_groups
    assert whole is not None
    fields = group_fields(tuple(c.name for c in CRITERIA))
    picks = [
        scored_columns(fields, scaled=isinstance(credit, str)),
        sorted(rng.choice(len(fields), size=int(rng.integers(1, len(fields))), replace=False).tolist()),
        [len(fields) - 1, 3, 0, fields.index("token.true_positive_predicted")],
        [],
    ]
    for columns in picks:
        got = count_grouped(ref, pred, options, type_groups=groups, type_columns=columns).type_groups
        assert got is not None and got.shape == (units * 3, len(columns))
        assert np.array_equal(got, whole[:, columns]), columns


@pytest.mark.parametrize("seed", range(6))
def test_sums_of_the_split_draws_are_those_of_the_whole_weights(seed: int) -> None:
    """The rare rows' draws and the common rows' multiplied each by their rows give the bits of
    the product of the whole table of weights, from the same draws."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 60))
    counts = rng.choice([1, 2, 5, 8, 9, 40, 3000], size=k) if seed != 5 else np.full(k, 50)
    rows = rng.integers(0, 1 << int(rng.integers(1, 33)), size=(k, 7))
    table = _Table(rows, counts, tuple(f"f{i}" for i in range(7)))
    draws = Draws(counts)
    split = (table.distinct[draws.rare], table.distinct[draws.common])
    for block, size in enumerate((1, 17, 256)):
        whole = table.sums(draws.bootstrap(np.random.default_rng([seed, block]), size))
        parts = table.drawn_sums(draws, split, np.random.default_rng([seed, block]), size)
        assert whole.shape == parts.shape and np.array_equal(whole, parts)


def test_the_thread_map_keeps_order_and_raises_the_first_error() -> None:
    items = list(range(40))
    for jobs in (1, 2, 4):
        assert significance._thread_map(lambda i: i * i, items, jobs) == [i * i for i in items]

    def fails(i: int) -> int:
        if i == 7:
            raise ValueError("seven")
        return i

    with pytest.raises(ValueError, match="seven"):
        significance._thread_map(fails, items, 3)


@pytest.mark.parametrize("seed", range(10))
def test_a_histogram_is_numpys_distinct_rows_and_their_counts(seed: int) -> None:
    """Rows packed into words of as many bits as each column needs (fields across several words,
    columns always zero, values up to 2^62, 16-bit rows, either layout, weights) give the distinct
    rows in lexicographic order and their documents, as ``np.unique`` finds them."""
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(1, 400)), int(rng.integers(1, 50))
    top = rng.choice([1, 2, 3, 17, 300, 1 << 20, 1 << 40, 1 << 62], size=width)
    stats = rng.integers(0, top, size=(n, width), dtype=np.int64)
    stats = stats[rng.integers(0, max(1, n // 3), n)]  # repeated rows
    if seed % 3 == 1:
        stats = stats % 1000
        stats = stats.astype(np.int16)
    if seed % 2:
        stats = np.asfortranarray(stats)
    weights = rng.integers(1, 5, n) if seed % 4 == 0 else None
    h = Histogram.of(stats, tuple(f"f{i}" for i in range(width)), weights)
    rows, inverse = np.unique(np.asarray(stats, dtype=np.int64), axis=0, return_inverse=True)
    want = np.bincount(inverse.reshape(-1), weights=weights, minlength=rows.shape[0]).astype(np.int64)
    assert np.array_equal(h.rows, rows) and np.array_equal(h.counts, want)
    assert h.rows.flags["C_CONTIGUOUS"]


CI_PROBE = """
import json, sys
from spanscore.cli.main import cli
try:
    cli(args=sys.argv[1:], prog_name="spanscore")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_ci_loads_only_what_intervals_use() -> None:
    """numpy.ma (np.quantile's first call), a thread pool and its logging, the JSONL reader and
    the breakdown are tens of milliseconds of imports that a CoNLL ``--ci`` has no use for."""
    gold, pred = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")
    args = ["evaluate", gold, pred, "--json", "--ci", "0.9", "--resamples", "50", "--jobs", "1"]
    done = subprocess.run([sys.executable, "-c", CI_PROBE, *args], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert json.loads(done.stdout)["intervals"]["scores"]["strict"]["f1"]["low"] is not None
    unused = ["numpy.ma", "concurrent.futures", "logging", "spanscore.io.jsonl", "spanscore.analysis.breakdown"]
    assert [m for m in unused if m in modules] == []


def test_the_interval_module_leaves_numpy_random_to_the_draws() -> None:
    """numpy.random (about 9 ms) loads when the first resample is drawn, or on the command line's
    thread while the chunks are counted, never when the intervals' module is imported before
    counting starts."""
    probe = "import sys, spanscore.analysis.significance; print('numpy.random' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_one_blas_thread_inside_and_the_count_found_after(monkeypatch: pytest.MonkeyPatch) -> None:
    from spanscore.runtime import blas

    for name in blas._ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    controls = blas._controls()
    before = [get() for get, _ in controls]
    with blas.one_blas_thread():
        assert [get() for get, _ in controls] == [1] * len(controls)
        with blas.one_blas_thread():  # entered again (another thread's block): still one
            assert [get() for get, _ in controls] == [1] * len(controls)
        assert [get() for get, _ in controls] == [1] * len(controls)
    assert [get() for get, _ in controls] == before
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # chosen by someone: left alone
    with blas.one_blas_thread():
        assert [get() for get, _ in controls] == before


def test_macro_scores_over_documents_run_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # In a library session numpy keeps OpenBLAS's default threads; the weighted sums of the
    # macro scores over documents then cost 100x more CPU on a busy machine (0.41 s against
    # 0.004 s over 10,696 distinct rows).
    from spanscore.runtime import blas
    from spanscore.stages import documents

    for name in blas._ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    controls = blas._controls()
    if not controls:
        pytest.skip("numpy here has no OpenBLAS whose threads can be read")
    seen: list[list[int]] = []
    dot = np.dot

    def watched(*args: object, **kwargs: object) -> object:
        seen.append([get() for get, _ in controls])
        return dot(*args, **kwargs)

    monkeypatch.setattr(documents.np, "dot", watched)
    report = spanscore.evaluate(
        reference=str(DATA / "small.gold.conll"), predicted=str(DATA / "small.pred.conll"), documents=True
    )
    documents.macro_over_documents(report.documents, 0.0, "0.5")
    assert seen, "the weighted sums were not taken with np.dot"
    assert all(threads == [1] * len(controls) for threads in seen)
