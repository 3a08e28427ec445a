"""``Evaluator.evaluate`` on arrays: nervaluate's figures and indices without a loop per entity.

nervaluate evaluates each document twice over: all entities of the tags asked for (the totals),
and each tag's entities on their own (``entities``); in each reading, each strategy walks the
predictions in list order, each taking a free reference it overlaps enough (``strategies``).

Here spanscore's ``find_pairs`` finds every overlapping (reference, prediction) pair of the corpus
at once, in both readings (a tag's reading keeps the same-type pairs). Where no entity of a
document (of a tag's reading) has two such partners, every pair is taken whatever the order, and
its category is the SemEval scheme's level for the pair's kind, read from spanscore's criteria
tables: the whole corpus but a few documents is settled on arrays. In a document where some entity
overlaps two on the other side, which pairs are taken depends on the order of the lists, and the
strategies themselves walk that document, as nervaluate does, so that the figures are nervaluate's
to the last index. Counts are then summed per tag and scheme, and the scores are nervaluate's
formula on those sums (``EvaluationResult.compute_metrics``), as its merge computes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from ...stages.criteria import SEMEVAL_EXACT, SEMEVAL_PARTIAL, SEMEVAL_STRICT, SEMEVAL_TYPE, Criterion
from ...stages.matching import FULL, NO_CREDIT, PARTIAL, SAME_TYPE, find_pairs
from ...stages.spans import IntArray, Spans
from ._columns import Columns
from .entities import EvaluationIndices, EvaluationResult
from .strategies import CATEGORY_FIELDS, CORRECT, INCORRECT, MISSED, SPURIOUS, EvaluationStrategy, _Walk
from .strategies import PARTIAL as PARTIAL_CATEGORY

# nervaluate's schemes, in its order, with spanscore's SemEval criterion for each.
SCHEMES: tuple[tuple[str, Criterion], ...] = (
    ("strict", SEMEVAL_STRICT),
    ("partial", SEMEVAL_PARTIAL),
    ("ent_type", SEMEVAL_TYPE),
    ("exact", SEMEVAL_EXACT),
)
PARTIAL_FORMULA = frozenset({"partial", "ent_type"})  # the schemes scored (COR + PAR / 2) / ...
# The category of a taken pair by its level.
_CATEGORY_OF_LEVEL = np.full(max(FULL, PARTIAL, NO_CREDIT) + 1, SPURIOUS, dtype=np.int64)
_CATEGORY_OF_LEVEL[[FULL, NO_CREDIT, PARTIAL]] = [CORRECT, INCORRECT, PARTIAL_CATEGORY]


@dataclass(frozen=True)
class _Side:
    """One side's entities of the tags asked for, in (document, list position) order."""

    row: IntArray  # the row in the side's Columns
    doc: IntArray
    start: IntArray
    end: IntArray  # inclusive
    label: IntArray  # index into the tags used
    rank: IntArray  # position among the document's entities of the tags asked for
    rank_in_tag: IntArray  # position among the document's entities of the same tag

    def __len__(self) -> int:
        return int(self.doc.shape[0])


def _side(columns: Columns, n_docs: int, remap: IntArray) -> _Side:
    doc = columns.doc()
    label = remap[columns.label] if len(columns) else columns.label
    row = np.flatnonzero((label >= 0) & (doc < n_docs))
    doc, label = doc[row], label[row]
    width = max(int(remap.max(initial=0)) + 1, 1)  # more than any label kept
    return _Side(row, doc, columns.start[row], columns.end[row], label, _rank(doc), _rank(doc * width + label))


def _rank(key: IntArray) -> IntArray:
    """Position of each item among the items with its key, in order; keys come in runs here
    (sorted by document), but need not be sorted within a document."""
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.searchsorted(sorted_key, sorted_key, side="left")
    rank = np.empty_like(key)
    rank[order] = np.arange(key.shape[0], dtype=np.int64) - first
    return rank


@dataclass(frozen=True)
class Reading:
    """One reading's outcome under each scheme: the reference each prediction took (-1: none) and
    each prediction's category."""

    partner: dict[str, IntArray]
    category: dict[str, IntArray]


@dataclass(frozen=True)
class Evaluation:
    """``Evaluator.evaluate``'s dictionary, and the pairs it was counted from."""

    results: dict[str, Any]
    true: _Side | None = None
    pred: _Side | None = None
    overall: Reading | None = None
    by_tag: Reading | None = None
    tags: tuple[Any, ...] = ()

    def pairs(self, tag: Any, scheme: str) -> list[tuple[int, int, int]]:
        """A scheme's pairs in the totals (``tag`` None) or in one tag's reading, as ``(document,
        reference, prediction)`` with entities numbered as the indices number them."""
        reading = self.overall if tag is None else self.by_tag
        if reading is None or self.true is None or self.pred is None:
            return []
        partner = reading.partner[scheme]
        p = np.flatnonzero(partner >= 0)
        if tag is not None:
            p = p[self.pred.label[p] == self.tags.index(tag)]
        t = partner[p]
        rank = "rank" if tag is None else "rank_in_tag"
        t_rank, p_rank = getattr(self.true, rank)[t], getattr(self.pred, rank)[p]
        return sorted(zip(self.pred.doc[p].tolist(), t_rank.tolist(), p_rank.tolist(), strict=True))


