"""Writing a report folder: CSVs row by row as chunks finish, then summaries, charts and report.html."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InputError, OptionError
from ..results import EvaluationResult
from ..stages.pairs import (
    ERRORS_FILE,
    ROWS_FAILED,
    TYPE5_FILE,
    KeptDetails,
    PartRows,
    RowFile,
    RowsDir,
    csv_field,
    error_fields,
    header_line,
    held_note,
    pair_fields,
    render_rows,
    sample_rows,
)
from ..stages.pairs import write_at as _write_at
from .common import CRITERION_HELP, PARTIAL_CRITERIA, repairs_line

if TYPE_CHECKING:
    from .html import PartialSample

# The page writers (charts, report.html, summary.md) are imported by ``finish``: a report run
# counts sooner without them (``WRITER_MODULES``: what may be imported beforehand, on a thread,
# once the worker processes count).
WRITER_MODULES = ("spanscore.presentation.charts", "spanscore.presentation.html", "spanscore.presentation.markdown")

# Rows made in this process that may wait in memory for the writing thread: about a chunk and
# a half's rows at the default chunk size (a 512 KiB chunk makes some 5 MB of rows), no more
# than the 16 jobs the thread's queue held before copies of a worker's rows stopped counting.
HELD_BYTES = 8 << 20
HTML_PARTIAL_LIMIT = 200  # partial pairs listed per criterion in report.html; the CSVs hold all
HTML_EXAMPLE_LIMIT = 5  # examples per error type in report.html
CONFUSION_FILE = "confusion.csv"
CONFUSION_FIELDS = ("reference", "predicted", "count", "same_span", "overlapping")


class Report(Protocol):
    """What a report folder is written from (``spanscore.Report`` is one)."""

    unit_kind: str

    @property
    def examples(self) -> dict[str, list[dict[str, Any]]] | None: ...

    @property
    def kept(self) -> Sequence[KeptDetails] | None: ...

    def to_dict(self) -> EvaluationResult: ...

    def error_examples(self, limit: int = 3) -> dict[str, list[dict[str, Any]]]: ...


def confusion_csv(data: EvaluationResult) -> str:
    """The rows of ``confusion`` in the JSON as CSV, an empty field where the JSON has null."""
    lines = [header_line(CONFUSION_FIELDS)]
    for c in data["confusion"]["rows"]:
        values = ("" if c["reference"] is None else c["reference"], "" if c["predicted"] is None else c["predicted"])
        numbers = (c["count"], c["same_span"], c["overlapping"])
        lines.append(",".join([*(csv_field(v) for v in values), *(str(n) for n in numbers)]) + "\r\n")
    return "".join(lines)


THRESHOLDS_CSV = "thresholds.csv"
THRESHOLD_FIELDS = ("criterion", "type", "threshold", "precision", "recall", "f1", "best")


def thresholds_csv(data: EvaluationResult) -> str | None:
    """The threshold sweep of scored spans (``located.thresholds`` in the JSON) as CSV: strict
    overall (type empty), then each type, then boundary (the place alone); ``best`` is 1 on each
    curve's best threshold by F1. None where no span had a score."""
    sweep = data.get("located", {}).get("thresholds")
    if not sweep:
        return None
    lines = [header_line(THRESHOLD_FIELDS)]
    curves = [("strict", "", sweep["overall"]), *(("strict", t, c) for t, c in sorted(sweep["types"].items()))]
    if "boundary" in sweep:
        curves.append(("boundary", "", sweep["boundary"]))
    for criterion, name, curve in curves:
        best = curve["best"]["threshold"] if curve["best"] is not None else None
        for t, p, r, f in zip(curve["thresholds"], curve["precision"], curve["recall"], curve["f1"], strict=True):
            cells = (criterion, csv_field(name), repr(t), repr(p), repr(r), repr(f), "1" if t == best else "0")
            lines.append(",".join(cells) + "\r\n")
    return "".join(lines)


