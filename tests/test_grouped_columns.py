"""Per document and group, only the columns asked for are counted (``count_grouped``'s
``group_columns``): they are those columns of the table of every statistic, and each bucket's
totals of every column (the error taxonomy counted per bucket alone) are the whole table's summed
over documents. The whole table is itself checked against the per-type counts, and end to end
the buckets' totals (taxonomy included) are the same on every path that counts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.stages.counts import ERROR_FIELDS, Groups, Options, count_grouped, group_fields
from spanscore.stages.criteria import CRITERIA, SCHEMES
from spanscore.stages.documents import TypeRows, scored_columns
from spanscore.stages.spans import Spans

TYPES = ("LOC", "ORG", "PER")
FIELDS = group_fields(tuple(c.name for c in CRITERIA))
CREDITS: tuple[Any, ...] = (0.5, "dice", "iou", 0.25, 1.0)


def _random_spans(rng: np.random.Generator, n: int, units: int, nested: bool) -> Spans:
    unit = np.sort(rng.integers(0, units, n))
    start = unit * 40 + rng.integers(0, 30, n)
    end = start + rng.integers(1, 9 if nested else 3, n)
    if not nested:  # at most one mention per unit and position: disjoint within each side
        keep = np.concatenate(([True], start[1:] >= end[:-1]))
        unit, start, end = unit[keep], start[keep], end[keep]
    return Spans.build(start, end, rng.integers(0, 3, start.shape[0]), unit, TYPES)


def _case(seed: int) -> tuple[Spans, Spans, Options, int]:
    rng = np.random.default_rng(seed)
    units, nested = int(rng.integers(2, 30)), seed % 2 == 1
    ref = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    pred = _random_spans(rng, int(rng.integers(0, 90)), units, nested)
    options = Options(credit=CREDITS[seed % len(CREDITS)], min_overlap=0.3 if seed % 7 == 6 else 0.0)
    return ref, pred, options, units


def _bucket(spans: Spans, n: int) -> Any:
    """A bucket of each mention (its length, cut at ``n - 1``), as an attribute gives one."""
    return np.minimum(spans.end - spans.start - 1, n - 1)


@pytest.mark.parametrize("seed", range(14))
def test_group_columns_are_those_columns_of_the_whole_table(seed: int) -> None:
    """Per document, per document and type and per document and bucket, the narrowed tables are
    the chosen columns (the scored ones, or any other choice in any order) of the whole ones."""
    ref, pred, options, units = _case(seed)
    rng = np.random.default_rng(100 + seed)
    n = 4  # buckets
    docs = Groups(ref.unit, pred.unit, units)
    types = Groups(ref.unit * 3 + ref.type, pred.unit * 3 + pred.type, units * 3)
    buckets = Groups(ref.unit * n + _bucket(ref, n), pred.unit * n + _bucket(pred, n), units * n, n)
    whole = count_grouped(ref, pred, options, groups=docs, type_groups=types, more_groups=(buckets,))
    assert whole.groups is not None and whole.type_groups is not None
    assert whole.more_totals == ()  # totals come with the narrowed tables only
    picks = [
        scored_columns(FIELDS, scaled=isinstance(options.credit, str)),
        sorted(rng.choice(len(FIELDS), size=int(rng.integers(1, len(FIELDS))), replace=False).tolist()),
        [len(FIELDS) - 1, 3, 0, FIELDS.index("token.true_positive_predicted"), 1],
    ]
    for columns in picks:
        got = count_grouped(
            ref, pred, options, groups=docs, type_groups=types, more_groups=(buckets,), group_columns=columns
        )
        assert got.groups is not None and got.type_groups is not None
        assert got.groups.flags.c_contiguous and got.more_groups[0].flags.c_contiguous
        assert np.array_equal(got.groups, whole.groups[:, columns]), columns
        assert np.array_equal(got.type_groups, whole.type_groups[:, columns]), columns
        assert np.array_equal(got.more_groups[0], whole.more_groups[0][:, columns]), columns
        # Every column of each bucket, the error taxonomy and the unscored columns included.
        totals = got.more_totals[0]
        assert totals is not None and totals.shape == (n, len(FIELDS))
        assert np.array_equal(totals, whole.more_groups[0].reshape(units, n, len(FIELDS)).sum(axis=0))
        assert got.counts == whole.counts


@pytest.mark.parametrize("seed", range(14))
def test_type_columns_are_those_columns_of_the_whole_table(seed: int) -> None:
    """Per document and type with ``type_columns`` (the table as the transpose of a row per
    column), any choice of columns in any order is those columns of the whole table: the counts
    made by one bincount over group and column agree with each criterion's own tally."""
    ref, pred, options, units = _case(seed)
    rng = np.random.default_rng(200 + seed)
    types = Groups(ref.unit * 3 + ref.type, pred.unit * 3 + pred.type, units * 3)
    whole = count_grouped(ref, pred, options, type_groups=types)
    assert whole.type_groups is not None
    picks = [
        scored_columns(FIELDS, scaled=isinstance(options.credit, str)),
        scored_columns(FIELDS, scaled=False)[::-1],
        rng.permutation(len(FIELDS))[: int(rng.integers(1, len(FIELDS)))].tolist(),
        [],
    ]
    for columns in picks:
        got = count_grouped(ref, pred, options, type_groups=types, type_columns=columns).type_groups
        assert got is not None and got.shape == (units * 3, len(columns))
        assert got.T.flags.c_contiguous
        assert np.array_equal(got, whole.type_groups[:, columns]), columns


