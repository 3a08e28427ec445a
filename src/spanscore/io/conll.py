"""CoNLL column files, parsed with array operations over the raw bytes.

A file is a sequence of lines: token lines (columns separated by tabs, or by runs of spaces and
tabs), blank lines between sentences, ``-DOCSTART-`` lines opening documents (never tokens), and
comment lines. A line that starts with ``#`` is a comment when its number of columns differs from
the file's (``# sent_id = 3``); ``#<TAB>O`` in a two-column file is the token ``#``.

No Python loop runs per line: line and field boundaries come from ``numpy`` searches over the
bytes, and labels become integer ids through one ``numpy.unique`` over packed label bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..runtime.records import record
from .files import read_bytes

IntArray = npt.NDArray[np.int64]
Delimiter = Literal["auto", "tab", "whitespace"]

_DOCSTART = b"-DOCSTART-"
_NL, _CR, _TAB, _SPACE, _HASH = 10, 13, 9, 32, 35


@record
class Column:
    """One label column: an id per token and the label strings the ids point to."""

    ids: IntArray
    vocab: tuple[str, ...]


_A = TypeVar("_A", bound=np.generic)
_FOUND_ONCE = frozenset({"_token_words", "_token_lengths", "_token_masks"})


@record
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
    # -DOCSTART- lines before each sentence in this table (None: no -DOCSTART- line at all).
    sentence_docstarts: IntArray | None = None

    @property
    def n_tokens(self) -> int:
        return int(self.token_start.shape[0])

    @property
    def n_sentences(self) -> int:
        return int(self.sentence_bounds.shape[0] - 1)

    def token_words(self) -> npt.NDArray[np.uint64]:
        """Each token's first 8 bytes as one word (``words_at``; bytes past its end unmasked),
        found once a table: a comparison checks every system's tokens against its one
        reference (read-only, as ``token_lengths`` and ``token_masks``)."""
        return self._once("_token_words", lambda: words_at(self.buffer, self.token_start))

    def token_lengths(self) -> IntArray:
        """Each token's length in bytes."""
        return self._once("_token_lengths", lambda: self.token_end - self.token_start)

    def token_masks(self) -> npt.NDArray[np.uint64]:
        """Masks that keep each token's bytes (up to 8) of its word in ``token_words``."""
        return self._once("_token_masks", lambda: prefix_masks(self.token_lengths()))

    def _once(self, name: str, make: Callable[[], npt.NDArray[_A]]) -> npt.NDArray[_A]:
        found: npt.NDArray[_A] | None = self.__dict__.get(name)
        if found is None:
            found = make()
            found.flags.writeable = False
            object.__setattr__(self, name, found)
        return found

    def __getstate__(self) -> dict[str, object]:
        # What ``_once`` found is found again where wanted, not sent to another process.
        return {k: v for k, v in self.__dict__.items() if k not in _FOUND_ONCE}

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
    encoding: str | None = "utf-8",
    header: bool = False,
) -> ConllTable:
    """Read a CoNLL file; ``columns`` are the label columns to keep (negative counts from the end)."""
    return parse_conll(
        read_bytes(path),
        str(path),
        columns=columns,
        token_column=token_column,
        delimiter=delimiter,
        encoding=encoding,
        header=header,
    )


