#!/usr/bin/env python3
"""The command line before and after a change, on the same files (a script, not a test).

    python bench/face_bench.py --before REV [--sentences 100000] [--repeat 5]

Extracts revision REV of this repository (``git archive``) into the work folder and times, on the
synthetic corpus, ``spanscore evaluate GOLD PRED --json``, the default tables, and ``spanscore
compare GOLD PRED GOLD --json`` (1000 resamples and 1000 trials) with the code of REV and with the
working tree, each a separate process, rounds interleaved (before, after, before, ...), the best
kept. The JSON printed by both must be equal (but for the version-free signature parts they
share), so the figures compare the same work. Writes FACE.json in the work folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import best, compile_bytecode, corpus, run_once  # noqa: E402

ROOT = HERE.parent


def extract(rev: str, out: Path) -> Path:
    """The source tree of ``rev`` (made once per revision)."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    folder = out / f"rev-{sha[:12]}"
    if not (folder / "src" / "spanscore").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "src"], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "src")], check=True)
    return folder / "src"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="The revision to compare the working tree with.")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    prefix = corpus(args.out, args.sentences)
    gold, pred = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    trees = {"before": extract(args.before, args.out), "after": ROOT / "src"}
    entry = [sys.executable, "-c", "import sys; from spanscore.cli.main import main; sys.argv[0] = 'spanscore'; main()"]
    kinds = {
        "evaluate --json": ["evaluate", str(gold), str(pred), "--json"],
        "evaluate (tables)": ["evaluate", str(gold), str(pred)],
        "compare --json": ["compare", str(gold), str(pred), str(gold), "--json"],
    }
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {k: {"before": [], "after": []} for k in kinds}
    outputs: dict[str, dict[str, str]] = {k: {} for k in kinds}
    for r in range(args.repeat):
        for kind, cmd in kinds.items():
            for side, src in trees.items():
                os.environ["PYTHONPATH"] = str(src)
                keep = args.out / f"face-{side}.out"
                res = run_once(f"{kind} {side}", [*entry, *cmd], keep=keep)
                outputs[kind][side] = keep.read_text()
                runs[kind][side].append(res)
                print(f"  {kind:<18} {side:<6} round {r + 1}: {res['wall_s']:6.2f} s", flush=True)
    table = {}
    for kind in kinds:
        if kind != "evaluate (tables)":
            a, b = (json.loads(outputs[kind][s]) for s in ("before", "after"))
            assert a == b, f"{kind}: the outputs differ"
        table[kind] = {side: best(v) for side, v in runs[kind].items()}
        before, after = table[kind]["before"]["wall_s"], table[kind]["after"]["wall_s"]
        print(f"{kind:<18} before {before:.2f} s, after {after:.2f} s")
    (args.out / "FACE.json").write_text(json.dumps({"sentences": args.sentences, "kinds": table}, indent=2) + "\n")


if __name__ == "__main__":
    main()
