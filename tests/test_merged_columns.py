"""A merged file whose gold and predicted labels are not its last two columns (Flair's
``token gold predicted score`` lines): chosen with --label-column and --predicted-column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from seqeval.metrics import f1_score, precision_score, recall_score

import spanscore
from spanscore.cli.main import cli

SENTENCES = [
    [("At", "O", "O", "0.99"), ("Kessler", "S-PER", "S-PER", "0.98"), ("'s", "O", "O", "0.97")],
    [("New", "B-LOC", "B-ORG", "0.61"), ("York", "E-LOC", "E-ORG", "0.58"), ("Times", "O", "S-ORG", "0.52")],
    [("Angela", "B-PER", "B-PER", "0.93"), ("Merkel", "E-PER", "I-PER", "0.91"), ("spoke", "O", "O", "0.99")],
    [("in", "O", "O", "0.99"), ("Berlin", "S-LOC", "O", "0.40"), (".", "O", "O", "1.00")],
]


@pytest.fixture
def flair_file(tmp_path: Path) -> Path:
    path = tmp_path / "test.tsv"
    path.write_text("\n\n".join("\n".join(" ".join(t) for t in s) for s in SENTENCES) + "\n")
    return path


def _peer() -> tuple[float, float, float]:
    gold = [[t[1] for t in s] for s in SENTENCES]
    pred = [[t[2] for t in s] for s in SENTENCES]
    # seqeval's default mode reads chunks as conlleval does, as spanscore's default repair does
    # (Merkel's "B-PER I-PER" is one mention; seqeval's strict IOBES mode would drop it).
    return precision_score(gold, pred), recall_score(gold, pred), f1_score(gold, pred)


def test_flair_columns_chosen_from_the_command_line_equal_seqeval(flair_file: Path) -> None:
    out = CliRunner().invoke(
        cli,
        ["evaluate", str(flair_file), "--merged", "--labels", "BIOES", "--label-column", "1",
         "--predicted-column", "2", "--json"],
    )
    assert out.exit_code == 0, out.output
    strict = json.loads(out.output)["metrics"]["strict"]
    assert (strict["precision"], strict["recall"], strict["f1"]) == pytest.approx(_peer(), abs=1e-12)


def test_flair_columns_in_python_equal_the_command_line(flair_file: Path) -> None:
    reading = spanscore.Reading(labels="BIOES", merged=True, label_column=1, predicted_column=2)
    report = spanscore.evaluate(reference=flair_file, predicted=None, reading=reading)
    assert report.metrics["strict"]["f1"] == pytest.approx(_peer()[2], abs=1e-12)


def test_without_the_columns_the_score_column_is_refused_as_a_label(flair_file: Path) -> None:
    out = CliRunner().invoke(cli, ["evaluate", str(flair_file), "--merged", "--labels", "BIOES"])
    assert out.exit_code == 2
    assert "0.99" in out.output and "Traceback" not in out.output


def test_predicted_column_needs_a_merged_file() -> None:
    with pytest.raises(spanscore.SpanscoreError, match="merged=True"):
        spanscore.Reading(predicted_column=2)
    with pytest.raises(spanscore.SpanscoreError, match="integer column index"):
        spanscore.Reading(merged=True, predicted_column="2")  # type: ignore[arg-type]
