"""Span lists as GLiNER and span classifiers give them (``model.predict_entities(text, labels)``),
one document a line, read as mentions given as strings with their places.

A line is ``{"id", "text"?, "entities": [{"start", "end", "text", "label", "score"?}]}``
(``"spans"`` is taken for ``"entities"`` too). A span whose offsets hold its ``"text"`` in the
reference's text is placed there (``StringDoc.placed``); one whose offsets do not (the model saw a
differently spaced text) is located from its text by spanscore's steps (``io.strings``), and one
with neither is an invalid prediction. ``"text"`` of the line, where given, must be the
reference's text.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..jsonl import check_unicode
from ..strings import INVALID_LABEL, StringDoc, keyed_lines, shown


def read_strings(path: str, invalid: str = "keep") -> Iterator[StringDoc]:
    """The documents of a span-list file; every problem names the file and line."""
    empty = 'one JSON object per line ({"id", "entities"})'
    for line, obj, key, fail in keyed_lines(path, "id", "spans", empty):
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise fail('"text", where given, must be the document\'s text')
        name = "entities" if "entities" in obj else "spans"
        if name not in obj:
            raise fail('each line needs "entities", a list of {"start", "end", "text", "label"} objects')
        raw = obj[name]
        doc = StringDoc(key, [], text, line)
        if not isinstance(raw, list):
            if invalid == "error":
                raise fail(f'"{name}" must be a list')
            doc.invalid.append((shown(raw), INVALID_LABEL, f'"{name}" is not a list'))
            raw = []
        for k, e in enumerate(raw):
            label = e.get("label") if isinstance(e, dict) else None
            start = e.get("start") if isinstance(e, dict) else None
            end = e.get("end") if isinstance(e, dict) else None
            said = e.get("text") if isinstance(e, dict) else None
            offsets = type(start) is int and type(end) is int
            why = None
            if not isinstance(label, str) or not label.strip():
                why = 'its "label" is not a non-empty string'
            elif not offsets and not (isinstance(said, str) and said.strip()):
                why = 'it has neither integer "start" and "end" nor a "text"'
            if why is not None:
                if invalid == "error":
                    raise fail(f"span {k}: {why} (or keep invalid output: --invalid-strings keep)")
                doc.invalid.append(
                    (shown(e), label if isinstance(label, str) and label.strip() else INVALID_LABEL, why)
                )
                continue
            if isinstance(said, str):
                check_unicode(said, f"span {k}: text", fail)
            kind = label if isinstance(label, str) else INVALID_LABEL
            score = e.get("score") if isinstance(e, dict) else None
            if type(start) is int and type(end) is int:
                if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
                    doc.scores[len(doc.placed)] = float(score)
                doc.placed.append((start, end, kind, said if isinstance(said, str) and said.strip() else None))
            elif isinstance(said, str):
                doc.mentions.append((said, kind))
        yield doc
