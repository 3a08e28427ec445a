"""Analysis outputs of an evaluation: ``spanscore evaluate GOLD PRED --report DIR``.

``write_report`` writes summary.md, summary.json, one CSV of matched pairs per criterion, the
error files, the charts (PNG) and one self-contained report.html (see docs/report.md). Charts need
the optional extra ``report`` (matplotlib); without it everything else is still written and the
missing charts are noted in summary.md and report.html.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

from ..errors import OptionError
from ..io.load import Text
from ..report import Report
from .charts import CHARTS, ChartsUnavailable, draw_all
from .common import CRITERION_HELP, PARTIAL_CRITERIA
from .html import PartialSample, render_html
from .markdown import render_markdown
from .pairs import PairFile, write_error_files, write_pair_file

__all__ = ["write_report"]

HTML_PARTIAL_LIMIT = 200  # partial pairs listed per criterion in report.html; the CSVs hold all
HTML_EXAMPLE_LIMIT = 5  # examples per error type in report.html


class _CachedText:
    """A Text whose contexts are remembered: pairs come in position order, so consecutive rows
    mostly share a sentence, and rebuilding its string for every row dominated the writing time."""

    def __init__(self, text: Text) -> None:
        self._text = text
        self.unit_kind = text.unit_kind
        self._context = functools.lru_cache(maxsize=4096)(text.context)

    def mention(self, start: int, end: int) -> str:
        return self._text.mention(start, end)

    def context(self, unit: int) -> str:
        return self._context(unit)

    def local(self, unit: int, position: int) -> int:
        return self._text.local(unit, position)


def write_report(report: Report, out_dir: Path) -> Path:
    """Write every analysis file of ``report`` into ``out_dir`` and return the path of report.html.

    Pair files and error examples need a report made with ``keep_details=True``; without details
    (a merged report, say) the scores, charts and pages are still written.
    """
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OptionError(f"cannot write a report to {out_dir}: it is not a folder") from None
    if report.text is not None:
        report = dataclasses.replace(report, text=_CachedText(report.text))
    data = report.to_dict()
    details = report.details is not None and report.text is not None
    files: dict[str, str] = {
        "report.html": "the whole report on one page, charts embedded",
        "summary.md": "scores, SemEval table, per-type F1 and error taxonomy as Markdown tables",
        "summary.json": "the evaluation JSON (spanscore evaluate --json) plus this index of files",
    }
    notes: list[str] = []

    try:
        charts = draw_all(data)
    except ChartsUnavailable as exc:
        charts = {}
        notes.append(f"No charts were drawn: {exc}.")
    captions = {name: caption for name, (_, caption) in CHARTS.items() if name in charts}
    for name, png in charts.items():
        (out_dir / name).write_bytes(png)
        files[name] = captions[name]

    partials: list[PartialSample] | None = None
    examples = None
    unit_kind = "sentence"
    if details:
        assert report.details is not None and report.text is not None
        unit_kind = report.text.unit_kind
        written: dict[str, PairFile] = {}
        for criterion in report.details.matchings:
            name = f"{criterion}.csv"
            written[criterion] = write_pair_file(report, criterion, out_dir / name, HTML_PARTIAL_LIMIT)
            files[name] = f"every matched pair under {criterion} ({CRITERION_HELP.get(criterion, criterion)})"
        write_error_files(report, out_dir / "errors.csv", out_dir / "right_label_overlap.csv")
        files["errors.csv"] = "every mention that is not correct, with its error type (Type-1 to Type-5)"
        files["right_label_overlap.csv"] = "the Type-5 pairs: right label, overlapping span"
        partials = [
            PartialSample(c, written[c].partial_rows, written[c].partial, f"{c}.csv")
            for c in PARTIAL_CRITERIA
            if c in written
        ]
        examples = report.error_examples(HTML_EXAMPLE_LIMIT)
    else:
        notes.append(
            "This report was made without matching details, so no pair files were written; "
            "evaluate with keep_details=True for them."
        )

    summary = dict(data)
    summary["files"] = files
    text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    (out_dir / "summary.json").write_text(text, encoding="utf-8")
    (out_dir / "summary.md").write_text(render_markdown(data, files, captions, notes), encoding="utf-8")
    page = render_html(
        data,
        charts={name: (png, captions[name]) for name, png in charts.items()},
        notes=notes,
        files=files,
        examples=examples,
        partials=partials,
        unit_kind=unit_kind,
    )
    html_path = out_dir / "report.html"
    html_path.write_text(page, encoding="utf-8")
    return html_path
