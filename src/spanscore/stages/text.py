"""What mentions point into, as the counting stages see it: a text that renders a mention or its
unit (``Text``, implemented by the readers), and what a repair policy changed while reading
(``Repaired``)."""

from __future__ import annotations

import itertools
import operator
from typing import Protocol

import numpy as np

from ..runtime.records import record
from .spans import IntArray, Spans


class Text(Protocol):
    """Where mentions point: renders a mention or its sentence as a string."""

    unit_kind: str

    def unit_starts(self) -> IntArray:
        """Where each unit starts: a mention's position within its unit is its position minus this."""
        ...

    def mention(self, start: int, end: int) -> str: ...

    def mentions(self, start: IntArray, end: IntArray) -> list[str]:
        """``mention`` of many spans at once."""
        ...

    def context(self, unit: int) -> str: ...

    def contexts(self) -> list[str]:
        """``context`` of every unit."""
        ...

    def local(self, unit: int, position: int) -> int: ...


@record
class Repaired:
    """How many invalid transitions a repair policy read its way in one file, and the first's line."""

    path: str
    count: int = 0
    first_line: int | None = None

    def then(self, later: Repaired) -> Repaired:
        first = self.first_line if self.first_line is not None else later.first_line
        return Repaired(self.path, self.count + later.count, first)


# Between the fragments of a discontinuous mention where it is shown: the words of its gaps are
# not the mention's, so it reads "word1 … word2", never its extent.
FRAGMENT_GAP = " … "


def mention_texts(text: Text, spans: Spans, gap: str = FRAGMENT_GAP) -> list[str]:
    """Each mention's words as ``Text.mentions`` renders them; a discontinuous mention's
    fragments joined by ``gap``."""
    out = text.mentions(spans.start, spans.end)
    pieces = spans.pieces
    if pieces is None:
        return out
    words = text.mentions(pieces.start, pieces.end)
    for owner, group in itertools.groupby(zip(pieces.owner.tolist(), words, strict=True), key=operator.itemgetter(0)):
        out[owner] = gap.join(w for _, w in group)
    return out


def mention_text(text: Text, spans: Spans, i: int, gap: str = FRAGMENT_GAP) -> str:
    """``mention_texts`` of mention ``i`` alone."""
    pieces = spans.pieces
    if pieces is not None:
        lo, hi = np.searchsorted(pieces.owner, [i, i + 1])
        if hi > lo:
            return gap.join(
                text.mention(int(a), int(b)) for a, b in zip(pieces.start[lo:hi], pieces.end[lo:hi], strict=True)
            )
    return text.mention(int(spans.start[i]), int(spans.end[i]))
