"""The Dask engine: the streaming counts of CoNLL files, computed on a Dask distributed cluster.

The client cuts both files at the same sentence breaks (``stream.iter_chunks``, in a thread), groups
the chunks into partitions of about ``partition_bytes`` of reference, and submits each partition's
task as soon as its chunks are planned. A task reads its byte ranges *by path*, runs
``stream.count_chunk`` on each chunk and returns the sum of their ``Counts``; the client adds the
partitions up (``stream.merge_all``) and builds the same ``Report`` that
``spanscore.evaluate(..., keep_details=False)`` builds, so the JSON of the two is identical. Counts
are integers (proportional credit included), so the order in which the partitions finish cannot
change a number.

Workers open the files themselves: with a cluster of several machines the files must be readable
at the same path on every worker (a shared or network filesystem), and spanscore must be
installed on every worker. Without ``scheduler`` a ``LocalCluster`` of ``n_workers`` processes
(one thread each) starts on 127.0.0.1 with the dashboard off, and is closed at the end.

Dask is an optional dependency (``pip install 'spanscore[dask]'``) and is imported only here, when
``evaluate_dask`` runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import math
import os
import queue
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import evaluate
from ..counts import Counts, Options
from ..encoding import check_repair, get_encoding
from ..errors import OptionError
from ..memory import MMAP_THRESHOLD, TOP_PAD, TRIM_THRESHOLD
from ..report import Report
from ..stream import Chunk, count_chunk, iter_chunks, merge_all, plan_chunks

MISSING = "--engine dask needs: pip install 'spanscore[dask]'"
# Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536. Setting it also freezes glibc's
# mmap threshold at 128 KiB, so every large numpy temporary is mapped and unmapped again, and
# counting runs 2-3 times slower (measured: 0.84 s -> 2.2 s of CPU for 100k sentences). The workers
# of the local cluster get what the stream engine's workers get (spanscore.memory: freed memory kept
# for reuse); MALLOC_MMAP_THRESHOLD_ set as well also restores the speed, and is what we advise for
# other clusters.
_ENVIRON = "distributed.nanny.pre-spawn-environ."
LOCAL_WORKER_CONFIG = {
    _ENVIRON + "MALLOC_TRIM_THRESHOLD_": TRIM_THRESHOLD,
    _ENVIRON + "MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD,
    _ENVIRON + "MALLOC_TOP_PAD_": TOP_PAD,
}
SLOW_MALLOC = (
    "{n} Dask worker(s) run with MALLOC_TRIM_THRESHOLD_ set and no MALLOC_MMAP_THRESHOLD_: counting there is"
    " 2-3x slower; start them with MALLOC_MMAP_THRESHOLD_=33554432 in the environment (docs/benchmarks.md)"
)
DEFAULT_PARTITION = 16 << 20  # bytes of reference per task, at most (there are always a few per worker)
TASKS_PER_WORKER = 4


def _import_distributed() -> Any:
    """``distributed``, typed loosely: parts of its API are untyped and vary between releases."""
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise OptionError(MISSING) from None


def partitions(chunks: Iterable[Chunk], total_bytes: int, n_parts: int) -> Iterator[list[Chunk]]:
    """Cut chunks, as they come, into at most ``n_parts`` runs of consecutive chunks.

    A run ends with the first chunk that reaches the next equal share of ``total_bytes`` (the
    reference's size), so runs differ by at most about one chunk; every run holds a chunk.
    """
    share = total_bytes / max(n_parts, 1)
    k = 1  # the share the current run ends at
    run: list[Chunk] = []
    for chunk in chunks:
        run.append(chunk)
        if k < n_parts and chunk.ref_end >= k * share:
            yield run
            run = []
            while k < n_parts and chunk.ref_end >= k * share:
                k += 1
    if run:
        yield run


def count_partition(
    reference: str,
    predicted: str | None,
    chunks: Sequence[Chunk],
    options: Options,
    reading: Mapping[str, Any],
) -> Counts:
    """Runs on a worker: the summed counts of consecutive chunks (-DOCSTART- lines kept as counted)."""
    total: Counts | None = None
    for chunk in chunks:
        part = count_chunk(reference, predicted, chunk, options, **reading)
        total = part if total is None else total.merge(part)
    if total is None:
        raise ValueError("a partition needs at least one chunk")
    return total


def _plan_into(
    out: queue.Queue[Chunk | BaseException | None],
    stop: threading.Event,
    reference: str | Path,
    predicted: str | Path | None,
    chunk_bytes: int,
) -> None:
    """Runs in a thread of the client: every chunk of the plan, then None (or the error)."""
    try:
        for chunk in iter_chunks(reference, predicted, chunk_bytes):
            if stop.is_set():  # the client gave up (its cluster failed to start, say)
                return
            out.put(chunk)
        out.put(None)
    except BaseException as exc:  # raised again in the client's thread
        out.put(exc)


def _drain(planned: queue.Queue[Chunk | BaseException | None]) -> Iterator[Chunk]:
    while True:
        item = planned.get()
        if item is None:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


def _malloc_env() -> bool:
    """Runs on a worker: whether glibc's mmap threshold is frozen at its small default."""
    env = os.environ
    return "MALLOC_TRIM_THRESHOLD_" in env and not {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_"} & set(env)


def _slots(client: Any, fallback: int) -> int:
    """How many tasks the cluster runs at once."""
    threads = int(sum(client.nthreads().values()))
    return threads if threads > 0 else max(1, fallback)


@dataclass(frozen=True)
class DaskCounter:
    """A ``stream.ChunkCounter`` that counts the chunks on a Dask cluster.

    ``scheduler`` is the address of a running scheduler (``tcp://host:8786``); without it a local
    cluster of ``n_workers`` single-threaded processes starts and stops with each call.
    ``partition_bytes`` is the most reference bytes one task counts.
    """

    scheduler: str | None = None
    n_workers: int = 2
    partition_bytes: int = DEFAULT_PARTITION

    def __call__(
        self,
        reference: str | Path,
        predicted: str | Path | None,
        options: Options,
        read: Mapping[str, Any],
        *,
        chunk_bytes: int,
        progress: Callable[[int, int], None] | None,
    ) -> Counts:
        # Every check that can fail runs before a cluster starts.
        get_encoding(read["labels"])
        check_repair(read["repair"])
        if self.n_workers < 1:
            raise OptionError(f"--workers must be at least 1, not {self.n_workers}")
        if chunk_bytes < 1 or self.partition_bytes < 1:
            raise OptionError("chunk and partition sizes must be positive")
        if importlib.util.find_spec("distributed") is None:
            raise OptionError(MISSING)
        for path in (reference, predicted):
            if path is not None and not os.path.isfile(path):
                plan_chunks(reference, predicted, chunk_bytes)  # raises the stream engine's error
        ref_path, pred_path = str(reference), None if predicted is None else str(predicted)
        if self.scheduler is not None:
            # Remote workers do not share this process's working directory.
            ref_path = os.path.abspath(ref_path)
            pred_path = None if pred_path is None else os.path.abspath(pred_path)

        with ExitStack() as stack:
            # Plan while distributed loads and the cluster starts, and hand out each partition as
            # soon as it is planned: planning large files takes seconds, and the workers count meanwhile.
            planned: queue.Queue[Chunk | BaseException | None] = queue.Queue()
            stop = threading.Event()
            thread = threading.Thread(target=_plan_into, args=(planned, stop, reference, predicted, chunk_bytes))
            thread.start()
            stack.callback(thread.join)
            stack.callback(stop.set)
            dist = _import_distributed()
            client = self._client(dist, stack)
            total_bytes = os.path.getsize(reference)
            slots = _slots(client, self.n_workers)
            n_parts = max(slots * TASKS_PER_WORKER, math.ceil(total_bytes / self.partition_bytes))
            futures, sizes = [], {}
            for group in partitions(_drain(planned), total_bytes, n_parts):
                future = client.submit(count_partition, ref_path, pred_path, group, options, read, pure=False)
                futures.append(future)
                sizes[future.key] = sum(c.ref_end - c.ref_start for c in group)
            parts: dict[str, Counts] = {}
            done = 0
            for future in dist.as_completed(futures):
                parts[future.key] = future.result()
                done += sizes[future.key]
                if progress is not None:
                    progress(done, total_bytes)
            return merge_all([parts[f.key] for f in futures])  # in file order, as the stream engine adds

    def _client(self, dist: Any, stack: ExitStack) -> Any:
        if self.scheduler is not None:
            client = stack.enter_context(dist.Client(self.scheduler))
            if sys.platform.startswith("linux"):
                slow = sum(bool(v) for v in client.run(_malloc_env).values())
                if slow:
                    warnings.warn(SLOW_MALLOC.format(n=slow), RuntimeWarning, stacklevel=3)
            return client
        with importlib.import_module("dask").config.set(LOCAL_WORKER_CONFIG):
            cluster = dist.LocalCluster(
                n_workers=self.n_workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # No dashboard; the scheduler's small HTTP server takes any free loopback port.
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
            )
        stack.enter_context(cluster)
        return stack.enter_context(dist.Client(cluster))


def evaluate_dask(
    *,
    scheduler: str | None = None,
    n_workers: int = 2,
    partition_bytes: int = DEFAULT_PARTITION,
    **evaluate_options: Any,
) -> Report:
    """``spanscore.evaluate(..., keep_details=False)`` of CoNLL files, counted on a Dask cluster.

    ``evaluate_options`` are ``evaluate``'s (reference, predicted, labels, credit, chunk_bytes,
    progress...); the report, and so its JSON, equals the streaming engine's. The files must be
    readable at the same path on every worker.
    """
    counter = DaskCounter(scheduler=scheduler, n_workers=n_workers, partition_bytes=partition_bytes)
    return evaluate(**evaluate_options, keep_details=False, counter=counter)
