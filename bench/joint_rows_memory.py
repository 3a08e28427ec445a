#!/usr/bin/env python3
"""What merging a corpus's joint histogram holds at its peak (a script, not a test): blocks of
documents' joint rows (84 small counts, as two systems' scored columns are), drawn from a pool of
distinct rows with Zipf-like frequencies so the distinct rows grow with the corpus as a real
corpus's do, added one chunk at a time to ``engines.paired.JointRows`` and merged into the
histogram; printed: the distinct rows, the histogram's bytes, ``tracemalloc``'s peak over the
adds and the last merge beyond what was held before them (the pool aside), and the CPU seconds
of the adds and the last merge alone (tracing on: compare the sides, not the seconds).

    python bench/joint_rows_memory.py [--documents 10000000] [--chunk 4500] [--baseline SRC]

``--baseline SRC`` runs the same in a child process with ``SRC`` first on the path.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tracemalloc


def measure(documents: int, chunk: int, pool: int, seed: int) -> str:
    import numpy as np

    from spanscore.engines.paired import JointRows
    from spanscore.stages.documents import Histogram

    rng = np.random.default_rng(seed)
    width = 84
    rows = np.minimum(rng.geometric(0.55, size=(pool, width)) - 1, 255).astype(np.uint8)
    rows[:, ::5] = 0  # columns that are always zero, as several scored columns are
    weights = 1.0 / np.arange(1, pool + 1) ** 1.05
    cdf = np.cumsum(weights / weights.sum())
    fields = tuple(f"c{j}" for j in range(width))
    blocks = []
    tracemalloc.start()
    joint = JointRows()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    merging = 0.0  # CPU of the adds and the last merge alone (the blocks' making aside)
    for start in range(0, documents, chunk):
        n = min(chunk, documents - start)
        picks = np.minimum(np.searchsorted(cdf, rng.random(n)), pool - 1)
        block = Histogram.of(rows[picks].astype(np.int16), fields)
        del picks
        started = time.process_time()
        joint.add(block)
        merging += time.process_time() - started
        del block
    started = time.process_time()
    whole = joint.histogram()
    merging += time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1] - base
    del blocks
    assert whole is not None
    held = whole.rows.nbytes + whole.counts.nbytes
    return (
        f"{whole.rows.shape[0]} distinct rows, histogram {held / 1e6:.1f} MB ({whole.rows.dtype});"
        f" merges' traced peak {peak / 1e6:.1f} MB; merges {merging:.2f} s CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000_000)
    parser.add_argument("--chunk", type=int, default=4500)
    parser.add_argument("--pool", type=int, default=400_000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--baseline", help="another src directory, run the same in a child process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        print(measure(a.documents, a.chunk, a.pool, a.seed))
        return
    argv = [
        sys.executable,
        __file__,
        "--child",
        f"--documents={a.documents}",
        f"--chunk={a.chunk}",
        f"--pool={a.pool}",
        f"--seed={a.seed}",
    ]
    sides = [("baseline", a.baseline)] if a.baseline else []
    sides.append(("this tree", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")))
    for name, src in sides:
        env = dict(os.environ, PYTHONPATH=src)
        out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout.strip()
        print(f"{name}: {out}")


if __name__ == "__main__":
    main()
