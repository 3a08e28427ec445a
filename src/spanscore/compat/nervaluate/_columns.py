"""Entities as columns of integers, and label sequences decoded into them by spanscore's decoder.

``Columns`` holds one side (the reference or the predictions): every entity of every document, in
(document, list position) order, so that ``Evaluator`` never needs an ``Entity`` object to score a
corpus; ``entities()`` makes nervaluate's lists of ``Entity`` when someone asks for them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, count, pairwise
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ...stages.encoding import ENCODINGS, B, I, LabelSet, decode
from ...stages.spans import IntArray
from ._errors import InputValueError
from .entities import Entity

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Columns:
    """One side's entities: entity ``k`` of document ``d`` is row ``offsets[d] + k``; ``start`` and
    ``end`` are token positions in the document, both inclusive; ``label`` indexes ``labels``."""

    offsets: IntArray  # n_docs + 1
    start: IntArray
    end: IntArray
    label: IntArray
    labels: tuple[Any, ...]

    @property
    def n_docs(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def doc(self) -> IntArray:
        """The document of each row."""
        return np.repeat(np.arange(self.n_docs, dtype=np.int64), np.diff(self.offsets))

    def entities(self, rows: IntArray | None = None) -> list[Entity]:
        """``Entity`` objects of the given rows (all rows: ``None``), in order."""
        if rows is None:
            label, start, end = self.label, self.start, self.end
        else:
            label, start, end = self.label[rows], self.start[rows], self.end[rows]
        names = [self.labels[k] for k in label.tolist()] if len(self.labels) > 1 else [*self.labels] * len(label)
        return list(map(Entity, names, start.tolist(), end.tolist()))

    def documents(self) -> list[list[Entity]]:
        """nervaluate's form: a list of entities per document."""
        flat = self.entities()
        bounds = self.offsets.tolist()
        return [flat[a:b] for a, b in pairwise(bounds)]

    def first_seen(self) -> list[Any]:
        """The distinct labels in the order they first occur."""
        if not len(self):
            return []
        used, first = np.unique(self.label, return_index=True)
        return [self.labels[k] for k in used[np.argsort(first)].tolist()]


def no_documents() -> Columns:
    return Columns(np.zeros(1, dtype=np.int64), _EMPTY, _EMPTY, _EMPTY, ())


def from_triples(triples: Sequence[Sequence[tuple[Any, Any, Any]]]) -> Columns | None:
    """Columns of ``(label, start, end)`` per document; None where positions are not integers that
    fit 64 bits or a label cannot be a dictionary key (the caller then works on the objects)."""
    lengths = np.fromiter(map(len, triples), dtype=np.int64, count=len(triples))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    flat = list(chain.from_iterable(triples))
    if not flat:
        return Columns(offsets, _EMPTY, _EMPTY, _EMPTY, ())
    labels, starts, ends = zip(*flat, strict=True)
    return _columns(offsets, labels, starts, ends)


def from_entities(docs: Sequence[Sequence[Any]]) -> Columns | None:
    """Columns of lists of entities (anything with ``label``, ``start`` and ``end``); None as
    ``from_triples``."""
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    flat = list(chain.from_iterable(docs))
    if not flat:
        return Columns(offsets, _EMPTY, _EMPTY, _EMPTY, ())
    return _columns(
        offsets,
        list(map(attrgetter("label"), flat)),
        list(map(attrgetter("start"), flat)),
        list(map(attrgetter("end"), flat)),
    )


def _columns(offsets: IntArray, labels: Iterable[Any], starts: Sequence[Any], ends: Sequence[Any]) -> Columns | None:
    codes: defaultdict[Any, int] = defaultdict(count().__next__)
    try:
        label = np.fromiter(map(codes.__getitem__, labels), dtype=np.int64, count=len(starts))
        start, end = np.asarray(starts), np.asarray(ends)
    except (TypeError, ValueError, OverflowError):
        return None
    if start.dtype.kind not in "biu" or end.dtype.kind not in "biu":
        return None
    return Columns(offsets, start.astype(np.int64), end.astype(np.int64), label, tuple(codes))


