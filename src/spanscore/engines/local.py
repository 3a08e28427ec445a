"""The local engine, and what every engine shares: the counter of one part and the fold.

``PartCounter`` reads and counts a part (``stages.parts.count_part``); an engine maps it over
the plan and hands the results back in plan order, and ``run`` folds them. ``LocalEngine``
counts in this process or in forked worker processes.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import field, replace
from typing import Any, Protocol, TypeVar

import numpy as np

from ..errors import OptionError
from ..runtime.memory import start_worker
from ..runtime.records import record
from ..runtime.workers import can_fork, forked_map
from ..stages.counts import Options
from ..stages.documents import DocState, TypeRows, compact_rows, scored_columns
from ..stages.parts import (
    ChunkData,
    ExampleQuota,
    Folder,
    JudgeSpec,
    PartResult,
    RowSink,
    Source,
    Wanted,
    count_part,
    totals_of,
)

Progress = Callable[[int, int], None]
_R = TypeVar("_R")
ENGINES: tuple[str, ...] = ("local", "dask")


@record
class PartCounter:
    """Reads and counts one part of ``source``: what every engine runs, here or on a worker."""

    source: Source
    options: Options
    wanted: Wanted
    judge: JudgeSpec | None = None
    quota: ExampleQuota = field(default_factory=ExampleQuota, compare=False, repr=False)

    def plan(self) -> Iterator[Numbered]:
        """The source's parts, each with the number of its first unit (counted only when report
        rows need them: a CoNLL part's sentences are found by reading its reference bytes)."""
        first = 0
        for part in self.source.parts():
            if not self.wanted.rows:
                yield Numbered(part, first)
                continue
            n = self.source.units(part)
            yield Numbered(part, first, n)
            first += n

    def position(self, item: Numbered) -> int:
        return self.source.position(item.part)

    def __call__(self, item: Numbered) -> PartResult:
        return self.count(item, self.source.load(item.part))

    def count(self, item: Numbered, data: ChunkData) -> PartResult:
        """``item``'s part, read as ``data``, counted."""
        if item.units is not None and item.units != data.units:
            raise RuntimeError(f"spanscore bug: a part was planned with {item.units} units but holds {data.units}")
        at = self.source.position(item.part)
        result = count_part(data, self.options, self.quota.wanted(self.wanted, at), self.judge, item.first_unit)
        self.quota.note(result, self.wanted.examples, at)
        return result


@record
class Numbered:
    """A part of the plan and the number of its first unit in the corpus."""

    part: Any
    first_unit: int
    units: int | None = None  # as the plan counted them (report rows only)


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


@record
class LocalEngine:
    """Counts in this process, or in ``jobs`` forked worker processes (where the platform forks).

    Results come back in plan order, so the first bad part's error is the one raised, as in one
    process. Forked, not spawned: a spawned worker would spend longer importing numpy than
    counting a chunk. This process is one of the ``jobs``: it counts parts beside ``jobs - 1``
    workers rather than wait for them. ``jobs`` is the most it uses: a plan of few parts is
    counted by fewer processes (``PARTS_PER_PROCESS`` parts each at least), or here alone.
    """

    jobs: int = 1

    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        if not isinstance(self.jobs, int) or self.jobs < 1:
            raise OptionError(f"jobs must be a positive number of processes, not {self.jobs!r}")
        ends: list[int] = []  # where each part handed out ends (parts themselves are not kept)

        def tracked() -> Iterator[Numbered]:
            for item in counter.plan():
                if progress is not None:
                    ends.append(counter.position(item))
                yield item

        total = counter.source.size() if progress is not None else 0
        read = _read_here(counter) if self.jobs == 1 else None
        if read is not None:
            first = 0
            for part, data in read:
                n = data.units if counter.wanted.rows else None
                item = Numbered(part, first, n)
                first += n or 0
                result = counter.count(item, data)
                del data  # not held while the next part is read
                if progress is not None:
                    progress(counter.position(item), total)
                yield result
            return
        for k, result in enumerate(self._map(counter, tracked())):
            if progress is not None:
                progress(ends[k], total)
            yield result

    def map(self, function: Callable[[Any], _R], items: Iterable[Any]) -> Iterator[_R]:
        """``function`` over ``items`` as parts are counted (here or in the workers), in order."""
        if not isinstance(self.jobs, int) or self.jobs < 1:
            raise OptionError(f"jobs must be a positive number of processes, not {self.jobs!r}")
        return self._map(function, items)

    def _map(self, counter: Callable[[Any], _R], parts: Iterable[Any]) -> Iterator[_R]:
        it = iter(parts)
        head = list(itertools.islice(it, PARTS_PER_PROCESS * self.jobs))
        processes = processes_for(len(head), self.jobs)
        if processes <= 1 or not can_fork():
            yield from map(counter, itertools.chain(head, it))
            return
        yield from forked_map(counter, itertools.chain(head, it), processes, start=start_worker, here=True)


