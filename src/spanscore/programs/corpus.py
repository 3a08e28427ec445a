"""Corpus tools over one file: summarise, validate, repair and convert between encodings.

Output files are written whole to a temporary file and renamed, so an interrupted run never
leaves half a file behind.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from ..errors import InputError, OptionError
from ..io.conll import ConllTable, read_conll
from ..io.files import atomic_output, read_bytes, write_atomic
from ..io.jsonl import json_objects, read_jsonl
from ..io.load import decode_column
from ..io.reading import DEFAULT_READING, Reading, level_name
from ..stages.encoding import (
    InvalidTransition,
    Repair,
    check_repair,
    decode,
    encode,
    get_encoding,
    invalid_transitions,
    split_labels,
)
from ..stages.spans import Spans


def read_spans(path: str | Path, reading: Reading) -> tuple[ConllTable, Spans]:
    table = read_conll(
        path,
        columns=(reading.label_column,),
        token_column=reading.token_column,
        delimiter=reading.delimiter,
        encoding=reading.encoding,
        header=reading.header,
    )
    return table, decode_column(table, 0, reading.labels, reading.repair)


class CorpusSummary(TypedDict):
    """``summarize``: what ``spanscore summarize --json`` prints for one file."""

    path: str
    documents: int
    sentences: int
    tokens: int
    mentions: int
    types: dict[str, int]


def summarize(path: str | Path, reading: Reading = DEFAULT_READING, *, jobs: int = 1) -> CorpusSummary:
    """Documents, sentences, tokens and mentions per type (Table 1 of Kong and Sullivan for BTC).

    The file is read by the engine that scores (chunk by chunk, in ``jobs`` processes), as the
    reference and the prediction of one evaluation.
    """
    from ..api import evaluate  # the corpus tools sit beside the scorer, not under it

    counts = evaluate(
        reference=path,
        predicted=None if reading.merged else path,
        reading=reading,
        keep_details=False,
        jobs=jobs,
    ).counts
    return {
        "path": str(path),
        "documents": counts.documents,
        "sentences": counts.sentences,
        "tokens": counts.tokens,
        "mentions": int(counts.reference.sum()),
        "types": {t: int(c) for t, c in zip(counts.types, counts.reference.tolist(), strict=True)},
    }


@dataclass(frozen=True)
class Validation:
    path: str
    encoding: str
    problems: list[InvalidTransition]
    tokens: int
    sentences: int

    @property
    def ok(self) -> bool:
        return not self.problems


def validate(path: str | Path, reading: Reading = DEFAULT_READING) -> Validation:
    """Every invalid transition of the file under an encoding (unknown labels raise)."""
    return _validate(path, reading, reading.encoding)


def _validate(path: str | Path, reading: Reading, text: str | None) -> Validation:
    """``validate``, the file's bytes read in the ``text`` encoding (None: as they are)."""
    reading.one_level("validate and repair")
    spec = get_encoding(reading.labels)
    table = read_conll(
        path,
        columns=(reading.label_column,),
        token_column=reading.token_column,
        delimiter=reading.delimiter,
        encoding=text,
        header=reading.header,
    )
    col = table.columns[0]
    label_set = split_labels(col.vocab, spec, ids=col.ids, lines=table.token_line, path=table.path)
    decoded = decode(col.ids, table.sentence_bounds, label_set, spec, "conlleval")
    first = np.zeros(table.n_tokens, dtype=bool)
    first[table.sentence_bounds[:-1]] = True
    found = invalid_transitions(decoded, col.ids, col.vocab, table.token_line, first, table.path)
    return Validation(table.path, spec.name, found, table.n_tokens, table.n_sentences)


def _atomic_write(path: str | Path, chunks: Iterator[str]) -> None:
    with atomic_output(path) as out:
        for chunk in chunks:
            out.write(chunk.encode("utf-8"))


