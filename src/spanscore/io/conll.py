"""CoNLL column files, parsed with array operations over the raw bytes.

A file is a sequence of lines: token lines (columns separated by tabs, or by runs of spaces and
tabs), blank lines between sentences, ``-DOCSTART-`` lines opening documents (never tokens), and
comment lines. A line that starts with ``#`` is a comment when its number of columns differs from
the file's (``# sent_id = 3``); ``#<TAB>O`` in a two-column file is the token ``#``.

No Python loop runs per line: line and field boundaries come from ``numpy`` searches over the
bytes, and labels become integer ids through one ``numpy.unique`` over packed label bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .files import read_bytes

IntArray = npt.NDArray[np.int64]
Delimiter = Literal["auto", "tab", "whitespace"]

_DOCSTART = b"-DOCSTART-"
_NL, _CR, _TAB, _SPACE, _HASH = 10, 13, 9, 32, 35


@dataclass(frozen=True)
class Column:
    """One label column: an id per token and the label strings the ids point to."""

    ids: IntArray
    vocab: tuple[str, ...]


@dataclass(frozen=True)
class ConllTable:
    """A parsed CoNLL file: tokens, their lines, sentences and documents, and label columns."""

    path: str
    buffer: npt.NDArray[np.uint8]
    token_start: IntArray  # byte offsets of each token's text
    token_end: IntArray
    token_line: IntArray  # 1-based line number of each token
    sentence_bounds: IntArray  # token index where each sentence starts, plus the total
    sentence_doc: IntArray  # document index of each sentence
    n_documents: int  # -DOCSTART- lines, or 1 when there are none
    columns: tuple[Column, ...]
    n_columns: int
    line_offset: int = 0
    n_docstarts: int = 0

    @property
    def n_tokens(self) -> int:
        return int(self.token_start.shape[0])

    @property
    def n_sentences(self) -> int:
        return int(self.sentence_bounds.shape[0] - 1)

    def token_text(self, i: int) -> str:
        raw = self.buffer[self.token_start[i] : self.token_end[i]].tobytes()
        return raw.decode("utf-8", errors="replace")

    def tokens(self, first: int, last: int) -> list[str]:
        return [self.token_text(i) for i in range(first, last)]

    def token_bytes(self) -> tuple[npt.NDArray[np.uint8], IntArray]:
        """All token texts concatenated, and each token's length (for comparing two files)."""
        lengths = self.token_end - self.token_start
        if self.buffer.shape[0] == 0:
            return np.zeros(0, dtype=np.uint8), lengths
        # Tokens never overlap, so a running sum of +1 at starts and -1 at ends marks their bytes.
        edge = np.zeros(self.buffer.shape[0] + 1, dtype=np.int8)
        edge[self.token_start] += 1  # starts are distinct, and so are ends: no repeated index
        edge[self.token_end] -= 1
        inside = np.cumsum(edge[:-1], dtype=np.int8) > 0
        return self.buffer[inside], lengths


def read_conll(
    path: str | Path,
    *,
    columns: Sequence[int] = (-1,),
    token_column: int = 0,
    delimiter: Delimiter = "auto",
) -> ConllTable:
    """Read a CoNLL file; ``columns`` are the label columns to keep (negative counts from the end)."""
    return parse_conll(read_bytes(path), str(path), columns=columns, token_column=token_column, delimiter=delimiter)


