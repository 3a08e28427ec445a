#!/usr/bin/env python3
"""Speed of the Trainer's compute_metrics path (a script, not a test).

    python bench/integration_bench.py [--sentences 100000] [--small 2000] [--batch 32] [--repeat 3]

Writes the synthetic corpus (../shared/tools/synth_corpus.py), turns its labels into the arrays the
Trainer hands compute_metrics (label ids, each row framed by a -100 for [CLS] and [SEP] and padded
with -100 to the longest sentence), then times, in this process:

- ``make_compute_metrics(...)((predictions, label_ids))`` on the whole set: the Trainer's default;
- the same set in batches of ``--batch`` sentences with ``compute_result=False`` and a last call
  with ``compute_result=True``: the Trainer's ``batch_eval_metrics=True``;
- seqeval 1.2.2's ``classification_report`` on the same labels decoded to strings (the usual
  compute_metrics of the Hugging Face token-classification recipe), with and without the decoding;
- one call on the first ``--small`` sentences, from label ids and from logits: the overhead an
  evaluation pays per call.

Checks that the batched metrics equal the whole set's, and that seqeval's micro F1 equals
spanscore's strict F1 (seqeval's default mode decodes as conlleval does).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "drivers"))
from conll_labels import read_labels

from spanscore.integrations.transformers import make_compute_metrics

SYNTH = Path(__file__).resolve().parents[2] / "shared" / "tools" / "synth_corpus.py"
IGNORE = -100


def timed(repeat: int, work: Callable[[], Any]) -> tuple[float, float, Any]:
    """Best and median wall time of ``repeat`` runs, and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        t = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), result


def as_arrays(
    gold: list[list[str]], pred: list[list[str]], label2id: dict[str, int]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Label ids as the Trainer gathers them: -100 at [CLS], [SEP] and padding (predictions there: 0)."""
    lengths = np.fromiter(map(len, gold), dtype=np.int64, count=len(gold))
    width = int(lengths.max()) + 2
    labels = np.full((len(gold), width), IGNORE, dtype=np.int64)
    predictions = np.zeros((len(gold), width), dtype=np.int64)
    inside = (np.arange(width)[None, :] >= 1) & (np.arange(width)[None, :] <= lengths[:, None])
    labels[inside] = [label2id[x] for s in gold for x in s]
    predictions[inside] = [label2id[x] for s in pred for x in s]
    return predictions, labels


def decode(predictions: np.ndarray[Any, Any], labels: np.ndarray[Any, Any], id2label: dict[int, str]) -> Any:
    """The recipe's compute_metrics: ids back to label strings, -100 positions dropped."""
    rows = zip(predictions, labels, strict=True)
    y_pred = [[id2label[p] for p, g in zip(pr, gr, strict=True) if g != IGNORE] for pr, gr in rows]
    y_true = [[id2label[g] for g in gr if g != IGNORE] for gr in labels]
    return y_true, y_pred


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from seqeval.metrics import classification_report

    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "synth"
        subprocess.run([sys.executable, str(SYNTH), str(args.sentences), str(prefix)], check=True)
        gold, pred = read_labels(f"{prefix}.gold"), read_labels(f"{prefix}.pred")
    labels = sorted({x for s in gold + pred for x in s}, key=lambda x: (x != "O", x[2:], x))
    label2id = {x: i for i, x in enumerate(labels)}
    id2label = dict(enumerate(labels))
    predictions, label_ids = as_arrays(gold, pred, label2id)
    tokens = sum(map(len, gold))
    print(f"{len(gold)} sentences, {tokens} tokens, arrays {label_ids.shape}, {len(labels)} labels")

    compute_metrics = make_compute_metrics(id2label)
    whole_best, whole_median, whole = timed(args.repeat, lambda: compute_metrics((predictions, label_ids)))

    def batched() -> dict[str, float]:
        n = predictions.shape[0]
        for start in range(0, n - args.batch, args.batch):
            stop = start + args.batch
            compute_metrics((predictions[start:stop], label_ids[start:stop]), compute_result=False)
        last = (n - 1) // args.batch * args.batch
        return compute_metrics((predictions[last:], label_ids[last:]), compute_result=True)

    batch_best, _, in_batches = timed(args.repeat, batched)
    assert in_batches == whole, "batch_eval_metrics must give the whole set's metrics"
    n_batches = -(-predictions.shape[0] // args.batch)

    decode_s, _, (y_true, y_pred) = timed(1, lambda: decode(predictions, label_ids, id2label))
    assert y_true == gold and y_pred == pred
    seqeval_s, _, report = timed(1, lambda: classification_report(y_true, y_pred, digits=6, output_dict=True))
    assert abs(report["micro avg"]["f1-score"] - whole["strict_f1"]) < 1e-12, (report["micro avg"], whole)

    small = slice(0, args.small)
    p_small, g_small = predictions[small], label_ids[small]
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(*p_small.shape, len(labels))).astype(np.float32)
    np.put_along_axis(logits, p_small[..., None], 10.0, axis=-1)
    reps = max(args.repeat, 50)
    ids_best, ids_median, _ = timed(reps, lambda: compute_metrics((p_small, g_small)))
    logits_best, logits_median, _ = timed(reps, lambda: compute_metrics((logits, g_small)))

    print(f"compute_metrics, whole set:          {whole_best:.3f} s (median {whole_median:.3f} s)")
    print(
        f"compute_metrics, {n_batches} batches of {args.batch}: {batch_best:.3f} s"
        f" ({batch_best / n_batches * 1e3:.2f} ms a batch), metrics identical to the whole set's"
    )
    print(f"seqeval classification_report:      {seqeval_s:.3f} s (+ {decode_s:.3f} s decoding ids to strings)")
    print(
        f"speed-up over seqeval: {seqeval_s / whole_best:.1f}x (report alone),"
        f" {(seqeval_s + decode_s) / whole_best:.1f}x (with the recipe's decoding);"
        f" batched {seqeval_s / batch_best:.1f}x"
    )
    print(
        f"one call on {p_small.shape[0]} sentences: {ids_best * 1e3:.1f} ms (median {ids_median * 1e3:.1f} ms)"
        f" from label ids, {logits_best * 1e3:.1f} ms (median {logits_median * 1e3:.1f} ms) from logits"
    )
    print(f"strict F1 {whole['strict_f1']:.6f} (seqeval micro F1 {report['micro avg']['f1-score']:.6f})")


if __name__ == "__main__":
    main()
