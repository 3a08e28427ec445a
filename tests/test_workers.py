"""The forked worker pool: order, errors, dead workers, early exits."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from spanscore.runtime.workers import WorkerDied, can_fork, forked_map

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs os.fork")

STARTED = {"pid": 0}


def square(x: int) -> int:
    return x * x


def square_or_fail(x: int) -> int:
    if x in (7, 11):
        raise ValueError(f"item {x} is bad")
    return x * x


def pid_and_start(_: int) -> tuple[int, int]:
    return os.getpid(), STARTED["pid"]


def mark_start() -> None:
    STARTED["pid"] = os.getpid()


def die_on_five(x: int) -> int:
    if x == 5:
        os._exit(3)
    return x


def unpicklable(x: int) -> object:
    return lambda: x


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_come_in_item_order(jobs: int) -> None:
    assert list(forked_map(square, range(50), jobs)) == [x * x for x in range(50)]


def test_work_runs_in_other_processes_after_the_start_hook() -> None:
    seen = list(forked_map(pid_and_start, range(20), 2, start=mark_start))
    pids = {pid for pid, _ in seen}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert all(pid == started for pid, started in seen)
    assert STARTED["pid"] == 0  # the parent never ran it


def test_the_first_bad_item_raises_after_the_results_before_it() -> None:
    got: list[int] = []
    with pytest.raises(ValueError, match="item 7 is bad"):
        for value in forked_map(square_or_fail, range(20), 2):
            got.append(value)
    assert got == [x * x for x in range(7)]


def test_an_error_of_the_items_themselves_comes_in_its_turn() -> None:
    def items() -> Iterator[int]:
        yield from range(4)
        raise OSError("cannot read item 4")

    got: list[int] = []
    with pytest.raises(OSError, match="cannot read item 4"):
        for value in forked_map(square, items(), 2):
            got.append(value)
    assert got == [0, 1, 4, 9]


def test_a_dead_worker_is_an_error() -> None:
    with pytest.raises(WorkerDied, match="ended before it sent back its result"):
        list(forked_map(die_on_five, range(10), 2))


def test_a_result_that_cannot_travel_is_an_error() -> None:
    with pytest.raises(RuntimeError, match=r"PicklingError|AttributeError|pickle"):
        list(forked_map(unpicklable, range(3), 2))


def test_leaving_early_ends_and_reaps_every_worker() -> None:
    results = forked_map(pid_and_start, range(1000), 2)
    pids = {next(results)[0] for _ in range(3)}
    results.close()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: not our child any more


def _in_fresh_python(code: str, **env: str) -> str:
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, check=True).stdout


def test_freed_memory_is_kept_unless_malloc_was_set_up_already() -> None:
    code = "from spanscore.runtime.memory import keep_freed_memory; print(keep_freed_memory())"
    try:
        glibc = bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        glibc = False
    expected = "True" if glibc else "False"  # only glibc's malloc is set up
    assert _in_fresh_python(code).strip() == expected
    assert _in_fresh_python(code, MALLOC_TRIM_THRESHOLD_="65536").strip() == "False"


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_a_worker_hands_back_the_free_memory_it_shares_before_keeping_what_it_frees() -> None:
    # Freed memory kept by the parent stays resident; a worker's start hands it back (and then
    # keeps what it frees itself, as the parent does).
    code = (
        "import os\n"
        "from spanscore.runtime.memory import keep_freed_memory, start_worker\n"
        "def rss():\n    return int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
        "keep_freed_memory()\n"
        "block = bytearray(24 << 20)\n"
        "block[::4096] = b'x' * len(block[::4096])\n"
        "del block\n"
        "kept = rss()\n"
        "print(start_worker(), (kept - rss()) >> 20)"
    )
    try:
        glibc = bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError):
        glibc = False
    if not glibc:
        pytest.skip("glibc's malloc only")
    kept, freed = _in_fresh_python(code).split()
    assert kept == "True"
    assert int(freed) >= 20
    kept, freed = _in_fresh_python(code, MALLOC_TRIM_THRESHOLD_="65536").split()
    assert kept == "False"  # malloc set up already: left alone


def test_the_cli_starts_numpy_with_one_openblas_thread_unless_told_otherwise() -> None:
    code = (
        "import os, sys; sys.argv = ['spanscore', '--version']\n"
        "from spanscore.cli import main\n"
        "assert 'numpy' not in sys.modules  # nothing loaded numpy before the CLI set up the process\n"
        "try:\n    main.main()\nexcept SystemExit:\n    pass\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'])"
    )
    assert _in_fresh_python(code).strip().splitlines()[-1] == "1"
    assert _in_fresh_python(code, OPENBLAS_NUM_THREADS="4").strip().splitlines()[-1] == "4"


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_with_here_results_come_in_item_order(jobs: int) -> None:
    assert list(forked_map(square, range(50), jobs, here=True)) == [x * x for x in range(50)]


def test_with_here_this_process_is_one_of_the_jobs_and_skips_the_start_hook() -> None:
    seen = list(forked_map(pid_and_start, range(200), 2, start=mark_start, here=True))
    workers = {pid for pid, _ in seen} - {os.getpid()}
    assert len(workers) <= 1  # one worker forked, not two
    assert all(pid == started for pid, started in seen if pid != os.getpid())
    assert all(started == 0 for pid, started in seen if pid == os.getpid())
    assert STARTED["pid"] == 0
    assert [pid for pid, _ in seen].count(os.getpid()) >= 1  # items before the worker's first answer


def test_with_here_the_first_bad_item_raises_after_the_results_before_it() -> None:
    for jobs in (1, 2, 3):
        got: list[int] = []
        with pytest.raises(ValueError, match="item 7 is bad"):
            for value in forked_map(square_or_fail, range(20), jobs, here=True):
                got.append(value)
        assert got == [x * x for x in range(7)]


def test_with_here_an_error_of_the_items_themselves_comes_in_its_turn() -> None:
    def items() -> Iterator[int]:
        yield from range(9)
        raise OSError("cannot read item 9")

    got: list[int] = []
    with pytest.raises(OSError, match="cannot read item 9"):
        for value in forked_map(square, items(), 2, here=True):
            got.append(value)
    assert got == [x * x for x in range(9)]


def test_with_here_a_dead_worker_is_an_error() -> None:
    def items() -> Iterator[int]:
        yield from range(10)

    with pytest.raises(WorkerDied, match="ended before it sent back its result"):
        # The worker dies on its first item; this process, working beside it, must still notice.
        list(forked_map(die_in_a_worker, items(), 2, here=True))


PARENT = os.getpid()


def die_in_a_worker(x: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)
    return x


def die_on_one(x: int) -> int:
    if x == 1:
        os._exit(3)
    return x


def test_a_worker_dead_before_its_next_task_arrives_is_the_same_error() -> None:
    # The worker answers item 0 and dies on item 1; the next task written to it finds its pipe
    # closed or not, as the timing goes: a broken pipe was raised as such.
    for _ in range(20):
        with pytest.raises(WorkerDied, match="ended before it sent back its result"):
            list(forked_map(die_on_one, range(50), 1))


_LARGE_BOTH_WAYS = """
import sys
from spanscore.runtime.workers import forked_map

