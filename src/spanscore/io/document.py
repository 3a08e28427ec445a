"""The one document type: what spanscore's JSONL, every annotation tool's format and the located
strings are read into, and what the format writers take; and the tokens of a text, where it has
no tokens of its own."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

Span = tuple[int, int, str]
Fragments = tuple[tuple[int, int], ...]
Tokens = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Document:
    """One annotated document: character offsets into ``text``, end exclusive.

    ``fragments`` is empty when no mention is discontinuous; otherwise it has one entry per span:
    the pieces of a discontinuous mention (BRAT), None for a continuous one. ``line`` is where the
    document was read, for messages: its line in a JSONL file, 0 where the format has no lines
    (a BRAT folder, a JSON list). ``tokens`` are the format's own tokens, (start, end) sorted,
    where it has them (Prodigy's, a dataset's), else None (``text_tokens`` is then used). Neither
    takes part in equality, so that the same document read from two files compares equal.
    """

    id: str
    text: str
    spans: tuple[Span, ...]
    fragments: tuple[Fragments | None, ...] = ()
    line: int = field(default=0, compare=False)
    tokens: Tokens | None = field(default=None, compare=False, repr=False)
    levels: tuple[str, ...] = field(default=(), compare=False, repr=False)  # each span's, where read by level


# Scripts written without spaces between words: nothing in the text says where a word ends, so each
# character is a token of its own (no boundary can fall inside one). Inside a regex's [...].
UNSPACED = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u0f00-\u0fff"  # Tibetan
    "\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f"  # Myanmar
    "\u1780-\u17ff\u19e0-\u19ff"  # Khmer
    "\u1950-\u19df\u1a20-\u1aaf\uaa80-\uaadf"  # Tai Le, New Tai Lue, Tai Tham, Tai Viet
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"  # CJK radicals, marks
    "\u3040-\u30ff\u3100-\u312f\u31a0-\u31bf\u31f0-\u31ff"  # kana, Bopomofo
    "\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uf900-\ufaff\uff66-\uff9f"  # ideographs, Yi, half-width kana
    "\U0001b000-\U0001b16f\U00020000-\U0002fa1f\U00030000-\U0003134f"
)
_ASCII_TOKENS = re.compile(r"\w+|\S")
_ASCII_WORDS = re.compile(r"\w+")


@functools.cache
def mark_class() -> str:
    """The combining marks (Unicode category M) as the inside of a regular expression's [...]:
    what ``\\w`` leaves out, though a mark belongs to the character before it."""
    marks: list[list[int]] = []
    # Every mark is below U+20000 but the variation selectors of U+E0100..U+E01EF.
    for code in [*range(0x20000), *range(0xE0100, 0xE01F0)]:
        if unicodedata.category(chr(code))[0] == "M":
            if marks and marks[-1][1] == code - 1:
                marks[-1][1] = code
            else:
                marks.append([code, code])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in marks)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Token and word patterns for any text ("Cafe" + U+0301 is one word, as its composed form
    is), and the same for text without combining marks (shorter, so faster)."""
    m = mark_class()
    word = rf"(?:[^\W{UNSPACED}]|[{m}])+|[{UNSPACED}][{m}]*"
    plain = rf"[^\W{UNSPACED}]+|[{UNSPACED}]"
    return (
        re.compile(rf"{word}|\S[{m}]*"),
        re.compile(word),
        re.compile(rf"{plain}|\S"),
        re.compile(plain),
    )


def _pattern(text: str, word: bool) -> re.Pattern[str]:
    if text.isascii():
        return _ASCII_WORDS if word else _ASCII_TOKENS
    patterns = _patterns()
    # Distinct characters are few: a set of them is quicker to test than the text for marks.
    plain = not any(unicodedata.category(c)[0] == "M" for c in set(text) if not c.isascii())
    return patterns[(3 if plain else 1) if word else (2 if plain else 0)]


def text_tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of each token of ``text``: a run of letters, digits and their combining marks
    is one; every other character but white space (punctuation, symbols) is one alone, so that
    "Memphis," is "Memphis" and ","; and so is each character of a script written without spaces
    (Chinese, Japanese, Thai...), where the text says nothing of word boundaries."""
    return [m.span() for m in _pattern(text, word=False).finditer(text)]


def text_words(text: str) -> list[tuple[int, int]]:
    """The tokens of ``text`` that are words (``text_tokens`` without punctuation and symbols)."""
    return [m.span() for m in _pattern(text, word=True).finditer(text)]


__all__ = ["UNSPACED", "Document", "Fragments", "Span", "Tokens", "mark_class", "text_tokens", "text_words"]
