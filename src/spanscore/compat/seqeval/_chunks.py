"""seqeval's two readings of label sequences, on arrays.

- The default mode (``get_entities``): conlleval's chunk rule as seqeval states it, with the tag
  read from a label's first letter (its last with ``suffix``) and the type from the rest. Every
  label is read, those whose tag letter is none of B, I, E, S, O included (seqeval warns about
  them and chunks them by type changes alone); so are its odd ends: a mention that ends where it
  never started begins where the last one began.
- The strict mode (``Tokens.entities``): a scheme's start, inside and end patterns, and seqeval's
  scan over them: a mention starts where the patterns say, runs while its tokens are inside it,
  and is kept when the token after it ends it; the scan goes on after the run.

Both reduce each pair of neighbouring labels to a class (the two tag letters or prefixes, and
whether the types are the same), look the answer up in a table made by asking the rule once per
class, and run over every token at once: no Python loop over tokens.
"""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._errors import InputTypeError, InputValueError, as_input_error

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_NO_INTS: IntArray = np.zeros(0, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# The default mode's rule, one transition at a time (seqeval.metrics.sequence_labeling's
# end_of_chunk and start_of_chunk, whose signatures they keep).


def end_of_chunk(prev_tag: Any, tag: Any, prev_type: Any, type_: Any) -> bool:
    """Whether a chunk ended between the previous word and this one.

    A chunk ends after an ``E`` or ``S``; after a ``B`` or ``I`` followed by ``B``, ``S`` or ``O``;
    and after any tag but ``O`` and ``.`` when the type changes.

    >>> end_of_chunk('I', 'O', 'PER', '_'), end_of_chunk('B', 'I', 'PER', 'PER')
    (True, False)
    """
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag not in ("O", ".") and bool(prev_type != type_)


def start_of_chunk(prev_tag: Any, tag: Any, prev_type: Any, type_: Any) -> bool:
    """Whether a chunk started between the previous word and this one.

    A chunk starts at a ``B`` or ``S``; at an ``E`` or ``I`` after an ``E``, ``S`` or ``O``; and at
    any tag but ``O`` and ``.`` where the type changes.

    >>> start_of_chunk('O', 'I', '_', 'PER'), start_of_chunk('B', 'I', 'PER', 'PER')
    (True, False)
    """
    if tag in ("B", "S"):
        return True
    if tag in ("E", "I") and prev_tag in ("E", "S", "O"):
        return True
    return tag not in ("O", ".") and bool(prev_type != type_)


# Tag letters the rule names; "X" stands for every other letter (the rule treats them alike).
TAG_CLASSES = ("O", "B", "I", "E", "S", ".", "X")
_TAG_CLASS = {t: k for k, t in enumerate(TAG_CLASSES[:-1])}
_OTHER_TAG = len(TAG_CLASSES) - 1
_NE_PREFIXES = ("B-", "I-", "E-", "S-")
_NE_SUFFIXES = ("-B", "-I", "-E", "-S")
_BARE_TAGS = ("O", "B", "I", "E", "S")


@functools.cache
def _default_tables() -> tuple[BoolArray, BoolArray]:
    """start and end, indexed [previous tag class, tag class, same type], flattened."""
    n = len(TAG_CLASSES)
    start = np.zeros((n, n, 2), dtype=bool)
    end = np.zeros((n, n, 2), dtype=bool)
    for (p, prev), (c, cur), same in itertools.product(enumerate(TAG_CLASSES), enumerate(TAG_CLASSES), (0, 1)):
        kinds = ("a", "a" if same else "b")
        start[p, c, same] = start_of_chunk(prev, cur, *kinds)
        end[p, c, same] = end_of_chunk(prev, cur, *kinds)
    return start.ravel(), end.ravel()


def read_default_label(label: str, suffix: bool) -> tuple[bool, str, str]:
    """A non-empty label as seqeval's default mode reads it: whether it warns that the label
    seems not to be an NE tag, the tag letter, and the type (``_`` when there is none)."""
    if suffix:
        odd = label not in _BARE_TAGS and not label.endswith(_NE_SUFFIXES)
        return odd, label[-1], label[:-1].rsplit("-", maxsplit=1)[0] or "_"
    odd = label not in _BARE_TAGS and not label.startswith(_NE_PREFIXES)
    return odd, label[0], label[1:].split("-", maxsplit=1)[-1] or "_"


def _default_failure(label: Any, suffix: bool) -> Exception:
    """The error seqeval's get_entities meets on a label that is not a non-empty string: the one
    that the same operations raise on it (AttributeError for None or a number, TypeError for
    bytes, IndexError for the empty string)."""
    what = "the empty string" if isinstance(label, str) else f"{type(label).__name__} {label!r}"
    try:
        check = label.endswith if suffix else label.startswith
        check(_NE_SUFFIXES if suffix else _NE_PREFIXES)
        _ = label[-1] if suffix else label[0]
    except Exception as exc:
        message = f"label {what}: labels must be non-empty strings (seqeval fails on it with {type(exc).__name__})"
        return as_input_error(exc, message)
    return InputTypeError(f"label {what}: labels must be strings")


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=1)


