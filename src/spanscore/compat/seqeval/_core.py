"""What spanscore.compat.seqeval's two faces share: input checks, reading labels, counting mentions,
and seqeval's arithmetic from counts to scores.

Mentions are decoded by spanscore's reader (:func:`spanscore.load`) wherever one of its label encodings reads the
labels as seqeval does: the default mode is its ``BIOES`` reading with ``repair="conlleval"``,
and the strict mode with IOB2, IOE2, IOBES or BILOU is that encoding with ``repair="discard"``
(seqeval keeps exactly the mentions with no invalid transition). Labels seqeval reads its own way
are first rewritten, label by label, into ones the engine reads the same way. What no encoding
reads as seqeval does (the default mode's tags other than B, I, E, S, O, seqeval's IOB1 and
IOE1, schemes of one's own) is read by seqeval's rules on arrays (``_chunks``), and only by the
faithful face (``spanscore.compat.seqeval.metrics``).

The arithmetic from counts to scores is seqeval's (itself scikit-learn's), the same numpy
operations in the same order, so that every figure is the same float of the same type.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api import load
from ...errors import InputError, OptionError, shorten
from . import _chunks
from ._errors import (
    InputIndexError,
    InputKeyError,
    InputTypeError,
    InputValueError,
    InputZeroDivisionError,
    OptionTypeError,
    OptionValueError,
    undefined_metric_warning,
)
from .reporters import DictReporter, StringReporter
from .scheme import BILOU, IOB1, IOB2, IOBES, IOE1, IOE2, Prefix, Token, auto_detect

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Labels = list[list[str]]
Scores = tuple[Any, Any, Any, Any]  # seqeval returns floats or arrays, ints or arrays, by ``average``
Report = str | dict[str, dict[str, Any]]

AVERAGE_OPTIONS = (None, "micro", "macro", "weighted")
WARN_FOR = ("precision", "recall", "f-score")


def nothing() -> None:
    """No warnings to give again."""


# --------------------------------------------------------------------------------------------
# Input checks, in seqeval's order and with its exception types.


def check_consistent_length(y_true: Any, y_pred: Any) -> None:
    """seqeval's check: two lists of lists, with as many sentences and, sentence by sentence, as
    many labels (a TypeError, then a ValueError naming the first sentence that differs)."""
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


def check_zero_division(zero_division: Any) -> None:
    """spanscore's check (seqeval reads any value but "warn" and 0 as 1)."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return
    elif isinstance(zero_division, int | float | np.integer | np.floating) and zero_division in (0, 1):
        return
    raise OptionValueError(f'zero_division must be "warn", 0 or 1, not {zero_division!r}')


def check_beta_and_average(beta: Any, average: Any) -> None:
    if beta < 0:
        raise OptionValueError("beta should be >=0 in the F-beta score")
    if average not in AVERAGE_OPTIONS:
        raise OptionValueError(f"average has to be one of {AVERAGE_OPTIONS}")


# --------------------------------------------------------------------------------------------
# Schemes: this package's classes, seqeval's, their names, and what spanscore's engine calls them.

SCHEMES: dict[str, type[Token]] = {s.__name__: s for s in (IOB1, IOE1, IOB2, IOE2, IOBES, BILOU)}
# The schemes whose strict mode is an encoding of spanscore's with repair="discard", exactly.
ENGINE_ENCODING: dict[type[Token], str] = {IOB2: "BIO", IOE2: "IOE2", IOBES: "BIOES", BILOU: "BILOU"}
# What the guarded face reads each scheme as: an encoding, and the prefixes (but O) it allows.
GUARDED_ENCODING: dict[type[Token], tuple[str, str]] = {
    IOB1: ("IOB1", "BI"),
    IOE1: ("IOE1", "IE"),
    IOB2: ("BIO", "BI"),
    IOE2: ("IOE2", "IE"),
    IOBES: ("BIOES", "BIES"),
    BILOU: ("BILOU", "BILU"),
}


