"""report.html lists the first partial pairs of each pair file in corpus order; a part counted after
one that held a file's whole sample (in the same process) sends none of that file's, so that a
worker's result stays small (600 sampled rows made it larger than a pipe holds, and the worker
waited with it). The report is the same bytes as when every part sends its sample."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import spanscore
from spanscore.presentation import ReportWriter
from spanscore.stages import parts
from spanscore.stages.pairs import PartRows, RowFile


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, synth_tool: Path) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("synth")
    subprocess.run([sys.executable, str(synth_tool), "6000", str(folder / "s")], check=True, capture_output=True)
    return folder / "s.gold", folder / "s.pred"


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


class _Recording(ReportWriter):
    """Notes how many sampled rows of each file every part brought."""

    def __init__(self, out: Path, seen: list[dict[str, int]]) -> None:
        super().__init__(out)
        self.seen = seen

    def __call__(self, rows: PartRows) -> None:
        self.seen.append({name: len(f.partial_lines) for name, f in rows.files.items()})
        super().__call__(rows)


def _report(corpus: tuple[Path, Path], out: Path, jobs: int, seen: list[dict[str, int]]) -> None:
    writer = _Recording(out, seen)
    gold, pred = corpus
    report = spanscore.evaluate(
        reference=gold, predicted=pred, keep_details=False, rows=writer, chunk_bytes=100_000, jobs=jobs
    )
    writer.finish(report)


@pytest.mark.parametrize("jobs", [1, 2])
def test_parts_after_a_full_sample_send_none_and_the_report_is_the_same(
    corpus: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    seen: list[dict[str, int]] = []
    _report(corpus, tmp_path / "quota", jobs, seen)
    assert len(seen) >= 6
    # A part of some 870 sentences holds the whole sample of overlap's partial pairs, not of left's.
    full = {name for name, n in seen[0].items() if n == parts.PARTIAL_SAMPLE}
    assert "overlap.csv" in full and "left.csv" not in full
    # Only each process's first part sends the full files' samples; left's come from every part.
    assert sum(1 for part in seen if any(part[name] for name in full)) <= jobs
    assert all(part["left.csv"] for part in seen[:-1])
    monkeypatch.setattr(parts.ExampleQuota, "wanted", lambda self, wanted, position: wanted)
    every: list[dict[str, int]] = []
    _report(corpus, tmp_path / "every", jobs, every)
    assert sum(1 for part in every if part["overlap.csv"] == parts.PARTIAL_SAMPLE) > jobs  # each part sent it
    assert _digests(tmp_path / "quota") == _digests(tmp_path / "every")


def test_a_file_without_a_full_sample_is_still_sampled(tmp_path: Path) -> None:
    """A later part's partial pairs of a file are kept while no earlier part held its sample."""
    quota = parts.ExampleQuota()
    wanted = parts.Wanted(rows=("overlap", "left"), partial_sample=2)
    rows = PartRows(
        {"overlap.csv": RowFile(partial_lines=["a", "b"]), "left.csv": RowFile(partial_lines=["c"])},
        "sentence",
        2,
    )
    result = parts.PartResult(counts=None, units=1, doc_advance=0, rows=rows)  # type: ignore[arg-type]
    quota.note(result, wanted.examples, position=10)
    assert quota.wanted(wanted, 5).sampled == frozenset()  # an earlier part: may still be shown
    assert quota.wanted(wanted, 10).sampled == frozenset()
    assert quota.wanted(wanted, 20).sampled == frozenset({"overlap.csv"})
