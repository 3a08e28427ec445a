"""Counts per group (per document, per document and type, per bucket) with the mentions matched by
an identical twin set apart: each group's twins added from their count and lengths give what
matching every mention gives, table for table, whatever the encoding, the repair, the criterion
options, the groups' layout, and whether the mentions overlap; and the same intervals, per-document
rows and comparisons through the library."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_twins import ENCODINGS, OPTIONS, TYPES, label_pairs, span_pairs

import spanscore
from spanscore.stages import parts
from spanscore.stages.counts import CRITERIA, Groups, Options, count_grouped, group_fields
from spanscore.stages.documents import scored_columns
from spanscore.stages.spans import Spans

# Intervals over a handful of sentences are coarse, and say so: beside the point here.
pytestmark = pytest.mark.filterwarnings("ignore::spanscore.analysis.reliability.FewUnitsWarning")

FIELDS = group_fields(tuple(c.name for c in CRITERIA))


def same(a: Any, b: Any, path: str = "") -> None:
    """``a`` and ``b`` alike to the last array value and dtype."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), path
        assert (a.dtype, a.shape) == (b.dtype, b.shape), path
        assert np.array_equal(a, b), path
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), path
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            same(a[k], b[k], f"{path}[{k}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


Mention = tuple[int, int, int]


@st.composite
def disjoint_pairs(draw: st.DrawFn) -> tuple[list[Mention], list[Mention]]:
    """Mentions that touch no other on their side (as decoded labels), and a prediction that keeps
    most, changes some (type, start, end) and drops others; now and then a nested one on either side."""
    gold: list[Mention] = []
    at = 0
    for _ in range(draw(st.integers(0, 14))):
        at += draw(st.integers(0, 2))
        n = draw(st.integers(1, 4))
        gold.append((at, at + n, draw(st.integers(0, len(TYPES) - 1))))
        at += n
    pred: list[Mention] = []
    for s, e, t in gold:
        change = draw(st.integers(0, 6))
        if change <= 3:
            pred.append((s, e, t))  # a twin
        elif change == 4:
            pred.append((s, e, (t + 1) % len(TYPES)))
        elif change == 5 and e - s > 1:
            pred.append((s + draw(st.integers(0, 1)), e - 1, t))
    for side in (gold, pred):
        if side and not draw(st.integers(0, 6)):  # a mention inside another: the general count
            s, e, t = side[draw(st.integers(0, len(side) - 1))]
            side.append((s, s + 1, t))
            side.sort()
    return gold, pred


def spans(mentions: list[Mention]) -> Spans:
    if not mentions:
        return Spans.empty(TYPES)
    start, end, type_ = (np.array(x, dtype=np.int64) for x in zip(*mentions, strict=True))
    return Spans.build(start, end, type_, start // 6, TYPES)  # a sentence every six positions


def groupings(r: Spans, p: Spans, buckets: tuple[np.ndarray, np.ndarray], n_buckets: int) -> dict[str, Any]:
    """Documents (two sentences each), (document, type) pairs with a mention ranked as the count of a
    chunk ranks them, and buckets given per side (a twin's two mentions may fall in two buckets) in
    three layouts: plain, every (document, bucket), and only those with a mention."""
    doc_r, doc_p = r.unit // 2, p.unit // 2
    n_docs = int(max(doc_r.max(initial=0), doc_p.max(initial=0))) + 1
    n_types = len(TYPES)
    ref_key, pred_key = doc_r * n_types + r.type, doc_p * n_types + p.type
    seen = np.zeros(n_docs * n_types, dtype=bool)
    seen[ref_key] = seen[pred_key] = True
    rank = np.cumsum(seen) - 1
    rb, pb = buckets
    every = Groups(doc_r * n_buckets + rb, doc_p * n_buckets + pb, n_docs * n_buckets, n_buckets)
    held = np.zeros(n_docs * n_buckets, dtype=bool)
    held[every.reference] = held[every.predicted] = True
    keys = np.flatnonzero(held)
    at = np.cumsum(held) - 1
    only = Groups(at[every.reference], at[every.predicted], int(keys.shape[0]), n_buckets, keys % n_buckets)
    return {
        "groups": Groups(doc_r, doc_p, n_docs),
        "type_groups": Groups(rank[ref_key], rank[pred_key], int(seen.sum())),
        "more_groups": (Groups(rb, pb, n_buckets), every, only),
    }


@settings(max_examples=200, deadline=None)
@given(disjoint_pairs(), st.sampled_from(OPTIONS), st.data())
def test_groups_with_twins_apart_are_the_general_count(
    pair: tuple[list[Mention], list[Mention]], options: dict[str, Any], data: st.DataObject
) -> None:
    r, p = spans(pair[0]), spans(pair[1])
    n_buckets = 3
    rb = np.array(data.draw(st.lists(st.integers(0, 2), min_size=len(r), max_size=len(r))), dtype=np.int64)
    pb = np.array(data.draw(st.lists(st.integers(0, 2), min_size=len(p), max_size=len(p))), dtype=np.int64)
    g = groupings(r, p, (rb, pb), n_buckets)
    scored = scored_columns(FIELDS, scaled=options.get("credit") in ("dice", "iou"))
    layout = data.draw(
        st.sampled_from(
            (
                {},  # every column, row-major
                {"type_columns": scored},  # the histogram's: the transpose of a row per column
                {"group_columns": scored},  # the paired tests' and the buckets' (with each bucket's totals)
                {"type_columns": scored, "group_columns": scored},
            )
        )
    )
    keep = data.draw(st.booleans())
    if layout.get("group_columns") is None:
        g["more_groups"] = g["more_groups"][:1]  # the layouts with inner keys are counted by columns
    o = Options(**options)
    fast, fr, fp = parts.count_twins_apart(r, p, o, keep_details=keep, **g, **layout)
    slow = count_grouped(r, p, o, keep_details=keep, **g, **layout)
    found = parts.twins(r, p)
    if keep or found is None or not found[0].any():
        assert (fr, fp) == (r, p)
    else:
        assert len(fr) == len(r) - int(found[0].sum())  # the twins were set apart
    if not keep:  # the pairs and the taxonomy's matching index the mentions matched
        slow = dataclasses.replace(slow, pairs=fast.pairs, taxonomy=fast.taxonomy)
    same(fast, slow)
    # The groups' rows add up to the counts per type (independent of either count's groups).
    per_doc = fast.groups
    assert per_doc is not None
    column = {
        name: j for j, name in enumerate(FIELDS if layout.get("group_columns") is None else [FIELDS[i] for i in scored])
    }
    assert per_doc[:, column["reference"]].sum() == len(r)
    assert per_doc[:, column["strict.full_ref"]].sum() == int(fast.counts.criteria["strict"][0].sum())
    assert per_doc[:, column["token.reference"]].sum() == int(fast.counts.token[1].sum())


def test_a_twins_share_goes_to_each_sides_group() -> None:
    """Worked by hand: two twins (one in each document) and a wrong type; the second twin's
    reference falls in bucket 0 and its prediction in bucket 1."""
    r = spans([(0, 2, 0), (3, 4, 1), (14, 17, 2)])
    p = spans([(0, 2, 0), (3, 4, 2), (14, 17, 2)])
    g = groupings(r, p, (np.array([0, 0, 0]), np.array([0, 0, 1])), 2)
    counted, left_r, left_p = parts.count_twins_apart(r, p, Options(), **g)
    assert (len(left_r), len(left_p)) == (1, 1)
    docs = counted.groups
    assert docs is not None
    at = FIELDS.index
    assert docs[:, at("reference")].tolist() == [2, 1]
    assert docs[:, at("strict.full_ref")].tolist() == [1, 1]
    assert docs[:, at("strict.full_pred")].tolist() == [1, 1]
    assert docs[:, at("token.true_positive")].tolist() == [2, 3]
    assert docs[:, at("errors.correct")].tolist() == [1, 1]
    assert docs[:, at("errors.wrong_label_same_span")].tolist() == [1, 0]
    buckets = counted.more_groups[0]
    assert buckets[:, at("strict.full_ref")].tolist() == [2, 0]  # by the reference's bucket
    assert buckets[:, at("strict.full_pred")].tolist() == [1, 1]  # by the prediction's
    assert buckets[:, at("token.true_positive_predicted")].tolist() == [2, 3]
    same(counted.groups, count_grouped(r, p, Options(), **g).groups)


def both_ways(monkeypatch: pytest.MonkeyPatch, run: Any) -> tuple[Any, Any]:
    """``run()`` with the twins set apart, and with every mention matched."""
    calls: list[int] = []
    found = parts.twins

    def spy(reference: Spans, predicted: Spans) -> Any:
        out = found(reference, predicted)
        calls.append(0 if out is None else int(out[0].sum()))
        return out

    with monkeypatch.context() as m:
        m.setattr(parts, "twins", spy)
        fast = run()
    assert calls  # the groups were counted with the twins' way
    with monkeypatch.context() as m:
        m.setattr(parts, "twins", lambda reference, predicted: None)
        slow = run()
    return fast, slow


def outputs(kw: dict[str, Any]) -> Any:
    """Intervals (from the histograms per document and type), the rows per document with and
    without intervals, and intervals per bucket."""
    result = spanscore.evaluate(ci=0.9, resamples=40, document_types=True, keep_details=False, **kw)
    plain = spanscore.evaluate(documents=True, document_types=True, keep_details=False, **kw)
    buckets = spanscore.evaluate(buckets=("length",), ci=0.9, resamples=40, keep_details=False, **kw)
    return result.to_dict(), plain.to_dict(), list(plain.document_rows()), buckets.to_dict()


@settings(max_examples=60, deadline=None)
@given(
    st.data(), st.sampled_from(sorted(ENCODINGS)), st.sampled_from(("conlleval", "discard")), st.sampled_from(OPTIONS)
)
def test_intervals_and_documents_on_labels_are_the_general_counts(
    data: st.DataObject, labels: str, repair: str, options: dict[str, Any]
) -> None:
    gold, pred = data.draw(label_pairs(ENCODINGS[labels]))
    kw = {
        "reference": gold,
        "predicted": pred,
        "format": "labels",
        "reading": spanscore.Reading(format="labels", labels=labels, repair=repair),  # type: ignore[arg-type]
        "scoring": spanscore.Scoring(**options),
    }
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both_ways(monkeypatch, lambda: outputs(kw))
    assert fast == slow


@settings(max_examples=60, deadline=None)
@given(span_pairs(), st.sampled_from(OPTIONS))
def test_intervals_and_documents_on_any_spans_are_the_general_counts(
    pair: tuple[list[list[tuple[int, int, str]]], list[list[tuple[int, int, str]]]], options: dict[str, Any]
) -> None:
    gold, pred = pair
    kw = {"reference": gold, "predicted": pred, "format": "spans", "scoring": spanscore.Scoring(**options)}
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both_ways(monkeypatch, lambda: outputs(kw))
    assert fast == slow


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(("BIO", "BIOES", "IOB1")))
def test_compare_per_type_and_buckets_are_the_general_counts(data: st.DataObject, labels: str) -> None:
    gold, first = data.draw(label_pairs(ENCODINGS[labels]))
    second = [[x if data.draw(st.integers(0, 3)) else "O" for x in sentence] for sentence in first]

    def run() -> Any:
        reading = spanscore.Reading(format="labels", labels=labels)  # type: ignore[arg-type]
        out = []
        layouts: tuple[dict[str, Any], ...] = ({}, {"per_type": True, "buckets": ("length",)})
        for kw in layouts:
            c = spanscore.compare(
                reference=gold, systems=[first, second], format="labels", reading=reading, resamples=30, trials=30,
                **kw,
            )  # fmt: skip
            out.append(c.to_dict())
        return out

    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both_ways(monkeypatch, run)
    assert fast == slow
