"""seqeval.metrics: the scores and the report of seqeval 1.2.2, as seqeval gives them.

``from spanscore.compat.seqeval.metrics import classification_report, f1_score`` replaces
``from seqeval.metrics import ...``; see ``sequence_labeling`` (the default mode, and the
functions) and ``v1`` (the strict mode).
"""

from .sequence_labeling import (
    accuracy_score,
    classification_report,
    f1_score,
    performance_measure,
    precision_score,
    recall_score,
)

__all__ = [
    "accuracy_score",
    "classification_report",
    "f1_score",
    "performance_measure",
    "precision_score",
    "recall_score",
]
