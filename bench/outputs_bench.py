#!/usr/bin/env python3
"""Every output on the one engine: time and memory of each, measured in one run (a script, not a test).

    python bench/outputs_bench.py                    # 100k and 1M sentences
    python bench/outputs_bench.py --sizes 100000 --repeat 5

On the synthetic corpus (shared/tools/synth_corpus.py), rounds interleaved, best wall time kept:

- ``--json``, the default tables, and ``--report DIR`` of ``spanscore evaluate``: wall and CPU
  seconds, and the peak memory of spanscore's whole process tree (RSS and PSS, sampled every
  10 ms, in a separate run); every report CSV is checked complete (its rows equal the counts of
  the JSON).
- JSONL: the corpus converted to JSONL documents (``spanscore convert --to jsonl``), scored with
  ``--format jsonl --json``.
- Python label lists, in process: ``spanscore.evaluate(format="labels", keep_details=False)``
  (and with details) against seqeval's ``classification_report`` and ``f1_score`` on the very
  same lists.

Writes OUTPUTS.json and OUTPUTS.md in the work folder (default bench/out/, which git ignores).
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import BIN, best, compile_bytecode, corpus, run_once, sizes_of, tree_memory  # noqa: E402

SPANSCORE = str(BIN / "spanscore")


def outputs(out: Path, sentences: int, repeat: int) -> dict[str, Any]:
    prefix = corpus(out, sentences)
    gold, pred = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    report_dir = out / f"report-{sentences}"
    kinds: dict[str, list[str]] = {
        "json": [SPANSCORE, "evaluate", str(gold), str(pred), "--json"],
        "tables": [SPANSCORE, "evaluate", str(gold), str(pred)],
        "report": [SPANSCORE, "evaluate", str(gold), str(pred), "--json", "--report", str(report_dir)],
    }
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for r in range(repeat):
        for kind, cmd in kinds.items():
            keep = out / f"{kind}-{sentences}.out"
            res = run_once(f"spanscore-{kind}", cmd, keep=keep)
            print(
                f"  {sentences:>9} {kind:<7} round {r + 1}: {res['wall_s']:7.2f} s {res['cpu_s']:6.2f} cpu s",
                flush=True,
            )
            runs[kind].append(res)
    table = {k: best(v) for k, v in runs.items()}
    for kind, cmd in kinds.items():
        table[kind].update(tree_memory(cmd))
    table["report"]["csv_complete"] = check_report(
        report_dir, json.loads((out / f"report-{sentences}.out").read_text())
    )
    base = table["json"]["wall_s"]
    for row in table.values():
        row["vs_json"] = round(row["wall_s"] / base, 2)
    return {"sentences": sentences, **sizes_of(prefix), "rounds": repeat, "kinds": table}


def check_report(folder: Path, data: dict[str, Any]) -> bool:
    """Every pair file holds a row per matched pair, errors.csv a row per error."""
    ok = True
    for name, m in data["metrics"].items():
        path = folder / f"{name}.csv"
        if name == "token" or not path.exists():
            continue
        with path.open(encoding="utf-8", newline="") as f:
            rows = sum(1 for _ in csv.reader(f)) - 1
        ok &= rows == m["full"] + m["partial"]
    with (folder / "errors.csv").open(encoding="utf-8", newline="") as f:
        errors = sum(1 for _ in csv.reader(f)) - 1
    e = data["errors"]
    kinds = ("false_positive", "false_negative", "wrong_label_same_span", "wrong_label_overlap", "right_label_overlap")
    return ok and errors == sum(e[k] for k in kinds)


def jsonl(out: Path, sentences: int, repeat: int) -> dict[str, Any]:
    prefix = corpus(out, sentences)
    files = {}
    for side in ("gold", "pred"):
        target = prefix.with_suffix(f".{side}.jsonl")
        if not target.exists():
            subprocess.run(
                [SPANSCORE, "convert", str(prefix.with_suffix(f".{side}")), "-o", str(target), "--to", "jsonl"],
                check=True,
                capture_output=True,
            )
        files[side] = target
    with open(files["gold"], "rb") as f:
        documents = sum(1 for _ in f)
    cmd = [SPANSCORE, "evaluate", str(files["gold"]), str(files["pred"]), "--format", "jsonl", "--json"]
    runs = [run_once("spanscore-jsonl", cmd) for _ in range(repeat)]
    row = best(runs)
    row.update(tree_memory(cmd))
    print(f"  jsonl {documents} documents: {row['wall_s']:.2f} s, tree PSS {row['tree_pss_mb']:.0f} MB", flush=True)
    return {"documents": documents, "mb": round(files["gold"].stat().st_size / 1e6, 1), **row}


def labels(out: Path, sentences: int, repeat: int) -> dict[str, Any]:
    """In process, on Python lists: what a training loop calls."""
    prefix = corpus(out, sentences)
    code = f"""
