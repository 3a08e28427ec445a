"""summary.md: the scores, the taxonomy and the list of files, as Markdown tables."""

from __future__ import annotations

from typing import Any

from .common import (
    CRITERION_HELP,
    JUDGE_HEADER,
    SEMEVAL_COLUMNS,
    TAXONOMY,
    TAXONOMY_DETAIL,
    corpus_line,
    judge_rows,
    number,
    pct,
    share,
    total_errors,
)


def _cell(value: object) -> str:
    # Pipes would split a cell, line breaks end the row, and type names are user data that a
    # renderer could take for HTML.
    return str(value).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _table(header: list[str], rows: list[list[str]], right: int = 1) -> list[str]:
    """A Markdown table; columns from ``right`` on are right-aligned (numbers)."""
    out = ["| " + " | ".join(_cell(h) for h in header) + " |"]
    out.append("|" + "|".join(":---" if i < right else "---:" for i in range(len(header))) + "|")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def render_markdown(
    data: dict[str, Any],
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

    lines += ["## Mention scores (%)", ""]
    rows = []
    for name, m in data["metrics"].items():
        if name == "token":
            rows.append([name, CRITERION_HELP[name], pct(m["precision"]), pct(m["recall"]), pct(m["f1"]),
                         str(m["true_positive"]), "", ""])
        else:
            rows.append([name, CRITERION_HELP.get(name, ""), pct(m["precision"]), pct(m["recall"]),
                         pct(m["f1"]), str(m["full"]), str(m["partial"]), number(m["credit"])])
    lines += _table(["criterion", "matches", "P", "R", "F1", "full", "partial", "credit"], rows, right=2)
    lines.append("")

    if charts:
        lines += ["## Charts", ""]
        for name, caption in charts.items():
            lines += [f"![{caption}]({name})", "", f"*{caption}*", ""]

    lines += ["## SemEval-2013 schemes (MUC categories)", ""]
    rows = [
        [name, *(str(b[k]) for _, k in SEMEVAL_COLUMNS), pct(b["precision"]), pct(b["recall"]), pct(b["f1"])]
        for name, b in data["semeval"].items()
    ]
    lines += _table(["scheme", *(h for h, _ in SEMEVAL_COLUMNS), "P", "R", "F1"], rows)
    lines.append("")

    if data["per_type"]:
        names = list(data["metrics"])
        lines += ["## Per type: F1 (%) by criterion", ""]
        rows = []
        for typ, b in data["per_type"].items():
            m = b["metrics"]
            rows.append([typ, str(m["strict"]["reference"]), str(m["strict"]["predicted"]),
                         *(pct(m[n]["f1"]) for n in names)])
        rows.append(["**macro**", "", "", *(pct(data["macro"][n]["f1"]) for n in names)])
        lines += _table(["type", "ref", "pred", *names], rows)
        lines.append("")

    e = data["errors"]
    n_errors = total_errors(e)
    lines += ["## Error taxonomy (one-to-one matching)", ""]
    rows = []
    for key, code, text in TAXONOMY:
        rows.append([code or "–", text, str(e[key]), "" if not code else share(int(e[key]), n_errors)])
        for sub, label in TAXONOMY_DETAIL.get(key, ()):
            rows.append(["", f"&nbsp;&nbsp;{label}", str(e[sub]), ""])
    lines += _table(["type", "kind", "count", "share of errors"], rows, right=2)
    lines.append("")

    if "judge" in data:
        lines += ["## Judge: right-label/overlap (Type-5) pairs", ""]
        rows = judge_rows(data["judge"])
        rows[-1][0] = "**all**"
        lines += _table(list(JUDGE_HEADER), rows)
        lines.append("")

    lines += ["## Files", ""]
    lines += _table(["file", "holds"], [[f"[{name}]({name})", what] for name, what in files.items()], right=2)
    lines.append("")
    return "\n".join(lines)
