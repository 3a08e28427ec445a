"""spanscore.compat.seqeval against the real seqeval 1.2.2: every figure, every string, every warning.

Each call is made to both libraries with the same arguments and the outcomes compared exactly:
the same return types (numpy or Python, arrays of the same dtype), the same floats to the last
bit, the text report character for character, the dict with its keys in the same order, the same
exception type where seqeval raises (and its message where spanscore keeps it), and the same
warnings (UndefinedMetricWarning exactly, call for call; the others once per distinct message,
see the module's deliberate difference 4).

Data: the BTC test split with seeded perturbed predictions (dropped, shrunk, extended, shifted,
relabelled and spurious mentions, then invalid transitions), and random label sequences from
hypothesis (invalid transitions, mixed schemes, labels seqeval reads oddly, empty sentences).
The deliberate differences listed in the module's docstring are pinned at the end.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import itertools
import math
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import seqeval.metrics as sq
import seqeval.metrics.sequence_labeling as sq_labeling
import seqeval.scheme as sq_scheme
from hypothesis import given, settings
from hypothesis import strategies as st
from seqscore.encoding import get_encoding as seqscore_encoding
from seqscore.validation import validate_labels

import spanscore
from spanscore.compat import seqeval as ours
from spanscore.errors import InputError, OptionError

Labels = list[list[str]]
Mention = tuple[int, int, str]
AVERAGES = (None, "micro", "macro", "weighted")
ZERO_DIVISION: tuple[Any, ...] = ("warn", 0, 1)
SCORE_FUNCTIONS = ("precision_score", "recall_score", "f1_score")
# Schemes whose strict mode spanscore reproduces exactly (IOB1 on valid labels only; IOE1 never:
# see the deliberate differences).
EXACT_SCHEMES = ("IOB2", "IOE2", "IOBES", "BILOU")
LETTERS = {"IOB1": "BI", "IOE1": "IE", "IOB2": "BI", "IOE2": "IE", "IOBES": "BIES", "BILOU": "BILU"}


# --------------------------------------------------------------------------------------------
# Calling both and comparing.


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None
    warned: list[warnings.WarningMessage] | None = None


def call(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            return Outcome(f(*args, **kwargs), None, warned)
        except Exception as exc:
            return Outcome(None, exc, warned)


def same(a: Any, b: Any, where: str = "") -> None:
    """Equal values of the same type, to the last bit (NaN equals NaN)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a!r} vs {b!r}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def warning_keys(warned: list[warnings.WarningMessage]) -> list[tuple[str, str]]:
    return [(w.category.__name__, str(w.message)) for w in warned]


def assert_same_outcome(theirs: Outcome, mine: Outcome, where: str) -> None:
    if theirs.error is not None:
        assert mine.error is not None, f"{where}: seqeval raised {theirs.error!r}, spanscore returned {mine.value!r}"
        assert isinstance(mine.error, type(theirs.error)), f"{where}: {theirs.error!r} vs {mine.error!r}"
        assert isinstance(mine.error, InputError | OptionError), f"{where}: {mine.error!r}"
        if type(theirs.error) is ValueError and not str(theirs.error).startswith(("Found input", "max()")):
            assert str(mine.error) == str(theirs.error), where  # seqeval's own one-line messages are kept
        return
    assert mine.error is None, f"{where}: spanscore raised {mine.error!r}"
    same(theirs.value, mine.value, where)
    assert theirs.warned is not None and mine.warned is not None
    t, m = warning_keys(theirs.warned), warning_keys(mine.warned)
    metric = [k for k in t if k[0] == "UndefinedMetricWarning"]
    assert metric == [k for k in m if k[0] == "UndefinedMetricWarning"], f"{where}: warnings {t} vs {m}"
    assert list(dict.fromkeys(t)) == list(dict.fromkeys(m)), f"{where}: warnings {t} vs {m}"


