"""Sources: a corpus in any supported form, cut into parts that are read and counted one by one.

A source plans *parts* (small, picklable descriptions: byte ranges, document lists, sentence
ranges) and ``load`` reads one part into a ``ChunkData``. Engines only ever see this protocol
(``stages.parts.Source``):

- ``ConllSource``: two CoNLL files (or one merged file) cut at shared sentence breaks;
- ``JsonlSource``: JSONL documents taken a block of lines at a time and paired by id;
- ``LabelsSource``: Python lists of label sequences, a block of sentences at a time;
- ``SpansSource``: Python lists of (start, end, label) per document, a block at a time;
- ``DocumentsSource``: documents read whole (an annotation tool's export, two formats against each
  other, mentions given as strings and located in the reference's text), paired by id in memory
  and served a block of documents at a time; it also says what the readers found
  (``read``, ``located``).

``open_source`` is the one way in: ``OPENERS`` holds an opener per format, and adding a format is
adding its opener there.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from ..errors import InputError, OptionError
from ..runtime.records import record
from ..runtime.workers import can_fork, forked_map
from ..stages.parts import ChunkData, Source
from ..stages.scoring import TypeSelection
from ..stages.spans import IntArray, Spans, unify
from ..stages.text import Repaired
from .conll import Column, ConllTable, parse_conll
from .conll_plan import DEFAULT_CHUNK, Chunk, ReadChunk, file_columns, iter_chunks, read_chunks
from .load import ConllText, OffsetText, check_same_tokens, decode_repaired, docs_to_spans, span_docs
from .reading import ANNOTATION_FORMATS, TEXT_FORMATS, Reading, level_name

# The JSONL reader, the annotation formats' readers and io.strings are imported where a source
# reads them, so that a CoNLL run loads none of them.
if TYPE_CHECKING:
    from ..stages.buckets import PartKeys, TrainIndex
    from .document import Document
    from .jsonl import RawDocument
    from .strings import DocumentClasses

JSONL_LOOKAHEAD = 100_000  # predicted documents held while looking for the next reference id
SENTENCES_PER_PART = 20_000  # label lists: sentences per part
DOCUMENTS_PER_PART = 5_000  # span lists and documents held in memory: documents per part

EVERY_TYPE = TypeSelection()  # no renaming, no type left out
_S = TypeVar("_S")


class _NothingFound:
    """A source whose readers find nothing to report beyond the spans (``Source.read`` and
    ``Source.located`` are None), and whose workers read it as it is."""

    read: dict[str, Any] | None = None
    located: dict[str, Any] | None = None

    def for_workers(self: _S, remote: bool) -> _S:
        return self


def _check_chunk(chunk_bytes: int) -> int:
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes < 1:
        raise OptionError(f"the chunk size must be a positive number of bytes, not {chunk_bytes!r}")
    return chunk_bytes


def _path(name: str, value: Any, reading: Reading) -> str:
    if not isinstance(value, str | Path):
        raise OptionError(f"format={reading.format!r} expects {name} as a file path, not {type(value).__name__}")
    return str(value)


def _size(path: str) -> int:
    """The file's size for progress (0 where it cannot be read: the plan says why)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _read(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


def _not_json(path: str) -> None:
    """A CoNLL file whose first line is a JSON object is JSONL read with the wrong format."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return  # the plan says why
    lines = head.lstrip(b"\xef\xbb\xbf").split(b"\n")
    line = next((k for k, text in enumerate(lines, start=1) if text.strip()), None)
    if line is not None and lines[line - 1].lstrip().startswith(b'{"'):
        raise InputError("this looks like JSONL (a JSON object per line): pass --format jsonl", path=path, line=line)


def _starts_with_documents(path: str) -> bool:
    """Whether the file has -DOCSTART- lines, judged from its first 64 KiB (where the first one is)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return head.startswith(b"-DOCSTART-") or b"\n-DOCSTART-" in head


def _simple_sentences(data: bytes) -> int | None:
    """The sentences of CoNLL bytes in the plainest layout (token lines and empty lines only: no
    -DOCSTART-, "#", carriage return or line starting with white space), counted from the bytes;
    None for any other layout (the parser counts those)."""
    if not data or b"-DOCSTART-" in data or b"#" in data or b"\r" in data:
        return None
    b = np.frombuffer(data, dtype=np.uint8)
    nl = b == 10
    if b[0] <= 32 or bool((nl[:-1] & (b[1:] <= 32) & ~nl[1:]).any()):
        return None
    # A sentence ends where a token line is followed by an empty line, or at the end of the data.
    ends = int(np.count_nonzero(~nl[:-2] & nl[1:-1] & nl[2:]))
    last = data.rstrip(b"\n")
    tail = len(data) - len(last)
    return ends + (1 if last and tail < 2 else 0)


