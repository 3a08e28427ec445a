#!/usr/bin/env python3
"""Wall time of ``spanscore judge train TRAIN --scores S`` with K scores (a script, not a test).

    python bench/judge_train_bench.py [--scores 200] [--repeat 3] [--data ../shared/data/medmentions-expert]

Draws K judgements of the MedMentions development split at random (seed 0, 1, ... for each
repeat), writes them as a scores file, and times the command end to end in a fresh process
(reading the corpus, training the classifier, the out-of-fold classifiers, the acceptance model,
writing the judge file) in two settings:

- ``in TRAIN``: TRAIN is ``st21pv_test.iob``, which holds the judged sentences, so their features
  come from classifiers trained without their passages (the harder case);
- ``outside TRAIN``: TRAIN is ``st21pv_test.iob`` less the judged sentences' passages, as when the
  scores come from a review of another corpus (one classifier, no out-of-fold ones).

Also times the judge without scores on the same TRAIN. Prints one line per run and the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str]) -> float:
    t0 = time.perf_counter()
    command = Path(sys.executable).parent / "spanscore"  # the console script of this environment
    done = subprocess.run([str(command), *args], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"spanscore {' '.join(args)} failed:\n{done.stderr}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scores", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "medmentions-expert")
    args = ap.parse_args()

    import numpy as np

    from spanscore.programs.judge import read_corpus
    from spanscore.programs.judge.corpus import held_out
    from spanscore.programs.judge.crossfit import units_in
    from spanscore.programs.judge.judgements import read_judgements

    train = args.data / "st21pv_test.iob"
    lines = (args.data / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = read_corpus(train)
    times: dict[str, list[float]] = {"no scores": [], "in TRAIN": [], "outside TRAIN": []}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for r in range(args.repeat):
            chosen = sorted(np.random.default_rng(r).permutation(len(lines))[: args.scores].tolist())
            scores = tmp / f"scores-{r}.jsonl"
            scores.write_text("\n".join(lines[k] for k in chosen) + "\n", encoding="utf-8")
            units = units_in(corpus, read_judgements(scores))
            out = held_out(corpus, units[units >= 0].tolist())
            # TRAIN without the judged sentences' passages, written back as token/tag lines
            blocks = (train.read_text(encoding="utf-8")).strip("\n").split("\n\n")
            outside = tmp / f"outside-{r}.iob"
            outside.write_text("\n\n".join(b for b, o in zip(blocks, out.tolist(), strict=True) if not o) + "\n",
                               encoding="utf-8")
            judge = tmp / "j.judge"
            times["no scores"].append(run(["judge", "train", str(train), "-o", str(judge)]))
            times["in TRAIN"].append(run(["judge", "train", str(train), "--scores", str(scores), "-o", str(judge)]))
            times["outside TRAIN"].append(
                run(["judge", "train", str(outside), "--scores", str(scores), "-o", str(judge)])
            )
            print(json.dumps({"repeat": r, **{k: round(v[-1], 2) for k, v in times.items()}}), flush=True)
    print(json.dumps({"scores": args.scores, "median_seconds": {k: round(statistics.median(v), 2)
                                                                 for k, v in times.items()}}))


if __name__ == "__main__":
    main()
