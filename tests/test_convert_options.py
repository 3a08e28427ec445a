"""``spanscore convert --to-option``: options of the target format's writer, checked as the
reader's ``--option`` are; and the conversions that have nothing to do (JSONL to JSONL) or cannot
be written, each refused in one line naming the user's own file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from spanscore.cli.main import cli

DATA = Path(__file__).resolve().parent / "data"
GOLD = DATA / "small.gold.jsonl"


def convert(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["convert", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def one_error(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("spanscore: error: "), output
    assert ".part" not in lines[0], lines[0]  # the temporary file an atomic write goes through
    return lines[0]


def brat_folder(root: Path) -> Path:
    """One document with a discontinuous mention (BRAT holds it; the other formats do not)."""
    root.mkdir()
    (root / "doc1.txt").write_text("Ann Lee met Bob in New York .", encoding="utf-8")
    (root / "doc1.ann").write_text("T1\tPER 0 7\tAnn Lee\nT2\tLOC 19 22;23 27\tNew York\n", encoding="utf-8")
    return root


def test_label_studio_writer_options_make_predictions_of_a_model(tmp_path: Path) -> None:
    out = tmp_path / "ls.json"
    code, text = convert(
        GOLD, "-o", out, "--from", "jsonl", "--to", "label-studio",
        "--to-option", "source=predictions", "--to-option", "model_version=v3",
    )  # fmt: skip
    assert code == 0, text
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert all(t["annotations"] == [] and [p["model_version"] for p in t["predictions"]] == ["v3"] for t in tasks)
    # Read back as the predictions of v3, they are the documents converted.
    back = tmp_path / "back.jsonl"
    code, text = convert(
        out, "-o", back, "--from", "label-studio", "--to", "jsonl",
        "--option", "source=predictions", "--option", "model_version=v3",
    )  # fmt: skip
    assert code == 0, text
    assert [json.loads(line) for line in back.read_text().splitlines()] == [
        json.loads(line) for line in GOLD.read_text().splitlines()
    ]


def test_a_whole_number_goes_as_a_number_where_the_writer_takes_one(tmp_path: Path) -> None:
    out = tmp_path / "ls.json"
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "label-studio", "--to-option", "annotator=7")
    assert code == 0, text
    assert {a["completed_by"] for t in json.loads(out.read_text()) for a in t["annotations"]} == {7}
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "label-studio", "--to-option", "from_name=ner")
    assert code == 0 and {
        r["from_name"] for t in json.loads(out.read_text()) for r in t["annotations"][0]["result"]
    } == {"ner"}


def test_drop_fragments_as_a_writer_option(tmp_path: Path) -> None:
    folder = brat_folder(tmp_path / "brat")
    out = tmp_path / "out.jsonl"
    code, text = convert(folder, "-o", out, "--from", "brat", "--to", "jsonl")
    assert code == 2 and str(out) in one_error(text) and "discontinuous" in text and not out.exists()
    for value in ("true", "True", "yes", "1"):
        code, text = convert(
            folder, "-o", out, "--from", "brat", "--to", "jsonl", "--to-option", f"drop_fragments={value}"
        )
        assert code == 0, text
        assert json.loads(out.read_text())["spans"][1] == {"start": 19, "end": 27, "label": "LOC"}
    code, text = convert(folder, "-o", out, "--from", "brat", "--to", "jsonl", "--to-option", "drop_fragments=maybe")
    assert code == 2 and "--to-option drop_fragments=maybe: drop_fragments is true or false" in one_error(text)


def test_an_unknown_writer_option_names_the_option_and_the_accepted_keys(tmp_path: Path) -> None:
    out = tmp_path / "ls.json"
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "label-studio", "--to-option", "sorce=predictions")
    line = one_error(text)
    assert code == 2 and not out.exists()
    assert "--to-option sorce" in line and "source, model_version, annotator" in line and "drop_fragments" in line
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "doccano", "--to-option", "labels=BIO")
    assert code == 2 and "the doccano writer has no option 'labels' (it takes drop_fragments)" in one_error(text)


def test_a_writer_that_takes_no_options_says_so(tmp_path: Path) -> None:
    out = tmp_path / "brat"
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "brat", "--to-option", "x=1")
    assert code == 2 and "the brat writer has no option 'x' (it takes none)" in one_error(text) and not out.exists()
    for target in ("BIO", "BIOES", "JSONL"):
        source = "jsonl" if target != "JSONL" else "BIO"
        given = GOLD if target != "JSONL" else DATA / "small.gold.conll"
        code, text = convert(given, "-o", tmp_path / "x", "--from", source, "--to", target, "--to-option", "a=b")
        assert code == 2 and "takes no options" in one_error(text) and not (tmp_path / "x").exists()


def test_a_malformed_to_option_is_refused(tmp_path: Path) -> None:
    for bad in ("noequals", "=value"):
        code, text = convert(
            GOLD, "-o", tmp_path / "o.json", "--from", "jsonl", "--to", "label-studio", "--to-option", bad
        )
        assert code == 2 and f"--to-option takes KEY=VALUE, not {bad!r}" in one_error(text)


def test_a_value_the_writer_refuses_names_the_output_file(tmp_path: Path) -> None:
    out = tmp_path / "ls.json"
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "label-studio", "--to-option", "source=bogus")
    line = one_error(text)
    assert code == 2 and f"{out}: not written" in line and "source must be annotations or predictions" in line
    assert not out.exists() and list(tmp_path.iterdir()) == []  # no temporary file left either


def test_jsonl_to_jsonl_is_refused_naming_the_file(tmp_path: Path) -> None:
    out = tmp_path / "same.jsonl"
    for source, target in (("jsonl", "jsonl"), ("JSONL", "JSONL"), ("jsonl", "JSONL")):
        code, text = convert(GOLD, "-o", out, "--from", source, "--to", target)
        line = one_error(text)
        assert code == 2 and f"{GOLD}: nothing to convert: the file is JSONL already" in line and not out.exists()
    code, text = convert(GOLD, "-o", out, "--from", "jsonl", "--to", "jsonl", "--to-option", "drop_fragments=true")
    assert code == 2 and f"{GOLD}: nothing to convert" in one_error(text)


def test_write_errors_name_the_output_not_a_temporary_file(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for args in (
        (GOLD, "--from", "jsonl", "--to", "doccano"),
        (GOLD, "--from", "jsonl", "--to", "BIO"),
        (DATA / "small.gold.conll", "--from", "BIO", "--to", "BIOES"),
        (DATA / "small.gold.conll", "--from", "BIO", "--to", "JSONL"),
    ):
        code, text = convert(args[0], "-o", folder, *args[1:])
        assert code == 2 and f"{folder}: cannot write" in one_error(text), (args, text)
    assert list(folder.iterdir()) == []
    copy = tmp_path / "in.conll"
    copy.write_bytes((DATA / "small.gold.conll").read_bytes())
    code, text = convert(copy, "-o", copy, "--to", "BIOES")
    assert code == 2 and f"--output {copy} is one of the inputs" in one_error(text)
    assert copy.read_bytes() == (DATA / "small.gold.conll").read_bytes()


def test_the_command_exits_2_without_a_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "spanscore.cli.main", "convert", str(GOLD), "-o", str(tmp_path / "o.json"),
         "--from", "jsonl", "--to", "prodigy", "--to-option", "session=x"],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "spanscore: error: --to-option session: the prodigy writer has no option 'session' (it takes drop_fragments)"
    )
