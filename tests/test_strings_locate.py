"""Locating mentions given as strings from an index of each text: the same places as looking each
string up by scanning the text (checked against a scan written out here), in time that does not
grow with the product of the text and the strings, and with both sides in one normal form."""

from __future__ import annotations

import difflib
import functools
import json
import re
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.errors import InputError
from spanscore.io.document import Document, text_tokens
from spanscore.io.strings import Located, StringDoc, StringPolicy, _inside, locate

# A scan per string, as the locator did before it indexed the texts (ASCII text: the normal form
# is lower case with runs of white space as one space).


def scan_normal(text: str) -> tuple[str, list[int]]:
    out, where, space = [], [], False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        out.append(ch.lower())
        where.append(i)
    return "".join(out), where


def strip_edges(s: str) -> str:
    return s.strip("".join(chr(c) for c in range(128) if not chr(c).isalnum()))


def occurrences(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while needle and at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def whole(text: str, a: int, b: int) -> bool:
    left = a == 0 or not (text[a - 1].isalnum() and text[a].isalnum())
    right = b == len(text) or not (text[b - 1].isalnum() and text[b].isalnum())
    return left and right


def ordered(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [sp for sp in spans if whole(text, *sp)] + [sp for sp in spans if not whole(text, *sp)]


def balanced(text: str, a: int, b: int) -> tuple[int, int]:
    """Round brackets and straight quotes a window leaves open (or closes without opening), taken
    in where they stand next to it (the texts here have no other brackets)."""
    depth, unopened = 0, 0
    for ch in text[a:b]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth:
                depth -= 1
            else:
                unopened += 1
    for _ in range(depth):
        if not text[b:].lstrip().startswith(")"):
            break
        b += len(text[b:]) - len(text[b:].lstrip()) + 1
    for _ in range(unopened):
        if not text[:a].rstrip().endswith("("):
            break
        a = len(text[:a].rstrip()) - 1
    if text.count('"', a, b) % 2:
        if text[b:].lstrip().startswith('"'):
            b += len(text[b:]) - len(text[b:].lstrip()) + 1
        elif text[:a].rstrip().endswith('"'):
            a = len(text[:a].rstrip()) - 1
    return a, b


def take(spans: list[tuple[int, int]], used: set[tuple[int, int]]) -> tuple[int, int] | None:
    free = [sp for sp in spans if sp not in used]
    clear = [sp for sp in free if not any(a < sp[1] and sp[0] < b for a, b in used)]
    return (clear + free)[0] if free else None


def scan_locate(text: str, mentions: list[str], policy: StringPolicy) -> list[tuple[str, tuple[int, int] | None]]:
    """The assignment of io.strings written with scans: step by step over every string not yet
    placed, keys longest first, a key given k times taking k free places."""
    normal, where = scan_normal(text)
    spaceless = [(ch, w) for ch, w in zip(normal, where, strict=True) if ch != " "]
    bare, bare_where = "".join(ch for ch, _ in spaceless), [w for _, w in spaceless]
    words = [m.span() for m in re.finditer(r"\w+", text)]
    used: set[tuple[int, int]] = set()
    out: list[tuple[str, tuple[int, int] | None]] = [("not_found", None)] * len(mentions)

    def normalised(needle: str, haystack: str, at: list[int]) -> list[tuple[int, int]]:
        return [balanced(text, at[a], at[a + len(needle) - 1] + 1) for a in occurrences(haystack, needle)]

    def step(how: str, key_of: Any, places_of: Any) -> None:
        groups: dict[str, list[int]] = {}
        for i, s in enumerate(mentions):
            if out[i][1] is None and key_of(s):
                groups.setdefault(key_of(s), []).append(i)
        for key in sorted(groups, key=lambda k: (-len(k), k)):
            places = places_of(key)
            got = []
            for _ in groups[key]:
                span = take(places, used)
                if span is None:
                    break
                used.add(span)
                got.append(span)
            for i, span in zip(groups[key], sorted(got), strict=False):
                out[i] = (how, span)

    needle = lambda s: scan_normal(strip_edges(s))[0]  # noqa: E731
    step("exact", str, lambda s: [sp for sp in [(a, a + len(s)) for a in occurrences(text, s)] if whole(text, *sp)])
    if policy.normalised:
        step("normalised", needle, lambda n: [sp for sp in normalised(n, normal, where) if whole(text, *sp)])
        step("normalised", lambda s: needle(s).replace(" ", ""),
             lambda n: [sp for sp in normalised(n, bare, bare_where) if whole(text, *sp)])
    if policy.fuzzy is not None:
        pending = [i for i, (_, span) in enumerate(out) if span is None]
        windows = {}
        for s in {mentions[i] for i in pending}:
            target = needle(s)
            n = max(1, len(re.findall(r"\w+", s)))
            found = []
            for size in (n - 1, n, n + 1):
                for i in range(len(words) - size + 1) if size >= 1 and target else ():
                    a, b = words[i][0], words[i + size - 1][1]
                    ratio = difflib.SequenceMatcher(None, target, scan_normal(text[a:b])[0], autojunk=False).ratio()
                    if ratio >= policy.fuzzy and in_order(target, text, words, i, size):
                        found.append((ratio, balanced(text, a, b)))
            found.sort(key=lambda f: -f[0])
            windows[s] = list(dict.fromkeys(span for _, span in found))
        for i in sorted(pending, key=lambda i: (-fuzzy_best(text, mentions[i], policy), mentions[i])):
            free = [sp for sp in windows[mentions[i]] if sp not in used]
            if free:
                clear = [sp for sp in free if not any(a < sp[1] and sp[0] < b for a, b in used)]
                span = (clear or free)[0]
                used.add(span)
                out[i] = ("fuzzy", span)
    step("inside_word", str,
         lambda s: [sp for sp in [(a, a + len(s)) for a in occurrences(text, s)] if not whole(text, *sp)])
    if policy.normalised:
        step("inside_word", needle, lambda n: [sp for sp in normalised(n, normal, where) if not whole(text, *sp)])
    return out


def in_order(target: str, text: str, words: list[tuple[int, int]], i: int, size: int) -> bool:
    """Whether the words ``target`` shares with the window of ``size`` words from word ``i``, and
    a word either side, can all be paired in order (no pairing crosses another)."""
    a = re.findall(r"\w+", target)
    b = re.findall(r"\w+", scan_normal(text[words[max(i - 1, 0)][0] : words[min(i + size, len(words) - 1)][1]])[0])
    shared = sum((Counter(a) & Counter(b)).values())

    @functools.cache
    def paired(x: int, y: int) -> int:  # the most pairs of equal words of a[x:] and b[y:], in order
        if x == len(a) or y == len(b):
            return 0
        return max(paired(x + 1, y), paired(x, y + 1), paired(x + 1, y + 1) + 1 if a[x] == b[y] else 0)

    return paired(0, 0) == shared


def fuzzy_best(text: str, s: str, policy: StringPolicy) -> float:
    """The best similarity of a window to s, if at least the threshold; else 0."""
    assert policy.fuzzy is not None
    target = scan_normal(strip_edges(s))[0]
    words = [m.span() for m in re.finditer(r"\w+", text)]
    n = max(1, len(re.findall(r"\w+", s)))
    ratios = [
        difflib.SequenceMatcher(None, target, scan_normal(text[words[i][0] : words[i + size - 1][1]])[0],
                                autojunk=False).ratio()
        for size in (n - 1, n, n + 1) if size >= 1 and target for i in range(len(words) - size + 1)
        if in_order(target, text, words, i, size)
    ]
    best = max(ratios, default=0.0)
    return best if best >= policy.fuzzy else 0.0


WORDS = ("Obama", "Barack", "New", "York", "the", "White", "House", "U.S.", "Senate", "Paris", "Parisian", "a", "-",
         ",", ".", "Bob", "Bobby", "it's", "(ok)", "ab", "ba", "Ann", "ann", "ANN")


@st.composite
def runs(draw: st.DrawFn) -> tuple[str, list[str]]:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=25))
    text = " ".join(words) + draw(st.sampled_from(("", ".", "  ", "\n")))
    mentions = []
    for _ in range(draw(st.integers(0, 8))):
        if words and draw(st.booleans()):
            k = draw(st.integers(0, len(words) - 1))
            s = " ".join(words[k : k + draw(st.integers(1, 3))])
            s = draw(st.sampled_from((s, s.lower(), s.upper() + ".", s.replace(" ", "  "), s[1:] or s, s[:-1] + "x",
                                      " ".join(reversed(s.split())))))
        else:
            s = draw(st.sampled_from(("Joe Biden", "Obamaa", "Whte House", "US Senate", "x")))
        mentions.append(s if s.strip() else "q")
    if mentions and draw(st.booleans()):
        mentions = mentions * draw(st.integers(2, 3))
    return text, mentions


