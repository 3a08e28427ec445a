"""A function mapped over items in forked worker processes, results in item order.

Counting 100k sentences takes about a quarter of a second, so the pool must cost little: the
workers are forked (they share the parent's imports, numpy included), tasks and results travel
as pickles over one pipe per direction per worker, and nothing else is imported. multiprocessing
and concurrent.futures, which would do the same, take about 20 ms to import and 10 ms to start.

Each worker holds at most two tasks, so it never waits for the next one while the parent is
still producing items. The parent writes tasks without blocking (what a full pipe does not take
waits in the worker's outbox until it does): a worker sending a large result would otherwise
wait on the parent, which would wait on the worker to read a large task. Results are handed out
in item order; an exception raised by ``work`` is raised in the parent when its item's turn
comes, so the first bad item's error is the one seen, as in one process. A worker that dies is an error too.

With ``here``, the calling process is one of the ``jobs``: it forks one worker fewer and works on
items itself whenever no result is waiting, rather than idle while the workers count (on two
CPUs, a parent and one worker finish as soon as a parent and two, with one fork and half the
results' pickles fewer).

A worker's second task waits for it in the pipe, and once every item is handed out this process
would wait for both. So a task is claimed before it is counted, by whichever process is free
first: with each task the worker gets a ticket bearing its number, in a pipe both processes read,
and takes the next ticket before its next task, skipping the tasks whose ticket this process took
meanwhile to count them itself. A pipe's read of a few bytes is atomic, so every task is counted
once, by one process, whatever the interleaving.

Each worker also gets a pipe of notes from this process (``note``), read in the worker (``notes``)
on a thread of its own while it counts: what the worker could not know when it sent a result
(where its report rows go, once the earlier items' sizes are known). The pipe ends when this
process stops the worker; the worker runs its ``at_end`` callbacks before it exits, so a thread
there finishes what the notes asked for before this process reaps it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from spanscore.errors import SpanscoreError

T = TypeVar("T")
R = TypeVar("R")

_HEADER = struct.Struct("<Q")
_TASK = struct.Struct("<QQ")  # a task's length and number: a task taken back is skipped unread
_TICKET = struct.Struct("<Q")  # a task's number, taken by whichever process counts it
_IN_FLIGHT = 2  # tasks a worker holds at once


class WorkerDied(SpanscoreError, RuntimeError):
    """A worker process ended without sending back its result (killed, say, or out of memory).

    A SpanscoreError, so the command line says it in one line and exits with status 2 instead of
    a traceback; still a RuntimeError for callers that caught it as one."""

    def __init__(self, message: str) -> None:
        super().__init__(message + ": run it again, or with --jobs 1 if memory is short")


_LIVE: set[int] = set()  # this process's ends of the pipes of its live workers
_WHEN_WAITING: list[Callable[[], object]] = []  # see ``when_waiting``
_BEFORE_FORK: list[Callable[[], object]] = []  # see ``before_fork``
_NOTES_TO: dict[int, int] = {}  # each live worker's pid: this process's end of its notes pipe
_NOTES: int | None = None  # in a worker: the read end of its notes pipe
_NOTES_PID = 0  # ... and the worker's pid (a process the worker forks has no notes)
_AT_END: list[Callable[[], object]] = []  # in a worker: run after its last item, before it exits


def when_waiting(callback: Callable[[], object]) -> Callable[[], None]:
    """Run ``callback`` once, when the next map with ``here`` has handed out every item and this
    process, with nothing left to take back, waits for its workers' last results (or, if it never
    waits, when the map ends): a thread started then runs while this process sleeps, not while it
    counts (the interpreter lock). Returns a function that drops it if it has not run."""
    _WHEN_WAITING.append(callback)

    def drop() -> None:
        with contextlib.suppress(ValueError):
            _WHEN_WAITING.remove(callback)

    return drop


def before_fork(join: Callable[[], object]) -> None:
    """Call ``join`` (once) before this process next forks a worker: a thread that may be
    importing modules must end first, or a worker could find a module's import half done."""
    _BEFORE_FORK.append(join)


def notes() -> int | None:
    """In a worker process of ``forked_map``: the read end of the pipe of notes this process's
    parent sends it (``note``), at its end once the parent stops the worker; None elsewhere."""
    return _NOTES if _NOTES is not None and os.getpid() == _NOTES_PID else None


