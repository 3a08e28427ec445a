"""Planning CoNLL files: byte ranges of the reference and the prediction that hold the same sentences.

``iter_chunks`` cuts both files at the same sentence break (the k-th blank line after a token
line), about ``chunk_bytes`` of reference at a time, without parsing them: only the breaks are
found, by comparisons over the bytes. Each chunk is then read and counted on its own
(``io.sources.ConllSource``); counts are additive, so the sum over chunks is exactly the count
of the whole files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

import numpy as np

from ..errors import InputError
from ..runtime.records import record
from ..stages.spans import IntArray
from .files import open_input

DEFAULT_CHUNK = 1 << 19
# One process counts every chunk in turn, so a chunk's fixed cost (its Python, the small arrays of
# each pass) is paid once per chunk with nothing beside it: twice the bytes a chunk takes about 4 %
# off such a run (docs/benchmarks.md), for a chunk's memory twice as large. Where several processes
# count, smaller chunks share the work out sooner and more evenly.
ONE_PROCESS_CHUNK = 1 << 20


def default_chunk(processes: int) -> int:
    """The bytes of reference per chunk where none are given, for at most ``processes`` counting."""
    return ONE_PROCESS_CHUNK if processes == 1 else DEFAULT_CHUNK


@record
class Chunk:
    """Byte ranges of the two files that hold the same sentences, and their first line numbers."""

    ref_start: int
    ref_end: int
    pred_start: int
    pred_end: int
    ref_line: int
    pred_line: int

    def ending(self, ref_end: int, pred_end: int) -> Chunk:
        """The chunk extended to these ends."""
        return Chunk(self.ref_start, ref_end, self.pred_start, pred_end, self.ref_line, self.pred_line)


_DOCSTART = b"-DOCSTART-"


def _breaks(data: bytes, columns: int | None = None) -> tuple[IntArray, IntArray]:
    """Offsets just past each sentence break (a blank line that follows a line of tokens), and the
    offset of every newline. A blank line holds nothing but spaces, tabs and carriage returns, as
    the parser reads it; a blank line after a -DOCSTART- line ends no sentence. ``columns``: the
    fields of the file's token lines, where ``data`` holds none (``_free_lines``)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    if nl.shape[0] == 0:
        return nl, nl
    content = (buf != 10) & (buf != 32) & (buf != 9) & (buf != 13)
    seen = np.concatenate(([0], np.cumsum(content)))
    blank = (seen[nl + 1] - seen[np.concatenate(([0], nl[:-1] + 1))]) == 0
    prev_blank = np.empty_like(blank)
    prev_blank[0] = True
    prev_blank[1:] = blank[:-1]
    after_tokens = blank & ~prev_blank
    if _DOCSTART in data or b"#" in data:
        for at in _free_lines(data, columns):
            k = int(np.searchsorted(nl, at))  # the -DOCSTART- or comment line's newline
            if k + 1 < nl.shape[0]:
                after_tokens[k + 1] = False
    ends: IntArray = nl[after_tokens] + 1
    return ends, nl


def first_columns(data: bytes, whole: bool = False) -> int | None:
    """The fields of the first token line in ``data`` (a line neither blank, nor -DOCSTART-, nor
    starting with "#"), split at white space; None where there is none. A last line with no
    newline counts only where ``data`` is ``whole`` (in a window, it may be cut short)."""
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0 and not whole:
            return None
        end = len(data) if end < 0 else end
        line = data[at:end]
        if line.strip() and not line.startswith((b"#", _DOCSTART, b"\xef\xbb\xbf#", b"\xef\xbb\xbf-DOCSTART-")):
            return len(line.split())
        at = end + 1
    return None


def file_columns(path: str | Path) -> int | None:
    """``first_columns`` of a whole file, read until its first token line."""
    with open_input(path) as file:
        data = b""
        while True:
            block = file.read(1 << 16)
            data += block
            cut = len(data) if not block else data.rfind(b"\n") + 1
            found = first_columns(data[:cut], whole=not block)
            if found is not None or not block:
                return found
            data = data[cut:]


