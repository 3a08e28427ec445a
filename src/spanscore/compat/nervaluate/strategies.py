"""nervaluate 1.2.1's ``nervaluate.strategies``: the four schemes on one document's entity lists.

Each strategy walks the predictions in list order; a prediction takes a reference that is still
free and that it overlaps by ``min_overlap_percentage`` of the reference's length at least (a
same-span one, under ``strict`` also same-type, is taken wherever it stands in the list; otherwise
the first; under ``ent_type`` the same-type one with the closest boundaries, otherwise the first
of another type). Which reference a prediction takes so depends on the order of both lists: that
is nervaluate's matching, reproduced here as it is, for ``Evaluator`` to give nervaluate's figures.
spanscore's own API pairs mentions one to one whatever their order (docs/criteria.md).

>>> true = [Entity("PER", 0, 2)]
>>> StrictEvaluation().evaluate(true, [Entity("PER", 0, 0), Entity("PER", 0, 2)], ["PER"])[0].correct
0
>>> StrictEvaluation().evaluate(true, [Entity("PER", 0, 2), Entity("PER", 0, 0)], ["PER"])[0].correct
1
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ._errors import OptionValueError
from .entities import Entity, EvaluationIndices, EvaluationResult

__all__ = [
    "EntityTypeEvaluation",
    "EvaluationStrategy",
    "ExactEvaluation",
    "PartialEvaluation",
    "StrictEvaluation",
]

# Categories, numbered in EvaluationIndices' field order.
CORRECT, INCORRECT, PARTIAL, MISSED, SPURIOUS = range(5)
CATEGORY_FIELDS = ("correct_indices", "incorrect_indices", "partial_indices", "missed_indices", "spurious_indices")
# A prediction's outcome: the list position of the reference it took (None: spurious), its category.
Outcome = tuple[int | None, int]


class EvaluationStrategy(ABC):
    """One scheme, with the least overlap (a percentage of the reference's length) that lets a
    prediction take a reference."""

    def __init__(self, min_overlap_percentage: float = 1.0) -> None:
        if not 1.0 <= min_overlap_percentage <= 100.0:
            raise OptionValueError("min_overlap_percentage must be between 1.0 and 100.0")
        self.min_overlap_percentage = min_overlap_percentage

    @staticmethod
    def _calculate_overlap_percentage(pred: Entity, true: Entity) -> float:
        """The share of ``true``'s tokens that ``pred`` covers, in percent (0.0 if disjoint)."""
        if pred.end < true.start or true.end < pred.start:
            return 0.0
        shared = min(pred.end, true.end) - max(pred.start, true.start) + 1
        return (shared / (true.end - true.start + 1)) * 100.0

    @staticmethod
    def _calculate_boundaries_distance(pred: Entity, true: Entity) -> float:
        """How far apart the two entities' boundaries are: start gap plus end gap."""
        return abs(pred.start - true.start) + abs(pred.end - true.end)

    def _has_sufficient_overlap(self, pred: Entity, true: Entity) -> bool:
        """Whether ``pred`` covers at least ``min_overlap_percentage`` of ``true``."""
        return EvaluationStrategy._calculate_overlap_percentage(pred, true) >= self.min_overlap_percentage

    @abstractmethod
    def evaluate(
        self, true_entities: list[Entity], pred_entities: list[Entity], tags: list[str], instance_index: int = 0
    ) -> tuple[EvaluationResult, EvaluationIndices]:
        """The scheme's figures for one document, and the ``(instance_index, entity)`` indices of
        each category (predictions, and missed references)."""


class _Walk(EvaluationStrategy):
    """The walk shared by the four schemes: each prediction, in list order, looks at the references
    not taken yet (``_pick``); references left at the end are missed."""

    _partial_or_type = False  # the score formula: (COR + PAR / 2) over ACT and POS

    @abstractmethod
    def _pick(self, pred: Entity, true_entities: Sequence[Entity], taken: list[bool]) -> Outcome:
        """The reference ``pred`` takes among those not ``taken``, and the category."""

    def _outcomes(self, true_entities: Sequence[Entity], pred_entities: Sequence[Entity]) -> list[Outcome]:
        taken = [False] * len(true_entities)
        out = []
        for pred in pred_entities:
            at, category = self._pick(pred, true_entities, taken)
            if at is not None:
                taken[at] = True
            out.append((at, category))
        return out

    def evaluate(
        self, true_entities: list[Entity], pred_entities: list[Entity], tags: list[str], instance_index: int = 0
    ) -> tuple[EvaluationResult, EvaluationIndices]:
        found: list[list[tuple[int, int]]] = [[] for _ in CATEGORY_FIELDS]
        outcomes = self._outcomes(true_entities, pred_entities)
        for k, (_, category) in enumerate(outcomes):
            found[category].append((instance_index, k))
        paired = {at for at, _ in outcomes if at is not None}
        found[MISSED] = [(instance_index, k) for k in range(len(true_entities)) if k not in paired]
        result = EvaluationResult(*(len(x) for x in found))
        result.compute_metrics(partial_or_type=self._partial_or_type)
        return result, EvaluationIndices(*found)


class StrictEvaluation(_Walk):
    """Correct: same span and label. Incorrect: another overlap. Spurious: no free reference
    overlaps. Missed: a reference no prediction took."""

    def _pick(self, pred: Entity, true_entities: Sequence[Entity], taken: list[bool]) -> Outcome:
        first = None
        for k, true in enumerate(true_entities):
            if taken[k]:
                continue
            if (pred.label, pred.start, pred.end) == (true.label, true.start, true.end):
                return k, CORRECT
            if self._has_sufficient_overlap(pred, true) and first is None:
                first = k
        return (first, INCORRECT) if first is not None else (None, SPURIOUS)


class ExactEvaluation(_Walk):
    """Correct: same span, whatever the label. Incorrect: another overlap. Spurious and missed as
    in ``StrictEvaluation``."""

    def _pick(self, pred: Entity, true_entities: Sequence[Entity], taken: list[bool]) -> Outcome:
        first = None
        for k, true in enumerate(true_entities):
            if taken[k]:
                continue
            if (pred.start, pred.end) == (true.start, true.end):
                return k, CORRECT
            if self._has_sufficient_overlap(pred, true) and first is None:
                first = k
        return (first, INCORRECT) if first is not None else (None, SPURIOUS)


class PartialEvaluation(_Walk):
    """Correct: same span, whatever the label. Partial: another overlap (half credit). Never
    incorrect; spurious and missed as in ``StrictEvaluation``."""

    _partial_or_type = True

    def _pick(self, pred: Entity, true_entities: Sequence[Entity], taken: list[bool]) -> Outcome:
        first = None
        for k, true in enumerate(true_entities):
            if taken[k] or not self._has_sufficient_overlap(pred, true):
                continue
            if (pred.start, pred.end) == (true.start, true.end):
                return k, CORRECT
            if first is None:
                first = k
        return (first, PARTIAL) if first is not None else (None, SPURIOUS)


class EntityTypeEvaluation(_Walk):
    """Correct: an overlap with the same label (of several, the closest boundaries, then the first).
    Incorrect: an overlap with another label only. Spurious and missed as in ``StrictEvaluation``."""

    _partial_or_type = True

    def _pick(self, pred: Entity, true_entities: Sequence[Entity], taken: list[bool]) -> Outcome:
        closest: int | None = None
        closest_distance = 0.0
        other = None
        for k, true in enumerate(true_entities):
            if taken[k] or not self._has_sufficient_overlap(pred, true):
                continue
            distance = self._calculate_boundaries_distance(pred, true)
            if pred.label == true.label:
                if closest is None or distance < closest_distance:
                    closest, closest_distance = k, distance
            elif other is None:
                other = k
        if closest is not None:
            return closest, CORRECT
        return (other, INCORRECT) if other is not None else (None, SPURIOUS)
