"""What the Dask engine holds does not grow with the corpus.

A partition's task sends back its per-document statistics as a histogram of distinct rows (plus
the documents a partition boundary may cut), never a row per document; and once the client has
fetched a partition's result, no future names it, so the worker frees it. Both run on a real
loopback ``LocalCluster``; skipped only without Dask's ``distributed``. The memory itself at 1M
and 10M sentences is measured by ``bench/scale_bench.py``, not here.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spanscore

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

from spanscore.engines import PartCounter  # noqa: E402
from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG, TASKS_PER_WORKER, DaskEngine  # noqa: E402
from spanscore.stages.parts import PartResult  # noqa: E402


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
def corpus(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "6000", str(prefix)], check=True)
    return prefix.with_suffix(".gold"), prefix.with_suffix(".pred")


def _held(scheduler: str) -> Callable[[], int]:
    """How many partition tasks the scheduler still keeps (results a client may fetch)."""
    watcher = distributed.Client(scheduler)

    def count() -> int:
        def on_scheduler(dask_scheduler: Any) -> int:
            return sum(1 for key in dask_scheduler.tasks if "count_partition" in str(key))

        return int(watcher.run_on_scheduler(on_scheduler))

    count.close = watcher.close  # type: ignore[attr-defined]
    return count


@dataclass
class Watched:
    """A Dask engine whose results are looked at as they come: each partition's, and, where the
    number of partitions is ``expected``, how many of them the cluster still holds as the last
    result reaches the caller (the engine's client still open)."""

    inner: DaskEngine
    held: Callable[[], int]
    expected: int | None = None
    slow: float = 0.0  # seconds the consumer takes over each result
    parts: list[PartResult] = field(default_factory=list)
    held_at_last: int | None = None
    most_held: int = 0

    def results(self, counter: PartCounter, progress: Any) -> Iterator[PartResult]:
        for k, part in enumerate(self.inner.results(counter, progress)):
            if self.slow:
                time.sleep(self.slow)  # the workers finish the partitions out meanwhile
                self.most_held = max(self.most_held, self.held())
            if self.expected is not None and k == self.expected - 1:
                # Every result is fetched: none needs to stay (a release takes a moment to arrive).
                deadline = time.monotonic() + 10
                while (held := self.held()) and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.held_at_last = held
            self.parts.append(part)
            yield part


def test_fetched_partitions_are_freed_on_the_workers(scheduler: str, corpus: tuple[Path, Path]) -> None:
    gold, pred = corpus
    held = _held(scheduler)
    options: dict[str, Any] = {"chunk_bytes": 4096, "ci": 0.9, "resamples": 50}
    try:
        first = Watched(DaskEngine(scheduler=scheduler, partition_bytes=20_000), held)
        spanscore.evaluate(reference=gold, predicted=pred, engine=first, **options)
        assert len(first.parts) >= 20  # many partitions, so holding them all would show
        engine = Watched(first.inner, held, expected=len(first.parts))
        got = spanscore.evaluate(reference=gold, predicted=pred, engine=engine, **options)
    finally:
        held.close()  # type: ignore[attr-defined]
    assert len(engine.parts) == len(first.parts)
    assert engine.held_at_last == 0
    want = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, **options)
    assert got.to_dict() == want.to_dict()


def test_a_slow_client_keeps_a_window_of_partitions_out(scheduler: str, corpus: tuple[Path, Path]) -> None:
    """The client takes longer over each result than the workers over a partition (as when it
    joins the systems of a comparison): the workers hold only the partitions out, a few per
    worker, not every partition of the corpus."""
    gold, pred = corpus
    held = _held(scheduler)
    try:
        engine = Watched(DaskEngine(scheduler=scheduler, partition_bytes=20_000), held, slow=0.15)
        got = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=4096, engine=engine)
    finally:
        held.close()  # type: ignore[attr-defined]
    window = 2 * TASKS_PER_WORKER  # two workers of one thread
    assert len(engine.parts) >= 3 * window
    assert 0 < engine.most_held <= window + 2  # a release may still be on its way
    assert got.to_dict() == spanscore.evaluate(reference=gold, predicted=pred, keep_details=False).to_dict()


def test_a_partition_sends_a_histogram_not_a_row_per_document(scheduler: str, corpus: tuple[Path, Path]) -> None:
    gold, pred = corpus
    held = _held(scheduler)
    try:
        engine = Watched(DaskEngine(scheduler=scheduler, partition_bytes=100_000), held)
        spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=8192, ci=0.9, resamples=20, engine=engine)
    finally:
        held.close()  # type: ignore[attr-defined]
    documents = 0
    for part in engine.parts:
        assert part.docs is None and part.state is not None
        state = part.state
        rows = state.closed.compacted().rows
        # Distinct rows only, and at most the two documents a boundary may cut kept whole.
        assert np.unique(rows, axis=0).shape[0] == rows.shape[0]
        assert state.edges.keys.shape[0] <= 2
        assert rows.shape[0] < state.documents / 2  # hundreds of sentences share far fewer vectors
        documents += state.documents
    # Each partition's documents, the cut ones counted once per side, add up to the corpus.
    assert 6000 <= documents <= 6000 + len(engine.parts)


def test_tasks_sending_rows_per_document_count_smaller_partitions(scheduler: str, corpus: tuple[Path, Path]) -> None:
    """A task that sends back a row per document (here ``documents=True``) counts at most
    ``rows_partition_bytes`` of reference; one that sends additive state (``ci``) the usual
    ``partition_bytes``. The numbers are the local engine's either way."""
    gold, pred = corpus
    size = gold.stat().st_size
    engine = DaskEngine(scheduler=scheduler, partition_bytes=size // 4, rows_partition_bytes=size // 24)
    counts = {}
    for name, options in {"rows": {"documents": True}, "state": {"ci": 0.9, "resamples": 20}}.items():
        watched = Watched(engine, lambda: 0)
        got = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=4096, engine=watched, **options)
        want = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=4096, keep_details=False, **options)
        assert got.to_dict() == want.to_dict()
        counts[name] = len(watched.parts)
    assert counts["state"] == 2 * TASKS_PER_WORKER  # four shares of the bytes, but a few tasks per worker at least
    assert 24 <= counts["rows"] <= 26
