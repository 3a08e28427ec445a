"""Each unit's words for the report rows' context cells: split at once out of the chunk's spaced
tokens where the units follow one another with tokens, checked against joining each unit's
tokens in Python (units without tokens, tokens without bytes, NUL bytes, wide characters); and
the units' number cells, formatted at once, against ``str``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spanscore.stages.pairs import _numbers, _Source

TOKEN = st.text(alphabet=st.sampled_from(list("ab ,\"'é€🙂\0")), min_size=0, max_size=4)


def source_of(units: list[list[str]]) -> tuple[_Source, list[bytes]]:
    tokens = [t.encode("utf-8") for unit in units for t in unit]
    joined = b"".join(t + b" " for t in tokens)
    starts = np.cumsum([0] + [len(t) + 1 for t in tokens]).astype(np.int64)
    bounds = np.cumsum([0] + [len(unit) for unit in units]).astype(np.int64)
    want = [b" ".join(t.encode("utf-8") for t in unit) for unit in units]
    return _Source(joined, starts, bounds), want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(TOKEN, min_size=0, max_size=5), min_size=1, max_size=8))
def test_each_units_words_are_its_tokens_joined_by_spaces(units: list[list[str]]) -> None:
    source, want = source_of(units)
    assert source.contexts() == want
    assert source.contexts() == source.slices(source.bounds[:-1], source.bounds[1:])


def test_consecutive_units_are_split_without_a_gather() -> None:
    source, want = source_of([["a", "b"], ["", "c"], ["d"]])
    assert not source.nul
    assert source.contexts() == want == [b"a b", b" c", b"d"]


def test_a_unit_without_tokens_and_a_nul_take_the_slices() -> None:
    assert source_of([["a"], [], ["b"]])[0].contexts() == [b"a", b"", b"b"]
    assert source_of([["a\0"], ["b"]])[0].contexts() == [b"a\0", b"b"]


@given(st.integers(0, 10**15), st.integers(0, 300))
def test_unit_numbers_are_each_numbers_text_and_a_comma(first: int, n: int) -> None:
    assert _numbers(first, n) == [f"{k},".encode() for k in range(first, first + n)]