def _decode_levels(table: ConllTable, reading: Reading) -> tuple[Spans, Repaired]:
    """Every level's mentions as one set (nested mentions overlap), and what the repair policy
    changed in all of them."""
    decoded = [decode_repaired(table, k, reading.labels, reading.repair) for k in range(len(reading.level_columns))]
    types = tuple(sorted({t for s, _ in decoded for t in s.types}))
    parts = [s.with_types(types) for s, _ in decoded]
    joined = Spans.build(
        np.concatenate([s.start for s in parts]),
        np.concatenate([s.end for s in parts]),
        np.concatenate([s.type for s in parts]),
        np.concatenate([s.unit for s in parts]),
        types,
        level=np.concatenate([np.full(len(s), k, dtype=np.int64) for k, s in enumerate(parts)]),
        levels=[level_name(k) for k in range(len(parts))],
    )
    found = [f for _, f in decoded if f.count]
    lines = [f.first_line for f in found if f.first_line is not None]
    fixed = Repaired(table.path, sum(f.count for f in found), min(lines) if lines else None)
    return joined, fixed


class ReadReference:
    """A CoNLL part's reference parsed once (``ConllSource.read_reference``), its mentions decoded
    on first use (after the prediction is checked against it, as when read alone)."""

    def __init__(self, start: int, end: int, table: ConllTable, reading: Reading) -> None:
        self.start, self.end, self.table, self.reading = start, end, table, reading
        self._decoded: tuple[Spans, Repaired] | None = None

    def decoded(self) -> tuple[Spans, Repaired]:
        if self._decoded is None:
            rd = self.reading
            self._decoded = (
                _decode_levels(self.table, rd) if rd.levels else decode_repaired(self.table, 0, rd.labels, rd.repair)
            )
        return self._decoded


