"""Training judges, and cross-fitting them over a corpus that contains the judged sentences.

An acceptance model learns from features that an entity classifier gives the judged pairs. When a
judged sentence is in the training corpus, the judge's own classifier has seen it (and the rest of
its abstract, where the same entities recur), so its features would be more confident than those
of new text. Such sentences get their features from a classifier trained without their
*passages* (``corpus.neighbourhoods``): the judged sentences are cut, in corpus order, into runs
whose passages cover at most a fifth of the corpus (``1 / folds``), and each run gets one such
classifier, started from the judge's own (a warm start: the same optimum, reached sooner).

Cross-fitting (``judge benchmark``) cuts the corpus into contiguous blocks of sentences
(``corpus.block_starts``). A judgement in block ``k`` is scored by a judge trained without block
``k``: its classifier on the other blocks, less any sentence whose text is a judged sentence of
block ``k``; with ``learn``, its acceptance model on the human scores of the other blocks, their
features from classifiers trained without their passages *and* without block ``k``, so nothing
that scores block ``k`` has seen block ``k`` or its scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import InputError, OptionError
from ...stages.judging import Mismatch
from .acceptance import Acceptance
from .agnostic import AGNOSTIC_FEATURES, agnostic_features, agnostic_rule
from .classifier import EntityClassifier, get_backend
from .corpus import Corpus, block_of, block_starts, entity_examples, held_out, holdout_groups
from .features import Lexicon
from .judgements import Judgement, accepts, check_labels, check_user, locate
from .model import Rule, SpanJudge, feature_names, features_of, rule_probability

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Trains an entity classifier on (a subset of) a corpus.
Trainer = Callable[[Corpus], EntityClassifier]


class BackendTrainer:
    """Trains a backend's classifier on the gold mentions of a corpus (and its ``other`` sample)."""

    def __init__(self, backend: str = "tfidf", seed: int = 0) -> None:
        check_seed(seed)
        self.spec = get_backend(backend)
        self.seed = seed

    def __call__(self, corpus: Corpus, init: EntityClassifier | None = None) -> EntityClassifier:
        return self.spec.train(entity_examples(corpus, seed=self.seed), self.seed, init)


def backend_trainer(backend: str = "tfidf", seed: int = 0) -> BackendTrainer:
    return BackendTrainer(backend, seed)


def _fit(train: Trainer, corpus: Corpus, init: EntityClassifier | None) -> EntityClassifier:
    if isinstance(train, BackendTrainer):
        return train(corpus, init)
    return train(corpus)


def check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise OptionError(f"--seed must be a whole number, 0 or more, not {seed!r}")


def check_folds(folds: int) -> None:
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise OptionError(f"--folds must be a whole number, 2 or more, not {folds!r}")


def check_fixed(fixed: Acceptance | None, rule: str, learn: bool) -> None:
    """An acceptance model from elsewhere carries across corpora only as a type-agnostic one."""
    if fixed is None:
        return
    if rule != "agnostic" or tuple(fixed.feature_names) != AGNOSTIC_FEATURES:
        raise OptionError("--acceptance-from: a type-agnostic model goes with --rule agnostic")
    if learn:
        raise OptionError("--acceptance-from and --learn: the acceptance model is either carried over or learned")


def units_in(corpus: Corpus, judgements: Sequence[Judgement]) -> IntArray:
    """The sentence of ``corpus`` each judgement was made on (its ``sentence_index`` when that
    sentence has the judged text, else the first with it), or -1 where none has its text."""
    first: dict[str, int] = {}
    for n, s in enumerate(corpus.sentences):
        first.setdefault(s.text, n)
    out = np.full(len(judgements), -1, dtype=np.int64)
    for k, row in enumerate(judgements):
        i = row.sentence_index
        if i is not None and 0 <= i < len(corpus) and corpus.sentences[i].text == row.sentence:
            out[k] = i
        else:
            out[k] = first.get(row.sentence, -1)
    return out


