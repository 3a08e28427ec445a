"""spanscore.compat.nervaluate's module tree against the real nervaluate 1.2.1, name for name.

nervaluate's modules (``nervaluate``, ``.entities``, ``.evaluator``, ``.loaders``,
``.strategies``, ``.utils``) have twins under spanscore.compat.nervaluate that are *faithful*:
every public name, with its signature, and on any input the same results (figures to the last bit
and of the same type, indices, the order of every dictionary, ``entities``' set order included),
the same report strings and the same exception types and messages. That includes nervaluate's
matching, which depends on the order of the entity lists, and its odd readings (tags it reads on
without a check, an entity that ends before it starts), which the guarded top-level face refuses
(tests/test_compat_nervaluate.py). On the input the guarded face accepts, its figures and
indices are the faithful tree's.

Inputs: entity lists drawn by hypothesis (nested, duplicated, crossing, in any order, some ending
before they start), tag sequences with tags of every shape, the synthetic benchmark corpus with
each loader, and BTC's test split against shuffled overlapping predictions.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import random
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import nervaluate.evaluator as their_evaluator
import nervaluate.loaders as their_loaders
import nervaluate.strategies as their_strategies
import nervaluate.utils as their_utils
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
import spanscore.compat.nervaluate as guarded
import spanscore.compat.nervaluate.evaluator as my_evaluator
import spanscore.compat.nervaluate.loaders as my_loaders
import spanscore.compat.nervaluate.strategies as my_strategies
import spanscore.compat.nervaluate.utils as my_utils
from spanscore.compat.nervaluate.entities import Entity

MODULES = (
    "nervaluate",
    "nervaluate.entities",
    "nervaluate.evaluator",
    "nervaluate.loaders",
    "nervaluate.strategies",
    "nervaluate.utils",
)
SCHEMES = ("strict", "partial", "ent_type", "exact")
STRATEGY_CLASSES = ("StrictEvaluation", "PartialEvaluation", "EntityTypeEvaluation", "ExactEvaluation")
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious")
SETTINGS = settings(max_examples=60, deadline=None)
# What nervaluate's modules import from the standard library (typing, abc, dataclasses, csv,
# io): no part of its interface, and not mirrored.
NOT_NERVALUATE = {
    "nervaluate.entities": {"dataclass", "List", "Tuple"},
    "nervaluate.evaluator": {"List", "Dict", "Any", "Union", "Optional", "csv", "io"},
    "nervaluate.loaders": {"ABC", "abstractmethod", "List", "Dict", "Any"},
    "nervaluate.strategies": {"ABC", "abstractmethod", "List", "Tuple"},
    "nervaluate.utils": set(),
    "nervaluate": {"entities", "strategies", "loaders", "evaluator", "utils"},  # its modules
}

Mention = tuple[int, int, str]  # start, end (inclusive), label


def mine(name: str) -> Any:
    return importlib.import_module("spanscore.compat." + name)


def interface(module: Any) -> dict[str, Any]:
    """The public names a nervaluate module defines or re-exports from nervaluate."""
    out = {}
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        if getattr(value, "__module__", "").startswith("nervaluate"):
            out[name] = value
    return out


def parameters(f: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]


# --------------------------------------------------------------------------------------------
# Every name.


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_there_with_its_signature(module: str) -> None:
    theirs = importlib.import_module(module)
    ours = mine(module)
    public = {n for n in vars(theirs) if not n.startswith("_")}
    assert public - set(interface(theirs)) == NOT_NERVALUATE[module]
    for name, value in interface(theirs).items():
        assert hasattr(ours, name), f"{module}.{name}"
        counterpart = getattr(ours, name)
        if inspect.isfunction(value):
            assert parameters(counterpart) == parameters(value), f"{module}.{name}"
            continue
        assert inspect.isclass(counterpart), f"{module}.{name}"
        assert parameters(counterpart) == parameters(value), f"{module}.{name}"
        if dataclasses.is_dataclass(value):
            theirs_fields = [(f.name, f.default) for f in dataclasses.fields(value)]
            assert [(f.name, f.default) for f in dataclasses.fields(counterpart)] == theirs_fields
        for attr, member in vars(value).items():  # its methods, the private ones included
            if attr.startswith("__") or not callable(getattr(value, attr)):
                continue
            assert hasattr(counterpart, attr), f"{module}.{name}.{attr}"
            assert parameters(getattr(counterpart, attr)) == parameters(getattr(value, attr)), (name, attr, member)
        # The same family: a strategy is an EvaluationStrategy, a loader a DataLoader.
        for base in value.__mro__[1:]:
            if base.__module__.startswith("nervaluate"):
                assert issubclass(counterpart, getattr(mine(base.__module__), base.__name__)), (name, base)


def test_the_same_objects_under_each_name() -> None:
    """Where nervaluate's modules share an object (``evaluator.Entity is entities.Entity``), so do
    ours; the guarded top level has its own ``Evaluator`` and helpers, the faithful ones' kin."""
    theirs: dict[int, list[tuple[str, str]]] = {}
    for module in MODULES[1:]:
        for name, value in interface(importlib.import_module(module)).items():
            theirs.setdefault(id(value), []).append((module, name))
    for names in theirs.values():
        objects = {id(getattr(mine(m), n)) for m, n in names}
        assert len(objects) == 1, names
    assert issubclass(guarded.Evaluator, my_evaluator.Evaluator)
    assert guarded.split_list is my_utils.split_list
    assert guarded.Entity is Entity and guarded.StrictEvaluation is my_strategies.StrictEvaluation
    for name in ("ConllLoader", "ListLoader", "DictLoader"):
        assert issubclass(getattr(guarded, name), getattr(my_loaders, name))


