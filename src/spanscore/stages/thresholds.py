"""Scored predictions (GLiNER's and span classifiers' ``score``) swept over thresholds: at each
threshold the mentions scored at least that much are kept, and scored exactly against the
reference (place and type), overall and per type, and by place alone (boundary); the best
threshold by F1 of each.

Sorting once makes the sweep one pass: the predictions in decreasing score, a running count of
those kept and of those that are reference mentions, read off at each distinct score. A place
and type predicted twice counts once, at its higher score, as exact matching would pair it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np

Key = tuple[Hashable, int, int, str]  # document, start, end, type


def sweep(scored: Iterable[tuple[Key, float]], reference: Iterable[Key]) -> dict[str, Any]:
    """The sweep of ``scored`` (each prediction's key and score) against ``reference``, overall
    and per type (strict), and by place alone (``boundary``): the thresholds (distinct scores,
    decreasing), precision, recall and F1 at each, and the threshold of the best F1 (the highest
    of equals)."""
    best_score: dict[Key, float] = {}
    for key, score in scored:
        if key not in best_score or score > best_score[key]:
            best_score[key] = score
    ref = set(reference)
    out: dict[str, Any] = {"overall": _curve(best_score, ref)}
    types = sorted({k[3] for k in best_score} | {k[3] for k in ref})
    out["types"] = {
        t: _curve({k: v for k, v in best_score.items() if k[3] == t}, {k for k in ref if k[3] == t}) for t in types
    }
    # Boundary matching (the place, any type): a place predicted with two types counts once, at
    # its higher score.
    places: dict[Key, float] = {}
    for (doc, start, end, _), score in best_score.items():
        key = (doc, start, end, "")
        places[key] = max(score, places.get(key, score))
    out["boundary"] = _curve(places, {(doc, start, end, "") for doc, start, end, _ in ref})
    return out


def _curve(scores: dict[Key, float], ref: set[Key]) -> dict[str, Any]:
    if not scores:
        return {"thresholds": [], "precision": [], "recall": [], "f1": [], "best": None}
    keys = list(scores)
    value = np.fromiter((scores[k] for k in keys), dtype=np.float64, count=len(keys))
    hit = np.fromiter((k in ref for k in keys), dtype=bool, count=len(keys))
    order = np.argsort(-value, kind="stable")
    value, hit = value[order], hit[order]
    kept = np.arange(1, len(value) + 1)
    matched = np.cumsum(hit)
    # Read off at the last prediction of each distinct score: a threshold keeps all its ties.
    last = np.flatnonzero(np.append(value[1:] != value[:-1], True))
    precision = matched[last] / kept[last]
    recall = matched[last] / len(ref) if ref else np.zeros(len(last))
    total = precision + recall
    f1 = np.divide(2 * precision * recall, total, out=np.zeros(len(last)), where=total > 0)
    best = int(np.argmax(f1))  # the first maximum: the highest threshold of equal F1
    return {
        "thresholds": value[last].tolist(),
        "precision": precision.tolist(),
        "recall": recall.tolist(),
        "f1": f1.tolist(),
        "best": {
            "threshold": float(value[last][best]),
            "precision": float(precision[best]),
            "recall": float(recall[best]),
            "f1": float(f1[best]),
        },
    }
