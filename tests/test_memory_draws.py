"""The working arrays of the bootstrap's draws keep one size whatever the corpus, and cutting them
so changes no number.

A resample's top-up of single draws grows with the square root of the documents, and a block's
Poisson lookups with its rows, so the draws take them in pieces of a fixed size
(``TOP_UP_PIECE``, ``LOOKUP_CELLS``); column totals are summed a block of rows at a time
(``TOTAL_ROWS``); a family's rows stay in the histogram's narrow integers. Checked here: the
premise (numpy's generator gives the same numbers however its calls are cut), the sizes every
call asks of the generator, and the same counts, totals, intervals and p-values with pieces of
any size. Sizes of arrays only: memory is measured by bench/scale_bench.py, never timed here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import _Sampler, column_totals
from spanscore.stages.documents import Histogram

# Pieces so large that every call is one piece again, as before the draws were cut.
WHOLE = {"TOP_UP_PIECE": 1 << 40, "LOOKUP_CELLS": 1 << 40, "TOTAL_ROWS": 1 << 40}
TINY = {"TOP_UP_PIECE": 7, "LOOKUP_CELLS": 5, "TOTAL_ROWS": 3}


class Recorder:
    """A generator that notes how many numbers each call of ``integers`` asks for."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.sizes = rng, []

    def integers(self, *args: Any, size: Any = None, **kwargs: Any) -> Any:
        self.sizes.append(int(np.prod(size)))
        return self.rng.integers(*args, size=size, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rng, name)


def with_pieces(monkeypatch: pytest.MonkeyPatch, pieces: dict[str, int]) -> None:
    for name, value in pieces.items():
        monkeypatch.setattr(significance, name, value)


@pytest.mark.parametrize("high", [3, 1000, 999_983, 3_000_000_000, 1 << 40])
def test_the_generators_numbers_do_not_depend_on_how_its_calls_are_cut(high: int) -> None:
    whole = np.random.default_rng(5).integers(0, high, size=50_001)
    rng = np.random.default_rng(5)
    cut = np.concatenate([rng.integers(0, high, size=s) for s in (1, 16_666, 0, 7, 33_327)])
    assert np.array_equal(whole, cut)
    words = np.random.default_rng(6).integers(0, 1 << 64, size=(300, 7), dtype=np.uint64)
    rng = np.random.default_rng(6)
    rows = np.concatenate([rng.integers(0, 1 << 64, size=(s, 7), dtype=np.uint64) for s in (13, 0, 287)])
    assert np.array_equal(words, rows)


def big_counts() -> np.ndarray:
    # About 2.4 million documents: a top-up of some 3,000 single draws a resample, 256 resamples
    # a block, and 300 rows whose Poisson counts are looked up.
    rng = np.random.default_rng(11)
    return np.concatenate(([1, 1, 2, 2_000_000], rng.integers(3, 2_500, size=300))).astype(np.int64)


@pytest.mark.parametrize("big_share", [False, True])
def test_the_draws_ask_the_generator_for_pieces_of_a_fixed_size(
    monkeypatch: pytest.MonkeyPatch, big_share: bool
) -> None:
    counts = big_counts() if big_share else big_counts()[4:]
    sampler = _Sampler(counts)
    assert bool(sampler.big_share) == big_share and sampler.looked_up > 0
    rng = Recorder(np.random.default_rng(3))
    size = sampler.plan(1000)[0]
    got = sampler._common(rng, np.full(size, sampler.n))  # type: ignore[arg-type]
    cap = max(significance.TOP_UP_PIECE, significance.LOOKUP_CELLS)
    assert max(rng.sizes) <= cap
    # More was drawn than one piece holds: the pieces were used.
    assert sum(rng.sizes) > 2 * cap
    with_pieces(monkeypatch, WHOLE)
    whole = sampler._common(np.random.default_rng(3), np.full(size, sampler.n))
    assert np.array_equal(got, whole)
    assert np.array_equal(got.sum(axis=1), np.full(size, sampler.n))


def test_looked_up_counts_are_written_into_a_callers_table(monkeypatch: pytest.MonkeyPatch) -> None:
    sampler = _Sampler(big_counts()[4:])
    tables, columns = sampler._poisson_tables()
    width, size = columns.tables.shape[0], 300
    assert 0 < width < sampler.share.shape[0]  # some rows looked up, the others numpy's
    whole = tables.draw(np.random.default_rng(1), columns, size)
    monkeypatch.setattr(significance, "LOOKUP_CELLS", 97)
    out = np.full((size, width + 3), -1, dtype=np.int64)
    tables.draw(np.random.default_rng(1), columns, size, out=out[:, 2:-1])
    assert np.array_equal(out[:, 2:-1], whole)
    assert (out[:, :2] == -1).all() and (out[:, -1] == -1).all()


@pytest.mark.parametrize("pieces", [TINY, {"TOP_UP_PIECE": 1, "LOOKUP_CELLS": 1, "TOTAL_ROWS": 1}])
def test_pieces_of_any_size_draw_the_same_counts(monkeypatch: pytest.MonkeyPatch, pieces: dict[str, int]) -> None:
    rng = np.random.default_rng(21)
    for trial in range(12):
        counts = rng.integers(1, 80, size=int(rng.integers(1, 120))).astype(np.int64)
        if trial % 3 == 0:
            counts[0] = 4000  # a row holding most documents: drawn first, by a binomial
        sampler = _Sampler(counts)
        wanted = sampler.n - rng.binomial(sampler.n, 0.2, size=19)
        with monkeypatch.context() as m:
            with_pieces(m, WHOLE)
            whole = sampler._common(np.random.default_rng([trial, 1]), wanted)
        with monkeypatch.context() as m:
            with_pieces(m, pieces)
            cut = sampler._common(np.random.default_rng([trial, 1]), wanted)
        assert np.array_equal(whole, cut)


