"""seqeval 1.2.2 end to end: read both CoNLL files, print the full classification report's figures.

    python seqeval_driver.py GOLD PRED [--strict]

--strict is mode='strict', scheme=IOB2; without it seqeval's default (conlleval-like) mode.
Prints one JSON line: the micro-averaged precision, recall and F1.
"""

from __future__ import annotations

import json
import sys

from conll_labels import read_labels
from seqeval.metrics import classification_report
from seqeval.scheme import IOB2


def main() -> None:
    gold, pred = sys.argv[1], sys.argv[2]
    strict = "--strict" in sys.argv[3:]
    y_true, y_pred = read_labels(gold), read_labels(pred)
    kw = {"mode": "strict", "scheme": IOB2} if strict else {}
    report = classification_report(y_true, y_pred, digits=6, output_dict=True, **kw)
    micro = report["micro avg"]
    out = {"tool": "seqeval-strict" if strict else "seqeval", "strict_f1": micro["f1-score"]}
    out.update(precision=micro["precision"], recall=micro["recall"], types=len(report) - 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
