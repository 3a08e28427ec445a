"""spanscore.compat.nervaluate (its guarded top-level face) against nervaluate 1.2.1 itself.

Every input is given to both, with each loader: the BTC test split (``btc`` fixture) against
predictions perturbed by a seeded ``random.Random``, and hypothesis-drawn documents. The loaded
entities must be equal, and so must every figure (counts, possible/actual, precision/recall/F1,
indices) of every scheme, overall and per tag, in every document: the drop-in reproduces
nervaluate's matching, order dependence included (tests/test_compat_nervaluate_tree.py pins the
order cases and what spanscore's own API gives instead). The guarded face differs only on input
nervaluate misreads and in two outputs it gets wrong, each pinned below with nervaluate's answer
and ours (differences 3 to 7 of the module's docstring).
"""

from __future__ import annotations

import dataclasses
import doctest
import inspect
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nervaluate
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nervaluate import Evaluator as TheirEvaluator

from spanscore.compat import nervaluate as compat
from spanscore.compat.nervaluate import Evaluator
from spanscore.errors import InputError, OptionError, SpanscoreError

SCHEMES = ("strict", "partial", "ent_type", "exact")
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious")
FIGURES = (*CATEGORIES, "possible", "actual", "precision", "recall", "f1")
SETTINGS = settings(max_examples=40, deadline=None)

Mention = tuple[int, int, str]  # start, end (inclusive), label


# --------------------------------------------------------------------------------------------
# The comparison.


@dataclasses.dataclass
class Compared:
    cells: int = 0  # (document, tag or overall, scheme) cells compared
    differing: int = 0  # of which nervaluate's figures differ from ours
    raised: str | None = None  # the error both raised


def figures(r: Any) -> dict[str, Any]:
    return {f: getattr(r, f) for f in FIGURES}


def entities(docs: Sequence[Sequence[Any]]) -> list[list[Mention]]:
    return [[(e.start, e.end, e.label) for e in doc] for doc in docs]


def same_message(a: str, b: str) -> bool:
    """Equal up to the order of a set's elements: nervaluate prints sets, whose order depends on
    the hash seed of the process that compiled it."""

    def norm(text: str) -> str:
        return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)

    return norm(a) == norm(b)


def compare(
    true: Any,
    pred: Any,
    tags: list[str],
    loader: str = "default",
    percentage: float = 1.0,
    reports: str | None = None,
) -> Compared:
    """Every figure and index of ours equal to nervaluate's; with ``reports`` (a scheme), the
    printed reports too."""
    try:
        theirs = TheirEvaluator(true, pred, tags, loader=loader, min_overlap_percentage=percentage)
    except Exception as error:
        with pytest.raises(type(error)) as raised:
            Evaluator(true, pred, tags, loader=loader, min_overlap_percentage=percentage)
        assert same_message(str(raised.value), str(error))
        assert isinstance(raised.value, SpanscoreError)
        return Compared(raised=str(error))
    ours = Evaluator(true, pred, tags, loader=loader, min_overlap_percentage=percentage)
    assert entities(ours.true) == entities(theirs.true)
    assert entities(ours.pred) == entities(theirs.pred)
    evaluation = ours._evaluation()
    mine, their = evaluation.results, theirs.evaluate()
    assert list(mine["overall"]) == list(their["overall"])
    assert list(mine["entities"]) == sorted(their["entities"])  # difference 7: sorted
    assert set(mine["overall_indices"]) == set(their["overall_indices"])

    out = Compared()
    for tag in [None, *mine["entities"]]:
        res_a = mine["overall"] if tag is None else mine["entities"][tag]
        res_b = their["overall"] if tag is None else their["entities"][tag]
        idx_a = mine["overall_indices"] if tag is None else mine["entity_indices"][tag]
        idx_b = their["overall_indices"] if tag is None else their["entity_indices"][tag]
        assert list(res_a) == list(res_b) == list(idx_a) == list(idx_b) == (list(SCHEMES) if theirs.true else [])

        for scheme in res_b:
            a, b = figures(res_a[scheme]), figures(res_b[scheme])
            for fig, found in ((a, idx_a[scheme]), (b, idx_b[scheme])):  # each consistent with its indices
                assert [fig[c] for c in CATEGORIES] == [len(getattr(found, f"{c}_indices")) for c in CATEGORIES]
            out.cells += len(theirs.true)
            if a != b or dataclasses.asdict(idx_a[scheme]) != dataclasses.asdict(idx_b[scheme]):
                out.differing += 1
            assert a == b, (tag, scheme)
            assert dataclasses.asdict(idx_a[scheme]) == dataclasses.asdict(idx_b[scheme]), (tag, scheme)
            # Our scores are nervaluate's formula on our counts, to the last bit.
            redo = nervaluate.evaluator.EvaluationResult(**{c: a[c] for c in CATEGORIES})
            redo.compute_metrics(partial_or_type=scheme in ("partial", "ent_type"))
            assert figures(redo) == a
            assert all(type(a[f]) is type(getattr(redo, f)) for f in ("precision", "recall", "f1"))
    if reports is not None:
        assert_same_reports(ours, theirs, tags, reports)
    return out


