"""The exceptions and warnings of the seqeval drop-in: seqeval's types, and spanscore's.

Every error raised on purpose is a spanscore ``InputError`` or ``OptionError`` that is also the
built-in type seqeval raises for the same input (``ValueError``, ``TypeError``...), so that both
``except ValueError`` written for seqeval and ``except InputError`` written for spanscore catch it.
"""

from __future__ import annotations

from ...errors import InputError, OptionError


class InputValueError(InputError, ValueError):
    """Input that seqeval refuses with a ValueError."""


class InputTypeError(InputError, TypeError):
    """Input that seqeval refuses (or fails on) with a TypeError."""


class InputIndexError(InputError, IndexError):
    """An empty label (seqeval fails with an IndexError on it)."""


class InputKeyError(InputError, KeyError):
    """A label whose prefix letter no scheme knows (seqeval's strict mode: a KeyError)."""

    def __str__(self) -> str:
        return self.one_line()  # KeyError's own would quote the message


class InputAttributeError(InputError, AttributeError):
    """A label that is not a string, where seqeval fails with an AttributeError on it."""


class InputZeroDivisionError(InputError, ZeroDivisionError):
    """Accuracy over no labels at all."""


class OptionValueError(OptionError, ValueError):
    """An option value that seqeval refuses (or should) with a ValueError."""


class OptionTypeError(OptionError, TypeError):
    """An option that seqeval fails on with a TypeError (a scheme that is no scheme class)."""


_AS_INPUT: tuple[tuple[type[Exception], type[InputError]], ...] = (
    (KeyError, InputKeyError),
    (IndexError, InputIndexError),
    (AttributeError, InputAttributeError),
    (TypeError, InputTypeError),
    (ValueError, InputValueError),
    (ZeroDivisionError, InputZeroDivisionError),
)


def as_input_error(exc: Exception, message: str | None = None) -> Exception:
    """``exc`` as the InputError of its built-in type (itself if it is one already, or if its type
    is none of those seqeval meets on bad input), with ``message`` or its own text."""
    if isinstance(exc, InputError):
        return exc
    for builtin, ours in _AS_INPUT:
        if isinstance(exc, builtin):
            text = message if message is not None else (str(exc.args[0]) if exc.args else type(exc).__name__)
            return ours(text)
    return exc


class _FallbackUndefinedMetricWarning(UserWarning):
    """scikit-learn's UndefinedMetricWarning, where scikit-learn is not installed."""


_FallbackUndefinedMetricWarning.__name__ = _FallbackUndefinedMetricWarning.__qualname__ = "UndefinedMetricWarning"
_warning_class: type[Warning] | None = None


def undefined_metric_warning() -> type[Warning]:
    """scikit-learn's UndefinedMetricWarning (imported the first time a warning is due: it takes
    seconds), or this package's where scikit-learn is absent."""
    global _warning_class
    if _warning_class is None:
        try:
            from sklearn.exceptions import UndefinedMetricWarning  # type: ignore[import-untyped]
        except ImportError:
            _warning_class = _FallbackUndefinedMetricWarning
        else:
            _warning_class = UndefinedMetricWarning
    return _warning_class
