"""Additive counts: the whole state a score is computed from.

``count`` turns two span sets into a ``Counts``; ``Counts.merge`` adds two of them. Counting
documents one by one and merging gives exactly the counts of counting them together, which is
what streaming and the distributed engine rely on. Scores are computed elsewhere (``scores``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from .criteria import (
    CRITERIA,
    LEARNED,
    RIGHT_LABEL_OVERLAP_KINDS,
    SCHEMES,
    TAXONOMY,
    WRONG_LABEL_OVERLAP_KINDS,
    Criterion,
)
from .errors import OptionError
from .matching import (
    EXACT,
    FULL,
    PARTIAL,
    SAME_END,
    SAME_SPAN,
    SAME_START,
    SAME_TYPE,
    ZERO,
    Matching,
    Method,
    Pairs,
    choose,
    find_pairs,
    fixed_exact,
    free_pairs,
    pair_credit,
)
from .matching import assign as assign_pairs
from .spans import IntArray, Spans

FloatArray = npt.NDArray[np.float64]
UNITS = 1 << 32  # proportional credit is summed as integers of 2^-32 so that sums are exact

MATCH_FIELDS = (
    "full_ref",
    "partial_ref",
    "zero_ref",
    "units_ref",
    "full_pred",
    "partial_pred",
    "zero_pred",
    "units_pred",
)
TOKEN_FIELDS = ("true_positive", "reference", "predicted")
ERROR_FIELDS = (
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
)
CreditRule = float | Literal["dice", "iou"]
MinOverlapOf = Literal["reference", "predicted", "both"]
# A judge gets the pairs and the indices of right-label/overlapping ones; it returns their credit.
LearnedCredit = Callable[[Pairs, IntArray], FloatArray]


@dataclass(frozen=True)
class Options:
    credit: CreditRule = 0.5
    matching: Method = "optimal"
    min_overlap: float = 0.0
    min_overlap_of: MinOverlapOf = "reference"

    def __post_init__(self) -> None:
        if isinstance(self.credit, str):
            if self.credit not in ("dice", "iou"):
                raise OptionError(f"credit must be a number in [0, 1], dice or iou, not {self.credit!r}")
        elif not 0.0 <= float(self.credit) <= 1.0:
            raise OptionError(f"credit must be between 0 and 1, not {self.credit}")
        if self.matching not in ("optimal", "greedy"):
            raise OptionError(f"matching must be optimal or greedy, not {self.matching!r}")
        if not 0.0 <= self.min_overlap <= 1.0:
            raise OptionError(f"min-overlap must be between 0 and 1, not {self.min_overlap}")
        if self.min_overlap_of not in ("reference", "predicted", "both"):
            raise OptionError("min-overlap-of must be reference, predicted or both")


@dataclass
class Counts:
    """Per-type integer counts for every criterion, SemEval scheme, token score and error kind."""

    types: tuple[str, ...]
    credit: str  # the partial-credit rule the counts were made with: "0.5", "dice", "iou"
    reference: IntArray
    predicted: IntArray
    criteria: dict[str, IntArray]  # name -> [MATCH_FIELDS, types]
    schemes: dict[str, IntArray]
    token: IntArray  # [TOKEN_FIELDS, types]
    errors: IntArray  # [ERROR_FIELDS, types]
    documents: int = 0
    sentences: int = 0
    tokens: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @staticmethod
    def zeros(types: tuple[str, ...], credit: str, criteria: tuple[str, ...]) -> Counts:
        n = len(types)
        z = np.zeros(n, dtype=np.int64)
        return Counts(
            types=types,
            credit=credit,
            reference=z.copy(),
            predicted=z.copy(),
            criteria={c: np.zeros((len(MATCH_FIELDS), n), dtype=np.int64) for c in criteria},
            schemes={s.name: np.zeros((len(MATCH_FIELDS), n), dtype=np.int64) for s in SCHEMES},
            token=np.zeros((len(TOKEN_FIELDS), n), dtype=np.int64),
            errors=np.zeros((len(ERROR_FIELDS), n), dtype=np.int64),
        )

    def with_types(self, types: tuple[str, ...]) -> Counts:
        """The same counts over a wider type list (new types count zero)."""
        if types == self.types:
            return self
        index = {t: i for i, t in enumerate(types)}
        cols = np.array([index[t] for t in self.types], dtype=np.int64)

        def widen(a: IntArray) -> IntArray:
            out = np.zeros((*a.shape[:-1], len(types)), dtype=np.int64)
            out[..., cols] = a
            return out

        return self._map_columns(widen, types)

    def without_empty_types(self) -> Counts:
        """Drop types with no mention on either side: label vocabulary that decoding threw away
        (repair="discard") must not appear per type nor pull the macro average down."""
        keep = np.flatnonzero((self.reference > 0) | (self.predicted > 0))
        if len(keep) == len(self.types):
            return self
        return self._map_columns(lambda a: a[..., keep], tuple(self.types[i] for i in keep))

    def _map_columns(self, f: Callable[[IntArray], IntArray], types: tuple[str, ...]) -> Counts:
        return Counts(
            types=types,
            credit=self.credit,
            reference=f(self.reference),
            predicted=f(self.predicted),
            criteria={k: f(v) for k, v in self.criteria.items()},
            schemes={k: f(v) for k, v in self.schemes.items()},
            token=f(self.token),
            errors=f(self.errors),
            documents=self.documents,
            sentences=self.sentences,
            tokens=self.tokens,
            extra=dict(self.extra),
        )

    def merge(self, other: Counts) -> Counts:
        """The counts of both inputs together."""
        if self.credit != other.credit:
            raise OptionError(f"cannot merge counts made with credit {self.credit} and {other.credit}")
        if set(self.criteria) != set(other.criteria):
            raise OptionError("cannot merge counts of different criteria")
        types = tuple(sorted(set(self.types) | set(other.types)))
        a, b = self.with_types(types), other.with_types(types)
        extra = dict(a.extra)
        for k, v in b.extra.items():
            extra[k] = extra.get(k, 0) + v
        return Counts(
            types=types,
            credit=a.credit,
            reference=a.reference + b.reference,
            predicted=a.predicted + b.predicted,
            criteria={k: a.criteria[k] + b.criteria[k] for k in a.criteria},
            schemes={k: a.schemes[k] + b.schemes[k] for k in a.schemes},
            token=a.token + b.token,
            errors=a.errors + b.errors,
            documents=a.documents + b.documents,
            sentences=a.sentences + b.sentences,
            tokens=a.tokens + b.tokens,
            extra=extra,
        )

    def __add__(self, other: Counts) -> Counts:
        return self.merge(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Counts):
            return NotImplemented
        if self.types != other.types or self.credit != other.credit:
            return False
        same = all(
            np.array_equal(x, y)
            for x, y in (
                (self.reference, other.reference),
                (self.predicted, other.predicted),
                (self.token, other.token),
                (self.errors, other.errors),
            )
        )
        return (
            same
            and self.criteria.keys() == other.criteria.keys()
            and all(np.array_equal(self.criteria[k], other.criteria[k]) for k in self.criteria)
            and all(np.array_equal(self.schemes[k], other.schemes[k]) for k in self.schemes)
            and (self.documents, self.sentences, self.tokens) == (other.documents, other.sentences, other.tokens)
            and self.extra == other.extra
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Details:
    """What a report needs beyond counts: the pairs, and each criterion's matching."""

    reference: Spans
    predicted: Spans
    pairs: Pairs
    matchings: dict[str, Matching]
    schemes: dict[str, Matching]


