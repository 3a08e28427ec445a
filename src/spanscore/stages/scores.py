"""Scores from counts: precision, recall and F1 for every criterion, scheme, type and average.

Precision divides the credit earned by predictions by the number of predictions; recall divides
the credit earned by reference mentions by the number of reference mentions (Kong and Sullivan,
eq. 1 and 2).
A pair earns 1 when it matches fully and the partial credit when it matches partially. Where a
denominator is zero, the score is ``zero_division`` (0.0 by default; 1.0 and NaN are allowed),
as in scikit-learn; F1 is 0 when precision and recall are both 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..errors import OptionError
from ..results import (
    Confusion,
    ConfusionCell,
    CriterionScores,
    Discontinuous,
    DiscontinuousFigure,
    DiscontinuousUnits,
    ErrorCounts,
    Errors,
    Judge,
    JudgeScores,
    MacroScores,
    MatchScores,
    ScoreKey,
    Scores,
    SemEvalScores,
    TokenScores,
    TypeScores,
)
from ..runtime.records import record
from .counts import CONFUSION_FIELDS, CREDIT_SCALE, ERROR_FIELDS, MATCH_FIELDS, Counts
from .spans import IntArray

F = {name: i for i, name in enumerate(MATCH_FIELDS)}


@record
class PRF:
    """Precision, recall and F1."""

    precision: float
    recall: float
    f1: float


def check_zero_division(value: float) -> float:
    if not (value in (0.0, 1.0) or math.isnan(value)):
        raise OptionError("zero_division must be 0, 1 or nan")
    return float(value)


def prf(credit_pred: float, credit_ref: float, n_pred: int, n_ref: int, zero_division: float = 0.0) -> PRF:
    """Precision, recall and F1 from earned credit and the two denominators.

    >>> prf(3.5, 3.5, 4, 5)
    PRF(precision=0.875, recall=0.7, f1=0.7777777777777777)
    """
    p = credit_pred / n_pred if n_pred else zero_division
    r = credit_ref / n_ref if n_ref else zero_division
    if n_pred == 0 and n_ref == 0:
        f = zero_division
    elif math.isnan(p) or math.isnan(r):
        f = math.nan
    elif p + r == 0:
        f = 0.0
    else:
        f = 2 * p * r / (p + r)
    return PRF(p, r, f)


def f_beta(precision: float, recall: float, beta: float) -> float:
    """The weighted harmonic mean of precision and recall (van Rijsbergen 1979): recall counts
    ``beta`` times as much as precision; 1 gives F1. Consistent with ``prf``: NaN stays NaN, and two
    zero denominators (``precision = recall = zero_division``) give ``zero_division``.

    >>> round(f_beta(0.875, 0.7, 1.0), 12) == round(prf(3.5, 3.5, 4, 5).f1, 12)
    True
    >>> f_beta(0.5, 1.0, 2.0)
    0.8333333333333334
    """
    if math.isnan(precision) or math.isnan(recall):
        return math.nan
    b2 = beta * beta
    denominator = b2 * precision + recall
    return 0.0 if denominator == 0 else (1 + b2) * precision * recall / denominator


BETA_RANGE = (1e-6, 1e6)


def check_beta(beta: float) -> float:
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not math.isfinite(beta) or beta <= 0:
        raise OptionError(f"beta must be a positive number (1 gives F1, 0.5 favours precision), not {beta!r}")
    if not BETA_RANGE[0] <= beta <= BETA_RANGE[1]:
        # beta squared would overflow (or vanish) and F-beta is recall (or precision) to the last digit anyway
        raise OptionError(
            f"beta must be a positive number from {BETA_RANGE[0]:g} to {BETA_RANGE[1]:g} (1 gives F1), not {beta!r}"
        )
    return float(beta)


def add_f_beta(data: dict[str, Any], beta: float) -> None:
    """Add ``f_beta`` beside every ``f1`` of a report's JSON (micro, SemEval, per type, and the macro
    average as the mean of the per-type values, as the macro F1 is)."""

    def block(b: dict[str, Any]) -> None:
        b["f_beta"] = f_beta(b["precision"], b["recall"], beta)

    for b in data["metrics"].values():
        block(b)
    for b in data["semeval"].values():
        block(b)
    for entry in data["per_type"].values():
        for b in (*entry["metrics"].values(), *entry["semeval"].values()):
            block(b)
    for name, b in data["macro"].items():
        values = [entry["metrics"][name]["f_beta"] for entry in data["per_type"].values() if name in entry["metrics"]]
        b["f_beta"] = float(np.mean(values)) if values else 0.0


def credit_of(
    table: IntArray, credit: str, side: str, fixed_half: bool = False
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Credit earned per type on one side ("ref" or "pred") of a match table."""
    full = table[F[f"full_{side}"]].astype(np.float64)
    partial = table[F[f"partial_{side}"]].astype(np.float64)
    earned: np.ndarray[Any, np.dtype[np.float64]]
    if fixed_half:
        earned = full + 0.5 * partial
    elif credit in ("dice", "iou", "judge"):
        # Each pair's credit is rounded to 2^-32 (error < 1.2e-10); rounding the sum to 1e-9 gives back
        # the fractions a reader checks by hand (dice 0.4, not 0.39999999990686774).
        earned = full + np.round(table[F[f"scaled_credit_{side}"]].astype(np.float64) / CREDIT_SCALE, 9)
    else:
        earned = full + float(credit) * partial
    return earned


