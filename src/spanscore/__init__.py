"""spanscore: named-entity evaluation under every established criterion, with partial credit.

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
    from .api import evaluate, load
    from .errors import InputError, OptionError, SpanscoreError
    from .report import Report
    from .stages.counts import Counts, Options, count
    from .stages.spans import Spans

_WHERE = {
    "evaluate": "api",
    "load": "api",
    "Counts": "counts",
    "Options": "counts",
    "count": "counts",
    "InputError": "errors",
    "OptionError": "errors",
    "SpanscoreError": "errors",
    "Report": "report",
    "Spans": "spans",
}

__all__ = [
    "Counts",
    "InputError",
    "OptionError",
    "Options",
    "Report",
    "Spans",
    "SpanscoreError",
    "__version__",
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
