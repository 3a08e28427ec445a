"""Several systems counted side by side against one reference, for paired tests.

Paired resampling needs each document's statistics of every system together, but the systems'
predictions are separate inputs, each planned into its own chunks. Their counts stream side by
side: the engine runs every system's counter, the system furthest behind (in documents) is
advanced, and the documents every system has finished are joined into the systems' joint rows
and added to a histogram (``stages.documents.Histogram``) straight away. So the per-document rows
held at any time are those of the chunks in flight, never the corpus's, and the histogram (sorted,
merged by adding counts) is the same whatever the chunks, the processes or the engine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from ..io.conll_plan import iter_chunks_beside
from ..io.load import ConllText
from ..io.sources import ConllSource
from ..stages.documents import DocCounts, Histogram, RowQueue, compact_rows
from ..stages.parts import Folder, PartResult
from ..stages.spans import IntArray
from .local import Engine, LocalEngine, Numbered, PartCounter

Columns = Callable[[tuple[str, ...]], list[int]]
_T = TypeVar("_T")
_C = TypeVar("_C", bound=PartCounter)


def shipped(h: Histogram, home: int) -> Histogram:
    """``h`` as a worker sends it back to the process ``home`` (as it is when counted there):
    its rows in bytes and its counts in 16 bits where they fit, as a chunk's documents' do. A
    worker's result waits in a pipe until that process reads it, between the parts it counts
    itself, so the worker stays busy only while its results fit the pipe
    (``runtime.workers``): at 512 KiB a part, the histograms of a per-type bucket comparison
    take 1.7 MB in 16-bit rows, 0.9 MB in bytes. ``landed`` gives back the histogram."""
    if os.getpid() == home or not h.rows.size:
        return h
    rows, counts = h.rows, h.counts
    if rows.dtype != np.uint8 and int(rows.min()) >= 0 and int(rows.max()) <= 255:
        rows = rows.astype(np.uint8)
    # The counts always change type, so that ``landed`` knows the histogram was sent.
    counts = counts.astype(np.uint16 if int(counts.max()) <= 65535 else np.uint64)
    return replace(h, rows=rows, counts=counts)


def landed(h: Histogram) -> Histogram:
    """A histogram as ``shipped`` sent it, as it was counted (``compact_rows``, 64-bit counts)."""
    if h.counts.dtype == np.int64:
        return h
    # Bytes were 16-bit rows (``compact_rows``'s narrowest) before they were sent.
    rows: Any = h.rows.astype(np.int16) if h.rows.dtype == np.uint8 else h.rows
    return replace(h, rows=rows, counts=h.counts.astype(np.int64))


MERGE_ROWS = 8192  # rows waiting beside the merged ones before a merge, at least (``JointRows``)
# ... and at most, once the merged rows are many: at a million sentences the blocks of the
# corpus's and the largest bucket's joint rows waited for up to 10 MB of rows (in bytes) each,
# and each merge joined them in one array beside the merged rows (docs/benchmarks.md).
MERGE_MOST = 32768


def _narrowest(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Rows of counts in the narrowest unsigned integers that hold them (others as they are)."""
    if rows.dtype == np.uint8 or not rows.size or not np.issubdtype(rows.dtype, np.integer):
        return rows  # bytes already (a worker's block, ``shipped``), or no counts
    if rows.dtype.kind != "u" and int(rows.min()) < 0:
        return rows
    top = int(rows.max())
    kind = next(k for k in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(k).max)
    return rows.astype(kind, copy=False)


