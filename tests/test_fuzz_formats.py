"""Hypothesis fuzz of the annotation-format readers and the strings locator.

Strategies build valid exports of every format (documents with Unicode text in every normal form,
scripts without spaces, overlapping and nested mentions, odd ids) and broken ones (bytes cut,
dropped or inserted; a field of the wrong type; the wrong shape of JSON), and strings files.
Properties: never a traceback (a score, or exit 2 with one line naming the file); never a silently
changed count: a file converted to another format scores 1.0 against its source with every
mention, a Label Studio task left out is counted and left out of both sides, and every mention
given as a string is placed, found or not.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.io.document import Document, text_tokens
from spanscore.io.formats import read, write
from spanscore.io.strings import Located, StringDoc, StringPolicy, locate

# SPANSCORE_FUZZ_EXAMPLES=2000 for a longer run.
EXAMPLES = int(os.environ.get("SPANSCORE_FUZZ_EXAMPLES", "60"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FORMATS = ("jsonl", "brat", "label-studio", "doccano", "prodigy")
SUFFIX = {"brat": "", "label-studio": ".json"}
PIECES = (
    "Ann", "Lee", "New York", "São Paulo", "José", "Zürich", "東京タワー", "北京", "서울", "ﬁnance", "Straße", "😀",
    "U.S.", "Cole...", "Memphis,", "e\u0301", "(ok)", "-", ".", "a", "\u00a0", "\t", "  ", "\n",
)
LABELS = ("PER", "LOC", "ORG", "MISC", "B-X", "ÄÖ")


@st.composite
def texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(PIECES) | st.text(alphabet=st.characters(codec="utf-8"), max_size=4),
                          max_size=12))
    text = " ".join(words)
    form = draw(st.sampled_from(("NFC", "NFD", None)))
    return unicodedata.normalize(form, text) if form else text


@st.composite
def documents(draw: st.DrawFn) -> list[Document]:
    ids = draw(st.lists(st.from_regex(r"[a-z0-9_-]{1,8}", fullmatch=True).filter(lambda s: not s.startswith("-")),
                        min_size=1, max_size=5, unique=True))
    docs = []
    for doc_id in ids:
        text = draw(texts())
        spans = []
        if text:
            for _ in range(draw(st.integers(0, 6))):
                start = draw(st.integers(0, len(text) - 1))
                end = draw(st.integers(start + 1, len(text)))
                spans.append((start, end, draw(st.sampled_from(LABELS))))
        docs.append(Document(doc_id, text, tuple(sorted(spans))))
    return docs


def written(fmt: str, docs: list[Document], folder: Path, name: str) -> Path | None:
    """``docs`` written as ``fmt``, or None where the format cannot hold them (a line break in a
    BRAT mention...): the writer's refusal is one line."""
    path = folder / f"{name}{SUFFIX.get(fmt, '.jsonl')}"
    try:
        write(fmt, docs, path)
    except OptionError as exc:
        assert "\n" not in str(exc)
        return None
    return path


def answered(out: Result) -> int:
    """The exit status of a command that must score or refuse in one line, never fail otherwise."""
    assert out.exception is None or isinstance(out.exception, SystemExit), out.output
    assert out.exit_code in (0, 2), out.output
    assert "Traceback" not in out.output
    if out.exit_code == 2:
        errors = [line for line in out.output.splitlines() if line.startswith("spanscore: error:")]
        assert len(errors) == 1, out.output
    return out.exit_code


COUNTS = {"valid": 0, "refused by a writer": 0, "broken: scored": 0, "broken: refused": 0, "strings": 0}


