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

    Where the system allows (Linux's O_TMPFILE), the file has no name while it is written and is
    given one only when complete, so that even a killed process leaves nothing behind; elsewhere
    it is a hidden temporary file in the target's folder, removed on any error (Ctrl-C included).
    Either way ``os.replace`` puts it in place atomically: the old file, or the new one, never half
    a file.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(target)) from None
    fd = _unnamed(folder)
    if fd is None:
        with _named_temporary(target, folder) as handle:
            yield handle
        return
    tmp: Path | None = None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            tmp = folder / f".{target.name}.{os.getpid()}.{id(handle):x}.part"
            _name(handle.fileno(), tmp)  # a name, now that it is complete
        os.chmod(tmp, mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _name(fd: int, path: Path) -> None:
    """Link an O_TMPFILE file to ``path``. A ``src_dir_fd`` makes Python call linkat, which follows
    the /proc symlink to the open file (plain link() would link the symlink itself)."""
    root = os.open("/", os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", path, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)


def _unnamed(folder: Path) -> int | None:
    """A file with no name in ``folder`` (O_TMPFILE), or None where the system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not Path("/proc/self/fd").is_dir():
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o600)
    except OSError:  # a file system without O_TMPFILE: the named temporary file is used
        return None


@contextlib.contextmanager
def _named_temporary(target: Path, folder: Path) -> Iterator[IO[bytes]]:
    try:
        import tempfile  # here: scoring, which writes nothing, need not import it

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(target)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def mode_for(target: Path) -> int:
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
