"""Language-model error classes compared across systems (prompts, models), with intervals.

Each system's predicted mentions fall in the classes of ``io.strings.CLASSES`` (exact, right
string wrong type, boundary, unannotated, not in the text, off-schema, invalid); each reference
document holds a count of each. A class's count and its share of the system's predictions get a
percentile bootstrap interval over documents (Efron and Tibshirani 1993), and each system's
difference from the first a paired one: the same resamples of documents score every system, as
``significance`` does for the scores. The p-value is the paired bootstrap's (Koehn 2004): the
resamples whose difference strays from the observed one by at least the observed difference,
p = (c + 1) / (n + 1).

Documents with equal rows of every system's classes are interchangeable, so a resample is drawn
over the distinct rows (``significance.Draws``), at a cost that follows those, not the documents.

>>> import numpy as np
>>> from spanscore.io.strings import CLASSES, DocumentClasses
>>> one = np.zeros((2, len(CLASSES)), dtype=np.int64); one[0, 0] = one[1, 4] = 1
>>> two = np.zeros((2, len(CLASSES)), dtype=np.int64); two[:, 0] = 1
>>> out = compare_classes([DocumentClasses(("a", "b"), one), DocumentClasses(("a", "b"), two)],
...                       ["p1", "p2"], Resampling(resamples=200))
>>> out["systems"][1]["classes"]["exact"]["share"]["value"], out["differences"][0]["difference"]
(1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from ..io.strings import CLASSES, DocumentClasses
from .significance import Draws, Resampling

FloatArray = npt.NDArray[np.float64]
_STREAM = 3  # the resamples' own stream: apart from the scores' bootstrap (0), randomisation (1), groups (2)
_TOLERANCE = 1e-12
MEASURES = ("count", "share")


def compare_classes(
    systems: Sequence[DocumentClasses], names: Sequence[str], resampling: Resampling | None = None
) -> dict[str, Any]:
    """Each system's count and share of each class with its interval, and each system's
    difference from the first (count and share) with its paired interval and p-value."""
    resampling = resampling or Resampling()
    if not systems or len(systems) != len(names):
        raise OptionError("give one name per system, and at least one system")
    ids = systems[0].ids
    per_system = [_aligned(s, ids) for s in systems]
    n_classes = len(CLASSES)
    joint = np.hstack(per_system) if ids else np.zeros((0, n_classes * len(systems)), dtype=np.int64)
    rows, counts = np.unique(joint, axis=0, return_counts=True) if ids else (joint, np.zeros(0, dtype=np.int64))
    totals = joint.sum(axis=0).astype(np.float64)
    points = [_measures(totals[None, k * n_classes : (k + 1) * n_classes]) for k in range(len(systems))]

    samples: list[dict[str, list[FloatArray]]] = [{m: [] for m in MEASURES} for _ in systems]
    if ids:
        draws = Draws(counts.astype(np.int64))
        block = max(1, min(256, (1 << 19) // max(draws.k, 1)))
        values = rows.astype(np.float64)
        for b, start in enumerate(range(0, resampling.resamples, block)):
            size = min(block, resampling.resamples - start)
            sums = draws.bootstrap(np.random.default_rng([resampling.seed, _STREAM, b]), size) @ values
            for k in range(len(systems)):
                got = _measures(sums[:, k * n_classes : (k + 1) * n_classes])
                for m in MEASURES:
                    samples[k][m].append(got[m])
    drawn = [{m: np.vstack(s[m]) if s[m] else np.full((0, n_classes), np.nan) for m in MEASURES} for s in samples]
    level = resampling.level
    out_systems = []
    for k, name in enumerate(names):
        classes = {}
        for j, c in enumerate(CLASSES):
            count = _interval(drawn[k]["count"][:, j], float(points[k]["count"][0, j]), level)
            count["value"] = int(points[k]["count"][0, j])
            share = _interval(drawn[k]["share"][:, j], float(points[k]["share"][0, j]), level)
            classes[c] = {"count": count, "share": share}
        out_systems.append({"name": name, "predicted": int(points[k]["count"][0].sum()), "classes": classes})
    differences = []
    for k in range(1, len(systems)):
        for j, c in enumerate(CLASSES):
            for m in MEASURES:
                observed = float(points[k][m][0, j] - points[0][m][0, j])
                diffs = drawn[k][m][:, j] - drawn[0][m][:, j]
                entry = _interval(diffs, observed, level)
                kept = diffs[~np.isnan(diffs)]
                p = None
                if not math.isnan(observed) and kept.shape[0]:
                    c_out = int(np.count_nonzero(np.abs(kept - observed) >= abs(observed) - _TOLERANCE))
                    p = (c_out + 1) / (kept.shape[0] + 1)
                differences.append(
                    {
                        "a": names[0],
                        "b": names[k],
                        "class": c,
                        "measure": m,
                        "difference": entry["value"],
                        "low": entry["low"],
                        "high": entry["high"],
                        "p_bootstrap": p,
                    }
                )
    return {
        "classes": list(CLASSES),
        "documents": len(ids),
        "systems": out_systems,
        "differences": differences,
    }


def _aligned(system: DocumentClasses, ids: tuple[str, ...]) -> npt.NDArray[np.int64]:
    """``system``'s rows in the order of ``ids`` (every system is located in one reference)."""
    if system.ids == ids:
        return system.counts
    where = {d: k for k, d in enumerate(system.ids)}
    if set(where) != set(ids):
        raise OptionError("the systems' classes are counted over different documents: compare them on one reference")
    return system.counts[[where[d] for d in ids]]


def _measures(sums: FloatArray) -> dict[str, FloatArray]:
    """Counts (resamples x classes) and each one's share of its resample's predictions."""
    total = sums.sum(axis=1, keepdims=True)
    share = np.divide(sums, total, out=np.full(sums.shape, np.nan), where=total > 0)
    return {"count": sums, "share": share}


def _interval(values: FloatArray, value: float, level: float) -> dict[str, Any]:
    kept = values[~np.isnan(values)]
    if math.isnan(value) or kept.shape[0] == 0:
        return {"value": None if math.isnan(value) else value, "low": None, "high": None}
    low, high = np.quantile(kept, [(1 - level) / 2, (1 + level) / 2])
    return {"value": value, "low": float(low), "high": float(high)}
