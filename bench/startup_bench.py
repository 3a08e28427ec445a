#!/usr/bin/env python3
"""Start-up and the reading floor: what a run costs beyond starting Python, numpy and reading the files.

    python bench/startup_bench.py                       # --help, COMMAND --help, a 2 MB evaluate
    python bench/startup_bench.py --floor 100000        # also the plain count on 100k sentences
    python bench/startup_bench.py --rounds 9 --floor 100000 --peer-rounds 1
    python bench/startup_bench.py --before main~3       # each spanscore figure also at revision REV

Start-up: ``spanscore --help``, each command's ``--help`` and ``spanscore evaluate GOLD PRED
--json`` on a 2 MB CoNLL pair (17,000 synthetic sentences), against ``python -c pass`` and
``python -c "import numpy"``. The floor (``--floor N``): ``spanscore evaluate --json`` on N
synthetic sentences, with its default workers and with ``--jobs 1``, against a process that starts
numpy and reads both files, and against nervaluate (``drivers/nervaluate_driver.py``, all its
schemes). The floor is also timed with ``OPENBLAS_NUM_THREADS=1``, as spanscore's command runs
numpy: without it numpy's OpenBLAS threads spin at import, and idle cores count it as CPU time.

Every figure is one separate process, timed from here: wall seconds, and CPU seconds (user +
system of the process and the workers it waited for, from ``os.wait4``), which a loaded machine
inflates less. The commands run interleaved, one round of each after another, and each figure is
the median of the rounds (the fastest in brackets). Corpora are made by
../shared/tools/synth_corpus.py into the work folder (bench/out/, which git ignores); spanscore's
bytecode is compiled first, as pip does for an installed package. With ``--before REV`` every
spanscore command also runs on that revision's source (``git archive``, as bench/face_bench.py),
in the same rounds. ``spanscore`` is the console script pip would write for the entry point each
revision's pyproject.toml names (bench/out/spanscore, and beside the earlier source), so that each
revision runs as its own installed command would.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from face_bench import extract  # noqa: E402
from run_bench import compile_bytecode, corpus  # noqa: E402

PY = sys.executable
ROOT = HERE.parent
SPANSCORE = str(HERE / "out" / "spanscore")  # the console script of this tree (see entry_script)
STARTUP_SENTENCES = 17_000  # about 2 MB per file
HELPS = ("evaluate", "compare", "convert", "train")


BEFORE: Path | None = None  # the source tree of --before REV
BEFORE_SCRIPT: str | None = None  # its console script
Command = tuple[list[str], dict[str, str] | None]  # argv, environment (None: this one)
ONE_BLAS = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its reaped workers included) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def entry_script(pyproject: str, path: Path) -> str:
    """The ``spanscore`` console script as pip writes it, for the entry point ``pyproject`` names.

    Each revision runs its own entry point (the venv's script names the one of the installed tree).
    """
    import tomllib

    module, _, function = tomllib.loads(pyproject)["project"]["scripts"]["spanscore"].partition(":")
    path.write_text(
        f"#!{PY}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom {module} import {function}\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        f"    sys.exit({function}())\n"
    )
    path.chmod(0o755)
    return str(path)


def with_before(commands: dict[str, list[str] | Command]) -> dict[str, Command]:
    """The commands (an argv, or an argv and its environment), and with --before each spanscore
    command again on the earlier source."""
    out: dict[str, Command] = {}
    for name, given in commands.items():
        cmd, env = given if isinstance(given, tuple) else (given, None)
        out[name] = (cmd, env)
        if BEFORE is not None and BEFORE_SCRIPT is not None and name.startswith("spanscore"):
            before = [BEFORE_SCRIPT if c == SPANSCORE else c for c in cmd]
            out[f"{name} [before]"] = (before, {**os.environ, "PYTHONPATH": str(BEFORE)})
    return out


def rounds(commands: dict[str, list[str] | Command], n: int) -> dict[str, list[tuple[float, float]]]:
    """Each command ``n`` times, interleaved round by round."""
    runs = with_before(commands)
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for k in range(n):
        for name, (cmd, env) in runs.items():
            out[name].append(timed(cmd, env))
        print(f"  round {k + 1}/{n} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    return out


def medians(runs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Median wall, median CPU, fastest wall."""
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs), min(w for w, _ in runs)


def table(results: dict[str, list[tuple[float, float]]], base: str, title: str) -> None:
    base_wall, base_cpu, _ = medians(results[base])
    print(f"\n{title}\n")
    print(f"| command | wall s (fastest) | CPU s | wall / {base} | CPU / {base} |")
    print("|---|---:|---:|---:|---:|")
    for name, runs in results.items():
        wall, cpu, best = medians(runs)
        print(f"| {name} | {wall:.3f} ({best:.3f}) | {cpu:.3f} | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")