def repair_file(
    path: str | Path, out: str | Path, reading: Reading = DEFAULT_READING, *, method: str = "conlleval"
) -> int:
    """Write the file with invalid transitions repaired; returns how many there were."""
    rep: Repair = check_repair(method)
    if rep == "none":
        raise OptionError("repair needs a method: conlleval or discard")
    report = _validate(path, reading, None)  # the bytes are rewritten as they are, in any encoding
    _relabel_file(path, out, dataclasses.replace(reading, repair=rep), reading.labels)
    return len(report.problems)


def _relabel_file(path: str | Path, out: str | Path, reading: Reading, target: str) -> None:
    """Decode ``path`` as ``reading`` says, encode its mentions in ``target``, and write the file
    again with only the label column changed (``transform.relabel_bytes``)."""
    reading.one_level("converting between label encodings")
    from .transform import relabel_bytes

    spec = get_encoding(target)

    def labels(table: ConllTable) -> list[str]:
        spans = decode_column(table, 0, reading.labels, reading.repair)
        ids, vocab = encode(spans, table.n_tokens, table.sentence_bounds, spec)
        return [vocab[i] for i in ids.tolist()]

    data, _ = relabel_bytes(read_bytes(path), str(path), reading, labels)
    write_atomic(out, data)


def convert(path: str | Path, out: str | Path, reading: Reading = DEFAULT_READING, *, target: str = "BIOES") -> None:
    """Between label encodings (``reading.labels`` to ``target``), or to and from JSONL
    (``reading.format == "jsonl"``, ``target == "JSONL"``)."""
    dst = target.upper()
    if reading.format == "jsonl" and dst == "JSONL":
        raise OptionError(same_format(path, "JSONL"))
    if reading.format == "jsonl" and reading.level_columns:
        raise OptionError(f"{path}: JSONL's levels go by name (--levels outer,inner), not by column")
    if reading.format == "jsonl":
        _jsonl_to_conll(path, out, get_encoding(dst), reading.level_names)
        return
    if reading.levels and dst != "JSONL":
        raise OptionError(f"{path}: levels convert to JSONL, which holds nested mentions; not to {dst} (one level)")
    if reading.levels:
        table, spans, levels = _read_levels(path, reading)
        _atomic_write(out, _conll_to_jsonl(table, spans, levels))
        return
    if dst == "JSONL":
        table, spans = read_spans(path, reading)
        _atomic_write(out, _conll_to_jsonl(table, spans))
        return
    _relabel_file(path, out, reading, dst)


def _read_levels(path: str | Path, reading: Reading) -> tuple[ConllTable, Spans, list[str]]:
    """Every level's mentions as one set, and the level name of each (in the set's order)."""
    table = read_conll(
        path,
        columns=reading.level_columns,
        token_column=reading.token_column,
        delimiter=reading.delimiter,
        encoding=reading.encoding,
        header=reading.header,
    )
    decoded = [decode_column(table, k, reading.labels, reading.repair) for k in range(len(reading.level_columns))]
    types = tuple(sorted({t for d in decoded for t in d.types}))
    parts = [d.with_types(types) for d in decoded]
    level = np.concatenate([np.full(len(d), k, dtype=np.int64) for k, d in enumerate(parts)])
    start, end = np.concatenate([d.start for d in parts]), np.concatenate([d.end for d in parts])
    type_ = np.concatenate([d.type for d in parts])
    unit = np.concatenate([d.unit for d in parts])
    order = np.lexsort((level, type_, end, start))
    spans = Spans(start[order], end[order], type_[order], unit[order], types)
    return table, spans, [level_name(int(k)) for k in level[order].tolist()]


def same_format(path: str | Path, name: str) -> str:
    """Why a conversion from ``name`` to ``name`` is refused: it would write the file again as it is
    (spanscore's JSONL reader has no options to change what it reads, nor its writer what it writes,
    and fields it does not know would be lost)."""
    return (
        f"{path}: nothing to convert: the file is {name} already and --to {name} would write it unchanged;"
        " give --to a label encoding (BIO, BIOES...) or an annotation format"
    )


