"""Scores per bucket of a mention attribute (``evaluate(buckets=...)``), with intervals, and each
bucket's paired comparison of systems (``compare(buckets=...)``).

A bucket's statistics are those of the reference mentions in it (recall's side) and of the
predicted mentions in it (precision's side): bucket precision is the credit of its predictions over
their number, recall the credit of its reference mentions over theirs. A pair whose two mentions
fall in different buckets gives its credit to the prediction's bucket for precision and to the
reference's bucket for recall, and nothing is split: under exact-match criteria every figure
reduces to plain counts, and each bucket's mention counts add up to the corpus's.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..engines.local import Engine, Numbered, PartCounter
from ..engines.paired import JointRows, counted_together, map_together, shipped
from ..errors import OptionError
from ..runtime.memory import release_freed_memory
from ..stages import documents as doc_stages
from ..stages.documents import DocCounts, DocState, Histogram, RowQueue, TypeRows, scored_columns
from ..stages.parts import ChunkData, Folder, PartResult, totals_of
from ..stages.spans import IntArray
from .significance import (
    Comparison,
    Resampling,
    bootstrap_histograms,
    bootstrap_rows,
    compare_histograms,
    metrics_of,
    score_totals,
)

SEMEVAL_PREFIX = "semeval_"


def _split(scores: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Criteria and the token score, and the SemEval schemes (by their own names)."""
    metrics = {n: v for n, v in scores.items() if not n.startswith(SEMEVAL_PREFIX)}
    semeval = {n[len(SEMEVAL_PREFIX) :]: v for n, v in scores.items() if n.startswith(SEMEVAL_PREFIX)}
    return metrics, semeval


def _total(rows: TypeRows, bucket: int) -> Any:
    return rows.stats[rows.type_index == bucket].sum(axis=0)


def bucket_table(
    rows: TypeRows,
    fields: tuple[str, ...],
    *,
    zero_division: float,
    credit: str,
    beta: float = 1.0,
    docs: DocCounts | None = None,
    resampling: Resampling | None = None,
    histograms: tuple[Mapping[str, Histogram], int] | None = None,
) -> list[dict[str, Any]]:
    """Every bucket in order: its mentions on each side and every score, with ``low`` and ``high``
    where ``resampling`` is given, read from the per-document counts ``docs`` or, the same
    numbers, from ``histograms``: each bucket's histogram of its documents with a mention in it
    (``split_state``) and the number of documents in the corpus."""
    ref, pred = fields.index("reference"), fields.index("predicted")
    spans = None
    options: dict[str, Any] = {"zero_division": zero_division, "credit": credit, "resampling": resampling, "beta": beta}
    if resampling is not None and histograms is not None:
        spans = bootstrap_histograms(dict(histograms[0]), histograms[1], **options)
    elif resampling is not None and docs is not None:
        spans = bootstrap_rows(docs, rows, **options)
    out = []
    for b, label in enumerate(rows.names):
        total = _total(rows, b)
        scores = score_totals(total[None, :].astype(np.float64), fields, zero_division, credit, beta)
        point: dict[str, dict[str, float | None]] = {
            n: {m: float(block[m][0]) for m in metrics_of(beta)} for n, block in scores.items()
        }
        if spans is not None:
            found = spans.get(label, {})
            for n, block in point.items():
                for m in list(block):
                    interval = found.get(n, {}).get(m)
                    name = "" if m == "f1" else f"{m}_"  # F1's interval is plain low/high
                    block[f"{name}low"] = None if interval is None else interval["low"]
                    block[f"{name}high"] = None if interval is None else interval["high"]
        metrics, semeval = _split(point)
        out.append(
            {
                "bucket": label,
                "reference_mentions": int(total[ref]),
                "predicted_mentions": int(total[pred]),
                "metrics": metrics,
                "semeval": semeval,
            }
        )
    return out


def field_rows(docs: DocCounts, values: dict[str, str], missing: str) -> TypeRows:
    """Per-document counts grouped by a document field's value (buckets in order of first
    appearance), as bucket rows: a document field is an attribute of each of its mentions."""
    labels: dict[str, int] = {}
    index = [labels.setdefault(values.get(name, missing), len(labels)) for name in docs.names()]
    return TypeRows(docs.keys, np.asarray(index, dtype=np.int64), tuple(labels), docs.stats)


def field_table(
    hists: Mapping[str, Histogram],
    labels: Sequence[str],
    documents: int,
    *,
    zero_division: float,
    credit: str,
    beta: float = 1.0,
    resampling: Resampling | None = None,
) -> tuple[TypeRows, list[dict[str, Any]]]:
    """``bucket_table`` of a document field's buckets (``field_rows``'s numbers) from each
    bucket's histogram of its documents' rows (``analysis.breakdown.FieldEngine``), buckets in
    order of first appearance (``labels``), and the buckets' totals as bucket rows."""
    held = [label for label in labels if label in hists]
    if not held:
        none = np.zeros(0, dtype=np.int64)
        return TypeRows(none, none, (), np.zeros((0, 0), dtype=np.int64)), []
    fields = hists[held[0]].fields
    totals = np.stack([hists[label].total().astype(np.int64) for label in held])
    rows = TypeRows(np.zeros(len(held), dtype=np.int64), np.arange(len(held), dtype=np.int64), tuple(held), totals)
    found = None if resampling is None else ({label: hists[label] for label in held}, documents)
    table = bucket_table(
        rows, fields, zero_division=zero_division, credit=credit, beta=beta, resampling=resampling, histograms=found
    )
    return rows, table


