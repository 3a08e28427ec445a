"""report.html's partial pairs made ahead of the run's end (``ReportWriter.prepare``, called on a
thread while the last chunks are counted), and the page's samples read back by one CSV reader
(``sample_rows``): the folder is the same bytes as when the page makes them at the end."""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

import spanscore
from spanscore.cli import evaluate as cli_evaluate
from spanscore.presentation import ReportWriter
from spanscore.presentation.writer import HTML_PARTIAL_LIMIT
from spanscore.stages.pairs import pair_fields, sample_row, sample_rows


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, synth_tool: Path) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("synth")
    subprocess.run([sys.executable, str(synth_tool), "4000", str(folder / "s")], check=True, capture_output=True)
    return folder / "s.gold", folder / "s.pred"


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _written(gold: Path, pred: Path, out: Path, prepare: bool | None) -> ReportWriter:
    writer = ReportWriter(out)
    report = spanscore.evaluate(reference=gold, predicted=pred, rows=writer, chunk_bytes=20_000, jobs=2)
    if prepare is not None:
        writer.prepare(prepare)
    writer.finish(report)
    return writer


def test_pairs_made_ahead_give_the_same_page(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = corpus
    _written(gold, pred, tmp_path / "plain", None)
    ahead = _written(gold, pred, tmp_path / "ahead", True)
    assert ahead.made is not None and ahead.made[0] is True
    # The three partial-credit criteria list 200 pairs each, many of them the same pairs.
    assert HTML_PARTIAL_LIMIT <= len(ahead.made[1]) < 3 * HTML_PARTIAL_LIMIT
    assert _digests(tmp_path / "ahead") == _digests(tmp_path / "plain")
    # Made for character offsets, they are not used for tokens: the page is made again, the same.
    other = _written(gold, pred, tmp_path / "other", False)
    assert other.made is not None and other.made[0] is False and other.made[1]
    assert _digests(tmp_path / "other") == _digests(tmp_path / "plain")
    # Once the page is written, a late call does nothing.
    made = ahead.made
    ahead.prepare(True)
    assert ahead.made is made


def test_only_complete_samples_are_made_ahead(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = corpus
    writer = ReportWriter(tmp_path / "out")
    report = spanscore.evaluate(reference=gold, predicted=pred, rows=writer, chunk_bytes=20_000, jobs=1)
    short = writer.files["left.csv"]
    del short.sample_lines[HTML_PARTIAL_LIMIT - 1 :]  # as if a later chunk could still add to it
    short.read = []
    writer.prepare(True)
    assert writer.made is not None
    keys = {k[:8] for k in writer.made[1]}
    others = {
        tuple(r[f"{s}_{k}"] for s in ("reference", "predicted") for k in ("text", "type", "start", "end"))
        for name in ("right.csv", "overlap.csv")
        for r in writer.files[name].sample
    }
    assert keys == others  # left's pairs made at the end
    writer.finish(report)


def test_the_imports_thread_runs_first_and_its_errors_stay_there() -> None:
    calls: list[str] = []
    cli_evaluate._import_all(["json"], lambda: calls.append("then"))
    assert calls == ["then"]

    def fails() -> None:
        calls.append("failed")
        raise OSError("no room")

    cli_evaluate._import_all(["json"], fails)  # work done ahead only: finish does it again
    assert calls == ["then", "failed"]


def test_sample_rows_read_at_once_are_the_rows_read_one_by_one() -> None:
    fields = pair_fields("sentence")
    rows = [
        [3, 'say "hi", then', "PER", 0, 14, "a\r\nb", "LOC", 3, 5, "partial", 1 / 3, "longer", 'c, "q"\nx'],
        [4, "plain", "ORG", 1, 2, "plain", "ORG", 1, 3, "partial", 0.5, "shorter", "a b c"],
        [5, "", "PER", 0, 0, "\n", "PER", 0, 1, "none", 0.0, "shifted", ""],
    ]
    lines = []
    for values in rows:
        buffer = io.StringIO(newline="")
        csv.writer(buffer).writerow(values)
        lines.append(buffer.getvalue())
    one_by_one = [sample_row(line, fields, named=False) for line in lines]
    assert sample_rows(lines, fields, named=False) == one_by_one
    assert [list(r.values()) for r in one_by_one] == rows
    assert sample_rows([], fields, named=False) == []
    # A line that is not one whole record (an open quote): each read alone, as before.
    broken = [*lines[:1], lines[1].rstrip("\r\n"), lines[2]]
    assert len(sample_rows(broken, fields, named=False)) == 3
