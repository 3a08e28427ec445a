"""Matched pairs and errors as rows: CSV text made where a chunk is counted, and examples.

A chunk's rows are rendered where the chunk is counted (a worker process, a Dask worker) as CSV
text around the sentence (or document) number, which only the process that folds the chunks in
corpus order knows: ``PartRows`` holds, per file, the text before that number, the chunk-local
number and the text after it. ``rows_text`` puts them together with the chunk's offset.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..counts import Details
from ..criteria import TAXONOMY, error_kind
from ..io.load import Text
from ..matching import FULL, PARTIAL, SAME_END, SAME_SPAN, SAME_START, ZERO, Matching, Pairs
from ..spans import Spans
from .common import CODE

SIDE_FIELDS = ("text", "type", "start", "end")
PAIR_TAIL = ("match", "credit", "relation", "context")
ERROR_TAIL = ("relation", "shared_boundary", "context")
RELATIONS = ("same", "longer", "shorter", "shifted")
LEVEL_NAMES = {FULL: "full", PARTIAL: "partial", ZERO: "none"}
ERRORS_FILE = "errors.csv"
TYPE5_FILE = "right_label_overlap.csv"
_SIDES = tuple(f"{side}_{f}" for side in ("reference", "predicted") for f in SIDE_FIELDS)


def pair_fields(unit_kind: str) -> list[str]:
    """Columns of a criterion's pair file: the keys of ``Report.pair_rows``."""
    return [unit_kind, *_SIDES, *PAIR_TAIL]


def error_fields(unit_kind: str) -> list[str]:
    return ["error", "code", unit_kind, *_SIDES, *ERROR_TAIL]


def _cached(text: Text) -> Text:
    """Rows come in position order, so consecutive rows mostly share a sentence: remember contexts."""
    return _CachedText(text) if not isinstance(text, _CachedText) else text


class _CachedText:
    def __init__(self, text: Text) -> None:
        self._text = text
        self.unit_kind = text.unit_kind
        self.context = functools.lru_cache(maxsize=1024)(text.context)
        self.mention = text.mention
        self.local = text.local


def _side(spans: Spans, text: Text, i: int) -> tuple[str, str, int, int]:
    start, end, unit = int(spans.start[i]), int(spans.end[i]), int(spans.unit[i])
    return (text.mention(start, end), spans.types[int(spans.type[i])], text.local(unit, start), text.local(unit, end))


def pair_values(details: Details, text: Text, criterion: str, *, scheme: bool = False) -> Iterator[tuple[Any, ...]]:
    """Every matched pair of a criterion (or SemEval scheme) in position order, as the values of
    ``pair_fields`` with the chunk-local unit first."""
    text = _cached(text)
    d = details
    m = (d.schemes if scheme else d.matchings)[criterion]
    rel = d.pairs.relation()
    ref_of, pred_of = d.pairs.ref, d.pairs.pred
    for k, level, credit in zip(m.pair.tolist(), m.level.tolist(), m.credit.tolist(), strict=True):
        r, p = int(ref_of[k]), int(pred_of[k])
        unit = int(d.reference.unit[r])
        yield (
            unit,
            *_side(d.reference, text, r),
            *_side(d.predicted, text, p),
            LEVEL_NAMES[level],
            credit,
            RELATIONS[int(rel[k])],
            text.context(unit),
        )


def _shared_boundary(kind: int) -> str:
    if (kind & SAME_SPAN) == SAME_SPAN:
        return "both"
    if kind & SAME_START:
        return "left"
    if kind & SAME_END:
        return "right"
    return "none"


