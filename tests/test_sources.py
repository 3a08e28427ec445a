"""Every input through the one Source seam: annotation tools' exports and mentions given as strings
are read whole into documents, paired by id in memory and counted in parts, with no temporary
file; the report equals the same documents written to JSONL and scored as JSONL (the route taken
before), in one chunk, in many small ones and in worker processes, and every error names the
user's file."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import random
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.errors import InputError, OptionError
from spanscore.io.document import Document
from spanscore.io.formats import misaligned_boundaries, read, write
from spanscore.io.jsonl import read_jsonl
from spanscore.io.reading import ANNOTATION_FORMATS, FORMATS, MODEL_FORMATS, Reading
from spanscore.io.sources import OPENERS, ConllSource, DocumentsSource, open_source
from spanscore.io.strings import Located, StringPolicy, locate, read_strings
from spanscore.stages.scoring import TypeSelection

WORDS = ("Ann", "Lee", "met", "Bob", "Smith", "in", "New", "York", "today", ".", "Paris", "Berlin", "the", "White",
         "House", "said", "U.S.", "Senate", "will", "vote", "Obama", "Merkel", "flew", "home", "Acme", "Corp")
LABELS = ("PER", "LOC", "ORG", "MISC")
FILES = {"brat": "gold", "label-studio": "gold.json", "doccano": "gold.jsonl", "prodigy": "gold.jsonl",
         "hf-datasets": "gold", "hf-pipeline": "gold.jsonl", "docbin": "gold.spacy", "webanno": "gold"}
ONE_CHUNK = 1 << 40
RUNS = {
    "one chunk": {"chunk_bytes": ONE_CHUNK},
    "small chunks": {"chunk_bytes": 60, "documents": True},
    "two processes": {"chunk_bytes": 60, "jobs": 2},
}


def corpus(seed: int = 3, n: int = 24) -> tuple[list[Document], list[Document], list[Document]]:
    """Reference documents, predictions (one boundary inside a token, some labels changed, some
    mentions dropped or added, in another order) and token-aligned predictions (what BIO tags can
    hold), all with texts of words joined by single spaces."""
    rng = random.Random(seed)
    gold, pred, aligned = [], [], []
    for k in range(n):
        words = [rng.choice(WORDS) for _ in range(0 if k == 5 else rng.randint(3, 16))]
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words))]
        tokens = [(s, s + len(w)) for s, w in zip(starts, words, strict=True)]
        spans: list[tuple[int, int, str]] = []
        i = 0
        while i < len(tokens):
            if rng.random() < 0.3:
                j = min(len(tokens), i + rng.randint(1, 3))
                spans.append((tokens[i][0], tokens[j - 1][1], rng.choice(LABELS)))
                i = j
            i += 1
        moved, kept = [], []
        for s, e, label in spans:
            r = rng.random()
            if r < 0.15:
                continue
            if r < 0.3:
                label = rng.choice(LABELS)
            kept.append((s, e, label))
            moved.append((s + 1, e, label) if r > 0.85 and e - s > 2 else (s, e, label))
        if tokens and rng.random() < 0.3:
            s, e = rng.choice(tokens)
            if all(e <= a or b <= s for a, b, _ in kept):
                kept.append((s, e, "MISC"))
                moved.append((s, e, "MISC"))
        text = " ".join(words)
        gold.append(Document(f"d{k}", text, tuple(sorted(spans))))
        pred.append(Document(f"d{k}", text, tuple(sorted(moved))))
        aligned.append(Document(f"d{k}", text, tuple(sorted(kept))))
    rng.shuffle(pred)
    rng.shuffle(aligned)
    return gold, pred, aligned


def jsonl(docs: list[Document], path: Path) -> Path:
    write("jsonl", docs, path)
    return path


def exported(name: str, folder: Path) -> tuple[Path, Path, list[Document], list[Document]]:
    """The corpus as ``name`` writes it (reference and prediction), and the documents its reader
    gives back (what the route before wrote to JSONL)."""
    if name in ("hf-datasets", "docbin"):
        pytest.importorskip("datasets" if name == "hf-datasets" else "spacy")
    gold, pred, aligned = corpus()
    ref = folder / FILES[name]
    pred_path = folder / FILES[name].replace("gold", "pred")
    write(name, gold, ref)
    write(name, aligned if name in ("hf-datasets", "docbin") else pred, pred_path)  # tokens: no boundary inside
    return ref, pred_path, read(name, ref)[0], read(name, pred_path)[0]


def read_notes(name: str, path: Path) -> dict[str, Any]:
    """What the route before put in ``Report.read`` for one side."""
    _, notes = read(name, path)
    return {"skipped": dict(notes.skipped), "misaligned": notes.misaligned[:5],
            "misaligned_count": len(notes.misaligned)}


def as_before(
    plain: Any, *, format: str, predicted_format: str | None = None, located: dict[str, Any] | None = None,
    read: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON of the route before: the JSONL report with the options it patched in."""
    out = plain.to_dict()
    options = dict(plain.options)
    options["format"] = format
    if predicted_format is not None and predicted_format != format:
        options["predicted-format"] = predicted_format
    if located is not None:
        options["locate"] = located["policy"].removeprefix("strings:")
        out["located"] = located
    if read is not None:
        out["read"] = read
    out["options"] = options
    out["signature"] = "|".join([plain.signature.split("|")[0], *(f"{k}:{v}" for k, v in options.items())])
    return out