def compare(name: str, *args: Any, **kwargs: Any) -> Outcome:
    """``name`` called in seqeval and in spanscore.compat.seqeval; the outcomes must be the same."""
    theirs_f = getattr(sq_labeling, name)
    if "scheme" in kwargs and isinstance(kwargs["scheme"], str):
        kwargs = {**kwargs, "scheme": getattr(sq_scheme, kwargs["scheme"])}
    theirs = call(theirs_f, *args, **kwargs)
    mine = call(getattr(ours, name), *args, **kwargs)
    assert_same_outcome(theirs, mine, f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})")
    return mine


REPORT_OPTIONS = [
    (output_dict, digits, zd)
    for output_dict, digits in ((True, 2), (False, 2), (False, 4), (False, 0))
    for zd in ZERO_DIVISION
][::2]  # each output_dict and digits, each zero_division with each output_dict


def compare_all(gold: Labels, pred: Labels, *, report_only: bool = False, **mode: Any) -> None:
    """Every function and average, each with every zero_division (the function and the average
    pick it in turn), and the report as text with a few digits and as a dict, on one input."""
    for output_dict, digits, zd in REPORT_OPTIONS:
        compare("classification_report", gold, pred, output_dict=output_dict, digits=digits, zero_division=zd, **mode)
    if report_only:
        return
    for i, (name, average) in enumerate(itertools.product(SCORE_FUNCTIONS, AVERAGES)):
        compare(name, gold, pred, average=average, zero_division=ZERO_DIVISION[i % 3], **mode)


# --------------------------------------------------------------------------------------------
# Labels: decoding valid BIO, encoding, perturbing, corrupting (independent of spanscore).


def read_labels(path: Path) -> Labels:
    out: Labels = []
    cur: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip(" \t\r"):
            if cur:
                out.append(cur)
                cur = []
            continue
        cur.append(line.rsplit("\t", 1)[1])
    if cur:
        out.append(cur)
    return out


def bio_mentions(labels: list[str]) -> list[Mention]:
    out: list[Mention] = []
    start, kind = None, ""
    for i, lab in enumerate([*labels, "O"]):
        if start is not None and lab != f"I-{kind}":
            out.append((start, i, kind))
            start = None
        if lab.startswith("B-"):
            start, kind = i, lab[2:]
        else:
            assert lab == "O" or start is not None, f"invalid BIO: {labels}"
    return out


def encode(mentions: list[Mention], n: int, scheme: str) -> list[str]:
    begin, inside, end, single = {"IOB2": "BI..", "IOBES": "BIES", "BILOU": "BILU"}[scheme]
    labels = ["O"] * n
    for s, e, t in mentions:
        labels[s:e] = [f"{inside}-{t}"] * (e - s)
        labels[s] = f"{begin}-{t}"
        if scheme != "IOB2":
            labels[e - 1] = f"{end}-{t}"
            if e - s == 1:
                labels[s] = f"{single}-{t}"
    return labels


def perturb(mentions: list[Mention], n: int, rng: random.Random, types: list[str]) -> list[Mention]:
    """A tagger's mistakes: dropped, relabelled, shrunk, extended, shifted and spurious mentions."""
    out: list[Mention] = []
    for s, e, t in mentions:
        r = rng.random()
        if r < 0.1:
            continue
        if r < 0.2:
            t = rng.choice([x for x in types if x != t])
        elif r < 0.28 and e - s > 1:
            s, e = (s + 1, e) if rng.random() < 0.5 else (s, e - 1)
        elif r < 0.34:
            s, e = (s - 1, e) if rng.random() < 0.5 else (s, e + 1)
        elif r < 0.38:
            d = rng.choice((-1, 1))
            s, e = s + d, e + d
        out.append((s, e, t))
    while rng.random() < 0.15:
        s = rng.randrange(n)
        out.append((s, s + rng.randint(1, 3), rng.choice(types)))
    kept: list[Mention] = []
    last = 0
    for s, e, t in sorted((max(s, 0), min(e, n), t) for s, e, t in out):
        if s < e and s >= last:
            kept.append((s, e, t))
            last = e
    return kept


