"""Every criterion as a table from pair kind to level.

Kinds are the three bits of ``matching``: same type (1), same start (2), same end (4).
"""

from __future__ import annotations

import numpy as np

from ..results import ErrorKey
from ..runtime.records import record
from .matching import (
    EXACT,
    FULL,
    NO_CREDIT,
    NOT_ELIGIBLE,
    PARTIAL,
    SAME_END,
    SAME_SPAN,
    SAME_START,
    SAME_TYPE,
)
from .spans import IntArray

_SAME_TYPE_OVERLAP = (SAME_TYPE, SAME_TYPE | SAME_START, SAME_TYPE | SAME_END)
_WRONG_TYPE_OVERLAP = (0, SAME_START, SAME_END)


@record
class Criterion:
    """A matching criterion: the credit level it gives each kind of pair."""

    name: str
    table: tuple[int, ...]  # level of each of the 8 kinds
    fixed_half: bool = False  # SemEval's partial scheme always gives PAR 0.5

    def levels(self, kind: IntArray) -> IntArray:
        return np.asarray(self.table, dtype=np.int64)[kind]


def _table(levels: dict[int, int], default: int = NOT_ELIGIBLE) -> tuple[int, ...]:
    return tuple(levels.get(k, default) for k in range(8))


# The criteria of Kong and Sullivan: P = (full + credit x partial) / predictions, R = ... / references.
STRICT = Criterion("strict", _table({EXACT: FULL}))
BOUNDARY = Criterion("boundary", _table({EXACT: FULL, SAME_SPAN: FULL}))
LEFT = Criterion("left", _table({EXACT: FULL, SAME_TYPE | SAME_START: PARTIAL}))
RIGHT = Criterion("right", _table({EXACT: FULL, SAME_TYPE | SAME_END: PARTIAL}))
OVERLAP = Criterion("overlap", _table({EXACT: FULL, **dict.fromkeys(_SAME_TYPE_OVERLAP, PARTIAL)}))
# Judge-refined Type-5 pairs (Nejadgholi et al. 2020); the judge supplies each pair's credit.
LEARNED = Criterion("learned", _table({EXACT: FULL, **dict.fromkeys(_SAME_TYPE_OVERLAP, PARTIAL)}))

# SemEval-2013 (Segura-Bedmar et al. 2013; the MUC categories of Chinchor and Sundheim 1993): every
# overlapping pair may be matched; unmatched ones are MIS / SPU.
SEMEVAL_STRICT = Criterion("strict", _table({EXACT: FULL}, default=NO_CREDIT))
SEMEVAL_EXACT = Criterion("exact", _table({EXACT: FULL, SAME_SPAN: FULL}, default=NO_CREDIT))
SEMEVAL_PARTIAL = Criterion("partial", _table({EXACT: FULL, SAME_SPAN: FULL}, default=PARTIAL), fixed_half=True)
SEMEVAL_TYPE = Criterion("type", _table({EXACT: FULL, **dict.fromkeys(_SAME_TYPE_OVERLAP, FULL)}, default=NO_CREDIT))

CRITERIA: tuple[Criterion, ...] = (STRICT, BOUNDARY, LEFT, RIGHT, OVERLAP)
SCHEMES: tuple[Criterion, ...] = (SEMEVAL_STRICT, SEMEVAL_EXACT, SEMEVAL_PARTIAL, SEMEVAL_TYPE)
# The error taxonomy reads the pairs of the SemEval 'type' matching (same type preferred).
TAXONOMY = SEMEVAL_TYPE

RIGHT_LABEL_OVERLAP_KINDS = _SAME_TYPE_OVERLAP
WRONG_LABEL_OVERLAP_KINDS = _WRONG_TYPE_OVERLAP

# The error taxonomy's name for a matched pair of each kind (None: correct).
ERROR_OF_KIND: tuple[str | None, ...] = tuple(
    None
    if k == EXACT
    else "wrong_label_same_span"
    if k == SAME_SPAN
    else "wrong_label_overlap"
    if k in WRONG_LABEL_OVERLAP_KINDS
    else "right_label_overlap"
    for k in range(8)
)


def error_kind(kind: int) -> str | None:
    """What is wrong with a matched pair of this kind under the error taxonomy (None: nothing)."""
    return ERROR_OF_KIND[kind]

# The error taxonomy of Nejadgholi et al. (2020): (key in report["errors"], code, description).
ERROR_TAXONOMY: tuple[tuple[ErrorKey, str, str], ...] = (
    ("correct", "", "correct: same span and type"),
    ("false_positive", "Type-1", "false positive: the prediction matches no reference"),
    ("false_negative", "Type-2", "false negative: the reference is not predicted"),
    ("wrong_label_same_span", "Type-3", "wrong label, same span"),
    ("wrong_label_overlap", "Type-4", "wrong label, overlapping span"),
    ("right_label_overlap", "Type-5", "right label, overlapping span"),
)
ERROR_CODE: dict[str, str] = {key: code for key, code, _ in ERROR_TAXONOMY}
