"""Drop-in replacement for nervaluate 1.2.1's Python API, computed by spanscore's engine.

Change the import and nothing else::

    from spanscore.compat.nervaluate import Evaluator  # was: from nervaluate import Evaluator

    evaluator = Evaluator(true, pred, tags=["PER", "LOC", "ORG"], loader="list")
    results = evaluator.evaluate()
    results["overall"]["strict"].f1, results["entities"]["PER"]["partial"].missed
    print(evaluator.summary_report())

Everything 1.2.1 exports is here with its signature and its return values: ``Evaluator``
(``loader`` ``"default"``, ``"conll"``, ``"list"`` or ``"dict"``, ``min_overlap_percentage``;
``evaluate()`` returns ``overall``, ``entities``, ``overall_indices`` and ``entity_indices`` with
every scheme, ``strict``, ``partial``, ``ent_type`` and ``exact``), ``results_to_csv``,
``summary_report``, ``summary_report_indices``; the classes ``Entity``, ``EvaluationResult``,
``EvaluationIndices``; the loaders ``ConllLoader``, ``ListLoader``, ``DictLoader``; and the helpers
``collect_named_entities``, ``list_to_spans``, ``conll_to_spans``, ``split_list``. Labels are decoded
by spanscore's decoder (conlleval's chunk rules, which is what nervaluate's loaders do with ``B-``,
``I-`` and ``O``); the four schemes are spanscore's SemEval schemes, counted by ``spanscore.count``
(``ent_type`` is spanscore's ``type``). Per-tag results are what nervaluate defines: both sides
filtered to the tag, then evaluated, so they need not add up to the totals. Entity ends are
inclusive, as in nervaluate; indices count entities in each document's list after filtering by
``tags`` (by the one tag, in ``entity_indices``).

Bad input raises the ``ValueError`` that nervaluate raises, with its message; the exception is
also a spanscore ``InputError`` (an ``OptionError`` for an unknown loader or percentage).

Deliberate differences. Each is pinned by a test in ``tests/test_compat_nervaluate.py`` that shows
nervaluate's answer and ours, and the differential tests there (``compare``: BTC and random input
with each loader) check that no other difference exists.

1. **Matching does not depend on list order.** nervaluate walks each document's predictions in
   list order and lets each take a free reference it overlaps: one with the same span (and type,
   for strict) wherever it is in the list, otherwise the first one; for ``ent_type``, the
   same-type one with the closest boundaries, otherwise the first of another type. A prediction
   read early can so take the reference that a later one matches exactly, or the only one a later
   one overlaps, and the figures change when the lists are reordered. Here every scheme pairs
   mentions one to one as spanscore does (docs/criteria.md): same-span same-type pairs first, then
   the pairing that maximises COR + PAR/2, then the number of pairs (an INC or PAR rather than a
   MIS and a SPU), then total overlap, then closeness; a tie left goes to the earlier mention in
   (start, end, type) order. Figures can differ only in a document where some mention overlaps
   (by ``min_overlap_percentage`` at least) two on the other side, and there nervaluate's own
   strategies give exactly our figures and indices when handed the lists in the order our
   pairing takes them (with difference 2's ranking for ``ent_type``). Examples:

   - reference X 0-2, predictions X 0-0 then X 0-2: nervaluate strict INC 1 SPU 1, ours COR 1
     SPU 1, its own answer with the predictions reversed. An exact prediction is never spurious
     here (``test_difference_1_an_exact_match_is_not_taken_by_an_earlier_prediction``).
   - references X 0-1 and X 3-4, predictions X 1-3 then X 0-0: nervaluate partial PAR 1 MIS 1
     SPU 1, ours PAR 2: every mention has a partner it overlaps, and the counts say so
     (``test_difference_1_no_prediction_is_left_unpaired_by_the_order``).
   - ``ent_type``, references PER 0-1 and PER 1-2, predictions PER 0-0 then PER 0-1: nervaluate
     COR 2, ours COR 1 MIS 1 SPU 1, its own answer with the predictions reversed. The prediction
     identical to the first reference is paired with it in every scheme, so the four schemes
     agree on which reference each prediction found; nervaluate's COR 2 exists in one order only
     (``test_difference_1_an_exact_pair_is_kept_in_ent_type``).

2. **``ent_type`` prefers the larger overlap.** Of the same-type references a prediction
   overlaps, nervaluate's ``ent_type`` takes the one with the closest boundaries; spanscore, in
   every scheme, the one it overlaps most, then the closest. References PER 0-9 and PER 0-2,
   prediction PER 0-3: nervaluate's ``ent_type`` misses 0-9 while its ``partial`` misses 0-2;
   ours misses 0-2 in every scheme. Counts agree; ``missed_indices`` differ. One rule keeps the
   schemes agreeing on which reference a prediction found, and ``ent_type``'s pairs those of
   spanscore's error taxonomy and type confusion
   (``test_difference_2_ent_type_prefers_the_larger_overlap``).

3. **Tags other than O, B-X and I-X raise.** nervaluate raises ``ValueError("Invalid tag format:
   ...")`` only where such a tag would start an entity; elsewhere it reads it as going on
   (``["B-PER", "E-PER", "S-PER"]`` is one PER entity), and ``B-`` alone is an entity of type
   ``""``. Here each such tag raises that error wherever it stands, in the loaders and in
   ``collect_named_entities``, ``list_to_spans`` and ``conll_to_spans`` (which in nervaluate never
   raise): the input is in another encoding, and reading it as BIO scores entities nobody
   annotated (``test_difference_3_tags_outside_bio_raise``).

4. **An entity that ends before it starts raises** ``ValueError`` (dict loader). nervaluate
   divides by zero or scores a negative overlap
   (``test_difference_4_an_entity_ending_before_its_start_raises``).

5. **``loader="default"`` with an empty first document** infers the loader from the first
   non-empty document; nervaluate raises ``IndexError`` (it reads ``true[0][0]``), for instance
   when the first document of dict input has no entity
   (``test_difference_5_default_loader_with_an_empty_first_document``).

6. **``summary_report_indices`` names the entity each index refers to**: the reference entity for
   a missed one, and the entity of the filtered list the index counts in. nervaluate looks every
   index up in the unfiltered predictions, so it names the wrong entity (or raises
   ``IndexError``) for missed entities and wherever ``tags`` filtered something out
   (``test_difference_6_summary_report_indices_names_the_right_entity``).

7. **Tags in ``entities`` are sorted**; nervaluate's order is a set's, which changes with the hash
   seed, and so do the entity listings of ``results_to_csv`` and ``summary_report_indices``
   (``test_difference_7_tags_are_sorted``).

nervaluate's matching strategies (``nervaluate.strategies``) are not provided: they are the
order-dependent matching that difference 1 replaces. ``Evaluator.loaders`` exists, so a subclass
can add a loader in ``_setup_loaders`` as nervaluate's README describes.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..api import load
from ..errors import InputError, OptionError
from ..results import SemEvalScores
from ..stages.counts import Counts, Options, count
from ..stages.matching import FULL, NO_CREDIT, PARTIAL
from ..stages.scores import semeval_block
from ..stages.spans import IntArray, Spans

__all__ = [
    "ConllLoader",
    "DataLoader",
    "DictLoader",
    "Entity",
    "EvaluationIndices",
    "EvaluationResult",
    "Evaluator",
    "ListLoader",
    "collect_named_entities",
    "conll_to_spans",
    "list_to_spans",
    "split_list",
]

# nervaluate's scheme names, in its order, with spanscore's names for them.
SCHEMES = (("strict", "strict"), ("partial", "partial"), ("ent_type", "type"), ("exact", "exact"))
_VALID_SCENARIOS = {"strict", "ent_type", "partial", "exact"}
_VALID_MODES = {"overall", "entities"}


class _InputValueError(InputError, ValueError):
    """Bad input: a ``ValueError`` as nervaluate raises, and a spanscore ``InputError``."""


class _OptionValueError(OptionError, ValueError):
    """A bad option: a ``ValueError`` as nervaluate raises, and a spanscore ``OptionError``."""


@dataclass
class Entity:
    """A named entity: its label and its first and last token (both inclusive)."""

    label: str
    start: int
    end: int

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entity):
            return NotImplemented
        return self.label == other.label and self.start == other.start and self.end == other.end

    def __hash__(self) -> int:
        return hash((self.label, self.start, self.end))


@dataclass
class EvaluationResult:
    """The MUC categories and scores of one scheme, overall or for one tag."""

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
        """Recompute actual, possible and the scores from the five counts (nervaluate's method,
        for callers that add results up themselves; ``evaluate`` takes its scores from spanscore)."""
        self.actual = self.correct + self.incorrect + self.partial + self.spurious
        self.possible = self.correct + self.incorrect + self.partial + self.missed
        earned = self.correct + 0.5 * self.partial if partial_or_type else self.correct
        precision: float = earned / self.actual if self.actual > 0 else 0
        recall: float = earned / self.possible if self.possible > 0 else 0
        self.precision = precision
        self.recall = recall
        self.f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0


@dataclass
class EvaluationIndices:
    """``(document, entity)`` of each prediction by category, and of each missed reference entity."""

    correct_indices: list[tuple[int, int]] = field(default_factory=list)
    incorrect_indices: list[tuple[int, int]] = field(default_factory=list)
    partial_indices: list[tuple[int, int]] = field(default_factory=list)
    missed_indices: list[tuple[int, int]] = field(default_factory=list)
    spurious_indices: list[tuple[int, int]] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Loaders.


def _valid_tag(tag: str) -> bool:
    # What spanscore's BIO decoder reads: O, or B-/I- and a non-empty type.
    return tag == "O" or (len(tag) > 2 and tag[1] == "-" and tag[0] in "BI")


def _decode(sequences: Sequence[Sequence[str]]) -> list[list[Entity]]:
    """Entities of label sequences already checked by ``_valid_tag``, by spanscore's decoder."""
    if not sequences:
        return []
    spans = load(reference=sequences, predicted=sequences, format="labels", labels="BIO", repair="conlleval").reference
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    base = bounds[spans.unit]
    starts = (spans.start - base).tolist()
    ends = (spans.end - 1 - base).tolist()
    names = [spans.types[t] for t in spans.type.tolist()]
    flat = iter([Entity(label, s, e) for label, s, e in zip(names, starts, ends, strict=True)])
    per_doc = np.bincount(spans.unit, minlength=len(sequences)).tolist()
    return [list(islice(flat, n)) for n in per_doc]