@dataclass
class JointRows:
    """The systems' joint histogram as its blocks come (``Histogram``s of whole documents),
    merged as they pile up: what ``Histogram.pile`` does, with the rows held in bytes where the
    counts fit (a document's counts are small, and the joint rows are wide: every system's
    columns), so the merged rows and each merge's copies take half the 16-bit rows' memory.
    ``histogram`` gives the histogram that merging the blocks as ``Histogram``s gives: the same
    rows in the same (lexicographic) order, as ``compact_rows`` keeps them, and the same counts."""

    fields: tuple[str, ...] | None = None
    rows: npt.NDArray[Any] | None = None  # merged, distinct, sorted
    counts: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    waiting: list[tuple[npt.NDArray[Any], IntArray]] = field(default_factory=list)  # counts narrow too
    waiting_rows: int = 0
    # Blocks wait until they hold more rows than ``least`` (``MERGE_ROWS`` where 0) and than
    # ``share`` of the merged rows: a small histogram (one group's) merges as ``Histogram.pile``
    # does, a large one a bounded number of rows at a time.
    least: int = 0
    share: float = 0.5
    # ... but no more than ``most`` rows (0: no bound): the last merges of a large histogram
    # would otherwise wait for half its rows, and copy them all at once beside the merged ones.
    most: int = MERGE_MOST

    def add(self, block: Histogram) -> None:
        if self.fields is None:
            self.fields = block.fields
        elif block.fields != self.fields:
            raise ValueError("histograms of different statistics do not merge")
        for h in (block, *block.pending):
            if h.rows.shape[0]:
                self.waiting.append((_narrowest(h.rows), _narrowest(h.counts)))
                self.waiting_rows += h.rows.shape[0]
        merged = 0 if self.rows is None else self.rows.shape[0]
        bound = int(merged * self.share)
        if self.most:
            bound = min(bound, self.most)
        if self.waiting_rows > max(self.least or MERGE_ROWS, bound):
            self._merge()

    def _merge(self) -> None:
        if not self.waiting:
            return
        pieces, self.waiting, self.waiting_rows = self.waiting, [], 0
        held = [] if self.rows is None else [self.rows]
        if not all(r.dtype.kind == "u" for r in (*held, *(r for r, _ in pieces))):
            # A negative count (never in a document's counts, but rows are rows): the
            # histograms merged as ``Histogram.of`` merges rows.
            rows = np.concatenate([*held, *(r for r, _ in pieces)])
            weights = np.concatenate([self.counts, *(c for _, c in pieces)], dtype=np.int64)
            del pieces
            self.rows = None
            h = Histogram.of(rows, self.fields or (), weights)
            self.rows, self.counts = h.rows, h.counts
            return
        kind = np.result_type(*held, *(r for r, _ in pieces))
        # The blocks waiting merged on their own first (each block's rows come sorted, so the
        # stable sort merges runs), then into the merged rows by their places in the merged
        # order (``_merged``): the merged rows are read where they lie and never sorted again.
        if len(pieces) == 1:
            rows, weights = pieces[0][0].astype(kind, copy=False), pieces[0][1].astype(np.int64)
        else:
            rows = np.concatenate([r for r, _ in pieces], dtype=kind)
            weights = np.concatenate([c for _, c in pieces], dtype=np.int64)
        del pieces
        rows, counts = _distinct(rows, weights)
        if self.rows is None:
            self.rows, self.counts = rows, counts
            return
        self.rows, self.counts = _merged(self.rows.astype(kind, copy=False), self.counts, rows, counts)

    def histogram(self, *, in_bytes: bool = False) -> Histogram | None:
        """Every block merged, as a ``Histogram`` (None where no block came). With ``in_bytes``,
        rows held in bytes are handed over as they are: the histogram that narrowing the 16-bit
        one to bytes gives (``analysis.buckets.in_bytes``), with no 16-bit copy made between."""
        self._merge()
        if self.rows is None or self.fields is None:
            return None
        rows, self.rows = self.rows, None
        if in_bytes and rows.dtype == np.uint8 and rows.size:
            return Histogram(np.ascontiguousarray(rows), self.counts, self.fields)
        # In the type ``compact_rows`` gives them, widened where they lie (not copied beside the
        # narrow rows: 1.5 times the histogram's bytes at once).
        rows = _widened(rows) if rows.dtype.kind == "u" else compact_rows(rows)
        if rows.dtype.kind == "u":  # past 32 bits: 64-bit, as ``Histogram.of`` leaves them
            rows = rows.astype(np.int64)
        return Histogram(np.ascontiguousarray(rows), self.counts, self.fields)


_FILL_ROWS = 8192  # rows widened (``_widened``) or compared (``_merged``) at a time


