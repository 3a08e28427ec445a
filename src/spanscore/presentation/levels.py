"""The nesting levels' table: each level scored alone, and GermEval 2014's measures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .tables import Column, Row, TableModel

GERMEVAL_NAMES = {
    "strict": "GermEval 2014 strict (official)",
    "loose": "GermEval 2014 loose",
    "outer": "GermEval 2014 outer",
    "inner": "GermEval 2014 inner",
}


def levels_table(levels: Mapping[str, Any]) -> TableModel:
    """Each nesting level's strict score, then GermEval 2014's measures where there are two levels."""
    columns = (
        Column("level"),
        *(Column(n, "percent") for n in ("precision", "recall", "F1")),
        *(Column(n, "number") for n in ("correct", "found", "gold")),
    )
    rows = []
    for name, level in levels.items():
        if name == "germeval":
            continue
        m = level["metrics"]["strict"]
        rows.append(
            Row(
                (
                    f"{name} (column {level['column']})" if "column" in level else name,
                    m["precision"],
                    m["recall"],
                    m["f1"],
                    m["full"],
                    m["predicted"],
                    m["reference"],
                )
            )
        )
    for key, label in GERMEVAL_NAMES.items():
        g = levels.get("germeval", {}).get(key)
        if g is not None:
            rows.append(
                Row(
                    (label, g["precision"], g["recall"], g["f1"], g["correct"], g["found"], g["gold"]),
                    "total" if key == "strict" else "",
                )
            )
    return TableModel("Nesting levels: strict, each level alone; GermEval 2014's measures", columns, tuple(rows))


def germeval_comparison_table(data: Mapping[str, Any]) -> TableModel:
    """A comparison's GermEval 2014 measures: each system's F1 and its difference from the first's
    (points; no test: the measures add up counts of levels matched apart)."""
    names = [s["name"] for s in data["systems"]]
    columns = (
        Column("measure"),
        *(Column(n, "percent") for n in names),
        *(Column(f"{n} - {names[0]}", "number") for n in names[1:]),
    )
    rows = []
    for key, label in GERMEVAL_NAMES.items():
        systems = data["germeval"].get(key)
        if systems is not None:
            differences = [f"{100 * s['difference']:+.2f}" for s in systems[1:]]
            rows.append(Row((label, *(s["f1"] for s in systems), *differences), "total" if key == "strict" else ""))
    return TableModel("GermEval 2014's measures: F1 of each system (%) and differences (points)", columns, tuple(rows))
