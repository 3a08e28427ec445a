"""Mentions given as strings, as generative models return them: each located in its document.

A line of ``--format strings`` is ``{"id": ..., "mentions": [{"text": ..., "label": ...}]}``
(``"text"`` may repeat the document; then it must be the reference's text). Each mention is
looked for in the reference document's text, in this order, as ``StringPolicy`` allows:

1. **exact**: the string itself, at word boundaries first (``Paris`` is not found inside
   ``Parisian`` while a whole-word ``Paris`` exists), then anywhere;
2. **normalised**: ignoring case, runs of whitespace, and punctuation at the string's edges
   (``"the  white house."`` finds ``The White House``);
3. **fuzzy**: the window of the text's words most similar to the string (``difflib`` ratio on the
   normalised forms), if at least ``threshold`` (``"Barack H. Obama"`` finds ``Barack Obama``).

A string given k times is assigned to k of its occurrences in text order, each occurrence used
once, occurrences inside a mention already placed last; where the text has more occurrences than
mentions, which one was meant is unknown, and each such mention is counted ``ambiguous``. A string found nowhere is not
dropped: it is appended to both documents' texts after a marker line (``NOT_FOUND``), and the
prediction points there, so every criterion counts it as spurious and every report shows its
text as what it is. The reference gains no mention there, only characters.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, OptionError
from .document import Document
from .jsonl import check_unicode, json_objects

NOT_FOUND = "\n[predicted, not found in the text] "  # what precedes each unfound string
HOW = ("exact", "normalised", "fuzzy", "not_found")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class StringPolicy:
    """How far a string may differ from the text it is found at; recorded in the signature."""

    normalised: bool = True
    fuzzy: float | None = 0.85  # least similarity of a fuzzy match, or None for no fuzzy matching

    def __post_init__(self) -> None:
        if self.fuzzy is not None and (
            isinstance(self.fuzzy, bool) or not isinstance(self.fuzzy, float | int) or not 0 < self.fuzzy <= 1
        ):
            raise OptionError(f"the fuzzy threshold is a number in (0, 1], or none, not {self.fuzzy!r}")

    def signature(self) -> str:
        steps = ["exact"] + (["normalised"] if self.normalised else [])
        if self.fuzzy is not None:
            steps.append(f"fuzzy{self.fuzzy:g}")
        return "strings:" + "+".join(steps)


@dataclass
class StringDoc:
    id: str
    mentions: list[tuple[str, str]]
    text: str | None
    line: int


@dataclass
class Located:
    """Where each string of a run was found: counts by how, ambiguity, and examples."""

    policy: StringPolicy
    counts: dict[str, int] = field(default_factory=lambda: {h: 0 for h in HOW})
    ambiguous: int = 0
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {h: [] for h in HOW})
    limit: int = 5

    def add(self, how: str, record: dict[str, Any]) -> None:
        self.counts[how] += 1
        if len(self.examples[how]) < self.limit:
            self.examples[how].append(record)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.signature(),
            **self.counts,
            "ambiguous": self.ambiguous,
            "examples": {h: v for h, v in self.examples.items() if v},
        }


def read_strings(path: str) -> Iterator[StringDoc]:
    """The documents of a strings file; every problem names the file and line."""
    seen: set[str] = set()
    for line, obj in json_objects(path):

        def fail(what: str, line: int = line) -> InputError:
            return InputError(what, path=path, line=line)

        doc_id = obj.get("id")
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail('each line needs an "id" (a string or an integer) naming its reference document')
        key = str(doc_id)
        if key in seen:
            raise fail(f"id {key!r} is given twice: give each document's mentions on one line")
        seen.add(key)
        raw = obj.get("mentions")
        if not isinstance(raw, list):
            raise fail('"mentions" must be a list of {"text", "label"} objects')
        mentions = []
        for k, m in enumerate(raw):
            if not isinstance(m, dict) or not isinstance(m.get("text"), str) or not isinstance(m.get("label"), str):
                raise fail(f'mention {k} must be an object with a string "text" and a string "label"')
            if not m["text"].strip() or not m["label"]:
                raise fail(f"mention {k}: text and label must not be empty")
            check_unicode(m["text"], f"mention {k}: text", fail)
            mentions.append((m["text"], m["label"]))
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise fail('"text", where given, must be the document\'s text')
        yield StringDoc(key, mentions, text, line)


def _normal_form(text: str) -> tuple[str, list[int]]:
    """Case-folded text with whitespace runs as one space, and for each of its characters the index
    in ``text`` it came from."""
    out: list[str] = []
    where: list[int] = []
    previous_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not previous_space and out:
                out.append(" ")
                where.append(i)
            previous_space = True
            continue
        previous_space = False
        for c in unicodedata.normalize("NFKC", ch).casefold():
            out.append(c)
            where.append(i)
    return "".join(out), where


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)
    while start < end and (unicodedata.category(text[start])[0] in "PS" or text[start].isspace()):
        start += 1
    while end > start and (unicodedata.category(text[end - 1])[0] in "PS" or text[end - 1].isspace()):
        end -= 1
    return text[start:end]


def _occurrences(text: str, needle: str) -> list[int]:
    out, start = [], text.find(needle)
    while start >= 0:
        out.append(start)
        start = text.find(needle, start + 1)
    return out


def _at_boundaries(text: str, start: int, end: int) -> bool:
    left = start == 0 or not (text[start - 1].isalnum() and text[start].isalnum())
    right = end == len(text) or not (text[end - 1].isalnum() and text[end].isalnum())
    return left and right


class _Finder:
    """The candidate places of strings in one document's text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.normal, self.where = _normal_form(text)
        self.words = [(m.start(), m.end()) for m in _WORD.finditer(text)]

    def exact(self, s: str) -> list[tuple[int, int]]:
        starts = _occurrences(self.text, s)
        spans = [(a, a + len(s)) for a in starts]
        whole = [sp for sp in spans if _at_boundaries(self.text, *sp)]
        return whole + [sp for sp in spans if sp not in whole]

    def normalised(self, s: str) -> list[tuple[int, int]]:
        needle, _ = _normal_form(_strip_edges(s))
        if not needle:
            return []
        spans = []
        for a in _occurrences(self.normal, needle):
            b = a + len(needle)
            spans.append((self.where[a], self.where[b - 1] + 1))
        whole = [sp for sp in spans if _at_boundaries(self.text, *sp)]
        return whole + [sp for sp in spans if sp not in whole]

    def fuzzy(self, s: str, threshold: float) -> tuple[tuple[int, int], float] | None:
        target, _ = _normal_form(_strip_edges(s))
        n = max(1, len(_WORD.findall(s)))
        best: tuple[float, int, int] | None = None
        for size in (n - 1, n, n + 1):
            if size < 1:
                continue
            for i in range(len(self.words) - size + 1):
                a, b = self.words[i][0], self.words[i + size - 1][1]
                window, _ = _normal_form(self.text[a:b])
                ratio = difflib.SequenceMatcher(None, target, window, autojunk=False).ratio()
                if best is None or ratio > best[0]:
                    best = (ratio, a, b)
        if best is None or best[0] < threshold:
            return None
        return (best[1], best[2]), best[0]