def credit_label(credit: CreditRule) -> str:
    return credit if isinstance(credit, str) else repr(float(credit))


def count(
    reference: Spans,
    predicted: Spans,
    options: Options = Options(),
    *,
    learned: LearnedCredit | None = None,
    keep_details: bool = False,
) -> tuple[Counts, Details | None]:
    """Match and count two span sets that share a type vocabulary and a position space."""
    if reference.types != predicted.types:
        raise OptionError("reference and predicted spans must share one type vocabulary")
    types = reference.types
    n_types = len(types)
    names = tuple(c.name for c in CRITERIA) + ((LEARNED.name,) if learned is not None else ())
    counts = Counts.zeros(types, credit_label(options.credit), names)
    counts.reference = np.bincount(reference.type, minlength=n_types).astype(np.int64)
    counts.predicted = np.bincount(predicted.type, minlength=n_types).astype(np.int64)

    pairs = find_pairs(reference, predicted)
    counts.token = _token_counts(reference, predicted, pairs, n_types)  # before any pair is dropped
    if options.min_overlap > 0 and len(pairs):
        pairs = pairs.select(_enough_overlap(pairs, options))
    partial = _partial_credit(pairs, options.credit)
    half = np.full(len(pairs), 0.5)
    # Same-span same-type pairs are matched first, alike under every criterion (each gives them
    # full credit): count them once, and match each criterion only among the pairs left free.
    fixed = fixed_exact(pairs)
    free = free_pairs(pairs, fixed)
    fixed_types = np.bincount(reference.type[pairs.ref[fixed]], minlength=n_types).astype(np.int64)
    free_kind = pairs.kind[free]
    free_rt = reference.type[pairs.ref[free]]
    free_pt = predicted.type[pairs.pred[free]]

    def match(crit: Criterion, partial_credit: FloatArray) -> tuple[IntArray, Matching | None]:
        if crit.table[EXACT] != FULL:  # not so for any criterion here; kept correct all the same
            m = assign_pairs(pairs, crit.levels(pairs.kind), partial_credit, options.matching, fixed=fixed)
            return _tally(m, pairs, reference, predicted, n_types), m
        level = crit.levels(free_kind)
        credit = pair_credit(level, partial_credit[free])
        chosen = choose(pairs, free, level, credit, options.matching)
        level, credit = level[chosen], credit[chosen]
        tally = _tally_free(free_rt[chosen], free_pt[chosen], level, credit, n_types)
        tally[0] += fixed_types  # full credit, reference side
        tally[4] += fixed_types  # and predicted side (same type)
        if not (keep_details or crit is TAXONOMY):
            return tally, None
        picked = np.concatenate((fixed, free[chosen]))
        order = np.argsort(picked)
        return tally, Matching(
            pair=picked[order],
            level=np.concatenate((np.full(fixed.shape[0], FULL, dtype=np.int64), level))[order],
            credit=np.concatenate((np.ones(fixed.shape[0]), credit))[order],
        )

    matchings: dict[str, Matching] = {}
    for crit in CRITERIA:
        counts.criteria[crit.name], m = match(crit, partial)
        if m is not None:
            matchings[crit.name] = m
    if learned is not None:
        levels = LEARNED.levels(pairs.kind)
        judged = np.flatnonzero(levels == PARTIAL)
        credit = np.zeros(len(pairs))
        if judged.shape[0]:
            credit[judged] = np.clip(np.asarray(learned(pairs, judged), dtype=np.float64), 0.0, 1.0)
        m = assign_pairs(pairs, levels, credit, options.matching, fixed=fixed)
        counts.criteria[LEARNED.name] = _tally(m, pairs, reference, predicted, n_types)
        matchings[LEARNED.name] = m
    schemes: dict[str, Matching] = {}
    for scheme in SCHEMES:
        counts.schemes[scheme.name], m = match(scheme, half if scheme.fixed_half else partial)
        if m is not None:
            schemes[scheme.name] = m
    counts.errors = _taxonomy(schemes[TAXONOMY.name], pairs, reference, predicted, n_types)
    details = Details(reference, predicted, pairs, matchings, schemes) if keep_details else None
    return counts.without_empty_types(), details


