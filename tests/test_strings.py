"""Mentions given as strings (generative NER): located exactly, normalised, fuzzily or not at all,
then scored under every criterion like any other prediction (the worked example of docs/formats.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.io.strings import NOT_FOUND, StringPolicy

REFERENCE = [
    {
        "id": "d1",
        "text": "Barack Obama met Angela Merkel in Berlin. Obama later flew home.",
        "spans": [(0, 12, "PER"), (17, 30, "PER"), (34, 40, "LOC"), (42, 47, "PER")],
    },
    {
        "id": "d2",
        "text": "The White House said the U.S. Senate will vote.",
        "spans": [(4, 15, "ORG"), (25, 36, "ORG")],
    },
    {"id": "d3", "text": "Paris and Parisian cafes.", "spans": [(0, 5, "LOC")]},
]
STRINGS = [
    {
        "id": "d1",
        "mentions": [
            {"text": "Barack Obama", "label": "PER"},  # exact
            {"text": "angela  merkel", "label": "PER"},  # normalised: case and whitespace
            {"text": "Berlin", "label": "LOC"},  # exact
            {"text": "Obama", "label": "PER"},  # exact, the free occurrence; two in the text: ambiguous
            {"text": "Joe Biden", "label": "PER"},  # hallucinated: nowhere in the text
        ],
    },
    {
        "id": "d2",
        "mentions": [
            {"text": "white house.", "label": "ORG"},  # normalised: case and edge punctuation
            {"text": "US Senate", "label": "ORG"},  # a paraphrase: fuzzy
        ],
        "text": "The White House said the U.S. Senate will vote.",
    },
    {"id": "d3", "mentions": [{"text": "Paris", "label": "LOC"}]},  # the word, not inside "Parisian"
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    lines = []
    for row in rows:
        row = dict(row)
        if "spans" in row:
            row["spans"] = [{"start": s, "end": e, "label": label} for s, e, label in row["spans"]]
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write_jsonl(tmp_path / "gold.jsonl", REFERENCE), write_jsonl(tmp_path / "llm.jsonl", STRINGS)


def test_each_string_is_found_as_the_policy_allows(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, llm = files
    report = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings")
    located = report.to_dict()["located"]
    assert {k: located[k] for k in ("exact", "normalised", "fuzzy", "not_found", "ambiguous")} == {
        "exact": 4, "normalised": 2, "fuzzy": 1, "not_found": 1, "ambiguous": 1
    }
    assert located["examples"]["fuzzy"][0]["found"] == "U.S. Senate"
    assert located["examples"]["not_found"][0]["text"] == "Joe Biden"

    # The same run written out by hand, offsets worked out from the texts: identical scores.
    d1 = REFERENCE[0]["text"] + NOT_FOUND
    hallucination = (len(d1), len(d1) + len("Joe Biden"), "PER")
    d1 += "Joe Biden"
    by_hand_gold = [dict(REFERENCE[0], text=d1), REFERENCE[1], REFERENCE[2]]
    by_hand_pred = [
        {"id": "d1", "text": d1, "spans": [(0, 12, "PER"), (17, 30, "PER"), (34, 40, "LOC"), (42, 47, "PER"),
                                           hallucination]},
        {"id": "d2", "text": REFERENCE[1]["text"], "spans": [(4, 15, "ORG"), (25, 36, "ORG")]},
        {"id": "d3", "text": REFERENCE[2]["text"], "spans": [(0, 5, "LOC")]},
    ]
    expected = spanscore.evaluate(
        reference=write_jsonl(tmp_path / "g2.jsonl", by_hand_gold),
        predicted=write_jsonl(tmp_path / "p2.jsonl", by_hand_pred),
        format="jsonl",
    ).to_dict()
    got = report.to_dict()
    assert got["metrics"] == expected["metrics"] and got["semeval"] == expected["semeval"]
    # every mention found, one hallucinated: precision 7/8, recall 7/7 under every criterion
    assert got["metrics"]["strict"]["precision"] == pytest.approx(7 / 8)
    assert got["metrics"]["strict"]["recall"] == 1.0
    assert "predicted-format:strings|locate:exact+normalised+fuzzy0.85" in got["signature"]
    # the hallucinated text is shown as what it is
    spurious = report.error_examples()["false_positive"]
    assert any("Joe Biden" in json.dumps(e) and "not found in the text" in json.dumps(e) for e in spurious)


def test_stricter_policies_find_fewer(files: tuple[Path, Path]) -> None:
    gold, llm = files
    counts = {}
    for name, policy in (
        ("exact", StringPolicy(normalised=False, fuzzy=None)),
        ("normalised", StringPolicy(normalised=True, fuzzy=None)),
    ):
        located = spanscore.evaluate(
            reference=gold, predicted=llm, format="jsonl", predicted_format="strings", strings=policy
        ).to_dict()["located"]
        counts[name] = (located["exact"], located["normalised"], located["fuzzy"], located["not_found"])
    assert counts["exact"] == (4, 0, 0, 4)
    assert counts["normalised"] == (4, 2, 0, 2)


def test_repeated_strings_take_occurrences_in_order(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", [{"id": "a", "text": "Bob saw Bob and Bob.", "spans": [(0, 3, "PER"),
                                                                                                     (8, 11, "PER")]}])
    llm = write_jsonl(tmp_path / "s.jsonl", [{"id": "a", "mentions": [{"text": "Bob", "label": "PER"}] * 2}])
    r = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings").to_dict()
    assert r["metrics"]["strict"]["f1"] == 1.0  # the first two occurrences, in order
    assert r["located"]["ambiguous"] == 2  # three occurrences for two mentions


def test_bad_strings_are_one_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, _ = files
    cases = {
        "unknown id": ([{"id": "zz", "mentions": []}], "not a document of the reference"),
        "other text": ([{"id": "d3", "mentions": [], "text": "something else"}], "differs from the reference"),
        "bad mention": ([{"id": "d3", "mentions": [{"text": "Paris"}]}], "mention 0"),
        "twice": ([{"id": "d3", "mentions": []}, {"id": "d3", "mentions": []}], "given twice"),
        "no mentions": ([{"id": "d3"}], '"mentions"'),
    }
    for name, (rows, needle) in cases.items():
        path = write_jsonl(tmp_path / f"{name}.jsonl", rows)
        # A mention that is no mention is an invalid prediction, unless asked to be an error
        # (tests/test_strings_invalid.py); the other cases are always errors.
        with pytest.raises(InputError, match=needle):
            spanscore.evaluate(reference=gold, predicted=path, format="jsonl", predicted_format="strings",
                               strings=StringPolicy(invalid="error"))
    with pytest.raises(OptionError, match="character offsets"):
        spanscore.evaluate(reference=gold, predicted=gold, format="conll", predicted_format="strings")
    with pytest.raises(OptionError, match="fuzzy threshold"):
        StringPolicy(fuzzy=1.5)


def test_the_command_line_shows_how_strings_were_found(files: tuple[Path, Path]) -> None:
    gold, llm = files
    out = CliRunner().invoke(cli, ["evaluate", str(gold), str(llm), "--predicted-format", "strings"])
    assert out.exit_code == 0, out.output
    assert "Mentions given as strings, located" in out.output and "Joe Biden" in out.output
    data = json.loads(
        CliRunner().invoke(
            cli, ["evaluate", str(gold), str(llm), "--predicted-format", "strings", "--locate", "exact", "--json"]
        ).stdout
    )
    assert data["located"]["not_found"] == 4 and "locate:exact|" in data["signature"] + "|"


def test_the_report_folder_shows_how_strings_were_found(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, llm = files
    out = CliRunner().invoke(
        cli, ["evaluate", str(gold), str(llm), "--predicted-format", "strings", "--report", str(tmp_path / "rep")]
    )
    assert out.exit_code == 0, out.output
    for name in ("summary.md", "report.html"):
        assert "Mentions given as strings" in (tmp_path / "rep" / name).read_text(encoding="utf-8")
    assert "not found in the text] Joe Biden" in (tmp_path / "rep" / "overlap.csv").read_text(encoding="utf-8")