def _check_tag_lists(data: Sequence[Any]) -> None:
    """nervaluate's ListLoader checks, but any tag that is not O, B-X or I-X raises wherever it is
    (difference 3). The common case, every tag valid, is decided on the distinct tags."""
    if all(isinstance(doc, list) for doc in data):
        try:
            distinct = set(chain.from_iterable(data))
        except TypeError:  # an unhashable tag: found below
            distinct = {None}
        if all(isinstance(t, str) and _valid_tag(t) for t in distinct):
            return
    for doc in data:  # the first error in nervaluate's reading order
        if not isinstance(doc, list):
            raise _InputValueError("Each document must be a list of tags")
        for tag in doc:
            if not isinstance(tag, str):
                raise _InputValueError(f"Invalid tag type: {type(tag)}")
            if not _valid_tag(tag):
                raise _InputValueError(f"Invalid tag format: {tag}")


def _conll_labels(data: str) -> list[list[str]]:
    """The tag column of each document of nervaluate's CoNLL string (token TAB tag lines,
    documents split at blank lines)."""
    out: list[list[str]] = []
    for doc in data.rstrip().split("\n\n"):
        if not doc.strip():
            out.append([])
            continue
        lines = doc.split("\n")
        blank = [not line.strip() for line in lines]
        tags: list[str | None] = []
        for line, is_blank in zip(lines, blank, strict=True):
            if is_blank:
                tags.append(None)
                continue
            parts = line.split("\t", 2)
            if len(parts) < 2:
                raise _InputValueError(f"Invalid CoNLL format: line '{line}' does not contain a tab separator")
            if not _valid_tag(parts[1]):
                raise _InputValueError(f"Invalid tag format: {parts[1]}")
            tags.append(parts[1])
        out.append(_fill_blank_lines(tags) if any(blank) else cast(list[str], tags))
    return out