def _enough_overlap(pairs: Pairs, options: Options) -> npt.NDArray[np.bool_]:
    of_ref = pairs.overlap / pairs.ref_len
    of_pred = pairs.overlap / pairs.pred_len
    ratio = {"reference": of_ref, "predicted": of_pred, "both": np.minimum(of_ref, of_pred)}[options.min_overlap_of]
    same_span = (pairs.kind & SAME_SPAN) == SAME_SPAN
    ok: npt.NDArray[np.bool_] = same_span | (ratio >= options.min_overlap)
    return ok


def _partial_credit(pairs: Pairs, rule: CreditRule) -> FloatArray:
    if rule == "dice":
        return pairs.dice()
    if rule == "iou":
        return pairs.iou()
    return np.full(len(pairs), float(rule))


def _tally(m: Matching, pairs: Pairs, reference: Spans, predicted: Spans, n_types: int) -> IntArray:
    rt = reference.type[pairs.ref[m.pair]]
    pt = predicted.type[pairs.pred[m.pair]]
    units = np.rint(m.credit * UNITS).astype(np.int64) * (m.level == PARTIAL)
    out = np.zeros((len(MATCH_FIELDS), n_types), dtype=np.int64)
    for side, t in ((0, rt), (4, pt)):
        out[side + 0] = np.bincount(t, weights=(m.level == FULL), minlength=n_types)
        out[side + 1] = np.bincount(t, weights=(m.level == PARTIAL), minlength=n_types)
        out[side + 2] = np.bincount(t, weights=(m.level == ZERO), minlength=n_types)
        out[side + 3] = _bincount_int(t, units, n_types)
    return out


