"""One-to-one matching of reference and predicted mentions, shared by every criterion.

Overlapping (reference, prediction) pairs are found once and each is given a *kind*: three bits
saying whether the types agree, the starts agree and the ends agree. A criterion is then only a
table from kind to level (no match, full credit, partial credit, or matched without credit, the
SemEval INC), and one routine assigns pairs for all of them:

1. pairs with the same span and type are fixed first;
2. the remaining eligible pairs are chosen to maximise, in this order: total credit, number of
   matched pairs, total overlap, and closeness of boundaries (smallest summed start and end
   distance). Pairs in a connected group are solved exactly (Hungarian algorithm); any tie left
   goes to the earlier reference and prediction in (start, end, type) order, so the result never
   depends on the order of the input.

``matching="greedy"`` replaces step 2 by the paper's first-found rule: each reference mention, in
position order, takes the first free eligible prediction.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..runtime.records import record
from .spans import IntArray, Spans

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Method = Literal["optimal", "greedy"]

# Kind bits.
SAME_TYPE, SAME_START, SAME_END = 1, 2, 4
EXACT = SAME_TYPE | SAME_START | SAME_END
SAME_SPAN = SAME_START | SAME_END


class Level(IntEnum):
    """What a criterion makes of a pair of some kind."""

    NOT_ELIGIBLE = 0  # the pair may not be matched
    FULL = 1  # matched with full credit
    PARTIAL = 2  # matched with partial credit
    NO_CREDIT = 3  # matched without credit (SemEval's INC)


# Plain ints: numpy compares an array with an IntEnum member several times slower than with an int
# (it looks for array attributes on the member, through the enum's class).
NOT_ELIGIBLE, FULL, PARTIAL, NO_CREDIT = (int(level) for level in Level)


@record
class Pairs:
    """Every overlapping (reference, prediction) pair, sorted by (reference, prediction)."""

    ref: IntArray
    pred: IntArray
    kind: IntArray
    overlap: IntArray
    ref_len: IntArray
    pred_len: IntArray
    distance: IntArray  # |start difference| + |end difference|

    def __len__(self) -> int:
        return int(self.ref.shape[0])

    def dice(self) -> FloatArray:
        return (2.0 * self.overlap / (self.ref_len + self.pred_len)).astype(np.float64)

    def iou(self) -> FloatArray:
        return (self.overlap / (self.ref_len + self.pred_len - self.overlap)).astype(np.float64)

    def relation(self) -> IntArray:
        """0 same span, 1 prediction longer (contains the reference), 2 shorter (inside it), 3 crossing."""
        contains = self.overlap == self.ref_len
        inside = self.overlap == self.pred_len
        return np.where(contains & inside, 0, np.where(contains, 1, np.where(inside, 2, 3))).astype(np.int64)

    def select(self, keep: BoolArray) -> Pairs:
        return Pairs(
            self.ref[keep],
            self.pred[keep],
            self.kind[keep],
            self.overlap[keep],
            self.ref_len[keep],
            self.pred_len[keep],
            self.distance[keep],
        )


def _expand(lo: IntArray, hi: IntArray) -> tuple[IntArray, IntArray]:
    counts = np.maximum(hi - lo, 0)
    owner = np.repeat(np.arange(lo.shape[0], dtype=np.int64), counts)
    offset = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.repeat(lo, counts) + offset


def _bounds(rs: IntArray, re_: IntArray, ps: IntArray, pe: IntArray) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """``searchsorted(ps, rs)``, ``(ps, re_)``, ``(rs, ps, "right")`` and ``(rs, pe)``. Where the
    positions are dense (the tokens of a chunk), from running counts of the starts: two passes
    over the positions in place of four binary searches."""
    n = rs.shape[0] + ps.shape[0]
    base = min(int(rs[0]), int(ps[0])) if rs.shape[0] and ps.shape[0] else 0
    size = max(int(re_.max()), int(pe.max())) - base + 1 if rs.shape[0] and ps.shape[0] else 0
    if not 0 < size <= 16 * n:
        return (
            np.searchsorted(ps, rs, "left"),
            np.searchsorted(ps, re_, "left"),
            np.searchsorted(rs, ps, "right"),
            np.searchsorted(rs, pe, "left"),
        )
    # before_p[x]: starts of ``ps`` before position base + x; so for ``rs``.
    before_p = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(ps - base, minlength=size), out=before_p[1:])
    before_r = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rs - base, minlength=size), out=before_r[1:])
    return before_p[rs - base], before_p[re_ - base], before_r[ps - base + 1], before_r[pe - base]


def find_pairs(reference: Spans, predicted: Spans) -> Pairs:
    """All overlapping pairs. Both span sets must share one type vocabulary and be sorted."""
    rs, re_, rt = reference.start, reference.end, reference.type
    ps, pe, pt = predicted.start, predicted.end, predicted.type
    # Of two overlapping spans, the one that starts later starts inside the other.
    lo1, hi1, lo2, hi2 = _bounds(rs, re_, ps, pe)
    r1, p1 = _expand(lo1, hi1)
    p2, r2 = _expand(lo2, hi2)
    ref = np.concatenate((r1, r2))
    pred = np.concatenate((p1, p2))
    if ref.shape[0]:
        order = np.lexsort((pred, ref))
        ref, pred = ref[order], pred[order]
    a_s, a_e, b_s, b_e = rs[ref], re_[ref], ps[pred], pe[pred]
    kind = ((rt[ref] == pt[pred]) * SAME_TYPE + (a_s == b_s) * SAME_START + (a_e == b_e) * SAME_END).astype(np.int64)
    overlap = np.minimum(a_e, b_e) - np.maximum(a_s, b_s)
    pairs = Pairs(
        ref=ref,
        pred=pred,
        kind=kind,
        overlap=overlap.astype(np.int64),
        ref_len=(a_e - a_s).astype(np.int64),
        pred_len=(b_e - b_s).astype(np.int64),
        distance=(np.abs(a_s - b_s) + np.abs(a_e - b_e)).astype(np.int64),
    )
    if reference.pieces is None and predicted.pieces is None:
        return pairs
    return _by_fragments(pairs, reference, predicted)


def _by_fragments(pairs: Pairs, reference: Spans, predicted: Spans) -> Pairs:
    """The pairs of overlapping extents read by their fragments, where a side is discontinuous.

    Two mentions overlap where their fragments share a unit (a pair whose extents overlap only in
    a gap is dropped); ``overlap`` and the lengths count the units the fragments cover; the start
    bit says that every fragment starts where its counterpart does, the end bit that every one
    ends so (the same number of fragments, each with the same start, or end). Both bits: the same
    fragments. A pair of continuous mentions keeps what ``find_pairs`` gave it.
    """
    r_ptr, r_start, r_end = reference.fragment_table()
    p_ptr, p_start, p_end = predicted.fragment_table()
    nr = np.diff(r_ptr)[pairs.ref]
    np_ = np.diff(p_ptr)[pairs.pred]
    at = np.flatnonzero((nr > 1) | (np_ > 1))
    if at.shape[0] == 0:
        return pairs
    a_n, b_n = nr[at], np_[at]
    a0, b0 = r_ptr[pairs.ref[at]], p_ptr[pairs.pred[at]]
    # Every fragment of one side against every fragment of the other: the units they share.
    cross = a_n * b_n
    owner = np.repeat(np.arange(at.shape[0], dtype=np.int64), cross)
    local = np.arange(int(cross.sum()), dtype=np.int64) - np.repeat(np.cumsum(cross) - cross, cross)
    i = a0[owner] + local // b_n[owner]
    j = b0[owner] + local % b_n[owner]
    shared = np.maximum(np.minimum(r_end[i], p_end[j]) - np.maximum(r_start[i], p_start[j]), 0)
    overlap = np.bincount(owner, weights=shared, minlength=at.shape[0]).astype(np.int64)
    # The k-th fragment against the k-th, where both have as many.
    alike = a_n == b_n
    n_alike = np.where(alike, a_n, 0)
    owner2 = np.repeat(np.arange(at.shape[0], dtype=np.int64), n_alike)
    local2 = np.arange(int(n_alike.sum()), dtype=np.int64) - np.repeat(np.cumsum(n_alike) - n_alike, n_alike)
    i2, j2 = a0[owner2] + local2, b0[owner2] + local2
    start_differs = np.bincount(owner2, weights=r_start[i2] != p_start[j2], minlength=at.shape[0]) > 0
    end_differs = np.bincount(owner2, weights=r_end[i2] != p_end[j2], minlength=at.shape[0]) > 0
    bits = (alike & ~start_differs) * SAME_START + (alike & ~end_differs) * SAME_END
    kind = pairs.kind.copy()
    kind[at] = (kind[at] & SAME_TYPE) | bits
    full_overlap = pairs.overlap.copy()
    full_overlap[at] = overlap
    keep = full_overlap > 0
    refined = Pairs(
        ref=pairs.ref,
        pred=pairs.pred,
        kind=kind.astype(np.int64),
        overlap=full_overlap,
        ref_len=reference.covered()[pairs.ref],
        pred_len=predicted.covered()[pairs.pred],
        distance=pairs.distance,
    )
    return refined if bool(keep.all()) else refined.select(keep)


@record
class Matching:
    """Matched pairs (indices into ``Pairs``) with each pair's level and credit."""

    pair: IntArray
    level: IntArray
    credit: FloatArray


