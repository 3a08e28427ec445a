"""``spanscore summarize``, ``validate``, ``repair`` and ``convert``."""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from pathlib import Path

import click

from ..errors import OptionError
from ..io.reading import ANNOTATION_FORMATS, DELIMITERS, Reading
from ..stages.schemes import REPAIRS
from .options import ENCODING_CHOICES, key_values, parse_levels, reading_options, refuse_overwrite


@click.command("summarize", short_help="Documents, sentences, tokens and mentions per type.")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@reading_options(formats=True)
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the annotation format's reader (user=1 for one doccano annotator, session=..., annotator=...).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def summarize_command(files: tuple[Path, ...], reading: Reading, options: tuple[str, ...], as_json: bool) -> None:
    """Documents, sentences, tokens and mentions per type of each file."""
    from ..programs import corpus  # here, as in each command: --help answers without numpy

    chosen = tuple(sorted((key_values(options, "--option") or {}).items()))
    if chosen:  # the one file is read as both sides of an evaluation
        reading = dataclasses.replace(reading, reference_options=chosen, predicted_options=chosen)
    rows = [corpus.summarize(f, reading) for f in files]
    if as_json:
        click.echo(json.dumps(rows if len(rows) > 1 else rows[0], indent=2))
        return
    from rich.console import Console
    from rich.text import Text

    from ..presentation.tables import summary_table
    from ..presentation.terminal import rich_tables

    paths = [str(r["path"]) for r in rows]
    console = Console()
    # A path is one word that cannot wrap: long ones are a key above tables naming files by number.
    keyed = max(len(p) for p in paths) + 4 > console.width // 3
    if keyed:
        for k, path in enumerate(paths, 1):
            console.print(Text(f"#{k}  {path}"), soft_wrap=True)  # whole: the terminal wraps it
    names = [f"#{k}" for k in range(1, len(paths) + 1)] if keyed else paths
    for part in rich_tables(summary_table(rows, names), console.width):
        console.print(part)


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
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    help="The converted file (a folder for BRAT, hf-datasets and webanno).",
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
    "--levels",
    metavar="LEVELS",
    help="Label columns of nesting levels, outermost first (GermEval 2014: --levels 2,3): every level's"
    " mentions written to JSONL, each with its level; from JSONL, the levels by name (--levels outer,inner),"
    " a label column each in that order.",
)
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
    levels: str | None,
    encoding: str,
    header: bool,
    options: tuple[str, ...],
    to_options: tuple[str, ...],
) -> None:
    """Convert between label encodings, to or from JSONL with character offsets, and between JSONL and
    the annotation tools' exports (BRAT, Label Studio, doccano, Prodigy, Hugging Face datasets, spaCy
    DocBin, WebAnno TSV)."""
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
        if levels:
            raise OptionError("--levels reads CoNLL label columns or JSONL levels; the annotation formats have none")
        if source.lower() == "jsonl":
            corpus.refuse_levels(file, target.lower())
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
        levels=parse_levels(levels),
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
