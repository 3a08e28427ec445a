"""Bad and unusual input to the annotation-format readers and the strings locator, as a user meets
it: each case gets the right result, or one line naming the user's file (and record or line) and
what to do, exit 2 on the command line and a SpanscoreError in Python; never a traceback, never a
hang, never a silently changed count.

Every case runs through ``spanscore evaluate`` (or ``convert``) and, where it is refused, through
``spanscore.evaluate`` too, with the same message.
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import SpanscoreError
from spanscore.io.strings import StringPolicy

TEXT = "Ann Lee met Bob Smith in New York today ."
ANN, BOB, NY = (0, 7, "PER"), (12, 21, "PER"), (25, 33, "LOC")


def jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def spanscore_jsonl(path: Path, docs: list[tuple[str, str, list[tuple[int, int, str]]]]) -> Path:
    return jsonl(path, [{"id": i, "text": t, "spans": [{"start": s, "end": e, "label": lab} for s, e, lab in sp]}
                        for i, t, sp in docs])


def ls_result(spans: list[tuple[int, int, str]], text: str = TEXT) -> list[dict[str, Any]]:
    return [{"id": f"r{k}", "from_name": "label", "to_name": "text", "type": "labels",
             "value": {"start": s, "end": e, "text": text[s:e], "labels": [lab]}}
            for k, (s, e, lab) in enumerate(spans)]


def ls_task(task_id: int, annotations: list[Any] | None = None, predictions: list[Any] | None = None,
            text: str = TEXT) -> dict[str, Any]:
    task: dict[str, Any] = {"id": task_id, "data": {"text": text}}
    if annotations is not None:
        task["annotations"] = annotations
    if predictions is not None:
        task["predictions"] = predictions
    return task


def brat(folder: Path, docs: dict[str, tuple[str, str]]) -> Path:
    folder.mkdir()
    for name, (text, ann) in docs.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
        (folder / f"{name}.ann").write_text(ann, encoding="utf-8")
    return folder


@dataclass
class Case:
    """``make(tmp)`` writes the files and gives the command line after ``spanscore``; ``refused``
    are the words the one line of the refusal must hold (the file's name among them), else
    ``check`` judges the JSON of a run that must succeed."""

    make: Callable[[Path], list[str]]
    refused: tuple[str, ...] = ()
    check: Callable[[dict[str, Any]], None] | None = None
    python: bool = True  # also through spanscore.evaluate (evaluate commands only)
    seconds: float = field(default=30.0)


def located(d: dict[str, Any]) -> dict[str, int]:
    return {k: d["located"][k] for k in ("exact", "normalised", "fuzzy", "inside_word", "not_found", "ambiguous")}


def strict(d: dict[str, Any]) -> dict[str, Any]:
    m = d["metrics"]["strict"]
    return {"f1": m["f1"], "reference": m["reference"], "predicted": m["predicted"]}


def misaligned(n: int) -> Callable[[dict[str, Any]], None]:
    def check(d: dict[str, Any]) -> None:
        assert d["read"]["misaligned"]["count"] == n, d["read"]["misaligned"]
    return check


def evaluate(ref: Path, pred: Path, *more: str) -> list[str]:
    return ["evaluate", str(ref), str(pred), *more, "--json"]


# LLM strings.

NFC = "José Müller visited Zürich and São Paulo ."
NFD = unicodedata.normalize("NFD", NFC)


def strings_case(text: str, spans: list[tuple[int, int, str]], mentions: list[tuple[str, str]],
                 *more: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        gold = spanscore_jsonl(tmp / "gold.jsonl", [("d", text, spans)])
        llm = jsonl(tmp / "llm.jsonl", [{"id": "d", "mentions": [{"text": t, "label": lab} for t, lab in mentions]}])
        return evaluate(gold, llm, "--format", "jsonl", "--predicted-format", "strings", *more)
    return make


def at(text: str, piece: str, label: str) -> tuple[int, int, str]:
    start = text.index(piece)
    return (start, start + len(piece), label)


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


def check_found(how: str, count: int, f1: float = 1.0) -> Callable[[dict[str, Any]], None]:
    def check(d: dict[str, Any]) -> None:
        assert located(d)[how] == count, d["located"]
        assert d["metrics"]["strict"]["f1"] == pytest.approx(f1), d["metrics"]["strict"]
    return check


def many_repeats(tmp: Path) -> list[str]:
    text = " ".join(["Obama met the press ."] * 1200)
    spans = [(k * 22, k * 22 + 5, "PER") for k in range(1200)]
    return strings_case(text, spans, [("Obama", "PER")] * 1200)(tmp)


def many_unfound(tmp: Path) -> list[str]:
    words = ("the", "of", "and", "a", "report", "said", "on", "Monday", "that", "it", "would")
    text = " ".join(words[k % len(words)] + ("s" if k % 7 == 0 else "") for k in range(400))
    return strings_case(text, [], [(f"Someone Nobody{k}", "PER") for k in range(2000)])(tmp)


def empty_strings(content: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        gold = spanscore_jsonl(tmp / "gold.jsonl", [("d", TEXT, [ANN])])
        (tmp / "llm.jsonl").write_text(content, encoding="utf-8")
        return evaluate(gold, tmp / "llm.jsonl", "--format", "jsonl", "--predicted-format", "strings")
    return make


JA = "東京タワーは東京都港区にある電波塔です。"
WIDE = "ＡＢＣ Corp and the ﬁnance team in Straße 5 ."
ZH = "北京是中华人民共和国的首都。"

CASES: dict[str, Case] = {
    "strings: NFD mention, NFC text, --locate normalised": Case(
        strings_case(NFC, [at(NFC, "José Müller", "PER"), at(NFC, "Zürich", "LOC")],
                     [(nfd("José Müller"), "PER"), (nfd("Zürich"), "LOC")], "--locate", "normalised"),
        check=check_found("normalised", 2)),
    "strings: NFC mention, NFD text, --locate normalised": Case(
        strings_case(NFD, [at(NFD, nfd("São Paulo"), "LOC")], [("São Paulo", "LOC")], "--locate", "normalised"),
        check=check_found("normalised", 1)),
    "strings: NFD mention, NFC text, fuzzy (the default)": Case(
        strings_case(NFC, [at(NFC, "São Paulo", "LOC")], [(nfd("são paulo"), "LOC")]),
        check=check_found("normalised", 1)),
    "strings: NFD mention, --locate exact: not found, counted": Case(
        strings_case(NFC, [at(NFC, "Zürich", "LOC")], [(nfd("Zürich"), "LOC")], "--locate", "exact"),
        check=check_found("not_found", 1, 0.0)),
    "strings: compatibility forms (full width, ligature, sharp s)": Case(
        strings_case(WIDE, [at(WIDE, "ＡＢＣ", "ORG"), at(WIDE, "ﬁnance", "ORG"), at(WIDE, "Straße", "LOC")],
                     [("ABC", "ORG"), ("finance", "ORG"), ("STRASSE", "LOC")]),
        check=check_found("normalised", 3)),
    "strings: Hangul in NFD": Case(
        # The particle 은 is written onto the noun: 서울 stands inside a longer word, found last.
        strings_case("서울은 한국의 수도이다 .", [(0, 2, "LOC")], [(nfd("서울"), "LOC")]),
        check=check_found("inside_word", 1)),
    "strings: Japanese mention in Japanese text": Case(
        strings_case(JA, [at(JA, "東京タワー", "FAC"), at(JA, "東京都港区", "LOC")],
                     [("東京タワー", "FAC"), ("東京都港区", "LOC")]),
        check=check_found("exact", 2)),
    "strings: a name listed 1,200 times": Case(many_repeats, check=check_found("exact", 1200), seconds=10),
    "strings: 2,000 strings not in a 400-word text": Case(
        many_unfound, check=lambda d: located(d)["not_found"] == 2000 or pytest.fail(str(located(d))), seconds=10),
    "strings: punctuation only": Case(
        strings_case(TEXT, [ANN], [("...", "PER"), ("Ann Lee", "PER")]),
        check=lambda d: located(d) == {"exact": 1, "normalised": 0, "fuzzy": 0, "inside_word": 0, "not_found": 1,
                                       "ambiguous": 0} or pytest.fail(str(located(d)))),
    "strings: empty file": Case(empty_strings(""), refused=("llm.jsonl", "file is empty", '"mentions"')),
    "strings: blank lines only": Case(empty_strings("\n  \n\n"), refused=("llm.jsonl", "file is empty")),
    "strings: a JSON array": Case(
        empty_strings(json.dumps([{"id": "d", "mentions": []}])), refused=("llm.jsonl:1", "JSON array", "JSON Lines")),
    # A model's output that does not parse as mentions is kept as an invalid prediction (spurious),
    # unless invalid output is asked to be an error.
    "strings: mentions not a list": Case(
        empty_strings('{"id": "d", "mentions": "Ann Lee"}\n'),
        check=lambda d: (d["located"]["invalid"], d["metrics"]["strict"]["predicted"]) == (1, 1)
        or pytest.fail(str(d["located"]))),
    "strings: mentions not a list, invalid output an error": Case(
        lambda tmp: [*empty_strings('{"id": "d", "mentions": "Ann Lee"}\n')(tmp)[:-1], "--invalid-strings", "error",
                     "--json"],
        refused=("llm.jsonl:1", '"mentions" must be a list'), python=False),
    "strings: an empty text": Case(
        strings_case(TEXT, [ANN], [("", "PER"), ("Ann Lee", "PER")]),
        check=lambda d: (d["located"]["invalid"], d["located"]["exact"]) == (1, 1) or pytest.fail(str(d["located"]))),
    "strings: an empty text, invalid output an error": Case(
        strings_case(TEXT, [ANN], [("", "PER"), ("Ann Lee", "PER")], "--invalid-strings", "error"),
        refused=("llm.jsonl:1", "mention 0", '"text" is empty'), python=False),
    "strings: lone surrogate": Case(
        empty_strings('{"id": "d", "mentions": [{"text": "Ann \\ud83d", "label": "PER"}]}\n'),
        refused=("llm.jsonl:1", "surrogate")),
    "strings: an option of a reader that takes none": Case(
        lambda tmp: [*strings_case(TEXT, [ANN], [("Ann Lee", "PER")])(tmp)[:-1], "--predicted-option", "x=1",
                     "--json"],
        refused=("predicted option 'x'", "strings", "takes none")),
}


# doccano.

DOCCANO_1_0 = [
    {"id": 1, "text": TEXT, "annotations": [
        {"id": 1, "label": 3, "label_name": "PER", "start_offset": 0, "end_offset": 7, "user": 1, "user_name": "ann"},
        {"id": 2, "label": 4, "label_name": "LOC", "start_offset": 25, "end_offset": 33, "user": 1,
         "user_name": "ann"}],
     "meta": {}, "annotation_approver": None},
    {"id": 2, "text": "nothing here", "annotations": [], "meta": {}, "annotation_approver": None},
]


def doccano_case(records: list[Any] | str, *more: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        path = tmp / "doccano.jsonl"
        if isinstance(records, str):
            path.write_text(records, encoding="utf-8")
        else:
            jsonl(path, records)
        return evaluate(path, path, "--format", "doccano", *more)
    return make


def doccano_against_jsonl(tmp: Path) -> list[str]:
    path = jsonl(tmp / "doccano.jsonl", DOCCANO_1_0)
    pred = spanscore_jsonl(tmp / "pred.jsonl", [("1", TEXT, [ANN]), ("2", "nothing here", [])])
    return evaluate(path, pred, "--format", "doccano", "--predicted-format", "jsonl")


CASES |= {
    "doccano 1.0: annotations with label names": Case(
        doccano_against_jsonl, check=lambda d: strict(d) == {"f1": pytest.approx(2 / 3), "reference": 2,
                                                              "predicted": 1} or pytest.fail(str(strict(d)))),
    "doccano 1.0: label numbers without names": Case(
        doccano_case([{"id": 7, "text": TEXT, "annotations": [
            {"id": 1, "label": 2, "start_offset": 0, "end_offset": 7, "user": 1}]}]),
        check=lambda d: d["per_type"].keys() >= {"2"} or pytest.fail(str(d["per_type"].keys()))),
    "doccano 1.0: several users on one document": Case(
        doccano_case([{"id": 7, "text": TEXT, "annotations": [
            {"label": "PER", "start_offset": 0, "end_offset": 7, "user": 1},
            {"label": "PER", "start_offset": 0, "end_offset": 7, "user": 2}]}]),
        refused=("doccano.jsonl:1", "several users", "'1', '2'")),
    "doccano 1.0: a classification export": Case(
        doccano_case([{"id": 7, "text": TEXT, "annotations": [{"label": 1, "user": 1}]}]),
        refused=("doccano.jsonl:1", "start_offset", "sequence-labelling")),
    "doccano: a JSON array": Case(
        doccano_case(json.dumps([{"id": 1, "text": TEXT, "label": []}], indent=2)),
        refused=("doccano.jsonl:1", "JSON array", "jq")),
    "doccano: an object spread over lines": Case(
        doccano_case(json.dumps({"text": TEXT, "entities": [], "relations": []}, indent=4)),
        refused=("doccano.jsonl:1", "ends inside an object", "one line")),
    "doccano: empty file": Case(doccano_case(""), refused=("doccano.jsonl", "file is empty")),
    "doccano: an option it does not take": Case(
        doccano_case(DOCCANO_1_0, "--reference-option", "annotator=1"),
        refused=("reference option 'annotator'", "doccano", "it takes user")),
}


# Label Studio.

def ls_case(tasks: Any, *more: str, against: str | None = None) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        path = tmp / "export.json"
        path.write_text(tasks if isinstance(tasks, str) else json.dumps(tasks), encoding="utf-8")
        if against is None:
            return evaluate(path, path, "--format", "label-studio", *more)
        pred = tmp / "pred.jsonl"
        pred.write_text(against, encoding="utf-8")
        return evaluate(path, pred, "--format", "label-studio", "--predicted-format", "jsonl", *more)
    return make


V1 = [{"model_version": "v1", "result": ls_result([ANN])}]
PREDICTIONS = ("--predicted-option", "source=predictions")


def left_out(side: str, what: str, n: int, reference: int) -> Callable[[dict[str, Any]], None]:
    def check(d: dict[str, Any]) -> None:
        assert d["read"][side]["skipped"][what] == n, d["read"]
        assert d["metrics"]["strict"]["reference"] == reference, d["metrics"]["strict"]
    return check


def ls_folder(tmp: Path) -> list[str]:
    folder = tmp / "completions"
    folder.mkdir()
    for k in (1, 2, 10):
        task = {"id": k, "data": {"text": TEXT}, "completions": [{"id": k * 1000 + 1, "lead_time": 3.5,
                                                                    "result": ls_result([ANN, NY][: k % 3])}]}
        (folder / f"{k}.json").write_text(json.dumps(task), encoding="utf-8")
    return evaluate(folder, folder, "--format", "label-studio")


def ls_folder_broken(tmp: Path) -> list[str]:
    folder = tmp / "completions"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps(ls_task(1, [{"result": []}])), encoding="utf-8")
    (folder / "2.json").write_text('{"id": 2, "data": {"text": "x"}, "completions": [', encoding="utf-8")
    return evaluate(folder, folder, "--format", "label-studio")


CASES |= {
    "label-studio: an annotation without result": Case(
        ls_case([ls_task(1, [{"id": 5, "completed_by": 1}])]),
        refused=("export.json", "task 1 (id 1)", 'annotation 1 has no "result"')),
    "label-studio: a prediction without result": Case(
        ls_case([ls_task(1, [], [{"model_version": "v1"}])], *PREDICTIONS),
        refused=("export.json", "task 1 (id 1)", 'prediction 1 has no "result"')),
    "label-studio: tasks without prediction are left out and counted": Case(
        ls_case([ls_task(1, [{"result": ls_result([ANN, NY])}], V1),
                 ls_task(2, [{"result": ls_result([BOB])}], []),
                 ls_task(3, [{"result": ls_result([BOB])}])], *PREDICTIONS),
        check=left_out("predicted", "tasks without prediction", 2, reference=2)),
    "label-studio: tasks with only cancelled annotations are left out and counted": Case(
        ls_case([ls_task(1, [{"result": ls_result([ANN])}], V1),
                 ls_task(2, [{"was_cancelled": True, "result": []}], V1)], *PREDICTIONS),
        check=left_out("predicted", "documents the reference's reader left out", 1, reference=1)),
    "label-studio: a task left out against a JSONL prediction": Case(
        ls_case([ls_task(1, [{"result": ls_result([ANN])}]), ls_task(2, [])],
                against=json.dumps({"id": 1, "text": TEXT, "spans": [{"start": 0, "end": 7, "label": "PER"}]}) + "\n"
                + json.dumps({"id": 2, "text": TEXT, "spans": []}) + "\n"),
        check=left_out("predicted", "documents the reference's reader left out", 1, reference=1)),
    "label-studio: no task annotated": Case(
        ls_case([ls_task(1, []), ls_task(2, [{"was_cancelled": True, "result": []}])]),
        refused=("export.json", "no document of the reference is left to score", "tasks without annotation: 2")),
    "label-studio: one task in a file (an object)": Case(
        ls_case(ls_task(4, [{"result": ls_result([ANN, BOB])}])),
        check=lambda d: strict(d)["reference"] == 2 or pytest.fail(str(strict(d)))),
    "label-studio 0.x: a completions folder": Case(
        ls_folder, check=lambda d: (strict(d)["reference"] == 4 and d["corpus"]["documents"] == 3)
        or pytest.fail(str(strict(d)))),
    "label-studio 0.x: a broken task file names itself": Case(ls_folder_broken, refused=("completions/2.json",)),
    "label-studio: a folder without task files": Case(
        lambda tmp: (tmp / "empty").mkdir() or evaluate(tmp / "empty", tmp / "empty", "--format", "label-studio"),
        refused=("empty", "no .json files")),
    "label-studio: JSON Lines of tasks": Case(
        ls_case("".join(json.dumps(ls_task(k, [{"result": []}])) + "\n" for k in (1, 2))),
        refused=("export.json", "JSON Lines", "list of tasks")),
    "label-studio: the JSON-MIN export": Case(
        ls_case([{"text": TEXT, "id": 1, "label": [{"start": 0, "end": 7, "text": "Ann Lee", "labels": ["PER"]}],
                  "annotator": 1, "annotation_id": 1}]),
        refused=("export.json", "JSON-MIN", "export the project as JSON")),
    "label-studio: empty file": Case(ls_case(""), refused=("export.json", "file is empty")),
    "label-studio: predictions asked of a file without any": Case(
        ls_case([ls_task(1, [{"result": []}])], *PREDICTIONS), refused=("export.json", "no predictions")),
    "label-studio: a model version of null": Case(
        ls_case([ls_task(1, [{"result": ls_result([ANN])}], [{"model_version": None, "result": ls_result([ANN])}])],
                *PREDICTIONS),
        check=lambda d: strict(d)["f1"] == 1.0 or pytest.fail(str(strict(d)))),
    "label-studio: an option it does not take": Case(
        ls_case([ls_task(1, [{"result": []}])], "--reference-option", "annotators=1"),
        refused=("reference option 'annotators'", "source, annotator, model_version")),
}


# Prodigy.

def prodigy_record(text: str, spans: list[tuple[int, int, str]], answer: str = "accept", **more: Any) -> dict[str, Any]:
    return {"text": text, "spans": [{"start": s, "end": e, "label": lab} for s, e, lab in spans],
            "_input_hash": more.pop("input_hash", 7), "_task_hash": more.pop("task_hash", 1), "answer": answer,
            **more}


TEACH = [  # a binary ner.teach session: one suggested span per task, the same input again and again
    prodigy_record(TEXT, [ANN], task_hash=1),
    prodigy_record(TEXT, [BOB], "reject", task_hash=2),
    prodigy_record(TEXT, [NY], task_hash=3),
    prodigy_record("nothing here", [], input_hash=8, task_hash=4),
]


def prodigy_case(records: list[Any] | str, *more: str, against: list[Any] | None = None) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        path = tmp / "prodigy.jsonl"
        if isinstance(records, str):
            path.write_text(records, encoding="utf-8")
        else:
            jsonl(path, records)
        if against is None:
            return evaluate(path, path, "--format", "prodigy", *more)
        pred = spanscore_jsonl(tmp / "pred.jsonl", against)
        return evaluate(path, pred, "--format", "prodigy", "--predicted-format", "jsonl", *more)
    return make


def reference_count(n: int, skipped: dict[str, int] | None = None) -> Callable[[dict[str, Any]], None]:
    def check(d: dict[str, Any]) -> None:
        assert d["metrics"]["strict"]["reference"] == n, d["metrics"]["strict"]
        for what, count in (skipped or {}).items():
            assert d["read"]["reference"]["skipped"][what] == count, d["read"]
    return check


UBER = "Uber’s Lesson: Silicon Valley’s Start-Up Machine Needs Fixing"
UBER_TOKENS = [(0, 4), (4, 6), (7, 13), (13, 14), (15, 22), (23, 29), (29, 31), (32, 37), (37, 38), (38, 40),
               (41, 48), (49, 54), (55, 61)]

CASES |= {
    "prodigy: relations are counted": Case(
        prodigy_case([prodigy_record(TEXT, [ANN, BOB], relations=[{"head": 0, "child": 3, "label": "KNOWS"}])]),
        check=reference_count(2, {"relations": 1})),
    "prodigy: the same input twice": Case(
        prodigy_case(TEACH), refused=("prodigy.jsonl:3", "repeats", "line 1", "dedupe=first")),
    "prodigy: dedupe=first": Case(
        prodigy_case(TEACH, "--reference-option", "dedupe=first", "--predicted-option", "dedupe=first"),
        check=reference_count(1, {"rejected": 1, "repeated documents (the first kept)": 1})),
    "prodigy: dedupe=last": Case(
        prodigy_case(TEACH, "--reference-option", "dedupe=last", "--predicted-option", "dedupe=last"),
        check=reference_count(1, {"repeated documents (the last kept)": 1})),
    "prodigy: dedupe=merge (a binary session)": Case(
        prodigy_case(TEACH, "--reference-option", "dedupe=merge", "--predicted-option", "dedupe=merge"),
        check=reference_count(2, {"repeated documents (merged)": 1})),
    "prodigy: dedupe=merge of one id with two texts": Case(
        prodigy_case([prodigy_record(TEXT, [ANN]), prodigy_record("Another text .", [], task_hash=2)],
                     "--reference-option", "dedupe=merge"),
        refused=("prodigy.jsonl:2", "another text", "cannot merge")),
    "prodigy: dedupe of a value it does not know": Case(
        prodigy_case(TEACH, "--reference-option", "dedupe=yes"), refused=("dedupe takes first, last, merge",)),
    "prodigy: spans with an answer of their own": Case(
        prodigy_case([{**prodigy_record(TEXT, []), "spans": [
            {"start": 0, "end": 7, "label": "PER", "answer": "accept"},
            {"start": 12, "end": 21, "label": "PER", "answer": "reject"}]}]),
        check=reference_count(1, {"rejected spans": 1})),
    "prodigy: a rejected record's document is left out of the prediction": Case(
        prodigy_case([prodigy_record(TEXT, [ANN], meta={"id": "a"}),
                      prodigy_record(TEXT, [BOB], "reject", meta={"id": "b"})],
                     against=[("a", TEXT, [ANN]), ("b", TEXT, [BOB])]),
        check=lambda d: (strict(d) == {"f1": 1.0, "reference": 1, "predicted": 1}
                         and d["read"]["predicted"]["skipped"] == {"documents the reference's reader left out": 1})
        or pytest.fail(str(d["read"]))),
    "prodigy: its own tokens, not white space": Case(
        prodigy_case([{**prodigy_record(UBER, [(0, 4, "ORG"), (15, 29, "LOC")]),
                       "tokens": [{"text": UBER[s:e], "start": s, "end": e, "id": k}
                                  for k, (s, e) in enumerate(UBER_TOKENS)]}]),
        check=lambda d: d["read"]["misaligned"]["count"] == 0 or pytest.fail(str(d["read"]))),
    "prodigy: its own tokens: a boundary inside one of them is listed": Case(
        prodigy_case([{**prodigy_record(UBER, [(32, 40, "MISC")], meta={"id": "u"}),
                       "tokens": [{"text": UBER[s:e], "start": s, "end": e, "id": k}
                                  for k, (s, e) in enumerate([*UBER_TOKENS[:7], (32, 40), *UBER_TOKENS[10:]])]}],
                     against=[("u", UBER, [(32, 37, "MISC")])]),
        check=misaligned(1)),
    "prodigy: a JSON array": Case(
        prodigy_case(json.dumps([prodigy_record(TEXT, [])])), refused=("prodigy.jsonl:1", "JSON array")),
}


# BRAT.

DISCONTINUOUS = {"a": ("North and South Korea met .", "T1\tLOC 0 5;16 21\tNorth Korea\nT2\tLOC 10 21\tSouth Korea\n")}


def brat_convert(*more: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        folder = brat(tmp / "gold", DISCONTINUOUS)
        return ["convert", str(folder), "-o", str(tmp / "out.jsonl"), "--from", "brat", "--to", "jsonl", *more]
    return make


def brat_evaluate(docs: dict[str, tuple[str, str]], pred: dict[str, tuple[str, str]] | None = None,
                  *more: str) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        gold = brat(tmp / "gold", docs)
        other = gold if pred is None else brat(tmp / "pred", pred)
        return evaluate(gold, other, "--format", "brat", *more)
    return make


MEMPHIS = "He left Memphis, Tennessee, and met Nat King Cole... in Memphis."


def ann_line(tid: str, text: str, piece: str, label: str) -> str:
    start, end, _ = at(text, piece, label)
    return f"{tid}\t{label} {start} {end}\t{piece}\n"

JA_ANN = "T1\tFAC 0 5\t東京タワー\nT2\tLOC 6 11\t東京都港区\n"

CASES |= {
    "brat: discontinuous mentions refused as JSONL, saying how": Case(
        brat_convert(), refused=("discontinuous", "'a'", "--option drop_fragments=true"), python=False),
    "brat: --option drop_fragments=true converts them": Case(
        brat_convert("--option", "drop_fragments=true"), python=False),
    "brat: --reference-option drop_fragments=true": Case(
        # Read as its extent on one side only, a discontinuous mention matches only as an extent.
        brat_evaluate(DISCONTINUOUS, None, "--reference-option", "drop_fragments=true", "--predicted-option",
                      "drop_fragments=false", "--discontinuous", "extent"),
        check=lambda d: (strict(d)["f1"] == 1.0 and "discontinuous_mentions" not in d["read"]["reference"]
                         and d["read"]["predicted"]["discontinuous_mentions"] == 1) or pytest.fail(str(d["read"]))),
    "brat: drop_fragments of a value it does not know": Case(
        brat_evaluate(DISCONTINUOUS, None, "--reference-option", "drop_fragments=maybe"),
        refused=("drop_fragments is true or false", "'maybe'")),
    "brat: Japanese text, scored against itself": Case(brat_evaluate({"ja": (JA, JA_ANN)}), check=misaligned(0)),
    "brat: Japanese text, a boundary inside a word of no spaces": Case(
        brat_evaluate({"ja": (JA, JA_ANN)}, {"ja": (JA, "T1\tFAC 0 2\t東京\nT2\tLOC 6 9\t東京都\n")}),
        check=misaligned(0)),
    "brat: punctuation is a boundary (Memphis, / Cole...)": Case(
        brat_evaluate({"m": (MEMPHIS, ann_line("T1", MEMPHIS, "Memphis", "LOC")
                                      + ann_line("T2", MEMPHIS, "Nat King Cole", "PER"))}),
        check=misaligned(0)),
    "brat: a boundary inside a word is still listed": Case(
        brat_evaluate({"m": (MEMPHIS, "T1\tLOC 8 15\tMemphis\n")}, {"m": (MEMPHIS, "T1\tLOC 8 13\tMemph\n")}),
        check=misaligned(1)),
    "brat: a boundary inside a decomposed letter is listed": Case(
        brat_evaluate({"n": (NFD, "")}, {"n": (NFD, f"T1\tPER 0 4\t{NFD[:4]}\n")}), check=misaligned(1)),
    "brat: an error names the user's .ann file": Case(
        brat_evaluate({"a": (TEXT, "T1\tPER 0 7\tAnn Lea\n")}), refused=("gold/a.ann:1", "'Ann Lea'")),
    "brat: no such folder": Case(
        lambda tmp: evaluate(tmp / "nowhere", tmp / "nowhere", "--format", "brat"),
        refused=("nowhere", "not a folder")),
}


# spanscore's JSONL, and reader options.

def plain_jsonl(*more: str, content: str | None = None) -> Callable[[Path], list[str]]:
    def make(tmp: Path) -> list[str]:
        gold = spanscore_jsonl(tmp / "gold.jsonl", [("a", TEXT, [ANN])])
        if content is not None:
            gold.write_text(content, encoding="utf-8")
        return evaluate(gold, gold, "--format", "jsonl", *more)
    return make


CASES |= {
    "jsonl: --reference-option is refused, not ignored": Case(
        plain_jsonl("--reference-option", "source=predictions"), refused=("reference option 'source'", "takes none")),
    "jsonl: --predicted-option is refused, not ignored": Case(
        plain_jsonl("--predicted-option", "dedupe=first"), refused=("predicted option 'dedupe'", "takes none")),
    "jsonl: a JSON array": Case(
        plain_jsonl(content=json.dumps([{"id": "a", "text": TEXT, "spans": []}])),
        refused=("gold.jsonl:1", "JSON array")),
    "jsonl: a pretty-printed document": Case(
        plain_jsonl(content=json.dumps({"id": "a", "text": TEXT, "spans": []}, indent=2)),
        refused=("gold.jsonl:1", "malformed JSON", "one line")),
}


def python_run(args: list[str]) -> None:
    """The same evaluate command through the Python API."""
    assert args[0] == "evaluate"
    kwargs: dict[str, Any] = {"reference": args[1], "predicted": args[2]}
    options: dict[str, dict[str, str]] = {"reference_options": {}, "predicted_options": {}}
    rest = args[3:]
    k = 0
    while k < len(rest):
        flag = rest[k]
        if flag == "--json":
            k += 1
            continue
        value = rest[k + 1]
        if flag == "--format":
            kwargs["format"] = value
        elif flag == "--predicted-format":
            kwargs["predicted_format"] = value
        elif flag == "--locate":
            kwargs["strings"] = StringPolicy(normalised=value != "exact", fuzzy=None)
        elif flag in ("--reference-option", "--predicted-option"):
            key, _, v = value.partition("=")
            options[flag[2:].replace("-option", "_options")][key] = v
        else:
            raise AssertionError(flag)
        k += 2
    spanscore.evaluate(**kwargs, **{k: v for k, v in options.items() if v})


def test_the_suite_has_its_cases() -> None:
    assert len(CASES) >= 60, len(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_a_clear_answer(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    args = case.make(tmp_path)
    began = time.perf_counter()
    out = CliRunner().invoke(cli, args)
    took = time.perf_counter() - began
    assert out.exception is None or isinstance(out.exception, SystemExit), (name, out.output, out.exception)
    assert "Traceback" not in out.output, out.output
    assert took < case.seconds, f"{name}: {took:.1f} s"
    if case.refused:
        assert out.exit_code == 2, (name, out.output)
        errors = [line for line in out.output.splitlines() if line.startswith("spanscore: error:")]
        assert len(errors) == 1, out.output
        for needle in case.refused:
            assert needle in errors[0], (needle, errors[0])
        assert "spanscore-documents" not in errors[0] and "/tmp/tmp" not in errors[0].replace(str(tmp_path), "")
        if case.python and args[0] == "evaluate":
            with pytest.raises(SpanscoreError) as info:
                python_run(args)
            assert str(info.value) == errors[0].removeprefix("spanscore: error: ")
        return
    assert out.exit_code == 0, (name, out.output)
    if case.check is not None:
        case.check(json.loads(out.stdout))


def test_drop_fragments_converts_each_discontinuous_mention_to_its_extent(tmp_path: Path) -> None:
    args = brat_convert("--option", "drop_fragments=true")(tmp_path)
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    (line,) = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    spans = [{"start": 0, "end": 21, "label": "LOC"}, {"start": 10, "end": 21, "label": "LOC"}]
    assert json.loads(line)["spans"] == spans


@pytest.mark.parametrize(
    ("options", "side", "path", "flag"),
    [
        ([], "reference", "gold.json", "--reference-option"),
        (["--reference-option", "source=predictions"], "prediction", "pred.json", "--predicted-option"),
    ],
)
@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_label_studio_predictions_only_names_the_empty_side(
    tmp_path: Path, options: list[str], side: str, path: str, flag: str, command: str
) -> None:
    """Exports that hold predictions only: the side read for annotations has none, and is named."""
    task = {"id": 1, "data": {"text": "John lives in Paris"}, "annotations": [],
            "predictions": [{"model_version": "v1", "result": [
                {"type": "labels", "from_name": "label", "to_name": "text",
                 "value": {"start": 0, "end": 4, "labels": ["PER"]}}]}]}
    for name in ("gold.json", "pred.json"):
        (tmp_path / name).write_text(json.dumps([task]), encoding="utf-8")
    out = CliRunner().invoke(
        cli, [command, str(tmp_path / "gold.json"), str(tmp_path / "pred.json"), "--format", "label-studio", *options]
    )
    assert out.exit_code == 2, out.output
    line = out.output.strip()
    assert len(line.splitlines()) == 1
    assert f"no document of the {side} is left to score" in line and path in line
    assert f"{flag} source=predictions" in line
