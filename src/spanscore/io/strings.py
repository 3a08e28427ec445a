"""Mentions given as strings, as generative models return them: each located in its document.

A line of ``--format strings`` is ``{"id": ..., "mentions": [{"text": ..., "label": ...}]}``
(``"text"`` may repeat the document; then it must be the reference's text). The strings of a
document are placed as one assignment, in steps, each over every string not yet placed, as
``StringPolicy`` allows:

1. **exact**: the string itself, at word boundaries;
2. **normalised**: both the string and the text in one normal form: Unicode compatibility
   composition (NFKC, so that NFC and NFD text compare equal), case folding, runs of white space as
   one space, and no punctuation at the string's edges (``"the  white house."`` finds ``The White
   House``); where that finds nothing, white space ignored (``O2`` finds the tokenised ``O 2``);
3. **fuzzy**: windows of the text's words similar to the string (``difflib`` ratio on the
   normalised forms) at least ``threshold`` (``"Barack H. Obama"`` finds ``Barack Obama``), the
   most similar first, widened to keep their brackets and quotes balanced;
4. **inside_word**: the string, as is or normalised, inside a longer word (``O2`` in ``CO2``): a
   last resort, counted apart.

Within a step, strings are taken longest first (then by string and label, never by the order
given), and a string given k times takes k of its occurrences: at the exact and normalised steps
no two distinct strings share an occurrence, so each takes as many as it has (text order, an
occurrence inside a mention already placed after the free ones); at the fuzzy step each takes the
most similar window still free. Where a step has more free occurrences (disjoint windows, for the
fuzzy step) than a string was given, which were meant is unknown, and each such mention is
counted ``ambiguous``. A string found nowhere is not dropped: it is appended to both documents'
texts after a marker line (``NOT_FOUND``), and the prediction points there, so every criterion
counts it as spurious and every report shows its text as what it is. The reference gains no
mention there, only characters. An entry that is no mention (``why_invalid``, or a string
longer than its document) is kept the same way, after ``INVALID``: an invalid prediction, counted
apart, unless ``StringPolicy.invalid`` is ``"error"``.

Each document's text is indexed once (where each pair of adjacent characters occurs, in its own
and its normal form), so that locating takes time in proportion to the text and the strings, not
their product: a string is looked up from its rarest pair, a string given many times walks its
occurrences once, and the fuzzy step compares only the windows that share enough of the string's
pairs to reach the threshold.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OptionError
from ..stages.thresholds import sweep
from .document import UNSPACED as _UNSPACED
from .document import Document, mark_class, text_words
from .jsonl import check_unicode, json_objects

NOT_FOUND = "\n[predicted, not found in the text] "  # what precedes each unfound string
INVALID = "\n[predicted, invalid output] "  # what precedes each invalid entry
INVALID_LABEL = "INVALID"  # the type of an invalid entry that gives no usable label
OFF_SCHEMA = "(off-schema)"  # the one type of every predicted type the reference never uses
# "given": placed where the file says (a tool's own offsets: LangExtract's char_interval, GLiNER's spans).
HOW = ("given", "exact", "normalised", "fuzzy", "inside_word", "not_found", "invalid")


@dataclass(frozen=True)
class StringPolicy:
    """How far a string may differ from the text it is found at; recorded in the signature."""

    normalised: bool = True
    fuzzy: float | None = 0.85  # least similarity of a fuzzy match, or None for no fuzzy matching
    # An invalid entry (empty text or label, not an object of strings, longer than its document):
    # "keep" it as a spurious prediction, counted and shown, or refuse the file ("error"). Not in
    # the signature: a run that "error" lets through has none, and scores alike either way.
    invalid: str = "keep"

    def __post_init__(self) -> None:
        if self.invalid not in ("keep", "error"):
            raise OptionError(f'invalid entries are either "keep" or "error", not {self.invalid!r}')
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
    invalid: list[tuple[str, str, str]] = field(default_factory=list)  # what was given, its label, why invalid
    # Mentions the file places itself: start, end, label, and the text it says is there (or None).
    placed: list[tuple[int, int, str, str | None]] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)  # a tool's own account of its placing, counted
    scores: dict[int, float] = field(default_factory=dict)  # the score of a placed mention, by its index in placed


@dataclass(frozen=True, eq=False)
class DocumentClasses:
    """How many predicted mentions of each class (``CLASSES``, the columns) each reference
    document (``ids``, the rows) holds."""

    ids: tuple[str, ...]
    counts: npt.NDArray[np.int64]


@dataclass
class Located:
    """Where each string of a run was found: counts by how, ambiguity, and examples."""

    policy: StringPolicy
    counts: dict[str, int] = field(default_factory=lambda: {h: 0 for h in HOW})
    ambiguous: int = 0
    statuses: dict[str, int] = field(default_factory=dict)  # ``StringDoc.statuses``, summed
    # The position-free criterion: each document's multiset of (normal form, type) pairs of the
    # strings given against the reference's; how many pairs match, are given, are in the reference.
    bag: dict[str, int] = field(default_factory=lambda: {"matched": 0, "predicted": 0, "reference": 0})
    classes: dict[str, int] = field(default_factory=dict)  # each predicted mention's class (``CLASSES``)
    scored: list[tuple[tuple[str, int, int, str], float]] = field(default_factory=list)  # placed, with a score
    scored_reference: list[tuple[str, int, int, str]] = field(default_factory=list)  # of documents with scores
    class_examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Each reference document's class counts (``CLASSES`` order), in the reference's order: what
    # ``compare`` resamples for the classes' intervals.
    document_classes: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {h: [] for h in (*HOW, "ambiguous")})
    limit: int = 5

    def add(self, how: str, record: dict[str, Any]) -> None:
        self.counts[how] += 1
        if len(self.examples[how]) < self.limit:
            self.examples[how].append(record)

    def add_ambiguous(self, times: int, record: dict[str, Any]) -> None:
        self.ambiguous += times
        if len(self.examples["ambiguous"]) < self.limit:
            self.examples["ambiguous"].append(record)

    def add_class(self, how: str, record: dict[str, Any]) -> None:
        self.classes[how] = self.classes.get(how, 0) + 1
        examples = self.class_examples.setdefault(how, [])
        if len(examples) < self.limit:
            examples.append(record)

    def close_document(self, doc_id: str, before: dict[str, int]) -> None:
        """Records the classes counted since ``before`` (a copy of ``classes``) as ``doc_id``'s."""
        self.document_classes.append((doc_id, tuple(self.classes.get(c, 0) - before.get(c, 0) for c in CLASSES)))

    def per_document(self) -> DocumentClasses:
        """The class counts of each reference document."""
        rows = self.document_classes
        counts = np.array([r for _, r in rows], dtype=np.int64).reshape(len(rows), len(CLASSES))
        return DocumentClasses(tuple(i for i, _ in rows), counts)

    def steps(self) -> list[str]:
        """The steps the policy takes, in order."""
        return [
            "exact",
            *(["normalised"] if self.policy.normalised else []),
            *(["fuzzy"] if self.policy.fuzzy is not None else []),
            "inside_word",
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.signature(),
            "steps": self.steps(),
            **self.counts,
            "ambiguous": self.ambiguous,
            **({"statuses": dict(sorted(self.statuses.items()))} if self.statuses else {}),
            "position_free": _bag_scores(self.bag),
            **({"thresholds": sweep(self.scored, self.scored_reference)} if self.scored else {}),
            "classes": {how: self.classes.get(how, 0) for how in CLASSES},
            "class_examples": {how: self.class_examples[how] for how in CLASSES if how in self.class_examples},
            "examples": {h: v for h, v in self.examples.items() if v},
        }


