"""``spanscore evaluate``."""

from __future__ import annotations

import importlib
import json
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import FewUnitsWarning, OptionError
from ..io.reading import Reading
from .options import BucketRequest, bucket_options, reading_options, refuse_overwrite, scoring_options

if TYPE_CHECKING:
    from ..report import Report
    from ..stages.scoring import Scoring


@click.command("evaluate", short_help="Score a prediction under every criterion.")
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("pred", required=False, type=click.Path(path_type=Path))
@reading_options(merged=True, formats=True, documents=True)
@scoring_options()
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write summary, matched-pair CSVs, charts and report.html to this folder.",
)
@click.option(
    "--per-document",
    "per_document",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every statistic of each document (each sentence where there are no -DOCSTART- lines) to this "
    "JSONL file, and add the macro average over documents to the output.",
)
@click.option(
    "--empty-documents",
    type=click.Choice(["skip", "score"]),
    default="skip",
    show_default=True,
    help="The mean over documents (with --per-document, --ci or --by) leaves out documents without mentions on"
    " either side (skip), or scores them as --zero-division (score, the HIPE scorer's rule).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask", "stream"]),
    default="local",
    show_default=True,
    help="local: chunks counted here, in --jobs processes (stream is another name for it); dask: on a Dask "
    "cluster. Every output is the same.",
)
@click.option("--scheduler", help="Dask scheduler address (tcp://host:8786); without it a local cluster starts.")
@click.option("--workers", type=int, default=2, show_default=True, help="Workers of a local Dask cluster.")
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    help="Bytes of GOLD per chunk (default: 1048576 with --jobs 1, 524288 with more).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    help=(
        "At most this many processes count chunks with the local engine"
        " (default 0: one per CPU; fewer for a file of few chunks)."
    ),
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option(
    "--ci",
    "level",
    type=float,
    help="Add bootstrap confidence intervals at this level (0.95) over documents (sentences where there are"
    " none) to every score.",
)
@click.option(
    "--resamples",
    type=int,
    default=1000,
    show_default=True,
    help="Bootstrap resamples of --ci (1 to a million).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --ci resampling (0 or more).")
