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
from ..stages.documents import DocCounts, DocState, Histogram, TypeRows, compact_rows, scored_columns, scores_per_row
from ..stages.parts import ChunkData, PartResult
from ..stages.spans import IntArray
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
# documents' rows: additive state, merged like the counts. Each part's documents carry their
# field values where the part is counted (``part_labels``: the comment lines of the part's own
# bytes, or its JSONL documents' fields); the process that folds the parts gives each document
# its group (``Labels``: a document a chunk boundary cut takes the first value of all its
# pieces), turns the part's per-document rows into that state and drops them. So what is held
# follows the distinct rows of each group and the parts in flight, never the corpus's documents.

GROUPING = " by"  # the grouping's name among a state's groups (``buckets.group_name``): no field bucket's
_BLOCK = 1 << 18  # bytes of the reference decoded at a time (its lines' strings cost several times that)
LABELS = "\x1elabels\x1e"  # a part's field values among its ``PartResult.buckets``, before the field's name


@dataclass(frozen=True)
class FieldGroups:
    """Each document's group (its place in ``values``), in corpus order (``conll_field_groups``)."""

    field: str
    codes: npt.NDArray[np.int32]
    values: tuple[str, ...]


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


def _check_field(field: str, reference: Any, reading: Reading, asked: str) -> None:
    if reading.format not in ("jsonl", "conll") or reading.merged or not isinstance(reference, str | Path):
        raise OptionError(f"{asked} a document field is read from the reference given as a JSONL or CoNLL file")
    if not field or any(not part for part in field.split(".")):
        raise OptionError(f"--by names a field (source, or meta.year for a nested one), not {field!r}")


@dataclass
class Grouping:
    """A document field the documents are grouped by: its values in order of first appearance,
    found as the parts are folded (``FieldEngine``)."""

    field: str
    asked: str  # how a refusal names the option (``--by`` or ``--buckets``)
    values: list[str] = dataclasses.field(default_factory=list)

    def __reduce__(self) -> tuple[Any, ...]:
        # A counter sent to a worker goes without the values (only the folding process reads them).
        return (Grouping, (self.field, self.asked))


