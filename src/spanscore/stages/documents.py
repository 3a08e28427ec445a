"""Per-document counts: every statistic of each document, additive like the totals.

A row holds, summed over types, what ``Counts`` holds per type: mentions on each side, the match
table of every criterion and SemEval scheme, the token counts and the error taxonomy. Rows of a
corpus add up exactly to its totals, so resampling documents (bootstrap, randomisation) needs no
new matching. Where a corpus has no document marks, each sentence is a row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .counts import CREDIT_SCALE
from .spans import IntArray

PRED_TP = "token.true_positive_predicted"  # bucket rows only differ: documents never split a unit

FloatArray = npt.NDArray[np.float64]


@dataclass
class TypeRows:
    """Every statistic per document and type: row ``i`` is document key ``keys[i]``, type
    ``names[type_index[i]]``. Only pairs with a mention are kept; a document cut by a chunk
    boundary may have two rows of one type, which add up."""

    keys: IntArray
    type_index: IntArray
    names: tuple[str, ...]
    stats: IntArray

    def then(self, later: TypeRows, offset: int) -> TypeRows:
        names = list(self.names)
        index = {n: i for i, n in enumerate(names)}
        for n in later.names:
            if n not in index:
                index[n] = len(names)
                names.append(n)
        remap = np.array([index[n] for n in later.names] or [0], dtype=np.int64)
        return TypeRows(
            np.concatenate((self.keys, later.keys + offset)),
            np.concatenate((self.type_index, remap[later.type_index])),
            tuple(names),
            np.concatenate((self.stats, later.stats)),
        )


@dataclass
class DocCounts:
    """Every statistic per document: ``stats[i]`` belongs to document key ``keys[i]``.

    ``unit`` says what a row is ("document" or "sentence"); ``ids`` name the rows where the format
    gives names (JSONL ids), else rows are numbered from 1 in corpus order.
    """

    keys: IntArray
    stats: IntArray  # [rows, len(fields)]
    fields: tuple[str, ...]
    ids: list[str] | None = None
    unit: str = "document"
    type_rows: TypeRows | None = None  # per document and type, where asked for

    def then(self, later: DocCounts, offset: int) -> DocCounts:
        """These rows followed by ``later``'s, whose keys start at ``offset``; a document that the
        chunk boundary cut in two (the same key on both sides) becomes one row."""
        keys = later.keys + offset
        stats, later_ids = later.stats, later.ids
        head = self.stats
        if self.keys.shape[0] and keys.shape[0] and keys[0] == self.keys[-1]:
            head = self.stats.copy()
            head[-1] += stats[0]
            stats, keys = stats[1:], keys[1:]
            later_ids = later_ids[1:] if later_ids is not None else None
        ids = None if self.ids is None or later_ids is None else self.ids + later_ids
        type_rows = None
        if self.type_rows is not None and later.type_rows is not None:
            type_rows = self.type_rows.then(later.type_rows, offset)
        return DocCounts(
            np.concatenate((self.keys, keys)), np.concatenate((head, stats)), self.fields, ids, self.unit, type_rows
        )

    def column(self, name: str) -> IntArray:
        return self.stats[:, self.fields.index(name)]

    def names(self) -> list[str]:
        if self.ids is not None:
            return self.ids
        return [str(i + 1) for i in range(self.stats.shape[0])]


def _div(num: FloatArray, den: IntArray, zero_division: float) -> FloatArray:
    safe = np.where(den > 0, den, 1)
    out: FloatArray = np.where(den > 0, num / safe, zero_division)
    return out


def _prf(cp: FloatArray, cr: FloatArray, n_pred: IntArray, n_ref: IntArray, zd: float) -> dict[str, FloatArray]:
    """``scores.prf`` over arrays: one precision, recall and F1 per row."""
    p = _div(cp, n_pred, zd)
    r = _div(cr, n_ref, zd)
    s = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(s > 0, 2 * p * r / np.where(s > 0, s, 1), 0.0)
    f = np.where(np.isnan(p) | np.isnan(r), np.nan, f)
    f = np.where((n_pred == 0) & (n_ref == 0), zd, f)
    return {"precision": p, "recall": r, "f1": f}


def _criteria(docs: DocCounts) -> list[str]:
    return [f.split(".")[0] for f in docs.fields if f.endswith(".full_ref")]


def scores_per_row(docs: DocCounts, zero_division: float, credit: str) -> dict[str, dict[str, FloatArray]]:
    """Precision, recall and F1 of every criterion, SemEval scheme and the token score, per row."""
    n_ref, n_pred = docs.column("reference"), docs.column("predicted")
    out: dict[str, dict[str, FloatArray]] = {}
    for name in _criteria(docs):
        sides = {}
        for side in ("ref", "pred"):
            full = docs.column(f"{name}.full_{side}").astype(np.float64)
            partial = docs.column(f"{name}.partial_{side}").astype(np.float64)
            if name.startswith("semeval_"):
                sides[side] = full + 0.5 * partial  # PAR is worth a half; the other schemes have none
            elif credit in ("dice", "iou") or name == "learned":
                sides[side] = full + np.round(
                    docs.column(f"{name}.scaled_credit_{side}").astype(np.float64) / CREDIT_SCALE, 9
                )
            else:
                sides[side] = full + float(credit) * partial
        out[name] = _prf(sides["pred"], sides["ref"], n_pred, n_ref, zero_division)
    tp = docs.column("token.true_positive").astype(np.float64)
    # Rows of buckets have the units both sides cover tallied on the predicted side too.
    tp_pred = docs.column("token.true_positive_predicted").astype(np.float64) if PRED_TP in docs.fields else tp
    out["token"] = _prf(tp_pred, tp, docs.column("token.predicted"), docs.column("token.reference"), zero_division)
    return out


def macro_over_documents(docs: DocCounts, zero_division: float, credit: str) -> dict[str, Any]:
    """The mean and standard deviation over rows of each score (the HIPE scorer's macro_doc).

    Every row counts, including rows without mentions on either side, whose scores are
    ``zero_division``; NaN scores are left out of the mean.
    """
    out: dict[str, Any] = {"unit": docs.unit, "count": int(docs.stats.shape[0])}
    for name, block in scores_per_row(docs, zero_division, credit).items():
        entry: dict[str, Any] = {}
        for metric, values in block.items():
            kept = values[~np.isnan(values)]
            entry[metric] = float(kept.mean()) if kept.shape[0] else None
            entry[f"{metric}_std"] = float(kept.std()) if kept.shape[0] else None
        out[name] = entry
    return out


def document_rows(docs: DocCounts, zero_division: float, credit: str) -> Iterator[dict[str, Any]]:
    """One JSON-ready row per document: its id, every count, and the F1 of each criterion."""
    f1 = {name: block["f1"] for name, block in scores_per_row(docs, zero_division, credit).items()}
    names = docs.names()
    stats = docs.stats.tolist()
    for i, row in enumerate(stats):
        out: dict[str, Any] = {docs.unit: names[i]}
        # The units both sides cover tallied on the predicted side are the same figure per document.
        out.update((f, v) for f, v in zip(docs.fields, row, strict=True) if f != PRED_TP)
        for name, values in f1.items():
            v = float(values[i])
            out[f"{name}.f1"] = None if v != v else v
        yield out