def writer_options(target: str, options: Mapping[str, str]) -> dict[str, Any]:
    """``--to-option`` KEY=VALUE strings as the writer of format ``target`` takes them: a key it
    does not take is refused, naming the keys it does; a yes/no option takes true or false; a
    whole number goes as a number where the option takes one (a Label Studio ``annotator`` is a
    user id). Checked before anything is read, so a typo costs no conversion."""
    from ..io import formats
    from ..io.formats._base import flag

    writer = formats.WRITERS[target]
    params = {p.name: p for p in inspect.signature(writer).parameters.values() if p.kind is p.KEYWORD_ONLY}
    typed: dict[str, Any] = {}
    for key, value in options.items():
        if key not in params:
            takes = f"it takes {', '.join(params)}" if params else "it takes none"
            raise OptionError(f"--to-option {key}: the {target} writer has no option {key!r} ({takes})")
        # The writers' annotations are strings (from __future__ import annotations).
        kinds = str(params[key].annotation).replace(" ", "").split("|")
        if kinds == ["bool"]:
            try:
                typed[key] = flag(value, key, target)
            except OptionError:
                raise OptionError(f"--to-option {key}={value}: {key} is true or false") from None
        elif "int" in kinds and value.isascii() and value.isdigit():
            typed[key] = int(value)
        else:
            typed[key] = value
    return typed


def _conll_to_jsonl(table: ConllTable, spans: Spans, levels: list[str] | None = None) -> Iterator[str]:
    """One JSON document per sentence: tokens joined by single spaces, spans in characters (with
    the nesting level of each, where the file has levels)."""
    order = np.argsort(spans.unit, kind="stable")
    unit_first = np.searchsorted(spans.unit[order], np.arange(table.n_sentences + 1))
    for s in range(table.n_sentences):
        lo, hi = int(table.sentence_bounds[s]), int(table.sentence_bounds[s + 1])
        toks = table.tokens(lo, hi)
        offsets = np.concatenate(([0], np.cumsum([len(t) + 1 for t in toks])))
        items = []
        for k in order[unit_first[s] : unit_first[s + 1]].tolist():
            a, b = int(spans.start[k]) - lo, int(spans.end[k]) - lo
            item: dict[str, Any] = {
                "start": int(offsets[a]), "end": int(offsets[b] - 1), "label": spans.types[int(spans.type[k])]
            }
            if levels is not None:
                item["level"] = levels[k]
            items.append(item)
        yield json.dumps({"id": str(s), "text": " ".join(toks), "spans": items}, ensure_ascii=False) + "\n"


