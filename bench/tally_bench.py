#!/usr/bin/env python3
"""What counting costs beyond the plain count, per chunk and for the side-by-side passes, in
process (a script, not a test): CPU milliseconds, the best of ``--repeat``, of

- counting every chunk of the corpus as the plain count does, as ``--ci`` does (per document
  and type, the chunk's histograms made), and as ``compare`` counts one system (per document);
- a chunk of each kind alone, its data reused, split into its parts (``per_chunk``);
- ``compare``'s side-by-side pass over two systems (each chunk's reference read once, the joint
  histogram filled), and ``compare --buckets length,seen --per-type``'s (every group's joint
  histogram), in one process (CPU) and with two processes (wall seconds);
- the bucket attributes of two systems' chunks (``length,seen``).

    python bench/tally_bench.py [--sentences 100000] [--repeat 5]

The corpora are ../shared/tools/synth_corpus.py's, as bench/intervals_bench.py makes them (a
second system over the first one's tokens, a training corpus a tenth the size). Run it with each
checkout's ``src`` first on PYTHONPATH to compare two revisions; the CLI's allocator setting
(``runtime.memory``) is applied first, as in every spanscore process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from intervals_bench import SYNTH, fix_tokens  # noqa: E402


def best(f: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.process_time) -> float:
    top = float("inf")
    for _ in range(repeat):
        t0 = clock()
        f()
        top = min(top, clock() - t0)
    return top


def per_chunk(chunks: list[Any], options: Any, wanted: dict[str, Any], repeat: int) -> None:
    """Each chunk counted ``repeat`` times with its data reused, the best taken (the thread's
    CPU), the median over chunks printed: the count's whole, what it spends counting the mentions
    and its tables per group (``parts.count_twins_apart``), of which matching the mentions
    without an identical twin (``count_grouped``), and in its chunk's histograms (``DocState.of``, or
    ``DocState.of_type_rows`` where they come from the rows per document and type)."""
    from spanscore.stages import parts
    from spanscore.stages.documents import DocState

    spent: dict[str, float] = {}

    def timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            t0 = time.thread_time()
            out = f(*a, **k)
            spent[name] = spent.get(name, 0.0) + time.thread_time() - t0
            return out

        return run

    of = DocState.of.__func__  # type: ignore[attr-defined]
    of_type_rows = DocState.of_type_rows.__func__  # type: ignore[attr-defined]
    saved = parts.count_twins_apart, parts.count_grouped, DocState.of, DocState.of_type_rows
    parts.count_twins_apart = timed("counted, tables per group", parts.count_twins_apart)
    parts.count_grouped = timed("of which matched (no twin)", parts.count_grouped)
    DocState.of = classmethod(timed("histograms (DocState.of)", of))  # type: ignore[method-assign,assignment]
    # --ci's chunks: the histograms straight from the rows per document and type.
    DocState.of_type_rows = classmethod(  # type: ignore[method-assign,assignment]
        timed("histograms (DocState.of_type_rows)", of_type_rows)
    )
    try:
        for name in ("plain count", "--ci (per document and type, histograms)"):
            bests: dict[str, list[float]] = {}
            for d in chunks:
                top: dict[str, float] = {}
                for _ in range(max(repeat, 5)):
                    spent.clear()
                    t0 = time.thread_time()
                    parts.count_part(d, options, wanted[name])
                    spent["the whole count"] = time.thread_time() - t0
                    for k, v in spent.items():
                        top[k] = min(top.get(k, float("inf")), v)
                for k, v in top.items():
                    bests.setdefault(k, []).append(v)
            parts_of = ", ".join(f"{k} {sorted(v)[len(v) // 2] * 1000:.2f}" for k, v in bests.items())
            print(f"a chunk (median of {len(chunks)}), {name}: {parts_of} ms CPU")
    finally:
        parts.count_twins_apart, parts.count_grouped, DocState.of, DocState.of_type_rows = saved  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from spanscore.runtime.memory import keep_freed_memory

    keep_freed_memory()
    import spanscore
    from spanscore import api
    from spanscore.analysis.buckets import GroupCounter, run_grouped
    from spanscore.analysis.significance import resampled_columns
    from spanscore.engines import LocalEngine, PartCounter
    from spanscore.engines.paired import run_paired
    from spanscore.io.reading import Reading
    from spanscore.io.sources import ConllSource
    from spanscore.stages import buckets as attributes
    from spanscore.stages.counts import Options
    from spanscore.stages.parts import Wanted, count_part
    from spanscore.stages.scoring import TypeSelection

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        run = [sys.executable, str(SYNTH)]
        quiet = {"check": True, "stdout": subprocess.DEVNULL}
        subprocess.run([*run, str(args.sentences), str(base / "a")], **quiet)
        subprocess.run([*run, str(args.sentences), str(base / "b"), "--seed", "2"], **quiet)
        subprocess.run([*run, str(max(args.sentences // 10, 100)), str(base / "t"), "--seed", "3"], **quiet)
        gold, a, b, train = (base / n for n in ("a.gold", "a.pred", "b.pred", "t.gold"))
        fix_tokens(gold, b)
        print(f"spanscore from {Path(spanscore.__file__).parent}, {args.sentences} sentences, best of {args.repeat}")

        def loaded(pred: Path) -> list[Any]:
            source = ConllSource.open(gold, pred, Reading(), TypeSelection(), 1 << 19)
            return [source.load(part) for part in source.parts()]

        chunks_a, chunks_b = loaded(a), loaded(b)
        options = Options()
        wanted = {
            "plain count": Wanted(examples=5),
            "--ci (per document and type, histograms)": Wanted(
                examples=5, documents=True, document_types=True, histogram=True
            ),
            "compare, one system (per document, every column)": Wanted(examples=5, documents=True, narrow=True),
            "compare, one system (per document, the scored columns)": Wanted(
                examples=5, documents=True, narrow=True, scored_groups=True
            ),
        }
        for name, w in wanted.items():
            took = best(lambda w=w: [count_part(d, options, w) for d in chunks_a], args.repeat)
            print(f"counting {len(chunks_a)} chunks, {name}: {took * 1000:.1f} ms CPU")
        per_chunk(chunks_a, options, wanted, args.repeat)
        chosen = (attributes.attribute("length"), attributes.attribute("seen"))
        index = api._train_index(chosen, str(train), Reading(), 1)
        # Side by side, the systems' chunks hold one text, the reference's (``engines.paired``).
        shared = [(x, replace(y, text=x.text)) for x, y in zip(chunks_a, chunks_b, strict=True)]
        took = best(
            lambda: [attributes.assign(chosen, d.reference, d.predicted, d.text, index) for p in shared for d in p],
            args.repeat,
        )
        print(f"bucket attributes length,seen of both systems' chunks (one text): {took * 1000:.1f} ms CPU")

        def counters(kind: type, w: Wanted) -> list[Any]:
            return [
                kind(ConllSource.open(gold, p, Reading(), TypeSelection(), 1 << 19), options, w) for p in (a, b)
            ]

        columns = lambda f: resampled_columns(f, "0.5")  # noqa: E731
        plain = Wanted(documents=True, examples=5)
        grouped = Wanted(documents=True, document_types=True, buckets=chosen, train=index, examples=5)
        passes = {
            "compare A B": lambda jobs: run_paired(
                counters(PartCounter, plain), LocalEngine(jobs), ["a", "b"], columns
            ),
            "compare A B --buckets length,seen --per-type": lambda jobs: run_grouped(
                counters(GroupCounter, grouped), LocalEngine(jobs), ["a", "b"]
            ),
        }
        for name, f in passes.items():
            cpu = best(lambda f=f: f(1), args.repeat)
            wall = best(lambda f=f: f(2), args.repeat, time.perf_counter)
            print(f"side-by-side pass of {name}: {cpu:.3f} s CPU in one process, {wall:.3f} s wall with two")


if __name__ == "__main__":
    main()
