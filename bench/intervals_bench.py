#!/usr/bin/env python3
"""Intervals, paired tests, reports and bucket comparisons against the plain count (a script,
not a test): each command in a fresh process, ``--repeat`` rounds, and its ratio to the plain
``evaluate --json`` measured in the same rounds.

    python bench/intervals_bench.py [--sentences 100000] [--repeat 3] [--jobs 0] [--only ci,compare A B --json]
                                    [--baseline SRC] [--split]

The corpus is ../shared/tools/synth_corpus.py's (a system output beside it); compare's second
system is a second synthetic output (``--seed 2``) over the same reference, and ``seen`` reads a
training corpus of a tenth the size (``--seed 3``). Also printed: how many documents (here
sentences) the corpus has and how many distinct per-document count vectors, which is what the
cost of resampling follows. ``--baseline SRC`` also runs every command with another checkout's
``src`` first on ``PYTHONPATH`` (say the main branch's), beside this one.

The runs interleave, so a change in the machine's load lands on both sides alike: each round runs
the plain count and then every command once for the baseline and once for this checkout (which
goes first alternates from round to round). Printed per command: the best wall and CPU seconds of
the rounds, the median of the rounds' ratios to the same side's plain count of the same round
(wall and CPU), the largest peak memory, and the median wall and CPU seconds; and the load
average when the rounds start and end. ``--split`` also prints the median CPU seconds of the
process that ran the command (it counts chunks too, folds them and does the serial work after
counting: the intervals' draws, the tables, the output) and of the processes it forked (the
workers that count chunks), each command started through a launcher that notes its own CPU time
as it exits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"


# ``--split``: the command run through this launcher, which writes the CPU seconds of the process
# it runs in (not of the workers it forks: they inherit the hook, but only the first process
# writes) where SPANSCORE_BENCH_SELF says, as the command line ends (always by ``os._exit``).
LAUNCH = """
import os, resource
from spanscore.cli.main import run
first, out, end = os.getpid(), os.environ["SPANSCORE_BENCH_SELF"], os._exit
def noted(code):
    if os.getpid() == first:
        used = resource.getrusage(resource.RUSAGE_SELF)
        with open(out, "w") as f:
            f.write(repr(used.ru_utime + used.ru_stime))
    end(code)
