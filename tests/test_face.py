"""What a Python user meets: readable reprs, str() as the terminal's tables, seqeval's
classification report, to_dict equal to --json, the few-units warnings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli

SAMPLES = Path(spanscore.__file__).parent / "programs" / "sample_data"
GOLD, PRED, ALT = (str(SAMPLES / n) for n in ("gold.conll", "pred.conll", "alt.conll"))


@pytest.fixture(scope="module")
def report() -> spanscore.Report:
    return spanscore.evaluate(reference=GOLD, predicted=PRED)


def _cli(*args: str, width: int = 80) -> str:
    result = CliRunner().invoke(cli, list(args), terminal_width=width, env={"COLUMNS": str(width)}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


# --------------------------------------------------------------------------------------------------
# repr and str


def test_report_repr_is_one_line_with_counts_scores_and_signature(report: spanscore.Report) -> None:
    text = repr(report)
    assert "\n" not in text and len(text) < 200
    d = report.to_dict()
    for figure in (
        f"{d['corpus']['reference_mentions']} reference",
        f"{d['corpus']['predicted_mentions']} predicted",
        f"strict F1 {100 * d['metrics']['strict']['f1']:.2f}",
        f"overlap F1 {100 * d['metrics']['overlap']['f1']:.2f}",
    ):
        assert figure in text
    other = spanscore.evaluate(reference=GOLD, predicted=PRED, credit="dice")
    hashes = [re.search(r"signature (\w+)>", repr(r)).group(1) for r in (report, other)]  # type: ignore[union-attr]
    assert hashes[0] != hashes[1]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_str_is_the_terminal_tables(report: spanscore.Report, width: int) -> None:
    printed = _cli("evaluate", GOLD, PRED, width=width)
    assert report.to_text(width) == printed
    if width == 80:
        assert str(report) == printed
    assert max(map(len, printed.splitlines()[:-1])) <= width  # the signature alone is one unbroken line


def test_comparison_repr_and_str() -> None:
    c = spanscore.compare(reference=GOLD, systems=[PRED, ALT], resamples=50, trials=50)
    text = repr(c)
    assert "\n" not in text and len(text) < 200
    assert "pred.conll" in text and "alt.conll" in text and "3 documents" in text
    printed = _cli("compare", GOLD, PRED, ALT, "--resamples", "50", "--trials", "50", width=100)
    assert c.to_text(100) == printed


# --------------------------------------------------------------------------------------------------
# seqeval's classification report


def _labels(path: str) -> list[list[str]]:
    sentences: list[list[str]] = [[]]
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if sentences[-1]:
                sentences.append([])
        elif not line.startswith(("-DOCSTART-", "# ")):
            sentences[-1].append(line.split()[-1])
    return [s for s in sentences if s]


@pytest.mark.parametrize("system", [PRED, ALT])
@pytest.mark.parametrize("digits", [2, 4])
def test_classification_report_is_seqevals(system: str, digits: int) -> None:
    """The strict criterion's report is seqeval's, text and dict, on the shipped samples."""
    seqeval = pytest.importorskip("seqeval.metrics")
    r = spanscore.evaluate(reference=GOLD, predicted=system)
    gold, pred = _labels(GOLD), _labels(system)
    assert r.classification_report("strict", digits=digits) == seqeval.classification_report(gold, pred, digits=digits)
    ours = r.classification_report("strict", output_dict=True)
    theirs = seqeval.classification_report(gold, pred, output_dict=True)
    assert list(ours) == list(theirs)
    for name, row in theirs.items():
        assert ours[name] == pytest.approx({k: float(v) for k, v in row.items()}), name
    printed = _cli("evaluate", GOLD, system, "--classification-report", "strict", "--digits", str(digits))
    assert printed == seqeval.classification_report(gold, pred, digits=digits)


def test_classification_report_of_a_partial_criterion(report: spanscore.Report) -> None:
    rows = report.classification_report("overlap", output_dict=True)
    assert isinstance(rows, dict)
    per_type = report.to_dict()["per_type"]
    for t, scores in per_type.items():
        assert rows[t]["f1-score"] == scores["metrics"]["overlap"]["f1"]
        assert rows[t]["support"] == scores["metrics"]["overlap"]["reference"]
    assert rows["micro avg"]["f1-score"] == report.metrics["overlap"]["f1"]
    assert rows["macro avg"]["f1-score"] == pytest.approx(sum(rows[t]["f1-score"] for t in per_type) / len(per_type))
    with pytest.raises(spanscore.errors.OptionError, match="no criterion 'nope'"):
        report.classification_report("nope")


# --------------------------------------------------------------------------------------------------
# to_dict is --json


GRID: list[tuple[list[str], dict[str, Any]]] = [
    ([], {}),
    (["--credit", "dice", "--matching", "greedy"], {"credit": "dice", "matching": "greedy"}),
    (["--beta", "2", "--zero-division", "1"], {"beta": 2.0, "zero_division": 1.0}),
    (["--types", "PER,LOC", "--repair", "discard"], {"types": ["PER", "LOC"], "repair": "discard"}),
    (["--ci", "0.9", "--resamples", "40", "--seed", "3"], {"ci": 0.9, "resamples": 40, "seed": 3}),
    (["--by", "source"], {"by": "source"}),
    (["--buckets", "length"], {"buckets": ["length"]}),
    (["--per-document", "{tmp}/docs.jsonl"], {"documents": True}),
]


@pytest.mark.parametrize(("args", "keywords"), GRID, ids=[" ".join(a) or "default" for a, _ in GRID])
@pytest.mark.parametrize("details", [True, False], ids=["details", "no-details"])
def test_to_dict_is_the_json(args: list[str], keywords: dict[str, Any], details: bool, tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    printed = json.loads(_cli("evaluate", GOLD, PRED, "--json", *args))
    with pytest.warns() if "ci" in keywords else _nothing():
        r = spanscore.evaluate(reference=GOLD, predicted=PRED, keep_details=details, **keywords)
    assert r.to_dict() == printed
    assert "examples" in printed["errors"]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
