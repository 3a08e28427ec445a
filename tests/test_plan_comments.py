"""Comment lines never change a score, wherever they sit and however the files are cut.

Generated pairs hold the same sentences, with comment lines (one or several; at the file's start,
after a -DOCSTART- line, before, inside or after a sentence's tokens, in a block of their own
between sentences, at the end) in the reference only, the prediction only, or both. Each pair is
scored whole, at chunk sizes from one byte to the whole file, read once as one process reads it
and as planned for several processes, and must give the score of the same pair with every comment
line taken out (an independent reading: no comment to cut around).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.io.conll_plan import _breaks, _free_lines, _Window
from spanscore.io.sources import ConllSource

# Comments with another number of fields than the two of a token line ("# O" would be the token "#").
COMMENTS = ["# sent_id = 3", "# source = x", "#", "# text a b"]
LABELS = ["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC"]

token = st.tuples(st.sampled_from(["a", "bb", "#", "-x", "Cc"]), st.sampled_from(LABELS), st.sampled_from(LABELS))
sentences = st.lists(st.lists(token, min_size=1, max_size=4), min_size=1, max_size=6)
comments = st.lists(st.sampled_from(COMMENTS), min_size=1, max_size=3)
# A comment run's place: where, and which side has it (0 the reference, 1 the prediction, 2 both).
SLOTS = ["start", "doc", "after-doc", "before", "inside", "after", "own", "end"]
places = st.lists(st.tuples(st.sampled_from(SLOTS), st.integers(0, 5), st.integers(0, 2), comments), max_size=6)


def _render(sents: list[Any], side: int, docs: bool, placed: list[Any], with_comments: bool) -> bytes:
    def at(slot: str, i: int = -1) -> list[str]:
        if not with_comments:
            return []
        return [c for s, k, who, cs in placed if s == slot and k == i % 6 and who in (side, 2) for c in cs]

    lines = at("start", 0)
    for i, sentence in enumerate(sents):
        if docs and i % 3 == 0:
            lines += ["-DOCSTART- O", *at("doc", i), "", *at("after-doc", i)]
            if at("after-doc", i):
                lines.append("")
        lines += at("before", i)
        for k, (word, gold, pred) in enumerate(sentence):
            lines.append(f"{word} {(gold, pred)[side]}")
            if k == 0 and len(sentence) > 1:
                lines += at("inside", i)
        lines += [*at("after", i), ""]
        if at("own", i):
            lines += [*at("own", i), ""]
    lines += at("end", 0)
    return ("\n".join(lines) + "\n").encode()


def _score(gold: Path, pred: Path, chunk: int) -> Any:
    r = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, jobs=1, keep_details=True)
    return r.to_dict(), list(r.pair_rows("strict"))


def _counts(scored: Any) -> Any:
    """The report without what names a file or a line in it (comments move the lines)."""
    return {k: v for k, v in scored[0].items() if k != "repairs"}, scored[1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sents=sentences, docs=st.booleans(), placed=places, drawn=st.lists(st.integers(1, 400), max_size=2))
def test_comments_change_no_score_at_any_chunk_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sents: Any, docs: bool, placed: Any, drawn: list[int]
) -> None:
    # A file whose every token is "#" has no line that tells its columns from a comment's (read
    # whole, "# O" and the comment "#" tie): left out, as it is no question of cutting.
    assume(any(word != "#" for sentence in sents for word, _, _ in sentence))
    plain, commented = tmp_path / "plain", tmp_path / "commented"
    plain.mkdir(exist_ok=True)
    commented.mkdir(exist_ok=True)
    for folder, with_comments in ((plain, False), (commented, True)):
        for side, name in enumerate(("gold.conll", "pred.conll")):
            (folder / name).write_bytes(_render(sents, side, docs, placed, with_comments))
    gold, pred = commented / "gold.conll", commented / "pred.conll"
    size = max(gold.stat().st_size, pred.stat().st_size)
    whole = _score(gold, pred, 1 << 20)
    assert _counts(whole) == _counts(_score(plain / "gold.conll", plain / "pred.conll", 1 << 20))
    chunks = sorted({1, 3, 7, 13, 24, 40, size // 2 or 1, size + 1, *drawn})
    assert [_score(gold, pred, c) for c in chunks] == [whole] * len(chunks)
    with monkeypatch.context() as m:  # every part planned first, as several processes read them
        m.setattr(ConllSource, "read_parts", lambda self: None)
        assert [_score(gold, pred, c) for c in chunks] == [whole] * len(chunks)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    ("reference", "predicted"),
    [
        # Two comments after a sentence's tokens: the blank line after them ends the sentence.
        (
            b"-DOCSTART- O\n\na O\n# x = 1\n# y = 2\n\nb O\n\nc O\n\nd O\n\n",
            b"-DOCSTART- O\n\na O\n\nb O\n\nc O\n\nd O\n\n",
        ),
        # A comment alone after a -DOCSTART-: a window may hold it with no token line to count columns.
        (
            b"-DOCSTART- O\n\n# source = x\n\na O\nb B-PER\n\nc O\n\n" * 3,
            b"-DOCSTART- O\n\na O\nb B-PER\n\nc O\n\n" * 3,
        ),
        # A chunk of a comment and a sentence of the token "#": the file's columns tell which is which.
        (b"a O\n\n#\n# O\n\n", b"a O\n\n# O\n\n"),
        # A window cut inside a token line ("#\n\na"): its last line's fields are no column count.
        (b"# sent_id = 3\na O\n\na O\n\na O\n\n#\n\na O\n\n", b"a O\n\n" * 4),
        (b"# source = x\n\n-DOCSTART- O\n\na O\n\nb O\n\n" * 2, b"-DOCSTART- O\n\na O\n\nb O\n\n" * 2),
        (b"-DOCSTART- O\n# source = x\n\na O\n\nb O\n\n" * 3, b"-DOCSTART- O\n\na O\n\nb O\n\n" * 3),
    ],
)
def test_cut_files_with_comments_read_as_whole_ones(
    tmp_path: Path, reference: bytes, predicted: bytes, jobs: int
) -> None:
    gold, pred = tmp_path / "r.conll", tmp_path / "p.conll"
    for a, b in ((reference, predicted), (predicted, reference)):
        gold.write_bytes(a)
        pred.write_bytes(b)
        whole = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=1 << 20, jobs=1).to_dict()
        for chunk in range(1, len(a) + 2, 1 if jobs == 1 else 7):
            got = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, jobs=jobs).to_dict()
            assert got == whole, chunk


def test_a_blank_line_after_comments_after_tokens_ends_the_sentence() -> None:
    data = b"a O\n# x = 1\n# y = 2\n\nb O\n\n"
    assert _breaks(data)[0].tolist() == [data.index(b"\n\n") + 2, len(data)]
    assert _Window(data).count == 2
    # After a blank line (or the file's start, or a -DOCSTART-), a run of comments opens nothing.
    run = b"# x = 1\n#\n"  # ("# y" would be the token "#", labelled y)
    free_runs = (b"a O\n\n" + run + b"\nb O\n\n", run + b"\nb O\n\n", b"-DOCSTART- O\n" + run + b"\nb O\n\n")
    for free, breaks in zip(free_runs, ([5, 21], [16], [29]), strict=True):
        assert _breaks(free)[0].tolist() == breaks and _Window(free).count == len(breaks) and breaks[-1] == len(free)


def test_a_window_without_token_lines_counts_comments_by_the_files_columns() -> None:
    data = b"-DOCSTART- O\n\n# source = x\n\n"
    assert _free_lines(data) == [0]  # no token line here: which "#" line is a comment is unknown
    assert _free_lines(data, 2) == [0, data.index(b"#")]
    assert _Window(data, 2).count == 0 == _breaks(data, 2)[0].shape[0]
    assert _free_lines(b"\n#\tO\n\n", 2) == []  # as many fields as a token line: the token "#"
    assert _free_lines(b"#\n\na", 2) == [0]  # "a" may be the start of "a O": the file's columns tell