def work(b):
    return b + b"y"

items = [bytes([i]) * 3_000_000 for i in range(8)]
out = list(forked_map(work, items, 2, here=sys.argv[1] == "here"))
assert [len(o) for o in out] == [3_000_001] * 8
assert [o[0] for o in out] == list(range(8))
print("ok")
"""


@pytest.mark.parametrize("here", ["here", "apart"])
def test_tasks_and_results_larger_than_a_pipe_never_wait_on_each_other(here: str) -> None:
    # A worker writing a result larger than its pipe holds waits for the parent to read it; a
    # parent that waited meanwhile to write the worker's next (large) task waited for ever. Run in
    # a child so that a deadlock fails the test instead of holding the suite.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LARGE_BOTH_WAYS, here], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# Tasks claimed by whichever process is free: once every item is handed out, this process takes
# back a task a worker has not started rather than wait for it.


def _logged(log: str, x: int, pause: float) -> int:
    import time

    time.sleep(pause)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{os.getpid()} {x}\n".encode())  # one small write: never interleaved
    finally:
        os.close(fd)
    return x * x


class _Slow:
    """Counts ``x`` after a pause drawn per item (a worker's pauses differ from this process's)
    and notes which process counted it."""

    def __init__(self, log: str, seed: int) -> None:
        self.log, self.seed = log, seed

    def __call__(self, x: int) -> int:
        import random

        pause = random.Random(self.seed * 1000 + x * 2 + (os.getpid() != PARENT)).choice([0, 0, 0.001, 0.004, 0.02])
        return _logged(self.log, x, pause)


def _counted(log: str) -> list[tuple[int, int]]:
    with open(log) as handle:
        return [(int(pid), int(x)) for pid, x in (line.split() for line in handle)]


@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_every_item_is_counted_once_in_any_interleaving(tmp_path, jobs: int, seed: int) -> None:
    log = str(tmp_path / "log")
    n = 3 + seed * 5
    assert list(forked_map(_Slow(log, seed), range(n), jobs, here=True)) == [x * x for x in range(n)]
    counted = _counted(log)
    assert sorted(x for _, x in counted) == list(range(n))


def _slow_in_a_worker(log: str) -> Callable[[int], int]:
    def work(x: int) -> int:
        return _logged(log, x, 0.5 if os.getpid() != PARENT else 0)

    return work


def test_this_process_takes_back_a_task_the_worker_has_not_started(tmp_path) -> None:
    # The worker spends half a second on each item: this process counts items 1-4 meanwhile, then
    # waits (it holds no more than four results ahead of the one due); the worker then gets two
    # tasks (5 and 6), and this process, with item 7 counted and none left, counts one or both
    # rather than wait for the worker (without the take-back the worker counts 0, 5 and 6). Which
    # ones it takes depend on when the worker, woken by its two tasks, claims the first: all are right.
    log = str(tmp_path / "log")
    assert list(forked_map(_slow_in_a_worker(log), range(8), 2, here=True)) == [x * x for x in range(8)]
    counted = _counted(log)
    assert sorted(x for _, x in counted) == list(range(8))
    in_worker = sorted(x for pid, x in counted if pid != PARENT)
    assert in_worker in ([0], [0, 5], [0, 6]), counted


def test_a_worker_skips_the_tasks_whose_tickets_were_taken() -> None:
    from spanscore.runtime import workers

    tasks_r, tasks_w = os.pipe()
    results_r, results_w = os.pipe()
    tickets_r, tickets_w = os.pipe()
    os.set_blocking(tickets_r, False)
    for number, item in enumerate([10, 11, 12]):
        payload = workers.pickle.dumps(item)
        os.write(tasks_w, workers._TASK.pack(len(payload), number) + payload)
        os.write(tickets_w, workers._TICKET.pack(number))
    assert os.read(tickets_r, workers._TICKET.size) == workers._TICKET.pack(0)  # as this process takes one back
    os.close(tasks_w)
    os.close(tickets_w)
    workers._serve(square, tasks_r, results_w, tickets_r)
    os.close(results_w)
    answers = []
    while (payload := workers._read(results_r)) is not None:
        answers.append(workers.pickle.loads(payload))
    assert answers == [(1, True, 121), (2, True, 144)]
    for fd in (tasks_r, results_r, tickets_r):
        os.close(fd)


def test_a_worker_dying_on_a_task_it_started_is_an_error_while_this_process_takes_back_the_rest() -> None:
    import time

    def items() -> Iterator[int]:
        for x in range(6):
            time.sleep(0.05)  # the worker has started its first item before the last is made
            yield x

    def work(x: int) -> int:
        if os.getpid() != PARENT:
            time.sleep(0.3)
            os._exit(3)
        return x

    with pytest.raises(WorkerDied, match="ended before it sent back its result"):
        list(forked_map(work, items(), 2, here=True))


def test_when_waiting_runs_once_when_every_item_is_handed_out_and_drop_unregisters() -> None:
    from spanscore.runtime.workers import when_waiting

    handed: list[int] = []
    seen: list[int] = []

    def items() -> Iterator[int]:
        for x in range(12):
            handed.append(x)
            yield x

    when_waiting(lambda: seen.append(len(handed)))
    assert list(forked_map(square, items(), 2, here=True)) == [x * x for x in range(12)]
    assert seen == [12]
    list(forked_map(square, range(12), 2, here=True))
    assert seen == [12]  # once only
    when_waiting(lambda: seen.append(-1))()  # dropped before any map
    list(forked_map(square, range(12), 2, here=True))
    assert seen == [12]


def test_before_fork_runs_before_the_next_worker_is_forked_and_once() -> None:
    from spanscore.runtime.workers import before_fork

    calls: list[int] = []
    before_fork(lambda: calls.append(len(calls)))
    assert calls == []
    assert list(forked_map(square, range(12), 2)) == [x * x for x in range(12)]
    assert calls == [0]  # before the first of the two workers only
    list(forked_map(square, range(12), 2))
    assert calls == [0]


NOTED: dict[str, object] = {}


def listen_then_answer(x: int) -> int:
    """Each worker's first item starts a thread that reads its notes until they end and writes
    them to a file once they have ended; the worker waits for it before it exits (``at_end``)."""
    import threading

    from spanscore.runtime.workers import at_end, notes

    fd = notes()
    if fd is not None and "thread" not in NOTED:
        folder = str(NOTED["folder"])

        def read() -> None:
            got = []
            while True:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                got.append(chunk)
            with open(os.path.join(folder, str(os.getpid())), "wb") as out:
                out.write(b"".join(got))

        NOTED["thread"] = thread = threading.Thread(target=read)
        thread.start()
        at_end(thread.join)
    return os.getpid()


def test_notes_reach_their_worker_and_its_end_callbacks_run_before_it_is_reaped(tmp_path) -> None:
    from spanscore.runtime.workers import note, notes

    NOTED.clear()
    NOTED["folder"] = str(tmp_path)
    assert notes() is None  # none in this process
    sent: dict[int, list[bytes]] = {}
    for k, pid in enumerate(forked_map(listen_then_answer, range(12), 3, here=True)):
        if pid != os.getpid():
            message = f"item {k};".encode()
            note(pid, message)
            sent.setdefault(pid, []).append(message)
    # The map has ended: every worker read its notes to their end and wrote them before it exited.
    assert sent
    assert {int(p.name): p.read_bytes() for p in tmp_path.iterdir()} == {pid: b"".join(m) for pid, m in sent.items()}
    with pytest.raises(WorkerDied):
        note(next(iter(sent)), b"too late")


def fail_at_end(x: int) -> int:
    from spanscore.runtime.workers import at_end, notes

    if notes() is not None:
        at_end(lambda: os._exit(5))
    return x


def test_a_worker_that_fails_after_its_last_result_is_an_error_when_the_map_ends() -> None:
    """Its ``at_end`` work (rows written in place) is undone: the map raises once every result is out."""
    got = []
    with pytest.raises(WorkerDied, match="status 5"):
        for x in forked_map(fail_at_end, range(8), 2):
            got.append(x)
    assert got == list(range(8))
