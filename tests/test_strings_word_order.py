"""The fuzzy step forgives characters (typos, spelling, tokenisation, a word more or fewer), not
word order: a model that reorders a mention's words did not return the text's mention, so its
string is not placed on the words it shares with the text, nor on the part of them in order."""

from __future__ import annotations

import difflib

import pytest

from spanscore.io.document import Document
from spanscore.io.strings import Located, StringDoc, StringPolicy, _Finder, _needle, locate

SWAPPED = [
    # (string, text): each string has a window at least 0.85 like it by ratio alone.
    ("International Business Machines Corporation of New York",
     "International Business Machines Corporation of York New said so ."),
    ("Council City of London", "The City Council of London met ."),
    ("Meridional Atlantic Overturning Circulation", "The Atlantic Meridional Overturning Circulation weakens ."),
    ("National Health Service England", "England National Health Service said so ."),
]
KEPT = [
    # Differences of characters, a word fewer or more: still placed.
    ("US Senate", "The U.S. Senate will vote .", "U.S. Senate"),
    ("Barak Obama", "Yesterday Barack Obama spoke .", "Barack Obama"),
    ("Atlantic Meridional Overturning Circulation (AMOC)",
     "The Atlantic Meridional Overturning Circulation ( AMOC ) weakens .",
     "Atlantic Meridional Overturning Circulation ( AMOC )"),
    ("Bank of Amercia", "He went to the Bank of America .", "Bank of America"),
    ("the Federal Reserve Bank of New York", "Federal Reserve Bank of New York said",
     "Federal Reserve Bank of New York"),
]


def best_ratio(s: str, text: str) -> float:
    """The best difflib ratio of ``s`` against any run of the text's words: what the fuzzy step
    placed on before word order counted."""
    words = text.split()
    target = _needle(s)
    return max(
        difflib.SequenceMatcher(None, target, _needle(" ".join(words[i:j])), autojunk=False).ratio()
        for i in range(len(words)) for j in range(i + 1, len(words) + 1)
    )


def placed(s: str, text: str) -> tuple[str, str | None]:
    located = Located(StringPolicy())
    _, pred = locate([Document("d", text, ())], [StringDoc("d", [(s, "X")], None, 1)], StringPolicy(), located)
    spans = [(a, b) for a, b, _ in pred[0].spans if b <= len(text)]
    how = next((h for h in ("exact", "normalised", "fuzzy", "inside_word", "not_found") if located.counts[h]), "")
    return how, (text[spans[0][0] : spans[0][1]] if spans else None)


@pytest.mark.parametrize(("s", "text"), SWAPPED)
def test_reordered_words_are_not_found(s: str, text: str) -> None:
    assert best_ratio(s, text) >= 0.85  # similar enough by characters alone
    assert _Finder(text).fuzzy(s, 0.85) == []
    assert placed(s, text) == ("not_found", None)


@pytest.mark.parametrize(("s", "text", "found"), KEPT)
def test_differences_of_characters_are_still_forgiven(s: str, text: str, found: str) -> None:
    how, where = placed(s, text)
    assert how in ("normalised", "fuzzy")
    assert where == found


def test_words_in_order_around_a_repeated_word() -> None:
    # The string's words shared with the window and its neighbours pair in order: "of" twice.
    assert placed("Bank of Amercia", "the Bank of Bank of America .") == ("fuzzy", "Bank of America")
