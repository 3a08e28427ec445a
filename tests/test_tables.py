"""The report's table models (``spanscore.presentation.tables``): their rows are the JSON's numbers,
and the terminal, Markdown and HTML writers show the same cells for the same table."""

from __future__ import annotations

import io
import math
from html.parser import HTMLParser
from typing import Any, cast, get_args, is_typeddict

import pytest
from rich.console import Console

import spanscore
from spanscore import results
from spanscore.presentation.common import TAXONOMY, pct
from spanscore.presentation.html import render_html
from spanscore.presentation.markdown import render_markdown
from spanscore.presentation.tables import (
    TableModel,
    confusion_table,
    errors_by_type_table,
    judge_table,
    per_type_table,
    scores_table,
    semeval_table,
    taxonomy_table,
)
from spanscore.presentation.terminal import render
from spanscore.programs.judge import CallableJudge
from spanscore.results import ErrorKey, EvaluationResult
from spanscore.stages.counts import ERROR_FIELDS

REFERENCE = [
    ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "I-ORG"],
    ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O", "O"],
    ["O", "B-ORG", "O", "O"],
]
PREDICTED = [
    ["B-PER", "I-PER", "O", "B-ORG", "O", "B-ORG", "O"],
    ["O", "B-PER", "O", "O", "B-LOC", "B-MISC", "O"],
    ["O", "O", "O", "B-LOC"],
]
TAXONOMY_KEYS = tuple(key for key, _, _ in TAXONOMY)
ERROR_KEYS = TAXONOMY_KEYS[1:]


def _evaluate(**options: Any) -> EvaluationResult:
    report = spanscore.evaluate(reference=REFERENCE, predicted=PREDICTED, format="labels", **options)
    return cast(EvaluationResult, report.to_dict())


@pytest.fixture(scope="module")
def data() -> EvaluationResult:
    return _evaluate()


@pytest.fixture(scope="module")
def judged() -> EvaluationResult:
    return _evaluate(judge=CallableJudge(lambda m: 1.0))


def _keys(typed: Any, value: dict[str, Any]) -> None:
    """``value`` has every required key of the TypedDict ``typed`` and no key it does not name."""
    assert is_typeddict(typed)
    assert typed.__required_keys__ <= set(value) <= typed.__required_keys__ | typed.__optional_keys__, typed


def test_result_types_describe_the_json(judged: EvaluationResult) -> None:
    assert get_args(ErrorKey) == ERROR_FIELDS
    _keys(results.EvaluationResult, dict(judged))
    _keys(results.Corpus, dict(judged["corpus"]))
    for name, block in judged["metrics"].items():
        _keys(results.TokenScores if name == "token" else results.MatchScores, dict(block))
    for scheme in judged["semeval"].values():
        _keys(results.SemEvalScores, dict(scheme))
    for entry in judged["per_type"].values():
        _keys(results.TypeScores, dict(entry))
        for s in entry["semeval"].values():
            _keys(results.SemEvalScores, dict(s))
    for averages in judged["macro"].values():
        _keys(results.MacroScores, dict(averages))
    errors = judged["errors"]
    _keys(results.Errors, dict(errors))
    assert "examples" in errors
    for counts in errors["per_type"].values():
        _keys(results.ErrorCounts, dict(counts))
    for examples in errors["examples"].values():
        for example in examples:
            _keys(results.ErrorExample, dict(example))
            for side in ("reference", "predicted"):
                if side in example:
                    _keys(results.Mention, example[side])
    _keys(results.Confusion, dict(judged["confusion"]))
    assert judged["confusion"]["rows"]
    for cell in judged["confusion"]["rows"]:
        _keys(results.ConfusionCell, dict(cell))
    _keys(results.Judge, dict(judged["judge"]))
    for verdicts in judged["judge"]["per_type"].values():
        _keys(results.JudgeScores, dict(verdicts))


def _labels(table: TableModel) -> list[Any]:
    return [row.cells[0] for row in table.rows]