def assert_same_reports(ours: Evaluator, theirs: TheirEvaluator, tags: list[str], scenario: str) -> None:
    assert ours.summary_report() == theirs.summary_report()
    assert ours.results_to_csv() == theirs.results_to_csv()
    assert ours.summary_report(mode="entities", scenario=scenario, digits=3) == theirs.summary_report(
        mode="entities", scenario=scenario, digits=3
    )
    # Rows in tag order, which is a set's in nervaluate (difference 7).
    rows = theirs.results_to_csv(mode="entities", scenario=scenario) or ""
    mine = ours.results_to_csv(mode="entities", scenario=scenario) or ""
    assert sorted(mine.splitlines()) == sorted(rows.splitlines())
    # Where tags filter nothing out and nothing is missed, nervaluate names the right entities
    # (difference 6).
    labels = {e.label for doc in theirs.true + theirs.pred for e in doc}
    if labels <= set(tags) and not ours.evaluate()["overall"][scenario].missed:
        assert ours.summary_report_indices(scenario=scenario) == theirs.summary_report_indices(scenario=scenario)


# --------------------------------------------------------------------------------------------
# BTC against perturbed predictions.

TYPES = ("LOC", "ORG", "PER")


def read_btc(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    tokens: list[list[str]] = []
    labels: list[list[str]] = []
    for block in path.read_text(encoding="utf-8").strip("\n").split("\n\n"):
        rows = [line.rsplit("\t", 1) for line in block.split("\n")]
        tokens.append([r[0] for r in rows])
        labels.append([r[1] for r in rows])
    return tokens, labels


def bio_mentions(labels: Sequence[str]) -> list[Mention]:
    """Mentions of valid BIO (written independently of both libraries)."""
    out: list[Mention] = []
    for i, lab in enumerate(labels):
        if lab.startswith("B-"):
            end = i
            while end + 1 < len(labels) and labels[end + 1] == "I-" + lab[2:]:
                end += 1
            out.append((i, end, lab[2:]))
    return out


def perturb(mentions: Sequence[Mention], n: int, rng: random.Random, overlapping: bool) -> list[Mention]:
    """Gold mentions dropped, shrunk, extended, shifted, relabelled, split, duplicated; spurious ones added."""
    out: list[Mention] = []
    for s, e, t in mentions:
        r = rng.random()
        if r < 0.08:
            continue
        if r < 0.16:
            t = rng.choice([x for x in TYPES if x != t])
        elif r < 0.24 and e > s:
            s, e = (s + 1, e) if rng.random() < 0.5 else (s, e - 1)
        elif r < 0.32:
            s, e = (s - rng.randint(1, 2), e) if rng.random() < 0.5 else (s, e + rng.randint(1, 2))
        elif r < 0.38:
            d = rng.choice((-1, 1))
            s, e = s + d, e + d
        elif r < 0.44 and e > s:
            m = rng.randint(s, e - 1)
            out.append((s, m, t))
            s = m + 1
        if overlapping and rng.random() < 0.15:  # a second guess over the same words
            out.append((s, min(e + rng.randint(-1, 1), n - 1), rng.choice(TYPES)))
        out.append((s, e, t))
    while rng.random() < 0.2:
        s = rng.randrange(n)
        out.append((s, s + rng.randint(0, 2), rng.choice(TYPES)))
    clipped = [(max(s, 0), min(e, n - 1), t) for s, e, t in out]
    clipped = [(s, e, t) for s, e, t in clipped if s <= e]
    if overlapping:
        rng.shuffle(clipped)
        return clipped
    kept: list[Mention] = []
    for s, e, t in sorted(clipped):
        if not kept or s > kept[-1][1]:
            kept.append((s, e, t))
    return kept


def bio(mentions: Sequence[Mention], n: int, rng: random.Random, stray: float) -> list[str]:
    """BIO labels of non-overlapping mentions, with some invalid transitions (stray I-)."""
    labels = ["O"] * n
    for s, e, t in mentions:
        labels[s] = f"B-{t}"
        for i in range(s + 1, e + 1):
            labels[i] = f"I-{t}"
    for i in range(n):
        if rng.random() < stray:
            labels[i] = f"I-{rng.choice(TYPES)}"
    return labels


def as_dicts(docs: Sequence[Sequence[Mention]]) -> list[list[dict[str, Any]]]:
    return [[{"label": t, "start": s, "end": e} for s, e, t in doc] for doc in docs]


def as_conll(tokens: Sequence[Sequence[str]], labels: Sequence[Sequence[str]]) -> str:
    return "\n\n".join(
        "\n".join(f"{w}\t{x}" for w, x in zip(ws, xs, strict=True)) for ws, xs in zip(tokens, labels, strict=True)
    )


@pytest.fixture(scope="module")
def btc_test(btc: Path) -> tuple[list[list[str]], list[list[str]]]:
    return read_btc(btc / "test.txt")


def btc_prediction(
    btc_test: tuple[list[list[str]], list[list[str]]], seed: int, overlapping: bool
) -> tuple[list[list[Mention]], list[list[Mention]]]:
    rng = random.Random(seed)
    tokens, labels = btc_test
    gold = [bio_mentions(x) for x in labels]
    return gold, [perturb(m, len(w), rng, overlapping) for m, w in zip(gold, tokens, strict=True)]


def test_btc_list_loader(btc_test: tuple[list[list[str]], list[list[str]]]) -> None:
    tokens, labels = btc_test
    _, pred = btc_prediction(btc_test, 11, overlapping=False)
    rng = random.Random(12)
    pred_labels = [bio(m, len(w), rng, 0.01) for m, w in zip(pred, tokens, strict=True)]
    got = compare(labels, pred_labels, list(TYPES), loader="list")
    assert got.raised is None and got.cells == 2001 * 4 * 4
    assert got.differing == 0


def test_btc_conll_loader(btc: Path, btc_test: tuple[list[list[str]], list[list[str]]]) -> None:
    """The reference is the file's text as it is; the prediction is written from BTC's tokens."""
    tokens, _ = btc_test
    _, pred = btc_prediction(btc_test, 22, overlapping=False)
    rng = random.Random(23)
    text = as_conll(tokens, [bio(m, len(w), rng, 0.01) for m, w in zip(pred, tokens, strict=True)])
    got = compare((btc / "test.txt").read_text(encoding="utf-8"), text, ["PER", "LOC"], loader="conll")
    assert got.raised is None and got.cells == 2001 * 4 * 3
    assert got.differing == 0


def test_btc_dict_loader_with_overlapping_predictions_in_any_order(
    btc_test: tuple[list[list[str]], list[list[str]]],
) -> None:
    """Predictions that overlap each other, in shuffled order: where nervaluate's order matters."""
    gold, pred = btc_prediction(btc_test, 33, overlapping=True)
    got = compare(as_dicts(gold), as_dicts(pred), list(TYPES), loader="dict", percentage=40)
    assert got.raised is None
    assert got.differing == 0


# --------------------------------------------------------------------------------------------
# Random inputs, each loader.

LABELS = ("A", "B", "C")
PERCENTAGES = st.sampled_from([1.0, 1, 20, 29, 33.33, 50, 66.67, 100.0]) | st.floats(1.0, 100.0)


@st.composite
def tags(draw: st.DrawFn) -> list[str]:
    return draw(st.lists(st.sampled_from([*LABELS, "D"]), min_size=1, max_size=4, unique=True))


@st.composite
def dict_docs(draw: st.DrawFn) -> tuple[list[list[Mention]], list[list[Mention]]]:
    """Documents of a few entities in a narrow window, predictions near the reference or anywhere."""
    true: list[list[Mention]] = []
    pred: list[list[Mention]] = []
    for _ in range(draw(st.integers(1, 3))):
        doc = []
        for _ in range(draw(st.integers(0, 4))):
            s = draw(st.integers(-2, 10))
            doc.append((s, s + draw(st.integers(0, 4)), draw(st.sampled_from(LABELS))))
        guess = []
        for _ in range(draw(st.integers(0, 5))):
            if doc and draw(st.booleans()):
                s, e, t = draw(st.sampled_from(doc))
                s += draw(st.integers(-2, 2))
                e = max(s, e + draw(st.integers(-2, 2)))
                t = t if draw(st.integers(0, 2)) else draw(st.sampled_from(LABELS))
            else:
                s = draw(st.integers(-2, 10))
                e, t = s + draw(st.integers(0, 4)), draw(st.sampled_from(LABELS))
            guess.append((s, e, t))
        true.append(doc)
        pred.append(guess)
    return true, pred


@SETTINGS
@given(dict_docs(), tags(), PERCENTAGES, st.randoms(use_true_random=False))
def test_random_dict_input(
    docs: tuple[list[list[Mention]], list[list[Mention]]], tags: list[str], percentage: float, rng: random.Random
) -> None:
    true, pred = docs
    loader = "default" if true[0] else "dict"  # difference 5 is pinned below
    compare(as_dicts(true), as_dicts(pred), tags, loader=loader, percentage=percentage)
    # In any order of either list, nervaluate's figures for that order.
    shuffled = [rng.sample(doc, len(doc)) for doc in pred]
    reordered = [rng.sample(doc, len(doc)) for doc in true]
    compare(as_dicts(reordered), as_dicts(shuffled), tags, loader="dict", percentage=percentage)


@settings(max_examples=20, deadline=None)
@given(dict_docs(), tags(), st.sampled_from(SCHEMES))
def test_random_reports(docs: tuple[list[list[Mention]], list[list[Mention]]], tags: list[str], scheme: str) -> None:
    true, pred = docs
    compare(as_dicts(true), as_dicts(pred), tags, loader="dict", reports=scheme)


VALID = ("O", "O", "O", "B-A", "I-A", "B-B", "I-B", "B-C", "I-C")
INVALID = ("E-A", "S-B", "B-", "I-", "O-A", "b-A", "BA")


@st.composite
def label_docs(draw: st.DrawFn, same_lengths: bool, invalid: bool) -> tuple[list[list[str]], list[list[str]]]:
    vocab = st.sampled_from(VALID + INVALID) if invalid and draw(st.integers(0, 3)) == 0 else st.sampled_from(VALID)
    true: list[list[str]] = []
    pred: list[list[str]] = []
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(st.lists(vocab, max_size=12))
        if same_lengths or draw(st.booleans()):
            guess = [x if draw(st.integers(0, 3)) else draw(vocab) for x in doc]
        else:
            guess = draw(st.lists(vocab, max_size=12))
        true.append(doc)
        pred.append(guess)
    return true, pred


def first_invalid(*sides: Sequence[Sequence[str]]) -> str | None:
    for side in sides:
        for doc in side:
            for x in doc:
                if x not in VALID:
                    return x
    return None


def compare_or_invalid(true: Any, pred: Any, tags: list[str], loader: str, bad: str | None, percentage: float) -> None:
    """``compare``; with a tag outside O/B-X/I-X, ours raises for it (difference 3) and nervaluate
    raises the same or reads on."""
    if bad is None:
        compare(true, pred, tags, loader=loader, percentage=percentage)
        return
    with pytest.raises(ValueError, match=r"^Invalid tag format: ") as raised:
        Evaluator(true, pred, tags, loader=loader, min_overlap_percentage=percentage)
    assert isinstance(raised.value, InputError)
    assert str(raised.value) == f"Invalid tag format: {bad}"
    try:
        TheirEvaluator(true, pred, tags, loader=loader, min_overlap_percentage=percentage)
    except ValueError as error:  # at a later invalid tag, or a check made after reading on
        assert str(error).startswith(("Invalid tag format: ", "Number of predicted documents"))


@SETTINGS
@given(label_docs(same_lengths=True, invalid=True), tags(), PERCENTAGES, st.booleans())
def test_random_list_input(
    docs: tuple[list[list[str]], list[list[str]]], tags: list[str], percentage: float, default: bool
) -> None:
    true, pred = docs
    loader = "default" if default and true[0] else "list"
    compare_or_invalid(true, pred, tags, loader, first_invalid(true, pred), percentage)


@st.composite
def conll_text(draw: st.DrawFn, docs: list[list[str]]) -> str:
    """nervaluate's CoNLL string with its quirks: whitespace-only lines (skipped but counted as
    tokens), a third newline between documents (an empty first line), extra columns."""
    out = []
    for doc in docs:
        lines = [f"w{i}\t{x}" + ("\tx" if draw(st.integers(0, 5)) == 0 else "") for i, x in enumerate(doc)]
        for _ in range(draw(st.integers(0, 2))):
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from([" ", "\t", "  \t "])))
        out.append("\n".join(lines))
    glue = [draw(st.sampled_from(["\n\n", "\n\n", "\n\n\n"])) for _ in out]
    return "".join(x + g for x, g in zip(out, glue, strict=True))[: -len(glue[-1])] + draw(
        st.sampled_from(["", "\n", "\n\n"])
    )


