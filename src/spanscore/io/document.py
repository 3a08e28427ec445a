"""The one document type: what spanscore's JSONL, every annotation tool's format and the located
strings are read into, and what the format writers take."""

from __future__ import annotations

from dataclasses import dataclass, field

Span = tuple[int, int, str]
Fragments = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Document:
    """One annotated document: character offsets into ``text``, end exclusive.

    ``fragments`` is empty when no mention is discontinuous; otherwise it has one entry per span:
    the pieces of a discontinuous mention (BRAT), None for a continuous one. ``line`` is where the
    document was read, for messages: its line in a JSONL file, 0 where the format has no lines
    (a BRAT folder, a JSON list). It takes no part in equality, so that the same document read
    from two files compares equal.
    """

    id: str
    text: str
    spans: tuple[Span, ...]
    fragments: tuple[Fragments | None, ...] = ()
    line: int = field(default=0, compare=False)


__all__ = ["Document", "Fragments", "Span"]
