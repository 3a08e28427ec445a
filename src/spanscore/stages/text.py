"""What mentions point into, as the counting stages see it: a text that renders a mention or its
unit (``Text``, implemented by the readers), and what a repair policy changed while reading
(``Repaired``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .spans import IntArray


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


@dataclass(frozen=True)
class Repaired:
    """How many invalid transitions a repair policy read its way in one file, and the first's line."""

    path: str
    count: int = 0
    first_line: int | None = None

    def then(self, later: Repaired) -> Repaired:
        first = self.first_line if self.first_line is not None else later.first_line
        return Repaired(self.path, self.count + later.count, first)
