"""The report's rows are written on a thread of their own (rows made here and rows copied from the
workers' scratch files): a write that fails there (a full disk) is one clear error, the folder is
left as it was, and no thread outlives the writer, whatever the number of processes."""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.errors import InputError
from spanscore.presentation import ReportWriter
from spanscore.stages.pairs import pair_fields

DATA = Path(__file__).parent / "data" / "real" / "datasets"
WAYS: list[dict[str, Any]] = [
    {"chunk_bytes": 1 << 40, "jobs": 1},
    {"chunk_bytes": 4096, "jobs": 1},
    {"chunk_bytes": 4096, "jobs": 2},
]


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.conll"
    gold.write_bytes((DATA / "wnut17" / "emerging.dev.conll").read_bytes())
    lines = gold.read_bytes().split(b"\n")
    # Every seventh token's label moved to another type: pairs, partial pairs and errors.
    out = [line.replace(b"-person", b"-location") if k % 7 == 0 else line for k, line in enumerate(lines)]
    pred = tmp_path / "pred.conll"
    pred.write_bytes(b"\n".join(out))
    return gold, pred


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "spanscore-report-rows"]


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.csv"))}


@pytest.mark.parametrize("way", WAYS, ids=lambda w: f"{w['chunk_bytes']}-{w['jobs']}")
def test_a_full_disk_while_rows_are_written_is_one_error_and_leaves_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: dict[str, Any]
) -> None:
    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    real = os.pwrite
    calls = {"n": 0}

    def filling(fd: int, data: Any, offset: int) -> int:
        calls["n"] += 1
        if calls["n"] > 12:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", filling)
    writer = ReportWriter(out)
    with pytest.raises(InputError, match="No space left on device"):
        report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **way)
        writer.finish(report)
    assert calls["n"] > 12
    assert [f.name for f in out.iterdir()] == ["keep.txt"]
    assert not _threads()


def test_rows_written_on_the_thread_are_the_rows_in_order(tmp_path: Path) -> None:
    """Every way of counting writes the same bytes, the rows of each chunk after the earlier
    chunks' however the writes and copies of the thread are timed; no thread is left."""
    gold, pred = _pair(tmp_path)
    digests = []
    for k, way in enumerate(WAYS):
        writer = ReportWriter(tmp_path / f"out{k}")
        report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **way)
        writer.finish(report)
        assert not _threads()
        digests.append(_digests(tmp_path / f"out{k}"))
    assert digests[0] and all(d == digests[0] for d in digests)
    whole = spanscore.evaluate(reference=gold, predicted=pred)
    buffer = io.StringIO(newline="")
    table = csv.writer(buffer)
    table.writerow(pair_fields(whole.unit_kind))
    table.writerows(row.values() for row in whole.pair_rows("overlap"))
    assert (tmp_path / "out2" / "overlap.csv").read_bytes() == buffer.getvalue().encode("utf-8")


def test_an_abandoned_writer_stops_its_thread(tmp_path: Path) -> None:
    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    writer = ReportWriter(out)
    spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, chunk_bytes=4096, jobs=2)
    assert _threads()
    writer.abandon()
    assert not _threads()
    assert list(out.iterdir()) == []


def test_no_thread_writes_while_the_charts_fork(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bucket charts are drawn in forked processes: the writer's thread has ended by then (a
    fork beside a running thread could inherit a lock it holds)."""
    pytest.importorskip("matplotlib", reason="the bucket charts need the report extra (matplotlib)")
    from spanscore.presentation import charts

    gold, pred = _pair(tmp_path)
    forks: list[list[str]] = []
    real = charts.forked_map  # type: ignore[attr-defined]

    def watched(*args: Any, **kwargs: Any) -> Any:
        forks.append(_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(charts, "forked_map", watched)
    writer = ReportWriter(tmp_path / "out")
    report = spanscore.evaluate(
        reference=gold,
        predicted=pred,
        keep_details=False,
        rows=writer,
        buckets=("length", "density"),
        chunk_bytes=4096,
        jobs=2,
    )
    writer.finish(report)
    assert forks == [[]]
    assert (tmp_path / "out" / "buckets-length.png").read_bytes().startswith(b"\x89PNG")


def test_the_same_bytes_without_positioned_reads_and_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the platform has no ``os.pwrite``, ``os.pread`` or ``os.copy_file_range``, the rows are
    written and copied by seeking, to the same bytes."""
    gold, pred = _pair(tmp_path)
    writer = ReportWriter(tmp_path / "usual")
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **WAYS[2])
    writer.finish(report)
    for name in ("pwrite", "pread", "copy_file_range"):
        monkeypatch.delattr(os, name)
    writer = ReportWriter(tmp_path / "seeking")
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **WAYS[2])
    writer.finish(report)
    assert _digests(tmp_path / "seeking") == _digests(tmp_path / "usual")
