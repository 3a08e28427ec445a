"""Flair: a model's predictions on a Corpus split or Sentences, scored under every criterion and
returned as Flair's ``Result``, so Flair's ``ModelTrainer`` selects and reports by any criterion.

>>> tagger = SequenceTagger(...)  # doctest: +SKIP
>>> result = evaluate_model(tagger, corpus.dev, gold_label_type="ner", criterion="overlap")  # doctest: +SKIP
>>> use_spanscore(tagger, criterion="overlap")  # doctest: +SKIP
>>> ModelTrainer(tagger, corpus).train(...)  # doctest: +SKIP  (dev scores are spanscore's overlap F1)

Mentions are compared by their character offsets in each Sentence. Flair's own ``evaluate``
counts a span as right only when both boundaries and the label agree (strict); the Result here
has that figure under ``scores["spanscore_strict_f1"]`` beside every other criterion, and
``main_score`` is the one ``criterion`` and ``metric`` name.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from ..api import evaluate
from ..errors import MissingExtra, OptionError
from ..report import Report
from ..runtime.optional import module

PREDICTED = "predicted"  # the label type Flair's own evaluate predicts into


def _flair() -> Any:
    try:
        return module("flair")
    except ImportError as exc:
        raise MissingExtra.of(exc, "the Flair integration (flair)", "flair") from None


def sentence_spans(sentence: Any, label_type: str) -> list[tuple[int, int, str]]:
    """A Sentence's spans of ``label_type`` as character offsets in its text."""
    out = []
    for label in sentence.get_labels(label_type):
        span = label.data_point
        start, end = getattr(span, "start_position", None), getattr(span, "end_position", None)
        if start is None or end is None:
            raise OptionError(f"labels of type {label_type!r} are not on spans: score a sequence tagger's spans")
        out.append((int(start), int(end), str(label.value)))
    return out


def evaluate_sentences(
    sentences: Iterable[Any], *, gold_label_type: str = "ner", predicted_label_type: str = PREDICTED, **options: Any
) -> Report:
    """Score the ``predicted_label_type`` spans of Sentences against their ``gold_label_type`` spans."""
    kept = list(sentences)
    return evaluate(
        reference=[sentence_spans(s, gold_label_type) for s in kept],
        predicted=[sentence_spans(s, predicted_label_type) for s in kept],
        format="spans",
        **options,
    )


def _flat(data: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    blocks: dict[str, Any] = dict(data["metrics"])
    blocks.update({f"semeval_{k}": v for k, v in data["semeval"].items()})
    for name, block in blocks.items():
        for key in ("precision", "recall", "f1"):
            value = block[key]
            out[f"spanscore_{name}_{key}"] = float("nan") if value is None else float(value)
    return out


def result_of(report: Report, *, criterion: str = "strict", metric: str = "f1", loss: float = 0.0) -> Any:
    """Flair's ``Result`` of a report: ``main_score`` is ``criterion``'s ``metric``; ``scores`` has the
    loss and every spanscore score; ``classification_report`` is per type in scikit-learn's shape
    (as Flair's own), under ``criterion``."""
    training_utils = module("flair.training_utils")
    data: Any = report.to_dict()
    blocks: dict[str, Any] = dict(data["metrics"])
    blocks.update({f"semeval_{k}": v for k, v in data["semeval"].items()})
    if criterion not in blocks:
        raise OptionError(f"criterion must be one of {', '.join(blocks)}, not {criterion!r}")
    if metric not in ("precision", "recall", "f1"):
        raise OptionError(f"metric must be precision, recall or f1, not {metric!r}")
    main = blocks[criterion][metric]

    def sk(block: Any, support: int) -> dict[str, float]:
        return {
            "precision": block["precision"] or 0.0,
            "recall": block["recall"] or 0.0,
            "f1-score": block["f1"] or 0.0,
            "support": support,
        }

    def of_type(entry: Any) -> Any:
        if criterion.startswith("semeval_"):
            return entry["semeval"][criterion.removeprefix("semeval_")]
        return entry["metrics"][criterion]

    report_dict = {t: sk(of_type(e), e["metrics"]["strict"]["reference"]) for t, e in data["per_type"].items()}
    report_dict["micro avg"] = sk(blocks[criterion], data["corpus"]["reference_mentions"])
    scores: dict[str, float] = {"loss": float(loss)}
    scores.update(_flat(data))
    lines = [f"Results (spanscore, main score: {criterion} {metric}):"]
    for name, block in blocks.items():
        lines.append(
            f"- {name:16s} P {_pct(block['precision'])}  R {_pct(block['recall'])}  F1 {_pct(block['f1'])}"
        )
    lines.append(data["signature"])
    return training_utils.Result(
        main_score=0.0 if main is None else float(main),
        detailed_results="\n".join(lines),
        classification_report=report_dict,
        scores=scores,
    )


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:6.2f}"


def evaluate_model(
    model: Any,
    data_points: Any,
    gold_label_type: str = "ner",
    out_path: Any = None,
    embedding_storage_mode: str = "none",
    mini_batch_size: int = 32,
    main_evaluation_metric: Any = None,
    exclude_labels: Any = None,
    gold_label_dictionary: Any = None,
    return_loss: bool = True,
    *,
    criterion: str = "strict",
    metric: str = "f1",
    options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Predict ``data_points`` (a Corpus split or Sentences) with ``model`` and score them; Flair's
    ``Result``. The positional parameters are those of Flair's ``model.evaluate`` (``out_path``,
    ``main_evaluation_metric``, ``exclude_labels`` and ``gold_label_dictionary`` are accepted and
    not used: the criterion chooses the main score), and other keywords are ignored, as Flair's
    ``evaluate`` ignores them (its trainer passes some); ``options`` are ``spanscore.evaluate``'s."""
    del out_path, main_evaluation_metric, exclude_labels, gold_label_dictionary, kwargs
    flair = _flair()
    torch = module("torch")
    data_module = module("flair.datasets")
    if isinstance(data_points, module("torch.utils.data").Dataset):
        sentences = list(module("flair.data")._iter_dataset(data_points))  # as Flair's own evaluate reads it
    else:
        sentences = list(data_points)
    loss, count = 0.0, 0
    loader = data_module.DataLoader(data_module.FlairDatapointDataset(sentences), batch_size=mini_batch_size)
    with torch.no_grad():
        for batch in loader:
            for sentence in batch:
                sentence.remove_labels(PREDICTED)
            outcome = model.predict(
                batch,
                embedding_storage_mode=embedding_storage_mode,
                mini_batch_size=mini_batch_size,
                label_name=PREDICTED,
                return_loss=return_loss,
            )
            if return_loss and outcome is not None:
                if isinstance(outcome, tuple):
                    loss += float(outcome[0])
                    count += int(outcome[1])
                else:
                    loss += float(outcome)
    del flair
    report = evaluate_sentences(sentences, gold_label_type=gold_label_type, keep_details=False, **(options or {}))
    return result_of(report, criterion=criterion, metric=metric, loss=loss / count if count else loss)


def use_spanscore(model: Any, *, criterion: str = "strict", metric: str = "f1", **options: Any) -> Any:
    """Make ``model.evaluate`` spanscore's (for this model object), so Flair's ``ModelTrainer``
    reports and selects checkpoints by ``criterion``'s ``metric``. Returns the model."""
    model.evaluate = functools.partial(evaluate_model, model, criterion=criterion, metric=metric, options=options)
    return model
