"""Scores by a document field: each group of documents scored under every criterion.

A JSONL document may carry fields beside its text and spans (``"source": "twitter"``, or nested,
``"meta": {"year": 2016}``, named ``meta.year``); a CoNLL document, in comment lines
(``# source = twitter``). ``field_values`` reads one field of every document of the reference
file; ``by_field`` sums the per-document counts of each value's documents and scores them, so a
breakdown costs no new matching. Documents without the field form the group ``(missing)``.

>>> import numpy as np
>>> fields = ("reference", "predicted", "x.full_ref", "x.partial_ref", "x.full_pred", "x.partial_pred",
...           "token.true_positive", "token.reference", "token.predicted")
>>> rows = np.array([[1, 1, 1, 0, 1, 0, 2, 2, 2], [1, 1, 0, 0, 0, 0, 0, 1, 1], [2, 2, 2, 0, 2, 0, 3, 3, 3]])
>>> docs = DocCounts(np.arange(3), rows, fields, ids=["a", "b", "c"])
>>> groups = by_field(docs, {"a": "news", "b": "web", "c": "news"}, field="source", zero_division=0.0, credit="0.5")
>>> [(g["value"], g["documents"], g["scores"]["x"]["f1"]) for g in groups["groups"]]
[('news', 2, 1.0), ('web', 1, 0.0)]
"""

from __future__ import annotations

import codecs
import dataclasses
import re
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..engines.local import Engine, Numbered, PartCounter, Progress
from ..errors import InputError, OptionError
from ..io.files import open_input, read_bytes
from ..io.reading import Reading
from ..stages.documents import DocCounts, DocState, Histogram, TypeRows, compact_rows, scores_per_row
from ..stages.parts import ChunkData, PartResult
from .buckets import GroupCounter, group_name
from .significance import Resampling, bootstrap

MISSING = "(missing)"


def group_values(reference: Any, field: str, reading: Reading, *, attributes: tuple[str, ...] = ()) -> dict[str, str]:
    """The value of ``field`` of each document of the reference, for ``evaluate(by=field)``, or for
    a bucket name that is none of ``attributes`` (so a document field). A field that no document
    has is refused, naming the fields there are: a misspelt name would otherwise give one silent
    ``(missing)`` group."""
    if attributes:
        asked = f"buckets (--buckets) {field!r} is not an attribute ({', '.join(attributes)}), and"
    else:
        asked = f"by (--by) {field!r}:"
    if reading.format not in ("jsonl", "conll") or reading.merged or not isinstance(reference, str | Path):
        raise OptionError(f"{asked} a document field is read from the reference given as a JSONL or CoNLL file")
    values = field_values(reference, field, reading.format, encoding=reading.encoding, header=reading.header)
    if values and all(v == MISSING for v in values.values()):
        present = document_fields(reference, reading.format, encoding=reading.encoding, header=reading.header)
        there = f"their fields are {', '.join(present)}" if present else "its documents have no fields"
        raise OptionError(f"{asked} no document of {reference} has this field; {there}")
    return values


def document_fields(
    path: str | Path, format: str = "jsonl", *, encoding: str = "utf-8", header: bool = False
) -> list[str]:
    """The fields the documents of a file have, sorted: JSONL keys beside id, text and spans
    (nested objects' keys dotted), CoNLL comment fields (``# source = twitter``)."""
    found: set[str] = set()
    if format == "conll":
        try:
            lines = _conll_lines(path, encoding, header)
        except (OSError, InputError):
            return []
        for line in lines:
            match = _FIELD.match(line) if line.startswith("#") else None
            if match is not None:
                found.add(match.group(1))
        return sorted(found)

    def walk(obj: dict[str, Any], prefix: str) -> None:
        for key, value in obj.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                found.add(f"{prefix}{key}")

    from ..io.jsonl import json_objects  # where documents are JSONL: a CoNLL breakdown starts without it

    for _, obj in json_objects(path):
        walk({k: v for k, v in obj.items() if k not in ("id", "text", "spans")}, "")
    return sorted(found)