@dataclass(frozen=True)
class Groupings:
    """Every grouping of the documents by a field of the reference: ``--by``'s (named
    ``GROUPING``) and each bucket named by a document field (named by the field); a field both
    grouped by and bucketed is one ``Grouping``."""

    named: tuple[tuple[str, Grouping], ...]
    reference: str = ""
    reading: Reading | None = dataclasses.field(default=None, compare=False)
    # The fields' values by document id, where the reference's documents are held in memory
    # anyway (a JSONL reference against a prediction in another format): read there by id.
    by_id: dict[str, dict[str, str]] | None = dataclasses.field(default=None, compare=False, repr=False)

    def get(self, name: str) -> Grouping | None:
        return next((g for n, g in self.named if n == name), None)

    @property
    def fields(self) -> tuple[Grouping, ...]:
        """Each distinct field once, in order."""
        out: list[Grouping] = []
        for _, g in self.named:
            if all(g is not h for h in out):
                out.append(g)
        return tuple(out)

    def refusal(self, grouping: Grouping) -> OptionError:
        """The error of a field no document has, naming the fields there are."""
        reading = self.reading or Reading()
        present = document_fields(self.reference, reading.format, encoding=reading.encoding, header=reading.header)
        there = f"their fields are {', '.join(present)}" if present else "its documents have no fields"
        return OptionError(f"{grouping.asked} no document of {self.reference} has this field; {there}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Groupings, (self.named, self.reference, self.reading, self.by_id))


def field_groupings(
    reference: Any, by: str | None, fields: tuple[str, ...], reading: Reading, *, attributes: tuple[str, ...] = ()
) -> Groupings:
    """``--by``'s grouping and each bucket field's, checked (the reference must be a JSONL or
    CoNLL file); the values are read where each part is counted."""
    read: dict[str, Grouping] = {}
    named: list[tuple[str, Grouping]] = []
    for name, field in ([(GROUPING, by)] if by is not None else []) + [(f, f) for f in fields]:
        if name == GROUPING:
            asked = f"by (--by) {field!r}:"
        else:
            asked = f"buckets (--buckets) {field!r} is not an attribute ({', '.join(attributes)}), and"
        _check_field(field, reference, reading, asked)
        if field not in read:
            read[field] = Grouping(field, asked)
        named.append((name, read[field]))
    by_id = None
    if named and reading.format == "jsonl" and reading.predicted_format is not None:
        by_id = {field: field_values(reference, field, "jsonl") for field in read}
    return Groupings(tuple(named), str(reference), reading, by_id)


# A part's field values (``part_labels``), one ``TypeRows`` per field: ``keys`` the part's document
# keys, ``names`` the values, ``type_index`` each key's value, no statistics. Where a chunk
# boundary may cut a document (CoNLL -DOCSTART- documents), only the values found in the part's
# lines are given, every one in order (a document's first value is its own); elsewhere each
# document has one row, ``MISSING`` where it has no value.

_CACHE: list[tuple[tuple[Any, ...], dict[str, TypeRows]]] = []  # the last part's labels (systems of one reference)


def _rows(keys: list[int], values: list[str]) -> TypeRows:
    index: dict[str, int] = {}
    codes = [index.setdefault(v, len(index)) for v in values]
    none = np.zeros((len(keys), 0), dtype=np.int64)
    return TypeRows(np.asarray(keys, dtype=np.int64), np.asarray(codes, dtype=np.int64), tuple(index), none)


def part_labels(
    source: Any, part: Any, data: ChunkData, fields: tuple[str, ...], by_id: Any = None
) -> dict[str, TypeRows]:
    """Each field's values of the documents of one part, read from the part itself."""
    from ..io.sources import ConllSource, JsonlSource

    if isinstance(source, ConllSource):
        key = (source.reference, part.ref_start, part.ref_end, fields, data.doc_unit)
        if _CACHE and _CACHE[0][0] == key:
            return _CACHE[0][1]
        found = _conll_labels(source, part, data, fields)
        _CACHE[:] = [(key, found)]
        return found
    keys = data.doc_key.tolist()
    if isinstance(source, JsonlSource):
        from ..io.jsonl import parse_line

        objs = [parse_line(d.raw, source.reference, d.line) for d in part.reference]
        lines = [d.line for d in part.reference]
        return {
            f: _rows(keys, [_json_value(o, f, source.reference, n) for o, n in zip(objs, lines, strict=True)])
            for f in fields
        }
    ids = data.doc_ids or ()
    return {f: _rows(keys, [(by_id or {}).get(f, {}).get(i, MISSING) for i in ids]) for f in fields}


def _json_value(obj: dict[str, Any], field: str, path: str, line: int) -> str:
    value: Any = obj
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return MISSING
    if isinstance(value, str | int | float | bool):
        return str(value)
    why = f"field {field} holds a {type(value).__name__}: --by groups by a string, number or boolean"
    raise InputError(why, path=path, line=line)


def _conll_labels(source: Any, part: Any, data: ChunkData, fields: tuple[str, ...]) -> dict[str, TypeRows]:
    """The fields of a CoNLL part's comment lines, read as ``conll_field_values`` reads the
    whole file: a sentence's are the comments right before it (a part starts after a sentence
    break, where no comment is pending), a -DOCSTART- document's any in it (its first piece in
    the part is key 0, as the part's document keys count)."""
    reading = source.reading
    raw = source.reference_bytes(part)
    try:
        text = raw.decode(reading.encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not {reading.encoding} text ({exc.reason} at byte {part.ref_start + exc.start}):"
            " name its encoding with --encoding",
            path=source.reference,
        ) from None
    if part.ref_start == 0:
        text = text.removeprefix("\ufeff")
    if reading.header and part.ref_line == 0:
        first = text.splitlines(keepends=True)
        text = text[len(first[0]) if first else 0 :]
    text = text.replace("\r\n", "\n").removesuffix("\n")
    wanted = set(fields)
    keys: dict[str, list[int]] = {f: [] for f in fields}
    values: dict[str, list[str]] = {f: [] for f in fields}
    if data.doc_unit == "document":
        doc = 0
        for line in _marks(text):
            if line.startswith("-DOCSTART-"):
                doc += 1
            elif line.startswith("#"):
                found = _FIELD.match(line)
                if found is not None and found.group(1) in wanted:
                    keys[found.group(1)].append(doc)
                    values[found.group(1)].append(found.group(2))
        return {f: _rows(keys[f], values[f]) for f in fields}
    sentences: list[dict[str, str]] = []
    pending: dict[str, str] = {}
    in_sentence = False
    for line in _marks(text):
        found = _FIELD.match(line) if line.startswith("#") else None
        if found is not None and not in_sentence:
            pending.setdefault(found.group(1), found.group(2))
        elif not line.strip():
            if in_sentence:
                in_sentence, pending = False, {}
        elif found is None and not in_sentence:
            in_sentence = True
            sentences.append(pending)
    present = data.doc_key.tolist()  # sentences are keys 1 to n
    if len(sentences) != len(present):
        raise OptionError(
            f"the comment lines of {source.reference} from line {part.ref_line + 1} give {len(sentences)} sentences"
            f" and the counts {len(present)}: the comment lines could not be lined up with the sentences"
        )
    return {f: _rows(present, [s.get(f, MISSING) for s in sentences]) for f in fields}


@dataclass(frozen=True)
class FieldCounter(GroupCounter):
    """A counter whose parts' per-document rows ``FieldEngine`` folds into each group's state,
    each part carrying its documents' field values (``part_labels``); with buckets of mention
    attributes, each document's rows per bucket beside its rows per type (``GroupCounter``),
    for the buckets' state."""

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
            # Else compact already (``Wanted.narrow``).
            stats = compact_rows(docs.stats) if self.wanted.buckets or not self.wanted.narrow else docs.stats
            part = dataclasses.replace(part, docs=dataclasses.replace(docs, stats=stats, type_rows=rows))
        elif docs is not None and not self.wanted.narrow and not self.wanted.buckets:
            # Rows of every statistic (for a per-document file): sent back compact too.
            part = dataclasses.replace(part, docs=dataclasses.replace(docs, stats=compact_rows(docs.stats)))
        return _labelled(part, self.source, item, data, self.groups)


def _labelled(part: PartResult, source: Any, item: Numbered, data: ChunkData, groups: Groupings | None) -> PartResult:
    if groups is None or not groups.named:
        return part
    fields = tuple(g.field for g in groups.fields)
    labels = part_labels(source, item.part, data, fields, groups.by_id)
    return dataclasses.replace(part, buckets={**part.buckets, **{LABELS + f: rows for f, rows in labels.items()}})


@dataclass(frozen=True)
class LabelledCounter(GroupCounter):
    """``GroupCounter`` whose parts carry their documents' field values (``part_labels``), for
    ``compare`` by a document field (``buckets.run_grouped``)."""

    groups: Groupings | None = dataclasses.field(default=None, compare=False, repr=False)

    def count(self, item: Numbered, data: ChunkData) -> PartResult:
        return _labelled(super().count(item, data), self.source, item, data, self.groups)


def take_labels(part: PartResult) -> tuple[PartResult, dict[str, TypeRows]]:
    """A part's field values (``part_labels``), and the part without them."""
    if not any(name.startswith(LABELS) for name in part.buckets):
        return part, {}
    labels = {n[len(LABELS) :]: rows for n, rows in part.buckets.items() if n.startswith(LABELS)}
    kept = {n: rows for n, rows in part.buckets.items() if not n.startswith(LABELS)}
    return dataclasses.replace(part, buckets=kept), labels


_Held = tuple[PartResult, IntArray, list[tuple[IntArray, list[str]]]]  # a part, its global keys, each field's values
Ready = tuple[PartResult, IntArray, list[IntArray]]  # a part, its documents' global keys, each field's codes


class Labels:
    """Each document's value of every field, from its parts' labels in corpus order
    (``part_labels``). Where a chunk boundary may cut a document (``pieces``), the last document
    of a part is open: its value is the first one found in any of its pieces, and a part whose
    open document has none yet waits until a later piece gives one or the document ends (a
    -DOCSTART- line). Parts come out in order, each with every field's group codes per
    document; the codes number the values in order of first appearance (``values``)."""

    def __init__(self, fields: tuple[str, ...], *, pieces: bool) -> None:
        self.fields = fields
        self.pieces = pieces
        self.index: list[dict[str, int]] = [{} for _ in fields]
        self.values: list[list[str]] = [[] for _ in fields]
        self.open_key = 0  # where documents are cut: the global key of the document that may go on
        self.open: list[str | None] = [None for _ in fields]
        self.held: list[_Held] = []
        self.offset = 0

    def add(self, part: PartResult, labels: dict[str, TypeRows]) -> Iterator[Ready]:
        """The parts that are ready, ``part`` among them unless it waits."""
        offset, self.offset = self.offset, self.offset + part.doc_advance
        docs = part.docs
        keys = np.zeros(0, dtype=np.int64) if docs is None else docs.keys + offset
        mine: list[tuple[IntArray, list[str]]] = []
        firsts = []
        for k, f in enumerate(self.fields):
            rows = labels.get(f)
            names = [] if rows is None else list(rows.names)
            ek = np.zeros(0, dtype=np.int64) if rows is None else rows.keys + offset
            distinct, at = np.unique(ek, return_index=True)  # each key's first value
            codes = np.zeros(0, dtype=np.int64) if rows is None else rows.type_index[at]
            firsts.append((distinct, codes, names))
            if self.pieces and self.open[k] is None:
                hit = np.flatnonzero(distinct == self.open_key)
                if hit.shape[0]:
                    self.open[k] = names[int(codes[hit[0]])]
        closes = self.pieces and part.doc_advance > 0
        if self.pieces and (closes or all(v is not None for v in self.open)):
            yield from self._release([v if v is not None else MISSING for v in self.open])
        for k, (distinct, codes, names) in enumerate(firsts):
            pos = np.minimum(np.searchsorted(distinct, keys), max(distinct.shape[0] - 1, 0))
            hit = (distinct[pos] == keys) if distinct.shape[0] else np.zeros(keys.shape[0], dtype=bool)
            names = [*names, MISSING]
            local = np.where(hit, codes[pos] if codes.shape[0] else 0, len(names) - 1)
            if self.pieces:
                value = self.open[k]
                if value is not None or closes:
                    names.append(MISSING if value is None else value)
                    local[keys == self.open_key] = len(names) - 1
                else:
                    local[keys == self.open_key] = -1
            mine.append((local, names))
        if closes:
            self.open_key = offset + part.doc_advance
            self.open = [None for _ in self.fields]
            for k, (distinct, codes, names) in enumerate(firsts):
                hit = np.flatnonzero(distinct == self.open_key)
                if hit.shape[0]:
                    self.open[k] = names[int(codes[hit[0]])]
            for k, (local, _) in enumerate(mine):
                if self.open[k] is None:
                    local[keys == self.open_key] = -1
        self.held.append((part, keys, mine))
        if not any(bool((local < 0).any()) for _, _, waiting in self.held for local, _ in waiting):
            yield from self._release([MISSING for _ in self.fields])

    def close(self) -> Iterator[Ready]:
        """The parts still waiting: the last document has ended."""
        yield from self._release([v if v is not None else MISSING for v in self.open])

    def _release(self, open_values: list[str]) -> Iterator[Ready]:
        held, self.held = self.held, []
        for part, keys, mine in held:
            out = []
            for k, (local, names) in enumerate(mine):
                if bool((local < 0).any()):
                    local = np.where(local < 0, len(names), local)
                    names = [*names, open_values[k]]
                out.append(self._codes(k, local, names))
            yield part, keys, out

    def _codes(self, k: int, local: IntArray, names: list[str]) -> IntArray:
        """Local value numbers as the field's codes, new values numbered in order of appearance."""
        if not local.shape[0]:
            return local
        present, first = np.unique(local, return_index=True)
        lookup = np.zeros(len(names), dtype=np.int64)
        index, values = self.index[k], self.values[k]
        for c in present[np.argsort(first, kind="stable")].tolist():
            name = names[c]
            if name not in index:
                index[name] = len(values)
                values.append(name)
            lookup[c] = index[name]
        out: IntArray = lookup[local]
        return out

    def note(self, values: list[list[str]]) -> None:
        """Each field's values of documents given elsewhere (paired where their part was
        counted), new ones numbered after those known."""
        for index, known, found in zip(self.index, self.values, values, strict=True):
            for name in found:
                if name not in index:
                    index[name] = len(known)
                    known.append(name)

    def waiting_from(self) -> int | None:
        """The global key of the first document of the first part waiting, if any."""
        for _, keys, _ in self.held:
            if keys.shape[0]:
                return int(keys[0])
        return None


def cut_documents(source: Any) -> bool:
    """Whether a chunk boundary may cut the documents of ``source`` in two (CoNLL -DOCSTART-
    documents: their field values may lie in any piece)."""
    from ..io.sources import ConllSource

    return isinstance(source, ConllSource) and source.by_documents_cached


@dataclass(frozen=True)
class FieldEngine:
    """``inner``'s results with each part's per-document rows turned into additive state
    (``DocState``): the corpus's histogram, each type's and each bucket's where they were
    counted, and each group of each grouping (``buckets.group_name(grouping, value)``), the rows
    then dropped."""

    inner: Engine
    groups: Groupings
    # Where the parts' rows hold every statistic (not ``Wanted.narrow``): each part's rows are
    # handed to ``sink`` (``presentation.documents.DocumentWriter``) before the state is made of
    # the columns scores read.
    sink: Any = None

    def results(self, counter: PartCounter, progress: Progress | None) -> Iterator[PartResult]:
        named = self.groups.named
        if not named:
            yield from self.inner.results(counter, progress)
            return
        fields = self.groups.fields
        labels = Labels(tuple(g.field for g in fields), pieces=cut_documents(counter.source))
        place = {id(g): k for k, g in enumerate(fields)}
        scaled = counter.options.credit in ("dice", "iou")
        for part in self.inner.results(counter, progress):
            part, found = take_labels(part)
            for ready, keys, codes in labels.add(part, found):
                yield self._state(self._written(ready, keys, scaled), codes, labels, place)
        for ready, keys, codes in labels.close():
            yield self._state(self._written(ready, keys, scaled), codes, labels, place)
        for k, g in enumerate(fields):
            g.values[:] = labels.values[k]
            if g.values == [MISSING]:
                raise self.groups.refusal(g)

    def _written(self, part: PartResult, keys: IntArray, scaled: bool) -> PartResult:
        """The part's rows handed to ``sink``, and kept as what the narrow count gives."""
        docs = part.docs
        if self.sink is None or docs is None:
            return part
        offset = int(keys[0] - docs.keys[0]) if keys.shape[0] else 0
        self.sink.add(docs, offset, part.discontinuous)
        narrow = docs.narrowed(scored_columns(docs.fields, scaled=scaled))
        narrow.stats = compact_rows(narrow.stats)
        return dataclasses.replace(part, docs=narrow)

    def _state(self, part: PartResult, codes: list[IntArray], labels: Labels, place: dict[int, int]) -> PartResult:
        docs = part.docs
        if docs is None or not docs.keys.shape[0]:
            return dataclasses.replace(part, docs=None)
        mine = []
        for grouping, g in self.groups.named:
            k = place[id(g)]
            names = tuple(group_name(grouping, v) for v in labels.values[k])
            mine.append(TypeRows(docs.keys, codes[k], names, docs.stats))
        return dataclasses.replace(part, docs=None, state=_state(docs, mine))


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