def test_docstring_examples() -> None:
    import doctest

    for module in (guarded, *(mine(m) for m in MODULES[1:])):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__


# --------------------------------------------------------------------------------------------
# The comparison.


def snapshot(value: Any) -> Any:
    """A value's full content: dataclasses as their fields with each field's type, dictionaries as
    lists of items (their order counts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, [(f.name, snapshot(getattr(value, f.name))) for f in dataclasses.fields(value)])
    if isinstance(value, dict):
        return [(k, snapshot(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [snapshot(v) for v in value]
    return (type(value).__name__, value)


def sorted_sets(message: str) -> str:
    """A message with each printed set's elements sorted: a set literal's order comes from the hash
    seed of the process that compiled the module (its frozenset constant), not from the code."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


def outcome(call: Callable[[], Any]) -> Any:
    """What ``call`` returns, or the type and message of what it raises."""
    try:
        return ("ok", snapshot(call()))
    except Exception as error:
        kind = type(error).__name__ if not isinstance(error, ValueError) else "ValueError"
        return ("raised", kind, sorted_sets(str(error)))


def same(ours: Callable[[], Any], theirs: Callable[[], Any]) -> Any:
    a, b = outcome(ours), outcome(theirs)
    assert a == b
    return a


def entities_of(docs: Sequence[Sequence[Any]]) -> list[list[tuple[Any, Any, Any]]]:
    return [[(e.label, e.start, e.end) for e in doc] for doc in docs]


def as_dicts(docs: Sequence[Sequence[Mention]]) -> list[list[dict[str, Any]]]:
    return [[{"label": t, "start": s, "end": e} for s, e, t in doc] for doc in docs]


def compare_evaluators(true: Any, pred: Any, tags: list[str], loader: str = "default", percentage: Any = 1.0) -> Any:
    """The faithful Evaluator against nervaluate's: construction, the loaded entities, evaluate(),
    every report; each the same value or the same error."""
    made = same(
        lambda: my_evaluator.Evaluator(true, pred, tags, loader, percentage) and None,
        lambda: their_evaluator.Evaluator(true, pred, tags, loader, percentage) and None,
    )
    if made[0] == "raised":
        return made
    ours = my_evaluator.Evaluator(true, pred, tags, loader, percentage)
    theirs = their_evaluator.Evaluator(true, pred, tags, loader, percentage)
    got = same(ours.evaluate, theirs.evaluate)
    for scheme in ("strict", "ent_type"):
        for mode in ("overall", "entities"):
            same(lambda: ours.summary_report(mode, scheme, 3), lambda: theirs.summary_report(mode, scheme, 3))  # noqa: B023
            same(lambda: ours.results_to_csv(mode, scheme), lambda: theirs.results_to_csv(mode, scheme))  # noqa: B023
            for colors in (False, True):
                same(
                    lambda: ours.summary_report_indices(mode, scheme, colors),  # noqa: B023
                    lambda: theirs.summary_report_indices(mode, scheme, colors),  # noqa: B023
                )
    assert entities_of(ours.true) == entities_of(theirs.true)
    assert entities_of(ours.pred) == entities_of(theirs.pred)
    return got


