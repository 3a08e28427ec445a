"""WebAnno TSV 3 (``#FORMAT=WebAnno TSV 3.x``), as INCEpTION and WebAnno export a document.

A file is one document (id ``0``); a folder is read file by file (every ``*.tsv`` below it, hidden
ones skipped), each a document whose id is its path without ``.tsv`` (``doc1.txt/alice``, as an
INCEpTION project export lays them out).

The header names the layers: ``#T_SP=LAYER|FEATURE|...`` (span layers), ``#T_CH=`` (chains) and
``#T_RL=`` (relations), each taking one column per feature (one where it has none), in header order
after the three of a token line ``SENT-TOK<TAB>BEGIN-END<TAB>TOKEN``. One span layer is read
(``layer=``, its full or its short name; by default the only one, or DKPro's ``NamedEntity`` where
there are several) and one of its features is the label (``feature=``; by default ``value`` where
the layer has it, else its first; a mention without a value, ``*``, is labelled with the layer's
short name). A cell holds ``_`` (nothing), or annotations separated by ``|`` (stacked: each is a
mention of its own); ``[N]`` joins the lines of one multi-token annotation. Sub-token lines
(``1-2.1``) carry annotations on part of a token, at their own offsets. Offsets count UTF-16 code
units, as Java does; they are turned into characters. The text is the sentences (``#Text=``,
several for a sentence with line breaks) at their offsets, with what lies between sentences, which
the format does not keep, read as spaces. A zero-width annotation is no mention: it is counted in
``ReadNotes.skipped``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError, OptionError, shorten
from ..document import Document, Span, text_tokens
from ..files import read_bytes
from ._base import ReadNotes, atomic_folder, make_doc, name_list, writable

NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
_POSITION = re.compile(r"(\d+)-(\d+)(?:\.(\d+))?")
_OFFSETS = re.compile(r"(\d+)-(\d+)")
_ID = re.compile(r"(?<!\\)\[(\d+)\]$")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r"}


@dataclass
class _Layer:
    kind: str  # SP, CH or RL
    name: str
    features: list[str]
    column: int  # its first column in a token line

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def width(self) -> int:
        return max(1, len(self.features))


@dataclass
class _Unit:
    line: int
    begin: int  # UTF-16 offsets, as in the file
    end: int
    text: str
    cell: str
    sub: bool


@dataclass
class _Sentence:
    lines: list[str] = field(default_factory=list)
    units: list[_Unit] = field(default_factory=list)


def read(path: str | Path, *, layer: str | None = None, feature: str | None = None) -> tuple[list[Document], ReadNotes]:
    """The document of a WebAnno TSV 3 file, or the documents of a folder of them."""
    root = Path(path)
    notes = ReadNotes()
    if root.is_dir():
        files = sorted(
            (p.relative_to(root).as_posix()[: -len(".tsv")], p)
            for p in root.rglob("*.tsv")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )
        if not files:
            raise InputError("no .tsv files: WebAnno TSV is read from a .tsv file or a folder of them", path=str(root))
    else:
        files = [("0", root)]
    docs = [_read_file(doc_id, file, layer, feature, notes) for doc_id, file in files]
    return docs, notes


def _unescape(value: str) -> str:
    out: list[str] = []
    k = 0
    while k < len(value):
        c = value[k]
        if c == "\\" and k + 1 < len(value):
            nxt = value[k + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            k += 2
            continue
        out.append(c)
        k += 1
    return "".join(out)


def _split_stack(cell: str) -> list[str]:
    """A cell's annotations: split at each ``|`` not escaped."""
    parts: list[str] = []
    current: list[str] = []
    k = 0
    while k < len(cell):
        c = cell[k]
        if c == "\\" and k + 1 < len(cell):
            current.append(cell[k : k + 2])
            k += 2
            continue
        if c == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
        k += 1
    parts.append("".join(current))
    return parts


def _text(path: Path) -> str:
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None


def _header(lines: list[str], name: str) -> tuple[list[_Layer], int]:
    first = lines[0] if lines else ""
    if not first.startswith("#FORMAT=WebAnno TSV 3"):
        raise InputError(
            f"not WebAnno TSV 3: the first line should be '#FORMAT=WebAnno TSV 3.x', got {shorten(first, 40)}"
            " (export the document from INCEpTION or WebAnno as WebAnno TSV v3)",
            path=name,
            line=1,
        )
    layers: list[_Layer] = []
    column = 3
    k = 1
    while k < len(lines) and lines[k].startswith(("#T_SP=", "#T_CH=", "#T_RL=")):
        kind = lines[k][3:5]
        layer_name, *items = lines[k][6:].split("|")
        features = [f for f in items if f]
        found = _Layer(kind, layer_name, features, column)
        layers.append(found)
        column += found.width
        k += 1
    return layers, k


