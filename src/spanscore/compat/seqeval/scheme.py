"""seqeval.scheme: the tagging schemes of seqeval's strict mode, their tokens and mentions.

The same classes, constructors, attributes and results as seqeval 1.2.2's, written for spanscore:
``Token`` (a label read as a prefix and a tag), its schemes ``IOB1``, ``IOE1``, ``IOB2``,
``IOE2``, ``IOBES`` and ``BILOU`` (each with its allowed prefixes and the start, inside and end
patterns of its transitions), ``Tokens`` (one sentence) and ``Entities`` (many) with the
``Entity`` mentions they find, and ``auto_detect``. Mentions are found on arrays, for all
sentences at once (spanscore.compat.seqeval._chunks); seqeval's scan is kept with its odd
results for IOB1 and IOE1 (``B-PER I-PER`` in IOB1 is the one mention ``I-PER``), which its own
tests pin. A subclass of ``Token`` with patterns of its own works as it does in seqeval.

Errors are seqeval's types (KeyError for a prefix letter no scheme has, IndexError for an empty
label, ValueError for a prefix the scheme does not allow, with seqeval's message), each also a
spanscore ``InputError``.

>>> tokens = Tokens(['B-PER', 'I-PER', 'O', 'B-LOC'], IOB2)
>>> tokens.entities
[(None, PER, 0, 2), (None, LOC, 3, 4)]
>>> auto_detect([['B-PER', 'I-PER', 'O', 'S-LOC', 'E-LOC']])
<class 'spanscore.compat.seqeval.scheme.IOBES'>
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ._chunks import prefix_code, scheme_spans, scheme_tables, strict_spans
from ._errors import InputIndexError, InputKeyError, InputTypeError, InputValueError


class Entity:
    """A mention: sentence, first token, end (exclusive) and tag; equal to another with the same
    four."""

    def __init__(self, sent_id: Any, start: Any, end: Any, tag: Any) -> None:
        self.sent_id = sent_id
        self.start = start
        self.end = end
        self.tag = tag

    def __repr__(self) -> str:
        return f"({self.sent_id}, {self.tag}, {self.start}, {self.end})"

    def __eq__(self, other: object) -> bool:
        to_tuple = getattr(other, "to_tuple", None)
        if to_tuple is None:
            return NotImplemented
        return bool(self.to_tuple() == to_tuple())

    def __hash__(self) -> int:
        return hash(self.to_tuple())

    def to_tuple(self) -> tuple[Any, Any, Any, Any]:
        return self.sent_id, self.tag, self.start, self.end


class Prefix(enum.Flag):
    # seqeval's members in seqeval's order (their values, str() and repr() show in its messages).
    I = enum.auto()  # noqa: E741
    O = enum.auto()  # noqa: E741
    B = enum.auto()
    E = enum.auto()
    S = enum.auto()
    U = enum.auto()
    L = enum.auto()
    ANY = I | O | B | E | S | U | L


Prefixes: dict[str, Prefix] = dict(Prefix.__members__)


class Tag(enum.Flag):
    """Whether a pattern wants the previous token's tag to be the same as this one's, or not."""

    SAME = enum.auto()
    DIFF = enum.auto()
    ANY = SAME | DIFF


Pattern = tuple[Prefix, Prefix, Tag]
_KNOWN = ", ".join(p for p in Prefixes if len(p) == 1)
_TAG_MARK = {"=": Tag.SAME, "!": Tag.DIFF, "": Tag.ANY}


def _patterns(spec: str) -> frozenset[Pattern]:
    """Patterns written ``PREV>CUR`` (``*`` for any prefix), then ``=`` when the tags must be the
    same or ``!`` when they must differ: ``"B>I= *>B"``."""
    out: set[Pattern] = set()
    for item in spec.split():
        prev, cur = item[0], item[2]
        out.add((Prefixes["ANY" if prev == "*" else prev], Prefixes["ANY" if cur == "*" else cur], _TAG_MARK[item[3:]]))
    return frozenset(out)


class Token:
    """A label as seqeval reads it: its prefix (first letter, last with ``suffix``) and its tag
    (the rest without the delimiters around it, ``_`` when empty). The schemes below subclass it."""

    allowed_prefix: ClassVar[Prefix | None] = None
    start_patterns: ClassVar[frozenset[Pattern] | None] = None
    inside_patterns: ClassVar[frozenset[Pattern] | None] = None
    end_patterns: ClassVar[frozenset[Pattern] | None] = None

    def __init__(self, token: str, suffix: bool = False, delimiter: str = "-") -> None:
        self.token = token
        try:
            letter: Any = token[-1] if suffix else token[0]
        except IndexError:
            raise InputIndexError("a label is the empty string: every label needs at least a prefix letter") from None
        except TypeError:
            raise InputTypeError(f"labels must be strings, not {type(token).__name__} {token!r}") from None
        try:
            self.prefix: Prefix = Prefixes[letter]
        except KeyError:
            raise InputKeyError(f"label {token!r}: no scheme has the prefix {letter!r} ({_KNOWN})") from None
        except TypeError:
            raise InputTypeError(f"labels must be strings, not {type(token).__name__} {token!r}") from None
        tag = token[:-1] if suffix else token[1:]
        self.tag: str = tag.strip(delimiter) or "_"

    def __repr__(self) -> str:
        return str(self.token)

    def is_valid(self) -> bool:
        """True if the scheme allows the prefix; otherwise seqeval's ValueError."""
        allowed = type(self).allowed_prefix
        if allowed is None:
            raise InputTypeError(f"{type(self).__name__} is no scheme: it allows no prefix (use IOB2, IOBES...)")
        if self.prefix not in allowed:
            names = str(allowed).replace("Prefix.", "")
            raise InputValueError(f"Invalid token is found: {self.token}. Allowed prefixes are: {names}.")
        return True

    def is_start(self, prev: Token) -> bool:
        """Whether a mention starts at this token, after ``prev``."""
        return self.check_patterns(prev, type(self).start_patterns)

    def is_inside(self, prev: Token) -> bool:
        """Whether this token continues the mention that ``prev`` is in."""
        return self.check_patterns(prev, type(self).inside_patterns)

    def is_end(self, prev: Token) -> bool:
        """Whether the mention that ``prev`` is in ends with ``prev`` (this token follows it)."""
        return self.check_patterns(prev, type(self).end_patterns)

    def check_tag(self, prev: Token, cond: Tag) -> bool:
        """Whether the tags of ``prev`` and this token meet ``cond``."""
        if cond == Tag.ANY:
            return True
        same = prev.tag == self.tag
        return (same and cond == Tag.SAME) or (not same and cond == Tag.DIFF)

    def check_patterns(self, prev: Token, patterns: Iterable[Pattern] | None) -> bool:
        """Whether any pattern (previous prefixes, current prefixes, tag condition) matches."""
        if patterns is None:
            raise InputTypeError(f"{type(self).__name__} is no scheme: it has no patterns (use IOB2, IOBES...)")
        return any(
            prev.prefix in before and self.prefix in current and self.check_tag(prev, cond)
            for before, current, cond in patterns
        )


