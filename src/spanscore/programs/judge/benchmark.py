"""How well a judge agrees with human scores: precision and recall of its acceptances, the
share of decisions it makes differently, and the ROC AUC of its probability, for each user."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...stages.judging import Judge
from .corpus import Corpus
from .crossfit import Trainer, cross_fit
from .judgements import USERS, Judgement, accepts
from .model import Rule

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


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


def score_against_users(judgements: Sequence[Judgement], probability: FloatArray) -> dict[str, dict[str, float]]:
    return {user: agreement(accepts(judgements, user), probability) for user in USERS}


@dataclass(frozen=True)
class BenchmarkResult:
    judge: str
    probability: FloatArray
    users: dict[str, dict[str, float]]
    seconds: float
    n: int
    folds: int | None = None  # the block folds of a cross-fitted benchmark
    baselines: tuple[BenchmarkResult, ...] = ()  # accept-all and reject-all, where asked for

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``spanscore judge benchmark --json``."""
        out: dict[str, Any] = {"judge": self.judge, "judgements": self.n, "seconds": round(self.seconds, 2)}
        for user, block in self.users.items():
            out[user] = {k: (None if np.isnan(v) else round(v, 4)) for k, v in block.items()}
        if self.folds is not None:
            out["folds"] = self.folds
        if self.baselines:
            out["baselines"] = {b.judge: b.to_dict() for b in self.baselines}
        return out


def baseline(judgements: Sequence[Judgement], which: str) -> BenchmarkResult:
    """``accept-all`` or ``reject-all``."""
    p = np.full(len(judgements), 1.0 if which == "accept-all" else 0.0)
    return BenchmarkResult(which, p, score_against_users(judgements, p), 0.0, len(judgements))


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
) -> BenchmarkResult:
    """Cross-fit a judge over ``corpus`` (which holds the judged sentences) and score it (beside
    the accept-all and reject-all judges with ``baselines``)."""
    t0 = time.perf_counter()
    p = cross_fit(
        corpus, judgements, backend=backend, rule=rule, learn=learn, user=user, folds=folds, seed=seed,
        trainer=trainer, path=path,
    )
    name = f"{backend}-" + (f"learned-{user}" if learn else rule)
    users = score_against_users(judgements, p)
    seconds = time.perf_counter() - t0
    others = tuple(baseline(judgements, b) for b in ("accept-all", "reject-all")) if baselines else ()
    return BenchmarkResult(name, p, users, seconds, len(judgements), folds, others)


def benchmark_judge(judge: Judge, judgements: Sequence[Judgement], *, name: str | None = None) -> BenchmarkResult:
    """A judge as it is (a judge file, say) against human scores: no training, no cross-fitting.

    Only fair where the judge never saw the judged sentences (its classifier's corpus and its
    scores held none of them)."""
    t0 = time.perf_counter()
    p = judge.accept_probability([j.mismatch() for j in judgements])
    label = name or str(getattr(judge, "name", "judge"))
    return BenchmarkResult(label, p, score_against_users(judgements, p), time.perf_counter() - t0, len(judgements))