_WARN_LINE = _warn.__code__.co_firstlineno + 1  # where Python's warning filters see it given


def _shown_every_time(message: str) -> bool:
    """Whether Python's warning filters (warnings.filters, searched as the warnings module
    searches them) give this module's warning the action "always"."""
    for action, text, category, module, lineno in warnings.filters:
        if (
            (text is None or text.match(message))
            and issubclass(UserWarning, category)
            and (module is None or module.match(__name__))
            and lineno in (0, _WARN_LINE)
        ):
            return bool(action == "always")
    return bool(warnings.defaultaction == "always")  # type: ignore[attr-defined]


@dataclass(frozen=True)
class DefaultChunks:
    """What seqeval's get_entities makes of one input: the chunks (in the order it gives them),
    the labels it warns about (one per token, in token order), and the error it then meets."""

    types: tuple[str, ...]
    type: IntArray  # per chunk, an index into types
    first: IntArray  # per chunk, its first token
    last: IntArray  # per chunk, its last token (seqeval's end is inclusive)
    warned: tuple[str, ...]  # the distinct labels it warns about...
    warned_at: IntArray  # ...and, per token it warns on, which of them
    error: Exception | None

    def replay(self) -> None:
        """seqeval's warnings for this input, then its error if it met one.

        seqeval warns once per token. Where Python's warning filters show a message at most once
        from one place (every action but "always"), only its first occurrence is given: the
        others would be dropped unseen, and giving them costs a call per token."""
        at = self.warned_at
        if at.shape[0]:
            messages = [f"{label} seems not to be NE tag." for label in self.warned]
            every = np.array([_shown_every_time(m) for m in messages], dtype=bool)
            if not every.all():
                first = np.zeros(at.shape[0], dtype=bool)
                first[np.unique(at, return_index=True)[1]] = True
                at = at[every[at] | first]
            for k in at.tolist():
                _warn(messages[k])
        if self.error is not None:
            raise self.error

    def tuples(self) -> list[tuple[str, int, int]]:
        names = self.types
        return [
            (names[t], a, b)
            for t, a, b in zip(self.type.tolist(), self.first.tolist(), self.last.tolist(), strict=True)
        ]


def flatten_default(seq: Any) -> list[Any]:
    """The labels get_entities reads: a list of lists joined with an ``O`` after each, or a flat
    list as it is; then a closing ``O``. Anything else is seqeval's TypeError, but numpy arrays
    of labels (a 2-D array, a list of arrays): seqeval appends ``O`` to them, compares an array
    with a label and fails with numpy's ValueError (an array's truth value is ambiguous)."""
    if _arrays_of_labels(seq):
        raise InputValueError(
            f"labels given as numpy arrays ({type(seq).__name__} of arrays): seqeval fails on them with a"
            " ValueError; give lists of label lists (array.tolist())"
        )
    try:
        nested = any(isinstance(s, list) for s in seq)
    except TypeError:
        raise InputTypeError(f"expected a list of labels or of label lists, not {type(seq).__name__}") from None
    if nested:
        flat: list[Any] = []
        for s in seq:
            if not isinstance(s, list):
                raise InputTypeError(f"a list of label lists holds a {type(s).__name__}: every sentence must be a list")
            flat += s
            flat.append("O")
    elif isinstance(seq, list):
        flat = list(seq)
    else:
        raise InputTypeError(f"expected a list of labels or of label lists, not {type(seq).__name__}")
    flat.append("O")
    return flat


