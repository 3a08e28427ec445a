"""seqeval 1.2.2, computed by spanscore's engine: change the imports, keep the code.

This package mirrors seqeval's modules, so that ``seqeval`` becomes ``spanscore.compat.seqeval``
in each import line and nothing else changes; seqeval's own test suite passes against it with its
imports so rewritten (``python tools/peer_suites.py seqeval``):

- ``spanscore.compat.seqeval.metrics`` (``accuracy_score``, ``classification_report``,
  ``f1_score``, ``performance_measure``, ``precision_score``, ``recall_score``),
  ``.metrics.sequence_labeling`` (those, ``precision_recall_fscore_support``, ``get_entities``,
  ``start_of_chunk``, ``end_of_chunk``) and ``.metrics.v1`` (the strict mode);
- ``spanscore.compat.seqeval.scheme`` (``Token``, ``Prefix``, ``Tag``, ``IOB1``, ``IOE1``,
  ``IOB2``, ``IOE2``, ``IOBES``, ``BILOU``, ``Tokens``, ``Entities``, ``Entity``,
  ``auto_detect``) and ``.reporters`` (``DictReporter``, ``StringReporter``).

Those are *faithful*: the same figures, strings, warnings and exception types as seqeval on any
input, seqeval's odd readings included (see their docstrings). Mentions are counted by
:func:`spanscore.evaluate` wherever one of its encodings reads the labels as seqeval does, and by
seqeval's own rules on arrays elsewhere; the arithmetic from counts to scores is seqeval's, the
same numpy operations in the same order, so that every figure is the same float.

This module itself is the *guarded* face, the functions of spanscore's first seqeval drop-in
(``from spanscore.compat.seqeval import classification_report, f1_score``): seqeval's
signatures, defaults, return types and figures, but input on which seqeval's reading silently
loses or invents mentions is refused instead. Each refusal is pinned by a test in
tests/test_compat_seqeval.py:

1. Default mode, labels whose tag letter is none of B, I, E, S, O (BILOU's ``U-``/``L-``,
   BMES's ``M-``, ``X``, ``[PAD]``, ``.``...): seqeval warns that they seem not to be NE tags, then
   chunks them by type changes alone, which loses mentions (``B-PER L-PER B-PER L-PER``: one
   mention) or makes overlapping ones. Here they raise ``InputError`` naming the label and the cure
   (``mode="strict"`` with a scheme).
2. Strict mode with IOB1 or IOE1: on invalid transitions seqeval keeps fragments of a mention
   (``O B-A I-A`` in IOB1 gives the mention ``I-A``), and with IOE1 it also drops valid mentions
   (``E-A I-A``: only ``I-A``; seqeval marks IOE1 as unfinished). Here, as for every other
   scheme, a mention with an invalid transition is dropped whole and valid labels are read right.
3. ``zero_division`` other than "warn", 0 or 1 raises ``OptionError`` (also a ``ValueError``);
   seqeval silently reads any other value as 1.
4. The "seems not to be NE tag" warning is given once per distinct label and call; seqeval gives
   it for every token, several times per call. Under Python's default warning filter (each
   message shown once) what is shown is the same.
5. A label that is not a string, or is empty, crashes seqeval (AttributeError, TypeError or
   IndexError, by mode). Here it raises ``InputError``: a ``TypeError`` for a label that is not a
   string, an ``IndexError`` for an empty one, in both modes.
6. Only seqeval's own schemes are understood: a user-defined ``Token`` subclass raises
   ``OptionError``.

Otherwise the two faces agree. The default mode (``mode=None``) is conlleval's chunk rule:
spanscore's ``labels="BIOES"`` with ``repair="conlleval"``, each label read as seqeval reads it
(the tag from its first letter, last with ``suffix=True``; the type from the rest). The strict
mode (``mode="strict"`` with ``scheme``; ``classification_report`` detects the scheme from
``y_true`` when not given, as seqeval does) is the scheme's encoding with ``repair="discard"``.
Scheme classes may be seqeval's own, this package's, or their names as strings. As in seqeval,
the score functions are strict only when given both ``mode="strict"`` and a scheme, and
``sample_weight`` changes nothing. The zero-division warning is scikit-learn's
``UndefinedMetricWarning`` with seqeval's text, imported the first time one is due (without
scikit-learn, a ``UserWarning`` of the same name). Errors are the exception types seqeval raises,
as classes that are also spanscore's ``InputError`` or ``OptionError``.

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

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import InputError
from ._core import (
    Labels,
    Scores,
    Tally,
    accuracy_score,
    check_beta_and_average,
    check_consistent_length,
    check_zero_division,
    guarded_scheme,
    guarded_tally,
    is_token_class,
    labels_of,
    no_entities,
    performance_measure,
    report,
    scores,
)
from ._errors import (
    InputAttributeError,
    InputIndexError,
    InputKeyError,
    InputTypeError,
    InputValueError,
    InputZeroDivisionError,
    OptionTypeError,
    OptionValueError,
    undefined_metric_warning,
)
from .scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2, Prefix, Token, auto_detect

FloatArray = npt.NDArray[np.float64]
Score = float | FloatArray


def __getattr__(name: str) -> Any:
    # The class is resolved when asked for, so that importing this module never imports scikit-learn.
    if name == "UndefinedMetricWarning":
        return undefined_metric_warning()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _strict_scheme(mode: Any, scheme: Any) -> type[Token] | None:
    """The scheme of the score functions: seqeval is strict only when given both."""
    if mode == "strict" and scheme:
        return guarded_scheme(scheme)
    return None


def _prfs(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: Any,
    warn_for: Sequence[str],
    beta: float,
    zero_division: Any,
    scheme: type[Token] | None,
    suffix: bool,
) -> Scores:
    """seqeval's _precision_recall_fscore_support: checks, counts, scores."""
    check_beta_and_average(beta, average)
    check_consistent_length(y_true, y_pred)
    tally = guarded_tally(y_true, y_pred, scheme, suffix)
    return scores(tally, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division)


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
) -> Scores:
    """Precision, recall, F-beta and support per type (``average=None``) or averaged, in seqeval's
    default mode (``seqeval.metrics.sequence_labeling.precision_recall_fscore_support``)."""
    check_zero_division(zero_division)
    return _prfs(
        y_true,
        y_pred,
        average=average,
        warn_for=warn_for,
        beta=beta,
        zero_division=zero_division,
        scheme=None,
        suffix=suffix,
    )


