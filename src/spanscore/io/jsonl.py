"""JSONL with character offsets: one document per line.

``{"id": "d1", "text": "...", "spans": [{"start": 0, "end": 5, "label": "PER"}]}``; ``end`` is
exclusive, spans may overlap or nest. Every problem is reported with its file and line.
"""

from __future__ import annotations

import array
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from .document import Document
from .files import atomic_output, open_input


def json_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each non-blank line, read a line at a time.

    Lines end at "\\n" alone: U+2028, U+0085 and the like are characters inside JSON strings. A
    UTF-8 byte order mark at the start is skipped.
    """
    with open_input(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if raw.strip():
                yield number, raw


def parse_line(raw: bytes, path: str, line: int) -> dict[str, Any]:
    """One line's JSON object; anything else is an InputError naming the file and line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8", path=path, line=line
        ) from None
    if text.lstrip().startswith("["):
        raise InputError(
            "a JSON array, where JSON Lines are expected (one JSON object per line): put each element on a line"
            " of its own (jq -c '.[]' FILE)",
            path=path,
            line=line,
        )
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("{") and exc.pos >= len(text.rstrip()):
            raise InputError(
                "malformed JSON: the line ends inside an object (JSON Lines hold each object on one line:"
                " jq -c . FILE)",
                path=path,
                line=line,
            ) from None
        raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", path=path, line=line) from None
    if not isinstance(obj, dict):
        raise InputError("expected one JSON object per line", path=path, line=line)
    return obj


