"""The F-score a strict and a forgiving user would give a run, and each criterion's error against
it (Nejadgholi et al. 2020, Table 2).

A user credits exact matches and the right-label/overlapping (Type-5) pairs they accept: a pair
whose human score is at least 2 (forgiving) or 3 (strict). Type-5 pairs are those of the SemEval
``type`` matching, the pairs the error taxonomy counts as ``right_label_overlap``. A criterion's
error is its F1 minus the user's, so a negative error means the criterion is harsher than the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ...api import evaluate
from ...errors import InputError, NoDetails, OptionError
from ...io.jsonl import json_objects
from ...report import Report
from ...stages.criteria import RIGHT_LABEL_OVERLAP_KINDS
from ...stages.judging import Judge, JudgeCredit
from ...stages.matching import EXACT
from ...stages.scores import prf
from ...stages.text import Text
from .judgements import USERS

# (sentence or document, gold start, gold end, predicted start, predicted end): character offsets
# in the sentence text (tokens joined by single spaces) or in the document text.
PairKey = tuple[int, int, int, int, int]
Missing = Literal["error", "accept", "reject"]
KEY_FIELDS = ("sentence_index", "gold_start", "gold_end", "pred_start", "pred_end")


@dataclass(frozen=True)
class PairScore:
    score: int
    line: int
    gold_text: str | None = None
    pred_text: str | None = None


def read_pair_scores(path: str | Path) -> dict[PairKey, PairScore]:
    """Scores of Type-5 pairs: JSONL rows with ``sentence_index``, ``gold_start``, ``gold_end``,
    ``pred_start``, ``pred_end`` and ``score`` (judgements.jsonl rows that have all of them)."""
    name = str(path)
    out: dict[PairKey, PairScore] = {}
    for n, obj in json_objects(path):
        values = []
        for f in (*KEY_FIELDS, "score"):
            v = obj.get(f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                what = "missing" if v is None else f"not a non-negative integer: {v!r}"
                raise InputError(f"field {f!r} is {what}", path=name, line=n)
            values.append(v)
        if not 1 <= values[-1] <= 5:
            raise InputError(f"score must be 1 to 5, not {values[-1]}", path=name, line=n)
        key: PairKey = (values[0], values[1], values[2], values[3], values[4])
        if key in out and out[key].score != values[-1]:
            raise InputError(f"pair scored twice, {out[key].score} at line {out[key].line}", path=name, line=n)
        gold, pred = obj.get("gold_text"), obj.get("pred_text")
        out[key] = PairScore(
            values[-1], n, gold if isinstance(gold, str) else None, pred if isinstance(pred, str) else None
        )
    return out


@dataclass(frozen=True)
class Type5Pair:
    key: PairKey
    gold_text: str
    pred_text: str
    ref: int  # indices into the report's reference and predicted spans
    pred: int


def type5_pairs(report: Report) -> tuple[list[Type5Pair], int]:
    """The Type-5 pairs of a report (made with ``keep_details=True``), and its exact matches."""
    if report.kept is None:
        raise NoDetails("the user F-scores")
    tokens = report.options.get("units") == "tokens"
    out = []
    exact = 0
    for kept in report.kept:
        d, text = kept.details, kept.text
        m = d.schemes["type"]
        kind = d.pairs.kind[m.pair]
        exact += int((kind == EXACT).sum())

        def char_offset(global_pos: int, local_pos: int, text: Text = text) -> int:
            if not tokens:
                return local_pos
            prefix = text.mention(global_pos - local_pos, global_pos)
            return len(prefix) + 1 if prefix else 0

        for k in m.pair[np.isin(kind, RIGHT_LABEL_OVERLAP_KINDS)].tolist():
            r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
            unit = int(d.reference.unit[r])
            rs, re_ = int(d.reference.start[r]), int(d.reference.end[r])
            ps, pe = int(d.predicted.start[p]), int(d.predicted.end[p])
            gold_text, pred_text = text.mention(rs, re_), text.mention(ps, pe)
            gs = char_offset(rs, text.local(unit, rs))
            pstart = char_offset(ps, text.local(unit, ps))
            key: PairKey = (unit + kept.unit_offset, gs, gs + len(gold_text), pstart, pstart + len(pred_text))
            out.append(Type5Pair(key, gold_text, pred_text, r, p))
    return out, exact


def user_scores(
    report: Report,
    scores: Mapping[PairKey, PairScore | int],
    *,
    missing: Missing = "error",
    scores_path: str = "scores",
) -> dict[str, Any]:
    """Each user's F-score for a report and each criterion's error against it.

    ``report`` should be made with ``credit=1.0`` (so that ``overlap`` is the relaxed F-score) and
    ``keep_details=True``; with a judge it also has the ``learned`` criterion.
    """
    if missing not in ("error", "accept", "reject"):
        raise OptionError("missing must be error, accept or reject")
    pairs, exact = type5_pairs(report)
    score_of: dict[PairKey, int] = {}
    unscored: list[Type5Pair] = []
    for pair in pairs:
        s = scores.get(pair.key)
        if s is None:
            unscored.append(pair)
            continue
        if isinstance(s, PairScore):
            for given, actual, side in ((s.gold_text, pair.gold_text, "gold"), (s.pred_text, pair.pred_text, "pred")):
                if given is not None and given != actual:
                    raise InputError(
                        f"{side}_text {given!r} is {actual!r} in the run: the scores belong to other text",
                        path=scores_path,
                        line=s.line,
                    )
            score_of[pair.key] = s.score
        else:
            score_of[pair.key] = int(s)
    if unscored and missing == "error":
        u = unscored[0]
        raise InputError(
            f"{len(unscored)} of {len(pairs)} right-label/overlapping pairs of the run have no score, the first:"
            f" sentence {u.key[0]}, gold {u.key[1]}-{u.key[2]} {u.gold_text!r}, predicted {u.key[3]}-{u.key[4]}"
            f" {u.pred_text!r} (or choose missing=accept/reject)",
            path=scores_path,
        )
    n_pred = int(report.counts.predicted.sum())
    n_ref = int(report.counts.reference.sum())
    metrics = report.metrics
    criteria = {"exact": metrics["strict"]["f1"], "relaxed": metrics["overlap"]["f1"]}
    if "learned" in metrics:
        criteria["learned"] = metrics["learned"]["f1"]
    out: dict[str, Any] = {
        "type5_pairs": len(pairs),
        "scored": len(score_of),
        "unscored": len(unscored),
        "unused_scores": len(set(scores) - {p.key for p in pairs}),
        "exact_matches": exact,
        "criteria": criteria,
    }
    for user, least in USERS.items():
        accepted = sum(1 for s in score_of.values() if s >= least)
        if missing == "accept":
            accepted += len(unscored)
        f = prf(exact + accepted, exact + accepted, n_pred, n_ref, report.zero_division)
        out[user] = {
            "accepted": accepted,
            "precision": f.precision,
            "recall": f.recall,
            "f1": f.f1,
            "error": {name: value - f.f1 for name, value in criteria.items()},
        }
    return out


def user_f(
    reference: Any,
    predicted: Any,
    scores: str | Path | Mapping[PairKey, PairScore | int],
    *,
    judge: Judge | None = None,
    judge_credit: JudgeCredit = "accept",
    judge_name: str = "judge",
    missing: Missing = "error",
    **options: Any,
) -> dict[str, Any]:
    """Evaluate a run (``spanscore.evaluate`` options pass through) and compare every criterion
    with the strict and the forgiving user's F-scores; see ``user_scores``."""
    if "credit" in options or "keep_details" in options:
        raise OptionError("user_f sets credit=1 (the relaxed F-score) and keep_details itself")
    path = "scores"
    if isinstance(scores, str | Path):
        path = str(scores)
        scores = read_pair_scores(scores)
    report = evaluate(
        reference=reference,
        predicted=predicted,
        credit=1.0,
        judge=judge,
        judge_credit=judge_credit,
        judge_name=judge_name,
        keep_details=True,
        **options,
    )
    out = user_scores(report, scores, missing=missing, scores_path=path)
    out["signature"] = report.signature
    return out
