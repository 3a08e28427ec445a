#!/usr/bin/env python3
"""The threshold sweep of scored spans (GLiNER's ``score``): time of ``stages.thresholds.sweep``
on ``--spans`` scored predictions against as many reference mentions, 8 types, scores in 1,000
distinct values (a script, not a test).

    python bench/thresholds_bench.py --spans 100000
"""

from __future__ import annotations

import argparse
import random
import time

from spanscore.stages.thresholds import sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    types = [f"T{k}" for k in range(8)]
    reference = [(f"d{k // 10}", 10 * (k % 10), 10 * (k % 10) + 5, rng.choice(types)) for k in range(args.spans)]
    scored = []
    for doc, start, end, label in reference:
        right = rng.random() < 0.6  # most predictions right, scored higher
        key = (doc, start, end, label) if right else (doc, start + 1, end, rng.choice(types))
        score = round(min(1.0, max(0.0, rng.gauss(0.7 if right else 0.4, 0.2))), 3)
        scored.append((key, score))
    times = []
    for _ in range(args.repeat):
        began, cpu = time.perf_counter(), time.process_time()
        result = sweep(scored, reference)
        times.append((time.perf_counter() - began, time.process_time() - cpu))
    wall, cpu = min(times)
    best = result["overall"]["best"]
    print(f"sweep of {args.spans:,} scored spans, {len(result['overall']['thresholds'])} thresholds, 8 types:"
          f" {wall:.3f} s wall, {cpu:.3f} CPU s (best of {args.repeat}); best F1 {best['f1']:.4f} at"
          f" {best['threshold']}")


if __name__ == "__main__":
    main()
