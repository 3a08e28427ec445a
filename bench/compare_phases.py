#!/usr/bin/env python3
"""Where the CPU time of ``compare A B --json`` and ``compare A B --buckets length,seen --per-type
--json`` goes, in one process (``--jobs 1``), phase by phase (a script, not a test): imports,
the training corpus's index, reading (each chunk's reference once, each system's prediction),
counting both systems, pairing their rows in the chunks, what the evaluating process does in the
pass besides (planning, folding the totals, merging histograms, joining the cut documents), the
paired tests (resampling), and the rest (reports, scores, JSON). CPU seconds of one run per
round, the best of ``--repeat`` rounds per phase; each run is a fresh process, so every phase
pays what it pays in a real run.

    python bench/compare_phases.py [--sentences 100000] [--repeat 3] [--keep DIR] [--baseline SRC]
        [--workers | --whole | --distinct | --tests | --processes [--files GOLD A B]] [--only compare|buckets]

``--whole`` times instead each whole command as a user runs it (a fresh process, default
``--jobs``, byte-compiled): the plain ``evaluate --json``, ``compare A B --json``, ``compare A B``
with its tables, the bucket comparison, and each comparison again with ``--resamples 1 --trials 1``
(``no tests``: what the run costs with almost no paired tests, its floor), in interleaved rounds;
it prints each command's best wall and CPU seconds and the medians of its rounds' ratios to the
plain count of the same round and side.

``--distinct`` counts instead what one joint histogram over every group's rows at once would
hold: each document's rows of every group of the bucket comparison side by side (each family of
columns apart, and the differences between the systems that a randomisation trial swaps), their
distinct rows against the sum of each group's own, and how many of them hold at most two
documents (drawn document by document).

``--tests`` times instead the paired tests alone, histogram by histogram: the bucket
comparison's joint histograms (the corpus's first, then each group's) are kept from one run,
and each one's tests are timed alone in one thread (CPU ms, best of ``--repeat``, with
``--baseline`` the other checkout's on the same histograms, interleaved), beside what it holds:
its distinct joint rows, each family's distinct rows, the differences its randomisation trials
swap, and the blocks of resamples and trials it draws. The total is every histogram's tests in
one call, as the command runs them (one thread).

``--processes`` times instead each step's thread CPU per process of the default run (this process
and its forked worker) of the plain ``evaluate --json`` and of ``compare A B --json``: the plan, the
reading, the count, the rest of the side-by-side call, the joint rows made in the chunk, the joint
histogram's merges, the folding, the paired tests on this thread, and each process's whole CPU
(the worker's as this process reaps it); ``--files GOLD A B`` over other corpora (1M sentences).

``--workers`` times instead how the default run (``--jobs 2``: this process and one forked
worker) spreads the side-by-side pass: the parts each process counted, the seconds the worker
counted and stood idle between its first part and its last (waiting for work, or for this
process to read its result), and when the pass and the whole run ended (wall seconds, medians
of the rounds).

The corpora are ../shared/tools/synth_corpus.py's, made as bench/intervals_bench.py makes them.
``--baseline SRC`` runs every round with another checkout's ``src`` first on PYTHONPATH too
(interleaved), so both share the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from intervals_bench import SYNTH, fix_tokens  # noqa: E402

# Run in a fresh process: times each phase by wrapping the functions that make it.
CHILD = r"""
import contextlib, io, json, sys, time
import os
t0 = time.process_time()
# Set up as the CLI's main() sets up its process (freed memory kept for reuse): without it every
# fresh table of a part faults its pages in again, which a real run does not pay.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from spanscore.runtime.memory import keep_freed_memory
keep_freed_memory()
from spanscore.cli.main import cli
import spanscore.api as api
from spanscore.engines import paired
from spanscore.analysis import buckets, significance
from spanscore.io import sources
from spanscore.engines import local
spent = {}
def timed(owner, name, key):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[key] = spent.get(key, 0.0) + time.process_time() - t
    setattr(owner, name, wrapped)
timed(api, "_train_index", "train index")
timed(sources.ConllSource, "read_reference", "read")
timed(sources.ConllSource, "load", "read")
timed(local, "count_part", "count")
timed(paired._SideBySide, "__call__", "side by side")
timed(buckets._JoinedGroups, "__call__", "in chunks")
timed(paired._Joined, "__call__", "in chunks")
timed(buckets, "run_grouped", "pass")
timed(paired, "run_paired", "pass")
timed(significance, "compare_histograms", "paired tests")
timed(buckets, "compare_histograms", "paired tests")
buf = io.StringIO()
t1 = time.process_time()
with contextlib.redirect_stdout(buf):
    cli.main(args=sys.argv[1:] + ["--json", "--jobs", "1"], standalone_mode=False)
