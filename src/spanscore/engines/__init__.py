"""Engines: one path from a source to counts, whatever runs the chunks.

A source (``engines.sources``) plans parts and reads one part into spans; ``PartCounter`` reads
and counts a part (``engines.parts.count_part``); an engine maps it over the plan and hands the
results back in plan order, and ``run`` folds them. ``LocalEngine`` counts in this process or in
forked worker processes; ``engines.dask_engine.DaskEngine`` on a Dask cluster (the optional extra
``dask``, imported only when that engine runs). ``make_engine`` is the one place an engine is
chosen by name.
"""

from __future__ import annotations

import importlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ..counts import Options
from ..errors import OptionError
from ..memory import keep_freed_memory
from ..workers import can_fork, forked_map
from .parts import Folder, JudgeSpec, PartResult, RowSink, Source, Wanted, count_part

Progress = Callable[[int, int], None]
ENGINES: tuple[str, ...] = ("local", "dask")


@dataclass(frozen=True)
class PartCounter:
    """Reads and counts one part of ``source``: what every engine runs, here or on a worker."""

    source: Source
    options: Options
    wanted: Wanted
    judge: JudgeSpec | None = None

    def __call__(self, part: Any) -> PartResult:
        return count_part(self.source.load(part), self.options, self.wanted, self.judge)


class Engine(Protocol):
    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        """``counter`` over every part of ``counter.source``, results in plan order."""
        ...


def default_jobs() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class LocalEngine:
    """Counts in this process, or in ``jobs`` forked worker processes (where the platform forks).

    Results come back in plan order, so the first bad part's error is the one raised, as in one
    process. Forked, not spawned: a spawned worker would spend longer importing numpy than
    counting a chunk.
    """

    jobs: int = 1

    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        if not isinstance(self.jobs, int) or self.jobs < 1:
            raise OptionError(f"jobs must be a positive number of processes, not {self.jobs!r}")
        source = counter.source
        handed_out: list[Any] = []

        def tracked() -> Iterator[Any]:
            for part in source.parts():
                handed_out.append(part)
                yield part

        total = source.size() if progress is not None else 0
        for k, result in enumerate(self._map(counter, tracked())):
            if progress is not None:
                progress(source.position(handed_out[k]), total)
            yield result

    def _map(self, counter: PartCounter, parts: Iterable[Any]) -> Iterator[PartResult]:
        it = iter(parts)
        head = list(itertools.islice(it, 2))
        if self.jobs <= 1 or len(head) < 2 or not can_fork():
            yield from map(counter, itertools.chain(head, it))
            return
        yield from forked_map(counter, itertools.chain(head, it), self.jobs, start=keep_freed_memory)


def make_engine(name: str = "local", *, jobs: int = 1, scheduler: str | None = None, workers: int = 2) -> Engine:
    """An engine by name: ``local`` (``jobs`` processes) or ``dask`` (``scheduler``, or a local
    cluster of ``workers`` processes)."""
    if name == "local":
        return LocalEngine(jobs)
    if name == "dask":
        module = importlib.import_module("spanscore.engines.dask_engine")
        engine: Engine = module.DaskEngine(scheduler=scheduler, n_workers=workers)
        return engine
    raise OptionError(f"unknown engine {name!r}: use one of {', '.join(ENGINES)}")


def run(
    counter: PartCounter,
    engine: Engine | None = None,
    *,
    sink: RowSink | None = None,
    progress: Progress | None = None,
) -> PartResult:
    """Every part counted by ``engine`` (this process by default) and folded in plan order;
    rendered rows go to ``sink`` as soon as their turn comes."""
    folder = Folder(sink=sink, examples=counter.wanted.examples)
    for result in (engine or LocalEngine()).results(counter, progress):
        folder.add(result)
    return folder.total()


__all__ = ["ENGINES", "Engine", "LocalEngine", "PartCounter", "default_jobs", "make_engine", "run"]
