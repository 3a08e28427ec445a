"""What the formats share: sorted documents (``io.document.Document``), the checks, and atomic writing."""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError, shorten
from ..document import Document, Fragments, Span
from ..files import open_input, read_bytes


@dataclass
class ReadNotes:
    """What a reader passed over (``skipped``: counts by kind) or had to reconcile (``misaligned``:
    one dict per problem, with the file, line or document id and ``what``)."""

    skipped: dict[str, int] = field(default_factory=dict)
    misaligned: list[dict[str, Any]] = field(default_factory=list)
    # Ids of documents the file holds but the reader left out (a task nobody annotated, a rejected
    # record): the other side's copy is left out of scoring with them, not counted as missed.
    left_out: set[str] = field(default_factory=set)

    def skip(self, what: str, count: int = 1) -> None:
        if count:
            self.skipped[what] = self.skipped.get(what, 0) + count

    def leave_out(self, doc_id: Any, what: str) -> None:
        self.skip(what)
        if isinstance(doc_id, str | int) and not isinstance(doc_id, bool):
            self.left_out.add(str(doc_id))


Fail = Callable[[str], InputError]


def make_doc(
    doc_id: str,
    text: str,
    spans: Sequence[Span],
    fragments: Sequence[Fragments | None] | None = None,
    line: int = 0,
    tokens: Sequence[tuple[int, int]] | None = None,
    levels: Sequence[str] = (),
) -> Document:
    """A document with its spans sorted, so that two readings of the same mentions compare equal
    (``levels``: each span's nesting level, where the reader gives them)."""
    frags: list[Fragments | None] = list(fragments) if fragments is not None else [None] * len(spans)
    order = sorted(range(len(spans)), key=lambda k: (spans[k], frags[k] or (), levels[k] if levels else ""))
    kept = tuple(frags[k] for k in order)
    return Document(
        id=doc_id,
        text=text,
        spans=tuple(spans[k] for k in order),
        fragments=kept if any(f is not None for f in kept) else (),
        line=line,
        tokens=None if tokens is None else tuple(sorted(tokens)),
        levels=tuple(levels[k] for k in order) if levels else (),
    )


def check_span(start: Any, end: Any, label: Any, text: str, what: str, fail: Fail) -> Span:
    """The span, or the reader's InputError saying what is wrong with it."""
    # type() rather than isinstance: JSON gives plain ints, and True is not an offset.
    if type(start) is not int or type(end) is not int:
        raise fail(f"{what}: start and end must be integers, got {start!r} and {end!r}")
    if not 0 <= start < end <= len(text):
        raise fail(f"{what}: need 0 <= start < end <= {len(text)} (text length), got {start}..{end}")
    if type(label) is not str or not label.strip():
        raise fail(f"{what}: the label must be a non-empty string, got {label!r}")
    no_surrogates(label, f"{what}: the label", fail)
    return (start, end, label)


_SURROGATE = re.compile("[\ud800-\udfff]")


def no_surrogates(value: str, what: str, fail: Fail) -> None:
    """JSON can escape half a UTF-16 pair alone: no character, and no output could hold it."""
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise fail(f"{what} holds a lone surrogate \\u{ord(bad.group()):04x} at character {bad.start()}")