@dataclass(frozen=True)
class Prepared:
    """A judge's classifier and word statistics from a corpus, and judgements with what an
    acceptance model learns from: features and the rule's probability, both from classifiers
    that never saw the judged sentence's passage."""

    classifier: EntityClassifier
    lexicon: Lexicon
    rule: Rule
    judgements: tuple[Judgement, ...]
    items: tuple[Mismatch, ...]
    x: FloatArray
    rule_probability: FloatArray
    holdouts: int  # classifiers trained for the judged sentences of the corpus
    # The type-agnostic features and rule of the same judgements, for a typed judge's fallback model.
    agnostic_x: FloatArray | None = None
    agnostic_probability: FloatArray | None = None

    def accepted(self, user: str) -> npt.NDArray[np.bool_]:
        return accepts(self.judgements, user)

    def acceptance(self, rows: Sequence[int] | IntArray, user: str, reviewers: tuple[str, ...] = ()) -> Acceptance:
        """The acceptance model learned from the judgements ``rows``."""
        idx = np.asarray(rows, dtype=np.int64)
        return Acceptance.fit(
            self.x[idx], [self.items[k] for k in idx.tolist()], self.rule_probability[idx],
            self.accepted(user)[idx], user, reviewers, feature_names(self.rule),
        )

    def agnostic_acceptance(
        self, rows: Sequence[int] | IntArray, user: str, reviewers: tuple[str, ...] = ()
    ) -> Acceptance | None:
        """A typed judge's type-agnostic model, learned from the same judgements (none for an
        agnostic judge, whose own model is the agnostic one)."""
        if self.agnostic_x is None or self.agnostic_probability is None:
            return None
        idx = np.asarray(rows, dtype=np.int64)
        return Acceptance.fit(
            self.agnostic_x[idx], [self.items[k] for k in idx.tolist()], self.agnostic_probability[idx],
            self.accepted(user)[idx], user, reviewers, AGNOSTIC_FEATURES,
        )

    def judge(
        self,
        acceptance: Acceptance | None = None,
        agnostic: Acceptance | None = None,
        corpus: Corpus | None = None,
    ) -> SpanJudge:
        return SpanJudge(self.classifier, self.lexicon, rule=self.rule, acceptance=acceptance, agnostic=agnostic,
                         corpus=corpus_record(corpus) if corpus is not None else None)


def corpus_record(corpus: Corpus) -> dict[str, Any]:
    """What a judge file says of its training corpus."""
    return {
        "path": corpus.path,
        "sentences": len(corpus),
        "mentions": sum(len(s.mentions) for s in corpus.sentences),
    }


def prepare(
    corpus: Corpus,
    judgements: Sequence[Judgement],
    *,
    rule: Rule = "contains",
    trainer: Trainer,
    share: float = 0.2,
) -> Prepared:
    """Train a judge's classifier on ``corpus`` and give ``judgements`` their features (see the
    module's docstring: judged sentences of the corpus get them from a classifier that left out
    their passages, at most ``share`` of the corpus at a time)."""
    classifier = trainer(corpus)
    lexicon = Lexicon.build(corpus)
    items = [j.mismatch() for j in judgements]
    x = features_of(items, classifier, lexicon, rule)  # judgements of sentences outside the corpus keep these
    p = rule_probability(items, classifier, rule)
    typed = rule != "agnostic"
    xa = agnostic_features(items, classifier) if typed else None
    pa = agnostic_rule(items, classifier) if typed else None
    units = units_in(corpus, judgements)
    groups = holdout_groups(corpus, units[units >= 0].tolist(), share)
    for group in groups:
        keep = np.flatnonzero(~held_out(corpus, group))
        sub = corpus.subset(keep.tolist())
        mine = np.flatnonzero(np.isin(units, group))
        subset = [items[k] for k in mine.tolist()]
        other = _fit(trainer, sub, classifier)
        x[mine] = features_of(subset, other, Lexicon.build(sub), rule)
        p[mine] = rule_probability(subset, other, rule)
        if xa is not None and pa is not None:
            xa[mine] = agnostic_features(subset, other)
            pa[mine] = agnostic_rule(subset, other)
    return Prepared(classifier, lexicon, rule, tuple(judgements), tuple(items), x, p, len(groups), xa, pa)


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
    reviewers: tuple[str, ...] = (),
    fixed: Acceptance | None = None,
    name: str | None = None,
) -> SpanJudge:
    """A judge from a training corpus, and optionally an acceptance model from human scores.

    Without scores the judge follows ``rule``; with them it starts from the rule and learns how
    far to depart from it (``acceptance.py``). Judged sentences that are in ``corpus`` get
    features from classifiers that left out their passages, each at most ``1 / folds`` of it.
    """
    check_folds(folds)
    check_fixed(fixed, rule, False)
    fixed = fixed.carried() if fixed is not None else None  # it judges another domain
    train = trainer or backend_trainer(backend, seed)
    if fixed is not None and judgements:
        raise OptionError("--acceptance-from and --scores: the acceptance model is either carried over or learned")
    if not judgements:
        return SpanJudge(train(corpus), Lexicon.build(corpus), rule=rule, corpus=corpus_record(corpus),
                         acceptance=fixed, name=name)
    check_user(user)
    if rule != "agnostic":
        # a typed judge learns what users accept of its corpus's types; the agnostic one reads no type
        check_labels(judgements, corpus, judgements_path)
    prepared = prepare(corpus, judgements, rule=rule, trainer=train, share=1.0 / folds)
    rows = range(len(judgements))
    return prepared.judge(
        prepared.acceptance(rows, user, reviewers), prepared.agnostic_acceptance(rows, user, reviewers), corpus
    )


