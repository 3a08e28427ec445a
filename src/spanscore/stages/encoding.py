"""Label encodings (IO, IOB1, BIO, IOE1, IOE2, BIOES, BILOU, BMES): decoding, validation, encoding.

Every encoding is described by the same few facts: which prefixes it uses, which prefix must be
preceded by a same-type mention token (``needs_prev``) and which must be followed by one
(``needs_next``). Decoding follows conlleval's chunk rules, which read every one of these
encodings; a transition that breaks the encoding's rules is *invalid* and the repair policy says
what happens to it:

- ``conlleval``: decode as conlleval does (an ``I-`` that cannot continue starts a new mention);
  this is also seqeval's default mode and seqscore's ``conlleval`` repair.
- ``discard``: drop every mention that contains a token at fault (for BIO, seqscore's ``discard``).
- ``none``: refuse the input, listing every invalid transition.

All of it runs on arrays: a label-pair lookup table gives chunk starts and ends for every token.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import InputError, shorten
from ..runtime.records import record

# The encodings' rules are plain data (``stages.schemes``), so that naming one loads no numpy.
from .schemes import ALIASES as ALIASES
from .schemes import ENCODINGS as ENCODINGS
from .schemes import REPAIRS as REPAIRS
from .schemes import B as B
from .schemes import E as E
from .schemes import EncodingSpec as EncodingSpec
from .schemes import I as I
from .schemes import O as O
from .schemes import Repair as Repair
from .schemes import S as S
from .schemes import check_repair as check_repair
from .schemes import get_encoding as get_encoding
from .spans import IntArray, Spans


@record
class LabelSet:
    """Each label of a column split into a prefix code and a type index."""

    prefix: IntArray
    type: IntArray  # -1 for O
    types: tuple[str, ...]


def split_labels(
    vocab: Sequence[str],
    spec: EncodingSpec,
    *,
    ids: IntArray | None = None,
    lines: IntArray | None = None,
    path: str | None = None,
) -> LabelSet:
    """Split label strings into prefix and type; an unknown label names its first line."""
    prefix = np.zeros(len(vocab), dtype=np.int64)
    type_names: list[str | None] = []
    unknown: list[int] = []
    for k, label in enumerate(vocab):
        if label == "O":
            type_names.append(None)
            continue
        head, sep, typ = label.partition("-")
        if not sep or not typ or head not in spec.prefixes:
            unknown.append(k)
            type_names.append(None)
            continue
        prefix[k] = spec.prefixes[head]
        type_names.append(typ)
    if unknown:
        # Name the first line that holds an unknown label, not the first unknown label in order.
        k, line = unknown[0], None
        if ids is not None and lines is not None:
            hits = np.flatnonzero(np.isin(ids, unknown))
            if hits.shape[0]:
                k, line = int(ids[hits[0]]), int(lines[hits[0]])
        allowed = ", ".join(f"{p}-TYPE" for p in spec.prefixes)
        raise InputError(
            f"unknown label {shorten(vocab[k])} for encoding {spec.name}: expected O or {allowed}"
            " (choose the encoding with --labels)",
            path=path,
            line=line,
        )
    types = tuple(sorted({t for t in type_names if t is not None}))
    index = {t: i for i, t in enumerate(types)}
    typ_arr = np.array([index[t] if t is not None else -1 for t in type_names], dtype=np.int64)
    return LabelSet(prefix=prefix, type=typ_arr, types=types)


def _tables(
    labels: LabelSet, spec: EncodingSpec
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Lookup tables indexed [previous label, current label]; the last index is a sentence edge."""
    p = np.concatenate((labels.prefix, [O]))
    t = np.concatenate((labels.type, [-1]))
    pp, pc = p[:, None], p[None, :]
    same = (t[:, None] == t[None, :]) & (t[:, None] >= 0)
    # conlleval's endOfChunk / startOfChunk, with every encoding's prefixes mapped onto B I E S O.
    end = (pp == E) | (pp == S) | (((pp == B) | (pp == I)) & ((pc == B) | (pc == S) | (pc == O))) | ((pp != O) & ~same)
    start = (
        (pc == B)
        | (pc == S)
        | (((pp == E) | (pp == S)) & ((pc == E) | (pc == I)))
        | ((pp == O) & ((pc == E) | (pc == I)))
        | ((pc != O) & ~same)
    )
    blame_cur = np.zeros_like(end)
    blame_prev = np.zeros_like(end)
    for code, allowed in spec.needs_prev.items():
        ok = np.isin(pp, list(allowed)) & same
        blame_cur |= (pc == code) & ~ok
    for code, allowed in spec.needs_next.items():
        ok = np.isin(pc, list(allowed)) & same
        blame_prev |= (pp == code) & ~ok
    return start, end, blame_cur, blame_prev


