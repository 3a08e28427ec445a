"""Terminal output never loses a figure: at 80 and 100 columns, with long system and file names,
every number of the JSON appears whole in the tables."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from spanscore.cli.main import cli
from spanscore.programs.samples import write_samples

LONG = ("a-very-long-experiment-directory-name/run-2026-11-24", "another-rather-long-experiment/run-2026-11-23",
        "a-third-experiment-with-a-long-name/run-2026-11-22")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("long")
    samples = root / "samples"
    write_samples(samples)
    files = {"gold": samples / "gold.conll"}
    for k, (folder, source) in enumerate(zip(LONG, ("pred.conll", "alt.conll", "gold.conll"), strict=True)):
        target = root / folder / "predictions-of-the-conditional-random-field-tagger.conll"
        target.parent.mkdir(parents=True)
        shutil.copy(samples / source, target)
        files[f"system{k}"] = target
    return files


def _run(args: list[str], width: int) -> str:
    out = CliRunner().invoke(cli, args, terminal_width=width, env={"COLUMNS": str(width)})
    assert out.exit_code == 0, out.output
    return out.output


def _widest(shown: str) -> int:
    """The widest line but the signature, which is printed whole so that it can be copied."""
    return max(len(line) for line in shown.splitlines() if not line.startswith("spanscore:"))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


@pytest.mark.parametrize("width", [80, 100])
def test_compare_tables_keep_every_figure(runs: dict[str, Path], width: int) -> None:
    systems = [str(runs[f"system{k}"]) for k in range(3)]
    common = ["compare", str(runs["gold"]), *systems, "--resamples", "100", "--trials", "100"]
    data = json.loads(_run([*common, "--json"], width))
    shown = _run(common, width)
    assert _widest(shown) <= width
    for system in data["systems"]:
        for score, block in system["metrics"].items():
            f1 = block["f1"]
            cell = f"{_pct(f1['value'])} [{_pct(f1['low'])}, {_pct(f1['high'])}]"
            assert cell in shown, (system["name"], score, cell)
    for c in data["comparisons"]:
        if c["metric"] != "f1" or c["difference"] is None:
            continue
        assert f"{100 * c['difference']:+.2f} [{_pct(c['low'])}, {_pct(c['high'])}]" in shown, c
        assert f"{c['p_randomization']:.4f}" in shown
    # names: the shortest unique end of each path
    names = [s["name"] for s in data["systems"]]
    tail = "predictions-of-the-conditional-random-field-tagger.conll"
    assert names == [f"{folder.split('/')[1]}/{tail}" for folder in LONG]


@pytest.mark.parametrize("width", [80, 100])
def test_evaluate_and_summarize_tables_keep_every_figure(runs: dict[str, Path], width: int) -> None:
    gold, pred = str(runs["gold"]), str(runs["system0"])
    data = json.loads(_run(["evaluate", gold, pred, "--json", "--ci", "0.9", "--resamples", "50"], width))
    shown = _run(["evaluate", gold, pred, "--ci", "0.9", "--resamples", "50"], width)
    assert _widest(shown) <= width
    for name, block in data["metrics"].items():
        for metric in ("precision", "recall", "f1"):
            assert _pct(block[metric]) in shown, (name, metric)
    for name, block in data["intervals"]["scores"].items():
        f1 = block["f1"]
        assert f"[{_pct(f1['low'])}, {_pct(f1['high'])}]" in shown, name
    summary = json.loads(_run(["summarize", gold, pred, "--json"], width))
    shown = _run(["summarize", gold, pred], width)
    assert "…" not in shown
    # Where the paths do not fit beside the counts, each is printed whole on a line of its own (the
    # terminal wraps it, so that it can be copied) and the table names the files #1, #2...
    key = [line for line in shown.splitlines() if line.startswith("#")]
    table = [line for line in shown.splitlines() if not line.startswith("#")]
    assert _widest("\n".join(table)) <= width
    for k, row in enumerate(summary, 1):
        assert f"#{k}  {row['path']}" in key if key else row["path"] in shown
        cells = next(line for line in table if line.startswith(f"│ #{k} ")) if key else shown
        for name in ("documents", "sentences", "tokens", "mentions"):
            assert re.search(rf"\b{row[name]}\b", cells), (row["path"], name)


def test_names_can_be_given(runs: dict[str, Path]) -> None:
    systems = [str(runs[f"system{k}"]) for k in range(2)]
    args = ["compare", str(runs["gold"]), *systems, "--resamples", "50", "--trials", "50", "--json"]
    data = json.loads(_run([*args, "--name", "crf", "--name", "alt"], 80))
    assert [s["name"] for s in data["systems"]] == ["crf", "alt"]
    out = CliRunner().invoke(cli, [*args, "--name", "only-one"])
    assert out.exit_code == 2 and "one distinct name per system" in out.output