# --------------------------------------------------------------------------------------------
# Label sequences.


def tag_ids(docs: Sequence[Sequence[Any]]) -> tuple[IntArray, IntArray, list[Any]] | None:
    """Each tag's index into the distinct tags (in order of first occurrence), and each document's
    length; None if a tag cannot be a dictionary key."""
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    codes: defaultdict[Any, int] = defaultdict(count().__next__)
    try:
        ids = np.fromiter(map(codes.__getitem__, chain.from_iterable(docs)), dtype=np.int64, count=int(lengths.sum()))
    except TypeError:
        return None
    return ids, lengths, list(codes)


def decode_tags(ids: IntArray, lengths: IntArray, vocab: Sequence[str], check_starts: bool = True) -> Columns:
    """The entities of label sequences as nervaluate reads them, decoded by spanscore.

    nervaluate reads a tag other than ``O`` as of type ``tag[2:]``; it starts an entity after
    ``O``, at a document's start, where the type changes, and where its first letter is ``B``,
    and otherwise goes on with the entity before it. That is the conlleval chunk rule of BIO with
    each tag read as ``B-`` if it begins with ``B`` and as ``I-`` otherwise, which spanscore's
    decoder runs on arrays. With ``check_starts``, a tag that starts an entity without the prefix
    ``B-`` or ``I-`` raises nervaluate's error (the loaders do; ``collect_named_entities`` does not).
    """
    types: dict[str, int] = {}
    prefix = np.zeros(len(vocab), dtype=np.int64)
    type_of = np.full(len(vocab), -1, dtype=np.int64)
    for k, tag in enumerate(vocab):
        if tag != "O":
            prefix[k] = B if tag[:1] == "B" else I
            type_of[k] = types.setdefault(tag[2:], len(types))
    labels = LabelSet(prefix, type_of, tuple(types))
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    spans = decode(ids, bounds, labels, ENCODINGS["BIO"], "conlleval").spans
    if check_starts:
        bad = np.flatnonzero(~_may_start(vocab)[ids[spans.start]])
        if bad.shape[0]:
            raise InputValueError(f"Invalid tag format: {vocab[int(ids[spans.start[bad[0]]])]}")
    base = bounds[spans.unit]
    per_doc = np.bincount(spans.unit, minlength=lengths.shape[0])
    return Columns(
        np.concatenate(([0], np.cumsum(per_doc))), spans.start - base, spans.end - 1 - base, spans.type, tuple(types)
    )


def _may_start(vocab: Sequence[str]) -> npt.NDArray[np.bool_]:
    return np.array([tag == "O" or tag.startswith(("B-", "I-")) for tag in vocab] or [True], dtype=bool)


def read_tags(tokens: Iterable[Any], check_starts: bool) -> list[tuple[Any, int, int]]:
    """nervaluate's reading of one tag sequence, one tag at a time, for input that ``decode_tags``
    does not take (tags that are not strings): ``(label, start, end)`` of each entity, and the
    error nervaluate meets where it meets it."""
    found: list[tuple[Any, int, int]] = []
    open_type: Any = None
    begun = 0
    n = 0
    for n, tag in enumerate(tokens, 1):
        at = n - 1
        if tag == "O":
            if open_type is not None:
                found.append((open_type, begun, at - 1))
                open_type = None
            continue
        if open_type is not None and open_type == tag[2:] and tag[:1] != "B":
            continue
        if open_type is not None:
            found.append((open_type, begun, at - 1))
        if check_starts and not (tag.startswith("B-") or tag.startswith("I-")):
            raise InputValueError(f"Invalid tag format: {tag}")
        open_type, begun = tag[2:], at
    if open_type is not None:
        found.append((open_type, begun, n - 1))
    return found
