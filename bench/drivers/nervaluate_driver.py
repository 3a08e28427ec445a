"""nervaluate 1.2.1 end to end: read both CoNLL files and compute all its schemes.

    python nervaluate_driver.py GOLD PRED

One ``Evaluator.evaluate()`` computes strict, exact, partial and ent_type, overall and per type.
Sentences are nervaluate's documents (its list loader); its CoNLL loader wants tab-separated
columns, which the synthetic corpus does not use. Prints one JSON line of F1 per scheme.
"""

from __future__ import annotations

import json
import sys

from conll_labels import read_labels
from nervaluate import Evaluator


def main() -> None:
    y_true, y_pred = read_labels(sys.argv[1]), read_labels(sys.argv[2])
    tags = sorted({label[2:] for sent in y_true + y_pred for label in sent if label != "O"})
    results = Evaluator(y_true, y_pred, tags=tags, loader="list").evaluate()
    overall = results["overall"]
    out = {"tool": "nervaluate", "strict_f1": overall["strict"].f1}
    out.update({f"{k}_f1": v.f1 for k, v in overall.items()})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
