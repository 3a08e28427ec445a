"""seqeval's classification report (per type precision, recall, F1 and support, then the micro,
macro and weighted averages) of one criterion of an evaluation, as text or as a dict.

The layout and keys are seqeval's (``f1-score``, ``support``, ``micro avg``...), so that code
reading seqeval's report reads this one; the figures are the criterion's, partial credit included
for left, right and overlap.
"""

from __future__ import annotations

from typing import Any

from ..errors import OptionError
from ..results import EvaluationResult

AVERAGES = ("micro avg", "macro avg", "weighted avg")


def _block(scores: Any, criterion: str) -> dict[str, Any]:
    if criterion.startswith("semeval_"):
        return dict(scores["semeval"][criterion[len("semeval_") :]])
    return dict(scores["metrics"][criterion])


def _support(block: dict[str, Any]) -> int:
    return int(block["reference"] if "reference" in block else block["possible"])


def criteria_of(data: EvaluationResult) -> list[str]:
    """The names ``classification_report`` takes: every criterion, then ``semeval_`` and each scheme."""
    return [*data["metrics"], *(f"semeval_{s}" for s in data["semeval"])]


def report_dict(data: EvaluationResult, criterion: str = "strict") -> dict[str, dict[str, Any]]:
    """``{type: {precision, recall, f1-score, support}}`` for every type in sorted order, then the
    three averages. A score that is undefined under the evaluation's zero_division (NaN) is None."""
    names = criteria_of(data)
    if criterion not in names:
        raise OptionError(f"no criterion {criterion!r}: choose one of {', '.join(names)}")
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(data["per_type"]):
        block = _block(data["per_type"][name], criterion)
        out[name] = _row(block["precision"], block["recall"], block["f1"], _support(block))
    rows = list(out.values())
    total = sum(r["support"] for r in rows)
    micro = _block(data, criterion)
    out["micro avg"] = _row(micro["precision"], micro["recall"], micro["f1"], total)
    keys = ("precision", "recall", "f1-score")
    out["macro avg"] = {**{k: _mean(rows, k, None) for k in keys}, "support": total}
    out["weighted avg"] = {**{k: _mean(rows, k, total) for k in keys}, "support": total}
    return out


def _row(precision: Any, recall: Any, f1: Any, support: int) -> dict[str, Any]:
    return {"precision": precision, "recall": recall, "f1-score": f1, "support": support}


def _mean(rows: list[dict[str, Any]], key: str, total: int | None) -> float | None:
    """The mean over types (weighted by support when ``total`` is given); None where a type's
    score is undefined, or where there are no types."""
    values = [r[key] for r in rows]
    if not values or any(v is None for v in values):
        return None
    if total is None:
        return float(sum(values) / len(values))
    if total == 0:
        return 0.0
    return float(sum(v * r["support"] for v, r in zip(values, rows, strict=True)) / total)


def report_text(data: EvaluationResult, criterion: str = "strict", digits: int = 2) -> str:
    """seqeval's text layout: one line per type, a blank line, the three averages."""
    rows = report_dict(data, criterion)
    width = max([len(n) for n in rows] + [digits])
    headers = ("precision", "recall", "f1-score", "support")
    lines = [f"{'':>{width}s} " + "".join(f" {h:>9}" for h in headers), ""]

    def line(name: str, row: dict[str, Any]) -> str:
        figures = "".join(
            f" {'n/a':>9}" if row[k] is None else f" {row[k]:>9.{digits}f}" for k in ("precision", "recall", "f1-score")
        )
        return f"{name:>{width}s} {figures} {row['support']:>9}"

    lines += [line(n, r) for n, r in rows.items() if n not in AVERAGES]
    lines.append("")
    lines += [line(n, rows[n]) for n in AVERAGES]
    return "\n".join(lines) + "\n"
