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

import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, OptionError
from ..io.files import read_bytes
from ..io.reading import Reading
from ..stages.documents import DocCounts, scores_per_row
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