def corrupt(labels: list[str], rng: random.Random, letters: str, types: list[str], rate: float = 0.03) -> list[str]:
    """Invalid transitions: stray inside tags after O, prefixes and types changed inside mentions."""
    out = list(labels)
    for i, lab in enumerate(out):
        if rng.random() >= rate:
            continue
        if lab == "O":
            out[i] = f"{letters[1]}-{rng.choice(types)}"
        elif rng.random() < 0.5:
            out[i] = f"{lab[0]}-{rng.choice(types)}"
        else:
            out[i] = f"{rng.choice(letters)}-{lab[2:]}"
    return out


# --------------------------------------------------------------------------------------------
# BTC.

BTC_CASES = [
    (1, "IOB2", {}),  # the default mode, on BIO with invalid transitions
    (2, "IOBES", {"mode": "strict"}),  # the scheme detected from y_true
]


@pytest.fixture(scope="module")
def btc_gold(btc: Path) -> Labels:
    return read_labels(btc / "test.txt")


@pytest.mark.parametrize(("seed", "scheme", "mode"), BTC_CASES)
def test_btc_perturbed_predictions_match_seqeval(
    btc_gold: Labels, seed: int, scheme: str, mode: dict[str, Any]
) -> None:
    rng = random.Random(seed)
    types = sorted({t for s in btc_gold for _, _, t in bio_mentions(s)})
    gold_mentions = [bio_mentions(s) for s in btc_gold]
    pred_mentions = [perturb(m, len(s), rng, types) for m, s in zip(gold_mentions, btc_gold, strict=True)]
    gold = [encode(m, len(s), scheme) for m, s in zip(gold_mentions, btc_gold, strict=True)]
    pred = [
        corrupt(encode(m, len(s), scheme), rng, LETTERS[scheme], types)
        for m, s in zip(pred_mentions, btc_gold, strict=True)
    ]
    assert sum(a != b for g, p in zip(gold, pred, strict=True) for a, b in zip(g, p, strict=True)) > 1000
    text = compare("classification_report", gold, pred, digits=4, **mode)
    report = compare("classification_report", gold, pred, output_dict=True, **mode)
    assert isinstance(text.value, str) and text.value.count("\n") == len(types) + 6
    assert 0.5 < report.value["micro avg"]["f1-score"] < 0.95
    if not mode:
        compare("f1_score", gold, pred, average="macro")


def test_btc_default_mode_is_spanscores_strict_criterion(btc: Path, btc_gold: Labels) -> None:
    """The counts under the report are spanscore's own: its strict F1 on the same files."""
    rng = random.Random(5)
    types = ["LOC", "ORG", "PER"]
    pred = [
        corrupt(encode(perturb(bio_mentions(s), len(s), rng, types), len(s), "IOB2"), rng, "BI", types)
        for s in btc_gold
    ]
    d = spanscore.evaluate(reference=btc_gold, predicted=pred, format="labels").to_dict()
    report = ours.classification_report(btc_gold, pred, output_dict=True)
    assert isinstance(report, dict)
    assert report["micro avg"]["precision"] == d["metrics"]["strict"]["precision"]
    assert math.isclose(report["micro avg"]["f1-score"], d["metrics"]["strict"]["f1"], rel_tol=1e-12)
    assert report["micro avg"]["support"] == d["corpus"]["reference_mentions"] == 2996


# --------------------------------------------------------------------------------------------
# Random label sequences.

TYPES = ("A", "B", "LONG_TYPE_NAME_X")
# Labels seqeval's default mode reads its own way: a bare tag (type "_"), a type after the second
# dash, O with a type, a type with dashes.
ODD_PREFIX = ("B", "I", "E-", "S", "BX-A", "OTHER", "O-A", "B-A-B", "I--A")
ODD_SUFFIX = ("B", "I", "XA-I", "A-B-E", "PO", "-S", "-O")


@st.composite
def default_case(draw: st.DrawFn) -> tuple[Labels, Labels, bool]:
    suffix = draw(st.booleans())
    types = TYPES[: draw(st.integers(1, 3))]
    proper = [f"{t}-{p}" if suffix else f"{p}-{t}" for p in "BIES" for t in types]
    vocab = ["O", "O", "O", *proper, *(ODD_SUFFIX if suffix else ODD_PREFIX)]
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), max_size=8), min_size=1, max_size=5))
    pred = [[draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in s] for s in gold]
    return gold, pred, suffix


