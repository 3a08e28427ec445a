"""Buckets: each mention's bucket under an attribute, so that scores can be read per bucket.

An attribute is a property of a mention (its length; whether a training corpus saw it, and with
which type; how consistently the training corpus labels its string; how often it is a mention
there) or of the sentence it stands in (its length, its density of reference mentions, its share
of words the training corpus never has). Following Fu et al. (2020), every mention falls in one
bucket of each attribute: a reference mention by its own string and type, a predicted one by its
own, and a sentence attribute puts both sides' mentions of a sentence in that sentence's bucket
(computed from the text and the reference, so that a sentence is in one bucket whatever the
prediction).

Numeric attributes are bucketed by fixed edges (``Attribute.edges``), not by quantiles of the
data: a stream cut into chunks, and two systems compared per bucket, must share the buckets.

>>> a = attribute("length")
>>> a.labels
('1', '2', '3', '4+')
>>> a.assign(np.array([1, 2, 7, 3]).astype(np.float64)).tolist()
[0, 1, 3, 2]
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from .matching import find_pairs
from .spans import BoolArray, IntArray, Spans
from .text import Text, mention_texts

FloatArray = npt.NDArray[np.float64]

SEEN_LABELS = ("seen", "seen-other-type", "unseen")
# name: (default edges for token units, for character units, the least value, integer-valued, needs TRAIN)
_NUMERIC: dict[str, tuple[tuple[float, ...], tuple[float, ...], float, bool, bool]] = {
    "length": ((2, 3, 4), (5, 10, 20), 1, True, False),
    "frequency": ((1, 2, 5, 10), (1, 2, 5, 10), 0, True, True),
    "sentence-length": ((11, 21, 41), (11, 21, 41), 1, True, False),
    "density": ((0.1, 0.2, 0.3), (0.1, 0.2, 0.3), 0, False, False),
    "oov": ((0.1, 0.2, 0.4), (0.1, 0.2, 0.4), 0, False, True),
    "consistency": ((0.5,), (0.5,), 0, False, True),
}
ATTRIBUTES: tuple[str, ...] = (
    "length", "seen", "consistency", "frequency", "sentence-length", "density", "oov", "depth"
)
# depth: how many other mentions of the same side enclose a mention (distinct extents), 2 and more together.
DEPTH_LABELS = ("0", "1", "2+")
NEEDS_TRAIN = frozenset({"seen", "consistency", "frequency", "oov"})
SENTENCE_ATTRIBUTES = frozenset({"sentence-length", "density", "oov"})
_KEYED = frozenset({"seen", "consistency", "frequency"})  # read each mention's key


def _number(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Attribute:
    """A mention attribute and its buckets: ``labels[k]`` is bucket ``k``."""

    name: str
    edges: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()

    def assign(self, values: FloatArray) -> IntArray:
        """The bucket of each value: below the first edge is bucket 0, from edge k on bucket k + 1."""
        out: IntArray = np.searchsorted(np.asarray(self.edges, dtype=np.float64), values, side="right").astype(np.int64)
        return out


def _labels(name: str, edges: tuple[float, ...], least: float, integer: bool) -> tuple[str, ...]:
    bounds = (least, *edges)
    out = []
    for a, b in zip(bounds, edges, strict=False):
        if integer:
            out.append(_number(a) if b - a == 1 else f"{_number(a)}-{_number(b - 1)}")
        else:
            out.append(f"{_number(a)}-{_number(b)}")
    out.append(f"{_number(bounds[-1])}+")
    if name == "consistency":  # its last edge is 1 itself: "1" is always this type
        out[-1] = "1"
        out.append("unseen")
    return tuple(out)


def attribute(name: str, edges: Sequence[float] | None = None, *, tokens: bool = True) -> Attribute:
    """The attribute ``name`` with ``edges`` (or its defaults, which depend on whether positions
    are tokens or characters)."""
    if name == "seen":
        if edges:
            raise OptionError("seen has fixed buckets (seen, seen-other-type, unseen): it takes no edges")
        return Attribute(name, (), SEEN_LABELS)
    if name == "depth":
        if edges:
            raise OptionError("depth has fixed buckets (0 outermost, 1 inside one mention, 2+ deeper): no edges")
        return Attribute(name, (), DEPTH_LABELS)
    if name not in _NUMERIC:
        raise OptionError(f"unknown bucket attribute {name!r}: use {', '.join(ATTRIBUTES)} or a document field")
    token_edges, char_edges, least, integer, _ = _NUMERIC[name]
    chosen = tuple(float(e) for e in (edges if edges else (token_edges if tokens else char_edges)))
    if (
        not all(math.isfinite(e) for e in chosen)
        or any(b <= a for a, b in itertools.pairwise(chosen))
        or chosen[0] <= least
    ):
        raise OptionError(
            f"edges of {name} must increase and start above {_number(least)}, not {', '.join(map(_number, chosen))}"
        )
    if integer and any(e != int(e) for e in chosen):
        raise OptionError(f"edges of {name} are whole numbers, not {', '.join(map(_number, chosen))}")
    if name == "consistency":
        if chosen[-1] >= 1:
            raise OptionError(f"edges of consistency lie between 0 and 1, not {', '.join(map(_number, chosen))}")
        chosen = (*chosen, 1.0)
    return Attribute(name, chosen, _labels(name, chosen, least, integer))


U64Array = npt.NDArray[np.uint64]
ByteArray = npt.NDArray[np.uint8]

# Strings are compared by a 64-bit polynomial hash of their key's code points c_0 .. c_{n-1}:
# h = sum_k c_k * P^(n-1-k) mod 2^64. With P odd it is invertible mod 2^64, so over a text of code
# points t_i, with S_k = sum_{i<k} t_i * P^-i, the hash of t[a:b] is P^(b-1) * (S_b - S_a): every
# mention's and every word sequence's hash takes a few vectorised operations. Two distinct strings
# among the few million compared share a hash with odds near n^2 / 2^65 (below 1e-6): negligible.
_P = 0x9E3779B97F4A7C15
_P_INV = pow(_P, -1, 1 << 64)
_BLOCK = 1 << 18  # code points hashed at a time: memory stays bounded whatever the text's size
_LOW = 16


def _powers(base: int, n: int) -> U64Array:
    """``base ** k`` mod 2^64 for k < n (numpy's unsigned products wrap)."""
    out = np.full(n, base, dtype=np.uint64)
    out[0] = 1
    np.cumprod(out, out=out)
    return out


@functools.cache
def _tables() -> tuple[U64Array, U64Array]:
    """``P_INV ** k`` for k < _BLOCK and ``P ** k`` for k < 2^_LOW: made when a bucket first needs
    them, not when a plain count imports this module."""
    return _powers(_P_INV, _BLOCK), _powers(_P, 1 << _LOW)


def _power(k: IntArray) -> U64Array:
    """``P ** k`` mod 2^64 for each k >= 0."""
    high = _powers(pow(_P, 1 << _LOW, 1 << 64), int(k.max(initial=0) >> _LOW) + 1)
    out: U64Array = _tables()[1][k & ((1 << _LOW) - 1)] * high[k >> _LOW]
    return out


def _prefix(text: str | ByteArray, at: IntArray) -> U64Array:
    """``S_k`` (see above) of ``text``'s code points (or ASCII bytes) at each position of ``at``
    (ascending)."""
    out = np.zeros(at.shape[0], dtype=np.uint64)
    carry = np.uint64(0)
    lows = range(0, len(text), _BLOCK)
    cut = np.searchsorted(at, np.array([*lows, len(text)], dtype=np.int64), side="left")
    for b, lo in enumerate(lows):
        piece = text[lo : lo + _BLOCK]
        if isinstance(piece, str):
            codes = np.frombuffer(piece.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        else:
            codes = piece.astype(np.uint64)
        sums = np.zeros(codes.shape[0] + 1, dtype=np.uint64)
        np.cumsum(codes * _tables()[0][: codes.shape[0]], out=sums[1:])
        sums *= np.uint64(pow(_P_INV, lo, 1 << 64))
        sums += carry
        out[cut[b] : cut[b + 1]] = sums[at[cut[b] : cut[b + 1]] - lo]
        carry = sums[-1]
    out[cut[-1] :] = carry  # positions at the text's end
    return out


def _span_hashes(text: str, start: IntArray, end: IntArray) -> U64Array:
    """The hash of ``text[start[k]:end[k]]`` for spans in order that do not overlap, none empty."""
    at = np.empty(2 * start.shape[0], dtype=np.int64)
    at[0::2], at[1::2] = start, end
    s = _prefix(text, at)
    out: U64Array = _power(end - 1) * (s[1::2] - s[0::2])
    return out


def _hash_strings(strings: Sequence[str]) -> U64Array:
    """The hash of each string (empty ones hash to 0)."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    start = np.zeros(len(strings), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=start[1:])
    out = np.zeros(len(strings), dtype=np.uint64)
    full = np.flatnonzero(lengths > 0)
    out[full] = _span_hashes("\n".join(strings), start[full], start[full] + lengths[full])
    return out


def key(text: str) -> str:
    """How a mention's string is compared with the training corpus's: lower-cased, words joined
    by single spaces."""
    return " ".join(text.lower().split())


@runtime_checkable
class _Joined(Protocol):
    """A text of tokens that can give them joined by single spaces (CoNLL's)."""

    def joined(self) -> tuple[str, IntArray]: ...

    def spaced_bytes(self, tokens: IntArray | None = None) -> tuple[ByteArray, IntArray] | None: ...


_OTHER_SPACE = re.compile(r"[^\S ]")  # whitespace but a space
_ASCII_SPACE = "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_SPACE_BYTE = np.zeros(256, dtype=bool)
_SPACE_BYTE[[ord(c) for c in _ASCII_SPACE + " "]] = True
_LOWER_BYTE = np.arange(256, dtype=np.uint8)
_LOWER_BYTE[65:91] += 32


def _plain_tokens(codes: ByteArray, starts: IntArray) -> bool:
    """Whether tokens' bytes, each followed by a space (``spaced_bytes``), are ASCII tokens, none
    empty, none with whitespace: the bytes are then the code points."""
    n = starts.shape[0] - 1
    return (
        int(codes.max(initial=0)) < 128
        and int(np.count_nonzero(_SPACE_BYTE[codes])) == n
        and (n == 0 or int(np.diff(starts).min()) > 1)
    )


def _single_spaced(text: str) -> bool:
    """Whether the only whitespace in ``text`` is single spaces between words (``str.split``'s
    whitespace; faster than one regular expression)."""
    if "  " in text or text[:1] == " " or text[-1:] == " ":
        return False
    if text.isascii():
        return not any(c in text for c in _ASCII_SPACE)
    return _OTHER_SPACE.search(text) is None


@dataclass
class _Words:
    """A text's words, lower-cased: word ``k`` is ``lowered[start[k]:end[k]]`` and stands in unit
    ``unit[k]``. ``tokens`` says that the words are the text's tokens (CoNLL without stray
    whitespace), so that a mention's key is the words it covers joined by single spaces."""

    lowered: str | ByteArray
    start: IntArray
    end: IntArray
    unit: IntArray
    n_units: int
    tokens: bool
    row: IntArray | None = None  # each token's word, where only some tokens' words were found
    _prefixes: tuple[U64Array, U64Array, U64Array] | None = None

    @staticmethod
    def of(text: Text) -> _Words:
        if isinstance(text, _Joined):
            spaced = text.spaced_bytes()
            if spaced is not None:
                codes, starts = spaced
                # ASCII tokens, none empty, none with whitespace: the bytes are the code points
                if _plain_tokens(codes, starts):
                    return _Words._of_tokens(_LOWER_BYTE[codes], starts, text.unit_starts())
            joined, starts = text.joined()
            lowered = joined.lower()
            # lower() keeps the length (so the positions) unless a character lower-cases to several
            if len(lowered) == len(joined) and _single_spaced(joined):
                return _Words._of_tokens(lowered, starts, text.unit_starts())
        contexts = text.contexts()
        lowered = "\n".join(" ".join(c.lower().split()) for c in contexts)
        codes = np.frombuffer(lowered.encode("utf-32-le"), dtype=np.uint32)
        gap = np.ones(codes.shape[0] + 2, dtype=bool)
        gap[1:-1] = (codes == 32) | (codes == 10)
        start = np.flatnonzero(gap[:-2] & ~gap[1:-1])
        end = np.flatnonzero(~gap[1:-1] & gap[2:]) + 1
        unit = np.cumsum(codes == 10)[start].astype(np.int64) if start.shape[0] else start
        return _Words(lowered, start, end, unit, len(contexts), False)

    @staticmethod
    def inside(text: Text, sides: Sequence[Spans]) -> _Words | None:
        """The words of the tokens inside the mentions of ``sides`` alone, enough for their keys
        (a mention's key is its tokens' words); None where the text cannot give its tokens'
        bytes, or they are not ASCII tokens without whitespace (``of`` then)."""
        if not isinstance(text, _Joined):
            return None
        size = max((int(s.end.max(initial=0)) for s in sides), default=0)
        delta = np.zeros(size + 1, dtype=np.int64)
        for s in sides:
            delta += np.bincount(s.start, minlength=size + 1)
            delta -= np.bincount(s.end, minlength=size + 1)
        covered = np.cumsum(delta[:size]) > 0
        tokens = np.flatnonzero(covered)
        spaced = text.spaced_bytes(tokens)
        if spaced is None or not _plain_tokens(*spaced):
            return None
        codes, starts = spaced
        row = np.cumsum(covered) - 1
        n = tokens.shape[0]
        return _Words(_LOWER_BYTE[codes], starts[:-1], starts[1:] - 1, np.zeros(n, dtype=np.int64), 1, True, row)

    @staticmethod
    def _of_tokens(lowered: str | ByteArray, starts: IntArray, unit_starts: IntArray) -> _Words:
        bounds = np.append(unit_starts, starts.shape[0] - 1)
        unit = np.repeat(np.arange(bounds.shape[0] - 1, dtype=np.int64), np.diff(bounds))
        return _Words(lowered, starts[:-1], starts[1:] - 1, unit, bounds.shape[0] - 1, True)

    def prefixes(self) -> tuple[U64Array, U64Array, U64Array]:
        """``S`` at every word's start and at its end, and ``P`` to the power of its end less one."""
        if self._prefixes is None:
            at = np.empty(2 * self.start.shape[0], dtype=np.int64)
            at[0::2], at[1::2] = self.start, self.end
            s = _prefix(self.lowered, at)
            self._prefixes = (s[0::2], s[1::2], _power(self.end - 1))
        return self._prefixes

    def sequences(self, first: IntArray, last: IntArray) -> U64Array:
        """The hash of the words ``first[k]`` to ``last[k]`` (included) joined by single spaces."""
        at_start, at_end, power = self.prefixes()
        out: U64Array = power[last] * (at_end[last] - at_start[first])
        return out

    def hashes(self) -> U64Array:
        """Every word's hash."""
        at_start, at_end, power = self.prefixes()
        out: U64Array = power * (at_end - at_start)
        return out

    def ngrams(self, n: int) -> U64Array:
        """The hash of every sequence of ``n`` words within one unit."""
        m = self.start.shape[0] - n + 1
        if n == 1:
            return self.hashes()
        if m <= 0:
            return np.zeros(0, dtype=np.uint64)
        first = np.flatnonzero(self.unit[:m] == self.unit[n - 1 :])
        return self.sequences(first, first + n - 1)

    def keys(self, spans: Spans, text: Text) -> tuple[U64Array, IntArray]:
        """The hash of each mention's key (0 where the key is empty) and its number of words."""
        if self.tokens:
            full = spans.end > spans.start
            first, last = spans.start[full], spans.end[full] - 1
            if self.row is not None:
                first, last = self.row[first], self.row[last]
            out = np.zeros(len(spans), dtype=np.uint64)
            out[full] = self.sequences(first, last)
            return out, spans.end - spans.start
        # A discontinuous mention's key is its fragments' words, not its gaps'.
        strings = [key(s) for s in mention_texts(text, spans, gap=" ")]
        words = np.fromiter((s.count(" ") + 1 if s else 0 for s in strings), dtype=np.int64, count=len(strings))
        return _hash_strings(strings), words


def _find(sorted_keys: U64Array, hashes: U64Array) -> IntArray:
    """The position of each hash in ``sorted_keys``, or -1."""
    if not sorted_keys.shape[0]:
        return np.full(hashes.shape[0], -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_keys, hashes), sorted_keys.shape[0] - 1)
    out: IntArray = np.where(sorted_keys[at] == hashes, at, -1).astype(np.int64)
    return out


def _mixed(hashes: U64Array, bits: int) -> IntArray:
    """A bucket of ``bits`` bits for each hash, from all its bits: the keys' hashes share their
    top bits far more than chance would (short strings), so their top bits alone crowd a few
    buckets (11 of 114 keys in one of 128, against 4 mixed)."""
    mixed = (hashes ^ (hashes >> np.uint64(32))) * np.uint64(0xD6E8FEB86659FD93)
    out: IntArray = (mixed >> np.uint64(64 - bits)).astype(np.int64)
    return out


@dataclass(frozen=True)
class _Lookup:
    """Distinct hashes (``keys``, sorted) found by a bucket of their bits (``_mixed``): the
    bucket's hashes are ``table[first[b]:first[b + 1]]``, at ``position`` in ``keys``. A bucket
    holds one hash or none on average, ``depth`` at most, so that finding many hashes takes a few
    vectorised passes, not a binary search each (``_find``)."""

    keys: U64Array
    bits: int
    table: U64Array
    position: IntArray
    first: IntArray
    depth: int

    @staticmethod
    def of(keys: U64Array) -> _Lookup:
        bits = max(int(keys.shape[0]).bit_length(), 1)
        bucket = _mixed(keys, bits)
        position = np.argsort(bucket, kind="stable")
        first = np.searchsorted(bucket[position], np.arange((1 << bits) + 1, dtype=np.int64))
        depth = int(np.diff(first).max(initial=0))
        return _Lookup(keys, bits, keys[position], position.astype(np.int64), first.astype(np.int64), depth)

    def find(self, hashes: U64Array) -> IntArray:
        """The position of each hash in ``keys``, or -1 (as ``_find``)."""
        if self.depth > 8:  # hashes crowded into a few buckets (not by chance): a binary search
            return _find(self.keys, hashes)
        at = self.first[_mixed(hashes, self.bits)]
        last = self.keys.shape[0] - 1
        out = np.full(hashes.shape[0], -1, dtype=np.int64)
        # A hash past its bucket's keys meets a key of another bucket (or the last key): no match.
        for step in range(self.depth):
            cand = np.minimum(at + step, last)
            np.copyto(out, self.position[cand], where=self.table[cand] == hashes)
        return out


@dataclass(frozen=True)
class TrainIndex:
    """What a training corpus says about strings, by the hash of their key (``keys``, sorted): how
    often each is a mention of each type (``counts[k, t]``, of type ``types[t]``), how often it
    occurs as a word sequence within one unit at all (``occurrences``, at least its mention count),
    and the hashes of the corpus's words, lower-cased (``vocabulary``, sorted)."""

    keys: U64Array
    counts: IntArray
    types: tuple[str, ...]
    occurrences: IntArray
    vocabulary: U64Array

    @functools.cached_property
    def lookup(self) -> _Lookup:
        """The keys found by their top bits, made when first needed (once per process)."""
        return _Lookup.of(self.keys)


def build_index(spans: Spans, text: Text) -> TrainIndex:
    """The index of a training corpus read into spans over its text."""
    return build_index_parts([(spans, text)])


def build_index_parts(parts: Sequence[tuple[Spans, Text]]) -> TrainIndex:
    """The index of a training corpus read in parts (chunks that end at sentence breaks, so that
    no word sequence is cut): the same index as of the whole corpus at once."""
    # Each part's words found once, for its keys and then its occurrences.
    words = [_Words.of(text) for _, text in parts]
    keyed = merge_keys([part_keys(spans, text, w) for (spans, text), w in zip(parts, words, strict=True)])
    return keyed.index([part_occurrences(text, keyed, w) for (_, text), w in zip(parts, words, strict=True)])


@dataclass(frozen=True)
class PartKeys:
    """What one part of a training corpus says before its occurrences are counted: each distinct
    (key, type) of its mentions with words, as the key's hash, word count, type (``type_index``
    into ``names``) and how many mentions have it, and the hashes of its words. Distinct, not
    mention by mention: a training corpus repeats its mentions' strings, and what a part holds
    and sends back then follows its distinct keys, not its size."""

    hashes: U64Array
    words: IntArray
    type_index: IntArray
    counts: IntArray
    names: tuple[str, ...]
    vocabulary: U64Array


def part_keys(spans: Spans, text: Text, words: _Words | None = None) -> PartKeys:
    words = _Words.of(text) if words is None else words
    hashes, n_words = words.keys(spans, text)
    full = n_words > 0
    return _distinct_keys(
        hashes[full], n_words[full], spans.type[full].astype(np.int64), np.ones(int(full.sum()), dtype=np.int64),
        tuple(spans.types), np.unique(words.hashes()),
    )


def _distinct_keys(
    hashes: U64Array, n_words: IntArray, types: IntArray, counts: IntArray, names: tuple[str, ...], vocabulary: U64Array
) -> PartKeys:
    """Rows of equal (hash, type) summed into one, in the order of (hash, type)."""
    order = np.lexsort((types, hashes))
    hashes, n_words, types, counts = hashes[order], n_words[order], types[order], counts[order]
    first = np.ones(hashes.shape[0], dtype=bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (types[1:] != types[:-1])
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(counts, starts) if starts.shape[0] else np.zeros(0, dtype=np.int64)
    return PartKeys(hashes[starts], n_words[starts], types[starts], summed.astype(np.int64), names, vocabulary)


# Parts folded into one at a time while a training corpus's keys are gathered: what waits is a
# few parts' distinct keys beside the running fold's, whatever the number of parts.
FOLD_PARTS = 8


def _fold_keys(parts: Sequence[PartKeys]) -> PartKeys:
    """One part holding what ``parts`` hold (their types named in order of first appearance)."""
    names: list[str] = []
    for part in parts:
        names += [t for t in part.names if t not in names]
    type_of = [
        np.array([names.index(t) for t in part.names] or [0], dtype=np.int64)[part.type_index] for part in parts
    ]
    return _distinct_keys(
        np.concatenate([p.hashes for p in parts]) if parts else np.zeros(0, dtype=np.uint64),
        np.concatenate([p.words for p in parts]) if parts else np.zeros(0, dtype=np.int64),
        np.concatenate(type_of) if parts else np.zeros(0, dtype=np.int64),
        np.concatenate([p.counts for p in parts]) if parts else np.zeros(0, dtype=np.int64),
        tuple(names),
        np.unique(np.concatenate([p.vocabulary for p in parts])) if parts else np.zeros(0, dtype=np.uint64),
    )


@dataclass(frozen=True)
class Keyed:
    """The training corpus's mention keys, before their occurrences in the text are counted."""

    keys: U64Array
    counts: IntArray
    types: tuple[str, ...]
    length: IntArray  # words of each key
    vocabulary: U64Array

    def index(self, occurrences: Sequence[IntArray]) -> TrainIndex:
        """The index, with each part's occurrence counts (``part_occurrences``) added up."""
        total = np.zeros(self.keys.shape[0], dtype=np.int64)
        for found in occurrences:
            total += found
        # A mention the tokenisation splits differently (character offsets) still occurs.
        np.maximum(total, self.counts.sum(axis=1), out=total)
        return TrainIndex(self.keys, self.counts, self.types, total, self.vocabulary)


def merge_keys(parts: Iterable[PartKeys]) -> Keyed:
    """The keys of every part, folded as the parts come (``parts`` may be an iterator of the
    workers' results): the same keys whatever the number of parts or the fold's steps."""
    folded: PartKeys | None = None
    waiting: list[PartKeys] = []
    for part in parts:
        waiting.append(part)
        if len(waiting) >= FOLD_PARTS:
            folded = _fold_keys(([folded] if folded is not None else []) + waiting)
            waiting = []
    whole = _fold_keys(([folded] if folded is not None else []) + waiting)
    names = list(whole.names)
    keys, row = np.unique(whole.hashes, return_inverse=True)
    flat = np.bincount(row * len(names) + whole.type_index, weights=whole.counts, minlength=keys.shape[0] * len(names))
    # (float sums of whole numbers: exact below 2^53 mentions)
    counts = flat.reshape(keys.shape[0], len(names)).astype(np.int64)
    length = np.zeros(keys.shape[0], dtype=np.int64)
    length[row] = whole.words
    return Keyed(keys, counts, tuple(names), length, whole.vocabulary)


def part_occurrences(text: Text, keyed: Keyed, words: _Words | None = None) -> IntArray:
    """How often each key occurs as a word sequence within one unit of this part's text (its
    words, ``_Words.of(text)``, where already found)."""
    words = _Words.of(text) if words is None else words
    keys = keyed.keys
    out = np.zeros(keys.shape[0], dtype=np.int64)
    # A table of the keys' low bits rules out most word sequences before the exact search.
    bits = min(max(int(keys.shape[0]) * 64, 1 << 12), 1 << 24).bit_length()
    low = np.uint64((1 << bits) - 1)
    for n in np.unique(keyed.length).tolist():
        rows = np.flatnonzero(keyed.length == n)
        table = np.zeros(1 << bits, dtype=bool)
        table[keys[rows] & low] = True
        grams = words.ngrams(n)
        grams = grams[table[grams & low]]
        at = _find(keys[rows], grams)
        out[rows] += np.bincount(at[at >= 0], minlength=rows.shape[0])
    return out


@dataclass
class _Side:
    """What the attributes that need TRAIN read of one side's mentions: the row of each one's key
    in the index (-1: never a TRAIN mention) and its count as a TRAIN mention of its own type."""

    row: IntArray
    same_type: IntArray

    @staticmethod
    def of(spans: Spans, text: Text, words: _Words, index: TrainIndex) -> _Side:
        hashes, n_words = words.keys(spans, text)
        row = np.where(n_words > 0, index.lookup.find(hashes), -1)
        column = np.array([index.types.index(t) if t in index.types else -1 for t in spans.types], dtype=np.int64)
        col = column[spans.type] if len(spans) else np.zeros(0, dtype=np.int64)
        found = (row >= 0) & (col >= 0)
        same = np.zeros(len(spans), dtype=np.int64)
        same[found] = index.counts[row[found], col[found]]
        return _Side(row, same)


@dataclass
class _Context:
    """What sentence attributes read, made once per chunk."""

    words: _Words
    reference: Spans

    def lengths(self) -> FloatArray:
        return np.bincount(self.words.unit, minlength=self.words.n_units).astype(np.float64)


def _sentence_values(name: str, ctx: _Context, index: TrainIndex | None) -> FloatArray:
    lengths = ctx.lengths()
    if name == "sentence-length":
        return lengths
    safe = np.where(lengths > 0, lengths, 1)
    if name == "density":
        per_unit = np.bincount(ctx.reference.unit, minlength=lengths.shape[0]).astype(np.float64)
        return per_unit / safe
    assert index is not None  # oov: checked where the attributes are chosen
    unknown = _find(index.vocabulary, ctx.words.hashes()) < 0
    unseen = np.bincount(ctx.words.unit[unknown], minlength=lengths.shape[0]).astype(np.float64)
    return unseen / safe


def nesting_depth(spans: Spans) -> IntArray:
    """How many distinct extents of ``spans`` enclose each mention (0: outermost). A mention of
    the same extent and another type does not enclose it; crossing mentions do not nest.

    >>> columns = ([0, 0, 2, 3, 8], [6, 6, 4, 4, 9], [0, 1, 0, 1, 0], [0] * 5)
    >>> s = Spans.build(*(np.array(v) for v in columns), ("A", "B"))
    >>> nesting_depth(s).tolist()
    [0, 0, 1, 2, 0]
    """
    pairs = find_pairs(spans, spans)
    i, j = pairs.ref, pairs.pred
    s, e = spans.start, spans.end
    encloses = (s[j] <= s[i]) & (e[j] >= e[i]) & ((s[j] != s[i]) | (e[j] != e[i]))
    found = np.unique(np.stack((i[encloses], s[j[encloses]], e[j[encloses]])), axis=1)
    depth: IntArray = np.bincount(found[0], minlength=len(spans)).astype(np.int64)
    return depth


def _mention_buckets(a: Attribute, spans: Spans, side: _Side | None, index: TrainIndex | None) -> IntArray:
    if a.name == "length":
        return a.assign(spans.covered().astype(np.float64))  # a discontinuous mention's fragments
    if a.name == "depth":
        return np.minimum(nesting_depth(spans), len(DEPTH_LABELS) - 1)
    assert index is not None and side is not None  # seen, consistency, frequency: checked where chosen
    found = side.row >= 0
    if a.name == "seen":
        seen: IntArray = np.where(found, np.where(side.same_type > 0, 0, 1), 2).astype(np.int64)
        return seen
    if a.name == "frequency":
        total = np.zeros(len(spans), dtype=np.float64)
        total[found] = index.counts[side.row[found]].sum(axis=1)
        return a.assign(total)
    # consistency: the share of the string's occurrences in TRAIN that are mentions of this type
    share = np.full(len(spans), -1.0)
    share[found] = side.same_type[found] / np.maximum(index.occurrences[side.row[found]], 1)
    out = a.assign(share)
    out[~found] = len(a.labels) - 1  # unseen
    return out


# The words of the last text read, while it lives: systems counted side by side against one
# reference share its text (``engines.paired``), whose words are then found once, not per system.
_last_words: tuple[weakref.ref[Text], _Words] | None = None


def _words_of(text: Text) -> _Words:
    global _last_words
    if _last_words is not None and _last_words[0]() is text:
        return _last_words[1]
    words = _Words.of(text)
    try:
        _last_words = (weakref.ref(text), words)
    except TypeError:  # a text that takes no weak reference is not remembered
        _last_words = None
    return words


# The reference's buckets of the last chunk assigned, while its reference and text live: systems
# counted side by side share one reference (``engines.paired``), whose mentions' buckets (their
# keys found in TRAIN) are then assigned once, not per system.
_last_reference: (
    tuple[weakref.ref[Spans], weakref.ref[Text], tuple[Attribute, ...], TrainIndex | None, list[IntArray]] | None
) = None


def _reference_buckets(
    attributes: tuple[Attribute, ...], reference: Spans, text: Text, index: TrainIndex | None
) -> list[IntArray] | None:
    last = _last_reference
    if last is None or last[0]() is not reference or last[1]() is not text:
        return None
    return last[4] if last[2] == attributes and last[3] is index else None


def _keep_reference(
    attributes: tuple[Attribute, ...], reference: Spans, text: Text, index: TrainIndex | None, out: list[IntArray]
) -> None:
    global _last_reference
    for bucket in out:  # shared by every system's count of the chunk: never written
        bucket.setflags(write=False)
    try:
        _last_reference = (weakref.ref(reference), weakref.ref(text), attributes, index, out)
    except TypeError:  # a text that takes no weak reference is not remembered
        _last_reference = None


def assign(
    attributes: Sequence[Attribute],
    reference: Spans,
    predicted: Spans,
    text: Text,
    index: TrainIndex | None,
    twins: tuple[BoolArray, BoolArray] | None = None,
) -> list[tuple[IntArray, IntArray]]:
    """For each attribute, the bucket of every reference and every predicted mention. ``twins``
    (``parts.twins``: which mentions of each side have an exact twin on the other, where no two
    mentions of a side share a token) lets a predicted twin take its reference twin's bucket."""
    attributes = tuple(attributes)
    if any(a.name in SENTENCE_ATTRIBUTES for a in attributes):
        return _assign(attributes, reference, predicted, text, index)
    # Mention attributes alone: a mention's bucket reads only its own side, so the reference's
    # are the same for every system counted against it.
    known = _reference_buckets(attributes, reference, text, index)
    others = predicted
    if twins is not None:
        # A mention's bucket reads its span, its type, the words it covers and (depth) the
        # mentions of its side around it: none where no two mentions share a token. So a
        # predicted twin's bucket is its reference twin's (the k-th twin of each side, both in
        # start order), and only the other predicted mentions' words and keys are found.
        others = predicted.select(~twins[1])
    if known is not None:
        mine = _assign(attributes, None, others, text, index)
    else:
        mine = _assign(attributes, reference, others, text, index)
        known = [ref for ref, _ in mine]
        _keep_reference(attributes, reference, text, index, known)
    if twins is None:
        return [(ref, pred) for ref, (_, pred) in zip(known, mine, strict=True)]
    ref_twin, pred_twin = twins
    out = []
    for ref, (_, other) in zip(known, mine, strict=True):
        pred = np.empty(len(predicted), dtype=np.int64)
        pred[pred_twin] = ref[ref_twin]
        pred[~pred_twin] = other
        out.append((ref, pred))
    return out


def _assign(
    attributes: tuple[Attribute, ...], reference: Spans | None, predicted: Spans, text: Text, index: TrainIndex | None
) -> list[tuple[IntArray, IntArray]]:
    """``assign``; without a ``reference`` (mention attributes only), the predicted mentions'
    buckets alone, each beside an empty array."""
    keyed = index is not None and any(a.name in _KEYED for a in attributes)
    words: _Words | None = None
    sides_read = (predicted,) if reference is None else (reference, predicted)
    if not any(a.name in SENTENCE_ATTRIBUTES for a in attributes) and keyed:
        # Only mentions' keys are read: the words inside them, not the whole text's.
        words = _Words.inside(text, sides_read)
    if words is None and (keyed or any(a.name in SENTENCE_ATTRIBUTES for a in attributes)):
        words = _words_of(text)
    ref_side: _Side | None = None
    pred_side: _Side | None = None
    if index is not None and words is not None and keyed:
        ref_side = None if reference is None else _Side.of(reference, text, words, index)
        pred_side = _Side.of(predicted, text, words, index)
    out = []
    nothing = np.zeros(0, dtype=np.int64)
    for a in attributes:
        if a.name in SENTENCE_ATTRIBUTES:
            assert words is not None and reference is not None
            per_unit = a.assign(_sentence_values(a.name, _Context(words, reference), index))
            out.append((per_unit[reference.unit], per_unit[predicted.unit]))
        else:
            ref = nothing if reference is None else _mention_buckets(a, reference, ref_side, index)
            out.append((ref, _mention_buckets(a, predicted, pred_side, index)))
    return out
