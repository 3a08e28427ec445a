"""spanscore.compat.seqeval's module tree against the real seqeval 1.2.2, name for name.

seqeval's modules (``metrics``, ``metrics.sequence_labeling``, ``metrics.v1``, ``scheme``,
``reporters``) have twins under spanscore.compat.seqeval that are *faithful*: every public name,
with its signature, and on any input the same value (same types, floats to the last bit, the
text report character for character), the same warnings (every one, in order: seqeval's "seems
not to be NE tag" once per token each time it reads the labels) and the same exception types.
That includes seqeval's odd readings, which the guarded top-level module refuses instead
(tests/test_compat_seqeval.py): tags it does not know in the default mode, IOB1 and IOE1,
``zero_division`` values it reads as 1, labels that are not strings.

Inputs: random label sequences from hypothesis (every tag letter seqeval's rules name and some
they do not, bare tags, types with dashes, suffix style, invalid transitions, empty sentences),
exhaustive tables for the one-transition rules, and bad input of every shape.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import itertools
import math
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pytest
import seqeval.metrics.sequence_labeling as sq_labeling
import seqeval.metrics.v1 as sq_v1
import seqeval.reporters as sq_reporters
import seqeval.scheme as sq_scheme
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore.compat.seqeval.metrics.sequence_labeling as my_labeling
import spanscore.compat.seqeval.metrics.v1 as my_v1
import spanscore.compat.seqeval.reporters as my_reporters
import spanscore.compat.seqeval.scheme as my_scheme
from spanscore.compat import seqeval as guarded
from spanscore.errors import InputError, OptionError

MODULES = (
    "seqeval",
    "seqeval.metrics",
    "seqeval.metrics.sequence_labeling",
    "seqeval.metrics.v1",
    "seqeval.scheme",
    "seqeval.reporters",
)
SCHEMES = ("IOB1", "IOE1", "IOB2", "IOE2", "IOBES", "BILOU")
LETTERS = {"IOB1": "BI", "IOE1": "IE", "IOB2": "BI", "IOE2": "IE", "IOBES": "BIES", "BILOU": "BILU"}
AVERAGES = (None, "micro", "macro", "weighted")
SCORE_FUNCTIONS = ("precision_score", "recall_score", "f1_score")


def ours_of(module: str) -> Any:
    return importlib.import_module("spanscore.compat." + module)


# --------------------------------------------------------------------------------------------
# Every public name, with its signature.


def public_names(module: types.ModuleType) -> list[str]:
    """The names a user can import from one of seqeval's modules: not private, not a module, and
    not something it merely imported from the standard library or typing (``List``, ``chain``,
    ``defaultdict``, ``annotations``...)."""
    out = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if any(getattr(lib, name, object()) is value for lib in (typing, itertools, __import__("collections"))):
            continue
        if type(value).__name__ == "_Feature":  # from __future__ import ...
            continue
        out.append(name)
    return out


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_exists(module: str) -> None:
    theirs, mine = importlib.import_module(module), ours_of(module)
    missing = [name for name in public_names(theirs) if not hasattr(mine, name)]
    assert not missing, f"{module}: {missing}"


def parameters(f: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


def callables() -> list[tuple[str, str]]:
    found = []
    for module in MODULES:
        theirs = importlib.import_module(module)
        for name in public_names(theirs):
            value = getattr(theirs, name)
            if inspect.isfunction(value) or inspect.isclass(value):
                found.append((module, name))
    return found


@pytest.mark.parametrize(("module", "name"), callables())
def test_signatures_are_seqevals(module: str, name: str) -> None:
    """Functions, constructors and public methods take the same parameters, with the same kinds
    and defaults."""
    theirs = getattr(importlib.import_module(module), name)
    mine = getattr(ours_of(module), name)
    if inspect.isfunction(theirs):
        assert parameters(theirs) == parameters(mine), name
        return
    if issubclass(theirs, BaseException | enum_base()):
        return  # UndefinedMetricWarning is scikit-learn's own; Prefix and Tag are enums (members checked below)
    assert parameters(theirs.__init__) == parameters(mine.__init__), name
    for attr, member in vars(theirs).items():
        if attr.startswith("_") or not callable(member):
            continue
        assert parameters(member) == parameters(getattr(mine, attr)), f"{name}.{attr}"


def enum_base() -> type:
    import enum

    return enum.Enum


def test_the_warning_class_is_scikit_learns() -> None:
    from sklearn.exceptions import UndefinedMetricWarning

    assert my_v1.UndefinedMetricWarning is UndefinedMetricWarning
    assert guarded.UndefinedMetricWarning is UndefinedMetricWarning


def test_enums_have_seqevals_members() -> None:
    for enum_name in ("Prefix", "Tag"):
        theirs, mine = getattr(sq_scheme, enum_name), getattr(my_scheme, enum_name)
        assert [(m.name, m.value) for m in theirs] == [(m.name, m.value) for m in mine]
        assert [(k, v.value) for k, v in theirs.__members__.items()] == [
            (k, v.value) for k, v in mine.__members__.items()
        ]
        assert str(theirs.I | theirs.O if enum_name == "Prefix" else theirs.ANY).replace(
            theirs.__module__, ""
        ) == str(mine.I | mine.O if enum_name == "Prefix" else mine.ANY).replace(mine.__module__, "")
    assert list(sq_scheme.Prefixes) == list(my_scheme.Prefixes)


def test_the_top_level_module_keeps_its_names() -> None:
    """The guarded face (tests/test_compat_seqeval.py) uses the tree's scheme classes."""
    assert guarded.IOB2 is my_scheme.IOB2 and guarded.Token is my_scheme.Token and guarded.Prefix is my_scheme.Prefix


