"""Additive counts: the whole state a score is computed from.

``count`` turns two span sets into a ``Counts``; ``Counts.merge`` adds two of them. Counting
documents one by one and merging gives exactly the counts of counting them together, which is
what streaming and the distributed engine rely on. Scores are computed elsewhere (``scores``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from ..results import ErrorKey
from ..runtime.records import record
from .criteria import (
    CRITERIA,
    LEARNED,
    RIGHT_LABEL_OVERLAP_KINDS,
    SCHEMES,
    STRICT,
    TAXONOMY,
    WRONG_LABEL_OVERLAP_KINDS,
    Criterion,
)
from .matching import (
    EXACT,
    FULL,
    NO_CREDIT,
    PARTIAL,
    SAME_END,
    SAME_SPAN,
    SAME_START,
    SAME_TYPE,
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
BoolArray = npt.NDArray[np.bool_]
CREDIT_SCALE = 1 << 32  # proportional credit is summed as integers of 2^-32 so that sums are exact

MATCH_FIELDS = (
    "full_ref",
    "partial_ref",
    "zero_ref",
    "scaled_credit_ref",
    "full_pred",
    "partial_pred",
    "zero_pred",
    "scaled_credit_pred",
)
TOKEN_FIELDS = ("true_positive", "reference", "predicted")
# Per group, the units covered by both sides are tallied on each side's group: a bucket's token
# precision reads its predictions' share (the prediction's bucket may not be the reference's).
GROUP_TOKEN_FIELDS = (*TOKEN_FIELDS, "true_positive_predicted")
CONFUSION_FIELDS = ("same_span", "overlapping")  # the first axis of ``Counts.confusion``
ERROR_FIELDS: tuple[str, ...] = get_args(ErrorKey)  # the error taxonomy's counts, in the JSON's order
CreditRule = float | Literal["dice", "iou"]
MinOverlapOf = Literal["reference", "predicted", "both"]
# How a discontinuous mention is matched: by its fragments, or by its extent (first start to last end).
Discontinuous = Literal["fragments", "extent"]
DISCONTINUOUS_READINGS: tuple[str, ...] = get_args(Discontinuous)
# A judge gets the pairs and the indices of right-label/overlapping ones; it returns their credit.
LearnedCredit = Callable[[Pairs, IntArray], FloatArray]


@dataclass(frozen=True)
class Options:
    """How pairs are credited and matched (the counting part of ``Scoring``)."""

    credit: CreditRule = 0.5
    matching: Method = "optimal"
    min_overlap: float = 0.0
    min_overlap_of: MinOverlapOf = "reference"
    discontinuous: Discontinuous = "fragments"

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
            raise OptionError(f"min-overlap-of must be reference, predicted or both, not {self.min_overlap_of!r}")
        if self.discontinuous not in DISCONTINUOUS_READINGS:
            raise OptionError(f"discontinuous must be fragments or extent, not {self.discontinuous!r}")


@dataclass
class Counts:
    """Per-type integer counts for every criterion, SemEval scheme, token score and error kind, and the
    type confusion of the error taxonomy's matching."""

    types: tuple[str, ...]
    credit: str  # the partial-credit rule the counts were made with: "0.5", "dice", "iou"
    reference: IntArray
    predicted: IntArray
    criteria: dict[str, IntArray]  # name -> [MATCH_FIELDS, types]
    schemes: dict[str, IntArray]
    token: IntArray  # [TOKEN_FIELDS, types]
    errors: IntArray  # [ERROR_FIELDS, types]
    # [CONFUSION_FIELDS, reference type, predicted type]: the taxonomy's matched pairs. Its missed
    # and spurious margins are ``errors``' false negatives and false positives, not kept twice.
    confusion: IntArray
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
            confusion=np.zeros((len(CONFUSION_FIELDS), n, n), dtype=np.int64),
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
        """The counts with ``f`` applied to every type axis (``f`` maps the last axis of an array)."""

        def both_axes(a: IntArray) -> IntArray:
            out: IntArray = np.ascontiguousarray(f(f(a).swapaxes(-1, -2)).swapaxes(-1, -2))
            return out

        return Counts(
            types=types,
            credit=self.credit,
            reference=f(self.reference),
            predicted=f(self.predicted),
            criteria={k: f(v) for k, v in self.criteria.items()},
            schemes={k: f(v) for k, v in self.schemes.items()},
            token=f(self.token),
            errors=f(self.errors),
            confusion=both_axes(self.confusion),
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
            confusion=a.confusion + b.confusion,
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
                (self.confusion, other.confusion),
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


@record
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
    counted = count_grouped(reference, predicted, options, learned=learned, keep_details=keep_details)
    return counted.counts, counted.details


@record
class Groups:
    """A group (a document, say) for every reference and predicted mention, ``size`` groups in all."""

    reference: IntArray
    predicted: IntArray
    size: int
    # Where > 0, each group is an outer key (a document) times ``inner`` plus an inner one (a
    # bucket): counted by columns (``count_grouped``'s ``group_columns``), every statistic is
    # summed per inner key as well (``Counted.more_totals``).
    inner: int = 0
    # Each group's inner key, where groups are numbered apart from it (only the pairs of outer
    # and inner keys that hold a mention are groups); None: a group is outer * inner + inner.
    inner_of: IntArray | None = None


@record
class Counted:
    """The counts of a pair of span sets, with what the error examples, details and groups read."""

    counts: Counts
    details: Details | None
    taxonomy: Matching  # the one-to-one matching the error taxonomy reads
    pairs: Pairs
    groups: IntArray | None  # [groups, len(group_fields(...))]: every statistic per group, over all types
    type_groups: IntArray | None = None  # the same for ``count_grouped``'s second grouping (document x type)
    more_groups: tuple[IntArray, ...] = ()  # the same for each of ``more_groups`` (buckets)
    # [groups, len(DISCONTINUOUS_EXTRA)]: the discontinuous figures' counts per group of ``groups``,
    # where a side has a discontinuous mention
    discontinuous_groups: IntArray | None = None
    # With ``group_columns``, every statistic of each inner key (bucket) of each of
    # ``more_groups`` that has ``Groups.inner``: [inner, len(group_fields(...))], over documents
    more_totals: tuple[IntArray | None, ...] = ()
    # ``type_groups``' table summed per outer key (``count_grouped``'s ``type_outer``): each
    # document's row, the sum of its rows per type.
    type_outer: IntArray | None = None


@functools.cache  # every chunk asks for them
def group_fields(criteria: tuple[str, ...]) -> tuple[str, ...]:
    """The statistics of one group, in the column order of ``Counted.groups``."""
    return (
        "reference",
        "predicted",
        *(f"{c}.{f}" for c in criteria for f in MATCH_FIELDS),
        *(f"semeval_{s.name}.{f}" for s in SCHEMES for f in MATCH_FIELDS),
        *(f"token.{f}" for f in GROUP_TOKEN_FIELDS),
        *(f"errors.{f}" for f in ERROR_FIELDS),
    )


@record
class _Chosen:
    """One criterion's matching among the free pairs (``free[chosen]``), plus the fixed pairs."""

    chosen: IntArray | None  # None: matched over every pair, in ``whole``
    level: IntArray
    credit: FloatArray
    whole: Matching | None = None


class _Keyed:
    """The keys of the free pairs on each side, and the fixed pairs counted by key on each side
    (a plain class: a dataclass costs its module's import more than this saves a chunk)."""

    __slots__ = ("fixed_pred", "fixed_ref", "free_pred", "free_ref")

    def __init__(self, free_ref: IntArray, free_pred: IntArray, fixed_ref: IntArray, fixed_pred: IntArray) -> None:
        self.free_ref, self.free_pred = free_ref, free_pred
        self.fixed_ref, self.fixed_pred = fixed_ref, fixed_pred


@record
class _TablePlan:
    """Where ``count_grouped``'s ``table_of`` counts each column of ``group_fields`` (found once
    for the columns a run asks for): each one's place among ``columns`` (-1: not asked for), the
    columns written in after the count, each block's column for each level matched on each side
    (``[2, blocks * 3]``, the reference's side first), those of the fixed pairs' full credit on
    each side, the token counts' first column, and the token and other columns asked for."""

    where: IntArray
    rest: frozenset[int]
    columns_of: IntArray
    counted: bool
    full_ref: IntArray
    full_pred: IntArray
    tokens: int
    wanted_tokens: tuple[int, ...]
    wanted_rest: frozenset[int]


@functools.lru_cache(maxsize=64)
def _table_plan(columns: tuple[int, ...], width: int, whole: tuple[bool, ...], row_major: bool) -> _TablePlan:
    """``table_of``'s plan for ``columns`` of ``width`` and the blocks (criteria, then schemes)
    matched over every pair (``whole``): a block matched among the free pairs is counted by its
    matched pairs' keys unless it is matched over every pair or a scaled credit of it is asked
    for (then written in after, with the others). A pair's level not asked for goes to a column
    past the table's where the table is a row per column (the count's extra row, dropped), and is
    left out of the count where the table is row-major."""
    m = len(columns)
    where = np.full(width, -1, dtype=np.int64)
    where[list(columns)] = np.arange(m)
    rest: set[int] = set()
    columns_of = np.full((2, len(whole), 3), -1, dtype=np.int64)
    full_ref: list[int] = []
    full_pred: list[int] = []
    counted = False
    at = 2
    for b, matched_whole in enumerate(whole):
        mine = where[at : at + len(MATCH_FIELDS)]
        if (mine >= 0).any():
            if matched_whole or mine[3] >= 0 or mine[7] >= 0:
                rest.update(range(at, at + len(MATCH_FIELDS)))
            else:
                # FULL, PARTIAL, NO_CREDIT are consecutive, like their fields on each side.
                columns_of[0, b], columns_of[1, b] = mine[0:3], mine[4:7]
                counted = True
                if mine[0] >= 0:
                    full_ref.append(int(mine[0]))
                if mine[4] >= 0:
                    full_pred.append(int(mine[4]))
        at += len(MATCH_FIELDS)
    if not row_major:
        columns_of[columns_of < 0] = m
    rest.update(range(at + len(GROUP_TOKEN_FIELDS), width))
    tokens = tuple(i for i in range(at, at + len(GROUP_TOKEN_FIELDS)) if where[i] >= 0)
    for a in (where, columns_of):
        a.flags.writeable = False
    return _TablePlan(
        where, frozenset(rest), columns_of.reshape(2, -1), counted, np.array(full_ref, dtype=np.int64),
        np.array(full_pred, dtype=np.int64), at, tokens, frozenset(i for i in rest if where[i] >= 0),
    )  # fmt: skip


class _Stacked:
    """The pairs matched among the free pairs by every block (criterion or scheme) matched so,
    one after another: each one's mention on each side in turn (a predicted mention numbered
    after the reference's), and its slot (block * 3 + level - FULL)."""

    __slots__ = ("mention", "slot")

    def __init__(self, mention: IntArray, slot: IntArray) -> None:
        self.mention, self.slot = mention, slot


def count_grouped(
    reference: Spans,
    predicted: Spans,
    options: Options = Options(),
    *,
    learned: LearnedCredit | None = None,
    keep_details: bool = False,
    groups: Groups | None = None,
    type_groups: Groups | None = None,
    more_groups: tuple[Groups, ...] = (),
    type_columns: Sequence[int] | None = None,
    group_columns: Sequence[int] | None = None,
    type_outer: tuple[IntArray, int] | None = None,
) -> Counted:
    """``count``, and with ``groups`` every statistic per group too (summed over types); with
    ``type_groups`` as well, per group of that second grouping (a document and a type, say), and
    so for each of ``more_groups`` (a document and a bucket). ``type_columns``: only these
    columns of ``group_fields`` (in this order) per group of ``type_groups``, the others not
    counted at all (what a histogram of the scored statistics reads), as the transpose of a row
    per column; ``group_columns`` the same for ``groups``, ``type_groups`` (without
    ``type_columns``) and each of ``more_groups``, row-major,
    and each of ``more_groups`` with ``Groups.inner`` also summed per inner key over every column
    (``Counted.more_totals``: the error taxonomy counted per inner key alone). ``type_outer``
    (each type group's outer key, a document, and their number), with ``group_columns`` and no
    ``type_columns``: ``type_groups``' table summed per outer key too (``Counted.type_outer``),
    as it is counted."""
    if reference.types != predicted.types:
        raise OptionError("reference and predicted spans must share one type vocabulary")
    types = reference.types
    n_types = len(types)
    names = tuple(c.name for c in CRITERIA) + ((LEARNED.name,) if learned is not None else ())
    fragmented = reference.pieces is not None or predicted.pieces is not None
    if fragmented:
        discontinuous = (reference.discontinuous(), predicted.discontinuous())
        if options.discontinuous == "extent":
            reference, predicted = reference.without_pieces(), predicted.without_pieces()

    pairs = find_pairs(reference, predicted)
    all_pairs = pairs  # the token counts read every pair, before any is dropped
    if options.min_overlap > 0 and len(pairs):
        pairs = pairs.select(_enough_overlap(pairs, options))
    partial = _partial_credit(pairs, options.credit)
    half = np.full(len(pairs), 0.5)
    # Same-span same-type pairs are matched first, alike under every criterion (each gives them
    # full credit): count them once, and match each criterion only among the pairs left free.
    fixed = fixed_exact(pairs)
    free = free_pairs(pairs, fixed)
    free_kind = pairs.kind[free]

    def match(crit: Criterion, partial_credit: FloatArray) -> _Chosen:
        if crit.table[EXACT] != FULL:  # not so for any criterion here; kept correct all the same
            m = assign_pairs(pairs, crit.levels(pairs.kind), partial_credit, options.matching, fixed=fixed)
            return _Chosen(None, m.level, m.credit, m)
        level = crit.levels(free_kind)
        credit = pair_credit(level, partial_credit[free])
        chosen = choose(pairs, free, level, credit, options.matching)
        return _Chosen(chosen, level[chosen], credit[chosen])

    def matching_of(c: _Chosen) -> Matching:
        if c.whole is not None:
            return c.whole
        assert c.chosen is not None
        # The fixed and the chosen pairs are distinct pairs: put in order by a mark each, not a sort.
        at = free[c.chosen]
        picked = np.zeros(len(pairs), dtype=bool)
        picked[fixed] = True
        picked[at] = True
        level = np.empty(len(pairs), dtype=np.int64)
        level[fixed] = FULL
        level[at] = c.level
        credit = np.empty(len(pairs))
        credit[fixed] = 1.0
        credit[at] = c.credit
        pair = np.flatnonzero(picked)
        return Matching(pair=pair, level=level[pair], credit=credit[pair])

    chosen: dict[str, _Chosen] = {crit.name: match(crit, partial) for crit in CRITERIA}
    if learned is not None:
        levels = LEARNED.levels(pairs.kind)
        judged = np.flatnonzero(levels == PARTIAL)
        credit = np.zeros(len(pairs))
        if judged.shape[0]:
            credit[judged] = np.clip(np.asarray(learned(pairs, judged), dtype=np.float64), 0.0, 1.0)
        m = assign_pairs(pairs, levels, credit, options.matching, fixed=fixed)
        chosen[LEARNED.name] = _Chosen(None, m.level, m.credit, m)
    scheme_chosen = {s.name: match(s, half if s.fixed_half else partial) for s in SCHEMES}
    taxonomy = matching_of(scheme_chosen[TAXONOMY.name])

    def keyed(ref_key: IntArray, pred_key: IntArray, n: int) -> _Keyed:
        """Each free pair's keys, and the fixed pairs (full credit under every criterion) by key."""
        free_ref, free_pred = ref_key[pairs.ref[free]], pred_key[pairs.pred[free]]
        fixed_ref = np.bincount(ref_key[pairs.ref[fixed]], minlength=n)
        return _Keyed(free_ref, free_pred, fixed_ref, np.bincount(pred_key[pairs.pred[fixed]], minlength=n))

    def tally(
        c: _Chosen, ref_key: IntArray, pred_key: IntArray, n: int, by_key: _Keyed | None = None, scaled: bool = True
    ) -> IntArray:
        if c.whole is not None:
            return _tally(c.whole, pairs, ref_key, pred_key, n)
        assert c.chosen is not None
        k = keyed(ref_key, pred_key, n) if by_key is None else by_key
        out = _tally_free(k.free_ref[c.chosen], k.free_pred[c.chosen], c.level, c.credit, n, scaled)
        out[0] += k.fixed_ref  # full credit, reference side
        out[4] += k.fixed_pred  # and predicted side
        return out

    kinds: list[_ErrorKinds] = []

    def errors_of(ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
        """The error taxonomy per key: which mentions each count counts found once a call."""
        if not kinds:
            kinds.append(_ErrorKinds.of(taxonomy, pairs, len(reference), len(predicted)))
        return kinds[0].tally(ref_key, pred_key, n)

    def tally_all(ref_key: IntArray, pred_key: IntArray, n: int, token: IntArray) -> Counts:
        out = Counts.zeros(types, credit_label(options.credit), names)
        out.reference = np.bincount(ref_key, minlength=n).astype(np.int64)
        out.predicted = np.bincount(pred_key, minlength=n).astype(np.int64)
        # Found once for every criterion's tally: the free and fixed pairs are the same in each.
        by_key = keyed(ref_key, pred_key, n)
        out.criteria = {name: tally(c, ref_key, pred_key, n, by_key) for name, c in chosen.items()}
        out.schemes = {name: tally(c, ref_key, pred_key, n, by_key) for name, c in scheme_chosen.items()}
        out.token = token[: len(TOKEN_FIELDS)]
        out.errors = errors_of(ref_key, pred_key, n)
        return out

    # Units are counted by the fragments that cover them: each fragment as a mention of its own.
    tok_ref, ref_owner = reference.expanded()
    tok_pred, pred_owner = predicted.expanded()
    tok_pairs = all_pairs if tok_ref is reference and tok_pred is predicted else find_pairs(tok_ref, tok_pred)

    tokens_by_key = _TokenCounter(tok_ref, tok_pred, tok_pairs)
    whole_sides = tok_ref is reference and tok_pred is predicted  # each mention its own fragment

    def token_counts(ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
        if whole_sides:
            return tokens_by_key.counts(ref_key, pred_key, n)
        return tokens_by_key.counts(ref_key[ref_owner], pred_key[pred_owner], n)

    token = token_counts(reference.type, predicted.type, n_types)
    counts = tally_all(reference.type, predicted.type, n_types, token)
    if fragmented:
        strict = chosen[STRICT.name]

        def strict_tally(ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
            return tally(strict, ref_key, pred_key, n)

        counts.extra.update(_discontinuous_extra(strict_tally, reference, predicted, discontinuous))
    # Per type only: per group it would be a groups x groups matrix, and no group statistic reads it.
    counts.confusion = _confusion(taxonomy, pairs, reference.type, predicted.type, n_types)

    def group_rows(g: Groups, want: set[int] | None) -> dict[int, IntArray]:
        """Each column of ``group_fields`` per group of ``g`` that ``want`` names (None: every
        one), by its index: only what they read is counted (no error taxonomy, no scaled credit
        unless a column holds it; a criterion's other rows come with its full credit's count)."""
        n = g.size
        rows: dict[int, IntArray] = {}

        def wanted(block: range) -> bool:
            return want is None or not want.isdisjoint(block)

        if wanted(range(0, 2)):
            rows[0] = np.bincount(g.reference, minlength=n).astype(np.int64)
            rows[1] = np.bincount(g.predicted, minlength=n).astype(np.int64)
        at = 2
        by_key = None
        for c in (*(chosen[name] for name in names), *(scheme_chosen[s.name] for s in SCHEMES)):
            block = range(at, at + len(MATCH_FIELDS))
            if wanted(block):
                by_key = keyed(g.reference, g.predicted, n) if by_key is None else by_key
                scaled = want is None or at + 3 in want or at + 7 in want
                rows.update(zip(block, tally(c, g.reference, g.predicted, n, by_key, scaled), strict=True))
            at += len(MATCH_FIELDS)
        if wanted(range(at, at + len(GROUP_TOKEN_FIELDS))):
            rows.update(enumerate(token_counts(g.reference, g.predicted, n), start=at))
        at += len(GROUP_TOKEN_FIELDS)
        if wanted(range(at, at + len(ERROR_FIELDS))):
            errors = errors_of(g.reference, g.predicted, n)
            rows.update(enumerate(errors, start=at))
        return rows

    width = len(group_fields(names))
    blocks = (*(chosen[name] for name in names), *(scheme_chosen[s.name] for s in SCHEMES))
    stacked: list[_Stacked] = []

    def stack() -> _Stacked:
        """The pairs every block matched among the free pairs, stacked once for every table."""
        if not stacked:
            mine = [(b, c.chosen, c.level) for b, c in enumerate(blocks) if c.chosen is not None]
            picked = np.concatenate([chosen_ for _, chosen_, _ in mine]) if mine else np.zeros(0, dtype=np.int64)
            lengths = [chosen_.shape[0] for _, chosen_, _ in mine]
            # FULL, PARTIAL, NO_CREDIT are consecutive, like their fields on each side.
            slot = np.repeat(np.array([b * 3 - FULL for b, _, _ in mine], dtype=np.int64), lengths)
            if mine:
                slot += np.concatenate([level for _, _, level in mine])
            at = free.take(picked)
            # Its mentions on the sides put end to end: the reference's, then the prediction's.
            mention = np.concatenate((pairs.ref.take(at), pairs.pred.take(at) + len(reference)))
            stacked.append(_Stacked(mention, slot))
        return stacked[0]

    def table_of(
        g: Groups, columns: Sequence[int], row_major: bool, inner_of: IntArray | None = None, size: int = 0
    ) -> tuple[IntArray, IntArray | None]:
        """``columns`` of ``group_fields`` per group of ``g`` as one table, ``[groups, columns]``
        (``row_major``) or ``[columns, groups]``: every mention count and match level of every
        criterion and scheme tallied by one bincount over a key of group and column (no row per
        column made and then copied into place), the token counts and whatever else (scaled
        credits, the error taxonomy, a matching over every pair) written in after. With
        ``inner_of`` (each group's inner key, row-major only) also the table summed per inner
        key, ``[size, columns]`` (at least as many rows as keys): the same keys tallied once
        more under their group's inner key, and each row written in after summed per inner key,
        where picking each inner key's rows out of the table and summing them walked the whole
        table again."""
        n, m = g.size, len(columns)
        plan = _table_plan(tuple(columns), width, tuple(c.whole is not None for c in blocks), row_major)
        where = plan.where
        keys: list[IntArray] = []

        def key(col: IntArray, group: IntArray) -> IntArray:
            out: IntArray = group * m + col if row_major else col * n + group
            return out

        for side, mentions in ((0, g.reference), (1, g.predicted)):
            if where[side] >= 0:
                keys.append(key(np.full(1, where[side]), mentions))
        if plan.counted:
            st = stack()
            # Every block's matched pairs' columns looked up at once, the reference's side first.
            # (``take``: a fancy index of a table's second axis costs eight times as much.)
            col = np.take(plan.columns_of, st.slot, axis=1).ravel()
            group = np.concatenate((g.reference, g.predicted)).take(st.mention)
            if row_major:
                kept = col >= 0
                col, group = col[kept], group[kept]
            keys.append(key(col, group))
        # The fixed pairs: full credit under every criterion and scheme, on each side.
        fixed_sides = ((plan.full_ref, g.reference, pairs.ref), (plan.full_pred, g.predicted, pairs.pred))
        for cols, mentions, pair_side in fixed_sides:
            if cols.shape[0]:
                group = mentions[pair_side[fixed]]
                keys.append(key(cols[None, :], group[:, None]).ravel())
        at = plan.tokens
        flat = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
        # Where a row per column, the pairs not counted went to a column past the table's.
        table = np.bincount(flat, minlength=n * m if row_major else (m + 1) * n).astype(np.int64, copy=False)
        table = table.reshape(n, m) if row_major else table[: n * m].reshape(m, n)
        summed = None
        if inner_of is not None:
            assert row_major
            size = max(size, int(inner_of.max(initial=-1)) + 1)
            summed = np.bincount(inner_of[flat // m] * m + flat % m, minlength=size * m).reshape(size, m)

        def put(i: int, row: IntArray) -> None:
            if row_major:
                table[:, where[i]] = row
            else:
                table[where[i]] = row
            if summed is not None and inner_of is not None:
                # Counts a chunk holds sum exactly in float64 (far below 2^53).
                summed[:, where[i]] = np.bincount(inner_of, weights=row, minlength=summed.shape[0])

        wanted_tokens = plan.wanted_tokens
        wanted_rest = set(plan.wanted_rest)
        if wanted_tokens:
            for i, row in enumerate(token_counts(g.reference, g.predicted, n), start=at):
                if where[i] >= 0:
                    put(i, row)
        if wanted_rest:
            for i, row in group_rows(g, wanted_rest).items():
                if i in wanted_rest:
                    put(i, row)
        return table, summed

    def filled(rows: dict[int, IntArray], columns: Sequence[int], n: int) -> IntArray:
        """The rows per column as a row-major table, filled column by column: a transposing
        copy of the stacked rows cost several times more."""
        out = np.empty((n, len(columns)), dtype=np.int64)
        for j, i in enumerate(columns):
            out[:, j] = rows[i]
        return out

    def grouped(g: Groups) -> IntArray:
        return filled(group_rows(g, None), range(width), g.size)

    def grouped_by(
        g: Groups, columns: Sequence[int], later: list[Groups] | None = None
    ) -> tuple[IntArray, IntArray | None]:
        """``grouped(g)[:, columns]``, counting only what those columns read; with ``g.inner``
        also every statistic per inner key: the counted columns summed over the outer keys, the
        error taxonomy (and any other column not counted per group) counted per inner key, or
        left to count with other groupings' where ``later`` takes the inner keys' groups."""
        inner = g.inner
        table, summed = table_of(g, columns, True, g.inner_of if inner > 0 else None)
        if inner <= 0:
            return table, None
        cols = list(columns)
        totals = np.zeros((inner, width), dtype=np.int64)
        if g.inner_of is not None:
            # A few inner keys (buckets): each one's rows summed as the table is counted.
            assert summed is not None
            totals[: summed.shape[0], cols] = summed
            per_inner = Groups(g.inner_of[g.reference], g.inner_of[g.predicted], inner)
        else:
            # Summed over the outer keys in one reduction of long rows (a row per outer key of every
            # inner key's columns), where a column at a time is one of short rows.
            outer = g.size // inner
            totals[:, cols] = table.reshape(outer, inner * len(cols)).sum(axis=0).reshape(inner, len(cols))
            per_inner = Groups(g.reference % inner, g.predicted % inner, inner)
        rest = set(range(width)).difference(cols)
        if later is not None:
            later.append(per_inner)
        elif rest:
            for i, row in group_rows(per_inner, rest).items():
                if i in rest:
                    totals[:, i] = row
        return table, totals

    def rest_together(per_inner: list[Groups], totals: list[IntArray], columns: Sequence[int]) -> None:
        """The columns not in ``columns`` of several groupings' inner keys (each attribute's
        buckets) counted in one pass over every combination of their keys, each grouping's then
        summed from it: every such column counts a mention (or a pair) under its own side's key,
        so a combination's counts add up to its keys' (the pass over the pairs is the cost, the
        number of groups hardly)."""
        rest = set(range(width)).difference(columns)
        if not rest:
            return
        sizes = [g.size for g in per_inner]
        ref = np.zeros(len(reference), dtype=np.int64)
        pred = np.zeros(len(predicted), dtype=np.int64)
        for g in per_inner:
            ref = ref * g.size + g.reference
            pred = pred * g.size + g.predicted
        for i, row in group_rows(Groups(ref, pred, math.prod(sizes)), rest).items():
            if i in rest:
                cube = row.reshape(sizes)
                for axis, t in enumerate(totals):
                    t[:, i] = cube.sum(axis=tuple(a for a in range(len(sizes)) if a != axis))

    per_group = None
    if groups is not None:
        per_group = grouped(groups) if group_columns is None else grouped_by(groups, group_columns)[0]
    disc_groups = None
    if fragmented and groups is not None:
        disc_groups = _discontinuous_groups(strict_tally, reference, predicted, discontinuous, groups)

    per_type_group = None
    outer_summed = None
    if type_groups is not None and type_columns is not None:
        # Read by column (the histogram, the sums per document): the transpose of a row per column.
        per_type_group = table_of(type_groups, type_columns, False)[0].T
    elif type_groups is not None and group_columns is not None and type_outer is not None:
        per_type_group, outer_summed = table_of(type_groups, group_columns, True, *type_outer)
    elif type_groups is not None:
        per_type_group = grouped(type_groups) if group_columns is None else grouped_by(type_groups, group_columns)[0]
    details = None
    if keep_details:
        details = Details(
            reference,
            predicted,
            pairs,
            {name: matching_of(c) for name, c in chosen.items()},
            {name: matching_of(c) for name, c in scheme_chosen.items()},
        )
    more_totals: tuple[IntArray | None, ...] = ()
    if group_columns is None:
        more = tuple(grouped(g) for g in more_groups)
    else:
        # Several groupings with inner keys (attributes' buckets), not too many combinations of
        # them: the columns counted per inner key alone counted once for all.
        inners = [g.inner for g in more_groups if g.inner > 0]
        later: list[Groups] | None = [] if len(inners) > 1 and math.prod(inners) <= _COMBINED else None
        by_columns = [grouped_by(g, group_columns, later) for g in more_groups]
        more, more_totals = tuple(t for t, _ in by_columns), tuple(totals for _, totals in by_columns)
        if later:
            rest_together(later, [t for t in more_totals if t is not None], group_columns)
    return Counted(
        counts.without_empty_types(), details, taxonomy, pairs, per_group, per_type_group, more, disc_groups,
        more_totals, outer_summed,
    )


# The figures the discontinuous-NER literature reports (Dai et al. 2020), as additive counts in
# ``Counts.extra``: strict matches among discontinuous mentions only (recall over the reference's,
# precision over the prediction's), and among all mentions of the units (sentences or documents)
# whose reference holds a discontinuous mention.
DISCONTINUOUS_EXTRA = (
    "discontinuous.reference",
    "discontinuous.predicted",
    "discontinuous.correct_reference",
    "discontinuous.correct_predicted",
    "discontinuous_units.units",
    "discontinuous_units.reference",
    "discontinuous_units.predicted",
    "discontinuous_units.correct_reference",
    "discontinuous_units.correct_predicted",
)


def _discontinuous_extra(
    strict: Callable[[IntArray, IntArray, int], IntArray],
    reference: Spans,
    predicted: Spans,
    discontinuous: tuple[BoolArray, BoolArray],
) -> dict[str, int]:
    """``DISCONTINUOUS_EXTRA`` from the strict criterion's tally by a key, ``strict(ref_key,
    pred_key, n)`` (rows 0 and 4: each side's full matches), and which mentions are discontinuous."""
    ref_disc, pred_disc = discontinuous
    units = np.unique(reference.unit[ref_disc])
    ref_in, pred_in = np.isin(reference.unit, units), np.isin(predicted.unit, units)
    out: dict[str, int] = {"discontinuous_units.units": int(units.shape[0])}
    for name, ref_key, pred_key in (("discontinuous", ref_disc, pred_disc), ("discontinuous_units", ref_in, pred_in)):
        table = strict(ref_key.astype(np.int64), pred_key.astype(np.int64), 2)
        out[f"{name}.reference"] = int(ref_key.sum())
        out[f"{name}.predicted"] = int(pred_key.sum())
        out[f"{name}.correct_reference"] = int(table[0, 1])
        out[f"{name}.correct_predicted"] = int(table[4, 1])
    return out


def _discontinuous_groups(
    strict: Callable[[IntArray, IntArray, int], IntArray],
    reference: Spans,
    predicted: Spans,
    discontinuous: tuple[BoolArray, BoolArray],
    groups: Groups,
) -> IntArray:
    """``_discontinuous_extra`` per group (a document, say): one row per group, the columns of
    ``DISCONTINUOUS_EXTRA``; the rows add up to the totals, since a unit lies in one group."""
    ref_disc, pred_disc = discontinuous
    n = groups.size
    out = np.zeros((n, len(DISCONTINUOUS_EXTRA)), dtype=np.int64)
    units, first = np.unique(reference.unit[ref_disc], return_index=True)
    out[:, 4] = np.bincount(groups.reference[ref_disc][first], minlength=n)
    ref_in, pred_in = np.isin(reference.unit, units), np.isin(predicted.unit, units)
    for at, ref_key, pred_key in ((0, ref_disc, pred_disc), (5, ref_in, pred_in)):
        # Keyed by group and by whether the mention counts: the counting half of each group.
        table = strict(groups.reference * 2 + ref_key, groups.predicted * 2 + pred_key, 2 * n)
        out[:, at] = np.bincount(groups.reference[ref_key], minlength=n)
        out[:, at + 1] = np.bincount(groups.predicted[pred_key], minlength=n)
        out[:, at + 2] = table[0, 1::2]
        out[:, at + 3] = table[4, 1::2]
    return out


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


def _tally(m: Matching, pairs: Pairs, ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
    rt = ref_key[pairs.ref[m.pair]]
    pt = pred_key[pairs.pred[m.pair]]
    scaled = np.rint(m.credit * CREDIT_SCALE).astype(np.int64) * (m.level == PARTIAL)
    out = np.zeros((len(MATCH_FIELDS), n), dtype=np.int64)
    for side, t in ((0, rt), (4, pt)):
        out[side + 0] = np.bincount(t, weights=(m.level == FULL), minlength=n)
        out[side + 1] = np.bincount(t, weights=(m.level == PARTIAL), minlength=n)
        out[side + 2] = np.bincount(t, weights=(m.level == NO_CREDIT), minlength=n)
        out[side + 3] = _bincount_int(t, scaled, n)
    return out


def _tally_free(
    rt: IntArray, pt: IntArray, level: IntArray, credit: FloatArray, n_types: int, with_scaled: bool = True
) -> IntArray:
    """``_tally`` of matched pairs given by their types, levels and credits (the scaled credits
    left zero unless ``with_scaled``)."""
    out = np.zeros((len(MATCH_FIELDS), n_types), dtype=np.int64)
    if level.shape[0] == 0:
        return out
    partial = level == PARTIAL
    with_scaled = with_scaled and bool(partial.any())
    scaled = np.rint(credit * CREDIT_SCALE).astype(np.int64) * partial if with_scaled else None
    row = (level - FULL) * n_types  # FULL, PARTIAL, NO_CREDIT are consecutive, like their fields
    for side, t in ((0, rt), (4, pt)):
        out[side : side + 3] = np.bincount(row + t, minlength=3 * n_types).reshape(3, n_types)
        if scaled is not None:
            out[side + 3] = _bincount_int(t, scaled, n_types)
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


def _bincount_units(index: IntArray, weights: IntArray, n: int) -> IntArray:
    """``_bincount_int`` of units covered (lengths, never negative): one float64 bincount where no
    sum can reach 2^53 (a chunk's units are far fewer), which it then adds exactly."""
    if weights.shape[0] * int(weights.max(initial=0)) < 1 << 53:
        out: IntArray = np.bincount(index, weights=weights, minlength=n).astype(np.int64)
        return out
    return _bincount_int(index, weights, n)


# Whether each of the 8 pair kinds is a wrong-label (right-label) overlap.
# Most combinations of inner keys (buckets of every attribute) counted in one pass.
_COMBINED = 1 << 16
_WRONG_LABEL_OVERLAP = np.isin(np.arange(8), WRONG_LABEL_OVERLAP_KINDS)
_RIGHT_LABEL_OVERLAP = np.isin(np.arange(8), RIGHT_LABEL_OVERLAP_KINDS)


def _taxonomy(
    m: Matching, pairs: Pairs, ref_key: IntArray, pred_key: IntArray, n: int, n_ref: int, n_pred: int
) -> IntArray:
    """The error types of Nejadgholi et al. (2020) over a one-to-one matching, tallied by the
    reference's key (the prediction's for false positives); see docs/criteria.md."""
    return _ErrorKinds.of(m, pairs, n_ref, n_pred).tally(ref_key, pred_key, n)


@dataclass(frozen=True)
class _ErrorKinds:
    """Which mentions each count of the error taxonomy counts (``ERROR_FIELDS``' row of each), on
    the reference's side and on the prediction's: found once a count, then tallied under any keys
    (types, documents, buckets) in one bincount."""

    ref_rows: IntArray
    ref_mentions: IntArray
    pred_rows: IntArray
    pred_mentions: IntArray

    @staticmethod
    def of(m: Matching, pairs: Pairs, n_ref: int, n_pred: int) -> _ErrorKinds:
        kind = pairs.kind[m.pair]
        matched_ref = pairs.ref[m.pair]
        rel = pairs.relation().astype(np.int64)[m.pair]
        rows: tuple[list[IntArray], list[IntArray]] = ([], [])
        mentions: tuple[list[IntArray], list[IntArray]] = ([], [])

        def add(name: str, side: int, which: IntArray) -> None:
            rows[side].append(np.full(which.shape[0], ERROR_FIELDS.index(name), dtype=np.int64))
            mentions[side].append(which)

        add("correct", 0, matched_ref[kind == EXACT])
        add("wrong_label_same_span", 0, matched_ref[kind == SAME_SPAN])
        add("wrong_label_overlap", 0, matched_ref[_WRONG_LABEL_OVERLAP[kind]])
        rlo = _RIGHT_LABEL_OVERLAP[kind]
        add("right_label_overlap", 0, matched_ref[rlo])
        add("right_label_overlap_longer", 0, matched_ref[rlo & (rel == 1)])
        add("right_label_overlap_shorter", 0, matched_ref[rlo & (rel == 2)])
        add("right_label_overlap_shifted", 0, matched_ref[rlo & (rel == 3)])
        add("right_label_overlap_left_match", 0, matched_ref[rlo & ((kind & SAME_START) > 0)])
        add("right_label_overlap_right_match", 0, matched_ref[rlo & ((kind & SAME_END) > 0)])

        ref_matched = np.zeros(n_ref, dtype=bool)
        ref_matched[matched_ref] = True
        pred_matched = np.zeros(n_pred, dtype=bool)
        pred_matched[pairs.pred[m.pair]] = True
        ref_overlaps = np.zeros(n_ref, dtype=bool)
        ref_overlaps[pairs.ref] = True
        pred_overlaps = np.zeros(n_pred, dtype=bool)
        pred_overlaps[pairs.pred] = True
        add("false_positive", 1, np.flatnonzero(~pred_matched))
        add("false_positive_overlapping", 1, np.flatnonzero(~pred_matched & pred_overlaps))
        add("false_negative", 0, np.flatnonzero(~ref_matched))
        add("false_negative_overlapping", 0, np.flatnonzero(~ref_matched & ref_overlaps))
        ref_rows, pred_rows = (np.concatenate(r) for r in rows)
        ref_mentions, pred_mentions = (np.concatenate(w).astype(np.int64, copy=False) for w in mentions)
        return _ErrorKinds(ref_rows, ref_mentions, pred_rows, pred_mentions)

    def tally(self, ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
        """Each count (a row of ``ERROR_FIELDS``) per key: ``[len(ERROR_FIELDS), n]``."""
        flat = np.concatenate(
            (self.ref_rows * n + ref_key[self.ref_mentions], self.pred_rows * n + pred_key[self.pred_mentions])
        )
        out: IntArray = np.bincount(flat, minlength=len(ERROR_FIELDS) * n).astype(np.int64, copy=False)
        return out.reshape(len(ERROR_FIELDS), n)


def _confusion(m: Matching, pairs: Pairs, ref_type: IntArray, pred_type: IntArray, n: int) -> IntArray:
    """The matched pairs of ``m`` by (same span or overlapping, reference type, predicted type)."""
    chosen = m.pair
    overlapping = ((pairs.kind[chosen] & SAME_SPAN) != SAME_SPAN).astype(np.int64)
    cell = (overlapping * n + ref_type[pairs.ref[chosen]]) * n + pred_type[pairs.pred[chosen]]
    out: IntArray = np.bincount(cell, minlength=len(CONFUSION_FIELDS) * n * n).astype(np.int64)
    return out.reshape(len(CONFUSION_FIELDS), n, n)


class _TokenCounter:
    """``_token_counts`` of two sides and their pairs under any keys: where each side's mentions
    are disjoint, what every count reads but the keys (the same-type pairs' mentions and
    overlaps, each side's lengths, whether their sums are exact in float64) found once a count,
    where the types, the documents and each grouping asked for them again."""

    def __init__(self, reference: Spans, predicted: Spans, pairs: Pairs) -> None:
        self.reference, self.predicted, self.pairs = reference, predicted, pairs
        self.disjoint = _disjoint(reference) and _disjoint(predicted)
        self.ready = False

    def _prepare(self) -> None:
        same = np.flatnonzero((self.pairs.kind & SAME_TYPE) > 0)
        self.same_ref, self.same_pred = self.pairs.ref.take(same), self.pairs.pred.take(same)
        r, p = self.reference, self.predicted
        self.weights = (self.pairs.overlap.take(same), r.end - r.start, p.end - p.start)
        # ``_bincount_units``' test, made once for each weights.
        self.exact = tuple(w.shape[0] * int(w.max(initial=0)) < 1 << 53 for w in self.weights)
        self.ready = True

    def counts(self, ref_key: IntArray, pred_key: IntArray, n: int) -> IntArray:
        if not self.disjoint or n == 0 or len(self.reference.types) == 0:
            return _token_counts(self.reference, self.predicted, self.pairs, ref_key, pred_key, n)
        if not self.ready:
            self._prepare()
        out = np.empty((len(GROUP_TOKEN_FIELDS), n), dtype=np.int64)
        overlap, ref_len, pred_len = self.weights
        rows = (
            (ref_key.take(self.same_ref), overlap, 0),
            (ref_key, ref_len, 1),
            (pred_key, pred_len, 2),
            (pred_key.take(self.same_pred), overlap, 0),
        )
        for i, (key, weights, w) in enumerate(rows):
            if self.exact[w]:
                out[i] = np.bincount(key, weights=weights, minlength=n)
            else:
                out[i] = _bincount_int(key, weights, n)
        return out


def _token_counts(
    reference: Spans, predicted: Spans, pairs: Pairs, ref_key: IntArray, pred_key: IntArray, n: int
) -> IntArray:
    """Units (tokens, or characters for offset input) covered per key and type on each side, and
    covered by both sides with the same type, tallied by ``ref_key`` (row 0: recall's side) and by
    ``pred_key`` (row 3: precision's side). A key is the type, a document or a bucket; the two
    sides' keys of one unit may differ (a bucket of mention length), so each side's share is its
    own and never passes its side's coverage. Rows follow ``GROUP_TOKEN_FIELDS``."""
    out = np.zeros((len(GROUP_TOKEN_FIELDS), n), dtype=np.int64)
    if n == 0 or len(reference.types) == 0:
        return out
    if _disjoint(reference) and _disjoint(predicted):
        # Each unit lies in at most one mention per side: a unit covered by both sides with one
        # type lies in exactly one same-type pair's overlap.
        same = (pairs.kind & SAME_TYPE) > 0
        out[0] = _bincount_units(ref_key[pairs.ref[same]], pairs.overlap[same], n)
        out[1] = _bincount_units(ref_key, reference.end - reference.start, n)
        out[2] = _bincount_units(pred_key, predicted.end - predicted.start, n)
        out[3] = _bincount_units(pred_key[pairs.pred[same]], pairs.overlap[same], n)
        return out
    # Nested or overlapping mentions: the units each (key, type) stratum covers on one side, as
    # disjoint stretches, and how much of each stretch the other side covers with that type.
    n_types = len(reference.types)
    stride = int(max(reference.end.max(initial=0), predicted.end.max(initial=0))) + 1
    zero = np.zeros(len(reference), dtype=np.int64)
    ref_by_key = _union(reference, ref_key, n_types, stride)
    pred_by_key = _union(predicted, pred_key, n_types, stride)
    ref_any = _union(reference, zero, n_types, stride)
    pred_any = _union(predicted, np.zeros(len(predicted), dtype=np.int64), n_types, stride)
    for row, (key, start, end), other in ((0, ref_by_key, pred_any), (3, pred_by_key, ref_any)):
        out[row] = _bincount_units(key, _covered(start, end, *other[1:]), n)
    out[1] = _bincount_units(ref_by_key[0], ref_by_key[2] - ref_by_key[1], n)
    out[2] = _bincount_units(pred_by_key[0], pred_by_key[2] - pred_by_key[1], n)
    return out


def _union(spans: Spans, key: IntArray, n_types: int, stride: int) -> tuple[IntArray, IntArray, IntArray]:
    """The units covered by the mentions of each (key, type) as disjoint stretches: their keys,
    and their starts and ends as ``type * stride + position`` (so stretches of one type from
    every key can be looked up in another side's stretches of that type)."""
    stratum = (key * n_types + spans.type) * stride
    pos = np.concatenate((stratum + spans.start, stratum + spans.end))
    delta = np.concatenate((np.ones(len(spans), dtype=np.int64), -np.ones(len(spans), dtype=np.int64)))
    order = np.lexsort((delta, pos))  # at one position, ends before starts: touching stretches split, no harm
    pos, delta = pos[order], delta[order]
    depth = np.cumsum(delta)
    before = np.concatenate(([0], depth[:-1]))
    opens = (before == 0) & (depth > 0)
    closes = (before > 0) & (depth == 0)
    start, end = pos[opens], pos[closes]
    strat = start // stride
    shift = (strat // n_types) * n_types * stride  # back to type * stride + position
    return (strat // n_types).astype(np.int64), start - shift, end - shift


def _covered(start: IntArray, end: IntArray, o_start: IntArray, o_end: IntArray) -> IntArray:
    """How many units of each stretch ``[start, end)`` the disjoint stretches ``o_start, o_end``
    (sorted, as ``_union`` gives them with one key) cover."""
    if o_start.shape[0] == 0 or start.shape[0] == 0:
        return np.zeros(start.shape[0], dtype=np.int64)
    cum = np.concatenate(([0], np.cumsum(o_end - o_start)))

    def below(x: IntArray) -> IntArray:
        i = np.searchsorted(o_start, x, side="right") - 1
        inside = np.clip(x - o_start[np.maximum(i, 0)], 0, (o_end - o_start)[np.maximum(i, 0)])
        out: IntArray = np.where(i >= 0, cum[np.maximum(i, 0)] + inside, 0)
        return out

    covered: IntArray = below(end) - below(start)
    return covered


def _disjoint(spans: Spans) -> bool:
    """Whether no two mentions share a unit (mentions are sorted by start)."""
    return bool((spans.start[1:] >= spans.end[:-1]).all())
