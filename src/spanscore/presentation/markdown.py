"""summary.md: the scores, the taxonomy and the list of files, as Markdown tables."""

from __future__ import annotations

from ..results import EvaluationResult
from .common import corpus_line
from .tables import (
    Column,
    Row,
    TableModel,
    confusion_table,
    discontinuous_table,
    judge_table,
    per_type_table,
    scores_table,
    semeval_table,
    taxonomy_table,
)


def _cell(value: object) -> str:
    # Pipes would split a cell, line breaks end the row, and type names are user data that a
    # renderer could take for HTML.
    return str(value).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _table(table: TableModel) -> list[str]:
    """A Markdown table: numbers right-aligned, total rows with a bold label, detail rows indented."""
    out = ["| " + " | ".join(_cell(h) for h in table.header) + " |"]
    out.append("|" + "|".join(":---" if a == "left" else "---:" for a in table.align) + "|")
    for row in table.rows:
        cells = [_cell(c) for c in table.cells(row)]
        if row.style == "total":
            cells[row.label_index] = f"**{cells[row.label_index]}**"
        elif row.style == "sub":
            cells[row.label_index] = f"&nbsp;&nbsp;{cells[row.label_index]}"
        out.append("| " + " | ".join(cells) + " |")
    return out


def _section(table: TableModel) -> list[str]:
    return [f"## {table.title}", "", *_table(table), ""]


def render_markdown(
    data: EvaluationResult,
    files: dict[str, str],
    charts: dict[str, str],
    notes: list[str],
) -> str:
    """``charts`` maps each written chart to its caption; ``notes`` are shown near the top."""
    lines = [
        "# spanscore report",
        "",
        corpus_line(data["corpus"]),
        "",
        f"Signature: `{data['signature']}`",
        "",
    ]
    for note in notes:
        lines += [f"> **Note:** {note}", ""]

    lines += _section(scores_table(data))

    if charts:
        lines += ["## Charts", ""]
        for name, caption in charts.items():
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]

    lines += _section(semeval_table(data))
    for table in (per_type_table(data), taxonomy_table(data), confusion_table(data), judge_table(data),
                  discontinuous_table(data)):
        if table.rows:
            lines += _section(table)
    if "located" in data:
        from .comparison import located_table

        lines += _section(located_table(data["located"]))
    if "read" in data:
        from .comparison import read_table

        lines += _section(read_table(data["read"]))
    if "buckets" in data:
        from .buckets import bucket_tables

        for table in bucket_tables(data["buckets"]):
            lines += _section(table)
    if "levels" in data:
        from .levels import levels_table

        lines += _section(levels_table(data["levels"]))

    listing = tuple(Row((f"[{name}]({name})", what)) for name, what in files.items())
    lines += _section(TableModel("Files", (Column("file"), Column("holds")), listing))
    return "\n".join(lines)
