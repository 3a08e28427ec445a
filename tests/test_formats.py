"""Annotation tools' export formats (spanscore.io.formats): files written here as each tool
documents its export, read back to the expected Docs; round trips through spanscore's JSONL;
refusals as one line naming what would be lost or the file and line at fault."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from spanscore.errors import InputError, MissingExtra, OptionError, SpanscoreError
from spanscore.io import formats
from spanscore.io.formats import Doc, misaligned_boundaries, read, write


def at(text: str, piece: str, label: str, nth: int = 0) -> tuple[int, int, str]:
    """(start, end, label) of the nth occurrence of ``piece``."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(piece, start + 1)
    return (start, start + len(piece), label)


def doc(doc_id: str, text: str, *spans: tuple[int, int, str]) -> Doc:
    return Doc(doc_id, text, tuple(sorted(spans)))


T1 = "Angela Merkel met Jürgen Müller in Zürich 😀 at the Bank of England."
T2 = "東京 is far from Paris, France."
T3 = "Nothing to see here."
D1 = doc(
    "d1",
    T1,
    at(T1, "Angela Merkel", "PER"),
    at(T1, "Jürgen Müller", "PER"),
    at(T1, "Zürich", "LOC"),
    at(T1, "Bank of England", "ORG"),
    at(T1, "England", "LOC"),  # nested in the ORG
)
D2 = doc(
    "d2",
    T2,
    at(T2, "東京", "LOC"),
    at(T2, "far from Paris", "MISC"),  # overlaps the LOC without nesting
    at(T2, "Paris, France", "LOC"),
    at(T2, "Paris", "GPE"),
    at(T2, "France", "GPE"),
)
D3 = doc("d3", T3)
DOCS = [D1, D2, D3]


def renamed(docs: list[Doc], *ids: str) -> list[Doc]:
    return [replace(d, id=i) for d, i in zip(docs, ids, strict=True)]


def one_line(exc: pytest.ExceptionInfo[SpanscoreError], *needles: str) -> str:
    message = str(exc.value)
    assert "\n" not in message, message
    for needle in needles:
        assert needle in message, message
    return message


def jsonl_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# BRAT


T4 = "North and South Korea met in 2018."


def ann(text: str, *entities: tuple[str, str, str]) -> str:
    """Entity lines for (id, label, piece)."""
    lines = []
    for tid, label, piece in entities:
        start, end, _ = at(text, piece, label)
        lines.append(f"{tid}\t{label} {start} {end}\t{piece}\n")
    return "".join(lines)


def brat_folder(root: Path) -> Path:
    root.mkdir()
    (root / "d1.txt").write_text(T1, encoding="utf-8")
    (root / "d1.ann").write_text(
        ann(T1, ("T1", "PER", "Angela Merkel"), ("T2", "PER", "Jürgen Müller"), ("T3", "LOC", "Zürich"))
        + ann(T1, ("T4", "ORG", "Bank of England"), ("T5", "LOC", "England"))
        + "R1\tMeets Arg1:T1 Arg2:T2\n#1\tAnnotatorNotes T1\tthe chancellor\n",
        encoding="utf-8",
    )
    (root / "d2.txt").write_text(T2, encoding="utf-8")
    (root / "d2.ann").write_text(
        ann(T2, ("T1", "LOC", "東京"), ("T2", "MISC", "far from Paris"), ("T3", "LOC", "Paris, France"))
        + ann(T2, ("T4", "GPE", "Paris"), ("T5", "GPE", "France")),
        encoding="utf-8",
    )
    (root / "d3.txt").write_text(T3, encoding="utf-8")  # no .ann: a document without mentions
    (root / "d4.txt").write_text(T4, encoding="utf-8")
    (root / "d4.ann").write_text(
        "T1\tLOC 0 5;16 21\tNorth Korea\n"  # discontinuous: "North ... Korea"
        "T2\tLOC 10 21\tSouth Korea\n"
        "T3\tMeet 22 25\tmet\n"  # an event's trigger, not a mention
        "E1\tMeet:T3 Participant1:T1 Participant2:T2\n"
        "A1\tNegation E1\n"
        "M1\tSpeculation E1\n"
        "N1\tReference T1 Wikidata:Q423\tNorth Korea\n"
        "*\tEquiv T1 T2\n",
        encoding="utf-8",
    )
    (root / "annotation.conf").write_text("[entities]\nPER\n", encoding="utf-8")
    return root