def why_invalid(m: Any) -> str | None:
    """Why an entry of "mentions" is not a mention, or None."""
    if not isinstance(m, dict):
        return 'not an object with a "text" and a "label"'
    for key in ("text", "label"):
        if not isinstance(m.get(key), str):
            return f'its "{key}" is not a string'
        if not m[key].strip():
            return f'its "{key}" is empty'
    return None


def shown(m: Any) -> str:
    """An invalid entry as the reports show it: its text where it has one, else its JSON."""
    if isinstance(m, dict) and isinstance(m.get("text"), str) and m["text"].strip():
        return str(m["text"])
    return json.dumps(m, ensure_ascii=False)[:200]


def _bag_scores(bag: dict[str, int]) -> dict[str, Any]:
    matched, predicted, reference = bag["matched"], bag["predicted"], bag["reference"]
    precision = matched / predicted if predicted else 0.0
    recall = matched / reference if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {**bag, "precision": precision, "recall": recall, "f1": f1}


def _pairs_of(doc: Document) -> Counter[tuple[str, str]]:
    return Counter((_needle(doc.text[a:b]), label) for a, b, label in doc.spans)


def keyed_lines(
    path: str, id_key: str, what: str, empty: str
) -> Iterator[tuple[int, dict[str, Any], str, Callable[[str], InputError]]]:
    """Each line of a predictions file (strings, LangExtract, GLiNER): its number, its object, its
    document's key, and an error naming the file and that line. A line whose ``id_key`` is missing,
    of another type, or given on an earlier line is refused, and so is a file without a line
    (``empty`` says what one holds): scored, it would be a model that found nothing."""
    seen: set[str] = set()
    for line, obj in json_objects(path):

        def fail(message: str, line: int = line) -> InputError:
            return InputError(message, path=path, line=line)

        doc_id = obj.get(id_key)
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail(f'each line needs "{id_key}" (a string or an integer) naming its reference document')
        key = str(doc_id)
        if key in seen:
            raise fail(f"{id_key} {key!r} is given twice: give each document's {what} on one line")
        seen.add(key)
        yield line, obj, key, fail
    if not seen:
        raise InputError(f"file is empty: expected {empty}", path=path)


