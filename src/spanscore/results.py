"""The evaluation JSON as types: what ``Report.to_dict`` returns and ``spanscore evaluate --json`` prints.

Every reader of the JSON (the terminal tables, summary.md, report.html, the charts) takes an
``EvaluationResult`` so that ``mypy --strict`` checks each key it reads. These are ``TypedDict``s:
at run time they are plain dicts, and nothing here changes the JSON.

A score is ``None`` where it is undefined (``zero_division=nan``): the JSON has no NaN. Optional keys
use a total base class and a ``total=False`` subclass (``NotRequired`` needs Python 3.11 or
typing_extensions). Blocks are ``@final`` so that ``"true_positive" in block`` tells a token block
from a criterion block.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, final

Score = float | None
"""A precision, recall or F1 in [0, 1]; ``None`` (null in the JSON) where it is NaN."""

ScoreKey = Literal["precision", "recall", "f1", "f_beta"]
SemEvalKey = Literal["correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"]
ErrorKey = Literal[
    "correct",
    "false_positive",
    "false_positive_overlapping",
    "false_negative",
    "false_negative_overlapping",
    "wrong_label_same_span",
    "wrong_label_overlap",
    "right_label_overlap",
    "right_label_overlap_longer",
    "right_label_overlap_shorter",
    "right_label_overlap_shifted",
    "right_label_overlap_left_match",
    "right_label_overlap_right_match",
]


class _MacroRequired(TypedDict):
    precision: Score
    recall: Score
    f1: Score


class MacroScores(_MacroRequired, total=False):
    """Unweighted mean over types of the per-type scores (``macro`` in the JSON); ``f_beta`` only
    where the evaluation was given a beta other than 1."""

    f_beta: Score


class _Counted(MacroScores):
    predicted: int
    reference: int


@final
class MatchScores(_Counted):
    """One criterion's scores: ``full`` and ``partial`` count matched reference mentions, ``credit``
    is the credit they earned (the numerator of recall)."""

    full: int
    partial: int
    credit: float


@final
class TokenScores(_Counted):
    """Scores over entity tokens (the criterion ``token``)."""

    true_positive: int


CriterionScores = MatchScores | TokenScores
"""A block of ``metrics``: ``TokenScores`` under ``token``, ``MatchScores`` under every other name."""


class _SemEvalCounts(TypedDict):
    correct: int
    incorrect: int
    partial: int
    missed: int
    spurious: int
    possible: int
    actual: int
    precision: Score
    recall: Score
    f1: Score


@final
class SemEvalScores(_SemEvalCounts, total=False):
    """A SemEval-2013 scheme with the MUC categories. For one type, COR/INC/PAR count its matched
    reference mentions; where its matched predictions count differently, those are added."""

    correct_predicted: int
    partial_predicted: int
    incorrect_predicted: int
    f_beta: Score


class TypeScores(TypedDict):
    """One entry of ``per_type``: the type's blocks under every criterion and scheme."""

    metrics: dict[str, CriterionScores]
    semeval: dict[str, SemEvalScores]


class ErrorCounts(TypedDict):
    """The error taxonomy of Nejadgholi et al. (2020) over the one-to-one (SemEval ``type``) matching."""

    correct: int
    false_positive: int
    false_positive_overlapping: int
    false_negative: int
    false_negative_overlapping: int
    wrong_label_same_span: int
    wrong_label_overlap: int
    right_label_overlap: int
    right_label_overlap_longer: int
    right_label_overlap_shorter: int
    right_label_overlap_shifted: int
    right_label_overlap_left_match: int
    right_label_overlap_right_match: int


class Mention(TypedDict):
    """A mention of an example: ``start`` and ``end`` count tokens or characters in its unit."""

    text: str
    type: str
    start: int
    end: int


class _ExampleContext(TypedDict):
    context: str


@final
class ErrorExample(_ExampleContext, total=False):
    """One example of an error: a false positive has no reference, a false negative no prediction."""

    reference: Mention
    predicted: Mention


class _ErrorsByType(ErrorCounts):
    per_type: dict[str, ErrorCounts]


@final
class Errors(_ErrorsByType, total=False):
    """The taxonomy counts, per type, and (for a report made with details) the first examples of
    each error kind."""

    examples: dict[str, list[ErrorExample]]