def fixed_exact(pairs: Pairs) -> IntArray:
    """Same-span same-type pairs kept one to one (in position order); every criterion fixes them first."""
    return _greedy_unique(np.flatnonzero(pairs.kind == EXACT), pairs)


def free_pairs(pairs: Pairs, fixed: IntArray) -> IntArray:
    """Pairs whose reference and prediction both lie outside the ``fixed`` pairs: the only ones
    left to choose from once same-span same-type pairs are matched."""
    ref_used = np.zeros(int(pairs.ref.max()) + 1 if len(pairs) else 0, dtype=bool)
    pred_used = np.zeros(int(pairs.pred.max()) + 1 if len(pairs) else 0, dtype=bool)
    ref_used[pairs.ref[fixed]] = True
    pred_used[pairs.pred[fixed]] = True
    return np.flatnonzero(~ref_used[pairs.ref] & ~pred_used[pairs.pred])


def pair_credit(level: IntArray, partial_credit: FloatArray) -> FloatArray:
    """Credit of each pair at its level: 1 when full, the partial credit when partial, else 0."""
    credit: FloatArray = np.where(level == FULL, 1.0, np.where(level == PARTIAL, partial_credit, 0.0))
    return credit


class _Groups:
    """How the candidate pairs of one matching fall into groups: those alone, the groups of two
    (their earlier and later pair) and the pairs of larger groups, as positions among the
    candidates."""

    __slots__ = ("alone", "at", "cand", "free", "pairs", "rest", "x", "y")

    def __init__(self, pairs: Pairs, free: IntArray, cand: IntArray) -> None:
        self.pairs, self.free, self.cand = pairs, free, cand
        at = self.at = free[cand]
        r, p = pairs.ref[at], pairs.pred[at]
        deg_r, deg_p = np.bincount(r)[r], np.bincount(p)[p]
        alone = self.alone = (deg_r == 1) & (deg_p == 1)
        if alone.all():
            return
        grouped = np.flatnonzero(~alone)
        x, y, in_larger = _groups_of_two(r[grouped], p[grouped], deg_r[grouped], deg_p[grouped])
        self.x, self.y, self.rest = grouped[x], grouped[y], grouped[in_larger]

    def same(self, pairs: Pairs, free: IntArray, cand: IntArray) -> bool:
        return self.pairs is pairs and self.free is free and np.array_equal(self.cand, cand)