@dataclass(frozen=True)
class Fold:
    """One block of cross-fitting: the judgements made in it, and the sentences that train the
    judge that scores them (the other blocks, less every judged sentence text of this block)."""

    block: int
    rows: IntArray  # judgements in this block
    train: IntArray  # sentence indices


def fold_plan(
    corpus: Corpus, judgements: Sequence[Judgement], *, folds: int = 5, path: str = "judgements"
) -> tuple[list[Fold], IntArray]:
    """The folds of block cross-fitting, and the sentence each judgement was made on."""
    units = locate(judgements, corpus, path)
    starts = block_starts(corpus, folds)
    blocks = block_of(starts, len(corpus))
    row_block = blocks[units]
    plan = []
    for k in range(folds):
        rows = np.flatnonzero(row_block == k).astype(np.int64)
        texts = {judgements[i].sentence for i in rows.tolist()}
        train = [i for i, s in enumerate(corpus.sentences) if int(blocks[i]) != k and s.text not in texts]
        plan.append(Fold(k, rows, np.array(train, dtype=np.int64)))
    return plan, units


@dataclass(frozen=True)
class FoldData:
    """What cross-fitting needs of one block: the judge trained without it (its classifier, and
    the other blocks' judgements prepared to learn from), and the block's own judgements."""

    fold: Fold
    pool: IntArray  # rows of the judgements the block's acceptance model may learn from
    prepared: Prepared  # of the pool's judgements, over the corpus without the block
    test_x: FloatArray
    test_rule: FloatArray


