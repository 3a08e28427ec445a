"""JSONL with character offsets: one document per line.

``{"id": "d1", "text": "...", "spans": [{"start": 0, "end": 5, "label": "PER"}]}``; ``end`` is
exclusive, spans may overlap or nest. Every problem is reported with its file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    spans: tuple[tuple[int, int, str], ...]
    line: int


def json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line, read a line at a time; anything but a JSON
    object is an InputError.

    Lines end at "\\n" alone: U+2028, U+0085 and the like are characters inside JSON strings. A
    UTF-8 byte order mark at the start is skipped.
    """
    name = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise InputError("no such file", path=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=name) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=name, line=number) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", path=name, line=number) from None
            if not isinstance(obj, dict):
                raise InputError("expected one JSON object per line", path=name, line=number)
            yield number, obj


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


def parse_document(obj: Any, path: str, line: int) -> Document:
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
    raw_spans = obj["spans"]
    if not isinstance(raw_spans, list):
        raise fail("spans must be a list")
    spans = []
    for k, span in enumerate(raw_spans):
        if not isinstance(span, dict) or not {"start", "end", "label"} <= span.keys():
            raise fail(f'span {k} must be an object with "start", "end" and "label"')
        start, end, label = span["start"], span["end"], span["label"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise fail(f"span {k}: start and end must be integers")
        if not 0 <= start < end <= len(text):
            raise fail(f"span {k}: need 0 <= start < end <= {len(text)} (text length), got {start}..{end}")
        if not isinstance(label, str) or not label:
            raise fail(f"span {k}: label must be a non-empty string")
        spans.append((start, end, label))
    return Document(id=str(doc_id), text=text, spans=tuple(spans), line=line)