def _tally_free(rt: IntArray, pt: IntArray, level: IntArray, credit: FloatArray, n_types: int) -> IntArray:
    """``_tally`` of matched pairs given by their types, levels and credits."""
    out = np.zeros((len(MATCH_FIELDS), n_types), dtype=np.int64)
    if level.shape[0] == 0:
        return out
    partial = level == PARTIAL
    units = np.rint(credit * UNITS).astype(np.int64) * partial
    row = (level - FULL) * n_types  # FULL, PARTIAL, ZERO are consecutive, like their fields
    for side, t in ((0, rt), (4, pt)):
        out[side : side + 3] = np.bincount(row + t, minlength=3 * n_types).reshape(3, n_types)
        if partial.any():
            out[side + 3] = _bincount_int(t, units, n_types)
    return out


def _bincount_int(index: IntArray, weights: IntArray, n: int) -> IntArray:
    """Exact bincount of non-negative int64 weights below 2^48 (``np.bincount`` sums in float64).

    Each 24-bit half sums exactly in float64 for up to 2^29 items.
    """
    low = weights & 0xFFFFFF
    high = weights >> 24
    lo = np.bincount(index, weights=low, minlength=n).astype(np.int64)
    hi = np.bincount(index, weights=high, minlength=n).astype(np.int64)
    out: IntArray = (hi << 24) + lo
    return out


# Whether each of the 8 pair kinds is a wrong-label (right-label) overlap.
_WRONG_LABEL_OVERLAP = np.isin(np.arange(8), WRONG_LABEL_OVERLAP_KINDS)
_RIGHT_LABEL_OVERLAP = np.isin(np.arange(8), RIGHT_LABEL_OVERLAP_KINDS)