def locate(
    reference: Sequence[Document],
    strings: Iterable[StringDoc],
    policy: StringPolicy,
    located: Located,
    path: str | None = None,
) -> tuple[list[Document], list[Document]]:
    """The reference documents (extended where strings were not found) and the predicted documents
    with every string located; ``located`` receives the counts and examples. Documents of the
    reference without a strings line have no predicted mention; a strings line without a reference
    document is an error."""
    by_id = {doc.id: doc for doc in reference}
    given: dict[str, StringDoc] = {}
    for sdoc in strings:
        if sdoc.id not in by_id:
            raise InputError(f"id {sdoc.id!r} is not a document of the reference", path=path, line=sdoc.line)
        ref = by_id[sdoc.id]
        if sdoc.text is not None and sdoc.text != ref.text:
            raise InputError(
                f'document {sdoc.id!r}: its "text" differs from the reference\'s; repeat the text exactly, or leave it'
                " out",
                path=path,
                line=sdoc.line,
            )
        given[sdoc.id] = sdoc
    out_ref, out_pred = [], []
    for ref in reference:
        mine = given.get(ref.id)
        if mine is None:
            out_ref.append(ref)
            out_pred.append(Document(ref.id, ref.text, (), line=ref.line))
            continue
        sdoc = mine
        finder = _Finder(ref.text)
        used: set[tuple[int, int]] = set()
        spans: list[tuple[int, int, str]] = []
        missing: list[tuple[str, str]] = []
        given_times: dict[str, int] = {}
        for s, label in sdoc.mentions:
            how, span, score = _find(finder, s, policy, used)
            record: dict[str, Any] = {"id": ref.id, "text": s, "label": label}
            if span is None:
                missing.append((s, label))
                located.add("not_found", record)
                continue
            used.add(span)
            if how == "exact":
                given_times[s] = given_times.get(s, 0) + 1
            spans.append((span[0], span[1], label))
            record.update(found=ref.text[span[0] : span[1]], start=span[0], end=span[1])
            if how == "fuzzy":
                record["similarity"] = round(score, 4)
            located.add(how, record)
        for s, times in given_times.items():
            places = finder.exact(s)
            whole = [sp for sp in places if _at_boundaries(ref.text, *sp)]
            if len(whole or places) > times:  # a match inside a longer word is no rival to a whole word
                located.ambiguous += times  # more occurrences than mentions: which ones were meant is unknown
        text = ref.text
        for s, label in missing:
            text += NOT_FOUND
            spans.append((len(text), len(text) + len(s), label))
            text += s
        out_ref.append(Document(ref.id, text, ref.spans, line=ref.line))
        out_pred.append(Document(ref.id, text, tuple(sorted(spans)), line=sdoc.line))
    return out_ref, out_pred


def _free_first(spans: list[tuple[int, int]], used: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """Unused places, those overlapping no place already given first ("Obama" after "Barack Obama"
    is the later, free occurrence, not the one inside the first mention)."""
    free = [sp for sp in spans if sp not in used]
    clear = [sp for sp in free if not any(a < sp[1] and sp[0] < b for a, b in used)]
    return clear + [sp for sp in free if sp not in clear]


def _find(
    finder: _Finder, s: str, policy: StringPolicy, used: set[tuple[int, int]]
) -> tuple[str, tuple[int, int] | None, float]:
    for span in _free_first(finder.exact(s), used):
        return "exact", span, 1.0
    if policy.normalised:
        for span in _free_first(finder.normalised(s), used):
            return "normalised", span, 1.0
    if policy.fuzzy is not None:
        found = finder.fuzzy(s, policy.fuzzy)
        if found is not None and found[0] not in used:
            return "fuzzy", found[0], found[1]
    return "not_found", None, 0.0