def strip_order(results: dict[str, Any]) -> Any:
    """evaluate()'s dictionary with its tags sorted (the guarded face sorts them)."""
    return {k: sorted(snapshot(v)) if k.startswith("entit") else snapshot(v) for k, v in results.items()}


# --------------------------------------------------------------------------------------------
# Strategies on entity lists.


@st.composite
def mentions(draw: st.DrawFn, most: int, broken: bool) -> list[Mention]:
    """Mentions in a narrow window: nested, crossing, duplicated, in any order; with ``broken``,
    some end before they start."""
    out: list[Mention] = []
    for _ in range(draw(st.integers(0, most))):
        if out and draw(st.integers(0, 3)) == 0:
            s, e, t = draw(st.sampled_from(out))  # near another one
            s += draw(st.integers(-1, 1))
            e += draw(st.integers(-1, 1))
            t = t if draw(st.booleans()) else draw(st.sampled_from("ABC"))
            e = max(e, s - (1 if broken else 0))
        else:
            s = draw(st.integers(-2, 10))
            e = s + draw(st.integers(-2 if broken and draw(st.integers(0, 5)) == 0 else 0, 4))
            t = draw(st.sampled_from("ABC"))
        out.append((s, e, t))
    return out


PERCENTAGES = st.sampled_from([1.0, 1, 20, 29, 33.33, 50, 66.67, 100.0]) | st.floats(1.0, 100.0)


@SETTINGS
@given(mentions(6, broken=True), mentions(7, broken=True), PERCENTAGES, st.integers(0, 3))
def test_strategies_agree(true: list[Mention], pred: list[Mention], percentage: float, index: int) -> None:
    for name in STRATEGY_CLASSES:
        ours = getattr(my_strategies, name)(percentage)
        theirs = getattr(their_strategies, name)(percentage)
        our_lists = ([Entity(t, s, e) for s, e, t in true], [Entity(t, s, e) for s, e, t in pred])
        their_lists = (
            [their_strategies.Entity(t, s, e) for s, e, t in true],
            [their_strategies.Entity(t, s, e) for s, e, t in pred],
        )
        same(lambda: ours.evaluate(*our_lists, [], index), lambda: theirs.evaluate(*their_lists, [], index))  # noqa: B023
    for (s, e, t), (s2, e2, t2) in zip(true, pred, strict=False):
        a, b = Entity(t2, s2, e2), Entity(t, s, e)
        c, d = their_strategies.Entity(t2, s2, e2), their_strategies.Entity(t, s, e)
        ours, theirs = my_strategies.PartialEvaluation(percentage), their_strategies.PartialEvaluation(percentage)
        same(lambda: ours._calculate_overlap_percentage(a, b), lambda: theirs._calculate_overlap_percentage(c, d))  # noqa: B023
        same(lambda: ours._has_sufficient_overlap(a, b), lambda: theirs._has_sufficient_overlap(c, d))  # noqa: B023
        assert ours._calculate_boundaries_distance(a, b) == theirs._calculate_boundaries_distance(c, d)


def test_strategy_percentage_checks() -> None:
    for value in (0.5, 101, -5.0, float("nan"), "50"):
        for name in STRATEGY_CLASSES:
            same(lambda: getattr(my_strategies, name)(value), lambda: getattr(their_strategies, name)(value))  # noqa: B023


# --------------------------------------------------------------------------------------------
# The evaluator on entity lists: where nervaluate's matching depends on order.


@st.composite
def dict_docs(draw: st.DrawFn, broken: bool = False) -> tuple[list[list[Mention]], list[list[Mention]]]:
    true, pred = [], []
    for _ in range(draw(st.integers(1, 4))):
        doc = draw(mentions(5, broken))
        guess = list(draw(mentions(3, broken)))
        for s, e, t in doc:  # predictions near the references
            if draw(st.integers(0, 2)):
                guess.append((s + draw(st.integers(-2, 2)), e + draw(st.integers(-2, 2)), t))
        guess = [(s, max(e, s), t) if not broken else (s, e, t) for s, e, t in guess]
        true.append(doc)
        pred.append(draw(st.permutations(guess)))
    return true, pred


TAGS = st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=0, max_size=4, unique=True)


