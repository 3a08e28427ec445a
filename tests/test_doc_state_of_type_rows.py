"""A chunk's per-document state made straight from its rows per document and type
(``DocState.of_type_rows``: the documents' words summed, no table of their rows) is the state
``DocState.of`` makes from the table of every document's row, the sum of its rows per type."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.stages.documents import (
    _SUMMED_WORDS,
    DocCounts,
    DocState,
    Histogram,
    TypeRows,
    _repeated_columns,
    _summed_words,
)

NAMES = ("LOC", "MISC", "ORG", "PER")


def _chunk(
    rng: np.random.Generator, n_docs: int, width: int, top: int, *, mentionless: float = 0.2, twins: bool = True
) -> tuple[np.ndarray, TypeRows]:
    """Documents ``0..n_docs - 1`` (some present without a mention), a row per (document, type)
    with a mention, in document then type order, columns that repeat others and are always
    zero as a document's counts do."""
    present = np.flatnonzero(rng.random(n_docs + 3) < 0.9)[:n_docs].astype(np.int64)
    keys, types = [], []
    for d in present.tolist():
        if rng.random() < mentionless:
            continue
        held = np.flatnonzero(rng.random(len(NAMES)) < 0.5)
        for t in held.tolist():
            keys.append(d)
            types.append(t)
    n = len(keys)
    stats = rng.integers(0, top + 1, size=(n, width)) * (rng.random((n, width)) < 0.7)
    if twins and width >= 6:
        stats[:, 3] = stats[:, 1]  # a column that repeats an earlier one
        stats[:, 5] = stats[:, 1]
        stats[:, 4] = 0  # and one always zero
    # A chunk's table comes as the transpose of a row per column.
    table = np.asfortranarray(stats.astype(np.int64))
    return present, TypeRows(np.array(keys, dtype=np.int64), np.array(types, dtype=np.int64), NAMES, table)


def _by_table(present: np.ndarray, rows: TypeRows, fields: tuple[str, ...]) -> DocState:
    """``DocState.of`` the table of every document's row, summed here a row at a time."""
    table = np.zeros((present.shape[0], len(fields)), dtype=np.int64)
    index = {int(k): i for i, k in enumerate(present.tolist())}
    for k, row in zip(rows.keys.tolist(), rows.stats, strict=True):
        table[index[k]] += row
    return DocState.of(DocCounts(present, table, fields, None, "document", rows))


def _same_histogram(a: Histogram, b: Histogram) -> None:
    assert a.fields == b.fields
    assert a.rows.dtype == b.rows.dtype
    np.testing.assert_array_equal(a.rows, b.rows)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.counts.dtype == b.counts.dtype
    assert not a.pending and not b.pending


def _same_state(a: DocState, b: DocState) -> None:
    _same_histogram(a.closed, b.closed)
    assert a.types is not None and b.types is not None
    assert list(a.types) == list(b.types)
    for name in a.types:
        _same_histogram(a.types[name], b.types[name])
    np.testing.assert_array_equal(a.edges.keys, b.edges.keys)
    np.testing.assert_array_equal(a.edges.stats, b.edges.stats)
    assert a.edges.stats.dtype == b.edges.stats.dtype
    assert (a.edges.fields, a.edges.unit, a.edges.ids) == (b.edges.fields, b.edges.unit, b.edges.ids)
    ta, tb = a.edges.type_rows, b.edges.type_rows
    assert ta is not None and tb is not None
    for field in ("keys", "type_index", "stats"):
        np.testing.assert_array_equal(getattr(ta, field), getattr(tb, field))
    assert a.documents == b.documents


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("n_docs", "width", "top"), [(1, 6, 3), (2, 6, 3), (3, 6, 3), (40, 6, 5), (500, 12, 7)])
def test_the_state_from_rows_per_type_is_the_state_of_the_documents_table(
    seed: int, n_docs: int, width: int, top: int
) -> None:
    rng = np.random.default_rng(seed)
    fields = tuple(f"c{j}" for j in range(width))
    present, rows = _chunk(rng, n_docs, width, top)
    _same_state(DocState.of_type_rows(present, rows, fields, "document"), _by_table(present, rows, fields))


