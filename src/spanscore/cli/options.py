"""Options shared by several commands."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import OptionError
from ..io.reading import ANNOTATION_FORMATS, DELIMITERS, FILE_FORMATS, Reading
from ..io.strings import StringPolicy
from ..stages.encoding import ALIASES, ENCODINGS, REPAIRS
from ..stages.scoring import Scoring

F = TypeVar("F", bound=Callable[..., Any])

ENCODING_CHOICES = [*ENCODINGS, *ALIASES]


def reading_options(
    *,
    repair: bool = True,
    merged: bool = False,
    formats: bool = False,
    labels: bool = True,
    documents: bool = False,
) -> Callable[[F], F]:
    """The options that say how input is read (--labels, --delimiter, --token-column,
    --label-column, and where asked --repair, --merged, --format, and with ``documents`` the
    prediction's own format, the readers' options and how strings are located), with choices from
    the library's own lists. The command receives them as one ``Reading`` in the parameter
    ``reading``."""

    def decorate(f: F) -> F:
        def command(*args: Any, **kwargs: Any) -> Any:
            if formats and kwargs.get("fmt") is None:
                kwargs["fmt"] = format_of(kwargs)
            kwargs["reading"] = reading_from(kwargs)
            return f(*args, **kwargs)

        command.__name__ = f.__name__
        command.__doc__ = f.__doc__
        wrapped: Any = command
        if documents:
            wrapped = _document_options(wrapped)
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
    more: dict[str, Any] = {}
    if "predicted_format" in kwargs:
        locate = kwargs.pop("locate")
        threshold = kwargs.pop("fuzzy_threshold")
        more = {
            "predicted_format": kwargs.pop("predicted_format"),
            "reference_options": key_values(kwargs.pop("reference_option"), "--reference-option"),
            "predicted_options": key_values(kwargs.pop("predicted_option"), "--predicted-option"),
            "strings": StringPolicy(normalised=locate != "exact", fuzzy=threshold if locate == "fuzzy" else None),
        }
        if more["predicted_format"] != "strings":
            more["strings"] = None
    return Reading(
        format=kwargs.pop("fmt", "conll"),
        labels=kwargs.pop("labels", "BIO"),
        repair=kwargs.pop("repair", "conlleval"),
        delimiter=kwargs.pop("delimiter"),
        token_column=kwargs.pop("token_column"),
        label_column=kwargs.pop("label_column"),
        merged=kwargs.pop("merged", False),
        **more,
    )


def _document_options(f: Any) -> Any:
    """--predicted-format, the readers' KEY=VALUE options and how strings are located."""
    f = click.option(
        "--fuzzy-threshold",
        type=click.FloatRange(0, 1, min_open=True),
        default=0.85,
        show_default=True,
        help="Least similarity of a fuzzy match.",
    )(f)
    f = click.option(
        "--locate",
        type=click.Choice(["exact", "normalised", "fuzzy"]),
        default="fuzzy",
        show_default=True,
        help="How far a string may differ from the text: exactly, ignoring case/whitespace/edge punctuation, or"
        " fuzzily (each step tried in turn).",
    )(f)
    f = click.option(
        "--predicted-option",
        "predicted_option",
        multiple=True,
        metavar="KEY=VALUE",
        help="An option of PRED's reader: source=predictions, model_version=v2, ...",
    )(f)
    f = click.option(
        "--reference-option",
        "reference_option",
        multiple=True,
        metavar="KEY=VALUE",
        help="An option of GOLD's reader (an annotation tool's format): source=annotations, annotator=7, ...",
    )(f)
    return click.option(
        "--predicted-format",
        type=click.Choice(["strings", "jsonl", *ANNOTATION_FORMATS]),
        help="PRED's format where it differs from --format; strings: mentions without offsets, as language models"
        " give them ({\"id\", \"mentions\": [{\"text\", \"label\"}]} per line), each located in GOLD's text.",
    )(f)


def scoring_options(*, judge: bool = True) -> Callable[[F], F]:
    """The options that change a score (--credit, --matching, --min-overlap, --min-overlap-of,
    --types, --type-map, --zero-division, --beta, and where asked --judge, --judge-credit). The
    command receives them as one ``Scoring`` in the parameter ``scoring``."""

    def decorate(f: F) -> F:
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs["scoring"] = scoring_from(kwargs)
            return f(*args, **kwargs)

        command.__name__ = f.__name__
        command.__doc__ = f.__doc__
        wrapped: Any = command
        if judge:
            wrapped = click.option(
                "--judge-credit",
                type=click.Choice(["accept", "probability"]),
                default="accept",
                show_default=True,
                help="Credit of a judged pair: 1 when accepted, or the judge's probability.",
            )(wrapped)
            wrapped = click.option(
                "--judge",
                "judge_path",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                help="A judge file (spanscore judge train) adding the learned criterion.",
            )(wrapped)
        wrapped = click.option(
            "--beta",
            type=float,
            default=1.0,
            show_default=True,
            help="Also give F-beta beside F1 (recall weighs beta times precision: 2 favours recall, 0.5 precision).",
        )(wrapped)
        wrapped = click.option(
            "--zero-division",
            type=click.Choice(["0", "1", "nan"]),
            default="0",
            show_default=True,
            help="Score given when a denominator is zero.",
        )(wrapped)
        wrapped = click.option(
            "--type-map", help="Rename types: OLD=NEW,... or a file of OLD<TAB>NEW lines (NEW=O drops)."
        )(wrapped)
        wrapped = click.option("--types", help="Keep only these types (comma-separated), after --type-map.")(wrapped)
        wrapped = click.option(
            "--min-overlap-of",
            type=click.Choice(["reference", "predicted", "both"]),
            default="reference",
            show_default=True,
            help="What --min-overlap is relative to.",
        )(wrapped)
        wrapped = click.option(
            "--min-overlap",
            type=float,
            default=0.0,
            show_default=True,
            help="Least overlap (a fraction) for a partial match.",
        )(wrapped)
        wrapped = click.option(
            "--matching",
            type=click.Choice(["optimal", "greedy"]),
            default="optimal",
            show_default=True,
            help="optimal: maximise credit; greedy: the paper's first-found rule.",
        )(wrapped)
        wrapped = click.option(
            "--credit",
            default="0.5",
            show_default=True,
            help="Credit of a partial match: a number in [0, 1], or dice / iou for proportional credit.",
        )(wrapped)
        params = getattr(f, "__click_params__", [])
        wrapped.__click_params__ = [*getattr(wrapped, "__click_params__", []), *params]
        result: F = wrapped
        return result

    return decorate


def scoring_from(kwargs: dict[str, Any]) -> Scoring:
    """Take the scoring options out of a command's keyword arguments (loading a --judge)."""
    judge: Any = None
    judge_name = None
    judge_path = kwargs.pop("judge_path", None)
    if judge_path is not None:
        judge = importlib.import_module("spanscore.programs.judge").load_judge(judge_path)
        judge_name = getattr(judge, "name", judge_path.name)
    return Scoring.of(
        credit=kwargs.pop("credit"),  # text: Scoring reads "0.5", "dice" and "iou"
        matching=kwargs.pop("matching"),
        min_overlap=kwargs.pop("min_overlap"),
        min_overlap_of=kwargs.pop("min_overlap_of"),
        types=parse_types(kwargs.pop("types")),
        type_map=parse_type_map(kwargs.pop("type_map")),
        zero_division=float(kwargs.pop("zero_division")),
        beta=kwargs.pop("beta"),
        judge=judge,
        judge_credit=kwargs.pop("judge_credit", "accept"),
        judge_name=judge_name,
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
