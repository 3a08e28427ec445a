"""The loopback cluster that ``--engine dask`` starts keeps nothing that grows with the length of
the run: its workers run without Dask's statistical profiler (which samples every thread every
10 ms and keeps a profile per second for the last 1,000 seconds), and with spanscore's malloc
settings. Starts a real ``LocalCluster``; skipped only without Dask's ``distributed``."""

from __future__ import annotations

import time
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

from spanscore.engines import dask_engine  # noqa: E402
from spanscore.engines.dask_engine import PROFILE, DaskEngine  # noqa: E402


def _on_the_worker(_argument: Any, group: list[int]) -> dict[str, Any]:
    """What a worker keeps of the profiler after some work (a task sent by value: see below)."""
    import os
    import time as clock

    import dask as d
    import distributed as dist

    worker = dist.get_worker()
    end = clock.perf_counter() + 0.4
    while clock.perf_counter() < end:  # busy: a profiler would sample this thread 40 times
        sum(range(1000))
    samples = worker.profile_recent["count"] + sum(p["count"] for _, p in worker.profile_history)
    return {
        "profile": d.config.get("distributed.worker.profile.enabled"),
        "samples": samples,
        "arenas": os.environ.get("MALLOC_ARENA_MAX"),
        "items": group,
    }


# Sent by value: the workers cannot import this test module.
_on_the_worker.__module__ = "__main__"


def test_the_local_cluster_runs_its_workers_without_the_profiler() -> None:
    started = time.perf_counter()
    got = list(DaskEngine(n_workers=1).partitioned(_on_the_worker, None, iter([1, 2]), lambda item: item, 2))
    assert time.perf_counter() - started < 120
    assert [g["items"] for g in got] == [[1], [2]] or [g["items"] for g in got] == [[1, 2]]
    for g in got:
        assert g["profile"] is False
        assert g["samples"] == 0
        assert g["arenas"] == str(dask_engine.ARENA_MAX)


def test_the_profiler_is_what_the_setting_turns_off() -> None:
    """The same task on a cluster started without the setting: the profiler samples (so the check
    above can fail)."""
    config = {k: v for k, v in dask_engine.LOCAL_WORKER_CONFIG.items() if k != PROFILE}
    with (
        dask.config.set(config),
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        got = client.submit(_on_the_worker, None, [0], pure=False).result()
    assert got["profile"] is True
    assert got["samples"] > 0
