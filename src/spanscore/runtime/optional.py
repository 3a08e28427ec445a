"""Optional dependencies (the extras): imported on use, typed Any, missing ones named with their extra."""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import MissingExtra


def module(name: str) -> Any:
    """Import a module of an optional, untyped dependency."""
    return importlib.import_module(name)


def require(*names: str, what: str, extra: str) -> None:
    """Raise a one-line error naming the extra to install when any of ``names`` cannot be imported."""
    try:
        for name in names:
            importlib.import_module(name)
    except ImportError as exc:
        raise MissingExtra.of(exc, what, extra) from None
