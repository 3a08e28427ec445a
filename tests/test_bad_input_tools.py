"""Bad input to the annotation tools' readers as users meet it: options of the wrong Python type,
export files saved in another encoding, and options that select nothing. Each is one line naming
the file (or the option) and what to do: exit 2 on the command line, a SpanscoreError in Python,
never a traceback and never an empty score."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError, SpanscoreError
from spanscore.io.formats import read

REAL = Path(__file__).parent / "data" / "real" / "tools"
EXPORTS = Path(__file__).parent / "data" / "exports"
REVIEW = REAL / "explosion-projects" / "restaurant-review-two-sessions.jsonl"
DOCCANO_USERS = REAL / "doccano-transformer" / "labeling.jsonl"
DOCCANO_LABELS = REAL / "doccano-transformer" / "labeling_text_label.jsonl"
LS_HISTORY = REAL / "label-studio-sdk" / "csv_test_history.json"
LS_FOLDER = EXPORTS / "label-studio" / "completions"

TEXT = "Émile Zola à Paris"
DOCCANO_LINE = {"id": 1, "text": TEXT, "label": [[0, 10, "PER"], [13, 18, "LOC"]]}
PRODIGY_LINE = {"text": TEXT, "spans": [{"start": 13, "end": 18, "label": "LOC"}], "_input_hash": 7,
                "answer": "accept"}
LS_TASKS = [{"id": 1, "data": {"text": TEXT}, "annotations": [{"result": [
    {"type": "labels", "from_name": "label", "value": {"start": 13, "end": 18, "labels": ["LOC"]}}]}]}]


def one_line_cli(args: list[str], *needles: str) -> str:
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    errors = [line for line in out.output.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("spanscore: error: "), out.output
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0].removeprefix("spanscore: error: ")


def evaluate(fmt: str, path: Path, **options: Any) -> Any:
    return spanscore.evaluate(reference=path, predicted=path, format=fmt, reference_options=options or None,
                              predicted_options=options or None)


# ------------------------------------------------------------------------------------------------
# Options that select nothing: what was given and what the file has


SELECT_NOTHING: dict[str, tuple[str, Path, dict[str, str], tuple[str, ...]]] = {
    "label-studio annotator": ("label-studio", LS_HISTORY, {"annotator": "ann@example.org"},
                               ("csv_test_history.json:", "annotator='ann@example.org'", "'14'",
                                "'sergei@heartex.test'")),
    "label-studio annotator, none named": ("label-studio", LS_FOLDER, {"annotator": "7"},
                                           ("completions", "annotator='7'", "no annotation names its annotator")),
    "label-studio from_name": ("label-studio", LS_FOLDER, {"from_name": "label"},
                               ("from_name='label'", "'ner'")),
    "prodigy session": ("prodigy", REVIEW, {"session": "ner-model"},
                        ("restaurant-review-two-sessions.jsonl:", "session='ner-model'", "'original_annotations'",
                         "'ner_model'")),
    "doccano user": ("doccano", DOCCANO_USERS, {"user": "alice"},
                     ("labeling.jsonl:", "user='alice'", "those present: '1', '2'")),
    "doccano user on a file of one annotator": (
        "doccano", DOCCANO_LABELS, {"user": "1"},
        ("labeling_text_label.jsonl:", "this file has none", "leave user= out"),
    ),
}


@pytest.mark.parametrize("name", list(SELECT_NOTHING))
def test_an_option_that_selects_nothing_names_what_exists(name: str) -> None:
    fmt, path, options, needles = SELECT_NOTHING[name]
    args = ["evaluate", str(path), str(path), "--format", fmt]
    for key, value in options.items():
        args += ["--reference-option", f"{key}={value}", "--predicted-option", f"{key}={value}"]
    message = one_line_cli(args, *needles)
    with pytest.raises(OptionError) as info:
        evaluate(fmt, path, **options)
    assert str(info.value) == message


def test_a_session_whose_records_were_all_rejected_says_so(tmp_path: Path) -> None:
    path = tmp_path / "rejected.jsonl"
    path.write_text(json.dumps({**PRODIGY_LINE, "_session_id": "s1", "answer": "reject"}) + "\n"
                    + json.dumps({**PRODIGY_LINE, "_input_hash": 8, "_session_id": "s2"}) + "\n", encoding="utf-8")
    message = one_line_cli(["evaluate", str(path), str(path), "--format", "prodigy",
                            "--reference-option", "session=s1", "--predicted-option", "session=s1"],
                           "rejected.jsonl:", "no document of the reference is left to score", "rejected: 1",
                           "other sessions: 1")
    with pytest.raises(InputError) as info:
        evaluate("prodigy", path, session="s1")
    assert str(info.value) == message


# ------------------------------------------------------------------------------------------------
# Options of the wrong Python type


WRONG_TYPES: list[tuple[str, Path | Callable[[Path], Path], dict[str, Any], str]] = [
    ("label-studio", LS_HISTORY, {"annotator": [14]}, "annotator is a user id or e-mail, not [14]"),
    ("label-studio", LS_HISTORY, {"annotator": True}, "annotator is a user id or e-mail, not True"),
    ("label-studio", LS_HISTORY, {"source": 1}, "source must be annotations or predictions, not 1"),
    ("label-studio", LS_HISTORY, {"source": ["annotations"]}, "source must be annotations or predictions"),
    ("label-studio", LS_HISTORY, {"text_key": 0}, "text_key is the name of a field or tag (text), not 0"),
    ("label-studio", LS_HISTORY, {"from_name": ("label",)}, "from_name is the name of a field or tag"),
    ("label-studio", LS_HISTORY, {"source": "predictions", "model_version": 1.5},
     "model_version is a version's name (text), not 1.5"),
    ("prodigy", REVIEW, {"session": 1}, "session is a session id (text, as _session_id gives it), not 1"),
    ("prodigy", REVIEW, {"dedupe": True}, "dedupe takes first, last, merge, not True"),
    ("doccano", DOCCANO_USERS, {"user": [1]}, "user is a user id or name, not [1]"),
    ("doccano", DOCCANO_USERS, {"user": 1.0}, "user is a user id or name, not 1.0"),
    ("brat", EXPORTS / "brat" / "news", {"drop_fragments": 2}, "drop_fragments is true or false, not 2"),
]


@pytest.mark.parametrize(("fmt", "path", "options", "message"), WRONG_TYPES,
                         ids=[f"{f}-{next(iter(o))}={o[next(iter(o))]!r}" for f, _, o, _ in WRONG_TYPES])
def test_an_option_of_the_wrong_type_is_one_line(fmt: str, path: Path, options: dict[str, Any], message: str) -> None:
    """The readers, called directly (``spanscore.io.formats.read``), check their options' types."""
    assert isinstance(path, Path)
    with pytest.raises(OptionError) as info:
        read(fmt, path, **options)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("value", [[14], (14,), {"id": 14}, {14}])
