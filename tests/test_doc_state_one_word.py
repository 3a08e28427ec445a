"""A chunk's state made from one 64-bit word per (document, type) row (``_one_word_state``: the
word sorted with its type on top for the types' histograms, summed per document for the
documents') is the state made from the table of every document's row; where the fields it gave
a document's sum are too narrow, the check on the column totals sends the chunk the old way."""

from __future__ import annotations

import numpy as np
import pytest
from test_doc_state_of_type_rows import NAMES, _by_table, _chunk, _same_state

from spanscore.stages.documents import _MIX, DocState, TypeRows, _column_tops, _one_word_state, _word_groups


def _fields(width: int) -> tuple[str, ...]:
    return tuple(f"c{j}" for j in range(width))


def _skewed(rng: np.random.Generator, n_docs: int, width: int, top: int) -> tuple[np.ndarray, TypeRows]:
    """``_chunk``'s documents with a document's counts as they usually are: mostly 0 to 2, the
    largest value rare (so a document's sums mostly fit a bit more than its rows')."""
    present, rows = _chunk(rng, n_docs, width, top, twins=False)
    stats = np.minimum(rng.geometric(0.6, size=rows.stats.shape) - 1, top)
    stats[0] = top
    return present, TypeRows(rows.keys, rows.type_index, NAMES, np.asfortranarray(stats.astype(np.int64)))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(
    ("n_docs", "width", "top", "checked"),
    [
        (40, 6, 3, False),  # a document's sums fit the word outright
        (300, 12, 7, False),
        (300, 16, 7, True),  # the rows fit, their sums only with the spare bits shared out
        (500, 18, 5, True),
    ],
)
def test_one_word_state_is_the_state_of_the_documents_table(
    seed: int, n_docs: int, width: int, top: int, checked: bool
) -> None:
    rng = np.random.default_rng(seed)
    fields = _fields(width)
    present, rows = _chunk(rng, n_docs, width, top, twins=False)
    expected = _by_table(present, rows, fields)
    quick = _one_word_state(present, rows, fields, "document")
    if quick is None:
        # Only a document whose sum overflowed a field of the shared-out bits goes the old way.
        assert checked
    else:
        _same_state(quick, expected)
    _same_state(DocState.of_type_rows(present, rows, fields, "document"), expected)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(("width", "top"), [(13, 7), (14, 7), (16, 7)])
def test_sums_checked_against_the_column_totals(seed: int, width: int, top: int) -> None:
    """Rows whose sums fit the word only with the spare bits shared out: taken where no sum
    overflows, and the same state either way."""
    rng = np.random.default_rng(seed)
    fields = _fields(width)
    present, rows = _skewed(rng, 400, width, top)
    expected = _by_table(present, rows, fields)
    quick = _one_word_state(present, rows, fields, "document")
    # Thirteen or fourteen columns of three bits leave every field one spare bit at least, which
    # these sums fit; sixteen leave two fields without, which these sums overflow.
    assert (quick is not None) == (width < 16)
    if quick is not None:
        _same_state(quick, expected)
    _same_state(DocState.of_type_rows(present, rows, fields, "document"), expected)


def test_one_word_state_is_taken_for_the_usual_chunk() -> None:
    rng = np.random.default_rng(4)
    fields = _fields(12)
    present, rows = _chunk(rng, 400, 12, 7)
    quick = _one_word_state(present, rows, fields, "document")
    assert quick is not None
    _same_state(quick, _by_table(present, rows, fields))
    assert quick.closed.repeats == ((3, 1), (5, 1))
    assert quick.types is not None and all(h.repeats == ((3, 1), (5, 1)) for h in quick.types.values())


def _overflowing(value: int) -> tuple[np.ndarray, TypeRows]:
    """Sixteen columns of at most 7 (three bits a row), four types: the fourteen spare bits of
    the word widen the first fourteen columns, the last two keep three bits. Document 2 has two
    rows with ``value`` in the last column: 14 needs four bits."""
    width = 16
    keys, types, stats = [], [], []
    rng = np.random.default_rng(9)
    for d in range(1, 30):
        for t in (0, 1) if d == 2 else (int(rng.integers(0, 4)),):
            row = rng.integers(0, 8, size=width)
            row[-1] = value if d == 2 else int(rng.integers(0, 8))
            keys.append(d)
            types.append(t)
            stats.append(row)
    stats[0][:] = 7  # every column reaches 7 in some row (three bits), document 1's
    stats.insert(0, np.zeros(width, dtype=np.int64))
    keys.insert(0, 0)
    types.insert(0, 3)
    table = np.asfortranarray(np.array(stats, dtype=np.int64))
    return np.arange(31, dtype=np.int64), TypeRows(
        np.array(keys, dtype=np.int64), np.array(types, dtype=np.int64), NAMES, table
    )


def test_a_sum_that_overflows_its_field_is_caught_and_made_the_old_way() -> None:
    fields = _fields(16)
    present, rows = _overflowing(7)
    assert _one_word_state(present, rows, fields, "document") is None  # 7 + 7 does not fit three bits
    got = DocState.of_type_rows(present, rows, fields, "document")
    _same_state(got, _by_table(present, rows, fields))
    assert [14] in got.closed.rows[:, -1:].tolist()
    # The same chunk with sums that fit: taken, and the same state.
    present, rows = _overflowing(3)
    quick = _one_word_state(present, rows, fields, "document")
    assert quick is not None
    _same_state(quick, _by_table(present, rows, fields))


