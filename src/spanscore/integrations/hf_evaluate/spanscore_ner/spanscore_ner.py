"""spanscore_ner: named-entity scores under every established criterion, as an ``evaluate`` metric.

A drop-in for the ``seqeval`` metric: ``predictions`` and ``references`` are lists of sentences, each
a list of label strings (``B-PER``, ``I-PER``, ``O``...). ``evaluate.load`` imports this file from its
own module cache, so every import here is absolute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import spanscore
from spanscore.integrations.transformers import ALL_CRITERIA, check_criteria, check_options, flat_metrics
from spanscore.runtime.optional import module, require

require("evaluate", "datasets", what="the spanscore_ner metric", extra="transformers")
evaluate = module("evaluate")
datasets = module("datasets")

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
Returns:
    ``{{name}}_precision``, ``{{name}}_recall`` and ``{{name}}_f1`` for every criterion, as floats
    (``strict_f1``, ``overlap_f1``, ``semeval_partial_f1``, ``token_f1``...), and with ``per_type``
    ``{{name}}_{{score}}_{{TYPE}}`` for every type present.
Examples:
    >>> metric = evaluate.load("path/to/spanscore_ner")
    >>> metric.compute(predictions=[["B-PER", "I-PER", "O"]], references=[["B-PER", "O", "O"]])["overlap_f1"]
    0.5
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
        **options: Any,
    ) -> dict[str, float]:
        encoding, opts = check_options(labels, options)
        wanted = check_criteria(criteria)
        report = spanscore.evaluate(
            reference=references,
            predicted=predictions,
            format="labels",
            labels=encoding,
            keep_details=False,
            **opts,
        )
        types = report.counts.types if per_type else ()
        return flat_metrics(report.scores, wanted, types)


del _Metric  # evaluate.load takes the first metric class among this module's names: it must be SpanscoreNer
