"""Every statistic of each document written to a JSONL file as the parts are counted
(``spanscore evaluate --per-document FILE``), so that the rows held are those of the parts in
flight, never the corpus's.

``DocumentWriter`` is the sink ``evaluate(document_sink=...)`` hands each counted part's
per-document rows to, in corpus order (a document a chunk boundary cut in two waits for its last
piece); ``finish`` writes the last ones and puts the file in place (it is written beside it and
moved there, so it is complete or absent), ``abandon`` removes it. The rows are those of
``Report.document_rows``, byte for byte.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..errors import InputError
from ..io.files import mode_for
from ..stages.documents import DocCounts, RowQueue, document_rows

_BLOCK = 2048  # rows made at a time (written, or given their figures)


class DocumentWriter:
    """Per-document rows written to ``path`` as they come (``add``), in corpus order."""

    def __init__(self, path: str | Path, *, zero_division: float, credit: str) -> None:
        self.path = Path(path)
        self.zero_division = zero_division
        self.credit = credit
        self.queue = RowQueue()
        self.written = 0
        self.fields: tuple[str, ...] | None = None
        self.unit = "document"
        # The discontinuous figures' counts of the documents that have any, by global key until
        # their rows are written, then by place in the file: the rows carry their figures only
        # where the corpus has a discontinuous mention, known at the end, so they are added then.
        self.pending: list[DocCounts] = []
        self.placed: list[DocCounts] = []
        # Written beside the file under a hidden name, and moved there once complete.
        folder = self.path.parent if str(self.path.parent) else Path(".")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part", dir=folder)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=str(self.path)) from None
        self.scratch = Path(name)
        self.handle: BinaryIO = os.fdopen(handle, "wb")

    def add(self, docs: DocCounts, offset: int, discontinuous: DocCounts | None = None) -> None:
        """A part's per-document rows, whose keys start at ``offset``, after every earlier part's."""
        if self.fields is None:
            self.fields, self.unit = docs.fields, docs.unit
        if discontinuous is not None and discontinuous.keys.shape[0]:
            self.pending.append(DocCounts(discontinuous.keys + offset, discontinuous.stats, discontinuous.fields))
        if not docs.keys.shape[0]:
            return
        self.queue.append(docs.keys + offset, docs.stats.astype(np.int64), docs.ids)
        self._write(self.queue.bound)

    def _write(self, below: int) -> None:
        keys, stats, ids = self.queue.take(below)
        if stats is None or not keys.shape[0] or self.fields is None:
            return
        # A few thousand rows at a time: a row's dict and its JSON take some 100 times its
        # statistics' bytes, and a Dask partition brings tens of thousands of documents at once.
        for a in range(0, keys.shape[0], _BLOCK):
            b = min(keys.shape[0], a + _BLOCK)
            block = DocCounts(keys[a:b], stats[a:b], self.fields, None if ids is None else ids[a:b], self.unit)
            lines = []
            for i, row in enumerate(document_rows(block, self.zero_division, self.credit)):
                row[self.unit] = self.written + a + i + 1  # its place in the corpus
                lines.append(json.dumps(row, ensure_ascii=False).encode("utf-8"))
            self.handle.write(b"\n".join(lines) + b"\n")
        last, kept = int(keys[-1]), []
        for rows in self.pending:
            done = rows.keys <= last
            if done.any():
                places = np.searchsorted(keys, rows.keys[done]) + self.written
                self.placed.append(DocCounts(places.astype(np.int64), rows.stats[done], rows.fields))
            if not done.all():
                kept.append(DocCounts(rows.keys[~done], rows.stats[~done], rows.fields))
        self.pending = kept
        self.written += keys.shape[0]

    def finish(self, extra: dict[str, int] | None = None) -> Path:
        """The last rows written and the file put in place; ``extra``: the corpus's
        ``Counts.extra``, whose discontinuous figures, where there are any, every row then gets."""
        try:
            self.queue.close()
            self._write(self.queue.bound)
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            if extra is not None and "discontinuous.reference" in extra:
                self._add_figures()
            os.chmod(self.scratch, mode_for(self.path))
            os.replace(self.scratch, self.path)
        except BaseException:
            self.abandon()
            raise
        return self.path

    def _add_figures(self) -> None:
        """Each row's discontinuous figures (``Report.document_rows``), the file read again a
        row at a time."""
        from ..analysis.discontinuous import document_figures

        # A document cut by a chunk boundary has a row from each piece: added up, as the fold does.
        rows = DocCounts.join([(d, 0) for d in self.placed]) if self.placed else None
        done = self.scratch.with_suffix(".figures")
        with open(self.scratch, "rb") as src, open(done, "wb") as dst:
            at = 0
            while True:
                lines = list(itertools.islice(src, _BLOCK))
                if not lines:
                    break
                places = np.arange(at, at + len(lines), dtype=np.int64)
                out = []
                for line, found in zip(lines, document_figures(rows, places, self.zero_division), strict=True):
                    row = json.loads(line)
                    row["discontinuous"] = found
                    out.append(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
                dst.write(b"".join(out))
                at += len(lines)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(done, self.scratch)

    def abandon(self) -> None:
        """The file left as it was (nothing written in its place)."""
        self.handle.close()
        self.scratch.unlink(missing_ok=True)
        self.scratch.with_suffix(".figures").unlink(missing_ok=True)