def _widened(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Rows of counts in unsigned integers (owned by nobody else) as ``compact_rows`` gives them
    (16 or 32-bit signed where they fit), in their own buffer where they can be: the buffer is
    grown (``ndarray.resize``: a ``realloc``, which moves no pages of a large block) and each
    row block widened from the last, so a block's wide numbers land at or past its narrow ones
    and never on narrow numbers not read yet."""
    if not rows.size:
        return rows  # as ``compact_rows`` leaves them
    top = int(rows.max())
    kind = next((np.dtype(k) for k in (np.int16, np.int32) if top <= np.iinfo(k).max), None)
    if kind is None:
        return rows
    if kind.itemsize == rows.dtype.itemsize:  # the same bits: every number is below the sign bit
        return rows.view(kind)
    if kind.itemsize < rows.dtype.itemsize or not (rows.flags.owndata and rows.flags.c_contiguous):
        return rows.astype(kind)
    n, width = rows.shape
    factor = kind.itemsize // rows.dtype.itemsize
    cells = n * width
    rows.resize((n * factor, width), refcheck=False)  # nothing else holds these rows
    flat = rows.reshape(-1)
    narrow, wide = flat[:cells], flat.view(kind)[:cells]
    step = _FILL_ROWS * max(width, 1)
    for end in range(cells, 0, -step):
        start = max(0, end - step)
        wide[start:end] = narrow[start:end].copy()
    return wide.reshape(n, width)


def _keys(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Rows of unsigned counts as one byte string each (the numbers big-endian), so that the
    strings order as the rows do (lexicographically, column by column): numpy compares such
    strings as bytes (``memcmp``), one call a pair, where sorting by columns or by packed words
    reads every column apart. A view of one-byte rows; a copy of wider ones."""
    if rows.dtype.itemsize > 1:
        rows = rows.astype(rows.dtype.newbyteorder(">"))
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, max(rows.shape[1], 1) * rows.dtype.itemsize))).reshape(-1)


def _distinct(rows: npt.NDArray[Any], weights: IntArray) -> tuple[npt.NDArray[Any], IntArray]:
    """The distinct rows of ``rows`` (unsigned counts) in lexicographic order, and the weights
    each holds. Rows that come as runs of sorted rows (blocks of a histogram each) sort in
    time linear in the rows for each run's merge (the stable sort is a merge of runs)."""
    if not rows.shape[1]:  # rows of nothing: one row, every weight its own
        return rows[:1], np.asarray([weights.sum()], dtype=np.int64)
    keys = _keys(rows)
    order = np.argsort(keys, kind="stable")
    # Equal rows found a block of the order at a time (their strings compared), so that only the
    # distinct rows are copied out, never every row in sorted order.
    n = order.shape[0]
    change = np.ones(n, dtype=bool)
    for a in range(1, n, _FILL_ROWS):
        these = keys[order[a - 1 : a + _FILL_ROWS]]
        change[a : a + these.shape[0] - 1] = these[1:] != these[:-1]
    del keys
    starts = np.flatnonzero(change)
    del change
    counts: IntArray = np.add.reduceat(weights[order], starts) if starts.size else weights[:0]
    return rows[order[starts]], counts


def _merged(
    rows: npt.NDArray[Any], counts: IntArray, more: npt.NDArray[Any], more_counts: IntArray
) -> tuple[npt.NDArray[Any], IntArray]:
    """Two histograms' rows (distinct, in lexicographic order, unsigned counts of one type)
    merged: the distinct rows of both in lexicographic order, and their counts added. Each row
    of ``more`` is looked up among ``rows`` by a binary search of its bytes; the merged rows are
    written into one new array, a row of ``rows`` where it lies, so the merge holds the two
    inputs and its result, and reads each merged row once."""
    n = rows.shape[0]
    if not n or not more.shape[0]:
        return (more, more_counts) if not n else (rows, counts)
    if not rows.shape[1]:
        return rows, counts + more_counts.sum()
    keys, more_keys = _keys(rows), _keys(more)
    at = np.searchsorted(keys, more_keys)
    same = np.zeros(more.shape[0], dtype=bool)
    for a in range(0, more.shape[0], _FILL_ROWS):  # compared a block at a time: small temporaries
        these = at[a : a + _FILL_ROWS]
        inside = np.flatnonzero(these < n)
        same[a + inside] = keys[these[inside]] == more_keys[a + inside]
    del keys, more_keys
    added = counts.copy()
    added[at[same]] += more_counts[same]  # the places are distinct: ``more``'s rows are
    new = np.flatnonzero(~same)
    del same
    # A new row goes before the merged row at its place, after the new rows before it.
    places = at[new] + np.arange(new.shape[0])
    del at
    total = n + new.shape[0]
    fresh = np.zeros(total, dtype=bool)
    fresh[places] = True
    out = np.empty((total, rows.shape[1]), dtype=rows.dtype)
    out[places] = more[new]
    old = np.flatnonzero(~fresh)
    del fresh
    out[old] = rows
    merged_counts = np.empty(total, dtype=np.int64)
    merged_counts[places] = more_counts[new]
    merged_counts[old] = added
    return out, merged_counts


