"""A training corpus for entity classifiers: sentences of tokens with their gold mentions.

Also the contiguous block folds used for cross-fitting, and the (text -> type) examples an entity
classifier learns from, with an ``other`` class of random non-entity n-grams (Nejadgholi et al. 2020, section 7.1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ...errors import InputError, OptionError
from ...io.reading import DEFAULT_READING, Reading

# The class of non-entity spans: NUL is in no type name read from text, so corpora with a type
# called "other" (WNUT-16 has one) train as they are.
OTHER = "\x00other"
SENTENCE_END = (".", "?", "!")


@dataclass(frozen=True)
class Mention:
    start: int  # token offsets in the sentence, end exclusive
    end: int
    label: str


@dataclass(frozen=True)
class Sentence:
    tokens: tuple[str, ...]
    mentions: tuple[Mention, ...]
    line: int  # 1-based line of the first token in the source file

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    def mention_text(self, m: Mention) -> str:
        return " ".join(self.tokens[m.start : m.end])


@dataclass(frozen=True)
class Corpus:
    path: str
    sentences: tuple[Sentence, ...]

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(sorted({m.label for s in self.sentences for m in s.mentions}))

    def subset(self, indices: Sequence[int]) -> Corpus:
        return Corpus(self.path, tuple(self.sentences[i] for i in indices))


def read_corpus(path: str | Path, reading: Reading = DEFAULT_READING) -> Corpus:
    """Read a CoNLL file (token ... tag per line, blank lines between sentences)."""
    from ..corpus import read_spans

    table, spans = read_spans(path, reading)
    if OTHER in spans.types:
        raise InputError(f"the type name {OTHER!r} is reserved for non-entity spans", path=table.path)
    raw = table.buffer.tobytes()
    words = [
        raw[s:e].decode("utf-8", errors="replace")
        for s, e in zip(table.token_start.tolist(), table.token_end.tolist(), strict=True)
    ]
    bounds = table.sentence_bounds.tolist()
    per_sentence: list[list[Mention]] = [[] for _ in range(table.n_sentences)]
    for start, end, t, unit in zip(
        spans.start.tolist(), spans.end.tolist(), spans.type.tolist(), spans.unit.tolist(), strict=True
    ):
        base = bounds[unit]
        per_sentence[unit].append(Mention(start - base, end - base, spans.types[t]))
    sentences = tuple(
        Sentence(tuple(words[bounds[i] : bounds[i + 1]]), tuple(per_sentence[i]), int(table.token_line[bounds[i]]))
        for i in range(table.n_sentences)
    )
    return Corpus(table.path, sentences)


def block_starts(corpus: Corpus, k: int = 5) -> list[int]:
    """First sentence of each of ``k`` contiguous blocks.

    Each nominal edge (i * n / k) moves forward to the next sentence that ends without . ? ! --
    in MedMentions as tokenised by Nejadgholi et al. (2020) that is a sentence carrying the title of the next abstract,
    so abstracts stay (almost) whole inside one block.
    """
    n = len(corpus)
    if k < 2:
        raise OptionError(f"cross-fitting needs at least 2 blocks, not {k}")
    if n < k:
        raise InputError(f"cannot cut {n} sentences into {k} blocks", path=corpus.path)
    starts = [0]
    for i in range(1, k):
        j = int(np.ceil(i * n / k))
        while j < n and corpus.sentences[j].tokens and corpus.sentences[j].tokens[-1] in SENTENCE_END:
            j += 1
        if j >= n or j <= starts[-1]:  # no title-like sentence ahead: keep the nominal edge
            j = max(int(np.ceil(i * n / k)), starts[-1] + 1)
        starts.append(j)
    return starts


def block_of(starts: Sequence[int], n: int) -> npt.NDArray[np.int64]:
    """Block number of every sentence."""
    out = np.zeros(n, dtype=np.int64)
    for b, s in enumerate(starts):
        out[s:] = b
    return out


@dataclass(frozen=True)
class Examples:
    """Distinct (text, label) pairs with their counts as sample weights."""

    texts: tuple[str, ...]
    labels: tuple[str, ...]
    weights: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.texts)


def entity_examples(corpus: Corpus, *, seed: int = 0, max_other_len: int = 4) -> Examples:
    """Every gold mention (text -> type), plus ``other``: random n-grams that overlap no mention.

    As many ``other`` samples are drawn as the average type has mentions; identical pairs are
    merged with their count as weight (the same objective as repeating them).
    """
    pairs: Counter[tuple[str, str]] = Counter()
    free: list[tuple[int, int]] = []  # (sentence, token) of tokens outside every mention
    for i, s in enumerate(corpus.sentences):
        covered = np.zeros(len(s.tokens), dtype=bool)
        for m in s.mentions:
            pairs[(s.mention_text(m), m.label)] += 1
            covered[m.start : m.end] = True
        free.extend((i, int(t)) for t in np.flatnonzero(~covered))
    n_types = len({label for _, label in pairs})
    if n_types == 0:
        raise InputError("no gold mentions to learn from", path=corpus.path)
    n_other = max(1, round(sum(pairs.values()) / n_types))
    rng = np.random.default_rng(seed)
    drawn = 0
    tries = 0
    while drawn < n_other and free and tries < 20 * n_other:
        tries += 1
        i, t = free[int(rng.integers(len(free)))]
        s = corpus.sentences[i]
        length = int(rng.integers(1, max_other_len + 1))
        end = t + length
        if end > len(s.tokens) or any(m.start < end and t < m.end for m in s.mentions):
            continue
        pairs[(" ".join(s.tokens[t:end]), OTHER)] += 1
        drawn += 1
    items = sorted(pairs.items())
    return Examples(
        tuple(t for (t, _), _ in items), tuple(label for (_, label), _ in items), tuple(float(c) for _, c in items)
    )


def neighbourhoods(corpus: Corpus, reach: int = 30) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """First and last sentence (inclusive) of the passage around every sentence.

    A sentence that ends without . ? ! closes a passage (in MedMentions it carries the next
    abstract's title, so it belongs to both abstracts); a passage reaches at most ``reach``
    sentences either way. A classifier that is to give new-text features to a judged sentence
    leaves out its whole passage, where the same entities recur.
    """
    n = len(corpus)
    boundary = np.array([not s.tokens or s.tokens[-1] not in SENTENCE_END for s in corpus.sentences], dtype=bool)
    marks = np.flatnonzero(boundary)
    units = np.arange(n, dtype=np.int64)
    if marks.shape[0] == 0:
        return np.maximum(units - reach, 0), np.minimum(units + reach, n - 1)
    before = np.searchsorted(marks, units, side="left") - 1  # last mark strictly before
    first = np.where(before >= 0, marks[np.maximum(before, 0)], 0)
    after = np.where(boundary, np.searchsorted(marks, units, side="right"), np.searchsorted(marks, units, side="left"))
    last = np.where(after < marks.shape[0], marks[np.minimum(after, marks.shape[0] - 1)], n - 1)
    return np.maximum(first, units - reach).astype(np.int64), np.minimum(last, units + reach).astype(np.int64)


def holdout_groups(corpus: Corpus, units: Sequence[int], share: float) -> list[list[int]]:
    """The judged sentences ``units`` cut into runs (in corpus order) whose passages together
    cover at most ``share`` of the corpus, so that a classifier trained without one run's
    passages keeps most of the corpus; a passage larger than that is a run of its own."""
    first, last = neighbourhoods(corpus)
    limit = max(1, int(len(corpus) * share))
    groups: list[list[int]] = []
    covered, end = 0, -1
    for u in sorted(set(units)):
        s, e = int(first[u]), int(last[u])
        extra = e - max(s, end + 1) + 1 if e > end else 0
        if groups and covered + extra <= limit:
            groups[-1].append(u)
            covered += extra
        else:
            groups.append([u])
            covered = e - s + 1
        end = max(end, e)
    return groups


def held_out(corpus: Corpus, units: Sequence[int]) -> npt.NDArray[np.bool_]:
    """The sentences a classifier leaves out for ``units``: their passages, and every sentence
    whose text is one of theirs (a sentence may occur twice)."""
    first, last = neighbourhoods(corpus)
    out = np.zeros(len(corpus), dtype=bool)
    for u in units:
        out[int(first[u]) : int(last[u]) + 1] = True
    texts = {corpus.sentences[u].text for u in units}
    out |= np.array([s.text in texts for s in corpus.sentences], dtype=bool)
    return out
