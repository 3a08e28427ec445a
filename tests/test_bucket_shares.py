"""Every share a bucket reports lies in [0, 1], and a bucket's token score is its own units' share.

A bucket's token precision is the share of its predictions' units (per type) that the reference
covers with that type, its recall the share of its reference mentions' units that the prediction
covers: a prediction may fall in another bucket than the reference mention it overlaps (a short
prediction inside a long mention), so each side is counted on its own side's bucket. The
independent count below builds the sets of (document, type, unit) in plain Python.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore

Mention = tuple[int, int, str]
Docs = list[list[Mention]]

TYPES = ("A", "B")
EDGES = [2, 3, 5]  # character lengths: 1, 2, 3-4, 5+
LABELS = ["1", "2", "3-4", "5+"]
SETTINGS = settings(max_examples=80, deadline=None)

mention = st.tuples(st.integers(0, 16), st.integers(1, 7), st.sampled_from(TYPES)).map(
    lambda t: (t[0], t[0] + t[1], t[2])
)
document = st.lists(mention, max_size=6)
corpus = st.integers(1, 4).flatmap(lambda n: st.tuples(st.lists(document, min_size=n, max_size=n),
                                                        st.lists(document, min_size=n, max_size=n)))


def shares(block: dict[str, Any]) -> list[float]:
    """Every precision, recall, F1 and interval bound of one score block."""
    names = ("precision", "recall", "f1", "f_beta", "low", "high")
    return [v for k, v in block.items() if v is not None and (k in names or k.endswith(("_low", "_high")))]


def all_shares(out: dict[str, Any]) -> list[tuple[str, float]]:
    found = []
    for where in ("metrics", "semeval"):
        for name, block in out[where].items():
            found += [(f"{where}.{name}", v) for v in shares(block)]
    for name, block in ((out.get("intervals") or {}).get("scores") or {}).items():
        for metric, bounds in block.items():
            found += [(f"intervals.{name}.{metric}", v) for v in bounds.values() if isinstance(v, float)]
    for attr, entries in out["buckets"].items():
        for e in entries:
            for where in ("metrics", "semeval"):
                for name, block in e[where].items():
                    found += [(f"{attr}.{e['bucket']}.{where}.{name}", v) for v in shares(block)]
    return found


def units(docs: Docs, bucket: str | None) -> set[tuple[int, str, int]]:
    """(document, type, unit) covered by the mentions of ``bucket`` (every mention: None)."""
    out = set()
    for d, mentions in enumerate(docs):
        for start, end, label in mentions:
            if bucket is None or LABELS[bisect.bisect_right(EDGES, end - start)] == bucket:
                out.update((d, label, u) for u in range(start, end))
    return out


@SETTINGS
@given(corpus, st.sampled_from([0.0, 1.0]))
def test_every_share_is_within_0_and_1(sides: tuple[Docs, Docs], zero_division: float) -> None:
    reference, predicted = sides
    report = spanscore.evaluate(
        reference=reference, predicted=predicted, format="spans", buckets=["length"],
        bucket_edges={"length": EDGES}, ci=0.9, resamples=30, zero_division=zero_division,
    )
    for where, value in all_shares(dict(report.to_dict())):
        assert 0.0 <= value <= 1.0, (where, value)


@SETTINGS
@given(corpus)
def test_bucket_token_score_is_its_own_units_share(sides: tuple[Docs, Docs]) -> None:
    reference, predicted = sides
    report = spanscore.evaluate(
        reference=reference, predicted=predicted, format="spans", buckets=["length"], bucket_edges={"length": EDGES}
    )
    any_ref, any_pred = units(reference, None), units(predicted, None)
    for entry in report.to_dict()["buckets"]["length"]:
        ref, pred = units(reference, entry["bucket"]), units(predicted, entry["bucket"])
        token = entry["metrics"]["token"]
        if pred:
            assert token["precision"] == pytest.approx(len(pred & any_ref) / len(pred)), entry["bucket"]
        if ref:
            assert token["recall"] == pytest.approx(len(ref & any_pred) / len(ref)), entry["bucket"]


@SETTINGS
@given(corpus)
def test_one_bucket_holding_everything_is_the_corpus(sides: tuple[Docs, Docs]) -> None:
    reference, predicted = sides
    out = spanscore.evaluate(
        reference=reference, predicted=predicted, format="spans", buckets=["length"],
        bucket_edges={"length": [1000]},
    ).to_dict()
    whole = out["buckets"]["length"][0]
    for where in ("metrics", "semeval"):
        for name, block in out[where].items():
            got = whole[where][name]
            for m in ("precision", "recall", "f1"):
                assert math.isclose(got[m], block[m], abs_tol=1e-12), (where, name, m)


def test_a_short_prediction_inside_a_long_mention_scores_no_more_than_1() -> None:
    """The case of the report: the prediction's bucket (1) is not the reference's (3)."""
    ref = [["B-PER", "I-PER", "I-PER", "O", "B-PER", "I-PER", "I-PER"]]
    pred = [["B-PER", "O", "O", "O", "B-PER", "I-PER", "I-PER"]]
    out = spanscore.evaluate(reference=ref, predicted=pred, format="labels", buckets=["length"]).to_dict()
    by = {e["bucket"]: e["metrics"]["token"] for e in out["buckets"]["length"]}
    assert by["3"]["precision"] == 1.0  # 3 predicted units in the bucket, all covered (was 4/3)
    assert by["3"]["recall"] == pytest.approx(4 / 6)
    assert by["1"]["precision"] == 1.0  # the one-token prediction lies inside a PER mention


def _floats(value: Any, path: str = "") -> list[tuple[str, float]]:
    """Every float under a JSON value, with where it is."""
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in _floats(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [f for k, v in enumerate(value) for f in _floats(v, f"{path}[{k}]")]
    return [(path, value)] if isinstance(value, float) else []


@settings(max_examples=25, deadline=None)
@given(corpus)
def test_compare_per_bucket_keeps_every_share_and_bound_within_0_and_1(sides: tuple[Docs, Docs]) -> None:
    reference, predicted = sides
    out = spanscore.compare(
        reference=reference, systems=[predicted, reference], format="spans", buckets=["length"],
        bucket_edges={"length": EDGES}, resamples=30, trials=30,
    ).to_dict()
    for group in out["buckets"]["length"]:
        for system in group["systems"]:
            for where, value in _floats(system["metrics"]):
                assert 0.0 <= value <= 1.0, (group["bucket"], system["name"], where, value)
