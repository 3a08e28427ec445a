#!/usr/bin/env python3
"""The CPU of making one chunk's report rows (``stages.pairs.render_rows``), alone (a script, not a
test): the chunks of an in-process ``evaluate --report`` run (one process) are captured as they are
counted, then each is rendered again ``--repeat`` times and the best thread-CPU time kept.

    python bench/report_rows_bench.py [--gold G --pred P] [--chunks 4] [--repeat 20] [--md5] [--files]

``--md5`` prints a checksum of every file's rows of the captured chunks (to compare two checkouts:
run it with each one's ``src`` first on ``PYTHONPATH``). ``--files`` renders every captured chunk
``--repeat`` times with a copy of ``render_rows`` that reads a clock around what the files share
and around each file's own part (the copy is made from the function's source; the script stops
if that source no longer has the lines it times).
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", default=str(here / "out" / "synth-100000.gold"))
    ap.add_argument("--pred", default=str(here / "out" / "synth-100000.pred"))
    ap.add_argument("--chunks", type=int, default=4, help="how many chunks to time")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--md5", action="store_true")
    ap.add_argument("--files", action="store_true", help="each file's part of the rows (mean ms a chunk)")
    args = ap.parse_args()

    import spanscore
    from spanscore.stages import pairs, parts

    captured: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = pairs.render_rows

    def capture(*a: Any, **k: Any) -> Any:
        captured.append((a, k))
        return real(*a, **k)

    setattr(parts, "render_rows", capture)  # noqa: B010  (wrapped where the count calls it)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            from spanscore.presentation.writer import ReportWriter

            writer = ReportWriter(Path(tmp) / "r")
            spanscore.evaluate(reference=args.gold, predicted=args.pred, rows=writer, jobs=1)
    finally:
        setattr(parts, "render_rows", real)  # noqa: B010
    if args.md5:
        digest = hashlib.md5()
        for a, k in captured:
            got = real(*a, **k)
            for name in sorted(got.files):
                digest.update(name.encode())
                for block in got.files[name].blocks:
                    digest.update(block)
        print(f"{len(captured)} chunks, rows md5 {digest.hexdigest()}")
    if args.files:
        by_file(captured, args.repeat)
    picked = captured[: args.chunks]
    best = []
    for a, k in picked:
        times = []
        for _ in range(args.repeat):
            t = time.thread_time()
            real(*a, **k)
            times.append(time.thread_time() - t)
        best.append(min(times) * 1000)
    print("best ms per chunk: " + ", ".join(f"{b:.2f}" for b in best) + f"; sum {sum(best):.2f}")


def by_file(captured: list[tuple[tuple[Any, ...], dict[str, Any]]], repeat: int) -> None:
    """Mean thread CPU a chunk of what every file shares and of each file's own rows."""
    import collections
    import inspect

    from spanscore.stages import pairs

    source = inspect.getsource(pairs.render_rows)
    edits = [
        ("    d = details\n", "    _t0 = time.thread_time()\n    d = details\n"),
        (
            "    for criterion in criteria:\n        if criterion not in d.matchings:\n            continue\n"
            "        m = d.matchings[criterion]\n",
            "    _T['shared'] += time.thread_time() - _t0\n    for criterion in criteria:\n"
            "        if criterion not in d.matchings:\n            continue\n        _t1 = time.thread_time()\n"
            "        m = d.matchings[criterion]\n",
        ),
        (
            '        files[f"{criterion}.csv"] = rows\n',
            '        files[f"{criterion}.csv"] = rows\n        _T[criterion + ".csv"] += time.thread_time() - _t1\n',
        ),
        (
            "    bodies[ERRORS_FILE], bodies[TYPE5_FILE] = _error_rows(d, refs, preds, cells)\n",
            "    _t1 = time.thread_time()\n"
            "    bodies[ERRORS_FILE], bodies[TYPE5_FILE] = _error_rows(d, refs, preds, cells)\n"
            "    _T['the two error files'] += time.thread_time() - _t1\n",
        ),
    ]
    for old, new in edits:
        if source.count(old) != 1:
            raise SystemExit("render_rows has changed: update --files")
        source = source.replace(old, new)
    spent: collections.Counter[str] = collections.Counter()
    space = {**vars(pairs), "time": time, "_T": spent}
    exec(source, space)  # the timed copy, in the module's own names
    timed = space["render_rows"]
    for _ in range(repeat):
        for a, k in captured:
            timed(*a, **k)
    n = repeat * len(captured)
    print(f"{len(captured)} chunks x {repeat}, mean ms a chunk: "
          + ", ".join(f"{name} {ms / n * 1000:.2f}" for name, ms in spent.items())
          + f"; all {sum(spent.values()) / n * 1000:.2f}")


if __name__ == "__main__":
    main()
