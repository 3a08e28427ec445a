"""Per-bucket and per-type comparisons, and bucket intervals, over histograms of each group's
per-document rows (analysis/buckets.py): the same numbers as the tests over the systems' whole
dense per-document tables (the implementation as first written, reproduced here), agreement with
resampling documents within Monte Carlo error, and the same numbers whatever the chunks, the
processes or the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll
from test_intervals_histogram import by_documents

import spanscore
from spanscore import api
from spanscore.analysis.buckets import GroupCounter, compare_groups, joint_groups, run_grouped
from spanscore.analysis.significance import Resampling, compare
from spanscore.engines import LocalEngine
from spanscore.engines.paired import side_by_side
from spanscore.io.reading import Reading
from spanscore.io.sources import open_source
from spanscore.programs.samples import write_samples
from spanscore.stages.buckets import attribute
from spanscore.stages.documents import DocCounts, TypeRows
from spanscore.stages.parts import Wanted
from spanscore.stages.scoring import Scoring, TypeSelection

OPTIONS: dict[str, Any] = {"resamples": 120, "trials": 120, "seed": 5}
BUCKETS = ["length", "sentence-length"]  # neither needs a training corpus


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """BTC's test split as documents of seven sentences (so chunk boundaries cut documents), and
    two perturbed systems; and its first 300 sentences as plain sentences."""
    folder = tmp_path_factory.mktemp("bucket_histograms")
    gold = sentences(btc / "test.txt")

    def documents(path: Path, blocks: list[list[str]]) -> Path:
        out = []
        for k, block in enumerate(blocks):
            head = "-DOCSTART-\tO\n\n" if k % 7 == 0 else ""
            out.append(head + "\n".join(block) + "\n\n")
        path.write_text("".join(out), encoding="utf-8")
        return path

    return {
        "gold": documents(folder / "gold.conll", gold),
        "a": documents(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": documents(folder / "b.conll", perturb(gold, 2, 0.35)),
        "small_gold": write_conll(folder / "small_gold.conll", gold[:300]),
        "small_a": write_conll(folder / "small_a.conll", perturb(gold, 1, 0.45)[:300]),
        "small_b": write_conll(folder / "small_b.conll", perturb(gold, 2, 0.35)[:300]),
    }


def dense(docs: DocCounts, rows: TypeRows, label: str) -> DocCounts:
    """One group's statistics for every document, zero where it has no mention in the group."""
    stats = np.zeros((docs.stats.shape[0], rows.stats.shape[1]), dtype=np.int64)
    if label in rows.names:
        for key, t, row in zip(rows.keys.tolist(), rows.type_index.tolist(), rows.stats, strict=True):
            if rows.names[t] == label:
                stats[int(np.searchsorted(docs.keys, key))] += row
    return DocCounts(docs.keys, stats, docs.fields, docs.ids, docs.unit)


def dense_compare(
    gold: Path, systems: list[Path], names: list[str], buckets: list[str] = BUCKETS, **options: Any
) -> dict[str, list[dict[str, Any]]]:
    """The per-group comparisons as first written: each system evaluated with its whole rows per
    document and group, each group's dense table per system, and the paired tests on them."""
    reports = [
        spanscore.evaluate(
            reference=gold, predicted=system, documents=True, document_types=True, buckets=buckets,
            keep_details=False, **options,
        )
        for system in systems
    ]
    resampling = Resampling(resamples=OPTIONS["resamples"], trials=OPTIONS["trials"], seed=OPTIONS["seed"])
    out: dict[str, list[dict[str, Any]]] = {}
    groupings: dict[str, list[tuple[DocCounts, TypeRows]]] = {
        "per_type": [(r.documents, r.documents.type_rows) for r in reports if r.documents and r.documents.type_rows],
    }
    for a in buckets:
        groupings[a] = [(r.documents, (r.bucket_rows or {})[a]) for r in reports if r.documents]
    for grouping, tables_of in groupings.items():
        labels: list[str] = []
        for _, rows in tables_of:
            labels += [n for n in rows.names if n not in labels]
        entries = []
        for label in labels:
            tables = [dense(d, r, label) for d, r in tables_of]
            tests = compare(tables, names, zero_division=0.0, credit="0.5", resampling=resampling)
            entries.append({"bucket": label, "intervals": tests.intervals, "comparisons": tests.comparisons})
        out[grouping] = entries
    return out


def same_groups(groups: dict[str, Any], expected: dict[str, list[dict[str, Any]]]) -> None:
    assert set(groups) == set(expected)
    for grouping, entries in expected.items():
        got = groups[grouping]
        assert [g["bucket"] for g in got] == [e["bucket"] for e in entries]
        for g, e in zip(got, entries, strict=True):
            assert [s["metrics"] for s in g["systems"]] == e["intervals"]
            assert g["comparisons"] == e["comparisons"]