# --------------------------------------------------------------------------------------------
# Calling both and comparing.


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None
    warned: list[tuple[str, str]] | None = None


def call(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            value = f(*args, **kwargs)
            error = None
        except Exception as exc:
            value, error = None, exc
    return Outcome(value, error, [(w.category.__name__, str(w.message)) for w in warned])


def same(a: Any, b: Any, where: str = "") -> None:
    """Equal values of the same type, to the last bit (NaN equals NaN)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a!r} vs {b!r}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def plain(value: Any) -> Any:
    """Entities and schemes as plain values, to compare the two libraries' objects."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "to_tuple"):
        return tuple(plain(v) for v in value)
    if isinstance(value, set):
        return sorted(map(plain, value), key=repr)
    if hasattr(value, "to_tuple"):
        return ("Entity", *value.to_tuple())
    if isinstance(value, type):
        return ("class", value.__name__)
    return value


def compare(theirs_f: Callable[..., Any], mine_f: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """Both called with the same arguments; value, warnings (every one, in order) and exception
    type must be the same, and an exception of ours is also a spanscore error."""
    where = f"{getattr(mine_f, '__name__', mine_f)}({args!r:.200}, {kwargs!r:.200})"
    theirs = call(theirs_f, *args, **kwargs)
    mine = call(mine_f, *args, **kwargs)
    if theirs.error is not None:
        assert mine.error is not None, f"{where}: seqeval raised {theirs.error!r}, spanscore returned {mine.value!r}"
        assert isinstance(mine.error, type(theirs.error)), f"{where}: {theirs.error!r} vs {mine.error!r}"
        assert isinstance(mine.error, InputError | OptionError), f"{where}: {mine.error!r}"
        if type(theirs.error) is ValueError and str(theirs.error).startswith(("Invalid token", "This scheme")):
            assert str(mine.error) == str(theirs.error), where
    else:
        assert mine.error is None, f"{where}: spanscore raised {mine.error!r}"
        same(plain(theirs.value), plain(mine.value), where)
    assert theirs.warned == mine.warned, f"{where}: warnings {theirs.warned} vs {mine.warned}"
    return mine


def both(module: str, name: str) -> tuple[Any, Any]:
    return getattr(importlib.import_module(module), name), getattr(ours_of(module), name)


def scheme_pair(name: str) -> tuple[Any, Any]:
    return getattr(sq_scheme, name), getattr(my_scheme, name)


# --------------------------------------------------------------------------------------------
# The default mode's rule, one transition at a time, and get_entities.

TAGS = ("O", "B", "I", "E", "S", ".", "U", "L", "M", "X")


def test_start_and_end_of_chunk_every_case() -> None:
    for prev_tag, tag, prev_type, type_ in itertools.product(TAGS, TAGS, ("", "_", "A"), ("_", "A", "B")):
        for name in ("start_of_chunk", "end_of_chunk"):
            theirs, mine = both("seqeval.metrics.sequence_labeling", name)
            assert theirs(prev_tag, tag, prev_type, type_) == mine(prev_tag, tag, prev_type, type_)


TYPES = ("A", "B", "LONG-TYPE")
# Labels seqeval's default mode reads its own way: tags it has no rule for (BILOU, BMES, X, .),
# bare tags, a type after the second dash, O with a type, types with dashes.
ODD_PREFIX = ("B", "I", "E", "S", "U-A", "L-A", "M-A", "X", "[PAD]", ".", ".-A", "E-", "BX-A", "OTHER", "O-A", "I--A")
ODD_SUFFIX = ("B", "I", "A-U", "A-L", "XA-I", "A-B-E", "PO", "-S", "-O", ".", "A-.")


@st.composite
def default_labels(draw: st.DrawFn, odd: bool = True) -> tuple[list[list[str]], list[list[str]], bool]:
    suffix = draw(st.booleans())
    types_ = TYPES[: draw(st.integers(1, 3))]
    proper = [f"{t}-{p}" if suffix else f"{p}-{t}" for p in "BIES" for t in types_]
    vocab = ["O", "O", "O", *proper]
    if odd:
        vocab += draw(st.lists(st.sampled_from(ODD_SUFFIX if suffix else ODD_PREFIX), max_size=6))
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), max_size=8), min_size=1, max_size=5))
    pred = [[draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in s] for s in gold]
    return gold, pred, suffix