t2 = time.process_time()
side, chunks = spent["side by side"], spent["in chunks"]
out = {
    "imports": t1 - t0,
    "train index": spent.get("train index", 0.0),
    "read": spent["read"],
    "count both systems": spent["count"],
    "other side by side": side - spent["read"] - spent["count"],
    "pair in chunks": chunks - side,
    "plan, fold, merge, cut documents": spent["pass"] - chunks,
    "paired tests": spent.get("paired tests", 0.0),
}
out["rest"] = (t2 - t1) - spent["pass"] - out["paired tests"] - out["train index"]
out["total"] = t2 - t0
print(json.dumps(out))
"""

# Each document's rows of every group side by side, per family: their distinct rows against the groups'.
DISTINCT = r"""
import contextlib, io, sys
import numpy as np
from spanscore.analysis import buckets as B, significance as S
from spanscore.stages.documents import Histogram
blocks = []
tabled = B._Groups.tabled
def keep(rows, fields):
    blocks.append(([(k.astype(np.int64), g.copy(), s.copy()) for k, g, s in rows], fields))
    return tabled(rows, fields)
B._Groups.tabled = staticmethod(keep)
import os
# Set up as the CLI's main() sets up its process (freed memory kept for reuse): without it every
# fresh table of a part faults its pages in again, which a real run does not pay.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from spanscore.runtime.memory import keep_freed_memory
keep_freed_memory()
from spanscore.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(args=sys.argv[1:] + ["--json", "--jobs", "1", "--resamples", "1", "--trials", "1"], standalone_mode=False)
fields = blocks[0][1]
empty = np.zeros(0, dtype=np.int64)
names, cols = S._system_columns(Histogram(np.zeros((0, len(fields)), dtype=np.int64), empty, fields))
for family, mine in S.draw_families(names).items():
    picked = [c[i] for c in cols for i in mine]
    keys, groups, values = [], [], []
    for b, (rows, _) in enumerate(blocks):  # a block's document keys are its own: made distinct by the block
        width = rows[0][2].shape[1]
        for k, (key, gid, stats) in enumerate(rows):
            at = [j for j, p in enumerate(picked) if k * width <= p < (k + 1) * width]
            full = np.zeros((key.shape[0], len(picked)), dtype=np.int64)
            full[:, at] = stats[:, [picked[j] - k * width for j in at]]
            keys.append(key + (b << 40)); groups.append(gid); values.append(full)
    key, gid, value = np.concatenate(keys), np.concatenate(groups), np.concatenate(values)
    docs, doc = np.unique(key, return_inverse=True)
    n, w = int(gid.max()) + 1, value.shape[1]
    table = np.zeros((docs.shape[0], n * w), dtype=np.int64)
    for j in range(w):
        np.add.at(table, (doc, gid * w + j), value[:, j])
    half = w // 2
    diffs = np.hstack([table[:, g * w + half : (g + 1) * w] - table[:, g * w : g * w + half] for g in range(n)])
    for what, t, c in (("rows", table, w), ("differences", diffs, half)):
        each = [np.unique(t[:, g * c : (g + 1) * c], axis=0).shape[0] for g in range(n)]
        rows, held = np.unique(t, axis=0, return_counts=True)
        print(f"{family} {what}: {docs.shape[0]} documents with a mention; each group's distinct {each}, "
              f"sum {sum(each)}; side by side {rows.shape[0]} ({int((held <= 2).sum())} of at most two documents)")
"""

# The paired tests' histograms kept from one run (``--tests``).
CAPTURE = r"""
import contextlib, io, pickle, sys
from spanscore.analysis import buckets, significance
kept = []
compare_histograms = significance.compare_histograms
def keep(joints, names, **kw):
    kept.append((list(joints), list(names), kw))
    return compare_histograms(joints, names, **kw)
significance.compare_histograms = buckets.compare_histograms = keep
from spanscore.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(args=sys.argv[2:] + ["--json", "--jobs", "1"], standalone_mode=False)
with open(sys.argv[1], "wb") as f:
    pickle.dump(kept, f)
