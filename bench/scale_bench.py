#!/usr/bin/env python3
"""Peak memory of every process of the analyses at 100k, 1M and 10M sentences (a script, not a
test): does any process's memory grow with the corpus?

    python bench/scale_bench.py [--sizes 100000,1000000] [--big] [--engines local,dask]
                                [--only ci,compare] [--keep] [--drawn] [--histograms] [--out DIR]

Corpora come from ../shared/tools/synth_corpus.py (into ``bench/out/``, ignored by git): the
reference, its system output (``A``), a second system (``B``: ``A`` with about 5% of its entity
labels given another type, so the two systems differ document by document), and for ``--by`` a
copy of the reference whose sentences carry a ``# source = ...`` comment (three values, in runs
of about 1 MB of text), read by ``--by source`` and by buckets named by that field, and for
``seen`` a training corpus of a tenth the sentences (another seed); with ``--drawn`` the
reference and ``A`` are drawn by numpy instead (``drawn_corpus``: the same distribution, seed 13
below 10M sentences and 14 at 10M), the rest made from them as above. Each command
runs in a fresh process; every process of its tree (the client, the local engine's forked
workers, Dask's nannies and workers) is found by polling
``/proc`` every 50 ms, and each one's own peak resident memory is its ``VmHWM``, which the kernel
keeps (so a short peak between two polls is not missed). Printed per command: wall and CPU seconds
(user and system of the whole tree, from ``/usr/bin/time``), the client's peak, and the largest
peak among its descendants by depth, each with the number of processes (depth 1: the local
engine's forked workers, the forked resampling processes, and a local Dask cluster's worker
processes, whose nannies run in the client).

``--draws 1,10,100`` measures the resampling alone, in this process: the histograms of the
smallest ``--sizes`` corpus (``evaluate --ci``'s and ``compare``'s) with every row's documents
multiplied by each factor (the same distinct rows, a corpus 10 or 100 times as large), and the
peak of memory that the draws allocate (``tracemalloc``) for 1,000 resamples of each, one thread:
what a corpus of that many documents costs the draws beyond its histograms.

``--big`` adds 10M sentences (about 1.1 GB per file and some 4.5 GB of disk, checked first;
``synth_corpus.py`` takes the better part of an hour of one core to write them, ``--drawn``
minutes) on the Dask engine only (a loopback ``LocalCluster`` of
``--workers`` processes, as ``--engine dask`` starts it); the 10M files are deleted afterwards
unless ``--keep``.

``--histograms`` runs each command's client through this script (``--hooked FILE``, which
starts the CLI in process), and prints under each command the histograms of distinct
per-document rows its intervals and paired tests were given: how many, their distinct rows and
bytes (rows and counts, as handed over), and the largest; the hooks read shapes only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SYNTH = HERE.parents[1] / "shared" / "tools" / "synth_corpus.py"
SOURCES = (b"news", b"web", b"talk")


def make_corpus(n: int, out: Path, drawn: bool = False) -> dict[str, Path]:
    """The files of an ``n``-sentence corpus, made once (kept in ``out`` for later runs); with
    ``drawn``, by ``drawn_corpus`` (the same distribution, not the same bytes)."""
    prefix = out / f"scale-{n}"
    gold, a = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    b, by = prefix.with_suffix(".alt"), prefix.with_suffix(".bygold")
    if not (gold.exists() and a.exists()):
        if drawn:
            drawn_corpus(n, prefix, seed=13 if n < 10_000_000 else 14)
        else:
            subprocess.run([sys.executable, str(SYNTH), str(n), str(prefix)], check=True)
            prefix.with_suffix(".merged").unlink(missing_ok=True)  # not read here
    if not b.exists():
        second_system(a, b)
    return {"gold": gold, "a": a, "b": b, "by": by, "train": prefix.with_suffix(".train")}


TAG_NAMES = ["O"] + [p + t for t in ("PER", "ORG", "LOC", "MISC") for p in ("B-", "I-")]  # 0; B 1+2t; I 2+2t
LINE_BYTES = 11  # the longest line, ``w29 B-MISC\n``


def drawn_corpus(n: int, prefix: Path, seed: int) -> None:
    """``synth_corpus.py``'s corpus drawn by numpy, half a million sentences at a time: the same
    distribution (sentences of 5-30 tokens, mentions opened at 15% of positions, the same
    perturbations, 1% spurious), not the same bytes: 10M sentences in about 75 s of CPU, where
    ``synth_corpus.py`` takes some 35 minutes of one core. Gold and prediction only."""
    import numpy as np

    lines = [f"w{k} {tag}\n".encode() for k in range(30) for tag in TAG_NAMES] + [b"\n"]
    table = np.zeros((len(lines), LINE_BYTES), np.uint8)
    length = np.array([len(line) for line in lines])
    for i, line in enumerate(lines):
        table[i, : len(line)] = np.frombuffer(line, np.uint8)
    rng = np.random.default_rng(seed)

    def write(tags: Any, at: Any, sent: Any, start: Any, end: Any, typ: Any) -> None:
        k = end - start
        first = np.cumsum(k) - k
        idx = np.repeat(at[sent] + start, k) + (np.arange(k.sum()) - np.repeat(first, k))
        code = np.repeat(2 + 2 * typ, k)
        code[first] -= 1  # B- at each start
        tags[idx] = code

    def render(sizes: Any, k: Any, tags: Any) -> bytes:
        idx = np.insert(k * len(TAG_NAMES) + tags, np.cumsum(sizes), len(lines) - 1)  # a blank line after each
        return bytes(table[idx][np.arange(LINE_BYTES) < length[idx][:, None]].tobytes())

    with prefix.with_suffix(".gold").open("wb") as g, prefix.with_suffix(".pred").open("wb") as p:
        done = 0
        while done < n:
            m = min(500_000, n - done)
            done += m
            sizes = rng.integers(5, 31, m)
            at = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            tokens = int(sizes.sum())
            pos = np.zeros(m, np.int64)
            found: list[tuple[Any, Any, Any, Any]] = []
            choices = np.array([1, 1, 2, 2, 3, 4])
            while (live := np.flatnonzero(pos < sizes)).size:  # a sentence's positions in turn
                u = rng.random(live.size)
                opens = live[u < 0.15]
                span = choices[rng.integers(0, 6, opens.size)]
                found.append((opens, pos[opens].copy(), span, rng.integers(0, 4, opens.size)))
                step = np.ones(live.size, np.int64)
                step[u < 0.15] = span + 1  # a mention, then at least one token outside
                pos[live] += step
            sent, start, span, typ = (np.concatenate([f[i] for f in found]) for i in range(4))
            order = np.lexsort((start, sent))
            sent, start, typ = sent[order], start[order], typ[order]
            end = np.minimum(sizes[sent], start + span[order])
            gold = np.zeros(tokens, np.int64)
            write(gold, at, sent, start, end, typ)
            r = rng.random(start.size)
            ptyp = typ.copy()
            retyped = (r >= 0.08) & (r < 0.14)
            ptyp[retyped] = rng.integers(0, 4, int(retyped.sum()))
            ps, pe = start.copy(), end.copy()
            left = (r >= 0.14) & (r < 0.20)
            ps[left] = np.maximum(0, start[left] - 1)
            right = (r >= 0.20) & (r < 0.26)
            pe[right] = np.minimum(sizes[sent][right], end[right] + 1)
            ps[(r >= 0.26) & (r < 0.30) & (end - start > 1)] += 1
            kept = r >= 0.08
            ks, ps, pe, ptyp = sent[kept], ps[kept], pe[kept], ptyp[kept]
            # A mention extended right into the gap that the next one extends left into: the next
            # one's first token, as synth_corpus.py writes them in order.
            same = np.flatnonzero(ks[1:] == ks[:-1])
            pe[same] = np.minimum(pe[same], ps[same + 1])
            pred = np.zeros(tokens, np.int64)
            write(pred, at, ks, ps, pe, ptyp)
            free = np.flatnonzero(pred == 0)
            spurious = free[rng.random(free.size) < 0.01]
            pred[spurious] = 1 + 2 * rng.integers(0, 4, spurious.size)
            k = np.arange(tokens) - np.repeat(at, sizes)
            g.write(render(sizes, k, gold))
            p.write(render(sizes, k, pred))


def training_corpus(n: int, dst: Path) -> None:
    """A training corpus of a tenth the sentences (another seed), for buckets that read one
    (``seen``), made where a command needs it."""
    if dst.exists():
        return
    prefix = dst.with_name(dst.stem + "-train")
    subprocess.run([sys.executable, str(SYNTH), str(max(n // 10, 100)), str(prefix), "--seed", "3"], check=True)
    prefix.with_suffix(".gold").replace(dst)
    for suffix in (".pred", ".merged"):
        prefix.with_suffix(suffix).unlink(missing_ok=True)


def second_system(src: Path, dst: Path, share: float = 0.05, seed: int = 7) -> None:
    """``src`` with about ``share`` of its PER labels made LOC and of its LOC labels made ORG, in
    place (same length), block by block: another system over the same tokens."""
    import numpy as np  # here: a hooked client (``--hooked``) loads it as the CLI does

    rng = np.random.default_rng(seed)
    tmp = dst.with_suffix(".tmp")
    with src.open("rb") as f, tmp.open("wb") as g:
        while block := f.read(64 << 20):
            d = np.frombuffer(block, dtype=np.uint8).copy()
            for old, new in ((b"-PER\n", b"-LOC\n"), (b"-LOC\n", b"-ORG\n")):
                pat = np.frombuffer(old, dtype=np.uint8)
                m = np.ones(d.shape[0] - len(old) + 1, dtype=bool)
                for k, c in enumerate(pat):
                    m &= d[k : d.shape[0] - len(old) + 1 + k] == c
                at = np.flatnonzero(m)
                at = at[rng.random(at.shape[0]) < share]
                for k, c in enumerate(np.frombuffer(new, dtype=np.uint8)):
                    d[at + k] = c
            g.write(d.tobytes())
    tmp.replace(dst)


def by_reference(gold: Path, dst: Path) -> None:
    """``gold`` with a ``# source = ...`` line opening every sentence: the value changes every
    1 MB or so of text (three values in turn)."""
    if dst.exists():
        return
    tmp = dst.with_suffix(".tmp")
    with gold.open("rb") as f, tmp.open("wb") as g:
        carry, k = b"", 0
        while True:
            block = f.read(1 << 20)
            text = carry + block
            if not text:
                break
            cut = text.rfind(b"\n\n") + 2 if block else len(text)
            if cut < 2:  # no sentence ends in this block yet
                carry = text
                continue
            head, carry = text[:cut], text[cut:]  # head opens with a sentence and ends with one
            if head.strip():
                tag = b"# source = " + SOURCES[k % len(SOURCES)] + b"\n"
                k += 1
                g.write(tag + head.replace(b"\n\n", b"\n\n" + tag).removesuffix(tag))
            if not block:
                break
    tmp.replace(dst)


def _status(pid: int) -> tuple[int, int] | None:
    """(parent pid, peak RSS in kB) of a process, or None where it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    ppid = hwm = 0
    for line in text.splitlines():
        if line.startswith("PPid:"):
            ppid = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return ppid, hwm