def parse_conll(
    data: bytes,
    path: str,
    *,
    columns: Sequence[int] = (-1,),
    token_column: int = 0,
    delimiter: Delimiter = "auto",
    line_offset: int = 0,
    allow_empty: bool = False,
) -> ConllTable:
    """Parse CoNLL bytes. ``line_offset`` is added to line numbers (for files read in chunks)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        raise InputError("file is empty: expected token lines in CoNLL columns", path=path)
    if not data.endswith(b"\n"):
        data += b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    is_nl = buf == _NL
    newline = np.flatnonzero(is_nl)
    line_start = np.empty(newline.shape[0], dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = newline[:-1] + 1
    line_end = newline.astype(np.int64)
    has_cr = (line_end > line_start) & (buf[np.maximum(line_end - 1, 0)] == _CR)
    line_end = line_end - has_cr

    if delimiter == "auto":
        delimiter = "tab" if bool((buf == _TAB).any()) else "whitespace"
    if delimiter not in ("tab", "whitespace"):
        raise InputError(f"unknown delimiter {delimiter!r}: use auto, tab or whitespace", path=path)
    # Per-byte temporaries live only inside _fields, which keeps memory at a few times the input.
    field_starts, field_ends, n_fields, blank = _fields(buf, is_nl, delimiter, line_end)
    first_field = np.concatenate(([0], np.cumsum(n_fields)))[:-1]

    content = ~blank
    first_len = np.where(n_fields > 0, field_ends[np.minimum(first_field, len(field_ends) - 1)], 0)
    first_len = first_len - np.where(n_fields > 0, field_starts[np.minimum(first_field, len(field_starts) - 1)], 0)
    docstart = content & (first_len == len(_DOCSTART)) & _starts_with(buf, line_start, _DOCSTART)
    hashed = content & (buf[np.minimum(line_start, len(buf) - 1)] == _HASH)

    candidates = content & ~docstart & ~hashed
    if not candidates.any():
        candidates = content & ~docstart
    if not candidates.any():
        if allow_empty:  # a chunk of a larger file may hold only -DOCSTART- lines
            return _empty(path, buf, len(columns), int(docstart.sum()), line_offset)
        raise InputError("file has no token lines", path=path)
    n_columns = int(np.bincount(n_fields[candidates]).argmax())
    comment = hashed & (n_fields != n_columns)
    token_line = content & ~docstart & ~comment

    bad = token_line & (n_fields != n_columns)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected {n_columns} columns like the lines before, found {int(n_fields[i])}"
            + (" (separate columns with one tab; a token may then contain spaces)" if delimiter == "tab" else ""),
            path=path,
            line=i + 1 + line_offset,
        )
    for col in (token_column, *columns):
        if not -n_columns <= col < n_columns:
            raise InputError(f"column {col} does not exist: lines have {n_columns} columns", path=path)

    lines = np.flatnonzero(token_line)
    if lines.shape[0] == 0:
        raise InputError("file has no token lines", path=path)
    base = first_field[lines]

    tok_s, tok_e = field_starts[base + token_column % n_columns], field_ends[base + token_column % n_columns]
    cols = tuple(
        _column_ids(buf, field_starts[base + c % n_columns], field_ends[base + c % n_columns], lines, path, line_offset)
        for c in columns
    )

    # A sentence starts at a token line whose previous non-comment line is blank, a -DOCSTART-, or none.
    breaks = blank | docstart
    kept = np.flatnonzero(~comment)
    prev_is_break = np.ones(kept.shape[0], dtype=bool)
    prev_is_break[1:] = breaks[kept[:-1]]
    starts_sentence = np.zeros(len(line_start), dtype=bool)
    starts_sentence[kept] = prev_is_break
    new_sentence = starts_sentence[lines]
    sentence_first = np.flatnonzero(new_sentence)
    sentence_bounds = np.concatenate((sentence_first, [lines.shape[0]])).astype(np.int64)
    doc_cum = np.cumsum(docstart)
    sentence_doc = doc_cum[lines[sentence_first]].astype(np.int64)
    n_documents = int(doc_cum[-1]) if doc_cum[-1] > 0 else 1
    if doc_cum[-1] > 0:
        sentence_doc = sentence_doc - 1
        sentence_doc[sentence_doc < 0] = 0

    return ConllTable(
        path=path,
        buffer=buf,
        token_start=tok_s.astype(np.int64),
        token_end=tok_e.astype(np.int64),
        token_line=(lines + 1 + line_offset).astype(np.int64),
        sentence_bounds=sentence_bounds,
        sentence_doc=sentence_doc,
        n_documents=n_documents,
        columns=cols,
        n_columns=n_columns,
        line_offset=line_offset,
        n_docstarts=int(doc_cum[-1]),
    )


def _fields(
    buf: npt.NDArray[np.uint8], is_nl: npt.NDArray[np.bool_], delimiter: str, line_end: IntArray
) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.bool_]]:
    """Field boundaries, fields per line, and which lines are blank (nothing but spaces, tabs, CR).

    Works on events in byte order (field starts and newlines, or tabs and newlines) rather than on
    a line number per byte: a line's fields are the events before its newline.
    """
    sep = (buf == _SPACE) | (buf == _TAB) | (buf == _CR) | is_nl
    edge = np.empty(buf.shape[0] + 2, dtype=np.int8)
    edge[0] = edge[-1] = 1
    edge[1:-1] = sep
    step = np.diff(edge)  # -1 where a run of non-separators starts, +1 where it ends
    event = np.flatnonzero((step[:-1] == -1) | is_nl)
    event_nl = is_nl[event]
    newline_at = np.flatnonzero(event_nl)
    n_words = np.diff(newline_at, prepend=-1) - 1
    blank = n_words == 0
    if delimiter == "whitespace":
        return event[~event_nl].astype(np.int64), np.flatnonzero(step == 1).astype(np.int64), n_words, blank
    # Tabs: every tab or newline ends a field (possibly empty); a field starts after the previous one.
    event = np.flatnonzero((buf == _TAB) | is_nl)
    newline_at = np.flatnonzero(is_nl[event])
    starts = np.empty(event.shape[0], dtype=np.int64)
    starts[0] = 0
    starts[1:] = event[:-1] + 1
    ends = event.astype(np.int64)
    ends[newline_at] = line_end  # a line's last field stops before its CR
    return starts, ends, np.diff(newline_at, prepend=-1), blank


def _empty(path: str, buf: npt.NDArray[np.uint8], n_cols: int, n_docstarts: int, line_offset: int) -> ConllTable:
    z = np.zeros(0, dtype=np.int64)
    return ConllTable(
        path=path,
        buffer=buf,
        token_start=z,
        token_end=z,
        token_line=z,
        sentence_bounds=np.zeros(1, dtype=np.int64),
        sentence_doc=z,
        n_documents=max(n_docstarts, 1),
        columns=tuple(Column(z, ()) for _ in range(n_cols)),
        n_columns=0,
        line_offset=line_offset,
        n_docstarts=n_docstarts,
    )


def _starts_with(buf: npt.NDArray[np.uint8], at: IntArray, prefix: bytes) -> npt.NDArray[np.bool_]:
    n = len(buf)
    ok: npt.NDArray[np.bool_] = buf[np.minimum(at, n - 1)] == prefix[0]
    cand = np.flatnonzero(ok)
    for j, byte in enumerate(prefix[1:], start=1):
        pos = at[cand] + j
        good = (pos < n) & (buf[np.minimum(pos, n - 1)] == byte)
        ok[cand[~good]] = False
        cand = cand[good]
    return ok


def gather(buf: npt.NDArray[np.uint8], start: IntArray, end: IntArray) -> npt.NDArray[np.uint8]:
    """Concatenate buf[start[i]:end[i]] for every i without a Python loop."""
    lengths = end - start
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint8)
    offsets = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    idx = np.arange(total, dtype=np.int64) - np.repeat(offsets - start, lengths)
    return buf[idx]


def _column_ids(
    buf: npt.NDArray[np.uint8],
    start: IntArray,
    end: IntArray,
    lines: IntArray,
    path: str,
    line_offset: int,
) -> Column:
    """Map each label's bytes to an integer id; ids index a vocabulary of distinct label strings."""
    lengths = end - start
    if (lengths == 0).any():
        i = int(np.flatnonzero(lengths == 0)[0])
        raise InputError("empty label", path=path, line=int(lines[i]) + 1 + line_offset)
    width = max(8, int(-(-int(lengths.max()) // 8) * 8))
    packed: npt.NDArray[np.uint8] | None = None
    if width == 8:
        key = prefix_words(buf, start, lengths)  # labels of up to 8 bytes: their bytes are their keys
    else:
        padded = np.concatenate((buf, np.zeros(width, dtype=np.uint8)))
        # Each label's bytes as 64-bit words, zero-padded: rows of a strided view of the buffer.
        windows = np.lib.stride_tricks.as_strided(padded, shape=(len(buf), width), strides=(1, 1), writeable=False)
        packed = windows[start]
        words = packed.view(np.uint64)
        for j in range(words.shape[1]):
            words[:, j] &= _MASKS[np.clip(lengths - 8 * j, 0, 8)]
        key = words[:, 0].copy()
        for j in range(1, words.shape[1]):
            key = key * np.uint64(0x9E3779B97F4A7C15) ^ words[:, j]
    # Few distinct labels: find them in a small sample (a chunk is scored in a few ms, a large
    # sample's sort would dominate), place every key by binary search, and add what the sample missed.
    uniq = np.unique(key[:4096])
    while True:
        inverse = np.minimum(np.searchsorted(uniq, key), uniq.shape[0] - 1)
        missed = uniq[inverse] != key
        if not missed.any():
            break
        uniq = np.union1d(uniq, key[missed])
    first = np.zeros(uniq.shape[0], dtype=np.int64)
    first[inverse[::-1]] = np.arange(inverse.shape[0] - 1, -1, -1)
    if packed is None:
        # A short label's key is its bytes, so keys of different labels differ unless one of them
        # ends in NUL bytes; its length then tells them apart. NUL bytes in a label are corruption.
        clash = np.flatnonzero(lengths[first][inverse] != lengths)
        if clash.shape[0]:
            raise InputError("label contains a NUL byte", path=path, line=int(lines[clash[0]]) + 1 + line_offset)
    elif np.array_equal(packed, packed[first[inverse]]):  # hash collisions are checked, not assumed away
        packed = None
    if packed is not None:
        labels_all = packed.view(f"S{width}").ravel()
        uniq_s, inverse = np.unique(labels_all, return_inverse=True)
        vocab = tuple(s.decode("utf-8", errors="replace").strip() for s in uniq_s)
    else:
        vocab = tuple(
            buf[start[f] : start[f] + lengths[f]].tobytes().decode("utf-8", errors="replace").strip() for f in first
        )
    return _dedupe(Column(ids=inverse.astype(np.int64).ravel(), vocab=vocab))


# _MASKS[k] keeps the first k bytes of a little-endian 64-bit word.
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def prefix_words(buf: npt.NDArray[np.uint8], start: IntArray, lengths: IntArray) -> npt.NDArray[np.uint64]:
    """The first (up to) 8 bytes of each field as one integer, read from a view with a
    little-endian word at every byte offset; bytes past a field's end are zero."""
    padded = np.concatenate((buf, np.zeros(8, dtype=np.uint8)))
    at_every_byte = np.ndarray((len(buf),), dtype="<u8", buffer=padded.data, strides=(1,))
    words: npt.NDArray[np.uint64] = at_every_byte[start] & _MASKS[np.minimum(lengths, 8)]
    return words


def _dedupe(col: Column) -> Column:
    """Labels equal after stripping spaces share one id."""
    if len(set(col.vocab)) == len(col.vocab):
        return col
    names = sorted(set(col.vocab))
    index = {name: i for i, name in enumerate(names)}
    remap = np.array([index[v] for v in col.vocab], dtype=np.int64)
    return Column(ids=remap[col.ids], vocab=tuple(names))