# The groups of the last matching: the criteria that make every overlapping pair a candidate (the
# SemEval schemes) find the same groups among the same pairs, and only their credits differ.
# One entry, replaced whole (threads that count at once each see a whole entry, and use it only
# for the very pairs it holds).
_last_groups: list[_Groups] = []


def _groups(pairs: Pairs, free: IntArray, cand: IntArray) -> _Groups:
    last = _last_groups[0] if _last_groups else None
    if last is not None and last.same(pairs, free, cand):
        return last
    found = _Groups(pairs, free, cand)
    _last_groups[:] = [found]
    return found


def choose(pairs: Pairs, free: IntArray, level: IntArray, credit: FloatArray, method: Method = "optimal") -> IntArray:
    """Step 2 of the matching: which of the ``free`` pairs (with their ``level`` and ``credit``) are
    matched. Returns positions in ``free``, ascending."""
    eligible = (level == FULL) | (level == NO_CREDIT) | ((level == PARTIAL) & (credit > 0))
    cand = np.flatnonzero(eligible)
    if cand.shape[0] == 0:
        return cand
    g = _groups(pairs, free, cand)
    alone, at = g.alone, g.at
    if alone.all():
        return cand
    x, y, rest = g.x, g.y, g.rest
    if method == "greedy":
        winners = x  # the first found in position order
    else:
        # The better pair by credit, then overlap, then closeness; a tie goes to the earlier one
        # (what the exact solver does on a group of two).
        q = np.rint(credit[cand] * CREDIT_STEPS)
        ov, d = pairs.overlap[at], pairs.distance[at]
        better = (q[y] > q[x]) | (
            (q[y] == q[x]) & ((ov[y] > ov[x]) | ((ov[y] == ov[x]) & (d[y] < d[x])))
        )
        winners = np.where(better, y, x)
    chosen = [cand[alone], cand[winners]]
    if rest.shape[0]:
        by_pair = np.zeros(len(pairs))
        by_pair[at[rest]] = credit[cand[rest]]
        solve = _solve_greedy if method == "greedy" else _solve_optimal
        picked = np.array(_by_group(at[rest], pairs, by_pair, solve), dtype=np.int64)
        chosen.append(np.searchsorted(free, picked))  # back from pair indices to positions in free
    return np.sort(np.concatenate(chosen))