@SETTINGS
@given(dict_docs(), TAGS, PERCENTAGES)
def test_evaluator_agrees(docs: tuple[list[list[Mention]], list[list[Mention]]], tags: list[str], p: float) -> None:
    true, pred = docs
    got = compare_evaluators(as_dicts(true), as_dicts(pred), tags, "dict", p)
    # The guarded face: the same figures and indices (its tags sorted).
    assert got[0] == "ok"
    ours = guarded.Evaluator(as_dicts(true), as_dicts(pred), tags, "dict", p).evaluate()
    faithful = my_evaluator.Evaluator(as_dicts(true), as_dicts(pred), tags, "dict", p).evaluate()
    assert strip_order(ours) == strip_order(faithful)
    assert list(ours["entities"]) == sorted(faithful["entities"])


@settings(max_examples=30, deadline=None)
@given(dict_docs(broken=True), TAGS, PERCENTAGES)
def test_evaluator_agrees_on_entities_that_end_before_they_start(
    docs: tuple[list[list[Mention]], list[list[Mention]]], tags: list[str], p: float
) -> None:
    """nervaluate divides by zero, or finds overlaps in negative lengths; the same here (the
    guarded face refuses such entities)."""
    true, pred = docs
    compare_evaluators(as_dicts(true), as_dicts(pred), tags, "dict", p)


ORDER_CASES = [
    # reference X 0-2; predictions X 0-0 and X 0-2: the first read takes the reference
    ([[(0, 2, "X")]], [[(0, 0, "X"), (0, 2, "X")]], ["X"]),
    # references X 0-1 and X 3-4; the long prediction read first leaves the short one nothing
    ([[(0, 1, "X"), (3, 4, "X")]], [[(1, 3, "X"), (0, 0, "X")]], ["X"]),
    # ent_type: the short prediction read first takes the reference the exact one matches
    ([[(0, 1, "PER"), (1, 2, "PER")]], [[(0, 0, "PER"), (0, 1, "PER")]], ["PER"]),
    # ent_type takes the closest boundaries, partial the first in the list
    ([[(0, 9, "PER"), (0, 2, "PER")]], [[(0, 3, "PER")]], ["PER"]),
    # four predictions around two references
    (
        [[(1, 2, "PER"), (4, 4, "LOC")]],
        [[(0, 2, "PER"), (1, 2, "PER"), (4, 5, "LOC"), (3, 4, "ORG")]],
        ["PER", "LOC", "ORG"],
    ),
]


def counts(result: Any) -> tuple[int, ...]:
    return tuple(getattr(result, c) for c in CATEGORIES)


@pytest.mark.parametrize(("true", "pred", "tags"), ORDER_CASES)
def test_order_dependent_matching_is_nervaluates_and_spanscores_is_not(
    true: list[list[Mention]], pred: list[list[Mention]], tags: list[str]
) -> None:
    """In every order of the predictions, both faces give nervaluate's figures and indices, which
    change with the order; spanscore's own API (``spanscore.evaluate``, ends exclusive) gives one
    answer whatever the order (docs/differences.md)."""
    seen: set[Any] = set()
    spanscore_seen: set[Any] = set()
    rng = random.Random(3)
    for _ in range(12):
        order = [rng.sample(doc, len(doc)) for doc in pred]
        got = compare_evaluators(as_dicts(true), as_dicts(order), tags, "dict")
        guarded_results = guarded.Evaluator(as_dicts(true), as_dicts(order), tags).evaluate()
        faithful_results = my_evaluator.Evaluator(as_dicts(true), as_dicts(order), tags).evaluate()
        assert strip_order(guarded_results) == strip_order(faithful_results)
        seen.add(repr(got))
        report = spanscore.evaluate(
            reference=[[(s, e + 1, t) for s, e, t in doc] for doc in true],
            predicted=[[(s, e + 1, t) for s, e, t in doc] for doc in order],
            format="spans",
        ).to_dict()["semeval"]
        spanscore_seen.add(
            repr({k: [report[k][c] for c in CATEGORIES] for k in ("strict", "exact", "partial", "type")})
        )
    assert len(seen) > 1 or true == ORDER_CASES[3][0]  # one prediction: its index moves, not its figures
    assert len(spanscore_seen) == 1


