"""The plain count's shortcuts give what the long way gives: error examples rendered only where
they can be shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.stages import parts

# One sentence with every error kind: a wrong type on the same span, a wrong type overlapping, the
# right type overlapping, a missed mention and a spurious one.
GOLD = ["B-PER", "O", "B-LOC", "I-LOC", "O", "B-ORG", "I-ORG", "O", "B-MISC", "O", "O"]
PRED = ["B-ORG", "O", "B-PER", "O", "O", "B-ORG", "I-ORG", "I-ORG", "O", "O", "B-PER"]


def corpus(tmp_path: Path, sentences: int) -> tuple[Path, Path]:
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    for path, labels in ((gold, GOLD), (pred, PRED)):
        lines = [f"w{s}_{i} {label}\n" for s in range(sentences) for i, label in enumerate([*labels, ""])]
        path.write_text("".join(line if not line.endswith(" \n") else "\n" for line in lines), encoding="utf-8")
    return gold, pred


def examples(gold: Path, pred: Path, **kw: Any) -> dict[str, list[dict[str, Any]]]:
    return spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, **kw).error_examples(limit=5)


def test_error_examples_are_the_first_in_corpus_order_whatever_the_chunks(tmp_path: Path) -> None:
    gold, pred = corpus(tmp_path, 60)
    whole = examples(gold, pred, chunk_bytes=1 << 30)
    assert all(len(rows) == 5 for rows in whole.values()) and len(whole) == 5
    assert whole["false_negative"][0]["context"].startswith("w0_0 w0_1")
    for kw in ({"chunk_bytes": 200}, {"chunk_bytes": 700}, {"chunk_bytes": 300, "jobs": 2}):
        assert examples(gold, pred, **kw) == whole, kw


def test_parts_after_one_full_of_examples_render_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a part holds five examples of every kind, the parts after it render no examples, and
    the report's examples are those of rendering every part."""
    gold, pred = corpus(tmp_path, 60)
    calls: list[int] = []
    render = parts.error_examples

    def counted(*args: Any) -> Any:
        calls.append(args[-1])
        return render(*args)

    monkeypatch.setattr(parts, "error_examples", counted)
    shortcut = examples(gold, pred, chunk_bytes=700)
    n_parts = len(calls)
    assert n_parts == 1  # the first part (five sentences) is full; the other parts render nothing
    monkeypatch.setattr(parts.ExampleQuota, "wanted", lambda self, wanted, position: wanted)
    calls.clear()
    assert examples(gold, pred, chunk_bytes=700) == shortcut
    assert len(calls) >= 5  # every part renders without the quota


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 5)), max_size=30),
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 5)), max_size=30),
    st.sampled_from([0, 7, 10**6]),
)
def test_overlap_bounds_are_the_binary_searches(
    ref: list[tuple[int, int]], pred: list[tuple[int, int]], shift: int
) -> None:
    """The running counts give what the four binary searches give, dense or sparse."""
    from spanscore.stages.matching import _bounds

    def columns(spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        spans = sorted(spans)
        start = np.array([s + shift for s, _ in spans], dtype=np.int64)
        return start, start + np.array([n for _, n in spans], dtype=np.int64)

    rs, re_ = columns(ref)
    ps, pe = columns(pred)
    if shift == 10**6 and len(rs):
        rs[-1] += 10**7  # one far away: too sparse for running counts
        re_[-1] += 10**7
    want = (
        np.searchsorted(ps, rs, "left"),
        np.searchsorted(ps, re_, "left"),
        np.searchsorted(rs, ps, "right"),
        np.searchsorted(rs, pe, "left"),
    )
    for got, expected in zip(_bounds(rs, re_, ps, pe), want, strict=True):
        assert got.tolist() == expected.tolist()