@SETTINGS
@given(st.data(), label_docs(same_lengths=False, invalid=True), tags(), PERCENTAGES, st.booleans())
def test_random_conll_input(
    data: st.DataObject,
    docs: tuple[list[list[str]], list[list[str]]],
    tags: list[str],
    percentage: float,
    default: bool,
) -> None:
    true, pred = docs
    t, p = data.draw(conll_text(true)), data.draw(conll_text(pred))
    compare_or_invalid(t, p, tags, "default" if default else "conll", first_invalid(true, pred), percentage)


@SETTINGS
@given(label_docs(same_lengths=True, invalid=False))
def test_helpers_match_nervaluate(docs: tuple[list[list[str]], list[list[str]]]) -> None:
    true, _ = docs
    assert compat.list_to_spans(true) == nervaluate.list_to_spans(true)
    for doc in true:
        assert compat.collect_named_entities(doc) == nervaluate.collect_named_entities(doc)
    text = "\n\n".join("\n".join(f"w\t{x}" for x in doc) for doc in true)
    assert compat.conll_to_spans(text) == nervaluate.conll_to_spans(text)
    flat = [x for doc in true for x in [*doc, ""]]
    assert compat.split_list(flat) == nervaluate.split_list(flat)
    assert compat.split_list(flat, ["O"]) == nervaluate.split_list(flat, ["O"])


