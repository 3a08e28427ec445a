"""Turn a reference and a prediction, in any supported form, into two span sets over one text."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, OptionError, shorten
from ..runtime.records import record
from ..stages.encoding import Repair, decode, get_encoding, invalid_transitions, split_labels
from ..stages.spans import IntArray, Pieces, Spans
from ..stages.text import Repaired, Text
from .conll import ConllTable, gather

if TYPE_CHECKING:
    from .document import Document


@record
class Loaded:
    """Both sides read whole: their mentions, their text and the corpus's size."""

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
        self._joined: tuple[str, list[int]] | None = None
        self._starts: IntArray | None = None
        self._raw: bytes | None = None  # the table's bytes, for mentions decoded on their own

    def _tokens(self, start: int, end: int) -> list[str]:
        if self.table is None:
            return [f"<{i}>" for i in range(start, end)]
        if self._words is None:
            self._words = self._decode_all()
        return self._words[start:end]

    def _text(self) -> tuple[str, list[int]]:
        """Every token joined by single spaces, and where each token starts in that string."""
        if self._joined is None:
            words = self._tokens(0, int(self.bounds[-1]))
            starts = np.zeros(len(words) + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)) + 1, out=starts[1:])
            self._joined = (" ".join(words), starts.tolist())
            self._starts = starts
        return self._joined

    def joined(self) -> tuple[str, IntArray]:
        """Every token joined by single spaces, and where each token starts in that string (one
        more than there are tokens: the last is the string's length plus one)."""
        text = self._text()[0]
        assert self._starts is not None
        return text, self._starts

    def spaced_bytes(self, tokens: IntArray | None = None) -> tuple[npt.NDArray[np.uint8], IntArray] | None:
        """Every token's bytes (or those of ``tokens`` alone, ascending), each followed by a space,
        and where each token starts in them (one more than there are tokens: the end); None where
        there are no token texts. Undecoded: cheaper than ``joined`` where a caller can read ASCII
        bytes as they are."""
        t = self.table
        if t is None:
            return None
        begin, end = (t.token_start, t.token_end) if tokens is None else (t.token_start[tokens], t.token_end[tokens])
        starts = np.zeros(begin.shape[0] + 1, dtype=np.int64)
        np.cumsum(end - begin + 1, out=starts[1:])
        if begin.shape[0] and int(end[-1]) < t.buffer.shape[0]:
            # Each token with the byte after it (a separator or a line end), made a space: the
            # bytes taken are runs of the buffer, so their positions are one running sum of steps.
            step = np.ones(int(starts[-1]), dtype=np.int64)
            step[0] = begin[0]
            step[starts[1:-1]] = begin[1:] - end[:-1]
            out: npt.NDArray[np.uint8] = t.buffer[np.cumsum(step, out=step)]
            out[starts[1:] - 1] = 32
            return out, starts
        out = np.full(int(starts[-1]), 32, dtype=np.uint8)
        keep = np.ones(out.shape[0], dtype=bool)
        keep[starts[1:] - 1] = False
        out[keep] = gather(t.buffer, begin, end)
        return out, starts

    def _decode_all(self) -> list[str]:
        """Every token, decoded once: a report asks for every mention and sentence several times.

        The tokens are gathered into one buffer with a newline after each (no token holds one) and
        decoded at once; an invalid byte sequence cannot reach across a newline, so each token
        decodes as it would alone."""
        t = self.table
        assert t is not None
        n = t.n_tokens
        if n == 0:
            return []
        lengths = t.token_end - t.token_start
        out = np.full(int(lengths.sum()) + n, 10, dtype=np.uint8)
        keep = np.ones(out.shape[0], dtype=bool)
        keep[np.cumsum(lengths + 1) - 1] = False
        out[keep] = gather(t.buffer, t.token_start, t.token_end)
        return out.tobytes().decode("utf-8", errors="replace").split("\n")[:n]

    def unit_starts(self) -> IntArray:
        return self.bounds[:-1]

    def mention(self, start: int, end: int) -> str:
        if self._joined is None and self._words is None and self.table is not None:
            # A few mentions (the error examples of every evaluation) are decoded on their own,
            # not the whole chunk: their tokens' bytes joined by spaces, decoded at once (an
            # invalid byte sequence cannot reach across a space, so each token decodes as it does
            # alone, as in _decode_all).
            t = self.table
            raw = self._raw
            if raw is None:
                base: object = t.buffer.base  # the bytes parsed, where numpy kept them
                raw = self._raw = (
                    base if isinstance(base, bytes) and len(base) == t.buffer.shape[0] else t.buffer.tobytes()
                )
            starts, ends = t.token_start[start:end].tolist(), t.token_end[start:end].tolist()
            return b" ".join([raw[a:b] for a, b in zip(starts, ends, strict=True)]).decode("utf-8", errors="replace")
        text, starts = self._text()
        return text[starts[start] : starts[end] - 1] if end > start else ""

    def mentions(self, start: IntArray, end: IntArray) -> list[str]:
        text, starts = self._text()
        pairs = zip(start.tolist(), end.tolist(), strict=True)
        return [text[starts[a] : starts[b] - 1] if b > a else "" for a, b in pairs]

    def context(self, unit: int) -> str:
        return self.mention(int(self.bounds[unit]), int(self.bounds[unit + 1]))

    def contexts(self) -> list[str]:
        return self.mentions(self.bounds[:-1], self.bounds[1:])

    def local(self, unit: int, position: int) -> int:
        return position - int(self.bounds[unit])