@pytest.mark.parametrize("run", list(RUNS))
@pytest.mark.parametrize("name", ANNOTATION_FORMATS)
def test_an_export_scores_as_its_documents_written_to_jsonl(name: str, run: str, tmp_path: Path) -> None:
    ref, pred, gold_docs, pred_docs = exported(name, tmp_path)
    options = RUNS[run]
    report = spanscore.evaluate(reference=ref, predicted=pred, format=name, **options)
    plain = spanscore.evaluate(
        reference=jsonl(gold_docs, tmp_path / "g.jsonl"), predicted=jsonl(pred_docs, tmp_path / "p.jsonl"),
        format="jsonl", **options,
    )
    found = [m for p in pred_docs for r in gold_docs if r.id == p.id for m in misaligned_boundaries(r, p)]
    notes = {"reference": read_notes(name, ref), "predicted": read_notes(name, pred),
             "misaligned": {"count": len(found), "examples": found[:5]}}
    before = as_before(plain, format=name, read=notes)
    # Tokens are the format's own where it has them (Prodigy's, a dataset's), which JSONL has not.
    before["corpus"]["tokens"] = sum(len(d.text.split()) if d.tokens is None else len(d.tokens) for d in gold_docs)
    assert report.to_dict() == before
    if name not in ("hf-datasets", "docbin"):
        assert report.to_dict()["read"]["misaligned"]["count"] > 0  # the corpus has some
    if "documents" in options:
        assert list(report.document_rows()) == list(plain.document_rows())
    for criterion in ("strict", "overlap"):
        assert list(report.pair_rows(criterion)) == list(plain.pair_rows(criterion))