def match_scores(
    table: IntArray, counts: Counts, credit: str, zero_division: float, fixed_half: bool = False
) -> tuple[MatchScores, list[MatchScores]]:
    """Micro-averaged block and one block per type for one criterion's match table."""
    cp = credit_of(table, credit, "pred", fixed_half)
    cr = credit_of(table, credit, "ref", fixed_half)
    total = prf(
        float(cp.sum()), float(cr.sum()), int(counts.predicted.sum()), int(counts.reference.sum()), zero_division
    )
    micro: MatchScores = {
        "precision": total.precision,
        "recall": total.recall,
        "f1": total.f1,
        "full": int(table[F["full_ref"]].sum()),
        "partial": int(table[F["partial_ref"]].sum()),
        "credit": float(cr.sum()),
        "predicted": int(counts.predicted.sum()),
        "reference": int(counts.reference.sum()),
    }
    per_type: list[MatchScores] = []
    for t in range(len(counts.types)):
        s = prf(float(cp[t]), float(cr[t]), int(counts.predicted[t]), int(counts.reference[t]), zero_division)
        per_type.append(
            {
                "precision": s.precision,
                "recall": s.recall,
                "f1": s.f1,
                "full": int(table[F["full_ref"], t]),
                "partial": int(table[F["partial_ref"], t]),
                "credit": float(cr[t]),
                "predicted": int(counts.predicted[t]),
                "reference": int(counts.reference[t]),
            }
        )
    return micro, per_type


def semeval_block(table: IntArray, n_pred: int, n_ref: int, zero_division: float, t: int | None) -> SemEvalScores:
    """MUC categories and scores; for one type, COR/INC/PAR count matched reference mentions of it."""

    def get(name: str) -> int:
        row = table[F[name]]
        return int(row.sum() if t is None else row[t])

    cor, par, inc = get("full_ref"), get("partial_ref"), get("zero_ref")
    cor_p, par_p, inc_p = get("full_pred"), get("partial_pred"), get("zero_pred")
    mis = n_ref - cor - par - inc
    spu = n_pred - cor_p - par_p - inc_p
    s = prf(cor_p + 0.5 * par_p, cor + 0.5 * par, n_pred, n_ref, zero_division)
    block: SemEvalScores = {
        "correct": cor,
        "incorrect": inc,
        "partial": par,
        "missed": mis,
        "spurious": spu,
        "possible": n_ref,
        "actual": n_pred,
        "precision": s.precision,
        "recall": s.recall,
        "f1": s.f1,
    }
    if t is not None and (cor_p, par_p, inc_p) != (cor, par, inc):
        block["correct_predicted"] = cor_p
        block["partial_predicted"] = par_p
        block["incorrect_predicted"] = inc_p
    return block


def token_block(row_tp: int, row_ref: int, row_pred: int, zero_division: float) -> TokenScores:
    s = prf(row_tp, row_tp, row_pred, row_ref, zero_division)
    return {
        "precision": s.precision,
        "recall": s.recall,
        "f1": s.f1,
        "true_positive": row_tp,
        "predicted": row_pred,
        "reference": row_ref,
    }


def macro(blocks: Sequence[CriterionScores]) -> MacroScores:
    """Unweighted mean over types of per-type precision, recall and F1."""
    if not blocks:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    # Before the JSON is written a score is a float (NaN where undefined), never None.
    keys: tuple[ScoreKey, ...] = ("precision", "recall", "f1")
    return cast(MacroScores, {k: float(np.mean([cast(float, b[k]) for b in blocks])) for k in keys})


def score_counts(counts: Counts, *, zero_division: float = 0.0) -> Scores:
    """Every score as plain data: the body of a report's JSON."""
    zd = check_zero_division(zero_division)
    metrics: dict[str, CriterionScores] = {}
    per_type: dict[str, TypeScores] = {t: {"metrics": {}, "semeval": {}} for t in counts.types}
    macro_avg: dict[str, MacroScores] = {}
    credit = counts.credit
    for name, table in counts.criteria.items():
        rule = "judge" if name == "learned" else credit
        micro, types = match_scores(table, counts, rule, zd)
        metrics[name] = micro
        macro_avg[name] = macro(types)
        for t, block in zip(counts.types, types, strict=True):
            per_type[t]["metrics"][name] = block
    tp, ref, pred = (counts.token[i] for i in range(3))
    metrics["token"] = token_block(int(tp.sum()), int(ref.sum()), int(pred.sum()), zd)
    token_types: list[TokenScores] = []
    for i, t in enumerate(counts.types):
        token = per_type[t]["metrics"]["token"] = token_block(int(tp[i]), int(ref[i]), int(pred[i]), zd)
        token_types.append(token)
    macro_avg["token"] = macro(token_types)

    semeval: dict[str, SemEvalScores] = {}
    for name, table in counts.schemes.items():
        semeval[name] = semeval_block(table, int(counts.predicted.sum()), int(counts.reference.sum()), zd, None)
        for i, t in enumerate(counts.types):
            per_type[t]["semeval"][name] = semeval_block(
                table, int(counts.predicted[i]), int(counts.reference[i]), zd, i
            )
    errors: dict[str, Any] = {f: int(counts.errors[i].sum()) for i, f in enumerate(ERROR_FIELDS)}
    errors["per_type"] = {
        t: cast(ErrorCounts, {f: int(counts.errors[i, j]) for i, f in enumerate(ERROR_FIELDS)})
        for j, t in enumerate(counts.types)
    }
    out: Scores = {
        "metrics": metrics,
        "semeval": semeval,
        "per_type": per_type,
        "macro": macro_avg,
        "errors": cast(Errors, errors),
        "confusion": confusion_block(counts),
    }
    if "learned" in metrics:
        out["judge"] = judge_block(metrics, per_type)
    return out


