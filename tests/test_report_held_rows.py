"""A worker process's report rows are held until the report's process says where they go, then
written there once by the worker (no scratch file copied into place): the same bytes as the copy
path and as one process, for many chunk sizes, and a failure anywhere leaves no partial report."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.errors import InputError, SpanscoreError
from spanscore.presentation import ReportWriter
from spanscore.stages import pairs

DATA = Path(__file__).parent / "data" / "real" / "datasets" / "wnut17" / "emerging.dev.conll"
CHUNKS = (1500, 2048, 3000, 4096, 7000, 12000)
ROOT = Path(__file__).resolve().parents[1]


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.conll"
    gold.write_bytes(DATA.read_bytes())
    lines = gold.read_bytes().split(b"\n")
    # Every seventh token's label moved to another type: pairs, partial pairs and errors.
    out = [line.replace(b"-person", b"-location") if k % 7 == 0 else line for k, line in enumerate(lines)]
    pred = tmp_path / "pred.conll"
    pred.write_bytes(b"\n".join(out))
    return gold, pred


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.suffix == ".csv"}


def _write(gold: Path, pred: Path, out: Path, **way: Any) -> None:
    writer = ReportWriter(out)
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **way)
    writer.finish(report)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_held_rows_are_the_copy_paths_bytes_for_many_chunk_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, pred = _pair(tmp_path)
    _write(gold, pred, tmp_path / "one", jobs=1)
    expected = _digests(tmp_path / "one")
    assert len(expected) >= 7
    for chunk in CHUNKS:
        for jobs in (2, 3):
            out = tmp_path / f"held-{chunk}-{jobs}"
            _write(gold, pred, out, jobs=jobs, chunk_bytes=chunk)
            assert _digests(out) == expected, (chunk, jobs)
            assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
    # The copy path (a worker no one tells where its rows go, as a Dask worker): scratch files
    # copied into place, the same bytes.
    monkeypatch.setattr(pairs.HeldRows, "here", classmethod(lambda cls, rows_dir: None))
    for chunk in CHUNKS:
        out = tmp_path / f"copied-{chunk}"
        _write(gold, pred, out, jobs=2, chunk_bytes=chunk)
        assert _digests(out) == expected, chunk


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_the_workers_rows_are_written_by_the_workers_not_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No scratch file is made and nothing is copied; the rows a worker held are in the files."""
    gold, pred = _pair(tmp_path)
    _write(gold, pred, tmp_path / "one", jobs=1)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a scratch file or a copy")

    held: list[int] = []
    real = pairs.HeldRows.hold

    def hold(self: pairs.HeldRows, bodies: list[bytes], names: list[str]) -> int:
        held.append(sum(map(len, bodies)))  # in the worker: the parent sees none
        return real(self, bodies, names)

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    monkeypatch.setattr(os, "copy_file_range", refused, raising=False)
    told: list[int] = []
    from spanscore.runtime import workers

    real_note = workers.note

    def note(pid: int, data: bytes) -> None:
        told.append(pid)
        real_note(pid, data)

    monkeypatch.setattr(workers, "note", note)
    monkeypatch.setattr(pairs.HeldRows, "hold", hold)
    _write(gold, pred, tmp_path / "held", jobs=2, chunk_bytes=2048)
    assert _digests(tmp_path / "held") == _digests(tmp_path / "one")
    assert told and all(pid != os.getpid() for pid in told)
    assert not held  # held in the workers only