def _taxonomy(m: Matching, pairs: Pairs, reference: Spans, predicted: Spans, n_types: int) -> IntArray:
    """The error types of 004 over a one-to-one matching (see docs/criteria.md)."""
    out = np.zeros((len(ERROR_FIELDS), n_types), dtype=np.int64)
    kind = pairs.kind[m.pair]
    rt = reference.type[pairs.ref[m.pair]]
    rel = pairs.relation().astype(np.int64)[m.pair]

    def add(name: str, types: IntArray, where: npt.NDArray[np.bool_]) -> None:
        out[ERROR_FIELDS.index(name)] += np.bincount(types[where], minlength=n_types)

    add("correct", rt, kind == EXACT)
    add("wrong_label_same_span", rt, kind == SAME_SPAN)
    add("wrong_label_overlap", rt, _WRONG_LABEL_OVERLAP[kind])
    rlo = _RIGHT_LABEL_OVERLAP[kind]
    add("right_label_overlap", rt, rlo)
    add("right_label_overlap_longer", rt, rlo & (rel == 1))
    add("right_label_overlap_shorter", rt, rlo & (rel == 2))
    add("right_label_overlap_shifted", rt, rlo & (rel == 3))
    add("right_label_overlap_left_match", rt, rlo & ((kind & SAME_START) > 0))
    add("right_label_overlap_right_match", rt, rlo & ((kind & SAME_END) > 0))

    ref_matched = np.zeros(len(reference), dtype=bool)
    ref_matched[pairs.ref[m.pair]] = True
    pred_matched = np.zeros(len(predicted), dtype=bool)
    pred_matched[pairs.pred[m.pair]] = True
    ref_overlaps = np.zeros(len(reference), dtype=bool)
    ref_overlaps[pairs.ref] = True
    pred_overlaps = np.zeros(len(predicted), dtype=bool)
    pred_overlaps[pairs.pred] = True
    add("false_positive", predicted.type, ~pred_matched)
    add("false_positive_overlapping", predicted.type, ~pred_matched & pred_overlaps)
    add("false_negative", reference.type, ~ref_matched)
    add("false_negative_overlapping", reference.type, ~ref_matched & ref_overlaps)
    return out


def _token_counts(reference: Spans, predicted: Spans, pairs: Pairs, n_types: int) -> IntArray:
    """Units (tokens, or characters for offset input) covered per type, and covered by both sides."""
    out = np.zeros((len(TOKEN_FIELDS), n_types), dtype=np.int64)
    if n_types == 0:
        return out
    if _disjoint(reference) and _disjoint(predicted):
        # Each unit lies in at most one mention per side: a unit covered by both sides with one
        # type lies in exactly one same-type pair's overlap.
        same = (pairs.kind & SAME_TYPE) > 0
        out[0] = _bincount_int(reference.type[pairs.ref[same]], pairs.overlap[same], n_types)
        out[1] = _bincount_int(reference.type, reference.end - reference.start, n_types)
        out[2] = _bincount_int(predicted.type, predicted.end - predicted.start, n_types)
        return out
    stride = int(max(reference.end.max(initial=0), predicted.end.max(initial=0))) + 1
    ev_pos: list[IntArray] = []
    ev_ref: list[IntArray] = []
    ev_pred: list[IntArray] = []
    for spans, is_ref in ((reference, True), (predicted, False)):
        key = spans.type * stride
        n = len(spans)
        ev_pos += [key + spans.start, key + spans.end]
        one = np.ones(n, dtype=np.int64)
        zero = np.zeros(n, dtype=np.int64)
        ev_ref += [one, -one] if is_ref else [zero, zero]
        ev_pred += [zero, zero] if is_ref else [one, -one]
    pos = np.concatenate(ev_pos)
    if pos.shape[0] == 0:
        return out
    d_ref = np.concatenate(ev_ref)
    d_pred = np.concatenate(ev_pred)
    order = np.argsort(pos, kind="stable")
    pos, d_ref, d_pred = pos[order], d_ref[order], d_pred[order]
    c_ref = np.cumsum(d_ref)
    c_pred = np.cumsum(d_pred)
    seg = np.diff(pos)  # length of the stretch after each event, up to the next one
    in_ref = c_ref[:-1] > 0
    in_pred = c_pred[:-1] > 0
    seg_type = pos[:-1] // stride
    for row, mask in ((0, in_ref & in_pred), (1, in_ref), (2, in_pred)):
        out[row] = np.bincount(seg_type[mask], weights=seg[mask], minlength=n_types).astype(np.int64)
    return out


def _disjoint(spans: Spans) -> bool:
    """Whether no two mentions share a unit (mentions are sorted by start)."""
    return bool((spans.start[1:] >= spans.end[:-1]).all())