def _fill_blank_lines(tags: list[str | None]) -> list[str]:
    """nervaluate skips a whitespace-only line but counts it as a token: it continues the entity
    open before it (and lengthens one that runs to the end of the document)."""
    filled: list[str] = []
    for tag in tags:
        if tag is None:
            prev = filled[-1] if filled else "O"
            tag = "O" if prev == "O" else "I-" + prev[2:]
        filled.append(tag)
    return filled


class DataLoader(ABC):
    """Reads one side of the input into a list of entity lists, one per document."""

    @abstractmethod
    def load(self, data: Any) -> list[list[Entity]]:
        """The entities of each document."""


class ConllLoader(DataLoader):
    """A string of ``token TAB tag`` lines, documents separated by a blank line."""

    def load(self, data: Any) -> list[list[Entity]]:
        if not isinstance(data, str):
            raise _InputValueError("ConllLoader expects string input")
        if not data:
            return []
        return _decode(_conll_labels(data))


class ListLoader(DataLoader):
    """A list of documents, each a list of BIO tags."""

    def load(self, data: Any) -> list[list[Entity]]:
        if not isinstance(data, list):
            raise _InputValueError("ListLoader expects list input")
        if not data:
            return []
        _check_tag_lists(data)
        return _decode(data)


class DictLoader(DataLoader):
    """A list of documents, each a list of ``{"label", "start", "end"}`` dicts (ends inclusive)."""

    def load(self, data: Any) -> list[list[Entity]]:
        if not isinstance(data, list):
            raise _InputValueError("DictLoader expects list input")
        if not data:
            return []
        required_keys = {"label", "start", "end"}
        result = []
        for doc in data:
            if not isinstance(doc, list):
                raise _InputValueError("Each document must be a list of entity dictionaries")
            entities = []
            for entity in doc:
                if not isinstance(entity, dict):
                    raise _InputValueError(f"Invalid entity type: {type(entity)}")
                if not all(key in entity for key in required_keys):
                    raise _InputValueError(f"Entity missing required keys: {required_keys}")
                label, start, end = entity["label"], entity["start"], entity["end"]
                if not isinstance(label, str):
                    raise _InputValueError("Entity label must be a string")
                if not isinstance(start, int) or not isinstance(end, int):
                    raise _InputValueError("Entity start and end must be integers")
                if end < start:  # difference 4
                    raise _InputValueError(f"Entity ends before it starts: {entity!r}")
                entities.append(Entity(label=label, start=start, end=end))
            result.append(entities)
        return result