@dataclass
class _Stream:
    """One system's results as they come, and its rows not yet joined (global keys, in order)."""

    results: Iterator[PartResult]
    folder: Folder
    columns: Columns
    rows: RowQueue = field(default_factory=RowQueue)
    fields: tuple[str, ...] | None = None
    unit: str | None = None
    offset: int = 0  # where the next part's document keys start
    done: bool = False

    @property
    def bound(self) -> int:
        """Every document key below this one is complete."""
        return self.rows.bound

    def pull(self) -> None:
        self.add(next(self.results, None))

    def add(self, part: PartResult | None) -> None:
        """The next part's result (None: there is none)."""
        if part is None:
            self.done = True
            self.rows.close()
            return
        docs, offset = part.docs, self.offset
        self.offset += part.doc_advance
        self.folder.add(replace(part, docs=None))
        if docs is None or not docs.keys.shape[0]:
            return
        cols = self.columns(docs.fields)
        if self.fields is None:
            self.fields, self.unit = tuple(docs.fields[i] for i in cols), docs.unit
        # Widened: the rows may come compact (``Wanted.narrow``), and a cut document's halves add up.
        # Narrowed rows hold only the columns asked for: taken as they are, not copied twice.
        every = cols == list(range(docs.stats.shape[1]))
        stats = docs.stats if every else np.take(docs.stats, cols, axis=1)
        self.rows.append(docs.keys + offset, stats.astype(np.int64), docs.ids)

    def take(self, below: int) -> tuple[IntArray, IntArray | None, list[str] | None]:
        """The complete rows with keys below ``below``, removed from the stream."""
        return self.rows.take(below)


@dataclass(frozen=True)
class _SideBySide:
    """Every system's part of one reference chunk counted in one call, the reference read once
    (``ConllSource.read_reference``): the systems' CoNLL sources cut the reference at the same
    places (the plan follows the reference alone), so each system's parts are the ones it would
    count alone, and so are its counts."""

    counters: tuple[PartCounter, ...]

    def plan(self) -> Iterator[tuple[Numbered, ...]]:
        # Every system's parts as its source cuts them (``ConllSource.parts``), the reference
        # scanned once for all of them; numbered as the first system's plan numbers them.
        first = self.counters[0]
        sources = [cast(ConllSource, c.source) for c in self.counters]
        unit = 0
        for parts in iter_chunks_beside(sources[0].reference, [s.predicted for s in sources], sources[0].chunk_bytes):
            if first.wanted.rows:
                n = first.source.units(parts[0])
                item = Numbered(parts[0], unit, n)
                unit += n
            else:
                item = Numbered(parts[0], unit)
            yield (item, *(replace(item, part=part) for part in parts[1:]))

    def __call__(self, items: tuple[Numbered, ...]) -> tuple[PartResult, ...]:
        # Every source is a ConllSource (``side_by_side``).
        reference = cast(ConllSource, self.counters[0].source).read_reference(items[0].part)
        loaded = [
            cast(ConllSource, c.source).load(item.part, reference)
            for c, item in zip(self.counters, items, strict=True)
        ]
        # One text for every system: it is the reference's, and what is found from it once (its
        # words for examples, the bucket attributes' word hashes) serves them all.
        text = loaded[0].text
        if isinstance(text, ConllText):
            loaded = [
                replace(d, text=text)
                if isinstance(d.text, ConllText) and d.text.table is text.table and d.text.bounds is text.bounds
                else d
                for d in loaded
            ]
        results = tuple(c.count(item, d) for c, item, d in zip(self.counters, items, loaded, strict=True))
        for result in results:
            if result.docs is not None:
                # Counted as the scored columns only (``Wanted.scored_groups``), in int64: sent
                # back compact, as ``Wanted.narrow`` rows are.
                result.docs.stats = compact_rows(result.docs.stats)
        return results


