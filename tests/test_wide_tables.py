"""Tables whose columns are types (summarize, the confusion table, buckets and comparisons per
type) keep every figure whole at 80, 100 and 120 columns, however many types there are (FewNERD
has 66) and however long their names: the numbers are dealt out to several tables that repeat the
label column, headers fold, and no number column is ever narrower than its widest figure."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spanscore.cli.main import cli
from spanscore.presentation.buckets import comparison_group_tables
from spanscore.presentation.comparison import differences_table, systems_table
from spanscore.presentation.tables import (
    TableModel,
    confusion_table,
    per_type_table,
    scores_table,
    semeval_table,
    summary_table,
    taxonomy_table,
)
from spanscore.presentation.terminal import evaluation_tables

WIDTHS = [80, 100, 120]
# 66 types, some with long one-word names (which cannot wrap between words).
TYPES = [f"t{k:02d}" + ("-" + "x" * (k % 23) if k % 3 else "") for k in range(64)] + [
    "organization-sportsleague-and-governmentagency-name",
    "a type name with spaces that wraps",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wide")
    rng = random.Random(3)
    gold, pred, other = [], [], []
    for s in range(600):
        for i in range(6):
            word = f"w{rng.randrange(40)}"
            t = TYPES[(s * 6 + i) % len(TYPES)]
            g = f"B-{t}" if rng.random() < 0.5 else "O"
            p = g if rng.random() < 0.8 else (f"B-{rng.choice(TYPES)}" if rng.random() < 0.7 else "O")
            o = g if rng.random() < 0.6 else "O"
            gold.append(f"{word}\t{g}")
            pred.append(f"{word}\t{p}")
            other.append(f"{word}\t{o}")
        for side in (gold, pred, other):
            side.append("")
    out = {}
    for name, lines in (("gold", gold), ("pred", pred), ("other", other)):
        out[name] = root / f"{name}.conll"
        out[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _run(args: list[str], width: int) -> str:
    result = CliRunner().invoke(cli, args, terminal_width=width, env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def _cells(shown: str) -> set[str]:
    """Every cell's text of the tables shown (a line of a cell for text that wraps)."""
    out = set()
    for line in shown.splitlines():
        for sep in "┃":
            line = line.replace(sep, "│")
        out.update(part.strip() for part in line.split("│"))
    return out


def _check(shown: str, width: int, tables: list[TableModel]) -> None:
    assert "…" not in shown
    for line in shown.splitlines():
        if not line.startswith(("spanscore:", "#")):  # the signature and the files' key print whole
            assert len(line) <= width, line
    cells = _cells(shown)
    checked = 0
    for table in tables:
        for row in table.rows:
            for value, column, cell in zip(row.cells, table.columns, table.cells(row, _pct), strict=True):
                if column.kind != "text" and not isinstance(value, str) and cell:
                    assert cell in cells, (table.title, column.name, cell)
                    checked += 1
    assert checked > 0


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


@pytest.mark.parametrize("width", WIDTHS)
def test_summarize_keeps_every_count(files: dict[str, Path], width: int) -> None:
    args = ["summarize", str(files["gold"]), str(files["pred"])]
    rows = json.loads(_run([*args, "--json"], width))
    shown = _run(args, width)
    names = [str(r["path"]) for r in rows]
    if any(f"#{k}" in shown for k in (1, 2)) and str(files["gold"]) not in _cells(shown):
        names = ["#1", "#2"]
    _check(shown, width, [summary_table(rows, names)])


def test_summarize_names_each_file_in_a_column_of_its_own(files: dict[str, Path], tmp_path: Path) -> None:
    """A path too long for the label column becomes a key above the tables; its #k is shown whole."""
    deep = tmp_path / ("a-very-long-folder-name-" * 4) / "gold.conll"
    deep.parent.mkdir(parents=True)
    deep.write_bytes(files["gold"].read_bytes())
    shown = _run(["summarize", str(deep), str(files["pred"])], 80)
    assert f"#1  {deep}" in shown.replace("\n", "") or shown.startswith("#1  ")
    assert {"#1", "#2"} <= _cells(shown)


@pytest.mark.parametrize("width", WIDTHS)
def test_evaluate_keeps_every_figure(files: dict[str, Path], width: int) -> None:
    args = ["evaluate", str(files["gold"]), str(files["pred"]), "--buckets", "length", "--ci", "0.9",
            "--resamples", "20"]
    data: Any = json.loads(_run([*args, "--json"], width))
    shown = _run(args, width)
    tables = [scores_table(data), semeval_table(data), per_type_table(data), taxonomy_table(data),
              confusion_table(data), *evaluation_tables(data)]
    _check(shown, width, tables)


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_keeps_every_figure(files: dict[str, Path], width: int) -> None:
    args = ["compare", str(files["gold"]), str(files["pred"]), str(files["other"]), "--per-type",
            "--buckets", "length", "--resamples", "20", "--trials", "20"]
    data = json.loads(_run([*args, "--json"], width))
    shown = _run(args, width)
    _check(shown, width, [systems_table(data), differences_table(data), *comparison_group_tables(data)])


@pytest.mark.parametrize("width", WIDTHS)
def test_a_label_longer_than_the_width_folds_and_leaves_the_figures_whole(width: int) -> None:
    from io import StringIO

    from rich.console import Console

    from spanscore.presentation.tables import Column, Row
    from spanscore.presentation.terminal import rich_tables

    columns = (Column("type"), *(Column(f"count{k}", "number") for k in range(12)))
    rows = tuple(Row((name, *(10**k + 7 for k in range(12)))) for name in ("x" * 150, "short", "y" * 90))
    table = TableModel("Counts", columns, rows)
    console = Console(width=width, file=StringIO(), highlight=False)
    for part in rich_tables(table, width):
        console.print(part)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    _check(shown, width, [table])
