"""Nesting levels round-trip between CoNLL label columns and JSONL's level field, and score alike.

Generated corpora: sentences of letter tokens with two or three levels of valid BIO labels
(chunks within a level never overlap; across levels they may), and JSONL documents whose text
is words joined by single spaces with mentions on word boundaries, each at a level. Reading and
writing each way gives the input back exactly, and a pair of files scores the same per level,
and by GermEval 2014's measures, read as CoNLL columns or as JSONL levels.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.io.reading import Reading, level_name
from spanscore.programs.corpus import convert

TYPES = ("PER", "LOC", "ORG")
WORDS = st.text(alphabet="abcXYZé", min_size=1, max_size=4)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def chunks(draw: Any, n: int) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, type) chunks of a sentence of ``n`` tokens."""
    out, i = [], 0
    while i < n:
        if draw(st.booleans()):
            end = draw(st.integers(i + 1, min(n, i + 3)))
            out.append((i, end, draw(st.sampled_from(TYPES))))
            i = end
        else:
            i += 1
    return out


def bio(n: int, spans: list[tuple[int, int, str]]) -> list[str]:
    tags = ["O"] * n
    for s, e, t in spans:
        tags[s:e] = [f"B-{t}"] + [f"I-{t}"] * (e - s - 1)
    return tags


@st.composite
def corpora(draw: Any) -> list[list[list[str]]]:
    """Sentences of token lines: the token, then a label per level (two or three)."""
    k = draw(st.integers(2, 3))
    out = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 7))
        words = draw(st.lists(WORDS, min_size=n, max_size=n))
        columns = [bio(n, draw(chunks(n))) for _ in range(k)]
        out.append([[w, *(c[i] for c in columns)] for i, w in enumerate(words)])
    return out


def write_conll(path: Path, sentences: list[list[list[str]]]) -> None:
    path.write_text("".join("".join("\t".join(f) + "\n" for f in s) + "\n" for s in sentences), encoding="utf-8")


def names_of(k: int) -> tuple[str, ...]:
    return tuple(level_name(i) for i in range(k))


def conll_to_jsonl(path: Path, out: Path, k: int) -> None:
    convert(path, out, Reading(token_column=0, levels=tuple(range(1, k + 1))), target="JSONL")


@SETTINGS
@given(corpora())
def test_conll_levels_to_jsonl_and_back_is_the_same_file(sentences: list[list[list[str]]]) -> None:
    k = len(sentences[0][0]) - 1
    with tempfile.TemporaryDirectory() as folder:
        source, jsonl, back = Path(folder, "a.tsv"), Path(folder, "a.jsonl"), Path(folder, "b.tsv")
        write_conll(source, sentences)
        conll_to_jsonl(source, jsonl, k)
        convert(jsonl, back, Reading(format="jsonl", levels=names_of(k)), target="BIO")
        assert back.read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
        # Each mention is in the JSONL once, at its level: an independent count of the columns.
        written = Counter(
            (d["id"], s["start"], s["end"], s["label"], s["level"])
            for d in map(json.loads, jsonl.read_text(encoding="utf-8").splitlines())
            for s in d["spans"]
        )
        expected: Counter[tuple[str, int, int, str, str]] = Counter()
        for number, sentence in enumerate(sentences):
            starts = [sum(len(f[0]) + 1 for f in sentence[:i]) for i in range(len(sentence) + 1)]
            for level in range(k):
                for s, e, t in _decode([f[level + 1] for f in sentence]):
                    expected[(str(number), starts[s], starts[e] - 1, t, level_name(level))] += 1
        assert written == expected


def _decode(tags: list[str]) -> list[tuple[int, int, str]]:
    out, start = [], None
    for i, tag in enumerate([*tags, "O"]):
        if start is not None and not tag.startswith("I-"):
            out.append((start, i, tags[start][2:]))
            start = None
        if tag.startswith("B-"):
            start = i
    return out


@st.composite
def documents(draw: Any) -> tuple[int, list[dict[str, Any]]]:
    """The number of levels, and JSONL documents with levels: ids as convert numbers sentences,
    mentions on word boundaries."""
    k = draw(st.integers(2, 3))
    out = []
    for number in range(draw(st.integers(1, 3))):
        words = draw(st.lists(WORDS, min_size=1, max_size=6))
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words) + 1)]
        spans = [
            {"start": starts[s], "end": starts[e] - 1, "label": t, "level": level_name(level)}
            for level in range(k)
            for s, e, t in draw(chunks(len(words)))
        ]
        out.append({"id": str(number), "text": " ".join(words), "spans": spans})
    return k, out


def _key(span: dict[str, Any]) -> tuple[int, int, str, str]:
    return span["start"], span["end"], span["label"], span["level"]


