#!/usr/bin/env python3
"""The resampling alone: intervals and paired tests timed in process, from the histograms the
commands build (a script, not a test).

    python bench/resampling_bench.py [--sentences 100000] [--repeat 5] [--baseline SRC] [--keep DIR] [--steps]
        [--files GOLD,A,B,TRAIN] [--only ci,compare,buckets] [--table-limit N]

Runs ``evaluate --ci 0.95``, ``compare A B`` and ``compare A B --buckets length,seen --per-type``
once each (the corpora of bench/intervals_bench.py) and keeps the histograms their intervals and
paired tests start from; then times only those (``_bootstrap_tables``, ``compare_histograms``), in
one thread (``serial``: the work done) and as the command line runs them (``default``: threads
where the draws are many), best wall and CPU seconds of ``--repeat``. ``--baseline SRC`` times
another checkout's ``src`` on the same histograms, alternating with this one, so both share the
machine's load. The numbers printed are the seconds; the outputs are the commands'. ``--steps``
adds, in one thread, each step's best thread CPU milliseconds (the Poisson tables inside the common
rows' draws, those inside the blocks drawn).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CAPTURE = r"""
import pickle, sys
import spanscore.analysis.significance as s
import spanscore.analysis.buckets as b
store = {"compare": [], "boot": []}
compare_histograms, bootstrap_tables = s.compare_histograms, s._bootstrap_tables
def capture_compare(joints, names, **kw):
    store["compare"].append((list(joints), list(names), kw))
    return compare_histograms(joints, names, **kw)
def capture_boot(jobs, **kw):
    store["boot"].append(([hist for hist, _ in jobs], kw))
    return bootstrap_tables(jobs, **kw)
s.compare_histograms = b.compare_histograms = capture_compare
s._bootstrap_tables = capture_boot
from spanscore.cli.main import cli
out = sys.argv[1]
try:
    cli.main(args=sys.argv[2:], standalone_mode=False)
finally:
    with open(out, "wb") as f:
        pickle.dump(store, f)
"""

TIME = r"""
import os
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import functools, pickle, resource, sys, time
# As every spanscore process does at start: freed blocks kept for reuse. Without it each block's
# arrays fault their pages in again, and the draws took 0.24 s of CPU here against 0.13 s.
try:
    from spanscore.runtime.memory import keep_freed_memory
except ImportError:  # a checkout from before it
    pass
else:
    keep_freed_memory()
import spanscore.analysis.significance as s
from spanscore.runtime.blas import one_blas_thread
path, mode, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
if os.environ.get("TABLE_LIMIT"):  # --table-limit: the top-up's table or alias picks chosen at another size
    s.TABLE_LIMIT = int(os.environ["TABLE_LIMIT"])
if mode == "serial":
    s.PARALLEL_WORK = 1 << 62
    s._threads = lambda: 1
with open(path, "rb") as f:
    store = pickle.load(f)
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
def run():
    for hists, kw in store["boot"]:
        seed = kw["resampling"].seed
        if hasattr(s, "_overall_rng"):
            first = functools.partial(s._overall_rng, seed)
        else:
            first = functools.partial(s._rng, seed, 0)
        jobs = [(hists[0], first)] + [(h, functools.partial(s._group_rng, seed, g)) for g, h in enumerate(hists[1:])]
        s._bootstrap_tables(jobs, **kw)
    for joints, names, kw in store["compare"]:
        s.compare_histograms(joints, names, **kw)
STEPS = {  # (owner, name): the steps timed apart with --steps (thread CPU, in one thread)
    ("s", "_draw_parts"): "narrowings, samplers",
    ("s", "_distinct_columns"): "repeated columns",
    ("s.CountTables", "__init__"): "Poisson tables",
    ("s._Sampler", "_pooled"): "common rows' draws",
    ("s.CountTables", "draw"): "of which Poisson lookups",
    ("s._Sampler", "_top_up"): "of which the top-up",
    ("s._Picks", "rows"): "of which the top-up's picks",
    ("s._FamilySampler", "_pooled"): "quick rows' draws",
    ("s._IntervalSampler", "_common"): "intervals' common rows' draws",
    ("s._IntervalSampler", "_coupled"): "of which the pool coupled with its draws",
    ("s._Sampler", "_poisson"): "of which Poisson counts",
    ("s._QuickCounts", "draw"): "of which quick lookups",
    ("s", "_tallies"): "rare rows' tallies",
    ("s._Table", "drawn_sums"): "blocks drawn",
    ("s", "score_totals"): "scores",
    ("s", "_percentiles"): "percentiles",
}
spent = {}
if len(sys.argv) > 4 and sys.argv[4] == "steps":
    def timed(f, label):
        @functools.wraps(f)
        def step(*a, **k):
            t = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.thread_time() - t
        return step
    for (owner, name), label in STEPS.items():
        holder = eval(owner.split(".")[0], {"s": s})
        for part in owner.split(".")[1:]:  # a class a checkout lacks: its step not timed
            holder = getattr(holder, part, None)
        if holder is not None and name in vars(holder):
            setattr(holder, name, timed(getattr(holder, name), label))