"""

# Each histogram's paired tests alone, in one thread (``--tests``).
TESTS = r"""
import json, os, pickle, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"
from spanscore.runtime.memory import keep_freed_memory
keep_freed_memory()
from spanscore.analysis import significance as S
from spanscore.runtime.blas import one_blas_thread
S.PARALLEL_WORK, S._threads = 1 << 62, lambda: 1
(joints, names, kw), = pickle.load(open(sys.argv[1], "rb"))
def best(f, repeat):
    out = float("inf")
    for _ in range(repeat):
        t = time.thread_time()
        with one_blas_thread():
            f()
        out = min(out, time.thread_time() - t)
    return out * 1e3
repeat = int(sys.argv[2])
each = [best(lambda j=j: S.compare_histograms([j], names, **kw), repeat) for j in joints]
print(json.dumps({"each": each, "all": best(lambda: S.compare_histograms(joints, names, **kw), repeat)}))
"""

# What each histogram holds and draws (this checkout's families; ``--tests``).
SHAPES = r"""
import json, pickle, sys
from spanscore.analysis import significance as S
(joints, names, kw), = pickle.load(open(sys.argv[1], "rb"))
r = kw["resampling"]
out = []
for joint in joints:
    joint = joint.compacted()
    fields, cols = S._system_columns(joint)
    row = {"joint rows": int(joint.rows.shape[0]), "documents": int(joint.counts.sum()), "families": {}}
    for name, mine in S.draw_families(fields).items():
        fam = S._Family(name, joint, cols, mine)
        swaps = fam.differences(1)
        row["families"][name] = {
            "rows": fam.draws.k, "rare documents": int(fam.draws.rare_documents.shape[0]),
            "differences": swaps.draws.k, "resample blocks": len(fam.draws.plan(r.resamples)),
            "trial blocks": len(S._plan(r.trials, swaps.draws.k)),
        }
    out.append(row)
print(json.dumps({"resamples": r.resamples, "trials": r.trials, "histograms": out}))
"""

# The default run's side-by-side pass, part by part: which process counted each part, and when.
WORKERS = r"""
import contextlib, io, json, os, sys, time
t0 = time.perf_counter()
# Set up as the CLI's main() sets up its process (freed memory kept for reuse): without it every
# fresh table of a part faults its pages in again, which a real run does not pay.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from spanscore.runtime.memory import keep_freed_memory
keep_freed_memory()
from spanscore.cli.main import cli
from spanscore.engines import paired
from spanscore.analysis import buckets
home = os.getpid()
r, w = os.pipe()
def timed(owner, name):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        t = time.perf_counter()
        out = f(*a, **k)
        os.write(w, json.dumps([os.getpid() == home, t - t0, time.perf_counter() - t0]).encode() + b"\n")
        return out
    setattr(owner, name, wrapped)
timed(paired._Joined, "__call__")
timed(buckets._JoinedGroups, "__call__")
passes = []
def pass_of(owner, name):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        out = f(*a, **k)
        passes.append(time.perf_counter() - t0)
        return out
    setattr(owner, name, wrapped)
pass_of(paired, "run_paired")
pass_of(buckets, "run_grouped")
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(args=sys.argv[1:] + ["--json", "--jobs", "2"], standalone_mode=False)
end = time.perf_counter() - t0
os.close(w)
parts = [json.loads(line) for line in os.fdopen(r).read().splitlines()]
mine = [p for p in parts if p[0]]
theirs = sorted((p for p in parts if not p[0]), key=lambda p: p[1])
busy = sum(b - a for _, a, b in theirs)
span = theirs[-1][2] - theirs[0][1] if theirs else 0.0
print(json.dumps({
    "parts here": len(mine), "parts in the worker": len(theirs), "worker counting": busy,
    "worker idle": span - busy, "pass ends": passes[0], "run ends": end,
}))
"""

# ``--processes``: thread CPU of each step, per process of the default run (this process and its
# forked worker), for the plain count and for ``compare``. Each process writes its own figures to a
# file of its own (a worker's pipe would fill before this process reads it).
PROCESSES = r"""
import contextlib, io, json, os, resource, sys, tempfile, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from spanscore.runtime.memory import keep_freed_memory
keep_freed_memory()
from spanscore.cli.main import cli
from spanscore.engines import local, paired
from spanscore.io import sources
from spanscore.stages import parts
from spanscore.analysis import significance
folder = tempfile.mkdtemp()
home = os.getpid()
spent = {}
owner = [home]
def forked():
    if os.getpid() != owner[0]:  # a forked worker starts with a copy of this process's figures
        spent.clear()
        inside.clear()
        owner[0] = os.getpid()
