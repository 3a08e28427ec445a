"""A report written into a folder that holds an earlier one: each file takes the old one's place
in one atomic step (the names swapped where the system can, so that ext4 does not write the new
file's data out at once), the old files go with the staging folder, and the folder ends as a
report written into an empty folder, whichever way the files were moved."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import spanscore
from spanscore.errors import InputError
from spanscore.presentation import ReportWriter
from spanscore.presentation import writer as writer_module

DATA = Path(__file__).parent / "data"


def _write(out: Path) -> None:
    writer = ReportWriter(out)
    report = spanscore.evaluate(
        reference=DATA / "small.gold.conll", predicted=DATA / "small.pred.conll", keep_details=False, rows=writer
    )
    writer.finish(report)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_a_report_written_again_is_the_report_written_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = tmp_path / "fresh"
    _write(fresh)
    again = tmp_path / "again"
    _write(again)
    for path in again.iterdir():  # the old files differ from the new ones
        path.write_bytes(b"old " + path.read_bytes())
    keep = again / "mine.txt"
    keep.write_text("mine", encoding="utf-8")
    linked = tmp_path / "linked.csv"
    os.link(again / "strict.csv", linked)
    old = linked.read_bytes()
    replaced: list[str] = []
    real = os.replace

    def counting(a: str | Path, b: str | Path) -> None:
        replaced.append(Path(b).name)
        real(a, b)

    monkeypatch.setattr(os, "replace", counting)
    _write(again)
    want = _digests(fresh)
    got = _digests(again)
    assert got.pop("mine.txt") == hashlib.md5(b"mine").hexdigest()
    assert got == want
    assert linked.read_bytes() == old  # another name of an old file keeps it, as with a rename over it
    assert not [p for p in again.iterdir() if p.name.startswith(".")]  # no staging folder left
    if sys.platform.startswith("linux") and writer_module._renameat2 is not False:
        assert replaced == []  # every file swapped into place, none renamed over its old one


def test_without_swaps_the_same_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "one")
    _write(tmp_path / "two")
    monkeypatch.setattr(writer_module, "_renameat2", False)
    _write(tmp_path / "two")
    assert _digests(tmp_path / "one") == _digests(tmp_path / "two")


def test_a_swap_that_fails_falls_back_to_a_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "one")
    _write(tmp_path / "two")
    calls: list[bytes] = []

    def refusing(*args: object) -> int:  # a file system without RENAME_EXCHANGE: nothing moved
        calls.append(args[1])  # type: ignore[arg-type]
        return -1

    monkeypatch.setattr(writer_module, "_renameat2", refusing)
    _write(tmp_path / "two")
    assert calls
    assert _digests(tmp_path / "one") == _digests(tmp_path / "two")


def test_a_folder_where_a_file_goes_is_one_error_and_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "report"
    _write(out)
    (out / "summary.md").unlink()
    (out / "summary.md").mkdir()  # never swapped away and removed with the staging folder
    (out / "summary.md" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="cannot write the report"):
        _write(out)
    assert (out / "summary.md" / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_link_where_a_file_goes_is_replaced_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "report"
    _write(out)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("mine", encoding="utf-8")
    (out / "summary.md").unlink()
    (out / "summary.md").symlink_to(elsewhere)
    _write(out)
    assert not (out / "summary.md").is_symlink()
    assert elsewhere.read_text(encoding="utf-8") == "mine"


def test_the_old_files_removed_on_a_thread_are_gone_once_waited_for(tmp_path: Path) -> None:
    _write(tmp_path / "fresh")
    out = tmp_path / "again"
    _write(out)
    writer = ReportWriter(out)
    report = spanscore.evaluate(
        reference=DATA / "small.gold.conll", predicted=DATA / "small.pred.conll", keep_details=False, rows=writer
    )
    writer.finish(report, wait=False)
    visible = {p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()}
    assert visible == _digests(tmp_path / "fresh")  # the new report is whole before the old files go
    writer.wait()
    assert writer.tidying is None
    assert _digests(out) == _digests(tmp_path / "fresh")  # and the staging folder is gone


def test_the_command_leaves_no_staging_folder_when_it_writes_a_report_again(tmp_path: Path) -> None:
    out = tmp_path / "report"
    command = [
        sys.executable, "-m", "spanscore.cli.main", "evaluate",
        str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll"), "--report", str(out),
    ]  # fmt: skip
    first = subprocess.run(command, capture_output=True, text=True, check=True)
    fresh = _digests(out)
    again = subprocess.run(command, capture_output=True, text=True, check=True)
    assert again.stdout == first.stdout and again.stderr == first.stderr
    assert _digests(out) == fresh  # no staging folder left beside the files
