#!/usr/bin/env python3
"""Time of scoring discontinuous mentions by their fragments against scoring them as extents
(a script, not a test).

    python bench/discontinuous_bench.py [--documents 5000] [--share 0.1] [--repeat 5] [--folder /tmp/disc-bench]

Writes (once) a synthetic BRAT corpus: documents of 40 words, each with 8 mentions of three types,
a ``--share`` of them discontinuous (two or three fragments with a word or two between them), and
a prediction that keeps most mentions, joins some discontinuous ones into their extent, drops a
fragment of others and moves a boundary of a few. Then times ``spanscore.evaluate`` in this
process (the folders read each time) under ``discontinuous="fragments"`` and ``"extent"``, and
the matching and counting stage alone (``stages.counts.count`` over the whole corpus as one
chunk). The best of ``--repeat`` runs is reported with the median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import numpy as np

WORDS = ("alpha", "beta", "gamma", "delta", "pain", "knee", "left", "right", "dose", "p53", "and", "of")
TYPES = ("ADR", "DRUG", "VAR")


def _mention(rng: random.Random, words: list[tuple[int, int]], at: int, share: float) -> list[tuple[int, int]]:
    if rng.random() < share and at + 4 < len(words):
        first = words[at]
        gap = rng.randint(1, 2)
        pieces = [first, words[at + 1 + gap]]
        if rng.random() < 0.3 and at + 3 + gap < len(words):
            pieces.append(words[at + 3 + gap])
        return pieces
    return [(words[at][0], words[min(at + rng.randint(0, 1), len(words) - 1)][1])]


def write(folder: Path, documents: int, share: float, seed: int = 32) -> None:
    rng = random.Random(seed)
    for side in ("gold", "pred"):
        (folder / side).mkdir(parents=True, exist_ok=True)
    for d in range(documents):
        tokens = [rng.choice(WORDS) for _ in range(40)]
        text = " ".join(tokens)
        words, start = [], 0
        for t in tokens:
            words.append((start, start + len(t)))
            start += len(t) + 1
        gold, pred = [], []
        for at in range(0, 40, 5):
            label = rng.choice(TYPES)
            pieces = _mention(rng, words, at, share)
            gold.append((label, pieces))
            r = rng.random()
            if r < 0.1:
                continue  # missed
            if len(pieces) > 1 and r < 0.3:
                guess = [(pieces[0][0], pieces[-1][1])]  # the extent
            elif len(pieces) > 1 and r < 0.4:
                guess = pieces[:-1]  # a fragment dropped
            elif r < 0.45:
                guess = [*pieces[:-1], (pieces[-1][0], pieces[-1][1] - 1)]  # a boundary moved
            else:
                guess = pieces
            pred.append((rng.choice(TYPES) if rng.random() < 0.05 else label, guess))
        for side, mentions in (("gold", gold), ("pred", pred)):
            (folder / side / f"d{d}.txt").write_text(text, encoding="utf-8")
            lines = []
            for k, (label, pieces) in enumerate(mentions, start=1):
                offsets = ";".join(f"{a} {b}" for a, b in pieces)
                lines.append(f"T{k}\t{label} {offsets}\t{' '.join(text[a:b] for a, b in pieces)}\n")
            (folder / side / f"d{d}.ann").write_text("".join(lines), encoding="utf-8")


def best_of(repeat: int, run: object) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=5000)
    ap.add_argument("--share", type=float, default=0.1, help="share of discontinuous reference mentions")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--folder", default="/tmp/disc-bench")
    args = ap.parse_args()
    folder = Path(args.folder)
    if not (folder / "gold").exists():
        write(folder, args.documents, args.share)

    import spanscore
    from spanscore.io.formats import brat
    from spanscore.io.load import docs_to_spans
    from spanscore.stages.counts import Options, count
    from spanscore.stages.spans import unify

    gold, pred = folder / "gold", folder / "pred"
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat")
    d = report.to_dict()["discontinuous"]
    print(
        f"{report.counts.documents} documents, {int(report.counts.reference.sum())} reference mentions"
        f" ({d['mentions']['reference']} discontinuous), {int(report.counts.predicted.sum())} predicted"
    )
    for reading in ("fragments", "extent"):
        times = best_of(
            args.repeat,
            lambda r=reading: spanscore.evaluate(reference=gold, predicted=pred, format="brat", discontinuous=r),
        )
        print(f"evaluate, {reading:<9} best {min(times):6.3f} s  median {statistics.median(times):6.3f} s")
    ref_docs, _ = brat.read(gold)
    pred_docs, _ = brat.read(pred)
    by_id = {doc.id: doc for doc in pred_docs}
    pred_docs = [by_id[doc.id] for doc in ref_docs]
    lengths = np.array([len(doc.text) + 1 for doc in ref_docs], dtype=np.int64)
    bases = np.concatenate(([0], np.cumsum(lengths)))[:-1].astype(np.int64)
    ref, hyp = unify(docs_to_spans(ref_docs, bases), docs_to_spans(pred_docs, bases))
    for reading in ("fragments", "extent"):
        options = Options(discontinuous=reading)  # type: ignore[arg-type]
        times = best_of(args.repeat, lambda o=options: count(ref, hyp, o))
        print(f"count,    {reading:<9} best {min(times):6.3f} s  median {statistics.median(times):6.3f} s")


if __name__ == "__main__":
    main()
