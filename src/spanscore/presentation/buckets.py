"""Tables and a chart of scores per bucket (``evaluate --buckets``, ``compare --buckets``).

Built from the JSON, so the terminal, the report and a script read the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .llm_classes import class_tables
from .tables import Column, Row, TableModel, discontinuous_systems_table

BUCKET_SCORES = ("overlap", "partial")  # F1 columns beside strict's P, R and F1: partial is SemEval's


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _block(entry: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    family: Mapping[str, Mapping[str, Any]] = entry["semeval" if name == "partial" else "metrics"]
    return family.get(name)


def _cell(block: Mapping[str, Any] | None) -> str:
    if block is None:
        return "n/a"
    text = _pct(block["f1"])
    if "low" in block:
        text += f" [{_pct(block['low'])}, {_pct(block['high'])}]"
    return text


def bucket_table(attribute: str, entries: Sequence[Mapping[str, Any]]) -> TableModel:
    """One attribute: each bucket's mentions, strict P, R and F1, and F1 under overlap and SemEval
    partial (with intervals where computed)."""
    columns = [Column(attribute), Column("ref", "number"), Column("pred", "number")]
    columns += [Column("P", "number"), Column("R", "number"), Column("F1", "number")]
    columns += [Column(n, "number") for n in BUCKET_SCORES]
    rows = []
    for e in entries:
        strict = e["metrics"]["strict"]
        cells: list[Any] = [e["bucket"], e["reference_mentions"], e["predicted_mentions"]]
        cells += [_pct(strict["precision"]), _pct(strict["recall"]), _cell(strict)]
        cells += [_cell(_block(e, n)) for n in BUCKET_SCORES]
        rows.append(Row(tuple(cells)))
    title = f"By {attribute}: strict P, R, F1; overlap and partial F1 (%); mentions in each bucket"
    return TableModel(title, tuple(columns), tuple(rows))


def bucket_tables(buckets: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[TableModel]:
    return [bucket_table(a, entries) for a, entries in buckets.items()]


def _diff(c: Mapping[str, Any], alpha: float) -> str:
    if c["difference"] is None:
        return "n/a"
    mark = " *" if c["p_randomization"] is not None and c["p_randomization"] < alpha else ""
    span = "" if c["low"] is None else f" [{100 * c['low']:+.2f}, {100 * c['high']:+.2f}]"
    return f"{100 * c['difference']:+.2f}{span}{mark}"


def _wanted(group: Mapping[str, Any], criterion: str, metric: str = "f1") -> list[Mapping[str, Any]]:
    return [c for c in group["comparisons"] if c["criterion"] == criterion and c["metric"] == metric]


def group_comparison_table(
    label: str, groups: Sequence[Mapping[str, Any]], data: Mapping[str, Any], criterion: str = "strict"
) -> TableModel:
    """Per type or bucket: each system's F1 under ``criterion`` and each against the first (the
    paired difference with its interval; * where randomisation p < alpha)."""
    alpha = data["resampling"]["alpha"]
    names = [s["name"] for s in data["systems"]]
    columns = [Column(label), Column("ref", "number")] + [Column(n, "number") for n in names]
    columns += [Column(f"{n} - {names[0]}", "number") for n in names[1:]]
    rows = []
    for g in groups:
        cells: list[Any] = [g["bucket"], g["reference_mentions"]]
        cells += [_pct(s["metrics"][criterion]["f1"]["value"]) for s in g["systems"]]
        wanted = _wanted(g, criterion)
        cells += [_diff(next(c for c in wanted if c["b"] == n), alpha) for n in names[1:]]
        rows.append(Row(tuple(cells)))
    title = f"{criterion} F1 by {label} (%), differences paired over {data['unit']}s (* randomisation p < {alpha:g})"
    return TableModel(title, tuple(columns), tuple(rows))


def comparison_group_tables(data: Mapping[str, Any]) -> list[TableModel]:
    """The per-type table, one table per bucket attribute, the LLM classes and the discontinuous
    figures of a comparison, where it has them."""
    out = []
    if data.get("per_type"):
        out.append(group_comparison_table("type", data["per_type"], data))
    for attribute, groups in (data.get("buckets") or {}).items():
        out.append(group_comparison_table(attribute, groups, data))
    if data.get("levels"):
        from .levels import germeval_comparison_table

        out.append(group_comparison_table("level", data["levels"], data))
        out += [germeval_comparison_table(data)] if data.get("germeval") else []
    discontinuous = discontinuous_systems_table(data)  # where a side has discontinuous mentions
    return out + class_tables(data) + ([discontinuous] if discontinuous.rows else [])


def _forest_rows(data: Mapping[str, Any], b: str, criterion: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(label, comparison) of system ``b`` against the first: F1 under every score, then strict F1
    per type and per bucket."""
    rows: list[tuple[str, Mapping[str, Any]]] = [
        (c["criterion"], c) for c in data["comparisons"] if c["b"] == b and c["metric"] == "f1"
    ]
    for g in data.get("per_type") or []:
        rows += [(f"type {g['bucket']}", c) for c in _wanted(g, criterion) if c["b"] == b]
    for attribute, groups in (data.get("buckets") or {}).items():
        for g in groups:
            rows += [(f"{attribute} {g['bucket']}", c) for c in _wanted(g, criterion) if c["b"] == b]
    for g in data.get("levels") or []:
        rows += [(f"level {g['bucket']}", c) for c in _wanted(g, criterion) if c["b"] == b]
    return rows


def forest_plot(data: Mapping[str, Any], b: str, criterion: str = "strict") -> str:
    """An inline SVG: each score's F1 difference of ``b`` from the first system with its interval,
    one row each (every score, then ``criterion`` per type and per bucket). A filled dot is a
    difference with randomisation p < alpha, a hollow one is not; the vertical line is no difference."""
    import html

    alpha = data["resampling"]["alpha"]
    rows = [(label, c) for label, c in _forest_rows(data, b, criterion) if c["difference"] is not None]
    values = [0.0] + [v for _, c in rows for v in (c["difference"], c["low"], c["high"]) if v is not None]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.05 or 0.01
    lo, hi = lo - pad, hi + pad
    left, width, step = 230, 440, 20
    height = step * (len(rows) + 2)

    def x(v: float) -> float:
        return float(left + (v - lo) / (hi - lo) * width)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" role="img"'
        f' aria-label="F1 differences of {html.escape(b)}">',
        f'<line x1="{x(0):.1f}" y1="0" x2="{x(0):.1f}" y2="{height - step}" stroke="#5f6368" stroke-dasharray="3,3"/>',
    ]
    for k, (label, c) in enumerate(rows):
        y = step * (k + 1)
        significant = c["p_randomization"] is not None and c["p_randomization"] < alpha
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" font-size="12">{html.escape(label)}</text>')
        if c["low"] is not None:
            parts.append(
                f'<line x1="{x(c["low"]):.1f}" y1="{y}" x2="{x(c["high"]):.1f}" y2="{y}" stroke="#0072b2"'
                ' stroke-width="2"/>'
            )
        fill = "#0072b2" if significant else "white"
        parts.append(
            f'<circle cx="{x(c["difference"]):.1f}" cy="{y}" r="4" fill="{fill}" stroke="#0072b2" stroke-width="2">'
            f"<title>{html.escape(label)}: {html.escape(_diff(c, alpha))}</title></circle>"
        )
    axis_y = height - step + 14
    for v in (lo + pad, 0.0, hi - pad):
        parts.append(
            f'<text x="{x(v):.1f}" y="{axis_y}" text-anchor="middle" font-size="11">{100 * v:+.1f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
