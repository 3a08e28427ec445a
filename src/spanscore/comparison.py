"""``Comparison``: systems scored against one reference, with intervals and paired tests.

What ``spanscore.compare`` returns; ``to_dict`` is the stable JSON that ``spanscore compare
--json`` prints (docs/compare.md).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .analysis.reliability import few_units_warnings, narrow_note
from .analysis.significance import Comparison as PairedTests
from .analysis.significance import Resampling, comparison_dict
from .errors import OptionError
from .presentation import notebook
from .report import signature_hash
from .results import ComparisonResult, PairedTest

if TYPE_CHECKING:
    from .report import Report


def system_names(systems: Sequence[Any]) -> list[str]:
    """Each prediction file's shortest unique path suffix (its name where names differ);
    ``systemN`` for predictions given as Python data.

    >>> system_names(["runs/crf.conll", "runs/bilstm.conll"])
    ['crf.conll', 'bilstm.conll']
    >>> system_names(["exp/a/run1/pred.conll", "exp/b/run1/pred.conll"])
    ['a/run1/pred.conll', 'b/run1/pred.conll']
    >>> system_names([[["B-PER"]], [["O"]]])
    ['system1', 'system2']
    """
    parts = [Path(s).parts if isinstance(s, str | os.PathLike) else None for s in systems]
    names = []
    for k, mine in enumerate(parts):
        if mine is None:
            names.append(f"system{k + 1}")
            continue
        others = [p for j, p in enumerate(parts) if j != k and p is not None]
        depth = next((d for d in range(1, len(mine) + 1) if all(p[-d:] != mine[-d:] for p in others)), len(mine))
        names.append("/".join(mine[-depth:]))
    if len(set(names)) == len(names):
        return names
    raise OptionError("a prediction file is given twice")


def _discontinuous(report: Report) -> Any:
    """``report.to_dict()["discontinuous"]`` (None where neither side has a discontinuous
    mention), without the rest of the report's dict: its macro over documents alone, from the
    per-document state a comparison keeps, took 4 to 5 ms of CPU a system on ``compare``'s serial end."""
    from .report import _clean
    from .stages.scores import discontinuous_block

    reading = str(report.options.get("discontinuous", "fragments"))
    block = discontinuous_block(report.counts, report.zero_division, reading, report.unit_kind)
    return None if block is None else _clean(block)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


