"""seqeval.metrics.sequence_labeling: seqeval 1.2.2's scores, report and helpers, as seqeval gives them.

The default mode (``mode=None``) is conlleval's chunk rule, with seqeval's reading of labels:
the tag from the first letter (the last with ``suffix=True``), the type from the rest. Labels
spanscore's BIOES encoding reads (``O``, or B, I, E, S, a dash and a type) are counted by its
engine with ``repair="conlleval"``; any other label is read by seqeval's rule on arrays
(``get_entities``), which is also what seqeval does with tags it does not know (``U-``, ``M-``,
``X``...): it warns that they seem not to be NE tags, once per token each time it reads them,
then chunks them by type changes alone. ``mode="strict"`` with a scheme is seqeval.metrics.v1's.

Every function keeps seqeval's signature, defaults, return types, warnings and exceptions;
``zero_division`` other than "warn" or 0 counts as 1 and ``sample_weight`` changes nothing, as
in seqeval. The exceptions are also spanscore's ``InputError`` or ``OptionError``.

>>> y_true = [['O', 'O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
>>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
>>> float(f1_score(y_true, y_pred))
0.5
>>> get_entities(y_true)
[('MISC', 3, 5), ('PER', 8, 9)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....errors import InputError
from .. import _core
from .._chunks import default_chunks, end_of_chunk, start_of_chunk
from ..reporters import DictReporter, StringReporter
from ..scheme import Token
from .v1 import (
    SCORES,
    _precision_recall_fscore_support,  # noqa: F401 (seqeval's module holds the name too)
)
from .v1 import classification_report as cr
from .v1 import precision_recall_fscore_support as precision_recall_fscore_support_v1

Labels = list[list[str]]
_WARN_FOR = ("precision", "recall", "f-score")


def precision_recall_fscore_support(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = None,
    warn_for: Sequence[str] = ("precision", "recall", "f-score"),
    beta: float = 1.0,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    suffix: bool = False,
) -> Any:
    """Precision, recall, F-beta and support per type (``average=None``), or averaged over the
    types (``micro``, ``macro``, ``weighted``), in the default mode.

    >>> p, r, f, s = precision_recall_fscore_support(
    ...     [['B-PER', 'I-PER', 'O']], [['B-PER', 'I-PER', 'B-LOC']], average='micro')
    >>> float(p), float(r), float(f), int(s)
    (0.5, 1.0, 0.6666666666666666, 1)
    """
    _core.check_beta_and_average(beta, average)
    _core.check_consistent_length(y_true, y_pred)
    tally, replay = _core.faithful_default_tally(y_true, y_pred, suffix)
    replay()
    return _core.scores(tally, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division)


def get_entities(seq: Any, suffix: bool = False) -> list[tuple[str, int, int]]:
    """The chunks of a label list (or of a list of label lists, read as one with an ``O`` after
    each): ``(type, first token, last token)``, in the order they end.

    >>> get_entities(['B-PER', 'I-PER', 'O', 'B-LOC'])
    [('PER', 0, 1), ('LOC', 3, 3)]
    """
    chunks = default_chunks(seq, suffix)
    chunks.replay()
    return chunks.tuples()


def _strict(mode: Any, scheme: Any) -> bool:
    """seqeval's score functions are strict only when given both."""
    return bool(mode == "strict" and scheme)


def f1_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
) -> Any:
    """F1, the harmonic mean of precision and recall.

    >>> y_true = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'O', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> float(f1_score(y_true, y_pred, average='macro'))
    0.75
    """
    if _strict(mode, scheme):
        _, _, f, _ = precision_recall_fscore_support_v1(
            y_true,
            y_pred,
            average=average,
            warn_for=("f-score",),
            beta=1,
            sample_weight=sample_weight,
            zero_division=zero_division,
            scheme=scheme,
            suffix=suffix,
        )
    else:
        _, _, f, _ = precision_recall_fscore_support(
            y_true,
            y_pred,
            average=average,
            warn_for=("f-score",),
            beta=1,
            sample_weight=sample_weight,
            zero_division=zero_division,
            suffix=suffix,
        )
    return f


