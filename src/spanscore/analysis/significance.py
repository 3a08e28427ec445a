"""Confidence intervals and paired significance tests, resampling whole documents.

Every statistic of every document is an additive integer count (``documents.DocCounts``), so a
resample of documents is a weighted sum of count rows: a matrix product, never a new matching.
One resampling scores every criterion, SemEval scheme and the token score at once. Documents with
equal rows are interchangeable, so the rows are kept as a histogram (``documents.Histogram``: the
distinct rows and how many documents hold each) and a resample is drawn as counts over the
distinct rows (``Draws``): the same distribution, at a cost that follows the distinct rows (a few
thousand for 100,000 sentences), not the documents.

- Intervals: percentile bootstrap (Efron and Tibshirani 1993): resample the documents with
  replacement ``resamples`` times, score each resample, and take the ``(1 - level) / 2`` and
  ``(1 + level) / 2`` quantiles of the scores (linear interpolation between order statistics).
- Paired bootstrap (Koehn 2004; Berg-Kirkpatrick et al. 2012): the same resamples score both
  systems; the interval of the difference is its percentile interval, and the p-value counts the
  resamples whose difference strays from the observed one by at least the observed difference
  (the test of a difference centred on zero): p = (c + 1) / (n + 1).
- Approximate randomisation (Noreen 1989; Riezler and Maxwell 2005; neleval's document-level
  test): each trial swaps the two systems' outputs of each document with probability 1/2;
  c counts the trials whose absolute difference is at least the observed one, p = (c + 1) / (n + 1).
  With ``exact=True`` every one of the 2^D swaps is enumerated instead, p = c / 2^D.

Resampling goes up to ``BLOCK`` resamples at a time, each block with its own generator seeded by
the seed and the block's number, so memory is bounded by the distinct rows and a block of
weights, and the numbers depend only on the histogram (never on chunks, processes or engines).

>>> import numpy as np
>>> fields = ("reference", "predicted", "x.full_ref", "x.partial_ref", "x.full_pred", "x.partial_pred",
...           "token.true_positive", "token.reference", "token.predicted")
>>> rows = np.array([[1, 1, 1, 0, 1, 0, 2, 2, 2], [1, 1, 0, 0, 0, 0, 0, 1, 1]])
>>> docs = DocCounts(np.arange(2), rows, fields)
>>> ci = bootstrap(docs, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=200))
>>> ci["x"]["f1"]["value"], ci["x"]["f1"]["low"] <= 0.5 <= ci["x"]["f1"]["high"]
(0.5, True)
"""

from __future__ import annotations

import functools
import math
import os
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar, cast

import numpy as np
import numpy.typing as npt

from ..errors import OptionError
from ..results import ComparisonResult
from ..runtime.blas import one_blas_thread
from ..runtime.workers import can_fork, forked_map
from ..stages.documents import (
    DocCounts,
    DocState,
    Histogram,
    Repeats,
    TypeRows,
    compact_rows,
    scored_columns,
    scores_per_row,
)
from ..stages.spans import IntArray

FloatArray = npt.NDArray[np.float64]
_T = TypeVar("_T")
BLOCK = 256  # resamples scored at a time, at most
METRICS = ("precision", "recall", "f1")
EXACT_LIMIT = 20  # documents: 2^20 swaps is the most an exact randomisation test enumerates
_TOLERANCE = 1e-12  # differences this close count as equal (sums of the same terms in another order)


