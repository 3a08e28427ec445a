"""Chunks planned in the process that counts them carry the bytes the planner read and their
newlines to the parser: the same chunks as planned alone, the same bytes as read from the files,
the same tables and the same counts, on real files of every layout and at every chunk size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import spanscore
from spanscore.io.conll import parse_conll
from spanscore.io.conll_plan import plan_chunks

REAL = Path(__file__).parent / "data" / "real" / "datasets"
FILES = sorted(
    p for p in REAL.rglob("*") if p.is_file() and p.suffix not in (".md", ".json", ".jsonl") and "brat" not in p.parts
)
LAYOUTS = {
    "as is": lambda b: b,
    "crlf": lambda b: b.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
    "bom": lambda b: b"\xef\xbb\xbf" + b,
    "blank lines of white space": lambda b: b.replace(b"\n\n", b"\n \n\n", 3),
    "no final newline": lambda b: b.rstrip(b"\n"),
    "documents": lambda b: b"-DOCSTART- -X- O\n\n" + b.replace(b"\n\n", b"\n\n-DOCSTART- -X- O\n\n", 5),
}


def _read(path: Path, start: int, end: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("chunk", [512, 4096, 1 << 16])
def test_carried_bytes_are_the_files_and_parse_alike(layout: str, chunk: int, tmp_path: Path) -> None:
    carried = 0
    for source in FILES:
        path = tmp_path / source.name
        path.write_bytes(LAYOUTS[layout](source.read_bytes()))
        plain = plan_chunks(path, path, chunk)
        read = plan_chunks(path, path, chunk, read=True)
        assert read == plain
        assert [c.read for c in plain] == [None] * len(plain)
        for c in read:
            if c.read is None:
                continue
            carried += 1
            assert c.read.ref == _read(path, c.ref_start, c.ref_end)
            assert c.read.pred == _read(path, c.pred_start, c.pred_end)
            for data, newlines in ((c.read.ref, c.read.ref_newlines), (c.read.pred, c.read.pred_newlines)):
                assert newlines is not None and data is not None
                assert newlines.tolist() == np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10).tolist()
                try:
                    alone = parse_conll(data, str(path), line_offset=c.ref_line, allow_empty=True)
                except spanscore.SpanscoreError:
                    continue
                given = parse_conll(data, str(path), line_offset=c.ref_line, allow_empty=True, newlines=newlines)
                for name in ("token_start", "token_end", "token_line", "sentence_bounds", "sentence_doc"):
                    assert getattr(given, name).tolist() == getattr(alone, name).tolist(), name
    # The usual layouts (and -DOCSTART- lines) take the carried bytes; white space at a line's
    # start (CR line ends, blank lines of spaces) is read again, as before.
    if layout in ("as is", "bom", "no final newline", "documents") and chunk < 1 << 16:
        assert carried > 0


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_counted_alike_in_one_process_and_in_two(layout: str, tmp_path: Path) -> None:
    for source in FILES[:6]:
        path = tmp_path / source.name
        path.write_bytes(LAYOUTS[layout](source.read_bytes()))
        try:
            one = spanscore.evaluate(reference=path, predicted=path, chunk_bytes=4096, jobs=1)
        except spanscore.SpanscoreError as exc:
            with pytest.raises(spanscore.SpanscoreError) as again:
                spanscore.evaluate(reference=path, predicted=path, chunk_bytes=4096, jobs=2)
            assert str(again.value) == str(exc)
            continue
        two = spanscore.evaluate(reference=path, predicted=path, chunk_bytes=4096, jobs=2)
        assert one.to_dict() == two.to_dict()