def parse_conll(
    data: bytes,
    path: str,
    *,
    columns: Sequence[int] = (-1,),
    token_column: int = 0,
    delimiter: Delimiter = "auto",
    line_offset: int = 0,
    allow_empty: bool = False,
    encoding: str | None = "utf-8",
    header: bool = False,
    hash_comments: bool | None = None,
    newlines: IntArray | None = None,
    file_columns: Callable[[], int | None] | None = None,
) -> ConllTable:
    """Parse CoNLL bytes. ``line_offset`` is added to line numbers (for files read in chunks).

    ``encoding`` is the bytes' text encoding (they are checked, or converted to UTF-8; None
    leaves them as they are, for rewriting a file byte for byte); with
    ``header``, the first line that is not blank names the columns and is no token line (give
    it only for the bytes that start a file). ``hash_comments`` says whether every line starting
    with "#" is a comment (None: where the token is not the first column; a caller reading another
    column as ``token_column`` gives what the file's own token column says). ``newlines``: the
    offset of every newline in ``data``, where the caller found them already (used only where
    the bytes are parsed as given). ``file_columns``: the fields of the whole file's token lines,
    asked for only where ``data`` (a part of it) holds none but "#" lines, to tell which are
    comments as in reading the whole file."""
    given = data
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if encoding is not None:
        data = as_utf8(data, path, encoding, line_offset)
    if header:
        data = _blank_header(data)
    if not data or data.isspace():  # as ``not data.strip()``, without copying the bytes
        raise InputError("file is empty: expected token lines in CoNLL columns", path=path)
    if not data.endswith(b"\n"):
        data += b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    guessed = delimiter == "auto"
    if guessed:
        delimiter = "tab" if tab_separated(data) else "whitespace"
    if delimiter not in ("tab", "whitespace"):
        raise InputError(f"unknown delimiter {delimiter!r}: use auto, tab or whitespace", path=path)
    args = (columns, token_column, line_offset, allow_empty, hash_comments)
    try:
        usual = _usual_table(data, buf, path, delimiter, *args, newlines=newlines if data is given else None)
    except InputError:
        usual = None  # the general reader raises it, as it would without this path
    if usual is not None:
        return usual
    is_nl = buf == _NL
    lines = _simple_lines(data, buf, is_nl, delimiter) or _lines(buf, is_nl, delimiter)
    try:
        return _table(lines, data, buf, path, delimiter, *args, file_columns=file_columns)
    except InputError as exc:
        if not (guessed and delimiter == "tab" and "columns" in exc.message):
            raise
        # Tabs on some lines and spaces on others (files edited by hand, or joined from two
        # writers): read as runs of white space where that gives every line the same columns.
        try:
            lines = _lines(buf, is_nl, "whitespace")
            return _table(lines, data, buf, path, "whitespace", *args, file_columns=file_columns)
        except InputError:
            raise exc from None


def tab_separated(data: bytes) -> bool:
    """Whether ``--delimiter auto`` reads these bytes as tab-separated: a tab stands between two
    words on some line. Tabs only in blank lines or at a line's end (white space an editor left)
    do not make a space-separated file tab-separated."""
    return b"\t" in data and _TAB_BETWEEN_WORDS.search(data) is not None