def field_values(
    path: str | Path, field: str, format: str = "jsonl", *, encoding: str = "utf-8", header: bool = False
) -> dict[str, str]:
    """Each document's value of ``field``, by the document's name in ``DocCounts.names()``: its id
    in JSONL (dotted fields for nested objects), its number in CoNLL (``conll_field_values``)."""
    if not field or any(not part for part in field.split(".")):
        raise OptionError(f"--by names a field (source, or meta.year for a nested one), not {field!r}")
    if format == "conll":
        return conll_field_values(path, field, encoding=encoding, header=header)
    from ..io.jsonl import json_objects  # where documents are JSONL: a CoNLL breakdown starts without it

    out: dict[str, str] = {}
    for line, obj in json_objects(path):
        value: Any = obj
        for part in field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            text = MISSING
        elif isinstance(value, str | int | float | bool):
            text = str(value)
        else:
            raise InputError(
                f"field {field} holds a {type(value).__name__}: --by groups by a string, number or boolean",
                path=str(path),
                line=line,
            )
        out[str(obj.get("id"))] = text
    return out


_FIELD = re.compile(r"^#\s*([^\s=]+)\s*=\s*(.*?)\s*$")


def _conll_lines(path: str | Path, encoding: str, header: bool) -> list[str]:
    """The lines of a CoNLL file as the reader sees them: in its encoding, without a byte order
    mark, without the header line that names the columns (``Reading.header``)."""
    try:
        text = read_bytes(path).decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not {encoding} text ({exc.reason} at byte {exc.start}): name its encoding with --encoding",
            path=str(path),
        ) from None
    lines = text.removeprefix("\ufeff").splitlines()
    return lines[1:] if header else lines


def conll_field_values(
    path: str | Path, field: str, *, encoding: str = "utf-8", header: bool = False
) -> dict[str, str]:
    """Fields of CoNLL comment lines (``# source = twitter``), by document number from 1.

    With -DOCSTART- lines, a document's fields are the comments anywhere in it (the first value of
    a field counts); without, each sentence is a document and its fields are the comments right
    before it, as in CoNLL-U (``# sent_id = 3``). Documents without sentences are not counted,
    as the per-document counts do not hold them."""
    lines = _conll_lines(path, encoding, header)
    out: dict[str, str] = {}
    fields: dict[str, str] = {}
    in_sentence = has_sentence = False
    if any(line.startswith("-DOCSTART-") for line in lines):
        number = 0

        def close() -> None:
            nonlocal number
            if has_sentence:
                number += 1
                out[str(number)] = fields.get(field, MISSING)

        for line in lines:
            found = _FIELD.match(line) if line.startswith("#") else None
            if line.startswith("-DOCSTART-"):
                close()
                fields, has_sentence = {}, False
            elif found is not None:
                fields.setdefault(found.group(1), found.group(2))
            elif line.strip():
                has_sentence = True
        close()
        return out
    for line in lines:
        found = _FIELD.match(line) if line.startswith("#") else None
        if found is not None and not in_sentence:
            fields.setdefault(found.group(1), found.group(2))
        elif not line.strip():
            if in_sentence:
                in_sentence, fields = False, {}
        elif found is None and not in_sentence:
            in_sentence = True
            out[str(len(out) + 1)] = fields.get(field, MISSING)
    return out


def by_field(
    docs: DocCounts, values: dict[str, str], *, field: str, zero_division: float, credit: str
) -> dict[str, Any]:
    """Every score of each group of documents, groups in order of first appearance."""
    names = docs.names()
    if docs.ids is None and len(values) != len(names):
        raise OptionError(
            f"--by found {len(values)} {docs.unit}s in the reference and the counts {len(names)}: the comment"
            " lines could not be lined up with the documents"
        )
    groups: dict[str, list[int]] = {}
    for row, name in enumerate(names):
        groups.setdefault(values.get(name, MISSING), []).append(row)
    out = []
    for value, rows in groups.items():
        total = docs.stats[rows].sum(axis=0)[None, :]
        view = DocCounts(np.zeros(1, dtype=np.int64), total, docs.fields)
        scores = scores_per_row(view, zero_division, credit)
        out.append(
            {
                "value": value,
                "documents": len(rows),
                "reference_mentions": int(view.column("reference")[0]),
                "predicted_mentions": int(view.column("predicted")[0]),
                "scores": {name: {m: float(block[m][0]) for m in block} for name, block in scores.items()},
            }
        )
    return {"field": field, "groups": out}


