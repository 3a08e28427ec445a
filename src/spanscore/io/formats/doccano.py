"""doccano's JSONL for sequence labelling: one document per line.

``{"id": 1, "text": "...", "label": [[start, end, "LABEL"], ...]}`` (``labels`` and a text under
``data`` are read too: older versions and converters write them), or, from projects with
relations, ``"entities": [{"start_offset", "end_offset", "label"}]`` beside ``"relations"``,
which are counted in ``ReadNotes.skipped`` and not kept. Offsets count characters. The id is the
line's ``id``, or its line number where it has none (doccano's import files have none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..document import Document, Span
from ..files import atomic_output
from ..jsonl import json_objects
from ._base import Ids, ReadNotes, check_span, json_id, make_doc, no_surrogates, writable


def read(path: str | Path) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    notes = ReadNotes()
    ids = Ids()
    docs = []
    for number, obj in json_objects(path):

        def fail(what: str, number: int = number) -> InputError:
            return InputError(what, path=name, line=number)

        text = obj.get("text", obj.get("data"))
        if not isinstance(text, str):
            raise fail('missing the text: expected a "text" string')
        no_surrogates(text, "the text", fail)
        doc_id = obj.get("id", number)
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail("id must be a string or an integer")
        relations = obj.get("relations")
        notes.skip("relations", len(relations) if isinstance(relations, list) else 0)
        ids.add(str(doc_id), f"line {number}", fail)
        docs.append(make_doc(str(doc_id), text, _spans(obj, text, fail), line=number))
    if not docs:
        raise InputError("file is empty: expected one JSON document per line", path=name)
    return docs, notes


def _spans(obj: dict[str, Any], text: str, fail: Any) -> list[Span]:
    if "entities" in obj:
        entities = obj["entities"]
        if not isinstance(entities, list) or not all(isinstance(e, dict) for e in entities):
            raise fail('"entities" must be a list of {"start_offset", "end_offset", "label"} objects')
        return [
            check_span(e.get("start_offset"), e.get("end_offset"), e.get("label"), text, f"entity {k}", fail)
            for k, e in enumerate(entities)
        ]
    key = "label" if "label" in obj else "labels"
    items = obj.get(key, [])
    if not isinstance(items, list):
        raise fail(f'"{key}" must be a list of [start, end, "LABEL"]')
    spans = []
    for k, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 3:
            # A text-classification export has a list of label names here.
            raise fail(f'{key} {k} must be [start, end, "LABEL"], got {item!r} (is this a sequence-labelling export?)')
        spans.append(check_span(item[0], item[1], item[2], text, f"{key} {k}", fail))
    return spans


def write(docs: Iterable[Document], path: str | Path, *, drop_fragments: bool = False) -> None:
    """``{"id", "text", "label": [[start, end, "LABEL"], ...]}`` per line, as doccano imports it."""
    checked = writable(docs, "doccano", drop_fragments=drop_fragments)
    with atomic_output(path) as handle:
        for doc in checked:
            label = [[s, e, lab] for s, e, lab in doc.spans]
            line = json.dumps({"id": json_id(doc.id), "text": doc.text, "label": label}, ensure_ascii=False)
            handle.write(line.encode("utf-8") + b"\n")
