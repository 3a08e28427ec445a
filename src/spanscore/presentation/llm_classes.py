"""The LLM error classes of ``compare`` (``analysis.llm_classes``) as tables: each system's share
of each class with its interval, and each system's difference from the first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .tables import Column, Row, TableModel

CLASS_NAMES = {
    "exact": "exact",
    "wrong_type": "right string, wrong type",
    "boundary": "boundary (overlaps a reference mention)",
    "unannotated": "in the text, unannotated",
    "not_in_text": "not in the text",
    "off_schema": "off-schema type",
    "invalid": "invalid output",
}  # the classes (``io.strings.CLASSES``) as the tables name them


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _span(entry: Mapping[str, Any]) -> str:
    return "n/a" if entry.get("low") is None else f"[{_pct(entry['low'])}, {_pct(entry['high'])}]"


def class_tables(data: Mapping[str, Any]) -> list[TableModel]:
    """The classes' shares of each system and, with two systems or more, their differences from
    the first; none where the comparison has no classes (mentions not given as strings)."""
    classes = data.get("llm_classes")
    if not classes:
        return []
    level = data["resampling"]["level"]
    systems = classes["systems"]
    columns = [Column("class")] + [Column(s["name"], "number") for s in systems]
    rows = []
    for c in classes["classes"]:
        cells = [CLASS_NAMES.get(c, c)]
        for s in systems:
            entry = s["classes"][c]
            cells.append(f"{_pct(entry['share']['value'])} {_span(entry['share'])} ({entry['count']['value']})")
        rows.append(Row(tuple(cells)))
    rows.append(Row(("predicted mentions", *(str(s["predicted"]) for s in systems)), "total"))
    out = [
        TableModel(
            f"LLM error classes: % of each system's predictions (count), with {100 * level:g}% intervals",
            tuple(columns),
            tuple(rows),
        )
    ]
    wanted = [d for d in classes["differences"] if d["measure"] == "share"]
    others = list(dict.fromkeys(d["b"] for d in wanted))
    if others:
        first = systems[0]["name"]
        columns = [Column("class")]
        for b in others:
            columns += [Column(f"{b} - {first}", "number"), Column("p boot", "number")]
        rows = []
        for c in classes["classes"]:
            cells = [CLASS_NAMES.get(c, c)]
            for b in others:
                d = next(d for d in wanted if d["b"] == b and d["class"] == c)
                diff = "n/a" if d["difference"] is None else f"{100 * d['difference']:+.2f}"
                p = d["p_bootstrap"]
                cells += [f"{diff} {_span(d)}", "n/a" if p is None else f"{p:.4f}"]
            rows.append(Row(tuple(cells)))
        out.append(
            TableModel(
                f"LLM error classes: differences in % of predictions from {first}, paired over documents",
                tuple(columns),
                tuple(rows),
            )
        )
    return out
