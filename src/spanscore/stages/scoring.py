"""``Scoring``: every option that changes a score, in one frozen object validated once.

``evaluate``, ``compare``, the command line, the training-loop integrations and the drop-ins all
build one ``Scoring`` and pass it on; nothing downstream parses an option again. Its
``signature_fields`` are what the signature records of it (sacrebleu's idea: a string that names
every option that can change a number).

>>> s = Scoring(credit="dice", type_map={"PER": "PERSON", "MISC": "O"})
>>> s.credit, s.type_map
('dice', (('MISC', None), ('PER', 'PERSON')))
>>> Scoring(credit=1.5)
Traceback (most recent call last):
...
spanscore.errors.OptionError: credit must be between 0 and 1, not 1.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from ..errors import OptionError
from ..runtime.records import record
from .counts import CreditRule, Discontinuous, MinOverlapOf, Options, credit_label
from .matching import Method
from .scores import check_beta, check_zero_division
from .spans import Spans, unify

if TYPE_CHECKING:
    from .judging import Judge, JudgeCredit  # imported where a judge is given


def parse_credit(value: Any) -> CreditRule:
    """A partial-match credit as given (a number, its text, ``"dice"`` or ``"iou"``), checked."""
    if isinstance(value, str):
        if value in ("dice", "iou"):
            return value  # type: ignore[return-value]
        try:
            number = float(value)
        except ValueError:
            raise OptionError(f"credit takes a number in [0, 1], dice or iou, not {value!r}") from None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        raise OptionError(f"credit takes a number in [0, 1], dice or iou, not {value!r}")
    return number  # the range is checked with the other matching options (``counts.Options``)


def parse_type_map(value: Any) -> tuple[tuple[str, str | None], ...]:
    """A renaming of types as sorted (old, new) pairs; a new name of None, "" or "O" drops the type."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Mapping | Iterable):
        raise OptionError("type_map must be a mapping from old type to new type")
    items = value.items() if isinstance(value, Mapping) else value
    try:
        pairs = {str(k): (None if v in (None, "", "O") else str(v)) for k, v in items}
    except (TypeError, ValueError):
        raise OptionError("type_map must be a mapping from old type to new type") from None
    return tuple(sorted(pairs.items()))


