"""The end of a report run: report.html's partial pairs made once per distinct pair and escaped
only where there is something to escape, and the page writers imported while the workers count.
Every page is the one the plain way gives (the reference renderers here use ``html.escape`` on
every piece and render every row)."""

from __future__ import annotations

import html
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from spanscore.presentation import html as page
from spanscore.presentation.common import number

# Texts rich in what HTML escapes, spaces and a few plain letters.
TEXT = st.text(alphabet="ab &<>\"'\u00e9 ", min_size=0, max_size=12)


@given(TEXT)
def test_escape_is_html_escape(text: str) -> None:
    assert page._escape(text) == html.escape(text)


def _highlight_plainly(context: str, spans: list[tuple[int, int, str, str]], tokens: bool) -> str:
    """``highlight`` as it was written first: ``html.escape`` on every piece."""
    placed = [page._char_span(context, s, e, text, tokens) for s, e, _, text in spans]
    if not spans or any(p is None for p in placed):
        return html.escape(context)
    marks = [(p[0], p[1], css) for p, (_, _, css, _) in zip(placed, spans, strict=True) if p is not None]
    n = len(context)
    first, last = min(s for s, _, _ in marks), max(e for _, e, _ in marks)
    lo, hi = max(0, first - page.CONTEXT_CHARS), min(n, last + page.CONTEXT_CHARS)
    if lo > 0 and (space := context.find(" ", lo, first)) != -1:
        lo = space + 1
    if hi < n and (space := context.rfind(" ", last, hi)) != -1:
        hi = space
    cuts = sorted({lo, hi} | {x for s, e, _ in marks for x in (s, e)})
    out = []
    for a, b in itertools.pairwise(cuts):
        if a < b:
            classes = " ".join(dict.fromkeys(c for s, e, c in marks if s <= a and b <= e))
            body = html.escape(context[a:b])
            out.append(f'<span class="{classes}">{body}</span>' if classes else body)
    return ("… " if lo > 0 else "") + "".join(out) + (" …" if hi < n else "")


@st.composite
def _contexts(draw: Any) -> tuple[str, list[tuple[int, int, str, str]], bool]:
    words = draw(st.lists(st.text(alphabet="ab&<>\"'", min_size=1, max_size=4), min_size=1, max_size=80))
    context = " ".join(words)
    tokens = draw(st.booleans())
    spans = []
    for css in ("g", "p"):
        if tokens:
            s = draw(st.integers(0, len(words) - 1))
            e = draw(st.integers(s + 1, len(words)))
            spans.append((s, e, css, " ".join(words[s:e])))
        else:
            s = draw(st.integers(0, len(context) - 1))
            e = draw(st.integers(s + 1, len(context)))
            spans.append((s, e, css, context[s:e]))
    return context, spans, tokens


@settings(max_examples=300, deadline=None)
@given(_contexts())
def test_highlight_is_the_plain_escaping_of_every_piece(case: tuple[str, list[Any], bool]) -> None:
    context, spans, tokens = case
    assert page.highlight(context, spans, tokens) == _highlight_plainly(context, spans, tokens)