def is_token_class(scheme: Any) -> bool:
    """A subclass of this package's Token or of seqeval's (without importing seqeval)."""
    return isinstance(scheme, type) and any(
        c is Token or (c.__name__ == "Token" and c.__module__ == "seqeval.scheme") for c in scheme.__mro__
    )


def builtin_scheme(scheme: Any) -> type[Token] | None:
    """This package's class for one of seqeval's six schemes: the class itself, seqeval's own,
    or its name (any case); None for anything else."""
    if isinstance(scheme, str):
        return SCHEMES.get(scheme.upper())
    if isinstance(scheme, type):
        if scheme in GUARDED_ENCODING:
            return scheme
        if scheme.__module__ == "seqeval.scheme" and scheme.__name__ in SCHEMES:
            return SCHEMES[scheme.__name__]
    return None


def guarded_scheme(scheme: Any) -> type[Token]:
    """The guarded face reads only seqeval's six schemes."""
    found = builtin_scheme(scheme)
    if found is None:
        raise OptionValueError(
            f"scheme {getattr(scheme, '__name__', scheme)!r} is not one of seqeval's schemes:"
            f" use one of {', '.join(SCHEMES)}"
        )
    return found


def faithful_scheme(scheme: Any) -> type:
    """The faithful face reads seqeval's schemes, and any Token subclass by its own patterns."""
    found = builtin_scheme(scheme)
    if found is not None:
        return found
    if is_token_class(scheme):
        return scheme  # type: ignore[no-any-return]
    if isinstance(scheme, str):
        raise OptionValueError(f"scheme {scheme!r} is not one of seqeval's schemes: use one of {', '.join(SCHEMES)}")
    raise OptionTypeError(
        f"scheme must be a scheme class (IOB2, IOBES... or a Token subclass), not {type(scheme).__name__} {scheme!r}"
    )


# --------------------------------------------------------------------------------------------
# Counting: spanscore's engine.


@dataclass(frozen=True)
class Tally:
    """Per type (sorted by name, as seqeval sorts them): predicted, true positive and reference
    mention counts."""

    names: list[str]
    pred: list[int]
    tp: list[int]
    true: list[int]


def count(y_true: Labels, y_pred: Labels, encoding: str, repair: str) -> Tally:
    """Mentions decoded by spanscore's reader and counted as exact matches (seqeval's only
    criterion: the one-to-one matching of the other criteria is not needed, and on seqeval's
    small calls it would cost more than the decoding)."""
    loaded = load(reference=y_true, predicted=y_pred, format="labels", labels=encoding, repair=repair)
    r, p = loaded.reference, loaded.predicted
    return tally_spans((r.types, r.type, r.start, r.end), (p.types, p.type, p.start, p.end))


def rewritten(sequences: Labels, rewrite: dict[Any, str]) -> Labels:
    """Each label replaced by the one the engine reads as seqeval reads it (the same lists when
    nothing changes)."""
    if all(k == v for k, v in rewrite.items()):
        return sequences
    get = rewrite.__getitem__
    return [list(map(get, s)) for s in sequences]


def labels_of(sequences: Labels) -> set[Any]:
    try:
        return set().union(*sequences)
    except TypeError:
        raise InputTypeError("labels must be strings: found one that is not even hashable") from None


def vocabulary(sequences: Iterable[Iterable[Any]]) -> list[Any]:
    """The distinct labels in order of first occurrence."""
    try:
        return list(dict.fromkeys(itertools.chain.from_iterable(sequences)))
    except TypeError:
        raise InputTypeError("labels must be strings: found one that is not even hashable") from None