def group_rows(docs: DocCounts, values: dict[str, str], value: str) -> DocCounts:
    """The rows of one group's documents (for its intervals)."""
    rows = [k for k, name in enumerate(docs.names()) if values.get(name, MISSING) == value]
    ids = None if docs.ids is None else [docs.ids[k] for k in rows]
    return DocCounts(docs.keys[rows], docs.stats[rows], docs.fields, ids, docs.unit)


def breakdown(
    docs: DocCounts,
    values: dict[str, str],
    *,
    field: str,
    zero_division: float,
    credit: str,
    beta: float = 1.0,
    resampling: Resampling | None = None,
) -> dict[str, Any]:
    """``by_field``, with each group's intervals where ``resampling`` is given (``Report.breakdown``)."""
    out = by_field(docs, values, field=field, zero_division=zero_division, credit=credit)
    if resampling is not None:
        for group in out["groups"]:
            group["intervals"] = bootstrap(
                group_rows(docs, values, group["value"]),
                zero_division=zero_division,
                credit=credit,
                resampling=resampling,
                beta=beta,
            )
    return out


# Streaming groups ---------------------------------------------------------------------------
#
# A breakdown needs, of each group, its totals and (for intervals) the histogram of its
# documents' rows: additive state, merged like the counts. The reference's field is read once,
# streaming, into one small integer per document (``FieldGroups``); each part's per-document rows
# are then turned into that state as the part comes back from its worker and dropped, so what is
# held follows the distinct rows of each group, never the corpus's documents.

GROUPING = " by"  # the grouping's name among a state's groups (``buckets.group_name``): no field bucket's
_BLOCK = 1 << 18  # bytes of the reference decoded at a time (its lines' strings cost several times that)


@dataclass(frozen=True)
class FieldGroups:
    """Each counted document's group (its place in ``values``), in corpus order, and with JSONL
    each document's id checksum (``ids``) to check the rows line up with the documents."""

    field: str
    codes: npt.NDArray[np.int32]
    values: tuple[str, ...]
    ids: npt.NDArray[np.uint32] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # Only the process that folds the parts reads the groups: a counter sent to a worker
        # (``FieldCounter``) goes without them.
        return (FieldGroups, (self.field, np.zeros(0, dtype=np.int32), self.values))


def _coded(values: Iterator[str]) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    index: dict[str, int] = {}
    codes = array("i", (index.setdefault(v, len(index)) for v in values))
    return np.frombuffer(codes, dtype=np.int32).copy(), tuple(index)


# Line breaks other than "\n" (and "\r\n"), as ``str.splitlines`` finds them.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A line that is not a token line: a comment, a -DOCSTART- line, a blank line.
_NOT_TOKENS = re.compile(r"^(?:#[^\n]*|-DOCSTART-[^\n]*|[^\S\n]*)$", re.M)


def _marks(text: str) -> Iterator[str]:
    """The lines of ``text`` (whole lines) that can change what document or sentence a line
    belongs to, or its fields: every line but a token line that follows another (a run of token
    lines is one sentence, its first line says all)."""
    if _OTHER_BREAKS.search(text):
        previous_token = False
        for line in text.splitlines():
            token = bool(line.strip()) and not line.startswith(("#", "-DOCSTART-"))
            if not (token and previous_token):
                yield line
            previous_token = token
        return
    at = 0
    for found in _NOT_TOKENS.finditer(text):
        if found.start() > at:  # the token lines between two marks: their first one
            end = text.find("\n", at)
            yield text[at : found.start() - 1 if end < 0 or end >= found.start() else end]
        yield found.group()
        at = found.end() + 1
    if at < len(text):
        end = text.find("\n", at)
        yield text[at : len(text) if end < 0 else end]


