"""report.html: one self-contained page (inline CSS, charts as data URIs, no script).

Every string that comes from the data (mention texts, contexts, type names, file names) goes
through ``html.escape``: mention texts are user data.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..results import EvaluationResult
from .common import CRITERION_HELP, ERROR_KEYS, TAXONOMY, corpus_line, number, partial_label
from .tables import (
    TableModel,
    confusion_table,
    discontinuous_table,
    errors_by_type_table,
    judge_table,
    per_type_table,
    scores_table,
    semeval_table,
    taxonomy_table,
)

CONTEXT_CHARS = 150  # characters of context shown either side of the marked mentions

# The characters ``html.escape`` replaces: most texts hold none, and one search finds that sooner
# than escape's five replacements (the page's thousands of cells are made after the counting).
_SPECIAL = re.compile("[&<>\"']")


def _escape(text: str) -> str:
    """``html.escape(text)``, the same string, sooner for a text with nothing to escape."""
    return escape(text) if _SPECIAL.search(text) is not None else text

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1f2328; background: #fff; max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 40px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d8dee4; }
h3 { font-size: 16px; margin: 24px 0 6px; }
p { margin: 6px 0; }
.lead { color: #57606a; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f6f8fa;
       padding: 2px 6px; border-radius: 4px; }
code.sig { display: inline-block; word-break: break-all; }
nav { margin: 14px 0 0; padding: 8px 0; border-top: 1px solid #eaeef2; border-bottom: 1px solid #eaeef2; }
nav a { margin-right: 16px; color: #0969da; text-decoration: none; }
nav a:hover { text-decoration: underline; }
table { border-collapse: collapse; margin: 10px 0 6px; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e5e7eb; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; font-weight: 600; border-bottom: 2px solid #d0d7de; }
tbody tr:nth-child(even) { background: #fafbfc; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.sub td { color: #57606a; font-size: 13px; }
tr.sub td:first-child + td { padding-left: 28px; }
tr.total td { font-weight: 600; border-top: 2px solid #d0d7de; }
td.muted { color: #8c959f; }
figure { margin: 18px 0 26px; }
figure img { width: 100%; max-width: 980px; height: auto; border: 1px solid #e5e7eb; border-radius: 6px; }
figcaption { max-width: 980px; color: #57606a; font-size: 13px; margin-top: 4px; }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; border-radius: 6px;
        margin: 12px 0; }
.g { background: #cfe3ff; border-radius: 2px; }
.p { border-bottom: 3px solid #e8871e; }
.type { font-size: 11px; color: #57606a; background: #eef1f4; border-radius: 3px; padding: 0 4px;
        margin-left: 4px; white-space: nowrap; }
td.ctx { color: #3d444d; font-size: 13px; max-width: 560px; }
td.mention { min-width: 110px; max-width: 220px; }
details { margin: 8px 0 16px; }
details > summary { cursor: pointer; font-weight: 600; padding: 4px 0; }
.legend span { margin-right: 14px; }
footer { margin-top: 48px; color: #8c959f; font-size: 12px; }
"""


@dataclass
class PartialSample:
    """The partial pairs of one criterion that the page lists (the first ``len(rows)`` of ``total``)."""

    criterion: str
    rows: list[dict[str, Any]]
    total: int
    csv: str


def _num(value: object) -> str:
    return f'<td class="n">{_escape(str(value))}</td>'


def _head(cells: Sequence[str], numeric_from: int = 1) -> str:
    th = "".join(
        f'<th class="n">{escape(c)}</th>' if i >= numeric_from else f"<th>{escape(c)}</th>"
        for i, c in enumerate(cells)
    )
    return f"<thead><tr>{th}</tr></thead>"


def _char_span(context: str, start: int, end: int, text: str, tokens: bool) -> tuple[int, int] | None:
    """Character offsets of a mention in its context, or None when they cannot be found."""
    if not tokens:
        return (start, end) if context[start:end] == text else None
    # The context is its tokens joined by spaces, so token ``start`` begins after ``start`` spaces;
    # a token that itself holds a space moves it further right, hence the search from there.
    atoms = context.split(" ")
    if start > len(atoms):
        return None
    guess = len(" ".join(atoms[:start])) + (1 if start else 0)
    at = context.find(text, guess)
    while at != -1 and at > 0 and context[at - 1] != " ":
        at = context.find(text, at + 1)
    return None if at == -1 else (at, at + len(text))


