"""Tables and the HTML page of intervals and comparisons (``evaluate --ci``, ``spanscore compare``).

Built from the JSON (``significance.comparison_dict``) as ``TableModel``s, so the terminal and the
page show the same numbers. The page is one self-contained file: no script, no outside resource,
every name escaped.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Mapping
from typing import Any

from ..analysis.reliability import NARROW_UNITS, narrow_note
from .buckets import comparison_group_tables, forest_plot
from .llm_classes import CLASS_NAMES
from .tables import Column, Row, TableModel

METRIC_NAMES = {"precision": "P", "recall": "R", "f1": "F1", "f_beta": "F-beta"}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _span(entry: Mapping[str, Any]) -> str:
    if entry.get("low") is None:
        return "n/a"
    return f"[{_pct(entry['low'])}, {_pct(entry['high'])}]"


def _p(x: float | None) -> str:
    return "n/a" if x is None else (f"{x:.4f}" if x >= 0.0001 else f"{x:.1e}")


def interval_table(intervals: Mapping[str, Mapping[str, Mapping[str, Any]]], title: str) -> TableModel:
    """Each score's P, R and F1 with its interval."""
    columns = [Column("score")]
    metrics = [m for m in METRIC_NAMES if intervals and m in next(iter(intervals.values()))]
    for m in metrics:
        columns += [Column(METRIC_NAMES[m], "number"), Column(f"{METRIC_NAMES[m]} interval", "number")]
    rows = []
    for name, block in intervals.items():
        cells: list[str] = [name]
        for m in metrics:
            cells += [_pct(block[m]["value"]), _span(block[m])]
        rows.append(Row(tuple(cells)))
    return TableModel(title, tuple(columns), tuple(rows))


def systems_table(data: Mapping[str, Any], metric: str = "f1") -> TableModel:
    """Every system's score under each criterion, with its interval."""
    systems = data["systems"]
    level = data["resampling"]["level"]
    columns = [Column("score")] + [Column(s["name"], "number") for s in systems]
    rows = []
    for name in systems[0]["metrics"]:
        entries = [s["metrics"][name][metric] for s in systems]
        cells = [name] + [f"{_pct(e['value'])} {_span(e)}" for e in entries]
        rows.append(Row(tuple(cells)))
    title = (
        f"{METRIC_NAMES[metric]} of each system, with {100 * level:g}% intervals"
        f" (bootstrap over {data['documents']} {data['unit']}s){few_units(data['documents'], data['unit'])}"
    )
    return TableModel(title, tuple(columns), tuple(rows))


def differences_table(data: Mapping[str, Any], metric: str = "f1") -> TableModel:
    """Each system against the first: difference, its interval, and both p-values."""
    alpha = data["resampling"]["alpha"]
    wanted = [c for c in data["comparisons"] if c["metric"] == metric]
    others = list(dict.fromkeys(c["b"] for c in wanted))
    columns = [Column("score")]
    for b in others:
        columns += [
            Column(f"{b} - {data['systems'][0]['name']}", "number"),
            Column("p boot", "number"),
            Column("p rand", "number"),
        ]
    rows = []
    for name in data["systems"][0]["metrics"]:
        cells = [name]
        for b in others:
            c = next(c for c in wanted if c["b"] == b and c["criterion"] == name)
            mark = " *" if c["p_randomization"] is not None and c["p_randomization"] < alpha else ""
            diff = "n/a" if c["difference"] is None else f"{100 * c['difference']:+.2f}"
            cells += [f"{diff} {_span(c)}{mark}", _p(c["p_bootstrap"]), _p(c["p_randomization"])]
        rows.append(Row(tuple(cells)))
    title = (
        f"{METRIC_NAMES[metric]} differences from {data['systems'][0]['name']}, paired over"
        f" {data['unit']}s (* randomisation p < {alpha:g})"
    )
    return TableModel(title, tuple(columns), tuple(rows))


def change_notes(change: Mapping[str, Any] | None) -> list[str]:
    """What a criterion changes against exact-match F1: the ranking, and which differences are significant."""
    if change is None:
        return []
    notes = []
    if change["ranking_changed"]:
        notes.append("ranks the systems differently from strict")
    if change["significant_only_here"]:
        notes.append("significant only here: " + ", ".join(change["significant_only_here"]))
    if change["significant_only_under_strict"]:
        notes.append("significant only under strict: " + ", ".join(change["significant_only_under_strict"]))
    return notes


def ranking_text(data: Mapping[str, Any], name: str, order: list[str]) -> str:
    """The systems in order of F1 under one score, ``>`` between them, ``=`` where F1 is equal
    (tied systems keep the order they were given in)."""
    values = {s["name"]: (s["metrics"].get(name) or {}).get("f1", {}).get("value") for s in data["systems"]}
    text = order[0] if order else ""
    for before, system in itertools.pairwise(order):
        text += f" {'=' if values.get(before) == values.get(system) else '>'} {system}"
    return text


