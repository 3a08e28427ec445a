"""Where the percentile bootstrap runs narrow, spanscore says so.

The coverage study (bench/coverage_study.py, figures in docs/compare.md and docs/benchmarks.md)
finds 95% intervals over 30 documents holding the population's F1 in about 92% of corpora, and
their level from a few hundred on. Two notices follow from it: the interval tables' titles note
fewer than ``FEW_UNITS`` (100) units, and the JSON says the same (``note``); below ``MIN_UNITS``
(30) a ``FewUnitsWarning`` is raised and written into the JSON as well. These tests pin both
thresholds on real text (BTC's dev split cut to a given number of sentences), on either side of
each.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.analysis.reliability import MIN_UNITS
from spanscore.cli.main import cli
from spanscore.errors import FewUnitsWarning
from spanscore.presentation.comparison import FEW_UNITS

NOTE = "the intervals run narrow"


def _sentences(src: Path, n: int, dst: Path) -> Path:
    """The first ``n`` sentences of a CoNLL file."""
    blocks = [b for b in src.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    assert len(blocks) >= n
    dst.write_text("\n\n".join(blocks[:n]) + "\n", encoding="utf-8")
    return dst


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), terminal_width=250, env={"COLUMNS": "250"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("n", [MIN_UNITS - 1, MIN_UNITS, FEW_UNITS - 1, FEW_UNITS])
def test_the_notices_follow_the_number_of_units(btc: Path, tmp_path: Path, n: int) -> None:
    assert (MIN_UNITS, FEW_UNITS) == (30, 100)
    gold = _sentences(btc / "dev.txt", n, tmp_path / "gold.txt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FewUnitsWarning)
        report = spanscore.evaluate(reference=gold, predicted=gold, ci=0.95, resamples=20)
    few = [str(w.message) for w in caught if issubclass(w.category, FewUnitsWarning)]
    assert report.intervals is not None and report.intervals["count"] == n
    # Below 30 units: a warning, in Python and in the JSON.
    assert bool(few) == (n < MIN_UNITS)
    assert ("warnings" in report.to_dict()) == (n < MIN_UNITS)
    note = f"fewer than {FEW_UNITS} sentences: {NOTE} (see docs/compare.md, coverage)"
    assert (report.to_dict()["intervals"].get("note") == note) == (n < FEW_UNITS)
    assert ("note" in report.to_dict()["intervals"]) == (n < FEW_UNITS)
    if n < MIN_UNITS:
        assert few[0].startswith(f"intervals over {n} sentences are coarse")
    # Below 100: the interval table's title says the intervals run narrow.
    text = _run("evaluate", str(gold), str(gold), "--ci", "0.95", "--resamples", "20")
    assert (f"fewer than {FEW_UNITS} sentences: {NOTE}" in text) == (n < FEW_UNITS)
    assert f"percentile bootstrap over {n} sentences" in text
    printed = json.loads(_run("evaluate", str(gold), str(gold), "--ci", "0.95", "--resamples", "20", "--json"))
    assert ("warnings" in printed) == (n < MIN_UNITS)
    assert printed["intervals"].get("note", "") == (note if n < FEW_UNITS else "")  # the title's note


@pytest.mark.parametrize("n", [60, 150])
def test_compare_titles_note_few_units(btc: Path, tmp_path: Path, n: int) -> None:
    gold, a, b = (_sentences(btc / "dev.txt", n, tmp_path / f"{name}.txt") for name in ("gold", "a", "b"))
    text = " ".join(_run("compare", str(gold), str(a), str(b), "--resamples", "20", "--trials", "20").split())
    assert f"bootstrap over {n} sentences)" in text
    assert (f"bootstrap over {n} sentences); fewer than {FEW_UNITS} sentences: {NOTE}" in text) == (n < FEW_UNITS)
    printed = json.loads(_run("compare", str(gold), str(a), str(b), "--resamples", "20", "--trials", "20", "--json"))
    assert ("note" in printed) == (n < FEW_UNITS)
    if n < FEW_UNITS:
        assert printed["note"] == f"fewer than {FEW_UNITS} sentences: {NOTE} (see docs/compare.md, coverage)"