@st.composite
def options(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"zero_division": draw(st.sampled_from(ZERO_DIVISION))}
    if draw(st.booleans()):
        out["sample_weight"] = draw(st.lists(st.floats(0, 2), max_size=3))
    return out


@settings(max_examples=60, deadline=None)
@given(default_case(), options(), st.sampled_from(SCORE_FUNCTIONS), st.sampled_from(AVERAGES), st.booleans())
def test_random_labels_default_mode(
    case: tuple[Labels, Labels, bool], opts: dict[str, Any], name: str, average: str | None, output_dict: bool
) -> None:
    gold, pred, suffix = case
    compare("classification_report", gold, pred, suffix=suffix, output_dict=output_dict, digits=3, **opts)
    compare(name, gold, pred, suffix=suffix, average=average, **opts)
    compare("accuracy_score", gold, pred)
    compare("performance_measure", gold, pred)


@st.composite
def strict_case(draw: st.DrawFn) -> tuple[str, Labels, Labels, bool]:
    scheme = draw(st.sampled_from(EXACT_SCHEMES))
    suffix = draw(st.booleans())
    letters = LETTERS[scheme]
    proper = [f"{t}-{p}" if suffix else f"{p}-{t}" for p in letters for t in TYPES[:2]]
    # Labels a scheme refuses (a prefix of another scheme, an unknown letter, an empty label), or
    # reads its own way (a bare prefix, dashes around the type, O with a type).
    junk = ["S-A", "E-A", "X-A", "", "B", "B--A-", "OTHER"] if not suffix else ["A-S", "A-E", "A-X", "", "B", "-A--B"]
    vocab = ["O", "O", *proper] + (junk if draw(st.integers(0, 3)) == 0 else [])
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), max_size=7), min_size=1, max_size=4))
    pred = [[draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in s] for s in gold]
    return scheme, gold, pred, suffix


@settings(max_examples=60, deadline=None)
@given(strict_case(), options(), st.sampled_from(SCORE_FUNCTIONS), st.sampled_from(AVERAGES), st.booleans())
def test_random_labels_strict_mode(
    case: tuple[str, Labels, Labels, bool], opts: dict[str, Any], name: str, average: str | None, output_dict: bool
) -> None:
    scheme, gold, pred, suffix = case
    mode = {"mode": "strict", "suffix": suffix, **opts}
    compare("classification_report", gold, pred, scheme=scheme, output_dict=output_dict, **mode)
    compare("classification_report", gold, pred, output_dict=output_dict, **mode)  # detected from gold
    compare(name, gold, pred, scheme=scheme, average=average, **mode)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["O", "O", "B-A", "I-A", "B-B", "I-B"]), max_size=7), min_size=1, max_size=4))
def test_random_valid_iob1_strict_mode(gold: Labels) -> None:
    """IOB1's strict mode is seqeval's exactly wherever the labels are valid IOB1."""
    pred = [list(reversed(s)) for s in gold]
    enc = seqscore_encoding("IOB")
    if any(validate_labels(s, enc).errors for s in gold + pred):
        return
    compare("classification_report", gold, pred, mode="strict", scheme="IOB1", output_dict=True)
    compare("f1_score", gold, pred, mode="strict", scheme="IOB1", average=None)


def random_labels(rng: random.Random, letters: str, n: int) -> Labels:
    vocab = ["O"] * 4 + [f"{p}-{t}" for p in letters for t in ("PER", "LOC", "ORG")]
    return [[rng.choice(vocab) for _ in range(rng.randint(0, 12))] for _ in range(n)]


