"""Type-agnostic features and rule: what a judge can say of a mismatch without knowing its type.

A typed judge reads the entity classifier's probability of the mismatch's *label*, so a label its
corpus never had gets no meaningful probability, and a judge trained on one domain carries its
types, not its users' taste, to another. These features describe only what carries across
corpora:

- the boundary's shape: the relation (longer, shorter, crossing), whether the starts and the ends
  agree, the ratios of the word and character lengths;
- the words dropped and added: content or function words, capitalised words, punctuation, and
  ``@``/``#`` prefixes (a user name or hashtag cut from its sign, or a sign left alone);
- the classifier's *agreement* between the two spans, never its absolute type: whether the
  predicted text's top class is the gold text's, the pairwise probability of the gold text's
  best type for the predicted text, and how much each looks like no entity at all.

The agnostic rule accepts every prediction that contains the gold span (as ``contains`` does) and
otherwise the predicted text when the classifier gives it the type it gives the gold text:
P(c) / (P(c) + P(best other class)) for the predicted text, where c is the gold text's most likely
type. It needs no label, so it judges any type.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ...stages.judging import Mismatch
from .classifier import EntityClassifier
from .corpus import OTHER
from .features import difference, is_function

FloatArray = npt.NDArray[np.float64]

AGNOSTIC_FEATURES = (
    "longer",
    "shorter",
    "shifted",
    "same_start",
    "same_end",
    "log_length_ratio",
    "log_char_ratio",
    "log_pred_words",
    "dropped_content",
    "dropped_function",
    "added_content",
    "added_function",
    "only_function_changed",
    "pred_is_function",
    "dropped_capitalised",
    "added_capitalised",
    "pred_capitalised",
    "dropped_punctuation",
    "added_punctuation",
    "dropped_tag_sign",
    "added_tag_sign",
    "agree_top",
    "agreement",
    "pred_is_other",
    "gold_is_other",
)


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _punctuation(word: str) -> bool:
    return not any(ch.isalnum() for ch in word) and word not in ("@", "#")


def _tag_sign(word: str) -> bool:
    """``@`` or ``#`` as a token of its own, or a word that starts with one (``@user``, ``#tag``)."""
    return word[:1] in ("@", "#")


def _classes(items: Sequence[Mismatch], classifier: EntityClassifier) -> tuple[FloatArray, FloatArray]:
    """The classifier's probabilities for each predicted and each gold text."""
    texts = sorted({it.predicted_text for it in items} | {it.reference_text for it in items})
    probs = classifier.predict_proba(texts)
    row = {t: i for i, t in enumerate(texts)}
    pred = probs[[row[it.predicted_text] for it in items]]
    gold = probs[[row[it.reference_text] for it in items]]
    return pred, gold


def _agreement(pred: FloatArray, gold: FloatArray, classes: Sequence[str]) -> FloatArray:
    """P(c) / (P(c) + P(best other class)) for the predicted text, c the gold text's best type."""
    types = np.array([c != OTHER for c in classes])
    if not types.any():
        return np.full(pred.shape[0], 0.5)
    masked = np.where(types[None, :], gold, -1.0)
    best = masked.argmax(axis=1)
    rows = np.arange(pred.shape[0])
    own = pred[rows, best]
    rival_of = pred.copy()
    rival_of[rows, best] = -1.0
    rival = rival_of.max(axis=1) if pred.shape[1] > 1 else np.zeros(pred.shape[0])
    total = own + np.maximum(rival, 0.0)
    out: FloatArray = np.where(total > 0, own / np.where(total > 0, total, 1.0), 0.5)
    return out


def agnostic_rule(items: Sequence[Mismatch], classifier: EntityClassifier) -> FloatArray:
    """The agnostic rule's acceptance probability (see the module's docstring)."""
    if not items:
        return np.zeros(0)
    pred, gold = _classes(items, classifier)
    p = _agreement(pred, gold, classifier.classes)
    p[np.array([it.relation == "longer" for it in items])] = 1.0
    return p


def agnostic_features(items: Sequence[Mismatch], classifier: EntityClassifier) -> FloatArray:
    """One row of ``AGNOSTIC_FEATURES`` per mismatch."""
    n = len(items)
    out = np.zeros((n, len(AGNOSTIC_FEATURES)))
    if n == 0:
        return out
    f = {name: out[:, i] for i, name in enumerate(AGNOSTIC_FEATURES)}
    for k, it in enumerate(items):
        d = difference(it)
        f["longer"][k] = it.relation == "longer"
        f["shorter"][k] = it.relation == "shorter"
        f["shifted"][k] = it.relation not in ("longer", "shorter")
        f["same_start"][k] = it.same_start
        f["same_end"][k] = it.same_end
        pred_words, ref_words = it.predicted_text.split(), it.reference_text.split()
        f["log_length_ratio"][k] = np.log(max(1, len(pred_words)) / max(1, len(ref_words)))
        f["log_char_ratio"][k] = np.log(max(1, len(it.predicted_text)) / max(1, len(it.reference_text)))
        f["log_pred_words"][k] = np.log(max(1, len(pred_words)))
        dropped_fn = sum(is_function(w) for w in d.dropped)
        added_fn = sum(is_function(w) for w in d.added)
        f["dropped_content"][k] = np.log1p(len(d.dropped) - dropped_fn)
        f["dropped_function"][k] = np.log1p(dropped_fn)
        f["added_content"][k] = np.log1p(len(d.added) - added_fn)
        f["added_function"][k] = np.log1p(added_fn)
        f["only_function_changed"][k] = dropped_fn == len(d.dropped) and added_fn == len(d.added)
        f["pred_is_function"][k] = all(is_function(w) for w in pred_words)
        f["dropped_capitalised"][k] = np.log1p(sum(_capitalised(w) for w in d.dropped))
        f["added_capitalised"][k] = np.log1p(sum(_capitalised(w) for w in d.added))
        f["pred_capitalised"][k] = np.mean([_capitalised(w) for w in pred_words]) if pred_words else 0.0
        f["dropped_punctuation"][k] = np.log1p(sum(_punctuation(w) for w in d.dropped))
        f["added_punctuation"][k] = np.log1p(sum(_punctuation(w) for w in d.added))
        f["dropped_tag_sign"][k] = np.log1p(sum(_tag_sign(w) for w in d.dropped))
        f["added_tag_sign"][k] = np.log1p(sum(_tag_sign(w) for w in d.added))
    pred, gold = _classes(items, classifier)
    classes = classifier.classes
    f["agree_top"][:] = pred.argmax(axis=1) == gold.argmax(axis=1)
    a = np.clip(_agreement(pred, gold, classes), 1e-6, 1 - 1e-6)
    f["agreement"][:] = np.log(a / (1 - a))
    if OTHER in classes:
        o = classes.index(OTHER)
        f["pred_is_other"][:] = pred[:, o]
        f["gold_is_other"][:] = gold[:, o]
    return np.nan_to_num(out)