@settings(max_examples=150, deadline=None)
@given(default_labels(), st.booleans())
def test_get_entities_random(case: tuple[list[list[str]], list[list[str]], bool], nested: bool) -> None:
    gold, _, suffix = case
    seq: Any = gold if nested else list(itertools.chain.from_iterable(gold))
    compare(*both("seqeval.metrics.sequence_labeling", "get_entities"), seq, suffix=suffix)


@pytest.mark.parametrize(
    "seq",
    [
        ["B-PER", "L-PER", "B-PER", "L-PER", "O"],  # one mention of two
        ["B-PER", "E-PER", "U-PER", "O"],  # overlapping mentions
        ["B-A", "O", ".-A", "E-A"],  # a mention that ends where none started
        [["X"], ["X"]],  # a chunk that never ends
        [".", "B-A", ".", "I-A"],
        [],
        [[]],
        [["B-A"], [], ["I-A"]],
    ],
)
def test_get_entities_odd_cases(seq: Any) -> None:
    compare(*both("seqeval.metrics.sequence_labeling", "get_entities"), seq)
    compare(*both("seqeval.metrics.sequence_labeling", "get_entities"), seq, suffix=True)


@pytest.mark.parametrize(
    "seq",
    [None, 3, "B-A", ("B-A", "O"), [("B-A",)], [["B-A"], "O"], ["B-A", None], ["B-A", ""], [["B-A", 3]],
     ["X", b"B-A"], [["B-A"], [["B-A"]]], [["U-A", "B-A"], ["O", ""]]],
)  # fmt: skip
def test_get_entities_bad_input(seq: Any) -> None:
    for suffix in (False, True):
        compare(*both("seqeval.metrics.sequence_labeling", "get_entities"), seq, suffix=suffix)


# --------------------------------------------------------------------------------------------
# Schemes: tokens, transitions, mentions, detection.


@pytest.mark.parametrize("scheme", SCHEMES)
def test_token_transitions_every_case(scheme: str) -> None:
    """is_start, is_inside and is_end for every pair of prefixes, same tag or not."""
    theirs_cls, mine_cls = scheme_pair(scheme)
    labels = [f"{p}-{t}" for p in "IOBESUL" for t in ("A", "B")] + ["O", "B", "I"]
    for prev, cur in itertools.product(labels, labels):
        for method in ("is_start", "is_inside", "is_end"):
            a = getattr(theirs_cls(cur), method)(theirs_cls(prev))
            b = getattr(mine_cls(cur), method)(mine_cls(prev))
            assert a == b, (scheme, prev, cur, method)