def evaluate(
    true: Columns,
    pred: Columns,
    n_docs: int,
    used: Sequence[Any],
    percentage: float,
    strategies: Mapping[str, EvaluationStrategy],
) -> Evaluation:
    """nervaluate's ``evaluate()`` over the first ``n_docs`` documents, for the tags ``used`` (in
    that order), with nervaluate's four strategies (all with ``percentage``)."""
    tags = tuple(used)
    index = {tag: k for k, tag in enumerate(tags)}
    t = _side(true, n_docs, np.array([index.get(x, -1) for x in true.labels] or [-1], dtype=np.int64))
    p = _side(pred, n_docs, np.array([index.get(x, -1) for x in pred.labels] or [-1], dtype=np.int64))
    t_of, p_of, kind = _pairs(t, p, n_docs, percentage)

    same_type = (kind & SAME_TYPE) > 0
    walk: dict[str, _Walk] = {name: _as_walk(strategies[name]) for name, _ in SCHEMES}
    overall = _reading(t, p, t_of, p_of, kind, t.doc, p.doc, true, pred, walk)
    width = max(len(tags), 1)
    by_tag = _reading(
        t,
        p,
        t_of[same_type],
        p_of[same_type],
        kind[same_type],
        t.doc * width + t.label,
        p.doc * width + p.label,
        true,
        pred,
        walk,
    )

    results: dict[str, EvaluationResult] = {}
    indices: dict[str, EvaluationIndices] = {}
    entities: dict[Any, dict[str, EvaluationResult]] = {tag: {} for tag in tags}
    entity_indices: dict[Any, dict[str, EvaluationIndices]] = {tag: {} for tag in tags}
    t_doc, p_doc, t_tag, p_tag = _index_tuples(
        n_docs, [(t.doc, t.rank), (p.doc, p.rank), (t.doc, t.rank_in_tag), (p.doc, p.rank_in_tag)]
    )
    in_doc, in_tag = (t_doc, p_doc), (t_tag, p_tag)
    for name, _ in SCHEMES:
        formula = name in PARTIAL_FORMULA
        found = _categories(t, p, overall, name, in_doc, None)
        results[name] = _result(found, formula)
        indices[name] = EvaluationIndices(*found)
        by_label = _categories(t, p, by_tag, name, in_tag, len(tags))
        for k, tag in enumerate(tags):
            found = [cat[k] for cat in by_label]
            entities[tag][name] = _result(found, formula)
            entity_indices[tag][name] = EvaluationIndices(*found)
    out = {"overall": results, "entities": entities, "overall_indices": indices, "entity_indices": entity_indices}
    return Evaluation(out, t, p, overall, by_tag, tags)


def _as_walk(strategy: EvaluationStrategy) -> _Walk:
    assert isinstance(strategy, _Walk)
    return strategy


