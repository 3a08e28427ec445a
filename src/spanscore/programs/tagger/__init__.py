"""Taggers that produce predictions to evaluate: a feature-based CRF and a Flair BiLSTM-CRF.

Both are optional extras (``spanscore[crf]``, ``spanscore[flair]``): their libraries are imported
only when a model is trained or loaded, so ``import spanscore.programs.tagger`` stays light.
"""

from __future__ import annotations

from .crf import CrfConfig, CrfTagger, TrainResult, train_crf
from .data import Sentences, read_sentences
from .flair_tagger import FlairConfig, train_flair
from .loading import load_model
from .model import MODEL_FORMAT, MODEL_FORMAT_VERSION, Tagger, read_meta
from .predict import PredictResult, predict_file
from .progress import Progress, ProgressEvent

__all__ = [
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "CrfConfig",
    "CrfTagger",
    "FlairConfig",
    "PredictResult",
    "Progress",
    "ProgressEvent",
    "Sentences",
    "Tagger",
    "TrainResult",
    "load_model",
    "predict_file",
    "read_meta",
    "read_sentences",
    "train_crf",
    "train_flair",
]
