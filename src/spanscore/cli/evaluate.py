"""``spanscore evaluate``."""

from __future__ import annotations

import importlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..analysis.breakdown import by_field as by_field_scores
from ..analysis.breakdown import field_values, group_rows
from ..analysis.significance import Resampling, bootstrap, bootstrap_types
from ..api import evaluate as run_evaluate
from ..engines import default_jobs, make_engine
from ..errors import OptionError
from ..io.files import atomic_output
from ..io.reading import ANNOTATION_FORMATS, Reading
from ..io.strings import StringPolicy
from ..stages.counts import CreditRule
from .options import key_values, parse_type_map, parse_types, reading_options, refuse_overwrite


def _credit(value: str) -> CreditRule:
    if value == "dice":
        return "dice"
    if value == "iou":
        return "iou"
    try:
        return float(value)
    except ValueError:
        raise OptionError(f"--credit takes a number in [0, 1], dice or iou, not {value!r}") from None


@click.command("evaluate")
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("pred", required=False, type=click.Path(path_type=Path))
@reading_options(merged=True, formats=True)
@click.option(
    "--credit",
    default="0.5",
    show_default=True,
    help="Credit of a partial match: a number in [0, 1], or dice / iou for proportional credit.",
)
@click.option(
    "--matching",
    type=click.Choice(["optimal", "greedy"]),
    default="optimal",
    show_default=True,
    help="optimal: maximise credit; greedy: the paper's first-found rule.",
)
@click.option(
    "--min-overlap", type=float, default=0.0, show_default=True, help="Least overlap (a fraction) for a partial match."
)
@click.option(
    "--min-overlap-of",
    type=click.Choice(["reference", "predicted", "both"]),
    default="reference",
    show_default=True,
    help="What --min-overlap is relative to.",
)
@click.option("--types", help="Keep only these types (comma-separated), after --type-map.")
@click.option("--type-map", help="Rename types: OLD=NEW,... or a file of OLD<TAB>NEW lines (NEW=O drops).")
@click.option(
    "--zero-division",
    type=click.Choice(["0", "1", "nan"]),
    default="0",
    show_default=True,
    help="Score given when a denominator is zero.",
)
@click.option(
    "--judge",
    "judge_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A judge file (spanscore judge train) adding the learned criterion.",
)
@click.option(
    "--judge-credit",
    type=click.Choice(["accept", "probability"]),
    default="accept",
    show_default=True,
    help="Credit of a judged pair: 1 when accepted, or the judge's probability.",
)
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
    "--chunk-size", type=click.IntRange(min=1), default=1 << 19, show_default=True, help="Bytes of GOLD per chunk."
)
@click.option(
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    help="Processes counting chunks with the local engine (default 0: one per CPU).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option(
    "--predicted-format",
    type=click.Choice(["strings", "jsonl", *ANNOTATION_FORMATS]),
    help="PRED's format where it differs from --format; strings: mentions without offsets, as language models"
    " give them ({\"id\", \"mentions\": [{\"text\", \"label\"}]} per line), each located in GOLD's text.",
)
@click.option(
    "--reference-option",
    "reference_option",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of GOLD's reader (an annotation tool's format): source=annotations, annotator=7, ...",
)
@click.option(
    "--predicted-option",
    "predicted_option",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of PRED's reader: source=predictions, model_version=v2, ...",
)
@click.option(
    "--locate",
    type=click.Choice(["exact", "normalised", "fuzzy"]),
    default="fuzzy",
    show_default=True,
    help="How far a string may differ from the text: exactly, ignoring case/whitespace/edge punctuation, or"
    " fuzzily (each step tried in turn).",
)
@click.option(
    "--fuzzy-threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.85,
    show_default=True,
    help="Least similarity of a fuzzy match.",
)
@click.option(
    "--beta",
    type=float,
    default=1.0,
    show_default=True,
    help="Also give F-beta beside F1 (recall weighs beta times precision: 2 favours recall, 0.5 precision).",
)
@click.option(
    "--ci",
    "level",
    type=float,
    help="Add bootstrap confidence intervals at this level (0.95) over documents (sentences where there are"
    " none) to every score.",
)
@click.option(
    "--resamples", type=click.IntRange(min=1), default=1000, show_default=True, help="Bootstrap resamples of --ci."
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the --ci resampling.")
@click.option(
    "--by",
    "by_field",
    help="Also score each group of documents sharing a value of this field under every criterion: a JSONL"
    " field (source, or meta.year for a nested one), or a CoNLL comment line (# source = twitter).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--no-per-type", is_flag=True, help="Leave the per-type table out.")
def evaluate_command(
    gold: Path,
    pred: Path | None,
    reading: Reading,
    credit: str,
    matching: str,
    min_overlap: float,
    min_overlap_of: str,
    types: str | None,
    type_map: str | None,
    zero_division: str,
    judge_path: Path | None,
    judge_credit: str,
    report_dir: Path | None,
    per_document: Path | None,
    engine: str,
    scheduler: str | None,
    workers: int,
    chunk_size: int,
    jobs: int,
    progress: bool | None,
    predicted_format: str | None,
    reference_option: tuple[str, ...],
    predicted_option: tuple[str, ...],
    locate: str,
    fuzzy_threshold: float,
    beta: float,
    level: float | None,
    resamples: int,
    seed: int,
    by_field: str | None,
    as_json: bool,
    no_per_type: bool,
) -> None:
    """Score PRED against GOLD under every criterion (PRED is left out with --merged)."""
    resampling = None if level is None else Resampling(level=level, resamples=resamples, seed=seed)
    if by_field is not None and (reading.format not in ("jsonl", "conll") or reading.merged):
        raise OptionError("--by reads a field of the reference's documents: give GOLD as JSONL or CoNLL")
    values = None if by_field is None else field_values(gold, by_field, reading.format)
    if pred is None and not reading.merged:
        raise OptionError("give GOLD and PRED, or one merged file with --merged")
    if pred is not None and reading.merged:
        raise OptionError("--merged reads one file: give only GOLD")
    refuse_overwrite(per_document, gold, pred, option="--per-document")
    judge: Any = None
    judge_name = "none"
    if judge_path is not None:
        judge_mod = importlib.import_module("spanscore.programs.judge")
        judge = judge_mod.load_judge(judge_path)
        judge_name = getattr(judge, "name", judge_path.name)
    chosen = make_engine(
        "local" if engine == "stream" else engine, jobs=jobs or default_jobs(), scheduler=scheduler, workers=workers
    )
    writer = None
    if report_dir is not None:
        writer = importlib.import_module("spanscore.presentation").ReportWriter(report_dir)
    show = sys.stderr.isatty() if progress is None else progress
    try:
        with _progress_bar(show) as bar:
            tick = bar if as_json else _LoadsRender(bar)
            report = run_evaluate(
                reference=gold,
                predicted=pred,
                reading=reading,
                credit=_credit(credit),
                matching=matching,  # type: ignore[arg-type]
                min_overlap=min_overlap,
                min_overlap_of=min_overlap_of,  # type: ignore[arg-type]
                types=parse_types(types),
                type_map=parse_type_map(type_map),
                zero_division=float(zero_division),
                beta=beta,
                predicted_format=predicted_format,
                reference_options=key_values(reference_option, "--reference-option"),
                predicted_options=key_values(predicted_option, "--predicted-option"),
                strings=StringPolicy(
                    normalised=locate != "exact", fuzzy=fuzzy_threshold if locate == "fuzzy" else None
                ),
                judge=judge,
                judge_credit=judge_credit,  # type: ignore[arg-type]
                judge_name=judge_name,
                keep_details=False,
                documents=per_document is not None or resampling is not None or by_field is not None,
                document_types=resampling is not None,
                rows=writer,
                chunk_bytes=chunk_size,
                engine=chosen,
                progress=tick,
            )
        if per_document is not None:
            _write_documents(report, per_document)
        if writer is not None:
            written = writer.finish(report)
            click.echo(f"report written to {written}", err=True)
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    breakdown = None
    docs = report.documents
    if by_field is not None and values is not None and docs is not None:
        breakdown = by_field_scores(
            docs,
            values,
            field=by_field,
            zero_division=report.zero_division,
            credit=report.counts.credit,
        )
        if resampling is not None:
            for group in breakdown["groups"]:
                group["intervals"] = bootstrap(
                    group_rows(docs, values, group["value"]),
                    zero_division=report.zero_division,
                    credit=report.counts.credit,
                    resampling=resampling,
                    beta=report.beta,
                )
    _output(report, as_json, no_per_type, resampling, breakdown)


class _LoadsRender:
    """A progress callback that, when the first chunk is back, imports the table renderer (rich)
    in a thread: the tables are then ready to print when the counting ends. Not sooner, so that no
    worker process is forked while the import runs."""

    def __init__(self, bar: Callable[[int, int], None] | None) -> None:
        self.bar = bar
        self.started = False

    def __call__(self, done: int, total: int) -> None:
        if not self.started:
            self.started = True
            threading.Thread(
                target=importlib.import_module, args=("spanscore.presentation.terminal",), daemon=True
            ).start()
        if self.bar is not None:
            self.bar(done, total)


def _write_documents(report: Any, path: Path) -> None:
    with atomic_output(path) as handle:
        for row in report.document_rows():
            handle.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")


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


def _output(
    report: Any, as_json: bool, no_per_type: bool, resampling: Resampling | None, breakdown: dict[str, Any] | None
) -> None:
    data = report.to_dict()
    if breakdown is not None:
        data["breakdown"] = breakdown
    if resampling is not None:
        data["intervals"] = {
            "unit": report.documents.unit,
            "count": int(report.documents.stats.shape[0]),
            "level": resampling.level,
            "resamples": resampling.resamples,
            "seed": resampling.seed,
            "interval": "percentile bootstrap",
            "scores": bootstrap(
                report.documents,
                zero_division=report.zero_division,
                credit=report.counts.credit,
                resampling=resampling,
                beta=report.beta,
            ),
            "per_type": bootstrap_types(
                report.documents,
                zero_division=report.zero_division,
                credit=report.counts.credit,
                resampling=resampling,
                beta=report.beta,
            ),
        }
        data["signature"] += (
            f"|ci:{resampling.level:g}|resamples:{resampling.resamples}|seed:{resampling.seed}"
            f"|resampled:{report.documents.unit}s"
        )
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    from ..presentation.terminal import print_report

    shown = ("macro_documents", "located", "read")
    if resampling is None and breakdown is None and not any(k in data for k in shown):
        print_report(data, per_type=not no_per_type)
        return
    from rich.console import Console
    from rich.text import Text

    from ..presentation.comparison import (
        breakdown_table,
        interval_table,
        located_table,
        macro_documents_table,
        per_type_interval_table,
        read_table,
    )
    from ..presentation.terminal import render, rich_tables

    console = Console(highlight=False)
    console.print(render(data, per_type=not no_per_type, width=console.width))
    tables = []
    if "located" in data:
        tables.append(located_table(data["located"]))
    if "read" in data:
        tables.append(read_table(data["read"]))
    if "macro_documents" in data:
        tables.append(macro_documents_table(data))
    if resampling is not None:
        ci = data["intervals"]
        title = f"{100 * ci['level']:g}% intervals (percentile bootstrap over {ci['count']} {ci['unit']}s)"
        tables.append(interval_table(ci["scores"], title))
        if not no_per_type and ci["per_type"]:
            tables.append(per_type_interval_table(ci["per_type"], f"F1 per type with {100 * ci['level']:g}% intervals"))
    if breakdown is not None:
        tables.append(breakdown_table(breakdown))
    for table in tables:
        for part in rich_tables(table, console.width):
            console.print(part)
    console.print(Text(data["signature"], style="dim"), soft_wrap=True)


commands = [evaluate_command]