@record
class ConllSource(_NothingFound):
    """CoNLL files, read in chunks cut at the same sentence breaks in both."""

    reference: str
    predicted: str | None  # None: ``reference`` is a merged file
    reading: Reading
    selection: TypeSelection = EVERY_TYPE
    chunk_bytes: int = DEFAULT_CHUNK

    @staticmethod
    def open(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int
    ) -> ConllSource:
        ref = _path("reference", reference, reading)
        if reading.merged:
            if predicted is not None:
                raise OptionError("with merged=True give only reference (the merged file)")
            pred = None
        else:
            pred = _path("predicted", predicted, reading)
        for path in (ref, pred):
            if path is not None:
                _not_json(path)
        return ConllSource(ref, pred, reading, selection, _check_chunk(chunk_bytes))

    def parts(self) -> Iterator[Chunk]:
        return iter_chunks(self.reference, self.predicted, self.chunk_bytes)

    def for_workers(self, remote: bool) -> ConllSource:
        # Workers read their byte ranges by path: a file that cannot be opened fails here, with
        # this process's message, before a cluster starts.
        for path in (self.reference, self.predicted):
            if path is not None and not os.path.isfile(path):
                next(iter(self.parts()))
        if not remote:
            return self
        # Workers elsewhere do not share this process's working directory.
        return replace(
            self,
            reference=os.path.abspath(self.reference),
            predicted=None if self.predicted is None else os.path.abspath(self.predicted),
        )

    def size(self) -> int:
        return _size(self.reference)

    def position(self, part: Chunk) -> int:
        return part.ref_end

    def by_documents(self) -> bool:
        return _starts_with_documents(self.reference)

    def units(self, part: Chunk) -> int:
        rd = self.reading
        data = _read(self.reference, part.ref_start, part.ref_end)
        simple = _simple_sentences(data)
        if simple is not None:
            return simple
        try:
            table = parse_conll(
                data,
                self.reference,
                columns=(),
                token_column=rd.token_column,
                delimiter=rd.delimiter,
                line_offset=part.ref_line,
                allow_empty=True,
                encoding=rd.encoding,
                header=rd.header and part.ref_line == 0,
                file_columns=lambda: file_columns(self.reference),
            )
        except InputError:
            return 0  # counting the part raises the error, in its turn
        return table.n_sentences

    def _common(self, part: Chunk) -> dict[str, Any]:
        rd = self.reading
        return dict(
            token_column=rd.token_column,
            delimiter=rd.delimiter,
            line_offset=part.ref_line,
            allow_empty=True,
            encoding=rd.encoding,
            header=rd.header and part.ref_line == 0,
            file_columns=lambda: file_columns(self.reference),
        )

    def reference_bytes(self, part: Chunk) -> bytes:
        """The part's bytes of the reference file, as they are (its comment lines included)."""
        return _read(self.reference, part.ref_start, part.ref_end)

    def read_reference(self, part: Chunk) -> ReadReference:
        """The part's reference parsed and decoded, for ``load`` to pair with several predictions
        of the same reference (``compare``: the reference read once for every system)."""
        rd = self.reading
        label_columns = rd.level_columns or (rd.label_column,)
        ref_bytes = _read(self.reference, part.ref_start, part.ref_end)
        table = parse_conll(ref_bytes, self.reference, columns=label_columns, **self._common(part))
        return ReadReference(part.ref_start, part.ref_end, table, rd)

    def load(self, part: Chunk, reference: ReadReference | None = None, read: ReadChunk | None = None) -> ChunkData:
        """The part read and decoded; ``reference``: its reference already read (``read_reference``
        of a source over the same reference file, reading and part); ``read``: its bytes already
        read (``read_parts``)."""
        rd = self.reading
        common = self._common(part)
        if self.predicted is None:
            ref_bytes = _read(self.reference, part.ref_start, part.ref_end)
            columns = (-2, -1) if rd.predicted_column is None else (rd.label_column, rd.predicted_column)
            table = parse_conll(ref_bytes, self.reference, columns=columns, **common)
            if 0 < table.n_columns < 3:
                raise InputError(
                    f"a merged file needs token, gold and predicted columns; lines have {table.n_columns}",
                    path=self.reference,
                )
            r, fixed_r = decode_repaired(table, 0, rd.labels, rd.repair)
            p, fixed_p = decode_repaired(table, 1, rd.labels, rd.repair)
        else:
            label_columns = rd.level_columns or (rd.label_column,)
            if reference is None:
                reference = self.read_reference(part)
            elif (reference.start, reference.end) != (part.ref_start, part.ref_end):
                raise RuntimeError("spanscore bug: a part was paired with another part's reference")
            table = reference.table
            common["line_offset"] = part.pred_line
            common["header"] = rd.header and part.pred_line == 0
            common["encoding"] = rd.prediction_encoding
            predicted = self.predicted
            common["file_columns"] = lambda: file_columns(predicted)
            pred_table = parse_conll(
                _read(self.predicted, part.pred_start, part.pred_end)
                if read is None or read.predicted is None
                else read.predicted,
                self.predicted,
                columns=label_columns,
                newlines=None if read is None else read.newlines,
                **common,
            )
            check_same_tokens(table, pred_table)
            r, fixed_r = reference.decoded()
            if rd.levels:
                p, fixed_p = _decode_levels(pred_table, rd)
            else:
                p, fixed_p = decode_repaired(pred_table, 0, rd.labels, rd.repair)
        r, p = unify(r, p)
        seen = r.types
        r, p = self.selection.apply(r, p)
        n = table.n_sentences
        if self.by_documents_cached:
            starts = table.sentence_docstarts
            doc_key = starts if starts is not None else np.zeros(n, dtype=np.int64)
            advance, unit = table.n_docstarts, "document"
        else:
            doc_key, advance, unit = np.arange(1, n + 1, dtype=np.int64), n, "sentence"
        return ChunkData(
            reference=r,
            predicted=p,
            text=ConllText(table, table.sentence_bounds),
            documents=table.n_docstarts,
            sentences=n,
            tokens=table.n_tokens,
            units=n,
            doc_key=doc_key,
            doc_advance=advance,
            doc_unit=unit,
            seen_types=seen,
            repairs=(fixed_r, fixed_p),
        )

    @property
    def by_documents_cached(self) -> bool:
        cached: bool | None = self.__dict__.get("_by_documents")
        if cached is None:
            cached = self.by_documents()
            object.__setattr__(self, "_by_documents", cached)
        return cached

    def read_parts(self) -> Iterator[tuple[Chunk, ChunkData]] | None:
        """Every part with its data, each cut as it is read (``conll_plan.read_chunks``: for one
        process, the prediction's bytes read once and its sentence breaks never looked for apart
        from parsing it); None for a merged file."""
        if self.predicted is None:
            return None
        return read_chunks(self.reference, self.predicted, self.chunk_bytes, self._read_part)

    def _read_part(self, part: ReadChunk, final: bool) -> ChunkData | None:
        try:
            return self.load(part.chunk, read=part)
        except InputError:
            if final:
                raise
            return None  # read again as planned: its error, if any, is the plan's


# JSONL.


@record
class JsonlPart:
    """Reference and predicted documents of one part of JSONL files."""

    reference: tuple[RawDocument, ...]
    predicted: tuple[RawDocument, ...]  # the same ids, in the same order
    end: int  # bytes of the reference read so far, for progress


