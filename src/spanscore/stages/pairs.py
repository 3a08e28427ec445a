"""Matched pairs and errors as rows: CSV text made where a chunk is counted, and examples.

A chunk's rows are rendered where the chunk is counted (a worker process, a Dask worker): the
plan numbers each part's first sentence (or document) beforehand, so the rows are complete CSV
text. A worker process of ``runtime.workers.forked_map`` holds them until the process writing the
report tells it where they go (once the earlier chunks' sizes are known), then writes them there
itself, once; another process (a Dask worker beside it) writes them to a scratch file beside the
report (``rows_dir``), which the report writer copies; the process writing the report, or a
worker without a ``rows_dir``, returns them as bytes. Each file's rows go in corpus order.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import os
import re
import struct
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from .counts import Details
from .criteria import ERROR_CODE, ERROR_OF_KIND, TAXONOMY
from .matching import FULL, NO_CREDIT, PARTIAL, Matching, Pairs
from .spans import IntArray, Spans
from .text import Text, mention_text, mention_texts

SIDE_FIELDS = ("text", "type", "start", "end")
PAIR_TAIL = ("match", "credit", "relation", "context")
ERROR_TAIL = ("relation", "shared_boundary", "context")
LEVEL_FIELDS = ("reference_level", "predicted_level")  # last, where the input has nesting levels
RELATIONS = ("same", "longer", "shorter", "shifted")
LEVEL_NAMES = {FULL: "full", PARTIAL: "partial", NO_CREDIT: "none"}
ERRORS_FILE = "errors.csv"
TYPE5_FILE = "right_label_overlap.csv"
_SIDES = tuple(f"{side}_{f}" for side in ("reference", "predicted") for f in SIDE_FIELDS)


def pair_fields(unit_kind: str, levels: bool = False) -> list[str]:
    """Columns of a criterion's pair file: the keys of ``Report.pair_rows`` (then each side's
    nesting level, where the input has levels)."""
    return [unit_kind, *_SIDES, *PAIR_TAIL, *(LEVEL_FIELDS if levels else ())]


def error_fields(unit_kind: str, levels: bool = False) -> list[str]:
    return ["error", "code", unit_kind, *_SIDES, *ERROR_TAIL, *(LEVEL_FIELDS if levels else ())]


def _side(spans: Spans, text: Text, i: int) -> tuple[str, str, int, int]:
    start, end, unit = int(spans.start[i]), int(spans.end[i]), int(spans.unit[i])
    mention = mention_text(text, spans, i)
    return (mention, spans.types[int(spans.type[i])], text.local(unit, start), text.local(unit, end))


def pair_values(details: Details, text: Text, criterion: str, *, scheme: bool = False) -> Iterator[tuple[Any, ...]]:
    """Every matched pair of a criterion (or SemEval scheme) in position order, as the values of
    ``pair_fields`` with the chunk-local unit first (and each side's level last, where there are levels)."""
    d = details
    m = (d.schemes if scheme else d.matchings)[criterion]
    rel = d.pairs.relation()
    ref_of, pred_of = d.pairs.ref, d.pairs.pred
    for k, level, credit in zip(m.pair.tolist(), m.level.tolist(), m.credit.tolist(), strict=True):
        r, p = int(ref_of[k]), int(pred_of[k])
        unit = int(d.reference.unit[r])
        yield (
            unit,
            *_side(d.reference, text, r),
            *_side(d.predicted, text, p),
            LEVEL_NAMES[level],
            credit,
            RELATIONS[int(rel[k])],
            text.context(unit),
            *_levels(d, r, p),
        )


def _levels(d: Details, r: int, p: int) -> tuple[str, ...]:
    """Each side's level name, where the mentions have levels."""
    if d.reference.level is None or d.predicted.level is None:
        return ()
    return d.reference.levels[int(d.reference.level[r])], d.predicted.levels[int(d.predicted.level[p])]


@dataclass(frozen=True)
class KeptDetails:
    """A chunk's matching and text, kept for ``Report.pair_rows``; ``unit_offset`` numbers its units."""

    details: Details
    text: Text
    unit_offset: int
    unit_names: tuple[str, ...] | None = None  # the chunk's documents' ids, where the format has them


class RowsDir(str):
    """The folder where worker processes leave their rows (scratch files), and the process that
    writes the report: rows rendered in that process itself are kept as bytes and written once."""

    owner: int

    def __new__(cls, path: str, owner: int) -> RowsDir:
        made = super().__new__(cls, path)
        made.owner = owner
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return RowsDir, (str(self), self.owner)


@dataclass
class RowFile:
    """The rows of one CSV file from one or more consecutive chunks: their UTF-8 bytes, or where
    in the scratch files they are (path, offset, length in bytes), in corpus order."""

    blocks: list[bytes] = field(default_factory=list)
    pieces: list[tuple[str, int, int]] = field(default_factory=list)
    # Rows a worker process holds until it is told where they go: (its pid, the rows' number
    # there, length in bytes); ``HELD_NOTE`` tells it, with every file's place in ``files``' order.
    held: list[tuple[int, int, int]] = field(default_factory=list)
    full: int = 0
    partial: int = 0
    # The first partial pairs' rows, for the page (``sample_row`` reads one back): made anyway,
    # where each chunk's own dicts would be made and mostly thrown away.
    partial_lines: list[str] = field(default_factory=list)

    def then(self, later: RowFile, sample: int) -> RowFile:
        room = max(sample - len(self.partial_lines), 0)
        return RowFile(
            self.blocks + later.blocks,
            self.pieces + later.pieces,
            self.held + later.held,
            self.full + later.full,
            self.partial + later.partial,
            self.partial_lines + later.partial_lines[:room],
        )


@dataclass
class PartRows:
    """Rendered rows of every report file of consecutive chunks."""

    files: dict[str, RowFile]
    unit_kind: str
    sample: int
    levels: bool = False  # the rows end with each side's nesting level
    named: bool = False  # units are named (JSONL documents by their ids), not numbered

    def then(self, later: PartRows) -> PartRows:
        files = {name: f.then(later.files[name], self.sample) for name, f in self.files.items()}
        return PartRows(files, self.unit_kind, self.sample, self.levels, self.named)


_NEEDS_QUOTES = re.compile('[,"\r\n]')
_NEEDS_QUOTES_BYTES = re.compile(b'[,"\r\n]')


def csv_field(value: str) -> str:
    """A field as the csv module writes it with QUOTE_MINIMAL and the default dialect."""
    if _NEEDS_QUOTES.search(value) is None:
        return value
    return '"' + value.replace('"', '""') + '"'


class _Spaced(Protocol):
    """A text that can give its tokens' bytes, each followed by a space (``io.load.ConllText``)."""

    bounds: IntArray

    def spaced_bytes(self) -> tuple[npt.NDArray[np.uint8], IntArray] | None: ...


class _Source:
    """Where a chunk's mentions and units are sliced from: every token joined by single spaces,
    as ``Text.mentions`` joins them, in the UTF-8 bytes the rows are written in (no string per
    token, nothing decoded or encoded again), with where each token starts in them."""

    def __init__(self, joined: bytes, starts: IntArray, bounds: IntArray) -> None:
        self.joined = joined
        self.starts = starts
        self.bounds = bounds
        self.nul = b"\0" in joined  # no NUL between the pieces to split on
        # No byte a CSV field quotes for: no mention or sentence sliced from it needs quotes.
        self.plain = b"," not in joined and b'"' not in joined and b"\n" not in joined and b"\r" not in joined

    @staticmethod
    def of(text: Text) -> _Source | None:
        """None where the text cannot give its bytes (JSONL, labels without tokens) or they are
        not valid UTF-8: the text's own ``mentions`` then."""
        spaced = getattr(text, "spaced_bytes", None)
        bounds = getattr(text, "bounds", None)
        if spaced is None or bounds is None:
            return None
        got = cast(_Spaced, text).spaced_bytes()
        if got is None:
            return None
        buffer, starts = got
        joined = buffer.tobytes()
        if not joined.isascii():
            try:  # only checked: the text renders invalid bytes as replacement characters
                joined.decode("utf-8")
            except UnicodeDecodeError:
                return None
        return _Source(joined, starts, bounds)

    def slices(self, start: IntArray, end: IntArray) -> list[bytes]:
        """The words of tokens ``start`` to ``end`` (exclusive) of each span, "" where empty."""
        lo = self.starts[start]
        hi = np.where(end > start, self.starts[end] - 1, lo)
        if self.nul or not lo.shape[0] or int(lo.max()) >= len(self.joined):  # an empty piece at the very end
            return list(map(self.joined.__getitem__, map(slice, lo.tolist(), hi.tolist())))
        # Every piece gathered with a NUL after it, then split there: a bytes object a piece made
        # in C, three times quicker than a slice each. A piece is a run of the text's bytes and
        # the NUL's place takes the byte after it, so the positions are one running sum of steps.
        ends = np.cumsum(hi - lo + 1)
        step = np.ones(int(ends[-1]), dtype=np.int64)
        step[0] = lo[0]
        step[ends[:-1]] = lo[1:] - hi[:-1]
        gathered = np.frombuffer(self.joined, dtype=np.uint8)[np.cumsum(step, out=step)]
        gathered[ends - 1] = 0
        return gathered.tobytes().split(b"\0")[:-1]

    def contexts(self) -> list[bytes]:
        """Each unit's words, "" for a unit without tokens."""
        first, last = self.bounds[:-1], self.bounds[1:]
        if self.nul or not first.shape[0] or not bool(np.all(last > first)):
            return self.slices(first, last)
        # The units are consecutive runs of the text, each ended by the space after its last
        # token: that space made a NUL, one split gives every unit (no gather of its bytes).
        text = np.frombuffer(self.joined, dtype=np.uint8)[self.starts[first[0]] : self.starts[last[-1]]].copy()
        text[self.starts[last] - 1 - self.starts[first[0]]] = 0
        return text.tobytes().split(b"\0")[:-1]


class _Mentions:
    """Each mention of one side as CSV bytes (text, type, start, end within its unit, and the comma
    after them: every row has a cell after a mention's), made once:
    every criterion's file and the error files show the same mentions. A prediction with the
    place and type of a reference mention (most of them) takes that mention's text (``like``)."""

    def __init__(
        self,
        spans: Spans,
        text: Text,
        unit_starts: IntArray,
        source: _Source | None,
        like: tuple[Spans, _Mentions] | None = None,
    ) -> None:
        names = [] if spans.level is None else [spans.levels[k] for k in spans.level.tolist()]
        self.level = _csv_fields(_encoded(names))
        if source is None or spans.pieces is not None:
            texts = _encoded(mention_texts(text, spans))
            base = unit_starts[spans.unit] if len(spans) else spans.start
            cells = _cells(spans.types, spans.type, spans.start - base, spans.end - base)
            self.csv: npt.NDArray[np.object_] = _objects(_csv_fields(texts)) + cells
            return
        found = _same_mentions(spans, like[0]) if like is not None else None
        if found is None or like is None:
            self.csv = _mention_cells(spans, np.arange(len(spans)), unit_starts, source)
            return
        made: npt.NDArray[np.object_] = np.empty(len(spans), dtype=object)
        alone = np.flatnonzero(found < 0)
        made[alone] = _mention_cells(spans, alone, unit_starts, source)
        shared = np.flatnonzero(found >= 0)
        made[shared] = like[1].csv[found[shared]]
        self.csv = made


def _mention_cells(spans: Spans, at: IntArray, unit_starts: IntArray, source: _Source) -> npt.NDArray[np.object_]:
    """The CSV bytes of mentions ``at`` (their text, type, start and end cells)."""
    start, end = spans.start[at], spans.end[at]
    base = unit_starts[spans.unit[at]] if at.shape[0] else start
    cells = _cells(spans.types, spans.type[at], start - base, end - base)
    texts = source.slices(start, end)
    made: npt.NDArray[np.object_] = _objects(texts if source.plain else _csv_fields(texts)) + cells
    return made


def _same_mentions(spans: Spans, other: Spans) -> IntArray | None:
    """For each mention of ``spans``, a mention of ``other`` with the same place and type (its
    index; -1 where none); None where they cannot be compared so (fragments, other type tables)."""
    if other.pieces is not None or list(spans.types) != list(other.types) or not len(spans) or not len(other):
        return None
    width = max(int(spans.end.max()), int(other.end.max())) + 1
    n_types = len(spans.types) + 1
    if width > 1 << 24 or n_types > 1 << 12:  # the key could overflow
        return None
    key = (spans.start.astype(np.int64) * width + spans.end) * n_types + spans.type
    theirs = (other.start.astype(np.int64) * width + other.end) * n_types + other.type
    order = np.argsort(theirs, kind="stable")
    ranked = theirs[order]
    at = np.minimum(np.searchsorted(ranked, key), ranked.shape[0] - 1)
    return np.where(ranked[at] == key, order[at], -1)


def _cells(type_names: Sequence[str], kind: IntArray, start: IntArray, end: IntArray) -> npt.NDArray[np.object_]:
    """Each mention's type, start and end cells (",PER,3,5,"), one string per distinct three:
    mentions share a few hundred of them."""
    types = [csv_field(t) for t in type_names]
    if not kind.shape[0]:
        return _objects([])
    width = max(int(end.max()), int(start.max())) + 1
    if width > 1 << 20 or len(types) > 1 << 16:  # the key could overflow: one string per mention
        triples = zip(kind.tolist(), start.tolist(), end.tolist(), strict=True)
        return _objects([f",{types[k]},{a},{b},".encode() for k, a, b in triples])
    key = (kind.astype(np.int64) * width + start) * width + end
    space = len(types) * width * width
    if space <= max(1 << 16, 8 * key.shape[0]):
        # Few possible keys (offsets within a sentence are small): a mark per key, no sort.
        seen = np.zeros(space, dtype=bool)
        seen[key] = True
        distinct = np.flatnonzero(seen)
        inverse = (np.cumsum(seen) - 1)[key]
    else:
        # Sorted rather than np.unique, which imports numpy.ma (tens of milliseconds) in each worker.
        order = np.argsort(key, kind="stable")
        ranked = key[order]
        first = np.ones(ranked.shape[0], dtype=bool)
        np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
        distinct = ranked[first]
        inverse = np.empty(ranked.shape[0], dtype=np.int64)
        inverse[order] = np.cumsum(first) - 1
    ends, rest = np.divmod(distinct, width)[::-1]
    kinds, starts = np.divmod(rest, width)
    made = np.empty(distinct.shape[0], dtype=object)
    made[:] = [
        f",{types[k]},{a},{b},".encode() for k, a, b in zip(kinds.tolist(), starts.tolist(), ends.tolist(), strict=True)
    ]
    cells: npt.NDArray[np.object_] = made[inverse]
    return cells


_ERROR_NAMES = (
    "wrong_label_same_span",
    "wrong_label_overlap",
    "right_label_overlap",
    "false_positive",
    "false_negative",
)
_ERROR_OF_KIND = np.array([-1 if e is None else _ERROR_NAMES.index(e) for e in ERROR_OF_KIND], dtype=np.int64)
_SHARED = ("none", "left", "right", "both")  # by the kind's start and end bits


def render_rows(
    details: Details,
    text: Text,
    criteria: Sequence[str],
    sample: int,
    first_unit: int = 0,
    rows_dir: str | None = None,
    unit_names: Sequence[str] | None = None,
    *,
    sampled: Collection[str] = (),
) -> PartRows:
    """Every report row of one chunk as CSV (UTF-8 bytes): the pairs of each criterion (``pair_fields``),
    then the error files (``error_fields``), rows in position order. Units are numbered from
    ``first_unit``, or named by ``unit_names`` (JSONL documents by their ids); with ``rows_dir``
    (a ``RowsDir`` of another process) the text goes to a scratch file there. The first ``sample``
    partial pairs of each file are kept as text for the page, but for the files in ``sampled``.

    Most pairs appear in several files, so the text around a pair's match and credit cells is made
    once per pair, and each file's row joins three pieces. Every piece is bytes: mentions and
    sentences are sliced from the chunk's own bytes (``_Source``) where the text gives them, so no
    row is encoded; the bytes are the row-by-row writer's (``tests/test_report_rows.py``).
    """
    d = details
    unit_starts = text.unit_starts()
    source = _Source.of(text)
    refs = _Mentions(d.reference, text, unit_starts, source)
    preds = _Mentions(d.predicted, text, unit_starts, source, (d.reference, refs))
    levels = d.reference.level is not None
    if source is not None:
        contexts = source.contexts() if source.plain else _csv_fields(source.contexts())
    else:
        contexts = _csv_fields(_encoded(text.contexts()))
    pair_unit = d.reference.unit[d.pairs.ref]
    if unit_names is not None:
        units = _objects(_csv_fields(_encoded(list(unit_names))), b",")
    else:
        units = _objects(_numbers(first_unit, unit_starts.shape[0]))
    rel = d.pairs.relation()
    used = np.zeros(len(d.pairs), dtype=bool)
    for criterion in criteria:
        if criterion in d.matchings:
            used[d.matchings[criterion].pair] = True
    # A row is three pieces: the cells before its match and credit; those two and the relation;
    # the context and what ends the row. The first and the last are made once for each pair some
    # file shows, the middle one is one of four for a full match; the rows are made whole from
    # them once per pair (below), not once per file.
    at = np.flatnonzero(used)
    # Each unit's number and comma, each mention's cells, each unit's context (and with the line
    # end, where no level follows it) as object arrays, once for the pair files and the error files.
    rs, ps = refs.csv, preds.csv
    plain_texts = _objects(contexts)
    texts = plain_texts if levels else plain_texts + b"\r\n"
    before = units[pair_unit[at]] + rs[d.pairs.ref[at]] + ps[d.pairs.pred[at]]
    rel_at = rel[at]
    relations = _objects([f",{r},".encode() for r in RELATIONS])
    if levels:
        after = texts[pair_unit[at]] + _objects(refs.level, b",", b",")[d.pairs.ref[at]]
        after = after + _objects(preds.level, b"\r\n")[d.pairs.pred[at]]
    else:  # each unit's context and line end made once, not once per pair
        after = texts[pair_unit[at]]
    # A pair's row as a full match is the same in every file that shows it so (most rows): made
    # whole once, each file joins whole rows; only its other rows are put together from pieces.
    whole = before + (_FULL + relations)[rel_at] + after
    index = np.full(len(d.pairs), -1, dtype=np.int64)
    index[at] = np.arange(at.shape[0])
    files: dict[str, RowFile] = {}
    bodies: dict[str, bytes] = {}
    # Rows other than full matches, by their match and credit cells: made once per pair.
    others: dict[bytes, tuple[npt.NDArray[np.object_], npt.NDArray[np.bool_]]] = {}
    for criterion in criteria:
        if criterion not in d.matchings:
            continue
        m = d.matchings[criterion]
        rows = RowFile()
        where = index[m.pair]
        lines = whole[where]
        other = np.flatnonzero((m.level != FULL) | (m.credit != 1.0))
        if other.shape[0]:
            at_other = where[other]
            kinds = _middle_kinds(m.level[other], m.credit[other])
            if kinds is None:  # a credit per pair (dice, iou): each row put together here
                middles = _objects(_middles(m.level[other], m.credit[other])) + relations[rel_at[at_other]]
                lines[other] = before[at_other] + middles + after[at_other]
            else:
                # One middle per level: a pair partial under left is most often partial under right
                # and overlap too, with the same credit, so its row is made once for all of them.
                code, values = kinds
                for k, middle in enumerate(values):
                    pick = other if len(values) == 1 else other[code == k]
                    pairs = where[pick]
                    if middle not in others:
                        others[middle] = (np.empty(at.shape[0], dtype=object), np.zeros(at.shape[0], dtype=bool))
                    rows_of, done = others[middle]
                    new = pairs[~done[pairs]]
                    if new.shape[0]:
                        rows_of[new] = before[new] + (middle + relations[rel_at[new]]) + after[new]
                        done[new] = True
                    lines[pick] = rows_of[pairs]
        body = b"".join(lines.tolist())
        rows.full = int(np.count_nonzero(m.level == FULL))
        partial = np.flatnonzero(m.level == PARTIAL)
        rows.partial = int(partial.shape[0])
        if f"{criterion}.csv" not in sampled:
            rows.partial_lines = [line.decode("utf-8") for line in lines[partial[:sample]].tolist()]
        bodies[f"{criterion}.csv"] = body
        files[f"{criterion}.csv"] = rows
    cells = (units, rs, ps, plain_texts, None if levels else texts)
    bodies[ERRORS_FILE], bodies[TYPE5_FILE] = _error_rows(d, refs, preds, cells)
    files[ERRORS_FILE], files[TYPE5_FILE] = RowFile(), RowFile()
    _keep(files, bodies, rows_dir)
    return PartRows(files, text.unit_kind, sample, levels, unit_names is not None)


def _keep(files: dict[str, RowFile], bodies: dict[str, bytes], rows_dir: str | None) -> None:
    """Each file's rows kept as bytes; in a worker process of ``forked_map`` with ``rows_dir``,
    held there until the report's writer says where they go (``HeldRows``); in another process
    with ``rows_dir`` (a Dask worker), written one after the other to one scratch file there (one
    file to make, copy from and remove per chunk, not one per CSV). The process that writes the
    report writes its own rows once, not to a scratch file and then again from it."""
    if rows_dir is None or getattr(rows_dir, "owner", None) == os.getpid():
        for name, body in bodies.items():
            files[name].blocks.append(body)
        return
    held = HeldRows.here(rows_dir)
    if held is not None:
        number = held.hold(list(bodies.values()), list(bodies))
        pid = os.getpid()
        for name, data in bodies.items():
            files[name].held.append((pid, number, len(data)))
        return
    import tempfile  # here: only a report written from worker processes needs it

    fd, path = tempfile.mkstemp(prefix=".rows.", suffix=".rows", dir=rows_dir)
    offset = 0
    with os.fdopen(fd, "wb") as handle:
        for name, data in bodies.items():
            handle.write(data)
            files[name].pieces.append((path, offset, len(data)))
            offset += len(data)


# What the report's writer tells a worker of rows it holds: their number there and how many
# files, then each file's offset (in the order of the worker's ``files``).
HELD_NOTE = struct.Struct("<QI")
_OFFSET = struct.Struct("<Q")
ROWS_FAILED = ".rows-failed."  # a worker that could not write its rows leaves this file (then its pid), saying why


def held_note(number: int, offsets: Sequence[int]) -> bytes:
    """The note that tells a worker where the files' rows it holds as ``number`` go."""
    return HELD_NOTE.pack(number, len(offsets)) + struct.pack(f"<{len(offsets)}Q", *offsets)


def write_at(fd: int, data: bytes | memoryview, offset: int) -> None:
    """All of ``data`` written to ``fd`` at ``offset``, by ``os.pwrite`` where there is one;
    else by seeking (one thread at a time writes through a given ``fd``)."""
    view = memoryview(data)
    while view:
        if hasattr(os, "pwrite"):
            n = os.pwrite(fd, view, offset)
        else:  # no pwrite (Windows)
            os.lseek(fd, offset, os.SEEK_SET)
            n = os.write(fd, view)
        view, offset = view[n:], offset + n


class HeldRows:
    """A worker process's rendered rows, each chunk's held in memory until the process writing
    the report has the earlier chunks' sizes and sends their offsets (``runtime.workers.note``),
    then written straight into the report's files (in its staging folder) by a thread here, while
    the worker counts its next chunk: written once, where a scratch file was written, copied
    into place by the report's process and removed. The thread ends when the notes end (the
    worker is stopped), and the worker waits for it before it exits, so once the workers are
    reaped every row is in place; a write that fails leaves a ``ROWS_FAILED`` file saying why,
    which the report's writer raises."""

    current: HeldRows | None = None

    def __init__(self, rows_dir: str, notes: int) -> None:
        import threading

        self.rows_dir = rows_dir
        self.notes = notes
        self.bodies: dict[int, tuple[list[bytes], list[str]]] = {}
        self.count = 0
        self.thread = threading.Thread(target=self._run, name="spanscore-held-rows", daemon=True)
        self.thread.start()

    @classmethod
    def here(cls, rows_dir: str) -> HeldRows | None:
        """This worker's holder for ``rows_dir``; None where no one would send the offsets."""
        from ..runtime.workers import at_end, notes

        held = cls.current
        if held is not None:
            return held if held.rows_dir == str(rows_dir) and notes() == held.notes else None
        fd = notes()
        if fd is None:
            return None
        held = cls.current = HeldRows(str(rows_dir), fd)
        at_end(held.finish)
        return held

    def hold(self, bodies: list[bytes], names: list[str]) -> int:
        number = self.count
        self.count += 1
        self.bodies[number] = (bodies, names)
        return number

    def _run(self) -> None:
        opened: dict[str, int] = {}
        failed = False
        try:
            while True:
                head = _read_exactly(self.notes, HELD_NOTE.size)
                if head is None:
                    return
                number, n = HELD_NOTE.unpack(head)
                raw = _read_exactly(self.notes, n * _OFFSET.size)
                if raw is None:
                    return
                offsets = struct.unpack(f"<{n}Q", raw)
                got = self.bodies.pop(number, None)
                if failed:
                    continue
                try:
                    if got is None:
                        raise OSError(errno.EIO, "a worker was told of rows it does not hold")
                    bodies, names = got
                    for name, body, at in zip(names, bodies, offsets, strict=True):
                        if body:
                            fd = opened.get(name)
                            if fd is None:  # made by the report's writer before it sent the offsets
                                fd = opened[name] = os.open(os.path.join(self.rows_dir, name), os.O_WRONLY)
                            write_at(fd, body, at)
                except BaseException as exc:  # told to the report's writer; the notes still read
                    failed = True
                    self._failed(exc)
                del got
        except BaseException as exc:
            self._failed(exc)
        finally:
            for fd in opened.values():
                os.close(fd)

    def _failed(self, exc: BaseException) -> None:
        path = os.path.join(self.rows_dir, f"{ROWS_FAILED}{os.getpid()}")
        why = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
        # The folder may be gone (the report abandoned): nothing left to tell.
        with contextlib.suppress(OSError), open(path, "w", encoding="utf-8") as out:
            out.write(why)

    def finish(self) -> None:
        """Wait for the thread (the notes have ended); rows still held were never told where to
        go: the worker must not end as if its work were done."""
        self.thread.join()
        if self.bodies:
            raise RuntimeError(f"{len(self.bodies)} chunks' report rows were never written")


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts: list[bytes] = []
    while n:
        got = os.read(fd, n)
        if not got:
            return None
        parts.append(got)
        n -= len(got)
    return b"".join(parts)


_FULL = f"{LEVEL_NAMES[FULL]},{1.0!r}".encode()


def _middle_kinds(level: IntArray, credit: npt.NDArray[np.float64]) -> tuple[IntArray, list[bytes]] | None:
    """The match and credit cells of matched pairs as a code per pair into a few distinct
    values (a value per level), or None where a level's credit varies from pair to pair."""
    values: list[bytes] = []
    code = np.zeros(level.shape[0], dtype=np.int64)
    for lv in np.flatnonzero(np.bincount(level)).tolist():  # not np.unique: it imports numpy.ma
        mask = level == lv
        credits = credit[mask]
        if credits.min() != credits.max():
            return None
        code[mask] = len(values)
        values.append(f"{LEVEL_NAMES[lv]},{float(credits[0])!r}".encode())
    return code, values


def _middles(level: IntArray, credit: npt.NDArray[np.float64]) -> list[bytes]:
    """The match and credit cells of matched pairs ("partial,0.5", ...)."""
    levels = level.tolist()
    # Credit is most often one number for each level: one string per level.
    fixed: dict[int, bytes] = {}
    for lv in np.flatnonzero(np.bincount(level)).tolist():  # not np.unique: it imports numpy.ma
        values = credit[level == lv]
        if values.min() != values.max():
            return [f"{LEVEL_NAMES[v]},{c!r}".encode() for v, c in zip(levels, credit.tolist(), strict=True)]
        fixed[lv] = f"{LEVEL_NAMES[lv]},{float(values[0])!r}".encode()
    return [fixed[v] for v in levels]


def _objects(values: Sequence[bytes], then: bytes = b"", first: bytes = b"") -> npt.NDArray[np.object_]:
    """``values`` as an object array (``first`` before each and ``then`` after), to gather and add."""
    out: npt.NDArray[np.object_] = np.fromiter(values, dtype=object, count=len(values))
    if first:
        out = cast("npt.NDArray[np.object_]", first + out)
    return cast("npt.NDArray[np.object_]", out + then) if then else out


def _csv_fields(values: list[bytes]) -> list[bytes]:
    """``csv_field`` of each value (UTF-8 bytes); one search when none needs quotes (the usual case)."""
    joined = b"".join(values)
    # Four substring searches (memchr) scan a chunk's text many times faster than the pattern.
    if b"," not in joined and b'"' not in joined and b"\n" not in joined and b"\r" not in joined:
        return values
    needs = _NEEDS_QUOTES_BYTES.search
    return [b'"' + v.replace(b'"', b'""') + b'"' if needs(v) else v for v in values]


def _encoded(values: list[str]) -> list[bytes]:
    """Each value's UTF-8 bytes, encoded at once where no value holds a NUL (one to split on)."""
    if len(values) < 2:
        return [v.encode("utf-8") for v in values]
    joined = "\0".join(values)
    if joined.count("\0") != len(values) - 1:
        return [v.encode("utf-8") for v in values]
    return joined.encode("utf-8").split(b"\0")


def _numbers(first: int, n: int) -> list[bytes]:
    """The numbers ``first`` to ``first + n - 1`` as text, each with a comma after it."""
    if n == 0:
        return []
    # Formatted into bytes at once (no string per number, nothing encoded): a third quicker.
    return (b"%d,\n" * n % tuple(range(first, first + n))).split(b"\n")[:-1]


_Objects = npt.NDArray[np.object_]
_Cells = tuple[_Objects, _Objects, _Objects, _Objects, "_Objects | None"]


def _error_rows(d: Details, refs: _Mentions, preds: _Mentions, cells: _Cells) -> tuple[bytes, bytes]:
    """Every mention that is not correct under the error taxonomy (Nejadgholi et al. 2020), in
    position order, and the Type-5 rows alone. ``cells``: each unit's number and comma, each
    reference's and prediction's cells, each unit's context and (where made) the same with its
    line end, as ``render_rows`` made them.

    The pairs come from the one-to-one matching that the taxonomy counts read, so the number of
    rows of each error equals its count in the JSON's ``errors``.
    """
    m = d.schemes[TAXONOMY.name]
    kind = d.pairs.kind[m.pair]
    error = _ERROR_OF_KIND[kind]
    wrong = error >= 0
    pair = m.pair[wrong]
    r, p, kind, error = d.pairs.ref[pair], d.pairs.pred[pair], kind[wrong], error[wrong]
    matched_r = np.zeros(len(d.reference), dtype=bool)
    matched_r[d.pairs.ref[m.pair]] = True
    matched_p = np.zeros(len(d.predicted), dtype=bool)
    matched_p[d.pairs.pred[m.pair]] = True
    fp = np.flatnonzero(~matched_p)
    fn = np.flatnonzero(~matched_r)
    # Pairs, then false positives, then false negatives; ordered by (unit, reference start,
    # predicted start), ties kept in that order (lexsort is stable).
    unit = np.concatenate((d.reference.unit[r], d.predicted.unit[fp], d.reference.unit[fn]))
    first = np.concatenate((d.reference.start[r], d.predicted.start[fp], d.reference.start[fn]))
    second = np.concatenate((d.predicted.start[p], d.predicted.start[fp], d.reference.start[fn]))
    order = np.lexsort((second, first, unit))
    n_pairs, n_fp = r.shape[0], fp.shape[0]
    fps, fns = slice(n_pairs, n_pairs + n_fp), slice(n_pairs + n_fp, None)
    # Each side's level after the context, where there are levels (empty for a missing side).
    levels = d.reference.level is not None and d.predicted.level is not None
    codes = np.concatenate((error, np.full(n_fp, 3), np.full(fn.shape[0], 4)))
    units, rs, ps, plain_texts, ended = cells
    texts = plain_texts if levels else ended if ended is not None else plain_texts + b"\r\n"
    # A row's pieces, joined at once: its error and code, unit, reference cells, predicted cells,
    # relation and shared boundary, context (and line end), each side's level.
    pieces: npt.NDArray[np.object_] = np.empty((unit.shape[0], 7 if levels else 6), dtype=object)
    pieces[:, 0] = _objects([f"{name},{ERROR_CODE[name]},".encode() for name in _ERROR_NAMES])[codes]
    pieces[:, 1] = units[unit]
    pieces[:n_pairs, 2] = rs[r]
    pieces[:n_pairs, 3] = ps[p]
    # SAME_START is bit 1 of a pair's kind, SAME_END bit 2.
    middles = _objects([f"{x},{y},".encode() for x in RELATIONS for y in _SHARED])
    pieces[:n_pairs, 4] = middles[d.pairs.relation()[pair] * len(_SHARED) + ((kind >> 1) & 3)]
    pieces[fps, 2], pieces[fps, 3], pieces[fps, 4] = b",,,,", ps[fp], b",,"
    pieces[fns, 2], pieces[fns, 3], pieces[fns, 4] = rs[fn], b",,,,,,", b""
    pieces[:, 5] = texts[unit]
    if levels:
        rl, pl = _objects(refs.level), _objects(preds.level)
        pieces[:n_pairs, 6] = b"," + rl[r] + b"," + pl[p] + b"\r\n"
        pieces[fps, 6] = b",," + pl[fp] + b"\r\n"
        pieces[fns, 6] = b"," + rl[fn] + b",\r\n"
    pieces, codes = pieces[order], codes[order]
    type5 = pieces[codes == _ERROR_NAMES.index("right_label_overlap")]
    return b"".join(pieces.ravel().tolist()), b"".join(type5.ravel().tolist())


def header_line(fields: Sequence[str]) -> str:
    return ",".join(csv_field(f) for f in fields) + "\r\n"


_INTEGERS = frozenset(f"{side}_{end}" for side in ("reference", "predicted") for end in ("start", "end"))


def sample_row(line: str, fields: Sequence[str], named: bool) -> dict[str, Any]:
    """A pair file's row (``pair_fields``) read back as ``Report.pair_rows`` gives it: offsets
    and numbered units as integers, the credit as a float (written with ``repr``, so the same
    number), the rest as text."""
    values = next(csv.reader(io.StringIO(line, newline="")))
    row: dict[str, Any] = dict(zip(fields, values, strict=True))
    if not named:
        row[fields[0]] = int(row[fields[0]])
    for key in _INTEGERS:
        row[key] = int(row[key])
    row["credit"] = float(row["credit"])
    return row


def sample_rows(lines: Sequence[str], fields: Sequence[str], named: bool) -> list[dict[str, Any]]:
    """``sample_row`` of each line, read by one CSV reader (each line is one whole record, line
    end included): a reader and a buffer per line cost twice as much for the page's samples."""
    got = list(csv.reader(io.StringIO("".join(lines), newline="")))
    if len(got) != len(lines):  # not one record a line: each read alone, as before
        return [sample_row(line, fields, named) for line in lines]
    rows = []
    for values in got:
        row: dict[str, Any] = dict(zip(fields, values, strict=True))
        if not named:
            row[fields[0]] = int(row[fields[0]])
        for key in _INTEGERS:
            row[key] = int(row[key])
        row["credit"] = float(row["credit"])
        rows.append(row)
    return rows


def error_examples(
    m: Matching, pairs: Pairs, reference: Spans, predicted: Spans, text: Text, limit: int
) -> dict[str, list[dict[str, Any]]]:
    """The first ``limit`` examples of each error kind in position order, from the taxonomy's matching."""
    out: dict[str, list[dict[str, Any]]] = {
        "wrong_label_same_span": [],
        "wrong_label_overlap": [],
        "right_label_overlap": [],
    }

    def side(spans: Spans, i: int) -> dict[str, Any]:
        mention, typ, start, end = _side(spans, text, i)
        return {"text": mention, "type": typ, "start": start, "end": end}

    kinds = pairs.kind[m.pair]
    for error, rows in out.items():
        # The first ``limit`` pairs of this error, in the matching's order, without a loop over every pair.
        codes = [code for code, name in enumerate(ERROR_OF_KIND) if name == error]
        for k in m.pair[np.flatnonzero(np.isin(kinds, codes))[:limit]].tolist():
            r, p = int(pairs.ref[k]), int(pairs.pred[k])
            rows.append(
                {
                    "reference": side(reference, r),
                    "predicted": side(predicted, p),
                    "context": text.context(int(reference.unit[r])),
                }
            )
    matched_r = np.zeros(len(reference), dtype=bool)
    matched_r[pairs.ref[m.pair]] = True
    matched_p = np.zeros(len(predicted), dtype=bool)
    matched_p[pairs.pred[m.pair]] = True
    out["false_positive"] = [
        {"predicted": side(predicted, i), "context": text.context(int(predicted.unit[i]))}
        for i in np.flatnonzero(~matched_p)[:limit].tolist()
    ]
    out["false_negative"] = [
        {"reference": side(reference, i), "context": text.context(int(reference.unit[i]))}
        for i in np.flatnonzero(~matched_r)[:limit].tolist()
    ]
    return out
