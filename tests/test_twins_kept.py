"""A count that keeps its matchings (the report's rows, ``keep_details``) sets apart the mentions
matched by an identical twin as the plain count does, and puts their pairs back: the pairs, every
criterion's and scheme's matching, the rows and the error examples are those of matching every
mention, whatever the encoding, the repair, the criterion options and whether mentions overlap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_twins import ENCODINGS, OPTIONS, TYPES, Mention, general, label_pairs, span_pairs

import spanscore
from spanscore.stages import parts
from spanscore.stages.counts import Counted, Options, count_grouped
from spanscore.stages.criteria import CRITERIA, SCHEMES
from spanscore.stages.matching import Matching, Pairs
from spanscore.stages.spans import Spans


def arrays(x: Pairs | Matching) -> dict[str, tuple[str, list[Any]]]:
    return {k: (str(v.dtype), v.tolist()) for k, v in vars(x).items()}


def same_details(fast: Counted, slow: Counted) -> None:
    assert fast.counts == slow.counts
    assert arrays(fast.pairs) == arrays(slow.pairs)
    assert arrays(fast.taxonomy) == arrays(slow.taxonomy)
    a, b = fast.details, slow.details
    assert a is not None and b is not None
    assert arrays(a.pairs) == arrays(b.pairs)
    assert a.reference is b.reference or a.reference == b.reference
    for mine, theirs in ((a.matchings, b.matchings), (a.schemes, b.schemes)):
        assert list(mine) == list(theirs)
        for name in mine:
            assert arrays(mine[name]) == arrays(theirs[name]), name


def both_ways(monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    seen: list[int] = []

    def checked(reference: Spans, predicted: Spans, options: Options, keep_details: bool = False) -> Any:
        assert keep_details  # the kept matchings took the shortcut's way
        out = apart(reference, predicted, options, keep_details)
        whole = count_grouped(reference, predicted, options, keep_details=True)
        assert out[1] is reference and out[2] is predicted  # the pairs index the chunk's mentions
        same_details(out[0], whole)  # here: the caller adds the chunk's sizes to the counts after
        seen.append(len(reference))
        return out

    apart = parts.count_twins_apart
    with monkeypatch.context() as m:
        m.setattr(parts, "count_twins_apart", checked)
        fast = spanscore.evaluate(keep_details=True, **kw)
    assert seen
    with monkeypatch.context() as m:
        m.setattr(parts, "count_twins_apart", general)
        slow = spanscore.evaluate(keep_details=True, **kw)

    def rows(report: Any) -> list[Any]:
        out = [list(report.pair_rows(c.name)) for c in CRITERIA]
        out += [list(report.pair_rows(s.name, scheme=True)) for s in SCHEMES]
        return out

    return (fast.to_dict(), fast.error_examples(limit=5), rows(fast)), (
        slow.to_dict(),
        slow.error_examples(limit=5),
        rows(slow),
    )


@settings(max_examples=120, deadline=None)
@given(
    st.data(), st.sampled_from(sorted(ENCODINGS)), st.sampled_from(("conlleval", "discard")), st.sampled_from(OPTIONS)
)
def test_kept_twins_apart_on_labels_are_the_general_matchings(
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


@settings(max_examples=120, deadline=None)
@given(span_pairs(), st.sampled_from(OPTIONS))
def test_kept_twins_apart_on_any_spans_are_the_general_matchings(
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


def test_twin_pairs_go_back_between_the_others() -> None:
    """Hand-worked: twins first, between and last, beside a reference with two pairs."""
    ref = spans((0, 2, 0), (3, 6, 1), (7, 8, 2), (9, 12, 0), (13, 14, 1))
    pred = spans((0, 2, 0), (3, 4, 1), (4, 6, 0), (7, 8, 2), (9, 11, 0), (13, 14, 1))
    counted, r, p = parts.count_twins_apart(ref, pred, Options(), keep_details=True)
    assert r is ref and p is pred
    assert counted.pairs.ref.tolist() == [0, 1, 1, 2, 3, 4]
    assert counted.pairs.pred.tolist() == [0, 1, 2, 3, 4, 5]
    assert counted.pairs.distance.tolist() == [0, 2, 1, 0, 1, 0]
    same_details(counted, count_grouped(ref, pred, Options(), keep_details=True))
    # Without details, the mentions left are returned as before, and the counts alike.
    plain, r2, p2 = parts.count_twins_apart(ref, pred, Options())
    assert (len(r2), len(p2)) == (2, 3) and plain.details is None and plain.counts == counted.counts