def test_fields_hold_a_document_sum_the_rows_alone_would_not() -> None:
    """Four types of one document at the column's largest value: the sum needs two more bits
    than any row (a field sized by the rows alone would carry into the next column)."""
    fields = ("a", "b", "c")
    keys = np.repeat(np.arange(6, dtype=np.int64), 4)
    types = np.tile(np.arange(4, dtype=np.int64), 6)
    stats = np.zeros((24, 3), dtype=np.int64)
    stats[:, 0] = 7
    stats[:, 1] = np.arange(24) % 8
    stats[:, 2] = 7 - stats[:, 1]
    rows = TypeRows(keys, types, NAMES, np.asfortranarray(stats))
    present = np.arange(6, dtype=np.int64)
    got = DocState.of_type_rows(present, rows, fields, "document")
    _same_state(got, _by_table(present, rows, fields))
    assert got.closed.rows[:, 0].tolist() == [28] * got.closed.rows.shape[0]


def test_rows_too_wide_for_the_words_take_the_table() -> None:
    """Columns whose sums need more than ``_SUMMED_WORDS`` words: the state is the same (made
    from the table of sums)."""
    rng = np.random.default_rng(7)
    width = 24
    fields = tuple(f"c{j}" for j in range(width))
    present, rows = _chunk(rng, 200, width, 1 << 12, mentionless=0.1, twins=False)
    words, _, _ = _summed_words(np.asarray(rows.stats[2:-2]), rows.keys[2:-2])
    assert words is None and width * 14 // 64 > _SUMMED_WORDS
    _same_state(DocState.of_type_rows(present, rows, fields, "document"), _by_table(present, rows, fields))


def test_repeated_columns_are_those_equal_to_an_earlier_column() -> None:
    table = np.asfortranarray(np.array([[1, 0, 1, 2, 1], [0, 0, 0, 1, 0], [3, 0, 3, 0, 2]], dtype=np.int64))
    tops = table.max(axis=0).tolist()
    # Column 4 has column 0's sum and largest value... not its rows: compared whole, kept.
    table[:, 4] = [1, 1, 2]
    assert _repeated_columns(table, table.max(axis=0).tolist()) == {2: 0}
    assert tops[1] == 0  # an always-zero column is never a repeat


def test_chunks_counted_with_intervals_give_the_table_path_state() -> None:
    """Through the count of real chunks: the state of every chunk of a corpus with documents is
    the one made from the documents' table."""
    from pathlib import Path

    from spanscore.io.reading import Reading
    from spanscore.io.sources import ConllSource
    from spanscore.stages.counts import Options
    from spanscore.stages.parts import Wanted, count_part
    from spanscore.stages.scoring import TypeSelection

    tags = ["B-LOC", "I-LOC", "B-PER", "B-ORG", "I-ORG", "B-MISC", "O", "O", "O"]
    rng = np.random.default_rng(3)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        gold, pred = Path(tmp) / "g.txt", Path(tmp) / "p.txt"
        g_lines, p_lines = [], []
        for doc in range(120):
            g_lines += ["-DOCSTART- O", ""]
            p_lines += ["-DOCSTART- O", ""]
            for _ in range(int(rng.integers(1, 6))):
                for t in range(int(rng.integers(2, 12))):
                    a = tags[int(rng.integers(len(tags)))]
                    b = a if rng.random() < 0.7 else tags[int(rng.integers(len(tags)))]
                    g_lines.append(f"w{doc}_{t} {a}")
                    p_lines.append(f"w{doc}_{t} {b}")
                g_lines.append("")
                p_lines.append("")
        gold.write_text("\n".join(g_lines) + "\n")
        pred.write_text("\n".join(p_lines) + "\n")
        source = ConllSource.open(gold, pred, Reading(), TypeSelection(), 2048)
        chunks = [source.load(part) for part in source.parts()]
    assert len(chunks) > 3
    wanted = Wanted(documents=True, document_types=True, histogram=True)
    plain = Wanted(documents=True, document_types=True)
    for data in chunks:
        state = count_part(data, Options(), wanted).state
        docs = count_part(data, Options(), plain).docs
        assert state is not None and docs is not None and docs.type_rows is not None
        scored = [docs.fields.index(f) for f in state.closed.fields]
        expected = DocState.of(docs.narrowed(scored))
        _same_state(state, expected)