def _pairs(t: _Side, p: _Side, n_docs: int, percentage: float) -> tuple[IntArray, IntArray, IntArray]:
    """Every (reference, prediction) pair of one document that nervaluate lets match: they overlap
    and ``(overlap / reference length) * 100.0 >= percentage`` in floating point, as nervaluate
    computes it; with the pair's kind (spanscore's same-type, same-start, same-end bits)."""
    if not len(t) or not len(p):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Each document gets its own stretch of positions, so that only mentions of one document meet.
    lo = np.full(n_docs, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(n_docs, np.iinfo(np.int64).min, dtype=np.int64)
    for side in (t, p):
        np.minimum.at(lo, side.doc, side.start)
        np.maximum.at(hi, side.doc, side.end + 1)
    width = np.where(hi > lo, hi - lo, 0)
    base = np.concatenate(([0], np.cumsum(width)))[:-1] - np.where(hi > lo, lo, 0)

    def spans(side: _Side) -> tuple[Spans, IntArray]:
        start = base[side.doc] + side.start
        stop = base[side.doc] + side.end + 1
        order = np.lexsort((side.label, stop, start))
        return Spans(start[order], stop[order], side.label[order], side.doc[order], ()), order

    ref, ref_order = spans(t)
    hyp, hyp_order = spans(p)
    pairs = find_pairs(ref, hyp)
    share: npt.NDArray[np.float64] = pairs.overlap / pairs.ref_len
    enough = share * 100.0 >= percentage
    return ref_order[pairs.ref[enough]], hyp_order[pairs.pred[enough]], pairs.kind[enough]


def _reading(
    t: _Side,
    p: _Side,
    t_of: IntArray,
    p_of: IntArray,
    kind: IntArray,
    t_group: IntArray,
    p_group: IntArray,
    true: Columns,
    pred: Columns,
    walk: Mapping[str, _Walk],
) -> Reading:
    """Each scheme's outcome in one reading, where ``*_group`` says which entities are evaluated
    together (a document, or a document's tag) and the pairs are those that may match."""
    crowded_t = np.bincount(t_of, minlength=len(t)) > 1
    crowded_p = np.bincount(p_of, minlength=len(p)) > 1
    walked = np.union1d(t_group[crowded_t], p_group[crowded_p])
    settled = ~np.isin(t_group[t_of], walked)
    partner: dict[str, IntArray] = {}
    category: dict[str, IntArray] = {}
    for name, criterion in SCHEMES:
        partner[name] = np.full(len(p), -1, dtype=np.int64)
        partner[name][p_of[settled]] = t_of[settled]
        category[name] = np.full(len(p), SPURIOUS, dtype=np.int64)
        category[name][p_of[settled]] = _CATEGORY_OF_LEVEL[criterion.levels(kind[settled])]
    if walked.shape[0]:
        _walk_groups(t, p, t_group, p_group, walked, true, pred, walk, partner, category)
    return Reading(partner, category)


def _walk_groups(
    t: _Side,
    p: _Side,
    t_group: IntArray,
    p_group: IntArray,
    walked: IntArray,
    true: Columns,
    pred: Columns,
    walk: Mapping[str, _Walk],
    partner: dict[str, IntArray],
    category: dict[str, IntArray],
) -> None:
    """The strategies' own walk over the groups whose outcome depends on list order."""
    t_rows = np.flatnonzero(np.isin(t_group, walked))
    p_rows = np.flatnonzero(np.isin(p_group, walked))
    t_entities = true.entities(t.row[t_rows])
    p_entities = pred.entities(p.row[p_rows])
    # Rows of one group are contiguous in the side's order within a document; a group of a tag's
    # reading may interleave with the document's other tags, so rows are gathered per group.
    t_at = _positions(t_group[t_rows])
    p_at = _positions(p_group[p_rows])
    for g in walked.tolist():
        ts, ps = t_at.get(g, []), p_at.get(g, [])
        true_list = [t_entities[k] for k in ts]
        pred_list = [p_entities[k] for k in ps]
        for name, strategy in walk.items():
            for k, (at, cat) in zip(ps, strategy._outcomes(true_list, pred_list), strict=True):
                row = p_rows[k]
                partner[name][row] = -1 if at is None else t_rows[ts[at]]
                category[name][row] = cat


def _positions(groups: IntArray) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for k, g in enumerate(groups.tolist()):
        out.setdefault(g, []).append(k)
    return out


def _index_tuples(n_docs: int, keys: Sequence[tuple[IntArray, IntArray]]) -> list[npt.NDArray[np.object_]]:
    """For each ``(document, rank)`` column pair, every entity's ``(document, rank)`` tuple, as
    an object array that every scheme's lists pick from. Each distinct tuple is made once."""
    most = np.zeros(n_docs, dtype=np.int64)
    for doc, rank in keys:
        np.maximum.at(most, doc, rank + 1)
    first = np.concatenate(([0], np.cumsum(most)))
    size = int(first[-1])
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), most)
    pool = np.empty(size, dtype=object)
    pool[:] = list(zip(docs.tolist(), (np.arange(size, dtype=np.int64) - first[docs]).tolist(), strict=True))
    return [pool[first[doc] + rank] for doc, rank in keys]


def _categories(
    t: _Side,
    p: _Side,
    reading: Reading,
    scheme: str,
    tuples: tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]],
    n_tags: int | None,
) -> list[Any]:
    """Each category's ``(document, entity)`` indices (``tuples`` of the references and of the
    predictions), in nervaluate's order (document, then list position): for the totals a list per
    category; per tag (``n_tags``) a list per category of a list per tag."""
    partner, category = reading.partner[scheme], reading.category[scheme]
    paired = np.zeros(len(t), dtype=bool)
    paired[partner[partner >= 0]] = True
    t_cat = np.where(paired, -1, MISSED)
    out: list[Any] = []
    for code in range(len(CATEGORY_FIELDS)):
        side, cat, items = (t, t_cat, tuples[0]) if code == MISSED else (p, category, tuples[1])
        at = np.flatnonzero(cat == code)
        if n_tags is None:
            out.append(items[at].tolist())
            continue
        at = at[np.argsort(side.label[at], kind="stable")]  # by tag, each tag's in order
        bounds = np.searchsorted(side.label[at], np.arange(n_tags + 1)).tolist()
        out.append([items[at[a:b]].tolist() for a, b in pairwise(bounds)])
    return out


def _result(found: Sequence[Sequence[Any]], partial_or_type: bool) -> EvaluationResult:
    result = EvaluationResult(*(len(x) for x in found))
    result.compute_metrics(partial_or_type=partial_or_type)
    return result