def at_end(callback: Callable[[], object]) -> None:
    """In a worker process: run ``callback`` once it has sent its last result, before it exits."""
    _AT_END.append(callback)


def note(pid: int, data: bytes) -> None:
    """Send ``data`` to the live worker ``pid`` (``notes`` there), waiting while its pipe is full."""
    fd = _NOTES_TO.get(pid)
    try:
        if fd is None:
            raise BrokenPipeError
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        raise WorkerDied(f"a worker process (pid {pid}) ended before it finished its work") from None


def can_fork() -> bool:
    return hasattr(os, "fork")


def forked_map(
    work: Callable[[T], R],
    items: Iterable[T],
    jobs: int,
    *,
    start: Callable[[], object] | None = None,
    here: bool = False,
) -> Iterator[R]:
    """``map(work, items)`` in ``jobs`` forked processes; ``start`` runs first in each worker.
    With ``here``, this process is one of the ``jobs`` (``start`` does not run in it)."""
    workers: list[_Worker] = []
    finished = False
    try:
        for _ in range(jobs - 1 if here else jobs):
            # A worker must not hold the pipes of any other live worker (this map's, or another
            # map's running beside it), or those never see the end of their tasks.
            workers.append(_Worker.fork(work, start, sorted(_LIVE)))
        yield from _run(workers, iter(items), work if here else None)
        finished = True
        if here:
            _waiting()
    finally:
        ended = [w.stop(wait=finished) for w in workers]
    # Past its last result a worker may still work (its ``at_end``: report rows written in place):
    # one that did not end cleanly leaves that work undone.
    for w, code in zip(workers, ended, strict=True):
        if code:
            raise WorkerDied(f"a worker process (pid {w.pid}) ended before it finished its work (status {code})")


def _waiting() -> None:
    while _WHEN_WAITING:
        _WHEN_WAITING.pop(0)()


