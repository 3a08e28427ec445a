"""doccano's JSONL for sequence labelling: one document per line, in any of the shapes doccano's
versions export.

- ``{"id": 1, "text": "...", "label": [[start, end, "LABEL"], ...]}`` (``labels`` and a text under
  ``data`` are read too: older versions and converters write them);
- from projects with relations, ``"entities": [{"start_offset", "end_offset", "label"}]`` beside
  ``"relations"``, which are counted in ``ReadNotes.skipped`` and not kept;
- doccano 1.0's ``"annotations": [{"label", "start_offset", "end_offset", "user"}]``, one entry per
  mention and annotator: the label is ``label_name`` where given, else ``label`` (doccano 1.0
  wrote the label's number: it is read as that number). One annotator's mentions are read: a
  document annotated by several users is an error naming them (mixed, their mentions would be
  counted twice) unless ``user`` (a user id, or ``user_name``) chooses one; a document that user
  did not annotate is then left out and counted, and so is the other side's copy of it.

Offsets count characters. The id is the line's ``id``, or its line number where it has none
(doccano's import files have none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError
from ..document import Document, Span
from ..files import atomic_output
from ..jsonl import json_objects
from ._base import (
    Collected,
    ReadNotes,
    check_file_encoding,
    check_span,
    json_id,
    make_doc,
    name_list,
    no_surrogates,
    writable,
)


def read(path: str | Path, *, user: str | int | None = None) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    if user is not None and (not isinstance(user, str | int) or isinstance(user, bool)):
        raise OptionError(f"doccano: user is a user id or name, not {user!r}")
    check_file_encoding(path)
    notes = ReadNotes()
    docs = Collected(None)
    users: dict[str, None] = {}
    per_user = 0  # lines with doccano 1.0's annotations, which user= chooses among
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
        if "annotations" in obj and not ("label" in obj or "labels" in obj or "entities" in obj):
            per_user += 1
            found = _annotations(obj["annotations"], text, user, users, fail)
            if found is None:
                notes.leave_out(doc_id, "documents without annotations by that user")
                continue
            spans = found
        else:
            spans = _spans(obj, text, fail)
        docs.add(make_doc(str(doc_id), text, spans, line=number), f"line {number}", fail, notes)
    if user is not None and not per_user and not notes.skipped:
        raise OptionError(
            f'{name}: user= chooses among the annotators of doccano 1.0\'s "annotations"; this file has none'
            " (its mentions are one annotator's: leave user= out)"
        )
    if user is not None and not docs.docs and per_user:
        have = f"those present: {name_list(users)}" if users else "no annotation names its user"
        docs_ = f"{per_user} document" + ("s" if per_user != 1 else "")
        raise OptionError(f"{name}: user={user!r} annotated none of the file's {docs_}; {have}")
    if not docs.docs:
        raise InputError("file is empty: expected one JSON document per line", path=name)
    return docs.docs, notes


def _annotations(items: Any, text: str, user: str | int | None, seen: dict[str, None], fail: Any) -> list[Span] | None:
    """doccano 1.0's annotations, one per mention and annotator: all by one annotator, or those
    of ``user`` (None where that user annotated nothing here)."""
    if not isinstance(items, list) or not all(isinstance(a, dict) for a in items):
        raise fail('"annotations" must be a list of {"label", "start_offset", "end_offset", "user"} objects')
    names = [_names(a) for a in items]
    for who in names:
        seen.update(dict.fromkeys(who))
    if user is not None:
        items = [a for a, who in zip(items, names, strict=True) if str(user) in who]
        if not items:
            return None
    users = list(dict.fromkeys(str(a.get("user_name", a.get("user"))) for a in items))
    if len(users) > 1:
        raise fail(
            f"annotations by several users ({name_list(users)}): spanscore reads one annotator's mentions; choose"
            f" one with the reader option user= (--reference-option user={users[0]})"
        )
    spans = []
    for k, a in enumerate(items):
        if "start_offset" not in a and "end_offset" not in a:
            raise fail(f"annotation {k} has no start_offset and end_offset (is this a sequence-labelling export?)")
        label = a.get("label_name") if isinstance(a.get("label_name"), str) else a.get("label")
        if type(label) is int:
            label = str(label)  # doccano 1.0 wrote the label's number where it gave no name
        spans.append(check_span(a.get("start_offset"), a.get("end_offset"), label, text, f"annotation {k}", fail))
    return spans


def _names(annotation: dict[str, Any]) -> list[str]:
    """How ``user=`` can name an annotation's annotator: the user id, and the user name."""
    return [str(annotation[k]) for k in ("user", "user_name") if annotation.get(k) is not None]


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
