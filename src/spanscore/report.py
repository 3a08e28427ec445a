"""The result of an evaluation: counts, the scores computed from them, and the matched pairs."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from .errors import NoDetails, OptionError
from .presentation import notebook
from .results import EvaluationResult, Scores
from .stages.counts import Counts
from .stages.documents import DocCounts, DocState, TypeRows, document_rows, macro_over_documents
from .stages.pairs import KeptDetails, pair_fields, pair_values
from .stages.scores import add_f_beta, score_counts
from .stages.text import Repaired


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
    """Everything an evaluation found. ``to_dict`` is the JSON the CLI prints with ``--json``.

    ``examples`` (the first few of each error kind, in corpus order) and ``kept`` (each chunk's
    matching and text, for ``pair_rows``) are there when the evaluation kept details;
    ``documents`` when it was asked for per-document counts.
    """

    counts: Counts
    signature: str
    options: dict[str, Any]
    zero_division: float = 0.0
    examples: dict[str, list[dict[str, Any]]] | None = None
    kept: list[KeptDetails] | None = None
    documents: DocCounts | None = None
    unit_kind: str = "sentence"
    repairs: tuple[Repaired, ...] = ()  # what the repair policy changed in each file (CoNLL, label lists)
    example_limit: int = 3
    beta: float = 1.0  # F-beta beside F1 where not 1 (``f_beta`` in every score block)
    located: dict[str, Any] | None = None  # how mentions given as strings were found (``io.strings``)
    read: dict[str, Any] | None = None  # what annotation-format readers skipped, misaligned boundaries
    intervals: dict[str, Any] | None = None  # bootstrap intervals of every score (``evaluate(ci=...)``)
    breakdown: dict[str, Any] | None = None  # every score of each group of documents (``evaluate(by=...)``)
    buckets: dict[str, Any] | None = None  # every score of each bucket of each attribute (``evaluate(buckets=...)``)
    bucket_rows: dict[str, TypeRows] | None = field(default=None, repr=False)  # their counts, for ``compare``
    document_state: DocState | None = field(default=None, repr=False)  # per-document statistics as a histogram
    _scores: Scores | None = field(default=None, repr=False)

    @property
    def scores(self) -> Scores:
        if self._scores is None:
            self._scores = score_counts(self.counts, zero_division=self.zero_division)
        return self._scores

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(self.scores["metrics"])

    @property
    def semeval(self) -> dict[str, Any]:
        return dict(self.scores["semeval"])

    @property
    def has_details(self) -> bool:
        return self.kept is not None

    def merge(self, other: Report) -> Report:
        """Reports of two parts of a corpus, made with the same options, combined."""
        if self.signature != other.signature:
            raise OptionError(f"cannot merge reports with signatures {self.signature} and {other.signature}")
        return Report(self.counts.merge(other.counts), self.signature, self.options, self.zero_division)

    def to_dict(self) -> EvaluationResult:
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
            "confusion": s["confusion"],
            "options": self.options,
        }
        if "judge" in s:
            out["judge"] = s["judge"]
        if self.examples is not None:
            out["errors"]["examples"] = self.error_examples(self.example_limit)
        changed = [r for r in self.repairs if r.count]
        if changed:
            side = ("reference", "predicted")
            out["repairs"] = {
                "policy": self.options.get("repair"),
                **{
                    side[k]: {"file": r.path, "invalid_transitions": r.count, "first_line": r.first_line}
                    for k, r in enumerate(self.repairs)
                    if r.count
                },
            }
        per_document = self.documents if self.documents is not None else self.document_state
        if per_document is not None:
            out["macro_documents"] = macro_over_documents(per_document, self.zero_division, self.counts.credit)
        if self.located is not None:
            out["located"] = self.located
        if self.read:
            out["read"] = self.read
        if self.beta != 1.0:
            out = copy.deepcopy(out)  # the score blocks are the cached ones
            out["beta"] = self.beta
            add_f_beta(out, self.beta)
        if self.breakdown is not None:
            out["breakdown"] = self.breakdown
        if self.intervals is not None:
            out["intervals"] = self.intervals
        if self.buckets is not None:
            out["buckets"] = self.buckets
        return cast(EvaluationResult, _clean(out))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def _repr_html_(self) -> str:
        return notebook.report_html(dict(self.to_dict()))

    def to_pandas(self, what: str = "scores") -> Any:
        """A tidy pandas DataFrame (the ``pandas`` extra). ``"scores"``: every score, one row per
        type (None: all types), family (criterion, semeval, macro), score and metric, with
        ``value`` and, where intervals were asked for, ``low`` and ``high``. ``"buckets"``: one row
        per attribute, bucket, family, score and metric of ``evaluate(buckets=...)``."""
        if what == "scores":
            return notebook.report_frame(dict(self.to_dict()))
        if what == "buckets":
            return notebook.buckets_frame(dict(self.to_dict()))
        raise OptionError(f"to_pandas gives scores or buckets, not {what!r}")

    def pair_rows(self, criterion: str, *, scheme: bool = False) -> Iterator[dict[str, Any]]:
        """Every matched pair of a criterion (or SemEval scheme) as a flat row, in position order."""
        if self.kept is None:
            raise NoDetails("Report.pair_rows")
        names = pair_fields(self.unit_kind)
        for part in self.kept:
            for values in pair_values(part.details, part.text, criterion, scheme=scheme):
                row = dict(zip(names, values, strict=True))
                row[self.unit_kind] += part.unit_offset
                yield row

    def error_examples(self, limit: int = 3) -> dict[str, list[dict[str, Any]]]:
        """The first ``limit`` examples of each error kind, in position order."""
        if self.examples is None:
            raise NoDetails("Report.error_examples")
        return {kind: rows[:limit] for kind, rows in self.examples.items()}

    def document_rows(self) -> Iterator[dict[str, Any]]:
        """Every statistic of each document (or sentence, where there are no documents), in corpus order."""
        if self.documents is None:
            raise OptionError("this report was made without per-document counts; evaluate with documents=True")
        yield from document_rows(self.documents, self.zero_division, self.counts.credit)