@record
class JsonlSource(_NothingFound):
    """JSONL files, read in parts of documents paired by id."""

    reference: str
    predicted: str
    selection: TypeSelection = EVERY_TYPE
    chunk_bytes: int = DEFAULT_CHUNK
    lookahead: int = JSONL_LOOKAHEAD
    levels: tuple[str, ...] = ()  # only the mentions at these levels (their "level" field), where given

    @staticmethod
    def open(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int
    ) -> JsonlSource:
        return JsonlSource(
            _path("reference", reference, reading),
            _path("predicted", predicted, reading),
            selection,
            _check_chunk(chunk_bytes),
            levels=reading.level_names,
        )

    def size(self) -> int:
        return _size(self.reference)

    def position(self, part: JsonlPart) -> int:
        return part.end

    def units(self, part: JsonlPart) -> int:
        return len(part.reference)

    def parts(self) -> Iterator[JsonlPart]:
        """Blocks of reference documents with their predictions, paired by id.

        Predictions may come in another order: up to ``lookahead`` of them are held while looking
        for the next reference id; past that, or at the end of the file, the reference document
        is missing from the prediction.
        """
        from .jsonl import earlier_line, raw_documents

        preds = raw_documents(self.predicted)
        waiting: dict[str, RawDocument] = {}
        pred_done = False
        ref_block: list[RawDocument] = []
        pred_block: list[RawDocument] = []
        size, read = 0, 0
        for doc in raw_documents(self.reference):
            while doc.id not in waiting and not pred_done and len(waiting) < self.lookahead:
                other = next(preds, None)
                if other is None:
                    pred_done = True
                else:
                    waiting[other.id] = other
            other = waiting.pop(doc.id, None)
            if other is None:
                twice = earlier_line(self.reference, doc.id, doc.line)
                if twice is not None:
                    raise InputError(f"document id {doc.id!r} also on line {twice}", path=self.reference, line=doc.line)
                why = (
                    f"document {doc.id!r} is missing from {self.predicted}"
                    if pred_done
                    else f"document {doc.id!r} is not among the next {self.lookahead} documents of {self.predicted}"
                    " (documents must be in about the same order in both files)"
                )
                raise InputError(why, path=self.reference, line=doc.line)
            ref_block.append(doc)
            pred_block.append(other)
            weight = len(doc.raw)
            size += weight
            read += weight
            if size >= self.chunk_bytes:
                yield JsonlPart(tuple(ref_block), tuple(pred_block), read)
                ref_block, pred_block, size = [], [], 0
        leftover = next(iter(waiting.values()), None) or next(preds, None)
        if leftover is not None:
            twice = earlier_line(self.predicted, leftover.id, leftover.line)
            if twice is not None:
                raise InputError(
                    f"document id {leftover.id!r} also on line {twice}", path=self.predicted, line=leftover.line
                )
            raise InputError(
                f"document {leftover.id!r} is not in {self.reference}", path=self.predicted, line=leftover.line
            )
        if ref_block:
            yield JsonlPart(tuple(ref_block), tuple(pred_block), read)

    def load(self, part: JsonlPart) -> ChunkData:
        reference = [d.parse(self.reference, self.levels) for d in part.reference]
        predicted = [d.parse(self.predicted, self.levels) for d in part.predicted]
        for doc, other in zip(reference, predicted, strict=True):
            if other.text != doc.text:
                raise _text_differs(doc, other, self.reference, self.predicted)
        return _offset_chunk(reference, predicted, self.selection, ids=True, levels=self.levels)


def _text_differs(doc: Document, other: Document, reference: str, predicted: str) -> InputError:
    k = next(
        (i for i, (a, b) in enumerate(zip(doc.text, other.text, strict=False)) if a != b),
        min(len(doc.text), len(other.text)),
    )
    where = f"{reference}:{doc.line}" if doc.line else reference
    return InputError(
        f"text of document {doc.id!r} differs from {where} at character {k}:"
        f" {other.text[k : k + 20]!r} vs {doc.text[k : k + 20]!r}",
        path=predicted,
        line=other.line or None,
    )


def own_tokens(doc: Document) -> int:
    """The tokens of a reference document: the format's own where it has them (Prodigy's, a
    dataset's), what its tokenizer counted; else its whitespace-separated words."""
    return len(doc.text.split()) if doc.tokens is None else len(doc.tokens)


def _offset_chunk(
    reference: Sequence[Document],
    predicted: Sequence[Document],
    selection: TypeSelection,
    *,
    ids: bool,
    tokens: int | None = None,
    levels: tuple[str, ...] = (),
) -> ChunkData:
    lengths = np.array([len(d.text) + 1 for d in reference], dtype=np.int64)
    bases = np.concatenate(([0], np.cumsum(lengths)))[:-1].astype(np.int64)
    r, p = unify(docs_to_spans(reference, bases, levels), docs_to_spans(predicted, bases, levels))
    seen = r.types
    r, p = selection.apply(r, p)
    n = len(reference)
    return ChunkData(
        reference=r,
        predicted=p,
        text=OffsetText([d.text for d in reference], bases),
        documents=n,
        sentences=n,
        tokens=sum(own_tokens(d) for d in reference) if tokens is None else tokens,
        units=n,
        doc_key=np.arange(n, dtype=np.int64),
        doc_advance=n,
        doc_ids=tuple(d.id for d in reference) if ids else None,
        seen_types=seen,
    )