def as_utf8(data: bytes, path: str, encoding: str, line_offset: int = 0) -> bytes:
    """The bytes as UTF-8: checked when ``encoding`` is UTF-8, else converted from it. A byte
    that the encoding cannot read is an error naming its line: read with errors replaced, a
    latin-1 file would give tokens of U+FFFD that differ from the prediction's without saying why."""
    if data.isascii():
        return data
    utf8 = encoding.replace("_", "-").lower() in ("utf-8", "utf8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1 + line_offset
        byte = data[exc.start : exc.start + 1]
        hint = (
            "give the file's encoding with --encoding (CoNLL-2002's files are latin-1) or save it as UTF-8"
            if utf8
            else "give the file's encoding with --encoding"
        )
        name = "UTF-8" if utf8 else encoding
        raise InputError(f"is not {name} text (byte 0x{byte.hex()}); {hint}", path=path, line=line) from None
    return data if utf8 else text.encode("utf-8")


def _blank_header(data: bytes) -> bytes:
    """The bytes with their first line that is not blank (a header naming the columns) made
    blank: spaces in place of its bytes, so that line numbers and byte offsets stay the file's
    (a file rewritten from them keeps its header)."""
    at = 0
    while True:
        end = data.find(b"\n", at)
        stop = len(data) if end < 0 else end
        if data[at:stop].strip():
            return data[:at] + b" " * (stop - at) + data[stop:]
        if end < 0:
            return data
        at = end + 1


_TAB_BETWEEN_WORDS = re.compile(rb"[^\s][ \t]*\t[ \t]*[^\s]")


@record
class Lines:
    """Lines and their fields. Content line ``i`` has the fields ``first_field[i]`` to
    ``first_field[i] + n_fields[i] - 1`` of the field arrays; a blank line has none."""

    field_starts: IntArray
    field_ends: IntArray
    first_field: IntArray
    n_fields: IntArray
    blank: npt.NDArray[np.bool_]
    line_start: IntArray


def _lines(buf: npt.NDArray[np.uint8], is_nl: npt.NDArray[np.bool_], delimiter: str) -> Lines:
    """Any file: runs of spaces and tabs (or single tabs), CR line ends, whitespace-only blank lines."""
    newline = np.flatnonzero(is_nl)
    line_start = np.empty(newline.shape[0], dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = newline[:-1] + 1
    line_end = newline.astype(np.int64)
    has_cr = (line_end > line_start) & (buf[np.maximum(line_end - 1, 0)] == _CR)
    line_end = line_end - has_cr
    # Per-byte temporaries live only inside _fields, which keeps memory at a few times the input.
    field_starts, field_ends, n_fields, blank = _fields(buf, is_nl, delimiter, line_end)
    first_field = np.concatenate(([0], np.cumsum(n_fields)))[:-1]
    return Lines(field_starts, field_ends, first_field, n_fields, blank, line_start)


def _simple_lines(
    data: bytes, buf: npt.NDArray[np.uint8], is_nl: npt.NDArray[np.bool_], delimiter: str
) -> Lines | None:
    """The usual layout in a few passes over the bytes, or None for the general reader (``_lines``).

    Usual: no CR, fields split by exactly one separator (a space in a file without tabs, or a
    tab), no empty field, blank lines empty. Both readers give the same ``Lines`` on such files.
    """
    if b"\r" in data:
        return None
    sep = _TAB if delimiter == "tab" else _SPACE
    if sep == _SPACE and b"\t" in data:
        return None
    ends = np.flatnonzero(is_nl | (buf == sep))  # where every field ends
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    ends_line = is_nl[ends]
    newline_at = np.flatnonzero(ends_line)
    n_fields = np.diff(newline_at, prepend=-1)
    empty = np.flatnonzero(ends == starts)
    # An empty field is allowed only as a blank line: a newline right after a newline or at the start.
    if empty.shape[0] and not (ends_line[empty] & (ends_line[empty - 1] | (empty == 0))).all():
        return None
    first_field = newline_at - n_fields + 1
    line_start = starts[first_field]
    blank = ends[newline_at] == line_start
    if sep == _TAB and b" " in data:
        # A line of nothing but spaces and tabs is blank to the general reader: leave such files to it.
        line = np.searchsorted(ends[newline_at], np.flatnonzero(buf == _SPACE))
        spaces = np.bincount(line, minlength=newline_at.shape[0])
        if ((spaces > 0) & (spaces + n_fields - 1 == ends[newline_at] - line_start)).any():
            return None
    n_fields[blank] = 0
    return Lines(starts, ends, first_field, n_fields, blank, line_start)


def _usual_table(
    data: bytes,
    buf: npt.NDArray[np.uint8],
    path: str,
    delimiter: str,
    columns: Sequence[int],
    token_column: int,
    line_offset: int,
    allow_empty: bool,
    hash_comments: bool | None,
    newlines: IntArray | None = None,
) -> ConllTable | None:
    """The usual layout read straight into a table, or None for the general reader (``_lines``
    and ``_table``), which gives the same table on every file this one reads.

    Usual: no CR; every line empty, or of the same number of non-empty fields split by exactly
    one separator (a space in a file without tabs, or a tab); no comment line. Works on the
    content lines and the separators, found in one pass each over the bytes: a line holds
    exactly k separators when there are k per content line in all and each line's k-th lies
    inside it.
    """
    if b"\r" in data:
        return None
    sep = _TAB if delimiter == "tab" else _SPACE
    if sep == _SPACE and b"\t" in data:
        return None
    newline = np.flatnonzero(buf == _NL) if newlines is None else newlines
    # A line's length plus one: the distance from the newline before it (or the start).
    gap = np.empty_like(newline)
    gap[0] = newline[0] + 1
    np.subtract(newline[1:], newline[:-1], out=gap[1:])
    lines = np.flatnonzero(gap > 1)  # content lines, numbered from 0 among all lines
    n_lines = lines.shape[0]
    separators = np.flatnonzero(buf == sep)
    k = separators.shape[0] // n_lines if n_lines else 0
    if k == 0 or separators.shape[0] != k * n_lines:
        return None
    end = np.take(newline, lines)
    start = np.take(gap, lines)
    np.subtract(end, start, out=start)
    start += 1
    # Held to the end, the per-line arrays would add to the memory each process faults in once.
    del newline, gap
    at = separators.reshape(n_lines, k)
    # Separators are in byte order: each line's first after its start and its last before its end
    # puts exactly k in each line (none in empty lines); with gaps between them, no field is empty.
    if not ((at[:, 0] > start).all() and (at[:, -1] < end - 1).all()):
        return None
    if k > 1 and not (at[:, 1:] - at[:, :-1] > 1).all():
        return None
    n_columns = k + 1
    for col in (token_column, *columns):
        if not -n_columns <= col < n_columns:
            return None
    first = buf[start]  # cheaper than looking for "-DOCSTART-" in the bytes
    if sep == _TAB and b" " in data and (first == _SPACE).any():
        return None  # a line of spaces and tabs may be blank: the general reader looks at it
    comments = token_column % n_columns if hash_comments is None else hash_comments
    if comments and b"#" in data and (first == _HASH).any():
        return None  # comment lines
    docstart = None
    dash = np.flatnonzero(first == _DOCSTART[0])
    if dash.shape[0]:
        is_doc = (at[dash, 0] - start[dash] == len(_DOCSTART)) & _starts_with(buf, start[dash], _DOCSTART)
        if is_doc.any():
            docstart = dash[is_doc]
    doc_lines = None
    if docstart is not None:
        doc_lines = lines[docstart]
        keep = np.ones(n_lines, dtype=bool)
        keep[docstart] = False
        lines, start, end, at = lines[keep], start[keep], end[keep], at[keep]
        if lines.shape[0] == 0:
            return None
    n_tokens = lines.shape[0]
    # A token line starts a sentence unless the line before it is a token line.
    new_sentence = np.empty(n_tokens, dtype=bool)
    new_sentence[0] = True
    np.not_equal(lines[1:], lines[:-1] + 1, out=new_sentence[1:])
    sentence_first = np.flatnonzero(new_sentence)
    sentence_bounds = np.empty(sentence_first.shape[0] + 1, dtype=np.int64)
    sentence_bounds[:-1] = sentence_first
    sentence_bounds[-1] = n_tokens

    def field(j: int) -> tuple[IntArray, IntArray]:
        return (start if j == 0 else at[:, j - 1] + 1), (end if j == k else np.ascontiguousarray(at[:, j]))

    token_start, token_end = field(token_column % n_columns)
    cols = tuple(_column_ids(data, buf, *field(c % n_columns), lines, path, line_offset) for c in columns)
    n_docstart = 0 if doc_lines is None else int(doc_lines.shape[0])
    sentence_docstarts = None
    if doc_lines is not None:
        # -DOCSTART- lines before each sentence: none of them is the sentence's first line.
        sentence_docstarts = np.searchsorted(doc_lines, lines[sentence_first]).astype(np.int64)
        sentence_doc = np.maximum(sentence_docstarts - 1, 0)
    else:
        sentence_doc = np.zeros(sentence_first.shape[0], dtype=np.int64)
    return ConllTable(
        path=path,
        buffer=buf,
        token_start=token_start,
        token_end=token_end,
        token_line=lines + (1 + line_offset),
        sentence_bounds=sentence_bounds,
        sentence_doc=sentence_doc,
        n_documents=max(n_docstart, 1),
        columns=cols,
        n_columns=n_columns,
        line_offset=line_offset,
        n_docstarts=n_docstart,
        sentence_docstarts=sentence_docstarts,
    )


def _table(
    lines: Lines,
    data: bytes,
    buf: npt.NDArray[np.uint8],
    path: str,
    delimiter: str,
    columns: Sequence[int],
    token_column: int,
    line_offset: int,
    allow_empty: bool,
    hash_comments: bool | None,
    file_columns: Callable[[], int | None] | None = None,
) -> ConllTable:
    """Token lines, sentences, documents and label ids from the lines' fields."""
    field_starts, field_ends = lines.field_starts, lines.field_ends
    first_field, n_fields = lines.first_field, lines.n_fields
    content = ~lines.blank
    # Only lines starting with "-" or "#" can be -DOCSTART- or comments: look at those alone, and
    # only when the bytes are there at all.
    first_byte = buf[lines.line_start] if _DOCSTART in data or b"#" in data else None
    docstart = np.zeros(content.shape[0], dtype=bool)
    if first_byte is not None and _DOCSTART in data:
        dash = np.flatnonzero((first_byte == _DOCSTART[0]) & content)
        f = first_field[dash]
        docstart[dash] = (field_ends[f] - field_starts[f] == len(_DOCSTART)) & _starts_with(
            buf, lines.line_start[dash], _DOCSTART
        )
    if first_byte is not None and b"#" in data:
        hashed = np.flatnonzero((first_byte == _HASH) & content)
    else:
        hashed = np.zeros(0, dtype=np.int64)
    n_docstart = int(docstart.sum())

    # The number of columns is the most common one among token lines (lines of "#" may be comments).
    histogram = np.bincount(n_fields)
    histogram -= np.bincount(n_fields[lines.blank], minlength=histogram.shape[0])
    set_aside = np.concatenate((np.flatnonzero(docstart), hashed)) if n_docstart else hashed
    candidates = histogram - np.bincount(n_fields[set_aside], minlength=histogram.shape[0])
    asked = allow_empty and file_columns is not None and hashed.shape[0] and not candidates.any()
    known = file_columns() if asked and file_columns is not None else None
    if known is not None:
        # A part of a file with no token line but "#" lines: the file's token lines tell which of
        # them are comments, as in reading the whole file (a "#" line alone is not the column count).
        if (token_column % known if hash_comments is None else hash_comments) or not (n_fields[hashed] == known).any():
            return _empty(path, buf, len(columns), n_docstart, line_offset)
        candidates = np.bincount(n_fields[hashed[n_fields[hashed] == known]], minlength=histogram.shape[0])
    if not candidates.any():
        candidates = histogram - np.bincount(n_fields[docstart], minlength=histogram.shape[0])
    if not candidates.any():
        if allow_empty:  # a chunk of a larger file may hold only -DOCSTART- lines
            return _empty(path, buf, len(columns), n_docstart, line_offset)
        raise InputError("file has no token lines", path=path)
    n_columns = int(candidates.argmax())
    comment = np.zeros(content.shape[0], dtype=bool)
    if token_column % n_columns if hash_comments is None else hash_comments:
        # The first column is no token (an index column, as in GermEval 2014): a line starting
        # with "#" is a comment, even with as many fields as a token line ("#<TAB>url<TAB>date<TAB>").
        comment[hashed] = True
    else:
        comment[hashed[n_fields[hashed] != n_columns]] = True
    has_comment = bool(comment.any())
    token_line = content & ~docstart & ~comment if n_docstart or has_comment else content

    bad = token_line & (n_fields != n_columns) if candidates[n_columns] != candidates.sum() else None
    if bad is not None and bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"expected {n_columns} columns {'as most lines have' if i == 0 else 'like the lines before'},"
            f" found {int(n_fields[i])}"
            + (" (separate columns with one tab; a token may then contain spaces)" if delimiter == "tab" else ""),
            path=path,
            line=i + 1 + line_offset,
        )
    for col in (token_column, *columns):
        if not -n_columns <= col < n_columns:
            raise InputError(f"column {col} does not exist: lines have {n_columns} columns", path=path)

    token_lines = np.flatnonzero(token_line)
    if token_lines.shape[0] == 0:
        raise InputError("file has no token lines", path=path)
    base = first_field[token_lines]

    tok = base + token_column % n_columns
    cols = tuple(
        _column_ids(data, buf, field_starts[f], field_ends[f], token_lines, path, line_offset)
        for f in (base + c % n_columns for c in columns)
    )

    # A sentence starts at a token line whose previous non-comment line is blank, a -DOCSTART-, or none.
    breaks = lines.blank | docstart
    if has_comment:
        kept = np.flatnonzero(~comment)
        prev_is_break = np.ones(kept.shape[0], dtype=bool)
        prev_is_break[1:] = breaks[kept[:-1]]
        starts_sentence = np.zeros(content.shape[0], dtype=bool)
        starts_sentence[kept] = prev_is_break
        sentence_first = np.flatnonzero(starts_sentence[token_lines])
    elif n_docstart:
        new_sentence = breaks[token_lines - 1]
        new_sentence[token_lines == 0] = True
        sentence_first = np.flatnonzero(new_sentence)
    else:
        sentence_first = _sentence_starts(lines.blank)
    sentence_bounds = np.concatenate((sentence_first, [token_lines.shape[0]])).astype(np.int64)
    sentence_docstarts = None
    if n_docstart:
        doc_cum = np.cumsum(docstart)
        sentence_docstarts = doc_cum[token_lines[sentence_first]].astype(np.int64)
        sentence_doc = sentence_docstarts - 1
        sentence_doc[sentence_doc < 0] = 0
    else:
        sentence_doc = np.zeros(sentence_first.shape[0], dtype=np.int64)

    return ConllTable(
        path=path,
        buffer=buf,
        token_start=field_starts[tok].astype(np.int64, copy=False),
        token_end=field_ends[tok].astype(np.int64, copy=False),
        token_line=token_lines + (1 + line_offset),
        sentence_bounds=sentence_bounds,
        sentence_doc=sentence_doc,
        n_documents=max(n_docstart, 1),
        columns=cols,
        n_columns=n_columns,
        line_offset=line_offset,
        n_docstarts=n_docstart,
        sentence_docstarts=sentence_docstarts,
    )


def _sentence_starts(blank: npt.NDArray[np.bool_]) -> IntArray:
    """Index of each sentence's first token in a file of token lines and blank lines only: the
    token after each run of blank lines. Works on the few blank lines, not on every token."""
    at = np.flatnonzero(blank)
    # The line after blank line at[k] is token number at[k] - k, if it is a token line at all.
    followed = np.ones(at.shape[0], dtype=bool)
    followed[:-1] = at[1:] != at[:-1] + 1
    if at.shape[0] and at[-1] == blank.shape[0] - 1:
        followed[-1] = False
    firsts = (at - np.arange(at.shape[0]))[followed]
    if blank.shape[0] and not blank[0]:
        firsts = np.concatenate(([0], firsts))
    return firsts.astype(np.int64, copy=False)


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
    data: bytes,
    buf: npt.NDArray[np.uint8],
    start: IntArray,
    end: IntArray,
    lines: IntArray,
    path: str,
    line_offset: int,
) -> Column:
    """Map each label's bytes to an integer id; ids index a vocabulary of distinct label strings."""
    lengths = end - start
    longest = int(lengths.max())
    if int(lengths.min()) == 0:
        i = int(np.flatnonzero(lengths == 0)[0])
        raise InputError("empty label", path=path, line=int(lines[i]) + 1 + line_offset)
    width = max(8, -(-longest // 8) * 8)
    packed: npt.NDArray[np.uint8] | None = None
    columns: list[npt.NDArray[np.uint64]] = []
    if width == 8:
        # Labels of up to 8 bytes: their bytes are their keys.
        key = words_at(buf, start)
        key &= np.take(_MASKS, lengths)
    else:
        # Each label's bytes as 64-bit words, zero-padded, one column of words per 8 bytes (gathers
        # of one word each: a row of ``width`` bytes per label, gathered at once, is slower).
        # Past a label's end its words are masked to nothing, so where that is past the buffer's
        # end any offset inside it serves.
        last = len(buf) - 1
        columns = [
            prefix_words(buf, np.minimum(start + 8 * j, last), np.clip(lengths - 8 * j, 0, 8))
            for j in range(width // 8)
        ]
        key = columns[0].copy()
        for column in columns[1:]:
            key = key * np.uint64(0x9E3779B97F4A7C15) ^ column
    # Few distinct labels: find them in a small sample (a chunk is scored in a few ms, a large
    # sample's sort would dominate), place every key by binary search, and add what the sample missed.
    uniq, first = np.unique(key[:4096], return_index=True)
    while True:
        inverse = _find(uniq, key)
        missed = np.flatnonzero(np.take(uniq, inverse) != key)
        if not missed.shape[0]:
            break
        # A key missed is new; its first miss is its first occurrence.
        new, at = np.unique(key[missed], return_index=True)
        uniq = np.concatenate((uniq, new))
        first = np.concatenate((first, missed[at]))
        order = np.argsort(uniq)
        uniq, first = uniq[order], first[order]
    if b"\0" in data:
        # NUL bytes in a label are corruption (and a short label's key, its bytes, would not tell
        # "B-X\0" from "B-X"): name the first line whose label holds one.
        nul = np.flatnonzero(buf == 0)
        at = np.searchsorted(nul, start)
        holds = (at < nul.shape[0]) & (nul[np.minimum(at, nul.shape[0] - 1)] < end)
        if holds.any():
            i = int(np.flatnonzero(holds)[0])
            raise InputError("label contains a NUL byte", path=path, line=int(lines[i]) + 1 + line_offset)
    if columns:
        # Hash collisions are checked: every label's words equal those of its key's first label.
        owner = np.take(first, inverse)
        if not all(np.array_equal(column, np.take(column, owner)) for column in columns):
            packed = np.stack(columns, axis=1).view(np.uint8)
    if packed is not None:
        labels_all = packed.view(f"S{width}").ravel()
        uniq_s, inverse = np.unique(labels_all, return_inverse=True)
        raw = [bytes(s) for s in uniq_s]
    else:
        raw = [buf[start[f] : start[f] + lengths[f]].tobytes() for f in first]
    vocab = []
    for k, label in enumerate(raw):
        try:
            vocab.append(label.decode("utf-8").strip())
        except UnicodeDecodeError as exc:
            # Two labels that differ only in invalid bytes must not become one type: refuse.
            i = int(np.flatnonzero(inverse == k)[0])
            raise InputError(
                f"label is not UTF-8 text (byte {exc.start}: {label[exc.start : exc.start + 1]!r});"
                " save the file as UTF-8",
                path=path,
                line=int(lines[i]) + 1 + line_offset,
            ) from None
    return _dedupe(Column(ids=inverse.astype(np.int64, copy=False).ravel(), vocab=tuple(vocab)))


# Odd 64-bit multipliers for _find's hash, tried in turn.
_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3],
    dtype=np.uint64,
)


def _find(uniq: npt.NDArray[np.uint64], key: npt.NDArray[np.uint64]) -> IntArray:
    """Where each key is in the sorted ``uniq`` (any index for a key that is not there), through a
    collision-free multiplicative hash of the few distinct keys: one multiply and one lookup per
    key, against a dozen branchy comparisons for a binary search."""
    bits = max(int(uniq.shape[0]).bit_length() + 2, 4)
    shift = np.uint64(64 - bits)
    for m in _MULTIPLIERS:
        slots = ((uniq * m) >> shift).astype(np.int64)
        ordered = np.sort(slots)  # not np.unique: it imports numpy.ma (18 ms) in every worker
        if (ordered[1:] != ordered[:-1]).all():
            table = np.zeros(1 << bits, dtype=np.int64)
            table[slots] = np.arange(uniq.shape[0])
            hashed = key * m
            hashed >>= shift
            found: IntArray = np.take(table, hashed.view(np.int64))
            return found
    nearest: IntArray = np.minimum(np.searchsorted(uniq, key), uniq.shape[0] - 1)
    return nearest


# _MASKS[k] keeps the first k bytes of a little-endian 64-bit word.
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def prefix_words(buf: npt.NDArray[np.uint8], start: IntArray, lengths: IntArray) -> npt.NDArray[np.uint64]:
    """The first (up to) 8 bytes of each field as one integer; bytes past a field's end are zero."""
    words = words_at(buf, start)
    words &= prefix_masks(lengths)
    return words


def words_at(buf: npt.NDArray[np.uint8], start: IntArray) -> npt.NDArray[np.uint64]:
    """The 8 bytes from each offset as one little-endian integer (zeros past the buffer's end).

    Read as the two aligned words each offset falls across, shifted together: gathering from a
    view with a word at every byte offset is as quick, but numpy first copies that view (8 bytes
    per byte of the buffer, 4 MB for a 512 KiB chunk), which a fresh worker process then faults in.
    """
    n = len(buf)
    words = np.zeros((n >> 3) + 2, dtype=np.uint64)  # a whole zero word past the last byte
    words.view(np.uint8)[:n] = buf
    start = np.asarray(start, dtype=np.int64)
    at = start >> 3
    shift = (start & 7).view(np.uint64)
    shift <<= _THREE  # bits below the offset in its first word
    low: npt.NDArray[np.uint64] = np.take(words, at)
    low >>= shift
    at += 1
    high = np.take(words, at)
    # The next word's bytes go above the first's: a shift by 64 - shift, done as 1 then 63 - shift
    # so that an aligned offset (shift 0) shifts them out entirely.
    high <<= _ONE
    np.subtract(_SIXTY_THREE, shift, out=shift)
    high <<= shift
    low |= high
    return low


_ONE, _THREE, _SIXTY_THREE = np.uint64(1), np.uint64(3), np.uint64(63)


def prefix_masks(lengths: IntArray) -> npt.NDArray[np.uint64]:
    """Masks that keep the first ``lengths`` bytes (up to 8) of a little-endian word."""
    masks: npt.NDArray[np.uint64] = np.take(_MASKS, np.minimum(lengths, 8))
    return masks


def _dedupe(col: Column) -> Column:
    """Labels equal after stripping spaces share one id."""
    if len(set(col.vocab)) == len(col.vocab):
        return col
    names = sorted(set(col.vocab))
    index = {name: i for i, name in enumerate(names)}
    remap = np.array([index[v] for v in col.vocab], dtype=np.int64)
    return Column(ids=remap[col.ids], vocab=tuple(names))