def note(key, dt):
    spent[key] = spent.get(key, 0.0) + dt
def written():
    # A worker's figures so far, where this process reads them: written outside every timed
    # step (a write inside one would be counted in it).
    if os.getpid() != home and not inside:
        with open(os.path.join(folder, str(os.getpid())), "w") as f:
            json.dump(spent, f)
inside = set()
def timed(owner, name, key):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        forked()
        if key in inside:  # called within a step of the same name (a load reading its reference)
            return f(*a, **k)
        inside.add(key)
        t = time.thread_time()
        try:
            return f(*a, **k)
        finally:
            note(key, time.thread_time() - t)
            inside.discard(key)
            written()
    setattr(owner, name, wrapped)
def timed_plan(owner, name):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        it = f(*a, **k)
        while True:
            t = time.thread_time()
            try:
                item = next(it)
            except StopIteration:
                note("plan", time.thread_time() - t)
                return
            note("plan", time.thread_time() - t)
            yield item
    setattr(owner, name, wrapped)
timed_plan(local.PartCounter, "plan")
timed_plan(paired._SideBySide, "plan")
timed(sources.ConllSource, "read_reference", "read")
timed(sources.ConllSource, "load", "read")
timed(local, "count_part", "count")
timed(paired._SideBySide, "__call__", "side by side")
timed(paired._Joined, "__call__", "in chunks")
timed(parts.Folder, "add", "fold")
timed(paired.JointRows, "add", "merge")
timed(paired.JointRows, "histogram", "merge")
timed(paired, "run_paired", "pass")
timed(local.LocalEngine, "map", "pass")
timed(significance, "compare_histograms", "paired tests")
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(args=sys.argv[1:] + ["--json"], standalone_mode=False)
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
def shaped(d, total):
    side, chunks = d.get("side by side", 0.0), d.get("in chunks", 0.0)
    out = {"process CPU": total, "plan": d.get("plan", 0.0), "read": d.get("read", 0.0), "count": d.get("count", 0.0)}
    if side:
        out["rest of the side-by-side call"] = side - out["read"] - out["count"]
        out["joint rows in the chunk"] = chunks - side
        out["merge"] = d.get("merge", 0.0)
    out["fold"] = d.get("fold", 0.0)
    if d.get("paired tests"):
        out["paired tests (this thread)"] = d["paired tests"]
    out["the rest"] = total - sum(v for k, v in out.items() if k != "process CPU")
    return out
workers = {}
for name in os.listdir(folder):
    with open(os.path.join(folder, name)) as f:
        workers[name] = json.load(f)