def _first_overlap(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """The first mention (in text order) that overlaps an earlier one, named with the earlier."""
    ordered = sorted(spans, key=lambda s: (s[0], -s[1], s[2]))
    for k, (a, b, label) in enumerate(ordered):
        for c, d, other in ordered[:k]:
            if a < d and c < b:
                what = "nested in" if c <= a and b <= d else "overlaps"
                return f"{label} {a}..{b} ({text[a:b]!r}) {what} {other} {c}..{d} ({text[c:d]!r})"
    return "two mentions share a token"


def _level_rank(name: object) -> int | None:
    """The column of a level named as ``convert`` writes it (outer, inner, level3...); None if not one."""
    if name == "outer":
        return 0
    if name == "inner":
        return 1
    if isinstance(name, str) and name.startswith("level") and name[5:].isdigit() and int(name[5:]) >= 3:
        return int(name[5:]) - 1
    return None


def refuse_levels(path: str | Path, target: str) -> None:
    """Refuse to write JSONL whose mentions have levels to ``target``, an annotation format whose
    writer keeps no level: naming the first such mention, since the levels would be lost."""
    for number, obj in json_objects(path):
        spans = obj.get("spans") if isinstance(obj, dict) else None
        for k, span in enumerate(spans if isinstance(spans, list) else []):
            if isinstance(span, dict) and "level" in span:
                raise InputError(
                    f"span {k} is at level {span['level']!r}, which the {target} writer does not keep: converting"
                    " would lose every mention's level; convert to a label encoding (--to BIO: a label column per"
                    " level) or keep the JSONL",
                    path=str(path),
                    line=number,
                )


def _span_levels(path: str | Path, names: tuple[str, ...] = ()) -> list[list[int]] | None:
    """Each document's spans' levels (``"level"``: outer, inner, level3..., or the column of each
    of ``names`` where given), or None where no span has one (one label column)."""
    found: list[list[int]] = []
    lines: list[int] = []
    any_level = bool(names)
    for number, obj in json_objects(path):
        ranks = []
        spans = obj.get("spans") if isinstance(obj, dict) else None
        for k, span in enumerate(spans if isinstance(spans, list) else []):
            name = span.get("level") if isinstance(span, dict) else None
            rank = (names.index(name) if name in names else None) if names else _level_rank(name)
            if name is not None and rank is None:
                among = ", ".join(names) if names else "outer, inner, level3..."
                what = f"span {k}: level {name!r} is none of {among}: converting would lose it"
                raise InputError(what, path=str(path), line=number)
            any_level = any_level or rank is not None
            ranks.append(-1 if rank is None else rank)
        found.append(ranks)
        lines.append(number)
    if not any_level:
        return None
    for number, ranks in zip(lines, found, strict=True):
        if -1 in ranks:
            raise InputError(
                f"span {ranks.index(-1)} has no level while other spans have one: give it one (outer, inner...)",
                path=str(path),
                line=number,
            )
    return found


def _jsonl_to_conll(path: str | Path, out: str | Path, spec: Any, level_names: tuple[str, ...] = ()) -> None:
    """Whitespace tokens; every span must start and end on token boundaries. Spans with a
    ``level`` (as ``convert --levels`` writes them) give a label column per level: one per name
    of ``level_names`` in its order where given (a level without mentions keeps its column)."""
    docs = read_jsonl(path)
    levels = _span_levels(path, level_names)
    n_levels = 1 if levels is None else max((max(r, default=0) for r in levels), default=0) + 1
    n_levels = max(n_levels, len(level_names))
    lines: list[str] = []
    for number, d in enumerate(docs):
        toks: list[tuple[int, int]] = []
        pos = 0
        for word in d.text.split():
            start = d.text.index(word, pos)
            toks.append((start, start + len(word)))
            pos = start + len(word)
        if not toks:
            continue
        starts = {s: i for i, (s, _) in enumerate(toks)}
        ends = {e: i + 1 for i, (_, e) in enumerate(toks)}
        names = sorted({lab for _, _, lab in d.spans})
        ranks = [0] * len(d.spans) if levels is None else levels[number]
        for a, b, _ in d.spans:
            if a not in starts or b not in ends:
                raise InputError(
                    f"document {d.id!r}: span {a}..{b} ({d.text[a:b]!r}) does not fall on whitespace token boundaries",
                    path=str(path),
                    line=d.line,
                )
        n = len(toks)
        columns = []
        for level in range(n_levels):
            at = [s for s, r in zip(d.spans, ranks, strict=True) if r == level]
            spans = Spans.build(
                np.array([starts[a] for a, _, _ in at], dtype=np.int64),
                np.array([ends[b] for _, b, _ in at], dtype=np.int64),
                np.array([names.index(label) for _, _, label in at], dtype=np.int64),
                np.zeros(len(at), dtype=np.int64),
                names,
            )
            try:
                ids, vocab = encode(spans, n, np.array([0, n], dtype=np.int64), spec)
            except InputError:
                named = level_names[level] if level_names else level_name(level)
                where = "" if levels is None else f" at level {named}"
                raise InputError(
                    f"document {d.id!r} has overlapping spans{where}, which one label per token cannot hold: "
                    + _first_overlap(d.text, at)
                    + "; keep nested mentions in JSONL or an annotation format that holds them, or drop one",
                    path=str(path),
                    line=d.line,
                ) from None
            columns.append([vocab[int(i)] for i in ids.tolist()])
        lines.extend("\t".join([d.text[a:b], *(c[i] for c in columns)]) + "\n" for i, (a, b) in enumerate(toks))
        lines.append("\n")
    _atomic_write(out, iter(lines))