@settings(max_examples=300, deadline=None)
@given(run=runs(), policy=st.sampled_from((StringPolicy(), StringPolicy(fuzzy=None), StringPolicy(False, None),
                                           StringPolicy(fuzzy=0.6), StringPolicy(fuzzy=0.3))))
def test_the_index_places_every_string_where_a_scan_does(run: tuple[str, list[str]], policy: StringPolicy) -> None:
    text, mentions = run
    expected = scan_locate(text, mentions, policy)
    located = Located(policy)
    _, predicted = locate([Document("d", text, ())], [StringDoc("d", [(m, "X") for m in mentions], None, 1)],
                          policy, located)
    found = sorted(span for _, span in expected if span is not None)
    assert sorted((s, e) for s, e, _ in predicted[0].spans if e <= len(text)) == found
    # A string found nowhere and longer than the text is an invalid prediction, not a hallucination.
    def longer(m: str) -> bool:
        return len(m) > len(text) and len(scan_normal(strip_edges(m))[0]) > len(scan_normal(text)[0])

    expected = [("invalid" if h == "not_found" and longer(m) else h, span)
                for m, (h, span) in zip(mentions, expected, strict=True)]
    counts = {how: sum(1 for h, _ in expected if h == how) for how in ("exact", "normalised", "fuzzy", "inside_word",
                                                                       "not_found", "invalid")}
    assert {k: located.counts[k] for k in counts} == counts


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ9_ é\u0301\u0308東京タ서울 ,.!-\t\n😀ｱﾞ\u0e01\u0e34ß\u3000", max_size=14))
def test_the_whole_word_check_agrees_with_the_tokens(text: str) -> None:
    inside = {x for a, b in text_tokens(text) for x in range(a + 1, b)}
    assert [_inside(text, x) for x in range(len(text) + 1)] == [x in inside for x in range(len(text) + 1)]


