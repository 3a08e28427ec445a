"""The report's writing thread: rows made in the counting process wait in memory up to a bound of
bytes; copies of a worker's rows (already in a scratch file) never make the counting process wait."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from spanscore.presentation import writer as writer_module
from spanscore.presentation.writer import _Copier


@pytest.fixture
def held_thread(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The thread's first write waits until the event is set (a slow disk)."""
    go = threading.Event()
    real = writer_module._write_at
    calls = []

    def slow(fd: int, data: bytes | memoryview, offset: int) -> None:
        calls.append(offset)
        if len(calls) == 1:
            assert go.wait(10)
        real(fd, data, offset)

    monkeypatch.setattr(writer_module, "_write_at", slow)
    return go


def _in_thread(work: object) -> threading.Thread:
    t = threading.Thread(target=work, daemon=True)  # type: ignore[arg-type]
    t.start()
    return t


def test_rows_made_here_wait_in_memory_up_to_the_bound(tmp_path: Path, held_thread: threading.Event) -> None:
    target = os.open(tmp_path / "out.csv", os.O_WRONLY | os.O_CREAT, 0o666)
    copier = _Copier(held=25)
    copier.write(b"a" * 10, target, 0)
    copier.write(b"b" * 10, target, 10)  # 20 bytes held: within the bound
    third = _in_thread(lambda: copier.write(b"c" * 10, target, 20))
    third.join(0.3)
    assert third.is_alive(), "a write past the bound must wait for the thread"
    assert copier.held == 20
    held_thread.set()
    third.join(10)
    assert not third.is_alive()
    copier.finish()
    os.close(target)
    assert copier.held == 0
    assert (tmp_path / "out.csv").read_bytes() == b"a" * 10 + b"b" * 10 + b"c" * 10


def test_a_block_larger_than_the_bound_waits_only_for_the_others(tmp_path: Path) -> None:
    target = os.open(tmp_path / "out.csv", os.O_WRONLY | os.O_CREAT, 0o666)
    copier = _Copier(held=4)
    copier.write(b"x" * 100, target, 0)  # nothing held before it: taken at once
    copier.write(b"y" * 100, target, 100)
    copier.finish()
    os.close(target)
    assert (tmp_path / "out.csv").read_bytes() == b"x" * 100 + b"y" * 100


def test_copies_of_a_workers_rows_never_wait_for_the_thread(tmp_path: Path, held_thread: threading.Event) -> None:
    scratch = tmp_path / ".rows.1.rows"
    scratch.write_bytes(scratch_bytes(1000))
    target = os.open(tmp_path / "out.csv", os.O_WRONLY | os.O_CREAT, 0o666)
    copier = _Copier(held=25)
    copier.write(b"head", target, 0)  # the thread waits on it
    done = threading.Event()

    def many() -> None:
        for k in range(1000):  # far more jobs than a queue of a few chunks held
            copier.copy(str(scratch), 4 * k, 4, target, 4 + 4 * k)
        copier.remove(str(scratch))
        done.set()

    _in_thread(many)
    assert done.wait(5), "the copies waited for the thread"
    held_thread.set()
    copier.finish()
    os.close(target)
    assert (tmp_path / "out.csv").read_bytes() == b"head" + scratch_bytes(1000)
    assert not scratch.exists()


def scratch_bytes(n: int) -> bytes:
    return b"".join(b"%04d" % k for k in range(n))


def test_a_failed_write_frees_its_room_and_is_raised_by_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes | memoryview, offset: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_module, "_write_at", full)
    target = os.open(tmp_path / "out.csv", os.O_WRONLY | os.O_CREAT, 0o666)
    copier = _Copier(held=10)
    writes = _in_thread(lambda: [copier.write(b"z" * 8, target, 8 * k) for k in range(50)])
    writes.join(10)
    assert not writes.is_alive(), "rows that failed to be written must not hold their room"
    with pytest.raises(OSError) as caught:
        copier.finish()
    os.close(target)
    assert caught.value.errno == errno.ENOSPC
    assert copier.held == 0


def test_rows_made_here_are_written_before_the_copies_that_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows in memory go first, the copies (their rows wait on disk) after; a scratch file is
    removed only after its own copies; every byte lands where it was asked to."""
    go = threading.Event()
    order: list[str] = []
    real_copy, real_write = writer_module._copy_at, writer_module._write_at

    def copy(source: int, offset: int, length: int, target: int, at: int) -> None:
        order.append(f"copy {at}")
        if len(order) == 1:
            assert go.wait(10)
        real_copy(source, offset, length, target, at)

    def write(fd: int, data: bytes | memoryview, offset: int) -> None:
        order.append(f"write {offset}")
        real_write(fd, data, offset)

    monkeypatch.setattr(writer_module, "_copy_at", copy)
    monkeypatch.setattr(writer_module, "_write_at", write)
    scratch = tmp_path / ".rows.2.rows"
    scratch.write_bytes(scratch_bytes(3))
    target = os.open(tmp_path / "out.csv", os.O_WRONLY | os.O_CREAT, 0o666)
    copier = _Copier()
    for k in range(3):
        copier.copy(str(scratch), 4 * k, 4, target, 4 * k)
    copier.remove(str(scratch))
    for _ in range(500):  # the thread is in the first copy
        if order:
            break
        threading.Event().wait(0.01)
    copier.write(b"mine", target, 12)
    go.set()
    copier.finish()
    os.close(target)
    assert order == ["copy 0", "write 12", "copy 4", "copy 8"]
    assert (tmp_path / "out.csv").read_bytes() == scratch_bytes(3) + b"mine"
    assert not scratch.exists()
