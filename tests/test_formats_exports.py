"""Real exports of the annotation tools, from their own repositories (tests/data/exports/README.md
names each file's source, commit and licence): read with the mention counts worked out here from
the raw files, scored against themselves with F1 1.0 and no boundary listed inside a reference
token, and converted to every other format without a mention changed."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError
from spanscore.io.document import Document
from spanscore.io.formats import misaligned_boundaries, read, whitespace_tokens, write

EXPORTS = Path(__file__).parent / "data" / "exports"
BRAT = EXPORTS / "brat" / "news"
LS_FOLDER = EXPORTS / "label-studio" / "completions"
NEWS = EXPORTS / "prodigy" / "news-headlines-ner-manual.jsonl"
TEACH = EXPORTS / "prodigy" / "reddit-product-ner-teach.jsonl"
DOCCANO = EXPORTS / "doccano"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def brat_counts() -> tuple[int, Counter[str]]:
    """Mentions (entity lines that are no event's trigger) and the other lines by kind, from the
    raw .ann files."""
    mentions = 0
    kinds: Counter[str] = Counter()
    for ann in BRAT.glob("*.ann"):
        lines = [line for line in ann.read_text(encoding="utf-8").splitlines() if line.strip()]
        triggers = {line.split("\t")[1].split(" ")[0].split(":")[1] for line in lines if line[0] == "E"}
        mentions += sum(1 for line in lines if line[0] == "T" and line.split("\t")[0] not in triggers)
        kinds.update(line[0] for line in lines)
    return mentions, kinds


def teach_mentions() -> tuple[int, int]:
    """Accepted spans of accepted records, one set per input (what dedupe=merge keeps), and the
    inputs with such a record."""
    by_input: dict[int, set[tuple[int, int, str]]] = {}
    for r in records(TEACH):
        if r["answer"] == "accept":
            spans = by_input.setdefault(r["_input_hash"], set())
            spans.update(
                (s["start"], s["end"], s["label"]) for s in r.get("spans", []) if s.get("answer", "accept") == "accept"
            )
    return sum(len(s) for s in by_input.values()), len(by_input)


# (format, path, reader options, documents, mentions)
EXPECTED: list[tuple[str, Path, dict[str, str], int, int]] = [
    ("brat", BRAT, {}, 13, brat_counts()[0]),
    ("label-studio", LS_FOLDER, {}, 1, 38),
    ("label-studio", LS_FOLDER / "348.json", {}, 1, 38),
    ("prodigy", NEWS, {}, sum(1 for r in records(NEWS) if r["answer"] == "accept"),
     sum(len(r.get("spans", [])) for r in records(NEWS) if r["answer"] == "accept")),
    ("prodigy", TEACH, {"dedupe": "merge"}, teach_mentions()[1], teach_mentions()[0]),
    ("doccano", DOCCANO / "v1.0-annotations-label-names.jsonl", {}, 3, 3),
    ("doccano", DOCCANO / "v1.3-annotations-label-ids.jsonl", {}, 3, 3),
    ("doccano", DOCCANO / "v1.7-export-label.jsonl", {}, 3, 4),
    ("doccano", DOCCANO / "relation-extraction.jsonl", {}, 1, 4),
    ("doccano", DOCCANO / "overlapping.jsonl", {}, 1, 2),
]
IDS = [f"{fmt}:{path.relative_to(EXPORTS)}" for fmt, path, *_ in EXPECTED]


def test_every_export_is_a_test_case() -> None:
    listed = {path for _, path, *_ in EXPECTED} | {DOCCANO / "relation-extraction-pretty-printed.jsonl"}
    files = {p for p in EXPORTS.rglob("*") if p.suffix in (".json", ".jsonl")} | {BRAT}
    assert files <= listed | {LS_FOLDER / "348.json"}, files - listed


@pytest.mark.parametrize(("fmt", "path", "options", "documents", "mentions"), EXPECTED, ids=IDS)
def test_read_with_the_right_counts(fmt: str, path: Path, options: dict[str, str], documents: int,
                                    mentions: int) -> None:
    docs, _ = read(fmt, path, **options)
    assert len(docs) == documents
    assert sum(len(d.spans) for d in docs) == mentions


def test_what_each_reader_skips_is_counted() -> None:
    _, kinds = brat_counts()
    _, notes = read("brat", BRAT)
    assert notes.skipped == {
        "relations": kinds["R"], "events": kinds["E"], "event triggers": kinds["E"], "attributes": kinds["A"],
        "notes": kinds["#"], "normalizations": kinds["N"], "equivalences": kinds["*"],
    }
    answers = Counter(r["answer"] for r in records(TEACH))
    _, notes = read("prodigy", TEACH, dedupe="merge")
    assert notes.skipped["rejected"] == answers["reject"] and notes.skipped["ignored"] == answers["ignore"]
    assert notes.skipped["repeated documents (merged)"] == answers["accept"] - teach_mentions()[1]
    _, notes = read("doccano", DOCCANO / "relation-extraction.jsonl")
    assert notes.skipped == {"relations": 3}
    _, notes = read("prodigy", NEWS)
    assert notes.skipped == {}  # the first 50 records are all accepted
    assert {r["answer"] for r in records(NEWS)} == {"accept"}


def test_labels_of_each_doccano_version() -> None:
    names = read("doccano", DOCCANO / "v1.0-annotations-label-names.jsonl")[0]
    assert [s[2] for d in names for s in d.spans] == ["ORG", "PERSON", "PERSON"]
    numbers = read("doccano", DOCCANO / "v1.3-annotations-label-ids.jsonl")[0]
    assert [s[2] for d in numbers for s in d.spans] == ["2", "1", "1"]  # doccano wrote no names
    assert [d.id for d in read("doccano", DOCCANO / "v1.7-export-label.jsonl")[0]] == ["1", "2", "3"]  # line numbers


def test_a_binary_session_needs_dedupe_and_each_choice_counts() -> None:
    with pytest.raises(InputError) as info:
        read("prodigy", TEACH)
    assert "dedupe=first" in str(info.value) and "reddit-product-ner-teach.jsonl:" in str(info.value)
    counts = {mode: sum(len(d.spans) for d in read("prodigy", TEACH, dedupe=mode)[0]) for mode in ("first", "last")}
    assert counts["first"] <= teach_mentions()[0] and counts["last"] <= teach_mentions()[0]


def test_a_pretty_printed_doccano_file_is_named_as_such() -> None:
    with pytest.raises(InputError) as info:
        read("doccano", DOCCANO / "relation-extraction-pretty-printed.jsonl")
    assert "relation-extraction-pretty-printed.jsonl:1: malformed JSON: the line ends inside an object" in str(
        info.value
    )


@pytest.mark.parametrize(("fmt", "path", "options", "documents", "mentions"), EXPECTED, ids=IDS)
def test_scored_against_itself(fmt: str, path: Path, options: dict[str, str], documents: int, mentions: int) -> None:
    args = ["evaluate", str(path), str(path), "--format", fmt, "--json"]
    for key, value in options.items():
        args += ["--reference-option", f"{key}={value}", "--predicted-option", f"{key}={value}"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["metrics"]["strict"]["f1"] == 1.0
    assert data["metrics"]["strict"]["reference"] == mentions
    # The mention of doccano's overlapping example cuts a word ("e" of "exampleA"): listed, twice.
    assert data["read"]["misaligned"]["count"] == (2 if path.name == "overlapping.jsonl" else 0)


def test_the_token_check_no_longer_flags_real_files_on_punctuation() -> None:
    """Whitespace tokens flagged mentions next to punctuation in every tool's files ("Uber's",
    "Citibank,"): the word tokens and the formats' own tokens flag none."""
    for fmt, path, options in (("brat", BRAT, {}), ("prodigy", NEWS, {}), ("label-studio", LS_FOLDER, {})):
        docs, _ = read(fmt, path, **options)
        by_whitespace = sum(
            len(misaligned_boundaries(d, d, whitespace_tokens(d.text))) for d in docs
        )
        assert by_whitespace > 0, fmt
        assert sum(len(misaligned_boundaries(d, d)) for d in docs) == 0, fmt