def _arrays_of_labels(seq: Any) -> bool:
    """A numpy array of two or more dimensions, or a list holding arrays of other than one label."""
    if isinstance(seq, np.ndarray):
        return seq.ndim >= 2
    return isinstance(seq, list) and any(isinstance(s, np.ndarray) and s.size != 1 for s in seq)


def default_chunks(seq: Any, suffix: bool) -> DefaultChunks:
    """seqeval's get_entities of ``seq`` (a list of labels or of label lists), on arrays."""
    return _default_chunks(flatten_default(seq), suffix)


def _empty_default(warned: tuple[str, ...], warned_at: IntArray, error: Exception | None) -> DefaultChunks:
    return DefaultChunks((), _NO_INTS, _NO_INTS, _NO_INTS, warned, warned_at, error)


def _vocabulary(flat: Sequence[Any]) -> tuple[dict[Any, int], IntArray] | None:
    """Each distinct label's index and, per token, its label's index; None if a label is not
    hashable."""
    try:
        index = {label: k for k, label in enumerate(dict.fromkeys(flat))}
    except TypeError:
        return None
    return index, np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))


def _first_unhashable(flat: Sequence[Any]) -> int:
    for k, label in enumerate(flat):
        try:
            hash(label)
        except TypeError:
            return k
    raise AssertionError("every label is hashable")  # pragma: no cover


def _default_chunks(flat: list[Any], suffix: bool) -> DefaultChunks:
    found = _vocabulary(flat)
    if found is None:
        # A label seqeval cannot read either (a list, say): what comes before it, then its error.
        k = _first_unhashable(flat)
        before = _default_chunks(flat[:k], suffix)
        if before.error is not None:
            return before
        return _empty_default(before.warned, before.warned_at, _default_failure(flat[k], suffix))
    index, ids = found
    vocab = list(index)
    n_vocab = len(vocab)
    odd = np.zeros(n_vocab, dtype=bool)
    bad = np.zeros(n_vocab, dtype=bool)
    tag_class = np.zeros(n_vocab, dtype=np.int64)
    kind = np.zeros(n_vocab, dtype=np.int64)
    kinds: dict[str, int] = {}
    for k, label in enumerate(vocab):
        if not isinstance(label, str) or not label:
            bad[k] = True
            odd[k] = isinstance(label, str)  # the empty label: seqeval warns about it, then fails on it
            continue
        odd[k], tag, name = read_default_label(label, suffix)
        tag_class[k] = _TAG_CLASS.get(tag, _OTHER_TAG)
        kind[k] = kinds.setdefault(name, len(kinds))
    warned_vocab = np.flatnonzero(odd)
    warned = tuple(str(vocab[k]) for k in warned_vocab.tolist())
    position = np.full(n_vocab, -1, dtype=np.int64)
    position[warned_vocab] = np.arange(warned_vocab.shape[0])
    if bad.any():
        stop = int(np.argmax(bad[ids]))  # the first token seqeval cannot read
        upto = ids[: stop + 1]
        warned_at = position[upto[odd[upto]]]
        return _empty_default(warned, warned_at, _default_failure(vocab[int(ids[stop])], suffix))
    warned_at = position[ids[odd[ids]]]

    tags, types = tag_class[ids], kind[ids]
    n = ids.shape[0]
    prev_tags = np.empty_like(tags)
    prev_types = np.empty_like(types)
    if n:
        prev_tags[0], prev_types[0] = _TAG_CLASS["O"], -1  # before the first label: O, and no type
        prev_tags[1:], prev_types[1:] = tags[:-1], types[:-1]
    code = (prev_tags * len(TAG_CLASSES) + tags) * 2 + (prev_types == types)
    starts_table, ends_table = _default_tables()
    pos = np.arange(n, dtype=np.int64)
    last_start = np.maximum.accumulate(np.where(starts_table[code], pos, -1)) if n else pos
    closing = np.flatnonzero(ends_table[code])  # a chunk ends just before each of these tokens
    last = closing - 1
    first = np.maximum(last_start[last], 0) if closing.shape[0] else _NO_INTS  # never started: from 0
    names = tuple(kinds)
    return DefaultChunks(names, types[last], first.astype(np.int64), last, warned, warned_at, None)


