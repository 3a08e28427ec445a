"""``compare`` on the Dask engine: one cluster counts every system side by side, and a task sends
back its partition's joint histogram and each part's two end documents, never a row per
document (the client's memory then follows the distinct joint rows, not the corpus; measured by
``bench/scale_bench.py``). The numbers are the local engine's, whatever the partitions. Runs on a
real loopback ``LocalCluster``; skipped only without Dask's ``distributed``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spanscore
from spanscore import api

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

from spanscore.engines import paired  # noqa: E402
from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG, DaskEngine  # noqa: E402
from spanscore.stages.documents import Histogram  # noqa: E402

SENTENCES = 3000
OPTIONS: dict[str, Any] = {"resamples": 200, "trials": 200, "seed": 5}


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
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


@pytest.fixture(scope="module")
def systems(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A reference, its system output and a second system: the first with every third PER
    mention made LOC (the systems differ document by document)."""
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), str(SENTENCES), str(prefix)], check=True)
    gold, a = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    lines = a.read_text().split("\n")
    seen = 0
    for k, line in enumerate(lines):
        if line.endswith("-PER"):
            if line.endswith("B-PER"):
                seen += 1
            if seen % 3 == 0:
                lines[k] = line[: -len("PER")] + "LOC"
    b = prefix.with_suffix(".alt")
    b.write_text("\n".join(lines))
    return gold, a, b


@dataclass(frozen=True)
class Recorded(DaskEngine):
    """The Dask engine, every result of ``partitioned`` noted (on a list the copies share)."""

    seen: list[Any] = field(default_factory=list, compare=False, hash=False)
    calls: list[str] = field(default_factory=list, compare=False, hash=False)

    def partitioned(self, task: Callable[[Any, list[Any]], Any], argument: Any, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(getattr(task, "__name__", repr(task)))
        for got in super().partitioned(task, argument, *args, **kwargs):
            self.seen.append(got)
            yield got


@pytest.mark.parametrize(("chunk", "partition_bytes"), [(6000, 20_000), (6000, 150_000), (20_000, 16 << 20), (0, 0)])
def test_compare_on_the_cluster_is_the_local_comparison(
    scheduler: str, systems: tuple[Path, Path, Path], chunk: int, partition_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, a, b = systems
    if chunk:  # parts of a few kB: tens of them, cut anywhere in a partition
        monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
    partition_bytes = partition_bytes or DaskEngine.partition_bytes
    engine = DaskEngine(scheduler=scheduler, partition_bytes=partition_bytes)
    remote = spanscore.compare(reference=gold, systems=[a, b], engine=engine, **OPTIONS)
    for jobs in (1, 2):
        local = spanscore.compare(reference=gold, systems=[a, b], jobs=jobs, **OPTIONS)
        assert remote.to_dict() == local.to_dict()


def test_a_task_sends_a_joint_histogram_and_two_documents_a_part(
    scheduler: str, systems: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, a, b = systems
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 6000)  # tens of parts, a few in each partition
    engine = Recorded(scheduler=scheduler, partition_bytes=40_000)
    got = spanscore.compare(reference=gold, systems=[a, b], engine=engine, **OPTIONS)
    assert got.to_dict() == spanscore.compare(reference=gold, systems=[a, b], jobs=1, **OPTIONS).to_dict()
    # One run of the cluster for both systems, side by side (not one per system).
    assert engine.calls == ["joined_partition"]
    assert len(engine.seen) >= 8  # several partitions, so rows per document would show
    rows_sent = 0
    histograms: list[Histogram] = []
    for group in engine.seen:
        for _, inner in group[:-1]:
            assert inner is None  # a partition's histograms travel merged, with its last part
        histograms += [paired.landed(inner) for _, inner in group[-1:] if inner is not None]
        for results, _ in group:
            assert len(results) == 2  # both systems' parts
            for part in results:
                assert part.docs is not None and part.docs.keys.shape[0] <= 2
                rows_sent += part.docs.keys.shape[0]
    assert histograms
    # Far fewer rows than documents travel: two documents a part, and distinct joint rows.
    assert rows_sent < SENTENCES / 5
    assert sum(h.rows.shape[0] for h in histograms) < sum(h.documents for h in histograms)
    for h in histograms:
        assert np.unique(h.rows, axis=0).shape[0] == h.rows.shape[0]  # merged within the partition
    # Every document is in a histogram once, or travels as a part's end row.
    assert sum(h.documents for h in histograms) <= SENTENCES <= sum(h.documents for h in histograms) + rows_sent // 2


def test_systems_with_other_documents_are_refused_on_the_cluster(
    scheduler: str, systems: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, a, _ = systems
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 6000)
    short = tmp_path / "short.pred"
    text = a.read_text()
    short.write_text(text[: len(text) // 2].rsplit("\n\n", 1)[0] + "\n\n")
    engine = DaskEngine(scheduler=scheduler, partition_bytes=40_000)
    with pytest.raises(spanscore.SpanscoreError) as remote:
        spanscore.compare(reference=gold, systems=[a, short], engine=engine, **OPTIONS)
    with pytest.raises(spanscore.SpanscoreError) as local:
        spanscore.compare(reference=gold, systems=[a, short], jobs=1, **OPTIONS)
    assert str(remote.value) == str(local.value)


@pytest.mark.parametrize("partition_bytes", [30_000, 16 << 20])
def test_per_type_and_bucket_comparisons_count_side_by_side_on_the_cluster(
    scheduler: str, systems: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, partition_bytes: int
) -> None:
    """``compare --per-type --buckets length``: one cluster run for both systems, each part's
    groups' joint histograms paired where it is counted; the local engine's numbers."""
    gold, a, b = systems
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 6000)
    options = {**OPTIONS, "per_type": True, "buckets": ["length"]}
    engine = Recorded(scheduler=scheduler, partition_bytes=partition_bytes)
    got = spanscore.compare(reference=gold, systems=[a, b], engine=engine, **options)
    assert engine.calls == ["each"]
    for group in engine.seen:
        for results, _ in group:
            assert len(results) == 2
            assert all(part.docs is not None and part.docs.keys.shape[0] <= 2 for part in results)
    for jobs in (1, 2):
        assert got.to_dict() == spanscore.compare(reference=gold, systems=[a, b], jobs=jobs, **options).to_dict()
