"""The report's tables, built once from the evaluation JSON and formatted by each writer.

A ``TableModel`` holds a title, typed columns and rows of raw values; the terminal (rich), Markdown
and HTML writers only format it: they choose how a percentage reads (``pct`` by default), how a
total row is emphasised and how a detail row is indented. Every number a writer shows comes from
these rows, so the three outputs agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..results import DiscontinuousFigure, ErrorKey, EvaluationResult, JudgeScores, Score, ScoreKey, SemEvalKey
from .common import CRITERION_HELP, TAXONOMY, number, pct, share, total_errors

Kind = Literal["text", "number", "percent"]
Align = Literal["left", "right"]
Style = Literal["", "total", "sub"]
Cell = str | int | float | None
"""A raw value: text as it is shown ("" is a blank cell), a count, or a score (``None``: undefined)."""


@dataclass(frozen=True)
class Column:
    """``kind`` says how a value is formatted: text as it is, a number with ``number``, a score (0 to 1)
    as a percentage. Text columns are left-aligned unless ``align`` says otherwise; numbers right."""

    name: str
    kind: Kind = "text"
    align: Align | None = None

    @property
    def justify(self) -> Align:
        if self.align is not None:
            return self.align
        return "left" if self.kind == "text" else "right"


@dataclass(frozen=True)
class Row:
    """One row of raw values. ``total``: a summary row (macro, all types, all errors), shown in
    bold; ``sub``: a detail of the row above, its label indented."""

    cells: tuple[Cell, ...]
    style: Style = ""

    @property
    def label_index(self) -> int:
        """The column of the row's label: its first cell holding text."""
        return next((i for i, c in enumerate(self.cells) if isinstance(c, str) and c), 0)


@dataclass(frozen=True)
class TableModel:
    """A table as plain data. ``row_header``: the first column names each row (HTML shows it bold)."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    row_header: bool = True

    @property
    def header(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def align(self) -> tuple[Align, ...]:
        return tuple(c.justify for c in self.columns)

    def cells(self, row: Row, percent: Callable[[Score], str] = pct) -> list[str]:
        """The row's values as text; ``percent`` formats the scores."""
        out = []
        for value, column in zip(row.cells, self.columns, strict=True):
            if isinstance(value, str):
                out.append(value)
            elif column.kind == "percent":
                out.append(percent(value))
            else:
                out.append("" if value is None else number(value))
        return out


def _text(name: str) -> Column:
    return Column(name)


def _number(name: str) -> Column:
    return Column(name, "number")


def _percent(name: str) -> Column:
    return Column(name, "percent")


PRF_COLUMNS: tuple[tuple[str, ScoreKey], ...] = (("P", "precision"), ("R", "recall"), ("F1", "f1"))


def prf_columns(data: EvaluationResult) -> tuple[tuple[str, ScoreKey], ...]:
    """P, R and F1, and F-beta where the evaluation was given a beta other than 1."""
    beta = data.get("beta")
    return PRF_COLUMNS if beta is None else (*PRF_COLUMNS, (f"F{beta:g}", "f_beta"))
SEMEVAL_COLUMNS: tuple[tuple[str, SemEvalKey], ...] = (
    ("COR", "correct"),
    ("INC", "incorrect"),
    ("PAR", "partial"),
    ("MIS", "missed"),
    ("SPU", "spurious"),
    ("POS", "possible"),
    ("ACT", "actual"),
)
# Finer counts of the error taxonomy, shown under their parent row.
TAXONOMY_DETAIL: dict[ErrorKey, tuple[tuple[ErrorKey, str], ...]] = {
    "false_positive": (("false_positive_overlapping", "of which overlap a reference"),),
    "false_negative": (("false_negative_overlapping", "of which overlap a prediction"),),
    "right_label_overlap": (
        ("right_label_overlap_longer", "prediction longer"),
        ("right_label_overlap_shorter", "prediction shorter"),
        ("right_label_overlap_shifted", "prediction shifted"),
        ("right_label_overlap_left_match", "left boundary matches"),
        ("right_label_overlap_right_match", "right boundary matches"),
    ),
}


