"""One BLAS thread while spanscore scores its resamples (OpenBLAS, as numpy's wheels ship it).

The bootstrap scores each block of resamples with a small matrix product between random draws.
OpenBLAS splits every product of that size over all the CPUs, and its threads then spin, waiting
for the next product, while the next block is drawn: in a Python session that loaded numpy with
its default threads, the intervals of 100,000 sentences took 0.79 s of CPU on the 2-CPU
benchmark machine against 0.40 s on one BLAS thread, and where other processes wanted the CPUs
the spinning slowed the draws down as much. spanscore spreads the blocks over threads itself,
so the products are better run on one BLAS thread each. (The command line starts numpy on one
BLAS thread already, by ``OPENBLAS_NUM_THREADS``.)

The numbers do not change: the products sum integer counts, exactly, in any order or split.
Where ``OPENBLAS_NUM_THREADS`` (or ``GOTO_NUM_THREADS``, ``OMP_NUM_THREADS``) is set, someone
chose already: it is left alone. Elsewhere than Linux, or with another BLAS, nothing is done.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator

_ENVIRONMENT = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
# (get, set) as OpenBLAS names them: plain, with 64-bit integers, and as scipy-openblas (numpy's
# wheels) prefixes them.
_NAMES = tuple(
    (f"{prefix}openblas_get_num_threads{suffix}", f"{prefix}openblas_set_num_threads{suffix}")
    for prefix in ("scipy_", "")
    for suffix in ("64_", "")
)

_lock = threading.Lock()
_depth = 0
_saved: list[int] = []


@functools.cache
def _controls() -> tuple[tuple[Callable[[], int], Callable[[int], None]], ...]:
    """The thread count's getter and setter of every OpenBLAS this process has loaded."""
    import ctypes  # here: the first interval run pays for it, not every import

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted(
                {
                    fields[5]
                    for fields in (line.split(maxsplit=5) for line in maps)
                    if len(fields) == 6 and "openblas" in os.path.basename(fields[5]).lower()
                }
            )
    except OSError:
        return ()
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path.strip())
        except OSError:
            continue
        for get_name, set_name in _NAMES:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                found.append((get, put))
                break
    return tuple(found)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread inside the block, as it was after (threads of this process that
    enter together share one change)."""
    global _depth
    if any(name in os.environ for name in _ENVIRONMENT):
        yield
        return
    with _lock:
        if _depth == 0:
            controls = _controls()
            _saved[:] = [get() for get, _ in controls]
            for _, put in controls:
                put(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for (_, put), threads in zip(_controls(), _saved, strict=True):
                    put(threads)
