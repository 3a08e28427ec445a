"""The plain count's shortcut for mentions matched by an identical twin gives what matching every
mention gives: the same counts, scores and error examples, whatever the encoding, the repair, the
criterion options and whether the mentions overlap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.stages import parts
from spanscore.stages.counts import Options, count_grouped
from spanscore.stages.spans import Spans

TYPES = ("A", "B", "C")
# Each encoding's prefixes, drawn in any order, so that most generated sequences break the scheme somewhere.
ENCODINGS = {"IOB1": "BI", "BIO": "BI", "BIOES": "BIES", "BILOU": "BILU"}
OPTIONS: tuple[dict[str, Any], ...] = (
    {},
    {"credit": "dice"},
    {"credit": "iou", "matching": "greedy"},
    {"credit": 1.0},
    {"credit": 0.0},
    {"min_overlap": 0.5, "min_overlap_of": "both"},
    {"min_overlap": 0.7, "min_overlap_of": "predicted", "matching": "greedy"},
)

Labels = list[list[str]]


def general(reference: Spans, predicted: Spans, options: Options, keep_details: bool = False) -> Any:
    return count_grouped(reference, predicted, options, keep_details=keep_details), reference, predicted


@st.composite
def label_pairs(draw: st.DrawFn, prefixes: str) -> tuple[Labels, Labels]:
    """Sentences of labels, and a prediction that copies most sentences and garbles the others."""
    vocab = ["O", "O", "O", *(f"{p}-{t}" for p in prefixes for t in TYPES)]
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), min_size=1, max_size=9), min_size=1, max_size=8))
    pred = []
    for sentence in gold:
        if draw(st.integers(0, 2)):
            pred.append(list(sentence))
        else:
            pred.append([draw(st.one_of(st.just(x), st.sampled_from(vocab))) for x in sentence])
    return gold, pred


def both_ways(monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    calls: list[int] = []

    def counted(reference: Spans, predicted: Spans, options: Options, keep_details: bool = False) -> Any:
        calls.append(len(reference))
        return apart(reference, predicted, options, keep_details)

    apart = parts.count_twins_apart
    with monkeypatch.context() as m:
        m.setattr(parts, "count_twins_apart", counted)
        fast = spanscore.evaluate(keep_details=False, **kw)
    assert calls  # the plain count took the shortcut's way
    with monkeypatch.context() as m:
        m.setattr(parts, "count_twins_apart", general)
        slow = spanscore.evaluate(keep_details=False, **kw)
    # The error examples too: they index the mentions left to match, not the chunk's.
    return (fast.to_dict(), fast.error_examples(limit=5)), (slow.to_dict(), slow.error_examples(limit=5))


@settings(max_examples=150, deadline=None)
@given(
    st.data(), st.sampled_from(sorted(ENCODINGS)), st.sampled_from(("conlleval", "discard")), st.sampled_from(OPTIONS)
)
def test_twins_apart_on_labels_is_the_general_count(
    data: st.DataObject, labels: str, repair: str, options: dict[str, Any]
) -> None:
    gold, pred = data.draw(label_pairs(ENCODINGS[labels]))
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both_ways(
            monkeypatch,
            reference=gold,
            predicted=pred,
            format="labels",
            reading=spanscore.Reading(format="labels", labels=labels, repair=repair),  # type: ignore[arg-type]
            scoring=spanscore.Scoring(**options),
        )
    assert fast == slow


Mention = tuple[int, int, str]


@st.composite
def span_pairs(draw: st.DrawFn) -> tuple[list[list[Mention]], list[list[Mention]]]:
    """Documents of mentions that may overlap, nest or repeat, and a prediction copying most."""
    mention = st.tuples(st.integers(0, 20), st.integers(1, 4), st.sampled_from(TYPES)).map(
        lambda m: (m[0], m[0] + m[1], m[2])
    )
    gold = draw(st.lists(st.lists(mention, max_size=6), min_size=1, max_size=4))
    pred = []
    for doc in gold:
        kept = [m for m in doc if draw(st.integers(0, 4))]
        pred.append(kept + draw(st.lists(mention, max_size=2)))
    return gold, pred


@settings(max_examples=150, deadline=None)
@given(span_pairs(), st.sampled_from(OPTIONS))
def test_twins_apart_on_any_spans_is_the_general_count(
    pair: tuple[list[list[Mention]], list[list[Mention]]], options: dict[str, Any]
) -> None:
    gold, pred = pair
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both_ways(
            monkeypatch, reference=gold, predicted=pred, format="spans", scoring=spanscore.Scoring(**options)
        )
    assert fast == slow


def spans(*mentions: tuple[int, int, int]) -> Spans:
    start, end, type_ = (np.array(x, dtype=np.int64) for x in zip(*mentions, strict=True))
    return Spans.build(start, end, type_, np.zeros(len(mentions), dtype=np.int64), TYPES)


def test_twins_are_found_only_where_no_mention_overlaps_another() -> None:
    ref = spans((0, 2, 0), (3, 5, 1), (6, 8, 2), (9, 10, 0))
    pred = spans((0, 2, 0), (3, 5, 2), (6, 7, 2), (9, 10, 0))
    found = parts.twins(ref, pred)
    assert found is not None
    assert found[0].tolist() == [True, False, False, True] and found[1].tolist() == [True, False, False, True]
    nested = spans((0, 4, 0), (1, 2, 1))
    assert parts.twins(nested, nested) is None  # one side's mentions overlap: the general count
    assert parts.twins(ref, spans((0, 0, 0), (3, 5, 1))) is None  # an empty mention
    counted, r, p = parts.count_twins_apart(ref, pred, Options())
    assert (len(r), len(p)) == (2, 2)  # the twins are counted apart, the rest matched
    assert counted.counts == count_grouped(ref, pred, Options()).counts
    assert counted.counts.errors[0].tolist() == [2, 0, 0]  # the correct ones, per type


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.integers(0, 2)), max_size=12),
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.integers(0, 2)), max_size=12),
)
def test_twins_are_the_exact_pairs_of_disjoint_sides(
    ref: list[tuple[int, int, int]], pred: list[tuple[int, int, int]]
) -> None:
    """Checked against the definition: where both sides' mentions are non-empty and disjoint, a
    twin is a mention whose start, end and type the other side has; otherwise nothing is set apart."""

    def side(mentions: list[tuple[int, int, int]]) -> Spans:
        if not mentions:
            return Spans.empty(TYPES)
        return spans(*((s, s + n, t) for s, n, t in mentions))

    def disjoint(mentions: list[tuple[int, int, int]]) -> bool:
        cells = [s + i for s, n, _ in mentions for i in range(n)]
        return all(n > 0 for _, n, _ in mentions) and len(cells) == len(set(cells))

    r, p = side(ref), side(pred)
    found = parts.twins(r, p)
    if not (ref and pred and disjoint(ref) and disjoint(pred)):
        assert found is None
        return
    assert found is not None
    keys_r = list(zip(r.start.tolist(), r.end.tolist(), r.type.tolist(), strict=True))
    keys_p = list(zip(p.start.tolist(), p.end.tolist(), p.type.tolist(), strict=True))
    assert found[0].tolist() == [k in keys_p for k in keys_r]
    assert found[1].tolist() == [k in keys_r for k in keys_p]


def test_choose_finds_the_groups_of_other_candidates_afresh() -> None:
    """The groups kept from the last matching serve only the same pairs and candidates."""
    from spanscore.stages import matching
    from spanscore.stages.matching import FULL, NO_CREDIT, NOT_ELIGIBLE, choose, find_pairs, free_pairs

    ref = spans((0, 3, 0), (4, 6, 1), (8, 10, 2))
    pred = spans((0, 2, 0), (1, 3, 1), (4, 5, 1), (5, 6, 1), (8, 10, 0))
    pairs = find_pairs(ref, pred)
    free = free_pairs(pairs, np.zeros(0, dtype=np.int64))
    credit = np.ones(len(free))
    everything = np.full(len(free), NO_CREDIT)
    some = np.where(np.arange(len(free)) % 2 == 1, FULL, NOT_ELIGIBLE)

    def fresh(level: np.ndarray) -> list[int]:
        matching._last_groups.clear()
        out: list[int] = choose(pairs, free, level, credit).tolist()
        return out

    expected = {"everything": fresh(everything), "some": fresh(some)}
    for name, level in (("everything", everything), ("some", some), ("everything", everything)):
        assert choose(pairs, free, level, credit).tolist() == expected[name], name
    assert expected["everything"] != expected["some"]