@pytest.mark.parametrize("scheme", [None, *EXACT_SCHEMES])
def test_every_function_average_and_option(scheme: str | None) -> None:
    """All of it on one input per mode: every function, average, zero_division, output_dict."""
    rng = random.Random(scheme)
    gold = random_labels(rng, LETTERS[scheme or "IOBES"], 25)
    seen = list(itertools.chain.from_iterable(gold))
    pred = [[x if rng.random() < 0.7 else rng.choice(seen) for x in s] for s in gold]
    gold[3] = ["O", "B-ONLYGOLD"] if scheme != "IOE2" else ["O", "E-ONLYGOLD"]  # a type never predicted
    pred[3] = ["O", "O"]
    gold[4] = ["O", "O"]
    pred[4] = ["B-ONLYPRED", "O"] if scheme != "IOE2" else ["E-ONLYPRED", "O"]
    mode = {} if scheme is None else {"mode": "strict", "scheme": scheme}
    compare_all(gold, pred, **mode)
    if scheme is not None:
        compare_all(gold, pred, mode="strict", report_only=True)  # detected


# --------------------------------------------------------------------------------------------
# Behaviours one by one.


def test_signatures_are_seqevals() -> None:
    for name in (*SCORE_FUNCTIONS, "classification_report", "accuracy_score", "performance_measure"):
        theirs = inspect.signature(getattr(sq, name)).parameters
        mine = inspect.signature(getattr(ours, name)).parameters
        assert [(p.name, p.kind, p.default) for p in theirs.values()] == [
            (p.name, p.kind, p.default) for p in mine.values()
        ], name
    theirs = inspect.signature(sq_labeling.precision_recall_fscore_support).parameters
    mine = inspect.signature(ours.precision_recall_fscore_support).parameters
    assert [(p.name, p.kind, p.default) for p in theirs.values()] == [
        (p.name, p.kind, p.default) for p in mine.values()
    ]


def test_docstring_examples() -> None:
    result = doctest.testmod(ours, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


def test_seqevals_own_examples() -> None:
    y_true = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "O", "O"], ["B-PER", "I-PER", "O"]]
    y_pred = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    assert ours.f1_score(y_true, y_pred, average="micro") == 0.6666666666666666
    assert ours.f1_score(y_true, y_pred, average="macro") == 0.75
    assert ours.accuracy_score(y_true, y_pred) == 0.9
    assert ours.performance_measure(y_true, y_pred) == {"TP": 5, "FP": 1, "FN": 0, "TN": 4}
    compare_all(y_true, y_pred)


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ([["B-A", "O"]], [["O", "O"]]),  # nothing predicted
        ([["O", "O"]], [["B-A", "O"]]),  # nothing to find
        ([["O", "O"]], [["O", "O"]]),  # no entity at all: the text report is refused, the dict has NaN
        ([["B-A"], ["B-B"]], [["B-B"], ["O"]]),  # one type only predicted, one only true
        ([[]], [[]]),
    ],
)
def test_zero_division_values_and_warnings(gold: Labels, pred: Labels) -> None:
    """UndefinedMetricWarning, call for call, with seqeval's words; numpy's warnings on empty means."""
    compare_all(gold, pred)
    compare_all(gold, pred, mode="strict", scheme="IOB2", report_only=True)
    compare("precision_recall_fscore_support", gold, pred, average="macro", beta=2.0)
    compare("precision_recall_fscore_support", gold, pred, warn_for=["f-score"])  # a list: not seqeval's tuple


def test_undefined_metric_warning_is_scikit_learns() -> None:
    from sklearn.exceptions import UndefinedMetricWarning

    assert ours.UndefinedMetricWarning is UndefinedMetricWarning
    with pytest.warns(UndefinedMetricWarning, match="due to no predicted samples"):
        ours.precision_score([["B-A"]], [["O"]])


def test_sample_weight_changes_nothing() -> None:
    gold = [["B-A", "I-A", "O"], ["B-B", "O", "O"]]
    pred = [["B-A", "I-A", "O"], ["O", "B-B", "O"]]
    plain = ours.classification_report(gold, pred, output_dict=True)
    assert ours.classification_report(gold, pred, output_dict=True, sample_weight=[5, 0]) == plain
    compare("f1_score", gold, pred, sample_weight=[5.0, 0.0], average="weighted")