def tally_spans(true: Sequence[Any], pred: Sequence[Any]) -> Tally:
    """Counts of mentions given per side as (type names, then per mention: type index and the
    columns that place it); a true positive is a mention on both sides, type included."""
    names_t, names_p = true[0], pred[0]
    used = {names_t[k] for k in np.unique(true[1]).tolist()} | {names_p[k] for k in np.unique(pred[1]).tolist()}
    names = sorted(used)
    where = {name: k for k, name in enumerate(names)}
    k = len(names)
    sides = []
    for side in (true, pred):
        remap = np.array([where.get(name, -1) for name in side[0]], dtype=np.int64)
        sides.append(np.stack([remap[side[1]] if len(side[0]) else side[1], *side[2:]], axis=1).astype(np.int64))
    true_sum = np.bincount(sides[0][:, 0], minlength=k)
    pred_sum = np.bincount(sides[1][:, 0], minlength=k)
    # Each side holds a mention once: a mention on both sides is two equal rows next to each other.
    rows = np.concatenate(sides)
    rows = rows[np.lexsort(rows.T[::-1])]
    both = (rows[1:] == rows[:-1]).all(axis=1)
    tp_sum = np.bincount(rows[1:][both, 0], minlength=k)
    return Tally(names, pred_sum.tolist(), tp_sum.tolist(), true_sum.tolist())


# --------------------------------------------------------------------------------------------
# The guarded face (spanscore.compat.seqeval): labels read as seqeval reads them, refused where
# seqeval's reading loses mentions.

def not_a_string(label: Any) -> InputTypeError:
    return InputTypeError(f"labels must be strings, not {type(label).__name__} {label!r}")


def empty_label() -> InputIndexError:
    return InputIndexError("a label is the empty string: every label needs at least a tag letter")


def _guarded_default_rewrite(labels: Sequence[Any], suffix: bool) -> dict[str, str]:
    """seqeval's default mode: each label's canonical ``TAG-type`` (or ``O``), warning once per
    label that does not look like an NE tag; a tag letter seqeval's rule does not know is refused."""
    out: dict[str, str] = {}
    other: str | None = None
    for label in labels:
        if not isinstance(label, str):
            raise not_a_string(label)
        if not label:
            raise empty_label()
        odd, tag, kind = _chunks.read_default_label(label, suffix)
        if odd:
            warnings.warn(f"{label} seems not to be NE tag.", stacklevel=1)
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


_PREFIXES: dict[str, Prefix] = {p.name: p for p in Prefix if p.name is not None and len(p.name) == 1}


def _parse_strict(label: Any, suffix: bool) -> _Parsed:
    if not isinstance(label, str):
        return _Parsed(None, "", not_a_string(label))
    if not label:
        return _Parsed(None, "", empty_label())
    letter = label[-1] if suffix else label[0]
    if letter not in _PREFIXES:
        known = ", ".join(_PREFIXES)
        return _Parsed(
            None, "", InputKeyError(f"label {shorten(label)}: no scheme has the prefix {letter!r} ({known})")
        )
    kind = (label[:-1] if suffix else label[1:]).strip("-") or "_"
    return _Parsed(_PREFIXES[letter], kind, None)


def _guarded_strict_rewrite(
    sides: tuple[tuple[Labels, list[Any]], ...], scheme: type[Token], suffix: bool
) -> dict[str, str]:
    """seqeval's strict mode: each label's canonical ``PREFIX-type`` (or ``O``); a label seqeval
    refuses raises the error seqeval raises first (y_true before y_pred, sentence by sentence,
    in a sentence a label it cannot read before one the scheme does not allow)."""
    allowed = scheme.allowed_prefix
    assert allowed is not None
    out: dict[str, str] = {}
    bad: dict[Any, tuple[int, Exception]] = {}  # label -> (1 unreadable, 2 not allowed; error)
    for _, vocab in sides:
        for label in vocab:
            if label in out or label in bad:
                continue
            parsed = _parse_strict(label, suffix)
            if parsed.error is not None:
                bad[label] = (1, parsed.error)
            elif parsed.prefix is None or parsed.prefix not in allowed:
                names = str(allowed).replace("Prefix.", "")
                bad[label] = (2, InputValueError(f"Invalid token is found: {label}. Allowed prefixes are: {names}."))
            else:
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


