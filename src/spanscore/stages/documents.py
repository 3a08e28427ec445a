"""Per-document counts: every statistic of each document, additive like the totals.

A row holds, summed over types, what ``Counts`` holds per type: mentions on each side, the match
table of every criterion and SemEval scheme, the token counts and the error taxonomy. Rows of a
corpus add up exactly to its totals, so resampling documents (bootstrap, randomisation) needs no
new matching. Where a corpus has no document marks, each sentence is a row.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from .counts import CREDIT_SCALE
from .spans import IntArray

PRED_TP = "token.true_positive_predicted"  # bucket rows only differ: documents never split a unit

FloatArray = npt.NDArray[np.float64]


@dataclass
class TypeRows:
    """Every statistic per document and type: row ``i`` is document key ``keys[i]``, type
    ``names[type_index[i]]``. Only pairs with a mention are kept; a document cut by a chunk
    boundary may have two rows of one type, which add up."""

    keys: IntArray
    type_index: IntArray
    names: tuple[str, ...]
    stats: IntArray

    @staticmethod
    def join(pieces: Sequence[tuple[TypeRows, int]]) -> TypeRows:
        """Rows of consecutive chunks, each with the offset of its keys, as one (one copy, where
        ``then`` chunk after chunk would copy everything each time)."""
        names: list[str] = []
        index: dict[str, int] = {}
        keys, types, stats = [], [], []
        for rows, offset in pieces:
            for n in rows.names:
                if n not in index:
                    index[n] = len(names)
                    names.append(n)
            remap = np.array([index[n] for n in rows.names] or [0], dtype=np.int64)
            keys.append(rows.keys + offset)
            types.append(remap[rows.type_index])
            stats.append(rows.stats)
        return TypeRows(np.concatenate(keys), np.concatenate(types), tuple(names), np.concatenate(stats))

    def then(self, later: TypeRows, offset: int) -> TypeRows:
        names = list(self.names)
        index = {n: i for i, n in enumerate(names)}
        for n in later.names:
            if n not in index:
                index[n] = len(names)
                names.append(n)
        remap = np.array([index[n] for n in later.names] or [0], dtype=np.int64)
        return TypeRows(
            np.concatenate((self.keys, later.keys + offset)),
            np.concatenate((self.type_index, remap[later.type_index])),
            tuple(names),
            np.concatenate((self.stats, later.stats)),
        )


@dataclass
class DocCounts:
    """Every statistic per document: ``stats[i]`` belongs to document key ``keys[i]``.

    ``unit`` says what a row is ("document" or "sentence"); ``ids`` name the rows where the format
    gives names (JSONL ids), else rows are numbered from 1 in corpus order.
    """

    keys: IntArray
    stats: IntArray  # [rows, len(fields)]
    fields: tuple[str, ...]
    ids: list[str] | None = None
    unit: str = "document"
    type_rows: TypeRows | None = None  # per document and type, where asked for

    def then(self, later: DocCounts, offset: int) -> DocCounts:
        """These rows followed by ``later``'s, whose keys start at ``offset``; a document that the
        chunk boundary cut in two (the same key on both sides) becomes one row."""
        keys = later.keys + offset
        stats, later_ids = later.stats, later.ids
        head = self.stats
        if self.keys.shape[0] and keys.shape[0] and keys[0] == self.keys[-1]:
            head = self.stats.astype(np.int64)  # a copy, wide enough for the sum (rows may be compact)
            head[-1] += stats[0]
            stats, keys = stats[1:], keys[1:]
            later_ids = later_ids[1:] if later_ids is not None else None
        ids = None if self.ids is None or later_ids is None else self.ids + later_ids
        type_rows = None
        if self.type_rows is not None and later.type_rows is not None:
            type_rows = self.type_rows.then(later.type_rows, offset)
        return DocCounts(
            np.concatenate((self.keys, keys)), np.concatenate((head, stats)), self.fields, ids, self.unit, type_rows
        )

    @staticmethod
    def join(pieces: Sequence[tuple[DocCounts, int]]) -> DocCounts:
        """The rows of consecutive chunks, each with the offset of its keys, as one: what ``then``
        gives chunk after chunk, with one copy of the rows instead of one per chunk."""
        first = pieces[0][0]
        keys: list[IntArray] = []
        stats: list[IntArray] = []
        ids: list[str] | None = [] if all(d.ids is not None for d, _ in pieces) else None
        for docs, offset in pieces:
            k, st, names = docs.keys + offset, docs.stats, docs.ids
            if keys and k.shape[0] and keys[-1].shape[0] and k[0] == keys[-1][-1]:
                # The chunk boundary cut this document in two: its rows become one.
                stats[-1] = stats[-1].astype(np.int64)  # a copy, wide enough for the sum (rows may be compact)
                stats[-1][-1] += st[0]
                k, st = k[1:], st[1:]
                names = names[1:] if names is not None else None
            if k.shape[0]:
                keys.append(k)
                stats.append(st)
                if ids is not None and names is not None:
                    ids.extend(names)
        type_rows = None
        if all(d.type_rows is not None for d, _ in pieces):
            type_rows = TypeRows.join([(d.type_rows, o) for d, o in pieces if d.type_rows is not None])
        return DocCounts(
            np.concatenate(keys) if keys else first.keys,
            np.concatenate(stats) if stats else first.stats,
            first.fields,
            ids,
            first.unit,
            type_rows,
        )

    def column(self, name: str) -> IntArray:
        return self.stats[:, self.fields.index(name)]

    def narrowed(self, columns: list[int]) -> DocCounts:
        """The rows (and rows per type) of these columns only."""
        t = self.type_rows
        # np.take, not ``stats[:, columns]``: several times faster for wide integer tables.
        rows = None if t is None else TypeRows(t.keys, t.type_index, t.names, np.take(t.stats, columns, axis=1))
        fields = tuple(self.fields[i] for i in columns)
        return DocCounts(self.keys, np.take(self.stats, columns, axis=1), fields, self.ids, self.unit, rows)

    def names(self) -> list[str]:
        if self.ids is not None:
            return self.ids
        return [str(i + 1) for i in range(self.stats.shape[0])]


def scored_columns(fields: tuple[str, ...], *, scaled: bool) -> list[int]:
    """The columns a score reads: the error taxonomy's are left out, and the scaled credits
    unless the credit is proportional (``scaled``) or learned."""
    return list(_scored_columns(fields, scaled))


@functools.cache
def _scored_columns(fields: tuple[str, ...], scaled: bool) -> tuple[int, ...]:
    """``scored_columns``, found once for each fields (every chunk asks, 0.1 ms a time)."""
    ends = (".full_ref", ".partial_ref", ".full_pred", ".partial_pred")

    def wanted(name: str) -> bool:
        if name.endswith((".scaled_credit_ref", ".scaled_credit_pred")):
            return scaled or name.startswith("learned.")
        return name in ("reference", "predicted") or name.startswith("token.") or name.endswith(ends)

    return tuple(i for i, name in enumerate(fields) if wanted(name))


def _div(num: FloatArray, den: IntArray, zero_division: float) -> FloatArray:
    safe = np.where(den > 0, den, 1)
    out: FloatArray = np.where(den > 0, num / safe, zero_division)
    return out


def _prf(cp: FloatArray, cr: FloatArray, n_pred: IntArray, n_ref: IntArray, zd: float) -> dict[str, FloatArray]:
    """``scores.prf`` over arrays: one precision, recall and F1 per row."""
    p = _div(cp, n_pred, zd)
    r = _div(cr, n_ref, zd)
    s = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(s > 0, 2 * p * r / np.where(s > 0, s, 1), 0.0)
    f = np.where(np.isnan(p) | np.isnan(r), np.nan, f)
    f = np.where((n_pred == 0) & (n_ref == 0), zd, f)
    return {"precision": p, "recall": r, "f1": f}


def _criteria(docs: DocCounts) -> list[str]:
    return [f.split(".")[0] for f in docs.fields if f.endswith(".full_ref")]


def _credit_sides(docs: DocCounts, name: str, credit: str) -> dict[str, FloatArray]:
    """Each row's credit of one criterion or scheme, on the reference side and the predicted side."""
    sides = {}
    for side in ("ref", "pred"):
        full = docs.column(f"{name}.full_{side}").astype(np.float64)
        partial = docs.column(f"{name}.partial_{side}").astype(np.float64)
        if name.startswith("semeval_"):
            sides[side] = full + 0.5 * partial  # PAR is worth a half; the other schemes have none
        elif credit in ("dice", "iou") or name == "learned":
            sides[side] = full + np.round(
                docs.column(f"{name}.scaled_credit_{side}").astype(np.float64) / CREDIT_SCALE, 9
            )
        else:
            sides[side] = full + float(credit) * partial
    return sides


