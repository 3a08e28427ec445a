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
from .files import read_bytes


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    spans: tuple[tuple[int, int, str], ...]
    line: int


def json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; anything but a JSON object is an InputError."""
    name = str(path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=name) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", path=name, line=number) from None
        if not isinstance(obj, dict):
            raise InputError("expected one JSON object per line", path=name, line=number)
        yield number, obj


def read_jsonl(path: str | Path) -> list[Document]:
    name = str(path)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for number, obj in json_objects(path):
        doc = _document(obj, name, number)
        if doc.id in seen:
            raise InputError(f"document id {doc.id!r} also on line {seen[doc.id]}", path=name, line=number)
        seen[doc.id] = number
        docs.append(doc)
    if not docs:
        raise InputError("file is empty: expected one JSON document per line", path=name)
    return docs


def _document(obj: Any, path: str, line: int) -> Document:
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