def _plain(label: Any, letters: str) -> bool:
    """A label that spanscore reads as seqeval's strict mode does: ``O``, or a prefix the scheme
    allows, a dash and a type that neither starts nor ends with a dash (seqeval strips those)."""
    return isinstance(label, str) and (
        label == "O" or (len(label) > 2 and label[1] == "-" and label[0] in letters and label[2] != "-" != label[-1])
    )


def guarded_tally(
    y_true: Labels, y_pred: Labels, scheme: type[Token] | None, suffix: bool, labels_true: set[Any] | None = None
) -> Tally:
    """The counts of the checked inputs, read as seqeval reads them. Labels spanscore reads as they
    are go straight to it; the others are first rewritten, label by label, into ones it reads so."""
    if scheme is None:
        if not suffix:
            try:
                # Every label spanscore's BIOES reads (O, or B, I, E, S, a dash and a type) means the
                # same to seqeval's default mode, and none is one it warns about.
                return count(y_true, y_pred, "BIOES", "conlleval")
            except (InputError, OptionError):
                pass  # a label spanscore cannot read as it is: each is read as seqeval reads it below
        vocab = list(dict.fromkeys(vocabulary(y_true) + vocabulary(y_pred)))
        rewrite = _guarded_default_rewrite(vocab, suffix)
        return count(rewritten(y_true, rewrite), rewritten(y_pred, rewrite), "BIOES", "conlleval")
    encoding, letters = GUARDED_ENCODING[scheme]
    labels = (labels_of(y_true) if labels_true is None else labels_true) | labels_of(y_pred)
    if not suffix and all(_plain(label, letters) for label in labels):
        return count(y_true, y_pred, encoding, "discard")
    rewrite = _guarded_strict_rewrite(((y_true, vocabulary(y_true)), (y_pred, vocabulary(y_pred))), scheme, suffix)
    return count(rewritten(y_true, rewrite), rewritten(y_pred, rewrite), encoding, "discard")


# --------------------------------------------------------------------------------------------
# The faithful face (spanscore.compat.seqeval.metrics): every label read as seqeval reads it.


def faithful_default_tally(y_true: Labels, y_pred: Labels, suffix: bool) -> tuple[Tally, Callable[[], None]]:
    """The counts of the checked inputs in seqeval's default mode, and what gives seqeval's
    warnings about them (and the error it meets on them) again, once per time seqeval reads them."""
    if not suffix:
        try:
            return count(y_true, y_pred, "BIOES", "conlleval"), nothing  # see guarded_tally
        except (InputError, OptionError):
            pass
    true = _chunks.default_chunks(y_true, suffix)
    pred = _chunks.default_chunks(y_pred, suffix)

    def replay() -> None:
        true.replay()
        pred.replay()

    if true.error is not None or pred.error is not None:
        return Tally([], [], [], []), replay  # replay() raises
    return tally_spans(_default_columns(true), _default_columns(pred)), replay


def _default_columns(chunks: _chunks.DefaultChunks) -> tuple[Any, ...]:
    return chunks.types, chunks.type, chunks.first, chunks.last


def _strict_columns(spans: _chunks.StrictSpans) -> tuple[Any, ...]:
    return spans.tags, spans.tag, spans.sentence, spans.start, spans.end


def faithful_strict_tally(y_true: Labels, y_pred: Labels, scheme: type, suffix: bool) -> Tally:
    """The counts of the checked inputs in seqeval's strict mode with ``scheme`` (a class), and
    seqeval's error where it refuses a label. IOB2, IOE2, IOBES and BILOU are counted by the
    engine; IOB1, IOE1 and schemes of one's own by seqeval's scan of their patterns."""
    encoding = ENGINE_ENCODING.get(scheme)
    if encoding is not None:
        rewrite = _engine_labels(y_true, y_pred, scheme, suffix)
        if rewrite is not None:
            return count(rewritten(y_true, rewrite), rewritten(y_pred, rewrite), encoding, "discard")
    true = _chunks.scheme_spans(y_true, scheme, suffix)
    pred = _chunks.scheme_spans(y_pred, scheme, suffix)
    return tally_spans(_strict_columns(true), _strict_columns(pred))