@SETTINGS
@given(docs=documents(), source=st.sampled_from(FORMATS), target=st.sampled_from(FORMATS))
def test_a_converted_export_scores_one_against_its_source(
    docs: list[Document], source: str, target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("convert")
    original = written(source, docs, folder, "source")
    if original is None:
        COUNTS["refused by a writer"] += 1
        return
    back, _ = read(source, original)
    assert sorted(back, key=lambda d: d.id) == sorted(docs, key=lambda d: d.id)
    converted = folder / f"converted{SUFFIX.get(target, '.jsonl')}"
    out = CliRunner().invoke(cli, ["convert", str(original), "-o", str(converted), "--from", source, "--to", target])
    if answered(out) == 2:  # the target cannot hold them: said, nothing written
        assert not converted.exists()
        COUNTS["refused by a writer"] += 1
        return
    COUNTS["valid"] += 1
    report = CliRunner().invoke(
        cli, ["evaluate", str(original), str(converted), "--format", source, "--predicted-format", target, "--json"]
    )
    assert answered(report) == 0
    data = json.loads(report.stdout)
    mentions = sum(len(d.spans) for d in docs)
    strict = data["metrics"]["strict"]
    assert strict["reference"] == strict["predicted"] == mentions
    assert strict["f1"] == (1.0 if mentions else 0.0)
    assert data["corpus"]["documents"] == len(docs)


def mutate_bytes(data: bytes, draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(("cut", "drop", "insert", "duplicate line", "swap lines")))
    if not data:
        return draw(st.binary(max_size=8))
    a = draw(st.integers(0, len(data) - 1))
    b = draw(st.integers(a, min(len(data), a + 16)))
    if kind == "cut":
        return data[:a]
    if kind == "drop":
        return data[:a] + data[b:]
    if kind == "insert":
        junk = draw(st.sampled_from([b"{", b"]", b'"', b"\xff", b"\n", b"null", b"[", b",", b"\x00"]))
        return data[:a] + junk + data[a:]
    lines = data.split(b"\n")
    k = draw(st.integers(0, len(lines) - 1))
    if kind == "duplicate line":
        return b"\n".join([*lines[: k + 1], lines[k], *lines[k + 1 :]])
    j = draw(st.integers(0, len(lines) - 1))
    lines[k], lines[j] = lines[j], lines[k]
    return b"\n".join(lines)


WRONG = (None, "x", -1, 2.5, True, [], {}, [[0]], {"start": "0"})


def mutate_json(value: Any, draw: st.DrawFn) -> Any:
    """One value somewhere in the JSON replaced by one of the wrong type, or a key dropped."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        if draw(st.booleans()):
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: mutate_json(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        k = draw(st.integers(0, len(value) - 1))
        return [*value[:k], mutate_json(value[k], draw), *value[k + 1 :]]
    return draw(st.sampled_from(WRONG))


@SETTINGS
@given(docs=documents(), fmt=st.sampled_from(FORMATS), data=st.data())
def test_a_broken_export_is_scored_or_refused_in_one_line(
    docs: list[Document], fmt: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("broken")
    reference = written(fmt, docs, folder, "gold")
    assume(reference is not None)
    assert reference is not None
    mutant = written(fmt, docs, folder, "mutant")
    assert mutant is not None
    if fmt == "brat":  # a folder: break one of its files
        files = sorted(p for p in mutant.iterdir() if p.suffix in (".txt", ".ann"))
        target = data.draw(st.sampled_from(files))
        target.write_bytes(mutate_bytes(target.read_bytes(), data.draw))
    elif fmt == "label-studio" or data.draw(st.booleans()):
        raw = mutant.read_bytes()
        whole = json.loads(raw) if fmt == "label-studio" else [json.loads(line) for line in raw.splitlines()]
        if data.draw(st.booleans()):
            broken = json.dumps(mutate_json(whole, data.draw))
        elif fmt == "label-studio":
            broken = "\n".join(json.dumps(task) for task in whole)  # JSON Lines where a list is wanted
        else:
            broken = json.dumps(whole)  # a JSON array where JSON Lines are wanted
        mutant.write_text(broken, encoding="utf-8")
    else:
        mutant.write_bytes(mutate_bytes(mutant.read_bytes(), data.draw))
    runs = [
        ["evaluate", str(reference), str(mutant), "--format", fmt, "--json"],
        ["convert", str(mutant), "-o", str(folder / "out.jsonl"), "--from", fmt, "--to",
         "doccano" if fmt == "jsonl" else "jsonl"],
    ]
    for args in runs:
        out = CliRunner().invoke(cli, args)
        code = answered(out)
        if code == 2:
            COUNTS["broken: refused"] += 1
            error = next(line for line in out.output.splitlines() if line.startswith("spanscore: error:"))
            assert "mutant" in error or "gold" in error or "out.jsonl" in error, error
        else:
            COUNTS["broken: scored"] += 1


@SETTINGS
@given(
    tasks=st.lists(
        st.tuples(st.sampled_from(("annotated", "none", "cancelled")), st.booleans(), st.integers(0, 3)),
        min_size=1, max_size=8,
    )
)
def test_label_studio_tasks_left_out_are_counted_on_both_sides(
    tasks: list[tuple[str, bool, int]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = "Ann Lee met Bob Smith in New York today ."
    spans = [(0, 7, "PER"), (12, 21, "PER"), (25, 33, "LOC")]

    def result(n: int) -> list[dict[str, Any]]:
        return [{"type": "labels", "value": {"start": s, "end": e, "text": text[s:e], "labels": [lab]}}
                for s, e, lab in spans[:n]]

    export = []
    for k, (annotated, predicted, n) in enumerate(tasks):
        annotations = {"annotated": [{"result": result(n)}], "none": [],
                       "cancelled": [{"was_cancelled": True, "result": result(n)}]}[annotated]
        export.append({"id": k, "data": {"text": text}, "annotations": annotations,
                       "predictions": [{"model_version": "m", "result": result(n)}] if predicted else []})
    path = tmp_path_factory.mktemp("ls") / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    both = [(a, p, n) for a, p, n in tasks if a == "annotated" and p]
    out = CliRunner().invoke(cli, ["evaluate", str(path), str(path), "--format", "label-studio",
                                   "--predicted-option", "source=predictions", "--json"])
    if not both:
        assert answered(out) == 2
        assert "is left to score" in out.output or "holds no predictions" in out.output
        return
    assert answered(out) == 0
    data = json.loads(out.stdout)
    assert data["corpus"]["documents"] == len(both)
    assert data["metrics"]["strict"]["reference"] == sum(n for _, _, n in both)
    skipped = data["read"]
    assert skipped["reference"]["skipped"].get("tasks without annotation", 0) == sum(
        1 for a, _, _ in tasks if a != "annotated")
    assert skipped["predicted"]["skipped"].get("tasks without prediction", 0) == sum(1 for _, p, _ in tasks if not p)
    assert skipped["reference"]["skipped"].get("documents the prediction's reader left out", 0) == sum(
        1 for a, p, _ in tasks if a == "annotated" and not p)


@st.composite
def strings_runs(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]], list[str]]:
    """A text (NFC), mentions of whole tokens of it, and strings found nowhere."""
    text = unicodedata.normalize("NFC", draw(texts()))
    tokens = [t for t in text_tokens(text) if any(c.isalnum() for c in text[t[0] : t[1]])]
    mentions = []
    for _ in range(draw(st.integers(0, 6))):
        if not tokens:
            break
        k = draw(st.integers(0, len(tokens) - 1))
        j = draw(st.integers(k, min(len(tokens) - 1, k + 2)))
        mentions.append((text[tokens[k][0] : tokens[j][1]], draw(st.sampled_from(LABELS))))
    unfound = draw(st.lists(st.sampled_from(("Joe Biden", "Nowhere Inc", "X Æ A-12", "ニュース")), max_size=3))
    return text, mentions, unfound


@SETTINGS
@given(run=strings_runs(), repeat=st.integers(1, 3))
def test_every_string_is_placed_and_normal_forms_do_not_matter(
    run: tuple[str, list[tuple[str, str]], list[str]], repeat: int
) -> None:
    text, mentions, unfound = run
    first_label = {m: label for m, label in reversed(mentions)}
    given_mentions = list(first_label.items()) * repeat + [(u, "PER") for u in unfound]
    COUNTS["strings"] += 1
    results = {}
    for form in ("NFC", "NFD"):
        for policy in (StringPolicy(), StringPolicy(normalised=True, fuzzy=None), StringPolicy(False, None)):
            located = Located(policy)
            reference = [Document("d", unicodedata.normalize(form, text), ())]
            _, predicted = locate(reference, [StringDoc("d", given_mentions, None, 1)], policy, located)
            counts = located.to_dict()
            ways = ("exact", "normalised", "fuzzy", "inside_word", "not_found", "invalid")
            assert sum(counts[h] for h in ways) == len(given_mentions)
            assert len(predicted[0].spans) == len(given_mentions)  # never silently dropped
            results[form, policy] = counts
    distinct = len(first_label)
    for policy in (StringPolicy(), StringPolicy(normalised=True, fuzzy=None)):
        # Each distinct mention is in the text in both normal forms: found, whatever the form.
        for form in ("NFC", "NFD"):
            found = results[form, policy]
            assert found["exact"] + found["normalised"] + found["fuzzy"] + found["inside_word"] >= distinct, (
                form, found)


def test_a_strings_file_through_the_command_line(tmp_path: Path) -> None:
    text = unicodedata.normalize("NFD", "José Müller met Zoë in Zürich .")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "d", "text": text, "spans": [
        {"start": m.start(), "end": m.end(), "label": "X"} for m in re.finditer(r"\S+ \S+(?= met)", text)]}) + "\n",
        encoding="utf-8")
    llm = tmp_path / "llm.jsonl"
    llm.write_text(json.dumps({"id": "d", "mentions": [{"text": "José Müller", "label": "X"}]}) + "\n",
                   encoding="utf-8")
    report = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings",
                                strings=StringPolicy(normalised=True, fuzzy=None))
    assert report.metrics["strict"]["f1"] == 1.0
    assert report.to_dict()["located"]["normalised"] == 1


def test_the_fuzz_ran_every_kind() -> None:
    """Run last in this file: the counts of what the properties above met (pytest -s prints them)."""
    print("fuzz counts:", COUNTS)
    if all(COUNTS[k] == 0 for k in COUNTS):
        pytest.skip("run with the rest of the file")
    assert COUNTS["valid"] > 0 and COUNTS["broken: refused"] > 0 and COUNTS["broken: scored"] > 0