def scores_table(data: EvaluationResult) -> TableModel:
    """Precision, recall and F1 of every criterion, with its matches (true positives for ``token``)."""
    rows = []
    columns_prf = prf_columns(data)
    for name, m in data["metrics"].items():
        prf = tuple(m.get(k) for _, k in columns_prf)
        if "true_positive" in m:
            units = str(data.get("options", {}).get("units", "tokens"))
            rows.append(Row((name, f"entity {units}", *prf, m["true_positive"], "", "")))
        else:
            rows.append(Row((name, CRITERION_HELP.get(name, ""), *prf, m["full"], m["partial"], m["credit"])))
    columns = (
        _text("criterion"),
        _text("matches"),
        *(_percent(h) for h, _ in columns_prf),
        _number("full"),
        _number("partial"),
        _number("credit"),
    )
    return TableModel("Mention scores (%)", columns, tuple(rows))


def semeval_table(data: EvaluationResult) -> TableModel:
    """The SemEval-2013 schemes with the MUC categories."""
    columns_prf = prf_columns(data)
    rows = tuple(
        Row((name, *(b[k] for _, k in SEMEVAL_COLUMNS), *(b.get(k) for _, k in columns_prf)))
        for name, b in data["semeval"].items()
    )
    columns = (
        _text("scheme"),
        *(_number(h) for h, _ in SEMEVAL_COLUMNS),
        *(_percent(h) for h, _ in columns_prf),
    )
    return TableModel("SemEval-2013 schemes (MUC categories)", columns, rows)


def per_type_table(data: EvaluationResult) -> TableModel:
    """F1 per type under every criterion, then the macro average; no rows when there are no types."""
    names = list(data["metrics"])
    rows = [
        Row((typ, b["metrics"]["strict"]["reference"], b["metrics"]["strict"]["predicted"],
             *(b["metrics"][n]["f1"] for n in names)))
        for typ, b in data["per_type"].items()
    ]
    if rows:
        rows.append(Row(("macro", "", "", *(data["macro"][n]["f1"] for n in names)), "total"))
    columns = (_text("type"), _number("ref"), _number("pred"), *(_percent(n) for n in names))
    return TableModel("Per type: F1 (%) by criterion", columns, tuple(rows))


def taxonomy_table(data: EvaluationResult) -> TableModel:
    """The error taxonomy's counts with their details and each error type's share of all errors."""
    e = data["errors"]
    n_errors = total_errors(e)
    rows = []
    for key, code, text in TAXONOMY:
        rows.append(Row((code or "–", text, e[key], share(e[key], n_errors) if code else "")))
        rows += [Row(("", label, e[sub], ""), "sub") for sub, label in TAXONOMY_DETAIL.get(key, ())]
    rows.append(Row(("", "errors", n_errors, ""), "total"))
    columns = (_text("type"), _text("kind"), _number("count"), Column("share of errors", align="right"))
    return TableModel(
        "Error taxonomy of Nejadgholi et al. (2020), one-to-one matching", columns, tuple(rows), row_header=False
    )


def errors_by_type_table(data: EvaluationResult) -> TableModel:
    """The taxonomy's counts per type: by reference type, false positives by predicted type."""
    codes = [(key, code or "correct") for key, code, _ in TAXONOMY]
    rows = tuple(
        Row((typ, *(counts[k] for k, _ in codes))) for typ, counts in data["errors"].get("per_type", {}).items()
    )
    columns = (_text("type"), *(_number(c) for _, c in codes))
    return TableModel("By reference type (Type-1 by predicted type)", columns, rows)


MISSED = "(missed)"  # the column of reference mentions no prediction was matched to
SPURIOUS = "(spurious)"  # the row of predictions matched to no reference mention
NO_PAIRS = "·"  # an empty cell: lighter than 0 where most of a matrix is empty


def confusion_cell(same_span: int, overlapping: int) -> str:
    """A matrix cell as text: matched pairs with the same span + with overlapping spans."""
    return f"{same_span}+{overlapping}" if same_span or overlapping else NO_PAIRS


