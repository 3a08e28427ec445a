"""Scores per bucket of a mention attribute (``evaluate(buckets=...)``), with intervals, and each
bucket's paired comparison of systems (``compare(buckets=...)``).

A bucket's statistics are those of the reference mentions in it (recall's side) and of the
predicted mentions in it (precision's side): bucket precision is the credit of its predictions over
their number, recall the credit of its reference mentions over theirs. A pair whose two mentions
fall in different buckets gives its credit to the prediction's bucket for precision and to the
reference's bucket for recall, and nothing is split: under exact-match criteria every figure
reduces to plain counts, and each bucket's mention counts add up to the corpus's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..stages.documents import DocCounts, TypeRows
from .significance import Resampling, bootstrap_rows, compare, metrics_of, score_totals

SEMEVAL_PREFIX = "semeval_"


def _split(scores: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Criteria and the token score, and the SemEval schemes (by their own names)."""
    metrics = {n: v for n, v in scores.items() if not n.startswith(SEMEVAL_PREFIX)}
    semeval = {n[len(SEMEVAL_PREFIX) :]: v for n, v in scores.items() if n.startswith(SEMEVAL_PREFIX)}
    return metrics, semeval


def _total(rows: TypeRows, bucket: int) -> Any:
    return rows.stats[rows.type_index == bucket].sum(axis=0)


def bucket_table(
    rows: TypeRows,
    fields: tuple[str, ...],
    *,
    zero_division: float,
    credit: str,
    beta: float = 1.0,
    docs: DocCounts | None = None,
    resampling: Resampling | None = None,
) -> list[dict[str, Any]]:
    """Every bucket in order: its mentions on each side and every score, with ``low`` and ``high``
    where ``resampling`` is given (which needs the per-document counts ``docs``)."""
    ref, pred = fields.index("reference"), fields.index("predicted")
    spans = None
    if resampling is not None and docs is not None:
        spans = bootstrap_rows(docs, rows, zero_division=zero_division, credit=credit, resampling=resampling, beta=beta)
    out = []
    for b, label in enumerate(rows.names):
        total = _total(rows, b)
        scores = score_totals(total[None, :].astype(np.float64), fields, zero_division, credit, beta)
        point: dict[str, dict[str, float | None]] = {
            n: {m: float(block[m][0]) for m in metrics_of(beta)} for n, block in scores.items()
        }
        if spans is not None:
            found = spans.get(label, {})
            for n, block in point.items():
                for m in list(block):
                    interval = found.get(n, {}).get(m)
                    name = "" if m == "f1" else f"{m}_"  # F1's interval is plain low/high
                    block[f"{name}low"] = None if interval is None else interval["low"]
                    block[f"{name}high"] = None if interval is None else interval["high"]
        metrics, semeval = _split(point)
        out.append(
            {
                "bucket": label,
                "reference_mentions": int(total[ref]),
                "predicted_mentions": int(total[pred]),
                "metrics": metrics,
                "semeval": semeval,
            }
        )
    return out


def field_rows(docs: DocCounts, values: dict[str, str], missing: str) -> TypeRows:
    """Per-document counts grouped by a document field's value (buckets in order of first
    appearance), as bucket rows: a document field is an attribute of each of its mentions."""
    labels: dict[str, int] = {}
    index = [labels.setdefault(values.get(name, missing), len(labels)) for name in docs.names()]
    return TypeRows(docs.keys, np.asarray(index, dtype=np.int64), tuple(labels), docs.stats)


def _dense(docs: DocCounts, rows: TypeRows, label: str) -> DocCounts:
    """One group's statistics for every document (zero where it has no mention in the group)."""
    stats = np.zeros_like(docs.stats)
    if label in rows.names:
        mine = np.flatnonzero(rows.type_index == rows.names.index(label))
        at = np.searchsorted(docs.keys, rows.keys[mine])
        np.add.at(stats, at, rows.stats[mine])
    return DocCounts(docs.keys, stats, docs.fields, docs.ids, docs.unit)


def compare_groups(
    systems: list[tuple[DocCounts, TypeRows]],
    names: list[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling,
    beta: float = 1.0,
) -> list[dict[str, Any]]:
    """Per group of rows (a bucket, a type), each system's scores with intervals and each system
    against the first: the difference, its paired-bootstrap interval and both p-values
    (``significance.compare``). Groups in the first system's order, then any only others have."""
    labels: list[str] = []
    for _, rows in systems:
        labels += [n for n in rows.names if n not in labels]
    first_docs = systems[0][0]
    ref = first_docs.fields.index("reference")
    pred = first_docs.fields.index("predicted")
    out = []
    for label in labels:
        dense = [_dense(d, r, label) for d, r in systems]
        tests = compare(dense, names, zero_division=zero_division, credit=credit, resampling=resampling, beta=beta)
        out.append(
            {
                "bucket": label,
                "reference_mentions": int(dense[0].stats[:, ref].sum()),
                "systems": [
                    {"name": n, "predicted_mentions": int(d.stats[:, pred].sum()), "metrics": m}
                    for n, d, m in zip(names, dense, tests.intervals, strict=True)
                ],
                "comparisons": tests.comparisons,
            }
        )
    return out
