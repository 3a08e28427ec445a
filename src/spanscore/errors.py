"""Errors raised for bad input. The CLI turns each into one line and a non-zero exit."""

from __future__ import annotations

from typing import Any


def shorten(value: str, limit: int = 60) -> str:
    """``repr`` of a piece of input for a message, cut to ``limit`` characters (a 10 MB line is
    not echoed whole).

    >>> shorten("B-PER")
    "'B-PER'"
    >>> shorten("x" * 100, 5)
    "'xxxxx'... (100 characters)"
    """
    if len(value) <= limit:
        return repr(value)
    return repr(value[:limit]) + f"... ({len(value)} characters)"


class SpanscoreError(Exception):
    """Base class of every error spanscore raises on purpose."""


class InputError(SpanscoreError):
    """Input that cannot be scored: names the file, the line and what to fix.

    ``details`` holds further lines (every invalid transition, say) that a caller may print.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        details: tuple[str, ...] = (),
    ) -> None:
        self.path = path
        self.line = line
        self.message = message
        self.details = details
        super().__init__(self.one_line())

    def __reduce__(self) -> tuple[Any, ...]:
        # Keeps path and line when a worker process sends the error back.
        return (_input_error, (self.message, self.path, self.line, self.details))

    def one_line(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        return where + self.message


def _input_error(message: str, path: str | None, line: int | None, details: tuple[str, ...]) -> InputError:
    return InputError(message, path=path, line=line, details=details)


class OptionError(SpanscoreError):
    """An option value that makes no sense (credit outside [0, 1], unknown encoding...)."""


class MissingExtra(OptionError):
    """An optional extra is not installed, or an installed module of it fails to import: says what
    needs it and the command that installs it, and the import's own error where the modules are
    there (installing them the plain way again would not mend that)."""

    def __init__(self, what: str, extra: str, failure: str = "") -> None:
        self.what = what
        self.extra = extra
        self.failure = failure
        if failure:
            message = (
                f"{what} needs the '{extra}' extra, which is installed but fails to import ({failure}):"
                f" reinstall it with pip install --force-reinstall 'spanscore[{extra}]'"
            )
        else:
            message = f"{what} needs: pip install 'spanscore[{extra}]'"
        super().__init__(message)

    @classmethod
    def of(cls, exc: ImportError, what: str, extra: str) -> MissingExtra:
        """The error for an optional import that raised ``exc``: missing where a module was not
        found, else the import's own failure (a broken or mismatched install, a module that fails
        as it loads), which advice to install the extra would hide.

        >>> str(MissingExtra.of(ModuleNotFoundError("No module named 'dask'"), "--engine dask", "dask"))
        "--engine dask needs: pip install 'spanscore[dask]'"
        >>> MissingExtra.of(ImportError("cannot import name x from dask"), "--engine dask", "dask").failure
        'ImportError: cannot import name x from dask'
        """
        if isinstance(exc, ModuleNotFoundError):
            return cls(what, extra)
        text = " ".join(str(exc).split())  # one line, however the import worded it
        if len(text) > 200:
            text = text[:200] + "..."
        return cls(what, extra, f"{type(exc).__name__}: {text}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (MissingExtra, (self.what, self.extra, self.failure))


class NoDetails(OptionError):
    """What was asked for needs the matched pairs, which this evaluation did not keep."""

    def __init__(self, what: str = "this") -> None:
        self.what = what
        super().__init__(f"{what} needs the matched pairs: evaluate with keep_details=True")

    def __reduce__(self) -> tuple[Any, ...]:
        return (NoDetails, (self.what,))


class FewUnitsWarning(UserWarning):
    """Intervals or significance tests rest on too few resampling units (documents, or sentences
    where there are none) to mean much: each message says how many there are and why it matters."""
