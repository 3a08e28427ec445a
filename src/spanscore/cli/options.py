"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..encoding import ALIASES, ENCODINGS
from ..errors import OptionError

F = TypeVar("F", bound=Callable[..., Any])

ENCODING_CHOICES = [*ENCODINGS, *ALIASES]


def reading_options(f: F) -> F:
    """--labels, --delimiter and the column options of every command that reads CoNLL."""
    f = click.option(
        "--label-column",
        type=int,
        default=-1,
        show_default=True,
        help="Column of the label (0-based; negative counts from the end).",
    )(f)
    f = click.option("--token-column", type=int, default=0, show_default=True, help="Column of the token.")(f)
    f = click.option(
        "--delimiter",
        type=click.Choice(["auto", "tab", "whitespace"]),
        default="auto",
        show_default=True,
        help="Column separator; auto means tab when the file has a tab, else runs of spaces.",
    )(f)
    f = click.option(
        "--labels",
        "labels",
        type=click.Choice(ENCODING_CHOICES, case_sensitive=False),
        default="BIO",
        show_default=True,
        help="Label encoding.",
    )(f)
    return f


def parse_type_map(value: str | None) -> dict[str, str] | None:
    """``A=B,C=D`` or a file of ``A<TAB>B`` lines (B may be O to drop the type)."""
    if not value:
        return None
    pairs: list[str]
    path = Path(value)
    if path.is_file():
        pairs = [ln.replace("\t", "=", 1) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
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
