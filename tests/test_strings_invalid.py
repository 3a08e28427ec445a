"""Entries of a strings file that are no mention (what parsed language-model output holds: "INVALID
OUTPUT", an echoed sentence, an empty text or label) are kept as invalid predictions: spurious,
counted and shown; never a refusal of the whole file, unless invalid output is asked to be an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spanscore
from spanscore.errors import InputError
from spanscore.io.strings import INVALID, INVALID_LABEL, StringPolicy

TEXT = "Ann Lee met Bob Smith in New York today ."
GOLD = [{"id": "d", "text": TEXT, "spans": [{"start": 0, "end": 7, "label": "PER"},
                                             {"start": 12, "end": 21, "label": "PER"}]}]
ENTRIES = [
    {"text": "Ann Lee", "label": "PER"},  # a mention, found exactly
    "INVALID OUTPUT",  # not an object
    {"text": "", "label": "PER"},  # empty text
    {"text": "Bob Smith", "label": ""},  # empty label
    {"text": 7, "label": "PER"},  # not a string
    {"text": "Ann Lee met Bob Smith in New York today . And more besides.", "label": "PER"},  # longer than the text
]


def write(tmp_path: Path, mentions: object) -> tuple[Path, Path]:
    gold, llm = tmp_path / "gold.jsonl", tmp_path / "llm.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD), encoding="utf-8")
    llm.write_text(json.dumps({"id": "d", "mentions": mentions}) + "\n", encoding="utf-8")
    return gold, llm


def test_invalid_entries_are_spurious_predictions(tmp_path: Path) -> None:
    gold, llm = write(tmp_path, ENTRIES)
    report = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings")
    data = report.to_dict()
    located = data["located"]
    assert (located["exact"], located["invalid"], located["not_found"]) == (1, 5, 0)
    # One true positive (Ann Lee) and five spurious predictions, one reference mention missed.
    strict = data["metrics"]["strict"]
    assert (strict["full"], strict["predicted"], strict["reference"]) == (1, 6, 2)
    assert strict["precision"] == pytest.approx(1 / 6)
    why = sorted(e["why"] for e in located["examples"]["invalid"])
    assert why == ['its "label" is empty', 'its "text" is empty', 'its "text" is not a string',
                   "longer than its document", 'not an object with a "text" and a "label"']
    shown = {e["text"]: e["label"] for e in located["examples"]["invalid"]}
    assert shown['"INVALID OUTPUT"'] == INVALID_LABEL  # no label given: the invalid type
    assert shown["Bob Smith"] == INVALID_LABEL  # an empty label is no label
    assert shown['{"text": "", "label": "PER"}'] == "PER"  # a label given is kept
    # Shown for what they are in the error examples.
    spurious = json.dumps(report.error_examples()["false_positive"])
    assert INVALID.strip() in spurious


def test_mentions_that_are_not_a_list_are_one_invalid_prediction(tmp_path: Path) -> None:
    gold, llm = write(tmp_path, "I could not find any entities.")
    data = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings").to_dict()
    assert data["located"]["invalid"] == 1
    assert data["metrics"]["strict"]["predicted"] == 1


@pytest.mark.parametrize(("k", "words"), [(1, "mention 1: not an object"), (2, 'mention 2: its "text" is empty'),
                                          (5, "longer than the document")])
def test_invalid_output_can_be_an_error(tmp_path: Path, k: int, words: str) -> None:
    gold, llm = write(tmp_path, [ENTRIES[0], ENTRIES[k]])
    if k != 5:
        words = words.replace(f"mention {k}", "mention 1")
    with pytest.raises(InputError, match=r"llm\.jsonl:1") as info:
        spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings",
                           strings=StringPolicy(invalid="error"))
    assert words in str(info.value) and "--invalid-strings keep" in str(info.value)


def test_invalid_entries_do_not_depend_on_their_order(tmp_path: Path) -> None:
    runs = []
    for entries in (ENTRIES, ENTRIES[::-1]):
        gold, llm = write(tmp_path, entries)
        data = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings").to_dict()
        runs.append((data["located"]["invalid"], data["metrics"]["strict"], data["metrics"]["overlap"]))
    assert runs[0] == runs[1]


def test_the_policy_takes_keep_or_error() -> None:
    with pytest.raises(spanscore.errors.OptionError, match="keep"):
        StringPolicy(invalid="drop")
