"""Rich tables for a report. Rendering only: every number comes from ``Report.to_dict``."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..reporting.common import CRITERION_HELP, JUDGE_HEADER, corpus_line, judge_rows


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:6.2f}"


def render(data: dict[str, Any], *, per_type: bool = True) -> Group:
    parts: list[Any] = []
    corpus = data["corpus"]
    parts.append(Text(corpus_line(corpus)))
    t = Table(title="Mention scores (%)", title_justify="left")
    for col in ("criterion", "matches", "P", "R", "F1", "full", "partial", "credit"):
        t.add_column(col, justify="left" if col in ("criterion", "matches") else "right")
    for name, m in data["metrics"].items():
        if name == "token":
            t.add_row(
                name,
                CRITERION_HELP[name],
                _pct(m["precision"]),
                _pct(m["recall"]),
                _pct(m["f1"]),
                str(m["true_positive"]),
                "",
                "",
            )
            continue
        t.add_row(
            name,
            CRITERION_HELP.get(name, ""),
            _pct(m["precision"]),
            _pct(m["recall"]),
            _pct(m["f1"]),
            str(m["full"]),
            str(m["partial"]),
            f"{m['credit']:g}",
        )
    parts.append(t)

    s = Table(title="SemEval-2013 schemes (MUC categories)", title_justify="left")
    for col in ("scheme", "COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT", "P", "R", "F1"):
        s.add_column(col, justify="left" if col == "scheme" else "right")
    for name, b in data["semeval"].items():
        s.add_row(
            name,
            *(str(b[k]) for k in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")),
            _pct(b["precision"]),
            _pct(b["recall"]),
            _pct(b["f1"]),
        )
    parts.append(s)

    if per_type and data["per_type"]:
        p = Table(title="Per type: F1 (%) by criterion", title_justify="left")
        names = list(data["metrics"])
        p.add_column("type")
        p.add_column("ref", justify="right")
        p.add_column("pred", justify="right")
        for n in names:
            p.add_column(n, justify="right")
        for typ, b in data["per_type"].items():
            m = b["metrics"]
            p.add_row(
                typ, str(m["strict"]["reference"]), str(m["strict"]["predicted"]), *(_pct(m[n]["f1"]) for n in names)
            )
        p.add_row("macro", "", "", *(_pct(data["macro"][n]["f1"]) for n in names), style="bold")
        parts.append(p)

    e = data["errors"]
    et = Table(title="Error taxonomy (one-to-one matching, 004)", title_justify="left")
    et.add_column("kind")
    et.add_column("count", justify="right")
    rows = [
        ("correct (same span and type)", "correct"),
        ("false positive (no reference left)", "false_positive"),
        ("  of which overlap a reference", "false_positive_overlapping"),
        ("false negative (not predicted)", "false_negative"),
        ("  of which overlap a prediction", "false_negative_overlapping"),
        ("wrong label, same span (Type-3)", "wrong_label_same_span"),
        ("wrong label, overlapping span (Type-4)", "wrong_label_overlap"),
        ("right label, overlapping span (Type-5)", "right_label_overlap"),
        ("  longer", "right_label_overlap_longer"),
        ("  shorter", "right_label_overlap_shorter"),
        ("  shifted", "right_label_overlap_shifted"),
        ("  left boundary matches", "right_label_overlap_left_match"),
        ("  right boundary matches", "right_label_overlap_right_match"),
    ]
    for label, key in rows:
        et.add_row(label, str(e[key]))
    parts.append(et)
    if "judge" in data:
        parts.append(_judge_table(data["judge"]))
    parts.append(Text(data["signature"], style="dim"))
    return Group(*parts)


def _judge_table(judge: dict[str, Any]) -> Table:
    j = Table(title="Judge: matched right-label/overlap (Type-5) pairs, and F1 (%)", title_justify="left")
    for col in JUDGE_HEADER:
        j.add_column(col, justify="left" if col == "type" else "right")
    rows = judge_rows(judge)
    for i, row in enumerate(rows):
        j.add_row(*row, style="bold" if i == len(rows) - 1 else None)
    return j


def print_report(data: dict[str, Any], *, per_type: bool = True) -> None:
    Console(width=120).print(render(data, per_type=per_type))
