"""The tallies per group made cheaper for ``--ci``: the token counts per key against the general
``_token_counts`` (sides disjoint, nested, with sums too large for float64), the twins' share
added a slice of evenly spaced columns at a time, and a table per (document, type) with the
twins set apart against the general count whatever the columns asked for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from spanscore.stages import parts
from spanscore.stages.counts import Groups, Options, _token_counts, _TokenCounter, count_grouped, group_fields
from spanscore.stages.criteria import CRITERIA
from spanscore.stages.documents import scored_columns
from spanscore.stages.matching import find_pairs
from spanscore.stages.spans import Spans

TYPES = ("LOC", "ORG", "PER")
FIELDS = group_fields(tuple(c.name for c in CRITERIA))


def _spans(rng: np.random.Generator, n: int, units: int, nested: bool) -> Spans:
    unit = np.sort(rng.integers(0, units, n))
    start = unit * 40 + rng.integers(0, 30, n)
    end = start + rng.integers(1, 9 if nested else 3, n)
    if not nested:  # disjoint within each side
        keep = np.concatenate(([True], start[1:] >= end[:-1]))
        unit, start, end = unit[keep], start[keep], end[keep]
    kind: Any = rng.integers(0, 3, start.shape[0])
    return Spans.build(start, end, kind, unit, TYPES)


@pytest.mark.parametrize("seed", range(12))
def test_token_counts_per_key_are_the_general_ones(seed: int) -> None:
    """Under the types, under groups of units and under a key per mention, each side's own keys:
    ``_TokenCounter`` (what it reads found once) gives ``_token_counts``' rows, also where the
    lengths' sums are counted in two halves (as where they could reach 2^53), and for nested sides."""
    rng = np.random.default_rng(seed)
    nested, halves = seed % 3 == 1, seed % 3 == 2
    units = int(rng.integers(1, 20))
    ref = _spans(rng, int(rng.integers(0, 80)), units, nested)
    pred = _spans(rng, int(rng.integers(0, 80)), units, nested)
    pairs = find_pairs(ref, pred)
    counter = _TokenCounter(ref, pred, pairs)
    if halves:  # as where a sum could reach 2^53 (lengths of offsets far beyond any corpus's)
        counter.counts(ref.type, pred.type, len(TYPES))
        counter.exact = (False, False, False)
    keyings = [
        (ref.type, pred.type, len(TYPES)),
        (ref.unit * 3 + ref.type, pred.unit * 3 + pred.type, units * 3),
        (rng.integers(0, 5, len(ref)), rng.integers(0, 5, len(pred)), 5),
        (ref.type, pred.type, 0),
    ]
    for ref_key, pred_key, n in keyings:
        want = _token_counts(ref, pred, pairs, ref_key, pred_key, n)
        got = counter.counts(ref_key, pred_key, n)
        assert got.dtype == np.int64 and np.array_equal(got, want), (seed, n)


def test_runs_are_the_places_as_evenly_spaced_slices() -> None:
    rng = np.random.default_rng(0)
    cases = [(), (5,), (0, 1, 2, 4, 6, 8, 10), (3, 4, 5, 9), (0, 2, 4, 6, 38, 39, 40, 41)]
    cases += [tuple(rng.choice(50, int(rng.integers(1, 30)), replace=False).tolist()) for _ in range(30)]
    for places in cases:
        runs = parts._runs(places)
        covered = [j for run in runs for j in range(run.start, run.stop, run.step)]
        assert sorted(covered) == sorted(places)
        assert len(covered) == len(set(covered))
    # A twin's columns among the scored ones: two runs (reference, predicted, the first full
    # match; every other full match two columns on), and the token counts one run.
    scored = tuple(scored_columns(FIELDS, scaled=False))
    twin = parts._twin_columns(FIELDS, scored)
    assert len(parts._runs(twin[0] + twin[1])) == 2
    assert len(parts._runs(twin[2] + twin[3])) == 1


def _disjoint(rng: np.random.Generator, n: int, units: int) -> tuple[Any, Any, Any, Any]:
    """Starts, ends, types and units of ``n`` or fewer disjoint mentions in start order."""
    unit = np.sort(rng.integers(0, units, n))
    start = np.unique(unit * 40 + rng.integers(0, 30, n))
    unit = start // 40
    end = np.minimum(start + rng.integers(1, 4, start.shape[0]), np.append(start[1:], 1 << 40))
    return start, end, rng.integers(0, 3, start.shape[0]), unit


