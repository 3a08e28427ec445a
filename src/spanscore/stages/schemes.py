"""The label encodings' rules and the repair policies' names, as plain data without numpy.

What the command line offers as choices and what ``Reading`` checks names against: a command's
``--help`` and the options objects load this, not the array code of ``stages.encoding`` that
decodes with these rules (and re-exports every name here).
"""

from __future__ import annotations

from typing import Literal

from ..errors import OptionError
from ..runtime.records import record

Repair = Literal["conlleval", "discard", "none"]
REPAIRS: tuple[str, ...] = ("conlleval", "discard", "none")

# Prefix codes shared by every encoding (BILOU's L and U are E and S, BMES's M is I).
O, B, I, E, S = 0, 1, 2, 3, 4  # noqa: E741
_LETTER = {O: "O", B: "B", I: "I", E: "E", S: "S"}


@record
class EncodingSpec:
    """A tagging scheme: its prefixes and which prefixes may stand next to each."""

    name: str
    prefixes: dict[str, int]  # written prefix -> code
    needs_prev: dict[int, frozenset[int]]  # code -> prefixes allowed just before it (same type)
    needs_next: dict[int, frozenset[int]]  # code -> prefixes allowed just after it (same type)

    def letter(self, code: int) -> str:
        for written, c in self.prefixes.items():
            if c == code:
                return written
        raise OptionError(f"encoding {self.name} has no prefix for {_LETTER[code]}")


_BI = frozenset({B, I})
_IE = frozenset({I, E})
_BIOES_NEEDS_PREV = {I: _BI, E: _BI}
_BIOES_NEEDS_NEXT = {B: _IE, I: _IE}

ENCODINGS: dict[str, EncodingSpec] = {
    "IO": EncodingSpec("IO", {"I": I}, {}, {}),
    "IOB1": EncodingSpec("IOB1", {"B": B, "I": I}, {B: _BI}, {}),
    "BIO": EncodingSpec("BIO", {"B": B, "I": I}, {I: _BI}, {}),
    "IOE1": EncodingSpec("IOE1", {"I": I, "E": E}, {}, {E: _IE}),
    "IOE2": EncodingSpec("IOE2", {"I": I, "E": E}, {}, {I: _IE}),
    "BIOES": EncodingSpec("BIOES", {"B": B, "I": I, "E": E, "S": S}, _BIOES_NEEDS_PREV, _BIOES_NEEDS_NEXT),
    "BILOU": EncodingSpec("BILOU", {"B": B, "I": I, "L": E, "U": S}, _BIOES_NEEDS_PREV, _BIOES_NEEDS_NEXT),
    "BMES": EncodingSpec("BMES", {"B": B, "M": I, "E": E, "S": S}, _BIOES_NEEDS_PREV, _BIOES_NEEDS_NEXT),
}
ALIASES = {"IOB2": "BIO", "IOBES": "BIOES", "IOB": "IOB1"}


def get_encoding(name: str) -> EncodingSpec:
    key = ALIASES.get(name.upper(), name.upper())
    if key not in ENCODINGS:
        known = ", ".join([*ENCODINGS, *ALIASES])
        raise OptionError(f"unknown label encoding {name!r}: use one of {known}")
    return ENCODINGS[key]


def check_repair(repair: str) -> Repair:
    if repair not in REPAIRS:
        raise OptionError(f"unknown repair policy {repair!r}: use conlleval, discard or none")
    return repair  # type: ignore[return-value]