def test_group_comparisons_equal_the_tests_over_dense_per_document_tables(runs: dict[str, Path]) -> None:
    expected = dense_compare(runs["gold"], [runs["a"], runs["b"]], ["a", "b"])
    c = spanscore.compare(
        reference=runs["gold"], systems=[runs["a"], runs["b"]], names=["a", "b"], per_type=True, buckets=BUCKETS,
        **OPTIONS,
    )
    same_groups(c.groups, expected)
    # Every label of an attribute is there, a bucket without a mention too.
    assert [g["bucket"] for g in c.groups["length"]] == list(attribute("length").labels)
    # No system's evaluation holds its per-document rows.
    assert all(r.documents is None for r in c.reports)


def test_each_groups_histogram_does_not_depend_on_each_systems_chunks(runs: dict[str, Path]) -> None:
    scoring = Scoring()
    chosen = tuple(attribute(n) for n in BUCKETS)
    wanted = Wanted(documents=True, document_types=True, buckets=chosen, examples=0)
    reports = [
        spanscore.evaluate(
            reference=runs["gold"], predicted=runs[n], documents=True, document_types=True, buckets=BUCKETS,
            keep_details=False,
        )
        for n in ("a", "b", "a")
    ]
    expected = {
        grouping: joint_groups(
            [(r.documents, r.documents.type_rows if grouping == "per_type" else (r.bucket_rows or {})[grouping])
             for r in reports if r.documents and r.documents.type_rows],
            "0.5",
        )
        for grouping in ("per_type", *BUCKETS)
    }
    # Three systems cut into chunks of different sizes (documents cut in two by their boundaries),
    # in one process and in two; and cut alike, each chunk's reference read once for all three.
    for sizes, jobs in (
        ((1500, 7000, 3100), 2), ((1 << 22, 2000, 1 << 22), 1), ((1500, 1500, 1500), 2), ((7000, 7000, 7000), 1)
    ):
        counters = [
            GroupCounter(
                open_source(runs["gold"], runs[n], Reading(), TypeSelection(), size), scoring.options, wanted
            )
            for n, size in zip(("a", "b", "a"), sizes, strict=True)
        ]
        assert (side_by_side(counters, LocalEngine(jobs)) is not None) == (len(set(sizes)) == 1)
        grouped = run_grouped(counters, LocalEngine(jobs), ["a", "b", "a2"])
        assert set(grouped.groups) == set(expected)
        for grouping, found in expected.items():
            got = grouped.groups[grouping]
            assert [label for label, _ in got] == [label for label, _ in found]
            for (_, h), (_, e) in zip(got, found, strict=True):
                assert h.fields == e.fields and (h.rows == e.rows).all() and (h.counts == e.counts).all()
        assert all(t.docs is None for t in grouped.totals)


@pytest.mark.parametrize("chunk", [1200, 9000])
def test_compare_per_group_is_the_same_whatever_the_chunks_and_processes(
    runs: dict[str, Path], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"reference": runs["gold"], "systems": [runs["a"], runs["b"]], "per_type": True, "buckets": BUCKETS}
    expected = spanscore.compare(**options, **OPTIONS).to_dict()
    monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
    for jobs in (1, 2):
        assert spanscore.compare(**options, **OPTIONS, jobs=jobs).to_dict() == expected


def test_group_intervals_agree_with_resampling_documents_within_monte_carlo_error(runs: dict[str, Path]) -> None:
    # One bucket's intervals against drawing its documents with replacement (an independent
    # implementation: test_intervals_histogram.by_documents), over 20 seeds.
    report = spanscore.evaluate(
        reference=runs["gold"], predicted=runs["a"], documents=True, buckets=["length"], keep_details=False
    )
    assert report.documents is not None and report.bucket_rows is not None
    table = dense(report.documents, report.bucket_rows["length"], "2")
    groups = joint_groups([(report.documents, report.bucket_rows["length"])], "0.5")
    hist = dict(groups)["2"]
    diffs: dict[str, list[float]] = {"strict": [], "overlap": []}
    for seed in range(20):
        resampling = Resampling(resamples=1000, trials=1, seed=seed)
        got = compare_groups(
            [("2", hist)], ["a"], zero_division=0.0, credit="0.5", resampling=resampling
        )[0]["systems"][0]["metrics"]
        old = by_documents(table, seed, 1000)
        for name in diffs:
            diffs[name] += [got[name]["f1"]["low"] - old[name][0], got[name]["f1"]["high"] - old[name][1]]
    for name, d in diffs.items():
        assert abs(float(np.mean(d))) < 0.003, name
        assert float(np.mean(np.abs(d))) < 0.01, name