@pytest.mark.parametrize(
    "label",
    ["I-MISC", "MISC-I", "O", "B", "I-ORG-COMPANY", "ORG-COMPANY-I", "I-組織", "B--A-", "-A-", "U", "T-A", "", None, 3,
     b"I-A", "ANY"],
)  # fmt: skip
def test_token_reading(label: Any) -> None:
    for suffix, delimiter in ((False, "-"), (True, "-"), (False, "_")):
        theirs = call(sq_scheme.Token, label, suffix=suffix, delimiter=delimiter)
        mine = call(my_scheme.Token, label, suffix=suffix, delimiter=delimiter)
        if theirs.error is not None:
            assert isinstance(mine.error, type(theirs.error)) and isinstance(mine.error, InputError), (label, mine)
            continue
        assert mine.error is None
        assert (mine.value.prefix.name, mine.value.tag, repr(mine.value)) == (
            theirs.value.prefix.name,
            theirs.value.tag,
            repr(theirs.value),
        )
        for scheme in SCHEMES:
            theirs_cls, mine_cls = scheme_pair(scheme)
            t = call(is_valid, theirs_cls, label, suffix, delimiter)
            m = call(is_valid, mine_cls, label, suffix, delimiter)
            assert (t.error is None) == (m.error is None), (scheme, label)
            if t.error is not None:
                assert isinstance(m.error, type(t.error)) and str(m.error) == str(t.error)


def is_valid(cls: Any, label: Any, suffix: bool, delimiter: str) -> Any:
    return cls(label, suffix=suffix, delimiter=delimiter).is_valid()


def tokens_entities(lib: Any, sentence: list[str], cls: Any, suffix: bool, k: int) -> Any:
    return lib.Tokens(sentence, cls, suffix=suffix, sent_id=k).entities


@st.composite
def scheme_labels(draw: st.DrawFn, scheme: str | None = None) -> tuple[str, list[list[str]], list[list[str]], bool]:
    scheme = scheme or draw(st.sampled_from(SCHEMES))
    suffix = draw(st.booleans())
    letters = LETTERS[scheme]
    proper = [f"{t}-{p}" if suffix else f"{p}-{t}" for p in letters for t in TYPES[:2]]
    bare = list(letters) if draw(st.booleans()) else []
    # Labels the scheme refuses (another scheme's prefix, an unknown letter, an empty label) or
    # reads its own way (dashes around the type, O with a type).
    junk = ["S-A", "E-A", "B-A", "U-A", "X-A", "", "B--A-", "O-A"] if not suffix else ["A-S", "A-E", "A-X", "", "-A--B"]
    vocab = ["O", "O", *proper, *bare] + (junk if draw(st.integers(0, 4)) == 0 else [])
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), max_size=8), min_size=0, max_size=5))
    pred = [[draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in s] for s in gold]
    return scheme, gold, pred, suffix


@settings(max_examples=200, deadline=None)
@given(scheme_labels())
def test_tokens_and_entities_random(case: tuple[str, list[list[str]], list[list[str]], bool]) -> None:
    scheme, gold, _, suffix = case
    theirs_cls, mine_cls = scheme_pair(scheme)
    for k, sentence in enumerate(gold):
        theirs = call(tokens_entities, sq_scheme, sentence, theirs_cls, suffix, k)
        mine = call(tokens_entities, my_scheme, sentence, mine_cls, suffix, k)
        check_same(theirs, mine, (scheme, sentence))
    theirs = call(lambda: sq_scheme.Entities(gold, theirs_cls, suffix=suffix))
    mine = call(lambda: my_scheme.Entities(gold, mine_cls, suffix=suffix))
    check_same(theirs, mine, (scheme, gold), lambda e: (e.entities, e.unique_tags, e.filter("A"), e.filter("")))


def check_same(theirs: Outcome, mine: Outcome, where: Any, view: Callable[[Any], Any] = lambda v: v) -> None:
    if theirs.error is not None:
        assert isinstance(mine.error, type(theirs.error)), (where, theirs.error, mine.error)
        assert isinstance(mine.error, InputError | OptionError), (where, mine.error)
        if isinstance(theirs.error, ValueError) and str(theirs.error).startswith(("Invalid token", "This scheme")):
            assert str(mine.error) == str(theirs.error), where
        return
    assert mine.error is None, (where, mine.error)
    same(plain(view(theirs.value)), plain(view(mine.value)), str(where))


