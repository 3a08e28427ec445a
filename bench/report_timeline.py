#!/usr/bin/env python3
"""A wall-clock timeline of one ``spanscore`` run, every process and thread (a script, not a test):
imports, each part's reading, counting and row making and in which process, the pipe, the fold,
the report's writing thread, the page (charts, report.html, summary files), the moves into place,
the tables and the exit, each with its wall and CPU milliseconds from the process's start.

    python bench/report_timeline.py [--out FILE.tsv] [--all] [--baseline SRC] -- evaluate GOLD PRED --report DIR

The command runs in a fresh process whose functions are wrapped as their modules are imported (an
import hook: the run imports what it would, when it would), so nothing in the library changes.
Forked workers inherit the wrappers. Each event is one line (pid, thread, CLOCK_BOOTTIME ns,
the thread's CPU ns, begin/end, name), appended with ``O_APPEND`` so processes and threads can
share the file; the run's kernel start time (``/proc/self/stat``) is time zero. Printed: the spans
in time order (``--all``: every span, including each write of the writing thread), then per
thread each span's count, wall and CPU milliseconds and first start and last end. Linux only.
The wrappers cost a few microseconds a call: compare runs measured the same way, not against
``intervals_bench.py``'s figures.
"""

from __future__ import annotations

import argparse
import functools
import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

_FD = -1


def _event(kind: str, name: str) -> None:
    line = (
        f"{os.getpid()}\t{threading.current_thread().name}\t{time.clock_gettime_ns(time.CLOCK_BOOTTIME)}"
        f"\t{time.thread_time_ns()}\t{kind}\t{name}\n"
    )
    os.write(_FD, line.encode())


def _wrap(owner: Any, attr: str, name: str | None = None) -> None:
    fn = getattr(owner, attr, None)
    if fn is None:  # another checkout without it
        return
    label = name or attr

    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        _event("B", label)
        try:
            return fn(*args, **kwargs)
        finally:
            _event("E", label)

    setattr(owner, attr, inner)


def _wrap_generator(owner: Any, attr: str, name: str) -> None:
    fn = getattr(owner, attr, None)
    if fn is None:
        return

    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Iterator[Any]:
        it = fn(*args, **kwargs)
        while True:
            _event("B", name)
            try:
                item = next(it)
            except StopIteration:
                _event("E", name)
                return
            _event("E", name)
            yield item

    setattr(owner, attr, inner)


def _patch_local(m: ModuleType) -> None:
    _wrap(m, "count_part")
    _wrap(m.PartCounter, "__call__", "read and count a part")
    _wrap_generator(m.PartCounter, "plan", "plan a part")


def _patch_parts(m: ModuleType) -> None:
    _wrap(m, "render_rows", "make rows")
    _wrap(m.Folder, "add", "fold a part")


def _patch_pairs(m: ModuleType) -> None:
    _wrap(m, "_keep", "rows to scratch file, or held")
    if hasattr(m, "HeldRows"):
        _wrap(m.HeldRows, "_run", "worker's rows thread (writes them in place)")
    _wrap(m, "_error_rows", "error rows")


def _patch_workers(m: ModuleType) -> None:
    _wrap(m, "_write", "send result (pipe)")
    _wrap(m._Worker, "receive", "receive result (pipe)")
    _wrap(m._Worker, "fork", "fork a worker")
    _wrap(m._Worker, "stop", "stop a worker (and reap it)")
    _wrap(m, "note", "tell a worker where its rows go")


def _patch_writer(m: ModuleType) -> None:
    _wrap(m, "_write_at", "write rows")
    _wrap(m, "_copy_at", "copy a worker's rows")
    _wrap(m._Copier, "_run", "writing thread")
    _wrap(m._Copier, "write", "hand rows to the thread")
    _wrap(m._Copier, "copy", "hand a copy to the thread")
    _wrap(m.ReportWriter, "__call__", "report writer takes a part")
    _wrap(m.ReportWriter, "finish", "finish the folder")
    _wrap(m.ReportWriter, "_copied", "wait for the writing thread")
    _wrap(m.ReportWriter, "wait", "wait for the old files' removal")
    _wrap(m, "_move_into_place", "move a file into place")


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "spanscore.engines.local": _patch_local,
    "spanscore.stages.parts": _patch_parts,
    "spanscore.stages.pairs": _patch_pairs,
    "spanscore.runtime.workers": _patch_workers,
    "spanscore.presentation.writer": _patch_writer,
    "spanscore.presentation.charts": lambda m: _wrap(m, "draw_all", "charts"),
    "spanscore.presentation.html": lambda m: _wrap(m, "render_html", "report.html"),
    "spanscore.presentation.markdown": lambda m: _wrap(m, "render_markdown", "summary.md"),
    "spanscore.presentation.terminal": lambda m: _wrap(m, "print_evaluation", "the tables (rich)"),
    "spanscore.cli.evaluate": lambda m: (_wrap(m, "_print", "print"), _wrap(m, "_import_all", "imports on a thread")),
    "spanscore.api": lambda m: _wrap(m, "evaluate", "the library's evaluate"),
    "spanscore.report": lambda m: _wrap(m.Report, "to_dict", "the result as a dict"),
}
# Modules whose import is a span of its own (the slow ones, and those the run imports on a thread).
TIMED_IMPORTS = {
    "numpy", "click", "rich.console", "rich.table", "spanscore.api", "spanscore.cli.evaluate",
    "spanscore.presentation.writer", "spanscore.presentation.charts", "spanscore.presentation.html",
    "spanscore.presentation.markdown", "spanscore.presentation.terminal", "spanscore.engines",
}


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, name: str) -> None:
        self.inner, self.name = inner, name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        _event("B", "import " + self.name)
        try:
            self.inner.exec_module(module)
        finally:
            _event("E", "import " + self.name)
        patch = PATCHES.get(self.name)
        if patch is not None:
            patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name not in TIMED_IMPORTS and name not in PATCHES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, name)
        return spec


