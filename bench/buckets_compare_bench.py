#!/usr/bin/env python3
"""Per-bucket and per-type comparisons and bucket intervals against the plain count (a script,
not a test): each command in a fresh process, best wall time of ``--repeat`` and its peak
memory, and its ratio to the plain ``evaluate --json`` measured in the same run.

    python bench/buckets_compare_bench.py [--sentences 100000] [--repeat 3] [--jobs 0] [--keep DIR]
                                          [--baseline SRC] [--only compare]

The corpus is ../shared/tools/synth_corpus.py's (a system output beside it); compare's second
system is a second synthetic output (``--seed 2``) laid over the same reference's tokens, and
``seen`` reads a training corpus of a tenth the size (``--seed 3``), as in intervals_bench.py.
Peak memory is GNU time's %M: the largest resident set of the process or any worker it waited for.
``--baseline SRC`` also runs every command but the plain one with another checkout's ``src``
first on ``PYTHONPATH`` (say the main branch's), in the same run, so before and after share the
machine's load. ``--only A,B`` measures only the commands whose names hold A or B (and the plain one).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from intervals_bench import SYNTH, fix_tokens, measure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=0, help="--jobs of every command (0: one per CPU)")
    ap.add_argument("--keep", default="", help="write the corpora here and reuse them (default: a temporary folder)")
    ap.add_argument("--baseline", default="", help="another checkout's src folder, measured beside this one")
    ap.add_argument(
        "--only",
        default="",
        help="measure only the commands whose names hold one of these, comma-separated (and the plain one)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        base.mkdir(parents=True, exist_ok=True)
        gold, a, b, train = (str(base / n) for n in ("a.gold", "a.pred", "b.pred", "t.gold"))
        if not Path(gold).exists() or not Path(b).exists():
            run = [sys.executable, str(SYNTH)]
            subprocess.run([*run, str(args.sentences), str(base / "a")], check=True)
            subprocess.run([*run, str(args.sentences), str(base / "b"), "--seed", "2"], check=True)
            subprocess.run([*run, str(max(args.sentences // 10, 100)), str(base / "t"), "--seed", "3"], check=True)
            fix_tokens(Path(gold), Path(b))
        ss = [sys.executable, "-m", "spanscore.cli.main"]
        jobs = ["--jobs", str(args.jobs)]
        groups = ["--buckets", "length,seen", "--train", train]
        cases = {
            "evaluate --json (plain)": [*ss, "evaluate", gold, a, "--json", *jobs],
            "evaluate --buckets length,seen --json": [*ss, "evaluate", gold, a, *groups, "--json", *jobs],
            "evaluate --buckets length,seen --ci 0.95 --json": [
                *ss, "evaluate", gold, a, *groups, "--ci", "0.95", "--json", *jobs,
            ],
            "compare A B --json": [*ss, "compare", gold, a, b, "--json", *jobs],
            "compare A B --buckets length,seen --per-type --json": [
                *ss, "compare", gold, a, b, *groups, "--per-type", "--json", *jobs,
            ],
        }
        results = {}
        here = os.environ.get("PYTHONPATH", "")
        plain_name = "evaluate --json (plain)"
        for name, cmd in cases.items():
            if name != plain_name and not any(part in name for part in args.only.split(",")):
                continue
            if args.baseline and name != plain_name:
                os.environ["PYTHONPATH"] = args.baseline
                results[f"{name} [baseline]"] = measure(cmd, args.repeat)
                os.environ["PYTHONPATH"] = here
            results[name] = measure(cmd, args.repeat)
        plain, plain_cpu = results[plain_name][:2]
        print(f"{args.sentences} sentences, --repeat {args.repeat}, --jobs {args.jobs}")
        print(f"{'command':63} {'best s':>7} {'ratio':>6} {'CPU s':>6} {'ratio':>6} {'peak MB':>8}")
        for name, (took, cpu, peak) in results.items():
            print(f"{name:63} {took:7.2f} {took / plain:6.2f} {cpu:6.2f} {cpu / plain_cpu:6.2f} {peak:8.0f}")


if __name__ == "__main__":
    main()
