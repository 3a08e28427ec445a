"""Results in Jupyter (``spanscore.presentation.notebook``): the HTML fragments and the pandas frames
hold the JSON's own numbers, every one of them, and escape every name the user gave."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import MissingExtra
from spanscore.presentation import notebook

DATA = Path(__file__).resolve().parent / "data"
CRITERIA = ("strict", "boundary", "left", "right", "overlap", "token")
SCHEMES = ("strict", "exact", "partial", "type")
HOSTILE_TYPE = "<script>alert(1)</script>"
HOSTILE_FILE = "<i onmouseover=alert(1)>b.conll"


# --- data ----------------------------------------------------------------------------------------


def run_json(*args: str) -> dict[str, Any]:
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def sentences(path: Path) -> list[list[str]]:
    return [block.split("\n") for block in path.read_text(encoding="utf-8").strip("\n").split("\n\n")]


def write_conll(path: Path, blocks: list[list[str]]) -> Path:
    path.write_text("".join("\n".join(b) + "\n\n" for b in blocks), encoding="utf-8")
    return path


def perturb(blocks: list[list[str]], seed: int, rate: float) -> list[list[str]]:
    """A system's output: some mentions dropped, shrunk from the left, or relabelled."""
    rng = random.Random(seed)
    out = []
    for block in blocks:
        rows = [line.rsplit("\t", 1) for line in block]
        tags = [t for _, t in rows]
        for i, tag in enumerate(tags):
            if not tag.startswith("B-") or rng.random() > rate:
                continue
            end = i + 1
            while end < len(tags) and tags[end] == "I-" + tag[2:]:
                end += 1
            what = rng.choice(["drop", "shrink", "relabel"])
            if what == "drop":
                tags[i:end] = ["O"] * (end - i)
            elif what == "shrink" and end - i > 1:
                tags[i] = "O"
                tags[i + 1] = "B-" + tag[2:]
            elif what == "relabel":
                new = "MISC" if tag[2:] != "MISC" else "PER"
                tags[i:end] = ["B-" + new] + ["I-" + new] * (end - i - 1)
        out.append([f"{tok}\t{t}" for (tok, _), t in zip(rows, tags, strict=True)])
    return out


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    """A tests/data evaluation, without intervals."""
    return run_json("evaluate", str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll"))


@pytest.fixture(scope="module")
def btc_runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """300 BTC test tweets and three systems: a, b (better, with a hostile file name), c (like a)."""
    folder = tmp_path_factory.mktemp("notebook")
    gold = sentences(btc / "test.txt")[:300]
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / HOSTILE_FILE, perturb(gold, 2, 0.3)),
        "c": write_conll(folder / "c.conll", perturb(gold, 3, 0.45)),
    }


@pytest.fixture(scope="module")
def with_ci(btc_runs: dict[str, Path]) -> dict[str, Any]:
    """A BTC evaluation with 95% intervals (overall and per type) and F2."""
    gold, a = str(btc_runs["gold"]), str(btc_runs["a"])
    return run_json("evaluate", gold, a, "--ci", "0.95", "--resamples", "100", "--beta", "2")


@pytest.fixture(scope="module")
def compared(btc_runs: dict[str, Path]) -> dict[str, Any]:
    files = [str(btc_runs[k]) for k in ("gold", "a", "b", "c")]
    return run_json("compare", *files, "--resamples", "100", "--trials", "100")


# --- helpers -------------------------------------------------------------------------------------


