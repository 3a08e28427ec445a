#!/usr/bin/env python3
"""Speed of the drop-ins against the peers themselves (a script, not a test).

    python bench/compat_bench.py [--peer seqeval|nervaluate] [--corpus /tmp/synth] [--sentences 100000]
                                 [--slice 2000] [--repeat 3]

seqeval: spanscore.compat.seqeval.classification_report against seqeval 1.2.2's. nervaluate:
``Evaluator(true, pred, tags, loader="list").evaluate()`` of spanscore.compat.nervaluate against
nervaluate 1.2.1's, whose results are checked equal (figures and indices) before timing.

Reads the synthetic corpus (``python ../shared/tools/synth_corpus.py 100000 /tmp/synth`` writes
/tmp/synth.gold and /tmp/synth.pred, two-column CoNLL; written here if absent) into label lists,
then times both reports in this process on the first ``--slice`` sentences and on all of them,
in the default mode and in the strict mode (IOB2), each the best of ``--repeat`` calls. Reading is
not timed. Before timing, the two reports are checked to be the same string.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seqeval.metrics import classification_report as seqeval_report
from seqeval.scheme import IOB2

from spanscore.compat.seqeval import classification_report as our_report

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"
Labels = list[list[str]]


def read_labels(path: Path) -> Labels:
    """The last column of a CoNLL file, one list per sentence."""
    out: Labels = []
    cur: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if cur:
                    out.append(cur)
                    cur = []
                continue
            cur.append(line.rsplit(None, 1)[-1])
    if cur:
        out.append(cur)
    return out


def times(repeat: int, work: Callable[[], Any]) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        work()
        out.append(time.perf_counter() - t)
    return out


def nervaluate_bench(gold_all: Labels, pred_all: Labels, slice_: int, repeat: int, peer_repeat: int | None) -> None:
    import dataclasses

    from nervaluate import Evaluator as TheirEvaluator

    from spanscore.compat.nervaluate import Evaluator as OurEvaluator

    tags = sorted({x[2:] for doc in gold_all for x in doc if x != "O"})

    def plain(results: dict[str, Any]) -> Any:
        return {
            key: {t: {s: dataclasses.asdict(v) for s, v in by.items()} for t, by in value.items()}
            if key.startswith("entit")
            else {s: dataclasses.asdict(v) for s, v in value.items()}
            for key, value in results.items()
        }

    print(f"{'loader':<12} {'sentences':>10} {'spanscore':>11} {'nervaluate':>11} {'speed-up':>9}   (best of calls)")
    for n in (slice_, len(gold_all)):
        gold, pred = gold_all[:n], pred_all[:n]
        ours_result = OurEvaluator(gold, pred, tags, loader="list").evaluate()
        theirs_result = TheirEvaluator(gold, pred, tags, loader="list").evaluate()
        assert plain(ours_result) == plain(theirs_result), "the drop-in's results differ from nervaluate's"
        ours = times(repeat, lambda: OurEvaluator(gold, pred, tags, loader="list").evaluate())  # noqa: B023
        rep = repeat if n == slice_ or peer_repeat is None else peer_repeat
        theirs = times(rep, lambda: TheirEvaluator(gold, pred, tags, loader="list").evaluate())  # noqa: B023
        best_ours, best_theirs = min(ours), min(theirs)
        print(
            f"{'list':<12} {n:>10,} {best_ours * 1000:>9.1f}ms {best_theirs * 1000:>9.1f}ms"
            f" {best_theirs / best_ours:>8.1f}x   (spanscore median {statistics.median(ours) * 1000:.1f}ms)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", choices=("seqeval", "nervaluate"), default="seqeval", help="the library to time against")
    ap.add_argument("--corpus", default="/tmp/synth", help="prefix of PREFIX.gold and PREFIX.pred")
    ap.add_argument("--sentences", type=int, default=100_000, help="sentences to write if the corpus is absent")
    ap.add_argument("--slice", type=int, default=2000, help="the small corpus: this many first sentences")
    ap.add_argument("--repeat", type=int, default=3, help="calls per measurement; the best is reported")
    ap.add_argument(
        "--seqeval-repeat", "--peer-repeat", type=int, default=None, help="calls of the peer on the whole corpus"
    )
    ap.add_argument("--no-strict", action="store_true", help="time the default mode only")
    args = ap.parse_args()

    gold_path, pred_path = Path(args.corpus + ".gold"), Path(args.corpus + ".pred")
    if not (gold_path.exists() and pred_path.exists()):
        subprocess.run([sys.executable, str(SYNTH), str(args.sentences), args.corpus], check=True)
    gold_all, pred_all = read_labels(gold_path), read_labels(pred_path)
    tokens = sum(map(len, gold_all))
    print(f"corpus: {len(gold_all):,} sentences, {tokens:,} tokens ({args.corpus}.gold/.pred)")
    if args.peer == "nervaluate":
        nervaluate_bench(gold_all, pred_all, args.slice, args.repeat, args.seqeval_repeat)
        return

    modes: list[tuple[str, dict[str, Any]]] = [("default", {})]
    if not args.no_strict:
        modes.append(("strict IOB2", {"mode": "strict", "scheme": IOB2}))
    print(f"{'mode':<12} {'sentences':>10} {'spanscore':>11} {'seqeval':>11} {'speed-up':>9}   (best of calls)")
    for n in (args.slice, len(gold_all)):
        gold, pred = gold_all[:n], pred_all[:n]
        for name, kw in modes:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if n == args.slice:  # the whole corpus takes seqeval half a minute: checked on the slice
                    assert our_report(gold, pred, digits=6, **kw) == seqeval_report(gold, pred, digits=6, **kw)
                ours = times(args.repeat, lambda: our_report(gold, pred, **kw))  # noqa: B023 (called at once)
                rep = args.repeat if n == args.slice or args.seqeval_repeat is None else args.seqeval_repeat
                theirs = times(rep, lambda: seqeval_report(gold, pred, **kw))  # noqa: B023
            best_ours, best_theirs = min(ours), min(theirs)
            print(
                f"{name:<12} {n:>10,} {best_ours * 1000:>9.1f}ms {best_theirs * 1000:>9.1f}ms"
                f" {best_theirs / best_ours:>8.1f}x   (spanscore median {statistics.median(ours) * 1000:.1f}ms)"
            )


if __name__ == "__main__":
    main()