# --------------------------------------------------------------------------------------------
# The interface and what is equal outright.


# What nervaluate/__init__.py exports.
NERVALUATE_NAMES = ("Evaluator", "collect_named_entities", "conll_to_spans", "list_to_spans", "split_list")


def test_same_names_and_signatures() -> None:
    public = {n for n in dir(nervaluate) if not n.startswith("_") and not inspect.ismodule(getattr(nervaluate, n))}
    assert public == set(NERVALUATE_NAMES)
    for name in NERVALUATE_NAMES:
        assert name in compat.__all__
        ours, theirs = getattr(compat, name), getattr(nervaluate, name)
        assert inspect.signature(ours).parameters.keys() == inspect.signature(theirs).parameters.keys(), name
    for method in ("evaluate", "results_to_csv", "summary_report", "summary_report_indices"):
        a = inspect.signature(getattr(Evaluator, method)).parameters
        b = inspect.signature(getattr(TheirEvaluator, method)).parameters
        assert [(p.name, p.default) for p in a.values()] == [(p.name, p.default) for p in b.values()], method
    a = inspect.signature(Evaluator).parameters
    b = inspect.signature(TheirEvaluator).parameters
    assert [(p.name, p.default) for p in a.values()] == [(p.name, p.default) for p in b.values()]
    for cls in ("Entity", "EvaluationResult", "EvaluationIndices"):
        ours_fields = [f.name for f in dataclasses.fields(getattr(compat, cls))]
        assert ours_fields == [f.name for f in dataclasses.fields(getattr(nervaluate.entities, cls))], cls
    for cls in ("ConllLoader", "ListLoader", "DictLoader"):
        assert hasattr(getattr(compat, cls)(), "load")