def ranking_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per score: the systems in order of F1, and what changes against exact-match F1."""
    lines = []
    changes = {c["criterion"]: c for c in data.get("changes", [])}
    for name, order in data["rankings"].items():
        line = f"{name}: {ranking_text(data, name, order)}"
        notes = change_notes(changes.get(name))
        if notes:
            line += "  <- " + "; ".join(notes)
        lines.append(line)
    return lines


def _html_table(table: TableModel) -> str:
    head = "".join(f"<th>{html.escape(c.name)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = table.cells(row)
        tds = "".join(
            f"<th>{html.escape(v)}</th>" if i == 0 else f'<td class="{table.align[i]}">{html.escape(v)}</td>'
            for i, v in enumerate(cells)
        )
        body.append(f"<tr>{tds}</tr>")
    return (
        f"<h2>{html.escape(table.title)}</h2>\n<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1d1d1f; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #d9dce1; padding: .3rem .7rem; text-align: left; }
td.right { text-align: right; }
thead th { border-bottom: 2px solid #5f6368; }
.changed { background: #fff3cd; }
code { font-size: .85rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin-top: 2rem; }
"""


def html_page(data: Mapping[str, Any]) -> str:
    """The comparison as one self-contained HTML page: systems, differences, rankings per criterion."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>spanscore compare</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>spanscore compare</h1>",
        f"<p>{len(data['systems'])} systems against one reference, {data['documents']} {html.escape(data['unit'])}s,"
        f" {data['resampling']['resamples']} bootstrap resamples, {data['resampling']['trials']} randomisation"
        f" trials, seed {data['resampling']['seed']}.</p>",
    ]
    parts.append(_html_table(systems_table(data)))
    if len(data["systems"]) > 1:
        parts.append(_html_table(differences_table(data)))
        first = data["systems"][0]["name"]
        for s in data["systems"][1:]:
            parts.append(
                f"<h2>Where {html.escape(s['name'])} differs from {html.escape(first)}: F1 difference (points) and"
                f" {100 * data['resampling']['level']:g}% interval; filled: randomisation p &lt;"
                f" {data['resampling']['alpha']:g}</h2>"
            )
            parts.append(f"<figure>{forest_plot(data, s['name'])}</figure>")
    for table in comparison_group_tables(data):
        parts.append(_html_table(table))
    changes = {c["criterion"]: c for c in data.get("changes", [])}
    parts.append("<h2>Rankings by F1 (first is best)</h2><table><thead><tr><th>score</th><th>ranking</th>")
    parts.append("<th>against exact-match (strict) F1</th></tr></thead><tbody>")
    for name, order in data["rankings"].items():
        change = changes.get(name)
        notes = change_notes(change)
        css = ' class="changed"' if notes else ""
        parts.append(
            f"<tr{css}><th>{html.escape(name)}</th><td>{html.escape(ranking_text(data, name, order))}</td>"
            f"<td>{html.escape('; '.join(notes) or ('baseline' if change is None else 'same'))}</td></tr>"
        )
    parts.append("</tbody></table>")
    files = "".join(
        f"<li>{html.escape(s['name'])}: <code>{html.escape(s['file'])}</code></li>" for s in data["systems"]
    )
    parts.append(f"<h2>Systems</h2><ul>{files}</ul>")
    parts.append(f"<p><code>{html.escape(data['signature'])}</code></p></body></html>\n")
    return "\n".join(parts)


BREAKDOWN_SCORES = ("strict", "boundary", "left", "right", "overlap", "semeval_partial", "token")


def breakdown_table(breakdown: Mapping[str, Any]) -> TableModel:
    """F1 of each group of documents under the main criteria (with intervals when computed)."""
    columns = [Column(breakdown["field"]), Column("docs", "number"), Column("mentions", "number")]
    names = [n for n in BREAKDOWN_SCORES if n in breakdown["groups"][0]["scores"]] if breakdown["groups"] else []
    columns += [Column(n, "number") for n in names]
    rows = []
    for g in breakdown["groups"]:
        cells: list[Any] = [g["value"], g["documents"], g["reference_mentions"]]
        for n in names:
            text = _pct(g["scores"][n]["f1"])
            if "intervals" in g:
                text += f" {_span(g['intervals'][n]['f1'])}"
            cells.append(text)
        rows.append(Row(tuple(cells)))
    return TableModel(f"F1 by {breakdown['field']} (reference mentions)", tuple(columns), tuple(rows))


FEW_UNITS = NARROW_UNITS  # below this many documents, percentile intervals cover too seldom (docs/compare.md)


def few_units(count: int, unit: str) -> str:
    """A warning for a title where the intervals rest on too few documents to hold their level."""
    note = narrow_note(count, unit)
    return "" if note is None else f"; {note}"


def per_type_interval_table(per_type: Mapping[str, Mapping[str, Any]], title: str) -> TableModel:
    """Each type's F1 under every criterion, every SemEval scheme and the token score, with its interval."""
    names = list(next(iter(per_type.values()))) if per_type else []
    columns = [Column("type")] + [Column(n, "number") for n in names]
    rows = []
    for t, block in per_type.items():
        rows.append(Row(tuple([t] + [f"{_pct(block[n]['f1']['value'])} {_span(block[n]['f1'])}" for n in names])))
    return TableModel(title, tuple(columns), tuple(rows))