def test_evaluate_refuses_an_option_value_that_is_no_single_value(value: Any) -> None:
    """``evaluate`` hands the readers text, as the command line does: a list made text ("[14]")
    would select nothing and be reported as if the user had typed it."""
    with pytest.raises(OptionError) as info:
        evaluate("label-studio", LS_HISTORY, annotator=value)
    assert str(info.value) == (
        f"reference_options: annotator is a {type(value).__name__} ({value!r}): give one text, number, or true/false"
    )


def test_evaluate_passes_numbers_and_flags_as_the_command_line_does() -> None:
    assert evaluate("label-studio", LS_HISTORY, annotator=14).counts.documents == 1
    assert evaluate("brat", EXPORTS / "brat" / "news", drop_fragments=True).metrics["strict"]["f1"] == 1.0
    with pytest.raises(OptionError, match="dedupe takes first, last, merge, not 'True'"):
        evaluate("prodigy", REVIEW, dedupe=True)


def test_numbers_that_name_things_are_read_as_the_file_writes_them() -> None:
    """A user id given as a number in Python is the id the file holds (the command line gives
    text; both work)."""
    assert [d.id for d in read("label-studio", LS_HISTORY, annotator=14)[0]] == ["6141"]
    assert [d.id for d in read("doccano", DOCCANO_USERS, user=1)[0]] == ["2578"]
    assert read("doccano", DOCCANO_USERS, user=2)[0] == read("doccano", DOCCANO_USERS, user="2")[0]