def test_docstring_examples() -> None:
    result = doctest.testmod(compat)
    assert result.attempted >= 2 and result.failed == 0


README_TRUE = [
    ["O", "B-PER", "I-PER", "O", "O", "O", "B-ORG", "I-ORG"],
    ["O", "B-LOC", "B-PER", "I-PER", "O", "O", "B-DATE"],
]
README_PRED = [
    ["O", "O", "B-PER", "I-PER", "O", "O", "B-ORG", "I-ORG"],
    ["O", "B-LOC", "I-LOC", "B-PER", "O", "O", "B-DATE"],
]


def test_readme_example_prints_the_same() -> None:
    args = (README_TRUE, README_PRED, ["PER", "ORG", "LOC", "DATE"])
    ours, theirs = Evaluator(*args, loader="list"), TheirEvaluator(*args, loader="list")
    assert compare(*args, loader="list").differing == 0
    assert ours.summary_report() == theirs.summary_report()
    assert ours.summary_report(digits=4) == theirs.summary_report(digits=4)
    for scheme in SCHEMES:
        assert ours.summary_report(mode="entities", scenario=scheme) == theirs.summary_report(
            mode="entities", scenario=scheme
        )
        assert ours.summary_report_indices(scenario=scheme) == theirs.summary_report_indices(scenario=scheme)
        colored = ours.summary_report_indices(scenario=scheme, colors=True)
        assert colored == theirs.summary_report_indices(scenario=scheme, colors=True)
    assert ours.results_to_csv() == theirs.results_to_csv()
    assert "ent_type            5           0           0           0           0        1.00" in ours.summary_report()