def scores_per_row(docs: DocCounts, zero_division: float, credit: str) -> dict[str, dict[str, FloatArray]]:
    """Precision, recall and F1 of every criterion, SemEval scheme and the token score, per row."""
    n_ref, n_pred = docs.column("reference"), docs.column("predicted")
    out: dict[str, dict[str, FloatArray]] = {}
    for name in _criteria(docs):
        sides = _credit_sides(docs, name, credit)
        out[name] = _prf(sides["pred"], sides["ref"], n_pred, n_ref, zero_division)
    tp = docs.column("token.true_positive").astype(np.float64)
    # Rows of buckets have the units both sides cover tallied on the predicted side too.
    tp_pred = docs.column("token.true_positive_predicted").astype(np.float64) if PRED_TP in docs.fields else tp
    out["token"] = _prf(tp_pred, tp, docs.column("token.predicted"), docs.column("token.reference"), zero_division)
    return out


EMPTY_RULES = ("skip", "score")


def macro_over_documents(
    docs: DocCounts | DocState, zero_division: float, credit: str, empty: str = "skip"
) -> dict[str, Any]:
    """The mean and standard deviation over rows of each score (the HIPE scorer's macro_doc).

    A row without mentions on either side has no score of its own, only ``zero_division``: with
    ``empty="skip"`` (the default) it is left out of the means, and ``empty`` counts those rows;
    with ``empty="score"`` it counts as ``zero_division`` (the HIPE scorer's rule). NaN scores
    are left out of the mean. From a ``DocState`` (every document closed), each distinct row
    counts as often as documents hold it.
    """
    if empty not in EMPTY_RULES:
        raise OptionError(f"empty documents are skipped or scored, not {empty!r}")
    # numpy's default OpenBLAS threads turn these weighted sums over ~10,000 rows from a few
    # milliseconds into 0.4 s of CPU in a library session; one thread gives the same bits.
    from ..runtime.blas import one_blas_thread  # here: a plain count never takes these means

    with one_blas_thread():
        return _macro_over_documents(docs, zero_division, credit, empty)


def _macro_over_documents(docs: DocCounts | DocState, zero_division: float, credit: str, empty: str) -> dict[str, Any]:
    # One computation for rows and for their histogram, so both give the same bits.
    # Only the columns the scores read, as the additive state keeps them (``scored_columns``).
    if isinstance(docs, DocState):
        hist = docs.closed
    else:
        scored = docs.narrowed(scored_columns(docs.fields, scaled=credit in ("dice", "iou")))
        hist = Histogram.of(scored.stats, scored.fields)
    view = DocCounts(np.arange(hist.rows.shape[0]), hist.rows, hist.fields)
    blank = (view.column("reference") == 0) & (view.column("predicted") == 0)
    held = np.where(blank, 0, hist.counts) if empty == "skip" else hist.counts
    weights = held.astype(np.float64)
    out: dict[str, Any] = {
        "unit": docs.unit,
        "count": int(held.sum()),
        "empty": int(hist.counts[blank].sum()),
        "empty_rule": empty,
    }
    for name, block in scores_per_row(view, zero_division, credit).items():
        entry: dict[str, Any] = {}
        for metric, values in block.items():
            kept = ~np.isnan(values)
            w = weights[kept]
            if w.sum() > 0:
                mean = float(np.dot(w, values[kept]) / w.sum())
                entry[metric] = mean
                entry[f"{metric}_std"] = float(np.sqrt(np.dot(w, (values[kept] - mean) ** 2) / w.sum()))
            else:
                entry[metric] = entry[f"{metric}_std"] = None
        out[name] = entry
    return out


def document_rows(docs: DocCounts, zero_division: float, credit: str) -> Iterator[dict[str, Any]]:
    """One JSON-ready row per document (or sentence), named as in the evaluation's JSON: its
    position from 1 (``document`` or ``sentence``), its ``id`` where documents have one, the mention
    counts, ``metrics`` (each criterion's and the token score's block), ``semeval`` (each scheme's
    MUC categories and scores) and ``errors`` (the taxonomy's counts)."""
    scores = {
        name: {m: v.tolist() for m, v in block.items()}
        for name, block in scores_per_row(docs, zero_division, credit).items()
    }
    col = {f: docs.stats[:, i].tolist() for i, f in enumerate(docs.fields)}
    names = _criteria(docs)
    sides = {
        name: _credit_sides(docs, name, credit)["ref"].tolist() for name in names if not name.startswith("semeval_")
    }
    errors = [f.split(".", 1)[1] for f in docs.fields if f.startswith("errors.")]

    def score(name: str, i: int) -> dict[str, float | None]:
        return {m: None if v[i] != v[i] else float(v[i]) for m, v in scores[name].items()}

    for i in range(docs.stats.shape[0]):
        n_ref, n_pred = int(col["reference"][i]), int(col["predicted"][i])
        out: dict[str, Any] = {docs.unit: i + 1}
        if docs.ids is not None:
            out["id"] = docs.ids[i]
        out["reference"], out["predicted"] = n_ref, n_pred
        metrics: dict[str, Any] = {}
        semeval: dict[str, Any] = {}
        for name in names:
            if name.startswith("semeval_"):
                cor, par, inc = (int(col[f"{name}.{f}_ref"][i]) for f in ("full", "partial", "zero"))
                cor_p, par_p, inc_p = (int(col[f"{name}.{f}_pred"][i]) for f in ("full", "partial", "zero"))
                semeval[name[len("semeval_") :]] = {
                    "correct": cor,
                    "incorrect": inc,
                    "partial": par,
                    "missed": n_ref - cor - par - inc,
                    "spurious": n_pred - cor_p - par_p - inc_p,
                    "possible": n_ref,
                    "actual": n_pred,
                    **score(name, i),
                }
            else:
                metrics[name] = {
                    **score(name, i),
                    "full": int(col[f"{name}.full_ref"][i]),
                    "partial": int(col[f"{name}.partial_ref"][i]),
                    "credit": float(sides[name][i]),
                    "predicted": n_pred,
                    "reference": n_ref,
                }
        metrics["token"] = {
            **score("token", i),
            "true_positive": int(col["token.true_positive"][i]),
            "predicted": int(col["token.predicted"][i]),
            "reference": int(col["token.reference"][i]),
        }
        out["metrics"], out["semeval"] = metrics, semeval
        out["errors"] = {e: int(col[f"errors.{e}"][i]) for e in errors}
        yield out


