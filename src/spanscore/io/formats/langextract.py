"""LangExtract's annotated documents (``lx.io.save_annotated_documents``), read as mentions given
as strings with the places LangExtract found for them.

A line is ``{"document_id", "text", "extractions": [{"extraction_class", "extraction_text",
"char_interval": {"start_pos", "end_pos"} | null, "alignment_status", ...}]}``. An extraction
with a ``char_interval`` is placed there (``StringDoc.placed``: scored as LangExtract placed it,
its text checked against the reference's); one without (LangExtract could not align it to the
text) is a string like any other, located by spanscore's steps (``io.strings``) and, found
nowhere, counted as spurious. Each ``alignment_status`` (``match_exact``, ``match_fuzzy``,
``match_lesser``, ``match_greater``; ``unaligned`` where there is none) is counted. An extraction
that is no mention (no class, no text) is an invalid prediction, as in a strings file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..jsonl import check_unicode
from ..strings import INVALID_LABEL, StringDoc, keyed_lines, shown, why_invalid


def _interval(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, dict):
        return None
    start, end = value.get("start_pos"), value.get("end_pos")
    if type(start) is not int or type(end) is not int:
        return None
    return start, end


def read_strings(path: str, invalid: str = "keep") -> Iterator[StringDoc]:
    """The documents of a LangExtract JSONL file; every problem names the file and line."""
    empty = 'one annotated document per line ({"document_id", "text", "extractions"})'
    for line, obj, key, fail in keyed_lines(path, "document_id", "extractions", empty):
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise fail('"text", where given, must be the document\'s text')
        raw = obj.get("extractions") or []
        doc = StringDoc(key, [], text, line)
        if not isinstance(raw, list):
            if invalid == "error":
                raise fail('"extractions" must be a list')
            doc.invalid.append((shown(raw), INVALID_LABEL, '"extractions" is not a list'))
            raw = []
        for k, e in enumerate(raw):
            entry = e
            if isinstance(e, dict):
                entry = {"text": e.get("extraction_text"), "label": e.get("extraction_class")}
            why = why_invalid(entry)
            if why is not None:
                if invalid == "error":
                    raise fail(
                        f"extraction {k}: {why.replace('text', 'extraction_text').replace('label', 'extraction_class')}"
                        " (or keep invalid output: --invalid-strings keep)"
                    )
                label = entry.get("label") if isinstance(entry, dict) else None
                doc.invalid.append(
                    (shown(entry), label if isinstance(label, str) and label.strip() else INVALID_LABEL, why)
                )
                continue
            check_unicode(entry["text"], f"extraction {k}: extraction_text", fail)
            status = e.get("alignment_status")
            span = _interval(e.get("char_interval"))
            if span is None:
                status = "unaligned"
                doc.mentions.append((entry["text"], entry["label"]))
            else:
                doc.placed.append((span[0], span[1], entry["label"], None))
            status = status if isinstance(status, str) and status else "no alignment_status"
            doc.statuses[status] = doc.statuses.get(status, 0) + 1
        yield doc