def accuracy_score(y_true: Any, y_pred: Any) -> float:
    """The share of tokens whose labels are equal.

    >>> accuracy_score([['O', 'B-PER', 'I-PER']], [['O', 'B-PER', 'O']])
    0.6666666666666666
    """
    return _core.accuracy_score(y_true, y_pred)


def precision_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
) -> Any:
    """Precision: correct mentions / predicted mentions.

    >>> y_true = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'O', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> precision_score(y_true, y_pred, average=None)
    array([0.5, 1. ])
    """
    if _strict(mode, scheme):
        p, _, _, _ = precision_recall_fscore_support_v1(
            y_true,
            y_pred,
            average=average,
            warn_for=("precision",),
            sample_weight=sample_weight,
            zero_division=zero_division,
            scheme=scheme,
            suffix=suffix,
        )
    else:
        p, _, _, _ = precision_recall_fscore_support(
            y_true,
            y_pred,
            average=average,
            warn_for=("precision",),
            sample_weight=sample_weight,
            zero_division=zero_division,
            suffix=suffix,
        )
    return p


def recall_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
) -> Any:
    """Recall: correct mentions / reference mentions.

    >>> float(recall_score([['B-PER', 'I-PER', 'O', 'B-LOC']], [['B-PER', 'I-PER', 'O', 'O']]))
    0.5
    """
    if _strict(mode, scheme):
        _, r, _, _ = precision_recall_fscore_support_v1(
            y_true,
            y_pred,
            average=average,
            warn_for=("recall",),
            sample_weight=sample_weight,
            zero_division=zero_division,
            scheme=scheme,
            suffix=suffix,
        )
    else:
        _, r, _, _ = precision_recall_fscore_support(
            y_true,
            y_pred,
            average=average,
            warn_for=("recall",),
            sample_weight=sample_weight,
            zero_division=zero_division,
            suffix=suffix,
        )
    return r


def performance_measure(y_true: Any, y_pred: Any) -> dict[str, int]:
    """Token counts TP, FP, FN, TN, where O is the negative class.

    >>> performance_measure([['O', 'B-PER', 'I-PER']], [['O', 'B-PER', 'O']])
    {'TP': 1, 'FP': 0, 'FN': 1, 'TN': 1}
    """
    return _core.performance_measure(y_true, y_pred)


def classification_report(
    y_true: Labels,
    y_pred: Labels,
    digits: int = 2,
    suffix: bool = False,
    output_dict: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: type[Token] | None = None,
) -> str | dict[str, dict[str, Any]]:
    """Precision, recall, F1 and support per type and averaged (micro, macro, weighted), as
    seqeval's text table or, with ``output_dict``, its dict.

    >>> y_true = [['O', 'O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'I-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> print(classification_report(y_true, y_pred))
                  precision    recall  f1-score   support
    <BLANKLINE>
            MISC       0.00      0.00      0.00         1
             PER       1.00      1.00      1.00         1
    <BLANKLINE>
       micro avg       0.50      0.50      0.50         2
       macro avg       0.50      0.50      0.50         2
    weighted avg       0.50      0.50      0.50         2
    <BLANKLINE>
    """
    if mode == "strict":
        return cr(
            y_true,
            y_pred,
            digits=digits,
            output_dict=output_dict,
            sample_weight=sample_weight,
            zero_division=zero_division,
            scheme=scheme,
            suffix=suffix,
        )
    try:
        _core.check_consistent_length(y_true, y_pred)
    except InputError as exc:
        # seqeval reads the labels, and sizes its first column, before it checks their shapes.
        found = 0
        for seq in (y_true, y_pred):
            chunks = default_chunks(seq, suffix)
            chunks.replay()
            found += chunks.type.shape[0]
        if not output_dict and not found:
            raise _core.no_entities() from None
        raise exc from None
    tally, replay = _core.faithful_default_tally(y_true, y_pred, suffix)
    replay()
    return _core.report(tally, digits=digits, output_dict=output_dict, zero_division=zero_division, before=replay)


__all__ = [
    "SCORES",
    "DictReporter",
    "StringReporter",
    "Token",
    "accuracy_score",
    "classification_report",
    "cr",
    "end_of_chunk",
    "f1_score",
    "get_entities",
    "performance_measure",
    "precision_recall_fscore_support",
    "precision_recall_fscore_support_v1",
    "precision_score",
    "recall_score",
    "start_of_chunk",
]
