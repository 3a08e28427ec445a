"""Readers of the outputs LLM-NER users already have: LangExtract's annotated documents and
GLiNER-style span lists, read as mentions with the places the tool gives (placed there, checked
against the reference's text), the rest located like strings; every count checked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "real" / "llm"
TEXT = "Angela Merkel met Emmanuel Macron in Paris to discuss the Paris Agreement ."
GOLD = [{"id": "1", "text": TEXT, "spans": [
    {"start": 0, "end": 13, "label": "PER"}, {"start": 18, "end": 33, "label": "PER"},
    {"start": 37, "end": 42, "label": "LOC"}, {"start": 58, "end": 73, "label": "MISC"}]}]


def lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def score(tmp_path: Path, fmt: str, rows: list[Any]) -> dict[str, Any]:
    gold = lines(tmp_path / "gold.jsonl", GOLD)
    pred = lines(tmp_path / f"{fmt}.jsonl", rows)
    report = spanscore.evaluate(reference=gold, predicted=pred, format="jsonl", predicted_format=fmt)
    return report.to_dict()


def extraction(cls: Any, text: Any, start: int | None = None, end: int | None = None,
               status: str | None = "match_exact") -> dict[str, Any]:
    return {"extraction_class": cls, "extraction_text": text,
            "char_interval": None if start is None else {"start_pos": start, "end_pos": end},
            "alignment_status": status if start is not None else None, "extraction_index": 1, "group_index": 0,
            "description": None, "attributes": None}


def test_langextract_extractions_are_placed_where_langextract_aligned_them(tmp_path: Path) -> None:
    doc = {"document_id": "1", "text": TEXT, "extractions": [
        extraction("PER", "Angela Merkel", 0, 13),
        extraction("PER", "Emanuel Macron", 18, 33, "match_fuzzy"),  # placed as aligned: the text checked is ours
        extraction("LOC", "Paris", 37, 42),
        extraction("MISC", "Paris agreement"),  # not aligned: located by spanscore (normalised)
        extraction("PER", "Olaf Scholz"),  # not aligned, nowhere: spurious
        extraction("", "x", 0, 1),  # invalid: no class
    ]}
    data = score(tmp_path, "langextract", [doc])
    located = data["located"]
    assert (located["given"], located["normalised"], located["not_found"], located["invalid"]) == (3, 1, 1, 1)
    assert located["statuses"] == {"match_exact": 2, "match_fuzzy": 1, "unaligned": 2}  # the invalid one has none
    strict = data["metrics"]["strict"]
    # 4 of 4 reference mentions found; 6 predictions, 2 spurious (Olaf Scholz, the invalid one).
    assert (strict["full"], strict["predicted"], strict["reference"]) == (4, 6, 4)
    assert "predicted-format:langextract" in data["signature"]


def test_gliner_spans_are_placed_or_located(tmp_path: Path) -> None:
    row = {"id": "1", "entities": [
        {"start": 0, "end": 13, "text": "Angela Merkel", "label": "PER", "score": 0.98},
        {"start": 17, "end": 32, "text": "Emmanuel Macron", "label": "PER", "score": 0.91},  # off by one: located
        {"start": 37, "end": 42, "text": "Paris", "label": "LOC", "score": 0.7},
        {"start": 58, "end": 73, "label": "MISC", "score": 0.4},  # no text: offsets trusted
        {"start": 0, "end": 999, "label": "LOC"},  # outside the text, no text to locate: invalid
    ]}
    data = score(tmp_path, "gliner", [row])
    located = data["located"]
    assert (located["given"], located["exact"], located["invalid"]) == (3, 1, 1)
    assert located["statuses"] == {"offsets not matching the text": 1}
    strict = data["metrics"]["strict"]
    assert (strict["full"], strict["predicted"], strict["reference"]) == (4, 5, 4)


def test_a_placed_span_is_not_taken_again_by_a_string(tmp_path: Path) -> None:
    # GLiNER placed the second "Paris" (the one in "Paris Agreement"); the unplaced "Paris" string
    # takes the first, the free one.
    row = {"id": "1", "entities": [{"start": 58, "end": 63, "text": "Paris", "label": "LOC"},
                                   {"text": "Paris", "label": "LOC"}]}
    data = score(tmp_path, "gliner", [row])
    assert data["located"]["examples"]["exact"][0]["start"] == 37


def test_readers_refuse_what_is_not_their_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"langextract\.jsonl:1: .*document_id"):
        score(tmp_path, "langextract", [{"id": "1", "mentions": []}])
    with pytest.raises(InputError, match=r"gliner\.jsonl:1: .*entities"):
        score(tmp_path, "gliner", [{"id": "1", "mentions": []}])
    with pytest.raises(InputError, match="differs from the reference"):
        score(tmp_path, "langextract", [{"document_id": "1", "text": "other", "extractions": []}])


def test_the_command_line_reads_both(tmp_path: Path) -> None:
    gold = lines(tmp_path / "gold.jsonl", GOLD)
    pred = lines(tmp_path / "p.jsonl", [{"id": "1", "entities": [{"start": 0, "end": 13, "label": "PER"}]}])
    out = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--predicted-format", "gliner", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["located"]["given"] == 1


def test_a_real_langextract_output(tmp_path: Path) -> None:
    """LangExtract's own alignment and writer (tests/data/real/llm/README.md), scored against the
    sample documents it was made on; every count worked out by hand below."""
    from spanscore.programs.samples import write_samples

    write_samples(tmp_path / "s")
    gold = tmp_path / "gold6.jsonl"
    gold.write_text("".join((tmp_path / "s" / "gold.jsonl").read_text(encoding="utf-8").splitlines(True)[:6]),
                    encoding="utf-8")
    data = spanscore.evaluate(reference=gold, predicted=REAL / "langextract" / "output.jsonl", format="jsonl",
                              predicted_format="langextract").to_dict()
    located = data["located"]
    assert located["statuses"] == {"match_exact": 14, "match_lesser": 1, "unaligned": 3}
    # The 15 aligned where LangExtract put them; of the 3 unaligned, "Emanuel Macron" is found
    # fuzzily at "Emmanuel Macron", "Christine Lagarde" and "FIFA World Cup" nowhere.
    assert (located["given"], located["fuzzy"], located["not_found"]) == (15, 1, 2)
    assert located["examples"]["fuzzy"][0]["found"] == "Emmanuel Macron"
    # 17 reference mentions; 15 exact (14 aligned exactly, Emmanuel Macron); "Paris climate
    # Agreement" aligned to "Paris" is a boundary error against "Paris Agreement"; "World Cup" missed.
    semeval = data["semeval"]["strict"]
    assert (semeval["correct"], semeval["incorrect"], semeval["missed"], semeval["spurious"]) == (15, 1, 1, 2)
    assert data["metrics"]["overlap"]["predicted"] == 18