@settings(max_examples=100, deadline=None)
@given(scheme_labels(), st.booleans())
def test_auto_detect_random(case: tuple[str, list[list[str]], list[list[str]], bool], mixed: bool) -> None:
    _, gold, pred, suffix = case
    seqs = gold + pred if mixed else gold
    theirs = call(sq_scheme.auto_detect, seqs, suffix=suffix)
    mine = call(my_scheme.auto_detect, seqs, suffix=suffix)
    if theirs.error is not None and str(theirs.error).startswith("This scheme is not supported: {"):
        # The message shows a set, whose order follows the string hashes of the prefix names.
        assert isinstance(mine.error, ValueError) and str(mine.error) == str(theirs.error)
        return
    check_same(theirs, mine, seqs)


def test_entity_and_reporters() -> None:
    for data in ((0, 0, 0, 0), (1, 2, 3, "PER")):
        assert repr(sq_scheme.Entity(*data)) == repr(my_scheme.Entity(*data))
        assert my_scheme.Entity(*data) == my_scheme.Entity(*data) and len({my_scheme.Entity(*data)}) == 1
    assert my_scheme.Entity(0, 1, 2, "A") != my_scheme.Entity(0, 1, 3, "A")
    rows = [("PER", 0.82, 0.79, 0.81, 24), ("LOC", 1.0, 0.0, 0.0, 3)]
    for kwargs in ({}, {"width": 12, "digits": 2}):
        theirs, mine = sq_reporters.StringReporter(**kwargs), my_reporters.StringReporter(**kwargs)
        for reporter in (theirs, mine):
            for row in rows:
                reporter.write(*row)
            reporter.write_blank()
        assert theirs.report() == mine.report() and theirs.buffer == mine.buffer
    theirs_d, mine_d = sq_reporters.DictReporter(), my_reporters.DictReporter()
    for reporter in (theirs_d, mine_d):
        for row in rows:
            reporter.write(*row)
        reporter.write_blank()
    assert theirs_d.report() == mine_d.report()


# --------------------------------------------------------------------------------------------
# The default mode's scores and report: seqeval's figures and warnings, odd labels included.

ZERO_DIVISION = ("warn", 0, 1, 0.5, None, "yes")


@settings(max_examples=120, deadline=None)
@given(default_labels(), st.sampled_from(SCORE_FUNCTIONS), st.sampled_from(AVERAGES), st.sampled_from(ZERO_DIVISION))
def test_default_mode_random(
    case: tuple[list[list[str]], list[list[str]], bool], name: str, average: str | None, zero_division: Any
) -> None:
    gold, pred, suffix = case
    module = "seqeval.metrics.sequence_labeling"
    for output_dict in (False, True):
        compare(
            *both(module, "classification_report"), gold, pred, suffix=suffix, output_dict=output_dict,
            digits=3, zero_division=zero_division,
        )  # fmt: skip
    compare(*both(module, name), gold, pred, suffix=suffix, average=average, zero_division=zero_division)
    compare(*both(module, "precision_recall_fscore_support"), gold, pred, suffix=suffix, average=average, beta=2.0)
    compare(*both(module, "accuracy_score"), gold, pred)
    compare(*both(module, "performance_measure"), gold, pred)


