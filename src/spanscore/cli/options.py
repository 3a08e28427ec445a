"""Options shared by several commands."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import OptionError
from ..io.reading import ANNOTATION_FORMATS, DELIMITERS, FILE_FORMATS, Reading
from ..stages.schemes import ALIASES, ENCODINGS, REPAIRS

# Only names are needed to declare the options: every command's --help answers without numpy. What
# needs it (the strings policy, Scoring) is imported where a command turns its options into objects.
if TYPE_CHECKING:
    from ..stages.scoring import Scoring

F = TypeVar("F", bound=Callable[..., Any])

ENCODING_CHOICES = [*ENCODINGS, *ALIASES]


Option = tuple[tuple[str, ...], dict[str, Any]]  # click.option's names and keywords


def _options(f: F, options: list[Option], take: Callable[[dict[str, Any]], None]) -> F:
    """``f`` with ``options`` (in the order --help lists them), and ``take`` turning their values
    into the parameter ``f`` receives."""

    def command(*args: Any, **kwargs: Any) -> Any:
        take(kwargs)
        return f(*args, **kwargs)

    command.__name__ = f.__name__
    command.__doc__ = f.__doc__
    wrapped: Any = command
    for names, settings in reversed(options):
        wrapped = click.option(*names, **settings)(wrapped)
    wrapped.__click_params__ = [*getattr(wrapped, "__click_params__", []), *getattr(f, "__click_params__", [])]
    result: F = wrapped
    return result


def _choice(names: tuple[str, ...], choices: Any, default: Any, help: str) -> Option:
    return names, {"type": click.Choice(choices), "default": default, "show_default": True, "help": help}


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
    options: list[Option] = []
    if formats:
        options.append(
            (
                ("--format", "fmt"),
                {
                    "type": click.Choice(FILE_FORMATS),
                    "default": None,
                    "help": "Input format of GOLD and PRED (default: jsonl for files named *.jsonl or *.json, else"
                    " conll).",
                },
            )
        )
    if labels:
        options.append(
            (
                ("--labels", "labels"),
                {
                    "type": click.Choice(ENCODING_CHOICES, case_sensitive=False),
                    "default": "BIO",
                    "show_default": True,
                    "help": "Label encoding.",
                },
            )
        )
    options += [
        _choice(
            ("--delimiter",),
            DELIMITERS,
            "auto",
            "Column separator; auto means tab when the file has a tab, else runs of spaces.",
        ),
        (("--token-column",), {"type": int, "default": 0, "show_default": True, "help": "Column of the token."}),
        (
            ("--label-column",),
            {
                "type": int,
                "default": -1,
                "show_default": True,
                "help": "Column of the label (0-based; negative counts from the end).",
            },
        ),
        (
            ("--levels",),
            {
                "default": None,
                "metavar": "LEVELS",
                "help": "Label columns of nesting levels, outermost first (GermEval 2014: --levels 2,3), or in"
                " JSONL the names in the mentions' level field (--levels outer,inner): their mentions scored"
                " together, each level alone, and with two levels GermEval 2014's measures.",
            },
        ),
        (
            ("--encoding",),
            {
                "default": "utf-8",
                "show_default": True,
                "help": "Text encoding of CoNLL files (latin-1 for CoNLL-2002's); bytes it cannot read are an error.",
            },
        ),
        (
            ("--header",),
            {"is_flag": True, "help": "The first line of a CoNLL file names the columns (HIPE's TSV): skip it."},
        ),
    ]
    if repair:
        options.append(_choice(("--repair",), REPAIRS, "conlleval", "What to do with invalid label transitions."))
    if merged:
        options.append(
            (("--merged",), {"is_flag": True, "help": "GOLD is one file with token, gold and predicted columns."})
        )
        options.append(
            (
                ("--predicted-column",),
                {
                    "type": int,
                    "default": None,
                    "help": "With --merged: the predicted labels' column, the gold labels' being --label-column"
                    " (Flair's token, gold, predicted, score: --label-column 1 --predicted-column 2); by default"
                    " the last two columns.",
                },
            )
        )
    if documents:
        options.append(
            (
                ("--predicted-encoding",),
                {"default": None, "help": "Text encoding of a CoNLL PRED where it differs from --encoding (utf-8)."},
            )
        )
        options += DOCUMENT_OPTIONS

    def take(kwargs: dict[str, Any]) -> None:
        if formats and kwargs.get("fmt") is None:
            kwargs["fmt"] = format_of(kwargs)
        kwargs["reading"] = reading_from(kwargs)

    return lambda f: _options(f, options, take)


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


def parse_levels(value: str | None) -> tuple[int, ...] | tuple[str, ...]:
    """``--levels 2,3`` as column indexes, ``--levels outer,inner`` as JSONL level names."""
    if not value:
        return ()
    items = [c.strip() for c in value.split(",")]
    if all(c.lstrip("-").isdigit() for c in items):
        return tuple(int(c) for c in items)
    if all(c and not c.lstrip("-").isdigit() for c in items):
        return tuple(items)
    raise OptionError(
        "--levels takes column indexes separated by commas (such as 2,3), or JSONL level names (such as"
        f" outer,inner), not {value!r}"
    )


def reading_from(kwargs: dict[str, Any]) -> Reading:
    """Take the reading options out of a command's keyword arguments."""
    more: dict[str, Any] = {}
    if "predicted_format" in kwargs:
        locate = kwargs.pop("locate")
        threshold = kwargs.pop("fuzzy_threshold")
        invalid = kwargs.pop("invalid_strings")
        more = {
            "predicted_format": kwargs.pop("predicted_format"),
            "reference_options": key_values(kwargs.pop("reference_option"), "--reference-option"),
            "predicted_options": key_values(kwargs.pop("predicted_option"), "--predicted-option"),
            "strings": None,
        }
        if more["predicted_format"] in ("strings", "langextract", "gliner"):
            from ..io.strings import StringPolicy  # here: only strings to locate need it

            more["strings"] = StringPolicy(
                normalised=locate != "exact", fuzzy=threshold if locate == "fuzzy" else None, invalid=invalid
            )
    return Reading(
        format=kwargs.pop("fmt", "conll"),
        labels=kwargs.pop("labels", "BIO"),
        repair=kwargs.pop("repair", "conlleval"),
        delimiter=kwargs.pop("delimiter"),
        token_column=kwargs.pop("token_column"),
        label_column=kwargs.pop("label_column"),
        levels=parse_levels(kwargs.pop("levels", None)),
        merged=kwargs.pop("merged", False),
        predicted_column=kwargs.pop("predicted_column", None),
        encoding=kwargs.pop("encoding", "utf-8"),
        predicted_encoding=kwargs.pop("predicted_encoding", None),
        header=kwargs.pop("header", False),
        **more,
    )