# Paired comparisons per group (a type, a bucket) ------------------------------------------------
#
# A group's paired tests resample the documents, each with every system's statistics of its
# mentions in the group (zero where it has none). Those joint rows are kept as a histogram per
# group (``stages.documents.Histogram``), like the corpus's: the documents with a mention in the
# group are added as they finish, the others are one zero row counted ``documents - held`` times.
# So the cost follows the distinct joint rows, and the histogram is the same whatever the chunks,
# the processes or the engine; the tests then run on it as on the corpus's (``compare_histogram``).

SEP = "\x1f"  # starts a bucket's group name (a type's name is itself): no label holds it


def group_name(attribute: str, label: str) -> str:
    """The name of an attribute's bucket among the groups of a chunk (types keep their names)."""
    return f"{SEP}{attribute}{SEP}{label}"


def _grouping(name: str) -> tuple[str, str]:
    """The grouping (``per_type`` or an attribute) and the label of a group's name."""
    if name.startswith(SEP):
        _, attribute, label = name.split(SEP, 2)
        return attribute, label
    return "per_type", name


def _narrowest(stats: IntArray) -> Any:
    """Non-negative counts in the smallest unsigned integer type that holds them all."""
    if not stats.size or int(stats.min()) < 0:
        return stats
    return stats.astype(np.min_scalar_type(int(stats.max())))


def _concatenated_narrowest(pieces: Sequence[IntArray]) -> Any:
    """``_narrowest(np.concatenate(pieces))``, each piece cast as it is copied in."""
    held = [p for p in pieces if p.size]
    if not held or min(int(p.min()) for p in held) < 0:
        return np.concatenate(pieces)
    kind = np.min_scalar_type(max(int(p.max()) for p in held))
    return np.concatenate(pieces, dtype=kind, casting="unsafe")


@dataclass(frozen=True)
class GroupCounter(PartCounter):
    """A counter that also leaves each chunk's statistics per document and group (each type where
    ``wanted.document_types``, each bucket of ``wanted.buckets``) small enough to stream: only the
    columns that scores read, the buckets' rows per document replaced by each bucket's totals.

    With ``state`` the per-document rows become additive state (``DocState``, its ``types``
    holding every group), for intervals folded by any engine; without, the narrowed rows stay in
    ``docs.type_rows`` for ``run_grouped`` to pair. ``wanted.documents`` must be asked for."""

    state: bool = False

    def __post_init__(self) -> None:
        # Counted narrow from the start (``Wanted.scored_groups``): per document and group only
        # the columns scores read, the error taxonomy per bucket only, for the buckets' totals.
        object.__setattr__(self, "wanted", replace(self.wanted, scored_groups=True))

    def count(self, item: Numbered, data: ChunkData) -> PartResult:
        part = super().count(item, data)
        docs = part.docs
        if docs is None:
            return part
        # Every grouping's rows put together once (their names told apart).
        pieces = [] if docs.type_rows is None else [docs.type_rows]
        pieces += [
            TypeRows(rows.keys, rows.type_index, tuple(group_name(a, label) for label in rows.names), rows.stats)
            for a, rows in part.bucket_documents.items()
        ]
        starts = np.cumsum([0] + [len(r.names) for r in pieces])
        groups = None
        if pieces:
            groups = TypeRows(
                np.concatenate([r.keys for r in pieces]),
                np.concatenate([r.type_index + start for r, start in zip(pieces, starts.tolist(), strict=False)]),
                tuple(n for r in pieces for n in r.names),
                # Sent to the process that pairs them in the narrowest integers that hold them (a
                # document's counts in one group are small), put together in them (not in 64 bits
                # first: eight times the bytes written); summed there as 64-bit integers.
                _concatenated_narrowest([r.stats for r in pieces]) if not self.state
                else np.concatenate([r.stats for r in pieces]),
            )
        narrowed = replace(docs, type_rows=groups)
        if self.state:
            return replace(part, docs=None, bucket_documents={}, state=DocState.of(narrowed))
        return replace(part, docs=narrowed, bucket_documents={})


def split_state(state: DocState) -> tuple[DocState, dict[str, dict[str, Histogram]]]:
    """A ``GroupCounter``'s folded state as the corpus's state with its types only, and each
    attribute's histogram of each bucket's documents with a mention in it."""
    types: dict[str, Histogram] = {}
    buckets: dict[str, dict[str, Histogram]] = {}
    for name, hist in (state.types or {}).items():
        if name.startswith(SEP):
            attribute, label = _grouping(name)
            buckets.setdefault(attribute, {})[label] = hist
        else:
            types[name] = hist
    return replace(state, types=types), buckets