def test_japanese_text_has_no_word_boundaries_to_check(tmp_path: Path) -> None:
    text = "東京タワーは東京都港区にある。大阪城は大阪市中央区にある。"
    spans = [(m.start(), m.end(), "LOC") for m in re.finditer("東京都港区|大阪市中央区|東京タワー|大阪城", text)]
    gold = Document("ja", text, tuple(sorted(spans)))
    shifted = Document("ja", text, tuple(sorted((s + 1, e, label) for s, e, label in spans)))
    assert misaligned_boundaries(gold, shifted) == []
    write("brat", [gold], tmp_path / "gold")
    write("brat", [shifted], tmp_path / "pred")
    report = spanscore.evaluate(reference=tmp_path / "gold", predicted=tmp_path / "pred", format="brat")
    assert report.to_dict()["read"]["misaligned"]["count"] == 0
    assert report.metrics["strict"]["f1"] == 0.0 and report.metrics["overlap"]["partial"] == len(spans)


TARGETS = ("jsonl", "brat", "label-studio", "doccano", "prodigy")


@pytest.mark.parametrize(("fmt", "path", "options", "documents", "mentions"), EXPECTED, ids=IDS)
def test_converted_to_every_format_scores_one_against_its_source(
    fmt: str, path: Path, options: dict[str, str], documents: int, mentions: int, tmp_path: Path
) -> None:
    docs, _ = read(fmt, path, **options)
    for target in TARGETS:
        out = tmp_path / f"{target}.out"
        if target == "brat" and any(not re.fullmatch(r"[\w.-]+", d.id) for d in docs):
            continue  # ids that are no file names (Prodigy's negative hashes are: "-123")
        write(target, docs, out)
        again, _ = read(target, out)
        assert sorted(again, key=lambda d: d.id) == sorted(docs, key=lambda d: d.id), target
        report = spanscore.evaluate(
            reference=path, predicted=out, format=fmt, predicted_format=target,
            reference_options=options or None,
        )
        assert report.metrics["strict"]["f1"] == 1.0, target
        assert report.metrics["strict"]["predicted"] == mentions, target
