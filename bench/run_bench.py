#!/usr/bin/env python3
"""Benchmark spanscore against its peers, end to end, on the synthetic corpus (a script, not a test).

    python bench/run_bench.py                      # 100k and 1M sentences, every tool
    python bench/run_bench.py --big                # also 10M sentences: streaming and Dask figures
    python bench/run_bench.py --sizes 100000 --repeat 3 --tools spanscore nervaluate

Every figure is one separate process that reads the files and scores them, timed from the parent
(wall clock) and measured by /usr/bin/time (peak resident memory, "%M"). All tools read the very
same files in the same run, interleaved (one round of every tool, then the next round), and the
best of the rounds is kept. The load average is recorded next to each figure because the machine
may be shared. Corpora come from ../shared/tools/synth_corpus.py and are kept in the work folder
(default bench/out/, which git ignores) for the next run.

Tools:
  spanscore       spanscore evaluate GOLD PRED --json            (every criterion, streaming engine)
  nervaluate      drivers/nervaluate_driver.py GOLD PRED         (nervaluate 1.2.1, all its schemes)
  seqeval         drivers/seqeval_driver.py GOLD PRED            (seqeval 1.2.2, default mode)
  seqeval-strict  drivers/seqeval_driver.py GOLD PRED --strict   (mode='strict', scheme=IOB2)
  seqscore        seqscore score --labels BIO --reference GOLD PRED   (seqscore 0.9.0 CLI)

Writes RESULTS.json and RESULTS.md in the work folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SYNTH = Path(os.environ.get("SYNTH_CORPUS", HERE.parent.parent / "shared" / "tools" / "synth_corpus.py"))
BIN = Path(sys.executable).parent
PEERS = ("nervaluate", "seqeval", "seqeval-strict", "seqscore")
TOOLS = ("spanscore", *PEERS)
TIME = "/usr/bin/time"


def command(tool: str, gold: Path, pred: Path, workers: int = 2) -> list[str]:
    py = sys.executable
    drivers = HERE / "drivers"
    if tool == "spanscore":
        return [str(BIN / "spanscore"), "evaluate", str(gold), str(pred), "--json"]
    if tool == "spanscore-1":
        return [*command("spanscore", gold, pred), "--jobs", "1"]
    if tool == "spanscore-dask":
        return [*command("spanscore", gold, pred), "--engine", "dask", "--workers", str(workers)]
    if tool == "nervaluate":
        return [py, str(drivers / "nervaluate_driver.py"), str(gold), str(pred)]
    if tool == "seqeval":
        return [py, str(drivers / "seqeval_driver.py"), str(gold), str(pred)]
    if tool == "seqeval-strict":
        return [py, str(drivers / "seqeval_driver.py"), str(gold), str(pred), "--strict"]
    if tool == "seqscore":
        return [str(BIN / "seqscore"), "score", "--labels", "BIO", "--reference", str(gold), str(pred)]
    raise ValueError(tool)


def strict_f1(tool: str, stdout: str) -> float | None:
    """The strict (exact span and type) micro F1 a tool printed, to check that all agree."""
    try:
        if tool.startswith("spanscore"):
            return float(json.loads(stdout)["metrics"]["strict"]["f1"])
        if tool == "seqscore":
            for line in stdout.splitlines():
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if cells and cells[0] == "ALL":
                    return float(cells[3]) / 100
            return None
        return float(json.loads(stdout.strip().splitlines()[-1])["strict_f1"])
    except (ValueError, KeyError, IndexError):
        return None


def run_once(tool: str, cmd: list[str], keep: Path | None = None) -> dict[str, Any]:
    """One timed process: wall seconds, peak RSS (MB), CPU seconds (user + sys), load average before."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, tempfile.TemporaryFile("w+") as out:
        load = os.getloadavg()
        t0 = time.perf_counter()
        timed = [TIME, "-f", "%e %M %U %S", "-o", tf.name, *cmd]
        proc = subprocess.run(timed, stdout=out, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        _, rss_kb, user, system = tf.read().split()[-4:]
        out.seek(0)
        stdout = out.read()
    if keep is not None:
        keep.write_text(stdout)
    return {
        "tool": tool,
        "wall_s": round(wall, 3),
        "rss_mb": round(int(rss_kb) / 1024, 1),
        "cpu_s": round(float(user) + float(system), 2),
        "load1": round(load[0], 2),
        "strict_f1": strict_f1(tool, stdout),
        "stdout_chars": len(stdout),
    }


def tree_memory(cmd: list[str], every: float = 0.01) -> dict[str, float]:
    """Peak memory of a command and every process it starts, summed over the tree while it runs:
    resident set (pages shared between the forked workers counted once per process) and
    proportional set (shared pages split between the processes that share them), in MB."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_rss = peak_pss = 0.0
    while proc.poll() is None:
        rss = pss = 0
        for pid in _tree(proc.pid):
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
            except (OSError, ValueError):
                continue  # ended between the listing and the read
        peak_rss, peak_pss = max(peak_rss, rss / 1024), max(peak_pss, pss / 1024)
        time.sleep(every)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    return {"tree_rss_mb": round(peak_rss, 1), "tree_pss_mb": round(peak_pss, 1)}


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def corpus(out: Path, sentences: int) -> Path:
    """The synthetic corpus of ``sentences`` (made once; a .meta file says it is complete)."""
    prefix = out / f"synth-{sentences}"
    meta = prefix.with_suffix(".meta")
    want = {"sentences": sentences, "seed": 13, "tool": str(SYNTH)}
    if meta.exists() and json.loads(meta.read_text()) == want and prefix.with_suffix(".gold").exists():
        return prefix
    print(f"making {sentences} sentences with {SYNTH} ...", flush=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(SYNTH), str(sentences), str(prefix)], check=True)
    want["seconds"] = round(time.perf_counter() - t0, 1)
    meta.write_text(json.dumps({k: want[k] for k in ("sentences", "seed", "tool")}))
    print(f"  done in {want['seconds']} s", flush=True)
    return prefix


def sizes_of(prefix: Path) -> dict[str, Any]:
    gold = prefix.with_suffix(".gold")
    with open(gold, "rb") as f:
        tokens = sum(1 for line in f if line.strip())
    return {"gold_mb": round(gold.stat().st_size / 1e6, 1), "tokens": tokens}


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    top = dict(min(runs, key=lambda r: r["wall_s"]))
    top["rss_mb"] = max(r["rss_mb"] for r in runs)
    top["runs_s"] = [r["wall_s"] for r in runs]
    top["cpu_s"] = min(r["cpu_s"] for r in runs)
    top["loads"] = [r["load1"] for r in runs]
    return top


def compare(out: Path, sentences: int, rounds: dict[str, int]) -> dict[str, Any]:
    """Every tool on one corpus; ``rounds`` says how many runs each gets (interleaved, best kept)."""
    prefix = corpus(out, sentences)
    gold, pred = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    tools = [t for t, n in rounds.items() if n > 0]
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    for r in range(max(rounds.values())):
        for tool in tools:
            if r >= rounds[tool]:
                continue
            res = run_once(tool, command(tool, gold, pred))
            print(
                f"  {sentences:>9} {tool:<15} round {r + 1}: {res['wall_s']:8.2f} s {res['cpu_s']:7.2f} cpu s"
                f" {res['rss_mb']:7.1f} MB  load {res['load1']}",
                flush=True,
            )
            runs[tool].append(res)
    table = {t: best(v) for t, v in runs.items()}
    if "spanscore" in table:  # the worker processes' memory, summed (the table's RSS is per process)
        table["spanscore"].update(tree_memory(command("spanscore", gold, pred)))
    if "spanscore" in table:
        base = table["spanscore"]["wall_s"]
        for row in table.values():
            row["speedup_vs_spanscore"] = round(row["wall_s"] / base, 1)
            row["cpu_speedup_vs_spanscore"] = round(row["cpu_s"] / table["spanscore"]["cpu_s"], 1)
    f1s = {t: row["strict_f1"] for t, row in table.items()}
    return {"sentences": sentences, **sizes_of(prefix), "rounds": rounds, "tools": table, "strict_f1": f1s}


def streaming(out: Path, big: int, small: int, rounds: int, workers: int, dask: bool) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for n in (small, big):
        prefix = corpus(out, n)
        gold, pred = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
        # The Dask speed-up is against one process (--jobs 1); the default engine uses every core.
        kinds = ["spanscore", "spanscore-1", "spanscore-dask"] if dask and n == big else ["spanscore", "spanscore-1"]
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        for r in range(rounds):
            for kind in kinds:
                keep = out / f"{kind}-{n}.json"
                one = run_once(kind, command(kind, gold, pred, workers), keep=keep)
                print(
                    f"  {n:>9} {kind:<15} round {r + 1}: {one['wall_s']:8.2f} s {one['cpu_s']:7.2f} cpu s"
                    f" {one['rss_mb']:7.1f} MB  load {one['load1']}",
                    flush=True,
                )
                runs[kind].append(one)
        entry = {"sentences": n, **sizes_of(prefix), **{k: best(v) for k, v in runs.items()}}
        entry["spanscore"].update(tree_memory(command("spanscore", gold, pred)))
        if "spanscore-dask" in entry:
            same = (out / f"spanscore-{n}.json").read_bytes() == (out / f"spanscore-dask-{n}.json").read_bytes()
            entry["dask_json_identical"] = same
            entry["dask_speedup"] = round(entry["spanscore-1"]["wall_s"] / entry["spanscore-dask"]["wall_s"], 2)
            entry["dask_workers"] = workers
        res[str(n)] = entry
    res["ratio_big_small"] = round(res[str(big)]["spanscore"]["wall_s"] / res[str(small)]["spanscore"]["wall_s"], 2)
    return res


def markdown(results: dict[str, Any]) -> str:
    lines = [f"# Benchmark results ({results['when']})", "", f"Machine: {results['machine']}", ""]
    for comp in results["compare"]:
        lines += [
            f"## {comp['sentences']:,} sentences ({comp['tokens']:,} tokens, {comp['gold_mb']} MB per file),"
            f" best of {max(comp['rounds'].values())} (runs per tool: see the runs column);"
            f" run at {comp.get('when', results.get('compare_when', '?'))}",
            "",
            "| tool | wall s | speed-up (tool s / ours) | CPU s | CPU speed-up | peak RSS MB | strict F1 | runs (s) |"
            " load avg |",
            "|---|---:|---:|---:|---:|---:|---:|---|---|",
        ]
        for tool, row in comp["tools"].items():
            speed = "1 (base)" if tool == "spanscore" else f"{row.get('speedup_vs_spanscore', '')}x"
            cpu = "1 (base)" if tool == "spanscore" else f"{row.get('cpu_speedup_vs_spanscore', '')}x"
            lines.append(
                f"| {tool} | {row['wall_s']:.2f} | {speed} | {row['cpu_s']:.2f} | {cpu} | {row['rss_mb']:.0f} |"
                f" {_f1(row['strict_f1'])} |"
                f" {', '.join(f'{x:.2f}' for x in row['runs_s'])} | {', '.join(str(x) for x in row['loads'])} |"
            )
        ours = comp["tools"].get("spanscore", {})
        if "tree_pss_mb" in ours:
            lines += [
                "",
                f"spanscore's processes together (parent and workers, sampled every 10 ms): peak RSS"
                f" {ours['tree_rss_mb']:.0f} MB, peak PSS {ours['tree_pss_mb']:.0f} MB (shared pages split).",
            ]
        lines.append("")
    st = results.get("streaming")
    if st:
        lines += [
            "## Streaming and Dask",
            "",
            f"Run at {results.get('streaming_when', results['when'])}.",
            "",
            "| sentences | tokens | MB per file | engine | wall s | CPU s | peak RSS MB | runs (s) | load avg |",
            "|---:|---:|---:|---|---:|---:|---:|---|---|",
        ]
        for key, entry in st.items():
            if not isinstance(entry, dict):
                continue
            for kind in ("spanscore", "spanscore-1", "spanscore-dask"):
                if kind in entry:
                    row = entry[kind]
                    lines.append(
                        f"| {entry['sentences']:,} | {entry['tokens']:,} | {entry['gold_mb']} | {kind} |"
                        f" {row['wall_s']:.2f} | {row['cpu_s']:.2f} | {row['rss_mb']:.0f} |"
                        f" {', '.join(f'{x:.2f}' for x in row['runs_s'])} | {', '.join(str(x) for x in row['loads'])} |"
                    )
            if "dask_speedup" in entry:
                lines.append("")
                lines.append(
                    f"Dask with {entry['dask_workers']} workers on {key} sentences: {entry['dask_speedup']}x the"
                    f" stream engine in one process (spanscore-1, --jobs 1); JSON identical:"
                    f" {entry['dask_json_identical']}."
                )
        for key, entry in st.items():
            if isinstance(entry, dict) and "tree_pss_mb" in entry.get("spanscore", {}):
                row = entry["spanscore"]
                lines.append(
                    f"{key} sentences, spanscore's processes together: peak RSS {row['tree_rss_mb']:.0f} MB,"
                    f" peak PSS {row['tree_pss_mb']:.0f} MB."
                )
        lines += ["", f"Time ratio, largest / smaller streaming corpus: {st['ratio_big_small']}", ""]
    return "\n".join(lines) + "\n"


def _f1(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "out", help="work folder (corpora and results)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000], help="sentences, peer comparison")
    ap.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    ap.add_argument("--repeat", type=int, default=3, help="rounds on corpora up to 100k sentences (best kept)")
    ap.add_argument("--large-repeat", type=int, default=1, help="rounds of the peers above 100k sentences (0: none)")
    ap.add_argument("--big", action="store_true", help="also 10M sentences (~1.1 GB per file): streaming and Dask")
    ap.add_argument("--big-size", type=int, default=10_000_000)
    ap.add_argument("--stream-repeat", type=int, default=3, help="rounds of the streaming / Dask runs")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers")
    ap.add_argument("--no-dask", action="store_true", help="leave the Dask runs out of --big")
    ap.add_argument("--no-compare", action="store_true", help="only the --big streaming / Dask runs")
    ap.add_argument("--render", action="store_true", help="only rewrite RESULTS.md from RESULTS.json")
    args = ap.parse_args()
    if args.render:
        results = json.loads((args.out / "RESULTS.json").read_text())
        _write(args.out, results)
        print(markdown(results))
        return
    if not Path(TIME).exists() or shutil.which("spanscore", path=str(BIN)) is None:
        sys.exit(f"needs {TIME} and spanscore installed in {BIN}")
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1]) / 2**20
        machine += f", {mem:.0f} GiB RAM"
    except (OSError, StopIteration):
        pass
    # A run replaces the sections it measures and keeps the others of an earlier run.
    previous = args.out / "RESULTS.json"
    results: dict[str, Any] = json.loads(previous.read_text()) if previous.exists() else {"compare": []}
    results.update(when=time.strftime("%Y-%m-%d %H:%M"), machine=machine)
    if not args.no_compare:
        for n in args.sizes:
            rounds = {t: args.repeat if t == "spanscore" or n <= 100_000 else args.large_repeat for t in args.tools}
            entry = compare(args.out, n, rounds)
            entry["when"] = time.strftime("%Y-%m-%d %H:%M")
            kept = [c for c in results.get("compare", []) if c["sentences"] != n]
            results["compare"] = sorted([*kept, entry], key=lambda c: int(c["sentences"]))
            _write(args.out, results)
    if args.big:
        small = max([n for n in args.sizes if n < args.big_size] or [1_000_000])
        results["streaming_when"] = results["when"]
        results["streaming"] = streaming(
            args.out, args.big_size, small, args.stream_repeat, args.workers, dask=not args.no_dask
        )
        _write(args.out, results)
    print(markdown(results))


def compile_bytecode() -> None:
    """Write the .pyc files of spanscore and of the drivers, as pip does for an installed package
    (the peers'): an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile
    spanscore's modules from source in every timed run."""
    import spanscore

    for folder in (Path(spanscore.__file__).parent, HERE / "drivers"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True)


def _write(out: Path, results: dict[str, Any]) -> None:
    (out / "RESULTS.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "RESULTS.md").write_text(markdown(results))


if __name__ == "__main__":
    main()