@record
class Decoded:
    """A label column decoded: its mentions and the tokens whose labels break the scheme."""

    spans: Spans
    invalid_into: IntArray  # tokens that cannot follow the token (or sentence start) before them
    invalid_end: IntArray  # tokens that cannot end their sentence

    @property
    def n_invalid(self) -> int:
        return int(self.invalid_into.shape[0] + self.invalid_end.shape[0])


def decode(
    ids: IntArray,
    sentence_bounds: IntArray,
    labels: LabelSet,
    spec: EncodingSpec,
    repair: Repair,
) -> Decoded:
    """Decode one label column into mentions; ``Decoded.invalid`` lists invalid transitions."""
    n = ids.shape[0]
    edge = labels.prefix.shape[0]
    table, blame_end = _packed_tables(labels, spec)
    firsts = sentence_bounds[:-1][sentence_bounds[:-1] < n]
    lasts = sentence_bounds[1:][sentence_bounds[1:] > sentence_bounds[:-1]] - 1  # of non-empty sentences
    prev = np.empty(n, dtype=np.int64)
    if n:
        prev[0] = edge
        prev[1:] = ids[:-1]
    prev[firsts] = edge

    # One lookup per token: bit 1 starts a mention, 2 ends the one before, 4 and 8 blame this
    # token and the one before for an invalid transition. A sentence start also ends a mention.
    code = table.ravel()[prev * (edge + 1) + ids]
    code[firsts] |= 2
    starts = np.flatnonzero((code & 1).view(bool))  # nonzero is quickest on booleans
    closes = (code & 2) != 0
    close_pos = np.append(np.flatnonzero(closes), n)
    # A mention ends at the first close after its start: the closes up to the start, counted by a
    # running sum (one pass, where a binary search per start took twice as long).
    ends = close_pos[np.cumsum(closes)[starts]]
    types = labels.type[ids[starts]]

    into = np.flatnonzero(code >= 4)  # bit 4 or 8
    out = lasts[blame_end[ids[lasts]]]
    if repair == "discard" and (into.shape[0] or out.shape[0]):
        blamed = (code & 4) > 0
        blamed[:-1] |= (code[1:] & 8) > 0  # never true at a sentence start: the edge needs nothing
        blamed[out] = True
        cum = np.concatenate(([0], np.cumsum(blamed)))
        keep = (cum[ends] - cum[starts]) == 0
        starts, ends, types = starts[keep], ends[keep], types[keep]

    # Each mention's sentence: the sentence starts up to it, by a running count over the tokens
    # (a binary search per mention costs half as much again).
    bounds = sentence_bounds[:-1]
    unit = np.cumsum(np.bincount(bounds[bounds < n], minlength=n))[starts] - 1
    spans = Spans.build(starts.astype(np.int64), ends.astype(np.int64), types, unit.astype(np.int64), labels.types)
    return Decoded(spans=spans, invalid_into=into.astype(np.int64), invalid_end=out.astype(np.int64))


def _packed_tables(labels: LabelSet, spec: EncodingSpec) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """The four tables as bits of one, and which labels cannot end a sentence (cached: every chunk
    of a file has the same few labels)."""
    return _packed_tables_of(tuple(labels.prefix.tolist()), tuple(labels.type.tolist()), spec.name)


