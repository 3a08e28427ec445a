"""``--per-document FILE`` beside ``--by`` or a bucket by a document field writes each document's
row as the parts come back (``presentation.documents.DocumentWriter``), in corpus order: the same
bytes as the whole per-document table written at the end (``Report.document_rows``), whatever the
chunks, processes or engine; the report and the writer hold no row per document; the file is
complete or absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_discontinuous import GOLD, PRED, write_brat
from test_field_labels import _documents

import spanscore
from spanscore.errors import InputError
from spanscore.presentation.documents import DocumentWriter
from spanscore.stages.counts import credit_label
from spanscore.stages.scoring import Scoring


def _whole(ref: Path, pred: Path, **kw: Any) -> bytes:
    """The rows of the whole per-document table, as the command line wrote them before."""
    report = spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, documents=True, **kw)
    return b"".join(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in report.document_rows())


def _streamed(ref: Path, pred: Path, out: Path, **kw: Any) -> spanscore.Report:
    scoring = kw.get("scoring") or Scoring()
    writer = DocumentWriter(out, zero_division=scoring.zero_division, credit=credit_label(scoring.credit))
    try:
        report = spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, document_sink=writer, **kw)
    except BaseException:
        writer.abandon()
        raise
    writer.finish(report.counts.extra)
    return report


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("sink")
    out = {}
    for kind, seed in (("documents", 4), ("more", 5)):
        ref, pred = folder / f"{kind}.ref", folder / f"{kind}.pred"
        _documents(ref, pred, seed=seed, docs=50)
        out[kind] = (ref, pred)
    # Sentences, each with its comment lines before it.
    ref, pred = folder / "sentences.ref", folder / "sentences.pred"
    for src, dst in zip(out["documents"], (ref, pred), strict=True):
        lines = src.read_text(encoding="utf-8").split("\n")
        dst.write_text("\n".join(line for line in lines if "DOCSTART" not in line), encoding="utf-8")
    out["sentences"] = (ref, pred)
    return out


@pytest.mark.parametrize("kind", ["documents", "sentences"])
@pytest.mark.parametrize("kw", [{"by": "source"}, {"buckets": ["source"], "ci": 0.9, "resamples": 30}])
def test_streamed_rows_are_the_whole_tables(
    corpora: dict[str, tuple[Path, Path]], tmp_path: Path, kind: str, kw: dict[str, Any]
) -> None:
    ref, pred = corpora[kind]
    expected = _whole(ref, pred, **kw)
    whole = spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, documents=True, **kw)
    for chunk in (60, 500, 1 << 19):
        for jobs in (1, 2):
            out = tmp_path / f"rows-{chunk}-{jobs}.jsonl"
            report = _streamed(ref, pred, out, chunk_bytes=chunk, jobs=jobs, **kw)
            assert out.read_bytes() == expected, (chunk, jobs)
            assert report.documents is None  # no per-document table kept
            assert report.to_dict() == whole.to_dict()  # the same report, macro over documents included


def test_the_dask_engine_writes_the_same_rows(
    corpora: dict[str, tuple[Path, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition's many documents come at once: written a few rows at a time (7 here)."""
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine
    from spanscore.presentation import documents

    monkeypatch.setattr(documents, "_BLOCK", 7)

    ref, pred = corpora["documents"]
    out = tmp_path / "rows.jsonl"
    _streamed(ref, pred, out, by="source", chunk_bytes=400, engine=DaskEngine(n_workers=2, partition_bytes=3000))
    assert out.read_bytes() == _whole(ref, pred, by="source")


def test_the_writer_holds_one_document_at_most(corpora: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    """Rows go to the file as their parts come: what waits is the last document, which the next
    part may go on (the parts waiting for a field value are the fold's, bounded elsewhere)."""
    ref, pred = corpora["documents"]
    waiting: list[int] = []
    add = DocumentWriter.add

    def watched(self: DocumentWriter, docs: Any, offset: int, discontinuous: Any = None) -> None:
        add(self, docs, offset, discontinuous)
        waiting.append(int(self.queue.keys.shape[0]))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DocumentWriter, "add", watched)
        _streamed(ref, pred, tmp_path / "rows.jsonl", by="source", chunk_bytes=300)
    assert len(waiting) > 20 and max(waiting) <= 1


