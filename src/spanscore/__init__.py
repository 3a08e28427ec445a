"""spanscore: named-entity evaluation under every established criterion, with partial credit.

>>> import spanscore
>>> report = spanscore.evaluate(reference="gold.conll", predicted="pred.conll")  # doctest: +SKIP
>>> report.metrics["overlap"]["f1"]  # doctest: +SKIP
"""

__version__ = "0.1.0"

from .api import evaluate, load  # noqa: E402
from .counts import Counts, Options, count  # noqa: E402
from .errors import InputError, OptionError, SpanscoreError  # noqa: E402
from .report import Report  # noqa: E402
from .spans import Spans  # noqa: E402

__all__ = [
    "Counts",
    "InputError",
    "OptionError",
    "Options",
    "Report",
    "SpanscoreError",
    "Spans",
    "__version__",
    "count",
    "evaluate",
    "load",
]