def _bad_late(tmp_path: Path) -> tuple[Path, Path]:
    """A pair whose prediction has a line with too many columns at 95% of the file: the chunks
    before it are counted and their rows written before the bad one is read."""
    gold, pred = _pair(tmp_path)
    lines = pred.read_bytes().split(b"\n")
    k = int(len(lines) * 0.95)
    while not lines[k]:
        k += 1
    lines[k] = lines[k].split(b"\t")[0] + b"\tB-person\textra\tcolumns"
    pred.write_bytes(b"\n".join(lines))
    return gold, pred


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_a_chunk_that_fails_to_parse_late_leaves_no_partial_report(tmp_path: Path, jobs: int) -> None:
    gold, pred = _bad_late(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    writer = ReportWriter(out)
    with pytest.raises(SpanscoreError, match="columns"):
        report = spanscore.evaluate(
            reference=gold, predicted=pred, keep_details=False, rows=writer, jobs=jobs, chunk_bytes=2048
        )
        writer.finish(report)
    writer.abandon()  # as the command line does on an error
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert not [t.name for t in threading.enumerate() if t.name.startswith("spanscore-report")]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_the_command_line_leaves_no_report_when_a_late_chunk_fails(tmp_path: Path) -> None:
    gold, pred = _bad_late(tmp_path)
    out = tmp_path / "report"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(gold), str(pred), "--jobs", "2"]
    done = subprocess.run(
        [*cmd, "--chunk-size", "2048", "--report", str(out)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "columns" in done.stderr and "Traceback" not in done.stderr
    assert list(out.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_a_worker_that_cannot_write_its_rows_fails_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk met by a worker's own writes is one clear error and the folder is left as it was."""
    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    parent = os.getpid()
    real = pairs.write_at

    def filling(fd: int, data: Any, offset: int) -> None:
        if os.getpid() != parent:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data, offset)

    monkeypatch.setattr(pairs, "write_at", filling)
    writer = ReportWriter(out)
    with pytest.raises(InputError, match="No space left on device"):
        report = spanscore.evaluate(
            reference=gold, predicted=pred, keep_details=False, rows=writer, jobs=2, chunk_bytes=2048
        )
        writer.finish(report)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_a_worker_that_dies_holding_rows_leaves_no_partial_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed after it sent its results, before it wrote the rows it held (its last
    offsets already told), is an error when the map ends; the folder is left as it was."""
    import time

    from spanscore.runtime.workers import WorkerDied

    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    parent = os.getpid()
    real = pairs.write_at

    def dying(fd: int, data: Any, offset: int) -> None:
        if os.getpid() != parent:
            time.sleep(0.3)  # the parent counts the rest and tells every offset meanwhile
            os._exit(9)
        real(fd, data, offset)

    monkeypatch.setattr(pairs, "write_at", dying)
    writer = ReportWriter(out)
    try:
        with pytest.raises(WorkerDied, match="ended before it finished"):
            report = spanscore.evaluate(
                reference=gold, predicted=pred, keep_details=False, rows=writer, jobs=2, chunk_bytes=2048
            )
            writer.finish(report)
    finally:
        writer.abandon()  # as the command line does on an error
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_any_error_of_the_workers_thread_fails_the_report_and_never_blocks_the_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only a write's error: whatever stops the worker's thread from writing a chunk's rows is
    raised by the report's writer, and the thread goes on reading the notes (this process never
    waits on a full pipe)."""
    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    parent = os.getpid()
    real = pairs.write_at

    def broken(fd: int, data: Any, offset: int) -> None:
        if os.getpid() != parent:
            raise MemoryError("no room for the rows")
        real(fd, data, offset)

    monkeypatch.setattr(pairs, "write_at", broken)
    writer = ReportWriter(out)
    with pytest.raises(InputError, match="MemoryError: no room for the rows"):
        report = spanscore.evaluate(
            reference=gold, predicted=pred, keep_details=False, rows=writer, jobs=2, chunk_bytes=1500
        )
        writer.finish(report)
    assert list(out.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")
def test_rows_a_worker_was_never_told_where_to_write_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The safety net beside the offsets: a worker that still holds rows when its notes end does
    not end cleanly, so the map raises and no report is written without them."""
    from spanscore.runtime import workers
    from spanscore.runtime.workers import WorkerDied

    gold, pred = _pair(tmp_path)
    out = tmp_path / "report"
    real = workers.note
    sent = {"n": 0}

    def forgetful(pid: int, data: bytes) -> None:
        sent["n"] += 1
        if sent["n"] != 3:  # the third chunk's offsets never sent
            real(pid, data)

    monkeypatch.setattr(workers, "note", forgetful)
    writer = ReportWriter(out)
    try:
        with pytest.raises(WorkerDied, match="ended before it finished"):
            report = spanscore.evaluate(
                reference=gold, predicted=pred, keep_details=False, rows=writer, jobs=2, chunk_bytes=1500
            )
            writer.finish(report)
    finally:
        writer.abandon()
    assert sent["n"] > 3
    assert list(out.iterdir()) == []