def json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line."""
    name = str(path)
    for number, raw in json_lines(path):
        yield number, parse_line(raw, name, number)


class RawDocument(NamedTuple):
    """A document's id and line, and its line's bytes, parsed where it is counted."""

    id: str
    line: int
    raw: bytes

    def parse(self, path: str, levels: tuple[str, ...] = ()) -> Document:
        doc = parse_document(parse_line(self.raw, path, self.line), path, self.line, levels)
        if doc.id != self.id:
            raise InputError(
                f"the line names two ids ({self.id!r} and {doc.id!r}): keep one", path=path, line=self.line
            )
        return doc


# A line that opens with its "id" (the usual layout): the id is read without parsing the rest.
_FIRST_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*("(?:[^"\\\x00-\x1f]|\\.)*"|-?(?:0|[1-9][0-9]*))\s*[,}]')


def raw_documents(path: str | Path) -> Iterator[RawDocument]:
    """Each document's id, line and bytes, in order; ids must be unique and the file not empty.

    Only the id is read here (the whole line is parsed where the document is counted, which
    checks that it has this id). Ids are remembered as 8-byte hashes, so that a file of millions
    of documents is checked in little memory; a repeated hash is confirmed on the ids themselves.
    """
    name = str(path)
    hashes = array.array("q")
    for number, raw in json_lines(path):
        key = _id_of(raw, name, number)
        hashes.append(hash(key))
        yield RawDocument(key, number, raw)
    if not hashes:
        raise InputError("file is empty: expected one JSON document per line", path=name)
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    repeated = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    if repeated:
        seen: dict[str, int] = {}
        for number, raw in json_lines(path):
            key = _id_of(raw, name, number)
            if hash(key) not in repeated:
                continue
            if key in seen:
                raise InputError(f"document id {key!r} also on line {seen[key]}", path=name, line=number)
            seen[key] = number


def earlier_line(path: str | Path, key: str, before: int) -> int | None:
    """The first line before ``before`` whose document has id ``key`` (an error path: it rereads)."""
    name = str(path)
    for number, raw in json_lines(path):
        if number >= before:
            return None
        if _id_of(raw, name, number) == key:
            return number
    return None


def _id_of(raw: bytes, name: str, number: int) -> str:
    first = _FIRST_ID.match(raw)
    doc_id: Any
    if first is None:
        doc_id = parse_line(raw, name, number).get("id")
    else:
        value = first.group(1)
        try:
            if value[:1] != b'"':
                doc_id = int(value)
            elif b"\\" in value:
                doc_id = json.loads(value)
            else:
                doc_id = value[1:-1].decode("utf-8")
        except ValueError:  # not UTF-8 or not JSON after all: the whole line says why
            doc_id = parse_line(raw, name, number).get("id")
    if doc_id is None:
        raise InputError("missing key 'id'", path=name, line=number)
    if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
        raise InputError("id must be a string or an integer", path=name, line=number)
    return str(doc_id)


def iter_documents(path: str | Path) -> Iterator[Document]:
    """The documents of a file in order; ids must be unique and the file not empty."""
    name = str(path)
    seen: dict[str, int] = {}
    for number, obj in json_objects(path):
        doc = parse_document(obj, name, number)
        if doc.id in seen:
            raise InputError(f"document id {doc.id!r} also on line {seen[doc.id]}", path=name, line=number)
        seen[doc.id] = number
        yield doc
    if not seen:
        raise InputError("file is empty: expected one JSON document per line", path=name)


def read_jsonl(path: str | Path) -> list[Document]:
    return list(iter_documents(path))


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_unicode(value: str, what: str, fail: Any) -> None:
    """JSON may escape half of a UTF-16 pair (\\ud83d) alone: that is no character, and no output
    could hold it."""
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise fail(
            f"{what} holds a lone surrogate \\u{ord(bad.group()):04x} at character {bad.start()}:"
            " not a Unicode character (write the whole pair, or the character itself)"
        )


def parse_document(obj: Any, path: str, line: int, levels: tuple[str, ...] = ()) -> Document:
    """A document of spanscore's JSONL; with ``levels``, only its mentions whose ``level`` field
    is one of them (every mention must have a level)."""

    def fail(what: str) -> InputError:
        return InputError(what, path=path, line=line)

    if not isinstance(obj, dict):
        raise fail('expected a JSON object {"id", "text", "spans"}')
    for key in ("id", "text", "spans"):
        if key not in obj:
            raise fail(f"missing key {key!r}")
    doc_id = obj["id"]
    if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
        raise fail("id must be a string or an integer")
    text = obj["text"]
    if not isinstance(text, str):
        raise fail("text must be a string")
    check_unicode(text, "text", fail)
    raw_spans = obj["spans"]
    if not isinstance(raw_spans, list):
        raise fail("spans must be a list")
    spans = []
    at_levels: list[str] = []
    n = len(text)
    for k, span in enumerate(raw_spans):
        try:
            start, end, label = span["start"], span["end"], span["label"]
        except (TypeError, KeyError):
            raise fail(f'span {k} must be an object with "start", "end" and "label"') from None
        # type() rather than isinstance: JSON gives plain ints, and True is not an offset.
        if type(start) is not int or type(end) is not int:
            if not isinstance(span, dict):
                raise fail(f'span {k} must be an object with "start", "end" and "label"')
            raise fail(f"span {k}: start and end must be integers")
        if not 0 <= start < end <= n:
            raise fail(f"span {k}: need 0 <= start < end <= {n} (text length), got {start}..{end}")
        if type(label) is not str or not label:
            raise fail(f"span {k}: label must be a non-empty string")
        check_unicode(label, f"span {k}: label", fail)
        if levels:
            if not _at_level(span, k, levels, fail):
                continue
            at_levels.append(span["level"])
        spans.append((start, end, label))
    return Document(id=str(doc_id), text=text, spans=tuple(spans), line=line, levels=tuple(at_levels))


def _at_level(span: dict[str, Any], k: int, levels: tuple[str, ...], fail: Any) -> bool:
    """Whether a mention is at one of ``levels``; one without a level cannot be placed, and is refused."""
    level = span.get("level")
    if not isinstance(level, str):
        named = ", ".join(levels)
        what = "no level" if level is None else f"level {level!r}, not a name"
        raise fail(f'span {k} has {what}: with levels ({named}) every span needs one in its "level" field')
    return level in levels


def document_line(doc: Document) -> str:
    """A document as one line of spanscore's JSONL (without the newline)."""
    spans = [{"start": s, "end": e, "label": label} for s, e, label in doc.spans]
    return json.dumps({"id": doc.id, "text": doc.text, "spans": spans}, ensure_ascii=False)


def write_jsonl(docs: Iterable[Document], path: str | Path) -> None:
    """Documents as spanscore's JSONL, written whole or not at all."""
    with atomic_output(Path(path)) as handle:
        for doc in docs:
            handle.write(document_line(doc).encode("utf-8") + b"\n")
