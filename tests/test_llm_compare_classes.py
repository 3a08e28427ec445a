"""LLM error classes in ``compare``: each system's class counts and shares with bootstrap intervals
over documents, and paired differences against the first system, in the JSON, the terminal tables
and the HTML page; the counts equal each system's own evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import spanscore
from spanscore.analysis.llm_classes import compare_classes
from spanscore.analysis.significance import Resampling
from spanscore.cli.main import cli
from spanscore.io.strings import CLASSES, DocumentClasses
from spanscore.programs.samples import write_samples


def systems(tmp_path: Path) -> tuple[Path, list[Path]]:
    write_samples(tmp_path / "s")
    folder = tmp_path / "s" / "llm"
    lines = [json.loads(line) for line in (folder / "llm.jsonl").read_text(encoding="utf-8").splitlines()]
    # A second prompt's output: the first two mentions of each document, and one more hallucination.
    fewer = [{**d, "mentions": [*d["mentions"][:2], {"text": "Zorblax", "label": "PER"}]} for d in lines]
    other = folder / "llm2.jsonl"
    other.write_text("".join(json.dumps(d) + "\n" for d in fewer), encoding="utf-8")
    return folder / "gold.jsonl", [folder / "llm.jsonl", other]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_compare_counts_equal_each_evaluation_and_intervals_hold_them(tmp_path: Path) -> None:
    gold, files = systems(tmp_path)
    comparison = spanscore.compare(reference=gold, systems=files, format="jsonl", predicted_format="strings",
                                   resamples=300, trials=50)
    data = comparison.to_dict()["llm_classes"]
    assert data["classes"] == list(CLASSES)
    for system, path in zip(data["systems"], files, strict=True):
        alone = spanscore.evaluate(reference=gold, predicted=path, format="jsonl",
                                   predicted_format="strings").to_dict()["located"]["classes"]
        counts = {c: entry["count"]["value"] for c, entry in system["classes"].items()}
        assert counts == alone
        assert system["predicted"] == sum(alone.values())
        for c, entry in system["classes"].items():
            assert entry["share"]["value"] == pytest.approx(alone[c] / sum(alone.values()))
            for measure in ("count", "share"):
                e = entry[measure]
                assert e["low"] <= e["value"] <= e["high"], (c, measure, e)
    shares = [{c: e["share"]["value"] for c, e in s["classes"].items()} for s in data["systems"]]
    for d in data["differences"]:
        assert (d["a"], d["b"]) == (data["systems"][0]["name"], data["systems"][1]["name"])
        if d["measure"] == "share":
            assert d["difference"] == pytest.approx(shares[1][d["class"]] - shares[0][d["class"]])
        assert d["low"] <= d["difference"] <= d["high"]
        assert 0 < d["p_bootstrap"] <= 1
    # The second system hallucinates once more per document than the first does in all.
    nf = next(d for d in data["differences"] if d["class"] == "not_in_text" and d["measure"] == "count")
    assert nf["difference"] == data["systems"][1]["classes"]["not_in_text"]["count"]["value"] - data["systems"][0][
        "classes"]["not_in_text"]["count"]["value"]


def independent_bootstrap(rows: list[np.ndarray], resamples: int, seed: int) -> list[np.ndarray]:
    """Each system's class shares over plain resamples of documents (indices drawn with replacement)."""
    rng = np.random.default_rng(seed)
    n = rows[0].shape[0]
    out: list[list[np.ndarray]] = [[] for _ in rows]
    for _ in range(resamples):
        pick = rng.integers(0, n, n)
        for k, r in enumerate(rows):
            total = r[pick].sum(axis=0)
            out[k].append(total / total.sum())
    return [np.array(o) for o in out]


def test_intervals_agree_with_a_plain_document_bootstrap() -> None:
    """Drawn over distinct rows, the intervals follow those of drawing documents one by one."""
    rng = np.random.default_rng(7)
    n = 400
    a = rng.poisson([3, 0.5, 0.5, 0.3, 0.4, 0.1, 0.1], size=(n, len(CLASSES))).astype(np.int64)
    b = rng.poisson([2, 0.5, 0.8, 0.3, 1.0, 0.1, 0.2], size=(n, len(CLASSES))).astype(np.int64)
    ids = tuple(f"d{k}" for k in range(n))
    out = compare_classes([DocumentClasses(ids, a), DocumentClasses(ids, b)], ["a", "b"],
                          Resampling(resamples=2000, seed=3))
    plain = independent_bootstrap([a, b], 2000, 11)
    for k, system in enumerate(out["systems"]):
        for j, c in enumerate(CLASSES):
            low, high = np.quantile(plain[k][:, j], [0.025, 0.975])
            entry = system["classes"][c]["share"]
            # Two Monte Carlo estimates of the same quantiles: within a fraction of the width.
            width = high - low
            assert entry["low"] == pytest.approx(low, abs=0.15 * width)
            assert entry["high"] == pytest.approx(high, abs=0.15 * width)


def test_documents_are_aligned_by_id() -> None:
    ids = ("x", "y", "z")
    rows = np.zeros((3, len(CLASSES)), dtype=np.int64)
    rows[0, 0], rows[1, 4], rows[2, 6] = 2, 1, 1
    swapped = DocumentClasses(("z", "x", "y"), rows[[2, 0, 1]])
    out = compare_classes([DocumentClasses(ids, rows), swapped], ["a", "b"], Resampling(resamples=200))
    assert all(d["difference"] == 0 for d in out["differences"])
    assert all(d["low"] == d["high"] == 0 for d in out["differences"])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_tables_and_the_page_show_them(tmp_path: Path) -> None:
    gold, files = systems(tmp_path)
    page = tmp_path / "compare.html"
    out = CliRunner().invoke(cli, ["compare", str(gold), *map(str, files), "--predicted-format", "strings",
                                   "--resamples", "200", "--trials", "50", "--html", str(page)],
                             env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    assert "LLM error classes: % of each system's predictions" in out.output
    assert "LLM error classes: differences in % of predictions from" in out.output
    assert "not in the text" in out.output
    html = page.read_text(encoding="utf-8")
    assert "LLM error classes: % of each system&#x27;s predictions" in html
    as_json = CliRunner().invoke(cli, ["compare", str(gold), *map(str, files), "--predicted-format", "strings",
                                       "--resamples", "200", "--trials", "50", "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output[as_json.output.index("{"):])
    assert [s["name"] for s in data["llm_classes"]["systems"]] == ["llm.jsonl", "llm2.jsonl"]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_no_classes_without_strings(tmp_path: Path) -> None:
    write_samples(tmp_path / "s")
    s = tmp_path / "s"
    c = spanscore.compare(reference=s / "gold.conll", systems=[s / "pred.conll", s / "alt.conll"], format="conll",
                          resamples=50, trials=20)
    assert "llm_classes" not in c.to_dict()
