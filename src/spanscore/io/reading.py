"""How to read a reference and a prediction: one frozen object, validated once, passed everywhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import OptionError
from ..stages.encoding import REPAIRS, Repair, check_repair, get_encoding

Format = Literal["conll", "jsonl", "labels", "spans", "brat", "label-studio", "doccano", "prodigy", "hf-datasets"]
Delimiter = Literal["auto", "tab", "whitespace"]
# Annotation tools' exports (``io.formats``): read into documents with text and character offsets,
# then scored as spanscore's JSONL.
ANNOTATION_FORMATS: tuple[str, ...] = ("brat", "label-studio", "doccano", "prodigy", "hf-datasets")
FORMATS: tuple[str, ...] = ("conll", "jsonl", "labels", "spans", *ANNOTATION_FORMATS)
FILE_FORMATS: tuple[str, ...] = ("conll", "jsonl", *ANNOTATION_FORMATS)
DELIMITERS: tuple[str, ...] = ("auto", "tab", "whitespace")
# Formats whose positions are tokens, and whose mentions come from decoding a label per token.
TOKEN_FORMATS: tuple[str, ...] = ("conll", "labels")


@dataclass(frozen=True)
class Reading:
    """Every option that says how input is read (like seqscore's LineSpec).

    ``labels`` is the label encoding's canonical name (aliases such as IOB2 are resolved), so two
    objects that read alike compare equal.

    >>> Reading(labels="iob2").labels
    'BIO'
    >>> Reading(format="jsonl", merged=True)
    Traceback (most recent call last):
    ...
    spanscore.errors.OptionError: merged=True reads one CoNLL file with token, gold and predicted columns
    """

    format: Format = "conll"
    labels: str = "BIO"
    repair: Repair = "conlleval"
    delimiter: Delimiter = "auto"
    token_column: int = 0
    label_column: int = -1
    merged: bool = False

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
        if self.merged and self.format != "conll":
            raise OptionError("merged=True reads one CoNLL file with token, gold and predicted columns")

    @property
    def token_based(self) -> bool:
        """Positions are tokens (CoNLL, label lists) rather than characters."""
        return self.format in TOKEN_FORMATS


DEFAULT_READING = Reading()  # CoNLL, BIO, conlleval repair, columns found automatically

__all__ = ["DEFAULT_READING", "DELIMITERS", "FILE_FORMATS", "FORMATS", "REPAIRS", "Delimiter", "Format", "Reading"]
