"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import OptionError
from ..io.reading import DELIMITERS, FILE_FORMATS, Reading
from ..stages.encoding import ALIASES, ENCODINGS, REPAIRS

F = TypeVar("F", bound=Callable[..., Any])

ENCODING_CHOICES = [*ENCODINGS, *ALIASES]


def reading_options(
    *, repair: bool = True, merged: bool = False, formats: bool = False, labels: bool = True
) -> Callable[[F], F]:
    """The options that say how input is read (--labels, --delimiter, --token-column,
    --label-column, and where asked --repair, --merged, --format), with choices from the library's
    own lists. The command receives them as one ``Reading`` in the parameter ``reading``."""

    def decorate(f: F) -> F:
        def command(*args: Any, **kwargs: Any) -> Any:
            if formats and kwargs.get("fmt") is None:
                kwargs["fmt"] = format_of(kwargs)
            kwargs["reading"] = reading_from(kwargs)
            return f(*args, **kwargs)

        command.__name__ = f.__name__
        command.__doc__ = f.__doc__
        wrapped: Any = command
        if merged:
            wrapped = click.option(
                "--merged", is_flag=True, help="GOLD is one file with token, gold and predicted columns."
            )(wrapped)
        if repair:
            wrapped = click.option(
                "--repair",
                type=click.Choice(REPAIRS),
                default="conlleval",
                show_default=True,
                help="What to do with invalid label transitions.",
            )(wrapped)
        wrapped = click.option(
            "--label-column",
            type=int,
            default=-1,
            show_default=True,
            help="Column of the label (0-based; negative counts from the end).",
        )(wrapped)
        wrapped = click.option(
            "--token-column", type=int, default=0, show_default=True, help="Column of the token (0-based)."
        )(wrapped)
        wrapped = click.option(
            "--delimiter",
            type=click.Choice(DELIMITERS),
            default="auto",
            show_default=True,
            help="Column separator; auto means tab when the file has a tab, else runs of spaces.",
        )(wrapped)
        if labels:
            wrapped = click.option(
                "--labels",
                "labels",
                type=click.Choice(ENCODING_CHOICES, case_sensitive=False),
                default="BIO",
                show_default=True,
                help="Label encoding.",
            )(wrapped)
        if formats:
            wrapped = click.option(
                "--format",
                "fmt",
                type=click.Choice(FILE_FORMATS),
                default=None,
                help="Input format of GOLD and PRED (default: jsonl for files named *.jsonl or *.json, else conll).",
            )(wrapped)
        params = getattr(f, "__click_params__", [])
        wrapped.__click_params__ = [*getattr(wrapped, "__click_params__", []), *params]
        result: F = wrapped
        return result

    return decorate


JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


def format_of(kwargs: dict[str, Any]) -> str:
    """The format a command's first input file is named for: JSONL for *.jsonl (and *.json,
    *.ndjson), CoNLL otherwise. Only the command line guesses; the library is always told."""
    for name in ("gold", "files", "file"):  # the input argument of the commands that read either
        value = kwargs.get(name)
        first = value[0] if isinstance(value, tuple) and value else value
        if isinstance(first, Path):
            return "jsonl" if first.suffix.lower() in JSONL_SUFFIXES else "conll"
    return "conll"


def reading_from(kwargs: dict[str, Any]) -> Reading:
    """Take the reading options out of a command's keyword arguments."""
    return Reading(
        format=kwargs.pop("fmt", "conll"),
        labels=kwargs.pop("labels", "BIO"),
        repair=kwargs.pop("repair", "conlleval"),
        delimiter=kwargs.pop("delimiter"),
        token_column=kwargs.pop("token_column"),
        label_column=kwargs.pop("label_column"),
        merged=kwargs.pop("merged", False),
    )


def parse_type_map(value: str | None) -> dict[str, str] | None:
    """``A=B,C=D`` or a file of ``A<TAB>B`` lines (B may be O to drop the type)."""
    if not value:
        return None
    pairs: list[str]
    path = Path(value)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise OptionError(f"--type-map {value}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
        except OSError as exc:
            raise OptionError(f"--type-map {value}: cannot read: {exc.strerror}") from None
        pairs = [ln.replace("\t", "=", 1) for ln in text.splitlines() if ln.strip()]
    else:
        pairs = [p for p in value.split(",") if p.strip()]
    out: dict[str, str] = {}
    for p in pairs:
        old, sep, new = p.partition("=")
        if not sep or not old.strip():
            raise OptionError(f"--type-map entry {p!r} is not OLD=NEW")
        out[old.strip()] = new.strip()
    return out


def parse_types(value: str | None) -> list[str] | None:
    if not value:
        return None
    return [t.strip() for t in value.split(",") if t.strip()]


def refuse_overwrite(output: Path | None, *inputs: Path | None, option: str = "-o") -> None:
    """An output must not be one of the command's inputs: writing it would destroy what is read."""
    if output is None or not output.exists():
        return
    for path in inputs:
        if path is not None and path.exists() and output.samefile(path):
            raise OptionError(f"{option} {output} is one of the inputs: give another file")


def key_values(pairs: tuple[str, ...], option: str) -> dict[str, str] | None:
    """KEY=VALUE options (repeated) as a mapping; None where none was given."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"{option} takes KEY=VALUE, not {pair!r}")
        out[key.strip()] = value
    return out or None
