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

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from .spans import IntArray, Spans
from .text import Text

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
ATTRIBUTES: tuple[str, ...] = ("length", "seen", "consistency", "frequency", "sentence-length", "density", "oov")
NEEDS_TRAIN = frozenset({"seen", "consistency", "frequency", "oov"})
SENTENCE_ATTRIBUTES = frozenset({"sentence-length", "density", "oov"})


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


def key(text: str) -> str:
    """How a mention's string is compared with the training corpus's: lower-cased, words joined
    by single spaces."""
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class TrainIndex:
    """What a training corpus says about strings: the types each is a mention of (and how often),
    how often it occurs as a word sequence in the text at all, and the corpus's words."""

    types: Mapping[str, Mapping[str, int]]
    occurrences: Mapping[str, int]
    vocabulary: frozenset[str] = field(default_factory=frozenset)


_PRIME = np.uint64(1_000_003)


def _ngram_hashes(ids: IntArray, unit: IntArray, n: int) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of every ``n``-word sequence within one unit (a polynomial over word ids)."""
    m = ids.shape[0] - n + 1
    if m <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(m, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):
            h = h * _PRIME + ids[k : k + m].astype(np.uint64) + np.uint64(1)
    out: npt.NDArray[np.uint64] = h[unit[:m] == unit[n - 1 : n - 1 + m]]
    return out


def _hash_of(words: Sequence[int]) -> np.uint64:
    h = np.uint64(0)
    with np.errstate(over="ignore"):
        for w in words:
            h = h * _PRIME + np.uint64(w) + np.uint64(1)
    return h


def build_index(spans: Spans, text: Text) -> TrainIndex:
    """The index of a training corpus read into spans over its text."""
    strings = [key(s) for s in text.mentions(spans.start, spans.end)]
    types: dict[str, dict[str, int]] = {}
    for s, t in zip(strings, spans.type.tolist(), strict=True):
        if s:
            by_type = types.setdefault(s, {})
            by_type[spans.types[t]] = by_type.get(spans.types[t], 0) + 1
    words_of_units = [c.lower().split() for c in text.contexts()]
    ids_of: dict[str, int] = {}
    flat = [ids_of.setdefault(w, len(ids_of)) for ws in words_of_units for w in ws]
    ids = np.asarray(flat, dtype=np.int64)
    unit = np.repeat(np.arange(len(words_of_units)), [len(ws) for ws in words_of_units])
    occurrences: dict[str, int] = {}
    by_length: dict[int, list[str]] = {}
    for s in types:
        by_length.setdefault(len(s.split()), []).append(s)
    for n, group in by_length.items():
        hashes = np.array([_hash_of([ids_of.get(w, -2) for w in s.split()]) for s in group], dtype=np.uint64)
        found, counts = np.unique(_ngram_hashes(ids, unit, n), return_counts=True)
        at = np.searchsorted(found, hashes)
        hit = (at < found.shape[0]) & (found[np.minimum(at, max(found.shape[0] - 1, 0))] == hashes)
        for s, h, a in zip(group, hit.tolist(), at.tolist(), strict=True):
            # A mention the tokenisation splits differently (character offsets) still occurs.
            occurrences[s] = max(int(counts[a]) if h else 0, sum(types[s].values()))
    return TrainIndex(types, occurrences, frozenset(ids_of))


def _unit_words(text: Text) -> list[list[str]]:
    return [c.split() for c in text.contexts()]


@dataclass
class _Context:
    """What sentence attributes read, made once per chunk."""

    words: list[list[str]]
    reference: Spans

    def lengths(self) -> FloatArray:
        return np.array([len(w) for w in self.words], dtype=np.float64)


def _sentence_values(name: str, ctx: _Context, index: TrainIndex | None) -> FloatArray:
    lengths = ctx.lengths()
    if name == "sentence-length":
        return lengths
    safe = np.where(lengths > 0, lengths, 1)
    if name == "density":
        per_unit = np.bincount(ctx.reference.unit, minlength=lengths.shape[0]).astype(np.float64)
        return per_unit / safe
    assert index is not None  # oov: checked where the attributes are chosen
    vocabulary = index.vocabulary
    unseen = np.array([sum(w.lower() not in vocabulary for w in ws) for ws in ctx.words], dtype=np.float64)
    return unseen / safe


def _mention_buckets(a: Attribute, spans: Spans, text: Text, index: TrainIndex | None) -> IntArray:
    if a.name == "length":
        return a.assign((spans.end - spans.start).astype(np.float64))
    assert index is not None  # seen, consistency, frequency: checked where the attributes are chosen
    strings = [key(s) for s in text.mentions(spans.start, spans.end)]
    names = [spans.types[t] for t in spans.type.tolist()]
    if a.name == "seen":
        out = [
            2 if not (by := index.types.get(s)) else (0 if t in by else 1) for s, t in zip(strings, names, strict=True)
        ]
        return np.asarray(out, dtype=np.int64).reshape(-1)
    if a.name == "frequency":
        values = [sum(index.types.get(s, {}).values()) for s in strings]
        return a.assign(np.asarray(values, dtype=np.float64).reshape(-1))
    # consistency: the share of the string's occurrences in TRAIN that are mentions of this type
    unseen = len(a.labels) - 1
    share = np.array(
        [
            index.types[s].get(t, 0) / max(index.occurrences.get(s, 1), 1) if s in index.types else -1.0
            for s, t in zip(strings, names, strict=True)
        ],
        dtype=np.float64,
    ).reshape(-1)
    out_array = a.assign(share)
    out_array[share < 0] = unseen
    return out_array


def assign(
    attributes: Sequence[Attribute], reference: Spans, predicted: Spans, text: Text, index: TrainIndex | None
) -> list[tuple[IntArray, IntArray]]:
    """For each attribute, the bucket of every reference and every predicted mention."""
    ctx: _Context | None = None
    out = []
    for a in attributes:
        if a.name in SENTENCE_ATTRIBUTES:
            if ctx is None:
                ctx = _Context(_unit_words(text), reference)
            per_unit = a.assign(_sentence_values(a.name, ctx, index))
            out.append((per_unit[reference.unit], per_unit[predicted.unit]))
        else:
            out.append((_mention_buckets(a, reference, text, index), _mention_buckets(a, predicted, text, index)))
    return out