def read_strings(path: str, invalid: str = "keep") -> Iterator[StringDoc]:
    """The documents of a strings file; every problem names the file and line. Entries that are
    no mention (``why_invalid``) are kept on the document as invalid predictions, or, with
    ``invalid="error"``, refuse the file."""
    for line, obj, key, fail in keyed_lines(path, "id", "mentions", 'one JSON object per line ({"id", "mentions"})'):
        if "mentions" not in obj:
            raise fail('each line needs "mentions", a list of {"text", "label"} objects')
        raw = obj["mentions"]
        bad: list[tuple[str, str, str]] = []
        if not isinstance(raw, list):
            if invalid == "error":
                raise fail(
                    '"mentions" must be a list of {"text", "label"} objects (or keep invalid output: '
                    "--invalid-strings keep)"
                )
            bad.append((shown(raw), INVALID_LABEL, '"mentions" is not a list'))
            raw = []
        mentions = []
        for k, m in enumerate(raw):
            why = why_invalid(m)
            if why is not None:
                if invalid == "error":
                    raise fail(f"mention {k}: {why} (or keep invalid output: --invalid-strings keep)")
                label = m["label"] if isinstance(m, dict) and isinstance(m.get("label"), str) else ""
                bad.append((shown(m), label if label.strip() else INVALID_LABEL, why))
                continue
            check_unicode(m["text"], f"mention {k}: text", fail)
            mentions.append((m["text"], m["label"]))
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise fail('"text", where given, must be the document\'s text')
        yield StringDoc(key, mentions, text, line, bad)


_ATTACHED = "\u1160-\u11ff\ud7b0-\ud7ff"  # Hangul vowel and final jamo: part of the syllable before
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# White space as str.isspace() has it, by code point (none is above U+3000, the ideographic space).
_SPACE = np.array([chr(c).isspace() for c in range(0x3001)] + [False])
_EPSILON = 1e-9  # slack in the bounds on difflib's ratio, so that none drops a window at the threshold


@functools.cache
def _clusters() -> re.Pattern[str]:
    """A character with the combining marks (and Hangul jamo) that compose with it: normalised
    whole, so that a text and a string in different normal forms (NFC, NFD) compare equal."""
    return re.compile(f"(?s:.)[{mark_class()}{_ATTACHED}]*")


def _attaches(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M" or "\u1160" <= ch <= "\u11ff" or "\ud7b0" <= ch <= "\ud7ff"


def _normal_form(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``text`` case-folded under NFKC (each character with its combining marks, ``_clusters``),
    white space runs made one space (none leading), and for each character of the result the
    start and end in ``text`` of what it came from."""
    if text.isascii():
        base = text.lower()
        starts = np.arange(len(text))
        return _collapse(base, starts, starts + 1)
    pieces: list[str] = []
    starts_of: list[np.ndarray] = []
    ends_of: list[np.ndarray] = []
    done = 0
    for island in _NON_ASCII.finditer(text):
        a, b = island.span()
        if a > done and _attaches(text[a]):
            a -= 1  # an ASCII letter that a combining mark belongs to
        if a > done:
            pieces.append(text[done:a].lower())
            starts_of.append(np.arange(done, a))
            ends_of.append(np.arange(done + 1, a + 1))
        cluster_starts: list[int] = []
        cluster_ends: list[int] = []
        for cluster in _clusters().finditer(text, a, b):
            folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", cluster.group()).casefold())
            pieces.append(folded)
            cluster_starts += [cluster.start()] * len(folded)
            cluster_ends += [cluster.end()] * len(folded)
        starts_of.append(np.array(cluster_starts, dtype=np.int64))
        ends_of.append(np.array(cluster_ends, dtype=np.int64))
        done = b
    if done < len(text):
        pieces.append(text[done:].lower())
        starts_of.append(np.arange(done, len(text)))
        ends_of.append(np.arange(done + 1, len(text) + 1))
    starts, ends = np.concatenate(starts_of).astype(np.int64), np.concatenate(ends_of).astype(np.int64)
    return _collapse("".join(pieces), starts, ends)


def _collapse(base: str, starts: np.ndarray, ends: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
    """``base`` with each run of white space made one space, and none leading; the offsets of what
    is kept."""
    points = np.frombuffer(base.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    space = _SPACE[np.minimum(points, len(_SPACE) - 1)]
    # A white space character is kept (as one space) only after something that is not one.
    keep = ~(space & np.concatenate(([True], space[:-1])))
    kept = np.where(space, 32, points)[keep].astype("<u4")
    return kept.tobytes().decode("utf-32-le", "surrogatepass"), starts[keep], ends[keep]


@functools.cache
def _classes() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A combining mark; a word character of a script written with spaces."""
    return re.compile(f"[{mark_class()}]"), re.compile(rf"[^\W{_UNSPACED}]")


def _inside(text: str, at: int) -> bool:
    """Whether position ``at`` of ``text`` falls strictly inside a token (``text_tokens``): a
    combining mark belongs to the character before it, and a word character continues a run of
    word characters and their marks (or of marks after white space)."""
    if at <= 0 or at >= len(text):
        return False
    a, b = text[at - 1], text[at]
    if a.isascii() and b.isascii():
        return (a.isalnum() or a == "_") and (b.isalnum() or b == "_")
    mark, word = _classes()
    if mark.match(b):
        return not a.isspace()
    if not word.match(b):
        return False
    k = at - 1
    while k >= 0 and mark.match(text[k]):
        k -= 1
    if k < at - 1 and (k < 0 or text[k].isspace()):
        return True  # marks after white space make a word of their own, which b continues
    return k >= 0 and word.match(text[k]) is not None


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)
    while start < end and (unicodedata.category(text[start])[0] in "PS" or text[start].isspace()):
        start += 1
    while end > start and (unicodedata.category(text[end - 1])[0] in "PS" or text[end - 1].isspace()):
        end -= 1
    return text[start:end]


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)