@functools.lru_cache(maxsize=64)
def _packed_tables_of(
    prefix: tuple[int, ...], types: tuple[int, ...], encoding: str
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    labels = LabelSet(np.array(prefix, dtype=np.int64), np.array(types, dtype=np.int64), ())
    start, end, blame_cur, blame_prev = _tables(labels, ENCODINGS[encoding])
    table = (start | end << 1 | blame_cur << 2 | blame_prev << 3).astype(np.uint8)
    table.flags.writeable = False
    blame_end = blame_prev[:, len(prefix)].copy()
    blame_end.flags.writeable = False
    return table, blame_end


@record
class InvalidTransition:
    """A label that breaks its encoding's rules where it stands: after ``previous`` (None: at a
    sentence start), or, with ``at_end``, as the last label of a sentence."""

    path: str
    line: int
    label: str
    previous: str | None = None
    at_end: bool = False

    @property
    def what(self) -> str:
        if self.at_end:
            return f"{self.label} cannot end a sentence"
        return f"{self.label} cannot follow {'a sentence start' if self.previous is None else self.previous}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def invalid_transitions(
    decoded: Decoded,
    ids: IntArray,
    vocab: Sequence[str],
    token_line: IntArray,
    first_of_sentence: npt.NDArray[np.bool_],
    path: str,
) -> list[InvalidTransition]:
    """Every invalid transition, in file order."""
    found = [
        InvalidTransition(
            path, int(token_line[k]), vocab[ids[k]], None if first_of_sentence[k] else vocab[ids[k - 1]]
        )
        for k in decoded.invalid_into.tolist()
    ]
    found += [
        InvalidTransition(path, int(token_line[j]), vocab[ids[j]], at_end=True) for j in decoded.invalid_end.tolist()
    ]
    found.sort(key=lambda t: (t.line, t.what))
    return found


def encode(
    spans: Spans, n_tokens: int, sentence_bounds: IntArray, spec: EncodingSpec
) -> tuple[IntArray, tuple[str, ...]]:
    """Labels (ids into the returned vocabulary) that encode ``spans`` in ``spec``."""
    if len(spans) and (spans.start[1:] < spans.end[:-1]).any():
        raise InputError("overlapping mentions cannot be written as one label per token")
    n_types = len(spans.types)
    prefix = np.zeros(n_tokens, dtype=np.int64)
    typ = np.full(n_tokens, -1, dtype=np.int64)
    lengths = spans.end - spans.start
    idx = np.repeat(spans.start, lengths) + (
        np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    typ[idx] = np.repeat(spans.type, lengths)
    prefix[idx] = I
    single = lengths == 1
    # Neighbours of the same type touching this mention decide IOB1's B and IOE1's E.
    prev_touch = np.zeros(len(spans), dtype=bool)
    next_touch = np.zeros(len(spans), dtype=bool)
    if len(spans) > 1:
        touch = (
            (spans.end[:-1] == spans.start[1:])
            & (spans.type[:-1] == spans.type[1:])
            & (spans.unit[:-1] == spans.unit[1:])  # never across a sentence break
        )
        prev_touch[1:] = touch
        next_touch[:-1] = touch
    name = spec.name
    if name == "BIO":
        prefix[spans.start] = B
    elif name == "IOB1":
        prefix[spans.start[prev_touch]] = B
    elif name == "IOE2":
        prefix[spans.end - 1] = E
    elif name == "IOE1":
        prefix[spans.end[next_touch] - 1] = E
    elif name in ("BIOES", "BILOU", "BMES"):
        prefix[spans.start] = B
        prefix[spans.end - 1] = E
        prefix[spans.start[single]] = S
    codes = np.where(typ >= 0, prefix * max(n_types, 1) + typ, -1)
    used = np.unique(codes)
    vocab = [
        "O" if c < 0 else f"{spec.letter(int(c) // max(n_types, 1))}-{spans.types[int(c) % max(n_types, 1)]}"
        for c in used
    ]
    return np.searchsorted(used, codes).astype(np.int64), tuple(vocab)