DEFAULT = StringPolicy()


def run_strings(text: str, mentions: list[tuple[str, str]], policy: StringPolicy = DEFAULT) -> dict[str, Any]:
    located = Located(policy)
    locate([Document("d", text, ())], [StringDoc("d", mentions, None, 1)], policy, located)
    return located.to_dict()


def test_a_name_given_1200_times_is_placed_in_one_pass() -> None:
    text = " ".join(["Obama met the press ."] * 1200)
    began = time.perf_counter()
    found = run_strings(text, [("Obama", "PER")] * 1200)
    assert found["exact"] == 1200 and found["ambiguous"] == 0
    assert time.perf_counter() - began < 5  # a scan per string took over a minute


def test_strings_found_nowhere_compare_few_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    words = ("the", "of", "and", "a", "report", "said", "on", "Monday", "that", "it", "would", "Sanders", "Bidenn")
    text = " ".join(words[k % len(words)] for k in range(400))
    compared = []
    real = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        compared.append(1)
        return real(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    began = time.perf_counter()
    found = run_strings(text, [(f"Someone Nobody{k}", "PER") for k in range(2000)] + [("Joe Biden", "PER")])
    assert found["not_found"] == 2001
    # A scan compared every window of 1 to 3 words with every string: 2001 x 1197.
    assert len(compared) < 2001
    assert time.perf_counter() - began < 5


@pytest.mark.parametrize(
    ("text", "given", "how"),
    [
        ("José Müller", unicodedata.normalize("NFD", "José Müller"), "normalised"),
        (unicodedata.normalize("NFD", "José Müller"), "José Müller", "normalised"),
        ("José Müller", "JOSÉ MÜLLER", "normalised"),
        ("the ﬁnance team", "finance", "normalised"),
        ("ＡＢＣ Corp", "ABC Corp", "normalised"),
        ("Straße", "STRASSE", "normalised"),
        (unicodedata.normalize("NFD", "서울"), "서울", "normalised"),
        ("東京タワーは高い", "東京タワー", "exact"),
    ],
)
def test_normal_forms_meet(text: str, given: str, how: str) -> None:
    found = run_strings(text, [(given, "X")], StringPolicy(normalised=True, fuzzy=None))
    assert found[how] == 1, found
    if how == "normalised":
        assert run_strings(text, [(given, "X")], StringPolicy(normalised=False, fuzzy=None))["not_found"] == 1


def test_a_normalised_match_covers_whole_characters() -> None:
    text = unicodedata.normalize("NFD", "Café Zoë")
    found = run_strings(text, [("zoë", "X")], StringPolicy(normalised=True, fuzzy=None))
    example = found["examples"]["normalised"][0]
    assert (example["start"], example["end"]) == (text.index("Zoe"), len(text))  # the mark included


def test_an_empty_strings_file_is_refused(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "a", "text": "Ann", "spans": []}) + "\n", encoding="utf-8")
    for content in ("", "\n\n"):
        (tmp_path / "llm.jsonl").write_text(content, encoding="utf-8")
        with pytest.raises(InputError, match=r"llm\.jsonl: file is empty"):
            spanscore.evaluate(reference=gold, predicted=tmp_path / "llm.jsonl", format="jsonl",
                               predicted_format="strings")
    (tmp_path / "llm.jsonl").write_text(json.dumps({"id": "a", "mentions": []}) + "\n", encoding="utf-8")
    report = spanscore.evaluate(reference=gold, predicted=tmp_path / "llm.jsonl", format="jsonl",
                                predicted_format="strings")
    assert report.metrics["strict"]["predicted"] == 0  # a model that found nothing says so
