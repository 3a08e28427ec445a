"""Scores by a document field: each group of documents scored under every criterion.

A JSONL document may carry fields beside its text and spans (``"source": "twitter"``, or nested,
``"meta": {"year": 2016}``, named ``meta.year``). ``field_values`` reads one field of every
document of the reference file; ``by_field`` sums the per-document counts of each value's
documents and scores them, so a breakdown costs no new matching. Documents without the field form
the group ``(missing)``.

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

from pathlib import Path
from typing import Any

import numpy as np

from .documents import DocCounts, scores_per_row
from .errors import InputError, OptionError
from .io.jsonl import json_objects

MISSING = "(missing)"


def field_values(path: str | Path, field: str) -> dict[str, str]:
    """Each document's value of ``field`` (dotted for nested objects), by document id."""
    if not field or any(not part for part in field.split(".")):
        raise OptionError(f"--by names a field (source, or meta.year for a nested one), not {field!r}")
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


def by_field(
    docs: DocCounts, values: dict[str, str], *, field: str, zero_division: float, credit: str
) -> dict[str, Any]:
    """Every score of each group of documents, groups in order of first appearance."""
    if docs.ids is None:
        raise OptionError("--by needs documents with ids: JSONL input (CoNLL documents have no fields)")
    groups: dict[str, list[int]] = {}
    for row, doc_id in enumerate(docs.ids):
        groups.setdefault(values.get(doc_id, MISSING), []).append(row)
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
    assert docs.ids is not None
    rows = [k for k, doc_id in enumerate(docs.ids) if values.get(doc_id, MISSING) == value]
    return DocCounts(docs.keys[rows], docs.stats[rows], docs.fields, [docs.ids[k] for k in rows], docs.unit)
