"""Work of the bucket comparison's count done once where it was done per bucket or per system:
each bucket's totals summed as the table of its (document, bucket) groups is counted (one
bincount under each group's bucket, not each bucket's rows picked out of the table and summed),
and the reference's buckets assigned once for every system counted against it (a mention's
bucket reads only its own side). Both give what the old order of work gave, on random chunks
and on BTC's test split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import btc_runs  # noqa: F401  (the fixture)

from spanscore.io.reading import Reading
from spanscore.io.sources import open_source, train_index
from spanscore.stages import buckets as attributes
from spanscore.stages.counts import Groups, Options, count_grouped, group_fields
from spanscore.stages.criteria import CRITERIA
from spanscore.stages.documents import scored_columns
from spanscore.stages.parts import count_twins_apart
from spanscore.stages.scoring import TypeSelection
from spanscore.stages.spans import Spans

TYPES = ("LOC", "ORG", "PER")
FIELDS = group_fields(tuple(c.name for c in CRITERIA))
CREDITS: tuple[Any, ...] = (0.5, "dice", "iou", 0.25, 1.0)


def _random_spans(rng: np.random.Generator, n: int, units: int, nested: bool) -> Spans:
    unit = np.sort(rng.integers(0, units, n))
    start = unit * 40 + rng.integers(0, 30, n)
    end = start + rng.integers(1, 9 if nested else 3, n)
    if not nested:
        keep = np.concatenate(([True], start[1:] >= end[:-1]))
        unit, start, end = unit[keep], start[keep], end[keep]
    return Spans.build(start, end, rng.integers(0, 3, start.shape[0]), unit, TYPES)


def _ranked(ref_doc: Any, pred_doc: Any, ref_bucket: Any, pred_bucket: Any, docs: int, n: int) -> Groups:
    """(document, bucket) groups numbered over the pairs with a mention, as a chunk's count makes
    them: each group's bucket in ``inner_of``."""
    ref_key, pred_key = ref_doc * n + ref_bucket, pred_doc * n + pred_bucket
    seen = np.zeros(max(docs, 1) * n, dtype=bool)
    seen[ref_key] = seen[pred_key] = True
    keys = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    return Groups(rank[ref_key], rank[pred_key], int(keys.shape[0]), n, keys % n)


@pytest.mark.parametrize("seed", range(16))
def test_bucket_totals_are_the_tables_rows_summed_per_bucket(seed: int) -> None:
    rng = np.random.default_rng(seed)
    units, nested = int(rng.integers(1, 30)), seed % 2 == 1
    ref = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    pred = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    options = Options(credit=CREDITS[seed % len(CREDITS)], min_overlap=0.3 if seed % 7 == 6 else 0.0)
    # Lengths cut at 3 (a bucket may hold no mention at all), and a random bucket of 3.
    length = [np.minimum(s.end - s.start - 1, 3) for s in (ref, pred)]
    other = [rng.integers(0, 3, len(s)) for s in (ref, pred)]
    groupings = (
        _ranked(ref.unit, pred.unit, length[0], length[1], units, 4),
        _ranked(ref.unit, pred.unit, other[0], other[1], units, 3),
    )
    columns = scored_columns(FIELDS, scaled=isinstance(options.credit, str))
    for more in (groupings, groupings[:1], groupings[1:]):
        got = count_grouped(ref, pred, options, more_groups=more, group_columns=columns)
        for g, table, totals in zip(more, got.more_groups, got.more_totals, strict=True):
            assert totals is not None and g.inner_of is not None
            assert totals.shape == (g.inner, len(FIELDS))
            # The old order of work: each bucket's rows picked out of the table and summed.
            for k in range(g.inner):
                assert np.array_equal(totals[k, columns], table[g.inner_of == k].sum(axis=0)), (seed, k)
            # Every column of each bucket, as the table of every statistic per bucket alone has it.
            alone = Groups(g.inner_of[g.reference], g.inner_of[g.predicted], g.inner)
            whole = count_grouped(ref, pred, options, more_groups=(alone,)).more_groups[0]
            assert np.array_equal(totals, whole), seed


