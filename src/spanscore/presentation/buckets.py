"""Tables and a chart of scores per bucket (``evaluate --buckets``, ``compare --buckets``).

Built from the JSON, so the terminal, the report and a script read the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .tables import Column, Row, TableModel

BUCKET_SCORES = ("overlap", "partial")  # F1 columns beside strict's P, R and F1: partial is SemEval's


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _block(entry: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    family: Mapping[str, Mapping[str, Any]] = entry["semeval" if name == "partial" else "metrics"]
    return family.get(name)


def _cell(block: Mapping[str, Any] | None) -> str:
    if block is None:
        return "n/a"
    text = _pct(block["f1"])
    if "low" in block:
        text += f" [{_pct(block['low'])}, {_pct(block['high'])}]"
    return text


def bucket_table(attribute: str, entries: Sequence[Mapping[str, Any]]) -> TableModel:
    """One attribute: each bucket's mentions, strict P, R and F1, and F1 under overlap and SemEval
    partial (with intervals where computed)."""
    columns = [Column(attribute), Column("ref", "number"), Column("pred", "number")]
    columns += [Column("P", "number"), Column("R", "number"), Column("F1", "number")]
    columns += [Column(n, "number") for n in BUCKET_SCORES]
    rows = []
    for e in entries:
        strict = e["metrics"]["strict"]
        cells: list[Any] = [e["bucket"], e["reference_mentions"], e["predicted_mentions"]]
        cells += [_pct(strict["precision"]), _pct(strict["recall"]), _cell(strict)]
        cells += [_cell(_block(e, n)) for n in BUCKET_SCORES]
        rows.append(Row(tuple(cells)))
    title = f"By {attribute}: strict P, R, F1; overlap and partial F1 (%); mentions in each bucket"
    return TableModel(title, tuple(columns), tuple(rows))


def bucket_tables(buckets: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[TableModel]:
    return [bucket_table(a, entries) for a, entries in buckets.items()]