def test_order_examples_pinned() -> None:
    """The figures of the docs' examples, as nervaluate gives them."""
    ours = guarded.Evaluator(as_dicts([[(0, 2, "X")]]), as_dicts([[(0, 0, "X"), (0, 2, "X")]]), ["X"]).evaluate()
    assert counts(ours["overall"]["strict"]) == (0, 1, 0, 0, 1)
    swapped = guarded.Evaluator(as_dicts([[(0, 2, "X")]]), as_dicts([[(0, 2, "X"), (0, 0, "X")]]), ["X"]).evaluate()
    assert counts(swapped["overall"]["strict"]) == (1, 0, 0, 0, 1)
    two = guarded.Evaluator(
        as_dicts([[(0, 1, "X"), (3, 4, "X")]]), as_dicts([[(1, 3, "X"), (0, 0, "X")]]), ["X"]
    ).evaluate()
    assert counts(two["overall"]["partial"]) == (0, 0, 1, 1, 1)
    closest = guarded.Evaluator(as_dicts([[(0, 9, "PER"), (0, 2, "PER")]]), as_dicts([[(0, 3, "PER")]]), ["PER"])
    results = closest.evaluate()
    assert results["overall_indices"]["ent_type"].missed_indices == [(0, 0)]  # 0-9: ent_type took 0-2
    assert results["overall_indices"]["partial"].missed_indices == [(0, 1)]  # 0-2: partial took 0-9


# --------------------------------------------------------------------------------------------
# Tags, loaders and utils.

ODD_TAGS = ("E-A", "S-B", "B-", "I-", "O-A", "b-A", "BA", "X", "", "B-A-B", "I-B ")
VALID = ("O", "O", "O", "B-A", "I-A", "B-B", "I-B", "B-C", "I-C")