def test_a_model_version_given_as_a_number_finds_the_version(tmp_path: Path) -> None:
    tasks = [{**LS_TASKS[0], "annotations": [], "predictions": [
        {"model_version": 3, "result": LS_TASKS[0]["annotations"][0]["result"]},
        {"model_version": "4", "result": []}]}]
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    docs, _ = read("label-studio", path, source="predictions", model_version=3)
    assert docs[0].spans == ((13, 18, "LOC"),)
    with pytest.raises(OptionError, match=r"no predictions of model version '5' \(the file has '3', '4'\)"):
        read("label-studio", path, source="predictions", model_version=5)


# ------------------------------------------------------------------------------------------------
# Export files in another encoding


def write_doccano(path: Path, encoding: str) -> Path:
    path.write_bytes((json.dumps(DOCCANO_LINE, ensure_ascii=False) + "\n").encode(encoding))
    return path


def write_prodigy(path: Path, encoding: str) -> Path:
    path.write_bytes((json.dumps(PRODIGY_LINE, ensure_ascii=False) + "\n").encode(encoding))
    return path


def write_ls(path: Path, encoding: str) -> Path:
    path.write_bytes(json.dumps(LS_TASKS, ensure_ascii=False, indent=1).encode(encoding))
    return path


def write_brat(path: Path, encoding: str) -> Path:
    path.mkdir()
    (path / "doc.txt").write_bytes(TEXT.encode(encoding))
    (path / "doc.ann").write_text("T1\tLOC 13 18\tParis\n", encoding="utf-8")
    return path


def write_pipeline(path: Path, encoding: str) -> Path:
    line = {"id": 1, "text": TEXT, "entities": [{"entity_group": "LOC", "score": 0.9, "start": 13, "end": 18}]}
    path.write_bytes((json.dumps(line, ensure_ascii=False) + "\n").encode(encoding))
    return path


WRITERS = {"doccano": (write_doccano, "x.jsonl"), "prodigy": (write_prodigy, "x.jsonl"),
           "label-studio": (write_ls, "x.json"), "brat": (write_brat, "x"), "hf-pipeline": (write_pipeline, "x.jsonl")}
UTF16 = "UTF-16 text (as Windows PowerShell and Notepad save it): spanscore reads UTF-8; save it as UTF-8"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_utf16_export_is_named_as_such(fmt: str, encoding: str, tmp_path: Path) -> None:
    write, name = WRITERS[fmt]
    path = write(tmp_path / name, encoding)
    message = one_line_cli(["evaluate", str(path), str(path), "--format", fmt], UTF16)
    assert str(path) in message
    with pytest.raises(InputError) as info:
        evaluate(fmt, path)
    assert str(info.value) == message


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_latin1_export_is_refused_naming_the_byte(fmt: str, tmp_path: Path) -> None:
    write, name = WRITERS[fmt]
    path = write(tmp_path / name, "latin-1")
    message = one_line_cli(["evaluate", str(path), str(path), "--format", fmt], "not UTF-8 text", "at byte")
    with pytest.raises(SpanscoreError) as info:
        evaluate(fmt, path)
    assert str(info.value) == message


@pytest.mark.parametrize("fmt", ["doccano", "prodigy", "label-studio", "hf-pipeline"])
def test_a_utf8_export_with_a_byte_order_mark_and_windows_line_ends_reads_as_without(
    fmt: str, tmp_path: Path
) -> None:
    write, name = WRITERS[fmt]
    plain = write(tmp_path / name, "utf-8")
    marked = tmp_path / f"marked-{name}"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    assert read(fmt, marked)[0] == read(fmt, plain)[0]
    report = spanscore.evaluate(reference=plain, predicted=marked, format=fmt)
    assert report.metrics["strict"]["f1"] == 1.0 and report.metrics["strict"]["reference"] >= 1


# ------------------------------------------------------------------------------------------------
# A Hugging Face pipeline's output


