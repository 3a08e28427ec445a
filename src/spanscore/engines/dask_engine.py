"""The Dask engine: the parts of a source counted on a Dask distributed cluster.

The client plans the parts (``source.parts()``, in a thread), groups them into partitions of about
``partition_bytes`` of reference, and submits each partition's task as soon as its parts are
planned, keeping a few partitions per worker out at a time (a result waits on its worker until
the client fetches it, and is freed then), so no process holds more than a few partitions'
results whatever the corpus's size. A task reads its parts (CoNLL byte ranges are read *by
path*), counts each one with the same ``PartCounter`` that the local engine runs, and returns
them folded into one result; the client hands the partitions back in plan order, so every output
(counts, per-document counts, report rows, examples) is identical to the local engine's. Counts
are integers (proportional credit included), so the order in which the partitions finish cannot
change a number.

Workers open the files themselves: with a cluster of several machines the files must be readable
at the same path on every worker (a shared or network filesystem), and spanscore must be
installed on every worker. Without ``scheduler`` a ``LocalCluster`` of ``n_workers`` processes
(one thread each) starts on 127.0.0.1 with the dashboard off, and is closed at the end.

Dask is an optional dependency (``pip install 'spanscore[dask]'``) and is imported only here, when
this engine runs.
"""

from __future__ import annotations

import collections
import importlib
import importlib.util
import logging
import math
import os
import queue
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ..errors import MissingExtra, OptionError
from ..runtime.memory import ARENA_MAX, MMAP_THRESHOLD, TOP_PAD, TRIM_THRESHOLD
from ..stages.parts import PartResult, fold, totals_of
from .local import PartCounter

MISSING = str(MissingExtra("--engine dask", "dask"))
# Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536. Setting it also freezes glibc's
# mmap threshold at 128 KiB, so every large numpy temporary is mapped and unmapped again, and
# counting runs 2-3 times slower (measured: 0.84 s -> 2.2 s of CPU for 100k sentences). The workers
# of the local cluster get what the stream engine's workers get (spanscore.runtime.memory: freed memory kept
# for reuse); MALLOC_MMAP_THRESHOLD_ set as well also restores the speed, and is what we advise for
# other clusters.
_ENVIRON = "distributed.nanny.pre-spawn-environ."
# Dask's statistical profiler samples every thread of a worker every 10 ms and keeps a profile
# per second for the last 1,000 seconds (with the source lines it looked up): a worker's memory
# grew with the run's length, so with the corpus (some 13 MB after four minutes, traced), and the
# sampling costs CPU. Nothing of spanscore reads it: the local cluster's workers run without it.
PROFILE = "distributed.worker.profile.enabled"
LOCAL_WORKER_CONFIG: dict[str, Any] = {
    _ENVIRON + "MALLOC_TRIM_THRESHOLD_": TRIM_THRESHOLD,
    _ENVIRON + "MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD,
    _ENVIRON + "MALLOC_TOP_PAD_": TOP_PAD,
    _ENVIRON + "MALLOC_ARENA_MAX": ARENA_MAX,
    PROFILE: False,
}
SLOW_MALLOC = (
    "{n} Dask worker(s) run with MALLOC_TRIM_THRESHOLD_ set and no MALLOC_MMAP_THRESHOLD_: counting there is"
    " 2-3x slower; start them with MALLOC_MMAP_THRESHOLD_=33554432 in the environment (docs/benchmarks.md)"
)
DEFAULT_PARTITION = 16 << 20  # bytes of reference per task, at most (there are always a few per worker)
# ... where a task sends back a row per document (compare, --by, --per-document): the client holds
# the rows of the partitions out, and 16 MiB of reference is some 140,000 sentences' rows
# (measured at 1M sentences, compare of two systems: client peak 355 MB with 16 MiB, 219 MB with 4 MiB).
ROWS_PARTITION = 4 << 20
# ... where the rows hold every statistic (a per-document file): 91 columns of 64 bits a row,
# some 24 MB for 4 MiB of reference where the narrow rows take 3.
FULL_ROWS_PARTITION = 1 << 20
TASKS_PER_WORKER = 4
_A = TypeVar("_A")
_R = TypeVar("_R")