@functools.cache
def _hash_weights() -> IntArray:
    """The rows' hash weights: made on first use, as numpy.random loads only for a run that needs it."""
    weights: IntArray = np.random.default_rng(20240531).integers(1, 1 << 62, size=4096, dtype=np.int64)
    return weights


def distinct_rows(stats: IntArray) -> tuple[IntArray, IntArray]:
    """The distinct rows of ``stats`` in lexicographic order, and each row's index among them.

    Rows are grouped by a hash (a wrapping integer dot product: one sort of integers, where
    ``np.unique(axis=0)`` compares whole rows and is a hundred times slower), every row is checked
    against its group's first, and only the few distinct rows are sorted lexicographically."""
    n, width = stats.shape
    if n == 0:
        return stats, np.zeros(0, dtype=np.int64)
    weights = _hash_weights()
    if width > weights.shape[0] or width == 0:
        rows, inverse = np.unique(stats, axis=0, return_inverse=True)
        return rows, inverse.reshape(-1)
    step = 8192  # rows at a time: temporaries of a block, never a copy of the table
    with np.errstate(over="ignore"):
        h = np.concatenate([stats[i : i + step].astype(np.int64) @ weights[:width] for i in range(0, n, step)])
    order = np.argsort(h, kind="stable")
    sorted_h = h[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_h[1:] != sorted_h[:-1])))
    group = np.cumsum(np.concatenate(([False], sorted_h[1:] != sorted_h[:-1])))
    firsts = order[starts]
    same = all(
        np.array_equal(stats[order[i : i + step]], stats[firsts[group[i : i + step]]]) for i in range(0, n, step)
    )
    if not same:  # a hash collision: compare whole rows
        rows, inverse = np.unique(stats, axis=0, return_inverse=True)
        return rows, inverse.reshape(-1)
    distinct = stats[firsts]
    lex = np.lexsort(distinct.T[::-1]) if width else np.arange(distinct.shape[0])
    rank = np.empty_like(lex)
    rank[lex] = np.arange(lex.shape[0])
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = rank[group]
    return distinct[lex], inverse


_BY_PRODUCT = 1000  # rows below which a histogram's sort words are packed by one integer product


_TOPS_BLOCK = 32  # rows a row of ``_column_tops``' blocks holds


def _column_tops(stats: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Each column's largest value. numpy reduces the first axis of a row-major table a row at
    a time, which for a histogram's narrow rows (42 16-bit columns, 84 bytes) costs several times
    the reading: the rows are taken ``_TOPS_BLOCK`` at a time as one long row, the blocks'
    largest values taken, then the largest of each column's among them (the same values)."""
    n, width = stats.shape
    if not stats.flags.c_contiguous or n < 2 * _TOPS_BLOCK or width == 0:
        out: npt.NDArray[Any] = stats.max(axis=0)
        return out
    whole = n - n % _TOPS_BLOCK
    out = stats[:whole].reshape(-1, _TOPS_BLOCK * width).max(axis=0).reshape(_TOPS_BLOCK, width).max(axis=0)
    if whole < n:
        out = np.maximum(out, stats[whole:].max(axis=0))
    return out


def _counted_by_words(stats: npt.NDArray[Any], weights: IntArray | None) -> tuple[IntArray, IntArray]:
    """The distinct rows of ``stats`` (non-negative counts) in lexicographic order, and the documents
    (or weights) each holds (``_grouped_by_words``)."""
    firsts, counts = _grouped_by_words(stats, weights)
    rows: IntArray = stats[firsts]
    return rows, counts


def _grouped_by_words(
    stats: npt.NDArray[Any],
    weights: IntArray | None,
    lead: IntArray | None = None,
    repeats: Collection[int] = (),
) -> tuple[IntArray, IntArray]:
    """Where the distinct rows of ``stats`` (non-negative counts) first occur, in lexicographic
    order of the rows, and the documents (or weights) each holds; with ``lead`` (a non-negative
    count per row), of the rows with ``lead`` as a first column before every column of ``stats``.

    Each row is packed into a few words, every column a field of the bits its largest value
    needs (none where it is always zero), the first column highest: the words order as the rows
    do, so the rows sort by a few words each (``lexsort`` over about ``width * 3 / 64`` keys for a
    document's small counts, not ``width``: many times faster than hashing wide rows and checking
    them, ``distinct_rows``), and equal rows end up side by side. The columns are read one at a
    time, cheaply where the table comes as the transpose of a row per column. Columns in
    ``repeats`` equal earlier ones (``_repeated_columns``) and are left out of the words."""
    n = stats.shape[0]
    tops = _column_tops(stats).tolist() if stats.shape[1] else []
    lead_top = int(lead.max()) if lead is not None and n else 0
    bits = [int(lead_top).bit_length(), *(0 if j in repeats else int(top).bit_length() for j, top in enumerate(tops))]
    word = 64
    places: list[tuple[int, int, int]] = []  # (column, word, shift) of every column not always zero
    free, last = 0, -1
    for j, b in enumerate(bits):  # column j - 1 of ``stats``; -1 is ``lead``
        if b == 0:
            continue
        if b > free:
            last, free = last + 1, word
        free -= b
        places.append((j - 1, last, free))
    words: list[npt.NDArray[Any]] = []
    if places and n < _BY_PRODUCT:
        # A small block (a group's documents in a chunk, say): one integer product puts every
        # column in its place (``v << s`` is ``v * 2^s`` modulo 2^64, and the fields do not
        # overlap), where a shift and an or per column cost more in calls than in arithmetic.
        scale64 = np.zeros((last + 1, stats.shape[1]), dtype=np.uint64)
        for j, w, shift in places:
            if j >= 0:
                scale64[w, j] = np.uint64(1) << np.uint64(shift)
        words = list(np.dot(scale64, stats.astype(np.uint64).T))
        for j, w, shift in places:
            if j < 0 and lead is not None:
                words[w] |= lead.astype(np.uint64) << np.uint64(shift)
    else:
        columns = stats.T
        for j, w, shift in places:
            if w == len(words):
                words.append(np.zeros(n, dtype=np.uint64))
            column = lead if j < 0 else columns[j]
            assert column is not None
            words[w] |= column.astype(np.uint64) << np.uint64(shift)
    if not words:
        words.append(np.zeros(n, dtype=np.uint64))
    order = np.lexsort(words[::-1]) if len(words) > 1 else np.argsort(words[0], kind="stable")
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for w_ in words:
        ordered = w_[order]
        change |= ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(np.concatenate(([True], change)))
    held = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)[order]
    counts: IntArray = np.add.reduceat(held, starts)
    firsts: IntArray = order[starts]
    return firsts, counts