def fold_data(
    corpus: Corpus,
    judgements: Sequence[Judgement],
    fold: Fold,
    *,
    rule: Rule,
    trainer: Trainer,
    learn: bool,
    share: float = 0.2,
) -> FoldData:
    sub = corpus.subset(fold.train.tolist())
    pool = np.setdiff1d(np.arange(len(judgements)), fold.rows).astype(np.int64)
    if learn:
        prepared = prepare(sub, [judgements[k] for k in pool.tolist()], rule=rule, trainer=trainer, share=share)
    else:
        classifier = trainer(sub)
        prepared = Prepared(classifier, Lexicon.build(sub), rule, (), (), np.zeros((0, 0)), np.zeros(0), 0)
    test = [judgements[k].mismatch() for k in fold.rows.tolist()]
    return FoldData(
        fold,
        pool,
        prepared,
        features_of(test, prepared.classifier, prepared.lexicon, rule) if learn else np.zeros((len(test), 0)),
        rule_probability(test, prepared.classifier, rule),
    )


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
    fixed: Acceptance | None = None,
) -> FloatArray:
    """Each judgement's acceptance probability from judges that never saw its block.

    ``learn`` adds the acceptance model learned from the other blocks' human scores (for ``user``);
    ``fixed`` instead applies an acceptance model learned elsewhere (another domain's type-agnostic
    model) to each block's classifier.
    """
    check_fixed(fixed, rule, learn)
    fixed = fixed.carried() if fixed is not None else None
    if learn:
        check_user(user)
    check_folds(folds)
    train = trainer or backend_trainer(backend, seed)
    plan, _ = fold_plan(corpus, judgements, folds=folds, path=path)
    items = [j.mismatch() for j in judgements]
    out = np.zeros(len(judgements))
    for fold in plan:
        if fold.rows.shape[0] == 0:
            continue
        data = fold_data(corpus, judgements, fold, rule=rule, trainer=train, learn=learn, share=1.0 / folds)
        if fixed is not None:
            test = [items[k] for k in fold.rows.tolist()]
            x = features_of(test, data.prepared.classifier, data.prepared.lexicon, rule)
            out[fold.rows] = fixed.predict(x, test, data.test_rule)
            continue
        if not learn:
            out[fold.rows] = data.test_rule
            continue
        if data.pool.shape[0] == 0:
            raise OptionError("learning from scores needs judgements in more than one block")
        acceptance = data.prepared.acceptance(range(data.pool.shape[0]), user)
        test = [items[k] for k in fold.rows.tolist()]
        out[fold.rows] = acceptance.predict(data.test_x, test, data.test_rule)
    return out


def outside(corpus: Corpus, judgements: Sequence[Judgement]) -> bool:
    """Whether the corpus holds none of the judged sentences (a review of a dev or test split
    against the training split): then the corpus's judge never saw them, and only an acceptance
    model needs cross-fitting. A corpus that holds some of them and not others is refused."""
    units = units_in(corpus, judgements)
    if (units >= 0).all():
        return False
    if (units < 0).all():
        return True
    inside = judgements[int(np.flatnonzero(units >= 0)[0])]
    away = judgements[int(np.flatnonzero(units < 0)[0])]
    raise InputError(
        f"judged sentences of line {inside.line} and line {away.line}: {corpus.path} holds the first but not the"
        " second; cross-fit over the corpus that holds every judged sentence, or over a training split that holds"
        " none of them",
    )


def sentence_folds(judgements: Sequence[Judgement], folds: int) -> IntArray:
    """Fold of each judgement when the corpus holds no judged sentence: sentences in order of first
    appearance, dealt round the folds, so that a sentence's judgements stay together."""
    order: dict[str, int] = {}
    for j in judgements:
        order.setdefault(j.sentence, len(order))
    return np.array([order[j.sentence] % folds for j in judgements], dtype=np.int64)


def cross_fit_outside(
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
    fixed: Acceptance | None = None,
) -> FloatArray:
    """Acceptance probabilities of judgements made on sentences outside ``corpus``: one judge
    trained on the whole corpus; with ``learn``, its acceptance model cross-fitted over folds of
    the judged sentences (``sentence_folds``), each fold scored by a model that learned from the
    other folds' scores only."""
    check_folds(folds)
    if learn:
        check_user(user)
    if rule != "agnostic":
        check_labels(judgements, corpus, path)
    train = trainer or backend_trainer(backend, seed)
    classifier = train(corpus)
    lexicon = Lexicon.build(corpus)
    items = [j.mismatch() for j in judgements]
    p = rule_probability(items, classifier, rule)
    check_fixed(fixed, rule, learn)
    if fixed is not None:
        return fixed.carried().predict(features_of(items, classifier, lexicon, rule), items, p)
    if not learn:
        return p
    x = features_of(items, classifier, lexicon, rule)
    accepted = accepts(judgements, user)
    fold = sentence_folds(judgements, folds)
    out = p.copy()
    for k in range(folds):
        test = np.flatnonzero(fold == k)
        pool = np.flatnonzero(fold != k)
        if test.shape[0] == 0:
            continue
        if pool.shape[0] == 0:
            raise OptionError("learning from scores needs judged sentences in more than one fold")
        model = Acceptance.fit(x[pool], [items[i] for i in pool.tolist()], p[pool], accepted[pool], user, (),
                               feature_names(rule))
        out[test] = model.predict(x[test], [items[i] for i in test.tolist()], p[test])
    return out