def test_default_mode_reads_tags_it_has_no_rule_for() -> None:
    """What the guarded module refuses (its deliberate difference 1), the tree gives as seqeval does."""
    gold = [["B-PER", "L-PER", "B-PER", "L-PER", "O"], ["U-LOC", "O", "B-ORG", "M-ORG", "E-ORG"]]
    pred = [["B-PER", "L-PER", "O", "U-PER", "O"], ["U-LOC", "O", "B-ORG", "E-ORG", "O"]]
    module = "seqeval.metrics.sequence_labeling"
    mine = compare(*both(module, "classification_report"), gold, pred, output_dict=True)
    assert mine.warned and all("seems not to be NE tag" in message for _, message in mine.warned)
    compare(*both(module, "classification_report"), gold, pred, digits=4)
    compare(*both(module, "f1_score"), gold, pred, average=None)
    with warnings.catch_warnings(), pytest.raises(InputError, match="mode='strict'"):
        warnings.simplefilter("ignore")
        guarded.f1_score(gold, pred)


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ([["B-A", "O"]], [["O", "O"]]),
        ([["O", "O"]], [["O", "O"]]),
        ([[]], [[]]),
        ([], []),
        ([["B-A"], ["B-B"]], [["B-B"], ["O"]]),
        ([["B-A", "I-A", "O"], ["B-B"]], [["B-A", "I-A", "O"]]),  # a sentence missing
        ([["B-A", "I-A", "O"], ["B-B"]], [["B-A", "I-A"], ["B-B"]]),  # a label missing
        ([["O"]], [["O", "O"]]),  # no entity, and lengths that differ
        (["B-A", "O"], ["B-A", "I-A"]),  # flat lists
        ([("B-A", "O")], [("B-A", "O")]),  # tuples
        (None, None),
        (3, 3),
        ([3], [3]),
        ([["B-A", None]], [["B-A", None]]),
        ([["B-A", ""]], [["B-A", "O"]]),
        ([["X", "B-A", 3]], [["O", "O", "O"]]),
        ([["B-A", b"I-A"]], [["B-A", "I-A"]]),
        ([["U-A", ["B-A"]]], [["O", "O"]]),
        ([["M-A", "B-A"]], [["M-A", ""]]),
    ],
)
def test_default_mode_edge_and_bad_input(gold: Any, pred: Any) -> None:
    module = "seqeval.metrics.sequence_labeling"
    for output_dict in (False, True):
        compare(*both(module, "classification_report"), gold, pred, output_dict=output_dict)
    for name in SCORE_FUNCTIONS:
        for average in AVERAGES:
            compare(*both(module, name), gold, pred, average=average)
    compare(*both(module, "precision_recall_fscore_support"), gold, pred, warn_for=("f-score",))
    compare(*both(module, "precision_recall_fscore_support"), gold, pred, average="samples")
    compare(*both(module, "precision_recall_fscore_support"), gold, pred, beta=-1)
    compare(*both(module, "accuracy_score"), gold, pred)
    compare(*both(module, "performance_measure"), gold, pred)


# --------------------------------------------------------------------------------------------
# The strict mode (metrics.v1, and the score functions with mode="strict"): all six schemes.


@settings(max_examples=150, deadline=None)
@given(scheme_labels(), st.sampled_from(SCORE_FUNCTIONS), st.sampled_from(AVERAGES), st.sampled_from(ZERO_DIVISION))
def test_strict_mode_random(
    case: tuple[str, list[list[str]], list[list[str]], bool], name: str, average: str | None, zero_division: Any
) -> None:
    scheme, gold, pred, suffix = case
    theirs_cls, mine_cls = scheme_pair(scheme)
    module = "seqeval.metrics.sequence_labeling"
    kw = {"suffix": suffix, "zero_division": zero_division}
    t, m = both(module, "classification_report")
    for output_dict in (False, True):
        compare(
            partial(t, scheme=theirs_cls), partial(m, scheme=mine_cls),
            gold, pred, mode="strict", output_dict=output_dict, **kw,
        )  # fmt: skip
        compare(t, m, gold, pred, mode="strict", output_dict=output_dict, **kw)  # detected from gold
    t, m = both(module, name)
    compare(
        partial(t, scheme=theirs_cls), partial(m, scheme=mine_cls), gold, pred, mode="strict", average=average, **kw
    )
    t, m = both("seqeval.metrics.v1", "precision_recall_fscore_support")
    compare(partial(t, scheme=theirs_cls), partial(m, scheme=mine_cls), gold, pred, average=average, beta=0.5, **kw)
    t, m = both("seqeval.metrics.v1", "unique_labels")
    compare(partial(t, scheme=theirs_cls), partial(m, scheme=mine_cls), gold, pred, suffix=suffix)


def test_strict_iob1_and_ioe1_as_seqeval_reads_them() -> None:
    """The guarded module's deliberate difference 2, given the tree's way: seqeval's fragments."""
    gold = [["O", "B-A", "I-A", "O", "B-B"], ["E-A", "I-A", "O"]]
    for scheme in ("IOB1", "IOE1"):
        theirs_cls, mine_cls = scheme_pair(scheme)
        labels = [[x if x[0] in LETTERS[scheme] + "O" else "O" for x in s] for s in gold]
        theirs = call(sq_v1.classification_report, labels, labels, scheme=theirs_cls, output_dict=True)
        mine = call(my_v1.classification_report, labels, labels, scheme=mine_cls, output_dict=True)
        check_same(theirs, mine, scheme)