@SETTINGS
@given(documents())
def test_jsonl_levels_to_conll_and_back_are_the_same_documents(drawn: tuple[int, list[dict[str, Any]]]) -> None:
    k, docs = drawn
    with tempfile.TemporaryDirectory() as folder:
        source, conll, back = Path(folder, "a.jsonl"), Path(folder, "a.tsv"), Path(folder, "b.jsonl")
        source.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        convert(source, conll, Reading(format="jsonl", levels=names_of(k)), target="BIO")
        conll_to_jsonl(conll, back, k)
        again = [json.loads(line) for line in back.read_text(encoding="utf-8").splitlines()]
        assert [(d["id"], d["text"]) for d in again] == [(d["id"], d["text"]) for d in docs]
        for ours, theirs in zip(again, docs, strict=True):
            assert sorted(map(_key, ours["spans"])) == sorted(map(_key, theirs["spans"]))


@st.composite
def pairs(draw: Any) -> tuple[int, list[list[list[str]]], list[list[list[str]]]]:
    """A reference and a prediction over the same tokens, with two or three levels."""
    k = draw(st.integers(2, 3))
    gold, pred = [], []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 7))
        words = draw(st.lists(WORDS, min_size=n, max_size=n))
        for side in (gold, pred):
            columns = [bio(n, draw(chunks(n))) for _ in range(k)]
            side.append([[w, *(c[i] for c in columns)] for i, w in enumerate(words)])
    return k, gold, pred


@SETTINGS
@given(pairs())
def test_a_pair_scores_alike_as_conll_columns_and_as_jsonl_levels(drawn: tuple[int, Any, Any]) -> None:
    k, gold, pred = drawn
    names = names_of(k)
    with tempfile.TemporaryDirectory() as folder:
        for name, sentences in (("gold", gold), ("pred", pred)):
            write_conll(Path(folder, f"{name}.tsv"), sentences)
            conll_to_jsonl(Path(folder, f"{name}.tsv"), Path(folder, f"{name}.jsonl"), k)
        columns = spanscore.evaluate(
            reference=Path(folder, "gold.tsv"), predicted=Path(folder, "pred.tsv"), levels=tuple(range(1, k + 1))
        )
        has = {s["level"] for side in (gold, pred) for s in _spans_at_levels(side, k)}
        if set(names) - has:  # JSONL refuses, by name, a level no mention of either side has
            return
        levels = spanscore.evaluate(
            reference=Path(folder, "gold.jsonl"), predicted=Path(folder, "pred.jsonl"), format="jsonl", levels=names
        )
    assert columns.levels is not None and levels.levels is not None
    for name in names:
        for criterion in ("strict", "boundary", "left", "right"):
            assert levels.levels[name]["metrics"][criterion] == columns.levels[name]["metrics"][criterion]
    assert levels.levels.get("germeval") == columns.levels.get("germeval")
    assert levels.metrics["strict"] == columns.metrics["strict"]


def _spans_at_levels(sentences: list[list[list[str]]], k: int) -> list[dict[str, str]]:
    return [
        {"level": level_name(level)}
        for sentence in sentences
        for level in range(k)
        for _ in _decode([f[level + 1] for f in sentence])
    ]


@SETTINGS
@given(documents())
def test_docbin_span_groups_read_as_the_jsonl_levels_made_them(drawn: tuple[int, list[dict[str, Any]]]) -> None:
    """Each level's mentions put into the span group of its name by spaCy, read back with
    span_groups: the same mentions at the same levels as the JSONL read by level."""
    import pytest

    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc, DocBin

    from spanscore.io.formats import docbin
    from spanscore.io.jsonl import iter_documents, parse_document

    k, docs = drawn
    names = names_of(k)
    vocab = spacy.vocab.Vocab()
    made = DocBin(store_user_data=True)
    for d in docs:
        words = d["text"].split(" ")
        doc = Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False])
        for name in names:
            doc.spans[name] = [
                doc.char_span(s["start"], s["end"], label=s["label"]) for s in d["spans"] if s["level"] == name
            ]
        made.add(doc)
    with tempfile.TemporaryDirectory() as folder:
        made.to_disk(Path(folder, "a.spacy"))
        read, notes = docbin.read(Path(folder, "a.spacy"), span_groups=",".join(names))
        Path(folder, "a.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        assert [d.id for d in iter_documents(Path(folder, "a.jsonl"))] == [d.id for d in read]
    for ours, theirs in zip(read, docs, strict=True):
        jsonl = parse_document(theirs, "a.jsonl", 1, names)
        assert ours.text == jsonl.text
        assert sorted(zip(ours.spans, ours.levels, strict=True)) == sorted(zip(jsonl.spans, jsonl.levels, strict=True))
    assert not notes.skipped.get("mentions in other span groups")