# --------------------------------------------------------------------------------------------
# Matching and counting.


@dataclass(frozen=True)
class _Side:
    """The entities of one side kept by ``tags``, in list order, as columns."""

    doc: IntArray
    start: IntArray
    end: IntArray  # inclusive
    label: IntArray  # index into the shared vocabulary
    rank: IntArray  # position in the document's filtered list: what nervaluate's indices count
    rank_in_tag: IntArray  # position in the document's list filtered to the entity's own tag

    def __len__(self) -> int:
        return int(self.doc.shape[0])


def _side(docs: Sequence[Sequence[Any]], kept: dict[str, int]) -> _Side:
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    flat = [e for doc in docs for e in doc]
    doc = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    label = np.fromiter((kept.get(e.label, -1) for e in flat), dtype=np.int64, count=len(flat))
    start = np.fromiter((e.start for e in flat), dtype=np.int64, count=len(flat))
    end = np.fromiter((e.end for e in flat), dtype=np.int64, count=len(flat))
    keep = label >= 0
    doc, label, start, end = doc[keep], label[keep], start[keep], end[keep]
    bad = np.flatnonzero(end < start)
    if bad.shape[0]:
        k = int(bad[0])
        raise _InputValueError(
            f"document {int(doc[k])}: an entity ends ({int(end[k])}) before it starts ({int(start[k])})"
        )
    return _Side(doc, start, end, label, _rank(doc), _rank(doc * max(len(kept), 1) + label))


def _rank(key: IntArray) -> IntArray:
    """Position of each item among the items with its key, in list order."""
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.searchsorted(sorted_key, sorted_key, side="left")
    rank = np.empty_like(key)
    rank[order] = np.arange(key.shape[0], dtype=np.int64) - first
    return rank


@dataclass(frozen=True)
class _Counted:
    """Both readings nervaluate makes of the input, counted by one ``spanscore.count``: the totals
    (documents as they are) and the per-tag one (each document split by tag, so that a pair never
    joins two tags). Entity ``i`` of a side is entity ``i`` of the totals and ``n + i`` of the
    per-tag reading (``n`` entities on that side); type ``k`` is ``k`` and ``n_types + k``.
    ``pairs`` gives each scheme's pairs as entity numbers with their levels (``FULL`` COR,
    ``PARTIAL`` PAR, ``NO_CREDIT`` INC)."""

    counts: Counts
    n_types: int
    pairs: dict[str, tuple[IntArray, IntArray, IntArray]]

    def semeval(self, scheme: str, tag: int | None = None) -> SemEvalScores:
        """The scheme's SemEval block: the totals, or one tag's."""
        c, n = self.counts, self.n_types
        if tag is None:
            return semeval_block(
                c.schemes[scheme][:, :n], int(c.predicted[:n].sum()), int(c.reference[:n].sum()), 0.0, None
            )
        return semeval_block(c.schemes[scheme], int(c.predicted[n + tag]), int(c.reference[n + tag]), 0.0, n + tag)