print(json.dumps({
    "first process": shaped(spent, me.ru_utime + me.ru_stime),
    "worker": shaped(next(iter(workers.values()), {}), kids.ru_utime + kids.ru_stime),
}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", default="", help="write the corpora here and reuse them (default: a temporary folder)")
    ap.add_argument("--baseline", default="", help="another checkout's src folder, measured beside this one")
    ap.add_argument(
        "--workers", action="store_true", help="how the default two-process run spreads its parts (wall seconds)"
    )
    ap.add_argument("--distinct", action="store_true", help="distinct rows of every group's rows side by side")
    ap.add_argument("--whole", action="store_true", help="whole commands' wall and CPU against the plain count")
    ap.add_argument("--tests", action="store_true", help="the paired tests alone, histogram by histogram (CPU ms)")
    ap.add_argument(
        "--processes", action="store_true", help="thread CPU of each step per process, plain count and compare"
    )
    ap.add_argument("--files", nargs=3, metavar=("GOLD", "A", "B"), help="--processes over these files instead")
    ap.add_argument(
        "--only", choices=("compare", "buckets"), default="", help="phases of one command only (default: both)"
    )
    args = ap.parse_args()
    # Timed as an installed package runs: byte-compiled (where PYTHONDONTWRITEBYTECODE is set,
    # every run would compile the modules it imports again: 0.27 s of imports instead of 0.15).
    for src in {os.environ.get("PYTHONPATH", "").split(os.pathsep)[0], args.baseline} - {""}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(src) / "spanscore")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        base.mkdir(parents=True, exist_ok=True)
        gold, a, b, train = (str(base / n) for n in ("a.gold", "a.pred", "b.pred", "t.gold"))
        if not Path(gold).exists() or not Path(b).exists():
            run = [sys.executable, str(SYNTH)]
            quiet = {"check": True, "stdout": subprocess.DEVNULL}
            subprocess.run([*run, str(args.sentences), str(base / "a")], **quiet)
            subprocess.run([*run, str(args.sentences), str(base / "b"), "--seed", "2"], **quiet)
            subprocess.run([*run, str(max(args.sentences // 10, 100)), str(base / "t"), "--seed", "3"], **quiet)
            fix_tokens(Path(gold), Path(b))
        if args.processes:
            if args.files:
                gold, a, b = args.files
            processes(gold, a, b, args.repeat, args.baseline)
            return
        if args.distinct:
            cmd = ["compare", gold, a, b, "--buckets", "length,seen", "--train", train, "--per-type"]
            subprocess.run([sys.executable, "-c", DISTINCT, *cmd], check=True)
            return
        if args.whole:
            whole(gold, a, b, train, args.repeat, args.baseline)
            return
        if args.tests:
            tests(base, [gold, a, b, "--buckets", "length,seen", "--train", train, "--per-type"], args)
            return
        cases = {
            "compare A B": ["compare", gold, a, b],
            "compare A B --buckets length,seen --per-type": [
                "compare", gold, a, b, "--buckets", "length,seen", "--train", train, "--per-type",
            ],
        }
        if args.only:
            cases = {k: v for k, v in cases.items() if ("--buckets" in v) == (args.only == "buckets")}
        here = os.environ.get("PYTHONPATH", "")
        sides = [(" [baseline]", args.baseline)] * bool(args.baseline) + [("", here)]
        best: dict[str, dict[str, float]] = {}
        seen: dict[str, dict[str, list[float]]] = {}
        for r in range(args.repeat):
            for name, cmd in cases.items():
                for tag, path in sides if r % 2 == 0 else sides[::-1]:
                    got = subprocess.run(
                        [sys.executable, "-c", WORKERS if args.workers else CHILD, *cmd],
                        check=True,
                        capture_output=True,
                        text=True,
                        env={**os.environ, "PYTHONPATH": path},
                    )
                    phases = json.loads(got.stdout.strip().splitlines()[-1])
                    if args.workers:
                        for k, v in phases.items():
                            seen.setdefault(name + tag, {}).setdefault(k, []).append(v)
                        continue
                    have = best.setdefault(name + tag, {})
                    for k, v in phases.items():
                        have[k] = min(have.get(k, v), v)
                        seen.setdefault(name + tag, {}).setdefault(k, []).append(v)
        if args.workers:
            print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; medians of {args.repeat} rounds")
            for name, found in seen.items():
                print(name)
                print("   " + " | ".join(f"{k} {statistics.median(v):.3f}" for k, v in found.items()))
            return
        print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU s, best of {args.repeat} per phase")
        for name, phases in best.items():
            print(name)
            print("   " + " | ".join(f"{k} {v:.3f}" for k, v in phases.items()))
            print("   median total " + f"{statistics.median(seen[name]['total']):.3f}")


def tests(base: Path, cmd: list[str], args: argparse.Namespace) -> None:
    """``--tests``: each joint histogram's paired tests alone, beside what it holds."""
    kept = base / "compare-tests.pickle"
    if not kept.exists():
        subprocess.run([sys.executable, "-c", CAPTURE, str(kept), "compare", *cmd], check=True)
    here = os.environ.get("PYTHONPATH", "")
    shapes = json.loads(subprocess.run(
        [sys.executable, "-c", SHAPES, str(kept)], check=True, capture_output=True, text=True
    ).stdout)  # fmt: skip
    sides = [("baseline", args.baseline)] * bool(args.baseline) + [("this", here)]
    times: dict[str, dict[str, Any]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(args.repeat):
        for tag, path in sides if r % 2 == 0 else sides[::-1]:
            got = json.loads(subprocess.run(
                [sys.executable, "-c", TESTS, str(kept), "1"], check=True, capture_output=True, text=True,
                env={**os.environ, "PYTHONPATH": path},
            ).stdout)  # fmt: skip
            have = times.setdefault(tag, {"each": [float("inf")] * len(got["each"]), "all": float("inf")})
            have["each"] = [min(x, y) for x, y in zip(have["each"], got["each"], strict=True)]
            have["all"] = min(have["all"], got["all"])
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) {', '.join(f'{x:.2f}' for x in loads)}; {shapes['resamples']} resamples, "
          f"{shapes['trials']} trials; CPU ms in one thread, best of {args.repeat}")  # fmt: skip
    head = " ".join(f"{tag:>9}" for tag, _ in sides)
    print(f"{'histogram':10} {'joint rows':>10} {'family: rows, rare documents, differences, blocks':52} {head}")
    for h, shape in enumerate(shapes["histograms"]):
        fams = "; ".join(
            f"{name} {f['rows']}, {f['rare documents']}, {f['differences']}, {f['resample blocks']}+{f['trial blocks']}"
            for name, f in shape["families"].items()
        )
        cells = " ".join(f"{times[tag]['each'][h]:9.1f}" for tag, _ in sides)
        print(f"{'corpus' if h == 0 else 'group ' + str(h):10} {shape['joint rows']:10} {fams:52} {cells}")
    print(f"{'sum':74} " + " ".join(f"{sum(times[tag]['each']):9.1f}" for tag, _ in sides))
    print(f"{'all in one call':74} " + " ".join(f"{times[tag]['all']:9.1f}" for tag, _ in sides))


def processes(gold: str, a: str, b: str, repeat: int, baseline: str) -> None:
    """``--processes``: each step's thread CPU per process, the best of ``repeat`` rounds per
    step, of the plain count and of ``compare``, rounds interleaved with ``baseline``."""
    here = os.environ.get("PYTHONPATH", "")
    sides = [(" [baseline]", baseline)] * bool(baseline) + [("", here)]
    cases = {"evaluate --json": ["evaluate", gold, a], "compare A B --json": ["compare", gold, a, b]}
    best: dict[str, dict[str, dict[str, float]]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(repeat):
        for name, cmd in cases.items():
            for tag, path in sides if r % 2 == 0 else sides[::-1]:
                got = subprocess.run(
                    [sys.executable, "-c", PROCESSES, *cmd],
                    check=True,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "PYTHONPATH": path},
                )
                for proc, steps in json.loads(got.stdout.strip().splitlines()[-1]).items():
                    have = best.setdefault(name + tag, {}).setdefault(proc, {})
                    for k, v in steps.items():
                        have[k] = min(have.get(k, v), v)
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) {', '.join(f'{x:.2f}' for x in loads)}; CPU s, best of {repeat} per step")
    for name, procs in best.items():
        for proc, steps in procs.items():
            print(f"{name} / {proc}: " + " | ".join(f"{k} {v:.3f}" for k, v in steps.items()))


def whole(gold: str, a: str, b: str, train: str, repeat: int, baseline: str) -> None:
    """``--whole``: each command in a fresh process, rounds interleaved with ``baseline``."""
    import resource
    import time

    ss = [sys.executable, "-m", "spanscore.cli.main"]
    buckets = ["--buckets", "length,seen", "--train", train, "--per-type"]
    none = ["--resamples", "1", "--trials", "1"]
    cases = {
        "evaluate --json (plain)": [*ss, "evaluate", gold, a, "--json"],
        "compare A B --json": [*ss, "compare", gold, a, b, "--json"],
        "compare A B (tables)": [*ss, "compare", gold, a, b],
        "compare A B --json, no tests": [*ss, "compare", gold, a, b, "--json", *none],
        "compare A B --buckets length,seen --per-type --json": [*ss, "compare", gold, a, b, *buckets, "--json"],
        "the same, no tests": [*ss, "compare", gold, a, b, *buckets, "--json", *none],
    }
    here = os.environ.get("PYTHONPATH", "")
    sides = [(" [baseline]", baseline)] * bool(baseline) + [("", here)]
    got: dict[str, list[tuple[float, float, float, float]]] = {}
    loads = [os.getloadavg()[0]]
    for r in range(repeat):
        for tag, path in sides if r % 2 == 0 else sides[::-1]:
            plain = (0.0, 0.0)
            for name, cmd in cases.items():
                before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": path})
                wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                plain = (wall, cpu) if name.startswith("evaluate") else plain
                got.setdefault(name + tag, []).append((wall, cpu, wall / plain[0], cpu / plain[1]))
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) {', '.join(f'{x:.2f}' for x in loads)} (start, after each round)")
    print(f"{'command (best of ' + str(repeat) + ', ratios: medians of the rounds)':66} {'wall s':>7} {'CPU s':>7} "
          f"{'x wall':>7} {'x CPU':>7}")  # fmt: skip
    for name, runs in got.items():
        walls, cpus, wall_x, cpu_x = zip(*runs, strict=True)
        print(f"{name:66} {min(walls):7.3f} {min(cpus):7.3f} "
              f"{statistics.median(wall_x):7.2f} {statistics.median(cpu_x):7.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