def _one_score(
    y_true: Labels,
    y_pred: Labels,
    which: int,
    warn_for: tuple[str, ...],
    beta: float,
    average: str | None,
    suffix: bool,
    mode: str | None,
    zero_division: str | int,
    scheme: Any,
) -> Any:
    check_zero_division(zero_division)
    found = _prfs(
        y_true,
        y_pred,
        average=average,
        warn_for=warn_for,
        beta=beta,
        zero_division=zero_division,
        scheme=_strict_scheme(mode, scheme),
        suffix=suffix,
    )
    return found[which]


def precision_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: Any = None,
) -> Score:
    """Precision: correct mentions / predicted mentions (seqeval's ``precision_score``).

    >>> y_true = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'O', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> y_pred = [['O', 'O', 'B-MISC', 'I-MISC', 'B-MISC', 'I-MISC', 'O'], ['B-PER', 'I-PER', 'O']]
    >>> precision_score(y_true, y_pred, average=None)
    array([0.5, 1. ])
    >>> float(precision_score(y_true, y_pred, average='micro'))
    0.6666666666666666
    """
    return _one_score(y_true, y_pred, 0, ("precision",), 1.0, average, suffix, mode, zero_division, scheme)  # type: ignore[no-any-return]


def recall_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: Any = None,
) -> Score:
    """Recall: correct mentions / reference mentions (seqeval's ``recall_score``)."""
    return _one_score(y_true, y_pred, 1, ("recall",), 1.0, average, suffix, mode, zero_division, scheme)  # type: ignore[no-any-return]


def f1_score(
    y_true: Labels,
    y_pred: Labels,
    *,
    average: str | None = "micro",
    suffix: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: Any = None,
) -> Score:
    """F1, the harmonic mean of precision and recall (seqeval's ``f1_score``)."""
    return _one_score(y_true, y_pred, 2, ("f-score",), 1, average, suffix, mode, zero_division, scheme)  # type: ignore[no-any-return]


def _only_outside(y_true: Any, y_pred: Any, suffix: bool) -> bool:
    """Whether seqeval's default mode finds no entity in either input however shaped (what its
    classification_report sees before it checks the shapes), for the labels this face reads."""
    for y in (y_true, y_pred):
        try:
            items = itertools.chain.from_iterable(y) if any(isinstance(s, list) for s in y) else y
            if any(not isinstance(x, str) or not x or x[-1 if suffix else 0] != "O" for x in set(items)):
                return False
        except TypeError:
            return False
    return True


def classification_report(
    y_true: Labels,
    y_pred: Labels,
    digits: int = 2,
    suffix: bool = False,
    output_dict: bool = False,
    mode: str | None = None,
    sample_weight: Sequence[float] | None = None,
    zero_division: str | int = "warn",
    scheme: Any = None,
) -> str | dict[str, dict[str, Any]]:
    """Precision, recall, F1 and support per type and averaged (micro, macro, weighted), as
    seqeval's text report or, with ``output_dict``, its dict."""
    check_zero_division(zero_division)
    strict: type[Token] | None = None
    labels_true: set[Any] | None = None
    if mode == "strict":
        check_consistent_length(y_true, y_pred)
        labels_true = labels_of(y_true)
        if scheme is None or (isinstance(scheme, type) and not is_token_class(scheme)):
            strict = guarded_scheme(auto_detect(y_true, suffix))
        else:
            strict = guarded_scheme(scheme)
    else:
        try:
            check_consistent_length(y_true, y_pred)
        except InputError:
            # seqeval's default report sizes its first column before it checks the input.
            if not output_dict and _only_outside(y_true, y_pred, suffix):
                raise no_entities() from None
            raise
    tally: Tally = guarded_tally(y_true, y_pred, strict, suffix, labels_true)
    return report(tally, digits=digits, output_dict=output_dict, zero_division=zero_division)


__all__ = [
    "BILOU",
    "IOB1",
    "IOB2",
    "IOBES",
    "IOE1",
    "IOE2",
    "InputAttributeError",
    "InputIndexError",
    "InputKeyError",
    "InputTypeError",
    "InputValueError",
    "InputZeroDivisionError",
    "OptionTypeError",
    "OptionValueError",
    "Prefix",
    "Token",
    "UndefinedMetricWarning",  # resolved by the module's __getattr__
    "accuracy_score",
    "classification_report",
    "f1_score",
    "performance_measure",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
]