def test_flat_and_mismatched_inputs_raise_seqevals_exceptions() -> None:
    gold = [["B-A", "I-A", "O"], ["B-B"]]
    for pred in ([["B-A", "I-A", "O"]], [["B-A", "I-A"], ["B-B"]]):
        for name in ("classification_report", *SCORE_FUNCTIONS):
            mine = compare(name, gold, pred)
            assert isinstance(mine.error, ValueError) and isinstance(mine.error, InputError)
            assert "\n" not in str(mine.error)
    compare("f1_score", gold, [])
    for bad_pred in ([("B-A", "I-A", "O"), ("B-B",)], ["B-A", "I-A", "O"]):
        mine = compare("f1_score", gold, bad_pred)
        assert isinstance(mine.error, TypeError) and isinstance(mine.error, InputError)
    for junk in (None, 3, [3]):
        mine = compare("f1_score", junk, junk)
        assert isinstance(mine.error, InputError)
        mine = compare("classification_report", junk, junk, mode="strict", scheme="IOB2")
        assert isinstance(mine.error, InputError)
    compare("classification_report", [], [])
    compare("classification_report", [["O"]], [["O", "O"]])  # no entity: seqeval sizes its column first
    compare("classification_report", [["O"]], [["O", "O"]], output_dict=True)
    compare("f1_score", gold, gold, average="samples")
    compare("accuracy_score", ["B-A", "O"], ["B-A", "I-A"])
    compare("performance_measure", ["B-A", "O"], ["B-A", "I-A"])


