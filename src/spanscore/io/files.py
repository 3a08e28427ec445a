"""Reading input files with one-line errors, and writing outputs atomically."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from ..errors import InputError


def open_input(path: str | Path) -> BinaryIO:
    """The file opened for reading bytes, or an InputError naming the file and what is wrong."""
    name = str(path)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError("no such file", path=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=name) from None


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, or an InputError naming the file and what is wrong."""
    with open_input(path) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[IO[bytes]]:
    """A file object whose contents replace ``path`` only when the block ends without error.

    The temporary file lives in the target's directory so that ``os.replace`` is atomic: an
    interrupted write (Ctrl-C included) leaves the old file, or none, never half a file.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        import tempfile  # here: scoring, which writes nothing, need not import it

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(target)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mode_for(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would give (mkstemp makes files private)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``."""
    with atomic_output(path) as handle:
        handle.write(data)