def test_schemes_of_ones_own() -> None:
    """A Token subclass with patterns of its own reads as in seqeval (the guarded module refuses it)."""

    def lenient(lib: Any) -> type:
        p, t = lib.Prefix, lib.Tag
        return type(
            "LenientIOB2",
            (lib.IOB2,),
            {"start_patterns": {(p.ANY, p.B, t.ANY), (p.O, p.I, t.ANY), (p.I, p.I, t.DIFF), (p.B, p.I, t.DIFF)}},
        )

    theirs_cls, mine_cls = lenient(sq_scheme), lenient(my_scheme)
    gold = [["O", "I-A", "I-A", "B-B", "I-C"], ["B-A", "I-A"]]
    pred = [["O", "B-A", "I-A", "I-B", "I-C"], ["I-A", "I-A"]]
    check_same(
        call(sq_v1.classification_report, gold, pred, scheme=theirs_cls, output_dict=True),
        call(my_v1.classification_report, gold, pred, scheme=mine_cls, output_dict=True),
        "lenient",
    )
    entities = call(sq_scheme.Entities, gold, theirs_cls), call(my_scheme.Entities, gold, mine_cls)
    check_same(*entities, "lenient", lambda e: e.entities)
    with pytest.raises(OptionError):
        guarded.f1_score(gold, pred, mode="strict", scheme=mine_cls)
    # The base class is no scheme: seqeval fails with a TypeError, and so does this.
    for y in ([["B-A"]], [[]]):
        check_same(
            call(sq_v1.precision_recall_fscore_support, y, y, scheme=sq_scheme.Token),
            call(my_v1.precision_recall_fscore_support, y, y, scheme=my_scheme.Token),
            "Token",
        )


@pytest.mark.filterwarnings("ignore")  # zero divisions (compared elsewhere)
def test_seqevals_own_classes_and_names_work_here() -> None:
    gold = [["B-A", "I-A", "O", "B-B"]]
    pred = [["I-A", "I-A", "I-A", "B-B"]]
    for scheme in SCHEMES:
        theirs_cls, _ = scheme_pair(scheme)
        if scheme in ("IOE1", "IOE2"):
            continue  # B- is no prefix of theirs
        expected = sq_v1.classification_report(gold, pred, scheme=theirs_cls, output_dict=True)
        same(my_v1.classification_report(gold, pred, scheme=theirs_cls, output_dict=True), expected)
        same(my_v1.classification_report(gold, pred, scheme=scheme, output_dict=True), expected)
        assert my_labeling.f1_score(gold, pred, mode="strict", scheme=theirs_cls) == sq_labeling.f1_score(
            gold, pred, mode="strict", scheme=theirs_cls
        )


def test_v1_entities_given_and_counts_given() -> None:
    gold = [["B-A", "I-A", "O", "B-B"], ["B-A"]]
    pred = [["B-A", "I-A", "I-A", "B-B"], ["O"]]
    theirs = sq_v1.precision_recall_fscore_support(
        gold, pred, scheme=sq_scheme.IOB2, entities_true=sq_scheme.Entities(gold, sq_scheme.IOB2)
    )
    mine = my_v1.precision_recall_fscore_support(
        gold, pred, scheme=my_scheme.IOB2, entities_true=my_scheme.Entities(gold, my_scheme.IOB2)
    )
    same(theirs, mine)

    def extract(y_true: Any, y_pred: Any, suffix: bool, scheme: Any) -> tuple[Any, Any, Any]:
        return np.array([3, 0]), np.array([1, 0]), np.array([2, 1])

    for average in AVERAGES:
        compare(
            sq_v1._precision_recall_fscore_support, my_v1._precision_recall_fscore_support, gold, pred,
            average=average, extract_tp_actual_correct=extract,
        )  # fmt: skip
    for args in ((np.array([1, 0]), np.array([2, 0])), (np.array([0.0]), np.array([0]))):
        compare(sq_v1._prf_divide, my_v1._prf_divide, *args, "precision", "predicted", None, ("precision",))


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ([[]], [[]]),
        ([["O"]], [["O"]]),
        ([["B-A", "E-A"]], [["O", "O"]]),  # E- in IOB2
        ([["O", "X-A"]], [["O", "O"]]),  # no such prefix
        ([["B-A"], ["O", "U-A"]], [["O"], ["O", "O"]]),
        ([["O"], ["O", "O"]], [["B-A", "I-A", "M-A", "E-A"], ["O"]][:2]),
        ([["B-A", ""]], [["O", "O"]]),
        ([["B-A", None]], [["O", "O"]]),
        ([["B-A", b"I-A"]], [["O", "O"]]),
        ([["B-A"]], [["B-A", "O"]]),
        ([("B-A",)], [("B-A",)]),
        (None, None),
    ],
)
def test_strict_mode_edge_and_bad_input(gold: Any, pred: Any) -> None:
    for scheme in ("IOB2", "IOB1", "BILOU"):
        theirs_cls, mine_cls = scheme_pair(scheme)
        for output_dict in (False, True):
            check_same(
                call(sq_v1.classification_report, gold, pred, scheme=theirs_cls, output_dict=output_dict),
                call(my_v1.classification_report, gold, pred, scheme=mine_cls, output_dict=output_dict),
                (scheme, gold, pred),
            )
        for average in AVERAGES:
            check_same(
                call(sq_labeling.f1_score, gold, pred, mode="strict", scheme=theirs_cls, average=average),
                call(my_labeling.f1_score, gold, pred, mode="strict", scheme=mine_cls, average=average),
                (scheme, gold, pred),
            )
    compare(sq_v1.classification_report, my_v1.classification_report, gold, pred)  # detected
    compare(sq_v1.check_consistent_length, my_v1.check_consistent_length, gold, pred)


