"""The analysis outputs of ``spanscore evaluate --report``: files, CSV counts, charts, HTML, CLI."""

from __future__ import annotations

import csv
import html
import json
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.errors import OptionError
from spanscore.presentation import write_report

CHART_FILES = ("scores.svg", "credit.svg", "errors.svg", "confusion.svg")
SVG = "{http://www.w3.org/2000/svg}"
PARTIAL_CRITERIA = ("left", "right", "overlap")
ERROR_KEYS = (
    "false_positive",
    "false_negative",
    "wrong_label_same_span",
    "wrong_label_overlap",
    "right_label_overlap",
)


def _read_conll(path: Path) -> list[list[tuple[str, str]]]:
    sentences: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if current:
                sentences.append(current)
            current = []
            continue
        cols = line.split("\t")
        current.append((cols[0], cols[-1]))
    if current:
        sentences.append(current)
    return sentences


def _mentions(labels: list[str]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for i, label in enumerate(labels):
        if label.startswith("B-") or (label.startswith("I-") and (not out or out[-1][1] != i)):
            out.append([i, i + 1, label[2:]])
        elif label.startswith("I-") and out[-1][2] == label[2:]:
            out[-1][1] = i + 1
    return out


def perturb(gold: Path, out: Path, seed: int = 7) -> None:
    """A realistic prediction: gold with boundaries shifted, mentions dropped, types changed and
    spurious mentions added (deterministic)."""
    rng = random.Random(seed)
    types = ["PER", "LOC", "ORG"]
    lines = []
    for sentence in _read_conll(gold):
        n = len(sentence)
        kept = []
        for a, b, t in _mentions([lab for _, lab in sentence]):
            x = rng.random()
            if x < 0.07:
                continue
            if x < 0.12:
                t = rng.choice([u for u in types if u != t])
            elif x < 0.17:
                a = max(0, a - 1)
            elif x < 0.22 and b - a > 1:
                a += 1
            elif x < 0.26:
                b = min(n, b + 1)
            elif x < 0.30 and b - a > 1:
                b -= 1
            kept.append((a, b, t))
        if rng.random() < 0.08:
            a = rng.randrange(n)
            kept.append((a, min(n, a + 1), rng.choice(types)))
        labels = ["O"] * n
        last = 0
        for a, b, t in sorted(kept):
            if a < last or a >= b:
                continue
            labels[a : b] = [f"B-{t}"] + [f"I-{t}"] * (b - a - 1)
            last = b
        lines += [f"{tok}\t{lab}" for (tok, _), lab in zip(sentence, labels, strict=True)] + [""]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def btc_pair(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    gold = btc / "test.txt"
    pred = tmp_path_factory.mktemp("pred") / "pred.txt"
    perturb(gold, pred)
    return gold, pred


@pytest.fixture(scope="module")
def btc_report(
    btc_pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    gold, pred = btc_pair
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=True)
    out = tmp_path_factory.mktemp("report")
    written = write_report(report, out)
    assert written == out / "report.html"
    return out, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _svg(path: Path) -> ET.Element:
    root = ET.fromstring(path.read_bytes())
    assert root.tag == f"{SVG}svg"
    assert float(root.attrib["width"]) > 100 and float(root.attrib["height"]) > 100
    return root


def _tips(root: ET.Element) -> list[str]:
    """The tooltip of every shape: what each bar or cell says it shows."""
    return [t.text or "" for t in root.iter(f"{SVG}title")]


def test_every_file_is_written_and_indexed(btc_report: tuple[Path, dict[str, Any]]) -> None:
    out, summary = btc_report
    expected = {
        "report.html", "summary.md", "summary.json", "errors.csv", "right_label_overlap.csv",
        *(f"{c}.csv" for c in ("strict", "boundary", "left", "right", "overlap")),
    }
    assert expected <= set(summary["files"])
    for name in summary["files"]:
        assert (out / name).is_file(), name
    report_keys = {"metrics", "semeval", "per_type", "macro", "errors", "signature", "corpus"}
    assert report_keys <= set(summary)


def test_summary_json_is_the_report_json(
    btc_pair: tuple[Path, Path], btc_report: tuple[Path, dict[str, Any]]
) -> None:
    gold, pred = btc_pair
    _, summary = btc_report
    again = json.loads(spanscore.evaluate(reference=gold, predicted=pred).to_json())
    summary = dict(summary)
    summary.pop("files")
    assert summary == again


@pytest.mark.parametrize("criterion", PARTIAL_CRITERIA)
def test_pair_csv_counts_match_the_summary(btc_report: tuple[Path, dict[str, Any]], criterion: str) -> None:
    out, summary = btc_report
    rows = _rows(out / f"{criterion}.csv")
    metrics = summary["metrics"][criterion]
    assert metrics["partial"] > 0
    assert sum(float(r["credit"]) == 0.5 for r in rows) == metrics["partial"]
    assert sum(float(r["credit"]) == 1.0 for r in rows) == metrics["full"]
    assert sum(r["match"] == "partial" for r in rows) == metrics["partial"]
    assert len(rows) == metrics["full"] + metrics["partial"]
    assert sum(float(r["credit"]) for r in rows) == pytest.approx(metrics["credit"])


def test_pair_csv_columns(btc_report: tuple[Path, dict[str, Any]]) -> None:
    out, summary = btc_report
    rows = _rows(out / "left.csv")
    assert list(rows[0]) == [
        "sentence", "reference_text", "reference_type", "reference_start", "reference_end",
        "predicted_text", "predicted_type", "predicted_start", "predicted_end",
        "match", "credit", "relation", "context",
    ]
    for r in rows:
        assert r["reference_text"] in r["context"] and r["predicted_text"] in r["context"]
        assert r["reference_start"] == r["predicted_start"]  # left boundary
        assert r["relation"] in ("same", "longer", "shorter", "shifted")
    assert len(_rows(out / "strict.csv")) == summary["metrics"]["strict"]["full"]


def test_error_csvs_match_the_taxonomy(btc_report: tuple[Path, dict[str, Any]]) -> None:
    out, summary = btc_report
    errors = summary["errors"]
    type5 = _rows(out / "right_label_overlap.csv")
    assert len(type5) == errors["right_label_overlap"] > 0
    assert all(r["reference_type"] == r["predicted_type"] for r in type5)
    assert sum(r["relation"] == "longer" for r in type5) == errors["right_label_overlap_longer"]
    assert sum(r["shared_boundary"] == "left" for r in type5) == errors["right_label_overlap_left_match"]
    rows = _rows(out / "errors.csv")
    for key in ERROR_KEYS:
        assert sum(r["error"] == key for r in rows) == errors[key], key
    assert {r["code"] for r in rows} == {"Type-1", "Type-2", "Type-3", "Type-4", "Type-5"}


def test_charts_are_svg_drawn_from_the_json(btc_report: tuple[Path, dict[str, Any]]) -> None:
    """Each chart's bars and cells say what they show; what they show is the JSON's figures."""
    out, summary = btc_report
    for name in CHART_FILES:
        assert name in summary["files"]
        _svg(out / name)
    metrics, errors = summary["metrics"], summary["errors"]
    tips = _tips(_svg(out / "scores.svg"))
    shown = [n for n in ("strict", "boundary", "left", "right", "overlap", "token") if n in metrics]
    assert len(tips) == 3 * len(shown)
    for n in shown:
        for key, label in (("precision", "precision"), ("recall", "recall"), ("f1", "F1")):
            assert f"{n} {label}: {100 * metrics[n][key]:.1f}" in tips
    tips = _tips(_svg(out / "credit.svg"))
    for n in PARTIAL_CRITERIA:
        assert f"{n} exact (1.0 credit): {metrics[n]['full']}" in tips
        assert f"{n} partial (0.5 credit): {metrics[n]['partial']}" in tips
    tips = _tips(_svg(out / "errors.svg"))
    assert f"correct: {errors['correct']}" in tips
    for key in ERROR_KEYS[:-1]:
        assert f"{key}: {errors[key]}" in tips
    for part in ("longer", "shorter", "shifted"):
        assert f"Type-5: prediction {part}: {errors[f'right_label_overlap_{part}']}" in tips
    confusion = summary["confusion"]
    tips = _tips(_svg(out / "confusion.svg"))
    assert len(tips) == (len(confusion["types"]) + 1) ** 2
    for row in confusion["rows"]:
        ref = row["reference"] or "(spurious)"
        pred = row["predicted"] or "(missed)"
        cell = f"{row['same_span']}+{row['overlapping']}" if row["reference"] and row["predicted"] else row["count"]
        assert f"{ref} → {pred}: {cell}" in tips


def test_charts_show_in_chromium(btc_report: tuple[Path, dict[str, Any]], chromium: Any) -> None:
    """The page's charts are images a browser decodes, at their drawn size."""
    out, _ = btc_report
    page = chromium.new_page()
    try:
        page.goto((out / "report.html").as_uri())
        sizes = page.evaluate(
            "() => [...document.querySelectorAll('figure img')].map(i => [i.complete, i.naturalWidth, i.naturalHeight])"
        )
    finally:
        page.close()
    assert len(sizes) == len(CHART_FILES)
    assert all(done and width > 100 and height > 100 for done, width, height in sizes)


def test_html_is_self_contained(btc_report: tuple[Path, dict[str, Any]]) -> None:
    out, summary = btc_report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert html.escape(summary["signature"]) in page
    assert "<script" not in page.lower()
    assert "stylesheet" not in page and "src=\"http" not in page
    assert page.count("data:image/svg+xml;base64,") == len(CHART_FILES)
    for section in ('id="scores"', 'id="semeval"', 'id="per-type"', 'id="errors"', 'id="partial"'):
        assert section in page
    assert f"{summary['metrics']['overlap']['partial']} partial pairs" in page


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """Mention texts with markup, a comma and a quote."""
    gold = _write(tmp_path / "gold.txt", [
        "see\tO", "<script>alert(1)</script>\tB-ORG", "Corp\tI-ORG", "now\tO", "",
        'Smith,"Jr\tB-PER', "&amp;\tI-PER", "left\tO",
    ])
    pred = _write(tmp_path / "pred.txt", [
        "see\tO", "<script>alert(1)</script>\tB-ORG", "Corp\tI-ORG", "now\tI-ORG", "",
        'Smith,"Jr\tB-PER', "&amp;\tO", "left\tB-LOC",
    ])
    return gold, pred


def test_html_escapes_mention_texts(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = hostile
    report = spanscore.evaluate(reference=gold, predicted=pred)
    page = write_report(report, tmp_path / "out").read_text(encoding="utf-8")
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&amp;amp;" in page  # an entity in the data is shown, not interpreted
    assert html.escape(report.signature) in page


def test_csv_quoting_round_trips(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = hostile
    out = tmp_path / "out"
    write_report(spanscore.evaluate(reference=gold, predicted=pred), out)
    rows = _rows(out / "left.csv")
    texts = {r["reference_text"]: r["predicted_text"] for r in rows}
    assert texts['Smith,"Jr &amp;'] == 'Smith,"Jr'
    assert texts["<script>alert(1)</script> Corp"] == "<script>alert(1)</script> Corp now"
    assert [r["error"] for r in _rows(out / "errors.csv")] == ["right_label_overlap", "right_label_overlap",
                                                             "false_positive"]


def test_without_matplotlib_everything_else_is_written(
    hostile: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.ticker"):
        monkeypatch.setitem(sys.modules, name, None)  # makes the import fail
    gold, pred = hostile
    out = tmp_path / "out"
    write_report(spanscore.evaluate(reference=gold, predicted=pred), out)
    # The four charts are SVG written without it; the bucket charts need it.
    assert sorted(p.name for p in out.glob("*.svg")) == sorted(CHART_FILES)
    assert (out / "left.csv").is_file()
    out = tmp_path / "buckets"
    write_report(spanscore.evaluate(reference=gold, predicted=pred, buckets=["length"]), out)
    assert not list(out.glob("*.png"))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert not any(name.endswith(".png") for name in summary["files"])
    assert sorted(name for name in summary["files"] if name.endswith(".svg")) == sorted(CHART_FILES)
    for name in ("summary.md", "report.html"):
        assert "pip install 'spanscore[report]'" in html.unescape((out / name).read_text(encoding="utf-8"))


def test_report_without_details(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = hostile
    out = tmp_path / "out"
    write_report(spanscore.evaluate(reference=gold, predicted=pred, keep_details=False), out)
    # No pair or error file; the confusion matrix comes from the counts alone.
    assert [p.name for p in out.glob("*.csv")] == ["confusion.csv"]
    assert "without matching details" in (out / "summary.md").read_text(encoding="utf-8")
    assert (out / "report.html").is_file()


def test_out_dir_that_is_a_file(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = hostile
    blocker = _write(tmp_path / "taken", ["x"])
    with pytest.raises(OptionError):
        write_report(spanscore.evaluate(reference=gold, predicted=pred), blocker)


def test_highlight_marks_the_right_words() -> None:
    from spanscore.presentation.html import highlight

    # Token offsets; the reference is blue (g), the prediction underlined (p).
    marked = highlight("in New York now", [(1, 3, "g", "New York"), (2, 3, "p", "York")], tokens=True)
    assert marked == 'in <span class="g">New </span><span class="g p">York</span> now'
    # A token holding a space (BTC has some) shifts naive splitting; the mention is still found.
    marked = highlight("hi \U0001f481  @ Katy !", [(2, 4, "g", "@ Katy")], tokens=True)
    assert marked == 'hi \U0001f481  <span class="g">@ Katy</span> !'
    # Character offsets, escaped, and a long context cut at spaces.
    text = "word " * 100 + "<b>x</b>" + " word" * 100
    start = text.index("<b>")
    marked = highlight(text, [(start, start + 8, "p", "<b>x</b>")], tokens=False)
    assert '<span class="p">&lt;b&gt;x&lt;/b&gt;</span>' in marked
    assert marked.startswith("… word") and marked.endswith("word …")
    # Offsets that do not fit leave the context unmarked.
    assert highlight("a <b>", [(0, 1, "g", "zzz")], tokens=True) == "a &lt;b&gt;"


def test_reporting_imports_no_matplotlib() -> None:
    code = (
        "import sys, spanscore.presentation; "
        "sys.exit(any(m.split('.')[0] == 'matplotlib' for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_cli_report_option(btc_pair: tuple[Path, Path], tmp_path: Path) -> None:
    from spanscore.cli.main import cli

    gold, pred = btc_pair
    out = tmp_path / "cli-report"
    result = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert "report.html" in result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(_rows(out / "overlap.csv")) == summary["metrics"]["overlap"]["full"] + summary["metrics"][
        "overlap"
    ]["partial"]
    assert (out / "report.html").is_file()
