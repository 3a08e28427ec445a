"""The bytes report rows slice their mentions and sentences from: every token of a CoNLL chunk
followed by one space, whatever separates the columns (spaces, tabs), whichever column holds the
token, however the lines end (LF, CRLF, the last line without one), checked against the tokens
split out of the lines in Python."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spanscore.io.conll import parse_conll
from spanscore.io.load import ConllText

TOKEN = st.text(alphabet=st.sampled_from(list("ab,\"'é€🙂xyz0")), min_size=1, max_size=6)


@st.composite
def conll(draw: st.DrawFn) -> tuple[bytes, int, list[bytes]]:
    columns = draw(st.integers(2, 4))
    token_column = draw(st.integers(0, columns - 2))
    separator = draw(st.sampled_from(["\t", " ", "  "]))
    if separator != "\t":
        token_column = 0  # a space-separated file names its tokens in the first column
    end = draw(st.sampled_from(["\n", "\r\n"]))
    sentences = draw(st.lists(st.lists(TOKEN, min_size=1, max_size=5), min_size=1, max_size=5))
    lines: list[str] = []
    tokens: list[bytes] = []
    for k, sentence in enumerate(sentences):
        if k:
            lines.append("")
        for token in sentence:
            cells = [f"c{j}" for j in range(columns - 1)]
            cells.insert(token_column, token)
            cells[-1] = "O"
            lines.append(separator.join(cells))
            tokens.append(token.encode("utf-8"))
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    return text.encode("utf-8"), token_column, tokens


@settings(max_examples=150, deadline=None)
@given(conll())
def test_spaced_bytes_are_the_tokens_each_with_a_space(case: tuple[bytes, int, list[bytes]]) -> None:
    data, token_column, tokens = case
    table = parse_conll(data, "t.conll", token_column=token_column, hash_comments=False)
    got = ConllText(table, table.sentence_bounds).spaced_bytes()
    assert got is not None
    buffer, starts = got
    assert buffer.tobytes() == b"".join(t + b" " for t in tokens)
    want = np.cumsum([0] + [len(t) + 1 for t in tokens])
    assert starts.tolist() == want.tolist()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_pieces_split_out_at_once_are_the_slices(data: st.DataObject) -> None:
    """Mentions and sentences cut from the spaced tokens: gathered and split on NUL bytes, or one
    slice each where the text holds a NUL; empty pieces, pieces at the end, tokens with commas,
    quotes and wide characters alike."""
    from spanscore.stages.pairs import _Source

    words = data.draw(st.lists(TOKEN | st.just("a\0b"), min_size=1, max_size=12))
    joined = b"".join(w.encode("utf-8") + b" " for w in words)
    starts = np.cumsum([0] + [len(w.encode("utf-8")) + 1 for w in words])
    n = len(words)
    spans = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=10))
    start = np.array([min(a, b) for a, b in spans], dtype=np.int64)
    end = np.array([max(a, b) for a, b in spans], dtype=np.int64)
    source = _Source(joined, starts, np.array([0, n], dtype=np.int64))
    want = [b" ".join(w.encode("utf-8") for w in words[a:b]) for a, b in zip(start.tolist(), end.tolist(), strict=True)]
    assert source.slices(start, end) == want
    assert source.contexts() == [b" ".join(w.encode("utf-8") for w in words)]
