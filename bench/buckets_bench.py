#!/usr/bin/env python3
"""Time of ``spanscore evaluate --json`` with and without buckets (a script, not a test).

    python bench/buckets_bench.py [--corpus /tmp/synth] [--train /tmp/synth-train] [--sentences 100000]
                                  [--buckets length,seen,consistency] [--repeat 3]

The corpus and the training split are the synthetic corpus (``../shared/tools/synth_corpus.py``
beside the checkout), the training split written with another seed; both are written if absent.
Each command runs ``--repeat`` times in a fresh process; the best wall time and the peak memory
(maximum resident set of the child) are reported, and the two outputs are checked to agree on
every figure outside ``buckets``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"


def timed(cmd: list[str]) -> tuple[float, float, dict]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, peak_mb, json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="/tmp/synth", help="prefix of PREFIX.gold and PREFIX.pred")
    ap.add_argument("--train", default="/tmp/synth-train", help="prefix of the training split's PREFIX.gold")
    ap.add_argument("--sentences", type=int, default=100_000, help="sentences of each, when written here")
    ap.add_argument("--buckets", default="length,seen,consistency", help="the attributes to time")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command; the best is reported")
    ap.add_argument("--jobs", type=int, default=0, help="evaluate's --jobs (0: one per CPU)")
    args = ap.parse_args()
    for prefix, seed in ((args.corpus, 13), (args.train, 14)):
        if not Path(prefix + ".gold").exists():
            subprocess.run(
                [sys.executable, str(SYNTH), str(args.sentences), prefix, "--seed", str(seed)], check=True
            )
    base = ["spanscore", "evaluate", args.corpus + ".gold", args.corpus + ".pred", "--json", "--jobs", str(args.jobs)]
    plain = base
    bucketed = [*base, "--buckets", args.buckets, "--train", args.train + ".gold"]
    results = {}
    for name, cmd in (("plain --json", plain), (f"--buckets {args.buckets} --train", bucketed)):
        runs = [timed(cmd) for _ in range(args.repeat)]
        results[name] = runs
        best = min(r[0] for r in runs)
        print(f"{name:<45} best {best:6.2f} s   (runs: {', '.join(f'{r[0]:.2f}' for r in runs)})")
    plain_runs, bucketed_runs = results.values()
    a, b = plain_runs[0][2], dict(bucketed_runs[0][2])
    b.pop("buckets")
    assert a == b, "the evaluation with buckets changed a figure outside them"
    ratio = min(r[0] for r in bucketed_runs) / min(r[0] for r in plain_runs)
    peak = max(r[1] for runs in results.values() for r in runs)
    print(f"ratio {ratio:.2f}x (best runs); peak resident memory of the commands {peak:.0f} MB")


if __name__ == "__main__":
    main()
