"""``compare --buckets FIELD`` (buckets named by a document field) on the Dask engine: one cluster
counts both systems side by side, as plain ``compare``, ``--per-type`` and ``--buckets length``
do, each task pairing the documents whole in its parts by their field value, and the comparison
is the local engine's whatever the chunks and partitions (documents cut by a chunk boundary,
values known only in a later piece). Runs on a real loopback ``LocalCluster``; skipped only
without Dask's ``distributed``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_compare_field_buckets import OPTIONS, corpora  # noqa: F401 (a fixture)
from test_compare_field_inner import _other
from test_dask_compare_joined import Recorded
from test_field_labels import _documents

import spanscore
from spanscore import api

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG  # noqa: E402


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
    ):
        yield cluster.scheduler_address


def _one_run_side_by_side(engine: Recorded) -> None:
    """One run of the cluster for every system (not one per system), each task's parts of both."""
    assert engine.calls == ["each"]
    assert len(engine.seen) >= 2
    for group in engine.seen:
        for results, _ in group:
            assert len(results) == 2
            # Each part sends back its two end documents' rows, never a row per document.
            assert all(part.docs is not None and part.docs.keys.shape[0] <= 2 for part in results)


@pytest.mark.parametrize(
    ("kind", "chunk", "partition_bytes"),
    [("sentences", 3000, 12_000), ("documents", 3000, 12_000), ("documents", 20_000, 16 << 20)],
)
@pytest.mark.parametrize(
    "case",
    [{"buckets": ["source"]}, {"buckets": ["year", "length"], "per_type": True}],
    ids=["source", "year-length-t"],
)
def test_field_buckets_on_one_cluster_are_the_local_comparison(
    scheduler: str,
    corpora: dict[str, tuple[Path, Path, Path]],  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    chunk: int,
    partition_bytes: int,
    case: dict[str, Any],
) -> None:
    gold, a, b = corpora[kind]
    monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
    kw: dict[str, Any] = {"reference": gold, "systems": [a, b], **case, **OPTIONS}
    engine = Recorded(scheduler=scheduler, partition_bytes=partition_bytes, rows_partition_bytes=partition_bytes)
    got = spanscore.compare(**kw, engine=engine)
    _one_run_side_by_side(engine)
    for jobs in (1, 2):
        assert got.to_dict() == spanscore.compare(**kw, jobs=jobs).to_dict(), jobs
    assert got.to_json() == spanscore.compare(**kw, jobs=1).to_json()


@pytest.mark.parametrize("seed", [1, 2])
def test_values_anywhere_in_cut_documents_on_the_cluster(
    scheduler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """-DOCSTART- documents whose value lies in any sentence (or none), cut by small chunks several
    times, a partition ending anywhere: the groups, their order and every number are the local
    engine's."""
    ref, pred = tmp_path / "ref.conll", tmp_path / "pred.conll"
    _documents(ref, pred, seed=seed, docs=160)
    other = _other(pred, tmp_path / "other.conll", seed)
    kw: dict[str, Any] = {
        "reference": ref, "systems": [pred, other], "names": ["a", "b"], "buckets": ["source", "length"],
        "per_type": True, **OPTIONS,
    }
    for chunk, size in ((300, 2_000), (700, 9_000)):
        monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
        local = spanscore.compare(**kw, jobs=1).to_dict()
        engine = Recorded(scheduler=scheduler, partition_bytes=size, rows_partition_bytes=size)
        assert spanscore.compare(**kw, engine=engine).to_dict() == local, (chunk, size)
        _one_run_side_by_side(engine)