def test_a_failed_run_leaves_the_file_as_it_was(corpora: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    """A bad line near the end of the reference: the command fails with one line and exit status
    2, after rows were written, and the file named is what it was (absent, or its old bytes), with
    nothing left beside it."""
    ref, pred = corpora["documents"]
    bad = tmp_path / "bad.ref"
    text = ref.read_text(encoding="utf-8").split("\n")
    text[-8] = "a b c d e f"  # a token line of six columns among lines of two
    bad.write_text("\n".join(text), encoding="utf-8")
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "rows.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(spanscore.__file__).parents[1])}
    for before in (None, b"old rows\n"):
        if before is not None:
            target.write_bytes(before)
        run = subprocess.run(
            [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(bad), str(pred), "--by", "source",
             "--per-document", str(target), "--chunk-size", "300", "--jobs", "1", "--json"],
            capture_output=True, text=True, env=env,
        )
        assert run.returncode == 2, run.stderr
        assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert sorted(p.name for p in folder.iterdir()) == ([] if before is None else ["rows.jsonl"])
        if before is not None:
            assert target.read_bytes() == before
    with pytest.raises(InputError):
        _streamed(bad, pred, target, by="source", chunk_bytes=300)
    assert sorted(p.name for p in folder.iterdir()) == ["rows.jsonl"]


def test_rows_from_the_whole_table_get_their_discontinuous_figures(tmp_path: Path) -> None:
    """Without a grouping the rows stream too (BRAT, whose discontinuous mentions give each row
    its figures, added once the corpus is known to have some): the rows of the whole table's
    ``Report.document_rows``."""
    from spanscore.presentation import documents

    gold, pred = write_brat(tmp_path / "gold", GOLD), write_brat(tmp_path / "pred", PRED)
    out = tmp_path / "rows.jsonl"
    expected = _whole(gold, pred, format="brat")
    assert b'"discontinuous"' in expected
    report = _streamed(gold, pred, out, format="brat")
    assert report.documents is None
    assert out.read_bytes() == expected
    with pytest.MonkeyPatch.context() as mp:  # the figures given two rows at a time
        mp.setattr(documents, "_BLOCK", 2)
        _streamed(gold, pred, out, format="brat")
    assert out.read_bytes() == expected


# ``--per-document`` alone (and with --ci): each part's rows go to the writer as they come
# (``engines.SinkEngine``), then only the additive state is kept.


@pytest.mark.parametrize("kind", ["documents", "sentences"])
@pytest.mark.parametrize("kw", [{}, {"ci": 0.9, "resamples": 30}, {"buckets": ["length", "sentence-length"]}])
def test_plain_per_document_rows_stream(
    corpora: dict[str, tuple[Path, Path]], tmp_path: Path, kind: str, kw: dict[str, Any]
) -> None:
    ref, pred = corpora[kind]
    expected = _whole(ref, pred, **kw)
    whole = spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, documents=True, **kw)
    for chunk in (60, 600, 7000, 1 << 19):
        for jobs in (1, 2):
            out = tmp_path / f"rows-{chunk}-{jobs}.jsonl"
            report = _streamed(ref, pred, out, chunk_bytes=chunk, jobs=jobs, **kw)
            assert out.read_bytes() == expected, (chunk, jobs)
            assert report.documents is None and report.document_state is not None
            assert report.to_dict() == whole.to_dict()


def test_plain_rows_on_the_dask_engine(
    corpora: dict[str, tuple[Path, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine
    from spanscore.presentation import documents

    monkeypatch.setattr(documents, "_BLOCK", 7)
    ref, pred = corpora["documents"]
    out = tmp_path / "rows.jsonl"
    engine = DaskEngine(n_workers=2, partition_bytes=3000)
    report = _streamed(ref, pred, out, ci=0.9, resamples=30, chunk_bytes=400, engine=engine)
    assert out.read_bytes() == _whole(ref, pred, ci=0.9, resamples=30)
    whole = spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, documents=True, ci=0.9, resamples=30)
    assert report.to_dict() == whole.to_dict()


def _held_rows(ref: Path, pred: Path, out: Path, **kw: Any) -> int:
    """The most per-document rows the client held at once: the writer's queue, and every
    per-document table the fold was handed (whole, or as parts waiting to be joined)."""
    from spanscore.stages import parts

    held: list[int] = []
    add, fold_add = DocumentWriter.add, parts.Folder.add

    def watched(self: DocumentWriter, docs: Any, offset: int, discontinuous: Any = None) -> None:
        add(self, docs, offset, discontinuous)
        held.append(int(self.queue.keys.shape[0]))

    def folded(self: Any, part: Any) -> None:
        fold_add(self, part)
        held.append(sum(int(d.keys.shape[0]) for d, _ in self.docs))
        # A bucket's rows: its totals, one row a part (per document and bucket before).
        for pieces in self.buckets.values():
            held.append(max(int(np.count_nonzero(r.keys)) for r, _ in pieces))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DocumentWriter, "add", watched)
        mp.setattr(parts.Folder, "add", folded)
        _streamed(ref, pred, out, chunk_bytes=300, jobs=1, **kw)
    assert held
    return max(held)


@pytest.mark.parametrize("kw", [{}, {"ci": 0.9, "resamples": 20}, {"buckets": ["length"]}])
def test_plain_rows_held_do_not_grow_with_the_corpus(tmp_path: Path, kw: dict[str, Any]) -> None:
    """80 and 1,600 documents: the client holds the same few rows (the old code kept the whole
    table: 1,600 rows at the end)."""
    held = []
    for docs in (80, 1600):
        ref, pred = tmp_path / f"{docs}.ref", tmp_path / f"{docs}.pred"
        _documents(ref, pred, seed=11, docs=docs)
        held.append(_held_rows(ref, pred, tmp_path / f"{docs}.jsonl", **kw))
    assert held[1] <= 2 and held[0] <= 2, held


def test_a_failed_plain_run_leaves_the_file_as_it_was(corpora: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    ref, pred = corpora["documents"]
    bad = tmp_path / "bad.ref"
    text = ref.read_text(encoding="utf-8").split("\n")
    text[-8] = "a b c d e f"
    bad.write_text("\n".join(text), encoding="utf-8")
    target = tmp_path / "out" / "rows.jsonl"
    target.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(spanscore.__file__).parents[1])}
    for before in (None, b"old rows\n"):
        if before is not None:
            target.write_bytes(before)
        for extra in ([], ["--ci", "0.9", "--resamples", "20"]):
            run = subprocess.run(
                [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(bad), str(pred), "--per-document",
                 str(target), "--chunk-size", "300", "--jobs", "1", "--json", *extra],
                capture_output=True, text=True, env=env,
            )
            assert run.returncode == 2, run.stderr
            assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1, run.stderr
            names = sorted(p.name for p in target.parent.iterdir())
            assert names == ([] if before is None else ["rows.jsonl"])
            if before is not None:
                assert target.read_bytes() == before