class _Pile:
    """A group's joint histogram as its blocks come: ``engines.paired.JointRows`` (the blocks
    waiting and the merged rows held in bytes where the counts fit, the counts of the blocks in
    the narrowest integers; the same rows, order and counts as merging ``Histogram``s), merged
    by ``Histogram.pile``'s rule for small histograms (one type's, one bucket's): once the blocks
    waiting hold more rows than ``PILE_ROWS`` and twice the merged ones, so each row is merged
    in a few times at most, and at most ``engines.paired.MERGE_MOST`` rows wait (the largest
    bucket's blocks waited for 10 MB of rows at a million sentences). Blocks come as counted here
    or as a worker ships them (``engines.paired.shipped``): neither is widened to 16 bits."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.joint = JointRows(fields, least=doc_stages.PILE_ROWS, share=2.0)

    @property
    def merged(self) -> Histogram:
        """The rows merged so far (as held: bytes where they fit)."""
        j = self.joint
        rows: Any = np.zeros((0, len(self.fields)), dtype=np.uint8) if j.rows is None else j.rows
        return Histogram(rows, j.counts, self.fields)

    @property
    def waiting(self) -> list[Histogram]:
        """The blocks not merged in yet (as held)."""
        return [Histogram(r, c, self.fields) for r, c in self.joint.waiting]

    def add(self, block: Histogram) -> None:
        _release_after(self.joint, block)

    def merge(self) -> Histogram:
        """Every block merged, as ``Histogram.of`` makes it (rows in 16 bits where they fit)."""
        merged = self.joint.histogram()
        if merged is None:
            return Histogram(np.zeros((0, len(self.fields)), dtype=np.int64), np.zeros(0, dtype=np.int64), self.fields)
        return merged

    def with_zeros(self, documents: int) -> Histogram:
        """The whole histogram, with the documents it does not hold as zero rows (as it is where
        it holds ``documents`` or more)."""
        merged = self.merge()
        return merged if documents <= merged.documents else merged.with_zeros(documents)

    def finished(self, documents: int) -> Histogram:
        """``in_bytes(self.with_zeros(documents))``, made from the merged rows in bytes where they
        are held so: the zero row written in front of them in bytes (a zero row sorts first), with
        no 16-bit copy of the rows and no 16-bit histogram with zeros between (at a million
        sentences three copies of the largest group's rows at once)."""
        merged = self.joint.histogram(in_bytes=True) if self.joint.rows is not None or self.joint.waiting else None
        if merged is None or merged.rows.dtype != np.uint8:
            whole = self.merge() if merged is None else merged
            return in_bytes(whole if documents <= whole.documents else whole.with_zeros(documents))
        missing = documents - merged.documents
        if missing <= 0:
            return merged
        rows, counts = merged.rows, merged.counts
        del merged
        if not rows[0].any():  # a zero row there already: its count grows
            counts = counts.copy()
            counts[0] += missing
            return Histogram(rows, counts, self.fields)
        out = np.empty((rows.shape[0] + 1, rows.shape[1]), dtype=np.uint8)
        out[0] = 0
        out[1:] = rows
        del rows
        counts = np.concatenate((np.array([missing], dtype=np.int64), counts), dtype=np.int64)
        return Histogram(out, counts, self.fields)


def in_bytes(hist: Histogram) -> Histogram:
    """``hist`` with its rows in bytes where every count fits (the same numbers): a group's
    histogram is held that way from the pairing to its paired tests, half its 16-bit bytes. The
    tests read rows by value (each family's histogram is made from them in 16 bits, totals in
    floats), so they give the same numbers (tests/test_bucket_zero_rows.py)."""
    rows = hist.rows
    if not rows.size or rows.dtype == np.uint8 or int(rows.min()) < 0 or int(rows.max()) > 255:
        return hist
    return replace(hist, rows=rows.astype(np.uint8))


def _release_after(joint: JointRows, block: Histogram) -> None:
    """``joint.add(block)``, and the heap's free pages handed back where it merged rows of more
    than ``RELEASE_BYTES`` (``runtime.memory.release_freed_memory``): the blocks a merge frees
    (the old rows, the blocks merged, the sort keys) are too small for the next merge's rows."""
    before = joint.rows
    joint.add(block)
    if joint.rows is not before and joint.rows is not None and joint.rows.nbytes > RELEASE_BYTES:
        release_freed_memory()


RELEASE_BYTES = 1 << 20  # merged rows from which a merge's freed blocks are handed back (``_release_after``)
_GroupRows = tuple[IntArray, IntArray, IntArray]  # document keys, group ids, statistics
GROUP = "group"  # the first column of every group's joint rows tabled together (``_Groups.tabled``)


def _split_groups(whole: Histogram, fields: tuple[str, ...]) -> dict[int, Histogram]:
    """Each group's histogram (by group id) out of one whose first column is the group id: its
    rows sort by group, then as each group's own histogram sorts them, so each group is a slice
    (copied out, in the narrowest integers that hold it, as ``Histogram.of`` keeps rows: a view
    would keep the whole block alive while any group's rows wait to be merged)."""
    if not whole.rows.shape[0]:
        return {}
    first = whole.rows[:, 0]
    bounds = np.flatnonzero(np.concatenate(([True], first[1:] != first[:-1], [True])))
    return {
        int(first[a]): Histogram(
            np.ascontiguousarray(doc_stages.compact_rows(whole.rows[a:b, 1:])), whole.counts[a:b], fields
        )
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    }


@dataclass(frozen=True)
class GroupBlock:
    """Every group's joint rows of some documents as one histogram whose first column is the
    group (``GROUP``): group ``k`` is ``names[k]``."""

    names: tuple[str, ...]
    hist: Histogram

    def split(self) -> dict[str, Histogram]:
        """Each group's histogram, by name."""
        fields = self.hist.fields[1:]
        return {self.names[g]: h for g, h in _split_groups(self.hist, fields).items()}


class _Groups:
    """Every group's joint histogram as blocks of documents come, and the groups' names in the
    order each system first names them."""

    def __init__(self, systems: int) -> None:
        self.ids: dict[str, int] = {}
        self.order: list[list[str]] = [[] for _ in range(systems)]
        self.hists: dict[int, _Pile] = {}
        self.fields: tuple[str, ...] | None = None

    def name(self, system: int, names: Sequence[str]) -> IntArray:
        """The ids of a system's group names (new ones registered)."""
        for n in names:
            self.ids.setdefault(n, len(self.ids))
            if n not in self.order[system]:
                self.order[system].append(n)
        return np.array([self.ids[n] for n in names] or [0], dtype=np.int64)

    def add(self, rows: Sequence[_GroupRows], fields: tuple[str, ...]) -> None:
        """Each system's complete rows (document key, group id, statistics) of some documents:
        the rows of one document and group summed (a chunk boundary may cut a document), the
        systems' rows side by side (zeros where a system has none) and added per group."""
        self.fields = fields
        block = self.tabled(rows, fields)
        if block is not None:
            for g, hist in _split_groups(block, fields).items():
                self.hists.setdefault(g, _Pile(fields)).add(hist)

    @staticmethod
    def tabled(rows: Sequence[_GroupRows], fields: tuple[str, ...]) -> Histogram | None:
        """The histogram of the systems' joint rows per (document, group), the group id first."""
        held = [r for r in rows if r[0].shape[0]]
        if not held:
            return None
        low = min(int(k.min()) for k, _, _ in held)
        span = max(int(k.max()) for k, _, _ in held) - low + 1
        n_groups = max(int(g.max()) for _, g, _ in held) + 1
        codes = [g * span + (k - low) for k, g, _ in rows]
        n = sum(c.shape[0] for c in codes)
        inverses: list[IntArray]
        if n_groups * span <= 8 * n + 4096:
            # A chunk's documents and groups: one mark per pair, where np.unique would sort.
            seen = np.zeros(n_groups * span, dtype=bool)
            for code in codes:
                seen[code] = True
            distinct = np.flatnonzero(seen)
            rank = np.cumsum(seen) - 1
            inverses = [rank[code] for code in codes]
        else:
            distinct, inverse = np.unique(np.concatenate(codes), return_inverse=True)
            inverse = inverse.reshape(-1)
            cuts = np.cumsum([c.shape[0] for c in codes])[:-1]
            inverses = np.split(inverse, cuts)
        # Where no document and group repeats (a chunk's own documents), in the narrowest integers
        # that hold the rows as they come (``GroupCounter``), otherwise summed in 64 bits.
        once = all(not m.shape[0] or int(np.bincount(m).max()) == 1 for m in inverses)
        kinds = [r[2].dtype for r in rows] + [np.min_scalar_type(n_groups - 1)]
        kind = np.result_type(*kinds) if once and all(np.issubdtype(k, np.unsignedinteger) for k in kinds) else np.int64
        # Written column by column and read as its transpose (``Histogram.of`` reads either layout).
        table = np.zeros((len(fields) + 1, distinct.shape[0]), dtype=kind)
        table[0] = distinct // span
        column = 1
        for mine, (_, _, stats) in zip(inverses, rows, strict=True):
            width = stats.shape[1]
            if not once:
                np.add.at(table, (np.arange(column, column + width)[:, None], mine[None, :]), stats.T)
            else:
                table[column : column + width, mine] = stats.T
            column += width
        return Histogram.of(table.T, (GROUP, *fields))

    def finished(self, documents: int) -> dict[str, list[tuple[str, Histogram]]]:
        """Every grouping's groups in order (the first system's, then any only others name), each
        with the documents without a mention in it added as zero rows (once: the piles are
        taken out as their histograms are made), its rows in bytes where they fit (``in_bytes``)."""
        fields = self.fields or ()
        out: dict[str, list[tuple[str, Histogram]]] = {}
        seen: list[str] = []
        for order in self.order:
            seen += [n for n in order if n not in seen]
        for name in seen:
            grouping, label = _grouping(name)
            # Taken out: its merged rows go as its histogram is made, not once every group's is.
            hist = self.hists.pop(self.ids[name], None) or _Pile(fields)
            finished = hist.finished(documents)
            out.setdefault(grouping, []).append((label, finished))
            if finished.rows.nbytes > RELEASE_BYTES:
                release_freed_memory()  # its merge's, widening's and zero row's copies
        return out


def _joint_fields(fields: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(f"{k}:{f}" for k, fs in enumerate(fields) for f in fs)


def joint_groups(
    systems: Sequence[tuple[DocCounts, TypeRows]], credit: str
) -> list[tuple[str, Histogram]]:
    """Each group's joint histogram of the systems' whole per-document rows and rows per group
    (the systems' documents in the same order), groups in the first system's order."""
    groups = _Groups(len(systems))
    taken = []
    fields = []
    for s, (docs, rows) in enumerate(systems):
        cols = scored_columns(docs.fields, scaled=credit in ("dice", "iou"))
        fields.append(tuple(docs.fields[i] for i in cols))
        taken.append((rows.keys, groups.name(s, rows.names)[rows.type_index], np.take(rows.stats, cols, axis=1)))
    groups.add(taken, _joint_fields(fields))
    documents = int(systems[0][0].stats.shape[0])
    return [pair for found in groups.finished(documents).values() for pair in found]


@dataclass
class _Stream:
    """One system's results as they come: its rows (global keys, in order) and rows per group
    not yet paired."""

    results: Iterator[PartResult]
    folder: Folder
    rows: RowQueue = field(default_factory=RowQueue)
    fields: tuple[str, ...] | None = None
    unit: str | None = None
    group_keys: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    group_ids: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    group_stats: IntArray | None = None
    offset: int = 0  # where the next part's document keys start
    done: bool = False
    # Groupings by a document field (``analysis.breakdown.Groupings``): each document's row goes
    # to its value's group, the values coming with the parts (``analysis.breakdown.Labels``).
    by_field: Any = None
    labels: Any = None
    # Per part given to ``labels``, in order: the values of the documents paired where the part
    # was counted (``_FieldInner``), each field's in order of first appearance, and their groups'
    # histograms (the first system's parts only), used once the part is released.
    inner: deque[_FieldInner | None] = field(default_factory=deque)

    @property
    def bound(self) -> int:
        """Every document key below this one is complete (its rows per group too)."""
        waiting = None if self.labels is None else self.labels.waiting_from()
        return self.rows.bound if waiting is None else min(self.rows.bound, waiting)

    def pull(self, groups: _Groups, system: int) -> None:
        self.add(next(self.results, None), groups, system)

    def add(self, part: PartResult | None, groups: _Groups, system: int, inner: _FieldInner | None = None) -> None:
        """The next part's result (None: there is none); ``inner``: its documents paired where it
        was counted, by field value (``_JoinedGroups``)."""
        if part is None:
            self.done = True
            self.rows.close()
            if self.labels is not None:
                for ready, keys, codes in self.labels.close():
                    self._field_rows(ready, keys, codes, groups, system, self.inner.popleft())
            return
        if self.labels is not None:
            from .breakdown import take_labels

            part, found = take_labels(part)
            self.inner.append(inner)
            for ready, keys, codes in self.labels.add(part, found):
                self._field_rows(ready, keys, codes, groups, system, self.inner.popleft())
        docs, offset = part.docs, self.offset
        self.offset += part.doc_advance
        self.folder.add(replace(part, docs=None))
        if docs is None:
            return
        rows = docs.type_rows
        if rows is not None:
            gids = groups.name(system, rows.names)[rows.type_index]
            stats = rows.stats
            self.group_stats = stats if self.group_stats is None else np.concatenate((self.group_stats, stats))
            self.group_keys = np.concatenate((self.group_keys, rows.keys + offset))
            self.group_ids = np.concatenate((self.group_ids, gids))
        if not docs.keys.shape[0]:
            return
        if self.fields is None:
            self.fields, self.unit = docs.fields, docs.unit
        self.rows.append(docs.keys + offset, docs.stats, docs.ids)

    def _field_rows(
        self,
        part: PartResult,
        keys: IntArray,
        codes: list[IntArray],
        groups: _Groups,
        system: int,
        inner: _FieldInner | None = None,
    ) -> None:
        """Each document's row in its value's group of every field grouping (every document is
        in one: a field's buckets hold all the documents, zero rows too). ``inner``: the part's
        documents between its first and its last, paired where it was counted: their values
        are named in their place (after the first document's), their groups' histograms added."""
        docs = part.docs
        fields = self.labels.fields
        if inner is not None:
            self.labels.note(inner.values)
        if docs is None or not keys.shape[0]:
            return
        for name, grouping in self.by_field.named:
            k = fields.index(grouping.field)
            code, values = codes[k], self.labels.values[k]
            present, where = np.unique(code, return_index=True)
            order = present[np.argsort(where, kind="stable")]  # the values in order of first appearance
            lookup = np.zeros(len(values), dtype=np.int64)
            if inner is not None and inner.values[k]:
                # The first document, then the inner ones (in order of first appearance), then the last.
                first = [values[int(code[0])]]
                seq = [group_name(name, v) for v in [*first, *inner.values[k], *(values[c] for c in order.tolist())]]
                groups.name(system, seq)
            lookup[order] = groups.name(system, [group_name(name, values[c]) for c in order.tolist()])
            stats = docs.stats
            self.group_stats = stats if self.group_stats is None else np.concatenate((self.group_stats, stats))
            self.group_keys = np.concatenate((self.group_keys, keys))
            self.group_ids = np.concatenate((self.group_ids, lookup[code]))
        if inner is not None:
            for gname, hist in inner.hists.items():
                groups.hists.setdefault(groups.ids[gname], _Pile(hist.fields)).add(hist)

    def check_fields(self) -> None:
        """A field no document has is refused (a misspelt attribute), naming the fields there are."""
        if self.labels is not None:
            from .breakdown import MISSING

            for grouping in self.by_field.fields:
                if self.labels.values[self.labels.fields.index(grouping.field)] == [MISSING]:
                    raise self.by_field.refusal(grouping)

    def take(self, below: int) -> tuple[IntArray, IntArray | None, list[str] | None, _GroupRows]:
        """The complete rows with keys below ``below``, and their rows per group, removed from
        the stream."""
        keys, stats, ids = self.rows.take(below)
        if self.group_stats is None:
            width = 0 if stats is None else stats.shape[1]
            return keys, stats, ids, (self.group_keys, self.group_ids, np.zeros((0, width), dtype=np.int64))
        done = self.group_keys < below
        out = (self.group_keys[done], self.group_ids[done], self.group_stats[done])
        self.group_keys, self.group_ids = self.group_keys[~done], self.group_ids[~done]
        self.group_stats = self.group_stats[~done]
        return keys, stats, ids, out


@dataclass
class Grouped:
    """Each system's folded total, the systems' joint rows as one histogram (as
    ``engines.paired.run_paired``'s) and every grouping's groups, each with its joint histogram
    (all of them with rows in bytes where they fit: ``in_bytes``)."""

    totals: list[PartResult]
    joint: Histogram | None
    unit: str
    groups: dict[str, list[tuple[str, Histogram]]]


@dataclass(frozen=True)
class _FieldInner:
    """A part's documents paired where it was counted, by a document field: each field's values
    of those documents in order of first appearance, and the histograms of their field groups
    (``group_name(grouping, value)``; empty but for one system's parts)."""

    values: list[list[str]]
    hists: dict[str, Histogram]


@dataclass(frozen=True)
class _Inner:
    """The documents whole in a chunk, paired where it was counted: the corpus's joint histogram,
    each type's and attribute bucket's by name, and where buckets are named by a document field,
    their values and groups (``_FieldInner``), used once the part's values are in order."""

    joint: Histogram
    per_group: dict[str, Histogram]
    by_field: _FieldInner | None = None


@dataclass(frozen=True)
class _JoinedGroups:
    """Side-by-side counting (``engines.paired.side_by_side``) that pairs the documents whole in
    the chunk (all but its first and last, which a chunk boundary may cut) where the chunk is
    counted: their joint rows and each group's go back as histograms, and only the cut
    documents' rows are paired by the evaluating process (the same histograms: sorted, merged
    by adding counts, whatever the blocks)."""

    together: Any  # engines.paired._SideBySide
    # Groupings by a document field (``analysis.breakdown.Groupings``, the counters
    # ``LabelledCounter``s): a whole document's value is the first its lines give (or none), so
    # it is known here, and its rows go to its value's group too.
    by_field: Any = None
    home: int = field(default_factory=os.getpid)  # the evaluating process (``engines.paired.shipped``)

    def plan(self) -> Iterator[tuple[Numbered, ...]]:
        plan: Iterator[tuple[Numbered, ...]] = self.together.plan()
        return plan

    def _labelled(
        self, results: tuple[PartResult, ...], inner_keys: IntArray
    ) -> tuple[list[list[str]], list[tuple[list[str], IntArray]]]:
        """Each field's values of the inner documents (in order of first appearance), and for
        every field grouping its group names and each inner document's; the inner documents' values are
        taken out of every result's labels (what is left: the cut documents' and any other's)."""
        from .breakdown import LABELS, MISSING

        fields = [g.field for g in self.by_field.fields]
        first = results[0].buckets
        values: list[list[str]] = []
        names_of: dict[str, tuple[list[str], IntArray]] = {}
        for f in fields:
            rows = first.get(LABELS + f)
            if rows is None:
                names, local = [MISSING], np.zeros(inner_keys.shape[0], dtype=np.int64)
            else:
                distinct, at = np.unique(rows.keys, return_index=True)  # each document's first value
                pos = np.minimum(np.searchsorted(distinct, inner_keys), max(distinct.shape[0] - 1, 0))
                hit = distinct[pos] == inner_keys if distinct.shape[0] else np.zeros(inner_keys.shape[0], dtype=bool)
                names = [*rows.names, MISSING]
                local = np.where(hit, rows.type_index[at][pos] if at.shape[0] else 0, len(names) - 1)
            present, where = np.unique(local, return_index=True)
            order = present[np.argsort(where, kind="stable")]
            values.append(list(dict.fromkeys(names[c] for c in order.tolist())))
            names_of[f] = (names, local)
        groups = []
        for grouping, g in self.by_field.named:
            names, local = names_of[g.field]
            groups.append(([group_name(grouping, n) for n in names], local))
        for r in results:
            trimmed = {}
            for name, rows in r.buckets.items():
                if name.startswith(LABELS):
                    kept = ~np.isin(rows.keys, inner_keys)
                    rows = TypeRows(rows.keys[kept], rows.type_index[kept], rows.names, rows.stats[kept])
                trimmed[name] = rows
            r.buckets = trimmed
        return values, groups

    def __call__(self, items: tuple[Numbered, ...]) -> tuple[tuple[PartResult, ...], _Inner | None]:
        results: tuple[PartResult, ...] = self.together(items)
        docs = [r.docs for r in results]
        first = docs[0]
        if first is None or first.keys.shape[0] <= 2:
            return results, None
        ends = first.keys[[0, -1]]
        grouped = first.type_rows is not None
        pairing = _Groups(len(docs))
        taken: list[_GroupRows] = []
        for k, d in enumerate(docs):
            if d is None or (d.type_rows is not None) != grouped or not np.array_equal(d.keys, first.keys):
                return results, None  # the evaluating process says what is wrong
            if d.type_rows is not None:
                rows = d.type_rows
                inner = (rows.keys != ends[0]) & (rows.keys != ends[1])
                gids = pairing.name(k, rows.names)[rows.type_index]
                taken.append((rows.keys[inner], gids[inner], rows.stats[inner]))
        values: list[list[str]] | None = None
        by_name: set[str] = set()
        if self.by_field is not None:
            inner_keys = first.keys[1:-1]
            values, named = self._labelled(results, inner_keys)
            for k, d in enumerate(docs):
                assert d is not None
                pieces = [taken[k]] if grouped else []  # one block of rows per system (``_Groups.tabled``)
                for group_names, local in named:
                    by_name.update(group_names)
                    pieces.append((inner_keys, pairing.name(k, group_names)[local], _narrowest(d.stats[1:-1])))
                block_rows = (
                    np.concatenate([p[0] for p in pieces]),
                    np.concatenate([p[1] for p in pieces]),
                    np.concatenate([p[2] for p in pieces]),
                )
                if grouped:
                    taken[k] = block_rows
                else:
                    taken.append(block_rows)
        fields = _joint_fields([d.fields for d in docs if d is not None])
        joint = Histogram.of(np.hstack([d.stats[1:-1] for d in docs if d is not None]), fields)
        block = _Groups.tabled(taken, fields) if taken else None
        names = {i: n for n, i in pairing.ids.items()}
        # Split here, where the chunk is counted: each group's rows go back as its histogram.
        per_group = {} if block is None else GroupBlock(tuple(names[i] for i in range(len(names))), block).split()
        # Sent back compact (``engines.paired.shipped``), merged as they come by ``JointRows``.
        joint = shipped(joint, self.home)
        per_group = {n: shipped(h, self.home) for n, h in per_group.items()}
        by_field = None
        if values is not None:
            by_field = _FieldInner(values, {n: h for n, h in per_group.items() if n in by_name})
            per_group = {n: h for n, h in per_group.items() if n not in by_name}
        for r, d in zip(results, docs, strict=True):
            assert d is not None
            edge = np.array([0, d.keys.shape[0] - 1])
            cut = d.type_rows
            if cut is not None:
                kept = (cut.keys == ends[0]) | (cut.keys == ends[1])
                cut = TypeRows(cut.keys[kept], cut.type_index[kept], cut.names, cut.stats[kept])
            ids = None if d.ids is None else [d.ids[0], d.ids[-1]]
            r.docs = DocCounts(d.keys[edge], d.stats[edge], d.fields, ids, d.unit, cut)
        return results, _Inner(joint, per_group, by_field)


def run_grouped(
    counters: Sequence[GroupCounter], engine: Engine, names: Sequence[str], by_field: Any = None
) -> Grouped:
    """Every system's ``GroupCounter`` run by ``engine`` side by side: the documents every system
    has finished are paired and added to the corpus's joint histogram and each group's as they
    come, so the rows held are those of the chunks in flight, never the corpus's. ``by_field``:
    groupings by a document field (``analysis.breakdown.Groupings``, the counters
    ``LabelledCounter``s), each value a group."""
    if by_field is not None and not by_field.named:
        by_field = None
    # CoNLL systems of one reference: each chunk's reference read once for all of them (on Dask
    # too: one cluster counts every system, each task pairing its whole documents by field value).
    counters, together = counted_together(counters, engine)
    labels: Any = None
    if by_field is not None:
        from .breakdown import Labels, cut_documents

        fields = tuple(g.field for g in by_field.fields)
        labels = functools.partial(Labels, fields, pieces=cut_documents(counters[0].source))
    streams = [
        _Stream(
            iter(()) if together is not None else engine.results(c, None),
            Folder(examples=c.wanted.examples, totals=totals_of(c.wanted)),
            by_field=by_field, labels=None if labels is None else labels(),
        )
        for c in counters
    ]
    groups = _Groups(len(streams))
    joint: JointRows | None = None  # held in bytes where the counts fit (``engines.paired.JointRows``)

    def flush(below: int) -> None:
        nonlocal joint
        taken = [s.take(below) for s in streams]
        first_keys, _, first_ids, _ = taken[0]
        for name, (keys, _, ids, _) in zip(names[1:], taken[1:], strict=True):
            if not np.array_equal(keys, first_keys) or (ids is not None and first_ids is not None and ids != first_ids):
                raise OptionError(
                    f"{name} does not have the documents of {names[0]}: systems are compared document by"
                    " document against one reference"
                )
        if not first_keys.shape[0] or any(stats is None for _, stats, _, _ in taken):
            return
        fields = _joint_fields([s.fields or () for s in streams])
        block = Histogram.of(np.hstack([stats for _, stats, _, _ in taken if stats is not None]), fields)
        if joint is None:
            joint = JointRows()
        # The joint rows are wide (every system's columns): merged sooner than ``pile`` would.
        _release_after(joint, block)
        groups.add([t[3] for t in taken], fields)

    if together is not None:
        # With groupings by a document field, the documents whole in a chunk are paired there too
        # (their values are known there); a cut document's rows, and its value, come here.
        joined = _JoinedGroups(together, by_field)
        mapped: Iterator[tuple[tuple[PartResult, ...], _Inner | None]] = map_together(engine, joined, counters[0])
        for results, sent in mapped:
            # As it came (``engines.paired.shipped``): every histogram is merged by a ``JointRows``,
            # which keeps its rows in bytes where they fit, never widened to 16 bits.
            inner = sent
            for k, (s, part) in enumerate(zip(streams, results, strict=True)):
                mine = None
                if inner is not None and inner.by_field is not None:
                    mine = inner.by_field if k == 0 else replace(inner.by_field, hists={})
                s.add(part, groups, k, mine)
            if inner is not None:
                block = inner.joint
                if joint is None:
                    joint = JointRows()
                _release_after(joint, block)
                for name, hist in inner.per_group.items():
                    groups.hists.setdefault(groups.ids[name], _Pile(hist.fields)).add(hist)
                groups.fields = block.fields
            flush(min(s.bound for s in streams))
        for k, s in enumerate(streams):
            s.add(None, groups, k)
    while not all(s.done for s in streams):
        k = min(range(len(streams)), key=lambda j: (streams[j].done, streams[j].bound))
        streams[k].pull(groups, k)
        flush(min(s.bound for s in streams))
    flush(np.iinfo(np.int64).max)
    for s in streams:
        s.check_fields()
    totals = [s.folder.total() for s in streams]
    unit = next((s.unit for s in streams if s.unit is not None), "document")
    # The corpus's joint histogram in bytes too: its readers (the paired tests, each system's
    # state) make 16-bit histograms of its columns, the same numbers.
    whole = None if joint is None else joint.histogram(in_bytes=True)
    whole = None if whole is None else in_bytes(whole)
    return Grouped(totals, whole, unit, groups.finished(0 if whole is None else whole.documents))


def _column_total(hist: Histogram, name: str) -> int:
    """``hist.total()`` of the column ``name`` alone: the whole total widens every row to 64 bits
    at once (``counts @ rows``), eight times a 16-bit histogram's bytes."""
    column = hist.rows[:, hist.fields.index(name)].astype(np.int64)
    return int(hist.counts @ column) + sum(_column_total(h, name) for h in hist.pending)


def compare_groups(
    groups: Sequence[tuple[str, Histogram]],
    names: list[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling,
    beta: float = 1.0,
) -> list[dict[str, Any]]:
    """Per group of rows (a bucket, a type) given as its joint histogram (``run_grouped``,
    ``joint_groups``), each system's scores with intervals and each system against the first:
    the difference, its paired-bootstrap interval and both p-values (``significance.compare``)."""
    options: dict[str, Any] = {"zero_division": zero_division, "credit": credit, "resampling": resampling, "beta": beta}
    return compare_groupings(None, {"": list(groups)}, names, **options)[1][""]


def compare_groupings(
    joint: Histogram | None,
    groupings: Mapping[str, list[tuple[str, Histogram]]],
    names: list[str],
    *,
    zero_division: float,
    credit: str,
    resampling: Resampling,
    beta: float = 1.0,
    consume: bool = False,
) -> tuple[Comparison | None, dict[str, list[dict[str, Any]]]]:
    """The corpus's paired comparison (``joint``, where given) and ``compare_groups`` of every
    grouping's groups, all from one ``compare_histograms`` call: every histogram's resamples
    drawn in one pass and scored together. Each histogram's draws come from generators of its
    own blocks (``compare_histograms``), so the numbers are those of one call per histogram.

    With ``consume``, every grouping's list is emptied and each group's histogram is let go as
    its tests are queued (its mention totals taken first): their bytes grow with the corpus."""
    every = [] if joint is None else [joint]
    every += [hist for groups in groupings.values() for _, hist in groups]
    predicted = [f"{k}:predicted" for k in range(len(names))]
    mentions = {
        grouping: [
            (label, [_column_total(hist, name) for name in ("0:reference", *predicted)])
            for label, hist in groups
        ]
        for grouping, groups in groupings.items()
    }
    if consume:
        for groups in groupings.values():
            groups.clear()
    options: dict[str, Any] = {"zero_division": zero_division, "credit": credit, "resampling": resampling, "beta": beta}
    release_freed_memory()  # what the pairing freed: the draws fault in only what they use
    tested = iter(compare_histograms(every, names, **options, consume=consume))
    whole = None if joint is None else next(tested)
    out: dict[str, list[dict[str, Any]]] = {}
    for grouping, found in mentions.items():
        out[grouping] = []
        for (label, (reference, *counted)), tests in zip(found, tested, strict=False):
            out[grouping].append(
                {
                    "bucket": label,
                    "reference_mentions": reference,
                    "systems": [
                        {"name": n, "predicted_mentions": p, "metrics": m}
                        for n, p, m in zip(names, counted, tests.intervals, strict=True)
                    ],
                    "comparisons": tests.comparisons,
                }
            )
    return whole, out
