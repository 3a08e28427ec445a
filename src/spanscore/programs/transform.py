"""Rewrite the label column of a CoNLL file, leaving every other byte as it was.

Edits: the BTC ``@``-mention correction (``--merge-at-mentions``), type renaming, and keeping or
removing types. Only label fields change: the delimiter, line endings, comments, ``-DOCSTART-``
lines and other columns come out byte for byte, so a transform that changes nothing returns the
input unchanged (the correction is idempotent).

The BTC correction (Kong and Sullivan, section 3): an ``@`` token labelled ``B-X`` followed by a
token labelled ``B-X`` is one mention, so the second label becomes ``I-X``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OptionError
from ..io.conll import ConllTable, Delimiter, parse_conll
from ..io.files import read_bytes, write_atomic
from ..io.reading import DEFAULT_READING, Reading
from ..stages.encoding import B, EncodingSpec, I, LabelSet, decode, encode, get_encoding, split_labels
from ..stages.spans import IntArray, Spans

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class TransformResult:
    """The rewritten bytes and what changed."""

    data: bytes
    tokens: int
    merged: int  # @-mentions joined to the mention after them
    renamed: int  # labels whose type was renamed
    removed: int  # labels turned into O by the type options
    changed: int  # token lines whose label field was rewritten

    @property
    def unchanged(self) -> bool:
        return self.changed == 0


def splice(data: bytes, starts: Sequence[int], ends: Sequence[int], pieces: Sequence[bytes]) -> bytes:
    """``data`` with each ``data[starts[k]:ends[k]]`` replaced by ``pieces[k]`` (ranges in order)."""
    out: list[bytes] = []
    pos = 0
    for s, e, piece in zip(starts, ends, pieces, strict=True):
        out.append(data[pos:s])
        out.append(piece)
        pos = e
    out.append(data[pos:])
    return b"".join(out)


def split_bom(data: bytes) -> tuple[bytes, bytes]:
    """(BOM or b"", the rest): the reader drops a BOM, so offsets are relative to the rest."""
    return (_BOM, data[3:]) if data.startswith(_BOM) else (b"", data)


def label_fields(
    body: bytes, path: str, *, token_column: int, label_column: int, delimiter: Delimiter, header: bool = False
) -> tuple[ConllTable, ConllTable]:
    """The file parsed twice: once for tokens and labels, once for the label fields' byte offsets."""
    # Bytes as they are (encoding=None): every byte but the labels' is written back unchanged.
    table = parse_conll(
        body,
        path,
        columns=(label_column,),
        token_column=token_column,
        delimiter=delimiter,
        encoding=None,
        header=header,
    )
    if table.n_columns < 2:
        raise InputError("lines have one column: there is no label column to rewrite", path=path)
    if label_column % table.n_columns == token_column % table.n_columns:
        raise OptionError("the label column and the token column are the same column")
    fields = parse_conll(
        body,
        path,
        columns=(),
        token_column=label_column,
        delimiter=delimiter,
        encoding=None,
        hash_comments=token_column % table.n_columns != 0,  # the same lines as the first reading
        header=header,
    )
    return table, fields


def relabel_bytes(
    data: bytes, path: str, reading: Reading, labels: Callable[[ConllTable], list[str]]
) -> tuple[bytes, int]:
    """``data`` with its label column rewritten to ``labels(table)`` (one label per token) and
    every other byte as it was: other columns, comments, -DOCSTART- lines, line ends, a byte order
    mark, tokens in any encoding. Returns the bytes and how many labels changed."""
    bom, body = split_bom(data)
    table, fields = label_fields(
        body,
        path,
        token_column=reading.token_column,
        label_column=reading.label_column,
        delimiter=reading.delimiter,
        header=reading.header,
    )
    out, changed = _rewrite(body, table, fields, np.array(labels(table), dtype=object))
    return bom + out, changed


def _rewrite(body: bytes, table: ConllTable, fields: ConllTable, new: npt.NDArray[Any]) -> tuple[bytes, int]:
    """``body`` with the label fields whose label changes replaced by ``new`` (a label per token)."""
    col = table.columns[0]
    old = np.array(col.vocab, dtype=object)[col.ids]
    changed = np.flatnonzero(old != new)
    out = splice(
        body,
        fields.token_start[changed].tolist(),
        fields.token_end[changed].tolist(),
        [str(name).encode("utf-8") for name in new[changed].tolist()],
    )
    return out, int(changed.shape[0])


def _at_tokens(table: ConllTable) -> npt.NDArray[np.bool_]:
    """Tokens that are exactly ``@``."""
    one = (table.token_end - table.token_start) == 1
    at = np.zeros(table.n_tokens, dtype=bool)
    at[one] = table.buffer[table.token_start[one]] == ord("@")
    return at


def _check_types(mapping: Mapping[str, str | None], keep: set[str] | None, remove: set[str]) -> None:
    for name in [*mapping, *(keep or ()), *remove]:
        if not name or ("-" in name and name.split("-", 1)[0] in ("B", "I", "E", "S", "L", "U", "M")):
            raise OptionError(f"give types without prefixes (PER, not B-PER): {name!r}")