def test_results_to_csv_writes_a_file(tmp_path: Path) -> None:
    args = (README_TRUE, README_PRED, ["PER", "ORG", "LOC", "DATE"])
    assert Evaluator(*args).results_to_csv(file_path=str(tmp_path / "a.csv")) is None
    TheirEvaluator(*args).results_to_csv(file_path=str(tmp_path / "b.csv"))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_zero_denominators_give_the_int_zero_as_nervaluate_does() -> None:
    """csv and json write nervaluate's 0 as 0, not 0.0."""
    args = ([[{"label": "X", "start": 0, "end": 1}]], [[]], ["X"])
    r = Evaluator(*args).evaluate()["overall"]["strict"]
    assert (r.precision, r.recall, r.f1) == (0, 0.0, 0)
    assert type(r.precision) is int and type(r.f1) is int
    assert compare(*args).differing == 0
    assert Evaluator(*args).results_to_csv() == TheirEvaluator(*args).results_to_csv()


def test_min_overlap_percentage_rounds_as_nervaluate_does() -> None:
    """nervaluate compares (29 / 100) * 100.0 = 28.999999999999996 with 29: not enough overlap."""
    true = [[{"label": "X", "start": 0, "end": 99}]]
    pred = [[{"label": "X", "start": 0, "end": 28}]]
    for percentage in (28.999999999999996, 29, 29.000000000000004, 1, 100):
        assert compare(true, pred, ["X"], percentage=percentage).differing == 0
    r = Evaluator(true, pred, ["X"], min_overlap_percentage=29).evaluate()["overall"]["partial"]
    assert (r.partial, r.missed, r.spurious) == (0, 1, 1)
    r = Evaluator(true, pred, ["X"], min_overlap_percentage=28.999999999999996).evaluate()["overall"]["partial"]
    assert (r.partial, r.missed, r.spurious) == (1, 0, 0)


def test_no_documents() -> None:
    for loader, empty in (("list", []), ("dict", []), ("conll", ""), ("conll", " \n\n")):
        assert compare(empty, empty, ["X"], loader=loader).raised is None
    assert Evaluator([], [], ["X"], loader="list").evaluate() == {
        "overall": {},
        "entities": {},
        "overall_indices": {},
        "entity_indices": {},
    }


