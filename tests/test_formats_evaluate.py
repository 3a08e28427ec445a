"""Annotation tools' exports scored by ``evaluate``: each equals the same documents scored as JSONL,
formats mix by document id, readers' skips and misaligned boundaries reach the output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_formats import D1, D2, label_studio_export

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.io.formats import Doc, read, write

TEXT = "Ann Lee met Bob Smith in New York today ."
GOLD = [
    Doc("a", TEXT, ((0, 7, "PER"), (12, 21, "PER"), (25, 33, "LOC"))),
    Doc("b", "nothing here", ()),
]
PRED = [
    Doc("a", TEXT, ((0, 3, "PER"), (12, 21, "ORG"), (26, 33, "LOC"))),  # 26: inside the token "New"
    Doc("b", "nothing here", ((0, 7, "MISC"),)),
]


def as_jsonl(docs: list[Doc], path: Path) -> Path:
    write("jsonl", docs, path)
    return path


def scores(report: Any) -> dict[str, Any]:
    data = report.to_dict()
    return {"metrics": data["metrics"], "semeval": data["semeval"], "per_type": data["per_type"]}


def test_brat_against_doccano_equals_the_same_documents_as_jsonl(tmp_path: Path) -> None:
    write("brat", GOLD, tmp_path / "gold")
    write("doccano", PRED, tmp_path / "pred.jsonl")
    mixed = spanscore.evaluate(
        reference=tmp_path / "gold", predicted=tmp_path / "pred.jsonl", format="brat", predicted_format="doccano"
    )
    plain = spanscore.evaluate(
        reference=as_jsonl(GOLD, tmp_path / "g.jsonl"), predicted=as_jsonl(PRED, tmp_path / "p.jsonl"), format="jsonl"
    )
    assert scores(mixed) == scores(plain)
    read_notes = mixed.to_dict()["read"]
    # the prediction that starts inside "New" is counted and listed, and scored as it is
    assert read_notes["misaligned"]["count"] == 1
    assert read_notes["misaligned"]["examples"][0]["id"] == "a"
    assert "format:brat" in mixed.signature and "predicted-format:doccano" in mixed.signature


def test_label_studio_annotations_against_a_model_version(tmp_path: Path) -> None:
    export = label_studio_export(tmp_path / "export.json")
    report = spanscore.evaluate(
        reference=export,
        predicted=export,
        format="label-studio",
        predicted_options={"source": "predictions", "model_version": "v1"},
    )
    gold, _ = read("label-studio", export)
    pred, _ = read("label-studio", export, source="predictions", model_version="v1")
    plain = spanscore.evaluate(
        reference=as_jsonl(gold, tmp_path / "g.jsonl"), predicted=as_jsonl(pred, tmp_path / "p.jsonl"), format="jsonl"
    )
    assert scores(report) == scores(plain)
    assert report.to_dict()["read"]["reference"]["skipped"]["cancelled annotations"] == 1
    out = CliRunner().invoke(
        cli,
        ["evaluate", str(export), str(export), "--format", "label-studio", "--predicted-option", "source=predictions",
         "--predicted-option", "model_version=v1", "--json"],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["metrics"] == plain.to_dict()["metrics"]
    wrong = CliRunner().invoke(
        cli,
        ["evaluate", str(export), str(export), "--format", "label-studio", "--predicted-option", "source=predictions",
         "--predicted-option", "model_version=v9"],
    )
    assert wrong.exit_code == 2 and "v1" in wrong.output and "Traceback" not in wrong.output


def test_strings_against_a_brat_reference_and_the_tables(tmp_path: Path) -> None:
    write("brat", [D1, D2], tmp_path / "gold")
    mentions = [{"text": D1.text[s:e], "label": label} for s, e, label in D1.spans]
    (tmp_path / "llm.jsonl").write_text(json.dumps({"id": D1.id, "mentions": mentions}) + "\n", encoding="utf-8")
    out = CliRunner().invoke(
        cli, ["evaluate", str(tmp_path / "gold"), str(tmp_path / "llm.jsonl"), "--format", "brat",
              "--predicted-format", "strings", "--json"],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["located"]["not_found"] == 0
    assert data["metrics"]["strict"]["recall"] == pytest.approx(len(D1.spans) / (len(D1.spans) + len(D2.spans)))
    tables = CliRunner().invoke(
        cli, ["evaluate", str(tmp_path / "gold"), str(tmp_path / "gold"), "--format", "brat"]
    )
    assert tables.exit_code == 0 and "Reading the annotation files" in tables.output


def test_formats_that_cannot_meet_are_refused(tmp_path: Path) -> None:
    write("brat", GOLD, tmp_path / "gold")
    with pytest.raises(OptionError, match="character offsets"):
        spanscore.evaluate(reference=tmp_path / "gold", predicted=tmp_path / "gold", format="brat",
                           predicted_format="conll")
    out = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "gold"), str(tmp_path / "gold"), "--format", "brat",
                                   "--reference-option", "nonsense"])
    assert out.exit_code == 2 and "KEY=VALUE" in out.output


def test_convert_between_tools_through_jsonl(tmp_path: Path) -> None:
    write("brat", GOLD, tmp_path / "gold")
    runner = CliRunner()
    steps = [
        (tmp_path / "gold", "brat", tmp_path / "a.jsonl", "jsonl"),
        (tmp_path / "a.jsonl", "jsonl", tmp_path / "ls.json", "label-studio"),
        (tmp_path / "ls.json", "label-studio", tmp_path / "doccano.jsonl", "doccano"),
        (tmp_path / "doccano.jsonl", "doccano", tmp_path / "brat2", "brat"),
    ]
    for src, fmt_in, dst, fmt_out in steps:
        out = runner.invoke(cli, ["convert", str(src), "-o", str(dst), "--from", fmt_in, "--to", fmt_out])
        assert out.exit_code == 0, out.output
    assert read("brat", tmp_path / "brat2")[0] == read("brat", tmp_path / "gold")[0]
    refused = runner.invoke(cli, ["convert", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "x"), "--from", "BIO",
                                  "--to", "brat"])
    assert refused.exit_code == 2 and "JSONL first" in refused.output


def test_the_report_folder_lists_what_was_skipped_and_misaligned(tmp_path: Path) -> None:
    write("brat", GOLD, tmp_path / "gold")
    write("doccano", PRED, tmp_path / "pred.jsonl")
    out = CliRunner().invoke(
        cli,
        ["evaluate", str(tmp_path / "gold"), str(tmp_path / "pred.jsonl"), "--format", "brat", "--predicted-format",
         "doccano", "--report", str(tmp_path / "rep")],
    )
    assert out.exit_code == 0, out.output
    for name in ("summary.md", "report.html"):
        page = (tmp_path / "rep" / name).read_text(encoding="utf-8")
        assert "Reading the annotation files" in page and "boundary inside a reference token" in page
