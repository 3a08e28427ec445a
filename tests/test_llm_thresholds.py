"""Scored spans swept over thresholds: precision, recall and F1 at each distinct score equal to
a count at that threshold written out here (filter, then match exactly), overall and per type;
and through the GLiNER reader, in the report's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.presentation import write_report
from spanscore.stages.thresholds import sweep

keys = st.tuples(st.sampled_from("ab"), st.integers(0, 5), st.integers(6, 8), st.sampled_from("XY"))


@settings(max_examples=200, deadline=None)
@given(scored=st.lists(st.tuples(keys, st.sampled_from((0.1, 0.3, 0.5, 0.5, 0.9))), max_size=20),
       reference=st.sets(keys, max_size=10))
def test_the_sweep_equals_a_count_at_each_threshold(scored: list[tuple[tuple[str, int, int, str], float]],
                                                    reference: set[tuple[str, int, int, str]]) -> None:
    got = sweep(scored, reference)
    for part, types in [("overall", "XY"), *((t, t) for t in "XY")]:
        curve = got["overall"] if part == "overall" else got["types"].get(part)
        mine = [(k, s) for k, s in scored if k[3] in types]
        ref = {k for k in reference if k[3] in types}
        top: dict[tuple[str, int, int, str], float] = {}
        for key, score in mine:  # a place and type given twice is one prediction, at its higher score
            top[key] = max(score, top.get(key, score))
        thresholds = sorted(set(top.values()), reverse=True)
        if curve is None:
            assert not mine and not ref
            continue
        assert curve["thresholds"] == thresholds
        for k, t in enumerate(thresholds):
            kept = {key for key, s in top.items() if s >= t}
            matched = len(kept & ref)
            assert curve["precision"][k] == pytest.approx(matched / len(kept))
            assert curve["recall"][k] == pytest.approx(matched / len(ref) if ref else 0.0)
        if thresholds:
            best = max(range(len(thresholds)), key=lambda k: (curve["f1"][k], thresholds[k]))
            assert curve["best"]["threshold"] == thresholds[best]


def test_gliner_scores_give_a_sweep_in_the_json(tmp_path: Path) -> None:
    text = "Ann Lee met Bob Smith in Paris ."
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "1", "text": text, "spans": [
        {"start": 0, "end": 7, "label": "PER"}, {"start": 12, "end": 21, "label": "PER"},
        {"start": 25, "end": 30, "label": "LOC"}]}) + "\n", encoding="utf-8")
    pred = tmp_path / "gliner.jsonl"
    pred.write_text(json.dumps({"id": "1", "entities": [
        {"start": 0, "end": 7, "text": "Ann Lee", "label": "PER", "score": 0.9},
        {"start": 25, "end": 30, "text": "Paris", "label": "PER", "score": 0.6},  # wrong type
        {"start": 12, "end": 21, "text": "Bob Smith", "label": "PER", "score": 0.4},
    ]}) + "\n", encoding="utf-8")
    located = spanscore.evaluate(reference=gold, predicted=pred, format="jsonl",
                                 predicted_format="gliner").to_dict()["located"]
    overall = located["thresholds"]["overall"]
    assert overall["thresholds"] == [0.9, 0.6, 0.4]
    assert overall["precision"] == pytest.approx([1.0, 0.5, 2 / 3])
    assert overall["recall"] == pytest.approx([1 / 3, 1 / 3, 2 / 3])
    assert overall["best"]["threshold"] == 0.4  # F1 0.5, 0.4, 0.667
    assert located["thresholds"]["types"]["PER"]["best"]["threshold"] == 0.4
    assert located["thresholds"]["types"]["LOC"]["thresholds"] == []


@settings(max_examples=200, deadline=None)
@given(scored=st.lists(st.tuples(keys, st.sampled_from((0.1, 0.3, 0.5, 0.5, 0.9))), max_size=20),
       reference=st.sets(keys, max_size=10))
def test_the_boundary_sweep_equals_a_count_of_places(scored: list[tuple[tuple[str, int, int, str], float]],
                                                     reference: set[tuple[str, int, int, str]]) -> None:
    curve = sweep(scored, reference)["boundary"]
    top: dict[tuple[str, int, int], float] = {}
    for (doc, a, b, _), score in scored:  # a place given with any type, twice: once, at its higher score
        top[(doc, a, b)] = max(score, top.get((doc, a, b), score))
    places = {(doc, a, b) for doc, a, b, _ in reference}
    thresholds = sorted(set(top.values()), reverse=True)
    assert curve["thresholds"] == thresholds
    for k, t in enumerate(thresholds):
        kept = {p for p, s in top.items() if s >= t}
        assert curve["precision"][k] == pytest.approx(len(kept & places) / len(kept))
        assert curve["recall"][k] == pytest.approx(len(kept & places) / len(places) if places else 0.0)
    if thresholds:
        best = max(range(len(thresholds)), key=lambda k: (curve["f1"][k], thresholds[k]))
        assert curve["best"]["threshold"] == thresholds[best]
    else:
        assert curve["best"] is None


def scored_files(tmp_path: Path) -> tuple[Path, Path]:
    text = "Ann Lee met Bob Smith in Paris ."
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "1", "text": text, "spans": [
        {"start": 0, "end": 7, "label": "PER"}, {"start": 12, "end": 21, "label": "PER"},
        {"start": 25, "end": 30, "label": "LOC"}]}) + "\n", encoding="utf-8")
    pred = tmp_path / "gliner.jsonl"
    pred.write_text(json.dumps({"id": "1", "entities": [
        {"start": 0, "end": 7, "text": "Ann Lee", "label": "PER", "score": 0.9},
        {"start": 25, "end": 30, "text": "Paris", "label": "PER", "score": 0.6},
        {"start": 12, "end": 21, "text": "Bob Smith", "label": "PER", "score": 0.4},
        {"start": 25, "end": 30, "text": "Paris", "label": "LOC", "score": 0.3},
    ]}) + "\n", encoding="utf-8")
    return gold, pred


def test_the_report_has_the_sweep_as_the_json_does(tmp_path: Path) -> None:
    gold, pred = scored_files(tmp_path)
    report = spanscore.evaluate(reference=gold, predicted=pred, format="jsonl", predicted_format="gliner")
    assert report.thresholds == report.to_dict()["located"]["thresholds"]
    assert report.thresholds is not None and report.thresholds["overall"]["best"]["threshold"] == 0.3
    report.thresholds["overall"]["best"] = None  # a copy: the report keeps its own
    assert report.to_dict()["located"]["thresholds"]["overall"]["best"]["threshold"] == 0.3
    plain = spanscore.evaluate(reference=gold, predicted=gold, format="jsonl")
    assert plain.thresholds is None


def test_the_report_folder_has_the_curves_and_their_data(tmp_path: Path) -> None:
    import csv

    pytest.importorskip("matplotlib")
    from spanscore.presentation.charts import threshold_curves

    gold, pred = scored_files(tmp_path)
    report = spanscore.evaluate(reference=gold, predicted=pred, format="jsonl", predicted_format="gliner")
    out = tmp_path / "rep"
    write_report(report, out)
    png = (out / "thresholds.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    sweep = report.to_dict()["located"]["thresholds"]
    # What the chart draws is the JSON's curves, unchanged: overall, then each type with scores.
    assert threshold_curves(report.to_dict()) == {
        "overall": sweep["overall"], "overall, any type (boundary)": sweep["boundary"],
        "LOC": sweep["types"]["LOC"], "PER": sweep["types"]["PER"]}
    # By place alone Paris is one prediction, at its higher score (0.6): every place found at 0.4.
    assert sweep["boundary"]["thresholds"] == [0.9, 0.6, 0.4]
    assert sweep["boundary"]["best"] == {"threshold": 0.4, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    with (out / "thresholds.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    curves = [("strict", "", sweep["overall"]), *(("strict", t, c) for t, c in sorted(sweep["types"].items())),
              ("boundary", "", sweep["boundary"])]
    assert len(rows) == sum(len(c["thresholds"]) for _, _, c in curves)
    for criterion, name, curve in curves:
        mine = [r for r in rows if (r["criterion"], r["type"]) == (criterion, name)]
        assert [float(r["threshold"]) for r in mine] == curve["thresholds"]
        assert [float(r["precision"]) for r in mine] == curve["precision"]
        assert [float(r["recall"]) for r in mine] == curve["recall"]
        assert [float(r["f1"]) for r in mine] == curve["f1"]
        assert [float(r["threshold"]) for r in mine if r["best"] == "1"] == [curve["best"]["threshold"]]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert {"thresholds.png", "thresholds.csv"} <= set(summary["files"])
    assert "thresholds.png" in (out / "report.html").read_text(encoding="utf-8")


def test_no_curves_without_scores(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    gold, _ = scored_files(tmp_path)
    out = tmp_path / "rep"
    write_report(spanscore.evaluate(reference=gold, predicted=gold, format="jsonl"), out)
    assert not (out / "thresholds.png").exists() and not (out / "thresholds.csv").exists()