def parse_types(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        raise OptionError(f"types must be a list of type names, not the string {value!r}")
    if not isinstance(value, Sequence | set | frozenset):
        raise OptionError(f"types must be a list of type names, not {value!r}")
    return tuple(str(t) for t in value)


@record
class TypeSelection:
    """``type_map`` renames types (to None: dropped), then only ``types`` are kept (None: all)."""

    type_map: tuple[tuple[str, str | None], ...] = ()
    types: tuple[str, ...] | None = None

    def apply(self, reference: Spans, predicted: Spans) -> tuple[Spans, Spans]:
        if not self.type_map and self.types is None:
            return reference, predicted
        mapping = dict(self.type_map)
        return unify(reference.map_types(mapping, self.types), predicted.map_types(mapping, self.types))

    def check(self, seen: frozenset[str]) -> None:
        """A type that ``type_map`` or ``types`` names must occur in the input: a misspelt name
        would otherwise score nothing, silently."""
        present = ", ".join(sorted(seen)) or "none"
        unknown = sorted(k for k, _ in self.type_map if k not in seen)
        if unknown:
            raise OptionError(f"type_map names {', '.join(unknown)}, which neither side has; the types are: {present}")
        if self.types is not None:
            mapping = dict(self.type_map)
            kept = {mapping.get(t, t) for t in seen} - {None}
            missing = sorted(t for t in self.types if t not in kept)
            if missing:
                after = ", ".join(sorted(t for t in kept if t is not None)) or "none"
                raise OptionError(f"types names {', '.join(missing)}, which neither side has; the types are: {after}")


class ScoringOptions(TypedDict, total=False):
    """``Scoring``'s fields as keywords (``evaluate(credit=..., matching=...)``)."""

    credit: CreditRule | str
    matching: Method
    min_overlap: float
    min_overlap_of: MinOverlapOf
    types: Sequence[str] | None
    type_map: Mapping[str, str] | None
    zero_division: float
    beta: float
    judge: Judge | None
    judge_credit: JudgeCredit
    judge_name: str | None
    discontinuous: Discontinuous


SCORING_FIELDS: tuple[str, ...] = tuple(ScoringOptions.__annotations__)


@dataclass(frozen=True)
class Scoring:
    """Every option that changes a score.

    - ``credit``: credit of a partial match, a number in [0, 1], or ``"dice"`` / ``"iou"`` for
      credit proportional to the overlap (text such as ``"0.5"`` is read as a number);
    - ``matching``: ``"optimal"`` (maximise credit) or ``"greedy"`` (Kong and Sullivan's
      first-found rule);
    - ``min_overlap`` / ``min_overlap_of``: partial pairs overlapping less than this fraction of
      the reference, the prediction or both are dropped;
    - ``types`` / ``type_map``: rename types (a mapping; ``None``, ``""`` or ``"O"`` drops one),
      then keep only ``types``;
    - ``zero_division``: the score where a denominator is zero (0, 1 or nan);
    - ``beta``: F-beta beside F1 where not 1;
    - ``judge`` / ``judge_credit`` / ``judge_name``: a learned judge adding the ``learned``
      criterion, its credit (``"accept"``: 1 when accepted; ``"probability"``), and its name in
      the signature (by default the judge's own ``name``);
    - ``discontinuous``: how a discontinuous mention (BRAT's ``T2 ORG 19 22;23 27``) is matched:
      ``"fragments"`` (every fragment's boundaries, the units the fragments share) or
      ``"extent"`` (as one span from its first fragment's start to its last one's end).
    """

    credit: CreditRule = 0.5
    matching: Method = "optimal"
    min_overlap: float = 0.0
    min_overlap_of: MinOverlapOf = "reference"
    types: tuple[str, ...] | None = None
    type_map: tuple[tuple[str, str | None], ...] = ()
    zero_division: float = 0.0
    beta: float = 1.0
    judge: Judge | None = field(default=None, compare=False)
    judge_credit: JudgeCredit = "accept"
    judge_name: str | None = None
    discontinuous: Discontinuous = "fragments"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "credit", parse_credit(self.credit))
        if self.matching not in ("optimal", "greedy"):
            raise OptionError(f"matching must be optimal or greedy, not {self.matching!r}")
        mo = self.min_overlap
        if isinstance(mo, bool) or not isinstance(mo, int | float):
            raise OptionError(f"min_overlap must be a number between 0 and 1, not {mo!r}")
        set_(self, "min_overlap", float(mo))
        set_(self, "types", parse_types(self.types))
        set_(self, "type_map", parse_type_map(self.type_map))
        zd = self.zero_division
        if isinstance(zd, bool) or not isinstance(zd, int | float):
            raise OptionError(f"zero_division must be 0, 1 or nan, not {zd!r}")
        set_(self, "zero_division", check_zero_division(float(zd)))
        set_(self, "beta", check_beta(self.beta))
        if self.judge_credit not in ("accept", "probability"):
            raise OptionError("judge_credit must be accept or probability")
        if self.judge is not None and not callable(getattr(self.judge, "accept_probability", None)):
            raise OptionError(f"judge is a judge (spanscore.programs.judge.load_judge(path)), not {self.judge!r}")
        if self.judge_name is not None and not isinstance(self.judge_name, str):
            raise OptionError(f"judge_name is a string, not {self.judge_name!r}")
        if self.judge is not None and self.judge_name is None:
            set_(self, "judge_name", str(getattr(self.judge, "name", None) or type(self.judge).__name__))
        self.options  # noqa: B018  # checks the matching options now, not in the first chunk

    @classmethod
    def of(cls, scoring: Scoring | None = None, **options: Any) -> Scoring:
        """``scoring`` with ``options`` (``Scoring``'s fields by name) put in; a name that is not a
        field is refused."""
        unknown = sorted(set(options) - set(SCORING_FIELDS))
        if unknown:
            raise OptionError(f"unknown scoring option {unknown[0]!r}: use {', '.join(SCORING_FIELDS)}")
        base = scoring if scoring is not None else cls()
        if not options:
            return base
        fields = {name: getattr(base, name) for name in SCORING_FIELDS}
        return cls(**{**fields, **options})

    @property
    def options(self) -> Options:
        """The options of matching and crediting pairs."""
        return Options(
            credit=self.credit,
            matching=self.matching,
            min_overlap=self.min_overlap,
            min_overlap_of=self.min_overlap_of,
            discontinuous=self.discontinuous,
        )

    @property
    def selection(self) -> TypeSelection:
        return TypeSelection(self.type_map, self.types)

    def signature_fields(self) -> dict[str, str]:
        """The signature's entries for these options (between the reading's and the units)."""
        mo = self.min_overlap
        return {
            "credit": credit_label(self.credit),
            "matching": self.matching,
            "min-overlap": f"{mo:g}" + (f"/{self.min_overlap_of}" if mo else ""),
            "types": ",".join(sorted(self.types)) if self.types is not None else "all",
            "type-map": ",".join(f"{k}={v or 'O'}" for k, v in self.type_map) or "none",
            "zero-division": f"{self.zero_division:g}",
        }

    def tail_fields(self) -> dict[str, str]:
        """The judge, beta and discontinuous entries, which follow the units (each where it is
        not the default)."""
        out: dict[str, str] = {}
        if self.judge is not None:
            out["judge"] = f"{self.judge_name}/{self.judge_credit}"
        if self.beta != 1.0:
            out["beta"] = f"{self.beta:g}"
        if self.discontinuous != "fragments":
            out["discontinuous"] = self.discontinuous
        return out


__all__ = [
    "SCORING_FIELDS",
    "Scoring",
    "ScoringOptions",
    "TypeSelection",
    "parse_credit",
    "parse_type_map",
    "parse_types",
]
