"""One chunk of a corpus counted, and chunk results combined in corpus order.

Every engine maps ``count_part`` over a source's parts and folds the results with ``Folder``:
the counts are added, per-document rows are joined (a document cut by a chunk boundary is
summed), matched-pair rows are handed to a sink in corpus order with their sentence or document
numbers shifted, and the error examples are the first few in corpus order. Whatever the chunk
size, the number of worker processes or the cluster, the fold gives the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import InputError
from ..runtime.records import record
from .counts import (
    DISCONTINUOUS_EXTRA,
    ERROR_FIELDS,
    Counted,
    Counts,
    Details,
    Groups,
    LearnedCredit,
    Options,
    count_grouped,
    group_fields,
)
from .criteria import CRITERIA, LEARNED, TAXONOMY
from .documents import DocCounts, DocState, TypeRows, compact_rows, scored_columns
from .matching import EXACT, FULL, Matching, Pairs
from .pairs import KeptDetails, PartRows, error_examples, render_rows
from .spans import BoolArray, IntArray, Spans
from .text import Repaired, Text

if TYPE_CHECKING:
    from .buckets import Attribute, TrainIndex
    from .judging import Judge, JudgeCredit


def learned_credit(judge: Judge, reference: Spans, predicted: Spans, text: Text, mode: JudgeCredit) -> LearnedCredit:
    """``stages.judging.learned_credit``, imported where a judge is given: a plain count starts without it."""
    from . import judging

    return judging.learned_credit(judge, reference, predicted, text, mode)


EXAMPLE_LIMIT = 5  # examples of each error kind kept; the JSON shows the first 3, report.html 5
PARTIAL_SAMPLE = 200  # partial pairs per criterion kept for report.html (the CSVs hold all)


@record
class ChunkData:
    """One chunk of a corpus read into spans.

    ``units`` are what mention ``unit`` indices count (sentences, or documents for offset
    formats). ``doc_key`` gives each unit's document key: keys are numbered within the chunk,
    and key 0 continues the previous chunk's last document where ``continues`` is true.
    """

    reference: Spans
    predicted: Spans
    text: Text
    documents: int  # documents this chunk adds to the corpus's count (-DOCSTART- lines for CoNLL)
    sentences: int
    tokens: int
    units: int
    doc_key: IntArray
    doc_advance: int  # how many keys this chunk moves the global key on
    doc_ids: tuple[str, ...] | None = None  # the name of each key, where the format gives one
    doc_unit: str = "document"  # what a per-document row is: "document", or "sentence" where there are none
    seen_types: tuple[str, ...] = ()  # the types the chunk names before --type-map and --types
    repairs: tuple[Repaired, ...] = ()  # per side (reference, prediction): what the repair policy changed


@record
class Wanted:
    """What a count produces beyond the totals."""

    documents: bool = False  # per-document (or per-sentence) statistics
    document_types: bool = False  # and per document and type (per-type intervals); needs ``documents``
    histogram: bool = False  # the per-document statistics as additive state only (``DocState``), not rows
    narrow: bool = False  # per-document rows of the columns scores read only, in compact integers
    # Per document, per document and type, and per document and bucket, only the columns scores
    # read (``scored_columns``, none of the others counted); the buckets' every statistic as each
    # bucket's totals (``PartResult.buckets``), their rows per document in ``bucket_documents``
    scored_groups: bool = False
    rows: tuple[str, ...] = ()  # criteria whose matched pairs are rendered as CSV rows; plus errors
    rows_dir: str | None = None  # where workers leave the rows (scratch files); None: in the result
    details: bool = False  # keep the matching and the text (Python's Report.pair_rows)
    examples: int = EXAMPLE_LIMIT
    partial_sample: int = PARTIAL_SAMPLE
    sampled: frozenset[str] = frozenset()  # report files whose partial sample an earlier part holds whole
    buckets: tuple[Attribute, ...] = ()  # every statistic per bucket of each (per document and bucket with documents)
    train: TrainIndex | None = None  # what the attributes that need a training corpus read


@record
class JudgeSpec:
    """A learned judge and how its verdicts give credit."""

    judge: Judge
    credit: JudgeCredit = "accept"


@dataclass
class PartResult:
    """What counting one part gives: its counts and whatever else the run asked for."""

    counts: Counts
    units: int
    doc_advance: int
    docs: DocCounts | None = None
    rows: PartRows | None = None
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    details: list[KeptDetails] = field(default_factory=list)
    seen_types: frozenset[str] = frozenset()
    repairs: tuple[Repaired, ...] = ()
    buckets: dict[str, TypeRows] = field(default_factory=dict)
    state: DocState | None = None  # the per-document statistics as a histogram (``Wanted.histogram``)
    # The discontinuous figures' counts per document (``counts.DISCONTINUOUS_EXTRA``), where
    # documents are wanted and the chunk has a discontinuous mention: the documents with any
    discontinuous: DocCounts | None = None
    # With ``Wanted.scored_groups`` and documents: each attribute's rows per document and bucket
    # with a mention, of the scored columns only (``buckets`` then holds each bucket's totals)
    bucket_documents: dict[str, TypeRows] = field(default_factory=dict)


def _bucket_groups(
    data: ChunkData, wanted: Wanted, found: tuple[BoolArray, BoolArray] | None = None
) -> tuple[tuple[Groups, ...], list[IntArray | None]]:
    """One grouping per attribute: by bucket, or by document and bucket where documents are
    wanted, each attribute's (document, bucket) keys with a mention beside it (None: every
    bucket, one document). ``found``: the sides' exact twins (``twins``), whose predicted
    mentions take their reference twins' buckets."""
    r, p = data.reference, data.predicted
    from .buckets import assign  # only where buckets are asked for: a plain count starts without them

    out: list[Groups] = []
    keys: list[IntArray | None] = []
    n_docs = int(data.doc_key.max(initial=-1)) + 1 if wanted.documents else 1
    for a, (ref_bucket, pred_bucket) in zip(
        wanted.buckets, assign(wanted.buckets, r, p, data.text, wanted.train, found), strict=True
    ):
        n = len(a.labels)
        if not wanted.documents:
            out.append(Groups(ref_bucket, pred_bucket, n, n if wanted.scored_groups else 0))
            keys.append(None)
            continue
        # Only the (document, bucket) pairs with a mention are groups, numbered in key order (the
        # others add nothing): a few a document, where a table of every pair holds a row per
        # bucket of every document, most of them zero.
        ref_key = data.doc_key[r.unit] * n + ref_bucket
        pred_key = data.doc_key[p.unit] * n + pred_bucket
        seen = np.zeros(max(n_docs, 1) * n, dtype=bool)
        seen[ref_key] = seen[pred_key] = True
        pair_keys = np.flatnonzero(seen)
        rank = np.cumsum(seen) - 1
        # With ``scored_groups`` each bucket's totals are counted beside (its rows summed).
        inner = (n, pair_keys % n) if wanted.scored_groups else (0, None)
        out.append(Groups(rank[ref_key], rank[pred_key], int(pair_keys.shape[0]), *inner))
        keys.append(pair_keys)
    return tuple(out), keys