class TreeWatch:
    """Every process under ``root``, polled until it ends: each one's depth and peak RSS (kB)."""

    def __init__(self, root: int, every: float = 0.05) -> None:
        self.root, self.every = root, every
        self.depth: dict[int, int] = {root: 0}
        self.peak: dict[int, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            seen: dict[int, tuple[int, int]] = {}
            for name in os.listdir("/proc"):
                if name.isdigit():
                    got = _status(int(name))
                    if got is not None:
                        seen[int(name)] = got
            changed = True
            while changed:  # parents first, whatever the order /proc lists them in
                changed = False
                for pid, (ppid, _) in seen.items():
                    if pid not in self.depth and ppid in self.depth:
                        self.depth[pid] = self.depth[ppid] + 1
                        changed = True
            for pid, (_, hwm) in seen.items():
                if pid in self.depth:
                    self.peak[pid] = max(self.peak.get(pid, 0), hwm)
            time.sleep(self.every)

    def stop(self) -> dict[int, list[int]]:
        """Peaks (kB) by depth."""
        self.done.set()
        self.thread.join()
        by_depth: dict[int, list[int]] = {}
        for pid, hwm in self.peak.items():
            if pid != self.root and hwm:  # not /usr/bin/time itself, nor a process seen only as a zombie
                by_depth.setdefault(self.depth[pid] - 1, []).append(hwm)
        return by_depth


def measure(cmd: list[str], nice: int) -> tuple[float, float, dict[int, list[int]], int]:
    """Wall seconds, CPU seconds of the tree, peaks by depth (0: the command's own process), and
    the exit status."""
    with tempfile.NamedTemporaryFile("r") as timing:
        start = time.perf_counter()
        prefix = ["nice", "-n", str(nice)] if nice else []
        proc = subprocess.Popen(
            [*prefix, "/usr/bin/time", "-f", "%U %S", "-o", timing.name, *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        watch = TreeWatch(proc.pid)
        _, err = proc.communicate()
        took = time.perf_counter() - start
        peaks = watch.stop()
        if proc.returncode:
            sys.stderr.write(err.decode(errors="replace")[-2000:])
        timing.seek(0)
        words = timing.read().split()
        cpu = float(words[-2]) + float(words[-1]) if len(words) >= 2 else float("nan")
    # ``nice`` execs ``/usr/bin/time`` in its own process, so the depths are the same with it.
    return took, cpu, peaks, proc.returncode


def commands(
    files: dict[str, Path], engine: list[str], resamples: int, hook: str | None = None
) -> dict[str, list[str]]:
    ss = [sys.executable, "-m", "spanscore.cli.main"] if hook is None else [sys.executable, __file__, "--hooked", hook]
    g, a, b, by, train = (str(files[k]) for k in ("gold", "a", "b", "by", "train"))
    ci = ["--ci", "0.95", "--resamples", str(resamples)]
    return {
        "evaluate --json (plain)": [*ss, "evaluate", g, a, "--json", *engine],
        "evaluate --ci 0.95 --json": [*ss, "evaluate", g, a, *ci, "--json", *engine],
        "evaluate --buckets length --ci 0.95 --json": [
            *ss,
            "evaluate",
            g,
            a,
            "--buckets",
            "length",
            *ci,
            "--json",
            *engine,
        ],
        "evaluate --by source --ci 0.95 --json": [*ss, "evaluate", by, a, "--by", "source", *ci, "--json", *engine],
        "evaluate --by source --buckets length --ci": [
            *ss,
            "evaluate",
            by,
            a,
            "--by",
            "source",
            "--buckets",
            "length",
            *ci,
            "--json",
            *engine,
        ],
        "evaluate --buckets source (a field) --ci": [
            *ss,
            "evaluate",
            by,
            a,
            "--buckets",
            "source",
            *ci,
            "--json",
            *engine,
        ],
        # The rows go to a scratch file (``--per-document`` writes them as the parts come).
        "evaluate --per-document FILE": [*ss, "evaluate", g, a, "--per-document", _rows_file(), "--json", *engine],
        "evaluate --ci 0.95 --per-document FILE": [
            *ss,
            "evaluate",
            g,
            a,
            *ci,
            "--per-document",
            _rows_file(),
            "--json",
            *engine,
        ],
        "evaluate --by source --per-document FILE": [
            *ss,
            "evaluate",
            by,
            a,
            "--by",
            "source",
            "--per-document",
            _rows_file(),
            "--json",
            *engine,
        ],
        "compare A B --json": [*ss, "compare", g, a, b, "--resamples", str(resamples), "--json", *engine],
        "compare A B --buckets length --per-type --json": [
            *ss,
            "compare",
            g,
            a,
            b,
            "--buckets",
            "length",
            "--per-type",
            "--resamples",
            str(resamples),
            "--json",
            *engine,
        ],
        "compare A B --buckets length,seen --per-type --json": [
            *ss,
            "compare",
            g,
            a,
            b,
            "--buckets",
            "length,seen",
            "--train",
            train,
            "--per-type",
            "--resamples",
            str(resamples),
            "--json",
            *engine,
        ],
        "compare A B --buckets source (a field) --json": [
            *ss,
            "compare",
            by,
            a,
            b,
            "--buckets",
            "source",
            "--resamples",
            str(resamples),
            "--json",
            *engine,
        ],
    }


def draws_peaks(files: dict[str, Path], factors: list[int], resamples: int) -> None:
    """``--draws``: the draws' traced peak (MB) on the histograms scaled by each factor."""
    import tracemalloc

    import spanscore
    from spanscore.analysis import significance as sig
    from spanscore.stages.documents import Histogram

    def docs(pred: Path) -> object:
        got = spanscore.evaluate(reference=files["gold"], predicted=pred, documents=True, keep_details=False)
        return got.documents, got.counts.credit

    (a, credit), (b, _) = docs(files["a"]), docs(files["b"])
    hists = {"evaluate --ci": sig.histogram_of(a, credit), "compare A B": sig.joint_histogram([a, b], credit)}
    print(
        f"{'histogram':14} {'distinct rows':>13} {'bytes a row':>11} {'x docs':>6} {'documents':>11} "
        f"{'draws peak MB':>13}"
    )
    for name, hist in hists.items():
        for factor in factors:
            scaled = Histogram(hist.rows, hist.counts * factor, hist.fields)
            tracemalloc.start()
            if name == "compare A B":
                sig.compare_histograms(
                    [scaled], ["a", "b"], zero_division=0.0, credit=credit,
                    resampling=sig.Resampling(resamples=resamples, trials=resamples),
                )
            else:
                sig.resampled_totals(scaled, lambda k, fam: sig._overall_rng(1, k, fam), resamples)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"{name:14} {hist.rows.shape[0]:13d} {(hist.rows.nbytes + hist.counts.nbytes) // len(hist.counts):11d} "
                f"{factor:6d} {int(scaled.counts.sum()):11d} "
                f"{peak / 2**20:13.1f}",
                flush=True,
            )


def hooked(out: str, args: list[str]) -> None:
    """``--hooked FILE ARGS``: the CLI run in this process, each histogram handed to the intervals
    (``_bootstrap_tables``) and to the paired tests (``compare_histograms``, the outermost call)
    written to FILE as a line: the call, distinct rows, columns, row type, bytes, documents."""
    import functools

    # As ``spanscore.cli.main.main`` sets the process up, before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from spanscore.runtime.memory import keep_freed_memory

    keep_freed_memory()
    from spanscore.analysis import buckets, significance

    log = open(out, "w")  # noqa: SIM115 (written until the process ends)

    def note(call: str, hist: object) -> None:
        rows, counts = hist.rows, hist.counts  # type: ignore[attr-defined]
        log.write(
            f"{call} {rows.shape[0]} {rows.shape[1]} {rows.dtype} {rows.nbytes + counts.nbytes} "
            f"{int(counts.sum())}\n"
        )
        log.flush()

    tables = significance._bootstrap_tables

    @functools.wraps(tables)
    def tables_hooked(jobs, **kw):  # type: ignore[no-untyped-def]
        for hist, _ in jobs:
            note("intervals", hist)
        return tables(jobs, **kw)

    paired = significance.compare_histograms
    depth = [0]

    @functools.wraps(paired)
    def paired_hooked(joints, names, **kw):  # type: ignore[no-untyped-def]
        if not depth[0]:
            for joint in joints:
                note("paired", joint)
        depth[0] += 1
        try:
            return paired(joints, names, **kw)
        finally:
            depth[0] -= 1

    significance._bootstrap_tables = tables_hooked
    significance.compare_histograms = paired_hooked
    buckets.compare_histograms = paired_hooked  # type: ignore[attr-defined]
    from spanscore.cli import main as cli

    sys.argv = ["spanscore", *args]
    cli.run()


def histogram_lines(path: str) -> list[str]:
    """``--histograms``: a summary line per call kind of what ``hooked`` wrote."""
    by: dict[str, list[tuple[int, int, int, str]]] = {}
    with open(path) as f:
        for line in f:
            call, rows, cols, dtype, size, _docs = line.split()
            by.setdefault(call, []).append((int(rows), int(size), int(cols), dtype))
    out = []
    for call, got in by.items():
        big = max(got, key=lambda g: g[1])
        out.append(
            f"{'':18}{call}: {len(got)} histograms, {sum(g[0] for g in got)} distinct rows, "
            f"{sum(g[1] for g in got) / 1e6:.1f} MB; largest {big[0]} rows x {big[2]} {big[3]}, {big[1] / 1e6:.1f} MB"
        )
    return out


def _rows_file() -> str:
    """A scratch file for a command's per-document rows (removed after it runs)."""
    return str(Path(tempfile.gettempdir()) / f"scale-rows-{os.getpid()}.jsonl")


def main() -> None:
    if sys.argv[1:2] == ["--hooked"]:
        hooked(sys.argv[2], sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--sizes", default="100000,1000000", help="sentences, comma-separated (local and Dask)")
    ap.add_argument("--big", action="store_true", help="also 10M sentences, on the Dask engine only")
    ap.add_argument("--engines", default="local,dask", help="engines at --sizes")
    ap.add_argument("--workers", type=int, default=2, help="workers of the loopback Dask cluster")
    ap.add_argument(
        "--only",
        default="",
        help="only commands whose names hold one of these (comma-separated; plain: the plain count)",
    )
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--draws", default="", help="factors: the draws' peak, histograms scaled by each (in process)")
    ap.add_argument("--keep", action="store_true", help="keep the 10M files")
    ap.add_argument("--nice", type=int, default=0, help="run each command under nice -n N")
    ap.add_argument("--histograms", action="store_true", help="print the histograms each command's tests read")
    ap.add_argument(
        "--drawn", action="store_true", help="corpora drawn by numpy (drawn_corpus): minutes, not an hour, for 10M"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.draws:
        n = min(int(v) for v in args.sizes.split(",") if v)
        draws_peaks(make_corpus(n, args.out, args.drawn), [int(f) for f in args.draws.split(",")], args.resamples)
        return
    runs: list[tuple[int, str]] = []
    for n in (int(s) for s in args.sizes.split(",") if s):
        runs += [(n, e) for e in args.engines.split(",") if e]
    big = 10_000_000
    if args.big:
        free = shutil.disk_usage(args.out).free
        if free < 6 << 30:
            sys.exit(f"--big needs about 4.5 GB free beside {args.out}; {free / 2**30:.1f} GB are")
        runs.append((big, "dask"))
    import spanscore

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(spanscore.__file__).parent)], check=True)
    print(
        f"{'sentences':>10} {'engine':6} {'command':44} {'wall s':>7} {'cpu s':>7} {'client MB':>9} "
        f"{'depth 1 MB (n)':>15} {'depth 2 MB (n)':>15} {'load':>5}"
    )
    made: set[int] = set()
    try:
        for n, engine in runs:
            files = make_corpus(n, args.out, args.drawn)
            made.add(n)
            flags = ["--engine", "dask", "--workers", str(args.workers)] if engine == "dask" else []
            by = str(files["by"])
            hook = str(args.out / f"scale-hists-{os.getpid()}.txt") if args.histograms else None
            for name, cmd in commands(files, flags, args.resamples, hook).items():
                if args.only and not any(p in name for p in args.only.split(",")):
                    continue
                if by in cmd:
                    by_reference(files["gold"], files["by"])
                if str(files["train"]) in cmd:
                    training_corpus(n, files["train"])
                took, cpu, peaks, rc = measure(cmd, args.nice)
                for arg in cmd:  # a per-document file written
                    if arg.endswith(".jsonl") and os.path.basename(arg).startswith("scale-rows-"):
                        Path(arg).unlink(missing_ok=True)
                cells = []
                for d in (1, 2):
                    got = peaks.get(d, [])
                    cells.append(f"{max(got) / 1024:.0f} ({len(got)})" if got else "-")
                client = max(peaks.get(0, [0])) / 1024
                status = "" if rc == 0 else f"  FAILED ({rc})"
                print(
                    f"{n:10d} {engine:6} {name:44} {took:7.2f} {cpu:7.2f} {client:9.0f} {cells[0]:>15} "
                    f"{cells[1]:>15} {os.getloadavg()[0]:5.2f}{status}",
                    flush=True,
                )
                if hook is not None and os.path.exists(hook):
                    for line in histogram_lines(hook):
                        print(line, flush=True)
                    os.unlink(hook)
    finally:
        if big in made and not args.keep:
            for suffix in (".gold", ".pred", ".alt", ".bygold", ".merged", ".train"):
                (args.out / f"scale-{big}").with_suffix(suffix).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
