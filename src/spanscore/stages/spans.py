"""Mentions as columns of integers: the data every later stage works on.

Positions are global: token offsets counted over the whole corpus (CoNLL) or character offsets
with each document shifted past the previous one (JSONL). Two mentions can then overlap only if
they lie in the same sentence or document, and overlap tests need no document ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..runtime.records import record

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@record
class Pieces:
    """The fragments of a span set's discontinuous mentions: fragment ``k`` of mention
    ``owner[k]`` covers ``[start[k], end[k])``. Sorted by (owner, start); fragments of one mention
    neither overlap nor touch, and a mention has two or more of them, running from its start to
    its end. A mention with no fragment here is continuous: its one fragment is its extent."""

    owner: IntArray
    start: IntArray
    end: IntArray

    @staticmethod
    def of(owner: IntArray, start: IntArray, end: IntArray) -> Pieces | None:
        """Fragments as given (any order; overlapping or touching ones are joined, since they
        leave no character out), None when no mention keeps two or more."""
        if owner.shape[0] == 0:
            return None
        order = np.lexsort((start, owner))
        owner, start, end = owner[order], start[order], end[order]
        # The furthest end of a mention's fragments so far: a running maximum that restarts at each
        # mention (owners are sorted, so owner * stride + end only grows across mentions).
        stride = int(end.max()) + 1
        reach = np.maximum.accumulate(owner * stride + end) - owner * stride
        new = np.ones(owner.shape[0], dtype=bool)
        new[1:] = (owner[1:] != owner[:-1]) | (start[1:] > reach[:-1])
        run = np.cumsum(new) - 1
        first = np.flatnonzero(new)
        last_end = np.zeros(first.shape[0], dtype=np.int64)
        np.maximum.at(last_end, run, reach)
        o, s, e = owner[first], start[first], last_end
        several = np.bincount(o)[o] > 1
        if not several.any():
            return None
        return Pieces(o[several].astype(np.int64), s[several].astype(np.int64), e[several].astype(np.int64))

    def renumbered(self, new_index: IntArray) -> Pieces | None:
        """The fragments with mention ``i`` renamed ``new_index[i]`` (-1: dropped)."""
        owner = new_index[self.owner]
        keep = owner >= 0
        if not keep.any():
            return None
        owner, start, end = owner[keep], self.start[keep], self.end[keep]
        order = np.lexsort((start, owner))
        return Pieces(owner[order], start[order], end[order])


@record
class Spans:
    """Mentions sorted by (start, end, type); ``unit`` is the sentence or document of each.

    ``pieces`` holds the fragments of discontinuous mentions (None: every mention is continuous);
    ``start`` and ``end`` are then a mention's extent, from its first fragment to its last.
    Where the input has nesting levels, ``level`` is each mention's (an index into ``levels``,
    their names); it takes no part in matching, only in what the report rows show."""

    start: IntArray
    end: IntArray
    type: IntArray  # index into ``types``
    unit: IntArray
    types: tuple[str, ...]
    pieces: Pieces | None = None
    level: IntArray | None = None
    levels: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.start.shape[0])

    @staticmethod
    def build(
        start: IntArray,
        end: IntArray,
        type_: IntArray,
        unit: IntArray,
        types: Sequence[str],
        pieces: Pieces | None = None,
        *,
        level: IntArray | None = None,
        levels: Sequence[str] = (),
    ) -> Spans:
        if bool((start[1:] > start[:-1]).all()):  # distinct starts in order (decoded labels): sorted
            return Spans(
                start=np.ascontiguousarray(start, dtype=np.int64),
                end=np.ascontiguousarray(end, dtype=np.int64),
                type=np.ascontiguousarray(type_, dtype=np.int64),
                unit=np.ascontiguousarray(unit, dtype=np.int64),
                types=tuple(types),
                pieces=pieces,
                level=None if level is None else np.ascontiguousarray(level, dtype=np.int64),
                levels=tuple(levels),
            )
        # Mentions of one extent and type at two levels: the outer first, whatever the input's order.
        order = np.lexsort((type_, end, start)) if level is None else np.lexsort((level, type_, end, start))
        if pieces is not None:
            new_index = np.empty(order.shape[0], dtype=np.int64)
            new_index[order] = np.arange(order.shape[0], dtype=np.int64)
            pieces = pieces.renumbered(new_index)
        return Spans(
            start=np.ascontiguousarray(start[order], dtype=np.int64),
            end=np.ascontiguousarray(end[order], dtype=np.int64),
            type=np.ascontiguousarray(type_[order], dtype=np.int64),
            unit=np.ascontiguousarray(unit[order], dtype=np.int64),
            types=tuple(types),
            pieces=pieces,
            level=None if level is None else np.ascontiguousarray(level[order], dtype=np.int64),
            levels=tuple(levels),
        )

    def discontinuous(self) -> BoolArray:
        """Which mentions have several fragments."""
        out = np.zeros(len(self), dtype=bool)
        if self.pieces is not None:
            out[self.pieces.owner] = True
        return out

    def without_pieces(self) -> Spans:
        """Every mention read as its extent."""
        if self.pieces is None:
            return self
        return Spans(self.start, self.end, self.type, self.unit, self.types, level=self.level, levels=self.levels)

    def fragment_table(self) -> tuple[IntArray, IntArray, IntArray]:
        """Every mention's fragments (a continuous one's extent): fragments ``ptr[i]:ptr[i + 1]``
        of ``start`` and ``end`` are mention ``i``'s, in order."""
        n = len(self)
        if self.pieces is None:
            return np.arange(n + 1, dtype=np.int64), self.start, self.end
        alone = ~self.discontinuous()
        owner = np.concatenate((np.flatnonzero(alone), self.pieces.owner))
        start = np.concatenate((self.start[alone], self.pieces.start))
        end = np.concatenate((self.end[alone], self.pieces.end))
        order = np.lexsort((start, owner))
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
        return ptr, start[order].astype(np.int64), end[order].astype(np.int64)

    def covered(self) -> IntArray:
        """How many units (tokens or characters) each mention's fragments cover."""
        if self.pieces is None:
            out: IntArray = self.end - self.start
            return out
        ptr, start, end = self.fragment_table()
        return np.add.reduceat(end - start, ptr[:-1]) if len(self) else self.end - self.start

    def expanded(self) -> tuple[Spans, IntArray]:
        """Each fragment as a mention of its own (continuous mentions as they are), and the
        mention each comes from."""
        if self.pieces is None:
            return self, np.arange(len(self), dtype=np.int64)
        ptr, start, end = self.fragment_table()
        owner = np.repeat(np.arange(len(self), dtype=np.int64), np.diff(ptr))
        order = np.lexsort((self.type[owner], end, start))
        owner = owner[order]
        spans = Spans(start[order], end[order], self.type[owner], self.unit[owner], self.types)
        return spans, owner

    @staticmethod
    def empty(types: Sequence[str] = ()) -> Spans:
        z = np.zeros(0, dtype=np.int64)
        return Spans(z, z, z, z, tuple(types))

    def with_types(self, types: Sequence[str]) -> Spans:
        """Re-index onto a vocabulary that contains every type used here."""
        types = tuple(types)
        if types == self.types:
            return self
        index = {t: i for i, t in enumerate(types)}
        remap = np.array([index[t] for t in self.types], dtype=np.int64)
        new_type = remap[self.type] if len(self) else self.type
        return Spans.build(
            self.start, self.end, new_type, self.unit, types, self.pieces, level=self.level, levels=self.levels
        )

    def select(self, keep: npt.NDArray[np.bool_]) -> Spans:
        pieces = None
        if self.pieces is not None:
            new_index = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
            pieces = self.pieces.renumbered(new_index)
        # The kept positions found once, not once per column by each boolean index.
        at = np.flatnonzero(keep)
        level = None if self.level is None else self.level.take(at)
        start, end, type_, unit = self.start.take(at), self.end.take(at), self.type.take(at), self.unit.take(at)
        return Spans(start, end, type_, unit, self.types, pieces, level=level, levels=self.levels)

    def map_types(self, mapping: Mapping[str, str | None], keep: Iterable[str] | None = None) -> Spans:
        """Rename types (a type mapped to None or "O" is dropped), then keep only ``keep``."""
        renamed = [mapping.get(t, t) for t in self.types]
        renamed = [None if r in (None, "", "O") else r for r in renamed]
        wanted = None if keep is None else set(keep)
        final = [r if r is not None and (wanted is None or r in wanted) else None for r in renamed]
        names = sorted({r for r in final if r is not None})
        index = {t: i for i, t in enumerate(names)}
        remap = np.array([index[r] if r is not None else -1 for r in final] or [-1], dtype=np.int64)
        new_type = remap[self.type] if len(self) else self.type
        keep_mask = new_type >= 0
        kept = self.select(keep_mask)
        return Spans.build(
            kept.start, kept.end, new_type[keep_mask], kept.unit, names, kept.pieces,
            level=kept.level, levels=kept.levels,
        )


def union_types(*spans: Spans) -> tuple[str, ...]:
    return tuple(sorted({t for s in spans for t in s.types}))


def type_counts(spans: Spans, n_types: int) -> IntArray:
    return np.bincount(spans.type, minlength=n_types).astype(np.int64)


def unify(reference: Spans, predicted: Spans) -> tuple[Spans, Spans]:
    """Both sides over one type table (the union of theirs)."""
    types = union_types(reference, predicted)
    return reference.with_types(types), predicted.with_types(types)