@dataclass(frozen=True)
class Resampling:
    """The options of intervals and tests; each changes a number, so each is in the signature."""

    level: float = 0.95
    resamples: int = 1000
    trials: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.level, float | int) or isinstance(self.level, bool) or not 0 < self.level < 1:
            raise OptionError(f"the confidence level is a number between 0 and 1 (0.95), not {self.level!r}")
        for name in ("resamples", "trials"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise OptionError(f"{name} is a whole number of at least 1, not {value!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise OptionError(f"seed is a whole number of at least 0, not {self.seed!r}")

    def signature(self) -> str:
        return f"ci:{self.level:g}|resamples:{self.resamples}|trials:{self.trials}|seed:{self.seed}"


def _needed(fields: tuple[str, ...], *, scaled: bool) -> list[int]:
    return scored_columns(fields, scaled=scaled)


def _distinct_columns(stats: npt.NDArray[Any]) -> tuple[list[int], IntArray]:
    """The first of each set of equal columns, and for every column the index of its copy among them.

    Columns are told apart by two sums (plain, and weighted by a fixed pseudo-random vector) and
    compared whole only when both agree: linear in the table, unlike sorting its columns."""
    drawn = np.random.default_rng(0).integers(1, 1 << 20, size=stats.shape[0])
    weights: FloatArray = np.asarray(drawn, dtype=np.float64)
    plain: FloatArray = np.asarray(stats.sum(axis=0, dtype=np.float64))
    mixed: FloatArray = np.zeros(stats.shape[1])
    for i in range(0, stats.shape[0], 8192):  # a block at a time: no float copy of the whole table
        block: FloatArray = stats[i : i + 8192].astype(np.float64)
        mixed += weights[i : i + 8192] @ block
    # Almost always, columns with the same two sums are equal: each is checked against the first
    # of its sums, all in one comparison, and only where one differs are they compared one by one.
    first: dict[tuple[float, float], int] = {}
    same = [first.setdefault(key, c) for c, key in enumerate(zip(plain.tolist(), mixed.tolist(), strict=True))]
    copies = [c for c, k in enumerate(same) if k != c]
    if not copies or np.array_equal(stats[:, copies], stats[:, [same[c] for c in copies]]):
        kept = [c for c, k in enumerate(same) if k == c]
        position = {c: i for i, c in enumerate(kept)}
        return kept, np.array([position[k] for k in same], dtype=np.int64)
    keep: list[int] = []
    expand = np.empty(stats.shape[1], dtype=np.int64)
    seen: dict[tuple[float, float], list[int]] = {}
    for c in range(stats.shape[1]):
        candidates = seen.setdefault((float(plain[c]), float(mixed[c])), [])
        match = next((k for k in candidates if np.array_equal(stats[:, keep[k]], stats[:, c])), None)
        if match is None:
            match = len(keep)
            keep.append(c)
            candidates.append(match)
        expand[c] = match
    return keep, expand


TOTAL_ROWS = 4096  # histogram rows made floats at a time where their totals are summed


def column_totals(counts: IntArray, rows: npt.NDArray[Any]) -> FloatArray:
    """``counts @ rows`` as floats, a block of ``TOTAL_ROWS`` rows made floats at a time: the same
    numbers as the product of the whole table made floats (each total and partial sum is a whole
    number far below 2^53, exact in any order), without a float copy of a histogram whose
    distinct rows grow with the corpus."""
    out: FloatArray = np.zeros(rows.shape[1])
    for i in range(0, rows.shape[0], TOTAL_ROWS):  # BLAS's products: numpy's integer one is slower
        out += counts[i : i + TOTAL_ROWS].astype(np.float64) @ rows[i : i + TOTAL_ROWS].astype(np.float64)
    return out


class _Table:
    """Some statistics of a histogram's distinct rows, as floats (exact: counts stay far below 2^53),
    and their totals over the corpus."""

    def __init__(self, rows: npt.NDArray[Any], counts: IntArray, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.rows = rows
        self.total: FloatArray = column_totals(counts, rows)
        self.count = int(counts.sum())

    @functools.cached_property
    def _columns(self) -> tuple[FloatArray, IntArray]:
        # Many statistics are the same in every document (a one-to-one criterion's full matches on
        # either side; a criterion without partial credit): each distinct column is summed once.
        # Made on first use: a table drawn by family never makes its whole rows' float copy.
        keep, expand = _distinct_columns(self.rows)
        return np.ascontiguousarray(self.rows[:, keep], dtype=np.float64), expand

    @property
    def distinct(self) -> FloatArray:
        return self._columns[0]

    @property
    def expand(self) -> IntArray:
        return self._columns[1]

    def sums(self, weights: FloatArray) -> FloatArray:
        """Each statistic summed with ``weights`` (one row of weights per resample, one column per
        distinct row)."""
        out: FloatArray = (weights @ self.distinct)[:, self.expand]
        return out

    def drawn_sums(
        self, draws: Draws, rows: tuple[FloatArray, FloatArray], rng: np.random.Generator, size: int
    ) -> FloatArray:
        """``sums(draws.bootstrap(rng, size))``, the same numbers (every partial sum is an integer
        below 2^53, exact in any order): the rare rows' draws and the common rows' are each
        multiplied by their rows (``rows``: ``distinct`` at ``draws.rare`` and at ``draws.common``),
        never scattered into one table of weights first."""
        total: FloatArray = np.zeros((size, self.distinct.shape[1]))
        for table, part in zip(draws.split(rng, size), rows, strict=True):
            if table is not None:
                total += table.astype(np.float64, copy=False) @ part
        out: FloatArray = total[:, self.expand]
        return out


def histogram_of(docs: DocCounts | Histogram, credit: str) -> Histogram:
    """The histogram of the statistics that scores read (``docs``'s rows, or a histogram's rows
    narrowed to them)."""
    cols = _needed(docs.fields, scaled=credit in ("dice", "iou"))
    fields = tuple(docs.fields[i] for i in cols)
    if isinstance(docs, Histogram):
        whole = docs.compacted()
        if fields == whole.fields:  # its rows are distinct and sorted already: no sort again
            rows = np.ascontiguousarray(compact_rows(whole.rows))
            return Histogram(rows, whole.counts, fields, repeats=whole.repeats)
        return Histogram.of(whole.rows[:, cols], fields, whole.counts)
    return Histogram.of(np.take(docs.stats, cols, axis=1), fields)


def score_totals(
    totals: FloatArray, fields: tuple[str, ...], zd: float, credit: str, beta: float = 1.0
) -> dict[str, dict[str, FloatArray]]:
    """Every score of each row of ``totals`` (one row per resample); ``f_beta`` too unless beta is 1."""
    view = DocCounts(np.arange(totals.shape[0]), totals, fields)  # type: ignore[arg-type]
    scores = scores_per_row(view, zd, credit)
    if beta != 1.0:
        b2 = beta * beta
        for block in scores.values():
            p, r = block["precision"], block["recall"]
            d = b2 * p + r
            with np.errstate(invalid="ignore", divide="ignore"):
                f = np.where(d > 0, (1 + b2) * p * r / np.where(d > 0, d, 1), 0.0)
            block["f_beta"] = np.where(np.isnan(p) | np.isnan(r), np.nan, f)
    return scores



def metrics_of(beta: float) -> tuple[str, ...]:
    return METRICS if beta == 1.0 else (*METRICS, "f_beta")


class Draws:
    """Resamples of a corpus given as a histogram's counts: how often each distinct row is drawn.

    A bootstrap resample of ``n`` documents is a multinomial over the distinct rows (each row's
    probability: its share of the documents). It is drawn in two exact steps, by compare's
    sampler (``_Sampler``: one implementation, so a seed draws the same resamples on both sides):
    how many of the ``n`` draws fall on the documents of rare rows (those held by at most
    ``_Sampler.RARE`` documents) is binomial; each of those draws picks one rare document
    uniformly (its row gains one), and the other draws are one multinomial over the common rows,
    drawn through Poisson counts topped up to the exact total (the same distribution as
    ``numpy``'s multinomial, at about half its cost a row). So the cost of a resample follows the
    documents of rare rows and the number of common rows, never the corpus, and a block of
    resamples takes a few calls of the generator whatever the histogram (the top-up and the
    lookups of a large block a few more: they are drawn in pieces of a fixed size). With
    ``quick`` (the intervals' draws) no row is rare: every row's count is a Poisson count read
    from 12-bit bins of its table (``_IntervalSampler``), as compare's families draw theirs.
    """

    def __init__(self, counts: IntArray, *, quick: bool = False) -> None:
        self.k = int(counts.shape[0])
        self.n = int(counts.sum())
        self.counts = counts
        # ``quick``: every row drawn as Poisson counts read from 12-bit bins (``_IntervalSampler``),
        # the intervals' draws; otherwise rare rows' documents picked one by one.
        self.sampler: _Sampler = _IntervalSampler(counts) if quick else _Sampler(counts)
        self.rare: IntArray = self.sampler.rare
        self.common: IntArray = self.sampler.common
        # Each rare document's row, as a position among the rare rows.
        self.rare_documents: IntArray = self.sampler.rare_documents
        self._swaps: _SwapLayout | None = None

    @property
    def rare_weight(self) -> int:
        """Documents of rare rows: what one resample's draws cost beyond one per common row."""
        return int(self.rare_documents.shape[0])

    def bootstrap(self, rng: np.random.Generator, size: int) -> FloatArray:
        """How often each distinct row is drawn in each of ``size`` resamples of ``n`` documents."""
        out = np.empty((size, self.k))
        on_rare, on_common = self.split(rng, size)
        if on_rare is not None:
            out[:, self.rare] = on_rare
        if on_common is not None:
            out[:, self.common] = on_common
        return out

    def split(self, rng: np.random.Generator, size: int) -> tuple[IntArray | None, IntArray | None]:
        """``bootstrap``'s counts (the same draws) as two tables: of the rare rows (``rare``'s
        order) and of the common rows (``common``'s); None where there are none."""
        rare = self.rare_weight
        on_rare = rng.binomial(self.n, rare / self.n, size=size) if rare else np.zeros(size, dtype=np.int64)
        rare_table = common_table = None
        if rare:
            m = self.rare.shape[0]
            picked = self.rare_documents[rng.integers(0, rare, size=int(on_rare.sum()))]
            rare_table = _tallies(picked, on_rare, m)
        if self.common.shape[0]:
            common_table = self.sampler._common(rng, self.n - on_rare)
        return rare_table, common_table

    def swaps(self, rng: np.random.Generator, size: int) -> FloatArray:
        """How many of each distinct row's documents each of ``size`` randomisation trials swaps
        (each document with probability 1/2: a binomial count per row).

        A row of ``c`` documents swaps as many as ``c`` fair random bits have ones: every row of
        at most ``64 * SWAP_WORDS`` documents counts the set bits of its own random 64-bit words
        (the last one masked to the row's remaining documents), all rows of a block in one draw;
        larger rows draw numpy's binomial. Two generator calls a block, whatever the rows' counts."""
        layout = self._swap_layout()
        out = np.empty((size, self.k))
        for where, part in self._swap_parts(rng, size, layout):
            out[:, where] = part
        return out

    def swap_sums(self, rng: np.random.Generator, size: int, rows: tuple[FloatArray, ...]) -> FloatArray:
        """``swaps(rng, size) @ distinct`` (the same draws, the same numbers: every partial sum is
        an integer below 2^53), each part of the rows multiplied by its own draws, never
        scattered into one table first; ``rows`` are ``swap_rows(distinct)``."""
        layout = self._swap_layout()
        out = np.zeros((size, rows[0].shape[1]))
        for (_, part), mine in zip(self._swap_parts(rng, size, layout), rows, strict=False):
            out += part.astype(np.float64) @ mine
        return out

    def swap_rows(self, distinct: FloatArray) -> tuple[FloatArray, ...]:
        """``distinct`` (one row per histogram row) in the parts ``swap_sums`` draws."""
        layout = self._swap_layout()
        return tuple(np.ascontiguousarray(distinct[where]) for where in (layout.single, layout.multi, layout.large))

    def _swap_parts(
        self, rng: np.random.Generator, size: int, layout: _SwapLayout
    ) -> list[tuple[IntArray, npt.NDArray[Any]]]:
        """Each part's rows and their swap counts (the single-word rows', the several-word rows',
        the binomial rows'), in that order, each present or empty."""
        none = np.zeros((size, 0), dtype=np.int64)
        single, multi, large = none, none, none
        if layout.words:
            words = rng.integers(0, 1 << 64, size=(size, layout.words), dtype=np.uint64)
            words &= layout.masks
            ones = np.bitwise_count(words)
            first = layout.single.shape[0]
            single = ones[:, :first]
            if layout.multi.shape[0]:
                multi = np.add.reduceat(ones[:, first:], layout.starts, axis=1, dtype=np.int64)
        if layout.large.shape[0]:
            large = rng.binomial(self.counts[layout.large], 0.5, size=(size, layout.large.shape[0]))
        parts: list[tuple[IntArray, npt.NDArray[Any]]] = [
            (layout.single, single), (layout.multi, multi), (layout.large, large)
        ]
        return parts

    def _swap_layout(self) -> _SwapLayout:
        if self._swaps is None:
            self._swaps = _SwapLayout(self.counts)
        return self._swaps

    def plan(self, n: int) -> list[int]:
        """Resamples per block of ``n`` bootstrap resamples (``_plan``, counting the rare documents'
        draws as well as the rows)."""
        return _plan(n, self.k + self.rare_weight)


SWAP_WORDS = 16  # random 64-bit words a row's swaps are counted in, at most; larger rows draw binomials


class _SwapLayout:
    """Where each row's random bits lie in a randomisation trial's words (``Draws.swaps``): first
    one word for each row of at most 64 documents (``single``), then the words of each larger row
    (``multi``, from ``starts`` on among them), the last word of a row masked to its documents;
    rows of more than ``64 * SWAP_WORDS`` documents (``large``) draw binomials."""

    def __init__(self, counts: IntArray) -> None:
        self.single = np.flatnonzero(counts <= 64)
        self.multi = np.flatnonzero((counts > 64) & (counts <= 64 * SWAP_WORDS))
        self.large = np.flatnonzero(counts > 64 * SWAP_WORDS)
        held = np.concatenate((counts[self.single], counts[self.multi])).astype(np.int64)
        per_row = (held + 63) // 64
        self.words = int(per_row.sum())
        first = np.concatenate(([0], np.cumsum(per_row)[:-1])).astype(np.intp)
        self.starts: IntArray = first[self.single.shape[0] :] - self.single.shape[0]
        self.masks = np.full(self.words, np.iinfo(np.uint64).max, dtype=np.uint64)
        last = held - 64 * (per_row - 1)  # the documents in a row's last word: 1 to 64
        partial = last < 64
        self.masks[(first + per_row - 1)[partial]] = (
            np.left_shift(np.uint64(1), last[partial].astype(np.uint64)) - np.uint64(1)
        )


def _tallies(picked: IntArray, per_resample: IntArray, width: int) -> IntArray:
    """How often each of ``width`` rows is among each resample's picks (``picked``: every
    resample's picks in turn, ``per_resample[r]`` of them for resample ``r``). Where resamples
    pick many, one bincount per resample, whose ``width`` counts stay in the cache (one bincount
    over every resample's cells at once jumps about all of them: about 10% of compare's draws
    over its 6,000 rare rows); where they pick few, one bincount of every cell, as the calls
    would cost more than the cache saves. The same counts either way."""
    size = per_resample.shape[0]
    if picked.shape[0] < TALLY_LOOP * size:
        cells = picked + np.repeat(np.arange(size) * width, per_resample)  # (resample, row) cells
        out: IntArray = np.bincount(cells, minlength=size * width).reshape(size, width)
        return out
    out = np.empty((size, width), dtype=np.int64)
    start = 0
    for r, end in enumerate(np.cumsum(per_resample).tolist()):
        out[r] = np.bincount(picked[start:end], minlength=width)
        start = end
    return out


TALLY_LOOP = 4096  # picks per resample from which each resample is tallied on its own
PRODUCT_CELLS = 1 << 16  # rows' cells made floats at a time where integer rows are multiplied (512 KB)
# Distinct rows from which a family's rows (and its differences) are held as integers, not floats:
# a block of so many rows draws at most 16 resamples (``_plan``), too few for the float rows to be
# read from the cache, and the pieces made floats cost less than reading them from memory. Below
# it, the rows are read again from the cache by a block's many resamples: floats, made once.
NARROW_ROWS = 1 << 15


def _held(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Rows as the draws multiply them (``_product``): floats, or from ``NARROW_ROWS`` rows on
    the narrowest integers that hold them. The same sums either way."""
    if rows.shape[0] < NARROW_ROWS:
        return np.ascontiguousarray(rows, dtype=np.float64)
    return compact_rows(np.ascontiguousarray(rows))


def _product(counts: npt.NDArray[Any], rows: npt.NDArray[Any]) -> FloatArray:
    """``counts @ rows`` in floats, where ``rows`` may be held as integers (a family's rows, or
    its differences, in the narrowest type that holds them): made floats ``PRODUCT_CELLS`` cells
    at a time, each piece's product added. Both hold whole numbers and every sum stays far
    below 2^53, so each sum is exact in any order: the same floats as one product of float rows,
    without the rows held as floats (eight times their bytes in a byte, for as long as they are
    drawn)."""
    if rows.dtype == np.float64:
        whole: FloatArray = counts @ rows
        return whole
    k, width = rows.shape
    out: FloatArray = np.zeros((counts.shape[0], width))
    step = max(1, PRODUCT_CELLS // max(width, 1))
    piece: FloatArray = np.empty((min(step, k), width))
    for start in range(0, k, step):
        stop = min(start + step, k)
        floats = piece[: stop - start]
        floats[...] = rows[start:stop]
        out += counts[:, start:stop] @ floats
    return out


def _plan(n: int, rows: int) -> list[int]:
    """Resamples per block: a block's arrays (block x distinct rows floats) stay under about 4 MB,
    small enough for freed memory to be reused rather than faulted in again (``spanscore.runtime.memory``),
    and the same whatever the corpus's size.
    The plan depends on the histogram alone, never on how the corpus was counted."""
    size = max(1, min(BLOCK, (1 << 19) // max(rows, 1)))
    return [min(size, n - start) for start in range(0, n, size)]


def _rng(seed: int, stream: int, block: int, group: int = 0, family: str = "") -> np.random.Generator:
    """Block ``block`` of stream ``stream`` (0: bootstrap, 1: randomisation, 2: a group's
    bootstrap, ``group`` naming it) has its own generator, so the numbers do not depend on how
    many threads score the blocks; so has each family of columns an interval draws apart
    (``interval_families``; ``""``: the whole table)."""
    key = [seed, stream, block] if stream != 2 else [seed, stream, group, block]
    return np.random.default_rng(key + [zlib.crc32(family.encode("utf-8"))] * bool(family))


def _group_rng(seed: int, group: int, block: int, family: str = "") -> np.random.Generator:
    return _rng(seed, 2, block, group, family)


def _overall_rng(seed: int, block: int, family: str = "") -> np.random.Generator:
    return _rng(seed, 0, block, family=family)


def _threads() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def _map_items(work: Callable[[Any], _T], items: list[Any]) -> list[_T]:
    """``work`` over ``items``, results in order, on a few CPUs: in forked processes where this
    process runs no other thread (the random draws and the bincounts hold the GIL, so threads
    barely overlap; a fork beside a running thread could inherit a lock it holds), else on
    threads. Each item draws from its own generator, so the results never depend on which."""
    jobs = min(_threads(), len(items))
    if jobs <= 1:
        return [work(item) for item in items]
    if can_fork() and threading.active_count() == 1:
        return list(forked_map(work, items, jobs))
    return _thread_map(work, items, jobs)


SHARED_DRAWS = 1 << 21  # draws (resamples x (distinct rows + documents of rare rows)) worth a second thread


def _thread_map(work: Callable[[Any], _T], items: list[Any], jobs: int) -> list[_T]:
    """``work`` over ``items`` on ``jobs`` threads, this one among them, results in order; the
    first error is raised once every thread stopped. (``concurrent.futures`` would import
    ``logging`` with it: tens of milliseconds of an interval run.)"""
    results: list[Any] = [None] * len(items)
    errors: list[BaseException] = []
    queue = iter(enumerate(items))
    lock = threading.Lock()

    def run() -> None:
        while not errors:
            with lock:
                taken = next(queue, None)
            if taken is None:
                return
            try:
                results[taken[0]] = work(taken[1])
            except BaseException as exc:  # raised in the calling thread below
                errors.append(exc)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(jobs - 1)]
    for thread in threads:
        thread.start()
    try:
        run()
    finally:
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return cast(list[_T], results)


def _map_blocks(work: Callable[[int, int], _T], sizes: list[int]) -> list[_T]:
    """``work(block, size)`` for each block, in block order (``_map_items``)."""
    return _map_items(lambda item: work(*item), list(enumerate(sizes)))


def _interval(values: FloatArray, value: float, level: float) -> dict[str, float | None]:
    kept = values[~np.isnan(values)]
    if math.isnan(value) or kept.shape[0] == 0:
        return {"value": None if math.isnan(value) else value, "low": None, "high": None}
    low, high = _quantiles(kept, np.array([(1 - level) / 2, (1 + level) / 2]))
    return {"value": value, "low": float(low), "high": float(high)}


def _quantiles(values: FloatArray, q: FloatArray) -> FloatArray:
    """``np.quantile(values, q)`` (its default, linear interpolation between order statistics),
    the same bits by the same operations: ``np.quantile`` imports ``numpy.ma`` on its first call,
    which would cost an interval run more than the quantiles themselves. ``values`` hold no NaN."""
    n = values.shape[0]
    virtual = (n - 1) * q
    below = np.floor(virtual)
    gamma = virtual - below
    low = below.astype(np.intp)
    high = low + 1
    last = virtual >= n - 1  # past the last order statistic: the largest value
    low[last] = high[last] = n - 1
    ordered = np.sort(values)
    a, b = ordered[low], ordered[high]
    diff = b - a
    out: FloatArray = a + diff * gamma
    upper = gamma >= 0.5
    out[upper] = (b - diff * (1 - gamma))[upper]
    return out


def _point(table: _Table, zd: float, credit: str, beta: float = 1.0) -> dict[str, dict[str, float]]:
    scores = score_totals(table.total[None, :], table.fields, zd, credit, beta)
    return {name: {m: float(block[m][0]) for m in metrics_of(beta)} for name, block in scores.items()}


def _check(docs: DocCounts | Histogram) -> None:
    if (docs.documents if isinstance(docs, Histogram) else docs.stats.shape[0]) == 0:
        raise OptionError("intervals need at least one document (or sentence)")


# A string: evaluated here it would load numpy.random (about 9 ms) before any counting starts; the
# command line loads it on a thread while the chunks are counted.
Job: TypeAlias = "tuple[Histogram, Callable[[int, str], np.random.Generator]]"


def interval_families(fields: Sequence[str]) -> dict[str, list[int]]:
    """The columns of a histogram resampled together for its intervals, by family
    (``draw_families``: the mention criteria and SemEval schemes, and the token score). Each
    interval is read alone and each score reads its family's columns only, so each family is drawn
    from its own narrowing of the histogram, with far fewer distinct rows than the whole (the token
    counts vary with every sentence's length, and drawn with the mentions' columns each would
    multiply the other's distinct rows). Where the families do not hold every column, the whole
    table is one family (named ``""``)."""
    families = draw_families(fields)
    if sorted(i for cols in families.values() for i in cols) != list(range(len(fields))):
        return {"": list(range(len(fields)))}
    return families


def _draw_cost(draws: Draws, columns: int) -> float:
    """About how many nanoseconds one resample of ``draws`` over rows of ``columns`` statistics
    takes (fitted on numpy 2's PCG64 over 27 tables and families of 300 to 100,000 documents, in
    a process that keeps freed memory for reuse as spanscore's do, within 15% of the clock on
    each: a common row's Poisson count looked up, its table and its product about 20 ns, a rare
    document's pick and tally about 6.7 ns, the top-up about 15 ns a standard deviation of the
    Poisson counts' shortfall (``_Sampler``; the intervals' heads and their top-up's few picks:
    ``_IntervalSampler``'s ``top_up_ns``), the calls about 0.7 us, the products about 0.02 ns
    a cell of the rows; the intervals' draws read every row's count from 12-bit bins, which
    takes about 8 ns of the 20, and have no rare rows). A function of the histogram alone, so the
    choice it makes never depends on how the corpus was counted."""
    sampler = draws.sampler
    row = 14 if isinstance(sampler, _IntervalSampler) else 20
    return float(
        700 + row * draws.common.shape[0] + 6.7 * draws.rare_weight + sampler.top_up_ns + 0.02 * draws.k * columns
    )


def _draw_parts(hist: Histogram, table: _Table) -> list[tuple[str, list[int], _Table, Draws]]:
    """How ``hist`` (whose ``_Table`` is ``table``) is drawn: whole (one part named ``""``) or
    by family (``interval_families``), each part's name, columns, table and draws."""
    narrowed = {
        name: (cols, narrow, Draws(narrow.counts, quick=True))
        for name, cols in interval_families(hist.fields).items() if name
        for narrow in [Histogram.of(
            hist.rows[:, cols], tuple(hist.fields[i] for i in cols), hist.counts, _kept_repeats(hist, cols)
        )]
    }
    # Drawn apart only where that is cheaper: each family's draws have a cost of their own (the
    # top-up of its Poisson counts), which a small histogram's whole draws may not exceed.
    apart = sum(_draw_cost(draws, len(cols)) for cols, _, draws in narrowed.values())
    # The whole's sampler is made only where its cost may be the lower: what its rows' lookups
    # and products cost alone (``_draw_cost`` less its top-up) is a bound from below.
    k, common = int(hist.counts.shape[0]), int((hist.counts > _IntervalSampler.RARE).sum())
    if not narrowed or 700 + 14 * common + 0.02 * k * len(hist.fields) <= apart:
        whole_draws = Draws(hist.counts, quick=True)
        if not narrowed or _draw_cost(whole_draws, len(hist.fields)) <= apart:
            return [("", list(range(len(hist.fields))), table, whole_draws)]
    return [
        (name, cols, _Table(narrow.rows, narrow.counts, narrow.fields), draws)
        for name, (cols, narrow, draws) in narrowed.items()
    ]


def _kept_repeats(hist: Histogram, cols: list[int]) -> Repeats | None:
    """The columns of ``hist`` known to repeat an earlier one (``Histogram.repeats``) that
    ``cols`` (in increasing order) keeps with the column they repeat, as positions among
    ``cols``: the narrowing's rows then sort and group on fewer bits, and the same (a column
    equal to an earlier one in every row decides no order and splits no group)."""
    if not hist.repeats:
        return None
    at = {c: i for i, c in enumerate(cols)}
    kept = tuple((at[j], at[i]) for j, i in hist.repeats if j in at and i in at and i < j)
    return kept or None


def resampled_totals(
    hist: Histogram, seed_of: Callable[[int, str], np.random.Generator], resamples: int
) -> FloatArray:
    """Every statistic of ``hist`` summed over each of ``resamples`` bootstrap resamples, in one
    thread, as its intervals draw them (``_bootstrap_tables``: the same numbers); block ``k`` of
    a part named ``name`` draws from ``seed_of(k, name)``."""
    table = _Table(hist.rows, hist.counts, hist.fields)
    totals = np.tile(table.total, (resamples, 1))
    for name, cols, part, draws in _draw_parts(hist, table):
        rows = (part.distinct[draws.rare], part.distinct[draws.common])
        totals[:, cols] = np.concatenate(
            [part.drawn_sums(draws, rows, seed_of(k, name), size) for k, size in enumerate(draws.plan(resamples))]
        )
    return totals


def _bootstrap_tables(
    jobs: Sequence[Job], *, zd: float, credit: str, resampling: Resampling, beta: float,
) -> list[dict[str, dict[str, dict[str, float | None]]]]:
    """The percentile intervals of every score of each histogram. Each family of its columns
    (``interval_families``) is resampled from its own narrowing of the histogram: block ``k`` of
    family ``name`` draws from ``seed_of(k, name)``.

    The work runs as a pipeline on the CPUs (``_Blocks``): a histogram's blocks are drawn as soon
    as its tables are made, while this thread makes the next histogram's tables, and each
    histogram is scored as soon as its blocks are drawn, while the later ones' are still being
    drawn. Each block draws from its own generator, so the numbers never depend on which thread
    draws it, or when."""
    resamples = resampling.resamples
    out = []
    with one_blas_thread(), _Blocks(_helpers(sum(resamples * _draw_weight(hist.counts) for hist, _ in jobs))) as blocks:
        queued: list[tuple[_Table, list[tuple[list[int], list[_Block]]]]] = []
        for hist, seed_of in jobs:
            table = _Table(hist.rows, hist.counts, hist.fields)
            parts = []
            for name, cols, part, draws in _draw_parts(hist, table):
                rows = (part.distinct[draws.rare], part.distinct[draws.common])
                parts.append((cols, [
                    blocks.add(functools.partial(part.drawn_sums, draws, rows, seed_of(k, name), size))
                    for k, size in enumerate(draws.plan(resamples))
                ]))
                if queued or len(parts) > 1:  # the first part's: made by the helper that draws its first block
                    draws.sampler.prepare()
            queued.append((table, parts))
        for table, parts in queued:
            # Each resample's totals: every family's columns its own resampled sums; and last the
            # corpus's own totals, whose scores are the point values (every score is computed
            # row by row, element-wise, so a row's scores are the same bits in any table: one
            # call instead of two, ``_point``'s).
            totals = np.tile(table.total, (resamples + 1, 1))
            for cols, drawn in parts:
                totals[:resamples, cols] = np.concatenate([blocks.result(block) for block in drawn])
            scores = score_totals(totals, table.fields, zd, credit, beta)
            point = {name: {m: float(block[m][resamples]) for m in metrics_of(beta)} for name, block in scores.items()}
            # Every interval of the table from one sort of all its scores' resamples (``_interval``'s
            # bits: the same order statistics and interpolation).
            keys = [(name, m) for name in point for m in metrics_of(beta)]
            bounds = dict(
                zip(keys, _percentiles([scores[n][m][:resamples] for n, m in keys], resampling.level), strict=True)
            )
            out.append(
                {name: {m: _bounded(bounds[(name, m)], point[name][m]) for m in metrics_of(beta)} for name in point}
            )
    return out


def _helpers(draws: int) -> int:
    """The threads that draw beside this one, for about ``draws`` draws in all: none where they
    are few (a thread's start and its share of the GIL would cost more than it saves), else one
    per ``SHARED_DRAWS``, up to a CPU each."""
    return min(_threads(), max(1, draws // SHARED_DRAWS + 1)) - 1


def _draw_weight(counts: IntArray) -> int:
    """About what one resample of a histogram of ``counts`` draws (its rows, and the documents of
    its rare rows, which are picked one by one): what decides whether a second thread pays."""
    return int(counts.shape[0]) + int(counts[counts <= _IntervalSampler.RARE].sum())


class _Block:
    """One block of resamples to draw (``_Blocks``): its work, and its result once drawn."""

    __slots__ = ("done", "error", "result", "taken", "work")

    def __init__(self, work: Callable[[], FloatArray]) -> None:
        self.work = work
        self.taken = False  # by a thread, which draws it
        self.done = threading.Event()
        self.result: FloatArray | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # raised where the result is asked for
            self.error = exc
        finally:
            self.work = _drawn  # the block's closure (its rows, its generator) is not held any longer
            self.done.set()


def _drawn() -> FloatArray:
    raise RuntimeError("spanscore bug: a block of resamples drawn twice")


class _Blocks:
    """Blocks of resamples drawn by ``helpers`` threads as they are added, in the order added;
    ``result`` draws a block in the calling thread where no helper has taken it yet, else draws
    the first blocks no thread has taken until it is drawn (then waits for it).
    (``concurrent.futures`` would import ``logging`` with it: tens of milliseconds of an
    interval run.)"""

    def __init__(self, helpers: int) -> None:
        self._queue: list[_Block] = []
        self._next = 0  # the first block no thread has taken, or past it
        self._closed = False
        self._draws = 0  # queued (``weigh``)
        self._ready = threading.Condition()
        self._threads = [threading.Thread(target=self._serve, daemon=True) for _ in range(max(0, helpers))]

    def __enter__(self) -> _Blocks:
        for thread in self._threads:
            thread.start()
        return self

    def weigh(self, draws: int) -> None:
        """``draws`` more queued: the helpers hired once the draws queued are worth them
        (``PARALLEL_WORK``)."""
        self._draws += draws
        if self._draws > PARALLEL_WORK:
            self.hire(_threads() - 1)

    def hire(self, helpers: int) -> None:
        """Up to ``helpers`` threads drawing in all, started now: where whether they pay is known
        only once some blocks are queued."""
        more = [threading.Thread(target=self._serve, daemon=True) for _ in range(helpers - len(self._threads))]
        self._threads += more
        for thread in more:
            thread.start()

    def __exit__(self, *exc: object) -> None:
        with self._ready:
            self._closed = True
            for block in self._queue[self._next :]:  # left undrawn on an error: never drawn now
                block.taken = True
            self._ready.notify_all()
        for thread in self._threads:
            thread.join()

    def add(self, work: Callable[[], FloatArray]) -> _Block:
        block = _Block(work)
        with self._ready:
            self._queue.append(block)
            self._ready.notify()
        return block

    def _take(self, block: _Block | None = None) -> _Block | None:
        """``block`` (or the first block not taken) marked as this thread's, if no thread has
        taken it. Called with ``_ready`` held."""
        if block is None:
            while self._next < len(self._queue) and self._queue[self._next].taken:
                self._next += 1
            if self._next == len(self._queue):
                return None
            block = self._queue[self._next]
        if block.taken:
            return None
        block.taken = True
        return block

    def _serve(self) -> None:
        while True:
            with self._ready:
                block = self._take()
                while block is None and not self._closed:
                    self._ready.wait()
                    block = self._take()
            if block is None:
                return
            block.run()

    def result(self, block: _Block) -> FloatArray:
        with self._ready:
            mine = self._take(block) is not None
        if mine:
            block.run()
        while not block.done.is_set():
            # Another thread draws it: this one draws the first block no thread has taken rather
            # than wait. (It waited: the helpers take the blocks in the order this thread asks for
            # their results, so it asked for each just after a helper took it, and the draws of
            # "two threads" were a helper's alone.)
            with self._ready:
                other = self._take()
            if other is None:
                block.done.wait()
                break
            other.run()
        if block.error is not None:
            raise block.error
        result, block.result = block.result, None  # asked for once: the queue keeps no result
        assert result is not None
        return result


def bootstrap(
    docs: DocCounts | Histogram,
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    beta: float = 1.0,
) -> dict[str, dict[str, dict[str, float | None]]]:
    """The percentile bootstrap interval of every score: {name: {metric: {value, low, high}}}.

    ``docs`` are the per-document counts, or their histogram (``Histogram``): the same numbers."""
    _check(docs)
    return _bootstrap_tables(
        [_overall_job(docs, credit, resampling)], zd=zero_division, credit=credit, resampling=resampling, beta=beta
    )[0]


def _overall_job(docs: DocCounts | Histogram, credit: str, resampling: Resampling) -> Job:
    return histogram_of(docs, credit), functools.partial(_overall_rng, resampling.seed)


def _group_jobs(groups: dict[str, Histogram], documents: int, credit: str, resampling: Resampling) -> dict[str, Job]:
    """Each group's histogram with its documents without a mention in it, and its generators."""
    return {
        name: (
            histogram_of(group, credit).with_zeros(documents),
            functools.partial(_group_rng, resampling.seed, zlib.crc32(name.encode("utf-8"))),
        )
        for name, group in sorted(groups.items())
    }


def bootstrap_types(
    docs: DocCounts, *, zero_division: float, credit: str, resampling: Resampling = Resampling(), beta: float = 1.0
) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """The interval of every score of each type: {type: {name: {metric: {value, low, high}}}}.

    Needs the counts per document and type (``evaluate(document_types=True)``); resamples as
    ``bootstrap_rows``'s."""
    if docs.type_rows is None:
        raise OptionError("per-type intervals need the counts per document and type: evaluate with document_types=True")
    return bootstrap_rows(
        docs, docs.type_rows, zero_division=zero_division, credit=credit, resampling=resampling, beta=beta
    )


def group_rows(rows: TypeRows) -> dict[str, IntArray]:
    """Each group's statistics per document that has a mention in it, by group name. A document
    cut by a chunk boundary may have two rows of a group: they are summed."""
    out = {}
    for t, name in enumerate(rows.names):
        mine = np.flatnonzero(rows.type_index == t)
        if not mine.shape[0]:
            continue
        keys = rows.keys[mine]
        order = np.argsort(keys, kind="stable")
        starts = np.flatnonzero(np.concatenate(([True], keys[order][1:] != keys[order][:-1])))
        out[name] = np.add.reduceat(rows.stats[mine[order]], starts, axis=0)
    return out


def bootstrap_rows(
    docs: DocCounts,
    rows: TypeRows,
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    beta: float = 1.0,
) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """The interval of every score of each group of ``rows`` (rows per document and group: a type,
    a bucket), by its name, in sorted order.

    Each group's interval is a bootstrap of documents (those without a mention in the group add
    nothing): its statistics per document as a histogram, resampled as ``bootstrap`` resamples.
    Each group draws its own resamples (seeded by the seed and its name), since an interval is
    read one group at a time."""
    _check(docs)
    where = np.searchsorted(docs.keys, rows.keys)
    if rows.keys.shape[0] and (where.max() >= docs.keys.shape[0] or not np.array_equal(docs.keys[where], rows.keys)):
        raise OptionError("the per-group counts name documents the per-document counts do not hold")
    return bootstrap_groups(
        rows, int(docs.stats.shape[0]), docs.fields, zero_division=zero_division, credit=credit,
        resampling=resampling, beta=beta,
    )


def bootstrap_groups(
    rows: TypeRows,
    documents: int,
    fields: tuple[str, ...],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    beta: float = 1.0,
) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """``bootstrap_rows`` from the rows alone and the number of documents in the corpus."""
    if documents == 0:
        raise OptionError("intervals need at least one document (or sentence)")
    hists = {name: Histogram.of(per_doc, fields) for name, per_doc in group_rows(rows).items()}
    return bootstrap_histograms(
        hists, documents, zero_division=zero_division, credit=credit, resampling=resampling, beta=beta
    )


def bootstrap_histograms(
    groups: dict[str, Histogram],
    documents: int,
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    beta: float = 1.0,
) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """``bootstrap_rows`` from each group's histogram of its documents with a mention in it."""
    jobs = _group_jobs(groups, documents, credit, resampling)
    done = _bootstrap_tables(list(jobs.values()), zd=zero_division, credit=credit, resampling=resampling, beta=beta)
    return dict(zip(jobs, done, strict=True))


@dataclass
class Comparison:
    """Every system's intervals, and each system against the first: difference (other - first),
    its interval and both p-values, per score name and metric."""

    names: list[str]
    intervals: list[dict[str, dict[str, dict[str, float | None]]]]
    comparisons: list[dict[str, Any]]
    documents: int


def joint_histogram(systems: Sequence[DocCounts], credit: str) -> Histogram:
    """The systems' statistics of each document side by side (system ``s``'s fields prefixed
    ``s:``), as one histogram: the state of paired resampling."""
    cols = [_needed(d.fields, scaled=credit in ("dice", "iou")) for d in systems]
    fields = tuple(f"{s}:{d.fields[i]}" for s, (d, c) in enumerate(zip(systems, cols, strict=True)) for i in c)
    stats = np.hstack([np.take(d.stats, c, axis=1) for d, c in zip(systems, cols, strict=True)])
    return Histogram.of(stats, fields)


def resampled_columns(fields: tuple[str, ...], credit: str) -> list[int]:
    """The columns of per-document rows that intervals and tests read (``joint_histogram``'s)."""
    return _needed(fields, scaled=credit in ("dice", "iou"))


def system_histogram(joint: Histogram, system: int) -> Histogram:
    """One system's histogram (its fields unprefixed) out of the systems' joint histogram."""
    cols = [i for i, name in enumerate(joint.fields) if name.split(":", 1)[0] == str(system)]
    fields = tuple(joint.fields[i].split(":", 1)[1] for i in cols)
    return Histogram.of(joint.rows[:, cols], fields, joint.counts)


def _split_joint(hist: Histogram) -> list[_Table]:
    """Each system's table of a joint histogram (same rows, same counts)."""
    systems: dict[int, list[int]] = {}
    for i, name in enumerate(hist.fields):
        systems.setdefault(int(name.split(":", 1)[0]), []).append(i)
    return [
        _Table(hist.rows[:, cols], hist.counts, tuple(hist.fields[i].split(":", 1)[1] for i in cols))
        for _, cols in sorted(systems.items())
    ]


def compare(
    systems: list[DocCounts],
    names: list[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    exact: bool = False,
    beta: float = 1.0,
) -> Comparison:
    """Intervals of each system and paired tests of each against the first, on the same documents.

    ``systems`` are the per-document counts of each system's predictions against one reference,
    in the same document order."""
    return compare_histogram(
        paired_histogram(systems, names, credit), names, zero_division=zero_division, credit=credit,
        resampling=resampling, exact=exact, beta=beta,
    )


def paired_histogram(systems: Sequence[DocCounts], names: Sequence[str], credit: str) -> Histogram:
    """``joint_histogram`` of systems checked to hold the same documents."""
    if len(systems) != len(names) or not systems:
        raise OptionError("give one name per system, and at least one system")
    for docs in systems:
        _check(docs)
    first = systems[0]
    for name, docs in zip(names[1:], systems[1:], strict=True):
        if docs.stats.shape[0] != first.stats.shape[0] or (
            docs.ids is not None and first.ids is not None and docs.ids != first.ids
        ):
            raise OptionError(
                f"{name} does not have the documents of {names[0]}: systems are compared document by document"
                " against one reference"
            )
    return joint_histogram(systems, credit)


def compare_histogram(
    joint: Histogram,
    names: Sequence[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    exact: bool = False,
    beta: float = 1.0,
) -> Comparison:
    """``compare`` from the systems' joint histogram (``joint_histogram``)."""
    return compare_histograms(
        [joint], names, zero_division=zero_division, credit=credit, resampling=resampling, exact=exact, beta=beta
    )[0]


def score_columns(fields: Sequence[str]) -> dict[str, list[int]]:
    """Each score's columns among one system's fields: what ``scores_per_row`` reads to score
    it (a criterion or SemEval scheme: the mention counts and its own statistics; the token
    score: the token counts), by score name, in ``scores_per_row``'s order."""
    out = {}
    for f in fields:
        if f.endswith(".full_ref"):
            name = f.split(".")[0]
            out[name] = [i for i, g in enumerate(fields) if g in ("reference", "predicted") or g.startswith(f"{name}.")]
    out["token"] = [i for i, g in enumerate(fields) if g.startswith("token.")]
    return out


def draw_families(fields: Sequence[str]) -> dict[str, list[int]]:
    """The columns of one system resampled together, by family: every criterion and SemEval
    scheme (they share the mention counts, and together have hardly more distinct rows than the
    widest of them alone), and the token score (whose counts vary with every sentence's length:
    drawn with the mentions' columns, each would multiply the other's distinct rows)."""
    per = score_columns(fields)
    spans = sorted({i for name, cols in per.items() if name != "token" for i in cols})
    return {name: cols for name, cols in (("spans", spans), ("token", per["token"])) if cols}



UNIFORM_BITS = 53  # a count's uniform: 53 random bits, so each count's probability is a whole number of 2**-53
_ONE = 1 << UNIFORM_BITS
TAIL = 45.75  # ln(2**66): the counts a table leaves out have a probability below 2**-64 on each side
POISSON_TABLE = 1024.0  # rates, at most, whose Poisson counts are looked up (larger: numpy's generator)


def poisson_support(rates: FloatArray) -> tuple[IntArray, IntArray]:
    """The counts a Poisson table of each rate holds, ``lo`` to ``hi``: the counts outside have a
    probability below ``exp(-TAIL)`` on each side (Chernoff's bounds: below ``rate - t`` at
    most ``exp(-t^2 / 2 rate)``, above ``rate + t`` at most ``exp(-t^2 / 2 (rate + t/3))``)."""
    lo = np.maximum(0, np.floor(rates - np.sqrt(2 * TAIL * rates))).astype(np.int64)
    third = 2 * TAIL / 3
    hi = np.ceil(rates + third + np.sqrt(third * third + 2 * TAIL * rates)).astype(np.int64)
    return lo, hi


class CountTables:
    """Counts drawn by their inverse distribution function, looked up: one table for each of a
    few discrete distributions (here Poisson counts, a table for each rate), each count drawn
    from 53 random bits ``j`` as the smallest ``k`` with ``j < K(k)``, where ``K(k) / 2^53`` is the
    table's probability of at most ``k`` rounded up to the bits' grid: each count has its
    probability to within 2^-53, the resolution of the uniforms numpy's own samplers use.

    A table holds the counts from ``lo`` to ``hi``, outside which each side has a probability
    below 2^-64 (``poisson_support``): below what 53 random bits can draw. The probabilities
    come from the ratios of neighbouring counts' (``log_ratio(k, t)``: the log of
    ``P(k) / P(k - 1)`` in table ``t``), summed outwards from the first count and normalised,
    and each bound from the smaller side's sum (below the mode from the left, from it on from
    the right), so they are exact to a few units of 2^-53 (a Poisson table of rate 1,000 within
    2.5e-16 of every probability computed in 40 digits). A guide table (Chen and Asau 1974), as
    many bins as the table has counts (a power of two), gives each bin's first count, where
    the search starts; about one count in fourteen needs a step beyond it, and one in 150
    a binary search of all the tables' bounds.
    """

    GUIDE = 0  # bins per table: the power of two at or above 2^GUIDE x its counts
    ROWS = 32  # tables made side by side, at most

    def __init__(self, lo: IntArray, hi: IntArray, log_ratio: Callable[[IntArray, IntArray], FloatArray]) -> None:
        tables = int(lo.shape[0])
        length = hi - lo + 1
        self.lo = lo
        self.start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
        bounds = np.empty(int(length.sum()), dtype=np.int64)
        # Tables of about one length at a time, side by side, so each table's sums are its own.
        octave = np.ceil(np.log2(length)).astype(np.int64)
        # A few tables at a time (their arrays a few hundred kB, not several MB); each table's
        # numbers are its own row's, whatever rows are beside it.
        parts = [
            (these[i : i + self.ROWS], int(length[these].max()))
            for these in (np.flatnonzero(octave == level) for level in _distinct(octave).tolist())
            for i in range(0, these.shape[0], self.ROWS)
        ]
        for these, width in parts:
            col = np.arange(width)
            held = col < length[these, None]
            ratio = log_ratio(lo[these, None] + col, these[:, None])
            ratio[:, 0] = 0.0
            logs = np.cumsum(ratio, axis=1)
            # The mode lies inside the table (past its end the ratios only fall): the largest
            # weight is 1, those past the end none.
            logs -= logs.max(axis=1, keepdims=True)
            p = np.exp(logs)
            p *= held
            p /= p.sum(axis=1, keepdims=True)
            # Below the mode each bound from the left's sum, from the mode on from the right's
            # (what lies above): each small sum keeps its precision.
            below = np.ceil(np.cumsum(p, axis=1) * _ONE)
            above = _ONE - np.floor((np.cumsum(p[:, ::-1], axis=1)[:, ::-1] - p) * _ONE)
            mode = np.argmax(p, axis=1)
            k = np.where(col < mode[:, None], below, above).astype(np.int64)
            first, last = int(these[0]), int(these[-1])
            if last - first + 1 == these.shape[0]:  # tables side by side (as sorted rates make them)
                bounds[int(self.start[first]) : int(self.start[last] + length[last])] = k[held]
            else:
                bounds[(self.start[these, None] + col)[held]] = k[held]
        self.bounds = bounds
        # Every table's bounds in one sorted array. (Each table's own numbers are repeated over
        # its counts, rather than gathered by an array of each count's table: the same integers,
        # at a third of the cost.)
        self.keys = np.repeat(np.arange(tables, dtype=np.int64) << UNIFORM_BITS, length) + bounds
        # The guide's bins (a few numbers a table); the guide itself is made on the first
        # ``draw``: compare's families draw from their quick bins (``_QuickCounts``), which never
        # read it, and a family queued for its draws held one of 3.3 MB at 1M sentences.
        bits = np.ceil(np.log2(length)).astype(np.int64) + self.GUIDE
        self.shift = UNIFORM_BITS - bits
        self._bins = (np.int64(1) << bits) + 1
        self.first_bin = np.concatenate(([0], np.cumsum(self._bins)[:-1])).astype(np.int64)

    @functools.cached_property
    def guide(self) -> IntArray:
        """Bin b of a table (its bits' top bits equal to b) starts at the first count whose bound
        passes the bin's first value. (Threads that race to make it make the same numbers.)"""
        bounds, bins, tables = self.bounds, self._bins, int(self.lo.shape[0])
        length = np.diff(np.append(self.start, bounds.shape[0]))
        inner = np.ones(bounds.shape[0], dtype=bool)
        inner[self.start + length - 1] = False
        passed = bounds + np.repeat((np.int64(1) << self.shift) - 1, length)
        passed >>= np.repeat(self.shift, length)
        passed += np.repeat(self.first_bin, length)
        held_before = np.cumsum(np.bincount(passed[inner], minlength=int(bins.sum())))
        # Each bin's first count: the counts of its table's earlier bins, from the table's start.
        before = np.zeros(tables, dtype=np.int64)
        before[1:] = held_before[self.first_bin[1:] - 1]
        guide: IntArray = held_before - np.repeat(before - self.start, bins)
        return guide

    def columns(self, tables: IntArray) -> _TableColumns:
        """What ``draw`` needs of each column's table, looked up once."""
        return _TableColumns(tables, self.shift[tables], self.first_bin[tables], self.start[tables] - self.lo[tables])

    def draw(
        self, rng: np.random.Generator, columns: _TableColumns, size: int, out: IntArray | None = None
    ) -> IntArray:
        """``size`` rows of counts, each column from its own table (``columns``), looked up
        ``LOOKUP_CELLS`` counts at a time: the lookup's five or so temporaries keep one size
        whatever the block (the random words are the stream's next ones however the rows are
        cut, so the counts are the same). Written into ``out`` where one is given (a caller's
        table of the block's counts: no second array of them)."""
        width = columns.tables.shape[0]
        rows = max(1, LOOKUP_CELLS // max(width, 1))
        if rows >= size and out is None:
            return self._draw(rng, columns, size)
        if out is None:
            out = np.empty((size, width), dtype=np.int64)
        for start in range(0, size, rows):
            out[start : start + rows] = self._draw(rng, columns, min(rows, size - start))
        return out

    def _draw(self, rng: np.random.Generator, columns: _TableColumns, size: int) -> IntArray:
        # The generator's raw words: the very words ``rng.integers(0, 2**64, dtype=np.uint64)``
        # returns (its full range takes each word as it is), without that call's checks of its
        # bounds, about 4 us a call with the GIL held (0.6 us here).
        bits = rng.bit_generator.random_raw((size, columns.tables.shape[0]))
        j = (bits >> np.uint64(64 - UNIFORM_BITS)).view(np.int64)
        found: IntArray = self.guide[(j >> columns.shift) + columns.first_bin]
        at, flat = found.reshape(-1), j.reshape(-1)
        step = np.flatnonzero(self.bounds[at] <= flat)
        if step.shape[0]:
            at[step] += 1
            step = step[self.bounds[at[step]] <= flat[step]]
            if step.shape[0]:
                table = columns.tables[step % columns.tables.shape[0]]
                at[step] = np.searchsorted(self.keys, (table << UNIFORM_BITS) + flat[step], side="right")
        found -= columns.base
        return found


class _TableColumns:
    """What ``CountTables.draw`` needs of each column's table. (A plain class: a dataclass costs
    a millisecond or two of an interval run's imports.)"""

    __slots__ = ("base", "first_bin", "shift", "tables")

    def __init__(self, tables: IntArray, shift: IntArray, first_bin: IntArray, base: IntArray) -> None:
        self.tables, self.shift, self.first_bin, self.base = tables, shift, first_bin, base

MARGIN = 1.5  # standard deviations the Poisson counts' sum stays below the draws wanted
TABLE_LIMIT = 1 << 18  # pooled documents listed one by one for the top-up (1 MB), at most: above, an alias table
WIDE_PICKS = 1 << 32  # an alias pick's range (columns x documents) kept out of (this / 16, this] (``_Picks``)
PICK_RANGE = 1 << 63  # the most (columns^2 x documents) whose alias picks come from one integer and one key (int64)
LOOKUP_CELLS = 1 << 16  # Poisson counts looked up at a time (``CountTables.draw``: 512 KB a temporary)
TOP_UP_PIECE = 1 << 16  # the top-up's single draws drawn and tallied at a time (512 KB a working array)
TABLE_ENTRIES = 1 << 16  # counts the Poisson tables of one sampler hold, at most (about 2 MB)


def _distinct(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``np.unique(values)`` of a flat array, without the first call's import of numpy.ma (numpy
    2 asks whether the array is masked; a ``--ci`` run has no other use for it)."""
    ordered = np.sort(values, kind="stable")
    if ordered.shape[0] < 2:
        return ordered
    keep = np.empty(ordered.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


class _Sampler:
    """Bootstrap resamples of ``n`` documents over a histogram's rows (how often each row is
    drawn), exactly multinomial, as ``Draws.bootstrap`` draws them but cheaper where many rows
    are held by many documents.

    The draws that fall on rows held by at most ``RARE`` documents are a binomial count, each
    picking one of those documents (``Draws``). The others are a multinomial over the common
    rows, drawn through Poisson counts: independent Poisson counts of rates proportional to the
    rows' shares, given their sum ``s``, are multinomial over ``s`` draws, so counts drawn at a
    fixed rate a few standard deviations below the ``m`` draws wanted (drawn again where their
    sum passes ``m``: that depends on the sum alone) topped up with ``m - s`` draws one by one are
    multinomial over ``m``. The rate is the same in every resample, so rows held by as many
    documents have the same Poisson distribution, and each is drawn from a table of it
    (``CountTables``: a few nanoseconds a count, where numpy's Poisson sampler takes 45 to 70);
    rows whose rate passes ``POISSON_TABLE``, or whose rate's table would take the tables past
    ``TABLE_ENTRIES`` counts (the largest rates first), draw numpy's. Where one common row holds most of
    the common documents (a group's documents without a mention in it), its count is drawn
    first, a binomial, and the others' multinomial over the draws left, whose top-up is then a
    few standard deviations of far fewer draws."""

    RARE = 2

    def __init__(self, counts: IntArray) -> None:
        self.k = int(counts.shape[0])
        self.n = int(counts.sum())
        self.rare = np.flatnonzero(counts <= self.RARE)
        self.common = np.flatnonzero(counts > self.RARE)
        self.rare_documents = np.repeat(np.arange(self.rare.shape[0]), counts[self.rare])
        held = counts[self.common]
        self.held = int(held.sum())
        # The rows drawn before the pool (``_heads``: here the row that holds most of the common
        # documents, if one does), first among ``common``.
        heads = self._heads(held)
        self.heads = int(heads.shape[0])
        if self.heads:
            order = np.concatenate((heads, np.delete(np.arange(held.shape[0]), heads)))
            self.common, held = self.common[order], held[order]
        self.big_share = float(held[0]) / self.held if self.heads and not self.COUPLED else 0.0
        pool = held[self.heads :]
        self.pooled = int(pool.sum())
        self.rate = self._rate()
        # The rows whose Poisson counts are looked up first, those numpy draws after them: rates
        # past ``POISSON_TABLE``, and, where the distinct rates' tables would hold more than
        # ``TABLE_ENTRIES`` counts, the rows of the largest ones (few rows each: a larger corpus
        # has more distinct rates, and their tables would grow with it up to some 13 MB).
        generated = self.rate * pool > POISSON_TABLE * max(self.pooled, 1)
        distinct = _distinct(pool[~generated])
        lo, hi = poisson_support(self.rate * distinct / max(self.pooled, 1))
        fits = int(np.searchsorted(np.cumsum(hi - lo + 1), TABLE_ENTRIES, side="right"))
        if fits < distinct.shape[0]:
            generated |= pool >= distinct[fits]
        if generated.any():
            order = np.argsort(generated, kind="stable")
            pool = pool[order]
            self.common[self.heads :] = self.common[self.heads :][order]
        self.looked_up = int(pool.shape[0] - generated.sum())
        self.picks = _Picks(pool)  # the top-up's single draws
        self.share: FloatArray = pool / max(self.pooled, 1)
        self.generated_rates = self.rate * self.share[self.looked_up :]
        self._pool = pool
        self._tables: tuple[CountTables, _TableColumns] | None = None
        self._lock = threading.Lock()

    COUPLED = False  # the heads' draws coupled with the pool's Poisson sum (``_IntervalSampler``)

    def _heads(self, held: IntArray) -> IntArray:
        """A row that holds most of the common documents (a group's documents without a mention
        in it) comes first and draws a binomial; the others' multinomial over the draws left then
        needs a top-up of far fewer single draws (about 3 sqrt(draws))."""
        first = int(np.argmax(held)) if held.shape[0] > 1 else -1
        return np.array([first] if first >= 0 and 2 * held[first] > self.held else [], dtype=np.intp)

    def _rate(self) -> float:
        """The pooled rows' Poisson rate. The draws left for them are binomial over the corpus's
        documents (mean ``pooled``) and the Poisson counts' sum is Poisson: the rate stays
        ``MARGIN`` standard deviations of their difference below, so one resample in about
        fifteen is drawn again and the top-up is about that many standard deviations of single
        draws."""
        spread = math.sqrt(self.pooled * (2 - self.pooled / max(self.n, 1)))
        self.top_up_ns = 15 * spread  # ``_draw_cost``'s share of the top-up
        return max(0.0, self.pooled - MARGIN * spread - 1)

    def plan(self, n: int) -> list[int]:
        return _plan(n, self.k + int(self.rare_documents.shape[0]))

    def draw(self, rng: np.random.Generator, size: int) -> FloatArray:
        """How often each row is drawn in each of ``size`` resamples."""
        return self.summed(rng, size, np.eye(self.k))

    def summed(self, rng: np.random.Generator, size: int, rows: FloatArray) -> FloatArray:
        """``rows`` (one per histogram row) summed over each of ``size`` resamples: the rare rows'
        draws and the common rows' each multiplied with their rows, never put side by side."""
        return self.summed_apart(rng, size, rows[self.rare], rows[self.common])

    def summed_apart(
        self, rng: np.random.Generator, size: int, rare_rows: npt.NDArray[Any], common_rows: npt.NDArray[Any]
    ) -> FloatArray:
        """``summed`` with the rows already taken apart (``rows[rare]``, ``rows[common]``): floats,
        or integers (``_product``)."""
        out = np.zeros((size, rare_rows.shape[1]))
        rare = int(self.rare_documents.shape[0])
        on_rare = rng.binomial(self.n, rare / self.n, size=size) if rare else np.zeros(size, dtype=np.int64)
        if rare:
            m = self.rare.shape[0]
            picked = self.rare_documents[rng.integers(0, rare, size=int(on_rare.sum()))]
            out += _product(_tallies(picked, on_rare, m).astype(np.float64), rare_rows)
        if self.common.shape[0]:
            out += self._common_summed(rng, self.n - on_rare, common_rows)
        return out

    def _common_summed(
        self, rng: np.random.Generator, wanted: IntArray, common_rows: npt.NDArray[Any]
    ) -> FloatArray:
        """``_common(rng, wanted) @ common_rows``, the same draws and the same sums (whole
        numbers, exact in any order), without the counts put side by side and copied to floats:
        a block's temporaries are what a thread's malloc arena keeps."""
        if not self.big_share:
            return _product(self._pooled(rng, wanted), common_rows)
        on_big = rng.binomial(wanted, self.big_share)
        summed = _product(self._pooled(rng, wanted - on_big), common_rows[1:])
        summed += on_big[:, None] * common_rows[0]
        return summed

    def _common(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        """A multinomial over the common rows of ``wanted[r]`` draws, for each resample ``r``: the
        first row's count a binomial where it holds most of their documents, and the others' a
        multinomial over the draws left (the same distribution)."""
        if not self.big_share:
            return self._pooled(rng, wanted)
        on_big = rng.binomial(wanted, self.big_share)
        out: IntArray = np.concatenate((on_big[:, None], self._pooled(rng, wanted - on_big)), axis=1)
        return out

    def prepare(self) -> None:
        """The Poisson tables made now, in this thread, unless a thread is making them already:
        where the blocks are drawn by several threads, the second to draw from this sampler
        would otherwise wait for the first to make them (about a millisecond a histogram)."""
        if self._tables is None and self.rate and self.looked_up and not self._lock.locked():
            self._poisson_tables()

    def _poisson_tables(self) -> tuple[CountTables, _TableColumns]:
        """The looked-up rows' Poisson tables, one per distinct rate, made on the first draw (a
        histogram's sampler is often made only to weigh its cost) and shared by the threads."""
        with self._lock:
            if self._tables is None:
                held, which = np.unique(self._pool[: self.looked_up], return_inverse=True)
                rates = self.rate * held / self.pooled
                tables = CountTables(*poisson_support(rates), functools.partial(_poisson_ratio, rates))
                self._tables = tables, tables.columns(which.reshape(-1))
            return self._tables

    def _fixed(self, rng: np.random.Generator, size: int) -> IntArray:
        """``size`` rows of independent Poisson counts of the pooled rows at ``rate`` times their shares."""
        k = self.share.shape[0]
        if not self.rate:
            return np.zeros((size, k), dtype=np.int64)
        if self.looked_up == k:
            tables, columns = self._poisson_tables()
            return tables.draw(rng, columns, size)
        out = np.empty((size, k), dtype=np.int64)
        if self.looked_up:
            tables, columns = self._poisson_tables()
            tables.draw(rng, columns, size, out=out[:, : self.looked_up])
        out[:, self.looked_up :] = rng.poisson(self.generated_rates, size=(size, k - self.looked_up))
        return out

    def _poisson(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        """Independent Poisson counts of the pooled rows, at rates proportional to their shares
        that sum to below ``wanted[r]`` in resample ``r``: ``rate`` wherever it is (almost every
        resample); below it (a draw of far fewer documents than the corpus holds, whose counts
        at ``rate`` would pass it again and again) the resample's own rate, numpy's draws."""
        fixed = wanted >= self.rate
        if fixed.all():
            return self._fixed(rng, wanted.shape[0])
        out = np.empty((wanted.shape[0], self.share.shape[0]), dtype=np.int64)
        out[fixed] = self._fixed(rng, int(fixed.sum()))
        few = wanted[~fixed]
        rate = np.maximum(few - MARGIN * np.sqrt(few) - 1, 0)
        out[~fixed] = rng.poisson(rate[:, None] * self.share[None, :])
        return out

    def _pooled(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        """A multinomial over the pooled rows (``share``) of ``wanted[r]`` draws, for each resample ``r``."""
        counts = self._poisson(rng, wanted)
        sums = counts.sum(axis=1)  # each resample's, kept as its rows are drawn again
        over = np.flatnonzero(sums > wanted)
        while over.shape[0]:  # about one resample in fifteen (``MARGIN``)
            again = self._poisson(rng, wanted[over])
            counts[over] = again
            sums[over] = again.sum(axis=1)
            over = over[sums[over] > wanted[over]]
        self._top_up(rng, counts, wanted - sums)
        out: IntArray = counts
        return out

    def _top_up(self, rng: np.random.Generator, counts: IntArray, missing: IntArray) -> None:
        """``missing[r]`` single draws over the pooled rows added to row ``r`` of ``counts``."""
        k = self.share.shape[0]
        # The top-up's single draws (about ``MARGIN`` standard deviations a resample, which grow
        # with the square root of the corpus), ``TOP_UP_PIECE`` at a time: the working arrays keep
        # one size whatever the corpus, and the numbers are the same as in one call (numpy's
        # bounded integers take the stream's words in turn, however the calls are cut:
        # tests/test_memory_draws.py checks it), the picks of a resample cut between two pieces
        # tallied from both.
        ends = np.cumsum(missing)
        total = int(ends[-1]) if ends.shape[0] else 0
        for start in range(0, total, TOP_UP_PIECE):
            stop = min(start + TOP_UP_PIECE, total)
            picked = self.picks.rows(rng, stop - start)
            # The resamples this piece's draws fall in, and how many of them each.
            first = int(np.searchsorted(ends, start, side="right"))
            last = int(np.searchsorted(ends, stop - 1, side="right"))
            bounds = np.minimum(ends[first : last + 1], stop)
            taken = np.diff(np.concatenate(([start], bounds)))
            # np.repeat holds the GIL, but it is the cheapest way to these offsets: a running sum
            # of the width at each resample's first pick lets the GIL go and costs twice its CPU
            # (docs/benchmarks.md).
            picked += np.repeat(np.arange(last + 1 - first) * k, taken)
            counts[first : last + 1] += np.bincount(picked, minlength=(last + 1 - first) * k).reshape(-1, k)


class _Picks:
    """Single draws of the pooled rows, row ``i`` with probability ``w[i] / W`` exactly (``w``:
    the rows' documents, ``W`` their sum), each in a constant time whatever the corpus: the
    top-up's picks.

    Where the pooled documents are at most ``TABLE_LIMIT``, each document's row is listed (4
    bytes a document): a pick is a uniform document and its row, one gather. Above, Walker's
    alias method (Walker 1977) with integer thresholds, whose arrays grow with the rows, not the
    documents: ``K`` columns (the rows, made a power of two with rows of no documents), each of
    capacity ``W``; a pick takes a uniform column ``j`` and a uniform ``v`` below ``W``, and is
    row ``j`` where ``v < threshold[j]``, else ``alias[j]``. The thresholds are whole numbers, so
    each row's probability is its share of the ``K W`` (column, uniform) pairs, exactly
    ``K w[i] / (K W)``. Both numbers come from one bounded integer below ``K W`` (its low bits the
    column, as ``K`` is a power of two) where ``K^2 W`` is at most 2^63 (the packed keys' width;
    otherwise two, and ``K W`` must stay below 2^63: billions of documents and of rows). numpy's
    bounded integers (Lemire's method) cost 2.6 to 3 ns a pick where the range is far below 2^32
    or past it, but 7 to 13 ns near 2^31, where about half the picks take a mispredicted branch
    (and, just past 2^31, are drawn again): so where ``K W`` would lie between 2^28 and 2^32,
    ``K`` is doubled (columns of no documents added) until it passes 2^32.
    The table is built with prefix sums (the sweep of Hübschle-Schneider and Sanders 2019: light
    rows, of fewer than ``W`` scaled documents, filled in order from the heavy ones in order),
    no loop over the rows."""

    def __init__(self, pool: IntArray) -> None:
        self.pooled = int(pool.sum())
        self.table: IntArray | None = None
        if self.pooled <= TABLE_LIMIT:
            self.table = np.repeat(np.arange(pool.shape[0], dtype=np.int32), pool)
            return
        # A power of two of columns, at least the rows; where the pick's range would fall within
        # 16 times ``WIDE_PICKS``, columns with no documents added (16 times the columns, at
        # most) until it passes it.
        self.shift = max(int(pool.shape[0]) - 1, 0).bit_length()
        while WIDE_PICKS >> 4 < self.pooled << self.shift <= WIDE_PICKS:
            self.shift += 1
        self.columns = 1 << self.shift
        threshold, alias = alias_table(pool, self.columns)
        # Where ``K^2 W`` fits, each column's threshold and alias in one word (one gather a pick):
        # ``(threshold K + j) K + alias``, its high part what the pick's integer ``v K + j`` is
        # compared with (``v < threshold`` where ``v K + j < threshold K + j``), its low bits the
        # alias. Otherwise apart, and the pick's two numbers drawn apart.
        self.packed = self.columns * self.columns * self.pooled <= PICK_RANGE
        if self.packed:
            own = threshold * self.columns + np.arange(self.columns, dtype=np.int64)
            self.keys = (own << self.shift) | alias
        else:
            self.threshold, self.alias = threshold, alias

    def rows(self, rng: np.random.Generator, size: int) -> IntArray:
        """``size`` picks' rows (``intp``)."""
        if self.table is not None:
            out: IntArray = np.take(self.table, rng.integers(0, self.pooled, size=size)).astype(np.intp)
            return out
        low = self.columns - 1
        if self.packed:
            word = rng.integers(0, self.columns * self.pooled, size=size)  # v K + j
            column = word & low
            picked = np.take(self.keys, column)
            # v K + j < threshold K + j exactly where (v K + j) K + K - 1 < the key: the alias in
            # the key's low bits is below K.
            word <<= self.shift
            word |= low
            keep = word < picked
            picked &= low  # the alias
        else:  # past 2^63 (thousands of millions of documents, or of rows)
            column = rng.integers(0, self.columns, size=size)
            keep = rng.integers(0, self.pooled, size=size) < np.take(self.threshold, column)
            picked = np.take(self.alias, column)
        # The alias, or the column's own row where the uniform falls below its threshold: no
        # branch (numpy's where of a random mask took four times as long).
        column -= picked
        column *= keep
        picked += column
        return picked


def alias_table(weights: IntArray, columns: int) -> tuple[IntArray, IntArray]:
    """Walker's alias table of whole-number ``weights`` over ``columns`` columns (at least as many
    as the weights; the others weigh nothing): ``threshold`` and ``alias`` such that column ``j``
    gives row ``j`` for ``threshold[j]`` of its ``W = weights.sum()`` uniforms and ``alias[j]``
    for the others, so row ``i`` gets ``columns * weights[i]`` of the ``columns * W``, exactly.

    Each row's scaled weight ``q = columns * w`` against the capacity ``W``: a light row (``q <
    W``) keeps ``q`` of its column and lends the rest, its deficit ``W - q``, to a heavy one; a
    heavy row keeps its column whole and gives its surplus ``q - W`` to light columns. Laid end to
    end in the rows' order, the deficits and the surpluses cover the same length. A light row's
    alias is the heavy row whose surplus holds the start of its deficit, and it takes the whole
    deficit from it; where that runs past the heavy row's surplus, the heavy row gives up as much
    of its own column to the next heavy row (its alias), which may in turn give up its column to
    the next: a heavy row keeps ``W`` less the part of the light deficit across its surplus's end
    that lies beyond it. So every column holds ``W`` and each row exactly its scaled weight."""
    rows = int(weights.shape[0])
    capacity = int(weights.sum())
    scaled = np.zeros(columns, dtype=np.int64)
    scaled[:rows] = weights
    scaled *= columns
    threshold = np.full(columns, capacity, dtype=np.int64)
    alias = np.arange(columns, dtype=np.intp)
    heavy = scaled >= capacity
    heavies, lights = np.flatnonzero(heavy), np.flatnonzero(~heavy)
    if lights.shape[0] and heavies.shape[0]:
        deficit = capacity - scaled[lights]
        ends = np.cumsum(deficit)
        starts = ends - deficit
        surplus_ends = np.cumsum(scaled[heavies] - capacity)
        threshold[lights] = scaled[lights]
        alias[lights] = heavies[np.searchsorted(surplus_ends, starts, side="right")]
        # The light deficit that holds each surplus's end (the first to end at or past it), and
        # how far it runs past: a deficit that only starts there runs past by nothing.
        at = np.minimum(np.searchsorted(ends, surplus_ends, side="left"), ends.shape[0] - 1)
        past = np.where(starts[at] < surplus_ends, ends[at] - surplus_ends, 0)
        threshold[heavies] = capacity - past
        alias[heavies[:-1]] = heavies[1:]
    return threshold, alias


def _poisson_ratio(rates: FloatArray, k: IntArray, table: IntArray) -> FloatArray:
    """log(P(k) / P(k - 1)) of a Poisson count of rate ``rates[table]``."""
    out: FloatArray = np.log(rates[table]) - np.log(np.maximum(k, 1))
    return out


QUICK_BITS = 12  # a count's first random bits, which alone decide it in almost every case


class _QuickCounts:
    """``CountTables``' counts of each column's table, the same distribution, drawn from fewer
    random bits. A count's 53-bit uniform is drawn in two parts: its first ``QUICK_BITS`` bits
    pick one of ``2^QUICK_BITS`` equal bins of the table's grid, and where no bound of the table
    falls inside the bin (the count is the same for every uniform in it: all but a few bins) the
    bin's count is read from a small table of each table's bins; only where a bound falls inside
    are the other 41 bits drawn, and the count looked up in the tables as ``CountTables`` does.
    So each count is the smallest ``k`` with ``j < K(k)`` for a uniform ``j`` of 53 bits, as
    ``CountTables.draw`` draws it, from 16 random bits where that call takes 64, and one small
    gather where it takes two and a search."""

    def __init__(self, tables: CountTables, columns: _TableColumns) -> None:
        # What the few counts a bin leaves open look up (``lookup``): every table's bounds in one
        # sorted array, and each column's table. (Not the tables themselves: their bounds and
        # guide are let go once the bins are made.)
        self.keys, self.tables_of, self.base = tables.keys, columns.tables, columns.base
        length = np.diff(np.append(tables.start, tables.bounds.shape[0]))
        # A table's count is lo + k from its k-th bound's value of the uniform on (each bound but
        # the last moves it up by one), so each bin's count where it starts is read off the
        # bounds: count lo + k for the bins from the one where bound k - 1 takes effect to the
        # one where bound k does, a run of each count (the last, and bounds past the grid, end
        # at its end).
        shift = UNIFORM_BITS - QUICK_BITS
        bounds = tables.bounds
        within = bounds < _ONE
        effect = np.full(bounds.shape[0], 1 << QUICK_BITS, dtype=np.int64)  # the first bin that has the count above
        effect[within] = (bounds[within] + (1 << shift) - 1) >> shift
        effect[tables.start + length - 1] = 1 << QUICK_BITS
        before = np.empty_like(effect)
        before[1:] = effect[:-1]
        before[tables.start] = 0
        counts = np.arange(bounds.shape[0]) - np.repeat(tables.start - tables.lo, length)
        # In the narrowest integers that hold every count and the open bins' -1: bytes where the
        # counts stay below 128, as a family's small rates' do (the bins are a table's 4,096
        # entries each, the most a family's draws hold).
        narrow = np.int8 if int(counts.max(initial=0)) <= np.iinfo(np.int8).max else np.int16
        quick = np.repeat(counts.astype(narrow), effect - before)
        # A bound inside a bin (not at its first value): the uniform's other bits decide.
        cut = within & ((bounds & ((1 << shift) - 1)) != 0)
        cut[tables.start + length - 1] = False
        table_of = np.repeat(np.arange(length.shape[0], dtype=np.int64), length)
        quick[(table_of[cut] << QUICK_BITS) + (bounds[cut] >> shift)] = -1
        self.quick = quick
        # Each column's table in the bits above a count's 16 random bits: their sum shifted by
        # the bits a bin leaves out is the bin's place (one pass fewer than shifting the random
        # bits first). In 32 bits where every table's place fits.
        wide = int(columns.tables.max(initial=0)) >= 1 << (31 - 16)
        self.offset = (columns.tables << 16).astype(np.int64 if wide else np.int32)

    def draw(self, rng: np.random.Generator, size: int, out: npt.NDArray[Any] | None = None) -> npt.NDArray[Any]:
        """``size`` rows of counts, each column from its own table; written into ``out`` where
        one is given (any numeric type: the caller's table, floats to be multiplied by rows).
        Drawn ``LOOKUP_CELLS`` counts at a time, so the temporaries keep one size whatever the
        block (and stay in the cache); the pieces are cut by the columns alone, so a block's
        counts are the same however it is drawn."""
        width = self.offset.shape[0]
        if out is None:
            out = np.empty((size, width), dtype=np.int64)
        rows = max(1, LOOKUP_CELLS // max(width, 1))
        for start in range(0, size, rows):
            self._piece(rng, out[start : start + rows])
        return out

    def _piece(self, rng: np.random.Generator, out: npt.NDArray[Any]) -> None:
        size, width = out.shape
        cells = size * width
        first = rng.bit_generator.random_raw((cells + 3) // 4).astype("<u8", copy=False).view(np.uint16)[:cells]
        picked = np.add(first.reshape(size, width), self.offset, dtype=self.offset.dtype)
        picked >>= 16 - QUICK_BITS
        got = np.take(self.quick, picked)  # (numpy's take: about half the cost of indexing by an array)
        out[...] = got
        open_ = np.flatnonzero(got.reshape(-1) < 0)
        if open_.shape[0]:
            row, column = np.divmod(open_, width)
            rest = (rng.bit_generator.random_raw(open_.shape[0]) >> np.uint64(64 - UNIFORM_BITS + QUICK_BITS)).view(
                np.int64
            )
            top = (picked[row, column] & ((1 << QUICK_BITS) - 1)).astype(np.int64)
            out[row, column] = self.lookup((top << (UNIFORM_BITS - QUICK_BITS)) | rest, column)

    def lookup(self, j: IntArray, column: IntArray) -> IntArray:
        """The count of 53-bit uniforms ``j`` of columns ``column``: the smallest ``k`` with
        ``j < K(k)`` in the column's table (a search of every table's bounds)."""
        table = self.tables_of[column]
        at = np.searchsorted(self.keys, (table << UNIFORM_BITS) + j, side="right")
        out: IntArray = at - self.base[column]
        return out


class _FamilySampler(_Sampler):
    """A family's bootstrap resamples (``_Sampler``'s multinomial over its rows), with every row
    drawn through Poisson counts, those of rare rows too (a family's rows held by one or two
    documents are thousands: their Poisson counts, read from ``_QuickCounts``' bins, cost less
    than picking their documents one by one and tallying them)."""

    RARE = 0

    def __init__(self, counts: IntArray) -> None:
        super().__init__(counts)
        self._quick: _QuickCounts | None = None
        self._quick_lock = threading.Lock()  # held while the bins are made (``_lock``: the tables)

    def prepare(self) -> None:
        """``_Sampler.prepare``, unless the bins are made already (their tables are let go then)."""
        with self._quick_lock:
            if self._quick is None:
                super().prepare()

    def _quick_counts(self) -> _QuickCounts:
        """The quick bins, made on the first draw (not when queued, as the Poisson tables are:
        the batch drawn before lets its bins go first) and shared by the threads. The bins hold
        what the draws need of the tables, so the tables' bounds and guide are let go then."""
        with self._quick_lock:
            if self._quick is None:
                self._quick = _QuickCounts(*self._poisson_tables())
                self._tables = None
            return self._quick

    def _pooled(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        """``_Sampler._pooled``'s multinomial (as floats, whole numbers: the rows they multiply
        are floats), its top-up's picks added where they fall: a family's rows are thousands and
        a resample's top-up a few hundred picks, so a count of every (resample, row) cell would
        touch far more cells than the picks."""
        k = self.share.shape[0]
        counts = self._poisson(rng, wanted)
        sums = counts.sum(axis=1)
        over = np.flatnonzero(sums > wanted)
        while over.shape[0]:  # about one resample in ten (``MARGIN``)
            again = self._poisson(rng, wanted[over])
            counts[over] = again
            sums[over] = again.sum(axis=1)
            over = over[sums[over] > wanted[over]]
        missing = (wanted - sums).astype(np.int64)
        cells = counts.reshape(-1)
        total = int(missing.sum())
        # Each pick's resample in 32 bits (a block's resamples are few), made its cell's offset a
        # piece at a time: half the bytes of an array of every pick's offset (several MB a block
        # of a large family). (A search of each piece's picks among the resamples' ends holds
        # less, but costs 30 times the repeat: 2.5 ms a block.)
        resample_of = np.repeat(np.arange(wanted.shape[0], dtype=np.int32), missing)
        for start in range(0, total, TOP_UP_PIECE):  # the working arrays keep one size
            stop = min(start + TOP_UP_PIECE, total)
            row_of = resample_of[start:stop].astype(np.intp)
            row_of *= k
            picked = self.picks.rows(rng, stop - start)
            picked += row_of
            np.add.at(cells, picked, cells.dtype.type(1))  # one of the cells' own type: numpy's fast path
        return counts

    def _fixed(self, rng: np.random.Generator, size: int) -> IntArray:
        k = self.share.shape[0]
        if not self.rate:
            return cast(IntArray, np.zeros((size, k)))
        out = np.empty((size, k))  # every column written below
        if self.looked_up:
            self._quick_counts().draw(rng, size, out[:, : self.looked_up])
        if k > self.looked_up:
            out[:, self.looked_up :] = rng.poisson(self.generated_rates, size=(size, k - self.looked_up))
        return cast(IntArray, out)


COUPLING = 2.0  # standard deviations of the coupled shortfall's spread between the draws left and the Poisson sum
HEADS = 64  # rows an interval's sampler draws after its pool (``_IntervalSampler._heads``), at most
LOOKUP_NS, PICK_NS, NUMPY_NS = 7.0, 7.0, 45.0  # a Poisson count looked up, a top-up's pick, one of numpy's counts


def _binomial_support(n: int, q: float) -> tuple[IntArray, IntArray]:
    """The counts a table of the binomial of ``n`` draws of probability ``q`` holds: by
    Bernstein's bound (``P(|X - nq| >= t) <= exp(-t^2 / 2 (nq(1 - q) + t/3))``) the counts outside
    have a probability below ``exp(-TAIL)`` on each side."""
    third = TAIL / 3
    t = third + math.sqrt(third * third + 2 * TAIL * n * q * (1 - q))
    lo, hi = max(0, math.floor(n * q - t)), min(n, math.ceil(n * q + t))
    return np.array([lo], dtype=np.int64), np.array([hi], dtype=np.int64)


def _coupling_ratio(rate: float, n: int, q: float, k: IntArray, table: IntArray) -> FloatArray:
    """log(P(k) / P(k - 1)) of the coupling's two tables: table 0 a Poisson count of ``rate``,
    table 1 the binomial of ``n`` draws of probability ``q`` (past ``n``, where its row is padded,
    the ratio only falls)."""
    k = np.maximum(k, 1)
    poisson = math.log(rate) - np.log(k)
    binomial = np.log(np.maximum(n - k + 1, 1) / k) + math.log(q / (1 - q))
    out: FloatArray = np.where(table == 0, poisson, binomial)
    return out


class _IntervalSampler(_FamilySampler):
    """The intervals' bootstrap resamples (``evaluate --ci``, per type, per bucket, per group):
    every row's Poisson count read from ``_QuickCounts``' 12-bit bins, as compare's families draw
    them (``_FamilySampler``), the rows held by one or two documents too (a histogram's rows are
    a few hundred: their counts cost less than picking their documents one by one). Without
    heads (below), the top-up's picks are tallied as ``_Sampler`` tallies them (a resample's few
    hundred picks fall on about as many cells as it has rows, where adding each pick where it
    falls costs more); with heads, the top-up is a few picks a resample, each added where it
    falls. The same distribution as ``_Sampler``'s: a multinomial over the rows.

    Its largest rows (the heads, ``_heads``: those numpy's Poisson sampler would draw, and a
    group's documents without a mention in it) are drawn last, a multinomial of the draws the
    pool leaves them, and how many draws the pool gets (binomial) is coupled with its Poisson
    sum. The pool's Poisson counts given their sum ``s`` are multinomial over ``s`` draws whatever
    is drawn from ``s`` alone, so the pool's draws ``w`` may be read from the same uniform as
    ``s`` (``s``'s uniform, exactly uniform given ``s``'s table: a uniform among its 2^53 grid's
    values of ``s``, looked up in ``w``'s table), as long as the counts are drawn again wherever
    ``s`` passes ``w`` (given ``w``, those are Poisson counts given that their sum is at most
    ``w``: multinomial given their sum too). Each resample then tops the pool up by ``w - s``
    single draws and the heads take the rest. ``w`` and ``s`` rise together, so ``w - s`` moves
    by the difference of their spreads, not by their spreads' sum: the top-up is ``COUPLING``
    times that difference, where independent draws (the rate ``MARGIN`` standard deviations of
    both below) needed about 1.64 times their combined spread, and the heads' counts (a few
    dozen of numpy's binomials, about as costly as the Poisson counts numpy drew for them)
    leave the pool's sum a smaller spread than the whole's."""

    COUPLED = True

    def __init__(self, counts: IntArray) -> None:
        super().__init__(counts)
        head = counts[self.common[: self.heads]].astype(np.float64)
        self.head_shares: FloatArray = head / max(float(head.sum()), 1.0)

    def _heads(self, held: IntArray) -> IntArray:
        """The largest rows, as many as cost least to draw (an estimate from the histogram alone,
        so the choice never depends on how the corpus was counted): each head is one of numpy's
        binomials, each pooled row a count looked up (or numpy's Poisson count, past
        ``POISSON_TABLE`` documents), and the top-up about ``COUPLING`` times the difference of
        the spreads of the pool's draws and its Poisson sum (without heads: ``MARGIN``
        standard deviations of the sum)."""
        k, n = int(held.shape[0]), self.held
        order = np.argsort(-held, kind="stable")[: min(HEADS, k - 1)]
        if not order.shape[0]:
            return order
        taken = np.concatenate(([0], np.cumsum(held[order])))  # documents of the h largest rows
        h = np.arange(taken.shape[0])
        q = taken / n
        pooled = n - taken
        gap = COUPLING * np.maximum(np.sqrt(pooled) - np.sqrt(n * q * (1 - q)), 0) + 1
        top_up = np.where(h > 0, gap, 1.64 * math.sqrt(n))
        numpy_rows = int((held > POISSON_TABLE).sum()) - np.concatenate(([0], np.cumsum(held[order] > POISSON_TABLE)))
        cost = (
            PICK_NS * top_up + LOOKUP_NS * (k - h - numpy_rows) + NUMPY_NS * (numpy_rows + h)
        )
        cost[pooled - gap <= 0] = np.inf  # no Poisson counts left to couple with
        best = int(np.argmin(cost))
        return order[:best]

    def _rate(self) -> float:
        if not self.heads:
            return super()._rate()
        q = 1 - self.pooled / self.held  # the heads' share
        gap = COUPLING * max(math.sqrt(self.pooled) - math.sqrt(self.held * q * (1 - q)), 0) + 1
        self.top_up_ns = PICK_NS * gap + NUMPY_NS * self.heads
        return max(0.0, self.pooled - gap)

    @functools.cached_property
    def _coupling(self) -> tuple[IntArray, int, IntArray, int]:
        """The tables that couple the pool's draws with its Poisson sum: the sum's (a Poisson
        count of the pool's whole rate) and the draws' (a binomial of the corpus's documents,
        the pool's share), each count's bound on the grid of 2^53 (``CountTables``). (Threads
        that race to make them make the same numbers.)"""
        rate, q = np.array([self.rate]), self.pooled / self.held
        (sums_lo, sums_hi), (left_lo, left_hi) = poisson_support(rate), _binomial_support(self.held, q)
        # Both in one call: table 0 the sum's, table 1 the draws' (each table's numbers its own).
        tables = CountTables(
            np.concatenate((sums_lo, left_lo)), np.concatenate((sums_hi, left_hi)),
            functools.partial(_coupling_ratio, float(self.rate), self.held, q),
        )
        split = int(tables.start[1])
        return tables.bounds[:split], int(sums_lo[0]), tables.bounds[split:], int(left_lo[0])

    def _common(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        """The multinomial over the common rows of ``wanted[r]`` draws: the pool's first (its
        draws coupled with its Poisson sum), then the heads' over the draws left. With heads, as
        floats (whole numbers): the rows they multiply are floats, and the pool's few top-up
        picks are added where they fall."""
        if not self.heads:
            return self._pooled(rng, wanted)
        out = np.empty((wanted.shape[0], self.heads + self.share.shape[0]))
        if (wanted == self.held).all():  # the intervals' draws (no rare rows): every resample's
            left = self._coupled(rng, out)
        else:
            left = rng.binomial(wanted, self.pooled / self.held)
            out[:, self.heads :] = self._pooled(rng, left)
        rest = wanted - left
        out[:, : self.heads] = rest[:, None] if self.heads == 1 else rng.multinomial(rest, self.head_shares)
        return cast(IntArray, out)

    def _common_summed(
        self, rng: np.random.Generator, wanted: IntArray, common_rows: npt.NDArray[Any]
    ) -> FloatArray:
        return _product(self._common(rng, wanted), common_rows)

    def _coupled(self, rng: np.random.Generator, out: FloatArray) -> IntArray:
        """Resamples of all the corpus's documents, one a row of ``out``: the pool's draws (each
        a binomial, returned) and the pool's multinomial over them, written after the heads'
        columns."""
        sums_bounds, sums_lo, left_bounds, left_lo = self._coupling
        size, width = out.shape
        counts = out[:, self.heads :]
        self._fill(rng, counts)
        sums = counts.sum(axis=1).astype(np.int64)
        # The sum's uniform: uniform among the grid's values that give it, so uniform over the
        # grid; past the sum's table (a probability below 2^-64) its first or last count's.
        at = np.clip(sums - sums_lo, 0, sums_bounds.shape[0] - 1)
        upper = sums_bounds[at]
        lower = np.where(at > 0, sums_bounds[at - 1], 0)
        uniform = lower + rng.integers(0, np.maximum(upper - lower, 1))
        left = left_lo + np.minimum(np.searchsorted(left_bounds, uniform, side="right"), left_bounds.shape[0] - 1)
        over = np.flatnonzero(sums > left)
        while over.shape[0]:  # a few resamples in a hundred (``COUPLING``), drawn again
            again = self._poisson(rng, left[over])
            counts[over] = again
            sums[over] = again.sum(axis=1)
            over = over[sums[over] > left[over]]
        # The top-up: a few picks a resample, each added where it falls (a tally of every cell
        # would touch the whole table for them).
        missing = left - sums
        total = int(missing.sum())
        cells = out.reshape(-1)
        resample_of = np.repeat(np.arange(size, dtype=np.int32), missing)
        for start in range(0, total, TOP_UP_PIECE):  # the working arrays keep one size
            stop = min(start + TOP_UP_PIECE, total)
            row_of = resample_of[start:stop].astype(np.intp)
            row_of *= width
            row_of += self.heads
            picked = self.picks.rows(rng, stop - start)
            picked += row_of
            np.add.at(cells, picked, 1.0)
        return cast(IntArray, left)

    def _fill(self, rng: np.random.Generator, out: npt.NDArray[Any]) -> None:
        """``_fixed``'s counts (the same draws) written into ``out``."""
        if not self.rate:
            out[...] = 0
            return
        if self.looked_up:
            self._quick_counts().draw(rng, out.shape[0], out[:, : self.looked_up])
        size, k = out.shape
        if k > self.looked_up:
            out[:, self.looked_up :] = rng.poisson(self.generated_rates, size=(size, k - self.looked_up))

    def _fixed(self, rng: np.random.Generator, size: int) -> IntArray:
        """``_FamilySampler._fixed``'s counts (the same draws), as whole numbers: the top-up
        tallies its picks into them."""
        k = self.share.shape[0]
        out = np.zeros((size, k), dtype=np.int64)
        if not self.rate:
            return out
        if self.looked_up:
            self._quick_counts().draw(rng, size, out[:, : self.looked_up])
        if k > self.looked_up:
            out[:, self.looked_up :] = rng.poisson(self.generated_rates, size=(size, k - self.looked_up))
        return out

    def _pooled(self, rng: np.random.Generator, wanted: IntArray) -> IntArray:
        return _Sampler._pooled(self, rng, wanted)


class _Family:
    """One family's columns of every system, out of the systems' joint histogram, as a histogram
    of its own. Documents that differ only in columns the family does not hold fall onto one row,
    so it has far fewer distinct rows than the joint histogram, and a multinomial over the joint
    rows, summed over the rows that narrow to one, is the multinomial over the narrowed rows with
    their summed counts: resampling this histogram is resampling the documents."""

    def __init__(self, name: str, joint: Histogram, columns: list[list[int]], mine: list[int]) -> None:
        picked = [cols[i] for cols in columns for i in mine]
        hist = Histogram.of(joint.rows[:, picked], tuple(joint.fields[c] for c in picked), joint.counts)
        self.name, self.mine, self.width = name, mine, len(mine)
        # The rows as narrow as the histogram holds them (``compact_rows``), widened where they
        # are used: the families' rows grow with the distinct documents.
        self.rows: npt.NDArray[Any] = hist.rows
        self.counts: IntArray = hist.counts
        self.draws = _FamilySampler(hist.counts)
        keep, self.expand = _distinct_columns(self.rows)
        distinct = _held(self.rows[:, keep])
        # The rare rows' and the common rows' apart, as the draws multiply them (held once: not
        # also side by side); many rows in their own integers, made floats a piece at a time
        # where they are multiplied (``_held``, ``_product``: the same sums).
        self.apart = (distinct[self.draws.rare], distinct[self.draws.common])
        self.left = _BlocksLeft()

    def resampled(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Every column summed over each of ``size`` bootstrap resamples."""
        out: FloatArray = self.draws.summed_apart(rng, size, *self.apart)[:, self.expand]
        if self.left.one_drawn():  # the family's last block: its sampler (tables, bins) let go now
            vars(self).pop("draws")
            vars(self).pop("apart")
        return out

    def drawn(self) -> None:
        """Every block of this family drawn: its rows are not needed any longer (nor its sampler,
        where no block was drawn)."""
        vars(self).pop("draws", None)
        vars(self).pop("apart", None)
        self.queued()

    def queued(self) -> None:
        """Its blocks queued and its differences taken (``differences``): the rows and counts
        are not needed any longer (the draws hold their own, in the sampler and ``apart``)."""
        vars(self).pop("rows", None)
        vars(self).pop("counts", None)

    def side(self, rows: FloatArray, system: int) -> FloatArray:
        """One system's columns of rows of this family (or of sums of them)."""
        return rows[:, system * self.width : (system + 1) * self.width]

    def differences(self, system: int) -> _Swaps:
        """``system``'s columns minus the first's: what swapping a document's outputs moves."""
        mine = self.rows[:, system * self.width : (system + 1) * self.width]
        # In 16 bits where the rows' counts stay below 2^14 (so do their differences, and those
        # shifted by their least below): a quarter of the 64-bit differences' bytes, the same
        # numbers (a family's rows are as many as the distinct documents).
        small = self.rows.size and int(self.rows.min()) >= 0 and int(self.rows.max()) < 1 << 14
        delta = mine.astype(np.int16 if small else np.int64) - self.rows[:, : self.width]
        moving = np.any(delta != 0, axis=1)
        delta = delta[moving]
        # Shifted to counts from each column's least (each column's order, so the rows' order,
        # kept): a histogram of non-negative rows sorts them by packed words, where one of
        # negative rows hashes and checks them (half the time, the same rows in the same order).
        low = delta.min(axis=0) if delta.shape[0] else np.zeros(self.width, dtype=np.int64)
        delta -= low
        hist = Histogram.of(delta, tuple(map(str, range(self.width))), self.counts[moving])
        return _Swaps(hist.rows.astype(np.int64) + low, hist.counts)


class _Swaps:
    """The distinct nonzero differences between two systems' columns of a family, and how many
    documents have each: a randomisation trial swaps a binomial count of each one's documents
    (documents where the systems agree move nothing), drawn by ``_SwapCounts``."""

    def __init__(self, rows: IntArray, counts: IntArray) -> None:
        self.draws = _SwapCounts(counts)
        keep, self.expand = _distinct_columns(rows) if rows.shape[0] else ([], np.zeros(rows.shape[1], dtype=np.int64))
        # Many rows in the narrowest integers that hold them, made floats a piece at a time where
        # they are multiplied (``_held``, ``_product``: the same sums).
        self.distinct: npt.NDArray[Any] = _held(rows[:, keep])
        # The rows in the order their counts are drawn (``_SwapCounts.order``).
        self.ordered: npt.NDArray[Any] = np.ascontiguousarray(self.distinct[self.draws.order])
        self.left = _BlocksLeft()

    def drawn(self) -> None:
        """Every block of trials drawn: the draws' tables and rows are not needed any longer."""
        vars(self).pop("draws", None)
        vars(self).pop("ordered", None)

    def moved(self, swaps: FloatArray) -> FloatArray:
        if not self.distinct.shape[1]:
            return np.zeros((swaps.shape[0], self.expand.shape[0]))
        out: FloatArray = _product(swaps, self.distinct)[:, self.expand]
        return out

    def trials(self, rng: np.random.Generator, size: int) -> FloatArray:
        """What ``size`` randomisation trials move: ``moved`` of their swaps (``_SwapCounts.drawn``,
        the rows in the order their counts are drawn), without the table put back in order."""
        if not self.distinct.shape[1]:
            return np.zeros((size, self.expand.shape[0]))
        out: FloatArray = _product(self.draws.drawn(rng, size), self.ordered)[:, self.expand]
        if self.left.one_drawn():  # the last block of trials: the tables and rows let go now
            self.drawn()
        return out


class _BlocksLeft:
    """The blocks of a family (or of its trials) not drawn yet, counted down by the threads that
    draw them, so the last one lets go of what the draws hold (tables, bins, rows) as soon as it
    is drawn, not when every family of its batch is."""

    def __init__(self) -> None:
        self.left = 0
        self._lock = threading.Lock()

    def queued(self, blocks: int) -> None:
        """``blocks`` to draw: set before any of them is queued."""
        self.left = blocks

    def one_drawn(self) -> bool:
        """One block drawn; True for the last."""
        with self._lock:
            self.left -= 1
            return self.left == 0


BYTE_ROWS = 8  # documents a row may have to count its swaps in one random byte
WORD_ROWS = 64  # ... in one random 64-bit word; larger rows look their counts up in binomial tables
SWAP_TABLE_ENTRIES = 1 << 15  # counts the binomial tables of one set of differences hold, at most
TABLE_ROWS = 4096  # documents of a row whose swaps are looked up, at most (larger: numpy's binomial)


class _SwapCounts:
    """How many of each row's documents each randomisation trial swaps: a binomial count of the
    row's ``c`` documents, each swapped with probability 1/2, drawn with about as few random
    bits as the count needs. A row of at most ``BYTE_ROWS`` documents counts the set bits of one
    random byte masked to its documents, one of at most ``WORD_ROWS`` those of one random 64-bit
    word (either is exactly binomial: ``c`` fair bits); a larger row's count is looked up in a
    table of its binomial distribution (``CountTables``: its inverse distribution function on
    the grid of the 53 random bits each count is drawn from, each bound within a few tens of
    units of 2^-53 of the exact sum for the rows of up to ``TABLE_ROWS`` documents looked up),
    or drawn by numpy's binomial where a row is larger or the tables would grow past
    ``SWAP_TABLE_ENTRIES`` counts (the largest rows first). Every row of
    a block in three or four generator calls; the counts depend on the rows' documents alone,
    never on how the corpus was counted."""

    def __init__(self, counts: IntArray) -> None:
        self.counts = counts
        self.k = int(counts.shape[0])
        byte = np.flatnonzero(counts <= BYTE_ROWS)
        word = np.flatnonzero((counts > BYTE_ROWS) & (counts <= WORD_ROWS))
        large = np.flatnonzero(counts > WORD_ROWS)
        large = large[np.argsort(counts[large], kind="stable")]
        held, which = np.unique(counts[large], return_inverse=True)
        lo, hi = binomial_support(held)
        fits = min(
            int(np.searchsorted(np.cumsum(hi - lo + 1), SWAP_TABLE_ENTRIES, side="right")),
            int(np.searchsorted(held, TABLE_ROWS, side="right")),
        )
        looked_up = int(np.searchsorted(which, fits)) if fits < held.shape[0] else int(large.shape[0])
        self.order = np.concatenate((byte, word, large)).astype(np.intp)
        self.bytes, self.words, self.looked_up = int(byte.shape[0]), int(word.shape[0]), looked_up
        self.byte_masks = ((1 << counts[byte]) - 1).astype(np.uint8)
        self.word_masks = np.full(word.shape[0], np.iinfo(np.uint64).max, dtype=np.uint64)
        partial = counts[word] < 64
        self.word_masks[partial] = (np.uint64(1) << counts[word][partial].astype(np.uint64)) - np.uint64(1)
        self.generated = counts[large[looked_up:]]
        self._held, self._which = held[:fits], which[:looked_up]
        self._tables: tuple[CountTables, _TableColumns] | None = None
        self._lock = threading.Lock()

    def _binomial_tables(self) -> tuple[CountTables, _TableColumns]:
        """The looked-up rows' tables, one per distinct count, made on the first draw (not when
        queued: the batch drawn before lets its tables go first) and shared by the threads."""
        with self._lock:
            if self._tables is None:
                held = self._held
                tables = CountTables(*binomial_support(held), functools.partial(_binomial_ratio, held))
                self._tables = tables, tables.columns(self._which.reshape(-1))
            return self._tables

    def drawn(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Each row's swaps in each of ``size`` trials, the rows in ``order``."""
        out = np.empty((size, self.k))
        b, w = self.bytes, self.words
        if b:
            # Little-endian bytes of the generator's words, whatever the machine's order.
            raw = rng.bit_generator.random_raw((size, (b + 7) // 8)).astype("<u8", copy=False)
            out[:, :b] = np.bitwise_count(raw.view(np.uint8)[:, :b] & self.byte_masks)
        if w:
            out[:, b : b + w] = np.bitwise_count(rng.bit_generator.random_raw((size, w)) & self.word_masks)
        if self.looked_up:
            tables, columns = self._binomial_tables()
            out[:, b + w : b + w + self.looked_up] = tables.draw(rng, columns, size)
        if self.generated.shape[0]:
            out[:, b + w + self.looked_up :] = rng.binomial(self.generated, 0.5, size=(size, self.generated.shape[0]))
        return out


def binomial_support(counts: IntArray) -> tuple[IntArray, IntArray]:
    """The swaps a binomial table of each row of ``counts`` documents holds (probability 1/2),
    ``lo`` to ``hi``: by Hoeffding's bound the counts outside have a probability below
    ``exp(-TAIL)`` on each side (``P(X - c/2 >= t) <= exp(-2 t^2 / c)``)."""
    spread = np.sqrt(TAIL * counts / 2.0)
    lo = np.maximum(0, np.floor(counts / 2.0 - spread)).astype(np.int64)
    hi = np.minimum(counts, np.ceil(counts / 2.0 + spread)).astype(np.int64)
    return lo, hi


def _binomial_ratio(counts: IntArray, k: IntArray, table: IntArray) -> FloatArray:
    """log(P(k) / P(k - 1)) of a binomial count of ``counts[table]`` fair draws: (c - k + 1) / k
    (past ``c``, where a table's row is padded, the ratio only falls)."""
    c = counts[table]
    out: FloatArray = np.log(np.maximum(c - k + 1, 1)) - np.log(np.maximum(k, 1))
    return out


def _paired_rng(seed: int, stream: int, family: str, system: int, block: int) -> np.random.Generator:
    """Block ``block`` of a family's bootstrap (``stream`` 3) or of its randomisation trials
    against ``system`` (4) draws from its own generator: the numbers depend on the histogram
    alone, never on the other families or on how many processes draw the blocks."""
    return np.random.default_rng([seed, stream, zlib.crc32(family.encode("utf-8")), system, block])


PARALLEL_WORK = 4_000_000  # draws (over every block) worth a second thread


def compare_histograms(
    joints: Sequence[Histogram],
    names: Sequence[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling = Resampling(),
    exact: bool = False,
    beta: float = 1.0,
    consume: bool = False,
) -> list[Comparison]:
    """``compare_histogram`` of each joint histogram (the corpus's, or each group's), all at once.

    Each family of columns (``draw_families``) is resampled from its own narrowing of a joint
    histogram (``_Family``): a bootstrap resample draws a multinomial over the family's rows,
    the same for every system, so the differences are paired; a randomisation trial swaps a
    binomial count of the documents of each distinct difference between two systems' columns.
    These are the distributions of resampling and of swapping documents. The blocks of every
    histogram are drawn in one pass (on a few processes where the draws are many), and the
    resamples of every histogram are scored by one ``score_totals`` call per system.

    A histogram's draws come from generators of its own family and block, never of its place
    among ``joints``, so equal histograms (a group that holds every document with the corpus's
    rows: the only type, a bucket of every mention) have equal results: each is tested once.

    With ``consume`` (``joints`` a list), ``joints`` is emptied and each histogram is let go as
    soon as its batch's blocks are queued (its column totals and documents taken first): a caller
    that keeps no other reference holds none of them while the tests run."""
    given = joints
    joints = [j.compacted() for j in joints]
    if consume and isinstance(given, list):
        given.clear()
    del given
    for joint in joints:
        _check(joint)
    if not joints:
        return []
    first_of: list[int] = []  # each histogram's first equal one
    for j, joint in enumerate(joints):
        first_of.append(next((i for i in sorted(set(first_of)) if _equal(joints[i], joint)), j))
    del joint  # (the loops' name would hold the last histogram for the whole run)
    if len(set(first_of)) < len(joints):
        import copy  # here: the module's imports are another part's

        distinct = sorted(set(first_of))
        picked = [joints[i] for i in distinct]
        joints.clear()  # (``picked`` holds each one tested)
        tested = dict(zip(distinct, compare_histograms(
            picked, names, zero_division=zero_division, credit=credit,
            resampling=resampling, exact=exact, beta=beta, consume=True,
        ), strict=True))
        return [tested[i] if i == j else copy.deepcopy(tested[i]) for j, i in enumerate(first_of)]
    layouts = [_system_columns(j) for j in joints]
    fields = layouts[0][0]
    if any(f != fields or len(cols) != len(names) for f, cols in layouts) or not names:
        raise OptionError("give one name per system, and at least one system")
    families = draw_families(fields)
    # A few histograms at a time, as many as threads draw them: each batch's families, draws and
    # scored resamples are freed before the batch after next is narrowed, so the memory held is two
    # batches', not every group's at once. The next batch's blocks are queued before this one is
    # scored, so the helpers draw them meanwhile (``_queue_batch``). Each histogram's draws come
    # from its own generators and its rows are scored row by row, so the numbers are those of one
    # batch.
    batch = _threads()
    out: list[Comparison] = []
    # On threads, never forked processes: the generator's draws, the bincounts of large arrays
    # and the products run without the GIL, and a fork copies the page tables of a process that
    # holds both systems' state and sends every block back pickled (measured on compare of
    # 100,000 sentences: the same wall time as two processes for about 15% less CPU).
    with one_blas_thread(), _Blocks(0) as blocks:
        waiting: tuple[Any, ...] = ()
        for start in range(0, len(layouts), batch):
            # Taken out of ``joints``: once its blocks are queued, a histogram is held only where
            # the exact test reads it again (the families and totals hold what the rest reads).
            taken = joints[:batch]
            del joints[:batch]
            layout = layouts[start : start + batch]
            queued = _queue_batch(blocks, taken, layout, names, families, resampling, exact)
            documents = [int(joint.counts.sum()) for joint in taken]
            del taken
            if waiting:
                out += _compare_batch(*waiting)
            waiting = (
                documents, layout, names, families, zero_division, credit, resampling, exact, beta, blocks, queued,
            )
        out += _compare_batch(*waiting)
    return out


_Queued = tuple[
    list[list["_Family"]], list[tuple[int, int, int, "_Swaps"]], dict[tuple[str, int], list[_Block]],
    list[FloatArray], list[Histogram],
]


def _queue_batch(
    blocks: _Blocks,
    joints: Sequence[Histogram],
    layouts: Sequence[tuple[tuple[str, ...], list[list[int]]]],
    names: Sequence[str],
    families: dict[str, list[int]],
    resampling: Resampling,
    exact: bool,
) -> _Queued:
    """Each family of ``joints`` narrowed (``_Family``, its swaps against the first system) and
    its blocks queued on ``blocks`` as soon as it is made, so the helpers draw them while this
    thread makes the next families. Each block draws from its own generator, so the numbers never
    depend on which thread draws it, or when. Each histogram's column totals are taken here too,
    so the scores need no histogram (``compare_histograms`` lets them go); the histograms are
    kept only for the exact test, which reads them again."""
    seed, width = resampling.seed, len(families)
    fams: list[list[_Family]] = [[] for _ in joints]
    pairs: list[tuple[int, int, int, _Swaps]] = []
    queued: dict[tuple[str, int], list[_Block]] = {}
    for j, (joint, (_, cols)) in enumerate(zip(joints, layouts, strict=True)):
        for f, (name, mine) in enumerate(families.items()):
            fam = _Family(name, joint, cols, mine)
            fams[j].append(fam)
            sizes = fam.draws.plan(resampling.resamples)
            blocks.weigh(resampling.resamples * (fam.draws.k + int(fam.draws.rare_documents.shape[0])))
            fam.draws.prepare()  # its Poisson tables: no thread that draws its blocks waits for another to make them
            fam.left.queued(len(sizes))  # (its sampler is let go by the last block drawn)
            queued[("bootstrap", j * width + f)] = [
                blocks.add(functools.partial(fam.resampled, _paired_rng(seed, 3, name, 0, k), size))
                for k, size in enumerate(sizes)
            ]
            for s in range(1, len(names)) if not exact else ():
                swaps = fam.differences(s)
                sizes = _plan(resampling.trials, swaps.draws.k)
                blocks.weigh(resampling.trials * swaps.draws.k)
                swaps.left.queued(len(sizes))
                queued[("swaps", len(pairs))] = [
                    blocks.add(functools.partial(swaps.trials, _paired_rng(seed, 4, name, s, k), size))
                    for k, size in enumerate(sizes)
                ]
                pairs.append((j, f, s, swaps))
            fam.queued()
    totals = [column_totals(joint.counts, joint.rows) for joint in joints]
    return fams, pairs, queued, totals, list(joints) if exact else []


def _compare_batch(
    documents: Sequence[int],
    layouts: Sequence[tuple[tuple[str, ...], list[list[int]]]],
    names: Sequence[str],
    families: dict[str, list[int]],
    zero_division: float,
    credit: str,
    resampling: Resampling,
    exact: bool,
    beta: float,
    blocks: _Blocks,
    queued: _Queued,
) -> list[Comparison]:
    """``compare_histograms`` of histograms with equal fields and no two equal, their blocks
    queued (``_queue_batch``), each histogram's ``documents`` counted: this thread draws those no
    thread has taken while it waits."""
    fields = layouts[0][0]
    width = len(families)
    fams, pairs, drawn, wholes, joints = queued
    sums = {key: np.concatenate([blocks.result(block) for block in done]) for key, done in drawn.items()}
    # Every block drawn: the draws' tables are let go before the scores (the next batch's
    # families are made and drawn meanwhile).
    for row in fams:
        for fam in row:
            fam.drawn()
    for *_, swaps in pairs:
        swaps.drawn()
    pair_of = {(j, f, s): p for p, (j, f, s, _) in enumerate(pairs)}

    zd, level, mets, systems = zero_division, resampling.level, metrics_of(beta), len(names)
    totals = [
        [whole[cols] for cols in layout]
        for whole, (_, layout) in zip(wholes, layouts, strict=True)
    ]
    scored = score_totals(np.array([t for row in totals for t in row]), fields, zd, credit, beta)
    score_names = list(scored)
    points = [
        [{n: {m: float(scored[n][m][j * systems + s]) for m in mets} for n in score_names} for s in range(systems)]
        for j in range(len(layouts))
    ]
    n_boot, n_trials = resampling.resamples, resampling.trials
    # Each system's resampled totals: each family's columns the family's resampled sums.
    samples = [
        _scored_rows(
            [totals[j][s] for j in range(len(layouts))],
            [
                [(fam.mine, fam.side(sums[("bootstrap", j * width + f)], s) - totals[j][s][fam.mine])
                 for f, fam in enumerate(row)]
                for j, row in enumerate(fams)
            ],
            n_boot, fields, zd, credit, beta,
        )
        for s in range(systems)
    ]
    # Each trial's totals of the first system and of the other: what the swaps move goes from
    # one to the other.
    randomised = {}
    for s in range(1, systems if not exact else 1):
        moves = [[(fams[j][f].mine, sums[("swaps", p)]) for f in range(len(families)) for p in [pair_of[(j, f, s)]]]
                 for j in range(len(layouts))]
        randomised[s] = (
            _scored_rows([t[0] for t in totals], moves, n_trials, fields, zd, credit, beta),
            _scored_rows(
                [t[s] for t in totals], [[(cols, -v) for cols, v in row] for row in moves], n_trials, fields, zd,
                credit, beta,
            ),
        )

    out = []
    for j in range(len(layouts)):
        window = slice(j * n_boot, (j + 1) * n_boot)
        keys = [(s, n, m) for s in range(systems) for n in score_names for m in mets]
        drawn_here = {key: samples[key[0]][key[1]][key[2]][window] for key in keys}
        differences = {
            (s, n, m): drawn_here[(s, n, m)] - drawn_here[(0, n, m)] for s in range(1, systems) for n in score_names
            for m in mets
        }
        # Every interval of this histogram at once: one sort of every score's resamples.
        bounds = dict(zip([*keys, *((-1, *k) for k in differences)], _percentiles(
            [*drawn_here.values(), *differences.values()], level
        ), strict=True))
        intervals = [
            {n: {m: _bounded(bounds[(s, n, m)], points[j][s][n][m]) for m in mets} for n in score_names}
            for s in range(systems)
        ]
        comparisons = []
        for s in range(1, systems):
            if exact:
                joint = joints[j]  # (kept for the exact test)
                tables = _split_joint(joint)
                p_random = _randomization(
                    tables[0], tables[s], Draws(joint.counts), joint.counts, zd, credit, resampling, exact, beta
                )
            else:
                a, b = randomised[s]
                trial = slice(j * n_trials, (j + 1) * n_trials)
                p_random = {
                    n: {
                        m: _p_randomization(b[n][m][trial] - a[n][m][trial], points[j][s][n][m] - points[j][0][n][m])
                        for m in mets
                    }
                    for n in score_names
                }
            for n in score_names:
                for m in mets:
                    observed = points[j][s][n][m] - points[j][0][n][m]
                    diffs = differences[(s, n, m)]
                    entry = _bounded(bounds[(-1, s, n, m)], observed)
                    kept = diffs[~np.isnan(diffs)]
                    p_boot = None
                    if not math.isnan(observed) and kept.shape[0]:
                        c = int(np.count_nonzero(np.abs(kept - observed) >= abs(observed) - _TOLERANCE))
                        p_boot = (c + 1) / (kept.shape[0] + 1)
                    comparisons.append(
                        {
                            "a": names[0],
                            "b": names[s],
                            "criterion": n,
                            "metric": m,
                            "difference": entry["value"],
                            "low": entry["low"],
                            "high": entry["high"],
                            "p_bootstrap": p_boot,
                            "p_randomization": p_random[n][m],
                        }
                    )
        out.append(Comparison(list(names), intervals, comparisons, documents[j]))
    return out


def _equal(a: Histogram, b: Histogram) -> bool:
    """The same rows, documents and fields (compacted histograms: rows sorted, distinct)."""
    return (
        a.fields == b.fields and a.rows.shape == b.rows.shape and np.array_equal(a.counts, b.counts)
        and np.array_equal(a.rows, b.rows)
    )


def _percentiles(samples: list[FloatArray], level: float) -> list[tuple[float, float] | None]:
    """The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of each array's numbers (NaNs
    left out; None where none is left), as ``np.quantile`` interpolates them (linearly, its
    rounding), every array sorted in one call."""
    if not samples:
        return []
    table = np.sort(np.stack(samples), axis=1)  # NaNs last
    kept = np.count_nonzero(~np.isnan(table), axis=1)
    rows = np.arange(table.shape[0])
    ends = []
    for q in ((1 - level) / 2, (1 + level) / 2):
        at = q * (np.maximum(kept, 1) - 1)
        below = np.floor(at).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(kept, 1) - 1)
        t = at - below
        a, b = table[rows, below], table[rows, above]
        diff = b - a
        ends.append(np.where(t >= 0.5, b - diff * (1 - t), a + diff * t))
    return [None if n == 0 else (float(lo), float(hi)) for n, lo, hi in zip(kept.tolist(), *ends, strict=True)]


def _bounded(bounds: tuple[float, float] | None, value: float) -> dict[str, float | None]:
    """``_interval``'s entry from the bounds of ``_percentiles``."""
    if math.isnan(value) or bounds is None:
        return {"value": None if math.isnan(value) else value, "low": None, "high": None}
    return {"value": value, "low": bounds[0], "high": bounds[1]}


def _scored_rows(
    bases: list[FloatArray],
    moves: list[list[tuple[list[int], FloatArray]]],
    rows: int,
    fields: tuple[str, ...],
    zd: float,
    credit: str,
    beta: float,
) -> dict[str, dict[str, FloatArray]]:
    """Every score of ``rows`` rows of totals per joint histogram ``j``: ``bases[j]`` with some
    columns moved (``moves[j]``: columns and what each row adds to them); every histogram's rows
    scored by one call."""
    table = np.concatenate([np.tile(base, (rows, 1)) for base in bases])
    for j, moved in enumerate(moves):
        for cols, values in moved:
            table[j * rows : (j + 1) * rows, cols] += values
    return score_totals(table, fields, zd, credit, beta)


def _p_randomization(diffs: FloatArray, observed: float) -> float | None:
    """(c + 1) / (n + 1): c of the n trials with a difference reach the observed one in size."""
    if math.isnan(observed):
        return None
    kept = diffs[~np.isnan(diffs)]
    if not kept.shape[0]:
        return None
    hits = int(np.count_nonzero(np.abs(kept) >= abs(observed) - _TOLERANCE))
    return (hits + 1) / (int(kept.shape[0]) + 1)


def _system_columns(joint: Histogram) -> tuple[tuple[str, ...], list[list[int]]]:
    """The systems' fields (unprefixed, the first's order) and each system's columns of the
    joint histogram in that order."""
    systems: dict[int, dict[str, int]] = {}
    for i, name in enumerate(joint.fields):
        s, field_name = name.split(":", 1)
        systems.setdefault(int(s), {})[field_name] = i
    ordered = [systems[s] for s in sorted(systems)]
    fields = tuple(ordered[0]) if ordered else ()
    if any(tuple(mine) != fields for mine in ordered):
        raise OptionError("the systems' per-document statistics differ: each must be counted alike")
    return fields, [[mine[f] for f in fields] for mine in ordered]


def _randomization(
    a: _Table,
    b: _Table,
    draws: Draws,
    counts: IntArray,
    zd: float,
    credit: str,
    resampling: Resampling,
    exact: bool,
    beta: float = 1.0,
) -> dict[str, dict[str, float | None]]:
    """The p-value of B's difference from A under every score, by swapping documents: a trial
    swaps a binomial count of the documents of each distinct difference between the systems."""
    # What A gains where a document's outputs are swapped, as the distinct columns of B - A.
    # Fields reading the same pair of distinct columns have the same difference: each pair once.
    pairs, pair_of = np.unique(np.stack((a.expand, b.expand), axis=1), axis=0, return_inverse=True)
    pair_delta = b.distinct[:, pairs[:, 1]] - a.distinct[:, pairs[:, 0]]
    keep, pair_expand = _distinct_columns(pair_delta)
    delta_expand = pair_expand[pair_of.reshape(-1)]
    delta_distinct = np.ascontiguousarray(pair_delta[:, keep])
    point_a, point_b = _point(a, zd, credit, beta), _point(b, zd, credit, beta)
    mets = metrics_of(beta)
    observed = {n: {m: point_b[n][m] - point_a[n][m] for m in mets} for n in point_a}
    documents = draws.n
    if exact:
        if documents > EXACT_LIMIT:
            raise OptionError(f"an exact randomisation test enumerates 2^documents swaps: at most {EXACT_LIMIT}")
        # Every document on its own: each of its 2^documents swaps is one trial.
        delta_distinct = np.repeat(delta_distinct, counts, axis=0)
        sizes = _plan(2**documents, documents)
    else:
        # A swap moves only where the systems differ, and documents with the same difference
        # are interchangeable: the trials swap a binomial count of each distinct nonzero
        # difference's documents (fewer rows than the joint histogram has).
        moving = np.any(delta_distinct != 0, axis=1)
        differences = Histogram.of(
            delta_distinct[moving].astype(np.int64), tuple(str(c) for c in keep), counts[moving]
        )
        delta_distinct = differences.rows.astype(np.float64)
        draws = Draws(differences.counts)
        sizes = _plan(resampling.trials, draws.k)

    def work(k: int, size: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        if exact:
            first = sum(sizes[:k])
            patterns = np.arange(first, first + size)
            swaps = ((patterns[:, None] >> np.arange(documents)) & 1).astype(np.float64)
        else:
            swaps = draws.swaps(_rng(resampling.seed, 1, k), size)
        moved = (swaps @ delta_distinct)[:, delta_expand]
        sa = score_totals(a.total + moved, a.fields, zd, credit, beta)
        sb = score_totals(b.total - moved, b.fields, zd, credit, beta)
        hits = {n: {m: 0 for m in mets} for n in point_a}
        seen = {n: {m: 0 for m in mets} for n in point_a}
        for n in hits:
            for m in mets:
                obs = observed[n][m]
                if math.isnan(obs):
                    continue
                d = sb[n][m] - sa[n][m]
                d = d[~np.isnan(d)]
                hits[n][m] = int(np.count_nonzero(np.abs(d) >= abs(obs) - _TOLERANCE))
                seen[n][m] = int(d.shape[0])
        return hits, seen

    results = _map_blocks(work, sizes)
    hits = {n: {m: sum(r[0][n][m] for r in results) for m in mets} for n in point_a}
    seen = {n: {m: sum(r[1][n][m] for r in results) for m in mets} for n in point_a}
    out: dict[str, dict[str, float | None]] = {}
    for n in hits:
        out[n] = {}
        for m in mets:
            if seen[n][m] == 0:
                out[n][m] = None
            elif exact:
                out[n][m] = hits[n][m] / seen[n][m]
            else:
                out[n][m] = (hits[n][m] + 1) / (seen[n][m] + 1)
    return out


BASELINE = "strict"  # exact-match F1, against which the other criteria's rankings are read


def comparison_dict(
    comparison: Comparison,
    *,
    files: Sequence[str | None],
    signature: str,
    resampling: Resampling,
    unit: str,
    alpha: float = 0.05,
    exact: bool = False,
) -> ComparisonResult:
    """The JSON of ``spanscore compare``: a stable shape for scripts (docs/compare.md).

    ``rankings`` orders the systems by F1 under each score; ``changes`` says, for each score other
    than exact-match (strict) F1, whether it ranks the systems differently and which differences
    from the first system it finds significant (randomisation p < ``alpha``) where strict F1 does
    not, or the reverse: Kong and Sullivan's question, answered per run."""
    systems = [
        {"name": name, "file": file, "metrics": metrics}
        for name, file, metrics in zip(comparison.names, files, comparison.intervals, strict=True)
    ]
    score_names = list(comparison.intervals[0])

    def f1(k: int, n: str) -> float:
        value = comparison.intervals[k][n]["f1"]["value"]
        return -math.inf if value is None else value

    rankings = {
        n: [comparison.names[k] for k in sorted(range(len(systems)), key=lambda k: (-f1(k, n), k))]
        for n in score_names
    }
    # Systems of equal F1 are tied: listed in the order given, and no ranking "changes" among them.
    tied = {
        n: [sorted({f1(j, n) for j in range(len(systems))}, reverse=True).index(f1(k, n)) for k in range(len(systems))]
        for n in score_names
    }

    def significant(n: str) -> set[str]:
        return {
            c["b"]
            for c in comparison.comparisons
            if c["criterion"] == n and c["metric"] == "f1" and c["p_randomization"] is not None
            and c["p_randomization"] < alpha
        }

    base = significant(BASELINE) if BASELINE in score_names else set()
    changes = []
    for n in score_names:
        if n == BASELINE or BASELINE not in score_names:
            continue
        here = significant(n)
        changes.append(
            {
                "criterion": n,
                "ranking_changed": tied[n] != tied[BASELINE],
                "significant_only_here": sorted(here - base),
                "significant_only_under_strict": sorted(base - here),
            }
        )
    out = {
        "signature": f"{signature}|{resampling.signature()}|resampled:{unit}s"
        + ("|randomisation:exact" if exact else ""),
        "unit": unit,
        "documents": comparison.documents,
        "resampling": {
            "level": resampling.level,
            "resamples": resampling.resamples,
            "trials": "exact" if exact else resampling.trials,
            "seed": resampling.seed,
            "interval": "percentile bootstrap",
            "alpha": alpha,
        },
        "systems": systems,
        "comparisons": comparison.comparisons,
        "rankings": rankings,
        "changes": changes,
    }
    return cast(ComparisonResult, out)


def intervals(
    docs: DocCounts | DocState, *, zero_division: float, credit: str, resampling: Resampling, beta: float = 1.0
) -> dict[str, Any]:
    """The intervals of an evaluation (``Report.intervals``): every score, and every score of each
    type, with what was resampled and how; from the per-document rows or their additive state
    (the same numbers)."""
    options: dict[str, Any] = {"zero_division": zero_division, "credit": credit, "resampling": resampling, "beta": beta}
    if isinstance(docs, DocState):
        count = docs.documents
        _check(docs.closed)
        # Every table's resamples at once: the overall one and each type's.
        jobs = _group_jobs(docs.types or {}, count, credit, resampling)
        done = _bootstrap_tables(
            [_overall_job(docs.closed, credit, resampling), *jobs.values()],
            zd=zero_division, credit=credit, resampling=resampling, beta=beta,
        )
        scores, per_type = done[0], dict(zip(jobs, done[1:], strict=True))
    else:
        count = int(docs.stats.shape[0])
        scores = bootstrap(docs, **options)
        per_type = bootstrap_types(docs, **options)
    return {
        "unit": docs.unit,
        "count": count,
        "level": resampling.level,
        "resamples": resampling.resamples,
        "seed": resampling.seed,
        "interval": "percentile bootstrap",
        "scores": scores,
        "per_type": per_type,
    }


def interval_signature(resampling: Resampling, unit: str) -> str:
    """What an evaluation's intervals add to its signature."""
    return f"|ci:{resampling.level:g}|resamples:{resampling.resamples}|seed:{resampling.seed}|resampled:{unit}s"
