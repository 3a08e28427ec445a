"""``spanscore samples``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("samples", short_help="Write sample files to try every command on.")
@click.argument("folder", type=click.Path(path_type=Path))
def samples_command(folder: Path) -> None:
    """Write a small gold/prediction pair (gold.conll, pred.conll), the same as JSONL and in every
    annotation tool's format, and llm.jsonl (mentions as strings) into FOLDER, new or empty."""
    from ..programs.samples import write_samples  # here: --help answers without numpy

    for path in write_samples(folder):
        click.echo(str(path))


commands = [samples_command]