D4 = Doc("d4", T4, ((0, 21, "LOC"), (10, 21, "LOC")), (((0, 5), (16, 21)), None))


def test_brat_reads_entities_keeps_fragments_and_counts_the_rest(tmp_path: Path) -> None:
    docs, notes = read("brat", brat_folder(tmp_path / "brat"))
    assert docs == [D1, D2, D3, D4]
    assert notes.skipped == {
        "relations": 1,
        "notes": 1,
        "events": 1,
        "attributes": 2,
        "normalizations": 1,
        "equivalences": 1,
        "event triggers": 1,
    }
    assert notes.misaligned == []


def test_brat_round_trip_is_lossless_fragments_included(tmp_path: Path) -> None:
    docs, _ = read("brat", brat_folder(tmp_path / "brat"))
    write("brat", docs, tmp_path / "out")
    assert read("brat", tmp_path / "out")[0] == docs
    assert (tmp_path / "out" / "d4.ann").read_text(encoding="utf-8").startswith("T1\tLOC 0 5;16 21\tNorth Korea\n")
    assert "ORG" in (tmp_path / "out" / "annotation.conf").read_text(encoding="utf-8")


def test_brat_text_column_mismatch_names_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "brat"
    root.mkdir()
    (root / "a.txt").write_text("Zürich is big.", encoding="utf-8")
    (root / "a.ann").write_text("T1\tLOC 0 6\tZürich\nT2\tLOC 0 5\tZürich\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read("brat", root)
    one_line(exc, "a.ann:2", "T2", "'Zürich'", "'Züric'")


def test_brat_ann_without_txt_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "brat"
    root.mkdir()
    (root / "lonely.ann").write_text("T1\tLOC 0 2\tab\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read("brat", root)
    one_line(exc, "lonely.ann", "lonely.txt")


def test_brat_refuses_a_full_folder_and_names_unwritable_ids(tmp_path: Path) -> None:
    full = brat_folder(tmp_path / "brat")
    before = sorted(p.name for p in full.iterdir())
    with pytest.raises(OptionError) as exc:
        write("brat", DOCS, full)
    one_line(exc, "not an empty folder")
    assert sorted(p.name for p in full.iterdir()) == before
    with pytest.raises(OptionError) as exc:
        write("brat", [replace(D3, id="../escape")], tmp_path / "out")
    one_line(exc, "'../escape'", "file names")
    with pytest.raises(OptionError) as exc:
        write("brat", [Doc("x", "a\nb", ((0, 3, "LOC"),))], tmp_path / "out")
    one_line(exc, "'x'", "line break")
    assert not (tmp_path / "out").exists()


def test_a_failed_folder_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from spanscore.io.formats import brat

    written: list[str] = []

    def fail_on_second(d: Doc) -> list[str]:
        written.append(d.id)
        if len(written) == 2:
            raise OSError("disk full")
        return []

    monkeypatch.setattr(brat, "_ann_lines", fail_on_second)
    with pytest.raises(OSError):
        write("brat", DOCS, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


# Label Studio


def ls_result(text: str, spans: tuple[tuple[int, int, str], ...], prefix: str = "r") -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}{k}",
            "from_name": "label",
            "to_name": "text",
            "type": "labels",
            "origin": "manual",
            "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]},
        }
        for k, (s, e, label) in enumerate(spans)
    ]