DOCUMENT_OPTIONS: list[Option] = [
    (
        ("--predicted-format",),
        {
            "type": click.Choice(["strings", "langextract", "gliner", "jsonl", *ANNOTATION_FORMATS]),
            "help": "PRED's format where it differs from --format; strings: mentions without offsets, as language"
            ' models give them ({"id", "mentions": [{"text", "label"}]} per line), each located in GOLD\'s text;'
            " langextract: LangExtract's annotated documents; gliner: span lists ({\"id\", \"entities\"} per line).",
        },
    ),
    (
        ("--reference-option", "reference_option"),
        {
            "multiple": True,
            "metavar": "KEY=VALUE",
            "help": "An option of GOLD's reader (an annotation tool's format): source=annotations, annotator=7, ...",
        },
    ),
    (
        ("--predicted-option", "predicted_option"),
        {"multiple": True, "metavar": "KEY=VALUE", "help": "An option of PRED's reader: source=predictions, ..."},
    ),
    _choice(
        ("--locate",),
        ["exact", "normalised", "fuzzy"],
        "fuzzy",
        "How far a string may differ from the text: exactly, ignoring case/whitespace/edge punctuation, or fuzzily"
        " (each step tried in turn).",
    ),
    _choice(
        ("--invalid-strings",),
        ["keep", "error"],
        "keep",
        "An entry of a strings file that is no mention (empty text or label, not strings, longer than its"
        " document): kept as an invalid prediction (spurious, counted and shown), or an error.",
    ),
    (
        ("--fuzzy-threshold",),
        {
            "type": click.FloatRange(0, 1, min_open=True),
            "default": 0.85,
            "show_default": True,
            "help": "Least similarity of a fuzzy match.",
        },
    ),
]