def _count(true: _Side, pred: _Side, vocab: tuple[str, ...], n_docs: int, threshold: float) -> _Counted:
    n_types = len(vocab)
    width = max(n_types, 1)

    def both_readings(side: _Side) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        key = np.concatenate((side.doc, n_docs + side.doc * width + side.label))
        label = np.concatenate((side.label, n_types + side.label))
        start, stop = np.tile(side.start, 2), np.tile(side.end + 1, 2)
        return key, label, start, stop

    t_key, t_label, t_start, t_stop = both_readings(true)
    p_key, p_label, p_start, p_stop = both_readings(pred)
    keys, inverse = np.unique(np.concatenate((t_key, p_key)), return_inverse=True)
    group = inverse.reshape(-1)
    starts = np.concatenate((t_start, p_start))
    stops = np.concatenate((t_stop, p_stop))
    lo = np.full(keys.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(keys.shape[0], np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo, group, starts)
    np.maximum.at(hi, group, stops)
    # Each key (a document, or a document's tag) gets its own stretch of positions: spanscore never
    # pairs mentions of two stretches.
    base = np.concatenate(([0], np.cumsum(hi - lo)))[:-1]
    position = base[group] + starts - lo[group]
    # Names only keep the two readings' types apart; nothing here looks a type up by name.
    types = vocab + tuple(f"{t}\x00" for t in vocab)
    n = t_key.shape[0]

    def spans(at: slice, label: IntArray) -> tuple[Spans, IntArray]:
        s, e = position[at], position[at] + (stops[at] - starts[at])
        order = np.lexsort((label, e, s))
        return Spans(s[order], e[order], label[order], group[at][order], types), order

    ref, ref_order = spans(slice(0, n), t_label)
    hyp, hyp_order = spans(slice(n, None), p_label)
    counts, details = count(ref, hyp, Options(min_overlap=threshold, min_overlap_of="reference"), keep_details=True)
    assert details is not None and counts.types == types  # every type has a mention: none was dropped
    pairs: dict[str, tuple[IntArray, IntArray, IntArray]] = {}
    for _, name in SCHEMES:
        m = details.schemes[name]
        pairs[name] = (ref_order[details.pairs.ref[m.pair]], hyp_order[details.pairs.pred[m.pair]], m.level)
    return _Counted(counts, n_types, pairs)


def _threshold(percentage: float) -> float:
    """The least overlap ratio x with ``x * 100.0 >= percentage`` in floating point: nervaluate
    compares ``(overlap / length) * 100.0``, which rounds (0.29 * 100.0 < 29), and spanscore
    compares ``overlap / length`` with its threshold; this threshold makes both agree exactly."""
    p = float(percentage)
    x = p / 100.0
    if x * 100.0 >= p:
        while math.nextafter(x, -math.inf) * 100.0 >= p:
            x = math.nextafter(x, -math.inf)
    else:
        while x * 100.0 < p:
            x = math.nextafter(x, math.inf)
    return min(x, 1.0)


def _result(block: SemEvalScores) -> EvaluationResult:
    act, pos = block["actual"], block["possible"]
    # nervaluate gives the int 0 where a denominator is 0 (csv and json write 0, not 0.0).
    precision: float = cast(float, block["precision"]) if act else 0
    recall: float = cast(float, block["recall"]) if pos else 0
    return EvaluationResult(
        correct=block["correct"],
        incorrect=block["incorrect"],
        partial=block["partial"],
        missed=block["missed"],
        spurious=block["spurious"],
        precision=precision,
        recall=recall,
        f1=cast(float, block["f1"]) if precision + recall > 0 else 0,
        actual=act,
        possible=pos,
    )


# Categories numbered in EvaluationIndices' order; a pair's category by its level.
_CATEGORY_NAMES = ("correct_indices", "incorrect_indices", "partial_indices", "missed_indices", "spurious_indices")
_MISSED, _SPURIOUS = 3, 4
_CATEGORY = np.full(max(FULL, PARTIAL, NO_CREDIT) + 1, -1, dtype=np.int64)
_CATEGORY[[FULL, NO_CREDIT, PARTIAL]] = [0, 1, 2]


@dataclass(frozen=True)
class _Evaluation:
    """``Evaluator.evaluate``'s dictionary, and what it was counted from."""

    results: dict[str, Any]
    true: _Side | None = None
    pred: _Side | None = None
    counted: _Counted | None = None
    vocab: tuple[str, ...] = ()

    def pairs(self, tag: str | None, scheme: str) -> list[tuple[int, int, int]]:
        """A scheme's pairs in the totals (``tag`` None) or of one tag, as ``(document, reference,
        prediction)`` with entities numbered as the indices number them."""
        if self.counted is None or self.true is None or self.pred is None:
            return []
        t_of, p_of, _ = self.counted.pairs[dict(SCHEMES)[scheme]]
        n_t, n_p = len(self.true), len(self.pred)
        if tag is None:
            keep = t_of < n_t
            t_of, p_of, rank = t_of[keep], p_of[keep], "rank"
        else:
            keep = t_of >= n_t
            t_of, p_of, rank = t_of[keep] - n_t, p_of[keep] - n_p, "rank_in_tag"
            keep = self.true.label[t_of] == self.vocab.index(tag)
            t_of, p_of = t_of[keep], p_of[keep]
        t_rank, p_rank = getattr(self.true, rank)[t_of], getattr(self.pred, rank)[p_of]
        return sorted(zip(self.true.doc[t_of].tolist(), t_rank.tolist(), p_rank.tolist(), strict=True))


def _evaluate(
    true: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], tags: Any, percentage: float
) -> _Evaluation:
    if not true:  # nervaluate's loop over documents never runs
        return _Evaluation({"overall": {}, "entities": {}, "overall_indices": {}, "entity_indices": {}})
    labels = {e.label for doc in chain(true, pred) for e in doc}
    vocab = tuple(sorted(x for x in labels if x in tags))
    kept = {x: i for i, x in enumerate(vocab)}
    t_side, p_side = _side(true, kept), _side(pred, kept)
    counted = _count(t_side, p_side, vocab, len(true), _threshold(percentage))
    n_t, n_p = len(t_side), len(p_side)

    results: dict[str, EvaluationResult] = {}
    indices: dict[str, EvaluationIndices] = {}
    entities: dict[str, dict[str, EvaluationResult]] = {tag: {} for tag in vocab}
    entity_indices: dict[str, dict[str, EvaluationIndices]] = {tag: {} for tag in vocab}
    for theirs, name in SCHEMES:
        t_of, p_of, level = counted.pairs[name]
        # Each entity's category in both readings: predictions by their pair's level, else
        # spurious; references missed unless paired.
        pred_cat = np.full(2 * n_p, _SPURIOUS, dtype=np.int64)
        pred_cat[p_of] = _CATEGORY[level]
        true_cat = np.full(2 * n_t, _MISSED, dtype=np.int64)
        true_cat[t_of] = -1
        results[theirs] = _result(counted.semeval(name))
        indices[theirs] = _indices(t_side, p_side, true_cat[:n_t], pred_cat[:n_p], "rank")
        for k, tag in enumerate(vocab):
            entities[tag][theirs] = _result(counted.semeval(name, k))
            entity_indices[tag][theirs] = _indices(
                t_side, p_side, true_cat[n_t:], pred_cat[n_p:], "rank_in_tag", t_side.label == k, p_side.label == k
            )
    out = {"overall": results, "entities": entities, "overall_indices": indices, "entity_indices": entity_indices}
    return _Evaluation(out, t_side, p_side, counted, vocab)


