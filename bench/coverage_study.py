#!/usr/bin/env python3
"""How often 95% intervals contain the value they estimate: spanscore's percentile bootstrap and,
over the same resamples, the BCa interval (a script, not a test).

    python bench/coverage_study.py [--corpora 500] [--sizes 30,300,3000] [--resamples 1000]

The population: the documents of a large synthetic corpus (../shared/tools/synth_corpus.py, a
-DOCSTART- every ``--docs-every`` sentences) with its system output; the population value of a
score is the score of all of them. Each of ``--corpora`` corpora draws ``size`` documents from the
population independently (with replacement), and counts whether each interval of strict and
overlap F1 contains the population value. A 95% interval that is right contains it in about 95% of
corpora (give or take 1.96 * sqrt(0.95 * 0.05 / corpora): 1.9 points for 500 corpora). Also
printed: the mean width, and how often the population value falls below the interval and above it.

``percentile`` is spanscore's interval (``analysis.significance.bootstrap``, ``--resamples``
resamples, seed = the corpus's number). ``bca`` is the bias-corrected and accelerated interval
(Efron 1987; Efron and Tibshirani 1993, ch. 14) over the very same resamples: the resampled F1
values are drawn again here with the library's generators and checked equal to the library's
percentile bounds; the bias correction is the share of resampled values below the corpus's F1,
and the acceleration comes from the jackknife over documents, which on the histogram of distinct
count vectors is one leave-one-out value per distinct vector, weighted by how many documents hold
it. ``expanded`` is Hesterberg's (2015) expanded percentile interval, again over the same
resamples: the percentile interval at the wider level whose normal quantile is
sqrt(n / (n - 1)) times Student's t quantile with n - 1 degrees of freedom (n the documents), which
undoes the bootstrap's narrowness in small samples and changes next to nothing in large ones.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import NormalDist

import numpy as np

import spanscore
from spanscore.analysis.significance import (
    Resampling,
    _overall_rng,
    bootstrap,
    histogram_of,
    resampled_totals,
    score_totals,
)
from spanscore.stages.documents import DocCounts, Histogram, scores_per_row

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"
NAMES = ("strict", "overlap")
METHODS = ("percentile", "bca", "expanded")
CREDIT, ZD = "0.5", 0.0
NORMAL = NormalDist()


def f1_of(totals: np.ndarray, fields: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Strict and overlap F1 of each row of summed statistics."""
    scores = score_totals(totals, fields, ZD, CREDIT)
    return {n: scores[n]["f1"] for n in NAMES}


def resampled(hist: Histogram, resampling: Resampling) -> dict[str, np.ndarray]:
    """F1 of every resample the library draws for ``bootstrap`` (its blocks, generators and sums,
    whole or by family of columns as it chooses)."""
    totals = resampled_totals(hist, functools.partial(_overall_rng, resampling.seed), resampling.resamples)
    return f1_of(totals, hist.fields)


def jackknife(hist: Histogram) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """F1 with one document left out, once per distinct vector, and how many documents hold it."""
    rows = hist.rows.astype(np.float64)
    total = hist.counts.astype(np.float64) @ rows
    left_out = f1_of(total[None, :] - rows, hist.fields)
    return {n: (left_out[n], hist.counts.astype(np.float64)) for n in NAMES}