class IOB1(Token):
    """I inside, B only to start a mention right after one of its tag (seqeval's reading)."""

    allowed_prefix = Prefix.I | Prefix.O | Prefix.B
    start_patterns = _patterns("O>I I>I! B>I I>B= B>B=")
    inside_patterns = _patterns("B>I= I>I=")
    end_patterns = _patterns("I>I! I>O I>B B>O B>I! B>B=")


class IOE1(Token):
    """I inside, E only to end a mention right before one of its tag (seqeval marks it unfinished)."""

    allowed_prefix = Prefix.I | Prefix.O | Prefix.E
    start_patterns = _patterns("O>I I>I! E>I E>E=")
    inside_patterns = _patterns("I>I= I>E=")
    end_patterns = _patterns("I>I! I>O I>E! E>I= E>E=")


class IOB2(Token):
    """B begins every mention, I continues it (BIO)."""

    allowed_prefix = Prefix.I | Prefix.O | Prefix.B
    start_patterns = _patterns("*>B")
    inside_patterns = _patterns("B>I= I>I=")
    end_patterns = _patterns("I>O I>I! I>B B>O B>I! B>B")


class IOE2(Token):
    """E ends every mention, I comes before it."""

    allowed_prefix = Prefix.I | Prefix.O | Prefix.E
    start_patterns = _patterns("O>I O>E E>I E>E I>I! I>E!")
    inside_patterns = _patterns("I>E= I>I=")
    end_patterns = _patterns("E>*")


class IOBES(Token):
    """B begins, I continues, E ends a mention; S is a mention of one token."""

    allowed_prefix = Prefix.I | Prefix.O | Prefix.B | Prefix.E | Prefix.S
    start_patterns = _patterns("*>B *>S")
    inside_patterns = _patterns("B>I= B>E= I>I= I>E=")
    end_patterns = _patterns("S>* E>*")


class BILOU(Token):
    """IOBES with L for the last token and U for a mention of one token."""

    allowed_prefix = Prefix.B | Prefix.I | Prefix.L | Prefix.O | Prefix.U
    start_patterns = _patterns("*>B *>U")
    inside_patterns = _patterns("B>I= B>L= I>I= I>L=")
    end_patterns = _patterns("U>* L>*")


