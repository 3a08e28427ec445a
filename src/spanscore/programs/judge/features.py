"""Features of a boundary mismatch: how the prediction relates to the gold span, how much of the
gold mention's information it drops (word IDF), and what the entity classifier thinks of the
predicted text, the gold text and the words dropped or added.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ...stages.judging import Mismatch
from .classifier import EntityClassifier
from .corpus import OTHER, Corpus

FloatArray = npt.NDArray[np.float64]

# Closed-class English words: dropping or adding only these rarely changes what was extracted.
_FUNCTION_WORDS = """a an the this that these those its their his her our your my some any each every all both no
    other such same own of in on at by for with from to into onto upon over under about above below
    between among through during before after within without against across along around toward
    towards via per than as versus vs and or but nor either neither whether if then so yet also only
    not is are was were be been being has have had do does did can could may might must shall
    should will would which who whom whose what where when how why it they them he she we us you i
    there here very more most less least much many several few"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

FEATURES = (
    "longer",
    "shorter",
    "shifted",
    "same_start",
    "same_end",
    "log_length_ratio",
    "log_pred_words",
    "dropped_content",
    "dropped_function",
    "added_content",
    "added_function",
    "only_function_changed",
    "pred_is_function",
    "log_p_pred",
    "log_p_other_pred",
    "pred_top",
    "pred_margin",
    "log_p_gold",
    "log_p_dropped",
    "dropped_is_entity",
    "information_dropped",
    "max_idf_pred",
    "mean_idf_pred",
)


class Lexicon:
    """Sentence frequencies of lower-cased words in a training corpus, for IDF.

    A generic word ("model", "production") has a low IDF, a specific one ("Blastocystis") a high
    one: a prediction that keeps the specific words of the gold mention keeps its information.
    """

    def __init__(self, sentences: int, frequency: dict[str, int]) -> None:
        self.sentences = sentences
        self.frequency = frequency

    def idf(self, word: str) -> float:
        return math.log((self.sentences + 1) / (self.frequency.get(word.lower(), 0) + 1)) + 1.0

    @staticmethod
    def build(corpus: Corpus) -> Lexicon:
        df: Counter[str] = Counter()
        for s in corpus.sentences:
            df.update({w.lower() for w in s.tokens})
        return Lexicon(len(corpus), dict(df))

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        words = sorted(self.frequency)
        return {"sentences": self.sentences}, {
            "words": np.array(words, dtype=str),
            "frequency": np.array([self.frequency[w] for w in words], dtype=np.int64),
        }

    @staticmethod
    def load(meta: dict[str, Any], arrays: dict[str, Any]) -> Lexicon:
        words = [str(w) for w in arrays["words"].tolist()]
        freq = [int(f) for f in arrays["frequency"].tolist()]
        if len(words) != len(freq):
            raise ValueError("lexicon words and frequencies differ in length")
        return Lexicon(int(meta["sentences"]), dict(zip(words, freq, strict=True)))


def is_function(word: str) -> bool:
    return word.lower() in FUNCTION_WORDS or not any(ch.isalnum() for ch in word)


@dataclass(frozen=True)
class Difference:
    """The words the prediction leaves out of the gold text, and the words it adds."""

    dropped: tuple[str, ...]
    added: tuple[str, ...]


def _strip_inside(outer: str, inner: str, start_hint: bool, end_hint: bool) -> list[str]:
    """Words of ``outer`` around its occurrence of ``inner``."""
    if start_hint and outer.startswith(inner):
        i = 0
    elif end_hint and outer.endswith(inner):
        i = len(outer) - len(inner)
    else:
        i = outer.find(inner)
    if i < 0:  # not a substring (texts normalised differently): every word not shared
        inner_words = set(inner.split())
        return [w for w in outer.split() if w not in inner_words]
    return (outer[:i] + " " + outer[i + len(inner) :]).split()


def _crossing(ref: str, pred: str) -> tuple[list[str], list[str]]:
    """Dropped and added words of a crossing pair: the longest end of one that begins the other."""
    best = (0, True)
    for k in range(1, min(len(ref), len(pred))):
        if pred.endswith(ref[:k]):  # prediction starts to the left
            best = max(best, (k, True))
        if ref.endswith(pred[:k]):  # prediction starts to the right
            best = max(best, (k, False))
    k, left = best
    if k == 0:
        ref_words, pred_words = set(ref.split()), set(pred.split())
        return [w for w in ref.split() if w not in pred_words], [w for w in pred.split() if w not in ref_words]
    if left:
        return ref[k:].split(), pred[: len(pred) - k].split()
    return ref[: len(ref) - k].split(), pred[k:].split()


def difference(item: Mismatch) -> Difference:
    ref, pred = item.reference_text, item.predicted_text
    if item.relation == "shorter":
        return Difference(tuple(_strip_inside(ref, pred, item.same_start, item.same_end)), ())
    if item.relation == "longer":
        return Difference((), tuple(_strip_inside(pred, ref, item.same_start, item.same_end)))
    dropped, added = _crossing(ref, pred)
    return Difference(tuple(dropped), tuple(added))


def relation_of(reference_text: str, predicted_text: str) -> tuple[str, bool, bool]:
    """Relation, same start and same end of two overlapping texts known only as strings."""
    r, p = reference_text, predicted_text
    if r in p:
        return "longer", p.startswith(r), p.endswith(r)
    if p in r:
        return "shorter", r.startswith(p), r.endswith(p)
    return "shifted", False, False


