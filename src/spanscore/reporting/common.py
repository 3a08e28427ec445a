"""Names, descriptions and number formats shared by the Markdown, HTML and chart writers."""

from __future__ import annotations

import math
from typing import Any

# What each criterion asks of a pair (the same wording as the CLI tables).
CRITERION_HELP = {
    "strict": "span and type",
    "boundary": "span, any type",
    "left": "type and start",
    "right": "type and end",
    "overlap": "type, any overlap",
    "learned": "judge-accepted overlaps",
    "token": "entity tokens",
}

# Criteria whose partial matches the paper analyses (Figure 1, Table 3/4).
PARTIAL_CRITERIA = ("left", "right", "overlap", "learned")

# The error taxonomy of 004: (key in report["errors"], code, description).
TAXONOMY: tuple[tuple[str, str, str], ...] = (
    ("correct", "", "correct: same span and type"),
    ("false_positive", "Type-1", "false positive: the prediction matches no reference"),
    ("false_negative", "Type-2", "false negative: the reference is not predicted"),
    ("wrong_label_same_span", "Type-3", "wrong label, same span"),
    ("wrong_label_overlap", "Type-4", "wrong label, overlapping span"),
    ("right_label_overlap", "Type-5", "right label, overlapping span"),
)
ERROR_KEYS = tuple(key for key, code, _ in TAXONOMY if code)
CODE = {key: code for key, code, _ in TAXONOMY}

# Finer counts shown under their parent row.
TAXONOMY_DETAIL: dict[str, tuple[tuple[str, str], ...]] = {
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

SEMEVAL_COLUMNS = (
    ("COR", "correct"),
    ("INC", "incorrect"),
    ("PAR", "partial"),
    ("MIS", "missed"),
    ("SPU", "spurious"),
    ("POS", "possible"),
    ("ACT", "actual"),
)


def pct(x: float | None) -> str:
    """A score as a percentage with two decimals; missing or NaN scores read n/a."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.2f}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def corpus_line(corpus: dict[str, Any]) -> str:
    return (
        f"{plural(corpus['documents'], 'document')}, {plural(corpus['sentences'], 'sentence')}, "
        f"{plural(corpus['tokens'], 'token')}; {corpus['reference_mentions']} reference and "
        f"{corpus['predicted_mentions']} predicted mentions."
    )


def number(x: float | int) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def total_errors(errors: dict[str, Any]) -> int:
    return sum(int(errors[k]) for k in ERROR_KEYS)


def share(count: int, whole: int) -> str:
    return f"{100 * count / whole:.1f}%" if whole else "–"


JUDGE_HEADER = ("type", "Type-5", "accepted", "rejected", "strict F1", "learned F1", "overlap F1")


def judge_rows(judge: dict[str, Any]) -> list[list[str]]:
    """The judge's verdicts on Type-5 pairs per type, then over all types (last row)."""
    return [
        [name, str(r["type5"]), number(r["accepted"]), number(r["rejected"]),
         pct(r["strict_f1"]), pct(r["learned_f1"]), pct(r["overlap_f1"])]
        for name, r in [*judge["per_type"].items(), ("all", judge)]
    ]


def partial_label(data: dict[str, Any]) -> str:
    """How a partial match is credited, in words, for legends and headings."""
    credit = str(data.get("options", {}).get("credit", "0.5"))
    if credit in ("dice", "iou"):
        return f"partial ({credit} credit)"
    try:
        return f"partial ({float(credit):g} credit)"
    except ValueError:
        return "partial"