class OffsetText:
    unit_kind = "document"

    def __init__(self, texts: Sequence[str], bases: IntArray) -> None:
        self.texts = texts
        self.bases = bases

    def unit_starts(self) -> IntArray:
        return self.bases

    def mention(self, start: int, end: int) -> str:
        unit = int(np.searchsorted(self.bases, start, side="right") - 1)
        base = int(self.bases[unit])
        return self.texts[unit][start - base : end - base]

    def mentions(self, start: IntArray, end: IntArray) -> list[str]:
        unit = np.searchsorted(self.bases, start, side="right") - 1
        base = self.bases[unit] if start.shape[0] else start
        texts = self.texts
        return [
            texts[u][a:b] for u, a, b in zip(unit.tolist(), (start - base).tolist(), (end - base).tolist(), strict=True)
        ]

    def contexts(self) -> list[str]:
        return list(self.texts)

    def context(self, unit: int) -> str:
        return self.texts[unit]

    def local(self, unit: int, position: int) -> int:
        return position - int(self.bases[unit])


def decode_column(table: ConllTable, column: int, labels: str, repair: Repair) -> Spans:
    """Decode one label column of a parsed file into spans, applying the repair policy."""
    return decode_repaired(table, column, labels, repair)[0]


def decode_repaired(table: ConllTable, column: int, labels: str, repair: Repair) -> tuple[Spans, Repaired]:
    """``decode_column``, and what the repair policy changed."""
    spec = get_encoding(labels)
    col = table.columns[column]
    label_set = split_labels(col.vocab, spec, ids=col.ids, lines=table.token_line, path=table.path)
    decoded = decode(col.ids, table.sentence_bounds, label_set, spec, repair)
    if repair == "none" and decoded.n_invalid:
        first = np.zeros(table.n_tokens, dtype=bool)
        first[table.sentence_bounds[:-1]] = True
        found = invalid_transitions(decoded, col.ids, col.vocab, table.token_line, first, table.path)
        raise InputError(
            f"{found[0].what} ({len(found)} invalid {labels} transition{'s' if len(found) > 1 else ''};"
            " fix them or choose --repair conlleval or discard)",
            path=table.path,
            line=found[0].line,
            details=tuple(str(t) for t in found),
        )
    repaired = Repaired(table.path)
    if decoded.n_invalid:
        at = np.concatenate((decoded.invalid_into, decoded.invalid_end))
        repaired = Repaired(table.path, decoded.n_invalid, int(table.token_line[int(at.min())]))
    return decoded.spans, repaired


