"""seqeval.metrics.v1: the strict mode's scores and report, as seqeval 1.2.2 gives them.

``precision_recall_fscore_support`` and ``classification_report`` read the labels with a scheme
(``scheme=IOB2``...; the report detects it from y_true when none is given, as seqeval does).
IOB2, IOE2, IOBES and BILOU are counted by spanscore's engine (their encodings with
``repair="discard"``: seqeval keeps exactly the mentions with no invalid transition); IOB1, IOE1
and Token subclasses of one's own by seqeval's scan of their patterns, on arrays
(spanscore.compat.seqeval.scheme). The arithmetic is seqeval's, so every figure is the same float.

As in seqeval, ``zero_division`` other than "warn" or 0 counts as 1, ``sample_weight`` changes
nothing, and the ``entities_true``/``entities_pred`` keywords take ``Entities`` already made.
Beyond seqeval, a scheme may also be given by name (``scheme="IOB2"``), or as seqeval's own class.

>>> y_true = [['O', 'O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
>>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
>>> precision_recall_fscore_support(y_true, y_pred, average=None, scheme='IOB2')
(array([0., 1.]), array([0., 1.]), array([0., 1.]), array([1, 1]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _core
from .._chunks import scheme_spans
from .._errors import OptionTypeError
from ..reporters import DictReporter, StringReporter
from ..scheme import Entities, Token, auto_detect

PER_CLASS_SCORES = tuple[list[float], list[float], list[float], list[int]]
AVERAGE_SCORES = tuple[float, float, float, int]
SCORES = PER_CLASS_SCORES | AVERAGE_SCORES

Labels = list[list[str]]


def __getattr__(name: str) -> Any:
    # scikit-learn's class, resolved when asked for: importing this module never imports scikit-learn.
    if name == "UndefinedMetricWarning":
        from .._errors import undefined_metric_warning

        return undefined_metric_warning()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _prf_divide(
    numerator: Any,
    denominator: Any,
    metric: str,
    modifier: str,
    average: Any,
    warn_for: Any,
    zero_division: Any = "warn",
) -> Any:
    """numerator / denominator, with ``zero_division`` (and its warning) where the denominator is 0."""
    return _core.prf_divide(numerator, denominator, metric, modifier, average, warn_for, zero_division)


def _warn_prf(average: Any, modifier: str, msg_start: str, result_size: int) -> None:
    """The UndefinedMetricWarning for a score with nothing to divide by."""
    _core.warn_prf(average, modifier, msg_start, result_size)


def unique_labels(y_true: Labels, y_pred: Labels, scheme: type[Token], suffix: bool = False) -> list[str]:
    """The sorted tags of the mentions in either input, read with ``scheme``.

    >>> unique_labels([['B-PER']], [['B-ORG']], 'IOB2')
    ['ORG', 'PER']
    """
    cls = _core.faithful_scheme(scheme)
    found: set[str] = set()
    for sequences in (y_true, y_pred):
        spans = scheme_spans(sequences, cls, suffix)
        found.update(spans.tags[k] for k in np.unique(spans.tag).tolist())
    return sorted(found)


def check_consistent_length(y_true: Labels, y_pred: Labels) -> None:
    """Two lists of lists (TypeError), of the same lengths sentence by sentence (ValueError)."""
    _core.check_consistent_length(y_true, y_pred)


def _precision_recall_fscore_support(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = None,
    warn_for: Sequence[str] = ("precision", "recall", "f-score"),
    beta: float = 1.0,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
    suffix: bool = False,
    extract_tp_actual_correct: Callable[..., tuple[Any, Any, Any]] | None = None,
) -> Any:
    """seqeval's scores from the counts ``extract_tp_actual_correct(y_true, y_pred, suffix,
    scheme)`` returns (predicted, true positive and true counts per type, as arrays)."""
    _core.check_beta_and_average(beta, average)
    _core.check_consistent_length(y_true, y_pred)
    if extract_tp_actual_correct is None:
        raise OptionTypeError("extract_tp_actual_correct: a function giving the counts is needed")
    pred_sum, tp_sum, true_sum = extract_tp_actual_correct(y_true, y_pred, suffix, scheme)
    return _core.prf_scores(
        pred_sum, tp_sum, true_sum, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division
    )


def _given_entities(y_true: Labels, y_pred: Labels, scheme: Any, suffix: bool, kwargs: dict[str, Any]) -> _core.Tally:
    """seqeval's counting over Entities objects, where the caller gave some."""
    cls: Any = _core.faithful_scheme(scheme) if scheme is not None else scheme
    entities_true = kwargs.get("entities_true") or Entities(y_true, cls, suffix)
    entities_pred = kwargs.get("entities_pred") or Entities(y_pred, cls, suffix)
    names = sorted(entities_true.unique_tags | entities_pred.unique_tags)
    pred, tp, true = [], [], []
    for name in names:
        on_true, on_pred = entities_true.filter(name), entities_pred.filter(name)
        tp.append(len(on_true & on_pred))
        pred.append(len(on_pred))
        true.append(len(on_true))
    return _core.Tally(names, pred, tp, true)


def precision_recall_fscore_support(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = None,
    warn_for: Sequence[str] = ("precision", "recall", "f-score"),
    beta: float = 1.0,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
    suffix: bool = False,
    **kwargs: Any,
) -> Any:
    """Precision, recall, F-beta and support per type (``average=None``), or averaged over the
    types (``micro``, ``macro``, ``weighted``), in the strict mode with ``scheme``."""
    _core.check_beta_and_average(beta, average)
    _core.check_consistent_length(y_true, y_pred)
    if kwargs.get("entities_true") or kwargs.get("entities_pred"):
        tally = _given_entities(y_true, y_pred, scheme, suffix, kwargs)
    else:
        tally = _core.faithful_strict_tally(y_true, y_pred, _core.faithful_scheme(scheme), suffix)
    return _core.scores(tally, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division)


def classification_report(
    y_true: Labels,
    y_pred: Labels,
    *,
    sample_weight: Sequence[float] | None = None,
    digits: int = 2,
    output_dict: bool = False,
    zero_division: str | int = "warn",
    suffix: bool = False,
    scheme: type[Token] | None = None,
) -> str | dict[str, dict[str, Any]]:
    """Precision, recall, F1 and support per type and averaged, as seqeval's text table or (with
    ``output_dict``) its dict, in the strict mode; the scheme is detected from y_true when not
    given (or given as a class that is no scheme)."""
    _core.check_consistent_length(y_true, y_pred)
    cls = _core.faithful_resolve_report_scheme(y_true, scheme, suffix)
    tally = _core.faithful_strict_tally(y_true, y_pred, cls, suffix)
    return _core.report(tally, digits=digits, output_dict=output_dict, zero_division=zero_division)


__all__ = [
    "AVERAGE_SCORES",
    "PER_CLASS_SCORES",
    "SCORES",
    "DictReporter",
    "Entities",
    "StringReporter",
    "Token",
    "UndefinedMetricWarning",  # noqa: F822 (resolved by the module's __getattr__)
    "auto_detect",
    "check_consistent_length",
    "classification_report",
    "precision_recall_fscore_support",
    "unique_labels",
]