# --------------------------------------------------------------------------------------------
# The strict mode: a scheme's patterns and seqeval's scan.

# Prefix letters in the order of seqeval's Prefix members.
LETTERS = ("I", "O", "B", "E", "S", "U", "L")
_LETTER_CODE = {p: k for k, p in enumerate(LETTERS)}


@dataclass(frozen=True)
class SchemeTables:
    """A scheme's is_start, is_inside and is_end, indexed [previous prefix, prefix, same tag], flattened."""

    start: BoolArray
    inside: BoolArray
    end: BoolArray


_TABLES: weakref.WeakKeyDictionary[Any, SchemeTables] = weakref.WeakKeyDictionary()


def scheme_tables(scheme: Any) -> SchemeTables:
    """The tables of a scheme class (this package's, seqeval's or a subclass of either): its
    methods asked once per class of transition, with tokens made by the class itself."""
    found = _TABLES.get(scheme)
    if found is None:
        found = _TABLES[scheme] = _scheme_tables(scheme)
    return found


def _scheme_tables(scheme: Any) -> SchemeTables:
    n = len(LETTERS)
    tables = {name: np.zeros((n, n, 2), dtype=bool) for name in ("start", "inside", "end")}
    token = {(p, t): scheme(f"{p}-{t}") for p in LETTERS for t in "ab"}
    for (p, prev), (c, cur), same in itertools.product(enumerate(LETTERS), enumerate(LETTERS), (0, 1)):
        before, this = token[prev, "a"], token[cur, "a" if same else "b"]
        tables["start"][p, c, same] = bool(this.is_start(before))
        tables["inside"][p, c, same] = bool(this.is_inside(before))
        tables["end"][p, c, same] = bool(this.is_end(before))
    return SchemeTables(tables["start"].ravel(), tables["inside"].ravel(), tables["end"].ravel())


def prefix_code(prefix: Any) -> int:
    """The code of a Prefix member (this package's or seqeval's)."""
    return _LETTER_CODE[prefix.name]


@dataclass(frozen=True)
class StrictSpans:
    """Mentions as seqeval's Tokens.entities finds them, sentence after sentence."""

    sentence: IntArray
    start: IntArray
    end: IntArray  # exclusive, as seqeval's Entity.end
    tag: IntArray  # an index into tags
    tags: tuple[str, ...]
    sentences: int


def strict_spans(
    prefix: IntArray,
    tag: IntArray,
    lengths: IntArray,
    outside: tuple[int, int],
    tables: SchemeTables,
    tags: tuple[str, ...],
) -> StrictSpans:
    """The mentions of sentences whose tokens (all of them, one after another) have these prefix
    codes and tag indices; ``outside`` is the prefix code and tag index of the scheme's ``O``,
    which stands before and after every sentence.

    seqeval's scan: a token where the patterns start a mention, and that is not taken by the
    mention before it, starts one; the mention runs over the tokens inside it; it is kept when
    the token after it (the closing ``O`` at the sentence end) ends it; the scan goes on after it.
    """
    n_sent = lengths.shape[0]
    # One outside token before each sentence and one after the last: "ext" positions.
    seps = np.concatenate(([0], np.cumsum(lengths))) + np.arange(n_sent + 1)
    size = int(seps[-1]) + 1
    is_sep = np.zeros(size, dtype=bool)
    is_sep[seps] = True
    ext_prefix = np.full(size, outside[0], dtype=np.int64)
    ext_tag = np.full(size, outside[1], dtype=np.int64)
    ext_prefix[~is_sep] = prefix
    ext_tag[~is_sep] = tag
    code = (ext_prefix[:-1] * len(LETTERS) + ext_prefix[1:]) * 2 + (ext_tag[:-1] == ext_tag[1:])
    start = np.zeros(size, dtype=bool)
    inside = np.zeros(size, dtype=bool)
    ends = np.zeros(size, dtype=bool)
    start[1:], inside[1:], ends[1:] = tables.start[code], tables.inside[code], tables.end[code]
    start[is_sep] = inside[is_sep] = False  # the outside token neither starts nor continues a mention

    pos = np.arange(size, dtype=np.int64)
    # A token is in a run when a start at or before it is followed by inside tokens up to it.
    last_start = np.maximum.accumulate(np.where(start, pos, -1))
    last_break = np.maximum.accumulate(np.where(inside, -1, pos))
    in_run = (last_start >= 0) & (last_start >= last_break)
    taken = start.copy()
    taken[1:] &= ~(inside[1:] & in_run[:-1])  # a start inside the run before it is passed over
    firsts = np.flatnonzero(taken)
    breaks = np.flatnonzero(~inside)
    after = breaks[np.searchsorted(breaks, firsts, side="right")]  # the token after the run
    keep = ends[after]
    firsts, after = firsts[keep], after[keep]
    sentence = np.searchsorted(seps, firsts, side="right") - 1
    offset = seps[sentence] + 1
    return StrictSpans(
        sentence.astype(np.int64),
        (firsts - offset).astype(np.int64),
        (after - offset).astype(np.int64),
        ext_tag[firsts],
        tags,
        n_sent,
    )


