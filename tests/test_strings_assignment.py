"""Strings placed as one assignment over a document: every string's verbatim whole-word
occurrences first, then normalised, then fuzzy, then inside longer words; within a step the
occurrences are chosen so that the most strings are placed, whatever order the strings come in.
Each defect of placing strings one at a time in the order given is a case here."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.io.document import Document
from spanscore.io.strings import Located, StringDoc, StringPolicy, locate
from spanscore.programs.samples import write_samples

DEFAULT = StringPolicy()


def placed(
    text: str, mentions: list[tuple[str, str]], policy: StringPolicy = DEFAULT
) -> tuple[dict[str, Any], list[tuple[int, int, str]]]:
    located = Located(policy)
    _, predicted = locate([Document("d", text, ())], [StringDoc("d", mentions, None, 1)], policy, located)
    return located.to_dict(), [sp for sp in predicted[0].spans if sp[1] <= len(text)]


def where(found: dict[str, Any], how: str) -> list[tuple[str, str]]:
    return [(e["text"], e["found"]) for e in found["examples"].get(how, [])]


def test_a_verbatim_string_is_not_lost_to_an_earlier_fuzzy_one() -> None:
    text = "between physical and chemical defence trait ."
    for mentions in (
        [("physical defence trait", "T"), ("chemical defence trait", "T")],
        [("chemical defence trait", "T"), ("physical defence trait", "T")],
    ):
        found, spans = placed(text, mentions)
        assert found["exact"] == 1
        assert where(found, "exact") == [("chemical defence trait", "chemical defence trait")]
        assert (text.index("chemical"), text.index(" ."), "T") in spans


def test_a_verbatim_string_is_not_lost_to_an_earlier_normalised_one() -> None:
    found, spans = placed("Tree growth .", [("tree", "A"), ("Tree", "B")])
    assert (found["exact"], found["normalised"], found["not_found"]) == (1, 0, 1)
    assert spans == [(0, 4, "B")]
    assert found["examples"]["not_found"][0]["text"] == "tree"


def test_a_string_given_twice_that_needs_the_fuzzy_step_is_placed_twice() -> None:
    text = "The U.S. Senate met ; later the U.S. Senate voted ."
    found, spans = placed(text, [("US Senate", "ORG"), ("US Senate", "ORG")])
    assert found["fuzzy"] == 2
    assert spans == [(4, 15, "ORG"), (32, 43, "ORG")]


def test_normalised_matches_with_more_occurrences_than_given_are_ambiguous() -> None:
    found, _ = placed("Tree and tree and TREE .", [("TrEe", "X")])
    assert found["normalised"] == 1 and found["ambiguous"] == 1
    assert found["examples"]["ambiguous"][0]["text"] == "TrEe"
    assert found["examples"]["ambiguous"][0]["occurrences"] == 3


def test_fuzzy_matches_in_two_places_for_one_string_are_ambiguous() -> None:
    found, _ = placed("The U.S. Senate met ; later the U.S. Senate voted .", [("US Senate", "ORG")])
    assert found["fuzzy"] == 1 and found["ambiguous"] == 1
    assert found["examples"]["ambiguous"][0]["how"] == "fuzzy"


def test_a_fuzzy_window_keeps_the_closing_bracket() -> None:
    text = "the Atlantic Meridional Overturning Circulation ( AMOC ) weakens ."
    found, spans = placed(text, [("Atlantic Meridional Overturning Circulation (AMOC)", "X")])
    assert where(found, "normalised") or where(found, "fuzzy")
    end = text.index(")") + 1
    assert spans == [(4, end, "X")]


def test_a_fuzzy_window_takes_its_opening_bracket_too() -> None:
    text = "levels of ( NO2 ) rose sharply"
    found, spans = placed(text, [("NO2) rose sharpl", "X")])
    assert found["fuzzy"] == 1
    assert spans == [(10, len(text), "X")]


def test_a_string_inside_a_longer_word_is_the_last_resort() -> None:
    text = "CO2 and O 2 levels"
    found, spans = placed(text, [("O2", "X")])
    assert found["exact"] == 0 and found.get("inside_word", 0) == 0
    assert spans == [(8, 11, "X")]
    found, spans = placed("CO2 levels", [("O2", "X")])
    assert found["inside_word"] == 1 and found["exact"] == 0
    assert spans == [(1, 3, "X")]


def test_steps_not_enabled_are_not_reported() -> None:
    found, _ = placed("Ann met Bob", [("Ann", "X")], StringPolicy(normalised=False, fuzzy=None))
    assert found["steps"] == ["exact", "inside_word"]
    found, _ = placed("Ann met Bob", [("Ann", "X")])
    assert found["steps"] == ["exact", "normalised", "fuzzy", "inside_word"]


WORDS = ("Obama", "Barack", "New", "York", "the", "White", "House", "U.S.", "Senate", "Paris", "Parisian", "a",
         "-", ",", ".", "Bob", "Bobby", "it's", "(ok)", "ab", "ba", "Ann", "ann", "ANN", "CO2", "O", "2")


@st.composite
def runs(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=20))
    text = " ".join(words)
    mentions = []
    for _ in range(draw(st.integers(0, 8))):
        if words and draw(st.booleans()):
            k = draw(st.integers(0, len(words) - 1))
            s = " ".join(words[k : k + draw(st.integers(1, 3))])
            s = draw(st.sampled_from((s, s.lower(), s.upper() + ".", s[1:] or s, s[:-1] + "x", s.replace(" ", ""))))
        else:
            s = draw(st.sampled_from(("Joe Biden", "Obamaa", "Whte House", "US Senate", "O2", "x")))
        mentions.append((s if s.strip() else "q", draw(st.sampled_from("AB"))))
    return text, mentions


def verbatim(text: str, s: str) -> int:
    """Whole-word occurrences of s in text, written out independently (ASCII text)."""
    count, at = 0, text.find(s)
    while at >= 0:
        b = at + len(s)
        left = at == 0 or not (text[at - 1].isalnum() and text[at].isalnum())
        right = b == len(text) or not (text[b - 1].isalnum() and text[b].isalnum())
        count += left and right
        at = text.find(s, at + 1)
    return count


POLICIES = (StringPolicy(), StringPolicy(fuzzy=None), StringPolicy(False, None), StringPolicy(fuzzy=0.5))


@settings(max_examples=300, deadline=None)
@given(run=runs(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 1000))
def test_placing_does_not_depend_on_the_order_of_the_strings(
    run: tuple[str, list[tuple[str, str]]], policy: StringPolicy, seed: int
) -> None:
    text, mentions = run
    shuffled = list(mentions)
    random.Random(seed).shuffle(shuffled)
    first, spans = placed(text, mentions, policy)
    second, spans_shuffled = placed(text, shuffled, policy)
    assert spans == spans_shuffled
    counts = ("exact", "normalised", "fuzzy", "inside_word", "not_found", "ambiguous")
    assert {k: first.get(k) for k in counts} == {k: second.get(k) for k in counts}


@settings(max_examples=300, deadline=None)
@given(run=runs(), policy=st.sampled_from(POLICIES))
def test_no_verbatim_string_is_lost_to_another(run: tuple[str, list[tuple[str, str]]], policy: StringPolicy) -> None:
    text, mentions = run
    found, spans = placed(text, mentions, policy)
    given_times: dict[str, int] = {}
    for s, _ in mentions:
        given_times[s] = given_times.get(s, 0) + 1
    # Each string takes as many of its whole-word verbatim occurrences as it is given, whatever else
    # is given: the exact step runs first, over every string, and distinct strings never share one.
    assert found["exact"] == sum(min(k, verbatim(text, s)) for s, k in given_times.items())
    assert len(set((a, b) for a, b, _ in spans)) == len(spans)  # no place taken twice
    assert found["exact"] + found.get("normalised", 0) + found.get("fuzzy", 0) + found["inside_word"] == len(spans)


def test_the_worked_example_of_the_samples(tmp_path: Path) -> None:
    """docs/formats.md's worked example, as `spanscore samples` writes it: every step and class."""
    write_samples(tmp_path / "s")
    data = spanscore.evaluate(reference=tmp_path / "s/llm/gold.jsonl", predicted=tmp_path / "s/llm/llm.jsonl",
                              format="jsonl", predicted_format="strings").to_dict()
    located = data["located"]
    assert {k: located[k] for k in ("exact", "normalised", "fuzzy", "inside_word", "not_found", "invalid",
                                    "ambiguous")} == {"exact": 6, "normalised": 4, "fuzzy": 1, "inside_word": 1,
                                                      "not_found": 1, "invalid": 1, "ambiguous": 1}
    assert located["classes"] == {"exact": 8, "wrong_type": 1, "boundary": 1, "unannotated": 1, "not_in_text": 1,
                                  "off_schema": 1, "invalid": 1}
    bag = located["position_free"]
    assert (bag["matched"], bag["predicted"], bag["reference"]) == (6, 14, 10)
    strict = data["semeval"]["strict"]
    assert (strict["correct"], strict["incorrect"], strict["missed"], strict["spurious"]) == (8, 2, 0, 4)
    amoc = [e for e in located["examples"]["normalised"] if "AMOC" in e["text"]]
    assert amoc[0]["found"] == "Atlantic Meridional Overturning Circulation ( AMOC )"
    assert "(off-schema)" in data["per_type"]
    exact = spanscore.evaluate(reference=tmp_path / "s/llm/gold.jsonl", predicted=tmp_path / "s/llm/llm.jsonl",
                               format="jsonl", predicted_format="strings",
                               strings=StringPolicy(normalised=False, fuzzy=None)).to_dict()
    assert (exact["semeval"]["strict"]["correct"], exact["semeval"]["strict"]["spurious"]) == (4, 8)