SCORING_OPTIONS: list[Option] = [
    (
        ("--credit",),
        {
            "default": "0.5",
            "show_default": True,
            "help": "Credit of a partial match: a number in [0, 1], or dice / iou for proportional credit.",
        },
    ),
    _choice(
        ("--matching",),
        ["optimal", "greedy"],
        "optimal",
        "optimal: maximise credit; greedy: the paper's first-found rule.",
    ),
    (
        ("--min-overlap",),
        {"type": float, "default": 0.0, "show_default": True, "help": "Least overlap (a fraction) of a partial match."},
    ),
    _choice(
        ("--min-overlap-of",), ["reference", "predicted", "both"], "reference", "What --min-overlap is relative to."
    ),
    (("--types",), {"help": "Keep only these types (comma-separated), after --type-map."}),
    (("--type-map",), {"help": "Rename types: OLD=NEW,... or a file of OLD<TAB>NEW lines (NEW=O drops)."}),
    _choice(("--zero-division",), ["0", "1", "nan"], "0", "Score given when a denominator is zero."),
    (
        ("--beta",),
        {
            "type": float,
            "default": 1.0,
            "show_default": True,
            "help": "Also give F-beta beside F1 (recall weighs beta times precision: 2 favours recall, 0.5 precision).",
        },
    ),
    _choice(
        ("--discontinuous",),
        ["fragments", "extent"],
        "fragments",
        "Match a discontinuous mention (BRAT 'T2 ORG 19 22;23 27') by its fragments, or as its extent.",
    ),
]
JUDGE_OPTIONS: list[Option] = [
    (
        ("--judge", "judge_path"),
        {
            "type": click.Path(exists=True, dir_okay=False, path_type=Path),
            "help": "A judge file (spanscore judge train) adding the learned criterion.",
        },
    ),
    _choice(
        ("--judge-credit",),
        ["accept", "probability"],
        "accept",
        "Credit of a judged pair: 1 when accepted, or the judge's probability.",
    ),
    _choice(
        ("--judge-unknown",),
        ["refuse", "agnostic"],
        "refuse",
        "A mention of a type the judge was not trained on: refuse, or judge it with the judge's type-agnostic model.",
    ),
]


def scoring_options(*, judge: bool = True) -> Callable[[F], F]:
    """The options that change a score (--credit, --matching, --min-overlap, --min-overlap-of,
    --types, --type-map, --zero-division, --beta, --discontinuous, and where asked --judge, --judge-credit). The
    command receives them as one ``Scoring`` in the parameter ``scoring``."""
    options = SCORING_OPTIONS + (JUDGE_OPTIONS if judge else [])

    def take(kwargs: dict[str, Any]) -> None:
        kwargs["scoring"] = scoring_from(kwargs)

    return lambda f: _options(f, options, take)