def _conll_stream(path: str | Path, encoding: str, header: bool) -> Iterator[str]:
    """``_conll_lines``'s lines a block at a time (the file is never held whole), a run of token
    lines given by its first line only (``_marks``)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    first, at = True, 0
    with open_input(path) as handle:
        tail = ""
        while True:
            block = handle.read(_BLOCK)
            try:
                text = tail + decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not {encoding} text ({exc.reason} at byte {at + exc.start}): name its encoding with --encoding",
                    path=str(path),
                ) from None
            at += len(block)
            if first and text:
                text, first = text.removeprefix("\ufeff"), False
                if header:
                    lines = text.splitlines(keepends=True)
                    if len(lines) < 2 and block:  # the header line goes on in the next block
                        tail, first = text, True
                        continue
                    text, header = text[len(lines[0]) if lines else 0 :], False
            # The last line may go on in the next block: the block ends after its last "\n" (or
            # last "\r" but a final one, which may open a "\r\n").
            cut = len(text)
            if block:
                cut = text.rfind("\n") + 1 or text.rfind("\r", 0, len(text) - 1) + 1
            text, tail = text[:cut].replace("\r\n", "\n"), text[cut:]
            if text:
                yield from _marks(text.removesuffix("\n"))
            if not block:
                break


def conll_field_groups(path: str | Path, field: str, *, encoding: str = "utf-8", header: bool = False) -> FieldGroups:
    """``conll_field_values`` as ``FieldGroups``, the file read once as it streams: each document's
    value is found both as if the file had -DOCSTART- lines and as if not, and the reading that
    fits the file kept."""
    by_doc = array("i")
    doc_index: dict[str, int] = {}
    by_sentence = array("i")
    sentence_index: dict[str, int] = {}
    docstart = False
    doc_fields: dict[str, str] = {}
    sentence_fields: dict[str, str] = {}
    in_sentence = doc_has_sentence = False
    for line in _conll_stream(path, encoding, header):
        found = _FIELD.match(line) if line.startswith("#") else None
        # As -DOCSTART- documents.
        if line.startswith("-DOCSTART-"):
            if doc_has_sentence:
                by_doc.append(doc_index.setdefault(doc_fields.get(field, MISSING), len(doc_index)))
            docstart, doc_fields, doc_has_sentence = True, {}, False
        elif found is not None:
            doc_fields.setdefault(found.group(1), found.group(2))
        elif line.strip():
            doc_has_sentence = True
        # As sentences (CoNLL-U).
        if docstart:
            continue
        if found is not None and not in_sentence:
            sentence_fields.setdefault(found.group(1), found.group(2))
        elif not line.strip():
            if in_sentence:
                in_sentence, sentence_fields = False, {}
        elif found is None and not in_sentence:
            in_sentence = True
            by_sentence.append(sentence_index.setdefault(sentence_fields.get(field, MISSING), len(sentence_index)))
    if docstart:
        if doc_has_sentence:
            by_doc.append(doc_index.setdefault(doc_fields.get(field, MISSING), len(doc_index)))
        return FieldGroups(field, np.frombuffer(by_doc, dtype=np.int32).copy(), tuple(doc_index))
    return FieldGroups(field, np.frombuffer(by_sentence, dtype=np.int32).copy(), tuple(sentence_index))


def jsonl_field_groups(path: str | Path, field: str) -> FieldGroups:
    """``field_values`` of a JSONL file as ``FieldGroups``, in file order, with each id's checksum."""
    values = field_values(path, field, "jsonl")  # keyed by id, so also ids in file order
    codes, names = _coded(iter(values.values()))
    ids = np.fromiter((zlib.crc32(k.encode("utf-8")) for k in values), dtype=np.uint32, count=len(values))
    return FieldGroups(field, codes, names, ids)


def field_groups(
    reference: Any, field: str, reading: Reading, *, attributes: tuple[str, ...] = ()
) -> FieldGroups:
    """``group_values`` as ``FieldGroups`` (``evaluate(by=field)``, or a bucket named by a document
    field where ``attributes`` are given), refused as it refuses."""
    if attributes:
        asked = f"buckets (--buckets) {field!r} is not an attribute ({', '.join(attributes)}), and"
    else:
        asked = f"by (--by) {field!r}:"
    if reading.format not in ("jsonl", "conll") or reading.merged or not isinstance(reference, str | Path):
        raise OptionError(f"{asked} a document field is read from the reference given as a JSONL or CoNLL file")
    if not field or any(not part for part in field.split(".")):
        raise OptionError(f"--by names a field (source, or meta.year for a nested one), not {field!r}")
    if reading.format == "conll":
        groups = conll_field_groups(reference, field, encoding=reading.encoding, header=reading.header)
    else:
        groups = jsonl_field_groups(reference, field)
    if groups.codes.shape[0] and groups.values == (MISSING,):
        present = document_fields(reference, reading.format, encoding=reading.encoding, header=reading.header)
        there = f"their fields are {', '.join(present)}" if present else "its documents have no fields"
        raise OptionError(f"{asked} no document of {reference} has this field; {there}")
    return groups


