"""Analysis outputs of an evaluation: ``spanscore evaluate GOLD PRED --report DIR``.

``write_report`` writes summary.md, summary.json, one CSV of matched pairs per criterion, the
error files, the type confusion matrix (confusion.csv), the charts (PNG) and one self-contained
report.html (see docs/report.md). Charts need
the optional extra ``report`` (matplotlib); without it everything else is still written and the
missing charts are noted in summary.md and report.html.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .writer import ReportWriter, write_report

__all__ = ["ReportWriter", "write_report"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: a notebook or the tables need none of the page writers.
    if name in __all__:
        value = getattr(importlib.import_module(".writer", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
