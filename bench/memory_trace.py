#!/usr/bin/env python3
"""What a CLI run's processes hold at their peaks (a script, not a test): one command run in this
process, traced by ``tracemalloc``.

    python bench/memory_trace.py [--depth 1] [--workers-traced] -- compare G A B --buckets length --json
    python bench/memory_trace.py --resident [--every 0.002] -- compare G A B --json

Printed (to stderr): the pairing phase's traced peak and what it leaves held (``run_grouped``,
``run_paired``), every histogram of distinct rows it made (distinct rows, bytes), the traced peak
of the rest of the run, the largest allocation sites in a snapshot taken at each of the two peaks
(by package, then by line, or by traceback with ``--depth``), and this process's peak resident
memory. With
``--engine dask`` each worker of the loopback cluster reports its peak resident memory and
glibc's heap (``mallinfo2``: in use and free), and with ``--workers-traced`` also its traced
peak and largest sites (tracing slows the workers). The client runs the whole command traced,
so its times are not the CLI's.

With ``--resident`` nothing is traced: a thread reads this process's resident memory every
``--every`` seconds and, each time it passes its highest reading by 1 MB, notes the main thread's
stack (spanscore's frames) and glibc's heap; printed: each phase's (pairing, the rest) highest
resident reading, where the main thread was then, and the last few readings that raised it.
The process is set up as the CLI sets up its own (``runtime.memory.keep_freed_memory``), so its
resident peak is the CLI's (the sampler holds a few KB).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import threading
import time
import tracemalloc
from typing import Any

PACKAGES = ("distributed", "tornado", "dask", "spanscore", "numpy", "msgpack")


def heap() -> str:
    """glibc's heap of this process: arena, in use and free (MB)."""
    import ctypes

    class Info(ctypes.Structure):
        names = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
        _fields_ = [(n, ctypes.c_size_t) for n in (*names, "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    m = libc.mallinfo2()
    return (
        f"heap {m.arena / 1e6:.1f} MB ({m.uordblks / 1e6:.1f} in use, {m.fordblks / 1e6:.1f} free),"
        f" mapped {m.hblkhd / 1e6:.1f} MB"
    )


def mappings() -> str:
    """This process's resident MB by kind of mapping (``/proc/self/smaps``): the heap, anonymous
    mappings (Python's arenas, large blocks), files (code)."""
    kinds = {"heap": 0, "anon": 0, "file": 0, "other": 0}
    kind = "other"
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if not head:
                continue
            if "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else ""
                kind = "heap" if name == "[heap]" else "anon" if not name else "other"
                kind = "file" if name.startswith("/") else kind
            elif head[0] == "Rss:":
                kinds[kind] += int(head[1])
    return ", ".join(f"{k} {v / 1024:.1f}" for k, v in kinds.items())


def resident() -> str:
    with open("/proc/self/status") as f:
        got = {line.split(":")[0]: int(line.split()[1]) / 1024 for line in f if line.startswith(("VmHWM", "VmRSS"))}
    return f"peak resident {got['VmHWM']:.0f} MB, now {got['VmRSS']:.0f} MB"


class PeakWatch:
    """A thread that snapshots the traced memory whenever it passes its last snapshot by 3%."""

    def __init__(self, every: float) -> None:
        self.every, self.size, self.snapshot = every, 0, None
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.stop.is_set():
            now = tracemalloc.get_traced_memory()[0]
            if now > self.size * 1.03:
                self.size, self.snapshot = now, tracemalloc.take_snapshot()
            time.sleep(self.every)


def sites(snapshot: Any, key: str, n: int) -> list[str]:
    out = []
    for s in snapshot.statistics(key)[:n]:
        where = " <- ".join(str(f) for f in s.traceback) if key == "traceback" else str(s.traceback[0])
        out.append(f"   {s.size / 1e6:6.2f} MB {s.count:7d} {where}")
    return out


def worker_plugin(traced: bool) -> Any:
    from distributed import WorkerPlugin

    class Traced(WorkerPlugin):  # type: ignore[misc]
        name = "memory-trace"

        def setup(self, worker: Any) -> None:
            self.watch = None
            if traced:
                tracemalloc.start(1)
                self.watch = PeakWatch(0.05)

    return Traced()


def worker_report(dask_worker: Any = None) -> str:
    """Runs on each worker at the end of the run."""
    lines = [f"{resident()}; {heap()}"]
    plugin = dask_worker.plugins.get("memory-trace") if dask_worker is not None else None
    watch = getattr(plugin, "watch", None)
    if watch is not None and watch.snapshot is not None:
        lines.append(f"traced peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB; at {watch.size / 1e6:.1f} MB:")
        lines += sites(watch.snapshot, "lineno", 10)
        lines.append("held at the end:")
        lines += sites(tracemalloc.take_snapshot(), "lineno", 10)
    return "\n".join(lines)


def histograms(got: Any) -> None:
    found = [] if getattr(got, "joint", None) is None else [("joint", got.joint)]
    for grouping, groups in (getattr(got, "groups", None) or {}).items():
        found += [(f"{grouping}/{label}", h) for label, h in groups]
    rows = sum(h.rows.shape[0] for _, h in found)
    size = sum(h.rows.nbytes + h.counts.nbytes for _, h in found)
    say(f"histograms: {len(found)}, distinct rows {rows}, {size / 1e6:.2f} MB")
    for label, h in found[:1] + sorted(found[1:], key=lambda x: -x[1].rows.nbytes)[:6]:
        say(
            f"   {label}: {h.rows.shape[0]} rows x {h.rows.shape[1]} {h.rows.dtype}, {h.documents} documents, "
            f"{(h.rows.nbytes + h.counts.nbytes) / 1e6:.2f} MB"
        )


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# Snapshots at the pairing phase's traced peak (``phased``), printed at the end beside the rest's.
PAIRING: list[Any] = []


def phased(module: Any, name: str, watch: PeakWatch) -> None:
    inner = getattr(module, name)

    def run(*args: Any, **kwargs: Any) -> Any:
        got = inner(*args, **kwargs)
        now, peak = tracemalloc.get_traced_memory()
        say(f"{name}: pairing's traced peak {peak / 1e6:.1f} MB, held after it {now / 1e6:.1f} MB")
        tracemalloc.reset_peak()
        # The rest of the run (the draws) watched apart: its own peak's snapshot.
        PAIRING.append((watch.size, watch.snapshot))
        watch.size, watch.snapshot = 0, None
        histograms(got)
        return got

    setattr(module, name, run)


class ResidentWatch:
    """A thread that reads the resident memory (``/proc/self/statm``) every ``every`` seconds and
    notes the main thread's stack whenever the reading passes its highest by 1 MB."""

    def __init__(self, every: float) -> None:
        self.every, self.top, self.notes = every, 0, []
        self.timeline: list[tuple[float, int, str]] = []  # a reading a second: (time, bytes, where)
        self.started = self.last = time.time()
        self.main = threading.main_thread().ident
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.stop = threading.Event()
        self.fd = os.open("/proc/self/statm", os.O_RDONLY)
        threading.Thread(target=self._run, daemon=True).start()

    def reading(self) -> int:
        return int(os.pread(self.fd, 200, 0).split()[1]) * self.page

    def _run(self) -> None:
        while not self.stop.is_set():
            now = self.reading()
            if now > self.top + (1 << 20):
                self.top = now
                self.notes.append((now, self.where(6), f"{heap()}; {mappings()}"))
            if time.time() > self.last + 1:
                self.last = time.time()
                self.timeline.append((self.last - self.started, now, f"{heap()}  {self.where(2)}"))
            time.sleep(self.every)

    def where(self, depth: int) -> str:
        frame = sys._current_frames().get(self.main or 0)
        found: list[str] = []
        while frame is not None and len(found) < depth:
            name = frame.f_code.co_filename
            if "/spanscore/" in name:
                found.append(f"{name.rsplit('/spanscore/', 1)[1]}:{frame.f_lineno} {frame.f_code.co_name}")
            frame = frame.f_back
        return " <- ".join(found)

    def restart(self) -> tuple[int, list[tuple[int, str, str]]]:
        got = (self.top, self.notes)
        self.top, self.notes = 0, []
        return got


LAST = 12  # readings that raised the highest, printed per phase


def resident_phased(module: Any, name: str, watch: ResidentWatch, phases: list[Any]) -> None:
    inner = getattr(module, name)

    def run(*args: Any, **kwargs: Any) -> Any:
        got = inner(*args, **kwargs)
        say(f"{name}: ended at {watch.reading() / 2**20:.1f} MB resident; {resident()}; {heap()}")
        phases.append(("pairing", *watch.restart()))
        return got

    setattr(module, name, run)


def resident_main(every: float, command: list[str]) -> None:
    # As the CLI's ``main`` sets its process up (the malloc settings change what stays resident).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from spanscore.runtime.memory import keep_freed_memory

    keep_freed_memory()
    from spanscore.analysis import buckets
    from spanscore.engines import paired

    watch = ResidentWatch(every)
    phases: list[Any] = []
    resident_phased(buckets, "run_grouped", watch, phases)
    resident_phased(paired, "run_paired", watch, phases)
    from spanscore.cli.main import cli

    started = time.time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(args=command, standalone_mode=False)
    watch.stop.set()
    say(f"the end: {resident()}; {time.time() - started:.1f} s")
    phases.append(("after pairing" if phases else "the run", *watch.restart()))
    for title, top, notes in phases:
        say(f"{title}: highest reading {top / 2**20:.1f} MB; the last readings that raised it:")
        for now, where, h in notes[-LAST:]:
            say(f"   {now / 2**20:6.1f} MB  {h}  at {where}")
    say("a reading a second (s, MB, where):")
    for at, now, where in watch.timeline:
        say(f"   {at:6.1f} {now / 2**20:6.1f}  {where}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=1, help="frames per traced allocation (1: by line)")
    ap.add_argument("--workers-traced", action="store_true", help="trace the Dask workers too (slower)")
    ap.add_argument("--resident", action="store_true", help="no tracing: the resident memory sampled")
    ap.add_argument("--every", type=float, default=0.002, help="seconds between resident readings")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the CLI's arguments, after --")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.resident:
        resident_main(args.every, command)
        os._exit(0)
    tracemalloc.start(args.depth)
    watch = PeakWatch(0.02)
    from spanscore.analysis import buckets
    from spanscore.engines import dask_engine, paired

    if "dask" in command:
        opened = dask_engine.DaskEngine._client

        def client(self: Any, dist: Any, stack: contextlib.ExitStack[Any]) -> Any:
            got = opened(self, dist, stack)
            got.register_plugin(worker_plugin(args.workers_traced), name="memory-trace")

            def report() -> None:
                for address, text in got.run(worker_report).items():
                    say(f"worker {address}: {text}")

            stack.callback(report)  # before the cluster closes
            return got

        dask_engine.DaskEngine._client = client  # type: ignore[method-assign]
    phased(buckets, "run_grouped", watch)
    phased(paired, "run_paired", watch)
    from spanscore.cli.main import cli

    started = time.time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        cli.main(args=command, standalone_mode=False)
    watch.stop.set()
    say(f"after pairing: traced peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB; {resident()}; "
        f"{time.time() - started:.1f} s")
    shots = [("the pairing phase's traced peak", *PAIRING[0])] if PAIRING else []
    shots.append(("the traced peak after pairing" if PAIRING else "the run's traced peak", watch.size, watch.snapshot))
    for title, size, snapshot in shots:
        if snapshot is None:
            continue
        say(f"snapshot at {title}, {size / 1e6:.1f} MB")
        by: dict[str, int] = {}
        for s in snapshot.statistics("filename"):
            name = s.traceback[0].filename
            package = next((p for p in PACKAGES if f"/{p}/" in name), "other")
            by[package] = by.get(package, 0) + s.size
        say("   by package: " + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(by.items(), key=lambda x: -x[1])))
        for line in sites(snapshot, "traceback" if args.depth > 1 else "lineno", 14):
            say(line)
    os._exit(0)  # as the CLI ends: no teardown


if __name__ == "__main__":
    main()
