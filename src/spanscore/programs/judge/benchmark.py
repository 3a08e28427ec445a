"""How well a judge agrees with human scores: precision and recall of its acceptances, the
share of decisions it makes differently, and the ROC AUC of its probability, for each user."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...stages.judging import Judge
from .acceptance import Acceptance
from .corpus import Corpus
from .crossfit import Trainer, cross_fit, cross_fit_outside, outside
from .judgements import USERS, Judgement, accepts
from .model import Rule

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
Z95 = 1.959963984540054
AUC_RESAMPLES = 1000
MIN_PAIRS = 100  # fewer judged pairs than this, or fewer of either verdict than
MIN_VERDICTS = 10  # this, and a benchmark says its figures are uncertain


def roc_auc(truth: BoolArray, score: FloatArray) -> float:
    """Probability that a random accepted item scores above a random rejected one (ties count 1/2)."""
    pos, neg = int(truth.sum()), int((~truth).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    # Average ranks over ties.
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's (1927) score interval of a proportion: sound at 0 or n successes and small n."""
    if trials == 0:
        return float("nan"), float("nan")
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def auc_interval(
    truth: BoolArray, score: FloatArray, *, resamples: int = AUC_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """95% percentile bootstrap interval of the ROC AUC, resampling accepted and rejected items
    separately (their counts stay fixed, as the AUC conditions on them).

    A resample of n items drawn with replacement is a multinomial count per item, and only the
    counts per distinct score matter to the AUC; so each resample is drawn as multinomial counts
    of the distinct scores (the same distribution), all resamples at once, and its AUC is the
    Mann-Whitney sum over distinct scores: accepted counts times the rejected counts below, ties
    counting 1/2. Fast enough to give every point of a learning curve its interval."""
    pos, neg = score[truth], score[~truth]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan"), float("nan")
    values, group = np.unique(score, return_inverse=True)
    g = len(values)
    rng = np.random.default_rng(seed)
    offsets = (np.arange(resamples) * g)[:, None]

    def counts(members: IntArray) -> FloatArray:
        drawn = members[rng.integers(0, len(members), (resamples, len(members)))] + offsets
        out: FloatArray = np.bincount(drawn.ravel(), minlength=resamples * g).reshape(resamples, g).astype(np.float64)
        return out

    wpos = counts(group[truth])
    wneg = counts(group[~truth])
    below = np.cumsum(wneg, axis=1) - wneg
    out = (wpos * (below + 0.5 * wneg)).sum(axis=1) / (len(pos) * len(neg))
    lo, hi = np.quantile(out, [0.025, 0.975])
    return float(lo), float(hi)


def agreement(truth: BoolArray, probability: FloatArray, threshold: float = 0.5) -> dict[str, float]:
    judge = probability >= threshold
    both = int((judge & truth).sum())
    return {
        "precision": both / int(judge.sum()) if judge.any() else float("nan"),
        "recall": both / int(truth.sum()) if truth.any() else float("nan"),
        "disagreement": float((judge != truth).mean()) if len(truth) else float("nan"),
        "auc": roc_auc(truth, probability),
        "judge_accepts": float(judge.mean()) if len(truth) else float("nan"),
        "user_accepts": float(truth.mean()) if len(truth) else float("nan"),
    }


def confusion(truth: BoolArray, probability: FloatArray, threshold: float = 0.5) -> dict[str, int]:
    """How the judge's acceptances (at ``threshold``) meet the user's."""
    judge = probability >= threshold
    return {
        "both_accept": int((judge & truth).sum()),
        "judge_only": int((judge & ~truth).sum()),
        "user_only": int((~judge & truth).sum()),
        "both_reject": int((~judge & ~truth).sum()),
    }


def intervals(truth: BoolArray, probability: FloatArray, threshold: float = 0.5) -> dict[str, tuple[float, float]]:
    """95% intervals: Wilson for precision and recall, stratified bootstrap for the AUC."""
    c = confusion(truth, probability, threshold)
    return {
        "precision": wilson(c["both_accept"], c["both_accept"] + c["judge_only"]),
        "recall": wilson(c["both_accept"], c["both_accept"] + c["user_only"]),
        "auc": auc_interval(truth, probability),
    }


def score_against_users(judgements: Sequence[Judgement], probability: FloatArray) -> dict[str, dict[str, float]]:
    return {user: agreement(accepts(judgements, user), probability) for user in USERS}


def small_sample(judgements: Sequence[Judgement]) -> list[str]:
    """Why the figures of a benchmark on these judgements are uncertain, if they are."""
    out = []
    if len(judgements) < MIN_PAIRS:
        out.append(f"only {len(judgements)} judged pairs (fewer than {MIN_PAIRS}): read the intervals, not the figures")
    same = np.array_equal(accepts(judgements, "forgiving"), accepts(judgements, "strict"))
    for user in ("forgiving",) if same else USERS:
        yes = int(accepts(judgements, user).sum())
        no = len(judgements) - yes
        who = "both users accept" if same else f"the {user} user accepts"
        if min(yes, no) < MIN_VERDICTS:
            out.append(f"{who} {yes} and reject{'' if same else 's'} {no} (fewer than {MIN_VERDICTS} of one verdict):"
                       " precision, recall or AUC rests on a handful of pairs")
    return out


def _decimals(n: int) -> int:
    """As many decimals as the number of judgements supports: 2 below 100, 3 below 1,000, else 4."""
    return 2 if n < 100 else 3 if n < 1000 else 4


@dataclass(frozen=True)
class BenchmarkResult:
    judge: str
    probability: FloatArray
    users: dict[str, dict[str, float]]
    seconds: float
    n: int
    folds: int | None = None  # the block folds of a cross-fitted benchmark
    baselines: tuple[BenchmarkResult, ...] = ()  # accept-all and reject-all, where asked for
    judgements: tuple[Judgement, ...] = ()  # what was judged, for per-pair output and intervals
    crossfit: str | None = None  # how the judges were kept from the judged sentences

    def coincide(self) -> bool:
        """Whether the two users accept the same pairs (Good/Bad verdicts: Good is 5, Bad 1)."""
        return bool(self.judgements) and bool(
            np.array_equal(accepts(self.judgements, "forgiving"), accepts(self.judgements, "strict"))
        )

    def to_dict(self, *, pairs: bool = True) -> dict[str, Any]:
        """The JSON of ``spanscore judge benchmark --json``: per user (one ``both`` block where
        the users accept the same pairs) the figures, their 95% intervals and the confusion
        counts; the warnings of a small sample; and each pair's probability."""
        digits = _decimals(self.n)

        def r(v: float) -> float | None:
            return None if math.isnan(v) else round(v, digits)

        out: dict[str, Any] = {"judge": self.judge, "judgements": self.n, "seconds": round(self.seconds, 2)}
        users = ["both"] if self.coincide() else list(self.users)
        for user in users:
            block: dict[str, Any] = {k: r(v) for k, v in self.users["forgiving" if user == "both" else user].items()}
            if self.judgements:
                truth = accepts(self.judgements, "forgiving" if user == "both" else user)
                block["confusion"] = confusion(truth, self.probability)
                block["intervals"] = {k: [r(lo), r(hi)] for k, (lo, hi) in intervals(truth, self.probability).items()}
            out[user] = block
        out["users_coincide"] = users == ["both"]
        if self.judgements:
            out["warnings"] = small_sample(self.judgements)
        if self.folds is not None:
            out["folds"] = self.folds
        if self.crossfit is not None:
            out["crossfit"] = self.crossfit
        if self.baselines:
            out["baselines"] = {b.judge: b.to_dict(pairs=False) for b in self.baselines}
        if pairs and self.judgements:
            out["pairs"] = [
                {"line": j.line, "id": j.id, "gold_text": j.gold_text, "pred_text": j.pred_text, "score": j.score,
                 "probability": round(float(p), 4)}
                for j, p in zip(self.judgements, self.probability.tolist(), strict=True)
            ]
        return out


def baseline(judgements: Sequence[Judgement], which: str) -> BenchmarkResult:
    """``accept-all`` or ``reject-all``."""
    p = np.full(len(judgements), 1.0 if which == "accept-all" else 0.0)
    return BenchmarkResult(which, p, score_against_users(judgements, p), 0.0, len(judgements),
                           judgements=tuple(judgements))


def benchmark(
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
    baselines: bool = False,
    fixed: Acceptance | None = None,
    fixed_name: str = "carried",
) -> BenchmarkResult:
    """Cross-fit a judge over ``corpus`` and score it (beside the accept-all and reject-all
    judges with ``baselines``). Where the corpus holds the judged sentences, over its blocks
    (``cross_fit``); where it holds none of them (a training split, the judgements made on its dev
    or test split), a judge of the whole corpus, its acceptance model cross-fitted over folds of
    the judged sentences (``cross_fit_outside``)."""
    t0 = time.perf_counter()
    away = outside(corpus, judgements)
    fit = cross_fit_outside if away else cross_fit
    p = fit(
        corpus, judgements, backend=backend, rule=rule, learn=learn, user=user, folds=folds, seed=seed,
        trainer=trainer, path=path, fixed=fixed,
    )
    how = (f"{corpus.path} holds no judged sentence: one judge trained on it"
           + (f", its acceptance model cross-fitted over {folds} folds of the judged sentences" if learn else "")
           if away else f"{folds} blocks of {corpus.path}, each scored by a judge that never saw it")
    name = f"{backend}-" + (f"{'agnostic-' if rule == 'agnostic' else ''}learned-{user}" if learn else rule)
    if fixed is not None:
        name = f"{backend}-agnostic+{fixed_name}"
    users = score_against_users(judgements, p)
    seconds = time.perf_counter() - t0
    others = tuple(baseline(judgements, b) for b in ("accept-all", "reject-all")) if baselines else ()
    return BenchmarkResult(name, p, users, seconds, len(judgements), folds, others, tuple(judgements), how)


def benchmark_judge(judge: Judge, judgements: Sequence[Judgement], *, name: str | None = None) -> BenchmarkResult:
    """A judge as it is (a judge file, say) against human scores: no training, no cross-fitting.

    Only fair where the judge never saw the judged sentences (its classifier's corpus and its
    scores held none of them)."""
    t0 = time.perf_counter()
    p = judge.accept_probability([j.mismatch() for j in judgements])
    label = name or str(getattr(judge, "name", "judge"))
    return BenchmarkResult(label, p, score_against_users(judgements, p), time.perf_counter() - t0, len(judgements),
                           judgements=tuple(judgements), crossfit="none: the judge file as it is")