@pytest.mark.parametrize("run", list(RUNS))
@pytest.mark.parametrize("reference_format", ["jsonl", "brat"])
def test_strings_score_as_the_located_documents_written_to_jsonl(
    reference_format: str, run: str, tmp_path: Path
) -> None:
    gold, pred, _ = corpus()
    rng = random.Random(9)
    lines = []
    for doc in pred[:-2]:  # two documents without a line: no predicted mention
        mentions = [{"text": doc.text[s:e] if rng.random() < 0.7 else doc.text[s:e].lower() + ".", "label": label}
                    for s, e, label in doc.spans]
        if rng.random() < 0.4:
            mentions.append({"text": "Joe Biden", "label": "PER"})  # found nowhere: spurious everywhere
        lines.append(json.dumps({"id": doc.id, "mentions": mentions}))
    strings = tmp_path / "llm.jsonl"
    strings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if reference_format == "brat":
        ref: Path = tmp_path / "gold"
        write("brat", gold, ref)
        ref_docs = read("brat", ref)[0]
    else:
        ref = jsonl(gold, tmp_path / "gold.jsonl")
        ref_docs = read_jsonl(ref)
    options = RUNS[run]
    report = spanscore.evaluate(reference=ref, predicted=strings, format=reference_format,
                                predicted_format="strings", **options)
    located = Located(StringPolicy())
    placed_ref, placed_pred = locate(ref_docs, read_strings(str(strings)), StringPolicy(), located)
    assert located.counts["not_found"] > 0 and any(d.text != r.text for d, r in zip(placed_ref, ref_docs, strict=True))
    plain = spanscore.evaluate(
        reference=jsonl(placed_ref, tmp_path / "g2.jsonl"), predicted=jsonl(placed_pred, tmp_path / "p2.jsonl"),
        format="jsonl", **options,
    )
    expected = as_before(plain, format=reference_format, predicted_format="strings", located=located.to_dict())
    # The corpus line counts the reference's own tokens, not those of the strings appended to it.
    expected["corpus"]["tokens"] = sum(len(d.text.split()) for d in ref_docs)
    assert expected["corpus"]["tokens"] < plain.to_dict()["corpus"]["tokens"]
    assert report.to_dict() == expected
    assert "predicted-format:strings|locate:exact+normalised+fuzzy0.85" in report.signature


def test_the_documents_source_cuts_parts_and_travels(tmp_path: Path) -> None:
    ref, pred, _, _ = exported("doccano", tmp_path)
    reading = Reading(format="doccano")
    whole = open_source(ref, pred, reading, TypeSelection(), chunk_bytes=ONE_CHUNK)
    small = open_source(ref, pred, reading, TypeSelection(), chunk_bytes=60)
    assert isinstance(whole, DocumentsSource) and isinstance(small, DocumentsSource)
    assert len(list(whole.parts())) == 1 and len(list(small.parts())) > 3
    single = DocumentsSource(whole.reference, whole.predicted, per_part=1)
    parts = list(single.parts())
    assert len(parts) == len(whole.reference) and sum(single.units(p) for p in parts) == len(whole.reference)
    assert single.position(parts[-1]) == single.size()
    # Workers get the source pickled (Dask) or forked: a part is three numbers.
    again = pickle.loads(pickle.dumps(small))
    assert again == small and again.read == small.read
    first = next(iter(small.parts()))
    assert pickle.loads(pickle.dumps(first)) == first
    assert again.load(first).doc_ids == small.load(first).doc_ids
    assert small.for_workers(remote=True) is small


def test_evaluate_writes_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref, pred, _, _ = exported("label-studio", tmp_path)
    strings = tmp_path / "llm.jsonl"
    strings.write_text(json.dumps({"id": "d1", "mentions": [{"text": "Nowhere", "label": "LOC"}]}) + "\n")
    gold = jsonl(corpus()[0], tmp_path / "gold.jsonl")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    touched: list[str] = []
    # A temporary folder made and removed within evaluate would leave the folder empty: the audit
    # events catch it on the way.
    with watching(str(scratch), touched):
        for jobs in (1, 2):
            spanscore.evaluate(reference=ref, predicted=pred, format="label-studio", jobs=jobs, chunk_bytes=60)
            spanscore.evaluate(reference=gold, predicted=strings, format="jsonl", predicted_format="strings",
                               jobs=jobs, chunk_bytes=60)
    assert touched == [] and list(scratch.iterdir()) == []