def compact_rows(rows: IntArray) -> IntArray:
    """``rows`` in the narrowest of 16, 32 and 64-bit integers that holds them: a document's
    statistics are small counts, so a histogram takes a quarter of the memory (every use of its
    rows widens them: sums with int64 counts, scores in float64)."""
    if rows.size == 0:
        return rows
    low, high = int(rows.min()), int(rows.max())
    for kind in (np.int16, np.int32):
        if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max:
            return rows.astype(kind, copy=False)  # rows already this narrow are not copied again
    return rows


Repeats = tuple[tuple[int, int], ...]  # (column, an earlier column it equals in every row)


def _common_repeats(parts: Sequence[Histogram]) -> Repeats | None:
    """The repeated columns of every one of ``parts``' rows: those all the parts that know theirs
    share, checked on the rows of those that do not (a few rows: documents a join closed, a zero
    row); None where no part knows any."""
    known = [set(h.repeats) for h in parts if h.repeats is not None]
    if not known:
        return None
    common = set.intersection(*known)
    for h in parts:
        if h.repeats is None and common and h.rows.shape[0]:
            common = {(j, i) for j, i in common if np.array_equal(h.rows[:, j], h.rows[:, i])}
    return tuple(sorted(common))


# Rows piled up before a merge, whatever the histogram's size (``Histogram.pile``). Dozens of small
# histograms (one per bucket and type) each kept up to this many: 8192 held some 10 MB more at 1M
# sentences than at 100k (docs/benchmarks.md), at no cost in time seen.
PILE_ROWS = 2048


@dataclass(frozen=True)
class Histogram:
    """Per-document statistics kept as their distinct rows and how many documents have each.

    Resampling documents only ever sums rows, so documents with equal rows are interchangeable:
    a bootstrap resample is a multinomial draw over the distinct rows (the same distribution as
    drawing documents), a randomisation trial a binomial count per distinct row. The rows are
    sorted, so the histogram of a corpus is the same whatever order its documents were counted
    in, and two histograms merge by adding counts, like the totals.
    """

    rows: IntArray  # [distinct, len(fields)], sorted lexicographically; 16, 32 or 64-bit (``compact_rows``)
    counts: IntArray  # documents with each row
    fields: tuple[str, ...]
    pending: tuple[Histogram, ...] = ()  # histograms piled up by ``pile``, not yet merged in
    base: int = 0  # distinct rows at the last merge
    # Columns known equal to an earlier column in every row, as (column, earlier column) pairs
    # (``_repeated_columns``), left out of the sort words of a merge; None where not known.
    repeats: Repeats | None = dataclasses.field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        stats: npt.NDArray[Any],
        fields: tuple[str, ...],
        weights: IntArray | None = None,
        repeats: Repeats | None = None,
    ) -> Histogram:
        """The histogram of ``stats`` (one row per document, or per distinct row with ``weights``;
        ``repeats``: columns known to equal earlier ones in every row)."""
        # Kept in the rows' own integer type (compact where they come from a histogram), and in
        # either layout: the histogram's rows are copied out whole.
        stats = np.asarray(stats if np.issubdtype(stats.dtype, np.integer) else stats.astype(np.int64))
        if stats.shape[0] == 0:
            return cls(stats.reshape(0, len(fields)), np.zeros(0, dtype=np.int64), fields)
        if stats.shape[1] and int(stats.min()) >= 0:
            firsts, counts = _grouped_by_words(stats, weights, None, {j for j, _ in repeats or ()})
            rows = stats[firsts]
            keep = counts > 0
            if not keep.all():  # a merge's rows all hold documents: no copy of them then
                rows, counts = rows[keep], counts[keep]
            return cls(np.ascontiguousarray(compact_rows(rows)), counts, fields, repeats=repeats)
        stats = np.ascontiguousarray(stats)
        rows, inverse = distinct_rows(stats)
        w = np.ones(stats.shape[0], dtype=np.int64) if weights is None else weights
        counts = np.bincount(inverse, weights=w, minlength=rows.shape[0]).astype(np.int64)
        keep = counts > 0
        return cls(compact_rows(rows[keep]), counts[keep], fields)

    @property
    def documents(self) -> int:
        return int(self.counts.sum()) + sum(h.documents for h in self.pending)

    def merge(self, other: Histogram) -> Histogram:
        return self.pile(other).compacted()

    def pile(self, other: Histogram) -> Histogram:
        """``merge``, deferred: histograms are piled up and merged only once they hold more rows
        than twice what the last merge left (and 8192), so merging many chunks' histograms
        costs about as much as making one; ``compacted`` finishes the job."""
        if other.fields != self.fields:
            raise ValueError("histograms of different statistics do not merge")
        pending = (*self.pending, other.compacted() if other.pending else other)
        base = max(self.base, other.base, self.rows.shape[0])
        if self.rows.shape[0] + sum(h.rows.shape[0] for h in pending) > max(PILE_ROWS, 2 * base):
            merged = Histogram(self.rows, self.counts, self.fields, pending, repeats=self.repeats).compacted()
            return Histogram(merged.rows, merged.counts, self.fields, (), merged.rows.shape[0], merged.repeats)
        return Histogram(self.rows, self.counts, self.fields, pending, base, self.repeats)

    def compacted(self) -> Histogram:
        """The histogram with everything piled up merged in."""
        if not self.pending:
            return self
        rows = np.concatenate((self.rows, *(h.rows for h in self.pending)))
        counts = np.concatenate((self.counts, *(h.counts for h in self.pending)))
        return Histogram.of(rows, self.fields, counts, _common_repeats((self, *self.pending)))

    def with_zeros(self, documents: int) -> Histogram:
        """The histogram with documents that have none of these statistics (zero rows) added, up
        to ``documents`` in all."""
        missing = documents - self.documents
        if missing < 0:
            raise ValueError("more documents in the histogram than in the corpus")
        if missing == 0:
            return self
        rows = self.rows
        if not self.pending and (rows.size == 0 or int(rows.min()) >= 0):
            # Rows of counts: a zero row sorts first, so it goes in front (or adds to the zero
            # row there) with no sort, the rows and their type as ``merge`` leaves them. Written
            # in the rows' own integers: beside 64-bit zeros the rows would be widened first,
            # eight times a 16-bit histogram's bytes for a moment.
            if rows.shape[0] and not rows[0].any():
                counts = self.counts.copy()
                counts[0] += missing
                return Histogram(np.ascontiguousarray(compact_rows(rows)), counts, self.fields, repeats=self.repeats)
            counts = np.concatenate(([missing], self.counts)).astype(np.int64)
            if not rows.size:
                out = compact_rows(np.zeros((1, len(self.fields)), dtype=np.int64))
                return Histogram(out, counts, self.fields, repeats=self.repeats)
            # Straight into the type ``compact_rows`` gives them (rows in bytes come out in 16 bits).
            high = int(rows.max())
            kind = next((k for k in (np.int16, np.int32) if high <= np.iinfo(k).max), rows.dtype)
            out = np.empty((rows.shape[0] + 1, rows.shape[1]), dtype=kind)
            out[0] = 0
            out[1:] = rows
            return Histogram(out, counts, self.fields, repeats=self.repeats)
        zero = np.zeros((1, len(self.fields)), dtype=np.int64)
        return self.merge(Histogram(zero, np.array([missing], dtype=np.int64), self.fields))

    def total(self) -> IntArray:
        """The sum of every document's row (the pending histograms' too), in 64-bit integers."""
        rows = self.rows
        kind = np.result_type(self.counts.dtype, rows.dtype)
        out: IntArray = np.zeros(rows.shape[1], dtype=kind)
        # A block of rows at a time: ``counts @ rows`` widens every row to the counts' 64 bits
        # at once, eight times a 16-bit histogram's bytes; a block's copy stays small.
        for start in range(0, rows.shape[0], TOTAL_BLOCK):
            out += self.counts[start : start + TOTAL_BLOCK] @ rows[start : start + TOTAL_BLOCK]
        return out + sum((h.total() for h in self.pending), np.zeros_like(out))