import json, sys, time
def read(path):
    sents, cur = [], []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\\n")
        if not line:
            if cur: sents.append(cur); cur = []
            continue
        cur.append(line.rsplit(None, 1)[-1])
    if cur: sents.append(cur)
    return sents
g, p = read({str(prefix.with_suffix(".gold"))!r}), read({str(prefix.with_suffix(".pred"))!r})
import spanscore
from seqeval.metrics import classification_report, f1_score
def best(f, n):
    b = 1e9
    for _ in range(n):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b
out = {{
    "spanscore": best(
        lambda: spanscore.evaluate(reference=g, predicted=p, format="labels", keep_details=False), {repeat}
    ),
    "spanscore_details": best(lambda: spanscore.evaluate(reference=g, predicted=p, format="labels"), {repeat}),
    "seqeval_classification_report": best(lambda: classification_report(g, p, digits=4), 1),
    "seqeval_f1_score": best(lambda: f1_score(g, p), 1),
}}
print(json.dumps(out))
"""
    res = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    res = {k: round(v, 3) for k, v in res.items()}
    res["speedup_vs_classification_report"] = round(res["seqeval_classification_report"] / res["spanscore"], 1)
    res["speedup_with_details"] = round(res["seqeval_classification_report"] / res["spanscore_details"], 1)
    res["sentences"] = sentences
    print(f"  labels {sentences}: {res}", flush=True)
    return res


def markdown(results: dict[str, Any]) -> str:
    lines = [f"# Outputs on the one engine ({results['when']})", "", f"Machine: {results['machine']}", ""]
    for entry in results["outputs"]:
        lines += [
            f"## {entry['sentences']:,} sentences ({entry['tokens']:,} tokens, {entry['gold_mb']} MB per file),"
            f" best of {entry['rounds']}",
            "",
            "| output | wall s | vs --json | CPU s | peak RSS MB (largest process) | tree RSS MB | tree PSS MB |"
            " runs (s) |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for kind, row in entry["kinds"].items():
            lines.append(
                f"| {kind} | {row['wall_s']:.2f} | {row['vs_json']:.2f} | {row['cpu_s']:.2f} | {row['rss_mb']:.0f} |"
                f" {row['tree_rss_mb']:.0f} | {row['tree_pss_mb']:.0f} |"
                f" {', '.join(f'{x:.2f}' for x in row['runs_s'])} |"
            )
        lines += ["", f"Every report CSV complete: {entry['kinds']['report'].get('csv_complete')}.", ""]
    for entry in results.get("jsonl", []):
        lines.append(
            f"JSONL, {entry['documents']:,} documents ({entry['mb']} MB per file): {entry['wall_s']:.2f} s,"
            f" tree RSS {entry['tree_rss_mb']:.0f} MB, tree PSS {entry['tree_pss_mb']:.0f} MB."
        )
    lines.append("")
    for entry in results.get("labels", []):
        lines.append(
            f"Python label lists, {entry['sentences']:,} sentences, in process: spanscore {entry['spanscore']:.2f} s"
            f" ({entry['spanscore_details']:.2f} s keeping details); seqeval classification_report"
            f" {entry['seqeval_classification_report']:.2f} s, f1_score {entry['seqeval_f1_score']:.2f} s:"
            f" {entry['speedup_vs_classification_report']}x ({entry['speedup_with_details']}x with details)."
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jsonl-sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--labels-size", type=int, default=100_000)
    args = ap.parse_args()
    if shutil.which("spanscore", path=str(BIN)) is None:
        sys.exit(f"needs spanscore installed in {BIN}")
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    results: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "outputs": [outputs(args.out, n, args.repeat if n <= 100_000 else 1) for n in args.sizes],
        "jsonl": [jsonl(args.out, n, args.repeat) for n in args.jsonl_sizes],
        "labels": [labels(args.out, args.labels_size, args.repeat)] if args.labels_size else [],
    }
    (args.out / "OUTPUTS.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "OUTPUTS.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
