"""The output of a Hugging Face ``token-classification`` pipeline run with an aggregation strategy
(``pipeline("ner", aggregation_strategy="simple")``, or ``first``, ``average``, ``max``), kept
with the text it tagged: JSON Lines, one text per line,

``{"id": 1, "text": "...", "entities": [{"entity_group": "PER", "score": 0.99, "word": "...",
"start": 0, "end": 5}, ...]}``

where ``entities`` is the list the pipeline returned for that text (``key`` names another field).
A mention is ``start``..``end`` (character offsets into the text, end exclusive) and its
``entity_group``; ``word`` is not compared with the text, since the pipeline writes it decoded
from its tokens (``self -`` for ``self-``, lower case for an uncased model, ``##`` pieces).
Mentions scoring below ``min_score`` are left out and counted. The id is the line's ``id``, or its
line number where it has none.

Refused, each naming its line: output without aggregation (``"entity": "B-PER"`` per sub-word
token: aggregate it first), entities without character offsets (``start`` null, as a slow
tokenizer gives), and a line holding the pipeline's list alone (its text is needed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError
from ..document import Document, Span
from ..files import atomic_output
from ..jsonl import json_lines, parse_line
from ._base import Collected, ReadNotes, check_file_encoding, check_span, json_id, make_doc, no_surrogates, writable


def read(
    path: str | Path, *, key: str = "entities", min_score: float | str | None = None
) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    if not isinstance(key, str) or not key:
        raise OptionError(f"hf-pipeline: key is the name of the field holding the pipeline's output, not {key!r}")
    threshold = _score(min_score)
    check_file_encoding(path)
    notes = ReadNotes()
    docs = Collected(None)
    for number, raw in json_lines(path):

        def fail(what: str, number: int = number) -> InputError:
            return InputError(what, path=name, line=number)

        if _entities_alone(raw):
            raise fail(
                f'the pipeline\'s list of entities alone, without its text: write {{"id", "text", "{key}": [...]}}'
                " per line"
            )
        obj = parse_line(raw, name, number)
        text = obj.get("text")
        if not isinstance(text, str):
            raise fail('missing the text: expected a "text" string beside the pipeline\'s output')
        no_surrogates(text, "the text", fail)
        doc_id = obj.get("id", number)
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail("id must be a string or an integer")
        if key not in obj:
            keys = ", ".join(map(repr, obj)) or "none"
            raise fail(f"no {key!r} (its keys: {keys}; name the field of the pipeline's output with key=)")
        spans = _entities(obj[key], text, key, threshold, notes, fail)
        docs.add(make_doc(str(doc_id), text, spans, line=number), f"line {number}", fail, notes)
    if not docs.docs:
        raise InputError("file is empty: expected one JSON object per line", path=name)
    return docs.docs, notes


def _entities_alone(raw: bytes) -> bool:
    """A line that is the pipeline's output itself: a list of entities (or an empty one)."""
    if not raw.lstrip().startswith(b"["):
        return False
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    return isinstance(value, list) and (
        not value or (isinstance(value[0], dict) and ("entity_group" in value[0] or "entity" in value[0]))
    )


def _score(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise OptionError(f"hf-pipeline: min_score is a number (0.5), not {value!r}") from None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise OptionError(f"hf-pipeline: min_score is a number (0.5), not {value!r}")
    return float(value)


def _entities(items: Any, text: str, key: str, threshold: float | None, notes: ReadNotes, fail: Any) -> list[Span]:
    if not isinstance(items, list):
        raise fail(f"{key} must be the pipeline's list of entities")
    spans = []
    for k, item in enumerate(items):
        what = f"{key}[{k}]"
        if not isinstance(item, dict):
            raise fail(f"{what} must be an object with entity_group, start and end")
        if "entity_group" not in item:
            if "entity" in item:
                raise fail(
                    f"{what} is one sub-word token's tag ({item['entity']!r}): run the pipeline with"
                    ' aggregation_strategy="simple" (or first, average, max) so that it gives mentions'
                )
            raise fail(f"{what} has no entity_group (its keys: {', '.join(map(repr, item)) or 'none'})")
        if item.get("start") is None or item.get("end") is None:
            raise fail(
                f"{what} has no character offsets (start and end null, as a slow tokenizer gives): use a fast one"
            )
        score = item.get("score")
        if threshold is not None:
            if not isinstance(score, int | float) or isinstance(score, bool):
                raise fail(f"{what}: min_score needs a score, and its score is {score!r}")
            if score < threshold:
                notes.skip("mentions below min_score")
                continue
        spans.append(check_span(item["start"], item["end"], item["entity_group"], text, what, fail))
    return spans


def write(docs: Iterable[Document], path: str | Path, *, drop_fragments: bool = False) -> None:
    """``{"id", "text", "entities": [{"entity_group", "word", "start", "end"}]}`` per line: a
    pipeline's output with its text, without scores (spanscore's documents have none)."""
    checked = writable(docs, "hf-pipeline", drop_fragments=drop_fragments)
    with atomic_output(path) as handle:
        for doc in checked:
            entities = [{"entity_group": lab, "word": doc.text[s:e], "start": s, "end": e} for s, e, lab in doc.spans]
            line = json.dumps({"id": json_id(doc.id), "text": doc.text, "entities": entities}, ensure_ascii=False)
            handle.write(line.encode("utf-8") + b"\n")