class _RowFile:
    """One CSV file being written, in the staging folder until the report is complete: each
    chunk's rows take the room after the earlier chunks', and a thread writes them there
    (``_Copier``)."""

    def __init__(self, path: Path, fields: list[str]) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self.size = 0
        self.full = 0
        self.partial = 0
        # The first partial pairs' rows for the page, read back once it is written (``sample``),
        # all by one reader, not each as its chunk's rows come in.
        self.sample_lines: list[str] = []
        self.named = False
        self.read: list[dict[str, Any]] = []
        self.fields = fields
        self.put(header_line(fields).encode("utf-8"))

    @property
    def sample(self) -> list[dict[str, Any]]:
        """The first partial pairs as ``Report.pair_rows`` gives them."""
        if len(self.read) < len(self.sample_lines):
            self.read += sample_rows(self.sample_lines[len(self.read) :], self.fields, self.named)
        return self.read

    def put(self, data: bytes) -> None:
        _write_at(self.fd, data, self.size)
        self.size += len(data)

    def take(self, length: int) -> int:
        """Room for ``length`` bytes after what is taken so far: where they go."""
        at = self.size
        self.size += length
        return at


def _read_at(fd: int, length: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, length, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


def _copy_at(source: int, offset: int, length: int, target: int, at: int) -> None:
    """``length`` bytes of ``source`` from ``offset`` written to ``target`` at ``at``: copied by
    the kernel where it can (the rows of a report are many times the input's size), else
    through a buffer."""
    done = 0
    copy = getattr(os, "copy_file_range", None)
    if copy is not None:
        try:
            while done < length:
                n = copy(source, target, length - done, offset + done, at + done)
                if n == 0:
                    break
                done += n
        except OSError:  # a file system without it: the buffered copy, from where it stopped
            pass
    while done < length:
        block = _read_at(source, min(length - done, 1 << 20), offset + done)
        if not block:
            raise OSError(errno.EIO, "a worker's rows ended early")
        _write_at(target, block, at + done)
        done += len(block)


class _Copier:
    """Writes the rows into their places in the CSV files on a thread of its own: rows made in
    this process, and rows that worker processes left in scratch files (copied, then each scratch
    file removed). ``os.pwrite`` and ``os.copy_file_range`` release the GIL, so the 100 MB or so
    of a large report go to the files while this process counts its next chunk, waits for the
    workers or writes report.html, not in turn with them."""

    def __init__(self, held: int = HELD_BYTES) -> None:
        import collections
        import queue
        import threading

        # Copies of a worker's rows and removals of its scratch files, in the order asked for
        # (a scratch file is removed after its copies); True: rows made here wait; None: no more.
        self.jobs: queue.SimpleQueue[tuple[str, int, int, int, int] | str | bool | None] = queue.SimpleQueue()
        # Rows made here, in memory: written before any copy that waits (a copy holds no
        # memory: its rows wait in the scratch file).
        self.writes: collections.deque[tuple[bytes, int, int]] = collections.deque()
        # At most ``held`` bytes of rows made here wait to be written: a disk slower than the
        # counting holds the counting back rather than the rows piling up in memory. The copies
        # are not held back, so the counting process never waits on another process's rows.
        self.limit = held
        self.held = 0
        self.room = threading.Condition()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="spanscore-report-rows", daemon=True)
        self.thread.start()

    def copy(self, path: str, offset: int, length: int, target: int, at: int) -> None:
        self.jobs.put((path, offset, length, target, at))

    def write(self, data: bytes, target: int, at: int) -> None:
        with self.room:
            while self.held and self.held + len(data) > self.limit and self.thread.is_alive():
                self.room.wait()
            self.held += len(data)
        self.writes.append((data, target, at))
        self.jobs.put(True)  # wakes the thread

    def remove(self, path: str) -> None:
        """Remove the scratch file ``path`` once the copies asked for before are done."""
        self.jobs.put(path)

    def _run(self) -> None:
        opened: dict[str, int] = {}
        try:
            while True:
                job = self.jobs.get()
                while self.writes:
                    data, target, at = self.writes.popleft()
                    try:
                        if self.error is None:
                            _write_at(target, data, at)
                    except BaseException as exc:  # raised where the writer next looks (finish)
                        if self.error is None:
                            self.error = exc
                    finally:
                        self._written(len(data))  # written (or skipped after an error): room for more
                    del data
                if job is None:
                    break
                try:
                    if isinstance(job, str):
                        fd = opened.pop(job, None)
                        if fd is not None:
                            os.close(fd)
                        os.unlink(job)
                    elif isinstance(job, tuple) and self.error is None:
                        path, offset, length, target, at = job
                        if path not in opened:
                            opened[path] = os.open(path, os.O_RDONLY)
                        _copy_at(opened[path], offset, length, target, at)
                except BaseException as exc:  # raised where the writer next looks (finish)
                    if self.error is None:
                        self.error = exc
        finally:
            for fd in opened.values():
                os.close(fd)

    def _written(self, length: int) -> None:
        with self.room:
            self.held -= length
            self.room.notify_all()

    def finish(self) -> None:
        """Wait for every copy asked for; raise the first error one met."""
        self.jobs.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error