BAD_INPUT: list[tuple[Any, Any, str, Any]] = [
    ("a\tB-X", [["B-X"]], "default", 1.0),  # a side of each kind
    ([["B-X"]], [["B-X"], ["O"]], "list", 1.0),
    ([["B-X", "O"]], [["B-X"]], "list", 1.0),
    ([["B-X", 3]], [["B-X", "O"]], "list", 1.0),
    ([["B-X"], "O"], [["B-X"], ["O"]], "list", 1.0),
    ("B-X", "B-X", "list", 1.0),
    ([["B-X"]], [["B-X"]], "jsonl", 1.0),
    ((("B-X",),), (("B-X",),), "default", 1.0),
    ([["B-X"]], [["B-X"]], "list", 0.5),
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
]


@pytest.mark.parametrize(("true", "pred", "loader", "percentage"), BAD_INPUT)
def test_bad_input_raises_what_nervaluate_raises(true: Any, pred: Any, loader: str, percentage: float) -> None:
    """The same exception type and message, and also a spanscore error."""
    got = compare(true, pred, ["X"], loader=loader, percentage=percentage)
    assert got.raised is not None


def test_errors_are_spanscore_errors_too() -> None:
    with pytest.raises(OptionError, match=r"^Unknown loader: jsonl$"):
        Evaluator([["B-X"]], [["B-X"]], ["X"], loader="jsonl")
    with pytest.raises(OptionError, match=r"^min_overlap_percentage must be between 1\.0 and 100\.0$"):
        Evaluator([["B-X"]], [["B-X"]], ["X"], min_overlap_percentage=0)
    with pytest.raises(InputError, match=r"^Number of predicted documents does not equal true$"):
        Evaluator("a\tB-X", "a\tO\n\nb\tO", ["X"])
    ev = Evaluator(README_TRUE, README_PRED, ["PER"])
    for call in (ev.summary_report, ev.results_to_csv, ev.summary_report_indices):
        with pytest.raises(ValueError, match="Invalid mode"):
            call(mode="all")
        with pytest.raises(OptionError, match="Invalid scenario"):
            call(mode="entities", scenario="type")


# --------------------------------------------------------------------------------------------
# The deliberate differences, one by one: nervaluate's answer, ours, and why.


def counts(result: Any) -> tuple[int, ...]:
    return tuple(getattr(result, c) for c in CATEGORIES)


def both(true: list[list[Mention]], pred: list[list[Mention]], tags: list[str]) -> tuple[dict, dict]:
    return (
        TheirEvaluator(as_dicts(true), as_dicts(pred), tags, loader="dict").evaluate(),
        Evaluator(as_dicts(true), as_dicts(pred), tags, loader="dict").evaluate(),
    )


def test_difference_3_tags_outside_bio_raise() -> None:
    """nervaluate reads E-PER after B-PER as going on (one entity PER 0-1) and B- as type "";
    it raises only where such a tag starts an entity. Ours raise wherever they stand."""
    for tags_ in (["B-PER", "E-PER"], ["B-PER", "I-PER", "S-PER"], ["B-"]):
        theirs = TheirEvaluator([tags_], [tags_], ["PER", ""], loader="list")
        assert theirs.true[0][0].start == 0
        assert nervaluate.collect_named_entities(tags_)
        bad = next(x for x in tags_ if not re.fullmatch(r"O|[BI]-.+", x))
        with pytest.raises(ValueError, match=f"^Invalid tag format: {bad}$") as raised:
            Evaluator([tags_], [tags_], ["PER", ""], loader="list")
        assert isinstance(raised.value, InputError)
        with pytest.raises(ValueError, match=f"^Invalid tag format: {bad}$"):
            compat.collect_named_entities(tags_)
        with pytest.raises(ValueError, match=f"^Invalid tag format: {bad}$"):
            Evaluator("\n".join(f"w\t{x}" for x in tags_), "w\tO", ["PER"], loader="conll")
    # Where nervaluate raises too, the message is the same.
    assert compare([["O", "E-PER"]], [["O", "O"]], ["PER"]).raised == "Invalid tag format: E-PER"


def test_difference_4_an_entity_ending_before_its_start_raises() -> None:
    """nervaluate divides by zero for an entity that ends one token before it starts."""
    true = [[{"label": "X", "start": 3, "end": 2}]]
    pred = [[{"label": "X", "start": 2, "end": 4}]]
    with pytest.raises(ZeroDivisionError):
        TheirEvaluator(true, pred, ["X"]).evaluate()
    with pytest.raises(ValueError, match="ends before it starts") as raised:
        Evaluator(true, pred, ["X"])
    assert isinstance(raised.value, InputError)