def label_studio_export(path: Path) -> Path:
    """Two annotators (one cancelled annotation besides), two model versions, a relation and a
    choice among the results, a task nobody annotated."""
    per_only = tuple(s for s in D1.spans if s[2] == "PER")
    tasks = [
        {
            "id": 11,
            "data": {"text": T1},
            "annotations": [
                {"id": 1, "completed_by": 1, "was_cancelled": True, "result": []},
                {
                    "id": 2,
                    "completed_by": 1,
                    "was_cancelled": False,
                    "ground_truth": False,
                    "lead_time": 12.5,
                    "result": [
                        *ls_result(T1, D1.spans),
                        {"from_id": "r0", "to_id": "r1", "type": "relation", "direction": "right", "labels": []},
                        {
                            "id": "c1",
                            "from_name": "sentiment",
                            "to_name": "text",
                            "type": "choices",
                            "value": {"choices": ["Positive"]},
                        },
                    ],
                },
                {
                    "id": 3,
                    "completed_by": {"id": 2, "email": "b@example.org"},
                    "was_cancelled": False,
                    "result": ls_result(T1, per_only),
                },
            ],
            "predictions": [
                {"id": 1, "model_version": "v1", "score": 0.5, "result": ls_result(T1, D1.spans[:2])},
                {"id": 2, "model_version": "v2", "score": 0.9, "result": ls_result(T1, D1.spans)},
            ],
        },
        {
            "id": 12,
            "data": {"text": T2, "meta_info": "x"},
            "annotations": [{"id": 4, "completed_by": 1, "result": ls_result(T2, D2.spans)}],
            "predictions": [
                {"id": 3, "model_version": "v1", "result": []},
                {"id": 4, "model_version": "v2", "result": ls_result(T2, D2.spans)},
            ],
        },
        {"id": 13, "data": {"text": T3}, "annotations": [], "predictions": []},
    ]
    path.write_text(json.dumps(tasks, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_label_studio_annotations_first_or_by_annotator(tmp_path: Path) -> None:
    export = label_studio_export(tmp_path / "export.json")
    docs, notes = read("label-studio", export)
    assert docs == renamed([D1, D2], "11", "12")
    assert notes.skipped == {
        "cancelled annotations": 1,
        "other annotations": 1,
        "relations": 1,
        "choices results": 1,
        "tasks without annotation": 1,
    }
    by_two = doc("11", T1, *(s for s in D1.spans if s[2] == "PER"))
    for who in (2, "2", "b@example.org"):
        docs, notes = read("label-studio", export, annotator=who)
        assert docs == [by_two]
        assert notes.skipped["tasks without annotation"] == 2


def test_label_studio_predictions_by_model_version(tmp_path: Path) -> None:
    export = label_studio_export(tmp_path / "export.json")
    docs, notes = read("label-studio", export, source="predictions", model_version="v2")
    assert docs == renamed([D1, D2], "11", "12")
    assert notes.skipped == {"other predictions": 2, "tasks without prediction": 1}
    docs, _ = read("label-studio", export, source="predictions", model_version="v1")
    assert docs == [doc("11", T1, *D1.spans[:2]), doc("12", T2)]
    with pytest.raises(OptionError) as exc:
        read("label-studio", export, source="predictions")
    one_line(exc, "several model versions", "'v1', 'v2'", "model_version=")
    with pytest.raises(OptionError) as exc:
        read("label-studio", export, source="predictions", model_version="v3")
    one_line(exc, "'v3'", "'v1', 'v2'")


def test_label_studio_utf16_offsets_are_converted_and_listed(tmp_path: Path) -> None:
    text = "I 😀 love Zürich"
    utf16 = len("I 😀 love ".encode("utf-16-le")) // 2  # one more than the characters: the emoji is a pair
    task = {
        "id": 5,
        "data": {"text": text},
        "annotations": [
            {
                "result": [
                    {
                        "type": "labels",
                        "value": {"start": utf16, "end": utf16 + 6, "text": "Zürich", "labels": ["LOC", "GPE"]},
                    }
                ]
            }
        ],
    }
    (tmp_path / "e.json").write_text(json.dumps([task]), encoding="utf-8")
    docs, notes = read("label-studio", tmp_path / "e.json")
    assert docs == [doc("5", text, at(text, "Zürich", "GPE"), at(text, "Zürich", "LOC"))]
    assert len(notes.misaligned) == 1 and "UTF-16" in notes.misaligned[0]["what"]
    task["annotations"][0]["result"][0]["value"]["text"] = "Zurich"  # type: ignore[index]
    (tmp_path / "e.json").write_text(json.dumps([task]), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read("label-studio", tmp_path / "e.json")
    one_line(exc, "e.json", "task 1 (id 5)", "'Zurich'")


def test_label_studio_text_key_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps([{"id": 1, "data": {"body": "Hi Bob"}, "annotations": [{"result": []}]}]))
    with pytest.raises(InputError) as exc:
        read("label-studio", path)
    one_line(exc, "no text 'text'", "'body'", "text_key=")
    assert read("label-studio", path, text_key="body")[0] == [doc("1", "Hi Bob")]
    with pytest.raises(OptionError) as exc:
        read("label-studio", path, source="gold")
    one_line(exc, "'gold'")


# doccano


def test_doccano_reads_label_and_entities_exports(tmp_path: Path) -> None:
    path = jsonl_lines(
        tmp_path / "all.jsonl",
        [
            {"id": 1, "text": T1, "label": [list(s) for s in D1.spans], "Comments": []},
            {
                "id": 2,
                "text": T2,
                "entities": [
                    {"id": 10 + k, "label": label, "start_offset": s, "end_offset": e}
                    for k, (s, e, label) in enumerate(D2.spans)
                ],
                "relations": [{"id": 1, "from_id": 10, "to_id": 12, "type": "near"}],
                "Comments": [],
            },
            {"text": T3, "label": []},  # an import file's line: no id, so its line number
        ],
    )
    docs, notes = read("doccano", path)
    assert docs == renamed(DOCS, "1", "2", "3")
    assert notes.skipped == {"relations": 1}


def test_doccano_refuses_classification_labels_with_the_line(tmp_path: Path) -> None:
    path = jsonl_lines(
        tmp_path / "c.jsonl", [{"id": 1, "text": "ok", "label": []}, {"id": 2, "text": "ok", "label": ["POS"]}]
    )
    with pytest.raises(InputError) as exc:
        read("doccano", path)
    one_line(exc, "c.jsonl:2", "sequence-labelling")


# Prodigy


def prodigy_tokens(text: str) -> list[dict[str, Any]]:
    """Tokens as spaCy makes them for these texts: words and punctuation apart."""
    found = list(re.finditer(r"\w+|[^\w\s]", text))
    return [
        {"text": m.group(), "start": m.start(), "end": m.end(), "id": k, "ws": text[m.end() : m.end() + 1] == " "}
        for k, m in enumerate(found)
    ]


def token_span(tokens: list[dict[str, Any]], start: int, end: int, label: str) -> dict[str, Any]:
    first = next(t["id"] for t in tokens if t["start"] == start)
    last = next(t["id"] for t in tokens if t["end"] == end)
    return {"token_start": first, "token_end": last, "label": label}


def prodigy_export(path: Path) -> Path:
    t1, t2 = prodigy_tokens(T1), prodigy_tokens(T2)
    return jsonl_lines(
        path,
        [
            {
                "text": T1,
                "meta": {"id": "d1", "source": "news"},
                "_input_hash": 111,
                "_task_hash": 211,
                "tokens": t1,
                "spans": [{**token_span(t1, s, e, label), "start": s, "end": e} for s, e, label in D1.spans],
                "_view_id": "spans_manual",
                "answer": "accept",
            },
            {  # token offsets only
                "text": T2,
                "meta": {"id": "d2"},
                "_input_hash": 112,
                "tokens": t2,
                "spans": [token_span(t2, s, e, label) for s, e, label in D2.spans],
                "answer": "accept",
            },
            {
                "text": "Rejected Bob.",
                "meta": {"id": "r"},
                "spans": [{"start": 0, "end": 3, "label": "X"}],
                "answer": "reject",
            },
            {"text": "Ignored.", "_input_hash": 114, "answer": "ignore"},
            {"text": T3, "_input_hash": -1234, "tokens": prodigy_tokens(T3), "spans": [], "answer": "accept"},
        ],
    )


def test_prodigy_reads_character_and_token_offsets_and_skips_rejects(tmp_path: Path) -> None:
    docs, notes = read("prodigy", prodigy_export(tmp_path / "p.jsonl"))
    assert docs == renamed(DOCS, "d1", "d2", "-1234")
    assert notes.skipped == {"rejected": 1, "ignored": 1}
    assert notes.misaligned == []


def test_prodigy_lists_boundaries_inside_tokens_and_disagreeing_offsets(tmp_path: Path) -> None:
    text = "Washington D.C. is here"
    tokens = [
        {"text": w, "start": s, "end": s + len(w), "id": k}
        for k, (s, w) in enumerate([(0, "Washington"), (11, "D.C.")])
    ]
    path = jsonl_lines(
        tmp_path / "p.jsonl",
        [
            {
                "text": text,
                "meta": {"id": 7},
                "tokens": tokens,
                "spans": [
                    {"start": 0, "end": 4, "label": "LOC"},
                    {"start": 0, "end": 10, "token_start": 0, "token_end": 1, "label": "GPE"},
                ],
            }
        ],
    )
    docs, notes = read("prodigy", path)
    assert docs == [doc("7", text, (0, 4, "LOC"), (0, 10, "GPE"))]  # kept, not snapped
    inside, disagree = notes.misaligned
    assert inside["boundary"] == "end" and inside["tokens"] == [[0, 10]] and inside["line"] == 1
    assert disagree["label"] == "GPE" and "0..15" in disagree["what"]


def test_prodigy_same_input_twice_names_both_lines(tmp_path: Path) -> None:
    record = {"text": "Hi", "_input_hash": 5, "spans": [], "answer": "accept"}
    path = jsonl_lines(tmp_path / "p.jsonl", [record, {**record, "_session_id": "b"}])
    with pytest.raises(InputError) as exc:
        read("prodigy", path)
    one_line(exc, "p.jsonl:2", "'5'", "line 1")
    docs, notes = read("prodigy", path, session="b")
    assert docs == [doc("5", "Hi")] and notes.skipped == {"other sessions": 1}


# Hugging Face datasets


HF_ROWS = {
    "id": ["h1", "h2", "h3"],
    "tokens": [
        ["Angela", "Merkel", "met", "Jürgen", "Müller", "in", "Zürich", "😀", "."],
        ["東京", "is", "far", "."],
        ["Nothing", "here"],
    ],
    "ner_tags": [[1, 2, 0, 1, 2, 0, 3, 0, 0], [3, 0, 0, 0], [0, 0]],
}
HF_NAMES = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def hf_expected(ids: tuple[str, ...] = ("h1", "h2", "h3")) -> list[Doc]:
    t1, t2, t3 = (" ".join(tokens) for tokens in HF_ROWS["tokens"])
    return [
        doc(ids[0], t1, at(t1, "Angela Merkel", "PER"), at(t1, "Jürgen Müller", "PER"), at(t1, "Zürich", "LOC")),
        doc(ids[1], t2, at(t2, "東京", "LOC")),
        doc(ids[2], t3),
    ]


@pytest.fixture(scope="module")
def hf_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    datasets = pytest.importorskip("datasets")
    from datasets import ClassLabel, Dataset, DatasetDict, Features, Sequence, Value

    datasets.disable_progress_bars()
    root = tmp_path_factory.mktemp("hf")
    features = Features(
        {"id": Value("string"), "tokens": Sequence(Value("string")), "ner_tags": Sequence(ClassLabel(names=HF_NAMES))}
    )
    Dataset.from_dict(HF_ROWS, features=features).save_to_disk(str(root / "plain"))
    as_strings = {"tokens": HF_ROWS["tokens"], "tags": [[HF_NAMES[t] for t in row] for row in HF_ROWS["ner_tags"]]}
    string_features = Features({"tokens": Sequence(Value("string")), "tags": Sequence(Value("string"))})
    both = Dataset.from_dict(as_strings, features=string_features)
    DatasetDict({"train": both, "test": both.select([2])}).save_to_disk(str(root / "splits"))
    return {"plain": root / "plain", "splits": root / "splits"}


def test_hf_dataset_classlabel_tags_decode_to_character_spans(hf_folders: dict[str, Path]) -> None:
    docs, notes = read("hf-datasets", hf_folders["plain"])
    assert docs == hf_expected()
    assert notes.skipped == {} and notes.misaligned == []


def test_hf_dataset_splits_string_tags_and_row_ids(hf_folders: dict[str, Path]) -> None:
    with pytest.raises(OptionError) as exc:
        read("hf-datasets", hf_folders["splits"], tags="tags")
    one_line(exc, "train, test", "split=")
    docs, _ = read("hf-datasets", hf_folders["splits"], tags="tags", split="train")
    assert docs == hf_expected(("0", "1", "2"))
    with pytest.raises(InputError) as exc:
        read("hf-datasets", hf_folders["splits"], split="test")
    one_line(exc, "no 'ner_tags' column", "tags=")


def test_hf_dataset_writer_refuses_what_tags_cannot_hold(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    with pytest.raises(OptionError) as exc:
        write("hf-datasets", DOCS, tmp_path / "out")
    one_line(exc, "inside a token", "overlapping or nested", "'d1', 'd2')")
    with pytest.raises(OptionError) as exc:
        write("hf-datasets", [doc("w", "Washington D.C.", (0, 4, "LOC"))], tmp_path / "out")
    one_line(exc, "inside a token", "(documents 'w')")
    assert not (tmp_path / "out").exists()
    write("hf-datasets", [doc("w", "Washington  D.C.\n", (0, 16, "LOC"))], tmp_path / "out", split="test")
    assert read("hf-datasets", tmp_path / "out")[0] == [doc("w", "Washington D.C.", (0, 15, "LOC"))]


def test_hf_dataset_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets now raises ImportError
    with pytest.raises(MissingExtra) as exc:
        read("hf-datasets", tmp_path)
    one_line(exc, "spanscore[datasets]")


# Round trips and the registry


def jsonl_file(path: Path, docs: list[Doc]) -> Path:
    return jsonl_lines(
        path,
        [
            {"id": d.id, "text": d.text, "spans": [{"start": s, "end": e, "label": lab} for s, e, lab in d.spans]}
            for d in docs
        ],
    )


SOURCES = {
    "brat": (lambda p: brat_folder(p), {}, {}),
    "label-studio": (lambda p: label_studio_export(p), {}, {}),
    "label-studio-predictions": (
        lambda p: label_studio_export(p),
        {"source": "predictions", "model_version": "v2"},
        {"source": "predictions", "model_version": "v2"},
    ),
    "doccano": (lambda p: jsonl_lines(p, [{"id": 1, "text": T1, "label": [list(s) for s in D1.spans]}]), {}, {}),
    "prodigy": (lambda p: prodigy_export(p), {}, {}),
    "hf-datasets": (None, {}, {}),
    "hf-pipeline": (
        lambda p: jsonl_lines(p, [{"id": 1, "text": T1, "entities": [
            {"entity_group": lab, "score": 0.9, "word": T1[s:e].lower(), "start": s, "end": e} for s, e, lab in D1.spans
        ]}]),
        {},
        {},
    ),
    "jsonl": (lambda p: jsonl_file(p, DOCS), {}, {}),
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_format_to_jsonl_and_back_is_lossless(source: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    fmt = source.removesuffix("-predictions")
    make, read_options, write_options = SOURCES[source]
    original = request.getfixturevalue("hf_folders")["plain"] if make is None else make(tmp_path / "original")
    docs, _ = read(fmt, original, **read_options)
    if fmt == "brat":
        with pytest.raises(OptionError) as exc:
            write("jsonl", docs, tmp_path / "docs.jsonl")
        one_line(exc, "discontinuous", "'d4'", "drop_fragments=True")
        docs = [d for d in docs if not d.fragments]
    write("jsonl", docs, tmp_path / "docs.jsonl")
    via_jsonl, _ = read("jsonl", tmp_path / "docs.jsonl")
    assert via_jsonl == docs
    write(fmt, via_jsonl, tmp_path / "again", **write_options)
    assert read(fmt, tmp_path / "again", **read_options)[0] == docs


@pytest.mark.parametrize("fmt", ["brat", "label-studio", "doccano", "prodigy", "jsonl"])
def test_overlapping_nested_and_unicode_docs_survive_every_offset_format(fmt: str, tmp_path: Path) -> None:
    write(fmt, DOCS, tmp_path / "out")
    assert read(fmt, tmp_path / "out")[0] == DOCS


def test_fragments_are_refused_or_dropped_on_request(tmp_path: Path) -> None:
    for fmt in ("label-studio", "doccano", "prodigy", "jsonl"):
        with pytest.raises(OptionError) as exc:
            write(fmt, [D4], tmp_path / fmt)
        one_line(exc, fmt, "'d4'", "drop_fragments=True")
        assert not (tmp_path / fmt).exists()
        write(fmt, [D4], tmp_path / fmt, drop_fragments=True)
        assert read(fmt, tmp_path / fmt)[0] == [replace(D4, fragments=())]


def test_registry_refuses_unknown_formats_and_options(tmp_path: Path) -> None:
    assert (
        set(formats.READERS)
        == set(formats.WRITERS)
        == {
            "brat",
            "label-studio",
            "doccano",
            "prodigy",
            "hf-datasets",
            "hf-pipeline",
            "docbin",
            "webanno",
            "jsonl",
        }
    )
    with pytest.raises(OptionError) as exc:
        read("conllu", tmp_path)
    one_line(exc, "'conllu'", "brat, label-studio")
    with pytest.raises(OptionError) as exc:
        read("doccano", tmp_path / "x.jsonl", annotator=1)
    one_line(exc, "'annotator'", "it takes user")
    with pytest.raises(OptionError) as exc:
        read("jsonl", tmp_path / "x.jsonl", annotator=1)
    one_line(exc, "'annotator'", "takes none")
    with pytest.raises(OptionError) as exc:
        write("jsonl", [D1, D1], tmp_path / "x.jsonl")
    one_line(exc, "repeat", "'d1'")


# Reconciliation


def test_misaligned_boundaries_reports_and_never_moves() -> None:
    text = "New York City is big"
    reference = doc("r", text, (0, 13, "LOC"))
    predicted = doc("r", text, (0, 8, "LOC"), (1, 6, "LOC"), (4, 20, "MISC"), (9, 13, "LOC"))
    found = misaligned_boundaries(reference, predicted)
    assert [(f["start"], f["end"], f["boundary"]) for f in found] == [(1, 6, "start and end")]
    assert found[0]["tokens"] == [[0, 3], [4, 8]]
    assert found[0]["id"] == "r" and found[0]["label"] == "LOC"
    assert "'New' and 'York'" in found[0]["what"]
    assert predicted.spans == ((0, 8, "LOC"), (1, 6, "LOC"), (4, 20, "MISC"), (9, 13, "LOC"))
    # The format's own tokens where it has them: with "New York" one token, (4, 20) starts inside it.
    found = misaligned_boundaries(reference, predicted, [(0, 8), (9, 13), (14, 16), (17, 20)])
    assert [(f["start"], f["end"], f["boundary"]) for f in found] == [(1, 6, "start and end"), (4, 20, "start")]
    with pytest.raises(InputError):
        misaligned_boundaries(reference, replace(predicted, text="other"))