def _chunk_end(part: Any) -> int:
    return int(part.ref_end)


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def _import_distributed() -> Any:
    """``distributed``, typed loosely: parts of its API are untyped and vary between releases."""
    try:
        return importlib.import_module("distributed")
    except ImportError as exc:
        raise MissingExtra.of(exc, "--engine dask", "dask") from None


def partitions(
    parts: Iterable[Any], total_bytes: int, n_parts: int, position: Callable[[Any], int] = _chunk_end
) -> Iterator[list[Any]]:
    """Cut parts, as they come, into at most ``n_parts`` runs of consecutive parts.

    A run ends with the first part whose ``position`` reaches the next equal share of
    ``total_bytes`` (the reference's size), so runs differ by at most about one part; every run
    holds a part.
    """
    share = total_bytes / max(n_parts, 1)
    k = 1  # the share the current run ends at
    run: list[Any] = []
    for part in parts:
        run.append(part)
        at = position(part)
        if k < n_parts and at >= k * share:
            yield run
            run = []
            while k < n_parts and at >= k * share:
                k += 1
    if run:
        yield run


def count_partition(counter: PartCounter, parts: Sequence[Any]) -> PartResult:
    """Runs on a worker: consecutive parts counted and folded."""
    return fold([counter(part) for part in parts], counter.wanted.examples, totals_of(counter.wanted))


def _plan_into(out: queue.Queue[Any], stop: threading.Event, parts: Iterator[Any]) -> None:
    """Runs in a thread of the client: every part of the plan, then the end mark (or the error)."""
    try:
        for part in parts:
            if stop.is_set():  # the client gave up (its cluster failed to start, say)
                return
            out.put(part)
        out.put(_END)
    except BaseException as exc:  # raised again in the client's thread
        out.put(_Failed(exc))


def _drain(planned: queue.Queue[Any]) -> Iterator[Any]:
    while True:
        item = planned.get()
        if item is _END:
            return
        if isinstance(item, _Failed):
            raise item.error
        yield item


def _submit(running: Any, future: Any) -> str:
    """``future`` handed to ``running`` (an ``as_completed``), which alone holds it; its key."""
    running.add(future)
    return str(future.key)


