"""compare counts its systems side by side and keeps their per-document rows only as one joint
histogram: the same numbers as the paired tests over the systems' whole per-document tables,
whatever the chunks of each system, the processes or the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_compare import btc_runs, docs_of  # noqa: F401  (the fixture)

import spanscore
from spanscore.analysis.significance import Resampling, compare, joint_histogram, resampled_columns
from spanscore.engines import LocalEngine, PartCounter
from spanscore.engines.paired import run_paired
from spanscore.errors import OptionError
from spanscore.io.reading import Reading
from spanscore.io.sources import open_source
from spanscore.stages.parts import Wanted
from spanscore.stages.scoring import Scoring, TypeSelection

OPTIONS: dict[str, Any] = {"resamples": 150, "trials": 150, "seed": 3}


def rows_compare(runs: dict[str, Path], names: list[str]) -> Any:
    """The paired tests as first written: every system's whole per-document table, side by side."""
    docs = [docs_of(runs["gold"], runs[n]).documents for n in names]
    resampling = Resampling(resamples=OPTIONS["resamples"], trials=OPTIONS["trials"], seed=OPTIONS["seed"])
    return compare(docs, names, zero_division=0.0, credit="0.5", resampling=resampling)


def test_compare_equals_the_tests_over_the_whole_per_document_tables(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    expected = rows_compare(btc_runs, ["a", "b"])
    for jobs in (1, 2):
        c = spanscore.compare(
            reference=btc_runs["gold"], systems=[btc_runs["a"], btc_runs["b"]], names=["a", "b"], jobs=jobs, **OPTIONS
        )
        assert c.tests == expected
        # No system's evaluation holds its per-document rows; the mean over documents is still there.
        assert all(r.documents is None for r in c.reports)
        single = docs_of(btc_runs["gold"], btc_runs["a"]).to_dict()["macro_documents"]
        got = c.reports[0].to_dict()["macro_documents"]
        assert got["count"] == single["count"] and got["empty"] == single["empty"]
        assert got["strict"]["f1"] == pytest.approx(single["strict"]["f1"], abs=1e-12)


def test_the_joint_histogram_does_not_depend_on_each_systems_chunks(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    reading, scoring = Reading(), Scoring()
    wanted = Wanted(documents=True, examples=0)
    expected = joint_histogram(
        [docs_of(btc_runs["gold"], btc_runs[n]).documents for n in ("a", "b", "a")], "0.5"
    )

    def columns(fields: tuple[str, ...]) -> list[int]:
        return resampled_columns(fields, "0.5")

    # Three systems cut into chunks of different sizes, so their parts end at different documents.
    # Two processes each: the systems' worker pools run side by side, and each ends in its turn.
    for sizes, jobs in (((1500, 7000, 3100), 2), ((1 << 22, 2000, 1 << 22), 1)):
        counters = [
            PartCounter(
                open_source(btc_runs["gold"], btc_runs[n], reading, TypeSelection(), size), scoring.options, wanted
            )
            for n, size in zip(("a", "b", "a"), sizes, strict=True)
        ]
        paired = run_paired(counters, LocalEngine(jobs), ["a", "b", "a2"], columns)
        assert paired.joint is not None
        assert paired.joint.fields == expected.fields
        assert (paired.joint.rows == expected.rows).all() and (paired.joint.counts == expected.counts).all()
        assert all(t.docs is None for t in paired.totals)


def test_systems_of_one_reference_read_it_once_and_count_the_same(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    # CoNLL systems of one reference cut alike: each chunk's reference is read once for all of
    # them. The same joint histogram and the same totals (examples included) as each system
    # counted on its own stream, whatever the chunk size and the processes.
    import pickle
    from dataclasses import replace

    from spanscore.engines.paired import side_by_side

    reading, scoring = Reading(), Scoring()
    wanted = Wanted(documents=True, examples=5)
    expected = joint_histogram(
        [docs_of(btc_runs["gold"], btc_runs[n]).documents for n in ("a", "b", "a")], "0.5"
    )

    class Apart:
        """The local engine, not recognised as one: each system counted on its own stream."""

        def __init__(self, jobs: int) -> None:
            self.engine = LocalEngine(jobs)

        def results(self, counter: PartCounter, progress: Any) -> Any:
            return self.engine.results(counter, progress)

    for size, jobs in ((1500, 2), (7000, 1), (1 << 22, 2)):
        counters = [
            PartCounter(
                open_source(btc_runs["gold"], btc_runs[n], reading, TypeSelection(), size), scoring.options, wanted
            )
            for n in ("a", "b", "a")
        ]
        assert side_by_side(counters, LocalEngine(jobs)) is not None
        assert side_by_side(counters, Apart(jobs)) is None  # type: ignore[arg-type]
        other = replace(counters[1], source=replace(counters[1].source, chunk_bytes=size + 1))  # type: ignore[type-var]
        assert side_by_side([counters[0], other], LocalEngine(jobs)) is None
        names = ["a", "b", "a2"]
        together = run_paired(counters, LocalEngine(jobs), names, lambda f: resampled_columns(f, "0.5"))
        apart = run_paired(counters, Apart(jobs), names, lambda f: resampled_columns(f, "0.5"))  # type: ignore[arg-type]
        for got in (together, apart):
            assert got.joint is not None and got.joint.fields == expected.fields
            assert (got.joint.rows == expected.rows).all() and (got.joint.counts == expected.counts).all()
        for t, a in zip(together.totals, apart.totals, strict=True):
            assert pickle.dumps(t.counts) == pickle.dumps(a.counts)  # every array, the same bits
        assert [t.examples for t in together.totals] == [t.examples for t in apart.totals]


def test_systems_with_other_documents_are_refused(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    counters = [
        PartCounter(
            open_source(btc_runs[g], btc_runs[p], Reading(), TypeSelection(), 1 << 22), Scoring().options,
            Wanted(documents=True, examples=0),
        )
        for g, p in (("gold", "a"), ("small_gold", "small_a"))
    ]
    with pytest.raises(OptionError, match="small does not have the documents of full"):
        run_paired(counters, LocalEngine(1), ["full", "small"], lambda f: resampled_columns(f, "0.5"))


def test_compare_on_dask_equals_the_local_engine(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    distributed = pytest.importorskip("distributed")
    import dask

    from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG, DaskEngine

    runs = {"gold": btc_runs["small_gold"], "a": btc_runs["small_a"], "b": btc_runs["small_gold"]}
    options = {"reference": runs["gold"], "systems": [runs["a"], runs["b"]], "names": ["a", "b"], **OPTIONS}
    local = spanscore.compare(**options)
    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
    ):
        engine = DaskEngine(scheduler=cluster.scheduler_address, partition_bytes=2000)
        remote = spanscore.compare(**options, engine=engine)
    assert remote.to_dict() == local.to_dict()
    assert local.tests == rows_compare(runs, ["a", "b"])


def test_compare_command_on_dask_gives_the_local_json(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    # ``spanscore compare --engine dask`` on a loopback cluster: the JSON of the local engine.
    distributed = pytest.importorskip("distributed")
    import json

    import dask
    from click.testing import CliRunner

    from spanscore.cli.main import cli
    from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG

    files = [str(btc_runs[n]) for n in ("small_gold", "small_a", "small_gold")]
    common = [*files, "--json", "--resamples", "150", "--trials", "150", "--seed", "3", "--name", "a", "--name", "b"]
    local = CliRunner().invoke(cli, ["compare", *common, "--engine", "local", "--jobs", "2"])
    assert local.exit_code == 0, local.output
    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
    ):
        remote = CliRunner().invoke(
            cli, ["compare", *common, "--engine", "dask", "--scheduler", cluster.scheduler_address]
        )
    assert remote.exit_code == 0, remote.output
    assert json.loads(remote.output) == json.loads(local.output)
    assert json.loads(local.output)["systems"][1]["metrics"]["strict"]["f1"]["value"] == 1.0