wall, work, best = float("inf"), float("inf"), {}
for _ in range(repeat):
    spent.clear()
    w, c = time.perf_counter(), cpu()
    with one_blas_thread():
        run()
    wall, work = min(wall, time.perf_counter() - w), min(work, cpu() - c)
    best = {k: min(best.get(k, float("inf")), v) for k, v in spent.items()}
print(f"{wall:.3f}", f"{work:.3f}", *(f"{k}={v * 1e3:.2f}" for k, v in best.items()), sep="\t")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--baseline", default="", help="another checkout's src folder, timed beside this one")
    ap.add_argument("--keep", default="", help="a folder for the corpora and histograms (made once, then reused)")
    ap.add_argument(
        "--steps", action="store_true",
        help="also time each step of the resampling in one thread (best CPU ms of each, nested steps included)",
    )
    ap.add_argument(
        "--files", default="",
        help="GOLD,A,B,TRAIN: existing corpora (the reference, two systems over its tokens, a training corpus) "
        "instead of synthetic ones made for --sentences",
    )
    ap.add_argument("--only", default="", help="only these cases, comma-separated: ci, compare, buckets")
    ap.add_argument(
        "--table-limit", type=int, default=-1,
        help="this checkout's TABLE_LIMIT (pooled documents whose top-up picks read a table of documents) "
        "set to this, to time its table against its alias picks",
    )
    args = ap.parse_args()
    from intervals_bench import SYNTH, fix_tokens

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        base.mkdir(parents=True, exist_ok=True)
        gold, a, b, train = (base / n for n in ("a.gold", "a.pred", "b.pred", "t.gold"))
        if args.files:
            gold, a, b, train = (Path(f) for f in args.files.split(","))
        elif not train.exists():
            run = [sys.executable, str(SYNTH)]
            subprocess.run([*run, str(args.sentences), str(base / "a")], check=True)
            subprocess.run([*run, str(args.sentences), str(base / "b"), "--seed", "2"], check=True)
            subprocess.run([*run, str(max(args.sentences // 10, 100)), str(base / "t"), "--seed", "3"], check=True)
            fix_tokens(gold, b)
        cases = {
            "evaluate --ci 0.95": ["evaluate", gold, a, "--ci", "0.95", "--json"],
            "compare A B": ["compare", gold, a, b, "--json"],
            "compare A B --buckets length,seen --per-type": [
                "compare", gold, a, b, "--buckets", "length,seen", "--train", train, "--per-type", "--json",
            ],
        }
        here = os.environ.get("PYTHONPATH", "")
        sources = [("baseline", args.baseline)] * bool(args.baseline) + [("this", here)]
        print(f"{'resampling of':46} {'source':9} {'mode':8} {'wall s':>7} {'cpu s':>7}")
        only = [w for w in args.only.split(",") if w]
        for k, (name, cmd) in enumerate(cases.items()):
            if only and ("ci", "compare", "buckets")[k] not in only:
                continue
            state = base / f"state-{k}.pickle"
            if not state.exists():
                subprocess.run(
                    [sys.executable, "-c", CAPTURE, str(state), *map(str, cmd)], check=True, stdout=subprocess.DEVNULL
                )
            for mode in ("serial", "default"):
                for label, src in sources:
                    env = {**os.environ, "PYTHONPATH": src}
                    if args.table_limit >= 0 and label == "this":
                        env["TABLE_LIMIT"] = str(args.table_limit)
                    steps = ["steps"] if args.steps and mode == "serial" else []
                    out = subprocess.run(
                        [sys.executable, "-c", TIME, str(state), mode, str(args.repeat), *steps],
                        env=env, check=True, capture_output=True, text=True,
                    ).stdout.split("\t")
                    print(f"{name:46} {label:9} {mode:8} {float(out[0]):7.3f} {float(out[1]):7.3f}")
                    for step in out[2:]:
                        what, ms = step.strip().split("=")
                        print(f"    {what:42} {float(ms):7.2f} ms")


if __name__ == "__main__":
    main()