WATCHED: list[tuple[str, list[str]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if WATCHED and event in ("open", "os.mkdir") and isinstance(args[0], str | bytes | os.PathLike):
        folder, touched = WATCHED[-1]
        if os.fsdecode(args[0]).startswith(folder):
            touched.append(f"{event} {os.fsdecode(args[0])}")


sys.addaudithook(_audit)  # a hook cannot be removed: this one only listens while WATCHED is set


@contextlib.contextmanager
def watching(folder: str, touched: list[str]) -> Iterator[None]:
    """Every file opened and folder made under ``folder`` meanwhile, in ``touched``."""
    WATCHED.append((folder, touched))
    try:
        yield
    finally:
        WATCHED.remove((folder, touched))


def test_errors_name_the_users_files(tmp_path: Path) -> None:
    gold, pred, _ = corpus()
    write("brat", gold, tmp_path / "gold")
    ref = tmp_path / "gold"

    def fails(docs: list[Document], name: str) -> InputError:
        path = tmp_path / name
        write("doccano", docs, path)
        with pytest.raises(InputError) as err:
            spanscore.evaluate(reference=ref, predicted=path, format="brat", predicted_format="doccano")
        assert "spanscore-documents" not in str(err.value)
        return err.value

    err = fails([d for d in pred if d.id != "d7"], "missing.jsonl")
    assert "'d7' is missing from" in str(err) and str(tmp_path / "missing.jsonl") in str(err)
    assert err.path == str(ref)
    err = fails([*pred, Document("x", "x", ())], "extra.jsonl")
    assert "'x' is not in" in str(err) and err.path == str(tmp_path / "extra.jsonl") and err.line == len(pred) + 1
    changed = [Document(d.id, d.text + " more", d.spans) if d.id == "d3" else d for d in pred]
    err = fails(changed, "text.jsonl")
    assert "text of document 'd3' differs from" in str(err) and str(ref) in str(err)
    assert err.path == str(tmp_path / "text.jsonl") and err.line is not None
    # A file its reader cannot read: the reader names it, and its line.
    bad = tmp_path / "bad.jsonl"
    bad.write_text((tmp_path / "text.jsonl").read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        spanscore.evaluate(reference=ref, predicted=bad, format="brat", predicted_format="doccano")
    assert info.value.path == str(bad) and info.value.line == len(pred) + 1
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError) as info:
        spanscore.evaluate(reference=empty, predicted=tmp_path / "text.jsonl", format="brat",
                           predicted_format="doccano")
    assert info.value.path == str(empty)


def test_reading_says_how_each_side_is_read() -> None:
    reading = Reading(format="label-studio", predicted_options={"source": "predictions", "model_version": None,
                                                                "annotator": 3})
    assert reading.predicted_options == (("annotator", "3"), ("source", "predictions"))
    assert Reading(format="label-studio", predicted_options=reading.predicted_options) == reading
    assert reading.strings is None and reading.tail_fields() == {}
    assert reading.signature_fields() == {"format": "label-studio", "labels": "spans", "repair": "n/a"}
    strings = Reading(format="jsonl", predicted_format="strings")
    assert strings.strings == StringPolicy()
    assert strings.tail_fields() == {"predicted-format": "strings", "locate": "exact+normalised+fuzzy0.85"}
    assert Reading(format="jsonl", predicted_format="jsonl").tail_fields() == {}
    assert Reading(format="conll", merged=True).signature_fields() == {
        "format": "conll-merged", "labels": "BIO", "repair": "conlleval"
    }
    for format, side in (("conll", "strings"), ("brat", "conll"), ("labels", "jsonl"), ("jsonl", "spans")):
        with pytest.raises(OptionError, match="character offsets"):
            Reading(format=format, predicted_format=side)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="reference_options"):
        Reading(format="brat", reference_options="source=x")
    with pytest.raises(OptionError, match="StringPolicy"):
        Reading(format="jsonl", predicted_format="strings", strings="exact")  # type: ignore[arg-type]


def test_every_format_has_an_opener_and_engines_ask_the_source(tmp_path: Path) -> None:
    assert set(FORMATS) | set(MODEL_FORMATS) == set(OPENERS)
    conll = tmp_path / "g.conll"
    conll.write_text("A B-PER\n\n", encoding="utf-8")
    source = ConllSource.open(conll.name, conll.name, Reading(), TypeSelection(), ONE_CHUNK)
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert source.for_workers(remote=False) is source
        remote = source.for_workers(remote=True)
        assert remote.reference == str(conll) and remote.predicted == str(conll)
        with pytest.raises(InputError):
            ConllSource("nowhere.conll", conll.name, Reading()).for_workers(remote=False)
    finally:
        os.chdir(here)
    assert source.read is None and source.located is None