@dataclass(frozen=True)
class Groupings:
    """Every grouping of the documents by a field of the reference: ``--by``'s (named
    ``GROUPING``) and each bucket named by a document field (named by the field)."""

    named: tuple[tuple[str, FieldGroups], ...]

    def get(self, name: str) -> FieldGroups | None:
        return next((g for n, g in self.named if n == name), None)


def field_groupings(
    reference: Any, by: str | None, fields: tuple[str, ...], reading: Reading, *, attributes: tuple[str, ...] = ()
) -> Groupings:
    """``field_groups`` of ``by`` and of each bucket field, each field read once as the reference
    streams (a field both grouped by and bucketed is read once)."""
    read: dict[str, FieldGroups] = {}
    named: list[tuple[str, FieldGroups]] = []
    if by is not None:
        read[by] = field_groups(reference, by, reading)
        named.append((GROUPING, read[by]))
    for field in fields:
        if field not in read:
            read[field] = field_groups(reference, field, reading, attributes=attributes)
        named.append((field, read[field]))
    return Groupings(tuple(named))


@dataclass(frozen=True)
class FieldCounter(GroupCounter):
    """A counter whose parts' per-document rows ``FieldEngine`` folds into each group's state;
    with buckets of mention attributes, each document's rows per bucket beside its rows per type
    (``GroupCounter``), for the buckets' state."""

    groups: Groupings | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.wanted.buckets:  # counted narrow, as ``GroupCounter`` counts
            object.__setattr__(self, "wanted", dataclasses.replace(self.wanted, scored_groups=True))

    def count(self, item: Numbered, data: ChunkData) -> PartResult:
        part = super().count(item, data) if self.wanted.buckets else PartCounter.count(self, item, data)
        docs = part.docs
        if docs is not None and docs.type_rows is not None:
            # Sent back in the narrowest integers that hold them (a document's counts of one type
            # are small), as the per-document rows are (``Wanted.narrow``), in document order
            # (a grouping's rows follow the types').
            rows = docs.type_rows
            keys = rows.keys
            if keys.shape[0] > 1 and not bool((keys[1:] >= keys[:-1]).all()):
                order = np.argsort(keys, kind="stable")
                rows = TypeRows(keys[order], rows.type_index[order], rows.names, rows.stats[order])
            rows = dataclasses.replace(rows, stats=compact_rows(rows.stats))
            stats = compact_rows(docs.stats) if self.wanted.buckets else docs.stats  # else compact already
            part = dataclasses.replace(part, docs=dataclasses.replace(docs, stats=stats, type_rows=rows))
        return part


@dataclass(frozen=True)
class FieldEngine:
    """``inner``'s results with each part's per-document rows turned into additive state
    (``DocState``): the corpus's histogram, each type's and each bucket's where they were
    counted, and each group of each grouping (``buckets.group_name(grouping, value)``), the rows
    then dropped."""

    inner: Engine
    groups: Groupings | FieldGroups  # a bare ``FieldGroups``: ``--by``'s alone

    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        named = self.groups.named if isinstance(self.groups, Groupings) else ((GROUPING, self.groups),)
        if not named:
            yield from self.inner.results(counter, progress)
            return
        g = named[0][1]  # every grouping has one code per document of the same reference
        names = [tuple(group_name(grouping, v) for v in fg.values) for grouping, fg in named]
        offset = seen = 0  # where the part's keys start; documents before it
        last = -1  # the global key of the last document so far
        for part in self.inner.results(counter, progress):
            docs = part.docs
            if docs is not None and docs.keys.shape[0]:
                keys = docs.keys + offset
                # A document a chunk boundary cut in two is one document, in one group.
                start = seen - 1 if keys[0] == last else seen
                rows = start + np.arange(keys.shape[0])
                seen, last = int(rows[-1]) + 1, int(keys[-1])
                if seen > g.codes.shape[0]:
                    raise _misaligned(g.codes.shape[0], seen, docs.unit)
                if g.ids is not None and docs.ids is not None:
                    sums = np.fromiter((zlib.crc32(k.encode("utf-8")) for k in docs.ids), dtype=np.uint32)
                    if not np.array_equal(sums, g.ids[rows]):
                        raise RuntimeError("spanscore bug: the per-document counts are not in the reference's order")
                mine = [
                    TypeRows(docs.keys, fg.codes[rows].astype(np.int64), n, docs.stats)
                    for (_, fg), n in zip(named, names, strict=True)
                ]
                part = dataclasses.replace(part, docs=None, state=_state(docs, mine))
            offset += part.doc_advance
            yield part
        if g.ids is None and seen != g.codes.shape[0]:
            raise _misaligned(g.codes.shape[0], seen, "document")


