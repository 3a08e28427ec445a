"""BRAT standoff: a folder of ``NAME.txt`` (the text) and ``NAME.ann`` (its annotations).

Documents are paired by file name, in subfolders too (hidden ones skipped); the id is the path
without ``.txt`` (``train/doc1``). A ``.txt`` alone is a document without mentions; an ``.ann`` alone is an error.
Offsets count characters of the ``.txt`` read as UTF-8 with its line ends as they are.

Entity lines ``T1<TAB>LABEL START END<TAB>text`` are mentions; a discontinuous one
(``START END;START END``) stays one mention, its span running from the first fragment's start to
the last one's end and ``Document.fragments`` keeping the pieces (``drop_fragments`` keeps the
extent alone). The text column must be the text at
those offsets (fragments joined by a space, BRAT's convention). A text-bound line that is an
event's trigger is no mention: it is counted in ``ReadNotes.skipped`` ("event triggers") with the
relations (R), events (E), attributes (A, M), normalisations (N), equivalences (*) and notes (#).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ...errors import InputError, OptionError, shorten
from ..document import Document, Fragments, Span
from ..files import read_bytes
from ._base import ReadNotes, atomic_folder, check_encoding, flag, make_doc, name_list, writable

_SKIPPED = {
    "R": "relations",
    "E": "events",
    "A": "attributes",
    "M": "attributes",
    "N": "normalizations",
    "*": "equivalences",
    "#": "notes",
}
_OFFSETS = re.compile(r"\d+ \d+(?:;\d+ \d+)*")


def read(path: str | Path, *, drop_fragments: bool | str = False) -> tuple[list[Document], ReadNotes]:
    """The documents of the folder; ``drop_fragments`` reads a discontinuous mention as its extent
    alone (what it is scored as anyway), for formats that cannot hold its fragments."""
    drop = flag(drop_fragments, "drop_fragments", "brat")
    root = Path(path)
    if not root.is_dir():
        raise InputError("not a folder: BRAT is read from a folder of .txt and .ann files", path=str(root))
    texts = _files(root, ".txt")
    anns = _files(root, ".ann")
    orphans = sorted(set(anns) - set(texts))
    if orphans:
        raise InputError(f"no {orphans[0]}.txt beside it: its offsets point into nothing", path=str(anns[orphans[0]]))
    if not texts:
        raise InputError("no .txt files: BRAT is read from a folder of .txt and .ann files", path=str(root))
    notes = ReadNotes()
    docs = []
    for key in sorted(texts):
        text = _text(texts[key])
        spans, fragments = _annotations(anns[key], text, notes) if key in anns else ([], [])
        docs.append(make_doc(key, text, spans, None if drop else fragments))
    return docs, notes


def _files(root: Path, suffix: str) -> dict[str, Path]:
    found = {}
    for path in root.rglob(f"*{suffix}"):
        relative = path.relative_to(root)
        # Hidden files and folders are tools' (editor backups, checkpoints), not documents.
        if path.is_file() and not any(part.startswith(".") for part in relative.parts):
            found[relative.as_posix()[: -len(suffix)]] = path
    return found


def _text(path: Path) -> str:
    data = read_bytes(path)
    check_encoding(data[:4], str(path))
    try:
        # A byte order mark is kept: brat counts it as the text's first character.
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}): save it as UTF-8", path=str(path)
        ) from None


def _annotations(path: Path, text: str, notes: ReadNotes) -> tuple[list[Span], list[Fragments | None]]:
    name = str(path)
    entities: list[tuple[str, str, Fragments]] = []
    lines: dict[str, int] = {}
    triggers: set[str] = set()
    for number, line in enumerate(_text(path).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        kind = line[0]
        if kind == "T":
            tid, label, pieces = _entity(line, text, name, number)
            if tid in lines:
                raise InputError(f"{tid} is also on line {lines[tid]}", path=name, line=number)
            lines[tid] = number
            entities.append((tid, label, pieces))
        elif kind in _SKIPPED:
            notes.skip(_SKIPPED[kind])
            if kind == "E":
                triggers.add(_trigger(line, name, number))
        else:
            raise InputError(
                f"not a BRAT annotation line (T, R, E, A, M, N, * or #): {shorten(line)}", path=name, line=number
            )
    spans: list[Span] = []
    fragments: list[Fragments | None] = []
    for tid, label, pieces in entities:
        if tid in triggers:
            notes.skip("event triggers")
            continue
        spans.append((min(s for s, _ in pieces), max(e for _, e in pieces), label))
        fragments.append(pieces if len(pieces) > 1 else None)
    return spans, fragments


def _entity(line: str, text: str, name: str, number: int) -> tuple[str, str, Fragments]:
    columns = line.split("\t", 2)
    if len(columns) != 3:
        raise InputError(
            "an entity line needs three tab-separated columns: ID, TYPE START END, text", path=name, line=number
        )
    tid, middle, shown = columns
    label, _, offsets = middle.partition(" ")
    if not label or not _OFFSETS.fullmatch(offsets):
        raise InputError(
            f"{tid}: expected TYPE START END[;START END...], got {shorten(middle)}", path=name, line=number
        )
    pieces = tuple((int(s), int(e)) for s, e in (piece.split(" ") for piece in offsets.split(";")))
    for start, end in pieces:
        if not start < end <= len(text):
            raise InputError(
                f"{tid}: need start < end <= {len(text)} (text length), got {start}..{end}", path=name, line=number
            )
    actual = " ".join(text[s:e] for s, e in pieces)
    # brat's own rule: the column starts with the mentioned text (fragments joined by a space, or
    # run together as before brat 1.3), and what follows it, if anything, is a comment after white
    # space ("A2/A2 genotype " in PGxCorpus).
    joined = "".join(text[s:e] for s, e in pieces)
    if not (_shows(shown, actual) or _shows(shown, joined)):
        raise InputError(
            f"{tid}: the text column {shorten(shown, 40)} is not the text at {offsets} ({shorten(actual, 40)})",
            path=name,
            line=number,
        )
    return tid, label, pieces


def _shows(column: str, mention: str) -> bool:
    return column == mention or (column.startswith(mention) and column[len(mention)].isspace())


def _trigger(line: str, name: str, number: int) -> str:
    columns = line.split("\t")
    head = columns[1].split(" ", 1)[0] if len(columns) > 1 else ""
    event_type, sep, trigger = head.partition(":")
    if not (event_type and sep and trigger):
        raise InputError(f"an event line needs TYPE:TRIGGER after its id, got {shorten(line)}", path=name, line=number)
    return trigger


_CONF = (
    "# The entity types of these documents (written by spanscore).\n"
    "[entities]\n{}\n[relations]\n[events]\n[attributes]\n"
)


def write(docs: Iterable[Document], path: str | Path) -> None:
    """A new folder of ``ID.txt`` + ``ID.ann`` (+ ``annotation.conf``): lossless for mentions,
    discontinuous ones included. Refused: an existing folder that is not empty, an id that is no
    relative file name (or a hidden one, which reading skips), a label with whitespace, a mention
    whose text has a line break (the ``.ann`` line would end there)."""
    checked = writable(docs, "brat", keeps_fragments=True)
    bad_ids = [doc.id for doc in checked if not _file_name(doc.id)]
    if bad_ids:
        raise OptionError(f"brat: document ids {name_list(bad_ids)} cannot be file names (ID.txt and ID.ann)")
    bad_labels = sorted({label for doc in checked for _, _, label in doc.spans if re.search(r"\s", label)})
    if bad_labels:
        raise OptionError(f"brat: labels {name_list(bad_labels)} hold whitespace, which ends a label in an .ann line")
    broken = [doc.id for doc in checked for piece in _pieces(doc) if re.search("[\n\r]", doc.text[piece[0] : piece[1]])]
    if broken:
        raise OptionError(
            f"brat: mentions in documents {name_list(broken)} hold a line break, which would end their .ann line"
            " (BRAT splits such a mention into fragments)"
        )
    labels = sorted({label for doc in checked for _, _, label in doc.spans})
    with atomic_folder(path, "brat") as staging:
        for doc in checked:
            target = staging / f"{doc.id}.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(doc.text.encode("utf-8"))
            target.with_suffix(".ann").write_bytes("".join(_ann_lines(doc)).encode("utf-8"))
        (staging / "annotation.conf").write_text(_CONF.format("\n".join(labels)), encoding="utf-8")


def _pieces(doc: Document) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for k, (start, end, _) in enumerate(doc.spans):
        frags = doc.fragments[k] if doc.fragments else None
        out.extend(frags if frags is not None else [(start, end)])
    return out


def _ann_lines(doc: Document) -> list[str]:
    lines = []
    for k, (start, end, label) in enumerate(doc.spans):
        frags = doc.fragments[k] if doc.fragments else None
        pieces = frags if frags is not None else ((start, end),)
        offsets = ";".join(f"{s} {e}" for s, e in pieces)
        shown = " ".join(doc.text[s:e] for s, e in pieces)
        lines.append(f"T{k + 1}\t{label} {offsets}\t{shown}\n")
    return lines


def _file_name(doc_id: str) -> bool:
    # Relative, inside the folder and read back: no empty part (a leading or doubled /), none hidden.
    return all(
        part and not part.startswith(".") and "\0" not in part and "\\" not in part for part in doc_id.split("/")
    )