@pytest.mark.parametrize("seed", range(16))
def test_documents_rows_are_their_rows_per_type_summed(seed: int) -> None:
    """Each document's row summed from its (document, type) rows as they are counted, twins
    (mentions matched by an identical one) added by their share, is the table's rows summed per
    document afterwards (the old order of work), and the table per document counted apart."""
    rng = np.random.default_rng(50 + seed)
    units, nested = int(rng.integers(1, 30)), seed % 2 == 1
    ref = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    pred = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    if seed % 3 == 0 and len(ref):  # many exact twins, as in a real prediction
        pred = ref.select(rng.random(len(ref)) < 0.8)
    options = Options(credit=CREDITS[seed % len(CREDITS)], min_overlap=0.3 if seed % 7 == 6 else 0.0)
    columns = scored_columns(FIELDS, scaled=isinstance(options.credit, str))
    docs = units + int(rng.integers(0, 3))  # documents past the last mention: zero rows
    ref_key, pred_key = ref.unit * 3 + ref.type, pred.unit * 3 + pred.type
    seen = np.zeros(docs * 3, dtype=bool)
    seen[ref_key] = seen[pred_key] = True
    keys = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    types = Groups(rank[ref_key], rank[pred_key], int(keys.shape[0]))
    outer = (keys // 3, docs)
    by_doc = Groups(ref.unit, pred.unit, docs)
    apart = count_grouped(ref, pred, options, groups=by_doc, group_columns=columns).groups
    for count in (count_grouped, count_twins_apart):
        got: Any = count(ref, pred, options, type_groups=types, group_columns=columns, type_outer=outer)
        if count is count_twins_apart:
            got = got[0]
        assert got.type_outer is not None and got.type_outer.shape == (docs, len(columns))
        summed = np.zeros((docs, len(columns)), dtype=np.int64)
        np.add.at(summed, keys // 3, got.type_groups)
        assert np.array_equal(got.type_outer, summed), seed
        assert np.array_equal(got.type_outer, apart), seed
        plain = count(ref, pred, options, type_groups=types, group_columns=columns)
        plain = plain[0] if isinstance(plain, tuple) else plain
        assert plain.type_outer is None and np.array_equal(plain.type_groups, got.type_groups)


@pytest.fixture()
def fresh() -> Any:
    attributes._last_reference = None
    yield
    attributes._last_reference = None


def _chunks(runs: dict[str, Path], system: str) -> Any:
    source = open_source(runs["gold"], runs[system], Reading(), TypeSelection(), 1 << 30)
    return source.load(next(iter(source.parts())))


def test_reference_buckets_are_assigned_once_for_every_system(
    btc: Path,
    btc_runs: dict[str, Path],  # noqa: F811
    fresh: None,
) -> None:
    index = train_index(btc / "train.txt", Reading())
    assert index is not None
    a, b = _chunks(btc_runs, "a"), _chunks(btc_runs, "b")
    ref, text = a.reference, a.text
    wanted = (attributes.attribute("length"), attributes.attribute("seen"))
    # Each system alone, nothing remembered: the old order of work.
    expected = []
    for pred in (a.predicted, b.predicted):
        attributes._last_reference = None
        expected.append(attributes.assign(wanted, ref, pred, text, index))
    attributes._last_reference = None
    first = attributes.assign(wanted, ref, a.predicted, text, index)
    second = attributes.assign(wanted, ref, b.predicted, text, index)
    for got, want in zip((first, second), expected, strict=True):
        for (r, p), (wr, wp) in zip(got, want, strict=True):
            assert np.array_equal(r, wr) and np.array_equal(p, wp)
            assert r.shape == (len(ref),) and p.dtype == wp.dtype and r.dtype == wr.dtype
    # The second system reads the first's reference buckets, which nobody may write.
    assert all(r2 is r1 and not r1.flags.writeable for (r1, _), (r2, _) in zip(first, second, strict=True))
    # An equal reference of another chunk, other attributes or another index: assigned again.
    again = attributes.assign(wanted, b.reference, b.predicted, b.text, index)
    assert again[0][0] is not first[0][0] and np.array_equal(again[0][0], first[0][0])
    only = attributes.assign(wanted[:1], b.reference, b.predicted, b.text, index)
    assert only[0][0] is not again[0][0] and np.array_equal(only[0][0], again[0][0])
    other = train_index(btc / "test.txt", Reading())
    assert other is not None
    elsewhere = attributes.assign(wanted[1:], b.reference, b.predicted, b.text, other)
    attributes._last_reference = None
    assert np.array_equal(elsewhere[0][0], attributes.assign(wanted[1:], b.reference, b.predicted, b.text, other)[0][0])
    attributes.assign(wanted[1:], b.reference, b.predicted, b.text, index)
    assert attributes._last_reference is not None and attributes._last_reference[3] is index