@dataclass(frozen=True)
class _Joined:
    """``_SideBySide``, with the documents that lie whole in the chunk (all but its first and
    last, which a chunk boundary may cut) joined into the systems' joint histogram where the
    chunk is counted: the workers sort those rows, and the evaluating process only merges
    histograms and joins the cut documents' rows (the same histogram: it is sorted and merged
    by adding counts, whatever the blocks)."""

    together: _SideBySide
    columns: Columns
    home: int = field(default_factory=os.getpid)  # the evaluating process (``shipped``)

    def plan(self) -> Iterator[tuple[Numbered, ...]]:
        return self.together.plan()

    def __call__(self, items: tuple[Numbered, ...]) -> tuple[tuple[PartResult, ...], Histogram | None]:
        results = self.together(items)
        docs = [r.docs for r in results]
        first = docs[0]
        if first is None or first.keys.shape[0] <= 2:
            return results, None
        taken, fields = [], []
        for k, d in enumerate(docs):
            if d is None or d.type_rows is not None or not np.array_equal(d.keys, first.keys):
                return results, None  # the evaluating process says what is wrong
            cols = self.columns(d.fields)
            stats = d.stats if cols == list(range(d.stats.shape[1])) else np.take(d.stats, cols, axis=1)
            taken.append(stats[1:-1])
            fields += [f"{k}:{d.fields[i]}" for i in cols]
        inner = shipped(Histogram.of(np.hstack(taken), tuple(fields)), self.home)
        for r, d in zip(results, docs, strict=True):
            assert d is not None
            ends = np.array([0, d.keys.shape[0] - 1])
            ids = None if d.ids is None else [d.ids[0], d.ids[-1]]
            r.docs = DocCounts(d.keys[ends], d.stats[ends], d.fields, ids, d.unit)
        return results, inner


def joined_partition(
    joined: _Joined, items: Sequence[tuple[Numbered, ...]]
) -> list[tuple[tuple[PartResult, ...], Histogram | None]]:
    """Runs on a Dask worker: ``joined`` over consecutive parts, their whole documents' joint
    histograms merged into one, sent back with the last part (the client only adds them up)."""
    out: list[tuple[tuple[PartResult, ...], Histogram | None]] = []
    inner: Histogram | None = None
    for item in items:
        results, h = joined(item)
        if h is not None:
            h = landed(h)
            inner = h if inner is None else inner.pile(h)
        out.append((results, None))
    if inner is not None and out:
        out[-1] = (out[-1][0], shipped(inner.compacted(), joined.home))
    return out


def _dask(engine: Engine) -> Any:
    """``engine`` where it is the Dask engine (its module is loaded then), else None."""
    module = sys.modules.get("spanscore.engines.dask_engine")
    return engine if module is not None and isinstance(engine, module.DaskEngine) else None


def each(function: Callable[[Any], _T], items: Sequence[Any]) -> list[_T]:
    """Runs on a Dask worker: ``function`` over consecutive parts."""
    return [function(item) for item in items]


def counted_together(counters: Sequence[_C], engine: Engine) -> tuple[list[_C], _SideBySide | None]:
    """The counters as ``engine`` runs them (Dask's workers read their byte ranges by path), and
    as one (``_SideBySide``) where ``engine`` counts here or on Dask and every system is a CoNLL
    file of the same reference, read alike; else None."""
    dask = _dask(engine)
    if dask is None:
        return list(counters), side_by_side(counters, engine)
    counters = [replace(c, source=c.source.for_workers(remote=dask.remote)) for c in counters]
    return counters, _alike(counters)


def map_together(
    engine: Engine,
    function: Any,
    first: PartCounter,
    task: Callable[[Any, Sequence[Any]], list[_T]] = each,
) -> Iterator[_T]:
    """``function`` (a side-by-side counter with a ``plan``) over its plan, in order: by the local
    engine's processes, or by Dask's tasks (``task(function, parts)``, a partition of parts each,
    by ``first``'s positions in the reference)."""
    dask = _dask(engine)
    if dask is None:
        return cast(LocalEngine, engine).map(function, function.plan())
    # ``each`` sends back every part's result (each part's groups' histograms): a partition of
    # them is held here whole, so partitions are kept to the size of those that send rows.
    size = dask.rows_partition_bytes if task is each else None
    groups: Iterator[list[_T]] = dask.partitioned(
        task, function, function.plan(), lambda items: first.position(items[0]), first.source.size(), size
    )
    return (got for group in groups for got in group)