class ReportWriter:
    """Writes a report folder while an evaluation runs: pass it as ``evaluate(rows=...)``, then
    call ``finish`` with the report.

    Each chunk's rows are appended to the CSV files as soon as the chunk's turn comes (corpus
    order), so no file needs the corpus in memory; report.html lists the first
    ``HTML_PARTIAL_LIMIT`` partial pairs of each criterion.

    Every file is written in a hidden staging folder inside ``out_dir`` and moved into place only
    when the whole report is written; a failure (a full disk, Ctrl-C) removes the staging folder,
    so the folder holds a complete report of this run, or its earlier files untouched.
    """

    def __init__(self, out_dir: str | Path, *, scratch: bool = True) -> None:
        self.out_dir = Path(out_dir)
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise OptionError(f"cannot write a report to {self.out_dir}: it is not a folder") from None
        except OSError as exc:
            raise InputError(f"cannot write a report here: {exc.strerror}", path=str(self.out_dir)) from None
        self.files: dict[str, _RowFile] = {}
        self.unit_kind = "sentence"
        import tempfile

        try:
            self.staging: Path | None = Path(tempfile.mkdtemp(prefix=".spanscore-report-", dir=self.out_dir))
        except OSError as exc:
            raise InputError(f"cannot write a report here: {exc.strerror}", path=str(self.out_dir)) from None
        self.scratch = scratch
        # Where worker processes leave their rows: the staging folder itself.
        self.rows_dir: str | None = RowsDir(str(self.staging), os.getpid()) if scratch else None
        self.copier: _Copier | None = None
        self.tidying: Any = None  # the thread removing an earlier report's files (``finish(wait=False)``)

    def __call__(self, rows: PartRows) -> None:
        self.unit_kind = rows.unit_kind
        try:
            if self.copier is not None and self.copier.error is not None:
                raise self.copier.error
            told: dict[tuple[int, int], list[int]] = {}  # rows a worker holds: each file's offset
            for name, part in rows.files.items():
                self._add(name, part, rows, told)
            if told:
                from ..runtime.workers import note

                for (pid, number), offsets in told.items():
                    note(pid, held_note(number, offsets))
            for path in dict.fromkeys(p for part in rows.files.values() for p, _, _ in part.pieces):
                self._copier().remove(path)
        except OSError as exc:
            self.abandon()
            raise InputError(f"cannot write the report: {exc.strerror}", path=str(self.out_dir)) from None

    def _copier(self) -> _Copier:
        if self.copier is None:
            # Started with the first rows: an evaluation's worker processes are forked by then.
            self.copier = _Copier()
        return self.copier

    def _add(self, name: str, part: RowFile, rows: PartRows, told: dict[tuple[int, int], list[int]]) -> None:
        """One file's rows of the chunks in ``rows`` added after the earlier chunks'."""
        f = self.files.get(name)
        if f is None:
            is_error = name in (ERRORS_FILE, TYPE5_FILE)
            kind = rows.unit_kind
            fields = error_fields(kind, rows.levels) if is_error else pair_fields(kind, rows.levels)
            f = self.files[name] = _RowFile(self._staged(name), fields)
        for block in part.blocks:
            self._copier().write(block, f.fd, f.take(len(block)))
        for path, offset, length in part.pieces:
            self._copier().copy(path, offset, length, f.fd, f.take(length))
        for pid, number, length in part.held:
            told.setdefault((pid, number), []).append(f.take(length))
        f.full += part.full
        f.partial += part.partial
        if part.partial_lines and len(f.sample_lines) < HTML_PARTIAL_LIMIT:
            f.named = rows.named
            f.sample_lines += part.partial_lines[: HTML_PARTIAL_LIMIT - len(f.sample_lines)]

    def _copied(self) -> None:
        """Every row copied into place (raising the first error a copy met, or that a worker
        process left: the workers have ended by then)."""
        copier, self.copier = self.copier, None
        if copier is not None:
            copier.finish()
        if self.staging is not None and self.files:
            for failed in self.staging.glob(f"{ROWS_FAILED}*"):
                why = failed.read_text(encoding="utf-8", errors="replace").strip()
                raise OSError(errno.EIO, why or "a worker could not write its rows")

    def _staged(self, name: str) -> Path:
        if self.staging is None:
            raise RuntimeError("this report writer has finished or was abandoned")
        return self.staging / name

    def abandon(self) -> None:
        """Remove what was written (after a failure): the folder keeps what it held before."""
        with contextlib.suppress(BaseException):
            self._copied()
        for f in self.files.values():
            with contextlib.suppress(OSError):
                os.close(f.fd)
        self.files = {}
        if self.staging is not None:
            staging, self.staging = Path(self.staging), None
            # Worker processes may still be leaving row files in it (an error raised here while
            # they count): renamed first, the folder takes no new file by the name they know,
            # and the removal cannot miss one made while it runs.
            doomed = staging.with_name(staging.name + "-removed")
            try:
                os.rename(staging, doomed)
            except OSError:
                doomed = staging
            shutil.rmtree(doomed, ignore_errors=True)
        self.rows_dir = None

    def finish(self, report: Report, *, wait: bool = True) -> Path:
        """Complete the folder: CSVs under their names, summary files, charts and report.html.

        The files of an earlier report that the new ones took the place of are removed before
        this returns; with ``wait=False``, on a thread while the caller goes on (the command line
        prints its tables meanwhile): call ``wait`` before the process ends."""
        try:
            return self._finish(report, wait)
        except OSError as exc:
            self.abandon()
            raise InputError(f"cannot write the report: {exc.strerror}", path=str(self.out_dir)) from None
        except BaseException:
            self.abandon()
            raise

    def wait(self) -> None:
        """Wait for the removal of an earlier report's files that ``finish(wait=False)`` left to a thread."""
        tidying, self.tidying = self.tidying, None
        if tidying is not None:
            tidying.join()

    def _finish(self, report: Report, wait: bool = True) -> Path:
        from .charts import CHARTS, chart_captions, draw_all
        from .html import PartialSample, render_html
        from .markdown import render_markdown

        workers = 2 if self.scratch else 1  # an evaluation with worker processes: draw in two
        out_dir = self.out_dir
        data = report.to_dict()
        files: dict[str, str] = {
            "report.html": "the whole report on one page, charts embedded",
            "summary.md": "scores, SemEval table, per-type F1 and error taxonomy as Markdown tables",
            "summary.json": "the evaluation JSON (spanscore evaluate --json) plus this index of files",
        }
        notes: list[str] = []
        repaired = repairs_line(data)
        if repaired is not None:
            notes.append(repaired)
        if workers > 1 and any(name not in CHARTS for name in chart_captions(data)):
            self._copied()  # draw_all may fork: not while a thread copies
        charts, missing = draw_all(data, jobs=workers)
        if missing is not None:
            notes.append(f"The thresholds and bucket charts were not drawn: {missing}.")
        captions = {name: caption for name, caption in chart_captions(data).items() if name in charts}
        for name, image in charts.items():
            self._staged(name).write_bytes(image)
            files[name] = captions[name]

        partials: list[PartialSample] | None = None
        examples = None
        if self.files:
            for name in self.files:
                criterion = name.removesuffix(".csv")
                if name == ERRORS_FILE:
                    files[name] = "every mention that is not correct, with its error type (Type-1 to Type-5)"
                elif name == TYPE5_FILE:
                    files[name] = "the Type-5 pairs: right label, overlapping span"
                else:
                    files[name] = f"every matched pair under {criterion} ({CRITERION_HELP.get(criterion, criterion)})"
            partials = [
                PartialSample(c, self.files[f"{c}.csv"].sample, self.files[f"{c}.csv"].partial, f"{c}.csv")
                for c in PARTIAL_CRITERIA
                if f"{c}.csv" in self.files
            ]
            if report.examples is not None:
                examples = report.error_examples(HTML_EXAMPLE_LIMIT)
        else:
            notes.append(
                "This report was made without matching details, so no pair files were written; "
                "evaluate with keep_details=True for them."
            )
        # From the counts, so written with or without details.
        self._staged(CONFUSION_FILE).write_bytes(confusion_csv(data).encode("utf-8"))
        files[CONFUSION_FILE] = (
            "the type confusion matrix of the one-to-one matching: matched pairs by reference and predicted "
            "type (same span, overlapping), missed reference mentions and spurious predictions"
        )
        swept = thresholds_csv(data)
        if swept is not None:
            self._staged(THRESHOLDS_CSV).write_bytes(swept.encode("utf-8"))
            files[THRESHOLDS_CSV] = (
                "precision, recall and F1 of the scored predictions kept at each score threshold: strict (place and"
                " type) overall (type empty) and per type, and boundary (place alone); best: 1 at each curve's best"
                " threshold by F1"
            )
        # The index lists the CSVs after the charts, as the files were always listed.
        ordered = {k: v for k, v in files.items() if not k.endswith(".csv")}
        ordered.update((k, v) for k, v in files.items() if k.endswith(".csv"))
        files = ordered
        summary = dict(data)
        summary["files"] = files
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        self._staged("summary.json").write_text(text, encoding="utf-8")
        self._staged("summary.md").write_text(render_markdown(data, files, captions, notes), encoding="utf-8")
        page = render_html(
            data,
            charts={name: (image, captions[name]) for name, image in charts.items()},
            notes=notes,
            files=files,
            examples=examples,
            partials=partials,
            unit_kind=self.unit_kind if self.files else report.unit_kind,
        )
        self._staged("report.html").write_text(page, encoding="utf-8")
        self._copied()
        # Everything is written: move it into place, file by file (each move is atomic).
        for name in files:
            _move_into_place(self._staged(name), out_dir / name)
        # The staging folder now holds the files new ones took the place of: removing them frees
        # what they took on disk and in memory, about as long as writing them took.
        staging, self.staging = self.staging, None
        self.abandon()
        if wait or staging is None:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
        else:
            import threading

            self.tidying = threading.Thread(
                target=shutil.rmtree, args=(staging,), kwargs={"ignore_errors": True}, name="spanscore-report-tidy"
            )
            self.tidying.start()
        return out_dir / "report.html"