ENTITY = {"entity_group": "LOC", "score": 0.98, "word": "paris", "start": 13, "end": 18}
PIPELINE_CASES: dict[str, tuple[list[Any], dict[str, str], tuple[str, ...]]] = {
    "the list alone": ([[ENTITY]], {}, (":1:", "the pipeline's list of entities alone, without its text")),
    "an empty list alone": ([[]], {}, (":1:", "without its text")),
    "no entities field": ([{"id": 1, "text": TEXT, "ner": [ENTITY]}], {},
                          (":1:", "no 'entities' (its keys: 'id', 'text', 'ner'; name the field", "key=")),
    "another field named": ([{"id": 1, "text": TEXT, "ner": [ENTITY]}], {"key": "predictions"},
                            (":1:", "no 'predictions'",)),
    "a slow tokenizer": ([{"id": 1, "text": TEXT, "entities": [{**ENTITY, "start": None, "end": None}]}], {},
                         (":1:", "entities[0] has no character offsets", "use a fast one")),
    "per-token tags": ([{"id": 1, "text": TEXT, "entities": [{"entity": "B-LOC", "index": 4, "start": 13, "end": 18,
                                                              "word": "paris", "score": 0.9}]}], {},
                       (":1:", "sub-word token's tag ('B-LOC')", 'aggregation_strategy="simple"')),
    "min_score not a number": ([{"id": 1, "text": TEXT, "entities": [ENTITY]}], {"min_score": "high"},
                               ("hf-pipeline: min_score is a number (0.5), not 'high'",)),
    "min_score without scores": ([{"id": 1, "text": TEXT, "entities": [{**ENTITY, "score": None}]}],
                                 {"min_score": "0.5"}, (":1:", "min_score needs a score")),
    "offsets outside the text": ([{"id": 1, "text": TEXT, "entities": [{**ENTITY, "end": 99}]}], {},
                                 (":1:", "entities[0]: need 0 <= start < end <= 18")),
}


@pytest.mark.parametrize("name", list(PIPELINE_CASES))
def test_a_pipeline_output_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    rows, options, needles = PIPELINE_CASES[name]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    args = ["evaluate", str(path), str(path), "--format", "hf-pipeline"]
    for key, value in options.items():
        args += ["--reference-option", f"{key}={value}", "--predicted-option", f"{key}={value}"]
    message = one_line_cli(args, *needles)
    with pytest.raises(SpanscoreError) as info:
        evaluate("hf-pipeline", path, **options)
    assert str(info.value) == message


def test_a_pipeline_option_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "pred.jsonl"
    path.write_text(json.dumps({"id": 1, "text": TEXT, "entities": [ENTITY]}) + "\n", encoding="utf-8")
    with pytest.raises(OptionError, match="key is the name of the field holding the pipeline's output, not 5"):
        read("hf-pipeline", path, key=5)
    with pytest.raises(OptionError, match=r"min_score is a number \(0.5\), not True"):
        read("hf-pipeline", path, min_score=True)
    assert read("hf-pipeline", path, min_score=0.99)[0][0].spans == ()


# ------------------------------------------------------------------------------------------------
# spaCy's DocBin


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        (b"", ("not a spaCy DocBin (.spacy) file",)),
        (b"this is not msgpack", ("not a spaCy DocBin (.spacy) file",)),
        (json.dumps(DOCCANO_LINE).encode() + b"\n", ("not a spaCy DocBin (.spacy) file",)),
    ],
    ids=["empty", "text", "a JSONL file"],
)
def test_a_file_that_is_no_docbin_is_one_line(content: bytes, needles: tuple[str, ...], tmp_path: Path) -> None:
    pytest.importorskip("spacy")
    path = tmp_path / "x.spacy"
    path.write_bytes(content)
    message = one_line_cli(["evaluate", str(path), str(path), "--format", "docbin"], str(path), *needles)
    with pytest.raises(InputError) as info:
        evaluate("docbin", path)
    assert str(info.value) == message


def test_a_docbin_option_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="spans_key is the name of a span group"):
        read("docbin", REAL / "explosion-projects" / "tweets-demo.spacy", spans_key=3)