def side_by_side(counters: Sequence[PartCounter], engine: Engine) -> _SideBySide | None:
    """The counters as one, where the engine counts here and every system is a CoNLL file of the
    same reference, read alike."""
    if not isinstance(engine, LocalEngine):
        return None
    return _alike(counters)


def _alike(counters: Sequence[PartCounter]) -> _SideBySide | None:
    """The counters as one, where every system is a CoNLL file of the same reference, read alike."""
    if len(counters) < 2:
        return None
    first = counters[0].source
    if not isinstance(first, ConllSource) or first.predicted is None:
        return None
    for c in counters:
        s = c.source
        if not (
            isinstance(s, ConllSource)
            and s.predicted is not None
            and (s.reference, s.reading, s.selection, s.chunk_bytes)
            == (first.reference, first.reading, first.selection, first.chunk_bytes)
        ):
            return None
    return _SideBySide(tuple(counters))


@dataclass
class Paired:
    """Each system's folded total, and the systems' joint rows as one histogram (system ``s``'s
    fields prefixed ``s:``, rows in bytes where every count fits; None where no part had
    per-document rows)."""

    totals: list[PartResult]
    joint: Histogram | None
    unit: str


def run_paired(
    counters: Sequence[PartCounter],
    engine: Engine,
    names: Sequence[str],
    columns: Columns,
) -> Paired:
    """Every system's counter run by ``engine`` side by side (each asks for per-document rows);
    only the columns that ``columns`` picks of the rows enter the joint histogram, and no total
    keeps its rows."""
    # Each worker sends back only the columns scores read, in compact integers.
    counters = [replace(c, wanted=replace(c.wanted, narrow=True)) for c in counters]
    # CoNLL systems of one reference: each chunk's reference read once for all of them.
    counters, together = counted_together(counters, engine)
    if together is not None:
        # Per document, only the columns scores read are counted (no error taxonomy, no scaled
        # credit unless the credit reads it): what the joint histogram keeps.
        together = _SideBySide(tuple(replace(c, wanted=replace(c.wanted, scored_groups=True)) for c in counters))
    streams = [
        _Stream(
            iter(()) if together is not None else engine.results(c, None), Folder(examples=c.wanted.examples), columns
        )
        for c in counters
    ]
    joint = JointRows()
    add = joint.add

    def flush(below: int) -> None:
        taken = [s.take(below) for s in streams]
        first_keys, _, first_ids = taken[0]
        for name, (keys, _, ids) in zip(names[1:], taken[1:], strict=True):
            if not np.array_equal(keys, first_keys) or (ids is not None and first_ids is not None and ids != first_ids):
                raise OptionError(
                    f"{name} does not have the documents of {names[0]}: systems are compared document by"
                    " document against one reference"
                )
        if not first_keys.shape[0] or any(stats is None for _, stats, _ in taken):
            return
        fields = tuple(f"{k}:{f}" for k, s in enumerate(streams) for f in s.fields or ())
        add(Histogram.of(np.hstack([stats for _, stats, _ in taken if stats is not None]), fields))

    if together is not None:
        joined = _Joined(together, columns)
        # On Dask, one cluster counts every system side by side, as the local engine's workers
        # do: a task sends back its partition's joint histogram and each part's two end
        # documents, never a row per document (each system on its own sent every row here).
        mapped = map_together(engine, joined, counters[0], joined_partition)
        for results, inner in mapped:
            for s, part in zip(streams, results, strict=True):
                s.add(part)
            if inner is not None:
                add(inner)  # as it came: ``JointRows`` keeps rows in bytes where they fit
            flush(min(s.bound for s in streams))
        for s in streams:
            s.add(None)
    while not all(s.done for s in streams):
        min(streams, key=lambda s: (s.done, s.bound)).pull()
        flush(min(s.bound for s in streams))
    flush(np.iinfo(np.int64).max)
    totals = [s.folder.total() for s in streams]
    unit = next((s.unit for s in streams if s.unit is not None), "document")
    # In bytes where every count fits, as the bucket comparison hands its histograms on: its
    # readers (the paired tests, each system's per-document state) make 16-bit histograms of its
    # columns, the same numbers, and the 16-bit rows are never made beside the bytes.
    return Paired(totals, joint.histogram(in_bytes=True), unit)


__all__ = [
    "JointRows", "Paired", "counted_together", "each", "landed", "map_together", "run_paired", "shipped",
    "side_by_side",
]
