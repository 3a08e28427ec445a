#!/usr/bin/env python3
"""How much of its time each numpy call the intervals' draws make holds the GIL (a script, not a
test): each call, at the draws' sizes, is made again and again on one thread for ``--seconds``,
sampled by py-spy twice, with ``--gil`` (only samples where the thread holds the GIL) and
without; the share printed is the first count over the second, of the samples inside the call.
A call that holds the GIL throughout keeps a second drawing thread waiting for as long.

    python bench/gil_calls_bench.py [--seconds 1.5] [--only repeat,bincount]

Needs py-spy on PATH (``pip install py-spy``). The samples are wall-clock ones: on a loaded
machine a thread that holds the GIL while the kernel has parked it still counts as holding it,
so compare calls measured in one run, not runs made at different loads.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def calls() -> dict[str, Callable[[], Any]]:
    """The draws' calls, at their sizes: a top-up piece's 65,536 picks over about 90 resamples of
    2,000 rows, 32 Poisson tables' rows of 300 counts, a block of 256 resamples' lookups."""
    rng = np.random.default_rng(1)
    k, m, n = 2000, 90, 1 << 16
    picked = rng.integers(0, k, size=n)
    taken = rng.multinomial(n, np.ones(m) / m)
    offsets = np.arange(m) * k
    cells = picked + np.repeat(offsets, taken)
    counts = np.zeros((m, k), dtype=np.int64)
    rows = rng.random((32, 300))
    ends = np.cumsum(taken)
    positions = np.arange(n)
    return {
        "repeat": lambda: np.repeat(offsets, taken),
        "bincount": lambda: np.bincount(cells, minlength=m * k),
        "bincount_small": lambda: np.bincount(picked),
        "add.at": lambda: np.add.at(counts.reshape(-1), cells, 1),
        "cumsum_rows": lambda: np.cumsum(rows, axis=1),
        "cumsum_flat": lambda: np.cumsum(cells),
        "searchsorted": lambda: np.searchsorted(ends, positions, side="right"),
        "take": lambda: picked[cells % k],
        "zeros": lambda: np.zeros(m * k, dtype=np.int64),
        "integers": lambda: rng.integers(0, 1 << 64, size=(256, 200), dtype=np.uint64),
        "random_raw": lambda: rng.bit_generator.random_raw((256, 200)),
        "poisson": lambda: rng.poisson(np.full(200, 2000.0), size=(256, 200)),
    }


def _samples(raw: Path, marker: str) -> int:
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if marker in stack:
            total += int(count)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--only", default="", help="comma-separated call names (default: all)")
    ap.add_argument("--call", default="", help=argparse.SUPPRESS)  # the child: make one call again and again
    args = ap.parse_args()
    if args.call:
        call = calls()[args.call]
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end:
            call()
        return
    spy = shutil.which("py-spy")
    if spy is None:
        sys.exit("py-spy is not on PATH (pip install py-spy)")
    names = [n for n in args.only.split(",") if n] or list(calls())
    print(f"{'call':16s} {'GIL samples':>11s} {'samples':>8s} {'holds':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            counts = []
            for gil in (True, False):
                raw = Path(tmp) / f"{name}-{gil}.txt"
                cmd = [spy, "record", "-r", "1000", "-f", "raw", "-o", str(raw), *(["--gil"] if gil else [])]
                child = [sys.executable, __file__, "--call", name, "--seconds", str(args.seconds)]
                subprocess.run([*cmd, "--", *child], check=True, capture_output=True)
                counts.append(_samples(raw, "<lambda>"))
            print(f"{name:16s} {counts[0]:11d} {counts[1]:8d} {counts[0] / max(counts[1], 1):6.0%}")


if __name__ == "__main__":
    main()
