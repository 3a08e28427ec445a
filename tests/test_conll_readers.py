"""The fast reader of usual CoNLL layouts against the general one, on generated files."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spanscore.errors import InputError
from spanscore.io.conll import Lines, _lines, _simple_lines, parse_conll

# Bytes that matter to line and field splitting, plus ordinary ones.
PIECES = ["a", "B-X", "I-X", "O", "#", "-DOCSTART-", " ", "  ", "\t", "\r", "\n", "\n\n", "é", "\x00"]


def both(data: bytes, delimiter: str) -> tuple[Lines | None, Lines]:
    buf = np.frombuffer(data, dtype=np.uint8)
    is_nl = buf == 10
    return _simple_lines(data, buf, is_nl, delimiter), _lines(buf, is_nl, delimiter)


def same_lines(a: Lines, b: Lines) -> None:
    assert np.array_equal(a.blank, b.blank)
    content = ~a.blank
    assert np.array_equal(a.n_fields[content], b.n_fields[content])
    assert np.array_equal(a.line_start[content], b.line_start[content])
    for i in np.flatnonzero(content).tolist():
        fa = range(int(a.first_field[i]), int(a.first_field[i] + a.n_fields[i]))
        fb = range(int(b.first_field[i]), int(b.first_field[i] + b.n_fields[i]))
        assert [(int(a.field_starts[k]), int(a.field_ends[k])) for k in fa] == [
            (int(b.field_starts[k]), int(b.field_ends[k])) for k in fb
        ]


def table_or_error(data: bytes, **kw: object) -> object:
    try:
        t = parse_conll(data, "x", **kw)  # type: ignore[arg-type]
    except InputError as exc:
        return str(exc)
    return (
        t.token_start.tolist(),
        t.token_end.tolist(),
        t.token_line.tolist(),
        t.sentence_bounds.tolist(),
        t.sentence_doc.tolist(),
        [(c.ids.tolist(), c.vocab) for c in t.columns],
        (t.n_documents, t.n_docstarts, t.n_columns),
    )


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=40), st.sampled_from(["tab", "whitespace"]))
@example(["a", " ", "O", "\n", " ", "\n"], "whitespace")
@example(["a", "\t", "O", "\n", " ", "\t", " ", "\n"], "tab")
def test_fast_reader_agrees_with_the_general_one(pieces: list[str], delimiter: str) -> None:
    data = "".join(pieces).encode() + b"\n"
    fast, general = both(data, delimiter)
    if fast is not None:
        same_lines(fast, general)


def usual_file(rows: list[list[str]], sep: str) -> bytes:
    return "".join(sep.join(r) + "\n" if r else "\n" for r in rows).encode()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.just([]),
            st.lists(st.sampled_from(["a", "#", "-DOCSTART-", "O", "B-X", "I-Y", "x y"]), min_size=1, max_size=4),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(["\t", " "]),
)
def test_usual_files_take_the_fast_reader_and_parse_alike(rows: list[list[str]], sep: str) -> None:
    """Files of the usual layout (with comments, -DOCSTART- and ragged lines) parse the same either way."""
    data = usual_file(rows, sep)
    delimiter = "tab" if sep == "\t" else "whitespace"
    fast, general = both(data, delimiter)
    if sep == "\t" or not any(" " in cell for r in rows for cell in r):
        assert fast is not None
    if fast is not None:
        same_lines(fast, general)
    # The whole table (or the error) is the same whichever reader produced the lines.
    got = table_or_error(data, delimiter=delimiter, columns=(-1,))
    assert got == general_table_or_error(data, delimiter=delimiter, columns=(-1,))


def general_table_or_error(data: bytes, **kw: object) -> object:
    """``table_or_error`` with neither fast reader: the general one alone."""
    import spanscore.io.conll as conll

    saved = conll._simple_lines, conll._usual_table
    conll._simple_lines = lambda *a, **k: None  # type: ignore[assignment]
    conll._usual_table = lambda *a, **k: None  # type: ignore[assignment]
    try:
        return table_or_error(data, **kw)
    finally:
        conll._simple_lines, conll._usual_table = saved


CLEAN_PIECES = ["a", "#", "-DOCSTART-", "-", "-x", "O", "B-X", "I-Y", "é", "#a"]
ROW_PIECES = [*CLEAN_PIECES, "x y", " b", "c ", "", "\x00", "B-\x00"]


def _rows(width: int) -> st.SearchStrategy[list[list[str]]]:
    """Rows of ``width`` cells and blank rows, with at most one odd row (of spaces, or ragged)."""
    row = st.lists(st.sampled_from(CLEAN_PIECES), min_size=width, max_size=width)
    odd = st.one_of(st.just([" "]), st.just([" ", " "]), st.lists(st.sampled_from(ROW_PIECES), min_size=1, max_size=4))
    rows = st.lists(st.one_of(st.just([]), row, row), min_size=1, max_size=30)
    return st.tuples(rows, st.one_of(st.none(), st.none(), st.none(), odd), st.integers(0, 30)).map(
        lambda t: t[0] if t[1] is None else [*t[0][: t[2]], t[1], *t[0][t[2] :]]
    )


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.integers(1, 4).flatmap(_rows),
        st.lists(
            st.one_of(
                st.just([]),
                st.just([" "]),
                st.just([" ", " "]),
                st.lists(st.sampled_from(ROW_PIECES), min_size=1, max_size=4),
            ),
            min_size=1,
            max_size=30,
        ),
    ),
    st.sampled_from(["\t", " ", "  "]),
    st.sampled_from(["auto", "tab", "whitespace"]),
    st.sampled_from([0, 1, -2]),
    st.sampled_from([(-1,), (1,), (-1, -2), (2,), ()]),
    st.sampled_from([None, True, False]),
    st.booleans(),
)
@example([["a", "O"], [], ["-DOCSTART-", "O"], [], ["b", "B-X"], ["c", "I-X"]], " ", "auto", 0, (-1,), None, True)
@example([["#", "O"], ["a", "O"]], "\t", "auto", 0, (-1,), None, True)
@example([["#", "O"], ["a", "O"]], "\t", "auto", 1, (-1,), None, True)
def test_the_usual_layout_reads_as_the_general_reader_does(
    rows: list[list[str]],
    sep: str,
    delimiter: str,
    token_column: int,
    columns: tuple[int, ...],
    hash_comments: bool | None,
    final_newline: bool,
) -> None:
    """The reader of the usual layout gives the general reader's table, or its error, on any file:
    -DOCSTART- lines, "#" lines, ragged or empty fields, lines of spaces, NUL bytes, any option."""
    data = usual_file(rows, sep)
    if not final_newline:
        data = data.rstrip(b"\n")
    kw = dict(
        delimiter=delimiter, token_column=token_column, columns=columns, hash_comments=hash_comments, allow_empty=True
    )
    assert table_or_error(data, **kw) == general_table_or_error(data, **kw)


def test_the_usual_layout_takes_the_usual_reader() -> None:
    from spanscore.io import conll

    data = b"-DOCSTART- O\n\na B-X\nb I-X\n\n#c O\n-d O\n"
    for sep in (b" ", b"\t"):
        buf = np.frombuffer(data.replace(b" ", sep), dtype=np.uint8)
        table = conll._usual_table(
            data.replace(b" ", sep), buf, "x", "tab" if sep == b"\t" else "whitespace", (-1,), 0, 0, False, None
        )
        assert table is not None
        assert table.sentence_bounds.tolist() == [0, 2, 4]
        assert table.token_line.tolist() == [3, 4, 6, 7]
        assert table.n_docstarts == 1 and table.sentence_docstarts is not None
        assert table.sentence_docstarts.tolist() == [1, 1]


@pytest.mark.parametrize(
    ("data", "delimiter"),
    [
        (b"a O\r\n", "whitespace"),  # CR line ends
        (b"a  O\n", "whitespace"),  # a run of spaces
        (b" a O\n", "whitespace"),  # leading space
        (b"a O \n", "whitespace"),  # trailing space
        (b"a\tO\n", "whitespace"),  # a tab in a space-separated file
        (b"\tO\n", "tab"),  # empty token
        (b"a\tO\n \t \n", "tab"),  # a line of spaces and tabs is blank
        (b"a\tO\n\t\n", "tab"),
    ],
)
def test_unusual_layouts_go_to_the_general_reader(data: bytes, delimiter: str) -> None:
    assert both(data, delimiter)[0] is None


@settings(max_examples=100, deadline=None)
@given(st.sets(st.integers(0, 2**64 - 1), min_size=1, max_size=300), st.data())
def test_label_key_lookup_finds_every_key(keys: set[int], data: st.DataObject) -> None:
    from spanscore.io import conll

    uniq = np.array(sorted(keys), dtype=np.uint64)
    idx = np.array(data.draw(st.lists(st.integers(0, len(uniq) - 1), max_size=50)), dtype=np.int64)
    assert np.array_equal(conll._find(uniq, uniq[idx]), idx)


def test_label_key_lookup_without_a_perfect_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    from spanscore.io import conll

    monkeypatch.setattr(conll, "_MULTIPLIERS", np.array([1], dtype=np.uint64))  # small keys all collide
    uniq = np.arange(10, dtype=np.uint64) * np.uint64(3)
    assert conll._find(uniq, uniq[::-1].copy()).tolist() == list(range(9, -1, -1))
    table = parse_conll(b"a B-X\nb I-X\nc O\n\nd B-Y\n", "x")
    assert [table.columns[0].vocab[i] for i in table.columns[0].ids] == ["B-X", "I-X", "O", "B-Y"]


def test_labels_first_seen_after_the_sample_get_ids() -> None:
    """Label ids come from the first 4096 labels, then from what that sample missed."""
    labels = ["O"] * 5000 + ["B-LATE", "I-LATE", "B-X" * 3, "O", "B-LATER"] + ["O"] * 10 + ["B-LATER"]
    data = "".join(f"t{i} {lab}\n" for i, lab in enumerate(labels)).encode()
    col = parse_conll(data, "x").columns[0]
    assert [col.vocab[i] for i in col.ids.tolist()] == labels
    assert len(set(col.vocab)) == len(col.vocab) == 5


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), max_size=40))
def test_sentence_starts_from_blank_lines(blank: list[bool]) -> None:
    """The first token of each sentence: a token line right after a blank line or at the start."""
    from spanscore.io.conll import _sentence_starts

    want, token = [], 0
    for i, is_blank in enumerate(blank):
        if not is_blank:
            if i == 0 or blank[i - 1]:
                want.append(token)
            token += 1
    assert _sentence_starts(np.array(blank, dtype=bool)).tolist() == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([b"a", b"\xc3", b"\xa9", b"\xe2\x82", b"\xff", "é".encode()]), min_size=1, max_size=3),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 6),
    st.integers(0, 6),
)
def test_a_mention_decodes_each_token_alone(pieces: list[list[bytes]], a: int, b: int) -> None:
    """A mention rendered on its own (error examples) is its tokens decoded one by one, invalid
    bytes replaced, joined by spaces: as when every token of the chunk is decoded at once."""
    from spanscore.io.load import ConllText

    tokens = [b"".join(p) for p in pieces]
    table = parse_conll(b"".join(t + b" O\n" for t in tokens), "x", encoding=None)
    a, b = min(a, len(tokens)), min(max(a, b), len(tokens))
    want = " ".join(t.decode("utf-8", errors="replace") for t in tokens[a:b])
    alone = ConllText(table, table.sentence_bounds)
    assert alone.mention(a, b) == want
    whole = ConllText(table, table.sentence_bounds)
    whole.joined()
    assert whole.mention(a, b) == want