def _engine_labels(y_true: Labels, y_pred: Labels, scheme: type, suffix: bool) -> dict[Any, str] | None:
    """Each label's canonical ``PREFIX-tag`` (or ``O``) as the scheme class reads it; None where a
    label is refused (the scan then raises seqeval's error, in seqeval's order)."""
    try:
        labels = set().union(*y_true, *y_pred)
    except TypeError:
        return None
    out: dict[Any, str] = {}
    for label in labels:
        reading = _chunks.read_label(scheme, label, suffix, "-")
        if reading.error is not None:
            return None
        letter = _chunks.LETTERS[reading.prefix]
        out[label] = "O" if letter == "O" else f"{letter}-{reading.tag}"
    return out


def faithful_resolve_report_scheme(y_true: Labels, scheme: Any, suffix: bool) -> type:
    """v1.classification_report's scheme: the one given, or (None, or a class that is no scheme)
    the one detected from y_true."""
    if scheme is None or (isinstance(scheme, type) and not is_token_class(scheme)):
        return auto_detect(y_true, suffix)
    return faithful_scheme(scheme)


# --------------------------------------------------------------------------------------------
# seqeval's arithmetic (seqeval.metrics.v1, after scikit-learn), ported as it is: the same numpy
# operations in the same order give the same floats and the same types.


def warn_prf(average: Any, modifier: str, msg_start: str, result_size: int) -> None:
    axis0, axis1 = "sample", "label"
    if average == "samples":
        axis0, axis1 = axis1, axis0
    msg = (
        f"{msg_start} ill-defined and being set to 0.0 {{0}} no {modifier} {axis0}s."
        " Use `zero_division` parameter to control this behavior."
    )
    msg = msg.format("due to") if result_size == 1 else msg.format(f"in {axis1}s with")
    warnings.warn(msg, undefined_metric_warning(), stacklevel=2)


