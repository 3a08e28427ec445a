"""Mentions as columns of integers: the data every later stage works on.

Positions are global: token offsets counted over the whole corpus (CoNLL) or character offsets
with each document shifted past the previous one (JSONL). Two mentions can then overlap only if
they lie in the same sentence or document, and overlap tests need no document ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Spans:
    """Mentions sorted by (start, end, type); ``unit`` is the sentence or document of each.

    Where the input has nesting levels, ``level`` is each mention's (an index into ``levels``,
    their names); it takes no part in matching, only in what the report rows show."""

    start: IntArray
    end: IntArray
    type: IntArray  # index into ``types``
    unit: IntArray
    types: tuple[str, ...]
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
                level=None if level is None else np.ascontiguousarray(level, dtype=np.int64),
                levels=tuple(levels),
            )
        # Mentions of one extent and type at two levels: the outer first, whatever the input's order.
        order = np.lexsort((type_, end, start)) if level is None else np.lexsort((level, type_, end, start))
        return Spans(
            start=np.ascontiguousarray(start[order], dtype=np.int64),
            end=np.ascontiguousarray(end[order], dtype=np.int64),
            type=np.ascontiguousarray(type_[order], dtype=np.int64),
            unit=np.ascontiguousarray(unit[order], dtype=np.int64),
            types=tuple(types),
            level=None if level is None else np.ascontiguousarray(level[order], dtype=np.int64),
            levels=tuple(levels),
        )

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
        return Spans.build(self.start, self.end, new_type, self.unit, types, level=self.level, levels=self.levels)

    def select(self, keep: npt.NDArray[np.bool_]) -> Spans:
        level = None if self.level is None else self.level[keep]
        start, end, type_, unit = self.start[keep], self.end[keep], self.type[keep], self.unit[keep]
        return Spans(start, end, type_, unit, self.types, level=level, levels=self.levels)

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
        level = None if self.level is None else self.level[keep_mask]
        start, end, unit = self.start[keep_mask], self.end[keep_mask], self.unit[keep_mask]
        return Spans.build(start, end, new_type[keep_mask], unit, names, level=level, levels=self.levels)


def union_types(*spans: Spans) -> tuple[str, ...]:
    return tuple(sorted({t for s in spans for t in s.types}))


def type_counts(spans: Spans, n_types: int) -> IntArray:
    return np.bincount(spans.type, minlength=n_types).astype(np.int64)


def unify(reference: Spans, predicted: Spans) -> tuple[Spans, Spans]:
    """Both sides over one type table (the union of theirs)."""
    types = union_types(reference, predicted)
    return reference.with_types(types), predicted.with_types(types)