def test_accuracy_of_nothing_raises_zero_division() -> None:
    theirs = call(sq.accuracy_score, [[]], [[]])
    assert isinstance(theirs.error, ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        ours.accuracy_score([[]], [[]])
    with pytest.raises(InputError):
        ours.accuracy_score([], [])


@pytest.mark.parametrize(
    "labels",
    [
        [["B-A", "E-A"]],  # E- in IOB2: ValueError with seqeval's message
        [["O", "X-A"]],  # no such prefix: KeyError
        [["B-A"], ["O", "U-A"]],  # in the second sentence
        [["B-A", "I-A", "M-A", "E-A"]],  # in one sentence, the unreadable label before the disallowed one
    ],
)
def test_strict_mode_refuses_labels_as_seqeval_does(labels: Labels) -> None:
    ok = [["O"] * len(s) for s in labels]
    for gold, pred in ((labels, ok), (ok, labels), (labels, labels)):
        for name in ("classification_report", "f1_score"):
            mine = compare(name, gold, pred, mode="strict", scheme="IOB2")
            assert mine.error is not None
        compare("classification_report", gold, pred, mode="strict")  # detected (or not) from gold


def test_auto_detect_errors() -> None:
    for gold in ([["O", "O"]], [["B-A", "E-A", "U-A"]], [["O", "B-A", "X-A"]], [["B-A", "L-A"], ["S-A"]]):
        mine = compare("classification_report", gold, gold, mode="strict")
        assert isinstance(mine.error, ValueError)
        assert str(mine.error).startswith("This scheme is not supported: ")


def test_scheme_arguments() -> None:
    gold = [["B-A", "I-A", "O", "B-B"]]
    pred = [["B-A", "I-A", "I-A", "B-B"]]
    expected = sq.classification_report(gold, pred, mode="strict", scheme=sq_scheme.IOB2)
    for scheme in (sq_scheme.IOB2, ours.IOB2, "IOB2", "iob2"):
        assert ours.classification_report(gold, pred, mode="strict", scheme=scheme) == expected
        assert ours.f1_score(gold, pred, mode="strict", scheme=scheme) == sq.f1_score(
            gold, pred, mode="strict", scheme=sq_scheme.IOB2
        )
    # seqeval is strict only with both: mode="strict" alone is the default mode in the score functions,
    # and in classification_report a class that is no scheme means "detect it".
    compare("f1_score", gold, pred, mode="strict")
    compare("f1_score", gold, pred, scheme="IOB2")
    compare("classification_report", gold, pred, mode="strict", scheme=int)
    compare("classification_report", gold, pred, mode="lenient")


# --------------------------------------------------------------------------------------------
# Deliberate differences (the module docstring's list, in its order).


@pytest.mark.parametrize(
    "labels",
    [
        ["B-PER", "L-PER", "B-PER", "L-PER", "O"],  # BILOU: seqeval finds one mention of two
        ["U-PER", "U-PER"],  # seqeval: one mention
        ["B-PER", "E-PER", "U-PER", "O"],  # seqeval: two overlapping mentions
        ["B-PER", "M-PER", "E-PER"],  # BMES
        ["X", "B-PER", "[PAD]"],
    ],
)
def test_difference_1_default_mode_refuses_tags_without_a_chunk_rule(labels: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seqeval_mentions = sq_labeling.get_entities(labels)
        assert sq.classification_report([labels], [labels], output_dict=True)["micro avg"]["support"] >= 0
        with pytest.raises(InputError, match="mode='strict'"):
            ours.classification_report([labels], [labels])
        with pytest.raises(InputError, match="none of B, I, E, S, O"):
            ours.f1_score([labels], [labels])
    if labels[1] == "L-PER":
        assert seqeval_mentions == [("PER", 2, 3)]  # the first mention is lost
        assert ours.f1_score([labels], [labels], mode="strict", scheme=ours.BILOU) == 1.0
        assert ours.classification_report([labels], [labels], mode="strict", output_dict=True)["PER"]["support"] == 2
    if labels[2:3] == ["U-PER"]:
        assert seqeval_mentions == [("PER", 0, 1), ("PER", 0, 2)]


@pytest.mark.filterwarnings("ignore")  # zero divisions: nothing is left of the invalid mentions
def test_difference_2_strict_iob1_and_ioe1_drop_whole_invalid_mentions() -> None:
    # IOB1: B- may only follow a mention of its type; here it follows O. seqeval keeps "I-A".
    gold = [["O", "B-A", "I-A", "O", "B-B"]]
    theirs = sq.classification_report(gold, gold, mode="strict", scheme=sq_scheme.IOB1, output_dict=True)
    assert theirs["A"]["support"] == 1 and "B" not in theirs  # (2, 3): a fragment; B-B dropped
    mine = ours.classification_report(gold, gold, mode="strict", scheme=ours.IOB1, output_dict=True)
    assert isinstance(mine, dict) and list(mine) == ["micro avg", "macro avg", "weighted avg"]
    with pytest.raises(ValueError):
        ours.classification_report(gold, gold, mode="strict", scheme="IOB1")  # no entity for the text
    # IOE1: E-A I-A is valid (two mentions of A, the first ended by E-); seqeval drops the first.
    gold = [["E-A", "I-A", "O"]]
    theirs = sq.classification_report(gold, gold, mode="strict", scheme=sq_scheme.IOE1, output_dict=True)
    assert theirs["A"]["support"] == 1
    mine = ours.classification_report(gold, gold, mode="strict", scheme="IOE1", output_dict=True)
    assert isinstance(mine, dict) and mine["A"]["support"] == 2
    assert ours.precision_score([["E-A", "I-A"]], [["I-A", "I-A"]], mode="strict", scheme="IOE1") == 0.0


@pytest.mark.parametrize("value", [0.5, 2, -1, "0", "1", None, float("nan")])
def test_difference_3_zero_division_must_be_warn_0_or_1(value: Any) -> None:
    gold, pred = [["B-A"]], [["O"]]
    assert sq.precision_score(gold, pred, zero_division=value) == 1.0  # seqeval: anything else is 1
    for f in (ours.precision_score, ours.classification_report):
        with pytest.raises(OptionError, match="zero_division"):
            f(gold, pred, zero_division=value)
        with pytest.raises(ValueError):
            f(gold, pred, zero_division=value)
    for ok in (0, 1, 0.0, 1.0, True, False, np.int64(1)):
        compare("precision_score", gold, pred, zero_division=ok)


def test_difference_4_ne_tag_warning_once_per_label() -> None:
    gold = [["BX-A", "O"], ["BX-A", "OTHER"]]
    theirs = call(sq.classification_report, gold, gold)
    mine = call(ours.classification_report, gold, gold)
    assert theirs.value == mine.value
    assert theirs.warned is not None and mine.warned is not None
    t, m = [str(w.message) for w in theirs.warned], [str(w.message) for w in mine.warned]
    assert t.count("BX-A seems not to be NE tag.") > 2  # every token, several times
    assert m == ["BX-A seems not to be NE tag.", "OTHER seems not to be NE tag."]
    # Under the default filter (each message once per place) both show the same two lines.
    assert list(dict.fromkeys(t)) == m


@pytest.mark.parametrize(("label", "kind"), [("", IndexError), (None, TypeError), (3, TypeError)])
def test_difference_5_labels_that_crash_seqeval(label: Any, kind: type[Exception]) -> None:
    gold = [["B-A", label]]
    for mode in ({}, {"mode": "strict", "scheme": "IOB2"}):
        with pytest.raises(kind) as info:
            ours.f1_score(gold, gold, **mode)
        assert isinstance(info.value, InputError)
        with pytest.raises(kind):
            ours.classification_report(gold, gold, **mode)
    with pytest.raises(TypeError):
        ours.f1_score([[["B-A"]]], [[["B-A"]]])  # a list as a label
    theirs = call(sq.f1_score, gold, gold)
    assert theirs.error is not None  # seqeval fails too (IndexError, AttributeError)


def test_difference_6_only_seqevals_schemes() -> None:
    class Custom(sq_scheme.IOB2):
        pass

    gold = [["B-A", "I-A"]]
    assert sq.f1_score(gold, gold, mode="strict", scheme=Custom) == 1.0
    for scheme in (Custom, "IOBX", sq_scheme.Token, ours.Token):
        with pytest.raises(OptionError, match="seqeval's schemes"):
            ours.f1_score(gold, gold, mode="strict", scheme=scheme)
        with pytest.raises(OptionError):
            ours.classification_report(gold, gold, mode="strict", scheme=scheme)


NUMPY_INPUTS = {
    "2-D array": (np.array([["B-PER", "O"], ["B-LOC", "O"]]), np.array([["B-PER", "O"], ["O", "O"]])),
    "list of arrays": (
        [np.array(["B-PER", "O"]), np.array(["B-LOC", "O"])],
        [np.array(["B-PER", "O"]), np.array(["O", "O"])],
    ),
}


def _builtin(exc: BaseException) -> type[BaseException]:
    """The first built-in exception class of ``exc``'s type (what an ``except`` for seqeval names)."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize("kind", list(NUMPY_INPUTS))
@pytest.mark.parametrize(
    "call",
    [
        lambda m, s, t, p: m.classification_report(t, p),
        lambda m, s, t, p: m.classification_report(t, p, output_dict=True),
        lambda m, s, t, p: m.f1_score(t, p),
        lambda m, s, t, p: m.f1_score(t, p, mode="strict", scheme=s.IOB2),
        lambda m, s, t, p: m.get_entities(t),
        lambda m, s, t, p: m.performance_measure(t, p),
    ],
)
def test_numpy_label_arrays_raise_the_builtin_error_seqeval_raises(kind: str, call: Any) -> None:
    """seqeval fails on numpy arrays of labels with a ValueError (an array's truth value) or a
    TypeError; code catching that around seqeval must catch the drop-in's error too."""
    true, pred = NUMPY_INPUTS[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            call(sq_labeling, sq_scheme, true, pred)
        with pytest.raises(Exception) as mine:
            call(importlib.import_module("spanscore.compat.seqeval.metrics.sequence_labeling"),
                 importlib.import_module("spanscore.compat.seqeval.scheme"), true, pred)
    assert _builtin(mine.value) is _builtin(theirs.value), (mine.value, theirs.value)
    assert isinstance(mine.value, spanscore.SpanscoreError)
    assert "\n" not in str(mine.value)