def child(out: str, args: list[str]) -> None:
    """Run ``spanscore ARGS`` here, recording the timeline into ``out``."""
    global _FD
    _FD = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    started = ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    os.write(_FD, f"{os.getpid()}\tMainThread\t{started}\t0\tI\tprocess start\n".encode())
    _event("I", "interpreter ready")
    sys.meta_path.insert(0, _Finder())
    real_exit = os._exit

    def leave(code: int) -> None:
        _event("I", "exit")
        real_exit(code)

    os._exit = leave  # type: ignore[assignment]
    sys.argv = ["spanscore", *args]
    from spanscore.cli.main import run

    run()


def show(path: str, everything: bool) -> None:
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    t0 = min(int(r[2]) for r in rows)
    parent = rows[0][0]
    stacks: dict[tuple[str, str], list[tuple[str, int, int]]] = defaultdict(list)
    spans: list[tuple[str, str, str, float, float, float, int]] = []
    for pid, thread, at, cpu, kind, name in rows:
        key = (pid, thread)
        if kind == "B":
            stacks[key].append((name, int(at), int(cpu)))
        elif kind == "E":
            open_ = stacks[key]
            for i in range(len(open_) - 1, -1, -1):
                if open_[i][0] == name:
                    _, began, cpu0 = open_.pop(i)
                    depth = len(open_)
                    spans.append((pid, thread, name, (began - t0) / 1e6, (int(at) - began) / 1e6,
                                  (int(cpu) - cpu0) / 1e6, depth))  # fmt: skip
                    break
        else:
            spans.append((pid, thread, name, (int(at) - t0) / 1e6, 0.0, 0.0, 0))
    spans.sort(key=lambda s: s[3])
    who: dict[tuple[str, str], str] = {}
    for pid, thread, *_ in spans:
        who.setdefault((pid, thread), f"{'parent' if pid == parent else 'worker ' + pid}/{thread[:24]}")
    many = {"write rows", "copy a worker's rows", "plan a part", "send result (pipe)", "receive result (pipe)",
            "hand rows to the thread", "hand a copy to the thread", "error rows", "rows to scratch file",
            "move a file into place"}  # fmt: skip
    print(f"{'at ms':>8} {'wall':>7} {'cpu':>7}  {'process/thread':40} span")
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 1e12, 0.0])
    for pid, thread, name, at, wall, cpu, depth in spans:
        t = totals[(who[(pid, thread)], name)]
        t[0] += 1
        t[1] += wall
        t[2] += cpu
        t[3] = min(t[3], at)
        t[4] = max(t[4], at + wall)
        if (everything or name not in many or wall > 3) and not (name.startswith("import ") and wall < 2):
            print(f"{at:8.1f} {wall:7.1f} {cpu:7.1f}  {who[(pid, thread)]:40} {'  ' * depth}{name}")
    print(f"\n{'process/thread':40} {'span':34} {'n':>4} {'wall ms':>8} {'cpu ms':>8} {'first':>8} {'last end':>8}")
    for (thread, name), (n, wall, cpu, first, last) in sorted(totals.items(), key=lambda kv: kv[1][3]):
        print(f"{thread:40} {name:34} {n:4.0f} {wall:8.1f} {cpu:8.1f} {first:8.1f} {last:8.1f}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="timeline.tsv", help="where the events go (TSV)")
    ap.add_argument("--all", action="store_true", help="print every span, each write of the writing thread too")
    ap.add_argument("--baseline", default="", help="another checkout's src folder to run instead of this one")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then spanscore's arguments")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    env = dict(os.environ)
    if args.baseline:
        env["PYTHONPATH"] = args.baseline
    subprocess.run(
        [sys.executable, __file__, "--child", args.out, "--", *command], check=True, env=env, stdout=subprocess.DEVNULL
    )
    show(args.out, args.all)


if __name__ == "__main__":
    main()