def bca(values: np.ndarray, point: float, jack: tuple[np.ndarray, np.ndarray], level: float) -> tuple[float, float]:
    """The BCa interval from the resampled values, the corpus's value and the weighted jackknife."""
    values = values[~np.isnan(values)]
    below = (np.count_nonzero(values < point) + 0.5 * np.count_nonzero(values == point)) / values.shape[0]
    below = min(max(below, 0.5 / values.shape[0]), 1 - 0.5 / values.shape[0])
    z0 = NORMAL.inv_cdf(below)
    theta, weight = jack
    mean = float(weight @ theta / weight.sum())
    d = mean - theta
    spread = float(weight @ d**2)
    a = float(weight @ d**3) / (6 * spread**1.5) if spread > 0 else 0.0
    bounds = []
    for q in ((1 - level) / 2, (1 + level) / 2):
        z = NORMAL.inv_cdf(q)
        bounds.append(NORMAL.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    low, high = np.quantile(values, bounds)
    return float(low), float(high)


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion about the normal one: within 1e-4 from
    about 10 degrees of freedom, which the sizes studied here exceed)."""
    z = NORMAL.inv_cdf(q)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def expanded_levels(n: int, level: float) -> tuple[float, float]:
    """The percentiles of Hesterberg's (2015) expanded percentile interval over ``n`` documents:
    those of the normal quantile sqrt(n / (n - 1)) * t(n - 1) instead of z, so that a small
    corpus's interval widens as a t interval would."""
    tail = NORMAL.cdf(-((n / (n - 1)) ** 0.5) * t_quantile((1 + level) / 2, n - 1))
    return tail, 1 - tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--population", type=int, default=60_000, help="sentences in the population")
    ap.add_argument("--docs-every", type=int, default=6)
    ap.add_argument("--corpora", type=int, default=500)
    ap.add_argument("--sizes", default="30,300,3000")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--check", type=int, default=5, help="corpora per size checked against the library's bounds")
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
    truth = scores_per_row(DocCounts(np.arange(1), total, pop.fields), ZD, CREDIT)  # type: ignore[arg-type]
    value = {name: float(truth[name]["f1"][0]) for name in NAMES}
    print(
        f"population: {n_docs} documents ({args.docs_every} sentences each); F1 "
        + ", ".join(f"{n} {v:.4f}" for n, v in value.items())
    )
    rng = np.random.default_rng(12345)
    print(f"{'documents':>9} {'score':>8} {'interval':>10} {'coverage':>8} {'below':>6} {'above':>6} {'width':>7}")
    for size in (int(s) for s in args.sizes.split(",")):
        hits = {(n, m): [0, 0, 0] for n in NAMES for m in METHODS}
        widths: dict[tuple[str, str], list[float]] = {key: [] for key in hits}
        for c in range(args.corpora):
            pick = np.sort(rng.choice(n_docs, size=size, replace=True))
            docs = DocCounts(np.arange(size), pop.stats[pick], pop.fields)
            resampling = Resampling(level=args.level, resamples=args.resamples, seed=c)
            hist = histogram_of(docs, CREDIT)
            values, jack = resampled(hist, resampling), jackknife(hist)
            point = f1_of(hist.total()[None, :].astype(np.float64), hist.fields)
            if c < args.check:  # the same resamples as spanscore's own interval
                ci = bootstrap(docs, zero_division=ZD, credit=CREDIT, resampling=resampling)
                for n in NAMES:
                    mine = np.quantile(values[n][~np.isnan(values[n])], [(1 - args.level) / 2, (1 + args.level) / 2])
                    theirs = (ci[n]["f1"]["low"], ci[n]["f1"]["high"])
                    assert np.allclose(mine, theirs, rtol=0, atol=1e-12), (size, c, n, mine, theirs)
            for n in NAMES:
                kept = values[n][~np.isnan(values[n])]
                bounds = {
                    "percentile": tuple(np.quantile(kept, [(1 - args.level) / 2, (1 + args.level) / 2])),
                    "bca": bca(values[n], float(point[n][0]), jack[n], args.level),
                    "expanded": tuple(np.quantile(kept, expanded_levels(size, args.level))),
                }
                for m, (low, high) in bounds.items():
                    k = 0 if low <= value[n] <= high else (1 if value[n] < low else 2)
                    hits[n, m][k] += 1
                    widths[n, m].append(high - low)
        for n in NAMES:
            for m in METHODS:
                inside, below, above = (h / args.corpora for h in hits[n, m])
                print(
                    f"{size:9d} {n:>8} {m:>10} {inside:8.1%} {below:6.1%} {above:6.1%} "
                    f"{np.mean(widths[n, m]):7.4f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