def _row_plainly(row: dict[str, Any], unit_kind: str, tokens: bool) -> str:
    """One partial pair's table row, every cell escaped with ``html.escape``."""
    sides = {s: {k: row[f"{s}_{k}"] for k in ("text", "type", "start", "end")} for s in ("reference", "predicted")}
    cells = [f'<td class="n">{html.escape(str(row[unit_kind]))}</td>']
    for side, css in (("reference", "g"), ("predicted", "p")):
        cells.append(
            f'<td class="mention"><span class="{css}">{html.escape(str(sides[side]["text"]))}</span>'
            f'<span class="type">{html.escape(str(sides[side]["type"]))}</span></td>'
        )
    cells.append(f"<td>{html.escape(str(row['relation']))}</td>")
    cells.append(f'<td class="n">{html.escape(str(number(row["credit"])))}</td>')
    spans = [
        (int(sides[s]["start"]), int(sides[s]["end"]), css, str(sides[s]["text"]))
        for s, css in (("reference", "g"), ("predicted", "p"))
    ]
    cells.append(f'<td class="ctx">{_highlight_plainly(str(row["context"]), spans, tokens)}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


@st.composite
def _pairs(draw: Any) -> dict[str, Any]:
    context, spans, _ = draw(_contexts())
    (rs, re_, _, rt), (ps, pe, _, pt) = spans
    return {
        "sentence": draw(st.integers(1, 3)),
        "reference_text": rt, "reference_type": draw(st.sampled_from(["PER", "<L&C>"])),
        "reference_start": rs, "reference_end": re_,
        "predicted_text": pt, "predicted_type": draw(st.sampled_from(["PER", "O'RG"])),
        "predicted_start": ps, "predicted_end": pe,
        "match": "partial", "credit": draw(st.sampled_from([0.5, 1, 0.25])),
        "relation": draw(st.sampled_from(["shorter", "longer", "<crossing>"])),
        "context": context,
    }  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(st.lists(_pairs(), min_size=1, max_size=6), st.data())
def test_partial_rows_made_once_per_pair_are_the_rows_made_one_by_one(pairs: list[dict[str, Any]], data: Any) -> None:
    # The criteria share pairs (drawn from one pool, so most repeat) with their own relation and
    # credit: each row is still its own.
    samples = []
    for criterion in ("left", "right", "overlap"):
        rows = [dict(data.draw(st.sampled_from(pairs))) for _ in range(data.draw(st.integers(0, 5)))]
        for row in rows:
            row["relation"] = data.draw(st.sampled_from(["shorter", "a&b"]))
        samples.append(page.PartialSample(criterion, rows, len(rows) + 1, f"{criterion}.csv"))
    tokens = data.draw(st.booleans())
    made = page._partials(samples, "sentence", tokens)
    for sample in samples:
        expected = "".join(_row_plainly(row, "sentence", tokens) for row in sample.rows)
        if sample.rows:
            assert f"<tbody>{expected}</tbody>" in made


def test_writer_leaves_the_page_writers_to_the_end(tmp_path: Path) -> None:
    # A report run counts without the page writers (they load on a thread once workers count,
    # or at the end).
    code = (
        "import sys, json\n"
        "from spanscore.presentation import ReportWriter\n"
        f"w = ReportWriter({str(tmp_path / 'rep')!r})\n"
        "w.abandon()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    for module in ("spanscore.presentation.charts", "spanscore.presentation.html", "spanscore.presentation.markdown"):
        assert module not in loaded
    assert list((tmp_path / "rep").iterdir()) == []


def test_report_run_writes_what_write_report_writes(tmp_path: Path) -> None:
    # Several chunks in two processes, the page writers loaded on a thread meanwhile (and rich for
    # the tables, printed beside the report): the folder is the one ``write_report`` writes from a
    # report that kept every detail, and the tables are the report's text.
    from click.testing import CliRunner

    import spanscore
    from spanscore.cli.main import cli
    from spanscore.presentation import write_report

    data = Path(__file__).parent / "data"
    gold, pred = data / "small.gold.conll", data / "small.pred.conll"
    whole = spanscore.evaluate(reference=gold, predicted=pred, keep_details=True)
    write_report(whole, tmp_path / "whole")
    for name, extra in (("tables", []), ("json", ["--json"])):
        out = tmp_path / name
        args = ["evaluate", str(gold), str(pred), "--report", str(out), "--jobs", "2", "--chunk-size", "300", *extra]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        written = sorted(p.name for p in out.iterdir())
        assert written == sorted(p.name for p in (tmp_path / "whole").iterdir())
        for file in written:
            assert (out / file).read_bytes() == (tmp_path / "whole" / file).read_bytes(), file
        if name == "tables":
            assert result.stdout == str(whole)
        else:
            assert json.loads(result.stdout) == whole.to_dict()
