"""The Dask engine gives exactly the JSON of the single-process streaming engine.

Runs a real ``LocalCluster`` on loopback (two worker processes). Skipped only when Dask's
``distributed`` is not installed (the optional extra ``spanscore[dask]``).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.errors import InputError, OptionError
from spanscore.io.conll_plan import plan_chunks

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

from spanscore.api import evaluate_dask  # noqa: E402
from spanscore.cli.main import cli  # noqa: E402
from spanscore.engines import dask_engine  # noqa: E402
from spanscore.engines.dask_engine import partitions  # noqa: E402

LABELS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """One cluster shared by the tests that pass ``scheduler=`` (the engine starts its own otherwise).

    Its workers are started as the engine starts its own (malloc keeps freed memory for reuse)."""
    with (
        dask.config.set(dask_engine.LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
    ):
        yield cluster.scheduler_address


def _perturb(src: Path, dst: Path, seed: int) -> None:
    """Change about 8% of the labels at random (invalid transitions included); tokens stay."""
    rng = random.Random(seed)
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        if line.strip() and rng.random() < 0.08:
            token, _, _ = line.rpartition("\t")
            line = f"{token}\t{rng.choice(LABELS)}"
        out.append(line)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def btc_pair(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pred = tmp_path_factory.mktemp("btc") / "pred.txt"
    _perturb(btc / "test.txt", pred, seed=3)
    return btc / "test.txt", pred


@pytest.fixture(scope="module")
def synth(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "3000", str(prefix), "--docs-every", "250"], check=True)
    return prefix


def _stream(**kw: Any) -> dict[str, Any]:
    return spanscore.evaluate(keep_details=False, **kw).to_dict()


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"credit": "dice", "matching": "greedy"},
    {"credit": "iou", "min_overlap": 0.5, "min_overlap_of": "both", "repair": "discard"},
    {"credit": 1.0, "type_map": {"LOC": "PLACE", "ORG": "O"}, "types": ["PER", "PLACE"], "zero_division": 1.0},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_btc_equals_stream(scheduler: str, btc_pair: tuple[Path, Path], options: dict[str, Any]) -> None:
    gold, pred = btc_pair
    got = evaluate_dask(reference=gold, predicted=pred, scheduler=scheduler, chunk_bytes=8192, **options).to_dict()
    _same(got, _stream(reference=gold, predicted=pred, **options))
    assert got["corpus"]["documents"] == 1  # no -DOCSTART- lines: one document, as merge_all says


def test_synth_many_partitions_equals_stream(scheduler: str, synth: Path) -> None:
    gold, pred = synth.with_suffix(".gold"), synth.with_suffix(".pred")
    plan = plan_chunks(gold, pred, 2048)
    assert len(list(partitions(plan, plan[-1].ref_end, 40))) == 40  # many tasks, each of a few chunks
    got = evaluate_dask(
        reference=gold, predicted=pred, scheduler=scheduler, chunk_bytes=2048, partition_bytes=4096
    ).to_dict()
    want = _stream(reference=gold, predicted=pred)
    _same(got, want)
    assert got["corpus"]["documents"] == 12 and got["corpus"]["sentences"] == 3000
    # The merged three-column file gives the same scores, on the Dask engine too.
    merged = evaluate_dask(reference=synth.with_suffix(".merged"), merged=True, scheduler=scheduler, chunk_bytes=3000)
    _same(merged.to_dict(), _stream(reference=synth.with_suffix(".merged"), merged=True))
    assert merged.to_dict()["metrics"] == want["metrics"]


def test_progress_reaches_the_end(scheduler: str, synth: Path) -> None:
    seen: list[tuple[int, int]] = []
    evaluate_dask(
        reference=synth.with_suffix(".gold"),
        predicted=synth.with_suffix(".pred"),
        scheduler=scheduler,
        chunk_bytes=8192,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(seen) >= 8 and seen[-1][0] == seen[-1][1] == synth.with_suffix(".gold").stat().st_size


def test_worker_errors_reach_the_caller(scheduler: str, btc_pair: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = btc_pair
    lines = pred.read_text(encoding="utf-8").splitlines()
    k = len(lines) - 40
    while not lines[k].strip():
        k += 1
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join([*lines[:k], "extra\tO", *lines[k:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as dask_error:
        evaluate_dask(reference=gold, predicted=bad, scheduler=scheduler, chunk_bytes=8192)
    with pytest.raises(InputError) as stream_error:
        spanscore.evaluate(reference=gold, predicted=bad, keep_details=False, chunk_bytes=8192)
    assert "extra" in str(dask_error.value)
    assert dask_error.value.line == stream_error.value.line


def test_bad_options_fail_before_a_cluster_starts(tmp_path: Path, btc_pair: tuple[Path, Path]) -> None:
    gold, pred = btc_pair
    with pytest.raises(InputError, match="no such file"):
        evaluate_dask(reference=gold, predicted=tmp_path / "missing.txt")
    with pytest.raises(OptionError, match="credit"):
        evaluate_dask(reference=gold, predicted=pred, credit=2.0)
    with pytest.raises(OptionError, match="encoding"):
        evaluate_dask(reference=gold, predicted=pred, labels="XYZ")


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch, btc_pair: tuple[Path, Path]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    gold, pred = btc_pair
    with pytest.raises(OptionError, match=r"pip install 'spanscore\[dask\]'"):
        evaluate_dask(reference=gold, predicted=pred)
    assert dask_engine.MISSING == "--engine dask needs: pip install 'spanscore[dask]'"


def test_slow_malloc_setting_is_detected(monkeypatch: pytest.MonkeyPatch, scheduler: str) -> None:
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_"):
        monkeypatch.delenv(name, raising=False)
    assert not dask_engine._malloc_env()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # what Dask's nannies set by default
    assert dask_engine._malloc_env()
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "33554432")  # the documented remedy
    assert not dask_engine._malloc_env()
    with distributed.Client(scheduler) as client:  # the shared cluster was started like the engine's own
        assert not any(client.run(dask_engine._malloc_env).values())


def test_partitions_are_consecutive_and_balanced(synth: Path) -> None:
    plan = plan_chunks(synth.with_suffix(".gold"), synth.with_suffix(".pred"), 1000)
    total = plan[-1].ref_end
    for n in (1, 2, 7, len(plan), len(plan) + 5):
        groups = list(partitions(iter(plan), total, n))  # chunks as they are planned
        assert [c for g in groups for c in g] == plan
        assert all(groups)
        assert len(groups) == n if n <= len(plan) // 2 else len(groups) <= min(n, len(plan))
    sizes = [sum(c.ref_end - c.ref_start for c in g) for g in partitions(plan, total, 4)]
    assert len(sizes) == 4
    assert max(sizes) - min(sizes) <= 2 * max(c.ref_end - c.ref_start for c in plan)


def test_cli_local_cluster_equals_stream(synth: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative paths: the local workers share this process's working directory.
    monkeypatch.chdir(synth.parent)
    runner = CliRunner()
    args = ["evaluate", "s.gold", "s.pred", "--json"]
    dask_run = runner.invoke(cli, [*args, "--engine", "dask", "--workers", "2", "--chunk-size", "4096"])
    assert dask_run.exit_code == 0, dask_run.output
    stream_run = runner.invoke(cli, [*args, "--engine", "stream"])
    assert stream_run.exit_code == 0, stream_run.output
    assert dask_run.output == stream_run.output
    assert json.loads(dask_run.output)["corpus"]["sentences"] == 3000


def test_an_error_found_while_planning_reaches_the_caller(scheduler: str, tmp_path: Path) -> None:
    """The plan runs in a thread beside the cluster; its error is raised in the caller's thread."""
    (tmp_path / "empty").write_bytes(b"\n\n")
    (tmp_path / "one").write_bytes(b"a\tO\n\n")
    with pytest.raises(InputError, match="empty: file is empty"):
        evaluate_dask(reference=tmp_path / "empty", predicted=tmp_path / "one", scheduler=scheduler)


