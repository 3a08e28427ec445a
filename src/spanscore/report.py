"""The result of an evaluation: counts, the scores computed from them, and the matched pairs."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .errors import NoDetails, OptionError
from .results import EvaluationResult, Scores
from .stages.counts import Counts
from .stages.documents import DocCounts, DocState, TypeRows, document_rows, macro_over_documents
from .stages.pairs import KeptDetails, pair_fields, pair_values
from .stages.scores import add_f_beta, discontinuous_block, score_counts
from .stages.text import Repaired

if TYPE_CHECKING:
    from .io.strings import DocumentClasses


def _clean(value: Any) -> Any:
    """NaN becomes null so that the JSON is standard."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _pct(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.2f}"


def signature_hash(signature: str) -> str:
    """The first 8 hex digits of the signature's SHA-1: enough to tell two option sets apart."""
    data = signature.encode("utf-8")
    try:  # CPython's own SHA-1: hashlib would load OpenSSL (a few ms of every run's start)
        import _sha1  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - a Python built without it
        import hashlib

        return hashlib.sha1(data).hexdigest()[:8]
    return str(_sha1.sha1(data).hexdigest())[:8]


@dataclass
class Report:
    """Everything an evaluation found. ``to_dict`` is the JSON the CLI prints with ``--json``;
    ``repr`` is one line, ``str`` the terminal's tables (``to_text``).

    :ivar counts: every count (mentions per type, matches per criterion, errors, tokens): the
        scores are computed from them (``scores``).
    :ivar signature: the version and every option that can change a number, as one string.
    :ivar options: the same options as a dict (the JSON's ``options``).
    :ivar zero_division: the score given where a denominator is 0.
    :ivar examples: the first few pairs of each error kind, in corpus order (``errors.examples``).
    :ivar kept: each chunk's matched pairs and text, for ``pair_rows``; None unless
        ``keep_details``.
    :ivar documents: per-document counts (``document_rows``, ``macro_documents``); None unless
        asked for (``documents``, ``ci``, ``by``, ``buckets``).
    :ivar unit_kind: what ``pair_rows`` number: ``sentence`` (CoNLL) or ``document``.
    :ivar repairs: what the repair policy changed in each file.
    :ivar example_limit: how many examples of each error kind ``to_dict`` gives.
    :ivar beta: the beta of the F-beta given beside F1 where not 1.
    :ivar located: how mentions given as strings were found in the reference's text (its
        threshold sweep of scored predictions also as ``thresholds``).
    :ivar read: what annotation-format readers skipped, and misaligned predicted boundaries.
    :ivar intervals: bootstrap intervals of every score (``evaluate(ci=...)``).
    :ivar breakdown: every score of each group of documents (``evaluate(by=...)``).
    :ivar buckets: every score of each bucket of each attribute (``evaluate(buckets=...)``).
    :ivar empty_documents: ``skip`` (documents without mentions on either side are left out of the
        mean over documents) or ``score`` (they count as ``zero_division``).
    :ivar warnings: why the intervals mean little (too few resampling units), as in the JSON.
    :ivar bucket_rows: the buckets' counts, for ``compare``.
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
    empty_documents: str = "skip"  # the mean over documents leaves out those empty on both sides, or scores them
    levels: dict[str, Any] | None = None  # each nesting level scored alone, and GermEval 2014's measures
    warnings: list[str] = field(default_factory=list)  # why the intervals mean little (``analysis.reliability``)
    bucket_rows: dict[str, TypeRows] | None = field(default=None, repr=False)  # their counts, for ``compare``
    # Per-document statistics as a histogram (``document_state``): the state itself, or how to make
    # it where it is made only if asked for (``compare``'s systems, out of their joint histogram).
    _document_state: DocState | Callable[[], DocState] | None = field(default=None, repr=False, compare=False)
    # The discontinuous figures' counts of each document that has any (``stages.counts.DISCONTINUOUS_EXTRA``).
    discontinuous_documents: DocCounts | None = field(default=None, repr=False)
    # Each document's LLM error classes where mentions were given as strings, for ``compare``.
    document_classes: DocumentClasses | None = field(default=None, repr=False, compare=False)
    _scores: Scores | None = field(default=None, repr=False)

    @property
    def document_state(self) -> DocState | None:
        """Per-document statistics as a histogram (the macro over documents, intervals), made
        the first time it is asked for where the report was given how to make it."""
        state = self._document_state
        if state is not None and not isinstance(state, DocState):
            state = self._document_state = state()
        return state

    @document_state.setter
    def document_state(self, state: DocState | Callable[[], DocState] | None) -> None:
        self._document_state = state

    @property
    def thresholds(self) -> dict[str, Any] | None:
        """The threshold sweep of scored predictions (GLiNER's, a span classifier's ``score``):
        overall and per type, each distinct score's precision, recall and F1 of exact matching,
        and the best threshold by F1; the JSON's ``located.thresholds``. None where no
        prediction had a score."""
        swept = (self.located or {}).get("thresholds")
        return None if swept is None else copy.deepcopy(swept)

    @property
    def scores(self) -> Scores:
        """Every score computed from ``counts`` (the body of ``to_dict``)."""
        if self._scores is None:
            self._scores = score_counts(self.counts, zero_division=self.zero_division)
        return self._scores

    @property
    def metrics(self) -> dict[str, Any]:
        """Each criterion's micro-averaged block: precision, recall, f1, full, partial, credit..."""
        return dict(self.scores["metrics"])

    @property
    def semeval(self) -> dict[str, Any]:
        """Each SemEval-2013 scheme's MUC categories and scores."""
        return dict(self.scores["semeval"])

    @property
    def has_details(self) -> bool:
        """Whether the matched pairs were kept (``pair_rows``)."""
        return self.kept is not None

    def merge(self, other: Report) -> Report:
        """Reports of two parts of a corpus, made with the same options, combined."""
        if self.signature != other.signature:
            raise OptionError(f"cannot merge reports with signatures {self.signature} and {other.signature}")
        return Report(self.counts.merge(other.counts), self.signature, self.options, self.zero_division)

    def to_dict(self) -> EvaluationResult:
        """The evaluation JSON, exactly what ``spanscore evaluate --json`` prints for the same
        options: corpus counts, ``metrics``, ``semeval``, ``macro``, ``per_type``, ``errors`` (with
        ``examples``), ``confusion``, ``options``, and each optional block that was asked for."""
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
            out["macro_documents"] = macro_over_documents(
                per_document, self.zero_division, self.counts.credit, self.empty_documents
            )
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
        if self.levels is not None:
            out["levels"] = self.levels
        if self.warnings:
            out["warnings"] = list(self.warnings)
        reading = str(self.options.get("discontinuous", "fragments"))
        discontinuous = discontinuous_block(self.counts, self.zero_division, reading, self.unit_kind)
        if discontinuous is not None:
            out["discontinuous"] = discontinuous
        return cast(EvaluationResult, _clean(out))

    def to_json(self, indent: int | None = 2) -> str:
        """``to_dict`` as JSON text, as ``spanscore evaluate --json`` prints it."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def __repr__(self) -> str:
        c = self.counts
        strict, overlap = (self.scores["metrics"][k]["f1"] for k in ("strict", "overlap"))
        return (
            f"<Report {int(c.reference.sum())} reference, {int(c.predicted.sum())} predicted mentions"
            f" in {c.documents} documents, {c.sentences} sentences; strict F1 {_pct(strict)},"
            f" overlap F1 {_pct(overlap)}; signature {signature_hash(self.signature)}>"
        )

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self, width: int = 80, *, per_type: bool = True) -> str:
        """The tables ``spanscore evaluate`` prints for this evaluation, fitted to ``width`` columns."""
        from .presentation.terminal import evaluation_text

        return evaluation_text(self.to_dict(), width=width, per_type=per_type)

    def classification_report(
        self, criterion: str = "strict", *, digits: int = 2, output_dict: bool = False
    ) -> str | dict[str, dict[str, Any]]:
        """seqeval's classification report of one criterion (or ``semeval_`` and a scheme): per type
        precision, recall, F1 and support, then the micro, macro and weighted averages, as text with
        ``digits`` decimals or, with ``output_dict``, seqeval's dict (``f1-score``, ``support``)."""
        from .presentation import classification  # here, as notebook below: a plain run prints JSON

        if output_dict:
            return classification.report_dict(self.to_dict(), criterion)
        return classification.report_text(self.to_dict(), criterion, digits)

    def _repr_html_(self) -> str:
        from .presentation import notebook

        return notebook.report_html(dict(self.to_dict()))

    def to_pandas(self, what: str = "scores") -> Any:
        """A tidy pandas DataFrame (the ``pandas`` extra). ``"scores"``: every score, one row per
        type (None: all types), family (criterion, semeval, macro), score and metric, with
        ``value`` and, where intervals were asked for, ``low`` and ``high``. ``"buckets"``: one row
        per attribute, bucket, family, score and metric of ``evaluate(buckets=...)``."""
        from .presentation import notebook

        if what == "scores":
            return notebook.report_frame(dict(self.to_dict()))
        if what == "buckets":
            return notebook.buckets_frame(dict(self.to_dict()))
        raise OptionError(f"to_pandas gives scores or buckets, not {what!r}")

    def pair_rows(self, criterion: str, *, scheme: bool = False) -> Iterator[dict[str, Any]]:
        """Every matched pair of a criterion (or SemEval scheme) as a flat row, in position order:
        the rows of the report's pair files. The unit is the document's id where the input names
        documents (JSONL, the annotation formats), else its 0-based place in the corpus."""
        if self.kept is None:
            raise NoDetails("Report.pair_rows")
        names = pair_fields(self.unit_kind, any(p.details.reference.level is not None for p in self.kept))
        for part in self.kept:
            for values in pair_values(part.details, part.text, criterion, scheme=scheme):
                row = dict(zip(names, values, strict=True))
                if part.unit_names is not None:
                    row[self.unit_kind] = part.unit_names[row[self.unit_kind]]
                else:
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
        rows = document_rows(self.documents, self.zero_division, self.counts.credit)
        if "discontinuous.reference" not in self.counts.extra:
            yield from rows
            return
        # Each document's figures of Dai et al. (2020) too, where a side has a discontinuous mention.
        from .analysis.discontinuous import document_figures

        figures_of = document_figures(self.discontinuous_documents, self.documents.keys, self.zero_division)
        for row, figures in zip(rows, figures_of, strict=True):
            row["discontinuous"] = figures
            yield row
