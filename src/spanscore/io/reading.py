"""How to read a reference and a prediction: one frozen object, validated once, passed everywhere."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import OptionError
from ..stages.schemes import REPAIRS, Repair, check_repair, get_encoding

if TYPE_CHECKING:
    from .strings import StringPolicy

Format = Literal[
    "conll", "jsonl", "labels", "spans", "brat", "label-studio", "doccano", "prodigy", "hf-datasets", "hf-pipeline",
    "docbin", "webanno",
]
Delimiter = Literal["auto", "tab", "whitespace"]
# Annotation tools' exports (``io.formats``): read into documents with text and character offsets,
# then scored as spanscore's JSONL.
ANNOTATION_FORMATS: tuple[str, ...] = (
    "brat", "label-studio", "doccano", "prodigy", "hf-datasets", "hf-pipeline", "docbin", "webanno",
)
FORMATS: tuple[str, ...] = ("conll", "jsonl", "labels", "spans", *ANNOTATION_FORMATS)
FILE_FORMATS: tuple[str, ...] = ("conll", "jsonl", *ANNOTATION_FORMATS)
DELIMITERS: tuple[str, ...] = ("auto", "tab", "whitespace")
# Formats whose positions are tokens, and whose mentions come from decoding a label per token.
TOKEN_FORMATS: tuple[str, ...] = ("conll", "labels")
# Formats read into documents with text and character offsets, which pair by document id across
# formats; a prediction may also be mentions given as strings, located in the reference's text.
TEXT_FORMATS: tuple[str, ...] = ("jsonl", *ANNOTATION_FORMATS)
# Predictions as language models and span taggers give them: strings, with places where the tool
# gives them (``io.strings``; ``io.formats.langextract``, ``io.formats.gliner``), located in the reference.
MODEL_FORMATS: tuple[str, ...] = ("strings", "langextract", "gliner")
PREDICTED_FORMATS: tuple[str, ...] = (*MODEL_FORMATS, *TEXT_FORMATS)

ReaderOptions = tuple[tuple[str, str], ...]


def reader_options(name: str, value: Any) -> ReaderOptions:
    """A format reader's options (``reference_options``, ``predicted_options``) as sorted (key,
    value) pairs of strings, so that two readings alike compare equal; a value of None is the
    reader's default, and is left out. ``value`` is a mapping, (key, value) pairs, or None.

    >>> reader_options("predicted_options", {"source": "predictions", "annotator": 3, "split": None})
    (('annotator', '3'), ('source', 'predictions'))
    """
    if value is None:
        return ()
    if isinstance(value, str | bytes) or not isinstance(value, Mapping | Iterable):
        raise OptionError(f"{name} must be a mapping from a reader option's name to its value")
    items = value.items() if isinstance(value, Mapping) else value
    try:
        pairs = {str(k): v for k, v in items if v is not None}
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a mapping from a reader option's name to its value") from None
    for key, v in pairs.items():
        # A list or a mapping made text ("[14]") would select nothing and be reported as given.
        if not isinstance(v, str | int | float | bool):
            raise OptionError(f"{name}: {key} is a {type(v).__name__} ({v!r}): give one text, number, or true/false")
    return tuple(sorted((k, str(v)) for k, v in pairs.items()))


def _takes(name: str, fmt: str, pairs: ReaderOptions) -> None:
    """Refuse, by name, an option the side's reader does not take: ignored, it would leave the
    user believing the file was read as asked."""
    from .formats import READERS, reader_keywords  # here: most readings have no reader options

    takes = reader_keywords(READERS[fmt]) if fmt in READERS and fmt in ANNOTATION_FORMATS else []
    side = name.removesuffix("_options")
    for key, _ in pairs:
        if key not in takes:
            offer = f"it takes {', '.join(takes)}" if takes else "it takes none"
            raise OptionError(f"{side} option {key!r}: the {fmt} reader has no such option ({offer})")


def _check_encoding(encoding: object, fmt: str) -> str:
    """The encoding's canonical name; refused where it could not read CoNLL's bytes (their
    newlines, tabs and spaces must be the ASCII bytes, as in latin-1, cp1252 or UTF-8)."""
    import codecs

    if not isinstance(encoding, str):
        raise OptionError(f"encoding must be the name of a text encoding, not {type(encoding).__name__}")
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise OptionError(f"unknown encoding {encoding!r}: use utf-8, latin-1, cp1252, ...") from None
    if name != "utf-8" and fmt != "conll":
        raise OptionError(f"encoding {encoding!r} is for CoNLL files; {fmt} files are read as UTF-8")
    try:
        ascii_compatible = "\n\t #-AZaz09".encode(name) == b"\n\t #-AZaz09"
    except (UnicodeError, LookupError):
        ascii_compatible = False
    if not ascii_compatible:
        raise OptionError(f"encoding {encoding!r} does not keep ASCII's bytes: convert the file to UTF-8 first")
    return name


def _check_levels(levels: object, reading: Reading) -> tuple[int, ...] | tuple[str, ...]:
    """The nesting levels, checked: a CoNLL file's label columns (integers, distinct, not merged),
    or the names of the levels of JSONL mentions (their ``level`` field; distinct, both sides JSONL)."""
    if isinstance(levels, str | bytes) or not isinstance(levels, Iterable):
        raise OptionError(
            "levels must be label column indexes, outermost first (such as (2, 3)), or JSONL level names"
            f" (such as ('outer', 'inner')), not {levels!r}"
        )
    out = tuple(levels)
    if not out:
        return ()
    if all(isinstance(c, str) for c in out):
        return _check_level_names(out, reading)
    if any(not isinstance(c, int) or isinstance(c, bool) for c in out):
        raise OptionError(f"levels must be integer column indexes, or level names, not {out!r}")
    if len(out) < 2:
        raise OptionError("levels names two label columns or more (one column is --label-column)")
    if len(set(out)) < len(out):
        raise OptionError(f"levels names a column twice: {out!r}")
    if reading.format != "conll" or reading.merged:
        raise OptionError("levels reads label columns of CoNLL files (not merged files); JSONL's levels go by name")
    if reading.label_column != -1:
        raise OptionError("give the label columns as levels, or one as label_column (--label-column), not both")
    return out


def _check_level_names(names: tuple[str, ...], reading: Reading) -> tuple[str, ...]:
    """Level names: each JSONL mention's ``level`` field says which it belongs to; in a spaCy
    DocBin, each level is a span group."""
    if reading.format not in ("jsonl", "docbin") or reading.predicted_format is not None:
        raise OptionError(
            f"levels by name ({', '.join(names)}) read the level field of JSONL mentions, or a DocBin's span"
            " groups: both sides JSONL (or DocBin), no predicted_format (a CoNLL file's levels are its label"
            " columns: levels=(2, 3))"
        )
    if any(not n or n != n.strip() or "," in n for n in names):
        raise OptionError(f"levels names each level by a word, as its mentions' level field holds it, not {names!r}")
    if len(set(names)) < len(names):
        raise OptionError(f"levels names a level twice: {names!r}")
    if "germeval" in names:
        raise OptionError("a level may not be named germeval: the name of GermEval 2014's measures in the results")
    return names


@dataclass(frozen=True)
class Reading:
    """Every option that says how input is read (like seqscore's LineSpec).

    ``labels`` is the label encoding's canonical name (aliases such as IOB2 are resolved), so two
    objects that read alike compare equal.

    ```pycon
    >>> Reading(labels="iob2").labels
    'BIO'
    >>> Reading(format="jsonl", merged=True)
    Traceback (most recent call last):
    ...
    spanscore.errors.OptionError: merged=True reads one CoNLL file with token, gold and predicted columns

    ```

    How each side is read: ``predicted_format`` is the prediction's format where it differs from
    ``format`` (``"strings"``: mentions without offsets, located in the reference's text under
    the ``strings`` policy); ``reference_options`` and ``predicted_options`` are the options of an
    annotation format's reader (``io.formats``), as sorted pairs.

    ```pycon
    >>> r = Reading(format="brat", predicted_format="strings", reference_options={"drop_fragments": True})
    >>> r.strings, r.reference_options
    (StringPolicy(normalised=True, fuzzy=0.85, invalid='keep'), (('drop_fragments', 'True'),))
    >>> r.signature_fields()
    {'format': 'brat', 'labels': 'spans', 'repair': 'n/a'}
    >>> r.tail_fields()
    {'predicted-format': 'strings', 'locate': 'exact+normalised+fuzzy0.85'}

    ```

    CoNLL files are UTF-8 unless ``encoding`` names another (``predicted_encoding``: the
    prediction's, where it differs); ``header`` skips a first line naming the columns (HIPE):

    ```pycon
    >>> Reading(encoding="latin1", header=True).encoding
    'iso8859-1'

    ```

    ``levels`` names a CoNLL file's label columns of nesting levels, outermost first (GermEval
    2014's outer and inner columns): their mentions are read as one set, and each level is also
    scored alone (``Report.levels``). In JSONL, levels go by the name in each mention's ``level``
    field (as ``convert --levels`` writes it); mentions at other levels are left out:

    ```pycon
    >>> r = Reading(token_column=1, levels=[2, 3])
    >>> r.levels, r.signature_fields()["format"]
    ((2, 3), 'conll-levels2')
    >>> Reading(format="jsonl", levels=["outer", "inner"]).signature_fields()["format"]
    'jsonl-levels(outer,inner)'

    ```

    An option the side's reader does not take is refused by name (spanscore's JSONL, CoNLL and
    strings take none):

    ```pycon
    >>> Reading(format="jsonl", reference_options={"source": "predictions"})
    Traceback (most recent call last):
    ...
    spanscore.errors.OptionError: reference option 'source': the jsonl reader has no such option (it takes none)

    ```
    """

    format: Format = "conll"
    labels: str = "BIO"
    repair: Repair = "conlleval"
    delimiter: Delimiter = "auto"
    token_column: int = 0
    label_column: int = -1
    merged: bool = False
    # A merged file's predicted labels' column, the gold labels' being ``label_column`` (Flair's
    # "token gold predicted score" lines); None: the last two columns are gold and predicted.
    predicted_column: int | None = None
    predicted_format: str | None = None  # None: as ``format``
    reference_options: ReaderOptions = ()
    predicted_options: ReaderOptions = ()
    strings: StringPolicy | None = None  # set (by default StringPolicy()) only for predicted_format="strings"
    encoding: str = "utf-8"  # of CoNLL files; other formats are UTF-8
    predicted_encoding: str | None = None  # the prediction's, where it differs (None: ``encoding``)
    header: bool = False  # CoNLL: the first line names the columns (HIPE's TSV)
    # CoNLL: one label column per nesting level, outermost first (GermEval 2014's outer and inner
    # columns); JSONL: the names of levels in its mentions' ``level`` field. Their mentions are
    # scored together, and each level alone (``Report.levels``).
    levels: tuple[int, ...] | tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise OptionError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        if not isinstance(self.labels, str):
            raise OptionError(f"labels must be the name of a label encoding, not {type(self.labels).__name__}")
        object.__setattr__(self, "labels", get_encoding(self.labels).name)
        check_repair(self.repair)
        if self.delimiter not in DELIMITERS:
            raise OptionError(f"unknown delimiter {self.delimiter!r}: use one of {', '.join(DELIMITERS)}")
        for name in ("token_column", "label_column"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise OptionError(f"{name} must be an integer column index, not {value!r}")
        object.__setattr__(self, "encoding", _check_encoding(self.encoding, self.format))
        if self.predicted_encoding is not None:
            object.__setattr__(self, "predicted_encoding", _check_encoding(self.predicted_encoding, self.format))
        if not isinstance(self.header, bool):
            raise OptionError(f"header must be True or False, not {self.header!r}")
        if self.header and self.format != "conll":
            raise OptionError("header=True is for CoNLL files whose first line names the columns")
        if self.merged and self.format != "conll":
            raise OptionError("merged=True reads one CoNLL file with token, gold and predicted columns")
        object.__setattr__(self, "levels", _check_levels(self.levels, self))
        if self.predicted_column is not None:
            value = self.predicted_column
            if not isinstance(value, int) or isinstance(value, bool):
                raise OptionError(f"predicted_column must be an integer column index, not {value!r}")
            if not self.merged:
                raise OptionError(
                    "predicted_column names the predicted labels' column of a merged file: give merged=True too"
                )
        side = self.predicted_format
        if side is not None and (side not in PREDICTED_FORMATS or self.format not in TEXT_FORMATS):
            raise OptionError(
                f"mentions with character offsets are read from {', '.join(TEXT_FORMATS)} (and predictions also as"
                f" strings); not {self.format} against {side}"
            )
        for name, fmt in (("reference_options", self.format), ("predicted_options", side or self.format)):
            pairs = reader_options(name, getattr(self, name))
            object.__setattr__(self, name, pairs)
            if pairs:
                _takes(name, fmt, pairs)
        policy = self.strings
        if policy is not None or side in MODEL_FORMATS:
            # Here, not at the top: most readings locate no strings, and the command line builds its
            # reading before numpy (which io.strings needs) is loaded.
            from .strings import StringPolicy

            if policy is not None and not isinstance(policy, StringPolicy):
                raise OptionError(
                    f"strings must be a StringPolicy (how strings are located), not {type(policy).__name__}"
                )
            if side not in MODEL_FORMATS:
                policy = None  # nothing to locate: the policy cannot change a number, and two such readings are alike
            elif policy is None:
                policy = StringPolicy()
        object.__setattr__(self, "strings", policy)

    def one_level(self, what: str) -> None:
        """Refuse ``levels`` where ``what`` reads one label column (it would read --label-column alone)."""
        if self.levels:
            columns = ", ".join(map(str, self.levels))
            raise OptionError(f"{what}: one label column at a time; give --label-column (one of {columns}), not levels")

    @property
    def level_columns(self) -> tuple[int, ...]:
        """The label columns of a CoNLL file's levels (none where levels go by name)."""
        return tuple(c for c in self.levels if isinstance(c, int))

    @property
    def level_names(self) -> tuple[str, ...]:
        """The names of JSONL levels (none where levels are CoNLL columns)."""
        return tuple(c for c in self.levels if isinstance(c, str))

    @property
    def prediction_encoding(self) -> str:
        """The text encoding of a CoNLL prediction."""
        return self.encoding if self.predicted_encoding is None else self.predicted_encoding

    @property
    def token_based(self) -> bool:
        """Positions are tokens (CoNLL, label lists) rather than characters."""
        return self.format in TOKEN_FORMATS

    def signature_fields(self) -> dict[str, str]:
        """The signature's first entries: the format, and the label encoding and repair policy
        where labels are decoded per token."""
        token_based = self.token_based
        return {
            "format": self.format
            + ("-merged" if self.merged else "")
            + (f"-levels{len(self.level_columns)}" if self.level_columns else "")
            + (f"-levels({','.join(self.level_names)})" if self.level_names else ""),
            "labels": self.labels if token_based else "spans",
            "repair": self.repair if token_based else "n/a",
        }

    def tail_fields(self) -> dict[str, str]:
        """The signature's last entries: the prediction's format where it differs, and how
        strings were located."""
        out: dict[str, str] = {}
        if self.predicted_format is not None and self.predicted_format != self.format:
            out["predicted-format"] = self.predicted_format
        if self.strings is not None:
            out["locate"] = self.strings.signature().removeprefix("strings:")
        return out


def level_name(k: int) -> str:
    """The name of nesting level ``k`` (0 outermost): outer, inner, then level3, level4, ..."""
    return ("outer", "inner")[k] if k < 2 else f"level{k + 1}"


DEFAULT_READING = Reading()  # CoNLL, BIO, conlleval repair, columns found automatically

__all__ = [
    "ANNOTATION_FORMATS",
    "DEFAULT_READING",
    "DELIMITERS",
    "FILE_FORMATS",
    "FORMATS",
    "MODEL_FORMATS",
    "PREDICTED_FORMATS",
    "REPAIRS",
    "TEXT_FORMATS",
    "Delimiter",
    "Format",
    "ReaderOptions",
    "Reading",
    "level_name",
    "reader_options",
]