@dataclass(frozen=True)
class Reading:
    """A label read by a scheme class: its prefix code and tag, and the error seqeval meets on it
    (``rank`` 1 when the token cannot be made, 2 when the scheme does not allow its prefix)."""

    prefix: int = 0
    tag: str = ""
    rank: int = 0
    error: Exception | None = None


def read_label(scheme: type, label: Any, suffix: bool, delimiter: str) -> Reading:
    try:
        token = scheme(label, suffix=suffix, delimiter=delimiter)
        prefix, tag = prefix_code(token.prefix), str(token.tag)
    except Exception as exc:
        return Reading(rank=1, error=as_input_error(exc))
    try:
        token.is_valid()
    except Exception as exc:
        return Reading(prefix, tag, rank=2, error=as_input_error(exc))
    return Reading(prefix, tag)


def scheme_spans(sequences: Iterable[Iterable[Any]], scheme: type, suffix: bool, delimiter: str = "-") -> StrictSpans:
    """seqeval's ``Entities(sequences, scheme, suffix, delimiter)``, on arrays. A label seqeval
    refuses raises the error seqeval raises first: sentence by sentence, and in a sentence a label
    that makes no token before one whose prefix the scheme does not allow."""
    sentences = [s if isinstance(s, list) else list(s) for s in sequences]
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    flat = list(itertools.chain.from_iterable(sentences))
    outside = read_label(scheme, "O", suffix, delimiter)
    if outside.rank == 1 and sentences:  # seqeval makes the closing O first
        assert outside.error is not None
        raise outside.error
    found = _vocabulary(flat)
    if found is None:  # a label that is not hashable (bad input): each token read on its own
        vocab, ids = flat, np.arange(len(flat), dtype=np.int64)
    else:
        vocab, ids = list(found[0]), found[1]
    readings = [read_label(scheme, label, suffix, delimiter) for label in vocab]
    rank = np.fromiter((r.rank for r in readings), dtype=np.int64, count=len(readings))
    if sentences and ((rank > 0).any() or outside.rank):
        _raise_first(readings, rank[ids], lengths, ids, outside)
    tag_index: dict[str, int] = {}
    tag_of = np.fromiter(
        (tag_index.setdefault(r.tag, len(tag_index)) for r in readings), dtype=np.int64, count=len(readings)
    )
    prefix_of = np.fromiter((r.prefix for r in readings), dtype=np.int64, count=len(readings))
    out = (outside.prefix, tag_index.setdefault(outside.tag, len(tag_index)))
    return strict_spans(prefix_of[ids], tag_of[ids], lengths, out, scheme_tables(scheme), tuple(tag_index))


def _raise_first(readings: list[Reading], rank: IntArray, lengths: IntArray, ids: IntArray, outside: Reading) -> None:
    """Raise the error seqeval meets first."""
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    bad = np.flatnonzero(rank > 0)
    sentence = int(np.searchsorted(bounds, bad[0], side="right") - 1) if bad.shape[0] else 0
    if outside.rank:
        sentence = 0  # the closing O of the first sentence is refused before any later label
    here = rank[int(bounds[sentence]) : int(bounds[sentence + 1])]
    for wanted in (1, 2):
        hits = np.flatnonzero(here == wanted)
        if hits.shape[0]:
            error = readings[int(ids[int(bounds[sentence]) + int(hits[0])])].error
            assert error is not None
            raise error
    assert outside.error is not None
    raise outside.error
