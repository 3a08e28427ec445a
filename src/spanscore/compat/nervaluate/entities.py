"""nervaluate 1.2.1's ``nervaluate.entities``: an entity, and the figures and indices of one scheme."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Entity", "EvaluationIndices", "EvaluationResult"]


@dataclass
class Entity:
    """A named entity: its label and its first and last token (both inclusive).

    >>> Entity("PER", 0, 1) == Entity(label="PER", start=0, end=1) != Entity("ORG", 0, 1)
    True
    """

    label: str
    start: int
    end: int

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entity):
            return NotImplemented
        return (self.label, self.start, self.end) == (other.label, other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.label, self.start, self.end))


@dataclass
class EvaluationResult:
    """The MUC categories of one scheme, overall or for one tag, and the scores made from them.

    >>> r = EvaluationResult(correct=2, partial=1, spurious=1)
    >>> r.compute_metrics(partial_or_type=True)
    >>> r.actual, r.possible, r.precision, r.recall
    (4, 3, 0.625, 0.8333333333333334)
    """

    correct: int = 0
    incorrect: int = 0
    partial: int = 0
    missed: int = 0
    spurious: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    actual: int = 0
    possible: int = 0

    def compute_metrics(self, partial_or_type: bool = False) -> None:
        """Set ``actual`` (COR + INC + PAR + SPU), ``possible`` (COR + INC + PAR + MIS) and the
        scores: COR / ACT and COR / POS, or with ``partial_or_type`` (COR + PAR / 2) / ACT and
        (COR + PAR / 2) / POS; F1 their harmonic mean. A score over nothing is the int 0."""
        self.actual = self.correct + self.incorrect + self.partial + self.spurious
        self.possible = self.correct + self.incorrect + self.partial + self.missed
        earned = self.correct + 0.5 * self.partial if partial_or_type else self.correct
        precision: float = earned / self.actual if self.actual > 0 else 0
        recall: float = earned / self.possible if self.possible > 0 else 0
        self.precision = precision
        self.recall = recall
        total = precision + recall
        self.f1 = 2 * (precision * recall) / total if total > 0 else 0


@dataclass
class EvaluationIndices:
    """``(document, entity)`` of each prediction by category, and of each missed reference entity;
    a list left out (or given as None) starts empty."""

    correct_indices: list[tuple[int, int]] = None  # type: ignore[assignment]
    incorrect_indices: list[tuple[int, int]] = None  # type: ignore[assignment]
    partial_indices: list[tuple[int, int]] = None  # type: ignore[assignment]
    missed_indices: list[tuple[int, int]] = None  # type: ignore[assignment]
    spurious_indices: list[tuple[int, int]] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        fields: dict[str, Any] = vars(self)
        for name, value in fields.items():
            if value is None:
                fields[name] = []