class Ids:
    """Document ids seen so far: a repeated one is an error naming where it was first."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def add(self, doc_id: str, where: str, fail: Fail) -> None:
        if doc_id in self.seen:
            raise fail(f"document id {shorten(doc_id)} repeats ({self.seen[doc_id]} has it too)")
        self.seen[doc_id] = where


DEDUPE = ("first", "last", "merge")


def check_dedupe(value: Any, fmt: str) -> str | None:
    """The ``dedupe`` option: None (a repeated document is an error), or how to keep one."""
    if value is None:
        return None
    if isinstance(value, str) and value in DEDUPE:
        return value
    raise OptionError(f"{fmt}: dedupe takes {', '.join(DEDUPE)}, not {value!r}")


class Collected:
    """A reader's documents in file order; a document whose id repeats is refused, or kept once as
    ``dedupe`` says: the first, the last, or one with the mentions of all (the same text each
    time), each repeat counted."""

    def __init__(self, dedupe: str | None) -> None:
        self.dedupe = dedupe
        self.docs: list[Document] = []
        self.at: dict[str, tuple[int, str]] = {}  # id -> (index in docs, where it was first)

    def add(self, doc: Document, where: str, fail: Fail, notes: ReadNotes) -> None:
        first = self.at.get(doc.id)
        if first is None:
            self.at[doc.id] = (len(self.docs), where)
            self.docs.append(doc)
            return
        k, earlier = first
        if self.dedupe is None:
            raise fail(
                f"document id {shorten(doc.id)} repeats ({earlier} has it too): keep one with the reader option"
                " dedupe=first, last or merge (--reference-option or --predicted-option dedupe=first)"
            )
        kept = self.docs[k]
        if self.dedupe == "first":
            notes.skip("repeated documents (the first kept)")
        elif self.dedupe == "last":
            notes.skip("repeated documents (the last kept)")
            self.docs[k] = doc
        else:
            if doc.text != kept.text:
                raise fail(f"document id {shorten(doc.id)} repeats ({earlier}) with another text: cannot merge")
            notes.skip("repeated documents (merged)")
            self.docs[k] = make_doc(
                doc.id, kept.text, sorted(set(kept.spans) | set(doc.spans)), line=kept.line, tokens=kept.tokens
            )


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def flag(value: Any, name: str, fmt: str) -> bool:
    """A yes/no reader option: a bool, or as the command line gives it, a word ("true", "false")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise OptionError(f"{fmt}: {name} is true or false, not {value!r}")


_UTF16 = (
    "UTF-16 text (as Windows PowerShell and Notepad save it): spanscore reads UTF-8; save it as UTF-8"
    " (iconv -f UTF-16 -t UTF-8 FILE > NEW)"
)


def check_encoding(head: bytes, name: str) -> None:
    """UTF-16 is refused by name: its ASCII is valid UTF-8 with a NUL after each character, which
    would otherwise be reported as malformed JSON."""
    if (
        head.startswith((b"\xff\xfe", b"\xfe\xff"))
        or (len(head) >= 4 and b"\x00" not in (head[0:1] + head[2:3]) and head[1] == head[3] == 0)
        or (len(head) >= 4 and head[0] == head[2] == 0 and b"\x00" not in (head[1:2] + head[3:4]))
    ):
        raise InputError(_UTF16, path=name)


def check_file_encoding(path: str | Path) -> None:
    """``check_encoding`` on the first bytes of a file read line by line."""
    with open_input(path) as handle:
        try:
            head = handle.read(4)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None
    check_encoding(head, str(path))


def decode(data: bytes, name: str) -> str:
    """The UTF-8 text of a whole file (a UTF-8 byte order mark skipped), or an InputError saying
    what it is instead."""
    check_encoding(data[:4], name)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8", path=name) from None