class ConfusionCell(TypedDict):
    """One cell of the type confusion matrix. ``reference`` is null in the spurious row (a prediction
    the matching left unmatched), ``predicted`` null in the missed column (an unmatched reference
    mention). For a matched pair ``count`` = ``same_span`` + ``overlapping`` (the pair's spans are the
    same, or overlap with a boundary differing); for a missed or spurious mention both are 0."""

    reference: str | None
    predicted: str | None
    count: int
    same_span: int
    overlapping: int


@final
class Confusion(TypedDict):
    """``confusion`` in the JSON: reference type x predicted type over the error taxonomy's one-to-one
    matching. ``rows`` lists the cells with a count above 0: by reference type in ``types`` order with
    the spurious row (null) last, and within each, by predicted type with the missed column (null)
    last; a cell not listed counts 0."""

    types: list[str]
    rows: list[ConfusionCell]


class JudgeScores(TypedDict):
    """The judge's verdicts on right-label/overlap (Type-5) pairs next to three F1 scores."""

    type5: int
    accepted: float
    rejected: float
    strict_f1: Score
    learned_f1: Score
    overlap_f1: Score


@final
class Judge(JudgeScores):
    """``judge`` in the JSON: over all types, and per type."""

    per_type: dict[str, JudgeScores]


@final
class Corpus(TypedDict):
    documents: int
    sentences: int
    tokens: int
    reference_mentions: int
    predicted_mentions: int


class _ScoresRequired(TypedDict):
    metrics: dict[str, CriterionScores]
    semeval: dict[str, SemEvalScores]
    per_type: dict[str, TypeScores]
    macro: dict[str, MacroScores]
    errors: Errors
    confusion: Confusion


class Scores(_ScoresRequired, total=False):
    """Every score computed from counts (``score_counts``); ``judge`` only with the criterion ``learned``."""

    judge: Judge


class _EvaluationRequired(Scores):
    signature: str
    corpus: Corpus
    options: dict[str, Any]


@final
class Interval(TypedDict):
    """A score with its percentile bootstrap interval (None where the score is undefined)."""

    value: Score
    low: Score
    high: Score


# {score name (criterion, semeval_SCHEME, token): {metric: Interval}}
IntervalScores = dict[str, dict[str, Interval]]


class _IntervalsRequired(TypedDict):
    unit: str
    count: int
    level: float
    resamples: int
    seed: int
    interval: str
    scores: IntervalScores
    per_type: dict[str, IntervalScores]


class DiscontinuousIntervals(TypedDict):
    """The intervals of the discontinuous figures (``Discontinuous``), from the same resampling of
    documents: ``all`` is the strict score's; each block maps precision, recall and f1 to an ``Interval``."""

    all: dict[str, Interval]
    mentions: dict[str, Interval]
    units: dict[str, Interval]


class Intervals(_IntervalsRequired, total=False):
    """``evaluate(ci=...)``: what was resampled and how, and every score's interval, overall and per
    type; ``discontinuous`` where a side has discontinuous mentions; ``note`` below 100 units."""

    discontinuous: DiscontinuousIntervals
    note: str  # intervals over fewer than 100 units run narrow (as the tables' titles say)


class _GroupRequired(TypedDict):
    value: str
    documents: int
    reference_mentions: int
    predicted_mentions: int
    scores: dict[str, dict[str, Score]]


class BreakdownGroup(_GroupRequired, total=False):
    intervals: IntervalScores


class Breakdown(TypedDict):
    """``evaluate(by=FIELD)``: every score of each group of documents sharing a value of FIELD."""

    field: str
    groups: list[BreakdownGroup]


class BucketScores(TypedDict):
    """``evaluate(buckets=[...])``: one bucket of an attribute. ``metrics`` and ``semeval`` hold
    precision, recall and F1 (F1's interval as ``low``/``high``, the others' as
    ``precision_low``... with ``ci``); precision reads the bucket's predicted mentions, recall its
    reference mentions."""

    bucket: str
    reference_mentions: int
    predicted_mentions: int
    metrics: dict[str, dict[str, float | None]]
    semeval: dict[str, dict[str, float | None]]


class DiscontinuousFigure(TypedDict):
    """Strict scores over some mentions: ``correct`` of ``reference`` and of ``predicted``."""

    reference: int
    predicted: int
    correct: int
    precision: Score
    recall: Score
    f1: Score


class DiscontinuousUnits(DiscontinuousFigure):
    units: int  # how many sentences or documents hold a discontinuous reference mention
    unit: str  # "sentence" or "document"