def _disjoint_case(seed: int) -> tuple[Spans, Spans, int]:
    """Disjoint sides, most of the reference's mentions copied into the prediction (twins), the
    others the prediction's own where they overlap none of the copies."""
    rng = np.random.default_rng(seed)
    units = int(rng.integers(2, 25))
    start, end, kind, unit = _disjoint(rng, int(rng.integers(5, 80)), units)
    ref = Spans.build(start, end, kind, unit, TYPES)
    keep = rng.random(start.shape[0]) < 0.7
    o_start, o_end, o_kind, o_unit = _disjoint(rng, int(rng.integers(0, 40)), units)
    taken = np.zeros(units * 40 + 40, dtype=bool)
    for a, b in zip(start[keep].tolist(), end[keep].tolist(), strict=True):
        taken[a:b] = True
    free = np.array([not taken[a:b].any() for a, b in zip(o_start.tolist(), o_end.tolist(), strict=True)], dtype=bool)
    p_start = np.concatenate((start[keep], o_start[free]))
    order = np.argsort(p_start, kind="stable")
    pred = Spans.build(
        p_start[order],
        np.concatenate((end[keep], o_end[free]))[order],
        np.concatenate((kind[keep], o_kind[free]))[order],
        np.concatenate((unit[keep], o_unit[free]))[order],
        TYPES,
    )
    return ref, pred, units


@pytest.mark.parametrize("seed", range(16))
def test_type_table_with_twins_apart_is_the_general_one(seed: int) -> None:
    """The table per (document, type) of ``count_part``'s ``--ci`` (scored columns, the transpose
    of a row per column; its documents summed per outer key; row-major), counted with the twins
    set apart (their share added a slice at a time), is the general count's, with buckets
    whose reference and prediction keys differ alongside."""
    ref, pred, units = _disjoint_case(seed)
    found = parts.twins(ref, pred)
    assert found is not None or len(ref) == 0 or len(pred) == 0
    scored = scored_columns(FIELDS, scaled=False)
    types = Groups(ref.unit * 3 + ref.type, pred.unit * 3 + pred.type, units * 3)
    n = 3
    buckets = Groups(
        ref.unit * n + np.minimum(ref.end - ref.start - 1, n - 1),
        pred.unit * n + (pred.start % n),
        units * n,
        n,
    )
    asks: list[dict[str, Any]] = [
        {"type_groups": types, "type_columns": scored},
        {"type_groups": types, "type_columns": scored[::-1]},
        {"type_groups": types, "group_columns": scored, "type_outer": (np.arange(units * 3) // 3, units)},
        {"type_groups": types, "group_columns": scored, "more_groups": (buckets,)},
        {"groups": Groups(ref.unit, pred.unit, units), "more_groups": (buckets,)},
        # ``compare``'s rows per document: the scored columns, row-major (a column at a time).
        {"groups": Groups(ref.unit, pred.unit, units), "group_columns": scored},
        {"groups": Groups(ref.unit, pred.unit, units), "group_columns": scored[::-1]},
    ]
    for ask in asks:
        apart, _, _ = parts.count_twins_apart(ref, pred, Options(), **ask)
        whole = count_grouped(ref, pred, Options(), **ask)
        for got, want in (
            (apart.type_groups, whole.type_groups),
            (apart.groups, whole.groups),
            (apart.type_outer, whole.type_outer),
            *zip(apart.more_groups, whole.more_groups, strict=True),
            *zip(apart.more_totals, whole.more_totals, strict=True),
        ):
            assert (got is None) == (want is None)
            if got is not None and want is not None:
                assert np.array_equal(got, want), (seed, sorted(ask))
        assert apart.counts == whole.counts


@pytest.mark.parametrize("seed", range(8))
def test_twins_share_is_the_same_whatever_the_tables_layout(seed: int) -> None:
    """The twins' share added to a row-major table (a column at a time) and to the same table
    laid out column-major (a slice of columns at a time) is one count per group and side, and
    one sum of lengths, in each column a twin adds to: checked against a count written here."""
    ref, pred, units = _disjoint_case(seed)
    found = parts.twins(ref, pred)
    if found is None:
        return
    ref_twin, pred_twin = found
    share = parts._TwinShare(ref, pred, ref_twin, pred_twin)
    scored = scored_columns(FIELDS, scaled=False)
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 50, (units, len(scored)))
    for g in (Groups(ref.unit, pred.unit, units), Groups((ref.unit + 1) % units, pred.unit, units)):
        want = start.copy()
        places = parts._twin_columns(FIELDS, tuple(scored))
        length = (ref.end - ref.start)[ref_twin]
        for j in range(len(scored)):
            ref_key, pred_key = g.reference[ref_twin], g.predicted[pred_twin]
            for at, key, weight in (
                (0, ref_key, 1), (1, pred_key, 1), (2, ref_key, length), (3, pred_key, length)
            ):  # fmt: skip
                if j in places[at]:
                    np.add.at(want[:, j], key, weight)
        row_major = start.copy()
        share.add(row_major, scored, g)
        column_major = np.asfortranarray(start)
        share.add(column_major, scored, g)
        assert row_major.strides[0] > row_major.strides[1] and column_major.strides[0] < column_major.strides[1]
        assert np.array_equal(row_major, want) and np.array_equal(column_major, want)