def error_values(details: Details, text: Text) -> list[tuple[str, int, tuple[Any, ...]]]:
    """Every mention that is not correct under the error taxonomy (Nejadgholi et al. 2020), in
    position order: (error, chunk-local unit, the values after the unit column).

    The pairs come from the one-to-one matching that the taxonomy counts read, so the number of
    rows of each error equals its count in the JSON's ``errors``.
    """
    text = _cached(text)
    d = details
    m = d.schemes[TAXONOMY.name]
    kinds = d.pairs.kind[m.pair]
    relation = d.pairs.relation()[m.pair]
    empty: tuple[Any, ...] = ("", "", "", "")
    keyed: list[tuple[tuple[int, int, int], tuple[str, int, tuple[Any, ...]]]] = []
    for k, kind, rel in zip(m.pair.tolist(), kinds.tolist(), relation.tolist(), strict=True):
        error = error_kind(kind)
        if error is None:
            continue
        r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
        unit = int(d.reference.unit[r])
        values = (
            *_side(d.reference, text, r),
            *_side(d.predicted, text, p),
            RELATIONS[int(rel)],
            _shared_boundary(int(kind)),
            text.context(unit),
        )
        keyed.append(((unit, int(d.reference.start[r]), int(d.predicted.start[p])), (error, unit, values)))
    matched_r = np.zeros(len(d.reference), dtype=bool)
    matched_r[d.pairs.ref[m.pair]] = True
    matched_p = np.zeros(len(d.predicted), dtype=bool)
    matched_p[d.pairs.pred[m.pair]] = True
    for i in np.flatnonzero(~matched_p).tolist():
        unit, start = int(d.predicted.unit[i]), int(d.predicted.start[i])
        values: tuple[Any, ...] = (*empty, *_side(d.predicted, text, i), "", "", text.context(unit))
        keyed.append(((unit, start, start), ("false_positive", unit, values)))
    for i in np.flatnonzero(~matched_r).tolist():
        unit, start = int(d.reference.unit[i]), int(d.reference.start[i])
        values = (*_side(d.reference, text, i), *empty, "", "", text.context(unit))
        keyed.append(((unit, start, start), ("false_negative", unit, values)))
    keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]


@dataclass(frozen=True)
class KeptDetails:
    """A chunk's matching and text, kept for ``Report.pair_rows``; ``unit_offset`` numbers its units."""

    details: Details
    text: Text
    unit_offset: int


@dataclass
class RowFile:
    """The rows of one CSV file from one or more consecutive chunks."""

    head: list[str] = field(default_factory=list)  # CSV text before the unit column ("" for pair files)
    unit: list[int] = field(default_factory=list)  # chunk-local sentence or document number
    tail: list[str] = field(default_factory=list)  # CSV text after the unit column, line end included
    full: int = 0
    partial: int = 0
    partial_rows: list[dict[str, Any]] = field(default_factory=list)  # the first partial pairs, for the page

    def then(self, later: RowFile, offset: int, sample: int) -> RowFile:
        room = max(sample - len(self.partial_rows), 0)
        more = [dict(r, _unit=r["_unit"] + offset) for r in later.partial_rows[:room]]
        return RowFile(
            self.head + later.head,
            self.unit + [u + offset for u in later.unit],
            self.tail + later.tail,
            self.full + later.full,
            self.partial + later.partial,
            self.partial_rows + more,
        )


@dataclass
class PartRows:
    """Rendered rows of every report file of consecutive chunks; ``unit_ids`` name the units
    where the format gives them names."""

    files: dict[str, RowFile]
    unit_kind: str
    sample: int
    unit_ids: list[str] | None = None

    def then(self, later: PartRows, offset: int) -> PartRows:
        files = {name: f.then(later.files[name], offset, self.sample) for name, f in self.files.items()}
        ids = None if self.unit_ids is None or later.unit_ids is None else self.unit_ids + later.unit_ids
        return PartRows(files, self.unit_kind, self.sample, ids)