class Discontinuous(TypedDict):
    """The figures the discontinuous-NER literature reports (Dai et al. 2020), under the strict
    criterion: over all mentions, over discontinuous mentions only, and over every mention of the
    sentences (documents) whose reference holds a discontinuous mention; ``reading`` is how the
    matching read discontinuous mentions (``fragments`` or ``extent``)."""

    reading: str
    all: DiscontinuousFigure
    mentions: DiscontinuousFigure
    units: DiscontinuousUnits


class EvaluationResult(_EvaluationRequired, total=False):
    """The whole evaluation JSON (``Report.to_dict``). ``macro_documents`` (mean and standard deviation
    of each score over documents or sentences) only where per-document counts were asked for;
    ``repairs`` only where the repair policy read invalid label transitions its way."""

    macro_documents: dict[str, Any]
    repairs: dict[str, Any]
    beta: float
    located: dict[str, Any]  # how mentions given as strings were found (``io.strings``)
    read: dict[str, Any]  # what annotation-format readers skipped; misaligned predicted boundaries
    breakdown: Breakdown
    intervals: Intervals
    buckets: dict[str, list[BucketScores]]  # by attribute, buckets in order
    levels: dict[str, Any]  # each nesting level's metrics; ``germeval`` GermEval 2014's measures
    warnings: list[str]  # why the intervals mean little: too few resampling units
    discontinuous: Discontinuous  # where a side has discontinuous mentions


class ResamplingInfo(TypedDict):
    level: float
    resamples: int
    trials: int | str  # "exact" where every swap was enumerated
    seed: int
    interval: str
    alpha: float


class SystemScores(TypedDict):
    name: str
    file: str | None  # None for predictions given as Python data
    metrics: IntervalScores


class PairedTest(TypedDict):
    """System ``b`` against the first system ``a`` under one score and metric."""

    a: str
    b: str
    criterion: str
    metric: str
    difference: Score
    low: Score
    high: Score
    p_bootstrap: Score
    p_randomization: Score


class RankingChange(TypedDict):
    criterion: str
    ranking_changed: bool
    significant_only_here: list[str]
    significant_only_under_strict: list[str]


class GroupComparison(TypedDict):
    """One type's or bucket's comparison: the systems' scores with intervals, and each against the
    first (``comparisons`` as the top level's)."""

    bucket: str
    reference_mentions: int
    systems: list[dict[str, Any]]
    comparisons: list[PairedTest]


class _ComparisonRequired(TypedDict):
    signature: str
    unit: str
    documents: int
    resampling: ResamplingInfo
    systems: list[SystemScores]
    comparisons: list[PairedTest]
    rankings: dict[str, list[str]]
    changes: list[RankingChange]


class ComparisonResult(_ComparisonRequired, total=False):
    """The whole comparison JSON (``Comparison.to_dict``, ``spanscore compare --json``);
    ``per_type`` with ``per_type=True`` (``--per-type``), ``buckets`` by attribute with
    ``buckets`` (``--buckets``)."""

    per_type: list[GroupComparison]
    buckets: dict[str, list[GroupComparison]]
    warnings: list[str]  # why the intervals and tests mean little: too few resampling units
    note: str  # intervals over fewer than 100 units run narrow (as the tables' titles say)
    llm_classes: dict[str, Any]  # mentions given as strings: each class's count and share, with intervals
    discontinuous: dict[str, Discontinuous]  # each system's figures, where a side has discontinuous mentions
    levels: list[GroupComparison]  # nesting levels: each level alone, compared as a type is
    germeval: dict[str, list[dict[str, Any]]]  # two levels: GermEval 2014's measures of each system


__all__ = [
    "Breakdown",
    "BreakdownGroup",
    "BucketScores",
    "ComparisonResult",
    "Confusion",
    "ConfusionCell",
    "Corpus",
    "CriterionScores",
    "ErrorCounts",
    "ErrorExample",
    "ErrorKey",
    "Errors",
    "EvaluationResult",
    "GroupComparison",
    "Interval",
    "IntervalScores",
    "Intervals",
    "Judge",
    "JudgeScores",
    "MacroScores",
    "MatchScores",
    "Mention",
    "PairedTest",
    "RankingChange",
    "ResamplingInfo",
    "Score",
    "ScoreKey",
    "Scores",
    "SemEvalKey",
    "SemEvalScores",
    "SystemScores",
    "TokenScores",
    "TypeScores",
]