@st.composite
def tag_docs(draw: st.DrawFn, same_lengths: bool) -> tuple[list[list[Any]], list[list[Any]]]:
    odd = draw(st.integers(0, 2))
    vocab = st.sampled_from(VALID + ODD_TAGS[: 4 * odd]) if odd else st.sampled_from(VALID)
    true: list[list[Any]] = []
    pred: list[list[Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(st.lists(vocab, max_size=10))
        guess = [x if draw(st.integers(0, 3)) else draw(vocab) for x in doc]
        if not same_lengths and draw(st.integers(0, 4)) == 0:
            guess = draw(st.lists(vocab, max_size=10))
        true.append(doc)
        pred.append(guess)
    return true, pred


@SETTINGS
@given(tag_docs(same_lengths=True), TAGS, st.booleans())
def test_list_input_agrees(docs: tuple[list[list[Any]], list[list[Any]]], tags: list[str], default: bool) -> None:
    true, pred = docs
    compare_evaluators(true, pred, [*tags, ""], "default" if default else "list")
    same(lambda: my_loaders.ListLoader().load(pred), lambda: their_loaders.ListLoader().load(pred))


@SETTINGS
@given(st.data(), tag_docs(same_lengths=False), TAGS)
def test_conll_input_agrees(
    data: st.DataObject, docs: tuple[list[list[Any]], list[list[Any]]], tags: list[str]
) -> None:
    """With nervaluate's quirks: whitespace-only lines (skipped, counted as tokens), extra
    columns, lines without a tab, a third newline between documents."""

    def text(docs: list[list[Any]]) -> str:
        out = []
        for doc in docs:
            lines = [f"w{i}\t{x}" + ("\tx" if data.draw(st.integers(0, 5)) == 0 else "") for i, x in enumerate(doc)]
            for _ in range(data.draw(st.integers(0, 2))):
                where = data.draw(st.integers(0, len(lines)))
                lines.insert(where, data.draw(st.sampled_from([" ", "\t", "  \t ", "no-tab", "w\tB-A"])))
            out.append("\n".join(lines))
        glue = data.draw(st.sampled_from(["\n\n", "\n\n\n"]))
        return glue.join(out) + data.draw(st.sampled_from(["", "\n", "\n\n"]))

    true, pred = docs
    t, p = text(true), text(pred)
    compare_evaluators(t, p, tags, "default" if data.draw(st.booleans()) else "conll")
    same(lambda: my_loaders.ConllLoader().load(t), lambda: their_loaders.ConllLoader().load(t))


BAD_INPUT: list[tuple[Any, Any, str, Any]] = [
    ("a\tB-X", [["B-X"]], "default", 1.0),
    ([["B-X"]], [["B-X"], ["O"]], "list", 1.0),
    ([["B-X", "O"]], [["B-X"]], "list", 1.0),
    ([["B-X", 3]], [["B-X", "O"]], "list", 1.0),
    ([["B-X", ["I-X"]]], [["B-X", "O"]], "list", 1.0),
    ([["B-X"], "O"], [["B-X"], ["O"]], "list", 1.0),
    ([["B-X"], 7], [["B-X"], ["O"]], "list", 1.0),
    ("B-X", "B-X", "list", 1.0),
    ([["B-X"]], [["B-X"]], "jsonl", 1.0),
    ((("B-X",),), (("B-X",),), "default", 1.0),
    ([[], [{"label": "X", "start": 0, "end": 0}]], [[], []], "default", 1.0),  # true[0][0]
    ([["B-X"]], [["B-X"]], "list", 0.5),
    ([["B-X"]], [["B-X"]], "list", "50"),
    ([["B-X"]], [["B-X"]], "list", 100.5),
    ("a\tB-X\nb", "a\tB-X\nb\tO", "conll", 1.0),
    ("a\tB-X", "a\tB-X\n\nb\tO", "conll", 1.0),
    ("a\tB-X", ["a\tB-X"], "conll", 1.0),
    ("a\tX", "a\tB-X", "conll", 1.0),
    ([[{"label": "X", "start": 0}]], [[]], "dict", 1.0),
    ([[{"label": 1, "start": 0, "end": 0}]], [[]], "dict", 1.0),
    ([[{"label": "X", "start": 0.0, "end": 0}]], [[]], "dict", 1.0),
    ([[("X", 0, 0)]], [[]], "dict", 1.0),
    ([("X", 0, 0)], [[]], "dict", 1.0),
    ({"X": 1}, [[]], "dict", 1.0),
    ([[{"label": "X", "start": 3, "end": 2}]], [[{"label": "X", "start": 2, "end": 4}]], "dict", 1.0),
    ([[{"label": "X", "start": 2**70, "end": 2**70}]], [[{"label": "X", "start": 2**70, "end": 2**71}]], "dict", 1),
    ([], [], "list", 1.0),
    ("", "", "conll", 1.0),
    (" \n\n", " \n\n", "conll", 1.0),
]


@pytest.mark.parametrize(("true", "pred", "loader", "percentage"), BAD_INPUT)
def test_odd_input_agrees(true: Any, pred: Any, loader: str, percentage: Any) -> None:
    compare_evaluators(true, pred, ["X"], loader, percentage)


@SETTINGS
@given(tag_docs(same_lengths=True))
def test_utils_agree(docs: tuple[list[list[Any]], list[list[Any]]]) -> None:
    true, _ = docs
    same(lambda: my_utils.list_to_spans(true), lambda: their_utils.list_to_spans(true))
    for doc in true:
        same(lambda: my_utils.collect_named_entities(doc), lambda: their_utils.collect_named_entities(doc))  # noqa: B023
    text = "\n\n".join("\n".join(f"w\t{x}" for x in doc) for doc in true)
    same(lambda: my_utils.conll_to_spans(text), lambda: their_utils.conll_to_spans(text))
    broken = text.replace("\tO", "", 1)  # a line without a tab: IndexError
    same(lambda: my_utils.conll_to_spans(broken), lambda: their_utils.conll_to_spans(broken))
    flat = [x for doc in true for x in [*doc, ""]]
    for chars in (None, ["O"], ["", "B-A"]):
        same(lambda: my_utils.split_list(flat, chars), lambda: their_utils.split_list(flat, chars))  # noqa: B023


def test_utils_on_tags_that_are_not_strings() -> None:
    for tags in ([1], ["B-A", 2], [["B", "-", "A"], ["I", "-", "A"]], ["O", None], ("B-A", "I-A")):
        same(lambda: my_utils.collect_named_entities(tags), lambda: their_utils.collect_named_entities(tags))  # noqa: B023
        same(lambda: my_utils.list_to_spans([tags]), lambda: their_utils.list_to_spans([tags]))  # noqa: B023
    same(lambda: my_utils.list_to_spans(["B-AI-A"]), lambda: their_utils.list_to_spans(["B-AI-A"]))


@SETTINGS
@given(st.integers(-3, 6), st.integers(-3, 6), st.integers(-3, 6), st.integers(-3, 6))
def test_find_overlap_and_clean_entities(a: int, b: int, c: int, d: int) -> None:
    assert my_utils.find_overlap(range(a, b), range(c, d)) == their_utils.find_overlap(range(a, b), range(c, d))
    ent = {"token_start": 1, "label": "X", "end": b, "start": a, "text": "w"}
    assert list(my_utils.clean_entities(ent).items()) == list(their_utils.clean_entities(ent).items())


# --------------------------------------------------------------------------------------------
# What users do with the Evaluator beyond evaluate().


def test_a_loader_added_in_setup_loaders() -> None:
    """nervaluate's README: subclass, add a loader in ``_setup_loaders``."""

    def subclass(base: Any, loader_base: Any, entity: Any) -> Any:
        class Tuples(loader_base):  # type: ignore[misc, valid-type]
            def load(self, data: Any) -> list[list[Any]]:
                return [[entity(t, s, e) for s, e, t in doc] for doc in data]

        class WithTuples(base):  # type: ignore[misc, valid-type]
            def _setup_loaders(self) -> None:
                super()._setup_loaders()
                self.loaders["tuples"] = Tuples()

        return WithTuples

    true, pred = [[(0, 2, "X"), (4, 4, "Y")]], [[(0, 0, "X"), (0, 2, "X"), (4, 5, "X")]]
    ours = subclass(my_evaluator.Evaluator, my_loaders.DataLoader, Entity)(true, pred, ["X", "Y"], "tuples")
    theirs = subclass(their_evaluator.Evaluator, their_loaders.DataLoader, their_loaders.Entity)(
        true, pred, ["X", "Y"], "tuples"
    )
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())
    mixed = subclass(guarded.Evaluator, guarded.DataLoader, Entity)(true, pred, ["X", "Y"], "tuples").evaluate()
    assert strip_order(mixed) == strip_order(ours.evaluate())


def test_strategies_replaced_and_merges_overridden() -> None:
    """A strategy of the caller's, or a merge of the caller's, is used as it is."""

    def closest_first(base: Any) -> Any:
        class ClosestFirst(base):  # type: ignore[misc, valid-type]
            @staticmethod
            def _calculate_boundaries_distance(pred: Any, true: Any) -> Any:
                return -min(pred.end, true.end) + max(pred.start, true.start)

        return ClosestFirst

    true = as_dicts([[(0, 9, "PER"), (0, 2, "PER"), (5, 6, "LOC")]])
    pred = as_dicts([[(0, 3, "PER"), (5, 5, "PER")]])
    ours = my_evaluator.Evaluator(true, pred, ["PER", "LOC"])
    theirs = their_evaluator.Evaluator(true, pred, ["PER", "LOC"])
    ours.strategies["ent_type"] = closest_first(my_strategies.EntityTypeEvaluation)()
    theirs.strategies["ent_type"] = closest_first(their_strategies.EntityTypeEvaluation)()
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())
    del ours.strategies["exact"], theirs.strategies["exact"]
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())

    class Halved(my_evaluator.Evaluator):
        @staticmethod
        def _merge_results(target: Any, source: Any, strategy_name: str) -> None:
            target.correct += source.correct // 2

    two_docs = as_dicts([[(0, 1, "PER")], [(0, 1, "PER")]])
    assert Halved(two_docs, two_docs, ["PER"]).evaluate()["overall"]["strict"].correct == 1