def highlight(context: str, spans: Sequence[tuple[int, int, str, str]], tokens: bool) -> str:
    """The context around ``spans`` (start, end, css class, text) with each span marked.

    Offsets count tokens (the context is its tokens joined by spaces) or characters. A span that
    cannot be placed leaves the context unmarked rather than marking the wrong words.
    """
    placed = [_char_span(context, s, e, text, tokens) for s, e, _, text in spans]
    if not spans or any(p is None for p in placed):
        return _escape(context)
    marks = [(p[0], p[1], css) for p, (_, _, css, _) in zip(placed, spans, strict=True) if p is not None]
    n = len(context)
    first, last = min(s for s, _, _ in marks), max(e for _, e, _ in marks)
    lo, hi = max(0, first - CONTEXT_CHARS), min(n, last + CONTEXT_CHARS)
    # Cut the window at spaces, not inside words.
    if lo > 0 and (space := context.find(" ", lo, first)) != -1:
        lo = space + 1
    if hi < n and (space := context.rfind(" ", last, hi)) != -1:
        hi = space
    cuts = sorted({lo, hi} | {x for s, e, _ in marks for x in (s, e)})
    plain = _SPECIAL.search(context, lo, hi) is None  # nothing to escape in the whole window
    out = []
    for a, b in itertools.pairwise(cuts):
        if a < b:
            classes = " ".join(dict.fromkeys(c for s, e, c in marks if s <= a and b <= e))
            body = context[a:b] if plain else escape(context[a:b])
            out.append(f'<span class="{classes}">{body}</span>' if classes else body)
    return ("… " if lo > 0 else "") + "".join(out) + (" …" if hi < n else "")


def _mention(side: dict[str, Any] | None, css: str) -> str:
    if side is None:
        return '<td class="mention muted">—</td>'
    return (
        f'<td class="mention"><span class="{css}">{_escape(str(side["text"]))}</span>'
        f'<span class="type">{_escape(str(side["type"]))}</span></td>'
    )


def _context(context: str, ref: dict[str, Any] | None, pred: dict[str, Any] | None, tokens: bool) -> str:
    spans = [
        (int(s["start"]), int(s["end"]), css, str(s["text"])) for s, css in ((ref, "g"), (pred, "p")) if s
    ]
    return f'<td class="ctx">{highlight(context, spans, tokens)}</td>'


PAIR_KEYS = ("text", "type", "start", "end")


def _side(row: dict[str, Any], side: str) -> dict[str, Any]:
    return {k: row[f"{side}_{k}"] for k in PAIR_KEYS}


