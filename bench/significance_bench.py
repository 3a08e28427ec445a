#!/usr/bin/env python3
"""Speed of intervals and paired tests over many documents (a script, not a test).

    python bench/significance_bench.py --sentences 300000 --docs-every 3 [--resamples 1000]

Writes the synthetic corpus (../shared/tools/synth_corpus.py) with a -DOCSTART- every
``--docs-every`` sentences, evaluates the system against the reference and the reference against
itself with per-document counts, then times, in the command line's setting (freed memory kept,
one BLAS thread per thread): the bootstrap intervals of one system (every
criterion, SemEval scheme and the token score at once), and ``compare`` of the two (bootstrap of
both on the same resamples, and approximate randomisation), each the best of ``--repeat`` runs.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line runs (spanscore.cli.main)

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import spanscore
from spanscore.analysis.significance import Resampling, bootstrap, compare
from spanscore.runtime.memory import keep_freed_memory

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"


def best(repeat: int, work: object) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=300_000)
    ap.add_argument("--docs-every", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    keep_freed_memory()  # as the command line does
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "synth"
        subprocess.run(
            [sys.executable, str(SYNTH), str(args.sentences), str(prefix), "--docs-every", str(args.docs_every)],
            check=True,
        )
        gold, pred = f"{prefix}.gold", f"{prefix}.pred"
        system = spanscore.evaluate(reference=gold, predicted=pred, documents=True, keep_details=False)
        perfect = spanscore.evaluate(reference=gold, predicted=gold, documents=True, keep_details=False)
    docs = system.documents
    assert docs is not None and perfect.documents is not None
    print(f"{docs.stats.shape[0]} {docs.unit}s, {docs.stats.shape[1]} statistics each")
    resampling = Resampling(resamples=args.resamples, trials=args.resamples)
    one = best(args.repeat, lambda: bootstrap(docs, zero_division=0.0, credit="0.5", resampling=resampling))
    print(f"bootstrap intervals, one system, {args.resamples} resamples: {one:.2f} s")
    both = best(
        args.repeat,
        lambda: compare(
            [docs, perfect.documents], ["system", "reference"], zero_division=0.0, credit="0.5", resampling=resampling
        ),
    )
    print(
        f"compare two systems ({args.resamples} bootstrap resamples of both, {args.resamples} randomisation"
        f" trials): {both:.2f} s"
    )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