TOTAL_BLOCK = 4096  # rows ``Histogram.total`` sums at a time (84 columns: 2.75 MB widened)


def _summed(present: IntArray, rows: TypeRows, fields: tuple[str, ...], unit: str) -> DocCounts:
    """The rows of the documents ``present``, each the sum of its rows per type (zero if none)."""
    stats = np.zeros((present.shape[0], len(fields)), dtype=np.int64)
    if rows.keys.shape[0]:
        starts = np.flatnonzero(np.concatenate(([True], rows.keys[1:] != rows.keys[:-1])))
        at = np.searchsorted(present, rows.keys[starts])
        stats[at] = np.add.reduceat(rows.stats, starts, axis=0)
    return DocCounts(present.astype(np.int64), stats, fields, None, unit, rows)


_SUMMED_WORDS = 2  # words a row may take in ``_summed_words``; wider rows take the table of sums


def _summed_words(
    table: npt.NDArray[Any], keys: IntArray
) -> tuple[list[npt.NDArray[np.uint64]] | None, list[tuple[int, int, int, int]], dict[int, int]]:
    """The rows of ``table`` (non-negative counts, ``keys`` in runs, a run a document) packed into
    words whose fields hold any run's sum, the first column highest; with each column's (column,
    word, shift, bits), a column equal to an earlier one read from that one's field
    (``_repeated_columns``, also returned). None where the fields take more than
    ``_SUMMED_WORDS`` words."""
    n = table.shape[0]
    if n == 0:
        return [], [], {}
    if int(table.min()) < 0:
        return None, [], {}
    runs = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1], [True])))
    most = int(np.diff(runs).max())  # the most rows a document has
    tops = table.max(axis=0).tolist()
    repeats = _repeated_columns(table, tops)
    places: list[tuple[int, int, int, int]] = []
    free, last = 0, -1
    for j, top in enumerate(tops):
        b = int(top * most).bit_length()
        if b == 0 or j in repeats:
            continue
        if b > free:
            last, free = last + 1, 64
            if last == _SUMMED_WORDS:
                return None, [], {}
        free -= b
        places.append((j, last, free, b))
    words = [np.zeros(n, dtype=np.uint64) for _ in range(last + 1)]
    columns = table.T
    for j, w, shift, _ in places:
        words[w] |= columns[j].astype(np.uint64) << np.uint64(shift)
    where = {j: (w, shift, b) for j, w, shift, b in places}
    places += [(j, *where[i]) for j, i in repeats.items()]  # read back from the column it repeats
    return words, places, repeats


def _repeated_columns(table: npt.NDArray[Any], tops: list[int], sums: list[int] | None = None) -> dict[int, int]:
    """Each column of ``table`` equal to an earlier one, and the first such column.

    Such a column tells no rows apart that the earlier one does not, and where two rows tie on
    the earlier column they tie on it too: words without it group and order the rows as with it.
    A document's counts repeat a lot (a one-to-one criterion's full matches counted on both
    sides, criteria that agree on a corpus): the 42 scored columns of a chunk of the synthetic
    corpus are 12 to 14 distinct ones. Only columns with the same largest value and sum are
    compared whole."""
    if sums is None:
        sums = table.sum(axis=0).tolist()
    columns = table.T
    seen: dict[tuple[int, int], list[int]] = {}
    out: dict[int, int] = {}
    for j, (top, total) in enumerate(zip(tops, sums, strict=True)):
        if not top:
            continue
        earlier = seen.setdefault((int(top), int(total)), [])
        same = next((i for i in earlier if bool((columns[i] == columns[j]).all())), None)
        if same is None:
            earlier.append(j)
        else:
            out[j] = same
    return out


def _histogram_of_words(
    words: list[npt.NDArray[np.uint64]],
    places: list[tuple[int, int, int, int]],
    zeros: int,
    width: int,
    fields: tuple[str, ...],
    repeats: Repeats,
) -> Histogram:
    """The histogram of the rows packed in ``words`` (``_summed_words``' fields) and ``zeros``
    zero rows, as ``Histogram.of`` gives it for the rows themselves: the words order as the rows
    do, and the distinct rows are read back out of their fields."""
    n = words[0].shape[0] if words else 0
    if n:
        order = np.lexsort(words[::-1]) if len(words) > 1 else np.argsort(words[0], kind="stable")
        change = np.zeros(n - 1, dtype=bool)
        for w in words:
            ordered = w[order]
            change |= ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(np.concatenate(([True], change)))
        counts = np.diff(np.append(starts, n)).astype(np.int64)
        firsts = order[starts]
        distinct = [w[firsts] for w in words]
    else:
        counts = np.zeros(0, dtype=np.int64)
        distinct = [np.zeros(0, dtype=np.uint64) for _ in words]
    # A zero row sorts first: it goes in front of the rows, or adds to the zero row there.
    first_zero = bool(counts.shape[0]) and not any(int(w[0]) for w in distinct)
    front = 1 if zeros and not first_zero else 0
    if zeros and first_zero:
        counts[0] += zeros
    elif front:
        counts = np.concatenate(([zeros], counts)).astype(np.int64)
    rows = np.zeros((counts.shape[0], width), dtype=np.int64)
    read: dict[tuple[int, int, int], IntArray] = {}
    for j, word, shift, b in places:
        field = read.get((word, shift, b))
        if field is None:
            bits = (distinct[word] >> np.uint64(shift)) & np.uint64((1 << b) - 1)
            field = read[word, shift, b] = bits.astype(np.int64)
        rows[front:, j] = field
    return Histogram(np.ascontiguousarray(compact_rows(rows)), counts, fields, repeats=repeats)


