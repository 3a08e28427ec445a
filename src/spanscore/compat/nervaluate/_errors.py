"""The exceptions of the nervaluate drop-in: the built-in type nervaluate raises, and spanscore's.

Every error raised on purpose is a spanscore ``InputError`` or ``OptionError`` that is also the
``ValueError`` nervaluate raises for the same input, so that both ``except ValueError`` written for
nervaluate and ``except InputError`` written for spanscore catch it.
"""

from __future__ import annotations

from ...errors import InputError, OptionError


class InputTypeError(InputError, TypeError):
    """Input of a type nervaluate cannot read at all (it fails with a TypeError deep inside)."""


class InputValueError(InputError, ValueError):
    """Input that nervaluate refuses with a ValueError."""


class OptionValueError(OptionError, ValueError):
    """An option value that nervaluate refuses with a ValueError."""
