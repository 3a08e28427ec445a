"""Each predicted mention of a language model in one class of what went wrong: exact; right
string, wrong type; boundary; in the text but unannotated; not in the text; off-schema type;
invalid output. One document with one of each, worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli

TEXT = "Ann Lee met Bob Smith in New York on Monday with Carla ."
GOLD = {"id": "d", "text": TEXT, "spans": [
    {"start": 0, "end": 7, "label": "PER"},  # Ann Lee
    {"start": 12, "end": 21, "label": "PER"},  # Bob Smith
    {"start": 25, "end": 33, "label": "LOC"},  # New York
    {"start": 49, "end": 54, "label": "PER"},  # Carla: no prediction, missed
]}
MENTIONS = [
    {"text": "Ann Lee", "label": "PER"},  # exact
    {"text": "Bob Smith", "label": "LOC"},  # right string, wrong type
    {"text": "York", "label": "LOC"},  # boundary: inside New York
    {"text": "Monday", "label": "PER"},  # in the text, no reference mention there, type in the schema
    {"text": "Dana White", "label": "PER"},  # not in the text
    {"text": "Ann", "label": "definition"},  # off-schema type (placed: inside Ann Lee)
    {"text": "", "label": "PER"},  # invalid
]
EXPECTED = {"exact": 1, "wrong_type": 1, "boundary": 1, "unannotated": 1, "not_in_text": 1, "off_schema": 1,
            "invalid": 1}


def files(tmp_path: Path) -> tuple[Path, Path]:
    gold, llm = tmp_path / "gold.jsonl", tmp_path / "llm.jsonl"
    gold.write_text(json.dumps(GOLD) + "\n", encoding="utf-8")
    llm.write_text(json.dumps({"id": "d", "mentions": MENTIONS}) + "\n", encoding="utf-8")
    return gold, llm


def test_each_prediction_has_its_class(tmp_path: Path) -> None:
    gold, llm = files(tmp_path)
    located = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl",
                                 predicted_format="strings").to_dict()["located"]
    assert located["classes"] == EXPECTED
    examples = {how: [e["text"] for e in found] for how, found in located["class_examples"].items()}
    assert examples == {"exact": ["Ann Lee"], "wrong_type": ["Bob Smith"], "boundary": ["York"],
                        "unannotated": ["Monday"], "not_in_text": ["Dana White"], "off_schema": ["Ann"],
                        "invalid": ['{"text": "", "label": "PER"}']}


def test_classes_add_up_to_the_predictions(tmp_path: Path) -> None:
    gold, llm = files(tmp_path)
    data = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings").to_dict()
    assert sum(data["located"]["classes"].values()) == data["metrics"]["strict"]["predicted"] == len(MENTIONS)
    # strict: only the exact one is right
    assert data["metrics"]["strict"]["full"] == EXPECTED["exact"]


def test_the_table_shows_them(tmp_path: Path) -> None:
    gold, llm = files(tmp_path)
    out = CliRunner().invoke(cli, ["evaluate", str(gold), str(llm), "--predicted-format", "strings"],
                             env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    for line in ("class: right string, wrong type", "class: in the text, unannotated", "class: off-schema type"):
        assert line in out.output


def test_off_schema_types_are_one_type_not_a_column_each(tmp_path: Path) -> None:
    gold, llm = files(tmp_path)
    rows = [*MENTIONS, {"text": "Monday", "label": "entity"}, {"text": "Bob", "label": "date"}]
    llm.write_text(json.dumps({"id": "d", "mentions": rows}) + "\n", encoding="utf-8")
    data = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings").to_dict()
    # definition, entity and date: one off-schema type, all spurious
    assert set(data["per_type"]) == {"PER", "LOC", "(off-schema)"}
    off = data["per_type"]["(off-schema)"]["metrics"]["strict"]
    assert (off["predicted"], off["reference"], off["full"]) == (3, 0, 0)
    assert data["metrics"]["strict"]["predicted"] == len(rows)  # still counted, as spurious
    assert data["located"]["classes"]["off_schema"] == 3
    # Named, a type is scored as itself.
    named = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings",
                               type_map={"definition": "PER"}).to_dict()
    assert named["per_type"]["(off-schema)"]["metrics"]["strict"]["predicted"] == 2