def _table(table: TableModel) -> str:
    """A table model as HTML: numbers right-aligned, row names bold, total and detail rows styled."""
    head = "".join(
        f'<th class="n">{escape(h)}</th>' if a == "right" else f"<th>{escape(h)}</th>"
        for h, a in zip(table.header, table.align, strict=True)
    )
    rows = []
    for row in table.rows:
        tds = []
        for i, (text, align) in enumerate(zip(table.cells(row), table.align, strict=True)):
            if i == 0 and table.row_header and text:
                tds.append(f"<td><b>{escape(text)}</b></td>")
            else:
                tds.append(_num(text) if align == "right" else f"<td>{escape(text)}</td>")
        css = f' class="{row.style}"' if row.style else ""
        rows.append(f"<tr{css}>{''.join(tds)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _examples(examples: dict[str, list[dict[str, Any]]], tokens: bool) -> str:
    parts = []
    for key, code, text in TAXONOMY:
        if key not in ERROR_KEYS or not examples.get(key):
            continue
        rows = []
        for ex in examples[key]:
            ref, pred = ex.get("reference"), ex.get("predicted")
            context = _context(ex["context"], ref, pred, tokens)
            rows.append(f"<tr>{_mention(ref, 'g')}{_mention(pred, 'p')}{context}</tr>")
        head = _head(["reference", "prediction", "context"], numeric_from=9)
        parts.append(
            f"<h3>{escape(code)}: {escape(text)}</h3><table>{head}<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(parts)


def _partials(samples: Sequence[PartialSample], unit_kind: str, tokens: bool) -> str:
    parts = []
    # The criteria list mostly the same pairs (a pair partial under left is often so under
    # overlap): each distinct pair's mentions and marked context are made once.
    cells: dict[tuple[Any, ...], tuple[str, str]] = {}
    for sample in samples:
        rows = []
        for row in sample.rows:
            key = tuple(row[f"{side}_{k}"] for side in ("reference", "predicted") for k in PAIR_KEYS)
            key += (row["context"],)
            pair = cells.get(key)
            if pair is None:
                ref, pred = _side(row, "reference"), _side(row, "predicted")
                context = _context(str(row["context"]), ref, pred, tokens)
                pair = cells[key] = (_mention(ref, "g") + _mention(pred, "p"), context)
            mentions, context = pair
            rows.append(
                "<tr>"
                + _num(row[unit_kind])
                + mentions
                + f"<td>{_escape(str(row['relation']))}</td>"
                + _num(number(row["credit"]))
                + context
                + "</tr>"
            )
        shown = len(sample.rows)
        link = f'<a href="{escape(sample.csv)}">{escape(sample.csv)}</a>'
        if shown < sample.total:
            more = f"The first {shown} of {sample.total} partial pairs; all are in {link}."
        else:
            more = f"All {shown} partial pairs; {link} also lists the full matches."
        summary = (
            f"<summary>{escape(sample.criterion)} ({escape(CRITERION_HELP.get(sample.criterion, ''))}): "
            f"{sample.total} partial pairs</summary>"
        )
        if not sample.rows:
            parts.append(f"<details>{summary}<p>No partial matches.</p></details>")
            continue
        head = (
            f"<thead><tr><th class=\"n\">{escape(unit_kind)}</th><th>reference</th><th>prediction</th>"
            "<th>relation</th><th class=\"n\">credit</th><th>context</th></tr></thead>"
        )
        parts.append(
            f"<details open>{summary}<p class=\"lead\">{more}</p>"
            f"<table>{head}<tbody>{''.join(rows)}</tbody></table></details>"
        )
    return "".join(parts)


def render_html(
    data: EvaluationResult,
    *,
    charts: dict[str, tuple[bytes, str]],
    notes: Sequence[str],
    files: dict[str, str],
    examples: dict[str, list[dict[str, Any]]] | None,
    partials: Sequence[PartialSample] | None,
    unit_kind: str,
) -> str:
    """The whole page. ``charts`` maps file names to (SVG or PNG bytes, caption)."""
    tokens = data.get("options", {}).get("units", "tokens") == "tokens"
    sections = [
        ("scores", "Scores"),
        ("charts", "Charts"),
        ("semeval", "SemEval"),
        ("per-type", "Per type"),
        ("errors", "Errors"),
        ("partial", "Partial matches"),
        ("files", "Files"),
    ]
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>spanscore report</title>",
        f"<style>{CSS}</style></head><body>",
        "<header><h1>spanscore report</h1>",
        f'<p class="lead">{escape(corpus_line(data["corpus"]))}</p>',
        f'<p>Signature: <code class="sig">{escape(data["signature"])}</code></p>',
        "<nav>" + "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in sections) + "</nav></header>",
    ]
    out += [f'<p class="note">{escape(n)}</p>' for n in notes]

    def section(anchor: str, table: TableModel) -> str:
        return f'<h2 id="{anchor}">{escape(table.title)}</h2>'

    scores = scores_table(data)
    out += [section("scores", scores), _table(scores)]
    out.append(
        '<p class="lead">Precision divides the credit earned by the number of predictions, recall by the '
        f"number of reference mentions; a full match earns 1, a {escape(partial_label(data))} match its "
        "credit.</p>"
    )

    out.append('<h2 id="charts">Charts</h2>')
    if charts:
        for name, (image, caption) in charts.items():
            kind = "svg+xml" if name.endswith(".svg") else "png"
            uri = f"data:image/{kind};base64," + base64.b64encode(image).decode("ascii")
            out.append(
                f'<figure><img src="{uri}" alt="{escape(caption)}">'
                f"<figcaption>{escape(caption)} ({escape(name)})</figcaption></figure>"
            )
    else:
        out.append('<p class="lead">No charts were drawn.</p>')

    semeval = semeval_table(data)
    out += [section("semeval", semeval), _table(semeval)]
    per_type = per_type_table(data)
    out.append(section("per-type", per_type))
    out.append(_table(per_type) if per_type.rows else '<p class="lead">No types.</p>')
    if "buckets" in data:
        from .buckets import bucket_tables

        for k, table in enumerate(bucket_tables(data["buckets"])):
            out += [section(f"buckets-{k}", table), _table(table)]
    if "levels" in data:
        from .levels import levels_table

        levels = levels_table(data["levels"])
        out += [section("levels", levels), _table(levels)]

    taxonomy = taxonomy_table(data)
    out.append(section("errors", taxonomy))
    out.append(
        '<p class="lead">Each reference and prediction is matched one to one (a same-type overlap is '
        "preferred) and every mention that is not correct gets one error type.</p>"
    )
    out.append(_table(taxonomy))
    by_type = errors_by_type_table(data)
    if by_type.rows:
        out += [f"<h3>{escape(by_type.title)}</h3>", _table(by_type)]
    confusion = confusion_table(data)
    if confusion.rows:
        out += [
            f"<h3>{escape(confusion.title)}</h3>",
            '<p class="lead">Every matched pair of the one-to-one matching by the types of its reference and '
            "prediction, as pairs with the same span + pairs with overlapping spans; a reference mention "
            "matched to no prediction is missed, a prediction matched to no reference mention spurious."
            + (' <a href="confusion.csv">confusion.csv</a> holds the same cells.' if "confusion.csv" in files else "")
            + "</p>",
            _table(confusion),
        ]
    if "located" in data:
        from .comparison import located_table

        located = located_table(data["located"])
        out += [
            f"<h3>{escape(located.title)}</h3>",
            '<p class="lead">The prediction gave mentions as strings; each was looked for in its document\'s '
            "text. A string found nowhere counts as a spurious mention, its text shown after the marker "
            "line it was appended under.</p>",
            _table(located),
        ]
    if "read" in data:
        from .comparison import read_table

        read = read_table(data["read"])
        out += [
            f"<h3>{escape(read.title)}</h3>",
            '<p class="lead">What the readers of the annotation files skipped (counted, not scored), and '
            "predicted boundaries that fall inside a reference token: scored as they are, never snapped.</p>",
            _table(read),
        ]
    judge = judge_table(data)
    if judge.rows:
        out.append(f"<h3>{escape(judge.title)}</h3>")
        out.append(
            '<p class="lead">How many matched Type-5 pairs the judge accepted and rejected, per type, next to '
            "the F1 that accepts none of them (strict), the judge's choice (learned) and all (overlap).</p>"
        )
        out.append(_table(judge))
    discontinuous = discontinuous_table(data)
    if discontinuous.rows:
        out.append(f"<h3>{escape(discontinuous.title)}</h3>")
        out.append(
            '<p class="lead">As the discontinuous-NER literature reports them (Dai et al. 2020): over all mentions,'
            " over discontinuous mentions only, and over every mention of the documents (sentences) whose"
            " reference holds a discontinuous one.</p>"
        )
        out.append(_table(discontinuous))
    legend = (
        '<p class="legend"><span><span class="g">reference</span> highlighted</span>'
        '<span><span class="p">prediction</span> underlined</span></p>'
    )
    if examples:
        out += ["<h3>Examples</h3>", legend, _examples(examples, tokens)]

    out.append('<h2 id="partial">Partial matches</h2>')
    if partials is None:
        out.append('<p class="lead">This report was made without matching details: no pairs to list.</p>')
    else:
        out.append(
            '<p class="lead">The pairs that earned partial credit under each partial-credit criterion '
            "(the pairs Kong and Sullivan review by hand).</p>"
        )
        out += [legend, _partials(partials, unit_kind, tokens)]

    out.append('<h2 id="files">Files</h2>')
    rows = "".join(
        f'<tr><td><a href="{escape(name)}">{escape(name)}</a></td><td>{escape(what)}</td></tr>'
        for name, what in files.items()
    )
    out.append(f"<table>{_head(['file', 'holds'], numeric_from=9)}<tbody>{rows}</tbody></table>")
    out.append(f"<footer>{escape(data['signature'])}</footer></body></html>")
    return "\n".join(out)