def test_rows_it_cannot_take_go_the_old_way() -> None:
    fields = _fields(6)
    rng = np.random.default_rng(2)
    present, rows = _chunk(rng, 50, 6, 3)
    assert _one_word_state(present, rows, fields, "document") is not None
    # A (document, type) pair twice (rows joined across a chunk boundary): not one per pair.
    twice = TypeRows(
        np.concatenate((rows.keys[:5], rows.keys[4:5], rows.keys[5:])),
        np.concatenate((rows.type_index[:5], rows.type_index[4:5], rows.type_index[5:])),
        NAMES,
        np.asfortranarray(np.concatenate((rows.stats[:5], rows.stats[4:5], rows.stats[5:]))),
    )
    assert _one_word_state(present, twice, fields, "document") is None
    # A negative count.
    negative = np.asfortranarray(rows.stats.copy())
    negative[len(negative) // 2, 0] = -1
    signed = TypeRows(rows.keys, rows.type_index, NAMES, negative)
    assert _one_word_state(present, signed, fields, "document") is None
    _same_state(DocState.of_type_rows(present, signed, fields, "document"), _by_table(present, signed, fields))
    # Rows too wide for one word: forty columns of up to 7.
    wide = _fields(40)
    present, rows = _chunk(rng, 50, 40, 7, twins=False)
    assert _one_word_state(present, rows, wide, "document") is None
    _same_state(DocState.of_type_rows(present, rows, wide, "document"), _by_table(present, rows, wide))


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 96, 1000, 1031])
def test_column_tops_in_blocks_are_each_columns_largest_value(dtype: type, n: int) -> None:
    rng = np.random.default_rng(n)
    stats = rng.integers(0, 1000, size=(n, 42)).astype(dtype)
    stats[rng.integers(0, n), 5] = 30000  # a largest value anywhere, the remainder's rows too
    stats[-1, 7] = 31000
    expected = stats.max(axis=0)
    got = _column_tops(stats)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(_column_tops(np.asfortranarray(stats)), expected)
    np.testing.assert_array_equal(_column_tops(stats[:, :0]), stats[:, :0].max(axis=0))


def _groups_by_unique(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, counts = np.unique(words, return_counts=True)
    return values, counts


def _colliding(rng: np.random.Generator, pairs: int) -> np.ndarray:
    """Distinct words whose 16-bit hashes fall in ``pairs`` shared runs, two or more a run."""
    words = rng.integers(0, 1 << 62, size=200_000, dtype=np.int64).astype(np.uint64)
    hashed = (words * _MIX) >> np.uint64(48)
    order = np.argsort(hashed, kind="stable")
    same = np.flatnonzero(hashed[order][1:] == hashed[order][:-1])[:pairs]
    chosen = np.unique(np.concatenate((words[order][same], words[order][same + 1])))
    assert np.unique((chosen * _MIX) >> np.uint64(48)).shape[0] < chosen.shape[0]
    return chosen


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    ("n", "distinct", "pairs"), [(1, 1, 0), (50, 3, 0), (8000, 700, 0), (8000, 700, 8), (4000, 3000, 0), (6000, 0, 900)]
)
def test_word_groups_are_the_distinct_words_in_order_and_their_counts(
    seed: int, n: int, distinct: int, pairs: int
) -> None:
    """Words grouped by a 16-bit hash: the distinct words ascending, their counts and one place
    of each, as a sort gives them, with hashes shared by two words (a few runs: sorted within;
    many: the words sorted whole) and many distinct words."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 1 << 62, size=max(distinct, 1), dtype=np.int64).astype(np.uint64)
    if pairs:
        pool = np.concatenate((pool[:distinct], _colliding(rng, pairs)))
    words = pool[rng.zipf(1.3, size=n) % pool.shape[0]]
    counts, firsts = _word_groups(words)
    values, expected = _groups_by_unique(words)
    np.testing.assert_array_equal(words[firsts], values)
    np.testing.assert_array_equal(counts, expected)
    assert counts.dtype == np.int64


def test_counts_whose_totals_reach_2_to_62_go_the_old_way() -> None:
    """Totals that 64-bit sums might not hold exactly are left to the table of sums."""
    fields = _fields(6)
    present, rows = _chunk(np.random.default_rng(8), 60, 6, 3)
    huge = np.asfortranarray(rows.stats.copy())
    huge[len(huge) // 2, 2] = 1 << 57  # times the rows, past 2^62
    wide = TypeRows(rows.keys, rows.type_index, NAMES, huge)
    assert _one_word_state(present, wide, fields, "document") is None
    _same_state(DocState.of_type_rows(present, wide, fields, "document"), _by_table(present, wide, fields))
    # Only one type: no bits for it, and every field still under 2^63.
    firsts = np.flatnonzero(np.concatenate(([True], rows.keys[1:] != rows.keys[:-1])))  # a row a document
    n = firsts.shape[0]
    one = TypeRows(rows.keys[firsts], np.zeros(n, dtype=np.int64), NAMES, np.asfortranarray(rows.stats[firsts]))
    keys = np.unique(one.keys)
    quick = _one_word_state(keys, one, fields, "document")
    assert quick is not None
    _same_state(quick, _by_table(keys, one, fields))