def test_difference_5_default_loader_with_an_empty_first_document() -> None:
    """The first document has no entity: nervaluate's inference reads true[0][0]."""
    true = [[], [{"label": "X", "start": 0, "end": 1}]]
    pred = [[{"label": "X", "start": 0, "end": 0}], []]
    with pytest.raises(IndexError):
        TheirEvaluator(true, pred, ["X"])
    ours = Evaluator(true, pred, ["X"]).evaluate()
    assert figures(ours["overall"]["strict"]) == figures(
        TheirEvaluator(true, pred, ["X"], loader="dict").evaluate()["overall"]["strict"]
    )
    assert Evaluator([[], ["B-X"]], [[], ["B-X"]], ["X"]).evaluate()["overall"]["strict"].correct == 1


def test_difference_6_summary_report_indices_names_the_right_entity() -> None:
    """A missed index counts in the references; an index counts in the list filtered by tags.
    nervaluate looks both up in the unfiltered predictions."""
    true = [[(0, 0, "PER"), (2, 2, "PER")]]
    pred = [[(5, 5, "ORG"), (2, 2, "PER")]]
    theirs = TheirEvaluator(as_dicts(true), as_dicts(pred), ["PER"])
    ours = Evaluator(as_dicts(true), as_dicts(pred), ["PER"])
    their_text, our_text = theirs.summary_report_indices(), ours.summary_report_indices()
    # Correct (0, 0) is PER 2-2, the first PER prediction; nervaluate shows the ORG one.
    assert "Correct              0          0        Label=ORG, Start=5, End=5" in their_text
    assert "Correct              0          0        Label=PER, Start=2, End=2" in our_text
    # Missed (0, 0) is the reference PER 0-0; nervaluate shows a prediction.
    assert "Missed               0          0        Label=ORG, Start=5, End=5" in their_text
    assert "Missed               0          0        Label=PER, Start=0, End=0" in our_text
    missed_only = Evaluator(as_dicts([[(0, 0, "X"), (2, 2, "X")]]), as_dicts([[]]), ["X"])
    with pytest.raises(IndexError):
        TheirEvaluator(
            as_dicts([[(0, 0, "X"), (2, 2, "X")]]), as_dicts([[(9, 9, "X")]]), ["X"]
        ).summary_report_indices()
    assert "Label=X, Start=2, End=2" in missed_only.summary_report_indices(mode="entities")


def test_difference_7_tags_are_sorted() -> None:
    """nervaluate builds ``entities`` from a set of tags: its order changes with the hash seed, and
    so would every listing made from it. Ours is sorted."""
    true = [["B-C", "B-A", "B-B", "O"]]
    ours = Evaluator(true, true, ["A", "B", "C"]).evaluate()
    theirs = TheirEvaluator(true, true, ["A", "B", "C"]).evaluate()
    assert list(ours["entities"]) == list(ours["entity_indices"]) == ["A", "B", "C"]
    assert set(theirs["entities"]) == {"A", "B", "C"}


@pytest.mark.parametrize(
    ("true", "pred", "tags", "loader", "named"),
    [
        (None, [["B-X"]], ["X"], "list", "true is None"),
        ([["B-X"]], None, ["X"], "list", "pred is None"),
        ([None], [["B-X"]], ["X"], "list", r"true\[0\] is None"),
        ([[]], [None], ["X"], "dict", r"pred\[0\] is None"),
        (None, "w\tO", ["X"], "conll", "true is None"),
        ([["B-X"]], [["B-X"]], None, "list", "tags must be a list"),
        ([["B-X"]], [["B-X"]], "X", "list", "tags must be a list"),
    ],
)
def test_none_inputs_name_the_argument(true: Any, pred: Any, tags: Any, loader: str, named: str) -> None:
    """nervaluate fails on these with a TypeError from inside (``len()`` of None); the drop-in
    names the argument, with an error that is a TypeError and a spanscore InputError."""
    with pytest.raises(TypeError, match=named) as raised:
        Evaluator(true, pred, tags, loader=loader).evaluate()
    assert isinstance(raised.value, InputError)
