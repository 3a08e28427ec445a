"""Rich tables for a report. Formatting only: the tables come from ``spanscore.presentation.tables``.

Everything is printed at the terminal's width (80 columns when the output is not a terminal, or
``COLUMNS``): text cells wrap between words, numbers never wrap, and a table too wide for the width
is cut into several tables that each repeat the row labels. Cell text is never read as rich
markup (a label such as ``B-[/x]`` is printed as it is), and the signature is one unbroken line.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..results import EvaluationResult, Score
from .common import corpus_line, repairs_line
from .tables import (
    TableModel,
    confusion_table,
    discontinuous_table,
    judge_table,
    per_type_table,
    scores_table,
    semeval_table,
    taxonomy_table,
)

GAP = 3  # columns a cell takes beside its text: a space of padding on each side and a rule
HEADER_ROOM = 30  # a header longer than this and than its column's cells folds onto more lines (type names fit whole)


def _pct(x: Score) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def rich_tables(table: TableModel, width: int = 80) -> list[RenderableType]:
    """A table model as titled rich Tables no wider than ``width``: total rows bold, detail rows indented.

    Text columns (the label and descriptions) may wrap between words; number columns keep their
    widest cell. When the numbers do not fit beside the labels, they are dealt out to several
    tables, each with the label columns again."""
    rows = []
    for row in table.rows:
        cells = table.cells(row, _pct)
        if row.style == "sub":
            cells[row.label_index] = "  " + cells[row.label_index]
        rows.append((cells, "bold" if row.style == "total" else ""))
    n = len(table.columns)
    text_cols = [i for i, c in enumerate(table.columns) if c.kind == "text"]
    number_cols = [i for i in range(n) if i not in text_cols]
    # A number column is as wide as its widest cell, so that no figure is ever cut; its header (a
    # system's file name, say) folds onto more lines instead of widening the column.
    widest = [
        max([min(len(table.header[i]), HEADER_ROOM), *(len(cells[i]) for cells, _ in rows)]) for i in range(n)
    ]
    least = [
        max(_longest_word(table.header[i]), *(_longest_word(cells[i]) for cells, _ in rows))
        if i in text_cols
        else widest[i]
        for i in range(n)
    ]
    # The labels leave room for the widest number column: a long label (a type's name is one
    # word) folds onto more lines rather than squeeze a figure.
    spare = width - 1 - max((widest[i] + GAP for i in number_cols), default=0) - GAP * len(text_cols)
    excess = sum(least[i] for i in text_cols) - max(spare, len(text_cols))
    while excess > 0:
        first, *rest = sorted(text_cols, key=lambda i: -least[i])
        step = max(1, min(excess, least[first] - max([least[i] for i in rest] + [1])))
        least[first] -= step
        excess -= step
    label_room = 1 + sum(least[i] + GAP for i in text_cols)  # 1: the table's closing rule
    room = max(width - label_room, 1)
    need = sum(widest[i] + GAP for i in number_cols)
    # As few tables as the width allows, the number columns dealt out evenly between them.
    n_groups = max(1, -(-need // room))
    while True:
        share = -(-need // n_groups)
        groups: list[list[int]] = [[]]
        used = 0
        for i in number_cols:
            cost = widest[i] + GAP
            if groups[-1] and (used + cost > room or (used >= share and len(groups) < n_groups)):
                groups.append([])
                used = 0
            groups[-1].append(i)
            used += cost
        if len(groups) <= n_groups or n_groups >= len(number_cols):
            break
        n_groups += 1
    out: list[RenderableType] = []
    for k, group in enumerate(groups):
        keep = sorted(text_cols + group) if number_cols else list(range(n))
        # The title is a line of its own, so that it wraps at the console's width, not the table's.
        out.append(Text(table.title if k == 0 else f"{table.title} (continued)"))
        out.append(_table(table, keep, rows, least))
    return out


def _table(table: TableModel, keep: Sequence[int], rows: list[tuple[list[str], str]], least: list[int]) -> Table:
    t = Table(box=box.HEAVY_HEAD, padding=(0, 1))
    for i in keep:
        column = table.columns[i]
        number = column.kind != "text"  # exactly as wide as its widest cell: never wrapped, never cut
        t.add_column(
            Text(column.name, overflow="fold"),
            justify=table.align[i],
            min_width=least[i],
            max_width=least[i] if number else None,
            overflow="fold",
        )
    for cells, style in rows:
        t.add_row(*(Text(cells[i]) for i in keep), style=style or None)
    return t


def render(data: EvaluationResult, *, per_type: bool = True, width: int = 80) -> Group:
    tables = [scores_table(data), semeval_table(data)]
    if per_type:
        tables.append(per_type_table(data))
    tables.append(taxonomy_table(data))
    if per_type:
        tables.append(confusion_table(data))
    tables += [judge_table(data), discontinuous_table(data)]
    parts: list[RenderableType] = [Text(corpus_line(data["corpus"]))]
    repaired = repairs_line(data)
    if repaired is not None:
        parts.append(Text(repaired))
    for t in tables:
        if t.rows:
            parts += rich_tables(t, width)
    return Group(*parts)


def print_report(data: EvaluationResult, *, per_type: bool = True, console: Console | None = None) -> None:
    """The tables at the console's width, then the signature as one line (long lines are the
    terminal's to wrap, so that the signature can be copied whole)."""
    console = console or Console(highlight=False)
    console.print(render(data, per_type=per_type, width=console.width))
    console.print(Text(data["signature"], style="dim"), soft_wrap=True)


