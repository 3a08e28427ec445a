#!/usr/bin/env python3
"""How often spanscore's 95% intervals contain the value they estimate (a script, not a test).

    python bench/coverage_study.py [--corpora 200] [--sizes 30,300,3000] [--resamples 1000]

The population: the documents of a large synthetic corpus (../shared/tools/synth_corpus.py, a
-DOCSTART- every ``--docs-every`` sentences) with its system output; the population value of a
score is the score of all of them. Each of ``--corpora`` corpora draws ``size`` documents from the
population at random (without replacement), takes spanscore's percentile bootstrap interval of
strict and overlap F1 (``--resamples`` resamples), and counts whether it contains the population
value. A 95% interval that is right contains it in about 95% of corpora (give or take
1.96 * sqrt(0.95 * 0.05 / corpora): 1.9 points for 500 corpora). Also printed: the mean width, and
how often the population value falls below the interval and above it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import spanscore
from spanscore.analysis.significance import Resampling, bootstrap
from spanscore.stages.documents import DocCounts, scores_per_row

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"
NAMES = ("strict", "overlap")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--population", type=int, default=60_000, help="sentences in the population")
    ap.add_argument("--docs-every", type=int, default=6)
    ap.add_argument("--corpora", type=int, default=500)
    ap.add_argument("--sizes", default="30,300,3000")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--level", type=float, default=0.95)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "pop"
        cmd = [sys.executable, str(SYNTH), str(args.population), str(prefix), "--docs-every", str(args.docs_every)]
        subprocess.run(cmd, check=True)
        pop = spanscore.evaluate(
            reference=f"{prefix}.gold", predicted=f"{prefix}.pred", documents=True, keep_details=False
        ).documents
    assert pop is not None
    n_docs = pop.stats.shape[0]
    total = pop.stats.sum(axis=0)[None, :].astype(np.float64)
    truth = scores_per_row(DocCounts(np.arange(1), total, pop.fields), 0.0, "0.5")  # type: ignore[arg-type]
    value = {name: float(truth[name]["f1"][0]) for name in NAMES}
    print(f"population: {n_docs} documents ({args.docs_every} sentences each); F1 " +
          ", ".join(f"{n} {v:.4f}" for n, v in value.items()))
    rng = np.random.default_rng(12345)
    print(f"{'documents':>9} {'score':>8} {'coverage':>8} {'below':>6} {'above':>6} {'width':>7}")
    for size in (int(s) for s in args.sizes.split(",")):
        hits = {n: [0, 0, 0] for n in NAMES}
        widths: dict[str, list[float]] = {n: [] for n in NAMES}
        for c in range(args.corpora):
            pick = np.sort(rng.choice(n_docs, size=size, replace=True))
            docs = DocCounts(np.arange(size), pop.stats[pick], pop.fields)
            ci = bootstrap(docs, zero_division=0.0, credit="0.5",
                           resampling=Resampling(level=args.level, resamples=args.resamples, seed=c))
            for n in NAMES:
                low, high = ci[n]["f1"]["low"], ci[n]["f1"]["high"]
                assert low is not None and high is not None
                k = 0 if low <= value[n] <= high else (1 if value[n] < low else 2)
                hits[n][k] += 1
                widths[n].append(high - low)
        for n in NAMES:
            inside, below, above = (h / args.corpora for h in hits[n])
            print(f"{size:9d} {n:>8} {inside:8.1%} {below:6.1%} {above:6.1%} {np.mean(widths[n]):7.4f}")


if __name__ == "__main__":
    main()