# What depends on a string alone is worked out once per distinct string: a model repeats names
# across documents, and hallucinates the same ones.
@functools.lru_cache(maxsize=1 << 16)
def _needle(s: str) -> str:
    """The normal form of a string looked for (``_normal_form`` of it without edge punctuation)."""
    return _normal_form(_strip_edges(s))[0]


@functools.lru_cache(maxsize=1 << 16)
def _points(needle: str) -> np.ndarray:
    return _code_points(needle)


@functools.lru_cache(maxsize=1 << 16)
def _pairs(needle: str) -> tuple[np.ndarray, np.ndarray]:
    """The codes of a needle's pairs of adjacent characters, and the distinct ones, sorted."""
    pairs = _bigrams(_points(needle))
    return pairs, np.unique(pairs)


_WORD = re.compile(r"\w+")


def _in_order(a: list[str], b: list[str]) -> bool:
    """Whether every word ``a`` and ``b`` share (as many times as both hold it) pairs with one of
    the other in order: their longest common subsequence of words is their common multiset."""
    shared = sum((Counter(a) & Counter(b)).values())
    if shared <= 1:
        return True
    row = [0] * (len(b) + 1)
    for word in a:
        diagonal = 0
        for j, other in enumerate(b):
            above = row[j + 1]
            row[j + 1] = diagonal + 1 if word == other else max(row[j + 1], row[j])
            diagonal = above
    return row[-1] == shared


@functools.lru_cache(maxsize=1 << 16)
def _word_count(s: str) -> int:
    return max(1, len(text_words(s)))


def _bigrams(points: np.ndarray) -> np.ndarray:
    codes: np.ndarray = (points[:-1] << np.uint64(32)) | points[1:]
    return codes


