"""spanscore's metric for the Hugging Face ``evaluate`` library, as a local metric folder:

>>> import evaluate  # doctest: +SKIP
>>> from spanscore.integrations.hf_evaluate import METRIC_PATH
>>> metric = evaluate.load(METRIC_PATH)  # doctest: +SKIP
>>> metric.compute(predictions=[["B-PER", "I-PER", "O"]], references=[["B-PER", "O", "O"]])  # doctest: +SKIP

``evaluate.load`` copies ``spanscore_ner/spanscore_ner.py`` into its module cache and imports it from
there, so the script imports spanscore by its absolute name: spanscore must be installed where it runs.
"""

from __future__ import annotations

from pathlib import Path

METRIC_PATH = str(Path(__file__).resolve().parent / "spanscore_ner")