def _free_lines(data: bytes, columns: int | None = None) -> list[int]:
    """Where each -DOCSTART- line starts, and each comment line that follows no token line (before
    it, past any other comments, a blank line, the file's start or a -DOCSTART-): a blank line
    right after one of these ends no sentence, as the parser reads them. A comment is a "#" line
    with another number of fields than the token lines: those of ``data``, or ``columns`` (the
    file's) where ``data`` holds no token line."""
    found = _docstart_lines(data)
    if b"#" not in data:
        return found
    window = first_columns(data)
    columns = window if window is not None else columns
    if columns is None:
        return sorted(found)  # no token line anywhere: no sentence for a blank line to end

    def comment(line: bytes) -> bool:
        return line.startswith(b"#") and len(line.split()) != columns

    # A run of comments is free where the line before its first one is: each comment's own is
    # looked at only where the comment right before it is not one (one pass, however long the run).
    run_end, run_free = -1, False  # where the last comment seen ends, and whether its run is free
    at = 0 if data.startswith(b"#") else data.find(b"\n#") + 1
    while at > 0 or (at == 0 and data.startswith(b"#")):
        end = data.find(b"\n", at)
        if comment(data[at : end if end >= 0 else len(data)]):
            if at == 0:
                run_free = True
            elif run_end != at - 1:
                previous = data[data.rfind(b"\n", 0, at - 1) + 1 : at - 1]
                run_free = not previous.strip() or previous.startswith(_DOCSTART)
            if run_free:
                found.append(at)
            run_end = end
        if end < 0:
            break
        nxt = data.find(b"\n#", end)
        at = nxt + 1 if nxt >= 0 else -1
    return sorted(found)


def _docstart_lines(data: bytes) -> list[int]:
    """Where each line that starts with -DOCSTART- starts."""
    found = []
    at = data.find(_DOCSTART)
    while at >= 0:
        if at == 0 or data[at - 1] == 10:
            found.append(at)
        at = data.find(_DOCSTART, at + 1)
    return found


class _Window:
    """The sentence breaks of bytes read from a file: how many, where the k-th ends, and the
    newlines before a cut.

    Where no line starts with white space (the usual case), a blank line is an empty one and a
    break is "\n\n" after a non-newline: a few comparisons over the bytes, counted without listing
    every newline. Otherwise ``_breaks`` looks at every line.
    """

    def __init__(self, data: bytes, columns: int | None = None) -> None:
        b = np.frombuffer(data, dtype=np.uint8)
        self.nl = nl = b == 10
        self.ends: IntArray | None = None
        self.newlines: IntArray | None = None
        self.mask = np.zeros(0, dtype=bool)
        # Bytes up to 32 other than "\n" at a line start: white space (or a control byte) that may
        # make a line blank without its being empty. Lines that start so or with "-" (a -DOCSTART-
        # line, ruled out quicker than looked for) are rare: one pass tells whether there is any.
        first = int(b[0]) if b.shape[0] else 10
        after = b[1:]
        other = (after <= 32) ^ nl[1:]
        first_other = first <= 32 and first != 10
        rare = first_other or first == _DOCSTART[0]
        rare = rare or bool(np.count_nonzero(nl[:-1] & (other | (after == _DOCSTART[0]))))
        if rare and (first_other or np.count_nonzero(nl[:-1] & other)):
            self.ends, self.newlines = _breaks(data, columns)
            self.count = int(self.ends.shape[0])
        else:
            # mask[i]: a break ends at i + 3 (b[i] is in a non-blank line, b[i + 2] ends an empty one).
            self.mask = np.greater(nl[1:-1] & nl[2:], nl[:-2])
            # An empty line after a -DOCSTART- or a comment ends no sentence.
            if b"#" in data or rare:
                for at in _free_lines(data, columns):
                    end = data.find(b"\n", at)
                    if 0 < end < self.mask.shape[0] + 1:
                        self.mask[end - 1] = False
            self.count = int(np.count_nonzero(self.mask))

    def end(self, k: int) -> int:
        """Where the k-th break (1-based; -1 for the last) ends."""
        if self.ends is not None:
            return int(self.ends[k - 1] if k > 0 else self.ends[-1])
        if k < 0:
            # The last break is most often near the end: look there before in the whole window.
            tail = self.mask[-(1 << 16) :]
            found = np.flatnonzero(tail)
            if found.shape[0]:
                return int(found[-1]) + int(self.mask.shape[0] - tail.shape[0]) + 3
            return int(np.flatnonzero(self.mask)[-1]) + 3
        # A window is read for a few more breaks than wanted: the k-th is most often in its last
        # quarter, where listing the breaks costs a quarter as much.
        start = self.mask.shape[0] * 3 // 4
        before = self.count - int(np.count_nonzero(self.mask[start:]))
        if k > before:
            return int(np.flatnonzero(self.mask[start:])[k - 1 - before]) + start + 3
        return int(np.flatnonzero(self.mask)[k - 1]) + 3

    def newlines_before(self, cut: int) -> int:
        if self.newlines is not None:
            return int(np.searchsorted(self.newlines, cut))
        return int(np.count_nonzero(self.nl[:cut]))


