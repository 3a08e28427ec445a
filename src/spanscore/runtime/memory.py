"""Keep freed memory for reuse (glibc's malloc), in processes that spanscore owns.

Counting a chunk allocates and frees arrays of a few hundred KB to a few MB, hundreds of times.
By default glibc hands such blocks back to the kernel when they are freed (``mmap`` above
``M_MMAP_THRESHOLD``, heap trimming above ``M_TRIM_THRESHOLD``), and the next allocation faults
every page in again, zero-filled. On the benchmark machine (a virtual machine) that page traffic
cost more than the arithmetic: planning the 100k-sentence files took 126 ms with the defaults and
33 ms with the settings below (docs/benchmarks.md). Peak memory is unchanged: freed blocks are
reused, not added to.

This changes the whole process, so the library never calls it on its own behalf in a caller's
process: the CLI calls it at start, and the streaming engine in the worker processes it forks
(``start_worker``).
"""

from __future__ import annotations

import os
from typing import Any

# mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

MMAP_THRESHOLD = 32 << 20  # the largest glibc accepts on 64-bit systems
TRIM_THRESHOLD = 256 << 20
TOP_PAD = 16 << 20
# One arena: the intervals' draws run on threads, and glibc would give each thread an arena of
# its own, each keeping its freed blocks at its own high water: the process's peak was the sum
# of their peaks, and grew with the corpus (docs/benchmarks.md). The threads allocate little
# outside numpy's calls, so they seldom wait for each other's malloc.
ARENA_MAX = 1
# Set in the environment, these mean someone chose malloc's behaviour already: leave it alone.
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_ARENA_MAX")


def _glibc() -> Any:
    """glibc's functions, or None on other C libraries."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (AttributeError, ValueError, OSError):  # not glibc, or no confstr (Windows)
        return None
    import ctypes

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def keep_freed_memory() -> bool:
    """Make glibc keep freed blocks up to 32 MiB for reuse, in one arena; True if it took effect.

    Does nothing (False) on other C libraries, or where the MALLOC_* variables are set.
    """
    if any(name in os.environ for name in _ENVIRONMENT):
        return False
    libc = _glibc()
    try:
        mallopt = libc.mallopt
    except AttributeError:  # None, or no mallopt
        return False
    settings = (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_TOP_PAD, TOP_PAD),
        (_M_ARENA_MAX, ARENA_MAX),
    )
    return all(mallopt(param, value) == 1 for param, value in settings)


def start_worker() -> bool:
    """In a forked worker: hand back the free memory it shares with its parent, then keep freed
    memory as ``keep_freed_memory`` does; True if the latter took effect.

    Forked, the worker shares every page of its parent's heap, the freed blocks the parent keeps
    for reuse among them. Reusing one, it would fault a copy of the parent's page in; handed
    back first (``malloc_trim``), the page faults in zero-filled, which costs less (a worker's
    first chunk about 2.5 ms less CPU, docs/benchmarks.md). It faults in as many pages either way.
    """
    if not any(name in os.environ for name in _ENVIRONMENT):
        trim = getattr(_glibc(), "malloc_trim", None)
        if trim is not None:
            trim(0)
    return keep_freed_memory()


def release_freed_memory() -> bool:
    """Hand the pages of the heap's free blocks back to the kernel (``malloc_trim``); True where
    glibc did it. The blocks stay the heap's, for reuse (their pages fault in again, zero-filled).

    Freed blocks are kept for reuse (``keep_freed_memory``), but a histogram that grows by merges
    leaves behind each merge blocks too small for the next, larger one (its rows and its sort
    keys): unused, they stay resident, and a process's peak grows with them (docs/benchmarks.md).
    It changes no setting of the allocator, so the library calls it in a caller's process too.
    """
    trim = getattr(_glibc(), "malloc_trim", None)
    if trim is None:
        return False
    trim(0)
    return True
