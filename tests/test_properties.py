"""Property tests: what must hold for any input, checked on random span sets and label sequences.

Span sets (format="spans") may overlap, nest and repeat on either side; label sequences are random
BIO with every kind of invalid transition. Predictions are drawn near the reference (copies,
shifted or resized copies, relabelled copies) mixed with noise, so that partial matches, ties and
crowded groups of overlapping mentions are common.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from fractions import Fraction
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore

Mention = tuple[int, int, str]
Docs = list[list[Mention]]
Labels = list[list[str]]

TYPES = ("A", "B", "C")
CRITERIA = ("strict", "boundary", "left", "right", "overlap")
SCHEMES = ("strict", "exact", "partial", "type")
PRF = ("precision", "recall", "f1")
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")
CREDITS: tuple[Any, ...] = (0.5, 0.25, 1.0, "dice", "iou")

SETTINGS = settings(max_examples=100, deadline=None)


# --------------------------------------------------------------------------------------------
# Strategies.


@st.composite
def mention(draw: st.DrawFn, width: int = 16) -> Mention:
    start = draw(st.integers(0, width))
    return start, start + draw(st.integers(1, 5)), draw(st.sampled_from(TYPES))


@st.composite
def near(draw: st.DrawFn, m: Mention) -> Mention:
    """A prediction near a reference mention: a copy, a shift, a resize, a relabel, or a mix."""
    s, e, t = m
    if draw(st.booleans()):
        s = max(0, s + draw(st.integers(-2, 2)))
    if draw(st.booleans()):
        e = e + draw(st.integers(-2, 2))
    if draw(st.integers(0, 3)) == 0:
        t = draw(st.sampled_from(TYPES))
    return (s, max(e, s + 1), t)


@st.composite
def span_pairs(draw: st.DrawFn, min_docs: int = 1) -> tuple[Docs, Docs]:
    n = draw(st.integers(min_docs, 4))
    gold = [draw(st.lists(mention(), max_size=6)) for _ in range(n)]
    pred = []
    for doc in gold:
        p = [draw(near(m)) for m in doc if draw(st.integers(0, 5))]
        p += draw(st.lists(mention(), max_size=3))
        pred.append(draw(st.permutations(p)))
    return gold, pred


@st.composite
def label_pairs(draw: st.DrawFn, min_sentences: int = 1) -> tuple[Labels, Labels]:
    vocab = ["O", "O", *(f"{p}-{t}" for p in "BI" for t in TYPES)]
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), min_size=1, max_size=10), min_size=min_sentences, max_size=5))
    pred = [[draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in s] for s in gold]
    return gold, pred


def evaluate_spans(gold: Docs, pred: Docs, **options: Any) -> spanscore.Report:
    return spanscore.evaluate(reference=gold, predicted=pred, format="spans", **options)


def evaluate_labels(gold: Labels, pred: Labels, **options: Any) -> spanscore.Report:
    return spanscore.evaluate(reference=gold, predicted=pred, format="labels", **options)


# --------------------------------------------------------------------------------------------
# Order independence.


@SETTINGS
@given(span_pairs(), st.sampled_from(CREDITS), st.sampled_from(("optimal", "greedy")), st.randoms())
def test_order_of_spans_does_not_matter(pair: tuple[Docs, Docs], credit: Any, matching: str, rnd: Any) -> None:
    gold, pred = pair
    before = evaluate_spans(gold, pred, credit=credit, matching=matching).to_dict()
    shuffled_gold = [rnd.sample(doc, len(doc)) for doc in gold]
    shuffled_pred = [rnd.sample(doc, len(doc)) for doc in pred]
    after = evaluate_spans(shuffled_gold, shuffled_pred, credit=credit, matching=matching).to_dict()
    assert after == before


# --------------------------------------------------------------------------------------------
# Perfect predictions.


@SETTINGS
@given(span_pairs())
def test_gold_against_itself_scores_one_everywhere(pair: tuple[Docs, Docs]) -> None:
    gold, _ = pair
    d = evaluate_spans(gold, gold).to_dict()
    n = sum(len(doc) for doc in gold)
    expected = 1.0 if n else 0.0  # no mention at all: zero_division (0 by default)
    for name in (*CRITERIA, "token"):
        assert all(d["metrics"][name][k] == expected for k in PRF), name
    for scheme in SCHEMES:
        s = d["semeval"][scheme]
        assert all(s[k] == expected for k in PRF), scheme
        assert (s["correct"], s["incorrect"], s["partial"], s["missed"], s["spurious"]) == (n, 0, 0, 0, 0)
    for t, block in d["per_type"].items():
        for name in (*CRITERIA, "token"):
            assert all(block["metrics"][name][k] == 1.0 for k in PRF), (t, name)
        for scheme in SCHEMES:
            assert all(block["semeval"][scheme][k] == 1.0 for k in PRF), (t, scheme)
    assert d["errors"]["correct"] == n
    assert all(d["errors"][k] == 0 for k in d["errors"] if k not in ("correct", "per_type", "examples"))


@SETTINGS
@given(label_pairs())
def test_labels_against_themselves_score_one_everywhere(pair: tuple[Labels, Labels]) -> None:
    gold, _ = pair
    for repair in ("conlleval", "discard"):
        d = evaluate_labels(gold, gold, repair=repair).to_dict()
        expected = 1.0 if d["corpus"]["reference_mentions"] else 0.0
        for name in (*CRITERIA, "token"):
            assert all(d["metrics"][name][k] == expected for k in PRF), (repair, name)
        for scheme in SCHEMES:
            assert all(d["semeval"][scheme][k] == expected for k in PRF), (repair, scheme)


# --------------------------------------------------------------------------------------------
# Orderings between criteria.


def at_most(d: dict[str, Any], a: str, b: str, section: str = "metrics") -> None:
    for k in PRF:
        assert d[section][a][k] <= d[section][b][k], f"{section} {a} {k} > {b} {k}"


@SETTINGS
@given(span_pairs(), st.sampled_from(CREDITS))
def test_criteria_are_ordered(pair: tuple[Docs, Docs], credit: Any) -> None:
    gold, pred = pair
    d = evaluate_spans(gold, pred, credit=credit).to_dict()
    at_most(d, "strict", "left")
    at_most(d, "strict", "right")
    at_most(d, "left", "overlap")
    at_most(d, "right", "overlap")
    at_most(d, "strict", "boundary")
    # Exact matches are fixed first: every type-aware criterion finds the same full matches (the
    # paper's 2109 exact matches under every strategy).
    assert len({d["metrics"][c]["full"] for c in ("strict", "left", "right", "overlap")}) == 1
    assert d["metrics"]["boundary"]["full"] >= d["metrics"]["strict"]["full"]
    at_most(d, "strict", "exact", "semeval")
    at_most(d, "exact", "partial", "semeval")
    at_most(d, "strict", "type", "semeval")
    assert d["semeval"]["strict"]["correct"] == d["metrics"]["strict"]["full"]


@SETTINGS
@given(label_pairs())
def test_criteria_are_ordered_on_labels(pair: tuple[Labels, Labels]) -> None:
    d = evaluate_labels(*pair).to_dict()
    at_most(d, "strict", "left")
    at_most(d, "strict", "right")
    at_most(d, "left", "overlap")
    at_most(d, "right", "overlap")
    at_most(d, "strict", "boundary")


# --------------------------------------------------------------------------------------------
# The matching is optimal: a brute-force search over every one-to-one matching agrees.

FULL, ZERO = Fraction(1), Fraction(0)


def pair_value(name: str, r: Mention, p: Mention, credit: Any) -> Fraction | None:
    """What matching r with p earns under a criterion or SemEval scheme; None: it may not be matched.

    Written from the definitions (Kong and Sullivan, section 5.1, and the scorer's README;
    SemEval-2013 as Lee Xin Jie and Batista (2018) explain it), not from
    spanscore's tables.
    """
    overlap = min(r[1], p[1]) - max(r[0], p[0])
    if overlap <= 0:
        return None
    same_type, same_start, same_end = r[2] == p[2], r[0] == p[0], r[1] == p[1]
    same_span = same_start and same_end
    if credit == "dice":
        part = Fraction(2 * overlap, (r[1] - r[0]) + (p[1] - p[0]))
    elif credit == "iou":
        part = Fraction(overlap, (r[1] - r[0]) + (p[1] - p[0]) - overlap)
    else:
        part = Fraction(credit)
    if same_type and same_span:
        return FULL
    table: dict[str, Fraction | None] = {
        "strict": None,
        "boundary": FULL if same_span else None,
        "left": part if same_type and same_start else None,
        "right": part if same_type and same_end else None,
        "overlap": part if same_type else None,
        "semeval strict": ZERO,
        "semeval exact": FULL if same_span else ZERO,
        "semeval partial": FULL if same_span else Fraction(1, 2),
        "semeval type": FULL if same_type else ZERO,
    }
    return table[name]


def best_assignment(value: list[list[Fraction | None]]) -> tuple[Fraction, int]:
    """(credit, pairs), lexicographically largest over the matchings of rows to columns."""

    @cache
    def search(i: int, used: int) -> tuple[Fraction, int]:
        if i == len(value):
            return Fraction(0), 0
        best = search(i + 1, used)
        for j, v in enumerate(value[i]):
            if v is not None and not used >> j & 1:
                c, n = search(i + 1, used | 1 << j)
                best = max(best, (c + v, n + 1))
        return best

    return search(0, 0)


def best_matching(name: str, gold: Docs, pred: Docs, credit: Any) -> tuple[Fraction, int]:
    """Exact pairs first, then the most credit, then the most pairs, over all one-to-one matchings."""
    total, pairs = Fraction(0), 0
    for g_doc, p_doc in zip(gold, pred, strict=True):
        free = list(p_doc)
        rest = []
        for r in g_doc:
            if r in free:
                free.remove(r)
                total, pairs = total + 1, pairs + 1
            else:
                rest.append(r)
        c, n = best_assignment([[pair_value(name, r, p, credit) for p in free] for r in rest])
        total, pairs = total + c, pairs + n
    return total, pairs


@SETTINGS
@given(span_pairs(), st.sampled_from(CREDITS))
def test_matching_is_optimal(pair: tuple[Docs, Docs], credit: Any) -> None:
    gold, pred = pair
    d = evaluate_spans(gold, pred, credit=credit).to_dict()
    greedy = evaluate_spans(gold, pred, credit=credit, matching="greedy").to_dict()
    for name in CRITERIA:
        best, n = best_matching(name, gold, pred, credit)
        m = d["metrics"][name]
        assert math.isclose(m["credit"], best, rel_tol=1e-9, abs_tol=1e-9), name
        assert m["full"] + m["partial"] == n, name
        assert greedy["metrics"][name]["credit"] <= m["credit"] + 1e-9, name
    for scheme in SCHEMES:
        best, n = best_matching(f"semeval {scheme}", gold, pred, credit)
        s = d["semeval"][scheme]
        assert s["correct"] + Fraction(1, 2) * s["partial"] == best, scheme
        assert s["correct"] + s["partial"] + s["incorrect"] == n, scheme


# --------------------------------------------------------------------------------------------
# Swapping reference and prediction.


def assert_swapped(d: dict[str, Any], s: dict[str, Any]) -> None:
    for name in (*CRITERIA, "token"):
        a, b = d["metrics"][name], s["metrics"][name]
        assert (a["precision"], a["recall"], a["f1"]) == (b["recall"], b["precision"], b["f1"]), name
        assert (a["predicted"], a["reference"]) == (b["reference"], b["predicted"]), name
    for name in CRITERIA:
        a, b = d["metrics"][name], s["metrics"][name]
        assert (a["full"], a["partial"]) == (b["full"], b["partial"]), name
        assert math.isclose(a["credit"], b["credit"], rel_tol=1e-12), name
    for scheme in SCHEMES:
        a, b = d["semeval"][scheme], s["semeval"][scheme]
        assert (a["missed"], a["spurious"]) == (b["spurious"], b["missed"]), scheme
        assert (a["possible"], a["actual"]) == (b["actual"], b["possible"]), scheme
        assert (a["precision"], a["recall"], a["f1"]) == (b["recall"], b["precision"], b["f1"]), scheme
        assert (a["correct"], a["incorrect"], a["partial"]) == (b["correct"], b["incorrect"], b["partial"]), scheme
    for t in d["per_type"]:
        for name in (*CRITERIA, "token"):
            a, b = d["per_type"][t]["metrics"][name], s["per_type"][t]["metrics"][name]
            assert (a["precision"], a["recall"]) == (b["recall"], b["precision"]), (t, name)


@SETTINGS
@given(span_pairs(), st.sampled_from(CREDITS))
def test_swapping_sides_swaps_precision_and_recall(pair: tuple[Docs, Docs], credit: Any) -> None:
    gold, pred = pair
    assert_swapped(
        evaluate_spans(gold, pred, credit=credit).to_dict(), evaluate_spans(pred, gold, credit=credit).to_dict()
    )


@SETTINGS
@given(label_pairs())
def test_swapping_label_sides_swaps_precision_and_recall(pair: tuple[Labels, Labels]) -> None:
    gold, pred = pair
    assert_swapped(evaluate_labels(gold, pred).to_dict(), evaluate_labels(pred, gold).to_dict())


# --------------------------------------------------------------------------------------------
# Additivity.


def without_examples(d: dict[str, Any]) -> dict[str, Any]:
    d = dict(d)
    d["errors"] = {k: v for k, v in d["errors"].items() if k != "examples"}
    return d


@SETTINGS
@given(span_pairs(min_docs=2), st.data())
def test_counts_of_parts_add_up_to_the_whole(pair: tuple[Docs, Docs], data: st.DataObject) -> None:
    gold, pred = pair
    k = data.draw(st.integers(1, len(gold) - 1))
    credit = data.draw(st.sampled_from(CREDITS))
    whole = evaluate_spans(gold, pred, credit=credit)
    first = evaluate_spans(gold[:k], pred[:k], credit=credit)
    second = evaluate_spans(gold[k:], pred[k:], credit=credit)
    assert first.counts.merge(second.counts) == whole.counts
    assert second.counts.merge(first.counts) == whole.counts
    assert without_examples(first.merge(second).to_dict()) == without_examples(whole.to_dict())


@SETTINGS
@given(label_pairs(min_sentences=2), st.data())
def test_label_counts_of_parts_add_up_to_the_whole(pair: tuple[Labels, Labels], data: st.DataObject) -> None:
    gold, pred = pair
    k = data.draw(st.integers(1, len(gold) - 1))
    whole = evaluate_labels(gold, pred).counts
    merged = evaluate_labels(gold[:k], pred[:k]).counts.merge(evaluate_labels(gold[k:], pred[k:]).counts)
    # Each format="labels" call is one document: two calls count two.
    assert merged.documents == 2 and whole.documents == 1
    assert dataclasses.replace(merged, documents=1) == whole


# --------------------------------------------------------------------------------------------
# Per-type counts add up to the totals.


def assert_types_add_up(d: dict[str, Any]) -> None:
    types = d["per_type"]
    for name in CRITERIA:
        for k in ("full", "partial", "predicted", "reference"):
            assert sum(types[t]["metrics"][name][k] for t in types) == d["metrics"][name][k], (name, k)
        total = sum(types[t]["metrics"][name]["credit"] for t in types)
        assert math.isclose(total, d["metrics"][name]["credit"], rel_tol=1e-12, abs_tol=1e-12), name
    for k in ("true_positive", "predicted", "reference"):
        assert sum(types[t]["metrics"]["token"][k] for t in types) == d["metrics"]["token"][k], k
    for scheme in SCHEMES:
        for c in CATEGORIES:
            assert sum(types[t]["semeval"][scheme][c] for t in types) == d["semeval"][scheme][c], (scheme, c)
    per = d["errors"]["per_type"]
    for k, v in d["errors"].items():
        if k not in ("per_type", "examples"):
            assert sum(per[t][k] for t in per) == v, k


@SETTINGS
@given(span_pairs(), st.sampled_from(CREDITS))
def test_per_type_counts_add_up(pair: tuple[Docs, Docs], credit: Any) -> None:
    assert_types_add_up(evaluate_spans(*pair, credit=credit).to_dict())


@SETTINGS
@given(label_pairs())
def test_per_type_label_counts_add_up(pair: tuple[Labels, Labels]) -> None:
    assert_types_add_up(evaluate_labels(*pair).to_dict())


# --------------------------------------------------------------------------------------------
# Token-level scores against a brute-force count.


def covered(docs: Docs) -> dict[str, set[tuple[int, int]]]:
    out: dict[str, set[tuple[int, int]]] = {t: set() for t in TYPES}
    for i, doc in enumerate(docs):
        for s, e, t in doc:
            out[t].update((i, k) for k in range(s, e))
    return out


def check_tokens(d: dict[str, Any], ref: Counter[str], pred: Counter[str], both: Counter[str]) -> None:
    for t, block in d["per_type"].items():
        tok = block["metrics"]["token"]
        assert (tok["true_positive"], tok["reference"], tok["predicted"]) == (both[t], ref[t], pred[t]), t
    tok = d["metrics"]["token"]
    tp, nr, np_ = sum(both.values()), sum(ref.values()), sum(pred.values())
    assert (tok["true_positive"], tok["reference"], tok["predicted"]) == (tp, nr, np_)
    assert tok["precision"] == (tp / np_ if np_ else 0.0)
    assert tok["recall"] == (tp / nr if nr else 0.0)


@SETTINGS
@given(span_pairs())
def test_token_counts_match_brute_force(pair: tuple[Docs, Docs]) -> None:
    gold, pred = pair
    g, p = covered(gold), covered(pred)
    check_tokens(
        evaluate_spans(gold, pred).to_dict(),
        Counter({t: len(g[t]) for t in TYPES}),
        Counter({t: len(p[t]) for t in TYPES}),
        Counter({t: len(g[t] & p[t]) for t in TYPES}),
    )


@SETTINGS
@given(label_pairs())
def test_label_token_counts_match_brute_force(pair: tuple[Labels, Labels]) -> None:
    """With conlleval's repair every typed label lies in a mention of its type."""
    gold, pred = pair
    kind = [
        (a.partition("-")[2], b.partition("-")[2])
        for g, p in zip(gold, pred, strict=True)
        for a, b in zip(g, p, strict=True)
    ]
    check_tokens(
        evaluate_labels(gold, pred).to_dict(),
        Counter(a for a, _ in kind if a),
        Counter(b for _, b in kind if b),
        Counter(a for a, b in kind if a and a == b),
    )