def _same_token_bytes(ref: ConllTable, pred: ConllTable) -> bool:
    """Whether the tokens are byte for byte the same: their first 8 bytes as one word each, then
    the rest of the few longer tokens (cheaper than gathering every token's bytes)."""
    lengths = ref.token_lengths()  # the reference's words, lengths and masks found once for every system
    if not np.array_equal(lengths, pred.token_lengths()):
        return False
    # Where the lengths agree, the first 8 bytes differ within a token where their XOR does.
    differ = ref.token_words() ^ pred.token_words()
    differ &= ref.token_masks()
    if differ.any():
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
            # Lines, not sentence numbers: a chunk of a large file does not know how many came before.
            starts_at = int(pred.token_line[int(pred.sentence_bounds[s])])
            if sizes_r[s] < sizes_p[s]:
                raise InputError(
                    f"the sentence of line {starts_at} has {int(sizes_p[s])} tokens here but {int(sizes_r[s])}"
                    f" in {ref.path} (extra token {shorten(pred.token_text(tp))}; {ref.path} ends the sentence"
                    f" at line {int(ref.token_line[tr - 1]) + 1})",
                    path=pred.path,
                    line=int(pred.token_line[tp]),
                )
            raise InputError(
                f"the sentence of line {starts_at} has {int(sizes_p[s])} tokens here but {int(sizes_r[s])}"
                f" in {ref.path} (missing token {shorten(ref.token_text(tr))} of {ref.path}:{int(ref.token_line[tr])})",
                path=pred.path,
                line=int(pred.token_line[tp - 1]) + 1 if tp > 0 else None,
            )
        longer, shorter = (ref, pred) if ref.n_sentences > pred.n_sentences else (pred, ref)
        extra = int(longer.sentence_bounds[shorter.n_sentences])
        raise InputError(
            f"a sentence that {shorter.path} lacks starts here, with {shorten(longer.token_text(extra))}"
            " (both files must hold the same sentences)",
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
        f"token {shorten(pred.token_text(k))} differs from {ref.path}:{int(ref.token_line[k])}"
        f" {shorten(ref.token_text(k))}",
        path=pred.path,
        line=int(pred.token_line[k]),
    )


def docs_to_spans(docs: Sequence[Document], bases: IntArray, levels: tuple[str, ...] = ()) -> Spans:
    """Every document's spans, offsets shifted by the document's base; with ``levels``, each
    span's level (``Document.levels``) as its index there."""
    counts = np.fromiter((len(d.spans) for d in docs), dtype=np.int64, count=len(docs))
    flat = [span for d in docs for span in d.spans]
    n = len(flat)
    units = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    starts = np.fromiter((s for s, _, _ in flat), dtype=np.int64, count=n) + bases[units]
    ends = np.fromiter((e for _, e, _ in flat), dtype=np.int64, count=n) + bases[units]
    labels = [label for _, _, label in flat]
    types = tuple(sorted(set(labels)))
    index = {t: k for k, t in enumerate(types)}
    type_ = np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=n)
    pieces = _pieces(docs, bases)
    if not levels:
        return Spans.build(starts, ends, type_, units, types, pieces)
    rank = {name: k for k, name in enumerate(levels)}
    level = np.fromiter((rank[name] for d in docs for name in d.levels), dtype=np.int64, count=n)
    return Spans.build(starts, ends, type_, units, types, pieces, level=level, levels=levels)


def _pieces(docs: Sequence[Document], bases: IntArray) -> Pieces | None:
    """The fragments of the documents' discontinuous mentions (numbered as ``docs_to_spans``
    numbers the mentions, before sorting), shifted by each document's base."""
    owner: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    first = 0
    for k, doc in enumerate(docs):
        if doc.fragments:
            base = int(bases[k])
            for i, frags in enumerate(doc.fragments):
                for a, b in frags or ():
                    owner.append(first + i)
                    starts.append(a + base)
                    ends.append(b + base)
        first += len(doc.spans)
    if not owner:
        return None
    return Pieces.of(np.array(owner, dtype=np.int64), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64))


def _offset(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def span_docs(name: str, docs: Any) -> list[list[tuple[int, int, str]]]:
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
            # Any integer type (numpy's included), but not a bool, is an offset.
            if not (_offset(s) and _offset(e) and 0 <= s < e and isinstance(label, str) and label):
                raise InputError(f"{name} document {i}: bad span {span!r}: need 0 <= start < end and a label")
            spans.append((int(s), int(e), label))
        out.append(spans)
    return out