def _move_into_place(staged: Path, target: Path) -> None:
    """``os.replace(staged, target)``, or where ``target`` is a file already, the two names
    swapped (as atomic: the old file is left at ``staged``, removed with the staging folder).

    Renamed over an existing file, a file's data is written to disk at once by ext4 (its default
    ``auto_da_alloc``, for programs that replace a file without syncing it): 100 MB of CSV held
    the command a tenth of a second when a report is written again into the same folder. Swapped,
    the new files are written out in the kernel's own time, as any file written is.
    """
    try:
        is_file = stat.S_ISREG(os.lstat(target).st_mode)
    except OSError:
        is_file = False
    if not (is_file and _swap_names(staged, target)):
        os.replace(staged, target)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_renameat2: Any = None  # the C library's renameat2, once looked up; False where there is none


def _swap_names(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux's ``renameat2`` with ``RENAME_EXCHANGE``); False
    where the system or the file system cannot, and nothing changed."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            import ctypes  # the CLI has loaded it already (runtime.memory)

            with contextlib.suppress(OSError, AttributeError):  # a C library without it
                _renameat2 = ctypes.CDLL(None).renameat2
    if _renameat2 is False:
        return False
    # Any failure (an older kernel, a file system without the flag) leaves both names as they
    # were: os.replace then does the move, and reports what went wrong.
    return bool(_renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


def write_report(report: Report, out_dir: Path) -> Path:
    """Write every analysis file of ``report`` into ``out_dir`` and return the path of report.html.

    Pair files and error examples need a report made with ``keep_details=True`` (its chunks'
    matchings are rendered now); without details the scores, charts and pages are still written.
    To write a report while evaluating, without keeping details, use ``ReportWriter``.
    """
    writer = ReportWriter(out_dir, scratch=False)
    for kept in report.kept or ():
        criteria = tuple(kept.details.matchings)
        writer(
            render_rows(kept.details, kept.text, criteria, HTML_PARTIAL_LIMIT, kept.unit_offset, None, kept.unit_names)
        )
    return writer.finish(report)
