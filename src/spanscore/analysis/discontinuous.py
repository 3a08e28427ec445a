"""Intervals of the discontinuous-NER figures (Dai et al. 2020) by the document bootstrap.

The figures' counts are additive per document (``stages.counts.DISCONTINUOUS_EXTRA``: a sentence
lies in one document), so a resample of documents is a sum of their rows: drawn, like every
other score's intervals, as a multinomial over the distinct rows (``significance.Draws``), which is
exactly drawing documents with replacement. The rows are a sorted histogram, so the intervals
are the same whatever the chunk size or the number of workers that counted them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..stages.counts import DISCONTINUOUS_EXTRA
from ..stages.documents import DocCounts, Histogram
from .significance import Draws, Resampling

FloatArray = npt.NDArray[np.float64]
FIGURES = ("mentions", "units")  # the figures read from the rows; "all" is the strict score's
METRICS = ("precision", "recall", "f1")
_STREAM = 3  # the bootstrap's own generator stream, apart from the scores' (0), tests' (1), groups' (2)
_BLOCK_CELLS = 1 << 19  # resamples x distinct rows drawn at a time (about 4 MB of floats)


def histogram(rows: DocCounts | None, documents: int) -> Histogram:
    """The figures' counts as a histogram over all ``documents``: those without a row count zero."""
    if rows is None:
        empty = np.zeros((0, len(DISCONTINUOUS_EXTRA)), dtype=np.int64)
        return Histogram.of(empty, DISCONTINUOUS_EXTRA).with_zeros(documents)
    return Histogram.of(rows.stats, DISCONTINUOUS_EXTRA).with_zeros(documents)


def _prf(totals: FloatArray, at: int, zero_division: float) -> dict[str, FloatArray]:
    """``stages.scores.prf`` of each resample's totals of the figure whose columns start at ``at``."""
    ref, pred, correct_ref, correct_pred = (totals[:, at + k] for k in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(pred > 0, correct_pred / np.where(pred > 0, pred, 1), zero_division)
        r = np.where(ref > 0, correct_ref / np.where(ref > 0, ref, 1), zero_division)
        s = p + r
        f = np.where(s > 0, 2 * p * r / np.where(s > 0, s, 1), 0.0)
    f = np.where(np.isnan(p) | np.isnan(r), np.nan, f)
    f = np.where((pred == 0) & (ref == 0), zero_division, f)
    return {"precision": p, "recall": r, "f1": f}


def _interval(values: FloatArray, value: float | None, level: float) -> dict[str, float | None]:
    kept = values[~np.isnan(values)]
    if value is None or math.isnan(value) or kept.shape[0] == 0:
        return {"value": None if value is None or math.isnan(value) else value, "low": None, "high": None}
    low, high = np.quantile(kept, [(1 - level) / 2, (1 + level) / 2])
    return {"value": value, "low": float(low), "high": float(high)}


def resampled(hist: Histogram, resampling: Resampling) -> FloatArray:
    """The totals of every resample: [resamples, len(DISCONTINUOUS_EXTRA)]."""
    draws = Draws(hist.counts)
    rows = hist.rows.astype(np.float64)
    size = max(1, min(resampling.resamples, _BLOCK_CELLS // max(draws.k, 1)))
    out = []
    for block, start in enumerate(range(0, resampling.resamples, size)):
        rng = np.random.default_rng([resampling.seed, _STREAM, block])
        out.append(draws.bootstrap(rng, min(size, resampling.resamples - start)) @ rows)
    return np.concatenate(out)


def intervals(
    rows: DocCounts | None,
    *,
    documents: int,
    figures: Mapping[str, Any],
    strict: dict[str, dict[str, float | None]],
    zero_division: float,
    resampling: Resampling,
) -> dict[str, Any]:
    """The intervals of the discontinuous block ``figures`` (``Report.to_dict()["discontinuous"]``):
    its figures over discontinuous mentions and over the units holding one, from the per-document
    rows ``rows`` of a corpus of ``documents``; over all mentions, the strict score's ``strict``."""
    hist = histogram(rows, documents)
    totals = resampled(hist, resampling)
    out: dict[str, Any] = {"all": {m: strict[m] for m in METRICS}}
    for at, name in zip((0, 5), FIGURES, strict=True):
        scores = _prf(totals, at, zero_division)
        out[name] = {m: _interval(scores[m], figures[name][m], resampling.level) for m in METRICS}
    return out


def document_figures(rows: DocCounts | None, keys: npt.NDArray[np.int64], zero_division: float) -> list[dict[str, Any]]:
    """The two figures of each document of ``keys`` (zero counts where it has no row), as the
    evaluation's ``discontinuous`` block names them."""
    table = np.zeros((keys.shape[0], len(DISCONTINUOUS_EXTRA)), dtype=np.int64)
    if rows is not None and rows.keys.shape[0] and keys.shape[0]:
        at = np.minimum(np.searchsorted(keys, rows.keys), keys.shape[0] - 1)
        found = keys[at] == rows.keys  # a document's row, where the document has one
        table[at[found]] = rows.stats[found]
    out = []
    scores = {name: _prf(table.astype(np.float64), at, zero_division) for at, name in zip((0, 5), FIGURES, strict=True)}
    for i in range(keys.shape[0]):
        row: dict[str, Any] = {}
        for at, name in zip((0, 5), FIGURES, strict=True):
            figure: dict[str, Any] = {
                "reference": int(table[i, at]),
                "predicted": int(table[i, at + 1]),
                "correct": int(table[i, at + 2]),
            }
            for m in METRICS:
                v = float(scores[name][m][i])
                figure[m] = None if math.isnan(v) else v
            row[name] = figure
        row["units"]["units"] = int(table[i, 4])
        out.append(row)
    return out
