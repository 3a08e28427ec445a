"""Names, descriptions and number formats shared by the tables, the writers and the charts."""

from __future__ import annotations

import math

from ..results import Corpus, CriterionScores, ErrorCounts, EvaluationResult, MatchScores
from ..stages.criteria import ERROR_TAXONOMY

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

# Criteria whose partial matches Kong and Sullivan analyse (their Figure 1 and Tables 3 and 4).
PARTIAL_CRITERIA = ("left", "right", "overlap", "learned")

TAXONOMY = ERROR_TAXONOMY
ERROR_KEYS = tuple(key for key, code, _ in TAXONOMY if code)


def pct(x: float | None) -> str:
    """A score as a percentage with two decimals; missing or NaN scores read n/a."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.2f}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def corpus_line(corpus: Corpus) -> str:
    return (
        f"{plural(corpus['documents'], 'document')}, {plural(corpus['sentences'], 'sentence')}, "
        f"{plural(corpus['tokens'], 'token')}; {corpus['reference_mentions']} reference and "
        f"{plural(corpus['predicted_mentions'], 'predicted mention')}."
    )


def number(x: float | int) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def total_errors(errors: ErrorCounts) -> int:
    return sum(int(errors[k]) for k in ERROR_KEYS)


def share(count: int, whole: int) -> str:
    return f"{100 * count / whole:.1f}%" if whole else "–"


def match_metrics(metrics: dict[str, CriterionScores]) -> dict[str, MatchScores]:
    """The blocks of ``metrics`` with full and partial matches: every criterion but ``token``."""
    return {name: m for name, m in metrics.items() if "true_positive" not in m}


def partial_label(data: EvaluationResult) -> str:
    """How a partial match is credited, in words, for legends and headings."""
    credit = str(data.get("options", {}).get("credit", "0.5"))
    if credit in ("dice", "iou"):
        return f"partial ({credit} credit)"
    try:
        return f"partial ({float(credit):g} credit)"
    except ValueError:
        return "partial"


def repairs_line(data: EvaluationResult) -> str | None:
    """What the repair policy changed, in words (None when it changed nothing)."""
    repairs = data.get("repairs")
    if not repairs:
        return None
    labels = data.get("options", {}).get("labels", "")
    parts = []
    for side in ("reference", "predicted"):
        r = repairs.get(side)
        if r:
            where = f" (first at line {r['first_line']})" if r.get("first_line") else ""
            parts.append(f"{r['invalid_transitions']} in {r['file']}{where}")
    verb = "dropped the mentions at fault" if repairs.get("policy") == "discard" else "read as conlleval reads them"
    return f"Invalid {labels} transitions, {verb} (--repair {repairs.get('policy')}): {'; '.join(parts)}."