def prf_divide(
    numerator: Any, denominator: Any, metric: str, modifier: str, average: Any, warn_for: Any, zero_division: Any
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
    warn_prf(average, modifier, msg_start, len(result))
    return result


def prf_scores(
    pred_sum: Any, tp_sum: Any, true_sum: Any, *, average: Any, warn_for: Any, beta: Any, zero_division: Any
) -> Scores:
    """seqeval's _precision_recall_fscore_support after its counting."""
    if average == "micro":
        tp_sum = np.array([tp_sum.sum()])
        pred_sum = np.array([pred_sum.sum()])
        true_sum = np.array([true_sum.sum()])
    beta2 = beta**2
    precision = prf_divide(tp_sum, pred_sum, "precision", "predicted", average, warn_for, zero_division)
    recall = prf_divide(tp_sum, true_sum, "recall", "true", average, warn_for, zero_division)
    if zero_division == "warn" and warn_for == ("f-score",) and (pred_sum[true_sum == 0] == 0).any():
        warn_prf(average, "true nor predicted", "F-score is", len(true_sum))
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


def counts_arrays(tally: Tally) -> tuple[Any, Any, Any]:
    # seqeval appends Python ints to an empty int32 array: int64 once anything was appended.
    if not tally.names:
        empty = np.array([], dtype=np.int32)
        return empty, empty.copy(), empty.copy()
    return (
        np.array(tally.pred, dtype=np.int64),
        np.array(tally.tp, dtype=np.int64),
        np.array(tally.true, dtype=np.int64),
    )


def scores(tally: Tally, *, average: Any, warn_for: Any, beta: Any, zero_division: Any) -> Scores:
    pred_sum, tp_sum, true_sum = counts_arrays(tally)
    return prf_scores(
        pred_sum, tp_sum, true_sum, average=average, warn_for=warn_for, beta=beta, zero_division=zero_division
    )


# --------------------------------------------------------------------------------------------
# classification_report's rows.


def no_entities() -> InputValueError:
    return InputValueError("classification_report: neither y_true nor y_pred has an entity to report on")


def report(
    tally: Tally, *, digits: Any, output_dict: bool, zero_division: Any, before: Callable[[], None] = nothing
) -> Report:
    """The report's rows per type and averaged; ``before`` runs before each of seqeval's four
    computations (its warnings about the labels, which it gives each time it reads them)."""
    reporter: StringReporter | DictReporter
    if output_dict:
        reporter = DictReporter()
    else:
        if not tally.names:
            raise no_entities()
        width = max(max(map(len, tally.names)), len("weighted avg"), digits)
        reporter = StringReporter(width=width, digits=digits)
    before()
    p, r, f1, s = scores(tally, average=None, warn_for=WARN_FOR, beta=1.0, zero_division=zero_division)
    for row in zip(tally.names, p, r, f1, s, strict=False):
        reporter.write(*row)
    reporter.write_blank()
    for average in ("micro", "macro", "weighted"):
        before()
        avg_p, avg_r, avg_f1, support = scores(
            tally, average=average, warn_for=WARN_FOR, beta=1.0, zero_division=zero_division
        )
        reporter.write(f"{average} avg", avg_p, avg_r, avg_f1, support)
    reporter.write_blank()
    return reporter.report()


# --------------------------------------------------------------------------------------------
# Token by token: accuracy and the confusion counts (no mentions).


def flat(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    """Both flattened when y_true holds lists (seqeval's rule: y_pred follows y_true's shape)."""
    try:
        if any(isinstance(s, list) for s in y_true):
            return list(itertools.chain.from_iterable(y_true)), list(itertools.chain.from_iterable(y_pred))
    except TypeError:
        raise InputTypeError("y_true and y_pred must be lists of label lists (or of labels)") from None
    return y_true, y_pred


def accuracy_score(y_true: Any, y_pred: Any) -> float:
    """The share of tokens whose labels are equal.

    >>> accuracy_score([['O', 'B-PER', 'I-PER']], [['O', 'B-PER', 'O']])
    0.6666666666666666
    """
    y_true, y_pred = flat(y_true, y_pred)
    nb_correct = sum(map(operator.eq, y_true, y_pred))
    nb_true = len(y_true)
    if nb_true == 0:
        raise InputZeroDivisionError("accuracy_score: y_true has no labels")
    return nb_correct / nb_true  # type: ignore[no-any-return]


def performance_measure(y_true: Any, y_pred: Any) -> dict[str, int]:
    """Token counts TP, FP, FN, TN, where O is the negative class.

    >>> performance_measure([['O', 'B-PER', 'I-PER']], [['O', 'B-PER', 'O']])
    {'TP': 1, 'FP': 0, 'FN': 1, 'TN': 1}
    """
    y_true, y_pred = flat(y_true, y_pred)
    pairs: Iterable[tuple[tuple[Any, Any], int]]
    try:
        pairs = Counter(zip(y_true, y_pred, strict=False)).items()  # the few distinct pairs, not every token
    except TypeError:  # labels that are not hashable: token by token
        pairs = ((pair, 1) for pair in zip(y_true, y_pred, strict=False))
    tp = fp = fn = tn = 0
    try:
        for (t, p), n in pairs:
            if t == p and (t != "O" or p != "O"):
                tp += n
            if t != p and p != "O":
                fp += n
            if t != "O" and p == "O":
                fn += n
            if t == p == "O":
                tn += n
    except ValueError:  # numpy arrays of labels compared whole: seqeval meets the same ValueError
        raise InputValueError(
            "labels given as numpy arrays of label arrays: seqeval fails on them with a ValueError;"
            " give lists of label lists (array.tolist())"
        ) from None
    return {"TP": tp, "FP": fp, "FN": fn, "TN": tn}