@pytest.mark.parametrize("seed", range(10))
def test_bucket_totals_are_the_buckets_counted_alone(seed: int) -> None:
    """Each bucket's totals from the narrowed count are the whole table of the buckets counted
    without documents, and its error taxonomy sums over buckets to the corpus's."""
    ref, pred, options, _ = _case(seed)
    n = 3
    alone = Groups(_bucket(ref, n), _bucket(pred, n), n)
    units = int(max(ref.unit.max(initial=0), pred.unit.max(initial=0))) + 1
    by_doc = Groups(ref.unit * n + _bucket(ref, n), pred.unit * n + _bucket(pred, n), units * n, n)
    want = count_grouped(ref, pred, options, more_groups=(alone,)).more_groups[0]
    columns = scored_columns(FIELDS, scaled=options.credit in ("dice", "iou"))
    got = count_grouped(ref, pred, options, more_groups=(by_doc,), group_columns=columns)
    totals = got.more_totals[0]
    assert totals is not None and np.array_equal(totals, want)
    errors = [FIELDS.index(f"errors.{e}") for e in ERROR_FIELDS]
    assert np.array_equal(totals[:, errors].sum(axis=0), got.counts.errors.sum(axis=1))


@pytest.mark.parametrize("seed", range(10))
def test_whole_table_by_type_is_the_counts(seed: int) -> None:
    """The table of every statistic, grouped by type alone, holds the per-type counts in
    ``group_fields``'s order (what the narrowed tables are checked against above)."""
    ref, pred, options, _ = _case(seed)
    got = count_grouped(ref, pred, options, type_groups=Groups(ref.type, pred.type, 3))
    table, counts = got.type_groups, got.counts.with_types(TYPES)
    assert table is not None
    expected = np.concatenate(
        (
            counts.reference[None, :],
            counts.predicted[None, :],
            *(counts.criteria[c.name] for c in CRITERIA),
            *(counts.schemes[s.name] for s in SCHEMES),
            counts.token,
            table.T[FIELDS.index("token.true_positive_predicted")][None, :],
            counts.errors,
        )
    ).T
    assert np.array_equal(table, expected)
    # A unit both sides cover with one type is that type's on either side.
    assert np.array_equal(table[:, FIELDS.index("token.true_positive_predicted")], counts.token[0])


@pytest.fixture(scope="module")
def corpus(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("grouped_columns")
    gold = sentences(btc / "test.txt")[:1200]
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


def _summed(rows: TypeRows) -> Any:
    return np.stack([rows.stats[rows.type_index == b].sum(axis=0) for b in range(len(rows.names))])


@pytest.mark.parametrize("credit", [0.5, "dice"])
def test_bucket_totals_alike_on_every_path(corpus: dict[str, Path], credit: Any) -> None:
    """The buckets' totals, error taxonomy included, are the same counted alone, with intervals
    (per document and bucket, narrowed) and by compare per type (jobs and chunks varied)."""
    common: dict[str, Any] = {"format": "conll", "buckets": ["length", "sentence-length"], "credit": credit}
    plain = spanscore.evaluate(reference=corpus["gold"], predicted=corpus["a"], **common)
    assert plain.bucket_rows is not None
    want = {name: _summed(rows) for name, rows in plain.bucket_rows.items()}
    assert all(rows.shape[1] == len(FIELDS) for rows in want.values())
    reports = [
        spanscore.evaluate(
            reference=corpus["gold"], predicted=corpus["a"], ci=0.95, resamples=50, chunk_bytes=20_000, jobs=2,
            **common,
        ),
        spanscore.compare(
            reference=corpus["gold"], systems=[corpus["a"], corpus["b"]], per_type=True, resamples=50, trials=50,
            jobs=1, **common,
        ).reports[0],
    ]
    for report in reports:
        assert report.bucket_rows is not None
        for name, rows in report.bucket_rows.items():
            assert rows.stats.shape[1] == len(FIELDS)
            assert np.array_equal(_summed(rows), want[name]), name
        assert report.buckets is not None and plain.buckets is not None
        for name, table in plain.buckets.items():
            for mine, theirs in zip(report.buckets[name], table, strict=True):
                assert mine["reference_mentions"] == theirs["reference_mentions"]
                for family in ("metrics", "semeval"):
                    for score, block in theirs[family].items():
                        assert {m: mine[family][score][m] for m in block} == block, (name, score)
