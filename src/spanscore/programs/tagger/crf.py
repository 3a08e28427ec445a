"""A linear-chain CRF tagger (sklearn-crfsuite, L-BFGS with elastic-net regularisation).

Defaults are the sklearn-crfsuite tutorial's (c1 = c2 = 0.1, 100 iterations, all possible
transitions), which train on BTC's 6338 tweets in about a minute on two cores.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, SpanscoreError
from ...runtime.optional import module, require
from .data import Sentences
from .features import FEATURE_SET, Features, sentence_features
from .model import read_member, write_model
from .progress import Progress, notify

MODEL_MEMBER = "model.crfsuite"


@dataclass(frozen=True)
class CrfConfig:
    c1: float = 0.1  # L1 penalty
    c2: float = 0.1  # L2 penalty
    max_iterations: int = 100
    all_possible_transitions: bool = True
    min_freq: float = 0.0  # features seen fewer times are dropped


@dataclass(frozen=True)
class TrainResult:
    path: Path
    meta: dict[str, Any]
    seconds: float
    iterations: int
    dev_scores: dict[str, float] = field(default_factory=dict)


def _require_crfsuite() -> None:
    require("pycrfsuite", "sklearn_crfsuite", what="the CRF tagger needs sklearn-crfsuite", extra="crf")


def _check_labelled(data: Sentences, role: str) -> list[list[str]]:
    if data.labels is None:
        raise InputError(f"the {role} file has no labels", path=data.path)
    if not data.tokens:
        raise InputError(f"the {role} file has no sentences", path=data.path)
    return data.labels


def _features(
    data: Sentences, progress: Progress | None, stage: str, description: str
) -> Iterator[list[Features]]:
    total = len(data)
    step = max(1, total // 100)
    for k, tokens in enumerate(data.tokens):
        if k % step == 0:
            notify(progress, stage, k, total, description)
        yield sentence_features(tokens)
    notify(progress, stage, total, total, description)


def train_crf(
    train: Sentences,
    output: str | Path,
    *,
    dev: Sentences | None = None,
    config: CrfConfig | None = None,
    encoding: str = "BIO",
    progress: Progress | None = None,
) -> TrainResult:
    """Train on ``train`` and write the model to ``output`` (atomically).

    With ``dev``, crfsuite scores the dev sentences after each iteration (shown as progress, not
    used to stop), and the finished model's dev scores are stored in the model file.
    """
    _require_crfsuite()
    sklearn_crfsuite = module("sklearn_crfsuite")
    Trainer: Any = module("pycrfsuite").Trainer

    cfg = config or CrfConfig()
    if cfg.max_iterations < 1:
        raise SpanscoreError("max_iterations must be at least 1")
    y_train = _check_labelled(train, "training")
    y_dev = _check_labelled(dev, "dev") if dev is not None else None
    target = Path(output)
    started = time.perf_counter()
    last: dict[str, Any] = {}

    class ProgressTrainer(Trainer):  # type: ignore[misc]
        """Reads crfsuite's log to report iterations, printing nothing."""

        def message(self, message: str) -> None:
            event = self.logparser.feed(message)
            if event == "iteration":
                info = self.logparser.last_iteration
                last.update(info)
                text = f"loss {info.get('loss', float('nan')):,.0f}"
                if "avg_f1" in info:
                    text += f", dev label F1 {100 * info['avg_f1']:.2f}"
                notify(progress, "train", int(info["num"]), cfg.max_iterations, "training CRF", text)

    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=folder) as tmp:
        raw = Path(tmp) / MODEL_MEMBER
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs",
            c1=cfg.c1,
            c2=cfg.c2,
            max_iterations=cfg.max_iterations,
            all_possible_transitions=cfg.all_possible_transitions,
            min_freq=cfg.min_freq,
            model_filename=str(raw),
            trainer_cls=ProgressTrainer,
        )
        x_train = _features(train, progress, "features", "features (train)")
        if dev is not None:
            x_dev = list(_features(dev, progress, "features", "features (dev)"))
            crf.fit(x_train, y_train, X_dev=x_dev, y_dev=y_dev)
        else:
            crf.fit(x_train, y_train)
        notify(progress, "train", cfg.max_iterations, cfg.max_iterations, "training CRF", "done")
        model_bytes = raw.read_bytes()
        seconds = time.perf_counter() - started
        tagger = CrfTagger({"kind": "crf", "feature_set": FEATURE_SET}, model_bytes)
        dev_scores: dict[str, float] = {}
        if dev is not None and y_dev is not None:
            dev_scores = _dev_scores(tagger, dev, y_dev, encoding)
        meta: dict[str, Any] = {
            "kind": "crf",
            "feature_set": FEATURE_SET,
            "encoding": encoding,
            "labels": sorted(tagger.labels()),
            "config": asdict(cfg),
            "training": {
                "train_file": Path(train.path).name,
                "train_sentences": len(train),
                "train_tokens": train.n_tokens,
                "dev_file": Path(dev.path).name if dev is not None else None,
                "dev_sentences": len(dev) if dev is not None else 0,
                "iterations": int(last.get("num", 0)),
                "seconds": round(seconds, 2),
                "dev_scores": dev_scores,
            },
        }
        write_model(target, meta, {MODEL_MEMBER: model_bytes})
    return TrainResult(target, meta, seconds, int(last.get("num", 0)), dev_scores)


def _dev_scores(tagger: CrfTagger, dev: Sentences, gold: list[list[str]], encoding: str) -> dict[str, float]:
    """Strict and overlap F1 of the finished model on the dev sentences."""
    from ...api import evaluate

    try:
        report = evaluate(
            reference=gold, predicted=tagger.predict(dev.tokens), format="labels", labels=encoding,
            keep_details=False,
        )
    except SpanscoreError:
        return {}  # labels outside the encoding: the model still works, only this summary is skipped
    return {name: round(float(report.metrics[name]["f1"]), 4) for name in ("strict", "overlap")}


class CrfTagger:
    """A trained CRF, held in memory."""

    kind = "crf"

    def __init__(self, meta: dict[str, Any], model_bytes: bytes) -> None:
        _require_crfsuite()
        pycrfsuite = module("pycrfsuite")
        if meta.get("feature_set") != FEATURE_SET:
            raise SpanscoreError(
                f"the model uses feature set {meta.get('feature_set')!r}; this spanscore computes"
                f" {FEATURE_SET!r}: retrain it"
            )
        self.meta = meta
        # crfsuite reads the model from this buffer without copying it: keep it alive.
        self._model_bytes = model_bytes
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open_inmemory(self._model_bytes)

    @classmethod
    def from_file(cls, path: str | Path, meta: dict[str, Any]) -> CrfTagger:
        try:
            return cls(meta, read_member(path, MODEL_MEMBER))
        except ValueError as exc:  # crfsuite refuses a damaged model
            raise InputError(f"damaged CRF model: {exc}", path=str(path)) from None

    def labels(self) -> list[str]:
        return [str(x) for x in self._tagger.labels()]

    def predict(self, sentences: Sequence[Sequence[str]], progress: Progress | None = None) -> list[list[str]]:
        total = len(sentences)
        step = max(1, total // 100)
        out: list[list[str]] = []
        for k, tokens in enumerate(sentences):
            if k % step == 0:
                notify(progress, "predict", k, total, "tagging")
            out.append([str(x) for x in self._tagger.tag(sentence_features(tokens))])
        notify(progress, "predict", total, total, "tagging")
        return out