def _indices(
    true: _Side,
    pred: _Side,
    true_cat: IntArray,
    pred_cat: IntArray,
    rank: str,
    true_keep: npt.NDArray[np.bool_] | None = None,
    pred_keep: npt.NDArray[np.bool_] | None = None,
) -> EvaluationIndices:
    """nervaluate's indices of one scheme: predictions by category and missed references, of the
    entities kept. Entities are in (document, list position) order, which is the indices' order."""
    if true_keep is not None and pred_keep is not None:
        true_cat = np.where(true_keep, true_cat, -1)
        pred_cat = np.where(pred_keep, pred_cat, -1)
    found: dict[str, list[tuple[int, int]]] = {}
    for code, name in enumerate(_CATEGORY_NAMES):
        side, cat = (true, true_cat) if code == _MISSED else (pred, pred_cat)
        at = np.flatnonzero(cat == code)
        found[name] = list(zip(side.doc[at].tolist(), getattr(side, rank)[at].tolist(), strict=True))
    return EvaluationIndices(**found)


# --------------------------------------------------------------------------------------------
# The evaluator.


def _first_item(*sides: Any) -> Any:
    """The first element of the first non-empty document of each side in turn (difference 5)."""
    for side in sides:
        if isinstance(side, list):
            for doc in side:
                if isinstance(doc, list) and doc:
                    return doc[0]
    return None