@dataclass
class Comparison:
    """Each system's scores with intervals, and each system against the first (difference =
    other - first, its interval, bootstrap and randomisation p-values), per score and metric.

    ``repr`` is one line, ``str`` the terminal's tables (``to_text``).

    :ivar tests: the intervals and paired tests of every system and score.
    :ivar files: each system's prediction file (None for Python data).
    :ivar signature: the first system's evaluation signature.
    :ivar resampling: the interval level, resamples, trials and seed.
    :ivar unit: what was resampled: ``document`` (or ``sentence`` where there are no documents).
    :ivar alpha: the significance level of the rankings' notes and the few-units warnings.
    :ivar reports: each system's ``Report``.
    :ivar groups: the per-type and per-bucket comparisons, where asked for.
    :ivar llm_classes: each system's LLM error classes with intervals, and each against the
        first, where mentions were given as strings.
    :ivar levels: where there are nesting levels, each level's comparison (``levels``) and each
        system's GermEval 2014 measures (``germeval``).
    """

    tests: PairedTests
    files: list[str | None]
    signature: str
    resampling: Resampling
    unit: str
    alpha: float = 0.05
    reports: list[Report] = field(default_factory=list, repr=False)
    groups: dict[str, Any] = field(default_factory=dict)  # per type and per bucket of each attribute
    llm_classes: dict[str, Any] | None = None  # LLM error classes with intervals (``analysis.llm_classes``)
    levels: dict[str, Any] | None = None  # each nesting level compared, and GermEval 2014's measures
    _dict: ComparisonResult | None = field(default=None, repr=False)

    @property
    def names(self) -> list[str]:
        """The systems' names, in the order given."""
        return list(self.tests.names)

    def scores(self, system: int | str) -> dict[str, dict[str, dict[str, float | None]]]:
        """A system's scores with intervals: {score name: {metric: {value, low, high}}}."""
        return self.tests.intervals[self._index(system)]

    def difference(self, system: int | str, criterion: str, metric: str = "f1") -> PairedTest:
        """A system against the first under one score: difference, low, high, p_bootstrap,
        p_randomization."""
        name = self.names[self._index(system)]
        for entry in self.tests.comparisons:
            if entry["b"] == name and entry["criterion"] == criterion and entry["metric"] == metric:
                return cast(PairedTest, dict(entry))
        raise OptionError(f"no comparison of {name} under {criterion} {metric}: the first system is the baseline")

    @property
    def rankings(self) -> dict[str, list[str]]:
        """The systems by F1 under each score, best first."""
        return dict(self.to_dict()["rankings"])

    def _index(self, system: int | str) -> int:
        if isinstance(system, int) and not isinstance(system, bool):
            if not 0 <= system < len(self.names):
                raise OptionError(f"there are {len(self.names)} systems, not {system + 1}")
            return system
        if system not in self.names:
            raise OptionError(f"no system named {system!r}: the systems are {', '.join(self.names)}")
        return self.names.index(system)

    def to_dict(self) -> ComparisonResult:
        """The JSON of ``spanscore compare --json``."""
        if self._dict is None:
            self._dict = comparison_dict(
                self.tests,
                files=self.files,
                signature=self.signature,
                resampling=self.resampling,
                unit=self.unit,
                alpha=self.alpha,
            )
            if "per_type" in self.groups:
                self._dict["per_type"] = self.groups["per_type"]
            buckets = {k: v for k, v in self.groups.items() if k != "per_type"}
            if buckets:
                self._dict["buckets"] = buckets
            if self.llm_classes is not None:
                self._dict["llm_classes"] = copy.deepcopy(self.llm_classes)
            # Each system's figures of Dai et al. (2020), where a side has discontinuous mentions.
            figures = {n: _discontinuous(r) for n, r in zip(self.names, self.reports, strict=False)}
            if any(figures.values()):
                self._dict["discontinuous"] = {n: f for n, f in figures.items() if f is not None}
            if self.levels is not None:
                self._dict["levels"] = copy.deepcopy(self.levels["levels"])
                if "germeval" in self.levels:
                    self._dict["germeval"] = copy.deepcopy(self.levels["germeval"])
            notes = few_units_warnings(
                self._dict["documents"], self.unit, alpha=self.alpha, trials=self.resampling.trials
            )
            if notes:
                self._dict["warnings"] = notes
            note = narrow_note(self._dict["documents"], self.unit)
            if note is not None:  # what the interval tables' titles say
                self._dict["note"] = note
        return copy.deepcopy(self._dict)

    def to_json(self, indent: int | None = 2) -> str:
        """``to_dict`` as JSON text, as ``spanscore compare --json`` prints it."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def __repr__(self) -> str:
        data = self.to_dict()
        systems = ", ".join(
            f"{s['name']} {_pct(self.scores(k)['strict']['f1']['value'])}" for k, s in enumerate(data["systems"])
        )
        return (
            f"<Comparison of {len(self.names)} systems over {data['documents']} {self.unit}s;"
            f" strict F1 {systems}; signature {signature_hash(data['signature'])}>"
        )

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self, width: int = 80) -> str:
        """The tables ``spanscore compare`` prints for this comparison, fitted to ``width`` columns."""
        from .presentation.terminal import comparison_text

        return comparison_text(self.to_dict(), width=width)

    def _repr_html_(self) -> str:
        return notebook.comparison_html(self.to_dict())

    def to_pandas(self, what: str = "scores") -> Any:
        """A tidy pandas DataFrame (the ``pandas`` extra): ``"scores"``, one row per system, score
        family, score and metric with ``value``, ``low`` and ``high``; or ``"differences"``, one row
        per system against the first, with the interval and both p-values."""
        if what == "scores":
            return notebook.comparison_frame(self.to_dict())
        if what == "differences":
            return notebook.differences_frame(self.to_dict())
        raise OptionError(f"to_pandas gives scores or differences, not {what!r}")