def scoring_from(kwargs: dict[str, Any]) -> Scoring:
    """Take the scoring options out of a command's keyword arguments (loading a --judge)."""
    from ..stages.scoring import Scoring

    judge: Any = None
    judge_name = None
    judge_path = kwargs.pop("judge_path", None)
    if judge_path is None and kwargs.pop("judge_unknown", "refuse") != "refuse":
        raise OptionError("--judge-unknown: give --judge")
    if judge_path is not None:
        judge = importlib.import_module("spanscore.programs.judge").load_judge(judge_path)
        judge = judge.with_unknown(kwargs.pop("judge_unknown", "refuse"))
        judge_name = getattr(judge, "name", judge_path.name)
    values = dict(
        credit=kwargs.pop("credit"),  # text: Scoring reads "0.5", "dice" and "iou"
        matching=kwargs.pop("matching"),
        min_overlap=kwargs.pop("min_overlap"),
        min_overlap_of=kwargs.pop("min_overlap_of"),
        types=parse_types(kwargs.pop("types")),
        type_map=parse_type_map(kwargs.pop("type_map")),
        zero_division=float(kwargs.pop("zero_division")),
        beta=kwargs.pop("beta"),
        discontinuous=kwargs.pop("discontinuous"),
        judge=judge,
        judge_credit=kwargs.pop("judge_credit", "accept"),
        judge_name=judge_name,
    )
    try:
        return Scoring.of(**values)
    except OptionError as exc:
        raise OptionError(as_flag(str(exc))) from None


def as_flag(message: str) -> str:
    """A library message that starts with a keyword's name, naming the command line's option instead."""
    from ..stages.scoring import SCORING_FIELDS

    name = message.split(" ", 1)[0]
    return "--" + name.replace("_", "-") + message[len(name) :] if name in SCORING_FIELDS else message


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


@dataclass(frozen=True)
class BucketRequest:
    """What --buckets, --train and --bucket-edges ask for, as ``evaluate``'s keywords."""

    buckets: tuple[str, ...] = ()
    train: Path | None = None
    bucket_edges: dict[str, list[float]] | None = None

    def keywords(self) -> dict[str, Any]:
        return {"buckets": self.buckets, "train": self.train, "bucket_edges": self.bucket_edges}


BUCKET_OPTIONS: list[Option] = [
    (
        ("--buckets",),
        {
            "metavar": "ATTR,...",
            "help": "Also score mentions by attribute: length, seen, consistency, frequency, sentence-length,"
            " density, oov, depth (0 outermost, 1 nested in one mention, 2+ deeper), or a document field"
            " (as --by reads one). seen, consistency, frequency and oov need"
            " --train.",
        },
    ),
    (
        ("--train",),
        {
            "type": click.Path(dir_okay=False, path_type=Path),
            "help": "The training corpus (in GOLD's format) that seen, consistency, frequency and oov compare with.",
        },
    ),
    (
        ("--bucket-edges",),
        {
            "multiple": True,
            "metavar": "ATTR=E1,E2,...",
            "help": "Where an attribute's buckets start (length=2,3,4 gives 1, 2, 3, 4+); repeat per attribute.",
        },
    ),
]


def bucket_options() -> Callable[[F], F]:
    """--buckets, --train and --bucket-edges, received as one ``BucketRequest`` in ``buckets``."""

    def take(kwargs: dict[str, Any]) -> None:
        kwargs["buckets"] = parse_buckets(kwargs.pop("buckets"), kwargs.pop("train"), kwargs.pop("bucket_edges"))

    return lambda f: _options(f, BUCKET_OPTIONS, take)


def parse_buckets(names: str | None, train: Path | None, edges: tuple[str, ...]) -> BucketRequest:
    chosen = tuple(n.strip() for n in (names or "").split(",") if n.strip())
    if (train is not None or edges) and not chosen:
        raise OptionError("--train and --bucket-edges go with --buckets: name the attributes (--buckets length,seen)")
    parsed: dict[str, list[float]] = {}
    for name, text in (key_values(edges, "--bucket-edges") or {}).items():
        try:
            parsed[name] = [float(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise OptionError(f"--bucket-edges {name}={text}: give numbers separated by commas") from None
        if not parsed[name]:
            raise OptionError(f"--bucket-edges {name}= gives no edges: give numbers separated by commas")
    return BucketRequest(chosen, train, parsed or None)