class _Scanner:
    """Walks a file, handing out byte ranges that end at sentence breaks.

    Each range is found in a window read afresh at the current offset (from the page cache after
    the first time), so nothing is kept between ranges.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.file: BinaryIO = open_input(path)
        self.size = os.fstat(self.file.fileno()).st_size
        # A byte order mark is no part of the first line: left out, a -DOCSTART- or comment line
        # at the file's start is found as in the same file without one (and both cut alike).
        self.offset = 3 if self.file.read(3) == b"\xef\xbb\xbf" else 0
        self.line = 0  # lines before offset
        self._columns: int | bool | None = False  # the first token line's fields, found when wanted

    @property
    def left(self) -> int:
        return max(self.size - self.offset, 0)

    def columns(self, data: bytes) -> int | None:
        """The fields of the file's token lines, for a window of ``data`` with comments and no
        token line of its own (read from the file's start once, where one is wanted)."""
        if self._columns is False and b"#" in data and first_columns(data) is None:
            self._columns = file_columns(self.path)
        return None if isinstance(self._columns, bool) else self._columns

    def _window(self, n: int) -> bytes:
        self.file.seek(self.offset)
        return self.file.read(min(n, self.left + 1))  # never a buffer larger than what is left

    def _advance(self, cut: int, newlines: int) -> tuple[int, int, int]:
        """Move past ``cut`` bytes holding ``newlines`` newlines."""
        start, line = self.offset, self.line
        self.line += newlines
        self.offset += cut
        return start, self.offset, line

    def by_size(self, size: int) -> tuple[int, int, int, int] | None:
        """The range up to the last break within ``size`` bytes (or the first one after); its break count."""
        window = size
        while True:
            data = self._window(window)
            if not data:
                return None
            w = _Window(data, self.columns(data))
            if w.count:
                cut = w.end(-1)
                return (*self._advance(cut, w.newlines_before(cut)), w.count)
            if len(data) < window:  # the rest of the file holds no break
                return (*self._advance(len(data), data.count(b"\n")), 0)
            window *= 2

    def by_lines(self, n: int, size: int) -> tuple[int, int, int, bytes, IntArray] | None:
        """The next ``n`` lines (``n`` > 1), read in a window of ``size`` bytes, with their bytes and
        where each of their newlines is; None (nothing moved) where the window holds fewer lines
        or they do not end with an empty line after one that is not."""
        data = self._window(size)
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        if n < 2 or newlines.shape[0] < n:
            return None
        last, before = int(newlines[n - 1]), int(newlines[n - 2])
        if last - before != 1 or before == 0 or (n > 2 and before - int(newlines[n - 3]) == 1):
            return None
        return (*self._advance(last + 1, n), data[: last + 1], newlines[:n])

    def by_breaks(self, k: int, hint: int, margin: int = 4) -> tuple[int, int, int]:
        """The range holding the next ``k`` breaks (everything left when ``k`` is 0), read in a
        window of ``hint`` bytes and ``1 / margin`` more (twice that until the breaks are in)."""
        window = max(hint + hint // margin, 1 << 16)
        while True:
            data = self._window(window)
            if k:
                w = _Window(data, self.columns(data))
                if w.count >= k:
                    cut = w.end(k)
                    return self._advance(cut, w.newlines_before(cut))
            if len(data) < window:
                return self._advance(len(data), data.count(b"\n"))
            window *= 2

    def close(self) -> None:
        self.file.close()


def iter_chunks(
    reference: str | Path, predicted: str | Path | None, chunk_bytes: int = DEFAULT_CHUNK
) -> Iterator[Chunk]:
    """Cut both files at the same sentence breaks, about ``chunk_bytes`` of reference per chunk,
    handing out each chunk as soon as it is known (counting can start while the rest is cut)."""
    for chunks in iter_chunks_beside(reference, [predicted], chunk_bytes):
        yield chunks[0]


def iter_chunks_beside(
    reference: str | Path, predicted: Sequence[str | Path | None], chunk_bytes: int = DEFAULT_CHUNK
) -> Iterator[tuple[Chunk, ...]]:
    """``iter_chunks(reference, p, chunk_bytes)`` for each prediction ``p`` at once, side by side:
    the reference is cut where each of them cuts it (its cuts follow the reference alone), and
    scanned once for all of them."""
    ref = _Scanner(reference)
    preds: list[_Scanner | None] = []
    # Held back one step: the last chunk takes what is left of each prediction.
    pending: list[Chunk] | None = None
    # The prediction's bytes per reference byte in the chunk before: a prediction's window is read
    # for that many and a sixteenth more (a quarter more for the first chunk), not a quarter more
    # each time: every byte read is searched for breaks.
    ratios: list[float | None] = [None] * len(predicted)
    try:
        for p in predicted:
            preds.append(None if p is None else _Scanner(p))
        while True:
            got = ref.by_size(chunk_bytes)
            if got is None:
                break
            r0, r1, rl, n = got
            at_end = ref.left == 0
            chunks = []
            for k, pred in enumerate(preds):
                if pred is None:
                    chunks.append(Chunk(r0, r1, 0, 0, rl, 0))
                    continue
                ratio = ratios[k]
                if ratio is None:
                    p0, p1, pl = pred.by_breaks(0 if at_end else n, r1 - r0)
                else:
                    p0, p1, pl = pred.by_breaks(0 if at_end else n, int((r1 - r0) * ratio) + 4096, 16)
                if r1 > r0 and p1 > p0:
                    ratios[k] = (p1 - p0) / (r1 - r0)
                chunks.append(Chunk(r0, r1, p0, p1, rl, pl))
            if pending is not None and n == 0:
                # The rest of the file holds no sentence break: the end of the last sentence, or
                # only the blank lines and white space that many files end with. Either way it
                # belongs to the chunk before; on its own it would be a chunk of no token line.
                pending = [p.ending(c.ref_end, c.pred_end) for p, c in zip(pending, chunks, strict=True)]
                continue
            if pending is not None:
                yield tuple(pending)
            pending = chunks
        if pending is None:
            raise InputError("file is empty: expected token lines in CoNLL columns", path=str(reference))
        for k, pred in enumerate(preds):
            if pred is not None:
                rest = pred.by_breaks(0, 0)
                if rest[1] > rest[0]:
                    pending[k] = pending[k].ending(pending[k].ref_end, rest[1])
        yield tuple(pending)
    finally:
        ref.close()
        for pred in preds:
            if pred is not None:
                pred.close()


@record
class ReadChunk:
    """A chunk and the bytes of its prediction read while cutting it (``read_chunks``)."""

    chunk: Chunk
    predicted: bytes | None  # None: to be read
    newlines: IntArray | None  # where each newline of ``predicted`` is


_T = TypeVar("_T")


def read_chunks(
    reference: str | Path, predicted: str | Path, chunk_bytes: int, read: Callable[[ReadChunk, bool], _T | None]
) -> Iterator[tuple[Chunk, _T]]:
    """The chunks of ``iter_chunks``, each read by ``read`` as soon as it is cut, its prediction
    from the bytes read to cut it: for one process, which would otherwise search the prediction
    for sentence breaks, read it again and look for its newlines again in parsing it.

    The reference is cut as ``iter_chunks`` cuts it. The prediction is first cut where as many
    lines end as in the reference's part (both files hold the same tokens, so most often the same
    lines), its newlines handed on for the parser; ``read(part, False)`` reads that and returns
    None where the two parts do not hold the same sentences. The prediction is then cut at the
    reference's sentence breaks, as ``iter_chunks`` does, and ``read(part, True)`` reads it (its
    errors are the errors of the plan). Which lines of the prediction a chunk holds beyond its
    sentences (blank, -DOCSTART- or comment lines after the last) may differ from ``iter_chunks``;
    its sentences never do.
    """
    ref = _Scanner(reference)
    pred = _Scanner(predicted)
    ratio: float | None = None  # the prediction's bytes per reference byte in the part before

    def finish(r0: int, r1: int, rl: int, n: int, lines: int, last: bool) -> tuple[Chunk, _T]:
        nonlocal ratio
        size = r1 - r0
        hint = size + size // 4 if ratio is None else int(size * ratio) + size // 16 + 4096
        if last:  # the last part takes what is left of the prediction, read where it is read
            p0, p1, pl = pred.by_breaks(0, 0)
            chunk = Chunk(r0, r1, p0, p1, rl, pl)
            return chunk, cast(_T, read(ReadChunk(chunk, None, None), True))
        at, line = pred.offset, pred.line
        cut = pred.by_lines(lines, hint)
        if cut is not None:
            p0, p1, pl = cut[:3]
            chunk = Chunk(r0, r1, p0, p1, rl, pl)
            done = read(ReadChunk(chunk, *cut[3:]), False)
            del cut  # the bytes and newlines go with the part, not held here while it is counted
            if done is not None:
                ratio = (p1 - p0) / size
                return chunk, done
            pred.offset, pred.line = at, line
        p0, p1, pl = pred.by_breaks(n, hint)
        if p1 > p0:
            ratio = (p1 - p0) / size
        chunk = Chunk(r0, r1, p0, p1, rl, pl)
        return chunk, cast(_T, read(ReadChunk(chunk, None, None), True))

    # A reference part is held back one step: where the rest of the file holds no sentence break,
    # it belongs to the part before, as in ``iter_chunks``.
    pending: tuple[int, int, int, int, int] | None = None
    try:
        while True:
            got = ref.by_size(chunk_bytes)
            if got is None:
                break
            r0, r1, rl, n = got
            if pending is not None and n == 0:
                pending = (pending[0], r1, *pending[2:])
                continue
            if pending is not None:
                yield finish(*pending, False)
            pending = (r0, r1, rl, n, ref.line - rl)
        if pending is None:
            raise InputError("file is empty: expected token lines in CoNLL columns", path=str(reference))
        yield finish(*pending, True)
    finally:
        ref.close()
        pred.close()


def plan_chunks(reference: str | Path, predicted: str | Path | None, chunk_bytes: int = DEFAULT_CHUNK) -> list[Chunk]:
    """Every chunk of ``iter_chunks``."""
    return list(iter_chunks(reference, predicted, chunk_bytes))
