"""The interface between the matching engine and a learned judge of boundary mismatches (Nejadgholi et al. 2020).

A judge sees each right-label/overlapping pair as a ``Mismatch`` and returns the probability that
a user accepts the prediction. The core only defines this interface; backends live in
``spanscore.programs.judge`` (optional extras).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from .counts import LearnedCredit
from .matching import Pairs
from .spans import IntArray, Spans
from .text import Text, mention_text

FloatArray = npt.NDArray[np.float64]
JudgeCredit = Literal["accept", "probability"]
# A judge reads a discontinuous mention as its fragments' words, one space between fragments:
# never the words of its gaps, and no mark a judge's word features would count as a word.
JUDGE_GAP = " "


@dataclass(frozen=True)
class Mismatch:
    """A predicted mention whose type is right and whose span overlaps, but differs from, the gold one."""

    predicted_text: str
    label: str
    reference_text: str
    context: str
    relation: str  # "longer", "shorter" or "shifted"
    same_start: bool
    same_end: bool


class Judge(Protocol):
    def accept_probability(self, items: Sequence[Mismatch]) -> FloatArray: ...


def learned_credit(
    judge: Judge, reference: Spans, predicted: Spans, text: Text, mode: JudgeCredit = "accept", threshold: float = 0.5
) -> LearnedCredit:
    """Wrap a judge as the per-pair credit function the counting stage calls."""

    def credit(pairs: Pairs, which: IntArray) -> FloatArray:
        rel = pairs.relation()
        items = []
        for k in which.tolist():
            r, p = int(pairs.ref[k]), int(pairs.pred[k])
            items.append(
                Mismatch(
                    predicted_text=mention_text(text, predicted, p, gap=JUDGE_GAP),
                    label=predicted.types[int(predicted.type[p])],
                    reference_text=mention_text(text, reference, r, gap=JUDGE_GAP),
                    context=text.context(int(reference.unit[r])),
                    relation=("same", "longer", "shorter", "shifted")[int(rel[k])],
                    same_start=bool(pairs.kind[k] & 2),
                    same_end=bool(pairs.kind[k] & 4),
                )
            )
        prob = np.asarray(judge.accept_probability(items), dtype=np.float64)
        if prob.shape != (len(items),):
            raise ValueError(f"judge returned {prob.shape} probabilities for {len(items)} mismatches")
        return prob if mode == "probability" else (prob >= threshold).astype(np.float64)

    return credit
