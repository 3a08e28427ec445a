"""Shortcuts of the matching against the general route, on generated mentions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spanscore.stages import matching
from spanscore.stages.counts import Options, count
from spanscore.stages.spans import Spans

# Short texts with many overlaps: groups of two (one mention against two), larger groups and ties.
span = st.tuples(st.integers(0, 12), st.integers(1, 4), st.sampled_from("AB"))


def spans(items: list[tuple[int, int, str]]) -> Spans:
    return Spans.build(
        np.array([s for s, _, _ in items], dtype=np.int64),
        np.array([s + n for s, n, _ in items], dtype=np.int64),
        np.array(["AB".index(t) for _, _, t in items], dtype=np.int64),
        np.zeros(len(items), dtype=np.int64),
        ("A", "B"),
    )


def no_shortcut(r: Any, p: Any, deg_r: Any, deg_p: Any) -> tuple[Any, Any, Any]:
    none = np.zeros(0, dtype=np.int64)
    return none, none, np.ones(r.shape[0], dtype=bool)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(span, max_size=8, unique_by=lambda s: (s[0], s[1], s[2])),
    st.lists(span, max_size=8, unique_by=lambda s: (s[0], s[1], s[2])),
    st.sampled_from([0.5, 0.25, "dice", "iou"]),
    st.sampled_from(["optimal", "greedy"]),
)
def test_groups_of_two_match_as_the_exact_solver_does(
    ref: list[tuple[int, int, str]], pred: list[tuple[int, int, str]], credit: Any, method: Any
) -> None:
    r, p = spans(ref), spans(pred)
    options = Options(credit=credit, matching=method)
    fast, fast_details = count(r, p, options, keep_details=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "_groups_of_two", no_shortcut)
        slow, slow_details = count(r, p, options, keep_details=True)
    assert fast == slow
    assert fast_details is not None and slow_details is not None
    for name, m in fast_details.matchings.items():
        assert m.pair.tolist() == slow_details.matchings[name].pair.tolist()
    for name, m in fast_details.schemes.items():
        assert m.pair.tolist() == slow_details.schemes[name].pair.tolist()


def test_a_group_of_two_takes_the_better_pair_and_the_earlier_on_a_tie() -> None:
    # Reference [2, 6) against predictions [1, 4) and [4, 6): same overlap (2), but the second
    # is closer (boundaries 2 tokens off in all, against 3).
    r, p = spans([(2, 4, "A")]), spans([(1, 3, "A"), (4, 2, "A")])
    _, d = count(r, p, Options(), keep_details=True)
    assert d is not None and d.pairs.pred[d.matchings["overlap"].pair].tolist() == [1]
    # Reference [2, 4) against [1, 3) and [3, 5): a full tie goes to the earlier prediction.
    r, p = spans([(2, 2, "A")]), spans([(1, 2, "A"), (3, 2, "A")])
    _, d = count(r, p, Options(), keep_details=True)
    assert d is not None and d.pairs.pred[d.matchings["overlap"].pair].tolist() == [0]