def _bucket_totals(wanted: Wanted, totals: tuple[IntArray | None, ...]) -> dict[str, TypeRows]:
    """Each attribute's buckets' totals (``Counted.more_totals``) as bucket rows of one key."""
    out = {}
    for a, table in zip(wanted.buckets, totals, strict=True):
        assert table is not None  # every bucket grouping is counted with its totals
        n = len(a.labels)
        out[a.name] = TypeRows(np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64), a.labels, table)
    return out


def totals_of(wanted: Wanted) -> frozenset[str]:
    """The attributes whose bucket rows a chunk's result holds as each bucket's totals
    (``_bucket_totals``), which a ``Folder`` sums as they come."""
    return frozenset(a.name for a in wanted.buckets) if wanted.scored_groups else frozenset()


def _bucket_rows(wanted: Wanted, stats: tuple[IntArray, ...], keys: list[IntArray | None]) -> dict[str, TypeRows]:
    """Each attribute's rows: per (document, bucket) with a mention (``_bucket_groups``'s keys),
    or every bucket's."""
    out = {}
    for a, table, kept in zip(wanted.buckets, stats, keys, strict=True):
        n = len(a.labels)
        if kept is None:
            kept = np.arange(n)
        out[a.name] = TypeRows((kept // n).astype(np.int64), (kept % n).astype(np.int64), a.labels, table)
    return out


_CORRECT = ERROR_FIELDS.index("correct")


def twins(reference: Spans, predicted: Spans) -> tuple[BoolArray, BoolArray] | None:
    """Which mentions of each side have a twin on the other (the same start, end and type) that
    overlaps nothing else, where that is quick to tell: no mention empty and no two mentions of
    one side sharing a token (as decoded labels give them). Such a pair is a full match under
    every criterion and scheme and touches no other pair, so it can be counted from its type and
    length alone. None where a side's mentions are empty or overlap (the general count holds)."""
    rs, re_, ps, pe = reference.start, reference.end, predicted.start, predicted.end
    n_ref, n_pred = rs.shape[0], ps.shape[0]
    if n_ref == 0 or n_pred == 0:
        return None
    # Mentions sorted by start, each non-empty and ending at or before the next one's start:
    # starts strictly increase, so a start names at most one mention on each side.
    if not (bool((re_ > rs).all()) and bool((pe > ps).all())):
        return None
    if not (bool((rs[1:] >= re_[:-1]).all()) and bool((ps[1:] >= pe[:-1]).all())):
        return None
    extent = int(max(re_[-1], pe[-1]))  # the last mention ends last: no mention contains another
    if extent <= 16 * (n_ref + n_pred):
        # Dense (tokens): the prediction starting at each position, looked up (a binary search per
        # mention costs four times as much).
        at = np.zeros(extent, dtype=np.int64)
        at[ps] = np.arange(n_pred)
        at = at[rs]
    else:
        at = np.searchsorted(ps, rs)
        np.minimum(at, n_pred - 1, out=at)
    ref_twin = (ps[at] == rs) & (pe[at] == re_) & (predicted.type[at] == reference.type)
    pred_twin = np.zeros(n_pred, dtype=bool)
    pred_twin[at[ref_twin]] = True
    return ref_twin, pred_twin


def count_twins_apart(
    reference: Spans,
    predicted: Spans,
    options: Options,
    keep_details: bool = False,
    *,
    groups: Groups | None = None,
    type_groups: Groups | None = None,
    more_groups: tuple[Groups, ...] = (),
    type_columns: Sequence[int] | None = None,
    group_columns: Sequence[int] | None = None,
    type_outer: tuple[IntArray, int] | None = None,
    found: tuple[BoolArray, BoolArray] | None = None,
    looked: bool = False,
) -> tuple[Counted, Spans, Spans]:
    """``count_grouped(reference, predicted, options, ...)`` with the mentions that match their twin
    exactly (``twins``) counted from their types and lengths, and only the others matched; with
    the spans the returned matching and pairs index (the whole sides where nothing is set apart).
    Most mentions of a real prediction have such a twin, and matching is the count's cost. With
    ``keep_details``, the twins' pairs are put back among the others': the pairs and matchings
    (and the details) are the whole sides' and index them, as ``count_grouped``'s do. The
    groupings (``groups``, ``type_groups``, ``more_groups``, ``type_outer``, as ``count_grouped`` takes them, for
    mentions without pieces and without a learned credit) are counted so too: each group's
    tables get its twins' share from a count and a sum of lengths per group and side."""
    if not looked:  # ``found``, where ``looked``: the caller's ``twins(reference, predicted)``
        found = twins(reference, predicted)
    if found is None or not found[0].any():
        whole = count_grouped(
            reference, predicted, options, keep_details=keep_details, groups=groups, type_groups=type_groups,
            more_groups=more_groups, type_columns=type_columns, group_columns=group_columns, type_outer=type_outer,
        )  # fmt: skip
        return whole, reference, predicted
    ref_twin, pred_twin = found
    r, p = reference.select(~ref_twin), predicted.select(~pred_twin)
    counted = count_grouped(
        r,
        p,
        options,
        keep_details=keep_details,
        groups=None if groups is None else _others(groups, ref_twin, pred_twin),
        type_groups=None if type_groups is None else _others(type_groups, ref_twin, pred_twin),
        more_groups=tuple(_others(g, ref_twin, pred_twin) for g in more_groups),
        type_columns=type_columns,
        group_columns=group_columns,
        type_outer=type_outer,
    )
    if keep_details:
        counted, r, p = _twins_back(counted, reference, predicted, ref_twin, pred_twin), reference, predicted
    types = reference.types
    n = len(types)
    # The types the other mentions dropped (none of theirs) come back before the twins are added.
    counts = counted.counts.with_types(types)
    kind = reference.type[ref_twin]
    many = np.bincount(kind, minlength=n).astype(np.int64)
    length = np.bincount(kind, weights=(reference.end - reference.start)[ref_twin], minlength=n).astype(np.int64)
    counts.reference = counts.reference + many
    counts.predicted = counts.predicted + many
    for table in (*counts.criteria.values(), *counts.schemes.values()):
        table[0] += many  # full credit, reference side
        table[4] += many  # and predicted side
    counts.token = counts.token + length  # covered by the reference, the prediction and both alike
    counts.errors[_CORRECT] += many
    diagonal = np.arange(n)
    counts.confusion[0, diagonal, diagonal] += many  # same span, the same type
    counted = replace(counted, counts=counts.without_empty_types())
    if groups is None and type_groups is None and not more_groups:
        return counted, r, p
    share = _TwinShare(reference, predicted, ref_twin, pred_twin)
    width = len(group_fields(tuple(c.name for c in CRITERIA)))
    every = range(width)
    if groups is not None and counted.groups is not None:
        share.add(counted.groups, every if group_columns is None else group_columns, groups)
    if type_groups is not None and counted.type_groups is not None:
        cols = type_columns if type_columns is not None else group_columns
        share.add(counted.type_groups, every if cols is None else cols, type_groups)
        if type_outer is not None and counted.type_outer is not None:
            outer = type_outer[0]
            by_outer = Groups(outer[type_groups.reference], outer[type_groups.predicted], type_outer[1])
            share.add(counted.type_outer, every if cols is None else cols, by_outer)
    for g, table, totals in zip(
        more_groups, counted.more_groups, counted.more_totals or (None,) * len(more_groups), strict=True
    ):
        share.add(table, every if group_columns is None else group_columns, g)
        if totals is not None:
            share.add(totals, every, g, inner=True)
    return counted, r, p


def _others(g: Groups, ref_twin: BoolArray, pred_twin: BoolArray) -> Groups:
    """``g`` for the mentions without a twin (the same groups, fewer mentions)."""
    return replace(g, reference=g.reference[~ref_twin], predicted=g.predicted[~pred_twin])


@lru_cache(maxsize=16)
def _twin_columns(fields: tuple[str, ...], columns: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Where a twin adds to a table of ``columns`` of ``fields`` (``group_fields``): the places
    that count one for each twin on the reference's side and on the prediction's, and those that
    add its length on each side. A twin is a full match under every criterion and scheme (never
    a partial one: no scaled credit), covers its units on both sides with its type, and is
    correct in the error taxonomy (counted on the reference's side)."""
    places: tuple[list[int], ...] = ([], [], [], [])
    for j, c in enumerate(columns):
        name = fields[c]
        if name == "reference" or name.endswith(".full_ref") or name == "errors.correct":
            places[0].append(j)
        elif name == "predicted" or name.endswith(".full_pred"):
            places[1].append(j)
        elif name in ("token.true_positive", "token.reference"):
            places[2].append(j)
        elif name in ("token.predicted", "token.true_positive_predicted"):
            places[3].append(j)
    return tuple(tuple(p) for p in places)


class _TwinShare:
    """The twins' share of a grouping's tables: per group (or inner key), each side's twins
    counted and their lengths summed, added to the columns a twin adds to."""

    def __init__(self, reference: Spans, predicted: Spans, ref_twin: BoolArray, pred_twin: BoolArray) -> None:
        self.ref_twin, self.pred_twin = ref_twin, pred_twin
        # The k-th twin of one side is the k-th of the other's, with the same start and end.
        self.length = (reference.end - reference.start)[ref_twin]
        self.fields = group_fields(tuple(c.name for c in CRITERIA))

    def add(self, table: IntArray, columns: Sequence[int], g: Groups, inner: bool = False) -> None:
        """Add the twins' share to ``table`` ([groups, columns], any layout) of grouping ``g``, or
        to its totals per inner key ([inner, columns]) with ``inner``."""
        n = table.shape[0]
        ref_key, pred_key = g.reference[self.ref_twin], g.predicted[self.pred_twin]
        if inner:
            ref_key, pred_key = ((k % g.inner if g.inner_of is None else g.inner_of[k]) for k in (ref_key, pred_key))
        places = _twin_columns(self.fields, tuple(columns))
        keys = (ref_key, pred_key, ref_key, pred_key)
        lengths = (None, None, self.length, self.length)
        shares: list[tuple[IntArray, IntArray | None, tuple[slice, ...]]]
        if np.array_equal(ref_key, pred_key):
            # A twin's group is its twin's (a document and a type, say): one count and one sum
            # of lengths serve both sides.
            counted, covered = _runs(places[0] + places[1]), _runs(places[2] + places[3])
            shares = [(ref_key, None, counted), (ref_key, self.length, covered)]
        else:
            shares = [(key, length, _runs(at)) for at, key, length in zip(places, keys, lengths, strict=True)]
        for key, length, runs in shares:
            if not runs:
                continue
            # Lengths sum exactly in float64: a chunk's units are far below 2^53.
            row = np.bincount(key, weights=length, minlength=n).astype(np.int64, copy=False)
            if table.strides[0] > table.strides[1]:
                # Row-major (a comparison's rows per document): a column at a time. A slice of
                # strided columns is added a row's few columns at a time, twice as slow as its
                # columns one by one.
                for run in runs:
                    for j in range(run.start, run.stop, run.step):
                        table[:, j] += row
            else:
                for run in runs:
                    table[:, run] += row[:, None]


@lru_cache(maxsize=64)
def _runs(places: tuple[int, ...]) -> tuple[slice, ...]:
    """``places`` (distinct columns) as a few slices of evenly spaced columns: the twins' share
    added to every column of a slice at once (a twin adds to every criterion's full matches,
    every fourth scored column), where a column at a time was 24 additions a table."""
    left = sorted(places)
    out: list[slice] = []
    while left:
        first = left[0]
        step = left[1] - first if len(left) > 1 else 1
        k = 1
        while k < len(left) and left[k] - left[k - 1] == step:
            k += 1
        out.append(slice(first, left[k - 1] + 1, step))
        left = left[k:]
    return tuple(out)


def _twins_back(
    counted: Counted, reference: Spans, predicted: Spans, ref_twin: BoolArray, pred_twin: BoolArray
) -> Counted:
    """``counted`` (of the mentions without a twin) with the twins' pairs put back in the order
    ``find_pairs`` gives the whole sides, by (reference, prediction), each matched at full credit
    under every criterion and scheme, as ``count_grouped`` fixes them. A twin overlaps only its
    twin, so each reference twin has one pair and no other pair's reference: a pair's place is its
    place among the others plus the twins before its reference (a mark each, no sort)."""
    sub = counted.pairs
    n_ref = ref_twin.shape[0]
    ref_of, pred_of = np.flatnonzero(~ref_twin), np.flatnonzero(~pred_twin)
    # Both sides in start order and twins alike in start: the k-th twin of one is the k-th of the other's.
    t_ref, t_pred = np.flatnonzero(ref_twin), np.flatnonzero(pred_twin)
    ref_full = ref_of[sub.ref]
    twins_before: IntArray = np.cumsum(ref_twin, dtype=np.int64) - ref_twin
    others_before = np.zeros(n_ref + 1, dtype=np.int64)
    np.cumsum(np.bincount(ref_full, minlength=n_ref), out=others_before[1:])
    sub_at = np.arange(len(sub), dtype=np.int64) + twins_before[ref_full]
    twin_at = others_before[t_ref] + np.arange(t_ref.shape[0], dtype=np.int64)
    total = len(sub) + t_ref.shape[0]
    length = (reference.end - reference.start)[t_ref].astype(np.int64)

    def placed(mine: IntArray, theirs: IntArray | int) -> IntArray:
        out = np.empty(total, dtype=np.int64)
        out[sub_at] = mine
        out[twin_at] = theirs
        return out

    pairs = Pairs(
        ref=placed(ref_full, t_ref),
        pred=placed(pred_of[sub.pred], t_pred),
        kind=placed(sub.kind, EXACT),
        overlap=placed(sub.overlap, length),
        ref_len=placed(sub.ref_len, length),
        pred_len=placed(sub.pred_len, length),
        distance=placed(sub.distance, 0),
    )

    # Every matching holds every twin's pair at full credit: marked once, and copied for each.
    twin_picked = np.zeros(total, dtype=bool)
    twin_picked[twin_at] = True
    twin_level = np.zeros(total, dtype=np.int64)
    twin_level[twin_at] = FULL
    twin_credit = twin_picked.astype(np.float64)

    def matched(m: Matching) -> Matching:
        at = sub_at[m.pair]
        picked = twin_picked.copy()
        picked[at] = True
        level = twin_level.copy()
        level[at] = m.level
        credit = twin_credit.copy()
        credit[at] = m.credit
        pair = np.flatnonzero(picked)
        return Matching(pair=pair, level=level[pair], credit=credit[pair])

    d = counted.details
    details = None
    if d is not None:
        details = Details(
            reference,
            predicted,
            pairs,
            {name: matched(m) for name, m in d.matchings.items()},
            {name: matched(m) for name, m in d.schemes.items()},
        )
    # The taxonomy reads the type scheme's matching: the same pairs, put back once.
    taxonomy = details.schemes[TAXONOMY.name] if details is not None else matched(counted.taxonomy)
    return replace(counted, details=details, taxonomy=taxonomy, pairs=pairs)


def count_part(
    data: ChunkData, options: Options, wanted: Wanted, judge: JudgeSpec | None = None, first_unit: int = 0
) -> PartResult:
    """Match and count one chunk, and produce what ``wanted`` asks for; report rows number the
    chunk's units from ``first_unit``."""
    r, p = data.reference, data.predicted
    learned = None
    if judge is not None:  # read as extents, a discontinuous mention is judged as its extent too
        extents = options.discontinuous == "extent"
        jr, jp = (r.without_pieces(), p.without_pieces()) if extents else (r, p)
        learned = learned_credit(judge.judge, jr, jp, data.text, judge.credit)
    groups = None
    fragments = r.pieces is not None or p.pieces is not None
    # The exact twins, found once for the buckets and the count, where the count sets them apart.
    apart = learned is None and not fragments
    found = twins(r, p) if apart and wanted.buckets else None
    more_groups, bucket_keys = _bucket_groups(data, wanted, found) if wanted.buckets else ((), [])
    n_docs = int(data.doc_key.max(initial=-1)) + 1
    n_types = len(r.types)
    # Every statistic adds up over types, so a document's row is the sum of its rows per type:
    # where both are wanted as a histogram, the documents are not counted a second time.
    # The discontinuous figures' per-document counts ride on the document groups, so a chunk
    # with fragments counts its documents directly.
    summed = wanted.histogram or wanted.scored_groups
    by_types = wanted.documents and wanted.document_types and summed and n_types > 0 and not fragments
    if wanted.documents and not by_types:
        groups = Groups(data.doc_key[r.unit], data.doc_key[p.unit], n_docs)
    type_groups = None
    pair_keys = np.zeros(0, dtype=np.int64)  # each type group's document * n_types + type
    if wanted.documents and wanted.document_types:
        # Only the (document, type) pairs with a mention are groups (the others add nothing to
        # any resample): a few per document, where every pair would be a row per type.
        ref_key = data.doc_key[r.unit] * n_types + r.type
        pred_key = data.doc_key[p.unit] * n_types + p.type
        seen = np.zeros(n_docs * n_types, dtype=bool)
        seen[ref_key] = seen[pred_key] = True
        pair_keys = np.flatnonzero(seen)
        rank = np.cumsum(seen) - 1
        type_groups = Groups(rank[ref_key], rank[pred_key], int(pair_keys.shape[0]))
    # Each document's row summed from its rows per type as they are counted (a bincount of their
    # keys under the document), where summing the table's rows walked it again afterwards.
    type_outer = None
    if by_types and wanted.scored_groups and not wanted.histogram:
        type_outer = (pair_keys // n_types, n_docs)
    keep = wanted.details or bool(wanted.rows)
    plain = learned is None and groups is None and type_groups is None and not wanted.buckets and not fragments
    # The columns per group: none is counted in a plain count.
    fields: tuple[str, ...] = ()
    scored: list[int] = []
    if plain:  # the examples below index the mentions that were matched (all of them, with details)
        counted, r, p = count_twins_apart(r, p, options, keep_details=keep)
    else:
        names = tuple(c.name for c in CRITERIA) + ((LEARNED.name,) if learned is not None else ())
        fields = group_fields(names)
        scored = scored_columns(fields, scaled=options.credit in ("dice", "iou"))
        # The histogram reads only the columns scores read (fewer distinct rows, each narrower):
        # the others are not counted per document and type.
        type_columns = scored if by_types and not wanted.scored_groups else None
        # So do the paired tests per group, and the taxonomy is read only by the buckets' totals.
        group_columns = scored if wanted.scored_groups else None
        if apart:  # each group's twins added by their share, not matched
            counted, r, p = count_twins_apart(
                r, p, options, keep_details=keep, groups=groups, type_groups=type_groups, more_groups=more_groups,
                type_columns=type_columns, group_columns=group_columns, type_outer=type_outer,
                found=found, looked=bool(wanted.buckets),
            )  # fmt: skip
        else:
            counted = count_grouped(
                r, p, options, learned=learned, keep_details=keep, groups=groups, type_groups=type_groups,
                more_groups=more_groups, type_columns=type_columns, group_columns=group_columns, type_outer=type_outer,
            )  # fmt: skip
    counts = counted.counts
    counts.documents, counts.sentences, counts.tokens = data.documents, data.sentences, data.tokens
    docs = None
    per_document = counted.groups
    type_stats = counted.type_groups
    if wanted.scored_groups or (by_types and type_stats is not None):
        fields = tuple(fields[i] for i in scored)
    state = None
    if by_types and type_stats is not None and wanted.histogram:
        # The documents' histogram straight from their rows per type: no table of their rows.
        present = np.flatnonzero(np.bincount(data.doc_key, minlength=n_docs))
        rows_by_type = TypeRows(pair_keys // n_types, pair_keys % n_types, tuple(r.types), type_stats)
        state, per_document = DocState.of_type_rows(present, rows_by_type, fields, data.doc_unit), None
    elif by_types and counted.type_outer is not None:
        per_document = counted.type_outer
    elif by_types and type_stats is not None:
        per_document = np.zeros((n_docs, len(fields)), dtype=np.int64)
        if pair_keys.shape[0]:
            doc_of = pair_keys // n_types  # in order: a document's pairs are consecutive
            last = np.flatnonzero(np.concatenate((doc_of[1:] != doc_of[:-1], [True])))
            # A document's row is the difference of running sums at its last pair and the
            # previous document's (exact in integers), taken along each column: ``type_columns``
            # gives the table as the transpose of a row per column, and a running sum along a
            # contiguous row is several times faster than np.add.reduceat over short runs.
            if type_stats.flags.c_contiguous:  # row-major (``group_columns``)
                # A document has a pair per type it holds, a few at most: its first pairs' rows
                # written, then its second pairs' added, and so on (a running sum down the
                # columns of a row-major table strides across it: several times slower).
                first = np.concatenate(([0], last[:-1] + 1))
                per_document[doc_of[first]] = type_stats[first]
                rank = np.arange(doc_of.shape[0]) - np.repeat(first, last - first + 1)
                for k in range(1, int(rank.max(initial=0)) + 1):
                    nth = np.flatnonzero(rank == k)
                    per_document[doc_of[nth]] += type_stats[nth]
            else:
                running = np.cumsum(type_stats.T, axis=1)
                sums = running[:, last]
                sums[:, 1:] -= running[:, last[:-1]]
                per_document[doc_of[last]] = sums.T
    if per_document is not None:
        present = np.flatnonzero(np.bincount(data.doc_key, minlength=per_document.shape[0]))
        docs = DocCounts(
            keys=present.astype(np.int64),
            stats=_rows_of(per_document, present),
            fields=fields,
            ids=None if data.doc_ids is None else [data.doc_ids[k] for k in present.tolist()],
            unit=data.doc_unit,
        )
        if type_stats is not None:
            docs.type_rows = TypeRows(
                keys=pair_keys // n_types, type_index=pair_keys % n_types, names=tuple(r.types), stats=type_stats
            )
    discontinuous = None
    if counted.discontinuous_groups is not None:
        table = counted.discontinuous_groups
        held = np.flatnonzero(table.any(axis=1))
        discontinuous = DocCounts(held.astype(np.int64), table[held], DISCONTINUOUS_EXTRA, unit=data.doc_unit)
    if wanted.narrow and docs is not None and not wanted.histogram and not wanted.scored_groups:
        # What compare's paired tests read, a fraction of the bytes a worker sends back.
        docs = docs.narrowed(scored)
        docs.stats = compact_rows(docs.stats)
    if wanted.histogram and docs is not None:
        # Only the columns scores read: fewer distinct rows, each narrower.
        narrowed = by_types or wanted.scored_groups
        state, docs = DocState.of(docs if narrowed else docs.narrowed(scored)), None
    rows = None
    details = counted.details
    if wanted.rows and details is not None:
        rows = render_rows(
            details, data.text, wanted.rows, wanted.partial_sample, first_unit, wanted.rows_dir, data.doc_ids,
            sampled=wanted.sampled,
        )
    examples = (
        error_examples(counted.taxonomy, counted.pairs, r, p, data.text, wanted.examples) if wanted.examples else {}
    )
    kept = [KeptDetails(details, data.text, 0, data.doc_ids)] if wanted.details and details is not None else []
    buckets = _bucket_rows(wanted, counted.more_groups, bucket_keys)
    bucket_documents = {}
    if wanted.scored_groups and wanted.buckets:
        bucket_documents = buckets if wanted.documents else {}
        buckets = _bucket_totals(wanted, counted.more_totals)
    return PartResult(
        counts, data.units, data.doc_advance, docs, rows, examples, kept, frozenset(data.seen_types), data.repairs,
        buckets, state, discontinuous, bucket_documents,
    )


def _rows_of(table: IntArray, present: IntArray) -> IntArray:
    """``table[present]`` (``present`` ascending), as a view where it is a run of rows. Most chunks
    hold a unit of every document they number, or of all but the first (key 0, the previous
    chunk's last document, where the chunk starts with a document of its own): no copy of the
    table (a comparison's part spent about 8 % of its count copying it)."""
    n = present.shape[0]
    if n and int(present[-1]) - int(present[0]) + 1 == n:
        rows: IntArray = table[int(present[0]) : int(present[-1]) + 1]
        return rows
    picked: IntArray = table[present]
    return picked


class RowSink(Protocol):
    """Receives each chunk's report rows in corpus order (``presentation.ReportWriter``)."""

    rows_dir: str | None  # where local workers may leave the rows as scratch files

    def __call__(self, rows: PartRows) -> None: ...


class ExampleQuota:
    """Whether a part's error examples could ever be shown. The fold keeps the first few of each
    kind in corpus order, so once a part counted in this process holds ``Wanted.examples`` of
    every kind, a later part's would never be: it renders none (rendering is most of what the
    examples cost). ``position`` is the source's, which never decreases along the plan.

    So with the partial pairs report.html lists (``Wanted.partial_sample`` of each file): once a
    part holds a file's whole sample, a later part sends none of that file's. A worker's result
    then stays a few KB, where 600 sampled rows made it about 90 KB, more than a pipe holds: the
    worker waited, its chunk sent, until this process had counted its own."""

    def __init__(self) -> None:
        self.full_at: int | None = None  # the earliest position of a part whose examples were full
        self.sampled_at: dict[str, int] = {}  # each file's earliest position of a part that held its sample

    def wanted(self, wanted: Wanted, position: int) -> Wanted:
        if wanted.examples and self.full_at is not None and self.full_at < position:
            wanted = replace(wanted, examples=0)
        if wanted.rows and self.sampled_at:
            sampled = frozenset(name for name, at in self.sampled_at.items() if at < position)
            if sampled:
                wanted = replace(wanted, sampled=sampled)
        return wanted

    def note(self, result: PartResult, limit: int, position: int) -> None:
        examples = result.examples
        earliest = self.full_at is None or position < self.full_at
        if earliest and limit and examples and all(len(rows) >= limit for rows in examples.values()):
            self.full_at = position
        if result.rows is not None and result.rows.sample:
            for name, rows in result.rows.files.items():
                if len(rows.partial_lines) >= result.rows.sample and position < self.sampled_at.get(name, position + 1):
                    self.sampled_at[name] = position


def _first(a: dict[str, list[dict[str, Any]]], b: dict[str, list[dict[str, Any]]], limit: int) -> None:
    for kind, rows in b.items():
        have = a.setdefault(kind, [])
        if len(have) < limit:
            have.extend(rows[: limit - len(have)])


def _summed(rows: TypeRows, held: TypeRows | None = None) -> TypeRows:
    """Each bucket's totals of ``rows`` (rows of any documents), plus ``held``'s (one row per
    bucket): one row per bucket, of the key 0 (exact: integers)."""
    n = len(rows.names)
    table = np.zeros((n, rows.stats.shape[1]), dtype=np.int64)
    np.add.at(table, rows.type_index, rows.stats)
    if held is not None:
        if held.names != rows.names:
            raise ValueError("bucket totals of different buckets do not add up")
        np.add.at(table, held.type_index, held.stats)
    return TypeRows(np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64), rows.names, table)


class Folder:
    """Combines chunk results in corpus order; rows go to ``sink`` (or are kept when there is none)."""

    def __init__(
        self, *, sink: RowSink | None = None, examples: int = EXAMPLE_LIMIT, totals: frozenset[str] = frozenset()
    ) -> None:
        self.sink = sink
        self.limit = examples
        # Bucket rows that are each bucket's totals (``Wanted.scored_groups``: ``_bucket_totals``),
        # by attribute: summed as they come, not a block kept per chunk (they grew with the corpus).
        self.totals = totals
        self.result: PartResult | None = None
        # Per-document rows and bucket rows of each chunk with the offset of its keys, joined
        # once at the end: joining as they come would copy every row again with each chunk.
        self.docs: list[tuple[DocCounts, int]] = []
        self.buckets: dict[str, list[tuple[TypeRows, int]]] = {}
        self.discontinuous: list[tuple[DocCounts, int]] = []

    def _keep(self, part: PartResult, offset: int) -> PartResult:
        if part.docs is not None:
            self.docs.append((part.docs, offset))
        for name, rows in part.buckets.items():
            held = self.buckets.setdefault(name, [])
            if name in self.totals:
                rows = _summed(rows) if not held else _summed(rows, held[0][0])
                held[:] = [(rows, 0)]
            else:
                held.append((rows, offset))
        if part.discontinuous is not None:
            self.discontinuous.append((part.discontinuous, offset))
        return replace(part, docs=None, buckets={}, discontinuous=None, bucket_documents={})

    def add(self, part: PartResult) -> None:
        if part.rows is not None and self.sink is not None:
            self.sink(part.rows)
            part = replace(part, rows=None)
        if self.result is None:
            self.result = self._keep(part, 0)
            return
        a = self.result
        unit_offset, doc_offset = a.units, a.doc_advance
        part = self._keep(part, doc_offset)
        rows = a.rows
        if rows is not None and part.rows is not None:
            rows = rows.then(part.rows)
        _first(a.examples, part.examples, self.limit)
        self.result = PartResult(
            counts=a.counts.merge(part.counts),
            units=a.units + part.units,
            doc_advance=a.doc_advance + part.doc_advance,
            docs=None,
            rows=rows,
            examples=a.examples,
            details=a.details + [replace(k, unit_offset=k.unit_offset + unit_offset) for k in part.details],
            seen_types=a.seen_types | part.seen_types,
            repairs=tuple(x.then(y) for x, y in zip(a.repairs, part.repairs, strict=True)) or part.repairs,
            state=a.state.then(part.state, doc_offset) if a.state is not None and part.state is not None else None,
        )

    def total(self) -> PartResult:
        if self.result is None:
            raise InputError("nothing to score")
        if self.result.counts.documents == 0:
            self.result.counts.documents = 1  # a corpus without document marks is one document
        if self.result.state is not None:
            self.result.state = self.result.state.finished()
        return self.joined()

    def joined(self) -> PartResult:
        """The fold so far, its per-document and bucket rows joined."""
        if self.result is None:
            raise ValueError("nothing to fold")
        if self.docs:
            self.result.docs = DocCounts.join(self.docs)
            self.docs = [(self.result.docs, 0)]
        if self.discontinuous:
            self.result.discontinuous = DocCounts.join(self.discontinuous)
            self.discontinuous = [(self.result.discontinuous, 0)]
        if self.buckets:
            self.result.buckets = {name: TypeRows.join(pieces) for name, pieces in self.buckets.items()}
            self.buckets = {name: [(rows, 0)] for name, rows in self.result.buckets.items()}
        return self.result


def fold(
    parts: Sequence[PartResult], examples: int = EXAMPLE_LIMIT, totals: frozenset[str] = frozenset()
) -> PartResult:
    """Consecutive chunk results as one (what a Dask task returns for its chunks)."""
    folder = Folder(examples=examples, totals=totals)
    for part in parts:
        folder.add(part)
    return folder.joined()


class Source(Protocol):
    """Where chunks come from: a plan of picklable parts, and the reading of one part; and what
    the readers found beyond the spans, for the report."""

    @property
    def read(self) -> dict[str, Any] | None:
        """What the readers of annotation formats skipped or reconciled (``Report.read``); None
        where the format has nothing to say."""
        ...

    @property
    def located(self) -> dict[str, Any] | None:
        """How mentions given as strings were found in the text (``Report.located``); None for
        other predictions."""
        ...

    def for_workers(self, remote: bool) -> Source:
        """The source as workers in other processes read it: on machines elsewhere (``remote``),
        naming what it opens so that they find it (absolute paths). A file that cannot be read
        fails here, with this process's message, before any worker starts."""
        ...

    def parts(self) -> Any: ...

    def load(self, part: Any) -> ChunkData: ...

    def units(self, part: Any) -> int:
        """How many units (sentences or documents) ``load(part)`` will hold, found cheaply."""
        ...

    def size(self) -> int: ...

    def position(self, part: Any) -> int: ...