def macro_documents_table(data: Mapping[str, Any]) -> TableModel:
    """Micro F1 beside the mean and standard deviation of F1 over documents (HIPE's macro_doc)."""
    macro = data["macro_documents"]
    columns = (
        Column("score"),
        Column("micro F1", "number"),
        Column(f"mean F1 over {macro['unit']}s", "number"),
        Column("std", "number"),
    )
    rows = []
    for name, block in macro.items():
        if not isinstance(block, dict):
            continue
        micro = data["metrics"].get(name) or data["semeval"].get(name.removeprefix("semeval_"), {})
        rows.append(Row((name, _pct(micro.get("f1")), _pct(block.get("f1")), _pct(block.get("f1_std")))))
    title = f"Micro and macro over {macro['count']} {macro['unit']}s (F1 %)"
    if macro.get("empty"):
        rule = "left out of the mean" if macro.get("empty_rule") == "skip" else "scored as zero-division"
        title += f"; {macro['empty']} {macro['unit']}s without mentions on either side {rule}"
    return TableModel(title, columns, tuple(rows))


def located_table(located: Mapping[str, Any]) -> TableModel:
    """How the mentions given as strings were found, with an example of each way; the steps the
    policy did not take are left out."""
    columns = (Column("found"), Column("mentions", "number"), Column("example"))
    rows = []
    names = {
        "given": "where the file places them",
        "exact": "exactly",
        "normalised": "normalised",
        "fuzzy": "fuzzily",
        "inside_word": "inside a longer word",
        "not_found": "not at all (spurious)",
        "invalid": "invalid output (spurious)",
    }
    steps = located.get("steps", ["exact", "normalised", "fuzzy"])
    for how, name in names.items():
        if how not in ("not_found", "invalid") and how not in steps and not located.get(how):
            continue
        examples = located.get("examples", {}).get(how, [])
        example = ""
        if examples:
            e = examples[0]
            example = f"{e['text']!r} ({e['label']})" + (f" -> {e['found']!r}" if "found" in e else "")
        rows.append(Row((name, located.get(how, 0), example)))
    example = ""
    if located.get("examples", {}).get("ambiguous"):
        e = located["examples"]["ambiguous"][0]
        example = f"{e['text']!r} ({e['label']}): {e['occurrences']} {e['how']} places, given {e['given']}"
    rows.append(Row(("ambiguous (more occurrences than mentions)", located.get("ambiguous", 0), example)))
    bag = located.get("position_free")
    if bag:
        rows.append(Row((
            "position-free: (string, type) pairs matched", bag["matched"],
            f"of {bag['predicted']} given, {bag['reference']} in the reference: P {_pct(bag['precision'])}"
            f" R {_pct(bag['recall'])} F1 {_pct(bag['f1'])}",
        )))
    names = CLASS_NAMES
    for how, count in located.get("classes", {}).items():
        examples = located.get("class_examples", {}).get(how, [])
        example = f"{examples[0]['text']!r} ({examples[0]['label']})" if examples else ""
        rows.append(Row((f"class: {names.get(how, how)}", count, example)))
    best = (located.get("thresholds") or {}).get("overall", {}).get("best")
    if best is not None:  # scored spans: where the sweep's F1 peaks
        rows.append(Row((
            "best score threshold (strict F1)", best["threshold"],
            f"P {_pct(best['precision'])} R {_pct(best['recall'])} F1 {_pct(best['f1'])}",
        )))
    for status, count in located.get("statuses", {}).items():  # the tool's own account (LangExtract's alignment)
        rows.append(Row((f"the file says: {status}", count, "")))
    return TableModel(f"Mentions given as strings, located ({located['policy']})", columns, tuple(rows))


def read_table(read: Mapping[str, Any]) -> TableModel:
    """What the annotation-format readers skipped, and predicted boundaries inside reference tokens."""
    rows = []
    for side in ("reference", "predicted"):
        notes = read.get(side) or {}
        for what, n in sorted(notes.get("skipped", {}).items()):
            rows.append(Row((side, f"skipped: {what}", n, "")))
        if notes.get("discontinuous_mentions"):
            n = notes["discontinuous_mentions"]
            rows.append(Row((side, "discontinuous mentions", n, "")))
        if notes.get("misaligned_count"):
            first = notes["misaligned"][0]
            what = str(first.get("what", ""))
            rows.append(Row((side, "offsets the reader reconciled", notes["misaligned_count"], what)))
    misaligned = read.get("misaligned") or {}
    example = ""
    if misaligned.get("examples"):
        e = misaligned["examples"][0]
        example = f"{e.get('id')}: {e.get('start')}..{e.get('end')} {e.get('label')} ({e.get('boundary')})"
    rows.append(Row(("predicted", "boundary inside a reference token (scored as it is)", misaligned.get("count", 0),
                     example)))
    columns = (Column("side"), Column("what"), Column("count", "number"), Column("first example"))
    return TableModel("Reading the annotation files", columns, tuple(rows))
