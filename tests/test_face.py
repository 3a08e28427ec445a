"""What a Python user meets: readable reprs, str() as the terminal's tables, seqeval's
classification report, to_dict equal to --json, the few-units warnings."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import FewUnitsWarning

SAMPLES = Path(spanscore.__file__).parent / "programs" / "sample_data"
GOLD, PRED, ALT = (str(SAMPLES / n) for n in ("gold.conll", "pred.conll", "alt.conll"))


@pytest.fixture(scope="module")
def report() -> spanscore.Report:
    return spanscore.evaluate(reference=GOLD, predicted=PRED)


def _cli(*args: str, width: int = 80) -> str:
    result = CliRunner().invoke(
        cli, list(args), terminal_width=width, env={"COLUMNS": str(width)}, catch_exceptions=False
    )
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
    with pytest.warns(FewUnitsWarning):
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewUnitsWarning)
        r = spanscore.evaluate(reference=GOLD, predicted=PRED, keep_details=details, **keywords)
    assert r.to_dict() == printed
    assert "examples" in printed["errors"]


# --------------------------------------------------------------------------------------------------
# Few resampling units


def test_few_units_warn_in_python_json_and_tables() -> None:
    with pytest.warns(FewUnitsWarning, match="intervals over 3 documents are coarse"):
        r = spanscore.evaluate(reference=GOLD, predicted=PRED, ci=0.95, resamples=50)
    assert r.to_dict()["warnings"] == [
        "intervals over 3 documents are coarse: bootstrap intervals need at least 30 units to approach their"
        " nominal coverage"
    ]
    assert "warning: intervals over 3 documents are coarse" in r.to_text(200)
    printed = json.loads(_cli("evaluate", GOLD, PRED, "--json", "--ci", "0.95", "--resamples", "50"))
    assert printed["warnings"] == r.to_dict()["warnings"]
    with pytest.warns(FewUnitsWarning) as caught:
        c = spanscore.compare(reference=GOLD, systems=[PRED, ALT], resamples=50, trials=50)
    messages = [str(w.message) for w in caught]
    assert any("cannot fall below 0.25" in m for m in messages)
    assert c.to_dict()["warnings"] == messages
    # The floor is what the test gives: a perfect system against another, over 3 documents.
    with pytest.warns(FewUnitsWarning):
        perfect = spanscore.compare(reference=GOLD, systems=[GOLD, PRED], resamples=50, trials=2000)
    d = perfect.difference(1, "strict")
    assert d["p_randomization"] == pytest.approx(0.25, abs=0.03)


def test_few_units_in_a_group_of_the_breakdown() -> None:
    with pytest.warns(FewUnitsWarning, match="the intervals of 3 source groups rest on fewer than 30 documents"):
        r = spanscore.evaluate(reference=GOLD, predicted=PRED, ci=0.9, resamples=20, by="source")
    assert r.to_dict()["warnings"][1].endswith(": news (1), twitter (1), science (1)")


def test_enough_units_give_no_warning(btc: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewUnitsWarning)
        r = spanscore.evaluate(reference=btc / "dev.txt", predicted=btc / "dev.txt", ci=0.95, resamples=20)
    assert "warnings" not in r.to_dict() and r.intervals is not None and r.intervals["count"] >= 30


@pytest.mark.parametrize(
    ("units", "alpha", "trials", "floor_warns"),
    [(5, 0.05, 1000, True), (6, 0.05, 1000, False), (6, 0.05, 10, True), (3, 0.3, 1000, False)],
)
def test_randomization_floor(units: int, alpha: float, trials: int, floor_warns: bool) -> None:
    from spanscore.analysis.reliability import few_units_warnings, randomization_floor

    assert randomization_floor(units, trials) == max(2.0 ** (1 - units), 1 / (trials + 1))
    notes = few_units_warnings(units, "document", alpha=alpha, trials=trials)
    assert any("randomisation" in n for n in notes) == floor_warns


# --------------------------------------------------------------------------------------------------
# The mean over documents, and the per-document rows


def test_mean_over_documents_leaves_out_empty_ones(btc: Path) -> None:
    gold = btc / "dev.txt"
    r = spanscore.evaluate(reference=gold, predicted=gold, documents=True)
    old = spanscore.evaluate(reference=gold, predicted=gold, documents=True, empty_documents="score")
    rows = list(r.document_rows())
    empty = [row for row in rows if row["reference"] == 0 and row["predicted"] == 0]
    assert empty, "BTC's dev set has sentences without mentions"
    macro, macro_old = r.to_dict()["macro_documents"], old.to_dict()["macro_documents"]
    # A perfect prediction: every sentence with a mention scores 1; empty ones scored 0 drag the mean down.
    assert macro["strict"]["f1"] == 1.0 and macro["count"] == len(rows) - len(empty)
    assert macro["empty"] == len(empty) and macro["empty_rule"] == "skip"
    assert macro_old["strict"]["f1"] == pytest.approx((len(rows) - len(empty)) / len(rows))
    assert macro_old["count"] == len(rows)
    with pytest.raises(spanscore.errors.OptionError, match="empty_documents"):
        spanscore.evaluate(reference=gold, predicted=gold, documents=True, empty_documents="drop")


def test_per_document_rows_use_the_json_names(report: spanscore.Report, tmp_path: Path) -> None:
    _cli("evaluate", GOLD, PRED, "--per-document", str(tmp_path / "d.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["document"] for r in rows] == [1, 2, 3]
    whole = report.to_dict()
    for row in rows:
        assert set(row["metrics"]) == set(whole["metrics"]) and set(row["semeval"]) == set(whole["semeval"])
        assert set(row["errors"]) <= set(whole["errors"])
        for name, block in row["metrics"].items():
            assert set(block) == set(whole["metrics"][name])
        for name, block in row["semeval"].items():
            assert set(block) <= set(whole["semeval"][name])
    # The rows add up to the totals, under the same names.
    for name, block in whole["metrics"].items():
        for key in ("full", "partial", "true_positive", "reference", "predicted"):
            if key in block:
                assert sum(r["metrics"][name][key] for r in rows) == block[key], (name, key)
    for name, block in whole["semeval"].items():
        for key in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"):
            assert sum(r["semeval"][name][key] for r in rows) == block[key], (name, key)
    assert sum(r["metrics"]["overlap"]["credit"] for r in rows) == whole["metrics"]["overlap"]["credit"]
    for kind in ("correct", "wrong_label_same_span", "right_label_overlap"):
        assert sum(r["errors"][kind] for r in rows) == whole["errors"][kind]


# --------------------------------------------------------------------------------------------------
# The docs site's generated pages


def test_the_command_line_reference_names_every_command_and_option() -> None:
    import importlib.util

    import click

    spec = importlib.util.spec_from_file_location(
        "docs_hooks", Path(__file__).parent.parent / "tools" / "docs_hooks.py"
    )
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    text = hooks.cli_reference()
    commands = hooks._commands(cli, "spanscore")
    assert {"spanscore evaluate", "spanscore validate", "spanscore repair", "spanscore review create"} <= {
        p for p, _ in commands
    }
    for path, command in commands:
        assert f"## {path}\n" in text
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert all(f"`{name}`" in text for name in param.opts), (path, param.opts)
    page = hooks.on_page_markdown("<!-- spanscore-output: evaluate gold.conll pred.conll -->")
    assert page == "```text\n" + _cli("evaluate", GOLD, PRED).rstrip("\n") + "\n```"
