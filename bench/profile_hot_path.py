#!/usr/bin/env python3
"""Profile spanscore's streaming hot path on a synthetic corpus (cProfile, in process).

    python bench/profile_hot_path.py [--sentences 100000] [--out bench/out] [--top 25]

Prints the CLI's cost outside ``evaluate`` (imports, scoring and JSON), the functions that cost
most by own time and by cumulative time, the time of each stage of one chunk, best of 7, and
where a whole ``evaluate --json`` run's time goes against the reading floor (Python, numpy and
reading both files): spanscore's imports beyond numpy, planning, the chunks, and what a forked
worker's first chunk costs more than a later one. Every figure is CPU time of this process (or
of the child), so that a busy machine does not inflate it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import corpus  # noqa: E402


def best(f: Callable[[], Any], n: int = 7) -> float:
    """Milliseconds of CPU time (this process), the least of ``n`` runs: steadier than the wall clock
    on a shared machine, where a process may wait for a core."""
    top = float("inf")
    for _ in range(n):
        t0 = time.process_time()
        f()
        top = min(top, time.process_time() - t0)
    return top * 1000


def stages(gold: Path, pred: Path) -> dict[str, float]:
    """Milliseconds of each stage of one 512 KiB chunk."""
    from spanscore.engines import PartCounter
    from spanscore.io.conll import parse_conll
    from spanscore.io.conll_plan import plan_chunks
    from spanscore.io.load import ConllText, check_same_tokens, decode_column
    from spanscore.io.reading import Reading
    from spanscore.io.sources import ConllSource
    from spanscore.stages.counts import Options, count, count_grouped
    from spanscore.stages.pairs import error_examples
    from spanscore.stages.parts import Wanted, count_twins_apart, twins
    from spanscore.stages.scoring import TypeSelection
    from spanscore.stages.spans import unify

    def _read(path: Path, start: int, end: int) -> bytes:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(end - start)

    source = ConllSource.open(gold, pred, Reading(), TypeSelection(), 1 << 19)
    count_chunk = PartCounter(source, Options(), Wanted(examples=0))
    items = list(count_chunk.plan())
    middle = items[len(items) // 2]

    plan = plan_chunks(gold, pred)
    c = plan[len(plan) // 2]
    rb, pb = _read(gold, c.ref_start, c.ref_end), _read(pred, c.pred_start, c.pred_end)
    r = parse_conll(rb, str(gold), columns=(-1,))
    p = parse_conll(pb, str(pred), columns=(-1,))
    rs, ps = unify(decode_column(r, 0, "BIO", "conlleval"), decode_column(p, 0, "BIO", "conlleval"))
    counted = count_grouped(rs, ps, Options())
    text = ConllText(r, r.sentence_bounds)
    out = {
        "plan_chunks (whole files)": best(lambda: plan_chunks(gold, pred), 3),
        "read both ranges": best(lambda: (_read(gold, c.ref_start, c.ref_end), _read(pred, c.pred_start, c.pred_end))),
        "parse_conll x2": best(lambda: (parse_conll(rb, "g", columns=(-1,)), parse_conll(pb, "p", columns=(-1,)))),
        "check_same_tokens": best(lambda: check_same_tokens(r, p)),
        "decode_column x2": best(lambda: [decode_column(t, 0, "BIO", "conlleval") for t in (r, p)]),
        "load (read, parse, check, decode, unify)": best(lambda: source.load(middle.part)),
        "count (every criterion), all matched": best(lambda: count(rs, ps, Options())),
        "count (every criterion), twins apart": best(lambda: count_twins_apart(rs, ps, Options())),
        "error examples (where rendered)": best(
            lambda: error_examples(counted.taxonomy, counted.pairs, rs, ps, text, 5)
        ),
        "count_chunk without examples (all of it)": best(lambda: count_chunk(middle)),
    }
    out["chunks"] = len(plan)
    found = twins(rs, ps)
    out["reference mentions per chunk"] = len(rs)
    out["of which matched by an identical twin"] = 0 if found is None else int(found[0].sum())
    out["tokens per chunk"] = r.n_tokens
    return out


def child_cpu(argv: list[str], n: int = 5) -> float:
    """Median CPU milliseconds (user + system) of a process running ``argv``."""
    runs = []
    for _ in range(n):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{argv} failed")
        runs.append((usage.ru_utime + usage.ru_stime) * 1000)
    return statistics.median(runs)


def first_chunk(gold: Path, pred: Path) -> tuple[float, float, int]:
    """CPU ms of a forked worker's first chunk and of its later ones (median), and its page faults
    in the first: a fresh process faults in the memory a chunk works in once."""
    from spanscore.engines import PartCounter
    from spanscore.io.reading import Reading
    from spanscore.io.sources import ConllSource
    from spanscore.stages.counts import Options
    from spanscore.stages.parts import Wanted
    from spanscore.stages.scoring import TypeSelection

    source = ConllSource.open(gold, pred, Reading(), TypeSelection(), 1 << 19)
    counter = PartCounter(source, Options(), Wanted(examples=0))
    items = list(counter.plan())[:8]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: times its chunks and reports them
        os.close(read)
        from spanscore.runtime import memory

        # As the engine's workers start (older revisions: keeping freed memory only).
        getattr(memory, "start_worker", memory.keep_freed_memory)()
        times, faults = [], 0
        for k, item in enumerate(items):
            before, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
            counter(item)
            times.append((time.process_time() - t0) * 1000)
            if k == 0:
                faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        os.write(write, json.dumps([times, faults]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        times, faults = json.loads(f.read())
    os.waitpid(pid, 0)
    return times[0], statistics.median(times[1:]), faults


def budget(gold: Path, pred: Path, in_process: float, plan: float) -> None:
    """Where a run's CPU goes, against the floor."""
    py = sys.executable
    read = "import sys, numpy\nfor p in sys.argv[1:]:\n    open(p, 'rb').read()"
    imports = "import sys; sys.argv = ['spanscore']; import spanscore.cli.main, spanscore.cli.evaluate, spanscore.api"
    floor = child_cpu([py, "-c", read, str(gold), str(pred)])
    numpy = child_cpu([py, "-c", "import numpy"])
    ours = child_cpu([py, "-c", imports])
    cli = child_cpu([str(Path(py).parent / "spanscore"), "evaluate", str(gold), str(pred), "--json", "--jobs", "1"])
    first, later, faults = first_chunk(gold, pred)
    print(f"\nwhere a run's CPU goes (ms; processes: median of 5; load {os.getloadavg()[0]:.2f}):")
    print(f"  floor (Python, numpy, reading both files)          {floor:8.0f}")
    print(f"  python -c 'import numpy'                           {numpy:8.0f}")
    print(f"  spanscore's imports beyond numpy (evaluate's set)  {ours - numpy:8.0f}")
    print(f"  planning (whole files)                             {plan:8.0f}")
    print(f"  evaluate() in process, planning included           {in_process:8.0f}")
    print(f"  a worker's first chunk / a later one               {first:8.1f} / {later:.1f} ({faults} page faults)")
    print(f"  evaluate --json --jobs 1, whole process            {cli:8.0f}  ({cli / floor:.2f}x the floor)")
    print(f"  of which after its imports (plan, chunks, JSON)    {cli - ours:8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    prefix = corpus(args.out, args.sentences)
    gold, pred = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")

    import spanscore
    from spanscore.runtime.memory import keep_freed_memory

    keep_freed_memory()  # as the CLI and its workers run

    def run() -> None:
        spanscore.evaluate(reference=gold, predicted=pred, keep_details=False)

    run()  # warm the page cache
    in_process = best(run, 3)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(Path(sys.executable).parent / "spanscore"), "--version"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    startup = (after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime) * 1000
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False)
    to_json = best(lambda: json.dumps(report.to_dict(), indent=2), 3)
    print(f"CPU time: evaluate() in process, best of 3: {in_process:.0f} ms")
    print(f"CPU time: spanscore --version (interpreter + imports): {startup:.0f} ms; to_dict + JSON: {to_json:.0f} ms")

    prof = cProfile.Profile(time.process_time)  # CPU time, not wall: other processes share the cores
    prof.runcall(run)
    for key in ("tottime", "cumulative"):
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(key).print_stats(args.top)
        print(s.getvalue())
    print("stages of one chunk (CPU ms, best of 7):")
    staged = stages(gold, pred)
    for name, ms in staged.items():
        print(f"  {name:<45} {ms:9.2f}" if isinstance(ms, float) else f"  {name:<45} {ms}")
    budget(gold, pred, in_process, staged["plan_chunks (whole files)"])


if __name__ == "__main__":
    main()