class _Rows(HTMLParser):
    """The text of each table row of an HTML fragment, cell by cell (entities decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(fragment: str) -> list[list[str]]:
    parser = _Rows()
    parser.feed(fragment)
    return parser.rows


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def cell(value: float | None, interval: dict[str, Any] | None = None) -> str:
    if interval is None:
        return pct(value)
    return f"{pct(value)} [{pct(interval['low'])}, {pct(interval['high'])}]"


def same(a: float, b: float | None) -> bool:
    """A frame's number against the JSON's: None (undefined) is NaN."""
    return math.isnan(a) if b is None else a == b


def metrics_of(data: dict[str, Any]) -> tuple[str, ...]:
    return ("precision", "recall", "f1", "f_beta") if "beta" in data else ("precision", "recall", "f1")


def expected_report_rows(data: dict[str, Any]) -> dict[tuple[str | None, str, str, str], tuple[Any, Any, Any]]:
    """(type, family, score, metric) -> (value, low, high), read from the JSON by hand."""
    intervals = data.get("intervals", {})
    out: dict[tuple[str | None, str, str, str], tuple[Any, Any, Any]] = {}

    def add(kind: str | None, family: str, blocks: dict[str, Any], ivs: dict[str, Any]) -> None:
        for score, block in blocks.items():
            name = {"criterion": score, "semeval": "semeval_" + score, "macro": None}[family]
            for metric in metrics_of(data):
                entry = ivs.get(name, {}).get(metric) if name else None
                low, high = (entry["low"], entry["high"]) if entry else (None, None)
                out[kind, family, score, metric] = (block[metric], low, high)

    add(None, "criterion", data["metrics"], intervals.get("scores", {}))
    add(None, "semeval", data["semeval"], intervals.get("scores", {}))
    add(None, "macro", data["macro"], {})
    for kind, entry in data["per_type"].items():
        ivs = intervals.get("per_type", {}).get(kind, {})
        add(kind, "criterion", entry["metrics"], ivs)
        add(kind, "semeval", entry["semeval"], ivs)
    return out


# --- the evaluation ------------------------------------------------------------------------------


def check_report_frame(data: dict[str, Any]) -> Any:
    frame = notebook.report_frame(data)
    assert list(frame.columns) == ["type", "family", "score", "metric", "value", "low", "high"]
    k = len(metrics_of(data))
    types = len(data["per_type"])
    assert set(data["metrics"]) == set(CRITERIA) and set(data["semeval"]) == set(SCHEMES)
    # criteria, schemes and macro averages over all types; criteria and schemes per type
    assert len(frame) == (6 + 4 + len(data["macro"])) * k + types * (6 + 4) * k
    expected = expected_report_rows(data)
    seen = set()
    for row in frame.itertuples(index=False):
        key = (row.type, row.family, row.score, row.metric)
        assert key not in seen
        seen.add(key)
        value, low, high = expected[key]
        assert same(row.value, value) and same(row.low, low) and same(row.high, high), key
    assert seen == set(expected)
    overall = frame[frame["type"].isna()]
    assert len(overall) == (6 + 4 + len(data["macro"])) * k
    assert all(t is None for t in overall["type"])  # None, not NaN
    return frame


def test_report_frame_holds_every_score_of_the_json(small: dict[str, Any]) -> None:
    pytest.importorskip("pandas")
    frame = check_report_frame(small)
    assert frame["low"].isna().all() and frame["high"].isna().all()  # no intervals asked for
    assert set(frame["metric"]) == {"precision", "recall", "f1"}
    strict = frame[(frame["type"].isna()) & (frame["family"] == "criterion") & (frame["score"] == "strict")]
    assert strict.set_index("metric")["value"].to_dict() == {
        m: small["metrics"]["strict"][m] for m in ("precision", "recall", "f1")
    }
    assert str(frame["value"].dtype) == "float64"


def test_report_frame_with_intervals_and_f_beta(with_ci: dict[str, Any]) -> None:
    pytest.importorskip("pandas")
    frame = check_report_frame(with_ci)
    assert "f_beta" in set(frame["metric"])
    macro = frame["family"] == "macro"
    assert frame[macro]["low"].isna().all()  # the macro averages have no intervals
    rest = frame[~macro]
    assert rest["low"].notna().all() and rest["high"].notna().all()  # overall and every type
    assert (rest["low"] <= rest["value"] + 1e-12).all() and (rest["value"] <= rest["high"] + 1e-12).all()
    # the SemEval schemes take the intervals named semeval_*, not the criterion of the same name
    iv = with_ci["intervals"]["scores"]
    row = frame[(frame["type"].isna()) & (frame["family"] == "semeval") & (frame["score"] == "partial")]
    f1 = row[row["metric"] == "f1"].iloc[0]
    assert (f1["low"], f1["high"]) == (iv["semeval_partial"]["f1"]["low"], iv["semeval_partial"]["f1"]["high"])


def check_report_html(data: dict[str, Any]) -> str:
    fragment = notebook.report_html(data)
    assert "<script" not in fragment.lower() and "<style" not in fragment.lower()
    assert "http" not in fragment  # no outside resource
    rows = table_rows(fragment)
    intervals = data.get("intervals", {}).get("scores")
    wanted = metrics_of(data)
    head = rows[0]
    assert head == ["score", "P", "R", "F1"] + (["F2"] if "beta" in data else [])
    for c in CRITERIA:
        block = data["metrics"][c]
        line = [c] + [cell(block[m], intervals[c][m] if intervals else None) for m in wanted]
        assert line in rows, line
    for s in SCHEMES:
        block = data["semeval"][s]
        line = [s] + [cell(block[m], intervals["semeval_" + s][m] if intervals else None) for m in wanted]
        assert line in rows, line
    # the criteria first, then the schemes
    names = [r[0] for r in rows[1 : 1 + 6 + 1 + 4]]
    assert names == [*CRITERIA, "SemEval-2013 schemes", *SCHEMES]
    # F1 per type, with the per-type intervals
    per_type_iv = data.get("intervals", {}).get("per_type")
    for kind, entry in data["per_type"].items():
        line = [kind] + [
            cell(entry["metrics"][c]["f1"], per_type_iv[kind][c]["f1"] if per_type_iv else None) for c in CRITERIA
        ]
        assert line in rows, line
    assert ["macro average"] + [pct(data["macro"][c]["f1"]) for c in CRITERIA] in rows
    corpus = data["corpus"]
    assert f"{corpus['reference_mentions']:,} reference and {corpus['predicted_mentions']:,} predicted" in fragment
    assert data["signature"] in fragment  # the signature has no character to escape
    return fragment


def test_report_html_shows_every_criterion_and_scheme(small: dict[str, Any]) -> None:
    fragment = check_report_html(small)
    assert "[" not in fragment  # no intervals
    assert fragment.startswith("<div") and fragment.endswith("</div>")


def test_report_html_with_intervals_and_f_beta(with_ci: dict[str, Any]) -> None:
    fragment = check_report_html(with_ci)
    assert "95% intervals: percentile bootstrap over 300 sentences, 100 resamples" in fragment


def test_hostile_type_names_are_escaped() -> None:
    kind, other = HOSTILE_TYPE, 'A&B "q"'
    reference = [[f"B-{kind}", f"I-{kind}", "O", f"B-{other}"]]
    predicted = [[f"B-{kind}", "O", "O", f"B-{other}"]]
    data = spanscore.evaluate(reference=reference, predicted=predicted, format="labels").to_dict()
    assert set(data["per_type"]) == {kind, other}
    fragment = notebook.report_html(dict(data))
    assert "<script" not in fragment.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in fragment and "A&amp;B &quot;q&quot;" in fragment
    labels = [r[0] for r in table_rows(fragment)]
    assert kind in labels and other in labels  # decoded, they are the names themselves
    pytest.importorskip("pandas")
    frame = notebook.report_frame(dict(data))
    assert set(frame["type"].dropna()) == {kind, other}
    f1 = frame[(frame["type"] == kind) & (frame["score"] == "strict") & (frame["metric"] == "f1")]
    assert list(f1["family"]) == ["criterion", "semeval"]
    assert list(f1["value"]) == [0.0, 0.0]  # B I predicted as B: no strict match
    overlap = frame[(frame["type"] == kind) & (frame["score"] == "overlap") & (frame["metric"] == "recall")]
    assert list(overlap["value"]) == [data["per_type"][kind]["metrics"]["overlap"]["recall"]] == [0.5]


def test_by_field_groups_in_the_frame_and_the_html() -> None:
    data = run_json(
        "evaluate", str(DATA / "small.gold.jsonl"), str(DATA / "small.pred.jsonl"), "--by", "id",
        "--ci", "0.9", "--resamples", "50",
    )  # fmt: skip
    groups = data["breakdown"]["groups"]
    fragment = notebook.report_html(data)
    rows = table_rows(fragment)
    for g in groups:
        line = [str(g["value"]), str(g["documents"]), str(g["reference_mentions"])]
        line += [cell(g["scores"][c]["f1"], g["intervals"][c]["f1"]) for c in CRITERIA]
        assert line in rows, line
    pytest.importorskip("pandas")
    frame = notebook.breakdown_frame(data)
    names = list(groups[0]["scores"])
    assert len(frame) == len(groups) * len(names) * 3
    for row in frame.itertuples(index=False):
        g = next(x for x in groups if x["value"] == row.group)
        name = "semeval_" + row.score if row.family == "semeval" else row.score
        assert row.documents == g["documents"] and row.predicted_mentions == g["predicted_mentions"]
        assert row.value == g["scores"][name][row.metric]
        assert (row.low, row.high) == (
            g["intervals"][name][row.metric]["low"],
            g["intervals"][name][row.metric]["high"],
        )
    assert len(notebook.breakdown_frame({"metrics": {}})) == 0


# --- the comparison ------------------------------------------------------------------------------


def test_comparison_frames_hold_every_number_of_the_json(compared: dict[str, Any]) -> None:
    pytest.importorskip("pandas")
    frame = notebook.comparison_frame(compared)
    assert list(frame.columns) == ["system", "file", "family", "score", "metric", "value", "low", "high"]
    systems = {s["name"]: s for s in compared["systems"]}
    assert HOSTILE_FILE in systems
    names = list(compared["systems"][0]["metrics"])
    assert len(names) == 6 + 4
    assert len(frame) == len(systems) * len(names) * 3
    seen = set()
    for row in frame.itertuples(index=False):
        name = "semeval_" + row.score if row.family == "semeval" else row.score
        assert row.family == ("semeval" if name.startswith("semeval_") else "criterion")
        entry = systems[row.system]["metrics"][name][row.metric]
        assert row.file == systems[row.system]["file"]
        assert (row.value, row.low, row.high) == (entry["value"], entry["low"], entry["high"])
        seen.add((row.system, name, row.metric))
    assert len(seen) == len(frame)

    diffs = notebook.differences_frame(compared)
    columns = ["a", "b", "family", "score", "metric", "difference", "low", "high", "p_bootstrap", "p_randomization"]
    assert list(diffs.columns) == columns
    assert len(diffs) == len(compared["comparisons"]) == 2 * len(names) * 3
    for row, c in zip(diffs.itertuples(index=False), compared["comparisons"], strict=True):
        assert (row.family == "semeval") == c["criterion"].startswith("semeval_")
        assert c["criterion"] == ("semeval_" + row.score if row.family == "semeval" else row.score)
        for key in ("a", "b", "metric", "difference", "low", "high", "p_bootstrap", "p_randomization"):
            assert getattr(row, key) == c[key], key


def test_comparison_html(compared: dict[str, Any]) -> None:
    fragment = notebook.comparison_html(compared)
    assert "<script" not in fragment.lower() and "<i " not in fragment and "<style" not in fragment.lower()
    assert "&lt;i onmouseover=alert(1)&gt;b.conll" in fragment
    rows = table_rows(fragment)
    systems = compared["systems"]
    assert rows[0] == ["score"] + [s["name"] for s in systems]
    for name in systems[0]["metrics"]:
        line = [name] + [cell(s["metrics"][name]["f1"]["value"], s["metrics"][name]["f1"]) for s in systems]
        assert line in rows, line
    alpha = compared["resampling"]["alpha"]
    base = systems[0]["name"]
    others = [s["name"] for s in systems[1:]]
    assert [f"{b} - {base}" for b in others] == [h for h in rows[1 + len(systems[0]["metrics"])] if " - " in h]
    marks = []
    for name in systems[0]["metrics"]:
        line = [name]
        for b in others:
            c = next(x for x in compared["comparisons"] if (x["b"], x["criterion"], x["metric"]) == (b, name, "f1"))
            significant = c["p_randomization"] < alpha
            marks.append(significant)
            line += [cell(c["difference"], c) + (" *" if significant else ""), f"{c['p_bootstrap']:.4f}",
                     f"{c['p_randomization']:.4f}"]  # fmt: skip
        assert line in rows, line
    assert any(marks) and not all(marks)  # b differs from a, c does not (at 300 tweets)
    assert compared["signature"] in fragment


# --- pandas is optional --------------------------------------------------------------------------


def test_frames_without_pandas_name_the_extra(small: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    for frame in (notebook.report_frame, notebook.comparison_frame, notebook.differences_frame):
        with pytest.raises(MissingExtra, match=r"pip install 'spanscore\[pandas\]'"):
            frame(small)
    assert "strict" in notebook.report_html(small)  # the HTML needs no pandas


def test_importing_the_module_does_not_import_pandas() -> None:
    code = "import sys, spanscore.presentation.notebook; assert 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