class _Worker:
    def __init__(self, pid: int, tasks: int, results: int, tickets: tuple[int, int], notes: int) -> None:
        self.pid = pid
        self.notes = notes  # write end of the worker's notes (``note``)
        self.tasks = tasks  # parent's write end
        self.results = results  # parent's read end
        self.tickets = tickets  # read end (shared with the worker, never blocking), write end
        self.pending: list[int] = []  # item numbers sent and not yet answered
        self.items: dict[int, object] = {}  # the items sent and not yet answered, to take back
        self.outbox: list[memoryview] = []  # tasks' bytes the pipe has not taken yet

    @staticmethod
    def fork(work: Callable[[Any], Any], start: Callable[[], object] | None, others: list[int]) -> _Worker:
        global _NOTES, _NOTES_PID
        import signal  # here, not at the top: a count in one process forks nothing (imported before the fork)

        while _BEFORE_FORK:
            _BEFORE_FORK.pop(0)()
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        ticket_r, ticket_w = os.pipe()
        notes_r, notes_w = os.pipe()
        # Both processes read the tickets: neither waits in a read that the other's read may
        # leave empty-handed (the worker waits in select).
        os.set_blocking(ticket_r, False)
        _widen(result_w)
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            for fd in (task_w, result_r, ticket_w, notes_w, *others):
                os.close(fd)
            _NOTES_TO.clear()
            _NOTES, _NOTES_PID = notes_r, os.getpid()
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
                if start is not None:
                    start()
                _serve(work, task_r, result_w, ticket_r)
                while _AT_END:
                    _AT_END.pop(0)()
            except BaseException:  # a worker must never return into the parent's code
                code = 1
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        os.close(notes_r)
        os.set_blocking(task_w, False)  # this end only: the worker reads its own end blocking
        _LIVE.update((task_w, result_r, ticket_r, ticket_w, notes_w))
        _NOTES_TO[pid] = notes_w
        return _Worker(pid, task_w, result_r, (ticket_r, ticket_w), notes_w)

    def send(self, number: int, item: object) -> None:
        payload = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        self.outbox += (memoryview(_TASK.pack(len(payload), number)), memoryview(payload))
        self.pending.append(number)
        self.items[number] = item
        os.write(self.tickets[1], _TICKET.pack(number))  # a few bytes a task: never fills the pipe
        self.flush()

    def take_back(self) -> tuple[int, object] | None:
        """The first task sent that the worker has not started, now this process's to count;
        None if it started them all."""
        try:
            ticket = os.read(self.tickets[0], _TICKET.size)
        except BlockingIOError:
            return None
        if not ticket:  # never: this process holds the write end
            return None
        (number,) = _TICKET.unpack(ticket)
        self.pending.remove(number)
        return number, self.items.pop(number)

    def flush(self) -> None:
        """Write as much of the outbox as the pipe takes now, never waiting."""
        while self.outbox:
            try:
                n = os.write(self.tasks, self.outbox[0])
            except BlockingIOError:
                return
            except BrokenPipeError:  # it died after its last answer, before this task reached it
                raise WorkerDied(f"a worker process (pid {self.pid}) ended before it sent back its result") from None
            rest = self.outbox[0][n:]
            if rest:
                self.outbox[0] = rest
            else:
                del self.outbox[0]

    def receive(self) -> tuple[int, bool, Any]:
        payload = _read(self.results)
        if payload is None:
            raise WorkerDied(f"a worker process (pid {self.pid}) ended before it sent back its result")
        number, ok, value = pickle.loads(payload)
        self.pending.remove(number)
        del self.items[number]
        return number, ok, value

    def stop(self, *, wait: bool) -> int:
        """Close the pipes (an idle worker then exits) and reap the worker; unless ``wait``, end
        it first (the parent is leaving early, on an error or an interrupt). Returns its exit
        status where it was waited for (0: it ended cleanly), else 0."""
        _NOTES_TO.pop(self.pid, None)
        for fd in (self.tasks, self.results, *self.tickets, self.notes):
            _LIVE.discard(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            if not wait:
                import signal

                os.kill(self.pid, signal.SIGTERM)
            _, status = os.waitpid(self.pid, 0)
        except (ChildProcessError, ProcessLookupError):
            return 0
        return os.waitstatus_to_exitcode(status) if wait else 0


class _Ahead:
    """``items``, able to say whether another comes before it is taken (``ended``)."""

    def __init__(self, items: Iterator[Any]) -> None:
        self.items = items
        self.next: list[Any] = []
        self.error: Exception | None = None  # the next item's, raised when it is taken

    def __iter__(self) -> _Ahead:
        return self

    def __next__(self) -> Any:
        if self.next:
            return self.next.pop()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return next(self.items)

    def ended(self) -> bool:
        """True when no item is left (the next one, if any, is made now)."""
        if not self.next and self.error is None:
            try:
                self.next.append(next(self.items))
            except StopIteration:
                return True
            except Exception as exc:
                self.error = exc
        return False


def _run(workers: list[_Worker], items: Iterator[Any], here: Callable[[Any], Any] | None = None) -> Iterator[Any]:
    """Results in item order; ``here``: this process's own work, done on an item whenever no
    worker's result is waiting."""
    import select  # here, not at the top: a count in one process never waits on a pipe

    plan = _Ahead(items)
    done: dict[int, tuple[bool, Any]] = {}
    sent = 0
    wanted = 0  # the next result to hand out
    exhausted = False
    # Results held back for their turn stay few: past this many, this process waits for the
    # workers rather than work ahead of them.
    ahead = _IN_FLIGHT * len(workers) + 2

    def feed(w: _Worker, limit: int = _IN_FLIGHT) -> None:
        nonlocal sent, exhausted
        while not exhausted and len(w.pending) < limit:
            try:
                item = next(plan)
            except StopIteration:
                exhausted = True
                return
            except Exception as exc:  # raised in its turn, after the items before it
                done[sent] = (False, exc)
                sent += 1
                exhausted = True
                return
            w.send(sent, item)
            sent += 1

    for w in workers:
        # Working here too, hand out one item each at first (topped up as results come back):
        # with two items and one worker, this process counts the second rather than wait.
        feed(w, 1 if here is not None else _IN_FLIGHT)
    by_fd = {w.results: w for w in workers}
    while wanted < sent or not exhausted:
        # Before the results due are handed on (folded): the worker would start it meanwhile.
        if here is not None and exhausted and _take_back(workers, done, here):
            continue
        while wanted in done:
            ok, value = done.pop(wanted)
            wanted += 1
            if not ok:
                raise value
            yield value
        if wanted == sent and exhausted:
            break
        busy = [w.results for w in workers if w.pending]
        waiting = [w.tasks for w in workers if w.outbox]
        if here is not None and not exhausted and len(done) < ahead:
            for w in workers:
                w.flush()
            ready = select.select(busy, [], [], 0)[0] if busy else []
            if not ready:
                try:
                    item = next(plan)
                except StopIteration:
                    exhausted = True
                    continue
                except Exception as exc:  # raised in its turn, after the items before it
                    done[sent] = (False, exc)
                    sent += 1
                    exhausted = True
                    continue
                number = sent
                sent += 1
                # Known before this item is counted, not after: the workers' queued tasks can
                # then be taken back at once when it is done.
                exhausted = plan.ended()
                try:
                    done[number] = (True, here(item))
                except Exception as exc:  # as a worker hands it back: raised in its turn
                    done[number] = (False, exc)
                continue
        elif not busy:  # every worker idle, items left: a worker's queue was drained by feed's order
            for w in workers:
                feed(w)
            continue
        else:
            if here is not None and exhausted:
                _waiting()  # nothing left to take back (above)
            ready, writable, _ = select.select(busy, waiting, [])
            for w in workers:
                if w.tasks in writable:
                    w.flush()
        for fd in ready:
            w = by_fd[fd]
            number, ok, value = w.receive()
            done[number] = (ok, value)
            feed(w)


def _take_back(workers: list[_Worker], done: dict[int, tuple[bool, Any]], here: Callable[[Any], Any]) -> bool:
    """Count here a task some worker has not started (from the one that holds most), rather than
    wait for it; False if every task sent is started."""
    for w in sorted(workers, key=lambda w: -len(w.pending)):
        if len(w.pending) < 1:
            break
        taken = w.take_back()
        if taken is None:
            continue
        number, item = taken
        try:
            done[number] = (True, here(item))
        except Exception as exc:  # as a worker hands it back: raised in its turn
            done[number] = (False, exc)
        return True
    return False


def _serve(work: Callable[[Any], Any], tasks: int, results: int, tickets: int) -> None:
    while True:
        number = _ticket(tickets)
        if number is None:  # the parent closed the pipe: no more work
            return
        while True:  # the tasks before this ticket's were taken back by the parent: skipped
            head = _read_exactly(tasks, _TASK.size)
            body = None if head is None else _read_exactly(tasks, _TASK.unpack(head)[0])
            if head is None or body is None:
                return
            if _TASK.unpack(head)[1] == number:
                break
        item = pickle.loads(body)
        try:
            reply = (number, True, work(item))
        except Exception as exc:  # handed to the parent, which raises it
            reply = (number, False, exc)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an unpicklable exception still gets home
            data = pickle.dumps((number, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        _write(results, data)


def _ticket(fd: int) -> int | None:
    """The next task's number, once this worker holds its ticket; None when no more will come."""
    import select

    while True:
        select.select([fd], [], [])
        try:
            ticket = os.read(fd, _TICKET.size)
        except BlockingIOError:  # the parent took it first
            continue
        if not ticket:
            return None
        return int(_TICKET.unpack(ticket)[0])


# A worker's result waits in its pipe until this process reads it, which it does between the
# parts it counts itself: a result larger than the pipe holds (64 KiB by default on Linux; a
# compare's part sends back its joint histograms, some hundreds of KiB) would keep the worker
# waiting on its write, idle, until then. Linux lets a pipe hold up to 1 MiB unprivileged.
_PIPE_BYTES = 1 << 20


def _widen(fd: int) -> None:
    """Let the pipe of ``fd`` hold ``_PIPE_BYTES`` where the platform allows (else as it is)."""
    import fcntl

    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, _PIPE_BYTES)


def _write(fd: int, payload: bytes) -> None:
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int) -> bytes | None:
    """One message, or None at the end of the pipe."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    (n,) = _HEADER.unpack(head)
    body = _read_exactly(fd, n)
    if body is None:
        return None
    return body


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts: list[bytes] = []
    left = n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
