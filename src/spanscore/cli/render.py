"""Rich tables for a report. Formatting only: the tables come from ``spanscore.reporting.tables``."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..reporting.common import corpus_line
from ..reporting.tables import TableModel, judge_table, per_type_table, scores_table, semeval_table, taxonomy_table
from ..results import EvaluationResult, Score


def _pct(x: Score) -> str:
    return "  n/a" if x is None else f"{100 * x:6.2f}"


def rich_table(table: TableModel) -> Table:
    """A table model as a rich Table: total rows bold, detail rows indented."""
    out = Table(title=table.title, title_justify="left")
    for name, align in zip(table.header, table.align, strict=True):
        out.add_column(name, justify=align)
    for row in table.rows:
        cells = table.cells(row, _pct)
        if row.style == "sub":
            cells[row.label_index] = "  " + cells[row.label_index]
        out.add_row(*cells, style="bold" if row.style == "total" else None)
    return out


def render(data: EvaluationResult, *, per_type: bool = True) -> Group:
    tables = [scores_table(data), semeval_table(data)]
    if per_type:
        tables.append(per_type_table(data))
    tables += [taxonomy_table(data), judge_table(data)]
    parts: list[RenderableType] = [Text(corpus_line(data["corpus"]))]
    parts += [rich_table(t) for t in tables if t.rows]
    parts.append(Text(data["signature"], style="dim"))
    return Group(*parts)


def print_report(data: EvaluationResult, *, per_type: bool = True) -> None:
    Console(width=120).print(render(data, per_type=per_type))