def confusion_block(counts: Counts) -> Confusion:
    """The type confusion matrix of the error taxonomy's matching: its matched pairs by reference and
    predicted type, with missed reference mentions and spurious predictions (the taxonomy's false
    negatives and false positives) as one more column and row. Cells counting 0 are left out."""
    same, overlapping = (counts.confusion[CONFUSION_FIELDS.index(f)] for f in ("same_span", "overlapping"))
    missed = counts.errors[ERROR_FIELDS.index("false_negative")]
    spurious = counts.errors[ERROR_FIELDS.index("false_positive")]
    types = list(counts.types)
    rows: list[ConfusionCell] = []

    def cell(reference: str | None, predicted: str | None, n_same: int, n_overlapping: int, n: int) -> None:
        if n:
            rows.append(
                {
                    "reference": reference,
                    "predicted": predicted,
                    "count": n,
                    "same_span": n_same,
                    "overlapping": n_overlapping,
                }
            )

    for i, r in enumerate(types):
        for j, p in enumerate(types):
            s, o = int(same[i, j]), int(overlapping[i, j])
            cell(r, p, s, o, s + o)
        cell(r, None, 0, 0, int(missed[i]))
    for j, p in enumerate(types):
        cell(None, p, 0, 0, int(spurious[j]))
    return {"types": types, "rows": rows}


def judge_block(metrics: dict[str, CriterionScores], per_type: dict[str, TypeScores]) -> Judge:
    """The judge's verdicts on right-label/overlap (Type-5) pairs next to the strict, learned and
    overlap F1 (Nejadgholi et al. (2020), figures 7 and 8). ``type5`` counts the pairs the overlap
    criterion matches with partial credit, ``accepted`` the judge's credit on the learned matching
    (with ``--judge-credit probability``, the expected number of acceptances), ``rejected`` the rest."""

    def row(m: dict[str, CriterionScores]) -> JudgeScores:
        learned, overlap = cast(MatchScores, m["learned"]), cast(MatchScores, m["overlap"])
        accepted = round(learned["credit"] - learned["full"], 9)
        return {
            "type5": overlap["partial"],
            "accepted": accepted,
            "rejected": round(max(overlap["partial"] - accepted, 0.0), 9),
            "strict_f1": m["strict"]["f1"],
            "learned_f1": learned["f1"],
            "overlap_f1": overlap["f1"],
        }

    return {**row(metrics), "per_type": {t: row(b["metrics"]) for t, b in per_type.items()}}


def discontinuous_block(counts: Counts, zero_division: float, reading: str, unit: str) -> Discontinuous | None:
    """The figures of Dai et al. (2020) from ``counts.extra`` (``counts.DISCONTINUOUS_EXTRA``),
    None where no side had a discontinuous mention: strict precision, recall and F1 over all
    mentions, over discontinuous mentions only (recall over the reference's, precision over the
    prediction's) and over all mentions of the units whose reference holds a discontinuous one."""
    extra = counts.extra
    if "discontinuous.reference" not in extra:
        return None

    def figure(ref: int, pred: int, correct_ref: int, correct_pred: int) -> DiscontinuousFigure:
        s = prf(correct_pred, correct_ref, pred, ref, zero_division)
        return {
            "reference": ref,
            "predicted": pred,
            "correct": correct_ref,
            "precision": s.precision,
            "recall": s.recall,
            "f1": s.f1,
        }

    def of(name: str) -> DiscontinuousFigure:
        keys = ("reference", "predicted", "correct_reference", "correct_predicted")
        ref, pred, c_ref, c_pred = (int(extra.get(f"{name}.{k}", 0)) for k in keys)
        return figure(ref, pred, c_ref, c_pred)

    strict = counts.criteria["strict"]
    every = figure(
        int(counts.reference.sum()), int(counts.predicted.sum()), int(strict[0].sum()), int(strict[4].sum())
    )
    units = cast(DiscontinuousUnits, {**of("discontinuous_units"), "units": int(extra["discontinuous_units.units"])})
    units["unit"] = unit
    return {"reading": reading, "all": every, "mentions": of("discontinuous"), "units": units}