# --------------------------------------------------------------------------------------------
# The two faces agree wherever the guarded one accepts the input.


@settings(max_examples=60, deadline=None)
@given(default_labels(odd=False), st.sampled_from(AVERAGES))
def test_guarded_and_faithful_agree_on_what_both_read(
    case: tuple[list[list[str]], list[list[str]], bool], average: str | None
) -> None:
    gold, pred, suffix = case
    for output_dict in (False, True):
        a = call(guarded.classification_report, gold, pred, suffix=suffix, output_dict=output_dict)
        b = call(my_labeling.classification_report, gold, pred, suffix=suffix, output_dict=output_dict)
        assert (a.error is None) == (b.error is None)
        if a.error is None:
            same(a.value, b.value)
    same(guarded.f1_score(gold, pred, suffix=suffix, average=average, zero_division=0),
         my_labeling.f1_score(gold, pred, suffix=suffix, average=average, zero_division=0))  # fmt: skip


TREE = (
    "spanscore.compat.seqeval.metrics.sequence_labeling",
    "spanscore.compat.seqeval.metrics.v1",
    "spanscore.compat.seqeval.scheme",
    "spanscore.compat.seqeval.reporters",
    "spanscore.compat.seqeval._chunks",
    "spanscore.compat.seqeval._core",
)


@pytest.mark.parametrize("module", TREE)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize(
    "filters",
    [
        [("default", "")],
        [("always", "")],
        [("default", ""), ("always", "U-A")],
        [("always", ""), ("ignore", "X ")],
        [("once", "")],
        [("module", ""), ("error", "M-A")],
    ],
)
def test_ne_tag_warnings_under_any_filter(filters: list[tuple[str, str]]) -> None:
    """What Python shows of seqeval's per-token warnings is the same, whatever the filters (the
    tree gives only the first of a message that the filters show at most once)."""
    gold = [["U-A", "O", "X", "M-A", "U-A"], ["X", "U-A", "M-A"]]
    pred = [["U-A", "U-A", "O", "X", "O"], ["O", "X", "M-A"]]
    module = "seqeval.metrics.sequence_labeling"
    for name, args in (("classification_report", (gold, pred)), ("f1_score", (gold, pred)), ("get_entities", (gold,))):
        outcomes = []
        for f in both(module, name):
            with warnings.catch_warnings(record=True) as warned:
                for action, message in filters:
                    warnings.filterwarnings(action, message=message)  # type: ignore[arg-type]
                try:
                    value, error = f(*args), None
                except UserWarning as exc:
                    value, error = None, str(exc)
            outcomes.append((plain(value), error, [str(w.message) for w in warned]))
        assert outcomes[0][1:] == outcomes[1][1:], (name, outcomes)
        if outcomes[0][1] is None:
            same(*[o[0] for o in outcomes])