def test_entities_read_and_changed() -> None:
    """``true`` and ``pred`` are made when read; changed, they are what is evaluated."""
    true, pred = [["B-A", "I-A", "O", "B-B"]], [["B-A", "O", "O", "B-B"]]
    ours = my_evaluator.Evaluator(true, pred, ["A", "B"], "list")
    theirs = their_evaluator.Evaluator(true, pred, ["A", "B"], "list")
    assert ours.true is ours.true
    for ev, entity in ((ours, Entity), (theirs, their_loaders.Entity)):
        ev.pred[0].append(entity("A", 0, 1))
        ev.true[0][0].end = 0
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())
    ours.pred = [[e for e in doc if e.label == "B"] for doc in ours.pred]
    theirs.pred = [[e for e in doc if e.label == "B"] for doc in theirs.pred]
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())
    assert snapshot(ours.summary_report_indices()) == snapshot(theirs.summary_report_indices())


def test_positions_that_are_not_integers() -> None:
    """A loader of the caller's may give any positions: the strategies walk every document."""

    class Floats(my_loaders.DataLoader):
        def load(self, data: Any) -> list[list[Any]]:
            return [[Entity(t, s + 0.5, e + 0.5) for s, e, t in doc] for doc in data]

    class TheirFloats(their_loaders.DataLoader):
        def load(self, data: Any) -> list[list[Any]]:
            return [[their_loaders.Entity(t, s + 0.5, e + 0.5) for s, e, t in doc] for doc in data]

    true, pred = [[(0, 2, "X")]], [[(1, 2, "X"), (0, 2, "X")]]
    ours = my_evaluator.Evaluator([[]], [[]], ["X"], "dict")
    theirs = their_evaluator.Evaluator([[]], [[]], ["X"], "dict")
    ours.true, ours.pred = Floats().load(true), Floats().load(pred)
    theirs.true, theirs.pred = TheirFloats().load(true), TheirFloats().load(pred)
    assert snapshot(ours.evaluate()) == snapshot(theirs.evaluate())


