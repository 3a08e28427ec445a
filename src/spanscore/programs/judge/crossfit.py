"""Training judges, and cross-fitting them over a corpus that contains the judged sentences.

Cross-fitting cuts the corpus into contiguous blocks of sentences (``corpus.block_starts``). A
judgement in block ``k`` is scored by models that never saw block ``k``: its entity classifier is
trained on the other blocks, less any sentence whose text is a judged sentence of block ``k``.
A judge that also learns from human scores is cross-fitted over the same blocks, nested: its
acceptance model for block ``k`` learns from the judgements of each other block ``j``, with
features from a classifier trained without blocks ``j`` and ``k``, so no model used for block
``k`` was trained on block ``k`` at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ...errors import OptionError
from .classifier import EntityClassifier, get_backend
from .corpus import Corpus, block_of, block_starts, entity_examples
from .features import Lexicon, features
from .judgements import Judgement, accepts, check_user, locate
from .model import Acceptance, Rule, SpanJudge

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Trains an entity classifier on (a subset of) a corpus.
Trainer = Callable[[Corpus], EntityClassifier]


def backend_trainer(backend: str = "tfidf", seed: int = 0) -> Trainer:
    spec = get_backend(backend)

    def train(corpus: Corpus) -> EntityClassifier:
        return spec.train(entity_examples(corpus, seed=seed), seed)

    return train


def train_judge(
    corpus: Corpus,
    *,
    backend: str = "tfidf",
    rule: Rule = "contains",
    judgements: Sequence[Judgement] | None = None,
    user: str = "forgiving",
    folds: int = 5,
    seed: int = 0,
    trainer: Trainer | None = None,
    judgements_path: str = "judgements",
) -> SpanJudge:
    """A judge from a training corpus, and optionally an acceptance model from human scores.

    The acceptance model learns from features that an entity classifier gives the judged pairs;
    when the judged sentences are in ``corpus``, those features come from block-fold classifiers
    that never saw the sentence, as the features of new text will at evaluation time.
    """
    train = trainer or backend_trainer(backend, seed)
    classifier = train(corpus)
    lexicon = Lexicon.build(corpus)
    if not judgements:
        return SpanJudge(classifier, lexicon, rule=rule)
    check_user(user)
    known = {s.text for s in corpus.sentences}
    items = [r.mismatch() for r in judgements]
    x = features(items, classifier, lexicon)  # rows of sentences outside the corpus keep these
    rows = [k for k, r in enumerate(judgements) if r.sentence in known]
    if rows:
        plan, _ = fold_plan(corpus, [judgements[k] for k in rows], folds=folds, path=judgements_path)
        for fold in plan:
            if fold.rows.shape[0] == 0:
                continue
            sub = corpus.subset(fold.train.tolist())
            mine = [rows[k] for k in fold.rows.tolist()]
            x[mine] = features([items[k] for k in mine], train(sub), Lexicon.build(sub))
    acceptance = Acceptance.fit(x, items, accepts(judgements, user), user)
    return SpanJudge(classifier, lexicon, rule=rule, acceptance=acceptance)


def _training_sentences(corpus: Corpus, blocks: IntArray, held_out: set[int], texts: set[str]) -> list[int]:
    """Sentences outside the held-out blocks whose text is none of the held-out judged sentences."""
    return [
        i for i, s in enumerate(corpus.sentences) if int(blocks[i]) not in held_out and s.text not in texts
    ]


@dataclass(frozen=True)
class Fold:
    """What cross-fitting trains for one block: ``train`` feeds the classifier that scores the
    block's judgements; ``inner[j]`` feeds the classifier giving features to block ``j``'s
    judgements, from which the acceptance model for this block learns."""

    block: int
    rows: IntArray  # judgements in this block
    train: IntArray  # sentence indices
    inner: dict[int, IntArray] = field(default_factory=dict)


def fold_plan(
    corpus: Corpus, judgements: Sequence[Judgement], *, folds: int = 5, nested: bool = False, path: str = "judgements"
) -> tuple[list[Fold], IntArray]:
    """The folds of block cross-fitting, and the sentence each judgement was made on."""
    units = locate(judgements, corpus, path)
    starts = block_starts(corpus, folds)
    blocks = block_of(starts, len(corpus))
    row_block = blocks[units]
    texts = [{j.sentence for j, b in zip(judgements, row_block.tolist(), strict=True) if b == k} for k in range(folds)]
    plan = []
    for k in range(folds):
        rows = np.flatnonzero(row_block == k).astype(np.int64)
        train = np.array(_training_sentences(corpus, blocks, {k}, texts[k]), dtype=np.int64)
        inner: dict[int, IntArray] = {}
        if nested:
            for j in range(folds):
                if j != k and (row_block == j).any():
                    inner[j] = np.array(
                        _training_sentences(corpus, blocks, {j, k}, texts[j] | texts[k]), dtype=np.int64
                    )
        plan.append(Fold(k, rows, train, inner))
    return plan, units


def cross_fit(
    corpus: Corpus,
    judgements: Sequence[Judgement],
    *,
    backend: str = "tfidf",
    rule: Rule = "contains",
    learn: bool = False,
    user: str = "forgiving",
    folds: int = 5,
    seed: int = 0,
    trainer: Trainer | None = None,
    path: str = "judgements",
) -> FloatArray:
    """Each judgement's acceptance probability from judges that never saw its block.

    ``learn`` adds the acceptance model learned from the other blocks' human scores (for ``user``).
    """
    if learn:
        check_user(user)
    train = trainer or backend_trainer(backend, seed)
    plan, _ = fold_plan(corpus, judgements, folds=folds, nested=learn, path=path)
    items = [j.mismatch() for j in judgements]
    accepted = accepts(judgements, user)
    out = np.zeros(len(judgements))
    for fold in plan:
        if fold.rows.shape[0] == 0:
            continue
        sub = corpus.subset(fold.train.tolist())
        test = [items[k] for k in fold.rows.tolist()]
        acceptance = None
        if learn:
            xs, train_items, ys = [], [], []
            for j, sentences in fold.inner.items():
                inner = corpus.subset(sentences.tolist())
                rows_j = plan[j].rows.tolist()
                train_items += [items[k] for k in rows_j]
                xs.append(features([items[k] for k in rows_j], train(inner), Lexicon.build(inner)))
                ys.append(accepted[rows_j])
            if not xs:
                raise OptionError("learning from scores needs judgements in more than one block")
            acceptance = Acceptance.fit(np.vstack(xs), train_items, np.concatenate(ys), user)
        judge = SpanJudge(train(sub), Lexicon.build(sub), rule=rule, acceptance=acceptance)
        out[fold.rows] = judge.accept_probability(test)
    return out