os._exit = noted
run()
"""


def run_once(cmd: list[str], env: dict[str, str] | None = None, split: bool = False) -> tuple[float, ...]:
    """Wall seconds, CPU seconds (user and system, of the process and the workers it waited for:
    the work done, which a loaded machine disturbs less than the wall time) and peak RSS (MB) of
    the largest process (GNU time's %M) of one run of ``cmd``; with ``split``, also the CPU seconds
    of the first process alone (``LAUNCH``; NaN where it did not end by ``os._exit``)."""
    with tempfile.NamedTemporaryFile("r") as out, tempfile.NamedTemporaryFile("r") as mine:
        if split:  # ``python -m spanscore.cli.main ARGS`` as ``python -c LAUNCH ARGS``
            cmd = [cmd[0], "-c", LAUNCH, *cmd[3:]]
            env = {**(env or os.environ), "SPANSCORE_BENCH_SELF": mine.name}
        start = time.perf_counter()
        subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", out.name, *cmd], stdout=subprocess.DEVNULL, check=True, env=env
        )
        took = time.perf_counter() - start
        user, system, rss = out.read().split()[-3:]
        first = float(mine.read() or "nan")
    found = (took, float(user) + float(system), int(rss) / 1024)
    return (*found, first) if split else found


def measure(cmd: list[str], repeat: int) -> tuple[float, float, float]:
    """Best wall seconds, best CPU seconds and the largest peak RSS (MB) of ``repeat`` runs of
    ``cmd`` one after another (``run_once``)."""
    runs = [run_once(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def summarise(rounds: list[dict[str, tuple[float, ...]]], plain_of: dict[str, str]) -> dict[str, list[float]]:
    """Per command of ``rounds`` (each round: a command's wall s, CPU s, peak MB): best wall s,
    median of the rounds' wall ratios to its plain count (``plain_of``: the plain command of the
    same side), best CPU s, median CPU ratio, largest peak MB, median wall s, median CPU s."""
    out = {}
    for name, plain in plain_of.items():
        runs = [r[name] for r in rounds]
        wall_ratio = statistics.median(r[name][0] / r[plain][0] for r in rounds)
        cpu_ratio = statistics.median(r[name][1] / r[plain][1] for r in rounds)
        out[name] = [
            min(r[0] for r in runs), wall_ratio, min(r[1] for r in runs), cpu_ratio,
            max(r[2] for r in runs), statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs),
        ]
        if len(runs[0]) > 3:  # ``--split``: the first process's CPU and the others', medians
            out[name] += [statistics.median(r[3] for r in runs), statistics.median(r[1] - r[3] for r in runs)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=0, help="--jobs of every command (0: one per CPU)")
    ap.add_argument(
        "--only",
        default="",
        help="measure only the commands whose names hold one of these, comma-separated (and the plain one)",
    )
    ap.add_argument("--baseline", default="", help="another checkout's src folder, measured beside this one")
    ap.add_argument(
        "--split", action="store_true",
        help="also print the median CPU seconds of the command's own process and of the workers it forked",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        run = [sys.executable, str(SYNTH)]
        subprocess.run([*run, str(args.sentences), str(base / "a")], check=True)
        subprocess.run([*run, str(args.sentences), str(base / "b"), "--seed", "2"], check=True)
        subprocess.run([*run, str(max(args.sentences // 10, 100)), str(base / "t"), "--seed", "3"], check=True)
        gold, a, b, train = (str(base / n) for n in ("a.gold", "a.pred", "b.pred", "t.gold"))
        # The second system must annotate the first reference's tokens: the synthetic corpus with
        # another seed draws other tokens, so its tags are laid over the first reference's words.
        fix_tokens(Path(gold), Path(b))
        import spanscore
        from spanscore.analysis.significance import histogram_of

        docs = spanscore.evaluate(reference=gold, predicted=a, documents=True, keep_details=False).documents
        assert docs is not None
        distinct = histogram_of(docs, "0.5").rows.shape[0]
        print(f"{args.sentences} sentences: {docs.stats.shape[0]} {docs.unit}s, {distinct} distinct count vectors")
        ss = [sys.executable, "-m", "spanscore.cli.main"]
        jobs = ["--jobs", str(args.jobs)]
        cases = {
            "evaluate --json (plain)": [*ss, "evaluate", gold, a, "--json", *jobs],
            "evaluate --ci 0.95 --json": [*ss, "evaluate", gold, a, "--ci", "0.95", "--json", *jobs],
            "compare A B --json": [*ss, "compare", gold, a, b, "--json", *jobs],
            "evaluate --report DIR": [*ss, "evaluate", gold, a, "--report", str(base / "report"), *jobs],
            "compare A B --buckets length,seen --per-type --json": [
                *ss, "compare", gold, a, b, "--buckets", "length,seen", "--train", train, "--per-type", "--json", *jobs,
            ],
        }
        # Timed as an installed package runs: byte-compiled (where PYTHONDONTWRITEBYTECODE is set,
        # every run would compile the modules it imports again).
        packages = [Path(spanscore.__file__).parent] + ([Path(args.baseline) / "spanscore"] if args.baseline else [])
        for package in packages:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
        here = os.environ.get("PYTHONPATH", "")
        sides = [(" [baseline]", args.baseline)] * bool(args.baseline) + [("", here)]
        plain_name = "evaluate --json (plain)"
        chosen = [
            name for name in cases if name == plain_name or any(part in name for part in args.only.split(","))
        ]
        plain_of = {name + tag: plain_name + tag for name in chosen for tag, _ in sides}
        rounds: list[dict[str, tuple[float, ...]]] = []
        load_start = os.getloadavg()
        for r in range(args.repeat):
            done: dict[str, tuple[float, ...]] = {}
            order = sides if r % 2 == 0 else sides[::-1]
            for name in chosen:
                for tag, path in order:
                    if name.startswith("evaluate --report"):
                        subprocess.run(["rm", "-rf", str(base / "report")], check=True)
                    done[name + tag] = run_once(cases[name], {**os.environ, "PYTHONPATH": path}, args.split)
            rounds.append(done)
        load_end = os.getloadavg()
        print("load average at start " + ", ".join(f"{x:.2f}" for x in load_start)
              + "; at end " + ", ".join(f"{x:.2f}" for x in load_end) + " (1, 5, 15 minutes)")
        print(
            f"{'command':69} {'best s':>7} {'ratio':>6} {'cpu s':>6} {'ratio':>6} {'peak MB':>8}"
            f" {'median s':>8} {'med cpu':>7}" + (f" {'1st cpu':>7} {'rest cpu':>8}" if args.split else "")
        )
        rows = summarise(rounds, plain_of)
        for name, (took, ratio, cpu, cpu_ratio, peak, mid, mid_cpu, *split) in rows.items():
            print(
                f"{name:69} {took:7.2f} {ratio:6.2f} {cpu:6.2f} {cpu_ratio:6.2f} {peak:8.0f} {mid:8.2f} {mid_cpu:7.2f}"
                + "".join(f" {x:7.3f}" if i == 0 else f" {x:8.3f}" for i, x in enumerate(split))
            )


def fix_tokens(gold: Path, other: Path) -> None:
    """``other``'s tags over ``gold``'s tokens, sentence by sentence (cut or padded with O)."""
    g = gold.read_text(encoding="utf-8").split("\n\n")
    o = other.read_text(encoding="utf-8").split("\n\n")
    out = []
    for gs, os_ in zip(g, o + [""] * (len(g) - len(o)), strict=False):
        words = [line.split(" ")[0] for line in gs.split("\n") if line]
        tags = [line.rsplit(" ", 1)[-1] for line in os_.split("\n") if line]
        tags = (tags + ["O"] * len(words))[: len(words)]
        if tags and tags[0].startswith("I-"):
            tags[0] = "B-" + tags[0][2:]
        out.append("\n".join(f"{w} {t}" for w, t in zip(words, tags, strict=True)))
    other.write_text("\n\n".join(out), encoding="utf-8")


if __name__ == "__main__":
    main()
