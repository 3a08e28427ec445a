"""``spanscore train crf|flair`` and ``spanscore predict``, with progress bars on stderr."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import click

from ..errors import OptionError
from ..io.reading import Reading
from .options import reading_options, refuse_overwrite

# The taggers (numpy, sklearn-crfsuite, Flair) and rich are imported where a command runs, so that
# --help answers without them.
if TYPE_CHECKING:
    from rich.progress import TaskID

    from ..programs.tagger import TrainResult
    from ..programs.tagger.progress import ProgressEvent

# FlairConfig's embeddings, named here for --help (tests/test_cli_startup.py checks they are the same).
FLAIR_EMBEDDINGS = "char,minilm"


class ProgressDisplay:
    """Draws library progress events as rich progress bars on stderr, one bar per stage."""

    def __init__(self, *, quiet: bool = False) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.quiet = quiet
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<22}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            console=self.console,
            disable=quiet or not self.console.is_terminal,  # bars only on a terminal, never in a log
        )
        self._tasks: dict[tuple[str, str], TaskID] = {}

    def __enter__(self) -> ProgressDisplay:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def __call__(self, event: ProgressEvent) -> None:
        key = (event.stage, event.description)
        task = self._tasks.get(key)
        if task is None:
            task = self._progress.add_task(event.description, total=event.total, info=event.info)
            self._tasks[key] = task
        self._progress.update(task, completed=event.done, total=event.total, info=event.info)

    def log(self, message: str) -> None:
        if not self.quiet:
            self._progress.console.print(message, highlight=False, markup=False)


def _load_training(train: Path, dev: Path | None, limit: int | None, reading: Reading) -> tuple[Any, Any]:
    from ..programs.tagger import read_sentences

    train_s = read_sentences(train, reading).head(limit)
    dev_s = read_sentences(dev, reading).head(limit) if dev is not None else None
    return train_s, dev_s


def _summary(kind: str, result: TrainResult, train_sentences: int, train_tokens: int) -> str:
    steps = f"{result.iterations} {'iterations' if kind == 'crf' else 'epochs'}"
    line = (f"trained {kind} on {train_sentences} sentences ({train_tokens} tokens) in {result.seconds:.1f} s,"
            f" {steps}")
    training = result.meta.get("training", {})
    if training.get("time_limit_reached"):
        line += " (time limit reached)"
    if kind == "flair" and training.get("best_epoch") is not None:
        line += f"; kept epoch {training['best_epoch']}"
    if result.dev_scores:
        line += "; dev " + ", ".join(f"{k} F1 {100 * v:.2f}" for k, v in result.dev_scores.items())
    return f"{line}; wrote {result.path}"


@click.group("train", short_help="Train a CRF or Flair tagger.")
def train_group() -> None:
    """Train a tagger on a labelled CoNLL file (spanscore predict applies it)."""


@train_group.command("crf")
@click.argument("train", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dev", type=click.Path(dir_okay=False, path_type=Path),
              help="Dev file: scored after each iteration (display only) and at the end.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Model file to write.")
@click.option("--iterations", type=int, default=100, show_default=True, help="Most L-BFGS iterations.")
@click.option("--c1", type=float, default=0.1, show_default=True, help="L1 penalty.")
@click.option("--c2", type=float, default=0.1, show_default=True, help="L2 penalty.")
@click.option("--limit", type=int, help="Use only the first N sentences of each file (quick runs).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@reading_options(repair=False)
def train_crf_command(
    train: Path, dev: Path | None, output: Path, iterations: int, c1: float, c2: float, limit: int | None,
    quiet: bool, reading: Reading,
) -> None:
    """Train a feature-based CRF (sklearn-crfsuite) on TRAIN."""
    from ..programs.tagger import CrfConfig, train_crf

    if iterations < 1:
        raise OptionError("--iterations must be at least 1")
    refuse_overwrite(output, train, dev)
    train_s, dev_s = _load_training(train, dev, limit, reading)
    config = CrfConfig(c1=c1, c2=c2, max_iterations=iterations)
    with ProgressDisplay(quiet=quiet) as display:
        result = train_crf(train_s, output, dev=dev_s, config=config, encoding=reading.labels, progress=display)
    click.echo(_summary("crf", result, len(train_s), train_s.n_tokens), err=True)


@train_group.command("flair")
@click.argument("train", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dev", type=click.Path(dir_okay=False, path_type=Path),
              help="Dev file: picks the best epoch and drives the learning-rate annealing.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Model file to write.")
@click.option("--embeddings", default=FLAIR_EMBEDDINGS, show_default=True,
              help="Comma-separated stack: char, minilm (bundled, offline), any Flair name (twitter,"
                   " news-forward, news-backward, glove...) or transformer:MODEL.")
@click.option("--epochs", type=int, default=25, show_default=True, help="Most epochs.")
@click.option("--time-limit", type=float, metavar="SECONDS",
              help="Start no epoch that would end past SECONDS of training (set-up included; the longest"
                   " epoch so far is the guess); the best dev epoch so far is kept.")
@click.option("--learning-rate", type=float, default=0.05, show_default=True, help="SGD learning rate.")
@click.option("--batch-size", type=int, default=32, show_default=True, help="Sentences per mini-batch.")
@click.option("--hidden-size", type=int, default=256, show_default=True, help="LSTM hidden units.")
@click.option("--device", help="torch device (cuda, cuda:1, cpu); default: cuda when available.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the initialisation and shuffling.")
@click.option("--limit", type=int, help="Use only the first N sentences of each file (quick runs).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("-v", "--verbose", is_flag=True, help="Show Flair's own training log.")
@reading_options(repair=False)
def train_flair_command(
    train: Path, dev: Path | None, output: Path, embeddings: str, epochs: int, time_limit: float | None,
    learning_rate: float, batch_size: int, hidden_size: int, device: str | None, seed: int, limit: int | None,
    quiet: bool, verbose: bool, reading: Reading,
) -> None:
    """Train a Flair BiLSTM-CRF (the paper's configuration) on TRAIN."""
    from ..programs.tagger import FlairConfig, train_flair

    names = tuple(e.strip() for e in embeddings.split(",") if e.strip())
    if epochs < 1:
        raise OptionError("--epochs must be at least 1")
    if time_limit is not None and not time_limit > 0:
        raise OptionError("--time-limit must be a positive number of seconds")
    refuse_overwrite(output, train, dev)
    train_s, dev_s = _load_training(train, dev, limit, reading)
    config = FlairConfig(
        embeddings=names, max_epochs=epochs, time_limit=time_limit, learning_rate=learning_rate,
        mini_batch_size=batch_size, hidden_size=hidden_size, device=device, seed=seed,
    )
    with ProgressDisplay(quiet=quiet) as display:
        result = train_flair(train_s, output, dev=dev_s, config=config, encoding=reading.labels, progress=display,
                             verbose=verbose)
    click.echo(_summary("flair", result, len(train_s), train_s.n_tokens), err=True)


@click.command("predict", short_help="Tag a file with a trained tagger.")
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the predictions (CoNLL, on exactly SOURCE's lines).")
@click.option("--append", is_flag=True,
              help="Add the predictions as a new last column (token gold pred, for evaluate --merged)"
                   " instead of replacing the label column.")
@reading_options(repair=False, labels=False)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
def predict_command(model: Path, source: Path, output: Path, append: bool, reading: Reading, quiet: bool) -> None:
    """Tag SOURCE with MODEL (from spanscore train); then run spanscore evaluate SOURCE OUTPUT."""
    from ..programs.tagger import load_model, predict_file

    refuse_overwrite(output, model, source)
    tagger = load_model(model)
    with ProgressDisplay(quiet=quiet) as display:
        result = predict_file(tagger, source, output, reading, append=append, progress=display)
    how = "appended as a new column" if result.appended else "in the label column"
    click.echo(f"tagged {result.sentences} sentences ({result.tokens} tokens) with {tagger.kind};"
               f" predictions {how} of {result.path}", err=True)


commands = [train_group, predict_command]
