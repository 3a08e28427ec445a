"""``spanscore compare``: systems against one reference, with intervals and paired tests."""

from __future__ import annotations

import importlib
import json
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import FewUnitsWarning, OptionError
from ..io.files import atomic_output
from ..io.reading import Reading
from .options import BucketRequest, bucket_options, reading_options, refuse_overwrite, scoring_options

if TYPE_CHECKING:
    from ..stages.scoring import Scoring


def resampling_options(f: Any) -> Any:
    """--ci, --resamples, --seed (and --trials for compare): the options of the resampling."""
    f = click.option(
        "--seed", type=int, default=0, show_default=True, help="Seed of the resampling (0 or more)."
    )(f)
    f = click.option(
        "--resamples",
        type=int,
        default=1000,
        show_default=True,
        help="Bootstrap resamples (1 to a million).",
    )(f)
    return f


# Formats whose one run is a folder (a document per file, or a dataset): a folder is one system.
FOLDER_FORMATS = ("brat", "hf-datasets", "webanno")


def system_files(systems: tuple[Path, ...], format: str = "conll") -> list[Path]:
    """The predictions: each path given, and every file (not hidden) of each folder given, sorted;
    for a format whose run is a folder, each folder given."""
    out: list[Path] = []
    for path in systems:
        if path.is_dir() and format in FOLDER_FORMATS:
            out.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            if not found:
                raise OptionError(f"{path}: the folder holds no prediction file")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise OptionError(f"{path}: no such file or folder")
    return out


@click.command("compare", short_help="Systems against one reference: intervals and paired significance tests.")
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("systems", nargs=-1, required=True, type=click.Path(path_type=Path))
@reading_options(formats=True, documents=True)
@scoring_options(judge=False)
@click.option("--ci", "level", type=float, default=0.95, show_default=True, help="Confidence level of the intervals.")
@resampling_options
@click.option(
    "--trials",
    type=int,
    default=1000,
    show_default=True,
    help="Approximate randomisation trials (1 to a million).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Level below which a randomisation p-value is marked significant.",
)
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Write an HTML report.")
@click.option("--jobs", type=click.IntRange(min=0), default=0, help="Processes per evaluation (default: one per CPU).")
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="local: chunks counted here, in --jobs processes; dask: on a Dask cluster. Every output is the same.",
)
@click.option("--scheduler", help="Dask scheduler address (tcp://host:8786); without it a local cluster starts.")
@click.option("--workers", type=int, default=2, show_default=True, help="Workers of a local Dask cluster.")
@click.option(
    "--name",
    "names",
    multiple=True,
    help="A system's name in the output, once per system in order (default: the shortest unique end of each path).",
)
@click.option("--per-type", is_flag=True, help="Also compare the systems on each type (strict F1 and every score).")
@bucket_options()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (a stable shape: docs/compare.md).")
def compare_command(
    gold: Path,
    systems: tuple[Path, ...],
    reading: Reading,
    scoring: Scoring,
    level: float,
    resamples: int,
    seed: int,
    trials: int,
    alpha: float,
    html_path: Path | None,
    jobs: int,
    engine: str,
    scheduler: str | None,
    workers: int,
    names: tuple[str, ...],
    per_type: bool,
    buckets: BucketRequest,
    as_json: bool,
) -> None:
    """Score each of SYSTEMS (prediction files, or folders of them) against GOLD under every
    criterion, with bootstrap intervals over documents (sentences where there are none), and test
    each against the first: the difference with its interval, paired bootstrap and approximate
    randomisation p-values (docs/compare.md)."""
    from ..api import check_resampling
    from ..api import compare as run_compare  # here: --help answers without numpy
    from ..engines import default_jobs, make_engine

    check_resampling(resamples=resamples, trials=trials, seed=seed, prefix="--")
    files = system_files(systems, reading.format)
    refuse_overwrite(html_path, gold, *files, option="--html")
    later = [*AFTER_THE_COUNT, *(() if as_json else TABLES), *(() if html_path is None else PAGE)]
    with warnings.catch_warnings(), _imported_while_waiting(later):
        # The few-units warnings are in the tables and the JSON already.
        warnings.simplefilter("ignore", FewUnitsWarning)
        result = run_compare(
            reference=gold,
            systems=files,
            names=list(names) or None,
            reading=reading,
            scoring=scoring,
            ci=level,
            resamples=resamples,
            trials=trials,
            seed=seed,
            alpha=alpha,
            per_type=per_type,
            **buckets.keywords(),
            jobs=jobs or default_jobs(),
            engine=make_engine(engine, jobs=jobs or default_jobs(), scheduler=scheduler, workers=workers),
        )
    data = result.to_dict()
    if html_path is not None:
        from ..presentation.comparison import html_page

        with atomic_output(html_path) as handle:
            handle.write(html_page(data).encode("utf-8"))
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    _print(dict(data))


# What a comparison imports once the systems are counted: the paired tests' generators, the
# groupings' tests (every comparison's tests go through them), the terminal's tables (rich) or the
# HTML page. About 16 ms for ``--json`` and 70 ms more for the tables, on the command's serial end
# after the count (docs/benchmarks.md).
AFTER_THE_COUNT = ("numpy.random", "spanscore.analysis.buckets")
TABLES = ("spanscore.presentation.terminal",)
PAGE = ("spanscore.presentation.comparison",)


@contextmanager
def _imported_while_waiting(modules: list[str]) -> Iterator[None]:
    """``modules`` imported on a thread once this process has counted its last part and waits for
    its workers' last results (``runtime.workers.when_waiting``): they are then ready when the
    count ends, imported while this process would sleep, not while it counts beside the workers
    (a thread importing holds its counting back). No worker is forked while they are imported (a
    later fork waits for them); where no worker counts, the thread starts as the count ends."""
    from ..runtime.workers import before_fork, when_waiting

    def start() -> None:
        thread = threading.Thread(target=_import_all, args=(modules,), daemon=True)
        thread.start()
        before_fork(thread.join)

    drop = when_waiting(start)
    try:
        yield
    finally:
        drop()  # not left for a later run in this process


def _import_all(modules: list[str]) -> None:
    for name in modules:
        importlib.import_module(name)


def _print(data: dict[str, Any]) -> None:
    from ..presentation.terminal import print_comparison

    print_comparison(data)


commands = [compare_command]
