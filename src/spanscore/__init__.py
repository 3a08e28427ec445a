"""spanscore: named-entity evaluation under every established criterion, with partial credit.

The face of the library: ``evaluate`` (one system: a ``Report``), ``compare`` (systems against
one reference: a ``Comparison``), ``load`` (two span sets in memory), the options objects
``Reading`` (how input is read) and ``Scoring`` (every option that changes a score), and the
errors (every one a ``SpanscoreError``).

>>> import spanscore
>>> report = spanscore.evaluate(reference="gold.conll", predicted="pred.conll")  # doctest: +SKIP
>>> report.metrics["overlap"]["f1"]  # doctest: +SKIP

The names below are imported on first use, so that the command line can set up the process
(spanscore.cli.main) before numpy is loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import compare, evaluate, load
    from .comparison import Comparison
    from .errors import InputError, MissingExtra, OptionError, SpanscoreError
    from .io.reading import Reading
    from .report import Report
    from .stages.counts import Counts, Options, count
    from .stages.scoring import Scoring
    from .stages.spans import Spans

_WHERE = {
    "compare": "api",
    "evaluate": "api",
    "load": "api",
    "Comparison": "comparison",
    "Counts": "stages.counts",
    "Options": "stages.counts",
    "count": "stages.counts",
    "InputError": "errors",
    "MissingExtra": "errors",
    "OptionError": "errors",
    "SpanscoreError": "errors",
    "Reading": "io.reading",
    "Report": "report",
    "Scoring": "stages.scoring",
    "Spans": "stages.spans",
}

__all__ = [
    "Comparison",
    "Counts",
    "InputError",
    "MissingExtra",
    "OptionError",
    "Options",
    "Reading",
    "Report",
    "Scoring",
    "Spans",
    "SpanscoreError",
    "__version__",
    "compare",
    "count",
    "evaluate",
    "load",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'spanscore' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
