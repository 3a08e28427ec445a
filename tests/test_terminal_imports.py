"""The terminal tables import each analysis table's module only where the data has that table.

A report run prints its tables at the end, serially: the modules of tables it does not print
(intervals, buckets, levels, comparisons, with ``analysis.reliability``) are not imported for it.
The tables printed are the same, in the same order, as when every module was imported with the
terminal's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.presentation import comparison as c
from spanscore.presentation.buckets import bucket_tables
from spanscore.presentation.levels import levels_table
from spanscore.presentation.terminal import evaluation_tables, evaluation_text

DATA = Path(__file__).parent / "data"
GOLD, PRED = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")
LAZY = (
    "spanscore.presentation.comparison",
    "spanscore.presentation.buckets",
    "spanscore.presentation.levels",
    "spanscore.analysis.reliability",
)


def _fresh(code: str) -> dict[str, bool]:
    """Which of ``LAZY`` a fresh interpreter has imported after ``code``."""
    probe = code + f"\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {LAZY!r}}}))\n"
    env = {**os.environ, "PYTHONPATH": str(Path(spanscore.__file__).parent.parent)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    got: dict[str, bool] = json.loads(out.stdout.strip().splitlines()[-1])
    return got


def test_the_terminal_module_imports_no_analysis_table_module() -> None:
    assert _fresh("import spanscore.presentation.terminal") == dict.fromkeys(LAZY, False)


def test_a_plain_evaluation_prints_its_tables_without_them() -> None:
    code = (
        "import io, contextlib, spanscore\n"
        "from spanscore.presentation.terminal import evaluation_text\n"
        f"r = spanscore.evaluate(reference={GOLD!r}, predicted={PRED!r})\n"
        "text = evaluation_text(r.to_dict())\n"
        "assert 'Mention scores' in text\n"
    )
    assert _fresh(code) == dict.fromkeys(LAZY, False)


def test_intervals_import_them_where_printed() -> None:
    code = (
        "import spanscore\n"
        "from spanscore.presentation.terminal import evaluation_text\n"
        f"r = spanscore.evaluate(reference={GOLD!r}, predicted={PRED!r}, ci=0.9, resamples=50)\n"
        "assert 'intervals' in evaluation_text(r.to_dict())\n"
    )
    got = _fresh(code)
    assert got["spanscore.presentation.comparison"] and got["spanscore.analysis.reliability"]


def _listed_before(data: dict[str, Any], per_type: bool = True) -> list[Any]:
    """The tables as the terminal listed them when it imported every table's module with its own."""
    tables = []
    if "located" in data:
        tables.append(c.located_table(data["located"]))
    if "read" in data:
        tables.append(c.read_table(data["read"]))
    if "macro_documents" in data:
        tables.append(c.macro_documents_table(dict(data)))
    ci = data.get("intervals")
    if ci is not None:
        over = f"{ci['count']} {ci['unit']}s{c.few_units(ci['count'], ci['unit'])}"
        title = f"{100 * ci['level']:g}% intervals (percentile bootstrap over {over})"
        tables.append(c.interval_table(ci["scores"], title))
        if "discontinuous" in ci and "discontinuous" in data:
            d, unit = ci["discontinuous"], data["discontinuous"]["units"]["unit"]
            named = {"all mentions": d["all"], "discontinuous mentions": d["mentions"], f"{unit}s with one": d["units"]}
            level = f"{100 * ci['level']:g}%"
            tables.append(c.interval_table(named, f"Discontinuous mentions: strict scores with {level} intervals"))
        if per_type and ci["per_type"]:
            title = f"F1 per type with {100 * ci['level']:g}% intervals"
            tables.append(c.per_type_interval_table(ci["per_type"], title))
    if "breakdown" in data:
        tables.append(c.breakdown_table(data["breakdown"]))
    if "buckets" in data:
        tables.extend(bucket_tables(data["buckets"]))
    if "levels" in data:
        tables.append(levels_table(data["levels"]))
    return tables


@pytest.mark.parametrize("per_type", [True, False])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"ci": 0.9, "resamples": 50},
        {"ci": 0.9, "resamples": 50, "buckets": ["length"]},
        {"buckets": ["length"], "documents": True},
    ],
)
def test_the_tables_and_their_order_are_those_listed_before(options: dict[str, Any], per_type: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # intervals over few sentences
        data = spanscore.evaluate(reference=GOLD, predicted=PRED, **options).to_dict()
    got, expected = evaluation_tables(data, per_type=per_type), _listed_before(dict(data), per_type)
    assert [t.title for t in got] == [t.title for t in expected]
    assert [t.rows for t in got] == [t.rows for t in expected]
    assert ("intervals" in evaluation_text(data)) == ("ci" in options)


def test_levels_are_listed_where_the_input_has_them() -> None:
    germeval = DATA / "real" / "datasets" / "germeval2014" / "NER-de-dev.tsv"
    if not germeval.exists():
        pytest.skip("the GermEval excerpt is not here")
    data = spanscore.evaluate(reference=germeval, predicted=germeval, token_column=1, levels=(2, 3)).to_dict()
    assert "levels" in data
    got, expected = evaluation_tables(data), _listed_before(dict(data))
    assert [t.title for t in got] == [t.title for t in expected] and got
    assert [t.rows for t in got] == [t.rows for t in expected]