def test_per_type_intervals_on_the_cluster_equal_local(scheduler: str, synth: Path) -> None:
    from spanscore.analysis.significance import Resampling, bootstrap, bootstrap_types

    gold, pred = synth.with_suffix(".gold"), synth.with_suffix(".pred")
    resampling = Resampling(resamples=100)
    on_cluster = evaluate_dask(
        reference=gold, predicted=pred, scheduler=scheduler, chunk_bytes=2048, document_types=True
    ).documents
    local = spanscore.evaluate(reference=gold, predicted=pred, document_types=True, keep_details=False).documents
    assert on_cluster is not None and local is not None
    for f in (bootstrap, bootstrap_types):
        assert f(on_cluster, zero_division=0.0, credit="0.5", resampling=resampling) == f(
            local, zero_division=0.0, credit="0.5", resampling=resampling
        )


def test_intervals_comparisons_and_bucket_intervals_on_the_cluster_equal_local(
    scheduler: str, btc_pair: tuple[Path, Path]
) -> None:
    """--ci (its histogram state merged across partitions), --by-free buckets with intervals and
    compare with per-type tests: the cluster's numbers are the local engine's."""
    from spanscore.engines.dask_engine import DaskEngine

    gold, pred = btc_pair
    ci = {"ci": 0.9, "resamples": 200, "seed": 3}
    on_cluster = evaluate_dask(reference=gold, predicted=pred, scheduler=scheduler, chunk_bytes=4096, **ci)
    _same(on_cluster.to_dict(), _stream(reference=gold, predicted=pred, **ci))
    with_buckets = evaluate_dask(
        reference=gold, predicted=pred, scheduler=scheduler, chunk_bytes=4096, buckets=["length"], **ci
    )
    _same(with_buckets.to_dict(), _stream(reference=gold, predicted=pred, buckets=["length"], **ci))
    engine = DaskEngine(scheduler=scheduler, partition_bytes=50_000)
    options: dict[str, Any] = {"resamples": 200, "trials": 200, "seed": 3, "per_type": True}
    remote = spanscore.compare(reference=gold, systems=[pred, gold], engine=engine, **options)
    local = spanscore.compare(reference=gold, systems=[pred, gold], **options)
    _same(remote.to_dict(), local.to_dict())  # type: ignore[arg-type]