@click.option(
    "--by",
    "by_field",
    help="Also score each group of documents sharing a value of this field under every criterion: a JSONL"
    " field (source, or meta.year for a nested one), or a CoNLL comment line (# source = twitter).",
)
@bucket_options()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--no-per-type", is_flag=True, help="Leave the per-type table out.")
@click.option(
    "--classification-report",
    "report_criterion",
    metavar="CRITERION",
    help="Print seqeval's classification report (per type precision, recall, F1 and support, then the"
    " micro, macro and weighted averages) of this criterion (strict, overlap, semeval_partial...) instead of"
    " the tables.",
)
@click.option(
    "--digits", type=click.IntRange(min=0), default=2, show_default=True, help="Decimals of --classification-report."
)
def evaluate_command(
    gold: Path,
    pred: Path | None,
    reading: Reading,
    scoring: Scoring,
    report_dir: Path | None,
    per_document: Path | None,
    empty_documents: str,
    engine: str,
    scheduler: str | None,
    workers: int,
    chunk_size: int | None,
    jobs: int,
    progress: bool | None,
    level: float | None,
    resamples: int,
    seed: int,
    by_field: str | None,
    buckets: BucketRequest,
    as_json: bool,
    no_per_type: bool,
    report_criterion: str | None,
    digits: int,
) -> None:
    """Score PRED against GOLD under every criterion (PRED is left out with --merged)."""
    from ..api import check_resampling
    from ..api import evaluate as run_evaluate  # here: --help answers without numpy
    from ..engines import default_jobs, make_engine

    check_resampling(resamples=resamples, seed=seed, prefix="--")
    if pred is None and not reading.merged:
        raise OptionError("give GOLD and PRED, or one merged file with --merged")
    if pred is not None and reading.merged:
        raise OptionError("--merged reads one file: give only GOLD")
    refuse_overwrite(per_document, gold, pred, option="--per-document")
    if report_criterion is not None and as_json:
        raise OptionError("--classification-report prints text: leave out --json (the JSON has every per-type score)")
    chosen = make_engine(
        "local" if engine == "stream" else engine, jobs=jobs or default_jobs(), scheduler=scheduler, workers=workers
    )
    writer = None if report_dir is None else importlib.import_module("spanscore.presentation").ReportWriter(report_dir)
    sink = None
    if per_document is not None:  # written as the parts come where the run allows, else once counted
        from ..presentation.documents import DocumentWriter
        from ..stages.counts import credit_label

        sink = DocumentWriter(per_document, zero_division=scoring.zero_division, credit=credit_label(scoring.credit))
    show = sys.stderr.isatty() if progress is None else progress
    # What the end of the run needs, imported on a thread while the workers count.
    later = [] if as_json else ["spanscore.presentation.terminal"]
    if level is not None:  # the intervals (about 3 ms to import) and their draws' generators (about 9 ms)
        later += ["spanscore.analysis.significance", "spanscore.analysis.reliability", "numpy.random"]
    if writer is not None:
        later += importlib.import_module("spanscore.presentation.writer").WRITER_MODULES
    try:
        # The few-units warnings are in the tables and the JSON already.
        with _progress_bar(show) as bar, warnings.catch_warnings(), _loading_later(bar, later) as tick:
            warnings.simplefilter("ignore", FewUnitsWarning)
            report = run_evaluate(
                reference=gold,
                predicted=pred,
                reading=reading,
                scoring=scoring,
                ci=level,
                resamples=resamples,
                seed=seed,
                by=by_field,
                **buckets.keywords(),
                keep_details=False,
                document_sink=sink,
                empty_documents=empty_documents,
                rows=writer,
                chunk_bytes=chunk_size,
                engine=chosen,
                progress=tick,
            )
        if sink is not None:
            sink.finish(report.counts.extra)
        if writer is not None:
            click.echo(f"report written to {writer.finish(report, wait=False)}", err=True)
    except BaseException:
        if writer is not None:
            writer.abandon()
        if sink is not None:
            sink.abandon()
        raise
    try:
        _print(report, report_criterion, digits, as_json, no_per_type)
    finally:
        if writer is not None:
            writer.wait()  # an earlier report's files, removed meanwhile


def _print(report: Report, report_criterion: str | None, digits: int, as_json: bool, no_per_type: bool) -> None:
    if report_criterion is not None:
        click.echo(report.classification_report(report_criterion, digits=digits), nl=False)
        return
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from ..presentation.terminal import print_evaluation

    print_evaluation(data, per_type=not no_per_type)


class _LoadsLater:
    """A progress callback that imports ``modules`` (the table renderer, rich; the report's page
    writers) in a thread once this process has counted its last part and waits for the workers'
    last: they are then ready when the counting ends, imported while this process sleeps rather
    than while it counts beside the workers (a thread importing holds this process's counting
    back: its first part took 20-90 ms for 6 ms of work). No worker is forked while the imports
    run (a later fork waits for them), and where no worker counts they are imported when used."""

    def __init__(self, bar: Callable[[int, int], None] | None, modules: list[str]) -> None:
        self.bar = bar
        self.modules = modules
        from ..runtime.workers import when_waiting

        self.drop = when_waiting(self.start)

    def start(self) -> None:
        thread = threading.Thread(target=_import_all, args=(self.modules,), daemon=True)
        thread.start()
        from ..runtime.workers import before_fork

        before_fork(thread.join)

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar(done, total)


@contextmanager
def _loading_later(
    bar: Callable[[int, int], None] | None, modules: list[str]
) -> Iterator[Callable[[int, int], None] | None]:
    if not modules:
        yield bar
        return
    loader = _LoadsLater(bar, modules)
    try:
        yield loader
    finally:
        loader.drop()  # not left for a later run in this process


def _import_all(modules: list[str]) -> None:
    for name in modules:
        importlib.import_module(name)


@contextmanager
def _progress_bar(show: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not show:
        yield None
        return
    # rich is imported only for a terminal: --json runs in scripts start sooner without it.
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    columns = (TextColumn("scoring"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("scoring", total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield tick


commands = [evaluate_command]