def _groups_of_two(
    r: IntArray, p: IntArray, deg_r: IntArray, deg_p: IntArray
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
    """Groups of exactly two candidate pairs: a reference whose two predictions overlap nothing
    else, or a prediction whose two references overlap nothing else. Candidates are in pair order.

    Returns the positions of each group's earlier and later pair, and which positions are left
    (in larger groups)."""
    by_ref = (deg_r == 2) & (deg_p == 1)
    x_ref = np.flatnonzero(by_ref[:-1] & by_ref[1:] & (r[:-1] == r[1:]))
    by_pred = np.flatnonzero((deg_p == 2) & (deg_r == 1))
    order = by_pred[np.argsort(p[by_pred], kind="stable")]
    same = p[order[:-1]] == p[order[1:]]
    x = np.concatenate((x_ref, order[:-1][same]))
    y = np.concatenate((x_ref + 1, order[1:][same]))
    rest = np.ones(r.shape[0], dtype=bool)
    rest[x] = False
    rest[y] = False
    return x, y, rest


def assign(
    pairs: Pairs,
    levels: IntArray,
    partial_credit: FloatArray,
    method: Method = "optimal",
    *,
    fixed: IntArray | None = None,
) -> Matching:
    """Match pairs one to one under a criterion.

    ``levels[pair]`` is the criterion's level for each pair (NOT_ELIGIBLE excludes it) and
    ``partial_credit[pair]`` the credit of a PARTIAL pair; a PARTIAL pair with no credit is excluded.
    """
    level = levels
    credit = pair_credit(level, partial_credit)
    # 1. Same span and type first.
    exact = fixed_exact(pairs) if fixed is None else fixed
    exact = exact[level[exact] != NOT_ELIGIBLE]
    # 2. The rest: isolated pairs directly, connected groups exactly (or greedily).
    free = free_pairs(pairs, exact)
    chosen = free[choose(pairs, free, level[free], credit[free], method)]
    picked = np.sort(np.concatenate((exact, chosen)))
    return Matching(pair=picked, level=level[picked], credit=credit[picked].astype(np.float64))


def _greedy_unique(cand: IntArray, pairs: Pairs) -> IntArray:
    """Keep pairs (already in position order) whose reference and prediction are both unused."""
    if cand.shape[0] == 0:
        return cand
    r, p = pairs.ref[cand], pairs.pred[cand]
    if np.bincount(r).max() <= 1 and np.bincount(p).max() <= 1:
        return cand
    used_r: set[int] = set()
    used_p: set[int] = set()
    keep = []
    for k, a, b in zip(cand.tolist(), r.tolist(), p.tolist(), strict=True):
        if a not in used_r and b not in used_p:
            used_r.add(a)
            used_p.add(b)
            keep.append(k)
    return np.array(keep, dtype=np.int64)


Solver = Callable[[list[int], Pairs, FloatArray], list[int]]


def _by_group(cand: IntArray, pairs: Pairs, credit: FloatArray, solve: Solver) -> list[int]:
    """Split candidate pairs into connected groups and solve each one."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    for k in cand.tolist():
        a, b = find(("r", int(pairs.ref[k]))), find(("p", int(pairs.pred[k])))
        if a != b:
            parent[a] = b
    groups: dict[tuple[str, int], list[int]] = {}
    for k in cand.tolist():
        groups.setdefault(find(("r", int(pairs.ref[k]))), []).append(k)
    out: list[int] = []
    for members in groups.values():
        out.extend(solve(sorted(members), pairs, credit))
    return out


def _solve_greedy(members: list[int], pairs: Pairs, credit: FloatArray) -> list[int]:
    used_r: set[int] = set()
    used_p: set[int] = set()
    keep = []
    for k in members:  # sorted by (reference, prediction): the first found wins
        a, b = int(pairs.ref[k]), int(pairs.pred[k])
        if a not in used_r and b not in used_p:
            used_r.add(a)
            used_p.add(b)
            keep.append(k)
    return keep


CREDIT_STEPS = 1 << 24


def _solve_optimal(members: list[int], pairs: Pairs, credit: FloatArray) -> list[int]:
    refs = sorted({int(pairs.ref[k]) for k in members})
    preds = sorted({int(pairs.pred[k]) for k in members})
    ri = {r: i for i, r in enumerate(refs)}
    pi = {p: i for i, p in enumerate(preds)}
    m = min(len(refs), len(preds))
    dmax = max(int(pairs.distance[k]) for k in members)
    omax = max(int(pairs.overlap[k]) for k in members)
    # Integer weights make the lexicographic order exact: credit, count, overlap, closeness.
    m1 = m * dmax + 1
    m2 = m1 * (m * omax + 1)
    m3 = m2 * (m + 1)
    n = max(len(refs), len(preds))
    weight = [[0] * n for _ in range(n)]
    pair_at: dict[tuple[int, int], int] = {}
    for k in members:
        i, j = ri[int(pairs.ref[k])], pi[int(pairs.pred[k])]
        c = round(float(credit[k]) * CREDIT_STEPS)
        weight[i][j] = c * m3 + m2 + int(pairs.overlap[k]) * m1 + (dmax - int(pairs.distance[k]))
        pair_at[(i, j)] = k
    assignment = _hungarian_max(weight)
    return sorted(pair_at[(i, j)] for i, j in enumerate(assignment) if (i, j) in pair_at and weight[i][j] > 0)


def _hungarian_max(weight: list[list[int]]) -> list[int]:
    """Column assigned to each row in a maximum-weight perfect matching of a square matrix."""
    n = len(weight)
    top = max((max(row) for row in weight), default=0)
    cost = [[top - w for w in row] for row in weight]
    inf = float("inf")
    u = [0] * (n + 1)
    v = [0] * (n + 1)
    p = [0] * (n + 1)
    way = [0] * (n + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv: list[float] = [inf] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta: float = inf
            j1 = 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += int(delta)
                    v[j] -= int(delta)
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    row_to_col = [0] * n
    for j in range(1, n + 1):
        if p[j]:
            row_to_col[p[j] - 1] = j - 1
    return row_to_col