def _read_here(counter: PartCounter) -> Iterator[tuple[Any, ChunkData]] | None:
    """Each part with its data where the source cuts and reads them in one pass (``read_parts``:
    CoNLL files) and ``counter`` counts a part as ``PartCounter`` does; else None."""
    if type(counter).__call__ is not PartCounter.__call__:
        return None
    parts: Iterator[tuple[Any, ChunkData]] | None = getattr(counter.source, "read_parts", lambda: None)()
    return parts


# A worker pays for itself only over several parts: forking it and its first part (which faults in
# the memory a part is counted in) cost about 25 ms of CPU on top of the part, against 13 ms for a
# later 512 KiB part pair, and a worker saves at best the time of the parts it takes from this
# process. With 4 parts a process, a 2 MB pair (4 parts) is counted here, 8 parts by two processes.
PARTS_PER_PROCESS = 4


def processes_for(parts: int, jobs: int) -> int:
    """The processes (this one among them) that count ``parts`` parts with at most ``jobs``."""
    return max(1, min(jobs, parts // PARTS_PER_PROCESS))


@record
class SinkEngine:
    """``inner``'s results with each part's per-document rows handed to ``sink``
    (``presentation.documents.DocumentWriter``) as they come, in corpus order, then kept only
    as additive state (``DocState``, of the columns scores read): what the macro average over
    documents and the intervals read, so the rows held are those of the parts in flight."""

    inner: Engine
    sink: Any

    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        scaled = counter.options.credit in ("dice", "iou")
        offset = 0  # the first key of each part in the corpus, as the fold numbers documents
        for part in self.inner.results(counter, progress):
            docs = part.docs
            if docs is not None:
                self.sink.add(docs, offset, part.discontinuous)
                narrow = docs.narrowed(scored_columns(docs.fields, scaled=scaled))
                narrow.stats = compact_rows(narrow.stats)
                part = replace(part, docs=None, state=DocState.of(narrow), buckets=_bucket_totals(part.buckets))
            offset += part.doc_advance
            yield part


def _bucket_totals(buckets: dict[str, TypeRows]) -> dict[str, TypeRows]:
    """Each attribute's rows per document and bucket summed into each bucket's totals (what a
    count without documents gives), so that no row per document is folded."""
    out = {}
    for name, rows in buckets.items():
        n = len(rows.names)
        table = np.zeros((n, rows.stats.shape[1]), dtype=np.int64)
        np.add.at(table, rows.type_index, rows.stats)
        out[name] = TypeRows(np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64), rows.names, table)
    return out


def run(
    counter: PartCounter,
    engine: Engine | None = None,
    *,
    sink: RowSink | None = None,
    progress: Progress | None = None,
) -> PartResult:
    """Every part counted by ``engine`` (this process by default) and folded in plan order;
    rendered rows go to ``sink`` as soon as their turn comes."""
    folder = Folder(sink=sink, examples=counter.wanted.examples, totals=totals_of(counter.wanted))
    for result in (engine or LocalEngine()).results(counter, progress):
        folder.add(result)
    return folder.total()


__all__ = [
    "ENGINES", "Engine", "LocalEngine", "Numbered", "PartCounter", "Progress", "SinkEngine", "default_jobs", "run",
]
