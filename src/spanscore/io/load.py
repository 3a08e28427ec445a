"""Turn a reference and a prediction, in any supported form, into two span sets over one text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from ..encoding import Repair, check_repair, decode, get_encoding, invalid_messages, split_labels
from ..errors import InputError, OptionError
from ..spans import IntArray, Spans, union_types
from .conll import ConllTable, Delimiter, gather, prefix_words, read_conll
from .jsonl import Document, read_jsonl

Format = Literal["conll", "jsonl", "labels", "spans"]
FORMATS: tuple[str, ...] = ("conll", "jsonl", "labels", "spans")


class Text(Protocol):
    """Where mentions point: renders a mention or its sentence as a string."""

    unit_kind: str

    def mention(self, start: int, end: int) -> str: ...

    def context(self, unit: int) -> str: ...

    def local(self, unit: int, position: int) -> int: ...


@dataclass(frozen=True)
class Loaded:
    reference: Spans
    predicted: Spans
    text: Text
    documents: int
    sentences: int
    tokens: int


class ConllText:
    unit_kind = "sentence"

    def __init__(self, table: ConllTable | None, sentence_bounds: IntArray) -> None:
        self.table = table
        self.bounds = sentence_bounds
        self._words: list[str] | None = None

    def _tokens(self, start: int, end: int) -> list[str]:
        if self.table is None:
            return [f"<{i}>" for i in range(start, end)]
        if self._words is None:
            # Decoded once: a report asks for every mention and sentence several times.
            raw = self.table.buffer.tobytes()
            spans = zip(self.table.token_start.tolist(), self.table.token_end.tolist(), strict=True)
            self._words = [raw[a:b].decode("utf-8", errors="replace") for a, b in spans]
        return self._words[start:end]

    def mention(self, start: int, end: int) -> str:
        return " ".join(self._tokens(start, end))

    def context(self, unit: int) -> str:
        return " ".join(self._tokens(int(self.bounds[unit]), int(self.bounds[unit + 1])))

    def local(self, unit: int, position: int) -> int:
        return position - int(self.bounds[unit])


class OffsetText:
    unit_kind = "document"

    def __init__(self, texts: Sequence[str], bases: IntArray) -> None:
        self.texts = texts
        self.bases = bases

    def mention(self, start: int, end: int) -> str:
        unit = int(np.searchsorted(self.bases, start, side="right") - 1)
        base = int(self.bases[unit])
        return self.texts[unit][start - base : end - base]

    def context(self, unit: int) -> str:
        return self.texts[unit]

    def local(self, unit: int, position: int) -> int:
        return position - int(self.bases[unit])


def decode_column(table: ConllTable, column: int, labels: str, repair: Repair) -> Spans:
    """Decode one label column of a parsed file into spans, applying the repair policy."""
    spec = get_encoding(labels)
    col = table.columns[column]
    label_set = split_labels(col.vocab, spec, ids=col.ids, lines=table.token_line, path=table.path)
    decoded = decode(col.ids, table.sentence_bounds, label_set, spec, repair)
    if repair == "none" and decoded.n_invalid:
        first = np.zeros(table.n_tokens, dtype=bool)
        first[table.sentence_bounds[:-1]] = True
        msgs = invalid_messages(decoded, col.ids, col.vocab, table.token_line, first, table.path)
        head = msgs[0].split(": ", 1)
        raise InputError(
            f"{head[1]} ({len(msgs)} invalid {labels} transition{'s' if len(msgs) > 1 else ''};"
            " fix them or choose --repair conlleval or discard)",
            path=table.path,
            line=int(head[0].rsplit(":", 1)[1]),
            details=tuple(msgs),
        )
    return decoded.spans


def _same_token_bytes(ref: ConllTable, pred: ConllTable) -> bool:
    """Whether the tokens are byte for byte the same: their first 8 bytes as one word each, then
    the rest of the few longer tokens (cheaper than gathering every token's bytes)."""
    lengths = ref.token_end - ref.token_start
    if not np.array_equal(lengths, pred.token_end - pred.token_start):
        return False
    if not np.array_equal(
        prefix_words(ref.buffer, ref.token_start, lengths), prefix_words(pred.buffer, pred.token_start, lengths)
    ):
        return False
    long = np.flatnonzero(lengths > 8)
    return bool(
        np.array_equal(
            gather(ref.buffer, ref.token_start[long] + 8, ref.token_end[long]),
            gather(pred.buffer, pred.token_start[long] + 8, pred.token_end[long]),
        )
    )


def check_same_tokens(ref: ConllTable, pred: ConllTable) -> None:
    """Both files must hold the same tokens in the same sentences; name the first difference."""
    if ref.n_tokens != pred.n_tokens or not np.array_equal(ref.sentence_bounds, pred.sentence_bounds):
        n_common = min(ref.n_sentences, pred.n_sentences)
        sizes_r = np.diff(ref.sentence_bounds)[:n_common]
        sizes_p = np.diff(pred.sentence_bounds)[:n_common]
        diff = np.flatnonzero(sizes_r != sizes_p)
        if diff.shape[0]:
            s = int(diff[0])
            k = int(min(sizes_r[s], sizes_p[s]))
            tr, tp = int(ref.sentence_bounds[s]) + k, int(pred.sentence_bounds[s]) + k
            if sizes_r[s] < sizes_p[s]:
                raise InputError(
                    f"sentence {s + 1} has {int(sizes_p[s])} tokens here but {int(sizes_r[s])} in {ref.path}"
                    f" (extra token {pred.token_text(tp)!r}; {ref.path} ends the sentence at line"
                    f" {int(ref.token_line[tr - 1]) + 1})",
                    path=pred.path,
                    line=int(pred.token_line[tp]),
                )
            raise InputError(
                f"sentence {s + 1} has {int(sizes_p[s])} tokens here but {int(sizes_r[s])} in {ref.path}"
                f" (missing token {ref.token_text(tr)!r} of {ref.path}:{int(ref.token_line[tr])})",
                path=pred.path,
                line=int(pred.token_line[tp - 1]) + 1 if tp > 0 else None,
            )
        longer, shorter = (ref, pred) if ref.n_sentences > pred.n_sentences else (pred, ref)
        extra = int(longer.sentence_bounds[shorter.n_sentences])
        raise InputError(
            f"{longer.n_sentences} sentences in {longer.path} but {shorter.n_sentences} in {shorter.path};"
            f" the first extra one starts with {longer.token_text(extra)!r}",
            path=longer.path,
            line=int(longer.token_line[extra]),
        )
    if _same_token_bytes(ref, pred):
        return
    rb, rl = ref.token_bytes()
    pb, pl = pred.token_bytes()
    bad = np.flatnonzero(rl != pl)
    first_len = int(bad[0]) if bad.shape[0] else ref.n_tokens
    # Among tokens before the first length difference, find the first byte difference.
    upto = int(rl[:first_len].sum())
    byte_diff = np.flatnonzero(rb[:upto] != pb[:upto])
    k = int(np.searchsorted(np.cumsum(rl), byte_diff[0], side="right")) if byte_diff.shape[0] else first_len
    raise InputError(
        f"token {pred.token_text(k)!r} differs from {ref.path}:{int(ref.token_line[k])} {ref.token_text(k)!r}",
        path=pred.path,
        line=int(pred.token_line[k]),
    )


def unify(reference: Spans, predicted: Spans) -> tuple[Spans, Spans]:
    types = union_types(reference, predicted)
    return reference.with_types(types), predicted.with_types(types)


def load_conll(
    reference: str | Path,
    predicted: str | Path | None,
    *,
    labels: str = "BIO",
    repair: str = "conlleval",
    delimiter: Delimiter = "auto",
    token_column: int = 0,
    label_column: int = -1,
) -> Loaded:
    """Two CoNLL files, or one merged ``token gold pred`` file when ``predicted`` is None."""
    rep = check_repair(repair)
    if predicted is None:
        table = read_conll(reference, columns=(-2, -1), token_column=token_column, delimiter=delimiter)
        if table.n_columns < 3:
            raise InputError(
                f"a merged file needs token, gold and predicted columns; lines have {table.n_columns}",
                path=table.path,
            )
        ref_spans = decode_column(table, 0, labels, rep)
        pred_spans = decode_column(table, 1, labels, rep)
        ref_table = table
    else:
        ref_table = read_conll(reference, columns=(label_column,), token_column=token_column, delimiter=delimiter)
        pred_table = read_conll(predicted, columns=(label_column,), token_column=token_column, delimiter=delimiter)
        check_same_tokens(ref_table, pred_table)
        ref_spans = decode_column(ref_table, 0, labels, rep)
        pred_spans = decode_column(pred_table, 0, labels, rep)
    ref_spans, pred_spans = unify(ref_spans, pred_spans)
    return Loaded(
        reference=ref_spans,
        predicted=pred_spans,
        text=ConllText(ref_table, ref_table.sentence_bounds),
        documents=ref_table.n_documents,
        sentences=ref_table.n_sentences,
        tokens=ref_table.n_tokens,
    )


def _docs_to_spans(docs: Sequence[Document], bases: IntArray) -> Spans:
    starts, ends, labels, units = [], [], [], []
    for i, doc in enumerate(docs):
        for s, e, label in doc.spans:
            starts.append(int(bases[i]) + s)
            ends.append(int(bases[i]) + e)
            labels.append(label)
            units.append(i)
    types = tuple(sorted(set(labels)))
    index = {t: k for k, t in enumerate(types)}
    return Spans.build(
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.array([index[t] for t in labels], dtype=np.int64),
        np.array(units, dtype=np.int64),
        types,
    )


def load_jsonl(reference: str | Path, predicted: str | Path) -> Loaded:
    ref_docs = read_jsonl(reference)
    pred_docs = {d.id: d for d in read_jsonl(predicted)}
    ref_ids = {d.id for d in ref_docs}
    for doc in ref_docs:
        other = pred_docs.get(doc.id)
        if other is None:
            raise InputError(f"document {doc.id!r} is missing from {predicted}", path=str(reference), line=doc.line)
        if other.text != doc.text:
            k = next(
                (i for i, (a, b) in enumerate(zip(doc.text, other.text, strict=False)) if a != b),
                min(len(doc.text), len(other.text)),
            )
            raise InputError(
                f"text of document {doc.id!r} differs from {reference}:{doc.line} at character {k}:"
                f" {other.text[k : k + 20]!r} vs {doc.text[k : k + 20]!r}",
                path=str(predicted),
                line=other.line,
            )
    for doc_id, doc in pred_docs.items():
        if doc_id not in ref_ids:
            raise InputError(f"document {doc_id!r} is not in {reference}", path=str(predicted), line=doc.line)
    lengths = np.array([len(d.text) + 1 for d in ref_docs], dtype=np.int64)
    bases = np.concatenate(([0], np.cumsum(lengths)))[:-1]
    ordered_pred = [pred_docs[d.id] for d in ref_docs]
    ref_spans, pred_spans = unify(_docs_to_spans(ref_docs, bases), _docs_to_spans(ordered_pred, bases))
    return Loaded(
        reference=ref_spans,
        predicted=pred_spans,
        text=OffsetText([d.text for d in ref_docs], bases),
        documents=len(ref_docs),
        sentences=len(ref_docs),
        tokens=sum(len(d.text.split()) for d in ref_docs),
    )


def _label_table(name: str, sequences: Sequence[Sequence[str]]) -> ConllTable:
    if isinstance(sequences, str) or not all(
        isinstance(s, Sequence) and not isinstance(s, str) and all(isinstance(x, str) for x in s) for s in sequences
    ):
        raise OptionError(f"format='labels' expects {name} as a list of sentences, each a list of label strings")
    flat = [x for s in sequences for x in s]
    vocab, ids = np.unique(np.array(flat, dtype=object), return_inverse=True) if flat else (np.array([]), np.zeros(0))
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    from .conll import Column

    n = len(flat)
    return ConllTable(
        path=name,
        buffer=np.zeros(0, dtype=np.uint8),
        token_start=np.zeros(n, dtype=np.int64),
        token_end=np.zeros(n, dtype=np.int64),
        token_line=np.arange(1, n + 1, dtype=np.int64),
        sentence_bounds=bounds,
        sentence_doc=np.zeros(len(sequences), dtype=np.int64),
        n_documents=1,
        columns=(Column(ids=np.asarray(ids, dtype=np.int64).ravel(), vocab=tuple(str(v) for v in vocab)),),
        n_columns=2,
    )


def load_labels(
    reference: Sequence[Sequence[str]],
    predicted: Sequence[Sequence[str]],
    *,
    labels: str = "BIO",
    repair: str = "conlleval",
) -> Loaded:
    """Label sequences given in Python: one list of label strings per sentence."""
    rep = check_repair(repair)
    ref = _label_table("reference", reference)
    pred = _label_table("predicted", predicted)
    if not np.array_equal(ref.sentence_bounds, pred.sentence_bounds):
        if ref.n_sentences != pred.n_sentences:
            raise InputError(f"{ref.n_sentences} reference sentences but {pred.n_sentences} predicted")
        s = int(np.flatnonzero(np.diff(ref.sentence_bounds) != np.diff(pred.sentence_bounds))[0])
        raise InputError(f"sentence {s}: {len(reference[s])} reference labels but {len(predicted[s])} predicted")
    ref_spans, pred_spans = unify(decode_column(ref, 0, labels, rep), decode_column(pred, 0, labels, rep))
    return Loaded(ref_spans, pred_spans, ConllText(None, ref.sentence_bounds), 1, ref.n_sentences, ref.n_tokens)


def _span_docs(name: str, docs: Any) -> list[list[tuple[int, int, str]]]:
    if isinstance(docs, str | bytes) or not isinstance(docs, Sequence):
        raise OptionError(f"format='spans' expects {name} as a list of documents, each a list of spans")
    out = []
    for i, doc in enumerate(docs):
        if isinstance(doc, str | bytes) or not isinstance(doc, Sequence):
            raise OptionError(f"{name} document {i} must be a list of spans")
        spans = []
        for span in doc:
            if isinstance(span, dict):
                span = (span.get("start"), span.get("end"), span.get("label"))
            if not (isinstance(span, Sequence) and len(span) == 3):
                raise OptionError(f"{name} document {i}: a span is (start, end, label) or a dict of those")
            s, e, label = span
            if not (isinstance(s, int) and isinstance(e, int) and 0 <= s < e and isinstance(label, str) and label):
                raise InputError(f"{name} document {i}: bad span {span!r}: need 0 <= start < end and a label")
            spans.append((s, e, label))
        out.append(spans)
    return out


def load_spans(reference: Any, predicted: Any) -> Loaded:
    """Span lists given in Python: per document, (start, end, label) with end exclusive."""
    ref = _span_docs("reference", reference)
    pred = _span_docs("predicted", predicted)
    if len(ref) != len(pred):
        raise InputError(f"{len(ref)} reference documents but {len(pred)} predicted")
    lengths = np.array(
        [max([e for _, e, _ in r + p], default=0) + 1 for r, p in zip(ref, pred, strict=True)], dtype=np.int64
    )
    bases = np.concatenate(([0], np.cumsum(lengths)))[:-1].astype(np.int64)
    texts = [" " * int(n - 1) for n in lengths]
    as_docs = [Document(str(i), texts[i], tuple(r), i + 1) for i, r in enumerate(ref)]
    as_pred = [Document(str(i), texts[i], tuple(p), i + 1) for i, p in enumerate(pred)]
    ref_spans, pred_spans = unify(_docs_to_spans(as_docs, bases), _docs_to_spans(as_pred, bases))
    return Loaded(ref_spans, pred_spans, OffsetText(texts, bases), len(ref), len(ref), 0)