class Tokens:
    """One sentence of labels read by a scheme; ``entities`` are its mentions."""

    def __init__(
        self, tokens: list[str], scheme: type[Token], suffix: bool = False, delimiter: str = "-", sent_id: Any = None
    ) -> None:
        self.outside_token = scheme("O", suffix=suffix, delimiter=delimiter)
        self.tokens = [scheme(token, suffix=suffix, delimiter=delimiter) for token in tokens]
        self.extended_tokens = [*self.tokens, self.outside_token]
        self.sent_id = sent_id

    @property
    def entities(self) -> list[Entity]:
        """The mentions, in order (a token whose prefix the scheme does not allow: ValueError).

        >>> Tokens(['B-PER', 'I-PER', 'O', 'B-LOC'], IOB2, sent_id=0).entities
        [(0, PER, 0, 2), (0, LOC, 3, 4)]
        """
        for token in self.extended_tokens:
            token.is_valid()
        tags: dict[str, int] = {}
        n = len(self.tokens)
        tag = np.fromiter((tags.setdefault(t.tag, len(tags)) for t in self.tokens), dtype=np.int64, count=n)
        prefix = np.fromiter((prefix_code(t.prefix) for t in self.tokens), dtype=np.int64, count=n)
        outside = (prefix_code(self.outside_token.prefix), tags.setdefault(self.outside_token.tag, len(tags)))
        tables = scheme_tables(type(self.outside_token))
        spans = strict_spans(prefix, tag, np.array([n], dtype=np.int64), outside, tables, tuple(tags))
        return [
            Entity(self.sent_id, a, b, spans.tags[t])
            for a, b, t in zip(spans.start.tolist(), spans.end.tolist(), spans.tag.tolist(), strict=True)
        ]


class Entities:
    """The mentions of many sentences read by a scheme: ``entities`` holds one list per sentence.

    >>> Entities([['B-PER', 'I-PER'], ['O', 'B-LOC']], IOB2).entities
    [[(0, PER, 0, 2)], [(1, LOC, 1, 2)]]
    """

    def __init__(
        self, sequences: Iterable[Iterable[str]], scheme: type[Token], suffix: bool = False, delimiter: str = "-"
    ) -> None:
        self._spans = scheme_spans(sequences, scheme, suffix, delimiter)

    @cached_property
    def entities(self) -> list[list[Entity]]:
        spans = self._spans
        out: list[list[Entity]] = [[] for _ in range(spans.sentences)]
        names = spans.tags
        for s, a, b, t in zip(
            spans.sentence.tolist(), spans.start.tolist(), spans.end.tolist(), spans.tag.tolist(), strict=True
        ):
            out[s].append(Entity(s, a, b, names[t]))
        return out

    def filter(self, tag_name: str) -> set[Entity]:
        """The mentions with this tag, in every sentence."""
        return {entity for entity in itertools.chain(*self.entities) if entity.tag == tag_name}

    @property
    def unique_tags(self) -> set[str]:
        """The tags of all mentions."""
        return {entity.tag for entity in itertools.chain(*self.entities)}


def _prefix_sets(spec: str) -> tuple[frozenset[Prefix], ...]:
    return tuple(frozenset(Prefixes[p] for p in letters) for letters in spec.split())


# The prefix sets (of the labels in y_true) that name each scheme, in the order they are tried.
_DETECT: tuple[tuple[type[Token], tuple[frozenset[Prefix], ...]], ...] = (
    (IOB2, _prefix_sets("IOB IB BO B")),
    (IOE2, _prefix_sets("IOE IE EO E")),
    (IOBES, _prefix_sets("IOBES IBES IOBE OBES IBE BES OBE BE S")),
    (BILOU, _prefix_sets("IOBLU IBLU IOBL OBLU IBL BLU OBL BL U")),
)


def auto_detect(sequences: Iterable[Iterable[str]], suffix: bool = False, delimiter: str = "-") -> type[Token]:
    """The scheme of ``sequences``, from the set of prefixes their labels use: IOB2, IOE2, IOBES or
    BILOU. A label no scheme reads, or a set of prefixes that names none of them, raises seqeval's
    ValueError.

    >>> auto_detect([['B-PER', 'I-PER', 'O']]).__name__
    'IOB2'
    """
    flat = list(itertools.chain.from_iterable(sequences))
    try:
        labels: list[Any] = list(dict.fromkeys(flat))  # the first token with each label, in order
    except TypeError:
        labels = flat
    prefixes: set[Prefix] = set()
    for label in labels:
        try:
            token = Token(label, suffix=suffix, delimiter=delimiter)
        except KeyError:
            raise InputValueError(f"This scheme is not supported: {label}") from None
        prefixes.add(token.prefix)
    for scheme, allowed in _DETECT:
        if prefixes in allowed:
            return scheme
    raise InputValueError(f"This scheme is not supported: {prefixes}")