def test_scores_rows_are_the_metrics(data: EvaluationResult) -> None:
    table = scores_table(data)
    assert _labels(table) == list(data["metrics"])
    assert table.header == ("criterion", "matches", "P", "R", "F1", "full", "partial", "credit")
    for row in table.rows:
        m = data["metrics"][str(row.cells[0])]
        assert row.cells[2:5] == (m["precision"], m["recall"], m["f1"])
        if "true_positive" in m:
            assert row.cells[5:] == (m["true_positive"], "", "")
        else:
            assert row.cells[5:] == (m["full"], m["partial"], m["credit"])


def test_semeval_rows_are_the_schemes(data: EvaluationResult) -> None:
    table = semeval_table(data)
    assert _labels(table) == ["strict", "exact", "partial", "type"] == list(data["semeval"])
    for row in table.rows:
        b = data["semeval"][str(row.cells[0])]
        keys = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")
        assert row.cells[1:8] == tuple(b[k] for k in keys)
        assert row.cells[8:] == (b["precision"], b["recall"], b["f1"])
        # MUC: every reference mention is correct, incorrect, partial or missed.
        assert b["correct"] + b["incorrect"] + b["partial"] + b["missed"] == b["possible"] == 6


def test_per_type_rows_then_macro(data: EvaluationResult) -> None:
    table = per_type_table(data)
    names = list(data["metrics"])
    assert table.header == ("type", "ref", "pred", *names)
    assert _labels(table) == [*data["per_type"], "macro"] == ["LOC", "MISC", "ORG", "PER", "macro"]
    *types, macro = table.rows
    for row in types:
        m = data["per_type"][str(row.cells[0])]["metrics"]
        assert row.style == ""
        assert row.cells[1:3] == (m["strict"]["reference"], m["strict"]["predicted"])
        assert row.cells[3:] == tuple(m[n]["f1"] for n in names)
    assert macro.style == "total"
    assert macro.cells[3:] == tuple(data["macro"][n]["f1"] for n in names)
    assert sum(int(str(r.cells[1])) for r in types) == data["corpus"]["reference_mentions"]


def test_taxonomy_counts_are_the_errors(data: EvaluationResult) -> None:
    e = data["errors"]
    table = taxonomy_table(data)
    main = [row for row in table.rows if row.style == ""]
    assert [row.cells[0] for row in main] == ["–", "Type-1", "Type-2", "Type-3", "Type-4", "Type-5"]
    assert [row.cells[2] for row in main] == [e[k] for k in TAXONOMY_KEYS]
    details = [row.cells[2] for row in table.rows if row.style == "sub"]
    assert details == [
        e["false_positive_overlapping"],
        e["false_negative_overlapping"],
        e["right_label_overlap_longer"],
        e["right_label_overlap_shorter"],
        e["right_label_overlap_shifted"],
        e["right_label_overlap_left_match"],
        e["right_label_overlap_right_match"],
    ]
    total = table.rows[-1]
    n_errors = sum(e[k] for k in ERROR_KEYS)
    assert total.style == "total" and total.cells[1:3] == ("errors", n_errors)
    assert n_errors == 7
    shares = [row.cells[3] for row in main[1:]]
    assert shares == [f"{100 * e[k] / n_errors:.1f}%" for k in ERROR_KEYS]
    by_type = errors_by_type_table(data)
    assert _labels(by_type) == list(e["per_type"])
    for row in by_type.rows:
        counts = e["per_type"][str(row.cells[0])]
        assert row.cells[1:] == tuple(counts[k] for k in TAXONOMY_KEYS)
    # The per-type counts add up to the totals.
    for i, key in enumerate(TAXONOMY_KEYS, start=1):
        assert sum(int(str(row.cells[i])) for row in by_type.rows) == e[key]


