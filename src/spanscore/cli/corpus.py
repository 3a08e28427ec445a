"""``spanscore summarize``, ``validate``, ``repair`` and ``convert``."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import click

from ..errors import OptionError
from ..io.reading import ANNOTATION_FORMATS, DELIMITERS, Reading
from ..stages.schemes import REPAIRS
from .options import ENCODING_CHOICES, key_values, reading_options, refuse_overwrite


@click.command("summarize", short_help="Documents, sentences, tokens and mentions per type.")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@reading_options(formats=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def summarize_command(files: tuple[Path, ...], reading: Reading, as_json: bool) -> None:
    """Documents, sentences, tokens and mentions per type of each file."""
    from ..programs import corpus  # here, as in each command: --help answers without numpy
    rows = [corpus.summarize(f, reading) for f in files]
    if as_json:
        click.echo(json.dumps(rows if len(rows) > 1 else rows[0], indent=2))
        return
    types = sorted({t for r in rows for t in r["types"]})
    columns = ("documents", "sentences", "tokens", "mentions", *types)
    counts = [
        [str(r["documents"]), str(r["sentences"]), str(r["tokens"]), str(r["mentions"])]
        + [str(r["types"].get(t, 0)) for t in types]
        for r in rows
    ]
    paths = [str(r["path"]) for r in rows]
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    widths = [max(len(c), *(len(x[k]) for x in counts)) for k, c in enumerate(columns)]
    # Each column takes its widest cell plus 3 for its rule and padding; the first rule 1 more.
    keyed = max(len(p) for p in paths) + 4 + sum(w + 3 for w in widths) > console.width
    if keyed:  # the paths, whole, as a key above a table that names each file by its number
        for k, path in enumerate(paths, 1):
            console.print(Text(f"#{k}  {path}"), soft_wrap=True)  # whole: the terminal wraps it
    table = Table()
    table.add_column(Text("#" if keyed else "file"), justify="left", no_wrap=keyed, overflow="fold")
    for col in columns:
        table.add_column(Text(col), justify="right", no_wrap=True)  # a count is never cut
    for k, (path, cells) in enumerate(zip(paths, counts, strict=True), 1):
        table.add_row(*(Text(c) for c in (f"#{k}" if keyed else path, *cells)))  # Text: never markup
    console.print(table)


@click.command("validate")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@reading_options(repair=False)
def validate_command(file: Path, reading: Reading) -> None:
    """List every invalid label transition (exit 1 if there is any)."""
    from ..programs import corpus
    result = corpus.validate(file, reading)
    for problem in result.problems:
        click.echo(str(problem))
    if result.ok:
        click.echo(f"{file}: valid {result.encoding} ({result.sentences} sentences, {result.tokens} tokens)", err=True)
    else:
        click.echo(f"{file}: {len(result.problems)} invalid {result.encoding} transitions", err=True)
        sys.exit(1)


@click.command("repair")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The repaired file."
)
@click.option(
    "--method",
    type=click.Choice(["conlleval", "discard"]),
    default="conlleval",
    show_default=True,
    help="conlleval: an I- after O (or another type) starts a mention; discard: drop such mentions.",
)
@reading_options(repair=False)
def repair_command(file: Path, output: Path, method: str, reading: Reading) -> None:
    """Write FILE with its invalid transitions repaired."""
    from ..programs import corpus
    n = corpus.repair_file(file, output, reading, method=method)
    click.echo(f"{output}: repaired {n} invalid transitions with {method}", err=True)


@click.command("convert", short_help="Between label encodings, JSONL and annotation formats.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "-o", "--output", required=True, type=click.Path(path_type=Path), help="The converted file (a folder for BRAT)."
)
@click.option(
    "--from",
    "source",
    type=click.Choice([*ENCODING_CHOICES, "JSONL", *ANNOTATION_FORMATS], case_sensitive=False),
    default="BIO",
    show_default=True,
    help="A label encoding (CoNLL), JSONL, or an annotation tool's export.",
)
@click.option(
    "--to",
    "target",
    type=click.Choice([*ENCODING_CHOICES, "JSONL", *ANNOTATION_FORMATS], case_sensitive=False),
    required=True,
    help="What to write: a label encoding (CoNLL), JSONL, or an annotation tool's export.",
)
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the annotation format's reader (source=predictions, model_version=v2, ...).",
)
@click.option(
    "--to-option",
    "to_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the target format's writer (source=predictions, drop_fragments=true, ...).",
)
@click.option(
    "--repair",
    type=click.Choice(REPAIRS),
    default="conlleval",
    show_default=True,
    help="What to do with invalid label transitions while converting.",
)
@click.option("--delimiter", type=click.Choice(DELIMITERS), default="auto", show_default=True, help="Column separator.")
@click.option("--token-column", type=int, default=0, show_default=True, help="Column of the token (0-based).")
@click.option("--label-column", type=int, default=-1, show_default=True, help="Column of the label.")
@click.option(
    "--encoding",
    default="utf-8",
    show_default=True,
    help="Text encoding of a CoNLL FILE (latin-1 for CoNLL-2002's); JSONL is written as UTF-8.",
)
@click.option("--header", is_flag=True, help="The first line of a CoNLL FILE names the columns (HIPE's TSV): skip it.")
def convert_command(
    file: Path,
    output: Path,
    source: str,
    target: str,
    repair: str,
    delimiter: str,
    token_column: int,
    label_column: int,
    encoding: str,
    header: bool,
    options: tuple[str, ...],
    to_options: tuple[str, ...],
) -> None:
    """Convert between label encodings, to or from JSONL with character offsets, and between JSONL and
    the annotation tools' exports (BRAT, Label Studio, doccano, Prodigy, Hugging Face datasets)."""
    from ..programs import corpus
    documents = {"jsonl", *ANNOTATION_FORMATS}
    if source.lower() == target.lower() == "jsonl":
        raise OptionError(corpus.same_format(file, "JSONL"))
    if source.lower() in ANNOTATION_FORMATS or target.lower() in ANNOTATION_FORMATS:
        if source.lower() not in documents or target.lower() not in documents:
            raise OptionError(
                "annotation tools' exports convert to and from JSONL and each other (character offsets); convert"
                " CoNLL to JSONL first"
            )
        write_options = corpus.writer_options(target.lower(), key_values(to_options, "--to-option") or {})
        refuse_overwrite(output, file, option="--output")
        formats = importlib.import_module("spanscore.io.formats")
        docs, notes = formats.read(source.lower(), file, **(key_values(options, "--option") or {}))
        try:
            formats.write(target.lower(), docs, output, **write_options)
        except OptionError as exc:
            # The writer knows no file names: say which one was not written.
            raise OptionError(f"{output}: not written: {exc}") from None
        except OSError as exc:
            raise OptionError(f"{output}: cannot write: {exc.strerror or type(exc).__name__}") from None
        skipped = ", ".join(f"{n} {what}" for what, n in sorted(notes.skipped.items()))
        click.echo(f"{output}: {len(docs)} documents written as {target.lower()}", err=True)
        if skipped:
            click.echo(f"  skipped (counted, not converted): {skipped}", err=True)
        if notes.misaligned:
            click.echo(f"  offsets reconciled: {len(notes.misaligned)}; first: {notes.misaligned[0]}", err=True)
        return
    if options:
        raise OptionError("--option is for the annotation tools' formats")
    if to_options:
        written = "JSONL from CoNLL" if target.upper() == "JSONL" else f"{target.upper()} (CoNLL)"
        raise OptionError(
            f"--to-option: writing {written} takes no options; --to-option is for the annotation tools' formats"
            " (and JSONL from one of them)"
        )
    if file.is_dir():
        raise OptionError(f"{file} is a folder: --from {source} reads a file")
    jsonl = source.upper() == "JSONL"
    reading = Reading(
        format="jsonl" if jsonl else "conll",
        labels="BIO" if jsonl else source,
        repair=repair,  # type: ignore[arg-type]
        delimiter=delimiter,  # type: ignore[arg-type]
        token_column=token_column,
        label_column=label_column,
        encoding="utf-8" if jsonl else encoding,
        header=header and not jsonl,
    )
    refuse_overwrite(output, file, option="--output")
    try:
        corpus.convert(file, output, reading, target=target)
    except OSError as exc:
        # Named for the user's file: the error's own names a temporary file beside it.
        raise OptionError(f"{output}: cannot write: {exc.strerror or type(exc).__name__}") from None
    click.echo(f"{output}: written in {target.upper()}", err=True)


commands = [summarize_command, validate_command, repair_command, convert_command]
