"""Whether intervals and significance tests rest on enough resampling units to mean much.

A bootstrap over a handful of documents resamples from a handful of values: its percentile
interval is as coarse as they are, and falls short of its nominal coverage (Efron and Tibshirani
1993 suggest resampling at least a few dozen units; we warn below ``MIN_UNITS``). A paired
randomisation test over n units has 2^n ways to swap them, two of which (no swap, all swapped)
give the observed difference back, so its p-value cannot fall below 2 / 2^n (nor below
1 / (trials + 1) with random trials): where that floor is above the significance level, no
difference can be found significant, however large.

>>> for message in few_units_warnings(3, "document", alpha=0.05, trials=1000):
...     print(message[:72])
intervals over 3 documents are coarse: bootstrap intervals need at least
a randomisation p-value over 3 documents cannot fall below 0.25 (2 of th
>>> few_units_warnings(200, "sentence", alpha=0.05, trials=1000)
[]
>>> narrow_note(60, "document")
'fewer than 100 documents: the intervals run narrow (see docs/compare.md, coverage)'
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import FewUnitsWarning

MIN_UNITS = 30
NARROW_UNITS = 100  # below this many units, 95% percentile intervals cover about 93% (the coverage study)


def narrow_note(units: int, unit: str) -> str | None:
    """The note that intervals over fewer than ``NARROW_UNITS`` units run narrow (the interval
    tables' titles and the JSON's ``note`` say it; below ``MIN_UNITS`` a warning is raised too)."""
    if units >= NARROW_UNITS:
        return None
    return f"fewer than {NARROW_UNITS} {unit}s: the intervals run narrow (see docs/compare.md, coverage)"


def randomization_floor(units: int, trials: int | None = None) -> float:
    """The smallest p-value a paired randomisation test over ``units`` can give."""
    floor = 2.0 ** (1 - units) if units > 0 else 1.0
    if trials is not None:
        floor = max(floor, 1 / (trials + 1))
    return min(floor, 1.0)


def few_units_warnings(units: int, unit: str, *, alpha: float | None = None, trials: int | None = None) -> list[str]:
    """One message per reason the intervals (and, with ``alpha``, the tests) over ``units`` resampling
    units of kind ``unit`` mean little; none when there are enough."""
    out = []
    if units < MIN_UNITS:
        out.append(
            f"intervals over {units} {unit}{'' if units == 1 else 's'} are coarse: bootstrap intervals need at"
            f" least {MIN_UNITS} units to approach their nominal coverage"
        )
    if alpha is not None:
        floor = randomization_floor(units, trials)
        if floor > alpha:
            if floor == 2.0 ** (1 - units):
                why = f"2 of the 2^{units} swaps give the observed difference back"
            else:
                why = f"{trials} trials"
            out.append(
                f"a randomisation p-value over {units} {unit}s cannot fall below {floor:.3g} ({why}),"
                f" above the significance level {alpha:g}: no difference can be significant"
            )
    return out


def group_warnings(groups: list[dict[str, Any]], unit: str, field: str) -> list[str]:
    """One message naming the groups of ``evaluate(by=...)`` whose intervals rest on too few units."""
    few = [f"{g['value']} ({g['documents']})" for g in groups if "intervals" in g and g["documents"] < MIN_UNITS]
    if not few:
        return []
    return [
        f"the intervals of {len(few)} {field} group{'' if len(few) == 1 else 's'} rest on fewer than {MIN_UNITS}"
        f" {unit}s: {', '.join(few)}"
    ]


def warn(messages: list[str], stacklevel: int = 3) -> None:
    """Each message as a ``FewUnitsWarning``."""
    for message in messages:
        warnings.warn(message, FewUnitsWarning, stacklevel=stacklevel)