def _choose(layers: list[_Layer], layer: str | None, feature: str | None, name: str) -> tuple[_Layer, int | None]:
    spans = [x for x in layers if x.kind == "SP"]
    if not spans:
        raise InputError("no span layer (#T_SP=) in the header: nothing to read as mentions", path=name)
    if layer is None:
        named = [x for x in spans if x.name == NAMED_ENTITY]
        if len(spans) > 1 and not named:
            layers_there = _names(spans)
            raise OptionError(f"{name}: several span layers ({layers_there}): choose one with layer=")
        chosen = named[0] if named else spans[0]
    else:
        picked = [x for x in spans if layer in (x.name, x.short)]
        if not picked:
            layers_there = _names(spans)
            raise OptionError(f"{name}: no span layer {layer!r}: the span layers are {layers_there}")
        chosen = picked[0]
    if feature is None:
        if not chosen.features:
            return chosen, None
        index = chosen.features.index("value") if "value" in chosen.features else 0
        return chosen, chosen.column + index
    if feature not in chosen.features:
        there = f"its features are {name_list(chosen.features)}" if chosen.features else "it has no features"
        raise OptionError(f"{name}: layer {chosen.name!r} has no feature {feature!r}: {there}")
    return chosen, chosen.column + chosen.features.index(feature)


def _names(layers: list[_Layer]) -> str:
    # Whole names (a layer's is long, and its short name alone may be ambiguous); files have few.
    return ", ".join(f"{x.short} ({x.name})" for x in layers)


def _read_file(doc_id: str, path: Path, layer: str | None, feature: str | None, notes: ReadNotes) -> Document:
    name = str(path)
    lines = _text(path).split("\n")
    lines = [line.removesuffix("\r") for line in lines]
    layers, k = _header(lines, name)
    chosen, column = _choose(layers, layer, feature, name)
    width = 3 + sum(x.width for x in layers)
    sentences: list[_Sentence] = []
    current: _Sentence | None = None
    for number in range(k + 1, len(lines) + 1):
        line = lines[number - 1]
        if not line:
            current = None
            continue
        if line.startswith("#Text="):
            if current is None or current.units:
                current = _Sentence()
                sentences.append(current)
            current.lines.append(_unescape(line[len("#Text=") :]))
            continue
        if line.startswith("#"):
            continue  # other comments (#Sentence.id=...) say nothing of mentions
        fields = line.split("\t")
        if len(fields) == width + 1 and fields[-1] == "":
            fields.pop()
        if len(fields) != width:
            raise InputError(
                f"a token line needs {width} tab-separated columns (3 + the header's layers), got {len(fields)}",
                path=name,
                line=number,
            )
        position, offsets = _POSITION.fullmatch(fields[0]), _OFFSETS.fullmatch(fields[1])
        if position is None or offsets is None:
            raise InputError(
                f"expected SENT-TOK and BEGIN-END in the first two columns, got {shorten(fields[0], 20)} and"
                f" {shorten(fields[1], 20)}",
                path=name,
                line=number,
            )
        if current is None:
            raise InputError("a token line before any #Text= line", path=name, line=number)
        begin, end = int(offsets.group(1)), int(offsets.group(2))
        if end < begin:
            raise InputError(f"offsets {begin}-{end} end before they begin", path=name, line=number)
        cell = fields[column] if column is not None else fields[chosen.column]
        current.units.append(
            _Unit(number, begin, end, _unescape(fields[2]), cell, position.group(3) is not None)
        )
    text, at = _place(sentences, name)
    tokens: list[tuple[int, int]] = []
    single: list[Span] = []
    joined: dict[int, list[int]] = {}  # annotation id -> [start, end]
    labels: dict[int, str] = {}
    zero = 0
    for sentence in sentences:
        for unit in sentence.units:
            start, end = _char(at, unit.begin, unit, name), _char(at, unit.end, unit, name)
            if text[start:end] != unit.text:
                raise InputError(
                    f"token {shorten(unit.text, 30)} is not the text at {unit.begin}-{unit.end}"
                    f" ({shorten(text[start:end], 30)})",
                    path=name,
                    line=unit.line,
                )
            if not unit.sub and start < end and not unit.text.isspace():
                tokens.append((start, end))
            if unit.cell == "_":
                continue
            for entry in _split_stack(unit.cell):
                found = _ID.search(entry)
                raw = entry[: found.start()] if found else entry
                label = chosen.short if column is None or raw in ("*", "") else _unescape(raw)
                if found is None:
                    if start < end:
                        single.append((start, end, label))
                    else:
                        zero += 1
                    continue
                ident = int(found.group(1))
                span = joined.get(ident)
                if span is None:
                    joined[ident] = [start, end]
                    labels[ident] = label
                else:
                    span[0], span[1] = min(span[0], start), max(span[1], end)
    spans = list(single)
    for ident, (start, end) in joined.items():
        if start < end:
            spans.append((start, end, labels[ident]))
        else:
            zero += 1
    notes.skip("zero-width annotations", zero)
    return make_doc(doc_id, text, spans, tokens=tokens)


