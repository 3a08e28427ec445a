"""spanscore_ner: named-entity scores under every established criterion, as an ``evaluate`` metric.

A drop-in for the ``seqeval`` metric: ``predictions`` and ``references`` are lists of sentences, each
a list of label strings (``B-PER``, ``I-PER``, ``O``...), and the result holds the seqeval metric's
keys with seqeval's figures (computed by ``spanscore.compat.seqeval``, which gives seqeval's figures
on any input) beside spanscore's own. ``evaluate.load`` imports this file from its own module cache,
so every import here is absolute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import spanscore
from spanscore.compat.seqeval import metrics as seqeval_metrics
from spanscore.compat.seqeval import scheme as seqeval_scheme
from spanscore.errors import OptionError
from spanscore.integrations.transformers import ALL_CRITERIA, check_criteria, check_options, flat_metrics
from spanscore.runtime.optional import module, require

require("evaluate", "datasets", what="the spanscore_ner metric", extra="transformers")
evaluate = module("evaluate")
datasets = module("datasets")

SEQEVAL_SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")

_DESCRIPTION = """\
spanscore scores predicted mentions against reference mentions under the criteria strict,
boundary, left, right and overlap (with partial credit), the SemEval-2013 schemes, and over
entity tokens. Labels are decoded as conlleval decodes them (the repair policy ``repair``).
"""

_KWARGS_DESCRIPTION = f"""\
Args:
    predictions: list of predicted label sequences, one per sentence.
    references: list of reference label sequences, as long as the predictions.
    labels: the label encoding: BIO (default), IOB1, IO, IOE1, IOE2, BIOES, BILOU, BMES
        (seqeval's name ``scheme`` is accepted too).
    per_type: also return every score per entity type (``strict_f1_PER``).
    criteria: which scores to return, any of {", ".join(ALL_CRITERIA)} (all by default).
    repair, credit, matching, min_overlap, min_overlap_of, types, type_map, zero_division:
        the scoring options of ``spanscore.evaluate``.
    suffix, mode, sample_weight, zero_division: the seqeval metric's options, with its meaning for
        the seqeval keys (``mode="strict"`` with ``scheme`` reads the labels by seqeval's strict
        rules; ``zero_division`` may be "warn", 0 or 1, "warn" meaning 0 for spanscore's scores).
Returns:
    The seqeval metric's keys, with its figures: ``{{TYPE}}`` (a dict of ``precision``,
    ``recall``, ``f1`` and ``number``) for every type, ``overall_precision``, ``overall_recall``,
    ``overall_f1`` and ``overall_accuracy``; then
    ``{{name}}_precision``, ``{{name}}_recall`` and ``{{name}}_f1`` for every criterion, as floats
    (``strict_f1``, ``overlap_f1``, ``semeval_partial_f1``, ``token_f1``...), and with ``per_type``
    ``{{name}}_{{score}}_{{TYPE}}`` for every type present.
Examples:
    >>> metric = evaluate.load("path/to/spanscore_ner")
    >>> results = metric.compute(predictions=[["B-PER", "I-PER", "O"]], references=[["B-PER", "O", "O"]])
    >>> results["overall_f1"], results["overlap_f1"]
    (0.0, 0.5)
"""

_CITATION = """\
@inproceedings{segura-bedmar-etal-2013-semeval,
    title = "{S}em{E}val-2013 Task 9 : Extraction of Drug-Drug Interactions from Biomedical Texts",
    author = "Segura-Bedmar, Isabel and Mart{\\'\\i}nez, Paloma and Herrero-Zazo, Mar{\\'\\i}a",
    booktitle = "Proceedings of SemEval 2013",
    year = "2013",
    pages = "341--350",
}
"""


def _label_sequences() -> Any:
    # datasets 4 renamed Sequence (of a feature) to List; either reads a list of strings.
    of = getattr(datasets, "List", None) or datasets.Sequence
    return of(datasets.Value("string"))


_Metric: Any = evaluate.Metric


class SpanscoreNer(_Metric):  # type: ignore[misc]
    """The spanscore_ner metric: ``compute(predictions=..., references=..., **options)``."""

    def _info(self) -> Any:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": _label_sequences(), "references": _label_sequences()}),
        )

    def _compute(
        self,
        predictions: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]],
        labels: str = "BIO",
        per_type: bool = False,
        criteria: Sequence[str] | None = None,
        suffix: bool = False,
        mode: str | None = None,
        sample_weight: Sequence[float] | None = None,
        zero_division: str | float = "warn",
        **options: Any,
    ) -> dict[str, Any]:
        scheme = options.get("scheme")
        encoding, opts = check_options(labels, options)
        wanted = check_criteria(criteria)
        out = _seqeval_keys(predictions, references, suffix, scheme, mode, sample_weight, zero_division)
        if zero_division != "warn":
            opts["zero_division"] = zero_division
        report = spanscore.evaluate(
            reference=references,
            predicted=predictions,
            format="labels",
            labels=encoding,
            keep_details=False,
            **opts,
        )
        types = report.counts.types if per_type else ()
        out.update(flat_metrics(report.scores, wanted, types))
        return out


def _seqeval_keys(
    predictions: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]],
    suffix: bool,
    scheme: Any,
    mode: str | None,
    sample_weight: Sequence[float] | None,
    zero_division: str | float,
) -> dict[str, Any]:
    """What the seqeval metric returns for the same call: its classification report's rows per
    type (``f1-score`` as ``f1``, ``support`` as ``number``), micro averages as ``overall_*``, and
    the share of equal labels."""
    if isinstance(scheme, str):
        if scheme not in SEQEVAL_SCHEMES:
            raise OptionError(f"scheme should be one of {', '.join(SEQEVAL_SCHEMES)}, not {scheme!r}")
        scheme = getattr(seqeval_scheme, scheme)
    report: Any = seqeval_metrics.classification_report
    table: Any = report(
        y_true=references,
        y_pred=predictions,
        suffix=suffix,
        output_dict=True,
        scheme=scheme,
        mode=mode,
        sample_weight=sample_weight,
        zero_division=zero_division,
    )
    overall = table.pop("micro avg")
    table.pop("macro avg")
    table.pop("weighted avg")
    out: dict[str, Any] = {
        name: {"precision": row["precision"], "recall": row["recall"], "f1": row["f1-score"], "number": row["support"]}
        for name, row in table.items()
    }
    out["overall_precision"] = overall["precision"]
    out["overall_recall"] = overall["recall"]
    out["overall_f1"] = overall["f1-score"]
    out["overall_accuracy"] = seqeval_metrics.accuracy_score(y_true=references, y_pred=predictions)
    return out


del _Metric  # evaluate.load takes the first metric class among this module's names: it must be SpanscoreNer
