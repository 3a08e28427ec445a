"""Token features for the CRF: the classic word, shape, affix and context recipe, plus Twitter cues.

The recipe follows the sklearn-crfsuite CoNLL example (lower-cased word, suffixes, case flags and
the same for the neighbours), without part-of-speech tags, which tweets do not come with. Twitter
cues: the lone ``@`` that BTC tokenises off a username (and the token after it), ``@user`` and
``#tag`` tokens with the body split off, URLs, ``RT`` and emoji-like symbols.

Changing what a feature is called or computes changes what a saved model means, so the set has a
name (``FEATURE_SET``) stored in every model file and checked when the model is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FEATURE_SET = "twitter-v1"

Features = dict[str, str | float | bool]

_URL = re.compile(r"^(https?://|www\.)|\.(com|org|net|co|ly|uk|de)(/|$)", re.IGNORECASE)
_REPEAT = re.compile(r"(.)\1+")


def word_shape(word: str) -> str:
    """``Xxxxx`` for ``Paris``; other characters stay, non-ASCII letters become ``u``/``U``."""
    out = []
    for ch in word[:16]:
        if ch.isupper():
            out.append("X")
        elif ch.islower():
            out.append("x")
        elif ch.isdigit():
            out.append("d")
        elif ch.isalpha():
            out.append("a")
        else:
            out.append(ch)
    return "".join(out)


def short_shape(word: str) -> str:
    """The shape with runs collapsed: ``Xx`` for ``Paris``, ``@x`` for ``@paris``."""
    return _REPEAT.sub(r"\1", word_shape(word))


def _flags(word: str) -> Features:
    lower = word.lower()
    return {
        "lower": lower,
        "istitle": word.istitle(),
        "isupper": word.isupper(),
        "shape": short_shape(word),
        "is_at": word == "@",
        "is_mention": len(word) > 1 and word[0] == "@",
        "is_hashtag": len(word) > 1 and word[0] == "#",
    }


def token_features(tokens: Sequence[str], i: int) -> Features:
    """Features of token ``i`` of a sentence."""
    word = tokens[i]
    lower = word.lower()
    body = word[1:] if len(word) > 1 and word[0] in "@#" else word
    f: Features = {
        "bias": 1.0,
        "w": lower,
        "body": body.lower(),
        "p2": lower[:2],
        "p3": lower[:3],
        "s2": lower[-2:],
        "s3": lower[-3:],
        "s4": lower[-4:],
        "shape": word_shape(word),
        "short_shape": short_shape(word),
        "istitle": word.istitle(),
        "isupper": word.isupper(),
        "isdigit": word.isdigit(),
        "body_title": body[:1].isupper(),
        "has_digit": any(c.isdigit() for c in word),
        "has_hyphen": "-" in word,
        "len": str(min(len(word), 8)),
        "is_at": word == "@",
        "is_mention": len(word) > 1 and word[0] == "@",
        "is_hashtag": len(word) > 1 and word[0] == "#",
        "is_hash": word == "#",
        "is_url": bool(_URL.search(word)),
        "is_rt": word == "RT",
        "non_ascii": any(ord(c) > 127 for c in word),
    }
    for offset in (-2, -1, 1, 2):
        j = i + offset
        key = f"{offset:+d}"
        if 0 <= j < len(tokens):
            if abs(offset) == 1:
                for name, value in _flags(tokens[j]).items():
                    f[f"{key}:{name}"] = value
            else:
                f[f"{key}:lower"] = tokens[j].lower()
        elif abs(offset) == 1:
            f["BOS" if offset < 0 else "EOS"] = True
    if i > 0:
        f["-1|0:lower"] = f"{tokens[i - 1].lower()}|{lower}"
    if i + 1 < len(tokens):
        f["0|+1:lower"] = f"{lower}|{tokens[i + 1].lower()}"
    return f


def sentence_features(tokens: Sequence[str]) -> list[Features]:
    return [token_features(tokens, i) for i in range(len(tokens))]
