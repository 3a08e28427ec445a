"""The position-free criterion: each document's multiset of (normalised string, type) pairs given
against the reference's, as many LLM-NER papers score; equal to a count written out here
independently (sorted lists merged), and different from located scoring where it should be."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.io.document import Document
from spanscore.io.strings import Located, StringDoc, StringPolicy, locate


def normal(s: str) -> str:
    """ASCII only: lower case, white space runs as one space, punctuation off the edges."""
    s = re.sub(r"\s+", " ", s.lower())
    return s.strip("".join(chr(c) for c in range(128) if not chr(c).isalnum()))


def merged_count(given: list[tuple[str, str]], wanted: list[tuple[str, str]]) -> int:
    a, b = sorted(given), sorted(wanted)
    i = j = matched = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            matched, i, j = matched + 1, i + 1, j + 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return matched


WORDS = ("Ann", "ann", "Lee", "Bob", "Paris", "the", "U.S.", "Senate", ",", ".")


@st.composite
def corpus(draw: st.DrawFn) -> list[tuple[str, list[tuple[int, int, str]], list[tuple[str, str]]]]:
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
        text = " ".join(words)
        starts = [m.start() for m in re.finditer(r"\S+", text)]
        spans = []
        for k in sorted(set(draw(st.lists(st.integers(0, len(words) - 1), max_size=4)))):
            spans.append((starts[k], starts[k] + len(words[k]), draw(st.sampled_from("XY"))))
        strings = [(draw(st.sampled_from((w, w.lower(), w + ".", "Nobody"))), draw(st.sampled_from("XY")))
                   for w in draw(st.lists(st.sampled_from(WORDS), max_size=5))]
        docs.append((text, spans, strings))
    return docs


@settings(max_examples=200, deadline=None)
@given(docs=corpus())
def test_position_free_equals_an_independent_multiset_count(
    docs: list[tuple[str, list[tuple[int, int, str]], list[tuple[str, str]]]],
) -> None:
    reference = [Document(f"d{k}", text, tuple(sorted(spans))) for k, (text, spans, _) in enumerate(docs)]
    strings = [StringDoc(f"d{k}", list(given), None, 1) for k, (_, _, given) in enumerate(docs)]
    located = Located(StringPolicy())
    locate(reference, strings, StringPolicy(), located)
    bag = located.to_dict()["position_free"]
    matched = sum(
        merged_count([(normal(s), t) for s, t in given], [(normal(text[a:b]), t) for a, b, t in spans])
        for text, spans, given in docs
    )
    assert (bag["matched"], bag["predicted"], bag["reference"]) == (
        matched, sum(len(g) for _, _, g in docs), sum(len(s) for _, s, _ in docs))


def test_where_it_differs_from_located_scoring(tmp_path: Path) -> None:
    # "Ann" annotated at its second occurrence only; the model gives "Ann" once: located scoring
    # places it at the first (a whole-word occurrence, in text order) and counts a spurious and a
    # missed mention, the position-free criterion a match. "ann lee" as one string against two
    # reference mentions: no pair matches.
    text = "Ann met Lee ; later Ann left ."
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "a", "text": text, "spans": [
        {"start": 20, "end": 23, "label": "X"}, {"start": 8, "end": 11, "label": "X"}]}) + "\n", encoding="utf-8")
    llm = tmp_path / "llm.jsonl"
    llm.write_text(json.dumps({"id": "a", "mentions": [{"text": "Ann", "label": "X"},
                                                        {"text": "lee", "label": "X"}]}) + "\n", encoding="utf-8")
    data: dict[str, Any] = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl",
                                              predicted_format="strings").to_dict()
    assert data["metrics"]["strict"]["full"] == 1  # "lee" at Lee; "Ann" at the unannotated first one
    bag = data["located"]["position_free"]
    assert (bag["matched"], bag["predicted"], bag["reference"]) == (2, 2, 2)
    assert bag["f1"] == 1.0
