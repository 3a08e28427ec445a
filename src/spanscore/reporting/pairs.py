"""Matched pairs and errors as CSV files, and the rows the HTML page shows from them."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..counts import Details
from ..criteria import RIGHT_LABEL_OVERLAP_KINDS, TAXONOMY, WRONG_LABEL_OVERLAP_KINDS
from ..io.load import Text
from ..matching import SAME_END, SAME_SPAN, SAME_START
from ..report import RELATIONS, Report
from .common import CODE

SIDE_FIELDS = ("text", "type", "start", "end")
PAIR_TAIL = ("match", "credit", "relation", "context")
ERROR_TAIL = ("relation", "shared_boundary", "context")


def pair_fields(unit_kind: str) -> list[str]:
    """Columns of a criterion's pair file: the keys of ``Report.pair_rows``."""
    sides = [f"{side}_{f}" for side in ("reference", "predicted") for f in SIDE_FIELDS]
    return [unit_kind, *sides, *PAIR_TAIL]


def error_fields(unit_kind: str) -> list[str]:
    sides = [f"{side}_{f}" for side in ("reference", "predicted") for f in SIDE_FIELDS]
    return ["error", "code", unit_kind, *sides, *ERROR_TAIL]


@dataclass
class PairFile:
    """One written pair file: its row counts and the first partial pairs (for the HTML page)."""

    criterion: str
    path: Path
    rows: int = 0
    full: int = 0
    partial: int = 0
    partial_rows: list[dict[str, Any]] = field(default_factory=list)


def _write(path: Path, fields: list[str], rows: Iterable[dict[str, Any]]) -> None:
    # newline="" lets the csv module write its own line ends; QUOTE_MINIMAL quotes commas, quotes
    # and line breaks in mention texts and contexts.
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, quoting=csv.QUOTE_MINIMAL, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def write_pair_file(report: Report, criterion: str, path: Path, keep_partial: int) -> PairFile:
    """Every matched pair of ``criterion``; remembers the first ``keep_partial`` partial pairs."""
    assert report.text is not None
    out = PairFile(criterion, path)

    def rows() -> Iterator[dict[str, Any]]:
        for row in report.pair_rows(criterion):
            out.rows += 1
            if row["match"] == "full":
                out.full += 1
            elif row["match"] == "partial":
                out.partial += 1
                if len(out.partial_rows) < keep_partial:
                    out.partial_rows.append(row)
            yield row

    _write(path, pair_fields(report.text.unit_kind), rows())
    return out


def _side(details: Details, text: Text, side: str, i: int) -> dict[str, Any]:
    spans = details.reference if side == "reference" else details.predicted
    start, end, unit = int(spans.start[i]), int(spans.end[i]), int(spans.unit[i])
    return {
        f"{side}_text": text.mention(start, end),
        f"{side}_type": spans.types[int(spans.type[i])],
        f"{side}_start": text.local(unit, start),
        f"{side}_end": text.local(unit, end),
    }


def _shared_boundary(kind: int) -> str:
    both = (kind & SAME_SPAN) == SAME_SPAN
    if both:
        return "both"
    if kind & SAME_START:
        return "left"
    if kind & SAME_END:
        return "right"
    return "none"


def error_rows(report: Report) -> list[dict[str, Any]]:
    """Every mention that is not correct under the error taxonomy (004), in position order.

    The pairs come from the one-to-one matching that the taxonomy counts read, so the number of
    rows of each error equals its count in ``report.to_dict()["errors"]``.
    """
    d, text = report.details, report.text
    assert d is not None and text is not None
    m = d.schemes[TAXONOMY.name]
    kinds = d.pairs.kind[m.pair]
    relation = d.pairs.relation()[m.pair]
    keyed: list[tuple[tuple[int, int, int], dict[str, Any]]] = []

    def add(error: str, unit: int, row: dict[str, Any], order: tuple[int, int]) -> None:
        row.update(error=error, code=CODE[error])
        row[text.unit_kind] = unit
        row.setdefault("context", text.context(unit))
        keyed.append(((unit, *order), row))

    for k, kind, rel in zip(m.pair.tolist(), kinds.tolist(), relation.tolist(), strict=True):
        if kind == SAME_SPAN:
            error = "wrong_label_same_span"
        elif kind in WRONG_LABEL_OVERLAP_KINDS:
            error = "wrong_label_overlap"
        elif kind in RIGHT_LABEL_OVERLAP_KINDS:
            error = "right_label_overlap"
        else:
            continue  # correct
        r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
        row = _side(d, text, "reference", r) | _side(d, text, "predicted", p)
        row.update(relation=RELATIONS[int(rel)], shared_boundary=_shared_boundary(int(kind)))
        add(error, int(d.reference.unit[r]), row, (int(d.reference.start[r]), int(d.predicted.start[p])))

    matched_r = np.zeros(len(d.reference), dtype=bool)
    matched_r[d.pairs.ref[m.pair]] = True
    matched_p = np.zeros(len(d.predicted), dtype=bool)
    matched_p[d.pairs.pred[m.pair]] = True
    for i in np.flatnonzero(~matched_p).tolist():
        start = int(d.predicted.start[i])
        add("false_positive", int(d.predicted.unit[i]), _side(d, text, "predicted", i), (start, start))
    for i in np.flatnonzero(~matched_r).tolist():
        start = int(d.reference.start[i])
        add("false_negative", int(d.reference.unit[i]), _side(d, text, "reference", i), (start, start))
    keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]


def write_error_files(report: Report, errors_path: Path, type5_path: Path) -> tuple[int, int]:
    """``errors.csv`` (every error) and the Type-5 pairs alone; returns both row counts."""
    assert report.text is not None
    rows = error_rows(report)
    fields = error_fields(report.text.unit_kind)
    type5 = [row for row in rows if row["error"] == "right_label_overlap"]
    _write(errors_path, fields, rows)
    _write(type5_path, fields, type5)
    return len(rows), len(type5)