class _Line:
    """CSV text of one row, as the csv module writes it (the same quoting as csv.DictWriter)."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer, quoting=csv.QUOTE_MINIMAL)

    def __call__(self, values: Sequence[Any]) -> str:
        self.buffer.seek(0)
        self.buffer.truncate()
        self.writer.writerow(values)
        return self.buffer.getvalue()


def render_rows(
    details: Details, text: Text, criteria: Sequence[str], sample: int, unit_ids: Sequence[str] | None = None
) -> PartRows:
    """Every report row of one chunk: the pairs of each criterion, then the error files."""
    line = _Line()
    text = _cached(text)
    names = pair_fields(text.unit_kind)
    files: dict[str, RowFile] = {}
    for criterion in criteria:
        if criterion not in details.matchings:
            continue
        f = RowFile()
        for values in pair_values(details, text, criterion):
            f.head.append("")
            f.unit.append(values[0])
            f.tail.append("," + line(values[1:]))
            match = values[-4]
            if match == "full":
                f.full += 1
            elif match == "partial":
                f.partial += 1
                if len(f.partial_rows) < sample:
                    row = dict(zip(names, values, strict=True))
                    row["_unit"] = row.pop(text.unit_kind)
                    f.partial_rows.append(row)
        files[f"{criterion}.csv"] = f
    errors, type5 = RowFile(), RowFile()
    for error, unit, values in error_values(details, text):
        head = f"{error},{CODE[error]},"
        tail = "," + line(values)
        errors.head.append(head)
        errors.unit.append(unit)
        errors.tail.append(tail)
        if error == "right_label_overlap":
            type5.head.append(head)
            type5.unit.append(unit)
            type5.tail.append(tail)
    files[ERRORS_FILE] = errors
    files[TYPE5_FILE] = type5
    return PartRows(files, text.unit_kind, sample, None if unit_ids is None else list(unit_ids))


def rows_text(rows: RowFile, offset: int, unit_ids: Sequence[str] | None = None) -> str:
    """The CSV text of ``rows``, units numbered from ``offset`` (or named by ``unit_ids``)."""
    if unit_ids is None:
        return "".join([h + str(u + offset) + t for h, u, t in zip(rows.head, rows.unit, rows.tail, strict=True)])
    line = _Line()
    names = [line([unit_ids[u + offset]])[:-2] for u in rows.unit]
    return "".join([h + n + t for h, n, t in zip(rows.head, names, rows.tail, strict=True)])


def header_line(fields: Sequence[str]) -> str:
    return _Line()(fields)


def error_examples(
    m: Matching, pairs: Pairs, reference: Spans, predicted: Spans, text: Text, limit: int
) -> dict[str, list[dict[str, Any]]]:
    """The first ``limit`` examples of each error kind in position order, from the taxonomy's matching."""
    out: dict[str, list[dict[str, Any]]] = {
        "wrong_label_same_span": [],
        "wrong_label_overlap": [],
        "right_label_overlap": [],
    }

    def side(spans: Spans, i: int) -> dict[str, Any]:
        mention, typ, start, end = _side(spans, text, i)
        return {"text": mention, "type": typ, "start": start, "end": end}

    for k, kind in zip(m.pair.tolist(), pairs.kind[m.pair].tolist(), strict=True):
        error = error_kind(kind)
        if error is None or len(out[error]) >= limit:
            continue
        r, p = int(pairs.ref[k]), int(pairs.pred[k])
        out[error].append(
            {
                "reference": side(reference, r),
                "predicted": side(predicted, p),
                "context": text.context(int(reference.unit[r])),
            }
        )
    matched_r = np.zeros(len(reference), dtype=bool)
    matched_r[pairs.ref[m.pair]] = True
    matched_p = np.zeros(len(predicted), dtype=bool)
    matched_p[pairs.pred[m.pair]] = True
    out["false_positive"] = [
        {"predicted": side(predicted, i), "context": text.context(int(predicted.unit[i]))}
        for i in np.flatnonzero(~matched_p)[:limit].tolist()
    ]
    out["false_negative"] = [
        {"reference": side(reference, i), "context": text.context(int(reference.unit[i]))}
        for i in np.flatnonzero(~matched_r)[:limit].tolist()
    ]
    return out