def _by_type_fields(
    rows: TypeRows, keep: npt.NDArray[np.bool_], fields: tuple[str, ...], repeats: Repeats | None = None
) -> dict[str, Histogram]:
    """The histogram of each type's statistics per document, over the rows where ``keep`` is true
    (rows of one document and type summed first: a chunk boundary may cut a document).

    One histogram of every type's rows with the type as a first column, split by it: its rows
    are sorted by type, then as each type's own histogram sorts them."""
    mine = np.flatnonzero(keep)
    if not mine.shape[0]:
        return {}
    types, keys = rows.type_index[mine], rows.keys[mine]
    # A chunk's rows come ordered by document, then type, one per pair (the histogram sorts
    # them anyway); only rows joined across a chunk boundary may repeat a pair, to be summed.
    pair = keys * (int(types.max()) + 1) + types
    if bool((pair[1:] > pair[:-1]).all()):
        # A chunk's rows but its first and last documents' are one run: a view, not a copy.
        whole = int(mine[-1]) - int(mine[0]) + 1 == mine.shape[0]
        stats = rows.stats[int(mine[0]) : int(mine[-1]) + 1] if whole else rows.stats[mine]
    else:
        repeats = None  # found on the rows as they came, not on their sums
        order = np.argsort(pair, kind="stable")
        pair, types, mine = pair[order], types[order], mine[order]
        starts = np.flatnonzero(np.concatenate(([True], pair[1:] != pair[:-1])))
        types, stats = types[starts], np.add.reduceat(rows.stats[mine], starts, axis=0)
    # The type ranks first in the sort words, never copied beside the table (a chunk's table
    # comes as the transpose of a row per column: its columns are read in place).
    firsts, counts = _grouped_by_words(stats, None, types, {j for j, _ in repeats or ()})
    distinct = compact_rows(stats[firsts])
    first = types[firsts]
    bounds = np.flatnonzero(np.concatenate(([True], first[1:] != first[:-1], [True])))
    return {
        rows.names[int(first[a])]: Histogram(np.ascontiguousarray(distinct[a:b]), counts[a:b], fields, repeats=repeats)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    }


_MIX = np.uint64(0x9E3779B97F4A7C15)  # Knuth's multiplicative hash: a word's top 16 bits of its product