def confusion_table(data: EvaluationResult) -> TableModel:
    """Reference types (rows) by predicted types (columns) over the taxonomy's one-to-one matching,
    with the spurious row and the missed column; no rows when there are no types."""
    confusion = data.get("confusion")
    types = confusion["types"] if confusion else []
    cells = {(c["reference"], c["predicted"]): c for c in confusion["rows"]} if confusion else {}
    # Text cells, but number columns: right-aligned, never wrapped, and dealt out to several
    # tables (each repeating the reference type) when the terminal is too narrow for them all.
    columns = (_text("reference \\ predicted"), *(_number(p) for p in types), _number(MISSED))
    rows = []
    for r in types:
        matched = []
        for p in types:
            c = cells.get((r, p))
            matched.append(confusion_cell(c["same_span"], c["overlapping"]) if c else NO_PAIRS)
        missed = cells.get((r, None))
        rows.append(Row((r, *matched, str(missed["count"]) if missed else NO_PAIRS)))
    if types:
        spurious = [cells.get((None, p)) for p in types]
        rows.append(Row((SPURIOUS, *(str(c["count"]) if c else NO_PAIRS for c in spurious), "")))
    return TableModel(
        "Type confusion, one-to-one matching: reference (rows) by prediction (columns), same span + overlapping",
        columns,
        tuple(rows),
    )


def judge_table(data: EvaluationResult) -> TableModel:
    """The judge's verdicts on Type-5 pairs per type, then over all types; no rows without a judge."""

    def row(name: str, r: JudgeScores, style: Style = "") -> Row:
        return Row((name, r["type5"], r["accepted"], r["rejected"], r["strict_f1"], r["learned_f1"], r["overlap_f1"]),
                   style)

    rows = []
    if "judge" in data:
        rows = [row(name, r) for name, r in data["judge"]["per_type"].items()]
        rows.append(row("all", data["judge"], "total"))
    columns = (
        _text("type"),
        _number("Type-5"),
        _number("accepted"),
        _number("rejected"),
        _percent("strict F1"),
        _percent("learned F1"),
        _percent("overlap F1"),
    )
    return TableModel("Judge: right-label/overlap (Type-5) pairs and F1 (%)", columns, tuple(rows))


def discontinuous_table(data: EvaluationResult) -> TableModel:
    """The strict figures of the discontinuous-NER literature (Dai et al. 2020); no rows where no
    side has a discontinuous mention."""
    rows = []
    block = data.get("discontinuous")
    if block is not None:
        units = block["units"]
        figures: tuple[tuple[str, DiscontinuousFigure, Style], ...] = (
            ("all mentions", block["all"], "total"),
            ("discontinuous mentions", block["mentions"], ""),
            (f"{units['unit']}s with one ({units['units']})", units, ""),
        )
        for name, b, style in figures:
            rows.append(
                Row((name, b["reference"], b["predicted"], b["correct"], b["precision"], b["recall"], b["f1"]), style)
            )
    reading = block["reading"] if block is not None else "fragments"
    columns = (
        _text("mentions"),
        _number("reference"),
        _number("predicted"),
        _number("correct"),
        _percent("P"),
        _percent("R"),
        _percent("F1"),
    )
    title = f"Discontinuous mentions: strict scores (%), matched by their {reading}"
    return TableModel(title, columns, tuple(rows))


def discontinuous_systems_table(data: Mapping[str, Any]) -> TableModel:
    """Each compared system's strict F1 over all mentions, discontinuous mentions only and the
    units holding one (Dai et al. 2020); no rows where no side has a discontinuous mention."""
    rows = tuple(
        Row((name, b["all"]["f1"], b["mentions"]["f1"], b["units"]["f1"]))
        for name, b in (data.get("discontinuous") or {}).items()
    )
    columns = (_text("system"), _percent("all F1"), _percent("discontinuous F1"), _percent("units with one F1"))
    return TableModel("Discontinuous mentions: strict F1 (%)", columns, rows)


def summary_table(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> TableModel:
    """``summarize``'s counts of each file (named by ``names``): documents, sentences, tokens,
    mentions, and mentions of every type any file has."""
    types = sorted({t for r in rows for t in r["types"]})
    counts = ("documents", "sentences", "tokens", "mentions")
    columns = (_text("file"), *(_number(c) for c in (*counts, *types)))
    body = tuple(
        Row((name, *(int(r[c]) for c in counts), *(int(r["types"].get(t, 0)) for t in types)))
        for name, r in zip(names, rows, strict=True)
    )
    return TableModel("Documents, sentences, tokens and mentions of each type", columns, body)