def _label_probability(probs: FloatArray, classes: Sequence[str], labels: Sequence[str]) -> FloatArray:
    index = {c: i for i, c in enumerate(classes)}
    out = np.zeros(len(labels))
    for n, label in enumerate(labels):
        i = index.get(label)
        if i is not None:
            out[n] = probs[n, i]
    return out


def features(items: Sequence[Mismatch], classifier: EntityClassifier, lexicon: Lexicon) -> FloatArray:
    """One row of ``FEATURES`` per mismatch."""
    n = len(items)
    out = np.zeros((n, len(FEATURES)))
    if n == 0:
        return out
    diffs = [difference(it) for it in items]
    dropped_text = [" ".join(d.dropped) for d in diffs]
    wanted = {it.predicted_text for it in items} | {it.reference_text for it in items} | set(dropped_text)
    texts = sorted(wanted - {""})
    probs = classifier.predict_proba(texts)
    row = {t: i for i, t in enumerate(texts)}
    classes = classifier.classes
    other = classes.index(OTHER) if OTHER in classes else None
    labels = [it.label for it in items]
    eps = 1e-6

    def rows_of(strings: Sequence[str]) -> FloatArray:
        return np.stack([probs[row[s]] if s else np.full(len(classes), np.nan) for s in strings])

    p_pred = rows_of([it.predicted_text for it in items])
    p_gold = rows_of([it.reference_text for it in items])
    p_drop = rows_of(dropped_text)
    lab_pred = _label_probability(p_pred, classes, labels)
    rival = np.array(
        [max((p_pred[k, j] for j, c in enumerate(classes) if c != labels[k]), default=0.0) for k in range(n)]
    )
    f = {name: out[:, i] for i, name in enumerate(FEATURES)}
    for k, (it, d) in enumerate(zip(items, diffs, strict=True)):
        f["longer"][k] = it.relation == "longer"
        f["shorter"][k] = it.relation == "shorter"
        f["shifted"][k] = it.relation not in ("longer", "shorter")
        f["same_start"][k] = it.same_start
        f["same_end"][k] = it.same_end
        n_pred = max(1, len(it.predicted_text.split()))
        n_ref = max(1, len(it.reference_text.split()))
        f["log_length_ratio"][k] = np.log(n_pred / n_ref)
        f["log_pred_words"][k] = np.log(n_pred)
        dropped_fn = sum(is_function(w) for w in d.dropped)
        added_fn = sum(is_function(w) for w in d.added)
        f["dropped_content"][k] = np.log1p(len(d.dropped) - dropped_fn)
        f["dropped_function"][k] = np.log1p(dropped_fn)
        f["added_content"][k] = np.log1p(len(d.added) - added_fn)
        f["added_function"][k] = np.log1p(added_fn)
        f["only_function_changed"][k] = dropped_fn == len(d.dropped) and added_fn == len(d.added)
        f["pred_is_function"][k] = all(is_function(w) for w in it.predicted_text.split())
        pred_idf = [lexicon.idf(w) for w in it.predicted_text.split()] or [0.0]
        gold_info = sum(lexicon.idf(w) for w in it.reference_text.split())
        f["information_dropped"][k] = sum(lexicon.idf(w) for w in d.dropped) / gold_info if gold_info else 0.0
        f["max_idf_pred"][k] = max(pred_idf)
        f["mean_idf_pred"][k] = float(np.mean(pred_idf))
    f["log_p_pred"][:] = np.log(lab_pred + eps)
    f["log_p_other_pred"][:] = np.log(p_pred[:, other] + eps) if other is not None else 0.0
    f["pred_top"][:] = lab_pred >= rival
    f["pred_margin"][:] = np.log(lab_pred + eps) - np.log(rival + eps)
    f["log_p_gold"][:] = np.log(_label_probability(p_gold, classes, labels) + eps)
    has_drop = np.array([bool(t) for t in dropped_text])
    drop_label = np.where(has_drop, _label_probability(np.nan_to_num(p_drop), classes, labels), 0.0)
    f["log_p_dropped"][:] = np.where(has_drop, np.log(drop_label + eps), 0.0)
    if other is not None:
        f["dropped_is_entity"][:] = np.where(has_drop, 1.0 - np.nan_to_num(p_drop[:, other], nan=1.0), 0.0)
    return np.nan_to_num(out)  # an empty text gives NaN probabilities; 0 is the neutral value


def pairwise_probability(items: Sequence[Mismatch], classifier: EntityClassifier) -> FloatArray:
    """P(label) / (P(label) + P(best other class)) for the predicted text: >= 0.5 iff the label wins.

    This is the paper's rule (accept when the classifier's top class is the predicted label) as a
    probability.
    """
    texts = sorted({it.predicted_text for it in items})
    if not texts:
        return np.zeros(0)
    probs = classifier.predict_proba(texts)
    row = {t: i for i, t in enumerate(texts)}
    classes = classifier.classes
    out = np.zeros(len(items))
    for k, it in enumerate(items):
        p = probs[row[it.predicted_text]]
        own = float(p[classes.index(it.label)]) if it.label in classes else 0.0
        rival = max((float(p[j]) for j, c in enumerate(classes) if c != it.label), default=0.0)
        out[k] = own / (own + rival) if own + rival > 0 else 0.0
    return out