_COMPARISON_KEYS = ("located", "read", "macro_documents", "intervals", "breakdown")


def evaluation_tables(data: EvaluationResult, *, per_type: bool = True) -> list[TableModel]:
    """The tables an evaluation prints after the scores: how strings were found, what readers
    skipped, the average over documents, the intervals and the breakdown, where the data has them."""
    # Each table's module imported where the data has the table, not with this module: most
    # evaluations print none of them, and the modules (with analysis.reliability) cost some 5 ms
    # of a report run's imports.
    tables = _analysis_tables(data, per_type) if any(key in data for key in _COMPARISON_KEYS) else []
    if "buckets" in data:
        from .buckets import bucket_tables

        tables.extend(bucket_tables(data["buckets"]))
    if "levels" in data:
        from .levels import levels_table

        tables.append(levels_table(data["levels"]))
    return tables


def _analysis_tables(data: EvaluationResult, per_type: bool) -> list[TableModel]:
    from .comparison import (
        breakdown_table,
        few_units,
        interval_table,
        located_table,
        macro_documents_table,
        per_type_interval_table,
        read_table,
    )

    tables = []
    if "located" in data:
        tables.append(located_table(data["located"]))
    if "read" in data:
        tables.append(read_table(data["read"]))
    if "macro_documents" in data:
        tables.append(macro_documents_table(dict(data)))
    ci = data.get("intervals")
    if ci is not None:
        over = f"{ci['count']} {ci['unit']}s{few_units(ci['count'], ci['unit'])}"
        title = f"{100 * ci['level']:g}% intervals (percentile bootstrap over {over})"
        tables.append(interval_table(ci["scores"], title))
        if "discontinuous" in ci and "discontinuous" in data:
            d, unit = ci["discontinuous"], data["discontinuous"]["units"]["unit"]
            named = {"all mentions": d["all"], "discontinuous mentions": d["mentions"], f"{unit}s with one": d["units"]}
            level = f"{100 * ci['level']:g}%"
            tables.append(interval_table(named, f"Discontinuous mentions: strict scores with {level} intervals"))
        if per_type and ci["per_type"]:
            tables.append(per_type_interval_table(ci["per_type"], f"F1 per type with {100 * ci['level']:g}% intervals"))
    if "breakdown" in data:
        tables.append(breakdown_table(data["breakdown"]))
    return tables


def print_evaluation(data: EvaluationResult, *, per_type: bool = True, console: Console | None = None) -> None:
    """Every table of an evaluation at the console's width, then its signature as one line."""
    console = console or Console(highlight=False)
    console.print(render(data, per_type=per_type, width=console.width))
    for table in evaluation_tables(data, per_type=per_type):
        for part in rich_tables(table, console.width):
            console.print(part)
    _print_warnings(data, console)
    console.print(Text(data["signature"], style="dim"), soft_wrap=True)


def _print_warnings(data: Mapping[str, Any], console: Console) -> None:
    for message in data.get("warnings", ()):
        console.print(Text(f"warning: {message}", style="yellow"))


def evaluation_text(data: EvaluationResult, *, width: int = 80, per_type: bool = True) -> str:
    """What ``print_evaluation`` prints, as plain text at ``width`` columns (``str(report)``)."""
    console = _text_console(width)
    print_evaluation(data, per_type=per_type, console=console)
    return console.export_text()


def _text_console(width: int) -> Console:
    """A console that records plain text at ``width`` columns, whatever the terminal."""
    return Console(width=width, record=True, file=io.StringIO(), color_system=None, highlight=False)


def print_comparison(data: Mapping[str, Any], *, console: Console | None = None) -> None:
    """``spanscore compare``'s tables at the console's width, the rankings, then the signature."""
    from .buckets import comparison_group_tables
    from .comparison import differences_table, ranking_lines, systems_table

    console = console or Console(highlight=False)
    tables = [systems_table(data)] + ([differences_table(data)] if len(data["systems"]) > 1 else [])
    for table in tables + comparison_group_tables(data):
        for part in rich_tables(table, console.width):
            console.print(part)
    console.print(Text("Rankings by F1:"))
    for line in ranking_lines(data):
        console.print(Text("  " + line))
    _print_warnings(data, console)
    console.print(Text(data["signature"], style="dim"), soft_wrap=True)


def comparison_text(data: Mapping[str, Any], *, width: int = 80) -> str:
    """What ``print_comparison`` prints, as plain text at ``width`` columns (``str(comparison)``)."""
    console = _text_console(width)
    print_comparison(data, console=console)
    return console.export_text()