def _malloc_env() -> bool:
    """Runs on a worker: whether glibc's mmap threshold is frozen at its small default."""
    env = os.environ
    return "MALLOC_TRIM_THRESHOLD_" in env and not {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_"} & set(env)


def _slots(client: Any, fallback: int) -> int:
    """How many tasks the cluster runs at once."""
    threads = int(sum(client.nthreads().values()))
    return threads if threads > 0 else max(1, fallback)


@dataclass(frozen=True)
class DaskEngine:
    """Counts the parts of a source on a Dask cluster (an ``engines.Engine``).

    ``scheduler`` is the address of a running scheduler (``tcp://host:8786``); without it a local
    cluster of ``n_workers`` single-threaded processes starts and stops with each run.
    ``partition_bytes`` is the most reference bytes one task counts; ``rows_partition_bytes``
    the most where a task sends back a row per document rather than additive state, and
    ``full_rows_partition_bytes`` where that row holds every statistic (``--per-document``).
    """

    scheduler: str | None = None
    n_workers: int = 2
    partition_bytes: int = DEFAULT_PARTITION
    connect_timeout: float = 10.0  # seconds to wait for a scheduler given by address
    rows_partition_bytes: int = ROWS_PARTITION  # the most where tasks send back a row per document
    full_rows_partition_bytes: int = FULL_ROWS_PARTITION  # ... a row of every statistic

    @property
    def remote(self) -> bool:
        """Whether the workers run elsewhere (a scheduler given by address)."""
        return self.scheduler is not None

    def results(self, counter: PartCounter, progress: Callable[[int, int], None] | None) -> Iterator[PartResult]:
        # Every check that can fail runs before a cluster starts.
        self._check()
        if counter.wanted.rows_dir is not None and self.scheduler is not None:
            # Workers elsewhere cannot write beside the report: they send the rows back.
            counter = replace(counter, wanted=replace(counter.wanted, rows_dir=None))
        source = counter.source.for_workers(remote=self.remote)
        counter = replace(counter, source=source)
        size = self.partition_bytes
        if counter.wanted.documents and not counter.wanted.histogram:
            size = min(size, self.rows_partition_bytes)
            if not (counter.wanted.narrow or counter.wanted.scored_groups):
                size = min(size, self.full_rows_partition_bytes)
        yield from self.partitioned(
            count_partition, counter, counter.plan(), counter.position, source.size(), size, progress
        )

    def partitioned(
        self,
        task: Callable[[_A, list[Any]], _R],
        argument: _A,
        items: Iterator[Any],
        position: Callable[[Any], int],
        total_bytes: int,
        size: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Iterator[_R]:
        """``task(argument, group)`` run on the cluster for each group of consecutive ``items``
        (``partitions`` of at most about ``size`` bytes of the ``total_bytes``, by ``position``),
        its results handed back in the items' order. ``items`` are planned in a thread of this
        process while the cluster starts; ``task`` and ``argument`` travel to the workers."""
        self._check()
        with ExitStack() as stack:
            # Plan while distributed loads and the cluster starts, and hand out each partition as
            # soon as it is planned: planning large files takes seconds, and the workers count meanwhile.
            planned: queue.Queue[Any] = queue.Queue()
            stop = threading.Event()
            thread = threading.Thread(target=_plan_into, args=(planned, stop, items))
            thread.start()
            stack.callback(thread.join)
            stack.callback(stop.set)
            dist = _import_distributed()
            client = self._client(dist, stack)
            slots = _slots(client, self.n_workers)
            n_parts = max(slots * TASKS_PER_WORKER, math.ceil(total_bytes / (size or self.partition_bytes)))
            # At most ``window`` partitions are out (submitted, not yet handed back) at a time: a
            # partition's result waits on its worker until the client fetches it, and the client
            # (folding, or joining the systems of a comparison) may take longer than the workers,
            # so with every partition out at once the workers' memory grew with the corpus.
            window = slots * TASKS_PER_WORKER
            groups = partitions(_drain(planned), total_bytes, n_parts, position)
            order: collections.deque[str] = collections.deque()  # keys out, in plan order
            ends: dict[str, int] = {}
            running = dist.as_completed()

            def refill() -> None:
                while len(order) < window:
                    group = next(groups, None)
                    if group is None:
                        return
                    # No name is left holding the future: Dask keeps a result while one does.
                    key = _submit(running, client.submit(task, argument, group, pure=False))
                    order.append(key)
                    ends[key] = position(group[-1])

            refill()
            done: dict[str, _R | _Failed] = {}
            # Hand results back in plan order as soon as the next one in order is in; once fetched,
            # a partition is released, so Dask frees it on its worker. A partition's error is
            # raised in its turn, as the local engine raises the first bad part's: a later
            # partition may fail first (past the end of a shorter file, say).
            while order:
                future = next(running)
                try:
                    done[future.key] = future.result()
                except Exception as exc:
                    done[future.key] = _Failed(exc)
                future.release()
                del future
                while order and order[0] in done:
                    key = order.popleft()
                    if progress is not None:
                        progress(ends.pop(key), total_bytes)
                    else:
                        ends.pop(key)
                    got = done.pop(key)
                    if isinstance(got, _Failed):
                        raise got.error
                    yield got
                    refill()

    def _check(self) -> None:
        if self.n_workers < 1:
            raise OptionError(f"--workers must be at least 1, not {self.n_workers}")
        if min(self.partition_bytes, self.rows_partition_bytes, self.full_rows_partition_bytes) < 1:
            raise OptionError("the partition size must be positive")
        if importlib.util.find_spec("distributed") is None:
            raise MissingExtra("--engine dask", "dask")

    def _client(self, dist: Any, stack: ExitStack) -> Any:
        if self.scheduler is not None:
            try:
                client = stack.enter_context(dist.Client(self.scheduler, timeout=self.connect_timeout))
            except (OSError, TimeoutError, ValueError):
                raise OptionError(
                    f"cannot reach the Dask scheduler at {self.scheduler} (waited {self.connect_timeout:g} s):"
                    " start it (dask scheduler), or leave --scheduler out for a local cluster"
                ) from None
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