def _word_groups(words: npt.NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
    """How many of ``words`` hold each distinct word, in ascending order of the words, and where
    one of each is.

    A chunk's (document, type) rows are a few hundred distinct words among thousands: the words
    are grouped by a 16-bit hash of each (numpy sorts 16-bit keys by radix, in linear time:
    a third of a sort of the 64-bit words), the runs of a hash that hold two words or more (a
    few) sorted by word, and only the distinct words sorted. Where those runs are many, the
    words are sorted whole."""
    n = words.shape[0]
    hashed = ((words * _MIX) >> np.uint64(48)).astype(np.uint16)
    order = np.argsort(hashed, kind="stable")
    ordered = words[order]
    new = ordered[1:] != ordered[:-1]
    run_of = hashed[order]
    mixed = new & (run_of[1:] == run_of[:-1])  # a new word within a run of one hash
    if mixed.any():
        run = np.cumsum(np.concatenate(([0], run_of[1:] != run_of[:-1])))
        bad = np.zeros(int(run[-1]) + 1, dtype=bool)
        bad[run[1:][mixed]] = True
        at = np.flatnonzero(bad[run])
        if at.shape[0] * 4 > n:
            order = np.argsort(words, kind="stable")
            ordered = words[order]
            starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
            whole: IntArray = np.diff(np.append(starts, n)).astype(np.int64)
            return whole, order[starts]
        by_word = np.lexsort((ordered[at], run_of[at]))  # each bad run's words in order, in place
        order[at] = order[at][by_word]
        ordered[at] = ordered[at][by_word]
        new = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(np.concatenate(([True], new)))
    rank = np.argsort(ordered[starts], kind="stable")
    counts: IntArray = np.diff(np.append(starts, n)).astype(np.int64)[rank]
    return counts, order[starts][rank]


def _one_word_state(present: IntArray, rows: TypeRows, fields: tuple[str, ...], unit: str) -> DocState | None:
    """``DocState.of_type_rows`` where each (document, type) row, its type first, packs into one
    64-bit word with room to spare (None where it does not, or the rows are not one per pair in
    document then type order).

    The one word serves both histograms: sorted with the type in its top bits it groups the rows
    per type (one sort of integers, the rows gathered once for every type); summed per document
    it gives the documents' words, sorted alone. A document's sum must fit each field, which a
    row's largest value times the most rows a document has (``_summed_words``) bounds: where those
    widths fill more than the word, each field is given its rows' bits and the spare bits are
    shared out among the fields, and the sums are checked afterwards. The check is exact: a field
    read out of a sum is the true sum modulo its width where every lower field fits, so each
    field's total over the documents equals the column's total over the rows only if no field of
    any document overflowed; where one did, the state is made as before this (None)."""
    keys_all, type_all, stats = rows.keys, rows.type_index, rows.stats
    width = stats.shape[1]
    if stats.dtype != np.int64 or not len(rows.names):
        return None
    pair = keys_all * len(rows.names) + type_all
    if not bool((pair[1:] > pair[:-1]).all()):
        return None
    first, last = int(present[0]), int(present[-1])
    # Rows in document order: the first document's come first, the last's last.
    a = int(np.searchsorted(keys_all, first, side="right"))
    b = int(np.searchsorted(keys_all, last, side="left"))
    if b <= a:
        return None
    table, keys, types = stats[a:b], keys_all[a:b], type_all[a:b]
    # As unsigned words the largest value of each column tells a negative count too; no column's
    # total may reach 2^62 (the totals and the check's sums are 64-bit integers).
    tops_u = table.view(np.uint64).max(axis=0)
    if int(tops_u.max()) * (b - a) >= 1 << 62:
        return None
    tops = tops_u.tolist()
    sums = table.sum(axis=0).tolist()
    repeats = _repeated_columns(table, tops, sums)
    ends = np.flatnonzero(np.concatenate((keys[1:] != keys[:-1], [True])))
    most = int(np.diff(ends, prepend=-1).max())
    lead = int(types.max()).bit_length()
    budget = 64 - max(lead, 1)  # the type takes the top bits; every field is under 2^63
    cols = [j for j, top in enumerate(tops) if top and j not in repeats]
    bits = [int(tops[j]).bit_length() for j in cols]
    safe = [int(tops[j] * most).bit_length() for j in cols]
    if sum(bits) > budget:
        return None
    checked = sum(safe) > budget
    if checked:  # the spare bits shared out a bit at a time, in column order
        spare = budget - sum(bits)
        while spare:
            grown = False
            for i in range(len(cols)):
                if spare and bits[i] < safe[i]:
                    bits[i] += 1
                    spare -= 1
                    grown = True
            if not grown:
                break
    else:
        bits = safe
    places: list[tuple[int, int, int]] = []
    free = budget
    for j, b_ in zip(cols, bits, strict=True):
        free -= b_
        places.append((j, free, b_))
    word = np.zeros(b - a, dtype=np.uint64)
    for j, shift, _ in places:
        word |= table[:, j].view(np.uint64) << np.uint64(shift)
    found = tuple(sorted(repeats.items()))
    # Each column's field among the places (a repeated column its earlier one's; the last, zeros).
    source = np.full(width, len(places), dtype=np.intp)
    source[cols] = np.arange(len(places))
    for j, i in repeats.items():
        source[j] = source[i]

    # The documents' words: differences of running sums (modulo 2^64, exact where the fields hold).
    running = np.cumsum(word)
    summed = running[ends]
    summed[1:] -= running[ends[:-1]]
    counts, at = _word_groups(summed)
    distinct = summed[at]
    empty = (present.shape[0] - 2) - ends.shape[0]  # closed documents with no mention: zero rows
    front = 1 if empty and int(distinct[0]) else 0
    read = np.zeros((counts.shape[0] + front, len(places) + 1), dtype=np.uint64)
    shifts = np.array([shift for _, shift, _ in places], dtype=np.uint64)
    masks = np.array([(1 << b_) - 1 for _, _, b_ in places], dtype=np.uint64)
    read[front:, :-1] = (distinct[:, None] >> shifts) & masks
    got = read.view(np.int64)  # fields of at most 63 bits: the same values
    if checked and (counts @ got[front:, :-1]).tolist() != [sums[j] for j in cols]:
        return None  # a document's sum overflowed a field: the wider fields of ``_summed_words``
    if empty and not front:
        counts[0] += empty
    elif front:
        counts = np.concatenate(([empty], counts)).astype(np.int64)
    # The rows in the type ``compact_rows`` gives them (none is negative), every column from its field.
    top = int(got.max())
    narrow = next((k for k in (np.int16, np.int32) if top <= np.iinfo(k).max), np.int64)
    doc_rows = np.take(got.astype(narrow, copy=False), source, axis=1)
    closed = Histogram(doc_rows, counts, fields, repeats=found)

    # Each type's documents: the words with the type on top, grouped, each distinct row gathered.
    typed = word | (types.astype(np.uint64) << np.uint64(64 - lead)) if lead else word
    counts, firsts = _word_groups(typed)
    held = compact_rows(table[firsts])
    first_type = types[firsts]
    bounds = np.flatnonzero(np.concatenate(([True], first_type[1:] != first_type[:-1], [True])))
    by_type = {
        rows.names[int(first_type[i])]: Histogram(np.ascontiguousarray(held[i:k]), counts[i:k], fields, repeats=found)
        for i, k in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    }

    kept = TypeRows(
        np.concatenate((keys_all[:a], keys_all[b:])),
        np.concatenate((type_all[:a], type_all[b:])),
        rows.names,
        np.concatenate((stats[:a], stats[b:])),
    )
    edge_stats = np.zeros((2, width), dtype=np.int64)
    edge_stats[0] = stats[:a].sum(axis=0)
    edge_stats[1] = stats[b:].sum(axis=0)
    edges = DocCounts(present[[0, -1]].astype(np.int64), edge_stats, fields, None, unit, kept)
    return DocState(edges, closed, by_type, unit)


@dataclass
class DocState:
    """Per-document statistics as additive state, for intervals without the per-document rows.

    The documents of a run of chunks are a histogram (``closed``; per type in ``types``), except
    the first and the last (``edges``, at most two rows with their keys): a chunk boundary may cut
    those in two. Joining two runs (``then``) sums a cut document and closes every document but
    the new run's first and last, so memory follows the distinct rows, not the documents; the
    result is the same histogram whatever the chunks, processes or engine.

    The documents a join closes (one or two a join) wait as rows (``loose``) until
    ``LOOSE_ROWS`` of them are made histograms at once, or the run is ``finished``: a histogram
    of two rows, and of their rows per type, cost about as much as one of hundreds (a fold of a
    run's 22 parts made 21 of each, 2.7 of its 8.6 ms).
    """

    edges: DocCounts
    closed: Histogram
    types: dict[str, Histogram] | None  # None: no counts per type were asked for
    unit: str = "document"
    loose: DocCounts | None = None  # documents closed by joins, not yet in ``closed`` and ``types``

    @classmethod
    def of_histogram(cls, closed: Histogram, unit: str) -> DocState:
        """The state of a whole corpus whose documents are ``closed``."""
        empty = DocCounts(np.zeros(0, dtype=np.int64), np.zeros((0, len(closed.fields)), dtype=np.int64), closed.fields)
        return cls(dataclasses.replace(empty, unit=unit), closed, None, unit)

    @classmethod
    def of(cls, docs: DocCounts) -> DocState:
        """The state of one chunk's per-document rows."""
        n = docs.keys.shape[0]
        edge = np.zeros(n, dtype=bool)
        if n:
            edge[0] = edge[-1] = True
        return cls._split(docs, edge)

    @classmethod
    def of_type_rows(cls, present: IntArray, rows: TypeRows, fields: tuple[str, ...], unit: str) -> DocState:
        """``of`` the chunk's per-document rows, given as its rows per document and type (the
        documents ``present``, in order, each the sum of its rows in ``rows``, zero where it has
        none): the same state, without the table of every document's row.

        Each (document, type) row is packed into a few words, every column a field wide enough for
        the largest sum of a document's rows (its largest value times the most rows a document
        has), so a document's words are the sums of its rows' words (no field carries into the
        next): two running sums of a word or two, where the table took one of every column, and
        the documents' histogram sorts those words. Its distinct rows are read back out of them.
        Where a row and its type fit one word, that one word serves both histograms
        (``_one_word_state``)."""
        n = present.shape[0]
        width = len(fields)
        stats = rows.stats
        if n < 3 or width == 0 or rows.keys.shape[0] == 0:
            return cls.of(_summed(present, rows, fields, unit))
        quick = _one_word_state(present, rows, fields, unit)
        if quick is not None:
            return quick
        first, last = int(present[0]), int(present[-1])
        open_row = (rows.keys == first) | (rows.keys == last)
        shut = np.flatnonzero(~open_row)
        # The first and last documents' rows come first and last (rows are in document order).
        a, b = (int(shut[0]), int(shut[-1]) + 1) if shut.shape[0] else (0, 0)
        whole = b - a == shut.shape[0]
        keys = rows.keys[a:b] if whole else rows.keys[shut]
        table = stats[a:b] if whole else stats[shut]
        words, places, repeats = _summed_words(table, keys)
        if words is None:
            return cls.of(_summed(present, rows, fields, unit))
        ends = np.flatnonzero(np.concatenate((keys[1:] != keys[:-1], [True]))) if keys.shape[0] else keys
        summed = []
        for w in words:
            running = np.cumsum(w)
            at = running[ends]
            at[1:] -= running[ends[:-1]]
            summed.append(at)
        empty = (n - 2) - ends.shape[0]  # closed documents with no mention: zero rows
        # Columns equal in every (document, type) row are equal in their sums too.
        found = tuple(sorted(repeats.items()))
        closed = _histogram_of_words(summed, places, empty, width, fields, found)
        kept = TypeRows(rows.keys[open_row], rows.type_index[open_row], rows.names, stats[open_row])
        edge_keys = present[[0, n - 1]].astype(np.int64)
        edge_stats = np.zeros((2, width), dtype=np.int64)
        for i, key in enumerate((first, last)):
            mine = kept.keys == key
            if mine.any():
                edge_stats[i] = kept.stats[mine].sum(axis=0)
        types = _by_type_fields(rows, ~open_row, fields, found)
        edges = DocCounts(edge_keys, edge_stats, fields, None, unit, kept)
        return cls(edges, closed, types, unit)

    @classmethod
    def _split(cls, docs: DocCounts, edge: npt.NDArray[np.bool_], state: DocState | None = None) -> DocState:
        n = docs.keys.shape[0]
        # The edges are the first and last rows (``of``, ``then``) or none (``finished``): the
        # rows between are a view, not a copy.
        ends = n >= 2 and int(np.count_nonzero(edge)) == 2 and bool(edge[0]) and bool(edge[-1])
        closed = Histogram.of(docs.stats[1:-1] if ends else docs.stats[~edge], docs.fields)
        types: dict[str, Histogram] | None = None
        kept_rows = None
        if docs.type_rows is not None:
            rows = docs.type_rows
            open_keys = docs.keys[edge]
            if open_keys.shape[0] <= 2:
                open_row = np.zeros(rows.keys.shape[0], dtype=bool)
                for key in open_keys.tolist():
                    open_row |= rows.keys == key
            else:
                open_row = np.isin(rows.keys, open_keys)
            types = _by_type_fields(rows, ~open_row, docs.fields)
            kept_rows = TypeRows(rows.keys[open_row], rows.type_index[open_row], rows.names, rows.stats[open_row])
        edges = DocCounts(docs.keys[edge], docs.stats[edge], docs.fields, None, docs.unit, kept_rows)
        if state is not None:
            closed = state.closed.pile(closed)
            if types is not None and state.types is not None:
                for name, h in state.types.items():
                    types[name] = h.pile(types[name]) if name in types else h
        return cls(edges, closed, types, docs.unit)

    def then(self, later: DocState, offset: int) -> DocState:
        """This run followed by ``later``'s, whose keys start at ``offset``."""
        joined = self.edges.then(later.edges, offset)
        types = None
        if self.types is not None and later.types is not None:
            types = dict(self.types)
            for name, h in later.types.items():
                types[name] = types[name].pile(h) if name in types else h
        if types is None:
            joined = dataclasses.replace(joined, type_rows=None)
        loose = _after(self.loose, later.loose)
        edges = joined
        n = joined.keys.shape[0]
        if n > 2:
            edge = np.zeros(n, dtype=bool)
            edge[0] = edge[-1] = True
            edges, closed = _parted(joined, edge)
            loose = _after(loose, closed)
        state = DocState(edges, self.closed.pile(later.closed), types, self.unit, loose)
        return state._flushed() if loose is not None and loose.keys.shape[0] >= LOOSE_ROWS else state

    def _flushed(self) -> DocState:
        """The loose documents put in the histograms."""
        if self.loose is None:
            return self
        kept = DocState(self.edges, self.closed, self.types, self.unit)
        done = DocState._split(self.loose, np.zeros(self.loose.keys.shape[0], dtype=bool), kept)
        return DocState(self.edges, done.closed, done.types, self.unit)

    def finished(self) -> DocState:
        """Every document closed, every histogram compact: the state of a whole corpus."""
        state = self._flushed()
        done = DocState._split(state.edges, np.zeros(state.edges.keys.shape[0], dtype=bool), state)
        types = None if done.types is None else {name: h.compacted() for name, h in done.types.items()}
        return DocState(done.edges, done.closed.compacted(), types, done.unit)

    @property
    def documents(self) -> int:
        loose = 0 if self.loose is None else int(self.loose.keys.shape[0])
        return self.closed.documents + int(self.edges.keys.shape[0]) + loose


LOOSE_ROWS = 512  # documents closed by joins held as rows, at most, before they are made histograms


def _parted(docs: DocCounts, edge: npt.NDArray[np.bool_]) -> tuple[DocCounts, DocCounts]:
    """``docs``'s rows where ``edge`` is true (a few) and the others, each with its rows per type."""
    rows = docs.type_rows
    kept = closed = None
    if rows is not None:
        open_row = np.zeros(rows.keys.shape[0], dtype=bool)
        for key in docs.keys[edge].tolist():  # the first and the last document
            open_row |= rows.keys == key
        kept = TypeRows(rows.keys[open_row], rows.type_index[open_row], rows.names, rows.stats[open_row])
        shut = ~open_row
        closed = TypeRows(rows.keys[shut], rows.type_index[shut], rows.names, rows.stats[shut])
    return (
        DocCounts(docs.keys[edge], docs.stats[edge], docs.fields, None, docs.unit, kept),
        DocCounts(docs.keys[~edge], docs.stats[~edge], docs.fields, None, docs.unit, closed),
    )


def _after(first: DocCounts | None, later: DocCounts | None) -> DocCounts | None:
    """Two sets of closed documents as one, ``later``'s keys moved past ``first``'s (each key
    stays one document's, never joined to another's)."""
    if first is None or not first.keys.shape[0]:
        return later
    if later is None or not later.keys.shape[0]:
        return first
    return first.then(later, int(first.keys[-1]) + 1 - int(later.keys[0]))


@dataclasses.dataclass
class RowQueue:
    """One system's per-document rows as its parts finish (global keys, in order), until they are
    complete: a document a chunk boundary cut in two becomes one row again, and ``bound`` says
    below which key every row is whole."""

    keys: IntArray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    stats: IntArray | None = None
    ids: list[str] | None = None
    bound: int = 0

    def append(self, keys: IntArray, stats: IntArray, ids: list[str] | None) -> None:
        """A part's rows (int64, global keys), after every earlier part's."""
        if self.stats is None:
            self.stats, self.ids = np.zeros((0, stats.shape[1]), dtype=np.int64), None if ids is None else []
        if self.keys.shape[0] and keys[0] == self.keys[-1]:
            self.stats = self.stats.copy()
            self.stats[-1] += stats[0]
            keys, stats, ids = keys[1:], stats[1:], None if ids is None else ids[1:]
        self.keys = np.concatenate((self.keys, keys))
        self.stats = np.concatenate((self.stats, stats))
        if self.ids is not None and ids is not None:
            self.ids.extend(ids)
        # The last document may go on in the next part.
        self.bound = max(self.bound, int(self.keys[-1]) if self.keys.shape[0] else self.bound)

    def close(self) -> None:
        """No part is to come: every row is whole."""
        self.bound = int(np.iinfo(np.int64).max)

    def take(self, below: int) -> tuple[IntArray, IntArray | None, list[str] | None]:
        """The complete rows with keys below ``below``, removed from the queue."""
        n = int(np.searchsorted(self.keys, below))
        keys, self.keys = self.keys[:n], self.keys[n:]
        stats = ids = None
        if self.stats is not None:
            stats, self.stats = self.stats[:n], self.stats[n:]
        if self.ids is not None:
            ids, self.ids = self.ids[:n], self.ids[n:]
        return keys, stats, ids