_SLICE = 8192  # documents made into state at a time (a Dask partition holds tens of thousands)


def _state(docs: DocCounts, groupings: list[TypeRows]) -> DocState:
    """The state of a part's documents, with each one's row in its group of each grouping
    (``groupings``, a row per document each) beside its rows per type; made a slice of documents
    at a time, so the temporaries stay small."""
    out: DocState | None = None
    types = docs.type_rows
    n = docs.keys.shape[0]
    for a in range(0, n, _SLICE):
        b = min(n, a + _SLICE)
        pieces = [TypeRows(g.keys[a:b], g.type_index[a:b], g.names, g.stats[a:b]) for g in groupings]
        if types is not None:  # a document's rows per type follow its key (two where a chunk cut it)
            lo = int(np.searchsorted(types.keys, docs.keys[a], "left"))
            hi = int(np.searchsorted(types.keys, docs.keys[b - 1], "right"))
            pieces.insert(0, TypeRows(types.keys[lo:hi], types.type_index[lo:hi], types.names, types.stats[lo:hi]))
        starts = np.cumsum([0] + [len(r.names) for r in pieces]).tolist()
        rows = TypeRows(
            np.concatenate([r.keys for r in pieces]),
            np.concatenate([r.type_index + s for r, s in zip(pieces, starts, strict=False)]),
            tuple(name for r in pieces for name in r.names),
            np.concatenate([r.stats for r in pieces]),
        )
        piece = DocCounts(docs.keys[a:b], docs.stats[a:b], docs.fields, None, docs.unit, rows)
        state = DocState.of(piece)
        out = state if out is None else out.then(state, 0)
    if out is None:
        raise RuntimeError("spanscore bug: a part's state asked for without documents")
    return out


def _misaligned(found: int, counted: int, unit: str) -> OptionError:
    return OptionError(
        f"--by found {found} {unit}s in the reference and the counts {counted}: the comment"
        " lines could not be lined up with the documents"
    )


def state_breakdown(
    groups: dict[str, Histogram],
    values: tuple[str, ...],
    *,
    field: str,
    zero_division: float,
    credit: str,
    beta: float = 1.0,
    resampling: Resampling | None = None,
) -> dict[str, Any]:
    """``breakdown`` from each group's histogram of its documents' rows (``FieldEngine``): the
    same numbers, groups in order of first appearance."""
    out = []
    for value in values:
        hist = groups.get(value)
        if hist is None:
            continue
        total = hist.total().astype(np.int64)[None, :]
        view = DocCounts(np.zeros(1, dtype=np.int64), total, hist.fields)
        scores = scores_per_row(view, zero_division, credit)
        group: dict[str, Any] = {
            "value": value,
            "documents": hist.documents,
            "reference_mentions": int(view.column("reference")[0]),
            "predicted_mentions": int(view.column("predicted")[0]),
            "scores": {name: {m: float(block[m][0]) for m in block} for name, block in scores.items()},
        }
        if resampling is not None:
            group["intervals"] = bootstrap(
                hist, zero_division=zero_division, credit=credit, resampling=resampling, beta=beta
            )
        out.append(group)
    return {"field": field, "groups": out}
