"""The result of an evaluation: counts, the scores computed from them, and the matched pairs."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .counts import Counts, Details
from .criteria import RIGHT_LABEL_OVERLAP_KINDS, WRONG_LABEL_OVERLAP_KINDS
from .io.load import Text
from .matching import FULL, PARTIAL, SAME_SPAN, ZERO
from .scores import score_counts

RELATIONS = ("same", "longer", "shorter", "shifted")
LEVEL_NAMES = {FULL: "full", PARTIAL: "partial", ZERO: "none"}


def _clean(value: Any) -> Any:
    """NaN becomes null so that the JSON is standard."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


@dataclass
class Report:
    """Everything an evaluation found. ``to_dict`` is the JSON the CLI prints with ``--json``."""

    counts: Counts
    signature: str
    options: dict[str, Any]
    zero_division: float = 0.0
    details: Details | None = None
    text: Text | None = None
    example_limit: int = 3
    _scores: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def scores(self) -> dict[str, Any]:
        if self._scores is None:
            self._scores = score_counts(self.counts, zero_division=self.zero_division)
        return self._scores

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(self.scores["metrics"])

    @property
    def semeval(self) -> dict[str, Any]:
        return dict(self.scores["semeval"])

    def merge(self, other: Report) -> Report:
        """Reports of two parts of a corpus, made with the same options, combined."""
        if self.signature != other.signature:
            raise ValueError(f"cannot merge reports with signatures {self.signature} and {other.signature}")
        return Report(self.counts.merge(other.counts), self.signature, self.options, self.zero_division)

    def to_dict(self) -> dict[str, Any]:
        s = self.scores
        out: dict[str, Any] = {
            "signature": self.signature,
            "corpus": {
                "documents": self.counts.documents,
                "sentences": self.counts.sentences,
                "tokens": self.counts.tokens,
                "reference_mentions": int(self.counts.reference.sum()),
                "predicted_mentions": int(self.counts.predicted.sum()),
            },
            "metrics": s["metrics"],
            "semeval": s["semeval"],
            "macro": s["macro"],
            "per_type": s["per_type"],
            "errors": dict(s["errors"]),
            "options": self.options,
        }
        if "judge" in s:
            out["judge"] = s["judge"]
        if self.details is not None and self.text is not None:
            out["errors"]["examples"] = self.error_examples(self.example_limit)
        return _clean(out)  # type: ignore[no-any-return]

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    # Pairs and examples need the matching details and the text.

    def _span(self, side: str, i: int) -> dict[str, Any]:
        if self.details is None or self.text is None:
            raise ValueError("this report was made without details; evaluate with keep_details=True")
        spans = self.details.reference if side == "reference" else self.details.predicted
        start, end, unit = int(spans.start[i]), int(spans.end[i]), int(spans.unit[i])
        return {
            "text": self.text.mention(start, end),
            "type": spans.types[int(spans.type[i])],
            "start": self.text.local(unit, start),
            "end": self.text.local(unit, end),
        }

    def pair_rows(self, criterion: str, *, scheme: bool = False) -> Iterator[dict[str, Any]]:
        """Every matched pair of a criterion (or SemEval scheme) as a flat row, in position order."""
        if self.details is None or self.text is None:
            raise ValueError("this report was made without details; evaluate with keep_details=True")
        d = self.details
        m = (d.schemes if scheme else d.matchings)[criterion]
        rel = d.pairs.relation()
        for k, level, credit in zip(m.pair.tolist(), m.level.tolist(), m.credit.tolist(), strict=True):
            r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
            unit = int(d.reference.unit[r])
            ref, pred = self._span("reference", r), self._span("predicted", p)
            yield {
                self.text.unit_kind: unit,
                "reference_text": ref["text"],
                "reference_type": ref["type"],
                "reference_start": ref["start"],
                "reference_end": ref["end"],
                "predicted_text": pred["text"],
                "predicted_type": pred["type"],
                "predicted_start": pred["start"],
                "predicted_end": pred["end"],
                "match": LEVEL_NAMES[level],
                "credit": credit,
                "relation": RELATIONS[int(rel[k])],
                "context": self.text.context(unit),
            }

    def error_examples(self, limit: int = 3) -> dict[str, list[dict[str, Any]]]:
        """The first ``limit`` examples of each error kind, in position order."""
        if self.details is None or self.text is None:
            raise ValueError("this report was made without details; evaluate with keep_details=True")
        d = self.details
        m = d.schemes["type"]
        kind = d.pairs.kind[m.pair]
        out: dict[str, list[dict[str, Any]]] = {}
        groups = {
            "wrong_label_same_span": kind == SAME_SPAN,
            "wrong_label_overlap": np.isin(kind, WRONG_LABEL_OVERLAP_KINDS),
            "right_label_overlap": np.isin(kind, RIGHT_LABEL_OVERLAP_KINDS),
        }
        for name, mask in groups.items():
            rows = []
            for k in m.pair[mask][:limit].tolist():
                r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
                rows.append(
                    {
                        "reference": self._span("reference", r),
                        "predicted": self._span("predicted", p),
                        "context": self.text.context(int(d.reference.unit[r])),
                    }
                )
            out[name] = rows
        matched_r = np.zeros(len(d.reference), dtype=bool)
        matched_r[d.pairs.ref[m.pair]] = True
        matched_p = np.zeros(len(d.predicted), dtype=bool)
        matched_p[d.pairs.pred[m.pair]] = True
        out["false_positive"] = [
            {"predicted": self._span("predicted", i), "context": self.text.context(int(d.predicted.unit[i]))}
            for i in np.flatnonzero(~matched_p)[:limit].tolist()
        ]
        out["false_negative"] = [
            {"reference": self._span("reference", i), "context": self.text.context(int(d.reference.unit[i]))}
            for i in np.flatnonzero(~matched_r)[:limit].tolist()
        ]
        return out