def startup(out: Path, n: int) -> None:
    prefix = corpus(out, STARTUP_SENTENCES)
    gold, pred = str(prefix.with_suffix(".gold")), str(prefix.with_suffix(".pred"))
    mb = Path(gold).stat().st_size / 1e6
    commands = {
        "python -c pass": [PY, "-c", "pass"],
        'python -c "import numpy"': [PY, "-c", "import numpy"],
        "spanscore --help": [SPANSCORE, "--help"],
        "spanscore --version": [SPANSCORE, "--version"],
        **{f"spanscore {c} --help": [SPANSCORE, c, "--help"] for c in HELPS},
        f"spanscore evaluate --json ({mb:.1f} MB pair)": [SPANSCORE, "evaluate", gold, pred, "--json"],
    }
    results = rounds(commands, n)
    table(results, 'python -c "import numpy"', f"Start-up, median of {n} rounds, load {os.getloadavg()[0]:.2f}")


def floor(out: Path, sentences: int, n: int, peer_rounds: int) -> None:
    prefix = corpus(out, sentences)
    gold, pred = str(prefix.with_suffix(".gold")), str(prefix.with_suffix(".pred"))
    read = "import sys, numpy\nfor p in sys.argv[1:]:\n    open(p, 'rb').read()"
    commands: dict[str, list[str] | Command] = {
        "floor: numpy + read both files": [PY, "-c", read, gold, pred],
        # spanscore sets OPENBLAS_NUM_THREADS=1 before numpy loads; the floor above starts numpy's
        # threads, whose spinning idle cores count as its CPU time (about 0.03 s, more when quiet).
        "floor, one OpenBLAS thread (as spanscore runs)": ([PY, "-c", read, gold, pred], ONE_BLAS),
        "spanscore evaluate --json": [SPANSCORE, "evaluate", gold, pred, "--json"],
        "spanscore evaluate --json --jobs 1": [SPANSCORE, "evaluate", gold, pred, "--json", "--jobs", "1"],
    }
    results = rounds(commands, n)
    if peer_rounds:
        driver = str(HERE / "drivers" / "nervaluate_driver.py")
        results |= rounds({"nervaluate (all schemes)": [PY, driver, gold, pred]}, peer_rounds)
    mb = Path(gold).stat().st_size / 1e6
    base = "floor: numpy + read both files"
    table(results, base, f"{sentences} sentences ({mb:.1f} MB per file), median of {n} rounds")
    one, _, _ = medians(results["spanscore evaluate --json"])
    _, floor_cpu, _ = medians(results[base])
    print(f"\naims: the count within 1.5x of the floor, --jobs 1 within 2x, load {os.getloadavg()[0]:.2f}")
    for name in ("spanscore evaluate --json", "spanscore evaluate --json --jobs 1"):
        for key in (name, f"{name} [before]"):
            if key in results:
                single = medians(results["floor, one OpenBLAS thread (as spanscore runs)"])[1]
                cpu = medians(results[key])[1]
                print(f"  {key}: {cpu / floor_cpu:.2f}x the floor by CPU ({cpu / single:.2f}x, one OpenBLAS thread)")
    if peer_rounds:
        peer, peer_cpu, _ = medians(results["nervaluate (all schemes)"])
        _, cpu, _ = medians(results["spanscore evaluate --json"])
        print(f"\nnervaluate / spanscore: {peer / one:.1f}x wall, {peer_cpu / cpu:.1f}x CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE / "out", help="work folder (corpora)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of every spanscore command")
    parser.add_argument("--floor", type=int, metavar="SENTENCES", help="also the count on this many sentences")
    parser.add_argument("--peer-rounds", type=int, default=1, help="rounds of nervaluate with --floor (0: none)")
    parser.add_argument("--no-startup", action="store_true", help="only the --floor figures")
    parser.add_argument("--before", metavar="REV", help="also run each spanscore command on this revision")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    global BEFORE, BEFORE_SCRIPT, SPANSCORE
    SPANSCORE = entry_script((ROOT / "pyproject.toml").read_text(), args.out / "spanscore")
    if args.before:
        BEFORE = extract(args.before, args.out)
        pyproject = subprocess.run(
            ["git", "show", f"{args.before}:pyproject.toml"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        BEFORE_SCRIPT = entry_script(pyproject, BEFORE.parent / "spanscore")
    import spanscore

    print(f"spanscore from {Path(spanscore.__file__).parent}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs")
    if not args.no_startup:
        startup(args.out, args.rounds)
    if args.floor:
        floor(args.out, args.floor, args.rounds, args.peer_rounds)


if __name__ == "__main__":
    main()