def _place(sentences: list[_Sentence], name: str) -> tuple[str, dict[int, int]]:
    """The document's text, and each UTF-16 offset of a character boundary mapped to its character."""
    chars: list[str] = []
    at: dict[int, int] = {0: 0}
    units = 0
    for sentence in sentences:
        body = "\n".join(sentence.lines)
        if not sentence.units:
            continue
        first = sentence.units[0]
        lead = body.find(first.text) if first.text else 0
        if lead < 0:
            raise InputError(
                f"token {shorten(first.text, 30)} is not in its sentence's #Text", path=name, line=first.line
            )
        begin = first.begin - _utf16(body[:lead])
        if begin < units:
            raise InputError(
                f"the sentence begins at {begin}, inside the sentence before (which ends at {units})",
                path=name,
                line=first.line,
            )
        while units < begin:  # what lies between sentences is not in the file
            chars.append(" ")
            units += 1
            at[units] = len(chars)
        for c in body:
            chars.append(c)
            units += 2 if ord(c) > 0xFFFF else 1
            at[units] = len(chars)
    return "".join(chars), at


def _utf16(value: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in value)


def _char(at: dict[int, int], offset: int, unit: _Unit, name: str) -> int:
    found = at.get(offset)
    if found is None:
        raise InputError(
            f"offset {offset} is outside the sentences' text or inside a character", path=name, line=unit.line
        )
    return found


_HEADER = f"#FORMAT=WebAnno TSV 3.3\n#T_SP={NAMED_ENTITY}|identifier|value\n\n\n"
_VALUE_ESCAPES = {
    "\\": "\\\\", "[": "\\[", "]": "\\]", "|": "\\|", "_": "\\_", "*": "\\*", ";": "\\;", "\t": "\\t", "\n": "\\n",
    "\r": "\\r",
}
_TEXT_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\r": "\\r"}
_TOKEN_ESCAPES = {**_TEXT_ESCAPES, "\n": "\\n"}


def write(docs: Iterable[Document], path: str | Path, *, drop_fragments: bool = False) -> None:
    """A new folder of ``ID.tsv`` files, one per document, as INCEpTION's named-entity layer
    (``NamedEntity|identifier|value``): each document one sentence (its lines as ``#Text=`` lines),
    tokens cut where a mention starts or ends, every mention with its own id, so that stacked and
    nested mentions are kept. Refused: an id that is no relative file name, a document without a
    token (white space alone). White space is a token line only where a mention begins or ends on
    it (or the text does)."""
    checked = writable(docs, "webanno", drop_fragments=drop_fragments)
    bad_ids = [doc.id for doc in checked if not _file_name(doc.id)]
    if bad_ids:
        raise OptionError(f"webanno: document ids {name_list(bad_ids)} cannot be file names (ID.tsv)")
    empty = [doc.id for doc in checked if doc.text and not doc.text.strip()]
    if empty:
        raise OptionError(
            f"webanno: documents {name_list(empty)} are white space alone, which a sentence without a token cannot hold"
        )
    with atomic_folder(path, "webanno") as staging:
        for doc in checked:
            target = staging / f"{doc.id}.tsv"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_tsv(doc).encode("utf-8"))


def _tsv(doc: Document) -> str:
    text = doc.text
    if not text:
        return _HEADER  # an empty document: no sentence
    cuts = {0, len(text)}
    for start, end in text_tokens(text):
        cuts.update((start, end))
    for start, end, _ in doc.spans:
        cuts.update((start, end))
    for m in re.finditer(r"\s+", text):
        cuts.update(m.span())
    points = sorted(cuts)
    units = [0]
    for c in text:
        units.append(units[-1] + (2 if ord(c) > 0xFFFF else 1))
    body = _escape_text(text)
    lines = [_HEADER, *(f"#Text={line}\n" for line in body.split("\n"))]
    # White space is a token only where it must be: a mention's first or last piece, or the text's
    # first piece (the sentence is placed by its first token).
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for k, (start, end, _) in enumerate(doc.spans, start=1):
        starts.setdefault(start, []).append(k)
        ends.setdefault(end, []).append(k)
    active: set[int] = set()  # the mentions covering the piece (a piece is inside or outside each)
    number = 0
    for a, b in itertools.pairwise(points):
        active.difference_update(ends.get(a, ()))
        active.update(starts.get(a, ()))
        piece = text[a:b]
        if piece.isspace() and a != 0 and a not in starts and b not in ends:
            continue
        number += 1
        ids, values = [], []
        for k in sorted(active):
            label = doc.spans[k - 1][2]
            ids.append(f"*[{k}]")
            values.append(f"{''.join(_VALUE_ESCAPES.get(c, c) for c in label)}[{k}]")
        cells = "\t".join(("|".join(ids) or "_", "|".join(values) or "_"))
        token = "".join(_TOKEN_ESCAPES.get(c, c) for c in piece)
        lines.append(f"1-{number}\t{units[a]}-{units[b]}\t{token}\t{cells}\t\n")
    return "".join(lines)


def _escape_text(piece: str) -> str:
    return "".join(_TEXT_ESCAPES.get(c, c) for c in piece)


def _file_name(doc_id: str) -> bool:
    return all(
        part and not part.startswith(".") and "\0" not in part and "\\" not in part for part in doc_id.split("/")
    )


__all__ = ["NAMED_ENTITY", "read", "write"]
