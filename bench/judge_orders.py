#!/usr/bin/env python3
"""Review orders compared on the nested cross-fitted learning curve (a script, not a test).

    python bench/judge_orders.py [--sizes 25,50,100,200,400,800] [--seeds 5] [--data ../shared/data/medmentions-expert]

The same protocol as ``spanscore judge curve TRAIN --scores JUDGEMENTS`` (no ``--test``): the
judgements of each block of ``st21pv_test.iob`` are measured by judges whose classifier never saw
the block and whose K scores come from the other blocks, in an order. Orders: ``judge`` (the
review order, ``spanscore.programs.judge.order``), ``random``, and ``uncertainty`` (closest to 0.5
first, the order ``review create --judge`` gave before; ties broken at random). Prints, per order
and size, the forgiving user's precision, recall, F1 and AUC, mean over seeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from spanscore.programs.judge import read_corpus, read_judgements
from spanscore.programs.judge.benchmark import agreement
from spanscore.programs.judge.crossfit import backend_trainer, fold_data, fold_plan
from spanscore.programs.judge.judgements import accepts
from spanscore.programs.judge.order import order_of

ROOT = Path(__file__).resolve().parents[1]


def uncertainty(probability: np.ndarray, seed: int) -> np.ndarray:
    tie = np.random.default_rng(seed).random(probability.shape[0])
    return np.lexsort((tie, np.abs(probability - 0.5)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="25,50,100,200,400,800")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "medmentions-expert")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    corpus = read_corpus(args.data / "st21pv_test.iob")
    scores = read_judgements(args.data / "judgements.jsonl")
    items = [j.mismatch() for j in scores]
    plan, _ = fold_plan(corpus, scores)
    orders = ("judge", "random", "uncertainty")
    out = {(o, k, s): np.zeros(len(scores)) for o in orders for k in sizes for s in range(args.seeds)}
    train = backend_trainer()
    for fold in plan:
        data = fold_data(corpus, scores, fold, rule="contains", trainer=train, learn=True)
        prepared = data.prepared
        test = [items[k] for k in fold.rows.tolist()]
        for o in orders:
            for s in range(args.seeds):
                seed = s * len(plan) + fold.block
                if o == "uncertainty":
                    rows = uncertainty(prepared.rule_probability, seed)
                else:
                    rows = order_of(o, prepared.items, prepared.rule_probability, seed)
                for k in sizes:
                    acceptance = prepared.acceptance(rows[:k], "forgiving")
                    out[(o, k, s)][fold.rows] = acceptance.predict(data.test_x, test, data.test_rule)
    truth = accepts(scores, "forgiving")
    for o in orders:
        for k in sizes:
            got = [agreement(truth, out[(o, k, s)]) for s in range(args.seeds)]
            mean = {f: float(np.mean([g[f] for g in got])) for f in ("precision", "recall", "auc")}
            f1 = [2 * g["precision"] * g["recall"] / (g["precision"] + g["recall"]) for g in got]
            mean["f1"] = float(np.mean(f1))
            print(json.dumps({"order": o, "size": k, **{f: round(v, 3) for f, v in mean.items()}}), flush=True)


if __name__ == "__main__":
    main()