@pytest.mark.parametrize("settings", [{"chunk_bytes": 1500, "jobs": 1}, {"chunk_bytes": 6000, "jobs": 2}])
def test_bucket_intervals_from_the_additive_state_equal_those_from_the_rows(
    runs: dict[str, Path], settings: dict[str, int]
) -> None:
    # --buckets with --ci alone keeps each bucket's per-document statistics as a histogram; with
    # per-document rows asked for, the intervals are computed from the rows: the same bits.
    options: dict[str, Any] = {
        "reference": runs["gold"], "predicted": runs["a"], "keep_details": False, "buckets": BUCKETS,
        "ci": 0.9, "resamples": 150, "seed": 3,
    }
    light = spanscore.evaluate(**options, **settings)
    rows = spanscore.evaluate(documents=True, **options)
    assert light.documents is None and rows.documents is not None
    assert light.to_dict() == rows.to_dict()
    assert "low" in light.to_dict()["buckets"]["length"][0]["metrics"]["strict"]


def test_group_comparisons_and_bucket_intervals_on_dask_equal_the_local_engine(runs: dict[str, Path]) -> None:
    distributed = pytest.importorskip("distributed")
    import dask

    from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG, DaskEngine

    small = {"gold": runs["small_gold"], "a": runs["small_a"], "b": runs["small_b"]}
    compared = {
        "reference": small["gold"], "systems": [small["a"], small["b"]], "per_type": True, "buckets": BUCKETS,
        **OPTIONS,
    }
    evaluated = {
        "reference": small["gold"], "predicted": small["a"], "buckets": BUCKETS, "ci": 0.9, "resamples": 100,
        "keep_details": False,
    }
    local = spanscore.compare(**compared).to_dict()
    local_ci = spanscore.evaluate(**evaluated).to_dict()
    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
    ):
        engine = DaskEngine(scheduler=cluster.scheduler_address, partition_bytes=2000)
        remote = spanscore.compare(**compared, engine=engine).to_dict()
        remote_ci = spanscore.evaluate(**evaluated, engine=engine).to_dict()
    assert remote == local
    assert remote_ci == local_ci


def test_a_document_field_bucket_holds_the_rows_and_gives_the_same_numbers(tmp_path: Path) -> None:
    # A document field's buckets (the values are the reference's) paired as the parts come;
    # the attributes beside it give what they give without it.
    write_samples(tmp_path)
    gold, systems = tmp_path / "gold.jsonl", [tmp_path / "pred.jsonl", tmp_path / "gold.jsonl"]
    options: dict[str, Any] = {"reference": gold, "systems": systems, "names": ["p", "g"], "format": "jsonl"}
    with_field = spanscore.compare(**options, buckets=["id", "length"], per_type=True, **OPTIONS)
    same_groups(with_field.groups, dense_compare(gold, systems, ["p", "g"], ["id", "length"], format="jsonl"))
    alone = spanscore.compare(**options, buckets=["length"], per_type=True, **OPTIONS)
    assert alone.groups["length"] == with_field.groups["length"]
    assert alone.groups["per_type"] == with_field.groups["per_type"]


def test_the_histogram_of_counts_is_the_histogram() -> None:
    # Rows of counts sorted by their bytes (Histogram.of's way for counts): the same distinct
    # rows, order and counts as np.unique over whole rows and as the hashed rows (distinct_rows,
    # its way for rows with negative numbers), whatever the widest count (one byte to eight),
    # with weights or without.
    from spanscore.stages.documents import Histogram, distinct_rows

    rng = np.random.default_rng(0)
    for t in range(200):
        n, width = int(rng.integers(1, 300)), int(rng.integers(1, 30))
        high = int(rng.choice([2, 5, 300, 70_000, 2**40]))
        x = rng.integers(0, high, size=(n, width))
        x[rng.random(n) < 0.5] = x[0]  # many equal rows
        weights = rng.integers(0, 4, size=n) if t % 2 else None
        fields = tuple(str(i) for i in range(width))
        w = np.ones(n, dtype=np.int64) if weights is None else weights
        rows, inverse = np.unique(x, axis=0, return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=w, minlength=rows.shape[0]).astype(np.int64)
        hashed, hashed_inverse = distinct_rows(x)
        assert (hashed == rows).all() and (hashed_inverse == inverse.reshape(-1)).all()
        a = Histogram.of(x, fields, weights)
        assert a.rows.shape == rows[counts > 0].shape and (a.rows == rows[counts > 0]).all()
        assert (a.counts == counts[counts > 0]).all()