class _Index:
    """Where each pair of adjacent characters of a text occurs (sorted codes, their positions):
    every occurrence of a string is found from its rarest pair, so a string is looked up in time
    that depends on its occurrences, not on the length of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        points = _code_points(text)
        codes = _bigrams(points) if len(points) > 1 else np.zeros(0, dtype=np.uint64)
        order = np.argsort(codes, kind="stable")
        self.keys = codes[order]
        self.positions = order.astype(np.int64)
        self._single: tuple[np.ndarray, np.ndarray] | None = None  # the same of single characters

    def single(self) -> tuple[np.ndarray, np.ndarray]:
        if self._single is None:
            points = _code_points(self.text)
            order = np.argsort(points, kind="stable")
            self._single = (points[order], order.astype(np.int64))
        return self._single

    def postings(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each pair code: where its positions begin and end in ``positions``."""
        return np.searchsorted(self.keys, codes, "left"), np.searchsorted(self.keys, codes, "right")

    def gather(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The positions of the pairs whose postings run from ``lo`` to ``hi``, sorted."""
        parts = [self.positions[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def find(self, needle: str) -> list[int]:
        """Every start of ``needle`` in the text, overlapping ones included, in order."""
        if not needle:
            return []
        points = _points(needle)
        if len(points) == 1:
            keys, positions = self.single()
            lo, hi = np.searchsorted(keys, points, "left"), np.searchsorted(keys, points, "right")
            return sorted(positions[int(lo[0]) : int(hi[0])].tolist())
        lo, hi = self.postings(_pairs(needle)[0])
        rarest = int(np.argmin(hi - lo))
        if hi[rarest] == lo[rarest]:
            return []
        found = self.positions[int(lo[rarest]) : int(hi[rarest])] - rarest
        text = self.text
        return [p for p in found.tolist() if p >= 0 and text.startswith(needle, p)]


# Brackets and quotes a fuzzy window keeps balanced: a window of words ends at a word, so a closing
# bracket after the last word (``( AMOC )``) is left out unless added.
_OPENING = {"(": ")", "[": "]", "{": "}", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb"}
_CLOSING = {v: k for k, v in _OPENING.items()}


def _balanced(text: str, a: int, b: int) -> tuple[int, int]:
    """The span ``a:b`` widened to the bracket or quote closing one it opens (opening one it
    closes), where that stands next to it with only white space between."""
    opened: list[str] = []
    unopened: list[str] = []
    for ch in text[a:b]:
        if ch in _OPENING:
            opened.append(ch)
        elif ch in _CLOSING:
            if opened and opened[-1] == _CLOSING[ch]:
                opened.pop()
            else:
                unopened.append(ch)
    for ch in reversed(opened):
        k = b
        while k < len(text) and text[k].isspace():
            k += 1
        if k >= len(text) or text[k] != _OPENING[ch]:
            break
        b = k + 1
    for ch in unopened:
        k = a
        while k > 0 and text[k - 1].isspace():
            k -= 1
        if k <= 0 or text[k - 1] != _CLOSING[ch]:
            break
        a = k - 1
    if text.count('"', a, b) % 2:  # a straight quote left open (or closed) by the window
        k = b
        while k < len(text) and text[k].isspace():
            k += 1
        if k < len(text) and text[k] == '"':
            b = k + 1
        else:
            k = a
            while k > 0 and text[k - 1].isspace():
                k -= 1
            if k > 0 and text[k - 1] == '"':
                a = k - 1
    return a, b


class _Places:
    """The candidate places of one string, in the order they are taken, with how far along the
    list the free ones may start: a place once taken, or overlapping one taken, stays so."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.clear_from = 0
        self.free_from = 0


Window = tuple[tuple[int, int], float]  # a fuzzy window's span in the text, and its similarity


class _Finder:
    """The candidate places of strings in one document's text, from indexes made once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._exact: _Index | None = None
        self._normal: tuple[str, np.ndarray, np.ndarray, _Index] | None = None
        self._spaceless: tuple[np.ndarray, np.ndarray, _Index] | None = None
        self._words: tuple[np.ndarray, np.ndarray] | None = None
        self.places: dict[tuple[str, str, bool], _Places] = {}
        self.fuzzy_found: dict[tuple[str, float], list[Window]] = {}
        self.taken: set[tuple[int, int]] = set()
        self.covered = bytearray(len(text))

    def normal(self) -> tuple[str, np.ndarray, np.ndarray, _Index]:
        if self._normal is None:
            normal, starts, ends = _normal_form(self.text)
            self._normal = (normal, starts, ends, _Index(normal))
        return self._normal

    def whole(self, start: int, end: int) -> bool:
        """Whether neither end of the span falls inside a token of the text (``text_tokens``)."""
        return not (_inside(self.text, start) or _inside(self.text, end))

    def exact(self, s: str, whole: bool) -> _Places:
        """The occurrences of ``s`` at word boundaries (``whole``), or inside a longer word."""
        key = ("exact", s, whole)
        if key not in self.places:
            if self._exact is None:
                self._exact = _Index(self.text)
            self._split("exact", s, [(a, a + len(s)) for a in self._exact.find(s)])
        return self.places[key]

    def _split(self, how: str, key: str, spans: list[tuple[int, int]]) -> None:
        """The places found once, kept apart for the whole-word step and the inside-word one."""
        whole = [self.whole(*sp) for sp in spans]
        self.places[(how, key, True)] = _Places([sp for sp, w in zip(spans, whole, strict=True) if w])
        self.places[(how, key, False)] = _Places([sp for sp, w in zip(spans, whole, strict=True) if not w])

    def normalised(self, needle: str, whole: bool) -> _Places:
        """The occurrences of a needle (``_needle``) in the text's normal form, brackets kept
        balanced (the needle lost the string's edge punctuation)."""
        key = ("normalised", needle, whole)
        if key not in self.places:
            _, starts, ends, index = self.normal()
            spans = [_balanced(self.text, int(starts[a]), int(ends[a + len(needle) - 1])) for a in index.find(needle)]
            self._split("normalised", needle, spans)
        return self.places[key]

    def spaceless(self, needle: str) -> _Places:
        """The whole-word occurrences of a needle without spaces in the text's normal form
        without spaces: a tokenised text (``O 2``, ``( AMOC )``) against the string as written."""
        key = ("spaceless", needle, True)
        if key not in self.places:
            if self._spaceless is None:
                normal, starts, ends, _ = self.normal()
                points = _code_points(normal)
                keep = points != 32
                text = points[keep].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
                self._spaceless = (starts[keep], ends[keep], _Index(text))
            starts, ends, index = self._spaceless
            spans = [_balanced(self.text, int(starts[a]), int(ends[a + len(needle) - 1])) for a in index.find(needle)]
            self.places[key] = _Places([sp for sp in spans if self.whole(*sp)])
        return self.places[key]

    def take(self, places: _Places) -> tuple[int, int] | None:
        """The first place free and overlapping none taken, else the first free; None if none is."""
        spans = places.spans
        while places.clear_from < len(spans):
            a, b = spans[places.clear_from]
            places.clear_from += 1
            if (a, b) not in self.taken and self.covered.find(1, a, b) < 0:
                return a, b
        while places.free_from < len(spans):
            span = spans[places.free_from]
            places.free_from += 1
            if span not in self.taken:
                return span
        return None

    def mark(self, span: tuple[int, int]) -> None:
        self.taken.add(span)
        a, b = span
        self.covered[a:b] = b"\x01" * (b - a)

    def words(self) -> tuple[np.ndarray, np.ndarray]:
        """Where each word of the text starts and ends in its normal form."""
        if self._words is None:
            _, starts, _, _ = self.normal()
            spans = np.array(text_words(self.text), dtype=np.int64).reshape(-1, 2)
            self._words = (
                np.searchsorted(starts, spans[:, 0], "left"),
                np.searchsorted(starts, spans[:, 1], "left"),
            )
        return self._words

    def fuzzy(self, s: str, threshold: float) -> list[Window]:
        """The windows of the text's words (as many as ``s`` has, one fewer or one more) at least
        ``threshold`` like ``s`` (``difflib``'s ratio on normal forms), the most similar first
        (ties in text order, fewer words first), each widened to keep its brackets and quotes
        balanced (``_balanced``). Only windows that can reach the threshold are compared: those
        sharing enough pairs of characters with ``s`` (an upper bound on the ratio), found
        through the index from the pairs of ``s`` rarest in the text."""
        key = (s, threshold)
        if key not in self.fuzzy_found:
            self.fuzzy_found[key] = self._fuzzy(s, threshold)
        return self.fuzzy_found[key]

    def _fuzzy(self, s: str, threshold: float) -> list[Window]:
        target = _needle(s)
        la = len(target)
        if not la or not self.text:
            return []
        normal, starts, ends, index = self.normal()
        word_start, word_end = self.words()
        count = len(word_start)
        n = _word_count(s)
        sizes = [z for z in (n - 1, n, n + 1) if 1 <= z <= count]
        if not sizes:
            return []
        theta = float(threshold)
        # ratio = 2M / (la + lb) >= theta needs 2 min(la, lb) >= theta (la + lb), and (each block of
        # the M matched characters but the first following an unmatched one) at least
        # 3M - la - lb - 1 >= (3 theta / 2 - 1)(la + lb) - 1 pairs of characters of s in the window.
        slope = 1.5 * theta - 1
        hits: np.ndarray | None = None
        prefix: np.ndarray | None = None
        if la > 1:
            pairs, distinct = _pairs(target)
            lo, hi = index.postings(distinct)
            shortest = max(1, math.ceil(la * theta / (2 - theta) - _EPSILON))
            need = math.ceil(slope * (la + shortest) - 1 - _EPSILON)
            if need >= 1:
                if need > len(pairs) or int((hi - lo).sum()) < need:
                    return []
                hits = index.gather(lo, hi)
                # `need` pairs inside one window, at most `longest` characters long: most strings
                # found nowhere have their pairs too scattered, and stop here.
                longest = math.floor(la * (2 - theta) / theta + _EPSILON)
                if not bool(np.any(hits[need - 1 :] - hits[: len(hits) - need + 1] <= longest - 2)):
                    return []
                # A window sharing `need` of the pairs of s shares one of its len - need + 1 rarest.
                frequency = dict(zip(distinct.tolist(), (hi - lo).tolist(), strict=True))
                rarest = set(sorted(pairs.tolist(), key=frequency.__getitem__)[: len(pairs) - need + 1])
                chosen = np.fromiter((c in rarest for c in distinct.tolist()), dtype=bool, count=len(distinct))
                prefix = index.gather(lo[chosen], hi[chosen])
                if not len(prefix):
                    return []
            if slope > 0 and hits is None:
                hits = index.gather(lo, hi)
        span = np.array(sizes, dtype=np.int64)
        if prefix is None:
            first = np.concatenate([np.arange(count - z + 1) for z in sizes])
            size = np.repeat(span, [count - z + 1 for z in sizes])
        else:
            # Windows [first word, first word + size) holding the pair at p: p and p + 1 inside.
            latest = np.searchsorted(word_start, prefix, "right") - 1
            earliest = np.searchsorted(word_end, prefix + 2, "left")
            size = np.repeat(span, len(prefix) * span)
            lower = np.maximum(np.concatenate([np.repeat(earliest - z + 1, z) for z in sizes]), 0)
            step = np.concatenate([np.tile(np.arange(z), len(prefix)) for z in sizes])
            upper = np.concatenate([np.repeat(np.minimum(latest, count - z), z) for z in sizes])
            first = lower + step
            keep = first <= upper
            # One window once, in the order (size as listed, first word) that ties are broken in.
            order = np.unique(np.searchsorted(span, size[keep]) * (count + 1) + first[keep])
            size, first = span[order // (count + 1)], order % (count + 1)
        ws = word_start[first]
        we = word_end[first + size - 1]
        lb = we - ws
        keep = 2 * np.minimum(la, lb) >= theta * (la + lb) - _EPSILON
        if hits is not None:
            shared = np.searchsorted(hits, we - 1, "left") - np.searchsorted(hits, ws, "left")
            keep &= shared >= slope * (la + lb) - 1 - _EPSILON
        found: list[tuple[float, int, int]] = []
        wanted = _WORD.findall(target)
        for a, b, f, z in zip(
            ws[keep].tolist(), we[keep].tolist(), first[keep].tolist(), size[keep].tolist(), strict=True
        ):
            ratio = difflib.SequenceMatcher(None, target, normal[a:b], autojunk=False).ratio()
            # Characters are forgiven, word order is not: the window with a word either side
            # (where a reordered string's other words stand) shares its words with s in order.
            around = normal[int(word_start[max(f - 1, 0)]) : int(word_end[min(f + z, count - 1)])]
            if ratio >= threshold and _in_order(wanted, _WORD.findall(around)):
                found.append((ratio, a, b))
        found.sort(key=lambda f: -f[0])  # stable: ties stay in window order
        windows: list[Window] = []
        seen: set[tuple[int, int]] = set()
        for ratio, a, b in found:
            window = _balanced(self.text, int(starts[a]), int(ends[b - 1]))
            if window not in seen:
                seen.add(window)
                windows.append((window, ratio))
        return windows


# What went wrong with a predicted mention, the way LLM-NER output goes wrong (``_classify``).
CLASSES = ("exact", "wrong_type", "boundary", "unannotated", "not_in_text", "off_schema", "invalid")


def _classify(located: Located, ref: Document, span: tuple[int, int, str], schema: set[str]) -> None:
    """A placed prediction's class: off the reference's types; exactly a reference mention; its
    place with another type; overlapping one (a boundary error); or in the text where no
    reference mention is (a possible missing annotation: the string is there, its type in the
    schema)."""
    start, end, label = span
    record = {"id": ref.id, "text": ref.text[start:end], "label": label, "start": start, "end": end}
    if schema and label not in schema:
        how = "off_schema"
    elif span in ref.spans:
        how = "exact"
    elif any(a == start and b == end for a, b, _ in ref.spans):
        how = "wrong_type"
    elif any(a < end and start < b for a, b, _ in ref.spans):
        how = "boundary"
    else:
        how = "unannotated"
    located.add_class(how, record)


Placed = tuple[str, tuple[int, int], float]  # how a string was found, where, and how similar


def _place(
    finder: _Finder, mentions: Sequence[tuple[str, str]], policy: StringPolicy, located: Located, doc_id: str
) -> list[Placed | None]:
    """Where each string of a document is placed, as one assignment: step by step (exact at word
    boundaries, normalised, fuzzy, inside a longer word), each over all the strings not placed
    yet, taken longest first and never in the order given."""
    placed: list[Placed | None] = [None] * len(mentions)

    def ambiguous(how: str, members: list[int], span: tuple[int, int], occurrences: int) -> None:
        s, label = mentions[members[0]]
        located.add_ambiguous(
            len(members),
            {
                "id": doc_id,
                "text": s,
                "label": label,
                "how": how,
                "found": finder.text[span[0] : span[1]],
                "start": span[0],
                "end": span[1],
                "given": len(members),
                "occurrences": occurrences,
            },
        )

    def step(how: str, key_of: Any, places_of: Any) -> None:
        groups: dict[str, list[int]] = {}
        for i, (s, _) in enumerate(mentions):
            if placed[i] is None:
                key = key_of(s)
                if key:
                    groups.setdefault(key, []).append(i)
        # At these steps a place belongs to one key, so each key takes as many places as it has
        # free, whatever order the keys are taken in; longest first only decides which of a short
        # string's occurrences, inside a longer one placed or free, it takes.
        for key in sorted(groups, key=lambda k: (-len(k), k)):
            members = sorted(groups[key], key=mentions.__getitem__)
            places = places_of(key)
            free = sum(1 for sp in places.spans if sp not in finder.taken)
            got: list[tuple[int, int]] = []
            for _ in members:
                span = finder.take(places)
                if span is None:
                    break
                finder.mark(span)
                got.append(span)
            got.sort()
            for i, span in zip(members, got, strict=False):
                placed[i] = (how, span, 1.0)
            if free > len(members):  # more occurrences than mentions: which ones were meant is unknown
                ambiguous(how, members, got[0], free)

    step("exact", str, lambda s: finder.exact(s, True))
    if policy.normalised:
        step("normalised", _needle, lambda n: finder.normalised(n, True))
        step("normalised", lambda s: _needle(s).replace(" ", ""), finder.spaceless)
    if policy.fuzzy is not None:
        pending = [i for i, p in enumerate(placed) if p is None]
        windows = {s: finder.fuzzy(s, policy.fuzzy) for s in {mentions[i][0] for i in pending}}
        pending.sort(key=lambda i: (-(windows[mentions[i][0]] or [((0, 0), 0.0)])[0][1], mentions[i]))
        by_string: dict[str, list[int]] = {}
        first_span: dict[str, tuple[int, int]] = {}
        for i in pending:
            s = mentions[i][0]
            free = [w for w in windows[s] if w[0] not in finder.taken]
            if not free:
                continue
            # A window overlapping no mention placed first: a string given twice takes its two
            # places, not one and a window one word wider around it.
            span, ratio = next((w for w in free if finder.covered.find(1, *w[0]) < 0), free[0])
            finder.mark(span)
            placed[i] = ("fuzzy", span, ratio)
            by_string.setdefault(s, []).append(i)
            first_span.setdefault(s, span)
        for s, members in by_string.items():
            disjoint: list[tuple[int, int]] = []
            for (a, b), _ in windows[s]:
                if all(b <= c or d <= a for c, d in disjoint):
                    disjoint.append((a, b))
            if len(disjoint) > len(members):
                ambiguous("fuzzy", members, first_span[s], len(disjoint))
    step("inside_word", str, lambda s: finder.exact(s, False))
    if policy.normalised:
        step("inside_word", _needle, lambda n: finder.normalised(n, False))
    return placed


def locate(
    reference: Sequence[Document],
    strings: Iterable[StringDoc],
    policy: StringPolicy,
    located: Located,
    path: str | None = None,
    named: frozenset[str] = frozenset(),
) -> tuple[list[Document], list[Document]]:
    """The reference documents (extended where strings were not found) and the predicted documents
    with every string located; ``located`` receives the counts and examples. A predicted type the
    reference never uses, and that ``named`` (the types the user names) lacks, becomes
    ``OFF_SCHEMA``: one type for all, not a column each. Documents of the
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
    schema = {label for doc in reference for _, _, label in doc.spans}
    for ref in reference:
        mine = given.get(ref.id)
        before = dict(located.classes)
        if mine is None:
            located.bag["reference"] += len(ref.spans)
            located.close_document(ref.id, before)
            out_ref.append(ref)
            out_pred.append(Document(ref.id, ref.text, (), line=ref.line))
            continue
        sdoc = mine
        spans: list[tuple[int, int, str]] = []
        missing: list[tuple[str, str]] = []
        invalid = list(sdoc.invalid)
        mentions = list(sdoc.mentions)
        # Position-free: the strings as given (a placed mention by the text the file says, else
        # by what stands at its place; an invalid entry matches nothing) against the reference's.
        given_pairs = Counter((_needle(s), label) for s, label in mentions)
        unplaced = 0
        for start, end, label, said in sdoc.placed:
            if said is None and not 0 <= start < end <= len(ref.text):
                unplaced += 1  # no text to compare: given, matching nothing
                continue
            given_pairs[(_needle(said if said is not None else ref.text[start:end]), label)] += 1
        wanted = _pairs_of(ref)
        located.bag["matched"] += sum((given_pairs & wanted).values())
        located.bag["predicted"] += sum(given_pairs.values()) + len(sdoc.invalid) + unplaced
        located.bag["reference"] += sum(wanted.values())
        finder = _Finder(ref.text)
        for status, count in sdoc.statuses.items():
            located.statuses[status] = located.statuses.get(status, 0) + count
        if sdoc.scores:
            located.scored_reference += [(ref.id, a, b, t) for a, b, t in ref.spans]
        for k, (start, end, label, said) in enumerate(sdoc.placed):
            if 0 <= start < end <= len(ref.text) and (said is None or ref.text[start:end] == said):
                if k in sdoc.scores:
                    located.scored.append(((ref.id, start, end, label), sdoc.scores[k]))
                finder.mark((start, end))
                spans.append((start, end, label))
                located.add(
                    "given",
                    {
                        "id": ref.id,
                        "text": ref.text[start:end],
                        "label": label,
                        "found": ref.text[start:end],
                        "start": start,
                        "end": end,
                    },
                )
            elif said is not None and said.strip():
                # Offsets that do not hold the text the file says they do: the text is located instead.
                located.statuses["offsets not matching the text"] = (
                    located.statuses.get("offsets not matching the text", 0) + 1
                )
                mentions.append((said, label))
            else:
                invalid.append((f"{start}..{end}", label, "offsets outside the text"))
        for (s, label), got in zip(mentions, _place(finder, mentions, policy, located, ref.id), strict=True):
            record: dict[str, Any] = {"id": ref.id, "text": s, "label": label}
            if got is None and len(s) > len(ref.text) and len(_needle(s)) > len(_normal_form(ref.text)[0]):
                # An echoed prompt or a paragraph of its own, found nowhere: no mention of this text
                # (longer in normal form too: a string in NFD is longer than the text's NFC).
                if policy.invalid == "error":
                    raise InputError(
                        f"document {sdoc.id!r}: a mention is longer than the document's text (or keep invalid output:"
                        " --invalid-strings keep)",
                        path=path,
                        line=sdoc.line,
                    )
                invalid.append((s, label, "longer than its document"))
                continue
            if got is None:
                missing.append((s, label))
                located.add("not_found", record)
                continue
            how, span, score = got
            spans.append((span[0], span[1], label))
            record.update(found=ref.text[span[0] : span[1]], start=span[0], end=span[1])
            if how == "fuzzy":
                record["similarity"] = round(score, 4)
            located.add(how, record)
        for mention in spans:
            _classify(located, ref, mention, schema)
        for s, label in missing:  # a type off the schema first: found or not, the type is wrong
            located.add_class(
                "off_schema" if schema and label not in schema else "not_in_text",
                {"id": ref.id, "text": s, "label": label},
            )
        for s, label, why in invalid:
            located.add_class("invalid", {"id": ref.id, "text": s, "label": label, "why": why})
        located.close_document(ref.id, before)
        text = ref.text
        for s, label in sorted(missing):  # in one order whatever the order given
            text += NOT_FOUND
            spans.append((len(text), len(text) + len(s), label))
            text += s
        for s, label, why in sorted(invalid):
            located.add("invalid", {"id": ref.id, "text": s, "label": label, "why": why})
            text += INVALID
            spans.append((len(text), len(text) + len(s), label))
            text += s
        out_ref.append(Document(ref.id, text, ref.spans, ref.fragments, line=ref.line, tokens=ref.tokens))
        if schema:  # a reference without a mention has no schema to be off
            spans = [(a, b, t if t in schema or t in named else OFF_SCHEMA) for a, b, t in spans]
        out_pred.append(Document(ref.id, text, tuple(sorted(spans)), line=sdoc.line))
    return out_ref, out_pred
