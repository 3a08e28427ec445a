"""seqeval 1.2.2's metrics, computed by spanscore's engine: change the import, keep the code.

``from spanscore.compat.seqeval import classification_report, f1_score`` replaces
``from seqeval.metrics import ...``. Every function keeps seqeval's signature, defaults, return
types and warnings: ``classification_report`` (the text report is seqeval's string character for
character, the dict has the same keys, values and numpy types), ``precision_score``,
``recall_score``, ``f1_score`` (``average`` None/micro/macro/weighted), ``accuracy_score``,
``performance_measure`` and ``precision_recall_fscore_support`` (seqeval's default mode).
Mentions are decoded and counted by :func:`spanscore.evaluate`; only the arithmetic that turns
counts into scores is seqeval's, ported line for line so that every figure is the same float.
(``accuracy_score`` and ``performance_measure`` compare labels token by token: no mentions.)

- The default mode (``mode=None``) is conlleval's chunk rule: spanscore's ``labels="BIOES"``
  (which reads BIO, IOB1, IOE and BIOES labels alike) with ``repair="conlleval"``. A label is read
  as seqeval reads it, the tag from its first letter (last with ``suffix=True``) and the type from
  the rest, so ``B``, ``B-`` or ``OTHER`` mean what they mean to seqeval, with the same "seems
  not to be NE tag" warning.
- The strict mode (``mode="strict"`` with ``scheme``; in ``classification_report`` the scheme is
  detected from ``y_true`` when not given, as seqeval does) is the scheme's encoding with
  ``repair="discard"``: for IOB2, IOE2, IOBES and BILOU, seqeval keeps exactly the mentions that
  contain no invalid transition. Scheme classes may be seqeval's own (``seqeval.scheme.IOB2``),
  this module's (``IOB2``...), or their names as strings. As in seqeval, the score functions are
  strict only when given both ``mode="strict"`` and a scheme; ``mode="strict"`` alone is the
  default mode there.
- ``sample_weight`` is accepted and, as in seqeval 1.2.2, changes nothing (seqeval uses it only
  for ``average="samples"``, which it refuses).
- The zero-division warning is scikit-learn's ``UndefinedMetricWarning``, as in seqeval, with the
  same text, each time seqeval gives it. scikit-learn takes seconds to import and spanscore does not
  otherwise need it, so it is imported the first time a warning is due; without scikit-learn the
  class is this module's ``UndefinedMetricWarning`` (a ``UserWarning``).
- Errors raise the exception types seqeval raises for the same input (``ValueError``,
  ``TypeError``, ``KeyError``, ``IndexError``, ``ZeroDivisionError``), as classes that are also
  spanscore's ``InputError`` or ``OptionError``; seqeval's message where it is one clear line
  (invalid tokens, unsupported schemes, ``average``), otherwise a clearer one.

Deliberate differences, each pinned by a test in tests/test_compat_seqeval.py:

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

import enum
import itertools
import operator
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..api import evaluate
from ..errors import InputError, OptionError, shorten
from ..stages.counts import MATCH_FIELDS

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Labels = list[list[str]]
Score = float | FloatArray
Scores = tuple[Any, Any, Any, Any]  # seqeval returns floats or arrays, ints or arrays, by ``average``

AVERAGE_OPTIONS = (None, "micro", "macro", "weighted")
_FULL = MATCH_FIELDS.index("full_ref")


# --------------------------------------------------------------------------------------------
# Errors: seqeval's exception types, and spanscore's.


class InputValueError(InputError, ValueError):
    """Input that seqeval refuses with a ValueError."""


class InputTypeError(InputError, TypeError):
    """Input that seqeval refuses with a TypeError."""


class InputIndexError(InputError, IndexError):
    """An empty label (seqeval fails with an IndexError on it)."""


class InputKeyError(InputError, KeyError):
    """A label whose prefix letter no scheme knows (seqeval's strict mode: a KeyError)."""

    def __str__(self) -> str:
        return self.one_line()  # KeyError's own would quote the message


class InputZeroDivisionError(InputError, ZeroDivisionError):
    """Accuracy over no labels at all."""


class OptionValueError(OptionError, ValueError):
    """An option value that seqeval refuses (or should) with a ValueError."""


class _FallbackUndefinedMetricWarning(UserWarning):
    """scikit-learn's UndefinedMetricWarning, where scikit-learn is not installed."""


_FallbackUndefinedMetricWarning.__name__ = _FallbackUndefinedMetricWarning.__qualname__ = "UndefinedMetricWarning"
_warning_class: type[Warning] | None = None


def _undefined_metric_warning() -> type[Warning]:
    global _warning_class
    if _warning_class is None:
        try:
            from sklearn.exceptions import UndefinedMetricWarning  # type: ignore[import-untyped]
        except ImportError:
            _warning_class = _FallbackUndefinedMetricWarning
        else:
            _warning_class = UndefinedMetricWarning
    return _warning_class


def __getattr__(name: str) -> Any:
    # The class is resolved when asked for, so that importing this module never imports scikit-learn.
    if name == "UndefinedMetricWarning":
        return _undefined_metric_warning()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# Schemes: seqeval's classes, as far as their names, prefixes and messages go.


class Prefix(enum.Flag):
    # The same members in the same order as seqeval's, so that str() and repr() of a prefix set
    # in an error message are seqeval's, on every Python version.
    I = enum.auto()  # noqa: E741
    O = enum.auto()  # noqa: E741
    B = enum.auto()
    E = enum.auto()
    S = enum.auto()
    U = enum.auto()
    L = enum.auto()
    ANY = I | O | B | E | S | U | L


PREFIXES: dict[str, Prefix] = {p.name: p for p in Prefix if p.name is not None and len(p.name) == 1}


class Token:
    """A tagging scheme for ``mode="strict"`` (seqeval's ``seqeval.scheme.Token``): the prefixes it
    allows, and the spanscore encoding that decodes it."""

    allowed_prefix: ClassVar[Prefix]
    encoding: ClassVar[str]
    letters: ClassVar[str]  # the allowed prefixes but O


class IOB1(Token):
    allowed_prefix = Prefix.I | Prefix.O | Prefix.B
    encoding = "IOB1"
    letters = "BI"


class IOE1(Token):
    allowed_prefix = Prefix.I | Prefix.O | Prefix.E
    encoding = "IOE1"
    letters = "IE"


class IOB2(Token):
    allowed_prefix = Prefix.I | Prefix.O | Prefix.B
    encoding = "BIO"
    letters = "BI"


class IOE2(Token):
    allowed_prefix = Prefix.I | Prefix.O | Prefix.E
    encoding = "IOE2"
    letters = "IE"


class IOBES(Token):
    allowed_prefix = Prefix.I | Prefix.O | Prefix.B | Prefix.E | Prefix.S
    encoding = "BIOES"
    letters = "BIES"


class BILOU(Token):
    allowed_prefix = Prefix.B | Prefix.I | Prefix.L | Prefix.O | Prefix.U
    encoding = "BILOU"
    letters = "BILU"


SCHEMES: dict[str, type[Token]] = {s.__name__: s for s in (IOB1, IOE1, IOB2, IOE2, IOBES, BILOU)}

# seqeval's auto_detect: the prefix sets of y_true that name each scheme.
_P = Prefix
_DETECT: tuple[tuple[type[Token], tuple[set[Prefix], ...]], ...] = (
    (IOB2, ({_P.I, _P.O, _P.B}, {_P.I, _P.B}, {_P.B, _P.O}, {_P.B})),
    (IOE2, ({_P.I, _P.O, _P.E}, {_P.I, _P.E}, {_P.E, _P.O}, {_P.E})),
    (
        IOBES,
        (
            {_P.I, _P.O, _P.B, _P.E, _P.S},
            {_P.I, _P.B, _P.E, _P.S},
            {_P.I, _P.O, _P.B, _P.E},
            {_P.O, _P.B, _P.E, _P.S},
            {_P.I, _P.B, _P.E},
            {_P.B, _P.E, _P.S},
            {_P.O, _P.B, _P.E},
            {_P.B, _P.E},
            {_P.S},
        ),
    ),
    (
        BILOU,
        (
            {_P.I, _P.O, _P.B, _P.L, _P.U},
            {_P.I, _P.B, _P.L, _P.U},
            {_P.I, _P.O, _P.B, _P.L},
            {_P.O, _P.B, _P.L, _P.U},
            {_P.I, _P.B, _P.L},
            {_P.B, _P.L, _P.U},
            {_P.O, _P.B, _P.L},
            {_P.B, _P.L},
            {_P.U},
        ),
    ),
)


def _is_token_class(scheme: Any) -> bool:
    """A subclass of this module's Token or of seqeval's (without importing seqeval)."""
    return isinstance(scheme, type) and any(
        c is Token or (c.__name__ == "Token" and c.__module__ == "seqeval.scheme") for c in scheme.__mro__
    )


def _scheme(scheme: Any) -> type[Token]:
    """This module's scheme class for ``scheme``: one of its classes, seqeval's, or a name."""
    if isinstance(scheme, str) and scheme.upper() in SCHEMES:
        return SCHEMES[scheme.upper()]
    if isinstance(scheme, type):
        if scheme in SCHEMES.values():
            return scheme
        if scheme.__module__ == "seqeval.scheme" and scheme.__name__ in SCHEMES:
            return SCHEMES[scheme.__name__]
    raise OptionValueError(
        f"scheme {getattr(scheme, '__name__', scheme)!r} is not one of seqeval's schemes:"
        f" use one of {', '.join(SCHEMES)}"
    )


# --------------------------------------------------------------------------------------------
# Input checks, in seqeval's order and with its exception types.


def _check_consistent_length(y_true: Any, y_pred: Any) -> None:
    """seqeval's check_consistent_length: lists of lists, sentence by sentence of equal lengths."""
    try:
        len_true = list(map(len, y_true))
        len_pred = list(map(len, y_pred))
        is_list = set(map(type, y_true)) | set(map(type, y_pred))
    except TypeError:  # not a sequence of sequences at all
        is_list = set()
    if not is_list == {list}:
        raise InputTypeError("Found input variables without list of list.")
    if len(y_true) != len(y_pred):
        raise InputValueError(
            f"Found input variables with inconsistent numbers of samples: {len(y_true)} sentences in y_true"
            f" but {len(y_pred)} in y_pred"
        )
    if len_true != len_pred:
        k = next(i for i, (a, b) in enumerate(zip(len_true, len_pred, strict=True)) if a != b)
        raise InputValueError(
            f"Found input variables with inconsistent numbers of samples: sentence {k} has {len_true[k]} labels"
            f" in y_true but {len_pred[k]} in y_pred"
        )


def _check_zero_division(zero_division: Any) -> None:
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return
    elif isinstance(zero_division, int | float | np.integer | np.floating) and zero_division in (0, 1):
        return
    raise OptionValueError(f'zero_division must be "warn", 0 or 1, not {zero_division!r}')


def _check_average(average: Any) -> None:
    if average not in AVERAGE_OPTIONS:
        raise OptionValueError(f"average has to be one of {AVERAGE_OPTIONS}")


def _vocabulary(sequences: Iterable[Iterable[Any]]) -> list[Any]:
    """The distinct labels in order of first occurrence."""
    try:
        return list(dict.fromkeys(itertools.chain.from_iterable(sequences)))
    except TypeError:
        raise InputTypeError("labels must be strings: found one that is not even hashable") from None


def _not_a_string(label: Any) -> InputTypeError:
    return InputTypeError(f"labels must be strings, not {type(label).__name__} {label!r}")


def _empty_label() -> InputIndexError:
    return InputIndexError("a label is the empty string: every label needs at least a tag letter")


# --------------------------------------------------------------------------------------------
# Labels as seqeval reads them, rewritten (when needed) into labels spanscore reads the same way.

_NE_PREFIXES = ("B-", "I-", "E-", "S-")
_NE_SUFFIXES = ("-B", "-I", "-E", "-S")
_BARE_TAGS = ("O", "B", "I", "E", "S")


def _default_rewrite(labels: Sequence[Any], suffix: bool) -> dict[str, str]:
    """seqeval's default mode: each label's canonical ``TAG-type`` (or ``O``), warning as
    seqeval's get_entities does about labels that do not look like NE tags."""
    out: dict[str, str] = {}
    other: str | None = None
    for label in labels:
        if not isinstance(label, str):
            raise _not_a_string(label)
        if not label:
            raise _empty_label()
        if label not in _BARE_TAGS and not (label.endswith(_NE_SUFFIXES) if suffix else label.startswith(_NE_PREFIXES)):
            warnings.warn(f"{label} seems not to be NE tag.", stacklevel=1)
        if suffix:
            tag, kind = label[-1], label[:-1].rsplit("-", maxsplit=1)[0] or "_"
        else:
            tag, kind = label[0], label[1:].split("-", maxsplit=1)[-1] or "_"
        if tag == "O":
            out[label] = "O"
        elif tag in ("B", "I", "E", "S"):
            out[label] = f"{tag}-{kind}"
        elif other is None:
            other = label
    if other is not None:
        where = "last" if suffix else "first"
        raise InputError(
            f"label {shorten(other)}: its tag letter ({where} character) is none of B, I, E, S, O, and seqeval's"
            " default mode chunks such labels by type changes alone, losing or overlapping mentions;"
            " use mode='strict' with a scheme (BILOU for U- and L- labels)"
        )
    return out


@dataclass(frozen=True)
class _Parsed:
    """seqeval's Token: prefix letter and type; or why it could not be made."""

    prefix: Prefix | None
    kind: str
    error: Exception | None


def _parse_strict(label: Any, suffix: bool) -> _Parsed:
    if not isinstance(label, str):
        return _Parsed(None, "", _not_a_string(label))
    if not label:
        return _Parsed(None, "", _empty_label())
    letter = label[-1] if suffix else label[0]
    if letter not in PREFIXES:
        known = ", ".join(PREFIXES)
        return _Parsed(
            None, "", InputKeyError(f"label {shorten(label)}: no scheme has the prefix {letter!r} ({known})")
        )
    kind = (label[:-1] if suffix else label[1:]).strip("-") or "_"
    return _Parsed(PREFIXES[letter], kind, None)


def _auto_detect(y_true: Labels, suffix: bool, labels: set[Any]) -> type[Token]:
    """seqeval's auto_detect from ``labels``, the distinct labels of ``y_true``."""
    prefixes: set[Prefix] = set()
    for label in labels:
        parsed = _parse_strict(label, suffix)
        if parsed.prefix is None:
            break
        prefixes.add(parsed.prefix)
    else:
        for scheme, allowed in _DETECT:
            if prefixes in allowed:
                return scheme
    # seqeval's error: the first label it cannot read, or the prefixes as a set built in the order
    # of the labels (the same set in the same order prints the prefixes in seqeval's order).
    prefixes = set()
    for label in _vocabulary(y_true):
        parsed = _parse_strict(label, suffix)
        if isinstance(parsed.error, InputKeyError):
            raise InputValueError(f"This scheme is not supported: {label}")
        if parsed.error is not None:
            raise parsed.error
        assert parsed.prefix is not None
        prefixes.add(parsed.prefix)
    raise InputValueError(f"This scheme is not supported: {prefixes}")


def _strict_rewrite(sides: tuple[tuple[Labels, list[Any]], ...], scheme: type[Token], suffix: bool) -> dict[str, str]:
    """seqeval's strict mode: each label's canonical ``PREFIX-type`` (or ``O``); a label seqeval
    refuses raises the error seqeval raises first (y_true before y_pred, sentence by sentence,
    in a sentence a label it cannot read before one the scheme does not allow)."""
    out: dict[str, str] = {}
    bad: dict[Any, tuple[int, Exception]] = {}  # label -> (1 unreadable, 2 not allowed; error)
    for _, vocab in sides:
        for label in vocab:
            if label in out or label in bad:
                continue
            parsed = _parse_strict(label, suffix)
            if parsed.error is not None:
                bad[label] = (1, parsed.error)
            elif parsed.prefix is None or parsed.prefix not in scheme.allowed_prefix:
                allowed = str(scheme.allowed_prefix).replace("Prefix.", "")
                bad[label] = (2, InputValueError(f"Invalid token is found: {label}. Allowed prefixes are: {allowed}."))
            else:
                assert parsed.prefix is not None
                out[label] = "O" if parsed.prefix is Prefix.O else f"{parsed.prefix.name}-{parsed.kind}"
    if bad:
        for sequences, vocab in sides:
            if not any(label in bad for label in vocab):
                continue
            for sentence in sequences:
                found = [bad[label] for label in sentence if label in bad]
                if found:
                    raise min(found, key=operator.itemgetter(0))[1]  # min: the first of the lowest rank
    return out


# --------------------------------------------------------------------------------------------
# Counting: spanscore's engine.


@dataclass(frozen=True)
class _Tally:
    """Per type (sorted by name, as seqeval sorts them): predicted, true positive and reference
    mention counts."""

    names: list[str]
    pred: list[int]
    tp: list[int]
    true: list[int]


def _rewritten(sequences: Labels, rewrite: dict[str, str]) -> Labels:
    if all(k == v for k, v in rewrite.items()):
        return sequences
    get = rewrite.__getitem__
    return [list(map(get, s)) for s in sequences]


def _count(y_true: Labels, y_pred: Labels, encoding: str, repair: str) -> _Tally:
    """Mentions decoded and counted by ``spanscore.evaluate``."""
    report = evaluate(
        reference=y_true, predicted=y_pred, format="labels", labels=encoding, repair=repair, keep_details=False
    )
    counts = report.counts
    full = counts.criteria["strict"][_FULL]
    keep = [
        k
        for k in sorted(range(len(counts.types)), key=counts.types.__getitem__)
        if counts.reference[k] or counts.predicted[k]
    ]
    return _Tally(
        [counts.types[k] for k in keep],
        [int(counts.predicted[k]) for k in keep],
        [int(full[k]) for k in keep],
        [int(counts.reference[k]) for k in keep],
    )


def _labels_of(sequences: Labels) -> set[Any]:
    try:
        return set().union(*sequences)
    except TypeError:
        raise InputTypeError("labels must be strings: found one that is not even hashable") from None


def _plain(label: Any, letters: str) -> bool:
    """A label that spanscore reads as seqeval's strict mode does: ``O``, or a prefix the scheme
    allows, a dash and a type that neither starts nor ends with a dash (seqeval strips those)."""
    return isinstance(label, str) and (
        label == "O" or (len(label) > 2 and label[1] == "-" and label[0] in letters and label[2] != "-" != label[-1])
    )


def _tally(
    y_true: Labels, y_pred: Labels, scheme: type[Token] | None, suffix: bool, labels_true: set[Any] | None = None
) -> _Tally:
    """The counts of the checked inputs, read as seqeval reads them. Labels spanscore reads as they
    are go straight to it; the others are first rewritten, label by label, into ones it reads so."""
    if scheme is None:
        if not suffix:
            try:
                # Every label spanscore's BIOES reads (O, or B, I, E, S, a dash and a type) means the
                # same to seqeval's default mode, and none is one it warns about.
                return _count(y_true, y_pred, "BIOES", "conlleval")
            except (InputError, OptionError):
                pass  # a label spanscore cannot read as it is: each is read as seqeval reads it below
        vocab = list(dict.fromkeys(_vocabulary(y_true) + _vocabulary(y_pred)))
        rewrite = _default_rewrite(vocab, suffix)
        return _count(_rewritten(y_true, rewrite), _rewritten(y_pred, rewrite), "BIOES", "conlleval")
    labels = (_labels_of(y_true) if labels_true is None else labels_true) | _labels_of(y_pred)
    if not suffix and all(_plain(label, scheme.letters) for label in labels):
        return _count(y_true, y_pred, scheme.encoding, "discard")
    rewrite = _strict_rewrite(((y_true, _vocabulary(y_true)), (y_pred, _vocabulary(y_pred))), scheme, suffix)
    return _count(_rewritten(y_true, rewrite), _rewritten(y_pred, rewrite), scheme.encoding, "discard")


def _strict_scheme(mode: Any, scheme: Any) -> type[Token] | None:
    """The scheme of the score functions: seqeval is strict only when given both."""
    if mode == "strict" and scheme:
        return _scheme(scheme)
    return None


# --------------------------------------------------------------------------------------------
# seqeval's arithmetic (seqeval.metrics.v1), ported as it is: the same numpy operations in the
# same order give the same floats and the same types.


def _warn_prf(average: Any, modifier: str, msg_start: str, result_size: int) -> None:
    axis0, axis1 = "sample", "label"
    if average == "samples":
        axis0, axis1 = axis1, axis0
    msg = (
        f"{msg_start} ill-defined and being set to 0.0 {{0}} no {modifier} {axis0}s."
        " Use `zero_division` parameter to control this behavior."
    )
    msg = msg.format("due to") if result_size == 1 else msg.format(f"in {axis1}s with")
    warnings.warn(msg, _undefined_metric_warning(), stacklevel=2)


def _prf_divide(
    numerator: IntArray,
    denominator: IntArray,
    metric: str,
    modifier: str,
    average: Any,
    warn_for: Sequence[str],
    zero_division: Any,
) -> FloatArray:
    mask = denominator == 0.0
    denominator = denominator.copy()
    denominator[mask] = 1
    result: FloatArray = numerator / denominator
    if not np.any(mask):
        return result
    result[mask] = 0.0 if zero_division in ["warn", 0] else 1.0
    if zero_division != "warn" or metric not in warn_for:
        return result
    if metric in warn_for and "f-score" in warn_for:
        msg_start = f"{metric.title()} and F-score are"
    elif metric in warn_for:
        msg_start = f"{metric.title()} is"
    elif "f-score" in warn_for:
        msg_start = "F-score is"
    else:
        return result
    _warn_prf(average, modifier, msg_start, len(result))
    return result


def _counts_arrays(tally: _Tally) -> tuple[Any, Any, Any]:
    # seqeval appends Python ints to an empty int32 array: int64 once anything was appended.
    if not tally.names:
        empty = np.array([], dtype=np.int32)
        return empty, empty.copy(), empty.copy()
    return (
        np.array(tally.pred, dtype=np.int64),
        np.array(tally.tp, dtype=np.int64),
        np.array(tally.true, dtype=np.int64),
    )


def _scores(tally: _Tally, *, average: Any, warn_for: Sequence[str], beta: float, zero_division: Any) -> Scores:
    """seqeval's _precision_recall_fscore_support after its counting."""
    pred_sum, tp_sum, true_sum = _counts_arrays(tally)
    if average == "micro":
        tp_sum = np.array([tp_sum.sum()])
        pred_sum = np.array([pred_sum.sum()])
        true_sum = np.array([true_sum.sum()])
    beta2 = beta**2
    precision = _prf_divide(tp_sum, pred_sum, "precision", "predicted", average, warn_for, zero_division)
    recall = _prf_divide(tp_sum, true_sum, "recall", "true", average, warn_for, zero_division)
    if zero_division == "warn" and warn_for == ("f-score",) and (pred_sum[true_sum == 0] == 0).any():
        _warn_prf(average, "true nor predicted", "F-score is", len(true_sum))
    if np.isposinf(beta):
        f_score = recall
    else:
        denom = beta2 * precision + recall
        denom[denom == 0.0] = 1
        f_score = (1 + beta2) * precision * recall / denom
    weights: Any = None
    if average == "weighted":
        weights = true_sum
        if weights.sum() == 0:
            zero_division_value = 0.0 if zero_division in ["warn", 0] else 1.0
            return (
                zero_division_value if pred_sum.sum() == 0 else 0.0,
                zero_division_value,
                zero_division_value if pred_sum.sum() == 0 else 0.0,
                sum(true_sum),
            )
    if average is not None:
        return (
            np.average(precision, weights=weights),
            np.average(recall, weights=weights),
            np.average(f_score, weights=weights),
            sum(true_sum),
        )
    return precision, recall, f_score, true_sum


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
    if beta < 0:
        raise OptionValueError("beta should be >=0 in the F-beta score")
    _check_average(average)
    _check_consistent_length(y_true, y_pred)
    tally = _tally(y_true, y_pred, scheme, suffix)
    return _scores(tally, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division)


# --------------------------------------------------------------------------------------------
# The public functions.


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
    _check_zero_division(zero_division)
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
    _check_zero_division(zero_division)
    scores = _prfs(
        y_true,
        y_pred,
        average=average,
        warn_for=warn_for,
        beta=beta,
        zero_division=zero_division,
        scheme=_strict_scheme(mode, scheme),
        suffix=suffix,
    )
    return scores[which]


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


def _flat(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    """Both flattened when y_true holds lists (seqeval's rule: y_pred follows y_true's shape)."""
    try:
        if any(isinstance(s, list) for s in y_true):
            return list(itertools.chain.from_iterable(y_true)), list(itertools.chain.from_iterable(y_pred))
    except TypeError:
        raise InputTypeError("y_true and y_pred must be lists of label lists (or of labels)") from None
    return y_true, y_pred


def accuracy_score(y_true: Any, y_pred: Any) -> float:
    """The share of tokens whose labels are equal (seqeval's ``accuracy_score``)."""
    y_true, y_pred = _flat(y_true, y_pred)
    nb_correct = sum(map(operator.eq, y_true, y_pred))
    nb_true = len(y_true)
    if nb_true == 0:
        raise InputZeroDivisionError("accuracy_score: y_true has no labels")
    return nb_correct / nb_true  # type: ignore[no-any-return]


def performance_measure(y_true: Any, y_pred: Any) -> dict[str, int]:
    """Token counts TP, FP, FN, TN, where O is the negative class (seqeval's ``performance_measure``)."""
    y_true, y_pred = _flat(y_true, y_pred)
    pairs = Counter(zip(y_true, y_pred, strict=False))  # the few distinct pairs, not every token, are tested below
    tp = fp = fn = tn = 0
    for (t, p), n in pairs.items():
        if t == p and (t != "O" or p != "O"):
            tp += n
        if t != p and p != "O":
            fp += n
        if t != "O" and p == "O":
            fn += n
        if t == p == "O":
            tn += n
    return {"TP": tp, "FP": fp, "FN": fn, "TN": tn}


# --------------------------------------------------------------------------------------------
# classification_report and its two writers (seqeval.reporters).


class _StringReporter:
    def __init__(self, width: int, digits: int) -> None:
        self.buffer: list[str] = []
        self.row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}"
        self.width = width
        self.digits = digits

    def write(self, row_name: str, precision: Any, recall: Any, f1: Any, support: Any) -> None:
        self.buffer.append(
            self.row_fmt.format(row_name, precision, recall, f1, support, width=self.width, digits=self.digits)
        )

    def write_blank(self) -> None:
        self.buffer.append("")

    def report(self) -> str:
        headers = ["precision", "recall", "f1-score", "support"]
        head_fmt = "{:>{width}s} " + " {:>9}" * len(headers)
        return head_fmt.format("", *headers, width=self.width) + "\n\n" + "\n".join(self.buffer)


class _DictReporter:
    def __init__(self) -> None:
        self.report_dict: dict[str, dict[str, Any]] = {}

    def write(self, row_name: str, precision: Any, recall: Any, f1: Any, support: Any) -> None:
        self.report_dict[row_name] = {"precision": precision, "recall": recall, "f1-score": f1, "support": support}

    def write_blank(self) -> None:
        pass

    def report(self) -> dict[str, dict[str, Any]]:
        return self.report_dict


def _only_outside(y_true: Any, y_pred: Any, suffix: bool) -> bool:
    """Whether seqeval's default mode finds no entity in either input however shaped (what its
    classification_report sees before it checks the shapes)."""
    for y in (y_true, y_pred):
        try:
            items = itertools.chain.from_iterable(y) if any(isinstance(s, list) for s in y) else y
            if any(not isinstance(x, str) or not x or x[-1 if suffix else 0] != "O" for x in set(items)):
                return False
        except TypeError:
            return False
    return True


def _no_entities() -> InputValueError:
    return InputValueError("classification_report: neither y_true nor y_pred has an entity to report on")


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
    _check_zero_division(zero_division)
    strict: type[Token] | None = None
    labels_true: set[Any] | None = None
    if mode == "strict":
        _check_consistent_length(y_true, y_pred)
        labels_true = _labels_of(y_true)
        if scheme is None or (isinstance(scheme, type) and not _is_token_class(scheme)):
            strict = _auto_detect(y_true, suffix, labels_true)
        else:
            strict = _scheme(scheme)
    else:
        try:
            _check_consistent_length(y_true, y_pred)
        except InputError:
            # seqeval's default report sizes its first column before it checks the input.
            if not output_dict and _only_outside(y_true, y_pred, suffix):
                raise _no_entities() from None
            raise
    tally = _tally(y_true, y_pred, strict, suffix, labels_true)
    reporter: _StringReporter | _DictReporter
    if output_dict:
        reporter = _DictReporter()
    else:
        if not tally.names:
            raise _no_entities()
        name_width = max(map(len, tally.names))
        reporter = _StringReporter(max(name_width, len("weighted avg"), digits), digits)
    warn_for = ("precision", "recall", "f-score")
    p, r, f1, s = _scores(tally, average=None, warn_for=warn_for, beta=1.0, zero_division=zero_division)
    for row in zip(tally.names, p, r, f1, s, strict=False):
        reporter.write(*row)
    reporter.write_blank()
    for average in ("micro", "macro", "weighted"):
        avg_p, avg_r, avg_f1, support = _scores(
            tally, average=average, warn_for=warn_for, beta=1.0, zero_division=zero_division
        )
        reporter.write(f"{average} avg", avg_p, avg_r, avg_f1, support)
    reporter.write_blank()
    return reporter.report()


__all__ = [
    "BILOU",
    "IOB1",
    "IOB2",
    "IOBES",
    "IOE1",
    "IOE2",
    "InputIndexError",
    "InputKeyError",
    "InputTypeError",
    "InputValueError",
    "InputZeroDivisionError",
    "OptionValueError",
    "Prefix",
    "Token",
    "UndefinedMetricWarning",  # noqa: F822 (resolved by the module's __getattr__)
    "accuracy_score",
    "classification_report",
    "f1_score",
    "performance_measure",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
]
