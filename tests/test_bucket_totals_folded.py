"""Where a chunk's bucket rows are each bucket's totals (``Wanted.scored_groups``: bucket intervals
of ``evaluate --buckets A --ci`` and every bucket comparison), the fold sums them as the chunks
come: one row per bucket, not a block per chunk kept until the end (which grew with the corpus).
The numbers are those of the blocks joined, whatever the chunks, processes or engine; rows per
document (``--buckets`` with ``--per-document``, a document field's labels) are still kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spanscore
from spanscore import api
from spanscore.engines import local
from spanscore.stages import parts
from spanscore.stages.documents import TypeRows

OPTIONS: dict[str, Any] = {"resamples": 100, "seed": 3}


@pytest.fixture(scope="module")
def corpus(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "2500", str(prefix)], check=True)
    gold, a = prefix.with_suffix(".gold"), prefix.with_suffix(".pred")
    lines = a.read_text().split("\n")
    for k in range(0, len(lines), 7):  # a second system: some labels dropped
        if lines[k].endswith("-LOC"):
            lines[k] = lines[k].rsplit(" ", 1)[0] + " O"
    b = prefix.with_suffix(".alt")
    b.write_text("\n".join(lines))
    return gold, a, b


def _joined(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fold as it was: every chunk's block of totals kept and joined at the end."""
    monkeypatch.setattr(local, "totals_of", lambda wanted: frozenset())
    monkeypatch.setattr("spanscore.analysis.buckets.totals_of", lambda wanted: frozenset())


def test_the_fold_sums_totals_and_keeps_rows_per_document() -> None:
    names = ("1", "2", "3")
    folder = parts.Folder(totals=frozenset({"length"}))
    rng = np.random.default_rng(1)
    blocks = []
    for _ in range(40):
        # A block of totals as a chunk gives it (``_bucket_totals``), and one as a Dask partition
        # folds its chunks' (several rows per bucket).
        k = int(rng.integers(1, 4))
        stats = rng.integers(0, 50, size=(3 * k, 5))
        rows = TypeRows(np.zeros(3 * k, dtype=np.int64), np.tile(np.arange(3), k), names, stats)
        blocks.append(rows)
        folder._keep(_part({"length": rows, "per_doc": rows}), 7)
    held = folder.buckets["length"]
    assert len(held) == 1 and held[0][0].keys.tolist() == [0, 0, 0] and held[0][0].type_index.tolist() == [0, 1, 2]
    for b in range(3):
        expected = sum(r.stats[r.type_index == b].sum(axis=0) for r in blocks)
        assert held[0][0].stats[b].tolist() == expected.tolist()
    assert len(folder.buckets["per_doc"]) == 40  # not totals: every block kept, with its offset


def test_totals_of_other_buckets_do_not_add_up() -> None:
    folder = parts.Folder(totals=frozenset({"length"}))
    one = TypeRows(np.zeros(2, dtype=np.int64), np.arange(2), ("1", "2"), np.ones((2, 3), dtype=np.int64))
    other = TypeRows(np.zeros(2, dtype=np.int64), np.arange(2), ("1", "3"), np.ones((2, 3), dtype=np.int64))
    folder._keep(_part({"length": one}), 0)
    with pytest.raises(ValueError, match="do not add up"):
        folder._keep(_part({"length": other}), 0)


def _part(buckets: dict[str, TypeRows]) -> parts.PartResult:
    """A chunk's result of these bucket rows (its counts are not folded here: ``Folder._keep``)."""
    return parts.PartResult(counts=None, units=0, doc_advance=0, buckets=buckets)  # type: ignore[arg-type]


@pytest.mark.parametrize(("chunk", "jobs"), [(3000, 1), (3000, 2), (1 << 19, 2)])
def test_bucket_intervals_are_those_of_the_blocks_joined(
    corpus: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, chunk: int, jobs: int
) -> None:
    gold, a, _ = corpus
    kw: dict[str, Any] = {
        "reference": gold, "predicted": a, "buckets": ["length", "sentence-length"], "ci": 0.95, "chunk_bytes": chunk,
    }
    got = spanscore.evaluate(**kw, jobs=jobs, **OPTIONS)
    assert got.bucket_rows is not None
    for name, rows in got.bucket_rows.items():
        assert rows.keys.shape[0] == len(rows.names), name  # one row per bucket, whatever the chunks
    with monkeypatch.context() as m:
        _joined(m)
        before = spanscore.evaluate(**kw, jobs=jobs, **OPTIONS)
    assert before.bucket_rows is not None
    if chunk < 1 << 19:
        assert max(r.keys.shape[0] for r in before.bucket_rows.values()) > 4 * 4  # a block per chunk
    assert got.to_json() == before.to_json()


@pytest.mark.parametrize(("chunk", "jobs"), [(3000, 1), (3000, 2)])
def test_bucket_comparisons_are_those_of_the_blocks_joined(
    corpus: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, chunk: int, jobs: int
) -> None:
    gold, a, b = corpus
    monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
    kw: dict[str, Any] = {
        "reference": gold, "systems": [a, b], "buckets": ["length"], "per_type": True, "trials": 100, **OPTIONS,
    }
    got = spanscore.compare(**kw, jobs=jobs)
    for report in got.reports:
        assert report.bucket_rows is not None and report.bucket_rows["length"].keys.shape[0] == 4
    with monkeypatch.context() as m:
        _joined(m)
        before = spanscore.compare(**kw, jobs=jobs)
    assert before.reports[0].bucket_rows is not None
    assert before.reports[0].bucket_rows["length"].keys.shape[0] > 4 * 4
    assert got.to_json() == before.to_json()