def load_json(path: str | Path, expected: str = "one JSON value") -> Any:
    """A whole JSON file, or an InputError naming the file and line; a file of JSON Lines (an
    object per line) is named as such, with what was ``expected`` instead."""
    name = str(path)
    text = decode(read_bytes(path), name)
    if not text.strip():
        raise InputError(f"file is empty: expected {expected}", path=name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _one_value_per_line(text):
            raise InputError(
                f"JSON Lines (one JSON value per line), where {expected} is expected: put them in one list"
                " (jq -s . FILE)",
                path=name,
            ) from None
        raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", path=name, line=exc.lineno) from None


def _one_value_per_line(text: str) -> bool:
    lines = [line for line in text.split("\n")[:3] if line.strip()]
    try:
        return len(lines) > 1 and all(isinstance(json.loads(line), dict | list) for line in lines)
    except json.JSONDecodeError:
        return False


def json_id(doc_id: str) -> str | int:
    """An id as the tools write it: a number where the string is one, so "17" goes back as 17 and
    reads back as "17" (ids like "007" stay strings: they would not)."""
    if doc_id.isascii() and doc_id.isdigit() and str(int(doc_id)) == doc_id:
        return int(doc_id)
    return doc_id


def whitespace_tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of non-whitespace characters."""
    return [m.span() for m in re.finditer(r"\S+", text)]


def cut_tokens(
    start: int, end: int, tokens: Sequence[tuple[int, int]], starts: Sequence[int] | None = None
) -> dict[str, Any] | None:
    """Which boundaries of the span fall strictly inside a token (``tokens`` sorted), or None;
    ``starts`` are the tokens' starts, where the caller checks many spans against one text."""
    if starts is None:
        starts = [s for s, _ in tokens]
    boundaries: list[str] = []
    cut: list[list[int]] = []
    for name, position in (("start", start), ("end", end)):
        k = bisect.bisect_left(starts, position) - 1  # the last token starting before the boundary
        if k >= 0 and starts[k] < position < tokens[k][1]:
            boundaries.append(name)
            cut.append([tokens[k][0], tokens[k][1]])
    if not boundaries:
        return None
    return {"boundary": " and ".join(boundaries), "tokens": cut}


def name_list(names: Iterable[str], limit: int = 5) -> str:
    """'a', 'b' and 3 more: names for a one-line message."""
    items = list(dict.fromkeys(names))
    shown = ", ".join(shorten(n, 40) for n in items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


def writable(
    docs: Iterable[Document], fmt: str, *, drop_fragments: bool = False, keeps_fragments: bool = False
) -> list[Document]:
    """The documents, checked before anything is written: ids unique, spans inside their text,
    and no discontinuous mention where the format would turn it into one span."""
    out = list(docs)
    seen: set[str] = set()
    repeated: list[str] = []
    for doc in out:
        if not isinstance(doc, Document):
            raise OptionError(f"{fmt}: expected spanscore.io.document.Document objects, got {type(doc).__name__}")
        if doc.id in seen:
            repeated.append(doc.id)
        seen.add(doc.id)
        _check_doc(doc, fmt)
    if repeated:
        raise OptionError(f"{fmt}: document ids repeat ({name_list(repeated)}): each document needs its own id")
    if keeps_fragments:
        return out
    broken = [doc.id for doc in out for f in doc.fragments if f is not None]
    if not broken:
        return out
    if drop_fragments:
        return [replace(doc, fragments=()) for doc in out]
    raise OptionError(
        f"{fmt} has no discontinuous mentions: {len(broken)} in documents {name_list(broken)} would each become one"
        " span from its first fragment to its last (pass drop_fragments=True to write them so; on the command"
        " line, read them so: --option drop_fragments=true)"
    )


def _check_doc(doc: Document, fmt: str) -> None:
    def fail(what: str) -> OptionError:
        return OptionError(f"{fmt}: document {shorten(doc.id)}: {what}")

    if not isinstance(doc.id, str) or not isinstance(doc.text, str):
        raise fail("id and text must be strings")
    if doc.fragments and len(doc.fragments) != len(doc.spans):
        raise fail(f"{len(doc.fragments)} fragment entries for {len(doc.spans)} spans (need one per span, or none)")
    for k, (start, end, label) in enumerate(doc.spans):
        if type(start) is not int or type(end) is not int or not 0 <= start < end <= len(doc.text):
            raise fail(f"span {k} ({start!r}..{end!r}) is not inside its text of {len(doc.text)} characters")
        if type(label) is not str or not label.strip():
            raise fail(f"span {k}: the label must be a non-empty string, got {label!r}")
        pieces = doc.fragments[k] if doc.fragments else None
        if pieces is not None and (
            not pieces
            or min(s for s, _ in pieces) != start
            or max(e for _, e in pieces) != end
            or any(not start <= s < e <= end for s, e in pieces)
        ):
            raise fail(f"span {k}: its fragments {pieces!r} do not run from its start {start} to its end {end}")
    # A lone surrogate (half a UTF-16 pair) is no character: no UTF-8 file could hold it.
    if _SURROGATE.search(doc.text) or any(_SURROGATE.search(label) for _, _, label in doc.spans):
        raise fail("its text or a label holds a lone surrogate (half a UTF-16 pair)")


@contextlib.contextmanager
def atomic_folder(path: str | Path, fmt: str) -> Iterator[Path]:
    """A staging folder beside ``path``, moved into place when the block ends without error (and
    removed otherwise): the folder is complete or absent. An existing folder must be empty, so
    that nothing in it is lost or mixed with what is written."""
    target = Path(path)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise OptionError(f"{target}: exists and is not an empty folder ({fmt} writes a folder of its own)")
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=parent))
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(target)) from None
    try:
        yield staging
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes the folder private
        if target.is_dir():
            os.rmdir(target)  # empty (checked above); not every system renames over a folder
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
