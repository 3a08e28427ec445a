"""seqeval.reporters: the two writers of classification_report, the text table and the dict.

>>> reporter = StringReporter(width=12, digits=2)
>>> reporter.write('PER', 1.0, 0.5, 0.6667, 2)
>>> reporter.write_blank()
>>> print(reporter.report())
              precision    recall  f1-score   support
<BLANKLINE>
         PER       1.00      0.50      0.67         2
<BLANKLINE>
"""

from __future__ import annotations

import abc
from typing import Any

_HEADERS = ("precision", "recall", "f1-score", "support")


class Reporter(abc.ABC):
    """A writer of report rows: ``write`` one row, ``report`` the result."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # noqa: B027 (seqeval's: subclasses need not call it)
        pass

    @abc.abstractmethod
    def report(self) -> Any:
        raise NotImplementedError

    @abc.abstractmethod
    def write(self, row_name: str, precision: float, recall: float, f1: float, support: int) -> None:
        raise NotImplementedError


class DictReporter(Reporter):
    """Rows as ``{name: {'precision': p, 'recall': r, 'f1-score': f, 'support': s}}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.report_dict: dict[str, dict[str, Any]] = {}

    def report(self) -> dict[str, dict[str, Any]]:
        return self.report_dict

    def write(self, row_name: str, precision: float, recall: float, f1: float, support: int) -> None:
        self.report_dict[row_name] = {"precision": precision, "recall": recall, "f1-score": f1, "support": support}

    def write_blank(self) -> None:
        pass


class StringReporter(Reporter):
    """Rows as a text table: names right-aligned in ``width`` (keyword, 10 by default), scores
    with ``digits`` decimals (keyword, 4 by default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.buffer: list[str] = []
        self.row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}"
        self.width: Any = kwargs.get("width", 10)
        self.digits: Any = kwargs.get("digits", 4)

    def report(self) -> str:
        return self.write_header() + "\n".join(self.buffer)

    def write(self, row_name: str, precision: float, recall: float, f1: float, support: int) -> None:
        self.buffer.append(
            self.row_fmt.format(row_name, precision, recall, f1, support, width=self.width, digits=self.digits)
        )

    def write_header(self) -> str:
        head_fmt = "{:>{width}s} " + " {:>9}" * len(_HEADERS)
        return head_fmt.format("", *_HEADERS, width=self.width) + "\n\n"

    def write_blank(self) -> None:
        self.buffer.append("")