class Evaluator:
    """nervaluate's ``Evaluator``: load both sides, then ``evaluate()`` under the four schemes.

    >>> true = [["O", "B-PER", "I-PER", "O", "B-ORG"]]
    >>> pred = [["O", "B-PER", "O", "O", "B-LOC"]]
    >>> results = Evaluator(true, pred, tags=["PER", "ORG", "LOC"], loader="list").evaluate()
    >>> r = results["overall"]["partial"]
    >>> r.correct, r.partial, r.missed, r.spurious, r.precision
    (1, 1, 0, 0, 0.75)
    >>> results["entities"]["ORG"]["strict"].missed, results["entities"]["LOC"]["strict"].spurious
    (1, 1)
    """

    def __init__(
        self, true: Any, pred: Any, tags: list[str], loader: str = "default", min_overlap_percentage: float = 1.0
    ) -> None:
        self.tags = tags
        self.min_overlap_percentage = min_overlap_percentage
        self._setup_loaders()
        self._load_data(true, pred, loader)
        # After loading, as nervaluate checks it: bad data is reported first.
        p: object = min_overlap_percentage  # callers pass anything: nervaluate checks at run time
        if not (isinstance(p, numbers.Real) and 1.0 <= float(p) <= 100.0):
            raise _OptionValueError("min_overlap_percentage must be between 1.0 and 100.0")

    def _setup_loaders(self) -> None:
        self.loaders: dict[str, DataLoader] = {"conll": ConllLoader(), "list": ListLoader(), "dict": DictLoader()}

    def _load_data(self, true: Any, pred: Any, loader: str) -> None:
        if loader == "default":
            if isinstance(true, str):
                loader = "conll"
            elif isinstance(true, list) and true and isinstance(true[0], list):
                loader = "dict" if isinstance(_first_item(true, pred), dict) else "list"
            else:
                raise _InputValueError("Could not infer loader from input type")
        if loader not in self.loaders:
            raise _OptionValueError(f"Unknown loader: {loader}")
        if loader == "list":
            if len(true) != len(pred):
                raise _InputValueError("Number of predicted documents does not equal true")
            for i, (true_doc, pred_doc) in enumerate(zip(true, pred, strict=True)):
                if len(true_doc) != len(pred_doc):
                    raise _InputValueError(
                        f"Document {i} has different lengths: true={len(true_doc)}, pred={len(pred_doc)}"
                    )
        self.true = self.loaders[loader].load(true)
        self.pred = self.loaders[loader].load(pred)
        if len(self.true) != len(self.pred):
            raise _InputValueError("Number of predicted documents does not equal true")

    def _evaluation(self) -> _Evaluation:
        return _evaluate(self.true, self.pred, self.tags, self.min_overlap_percentage)

    def evaluate(self) -> dict[str, Any]:
        """``overall`` and ``overall_indices`` by scheme, ``entities`` and ``entity_indices`` by tag
        and scheme (tags of ``tags`` that occur on either side)."""
        return self._evaluation().results

    def results_to_csv(
        self, mode: str = "overall", scenario: str = "strict", file_path: str | None = None
    ) -> str | None:
        """The results as CSV: every scheme (``mode="overall"``) or every tag under ``scenario``
        (``mode="entities"``); written to ``file_path`` if given, else returned."""
        if mode not in _VALID_MODES:
            raise _OptionValueError(f"Invalid mode: must be one of {_VALID_MODES}")
        if mode == "entities" and scenario not in _VALID_SCENARIOS:
            raise _OptionValueError(f"Invalid scenario: must be one of {_VALID_SCENARIOS}")
        results = self.evaluate()
        first = "Strategy" if mode == "overall" else "Entity"
        rows: list[list[Any]] = [
            [first, "Correct", "Incorrect", "Partial", "Missed", "Spurious", "Precision", "Recall", "F1-Score"]
        ]
        if mode == "overall":
            chosen = results["overall"].items()
        else:
            chosen = [(tag, by[scenario]) for tag, by in results["entities"].items() if scenario in by]
        rows += [[name, *_row(r)] for name, r in chosen]
        if file_path:
            with open(file_path, "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(rows)
            return None
        out = io.StringIO()
        csv.writer(out).writerows(rows)
        return out.getvalue()

    def summary_report(self, mode: str = "overall", scenario: str = "strict", digits: int = 2) -> str:
        """nervaluate's text table: every scheme, or every tag under ``scenario``."""
        if mode not in _VALID_MODES:
            raise _OptionValueError(f"Invalid mode: must be one of {_VALID_MODES}")
        if mode == "entities" and scenario not in _VALID_SCENARIOS:
            raise _OptionValueError(f"Invalid scenario: must be one of {_VALID_SCENARIOS}")
        headers = ["correct", "incorrect", "partial", "missed", "spurious", "precision", "recall", "f1-score"]
        rows: list[list[Any]] = [headers]
        results = self.evaluate()
        if mode == "overall":
            data = results["overall"]
            rows += [[name, *_row(data[name])] for name in sorted(_VALID_SCENARIOS) if name in data]
        else:
            data = results["entities"]
            rows += [[tag, *_row(data[tag][scenario])] for tag in sorted(data) if scenario in data[tag]]
        width = max(max(len(str(row[0])) for row in rows), digits)
        head_fmt = "{:>{width}s} " + " {:>11}" * len(headers)
        report = f"Scenario: {scenario if mode == 'entities' else 'all'}\n\n" + head_fmt.format(
            "", *headers, width=width
        )
        report += "\n\n"
        row_fmt = "{:>{width}s} " + " {:>11}" * 5 + " {:>11.{digits}f}" * 3 + "\n"
        for row in rows[1:]:
            report += row_fmt.format(*row, width=width, digits=digits)
        return report

    def summary_report_indices(self, mode: str = "overall", scenario: str = "strict", colors: bool = False) -> str:
        """nervaluate's listing of each category's ``(document, entity)`` indices under ``scenario``,
        naming the entity each index refers to (difference 6)."""
        if mode not in _VALID_MODES:
            raise _OptionValueError(f"Invalid mode: must be one of {_VALID_MODES}")
        if mode == "entities" and scenario not in _VALID_SCENARIOS:
            raise _OptionValueError(f"Invalid scenario: must be one of {_VALID_SCENARIOS}")

        def colorize(text: str, color: str) -> str:
            return f"{_COLORS[color]}{text}{_COLORS['reset']}" if colors else text

        header_fmt = "{:<20} {:<10} {:<8} {:<25}"
        row_fmt = "{:<20} {:<10} {:<8} {:<10}"
        table_head = colorize(header_fmt.format("Category", "Instance", "Entity", "Details"), "bold") + "\n"
        table_head += colorize("-" * 78, "white") + "\n"

        def table(indices: EvaluationIndices, keep: Any) -> str:
            text = ""
            for category, found in vars(indices).items():
                name = category.replace("_indices", "").replace("_", " ").capitalize()
                label = colorize(name, _CATEGORY_COLORS.get(name, "white"))
                if not found:
                    text += row_fmt.format(label, "-", "-", "None") + "\n"
                    continue
                side = self.true if category == "missed_indices" else self.pred
                for doc, k in found:
                    entity = [e for e in side[doc] if keep(e)][k]
                    text += row_fmt.format(label, f"{doc}", f"{k}", _entity_info(entity)) + "\n"
            return text

        results = self.evaluate()
        if mode == "overall":
            report = f"\n{colorize('Indices for error schema', 'bold')} '{colorize(scenario, 'cyan')}':\n\n"
            return report + table_head + table(results["overall_indices"][scenario], lambda e: e.label in self.tags)
        report = ""
        for tag, by_scheme in results["entity_indices"].items():
            report += f"\n{colorize('Entity Type', 'bold')}: {colorize(tag, 'cyan')}\n"
            report += f"{colorize('Error Schema', 'bold')}: '{colorize(scenario, 'cyan')}'\n\n"
            report += table_head + table(by_scheme[scenario], lambda e, tag=tag: e.label == tag)
        return report


_COLORS = {
    "reset": "\033[0m",
    "bold": "\033[1m",
    "red": "\033[91m",
    "green": "\033[92m",
    "yellow": "\033[93m",
    "blue": "\033[94m",
    "magenta": "\033[95m",
    "cyan": "\033[96m",
    "white": "\033[97m",
}
_CATEGORY_COLORS = {
    "Correct": "green",
    "Incorrect": "red",
    "Partial": "yellow",
    "Missed": "magenta",
    "Spurious": "blue",
}


def _row(r: EvaluationResult) -> list[Any]:
    return [r.correct, r.incorrect, r.partial, r.missed, r.spurious, r.precision, r.recall, r.f1]


def _entity_info(entity: Any) -> str:
    if isinstance(entity, Entity):
        return f"Label={entity.label}, Start={entity.start}, End={entity.end}"
    return f"Tag={entity}"


# --------------------------------------------------------------------------------------------
# Helpers of nervaluate.utils.


def split_list(token: list[str], split_chars: list[str] | None = None) -> list[list[str]]:
    """Split a list into sublists at each item of ``split_chars`` (default: the empty string)."""
    if split_chars is None:
        split_chars = [""]
    out = []
    chunk: list[str] = []
    for i, item in enumerate(token):
        if item not in split_chars:
            chunk.append(item)
            if i + 1 == len(token):
                out.append(chunk)
        else:
            out.append(chunk)
            chunk = []
    return out


def list_to_spans(doc: list[list[str]]) -> list[list[dict[str, Any]]]:
    """The entities of each tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    sequences = [list(tags) for tags in doc]
    _check_tag_lists(sequences)
    return [[{"label": e.label, "start": e.start, "end": e.end} for e in ents] for ents in _decode(sequences)]


def collect_named_entities(tokens: list[str]) -> list[dict[str, Any]]:
    """The entities of one tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    return list_to_spans([tokens])[0]


def conll_to_spans(doc: str) -> list[list[dict[str, Any]]]:
    """The entities of each example of a ``token TAB tag`` string (examples split at empty lines)."""
    examples = split_list(doc.split("\n"), split_chars=None)
    return list_to_spans([[token.split("\t")[1] for token in example] for example in examples])