def transform_bytes(
    data: bytes,
    *,
    path: str = "<input>",
    merge_at_mentions: bool = False,
    type_map: Mapping[str, str | None] | None = None,
    keep_types: Iterable[str] | None = None,
    remove_types: Iterable[str] | None = None,
    reading: Reading = DEFAULT_READING,
) -> TransformResult:
    """Apply the edits to CoNLL bytes: merge ``@`` mentions, then rename, then keep, then remove types.

    Prefixes are kept as written, so every mention keeps its tokens; where a rename would join two
    touching mentions (``I-A I-B`` in IOB1 with A and B renamed to C), that sentence is re-encoded
    so that the mentions stay apart.
    """
    mapping = {k: (None if v in (None, "", "O") else v) for k, v in (type_map or {}).items()}
    keep = None if keep_types is None else set(keep_types)
    remove = set(remove_types or ())
    _check_types(mapping, keep, remove)
    reading.one_level("transform")
    spec = get_encoding(reading.labels)
    if merge_at_mentions and spec.name != "BIO":
        raise OptionError(f"--merge-at-mentions works on BIO labels, not {spec.name}")

    bom, body = split_bom(data)
    table, fields = label_fields(
        body,
        path,
        token_column=reading.token_column,
        label_column=reading.label_column,
        delimiter=reading.delimiter,
        header=reading.header,
    )
    col = table.columns[0]
    vocab = list(col.vocab)
    ids = col.ids.copy()
    split = split_labels(vocab, spec, ids=ids, lines=table.token_line, path=path)

    merged = 0
    if merge_at_mentions:
        is_b = split.prefix[ids] == B
        same_sentence = np.ones(table.n_tokens, dtype=bool)
        same_sentence[table.sentence_bounds[:-1]] = False  # token k continues the sentence of k - 1
        at_b = _at_tokens(table) & is_b
        hit = np.zeros(table.n_tokens, dtype=bool)
        hit[1:] = at_b[:-1] & is_b[1:] & same_sentence[1:] & (ids[1:] == ids[:-1])
        targets = np.flatnonzero(hit)
        merged = int(targets.shape[0])
        if merged:
            inside = spec.letter(I)
            for vid in np.unique(ids[targets]).tolist():
                name = f"{inside}-{vocab[vid].partition('-')[2]}"
                if name not in vocab:
                    vocab.append(name)
                ids[targets[ids[targets] == vid]] = vocab.index(name)
            split = split_labels(vocab, spec)

    renamed = removed = 0
    if mapping or keep is not None or remove:
        new_vocab: list[str] = []
        was_renamed = np.zeros(len(vocab), dtype=bool)
        was_removed = np.zeros(len(vocab), dtype=bool)
        for k, label in enumerate(vocab):
            head, _, typ = label.partition("-")
            if label == "O":
                new_vocab.append(label)
                continue
            new = mapping.get(typ, typ)
            if new is not None and ((keep is not None and new not in keep) or new in remove):
                new = None
            if new is None:
                new_vocab.append("O")
                was_removed[k] = True
            else:
                new_vocab.append(f"{head}-{new}")
                was_renamed[k] = new != typ
        renamed = int(was_renamed[ids].sum())
        removed = int(was_removed[ids].sum())
        new_ids = _relabel(table, ids, new_vocab, split, spec, mapping, keep, remove)
        vocab, ids = new_vocab_from(new_ids)

    out, changed = _rewrite(body, table, fields, np.array(vocab, dtype=object)[ids])
    return TransformResult(
        data=bom + out,
        tokens=table.n_tokens,
        merged=merged,
        renamed=renamed,
        removed=removed,
        changed=changed,
    )


def new_vocab_from(names: list[str]) -> tuple[list[str], IntArray]:
    """A vocabulary and ids for a list of label strings."""
    vocab, ids = np.unique(np.array(names, dtype=object), return_inverse=True)
    return [str(v) for v in vocab], ids.astype(np.int64).ravel()


def _relabel(
    table: ConllTable,
    ids: IntArray,
    new_vocab: list[str],
    split: LabelSet,
    spec: EncodingSpec,
    mapping: Mapping[str, str | None],
    keep: set[str] | None,
    remove: set[str],
) -> list[str]:
    """Per-token label strings after the type edits, with sentences re-encoded where needed."""
    names = np.array(new_vocab, dtype=object)[ids]
    before = decode(ids, table.sentence_bounds, split, spec, "conlleval").spans
    wanted_map: dict[str, str | None] = dict(mapping)
    for t in before.types:
        new = mapping.get(t, t)
        if new is not None and ((keep is not None and new not in keep) or new in remove):
            wanted_map[t] = None
    expected = before.map_types(wanted_map)
    after_vocab, after_ids = new_vocab_from(names.tolist())
    after_split = split_labels(after_vocab, spec)
    after = decode(after_ids, table.sentence_bounds, after_split, spec, "conlleval").spans
    bad_units = _differing_units(expected, after)
    if bad_units:
        enc_ids, enc_vocab = encode(expected, table.n_tokens, table.sentence_bounds, spec)
        encoded = np.array(enc_vocab, dtype=object)[enc_ids]
        for unit in sorted(bad_units):
            lo, hi = int(table.sentence_bounds[unit]), int(table.sentence_bounds[unit + 1])
            names[lo:hi] = encoded[lo:hi]
    return [str(n) for n in names.tolist()]


def _differing_units(a: Spans, b: Spans) -> set[int]:
    def keyed(s: Spans) -> dict[tuple[int, int, str], int]:
        return {
            (int(st), int(en), s.types[int(ty)]): int(u)
            for st, en, ty, u in zip(s.start.tolist(), s.end.tolist(), s.type.tolist(), s.unit.tolist(), strict=True)
        }

    ka, kb = keyed(a), keyed(b)
    return {ka.get(k, kb.get(k, 0)) for k in set(ka) ^ set(kb)}


def transform_file(
    source: str | Path, target: str | Path, reading: Reading = DEFAULT_READING, **edits: Any
) -> TransformResult:
    """Transform ``source`` into ``target`` (written atomically; may be the same file); ``edits``
    are ``transform_bytes``'s."""
    name = str(source)
    result = transform_bytes(read_bytes(source), path=name, reading=reading, **edits)
    write_atomic(target, result.data)
    return result