def test_judge_rows(data: EvaluationResult, judged: EvaluationResult) -> None:
    assert judge_table(data).rows == ()
    table = judge_table(judged)
    j = judged["judge"]
    assert _labels(table) == [*j["per_type"], "all"]
    assert table.rows[-1].style == "total"
    assert table.rows[-1].cells[1:] == (
        j["type5"], j["accepted"], j["rejected"], j["strict_f1"], j["learned_f1"], j["overlap_f1"]
    )
    assert j["type5"] == judged["errors"]["right_label_overlap"] == judged["metrics"]["overlap"]["partial"]


# What each writer shows, read back as cells.


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _html_tables(data: EvaluationResult) -> list[list[list[str]]]:
    page = render_html(data, charts={}, notes=[], files={}, examples=None, partials=None, unit_kind="sentence")
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def _markdown_tables(data: EvaluationResult) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    previous = ""
    for line in render_markdown(data, {}, {}, []).splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            if not set(line) <= set("|:-"):  # not the alignment row
                tables[-1].append([c.strip().replace("**", "").replace("&nbsp;", "") for c in line[1:-1].split(" | ")])
        previous = line
    return tables


def _rich_tables(data: EvaluationResult) -> list[list[list[str]]]:
    console = Console(file=io.StringIO(), width=250, record=True)
    console.print(render(data, width=250))
    tables: list[list[list[str]]] = []
    for line in console.export_text().splitlines():
        if line.startswith("┃"):
            tables.append([[c.strip() for c in line.strip("┃").split("┃")]])
        elif line.startswith("│"):
            tables[-1].append([c.strip() for c in line.strip("│").split("│")])
    return tables


def _shown(tables: list[list[list[str]]], table: TableModel) -> list[list[str]]:
    """The body of the one table whose header is ``table``'s."""
    found = [t[1:] for t in tables if tuple(t[0]) == table.header]
    assert len(found) == 1, table.title
    return found[0]


BUILDERS = (scores_table, semeval_table, per_type_table, taxonomy_table, confusion_table, judge_table)


@pytest.mark.parametrize("build", BUILDERS, ids=lambda b: b.__name__)
def test_writers_show_the_same_cells(judged: EvaluationResult, build: Any) -> None:
    table: TableModel = build(judged)
    assert table.rows
    expected = [[c.strip() for c in table.cells(row)] for row in table.rows]
    for name, tables in (
        ("rich", _rich_tables(judged)),
        ("markdown", _markdown_tables(judged)),
        ("html", _html_tables(judged)),
    ):
        assert _shown(tables, table) == expected, name


def test_overlap_f1_in_every_writer(data: EvaluationResult) -> None:
    f1 = pct(data["metrics"]["overlap"]["f1"])
    assert f1 == "38.46"
    console = Console(file=io.StringIO(), width=120, record=True)
    console.print(render(data, width=120))
    terminal = console.export_text()
    markdown = render_markdown(data, {}, {}, [])
    page = render_html(data, charts={}, notes=[], files={}, examples=None, partials=None, unit_kind="sentence")
    assert f"│ overlap   │ type, any overlap │ 35.71 │ 41.67 │ {f1} │    1 │       3 │    2.5 │" in terminal
    assert f"| overlap | type, any overlap | 35.71 | 41.67 | {f1} | 1 | 3 | 2.5 |" in markdown
    assert f'<td class="n">{f1}</td>' in page
    for text in (terminal, markdown, page):
        assert "Nejadgholi et al. (2020)" in text
        assert "004" not in text


def test_undefined_scores_read_n_a_everywhere() -> None:
    # MISC has no reference mention: with zero_division=nan its recall is undefined, null in the JSON.
    data = _evaluate(zero_division=math.nan)
    assert data["per_type"]["MISC"]["metrics"]["strict"]["recall"] is None
    table = per_type_table(data)
    for tables in (_rich_tables(data), _markdown_tables(data), _html_tables(data)):
        rows = _shown(tables, table)
        assert rows == [[c.strip() for c in table.cells(row)] for row in table.rows]
        misc = next(r for r in rows if r[0] == "MISC")
        assert "n/a" in misc