def test_merges_leave_out_repeated_columns_only_where_every_part_repeats_them() -> None:
    """Histograms that know their repeated columns merge (pile, compact, with zeros) into the
    histogram of all their rows; a part without them (a few rows closed by a join) is checked,
    and a pair it breaks is no longer left out."""
    rng = np.random.default_rng(11)
    fields = ("a", "b", "c", "d")

    def block(n: int, same: bool) -> np.ndarray:
        rows = rng.integers(0, 4, size=(n, 4))
        rows[:, 2] = rows[:, 0]
        if same:
            rows[:, 3] = rows[:, 1]
        return rows

    known = [block(300, True) for _ in range(6)]
    loose = block(5, False)
    loose[0, 3] = loose[0, 1] + 1  # breaks (3, 1), keeps (2, 0)
    every = np.concatenate((*known, loose))
    pile = Histogram.of(known[0], fields, repeats=((2, 0), (3, 1)))
    for rows in known[1:]:
        pile = pile.pile(Histogram.of(rows, fields, repeats=((2, 0), (3, 1))))
    assert pile.repeats == ((2, 0), (3, 1))
    merged = pile.pile(Histogram.of(loose, fields)).compacted()
    assert merged.repeats == ((2, 0),)
    expected = Histogram.of(every, fields)
    _same_histogram(merged, expected)
    _same_histogram(merged.with_zeros(every.shape[0] + 3), expected.with_zeros(every.shape[0] + 3))
    assert merged.with_zeros(every.shape[0] + 3).repeats == ((2, 0),)
    # Parts that know none: nothing is left out, as before.
    assert Histogram.of(every, fields).merge(Histogram.of(loose, fields)).repeats is None


def test_a_run_of_chunks_folds_to_the_histograms_of_all_its_documents() -> None:
    """States made from rows per type (which know their repeated columns), joined chunk after
    chunk, finish as the histograms of every document's row and every (document, type) row."""
    rng = np.random.default_rng(5)
    width = 8
    fields = tuple(f"c{j}" for j in range(width))
    state = None
    offset = 0
    all_docs, all_types = [], []
    for _ in range(9):
        present, rows = _chunk(rng, 60, width, 3)
        # Chunks share a document at their boundary: each chunk's keys start at 0, its first
        # document the last one of the chunk before.
        piece = DocState.of_type_rows(present, rows, fields, "document")
        by_key: dict[int, np.ndarray] = {int(k) + offset: np.zeros(width, dtype=np.int64) for k in present}
        for k, t, row in zip(rows.keys.tolist(), rows.type_index.tolist(), rows.stats, strict=True):
            by_key[k + offset] += row
            all_types.append((k + offset, t, row))
        all_docs.append(by_key)
        state = piece if state is None else state.then(piece, offset)
        offset += int(present[-1])
    assert state is not None
    done = state.finished()
    docs: dict[int, np.ndarray] = {}
    for part in all_docs:
        for k, row in part.items():
            docs[k] = docs.get(k, np.zeros(width, dtype=np.int64)) + row
    _same_histogram(done.closed, Histogram.of(np.array(list(docs.values())), fields))
    pairs: dict[tuple[int, int], np.ndarray] = {}
    for k, t, row in all_types:
        pairs[k, t] = pairs.get((k, t), np.zeros(width, dtype=np.int64)) + row
    assert done.types is not None
    for t, name in enumerate(NAMES):
        mine = [row for (k, tt), row in pairs.items() if tt == t]
        if mine:
            _same_histogram(done.types[name], Histogram.of(np.array(mine), fields))


def test_a_chunk_whose_mentions_are_all_in_its_first_and_last_documents() -> None:
    """Every closed document is mentionless: one zero row holds them all."""
    fields = ("a", "b", "c")
    present = np.arange(5, dtype=np.int64)
    rows = TypeRows(
        np.array([0, 0, 4], dtype=np.int64),
        np.array([1, 2, 0], dtype=np.int64),
        NAMES,
        np.asfortranarray(np.array([[1, 0, 1], [2, 2, 0], [0, 3, 3]], dtype=np.int64)),
    )
    got = DocState.of_type_rows(present, rows, fields, "document")
    _same_state(got, _by_table(present, rows, fields))
    assert got.closed.rows.tolist() == [[0, 0, 0]] and got.closed.counts.tolist() == [3]
