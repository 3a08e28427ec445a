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