# --------------------------------------------------------------------------------------------
# Corpora.


def read_labels(path: Path) -> list[list[str]]:
    out: list[list[str]] = []
    cur: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            if cur:
                out.append(cur)
                cur = []
            continue
        cur.append(line.rsplit(None, 1)[-1])
    if cur:
        out.append(cur)
    return out


def test_synthetic_corpus_with_each_loader(synth_tool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's corpus (its first 1000 sentences' worth): every figure and index the same,
    with the list, CoNLL and dict loaders; computed on arrays, never by walking every document."""
    subprocess.run([sys.executable, str(synth_tool), "1000", str(tmp_path / "synth")], check=True)
    gold, pred = read_labels(tmp_path / "synth.gold"), read_labels(tmp_path / "synth.pred")
    tags = ["PER", "ORG", "LOC", "MISC"]

    def walked(self: Any, used: Any) -> Any:
        raise AssertionError("walked every document")

    monkeypatch.setattr(my_evaluator.Evaluator, "_walk_documents", walked)
    got = compare_evaluators(gold, pred, tags, "list")
    assert got[0] == "ok"
    texts = ["\n\n".join("\n".join(f"w\t{x}" for x in sent) for sent in side) for side in (gold, pred)]
    assert compare_evaluators(*texts, tags, "conll") == got
    dicts = [my_utils.list_to_spans(side) for side in (gold, pred)]
    rng = random.Random(5)
    shuffled = [rng.sample(doc, len(doc)) for doc in dicts[1]]
    assert compare_evaluators(dicts[0], dicts[1], tags, "dict") == got
    compare_evaluators(dicts[0], shuffled, tags, "dict", 40)
    # The guarded face: the same figures and indices.
    assert strip_order(guarded.Evaluator(gold, pred, tags, "list").evaluate()) == strip_order(
        my_evaluator.Evaluator(gold, pred, tags, "list").evaluate()
    )


def test_btc_against_overlapping_predictions_in_any_order(btc: Path) -> None:
    """BTC's test split; predictions that overlap each other and several references, shuffled:
    where nervaluate's matching depends on the order in many documents."""
    gold = my_utils.list_to_spans(read_labels(btc / "test.txt"))
    rng = random.Random(7)
    pred = []
    for doc in gold:
        guess = []
        for e in doc:
            s, t = e["start"] + rng.randint(-1, 1), e["end"] + rng.randint(-1, 2)
            label = e["label"] if rng.random() < 0.8 else rng.choice(["PER", "LOC", "ORG"])
            guess.append({"label": label, "start": s, "end": max(s, t)})
            if rng.random() < 0.3:
                guess.append({"label": rng.choice(["PER", "LOC", "ORG"]), "start": e["start"], "end": e["end"] + 3})
        pred.append(rng.sample(guess, len(guess)))
    for percentage in (1, 50):
        got = compare_evaluators(gold, pred, ["PER", "LOC", "ORG"], "dict", percentage)
        assert got[0] == "ok"
    reversed_ = [doc[::-1] for doc in pred]
    forth = my_evaluator.Evaluator(gold, pred, ["PER", "LOC", "ORG"]).evaluate()["overall"]["partial"]
    back = my_evaluator.Evaluator(gold, reversed_, ["PER", "LOC", "ORG"]).evaluate()["overall"]["partial"]
    assert counts(forth) != counts(back)  # nervaluate's figures, which depend on the order
