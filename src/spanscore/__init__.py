"""spanscore: named-entity evaluation under every established criterion, with partial credit.

>>> import spanscore
>>> report = spanscore.evaluate(reference="gold.conll", predicted="pred.conll")  # doctest: +SKIP
>>> report.metrics["overlap"]["f1"]  # doctest: +SKIP
"""

__version__ = "0.1.0"

from .api import evaluate, load
from .counts import Counts, Options, count
from .errors import InputError, OptionError, SpanscoreError
from .report import Report
from .spans import Spans

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