def test_column_totals_are_the_float_product_of_the_whole_table(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    rows = rng.integers(-300, 30_000, size=(1001, 9)).astype(np.int16)
    counts = rng.integers(1, 100_000, size=1001).astype(np.int64)
    expected = counts.astype(np.float64) @ rows.astype(np.float64)
    for block in (1, 7, 1000, 1 << 20):
        monkeypatch.setattr(significance, "TOTAL_ROWS", block)
        got = column_totals(counts, rows)
        assert got.dtype == np.float64 and np.array_equal(got, expected)


def test_a_familys_rows_stay_narrow_and_its_floats_are_held_once() -> None:
    rng = np.random.default_rng(8)
    rows = rng.integers(0, 9, size=(400, 4))
    joint = Histogram.of(rows, ("0:a", "0:b", "1:a", "1:b"), rng.integers(1, 20, size=400).astype(np.int64))
    family = significance._Family("x", joint, [[0, 1], [2, 3]], [0, 1])
    assert family.rows.dtype == np.int16
    assert not hasattr(family, "distinct")
    rare, common = family.apart
    assert rare.shape[0] + common.shape[0] == family.rows.shape[0]
    delta = family.differences(1)
    # The differences are signed although the rows are narrow: every document's b - a.
    wide = family.rows.astype(np.int64)
    differ = wide[:, 2:] - wide[:, :2]
    moving = differ.any(axis=1)
    assert (delta.distinct < 0).any()
    assert int(delta.draws.counts.sum()) == int(family.counts[moving].sum())
    assert {tuple(r) for r in delta.distinct[:, delta.expand].astype(np.int64).tolist()} == {
        tuple(r) for r in differ[moving].tolist()
    }


def test_a_table_drawn_by_family_never_makes_its_whole_rows_floats() -> None:
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 5, size=(50, 6)).astype(np.int16)
    table = significance._Table(rows, np.ones(50, dtype=np.int64), tuple("abcdef"))
    assert "_columns" not in vars(table)
    assert table.distinct.dtype == np.float64 and "_columns" in vars(table)


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("memory")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


def test_intervals_and_paired_tests_are_the_same_with_tiny_pieces(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The quick counts (compare's and the intervals') draw their random words a piece of
    # ``LOOKUP_CELLS // width`` rows at a time (16 bits a count, then the open bins' 41): their
    # numbers are those of the constant, whatever the jobs or engine
    # (tests/test_compare_quick_counts.py rebuilds them piece by piece), so it is kept here.
    def results(compare_pieces: dict[str, int]) -> tuple[Any, Any]:
        ev = spanscore.evaluate(
            reference=runs["gold"], predicted=runs["a"], ci=0.95, resamples=300, seed=5,
            keep_details=False,
        )
        with monkeypatch.context() as m:
            with_pieces(m, compare_pieces)
            cmp = spanscore.compare(
                reference=runs["gold"], systems=[runs["a"], runs["b"]], resamples=300, trials=300, seed=5
            )
        return ev.intervals, cmp.to_dict()

    # The quick counts' pieces are cut by ``LOOKUP_CELLS`` (a constant: each piece's random words
    # come whole), so it stays, for the intervals' draws and compare's; the top-up's pieces and
    # the totals' blocks change nothing.
    kept = {"LOOKUP_CELLS": significance.LOOKUP_CELLS}
    with monkeypatch.context() as m:
        with_pieces(m, {**WHOLE, **kept})
        whole = results({**WHOLE, **kept})
    with_pieces(monkeypatch, {**TINY, **kept})
    assert results({**TINY, **kept}) == whole


def test_a_familys_last_block_lets_go_of_its_sampler_and_its_trials_tables() -> None:
    # Each family's sampler (its tables and bins) and each set of trials' tables and rows are
    # let go by the thread that draws their last block, not when the whole batch is drawn; the
    # draws are the same as a family's drawn without counting.
    rng = np.random.default_rng(6)
    rows = rng.integers(0, 6, size=(300, 4))
    joint = Histogram.of(rows, ("0:a", "0:b", "1:a", "1:b"), rng.integers(1, 30, size=300).astype(np.int64))
    family = significance._Family("x", joint, [[0, 1], [2, 3]], [0, 1])
    plain = significance._Family("x", joint, [[0, 1], [2, 3]], [0, 1])
    family.left.queued(3)
    for block in range(3):
        assert hasattr(family, "draws") and hasattr(family, "apart")
        got = family.resampled(np.random.default_rng(block), 20)
        assert np.array_equal(got, plain.resampled(np.random.default_rng(block), 20))
    assert not hasattr(family, "draws") and not hasattr(family, "apart")
    swaps, kept = family.differences(1), plain.differences(1)
    swaps.left.queued(2)
    for block in range(2):
        assert hasattr(swaps, "draws")
        got = swaps.trials(np.random.default_rng(block), 15)
        assert np.array_equal(got, kept.trials(np.random.default_rng(block), 15))
    assert not hasattr(swaps, "draws") and not hasattr(swaps, "ordered")
    swaps.drawn()
    family.drawn()
    assert not hasattr(family, "rows") and not hasattr(family, "counts")