# Python data.


def _label_table(name: str, sequences: Sequence[Sequence[str]]) -> ConllTable:
    """A block of label sequences as a one-column table (label ids through a dict of the few
    distinct labels; no per-token type check: the distinct labels are checked instead)."""
    if any(isinstance(s, str | bytes) for s in sequences):
        raise OptionError(f"format='labels' expects {name} as a list of sentences, each a list of label strings")
    try:
        lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
        flat = list(itertools.chain.from_iterable(sequences))
        vocab = sorted(set(flat), key=lambda v: (not isinstance(v, str), str(v)))
    except TypeError:
        raise OptionError(
            f"format='labels' expects {name} as a list of sentences, each a list of label strings"
        ) from None
    wrong = [v for v in vocab if not isinstance(v, str)]
    if wrong:
        bad = wrong[0]
        raise OptionError(
            f"format='labels' expects {name} as a list of sentences, each a list of label strings;"
            f" found {type(bad).__name__} {bad!r}"
        )
    index = {v: i for i, v in enumerate(vocab)}
    ids = np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))
    bounds = np.zeros(len(sequences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    n = len(flat)
    z = np.zeros(n, dtype=np.int64)
    return ConllTable(
        path=name,
        buffer=np.zeros(0, dtype=np.uint8),
        token_start=z,
        token_end=z,
        token_line=np.arange(1, n + 1, dtype=np.int64),
        sentence_bounds=bounds,
        sentence_doc=np.zeros(len(sequences), dtype=np.int64),
        n_documents=1,
        columns=(Column(ids=ids, vocab=tuple(vocab)),),
        n_columns=2,
    )


def _sequence(name: str, value: Any, format: str, what: str) -> Sequence[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise OptionError(f"format={format!r} expects {name} as a list of {what}, not {type(value).__name__}")
    return value


def _no_line(repaired: Repaired) -> Repaired:
    """Label lists have no lines to name (only how many transitions were repaired)."""
    return Repaired(repaired.path, repaired.count)


class _Blocks(_NothingFound):
    """Parts of a Python sequence: ``per_part`` items at a time, as (start, end) index pairs."""

    reference: Sequence[Any]
    per_part: int

    def size(self) -> int:
        return len(self.reference)

    def position(self, part: tuple[int, int]) -> int:
        return part[1]

    def units(self, part: tuple[int, int]) -> int:
        return part[1] - part[0]

    def parts(self) -> Iterator[tuple[int, int]]:
        n = len(self.reference)
        for start in range(0, max(n, 1), self.per_part):
            yield start, min(start + self.per_part, n)


@record
class LabelsSource(_Blocks):
    """Label lists in memory, counted in blocks of sentences."""

    reference: Sequence[Sequence[str]]
    predicted: Sequence[Sequence[str]]
    reading: Reading
    selection: TypeSelection = EVERY_TYPE
    per_part: int = SENTENCES_PER_PART

    @staticmethod
    def open(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
    ) -> LabelsSource:
        ref = _sequence("reference", reference, "labels", "sentences, each a list of label strings")
        pred = _sequence("predicted", predicted, "labels", "sentences, each a list of label strings")
        if len(ref) != len(pred):
            raise InputError(f"{len(ref)} reference sentences but {len(pred)} predicted")
        return LabelsSource(ref, pred, reading, selection)

    def load(self, part: tuple[int, int]) -> ChunkData:
        start, end = part
        ref = _label_table("reference", self.reference[start:end])
        pred = _label_table("predicted", self.predicted[start:end])
        if not np.array_equal(ref.sentence_bounds, pred.sentence_bounds):
            s = int(np.flatnonzero(np.diff(ref.sentence_bounds) != np.diff(pred.sentence_bounds))[0])
            raise InputError(
                f"sentence {start + s}: {len(self.reference[start + s])} reference labels"
                f" but {len(self.predicted[start + s])} predicted"
            )
        rd = self.reading
        r, fixed_r = decode_repaired(ref, 0, rd.labels, rd.repair)
        p, fixed_p = decode_repaired(pred, 0, rd.labels, rd.repair)
        r, p = unify(r, p)
        seen = r.types
        r, p = self.selection.apply(r, p)
        n = end - start
        return ChunkData(
            reference=r,
            predicted=p,
            text=ConllText(None, ref.sentence_bounds),
            documents=0,
            sentences=n,
            tokens=ref.n_tokens,
            units=n,
            doc_key=np.arange(1, n + 1, dtype=np.int64),
            doc_advance=n,
            doc_unit="sentence",
            seen_types=seen,
            repairs=(_no_line(fixed_r), _no_line(fixed_p)),
        )


@record
class SpansSource(_Blocks):
    """Span lists in memory, counted in blocks of documents."""

    reference: Sequence[Any]
    predicted: Sequence[Any]
    selection: TypeSelection = EVERY_TYPE
    per_part: int = DOCUMENTS_PER_PART

    @staticmethod
    def open(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
    ) -> SpansSource:
        ref = span_docs("reference", reference)
        pred = span_docs("predicted", predicted)
        if len(ref) != len(pred):
            raise InputError(f"{len(ref)} reference documents but {len(pred)} predicted")
        return SpansSource(ref, pred, selection)

    def load(self, part: tuple[int, int]) -> ChunkData:
        from .document import Document  # span lists only: a CoNLL count starts without it

        start, end = part
        ref, pred = self.reference[start:end], self.predicted[start:end]
        lengths = [max([e for _, e, _ in r + p], default=0) for r, p in zip(ref, pred, strict=True)]
        ids = [str(start + i) for i in range(end - start)]
        as_ref = [Document(k, " " * n, tuple(r)) for k, n, r in zip(ids, lengths, ref, strict=True)]
        as_pred = [Document(k, " " * n, tuple(p)) for k, n, p in zip(ids, lengths, pred, strict=True)]
        data = _offset_chunk(as_ref, as_pred, self.selection, ids=False)
        return ChunkData(
            reference=data.reference,
            predicted=data.predicted,
            text=data.text,
            documents=data.documents,
            sentences=data.sentences,
            tokens=0,
            units=data.units,
            doc_key=data.doc_key,
            doc_advance=data.doc_advance,
            doc_ids=tuple(ids),
            seen_types=data.seen_types,
        )


# Documents read whole.


class DocumentsPart(NamedTuple):
    """Documents ``start`` to ``end`` (exclusive) of a ``DocumentsSource``; ``position`` is the
    characters of reference text up to ``end``, for progress."""

    start: int
    end: int
    position: int


@record
class DocumentsSource:
    """Documents held in memory, paired: ``predicted[k]`` is ``reference[k]``'s prediction (the
    same id and text). Each part is a block of documents, at most ``per_part`` and about
    ``chunk_bytes`` characters of reference text; each is counted as ``JsonlSource`` counts the
    same documents read from JSONL files, so every number is the same.

    Formats whose readers need the whole file (a JSON list, a folder, a dataset) and mentions
    given as strings (located against the whole reference document) are read here once, whole;
    the parts are index ranges, and the source, documents included, is what workers receive.
    """

    reference: tuple[Document, ...]
    predicted: tuple[Document, ...]
    selection: TypeSelection = EVERY_TYPE
    chunk_bytes: int = DEFAULT_CHUNK
    per_part: int = DOCUMENTS_PER_PART
    read: dict[str, Any] | None = None  # what the readers skipped or reconciled (``Report.read``)
    located: dict[str, Any] | None = None  # how mentions given as strings were found (``Report.located``)
    # Each reference document's own tokens where located strings extended its text (what was
    # appended after a marker is no text of the reference), else None: counted from the text.
    tokens: tuple[int, ...] | None = None
    # Each document's LLM error classes (``io.strings.CLASSES``), for ``compare``'s intervals.
    classes: DocumentClasses | None = field(default=None, repr=False, compare=False)
    levels: tuple[str, ...] = ()  # the levels (a DocBin's span groups) each mention keeps, where read by level

    @staticmethod
    def open(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
    ) -> DocumentsSource:
        """Each side read whole in its format (``reading.format``, and ``predicted_format`` where
        given), with its reader's options, and paired by document id. A document one reader left
        out (``ReadNotes.left_out``: a task nobody annotated, a rejected record) is left out of the
        other side too, and counted in that side's ``skipped``."""
        from .formats import misaligned_summary, nothing_left, read_documents

        chunk = _check_chunk(chunk_bytes)
        ref_path = _path("reference", reference, reading)
        pred_path = _path("predicted", predicted, reading)
        ref_options, pred_options = reading.reference_options, reading.predicted_options
        if reading.level_names:  # a DocBin's levels are its span groups, read together
            groups = (("span_groups", ",".join(reading.level_names)),)
            ref_options, pred_options = ref_options + groups, pred_options + groups
        ref_docs, ref_notes, ref_left = read_documents(reading.format, ref_path, ref_options)
        side = reading.predicted_format or reading.format
        pred_docs, pred_notes, pred_left = read_documents(side, pred_path, pred_options)
        # A side with no document at all: say which, what its reader left out, and how to read
        # the tasks' predictions where that is what the file holds.
        if not ref_docs:
            raise nothing_left("reference", ref_notes, ref_path, reading.format)
        if not pred_docs:
            raise nothing_left("prediction", pred_notes, pred_path, side)
        ref_docs = _without(ref_docs, pred_left, pred_docs, ref_notes, "documents the prediction's reader left out")
        pred_docs = _without(pred_docs, ref_left, ref_docs, pred_notes, "documents the reference's reader left out")
        for docs, side_notes, name, path in (
            (ref_docs, ref_notes, "reference", ref_path),
            (pred_docs, pred_notes, "prediction", pred_path),
        ):
            if not docs and side_notes.get("skipped"):
                raise nothing_left(name, side_notes, path)
        notes = {
            "reference": ref_notes,
            "predicted": pred_notes,
            "misaligned": misaligned_summary(ref_docs, pred_docs),
        }
        ref, pred = pair_documents(ref_docs, pred_docs, ref_path, pred_path)
        return DocumentsSource(ref, pred, selection, chunk, read=notes, levels=reading.level_names)

    @staticmethod
    def open_strings(
        reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
    ) -> DocumentsSource:
        """The reference read whole in its format, and ``predicted``'s mentions given as strings
        located in its documents' texts under ``reading.strings`` (``io.strings.locate``: a string
        found nowhere is appended to both texts, so that every criterion counts it as spurious)."""
        from .formats import read_documents
        from .strings import Located, StringPolicy, locate

        chunk = _check_chunk(chunk_bytes)
        ref_path = _path("reference", reference, reading)
        pred_path = _path("predicted", predicted, reading)
        ref_docs, _, _ = read_documents(reading.format, ref_path, reading.reference_options)
        policy = reading.strings if reading.strings is not None else StringPolicy()
        located = Located(policy)
        placed_ref, placed_pred = locate(
            ref_docs,
            _string_reader(reading.predicted_format)(pred_path, invalid=policy.invalid),
            policy,
            located,
            path=pred_path,
            named=frozenset(selection.types or ()) | {k for k, _ in selection.type_map},
        )
        ref, pred = pair_documents(placed_ref, placed_pred, ref_path, pred_path)
        own = {d.id: own_tokens(d) for d in ref_docs}
        return DocumentsSource(
            ref, pred, selection, chunk, located=located.to_dict(), tokens=tuple(own[d.id] for d in ref),
            classes=located.per_document(),
        )

    def for_workers(self, remote: bool) -> DocumentsSource:
        return self  # the documents travel with the source

    def size(self) -> int:
        return sum(len(d.text) + 1 for d in self.reference)

    def position(self, part: DocumentsPart) -> int:
        return part.position

    def units(self, part: DocumentsPart) -> int:
        return part.end - part.start

    def parts(self) -> Iterator[DocumentsPart]:
        start, size, read = 0, 0, 0
        for k, doc in enumerate(self.reference):
            weight = len(doc.text) + 1
            size += weight
            read += weight
            if size >= self.chunk_bytes or k + 1 - start >= self.per_part:
                yield DocumentsPart(start, k + 1, read)
                start, size = k + 1, 0
        if start < len(self.reference):
            yield DocumentsPart(start, len(self.reference), read)

    def load(self, part: DocumentsPart) -> ChunkData:
        start, end, _ = part
        own = None if self.tokens is None else sum(self.tokens[start:end])
        return _offset_chunk(
            self.reference[start:end], self.predicted[start:end], self.selection, ids=True, tokens=own,
            levels=self.levels,
        )


def _without(
    docs: list[Document], left_out: frozenset[str], other: list[Document], notes: dict[str, Any], what: str
) -> list[Document]:
    """``docs`` without those the other side's reader left out (a task without annotation, a
    rejected record) and does not hold otherwise: counted in ``notes``, not scored as missed or
    spurious."""
    if not left_out:
        return docs
    held = {d.id for d in other}
    kept = [d for d in docs if d.id not in left_out or d.id in held]
    if len(kept) < len(docs):
        skipped = notes.setdefault("skipped", {})
        skipped[what] = skipped.get(what, 0) + len(docs) - len(kept)
    return kept


def pair_documents(
    reference: Sequence[Document], predicted: Sequence[Document], reference_name: str, predicted_name: str
) -> tuple[tuple[Document, ...], tuple[Document, ...]]:
    """The reference's documents in order, and the prediction's in the same order, paired by id.

    Each side's ids must be unique, every document must be on both sides, and a pair's texts must
    be the same; errors name ``reference_name`` and ``predicted_name`` (the files or folders read),
    and the document's line where its format has lines.
    """
    for docs, name in ((reference, reference_name), (predicted, predicted_name)):
        seen: dict[str, Document] = {}
        for doc in docs:
            first = seen.setdefault(doc.id, doc)
            if first is not doc:
                also = f" also on line {first.line}" if first.line else " is given twice"
                raise InputError(f"document id {doc.id!r}{also}", path=name, line=doc.line or None)
    if not reference:
        raise InputError("no documents: nothing to score", path=reference_name)
    by_id = {d.id: d for d in predicted}
    missing = next((d for d in reference if d.id not in by_id), None)
    if missing is not None:
        raise InputError(
            f"document {missing.id!r} is missing from {predicted_name}", path=reference_name, line=missing.line or None
        )
    ids = {d.id for d in reference}
    extra = next((d for d in predicted if d.id not in ids), None)
    if extra is not None:
        raise InputError(
            f"document {extra.id!r} is not in {reference_name}", path=predicted_name, line=extra.line or None
        )
    paired = tuple(by_id[d.id] for d in reference)
    for doc, other in zip(reference, paired, strict=True):
        if other.text != doc.text:
            raise _text_differs(doc, other, reference_name, predicted_name)
    return tuple(reference), paired


# Every format's opener: (reference, predicted, reading, selection, chunk_bytes) -> Source.

Opener = Callable[[Any, Any, Reading, TypeSelection, int], Source]

OPENERS: dict[str, Opener] = {
    "conll": ConllSource.open,
    "jsonl": JsonlSource.open,
    "labels": LabelsSource.open,
    "spans": SpansSource.open,
    # Annotation tools' exports: ``io.formats.READERS`` reads each side, whole.
    **dict.fromkeys(ANNOTATION_FORMATS, DocumentsSource.open),
    # A prediction's format only: mentions given as strings, located in the reference.
    "strings": DocumentsSource.open_strings,
    "langextract": DocumentsSource.open_strings,
    "gliner": DocumentsSource.open_strings,
}


def _string_reader(name: str | None) -> Any:
    """The reader of a prediction format read as strings (``reading.MODEL_FORMATS``)."""
    if name == "langextract":
        from .formats.langextract import read_strings as read_langextract

        return read_langextract
    if name == "gliner":
        from .formats.gliner import read_strings as read_gliner

        return read_gliner
    from .strings import read_strings

    return read_strings


def open_source(
    reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
) -> Source:
    """The source that reads ``reference`` and ``predicted`` as ``reading`` says.

    Both sides in one format are opened by that format's opener; a prediction in a format of its
    own (``reading.predicted_format``) by that format's opener where it has one that reads a pair
    across formats ("strings"), and otherwise by reading both sides whole into documents paired by
    id (spanscore's JSONL too, even against JSONL: the report then says what each side's reader
    found)."""
    side = reading.predicted_format
    if side is None:
        opener = OPENERS[reading.format]
    elif side in TEXT_FORMATS:
        opener = DocumentsSource.open
    else:
        opener = OPENERS[side]
    return opener(reference, predicted, reading, selection, chunk_bytes)


__all__ = [
    "OPENERS",
    "ConllSource",
    "DocumentsPart",
    "DocumentsSource",
    "JsonlSource",
    "LabelsSource",
    "Opener",
    "ReadReference",
    "SpansSource",
    "TypeSelection",
    "open_source",
    "pair_documents",
]


def train_index(path: str | Path, reading: Reading, jobs: int = 1) -> TrainIndex | None:
    """The index of a training corpus in a CoNLL file, read in chunks, in ``jobs`` forked processes
    where there are several: first each chunk's mention keys, then, once every key is known, each
    chunk's occurrences of them (a chunk is parsed again rather than sent between processes).
    None where the file is not a plain CoNLL file, for the caller to read it as a reference."""
    if reading.format != "conll" or reading.merged or not isinstance(path, str | Path) or not os.path.isfile(path):
        return None
    if reading.levels:  # every level's mentions: read whole, as a reference
        return None
    from ..stages.buckets import build_index_parts, merge_keys, part_keys, part_occurrences

    chunks = list(iter_chunks(path, None))

    def read(chunk: Chunk) -> tuple[Any, ConllText]:
        table = parse_conll(
            _read(str(path), chunk.ref_start, chunk.ref_end),
            str(path),
            columns=(reading.label_column,),
            token_column=reading.token_column,
            delimiter=reading.delimiter,
            line_offset=chunk.ref_line,
            allow_empty=True,
            encoding=reading.encoding,
            header=reading.header and chunk.ref_line == 0,
        )
        spans, _ = decode_repaired(table, 0, reading.labels, reading.repair)
        return spans, ConllText(table, table.sentence_bounds)

    if jobs <= 1 or len(chunks) < 2 or not can_fork():
        parts = [read(c) for c in chunks]
        return build_index_parts(parts)

    def keys_of(chunk: Chunk) -> PartKeys:
        return part_keys(*read(chunk))

    # Folded as the workers send them: what waits is a few parts' distinct keys, not every part's.
    keyed = merge_keys(forked_map(keys_of, chunks, min(jobs, len(chunks))))

    def occurrences_of(chunk: Chunk) -> IntArray:
        return part_occurrences(read(chunk)[1], keyed)

    return keyed.index(list(forked_map(occurrences_of, chunks, min(jobs, len(chunks)))))
