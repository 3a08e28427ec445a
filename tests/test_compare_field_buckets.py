"""``compare`` with buckets named by a document field pairs each document's rows into its value's
joint histogram as the parts come back (the field read once as the reference streams), as it
pairs buckets of attributes: the same comparison, and each system's same bucket table, as the
whole per-document tables grouped (each system evaluated with ``documents=True``, every group's
joint histogram made of them), whatever the chunks, processes or engine; and what the pairing
holds follows the distinct rows, not the documents."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_field_groupings_state import _tagged

import spanscore
from spanscore import api
from spanscore.analysis import buckets as bucket_scores
from spanscore.analysis import significance
from spanscore.errors import OptionError
from spanscore.programs.samples import write_samples

OPTIONS: dict[str, Any] = {"resamples": 120, "trials": 120, "seed": 5}


@pytest.fixture(scope="module")
def corpora(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, Path]]:
    """Tagged references (``# source``, ``# year``), as sentences and as documents of seven
    sentences, each with two systems: the synthetic prediction, and it with one label in twelve
    made ``O``."""
    folder = tmp_path_factory.mktemp("compare_fields")
    out = {}
    for kind, more in (("sentences", []), ("documents", ["--docs-every", "7"])):
        subprocess.run([sys.executable, str(synth_tool), "1200", str(folder / kind), *more], check=True)
        gold = folder / f"{kind}.bygold"
        _tagged(folder / f"{kind}.gold", gold, seed=3, docstart=kind == "documents")
        rng = random.Random(4)
        lines = []
        for line in (folder / f"{kind}.pred").read_text(encoding="utf-8").splitlines():
            cells = line.split(" ")
            if len(cells) == 2 and not line.startswith("-DOCSTART-") and rng.random() < 1 / 12:
                line = f"{cells[0]} O"
            lines.append(line)
        other = folder / f"{kind}.other"
        other.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out[kind] = (gold, folder / f"{kind}.pred", other)
    return out


def _whole(ref: Path, systems: list[Path], names: list[str], buckets: list[str], per_type: bool) -> Any:
    """The comparison from every system's whole per-document table (its rows per field value
    read from the whole table, ``buckets.field_rows``), every group's joint histogram made of them."""
    reports = [
        spanscore.evaluate(
            reference=ref, predicted=s, documents=True, document_types=per_type, buckets=buckets,
            keep_details=False, empty_documents="skip",
        )
        for s in systems
    ]
    docs = [r.documents for r in reports if r.documents is not None]
    joint = significance.paired_histogram(docs, names, reports[0].counts.credit)
    resampling = significance.Resampling(level=0.95, **OPTIONS)
    tests, groups = api._compared_groups(reports, names, per_type, resampling, joint)
    return reports, tests, groups


CASES = [
    {"buckets": ["source"]},
    {"buckets": ["year", "length"], "per_type": True},
    {"buckets": ["length", "source", "sentence-length", "year"]},
]


@pytest.mark.parametrize("kind", ["sentences", "documents"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join([*c["buckets"], "t" if c.get("per_type") else ""]))
def test_the_streamed_comparison_is_the_whole_tables(
    corpora: dict[str, tuple[Path, Path, Path]], kind: str, case: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, a, b = corpora[kind]
    names = ["a", "b"]
    got = spanscore.compare(reference=gold, systems=[a, b], names=names, **case, **OPTIONS)
    reports, tests, groups = _whole(gold, [a, b], names, case["buckets"], bool(case.get("per_type")))
    assert got.groups == groups and got.groups[case["buckets"][0]]
    assert got.tests.intervals == tests.intervals and got.tests.comparisons == tests.comparisons
    for mine, whole in zip(got.reports, reports, strict=True):
        assert mine.documents is None  # no system's per-document table
        assert mine.buckets == whole.buckets and list(mine.buckets or {}) == list(whole.buckets or {})
    text = json.dumps(got.to_dict(), sort_keys=True)
    for chunk, jobs in ((1500, 1), (1500, 2), (9000, 2)):
        monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
        again = spanscore.compare(reference=gold, systems=[a, b], names=names, **case, **OPTIONS, jobs=jobs)
        assert json.dumps(again.to_dict(), sort_keys=True) == text


def test_jsonl_documents_by_their_id_and_an_attribute(tmp_path: Path) -> None:
    write_samples(tmp_path)
    gold, systems = tmp_path / "gold.jsonl", [tmp_path / "pred.jsonl", tmp_path / "gold.jsonl"]
    options: dict[str, Any] = {"reference": gold, "systems": systems, "names": ["p", "g"], "format": "jsonl"}
    got = spanscore.compare(**options, buckets=["id", "length"], per_type=True, **OPTIONS)
    reports = [
        spanscore.evaluate(
            reference=gold, predicted=s, format="jsonl", documents=True, document_types=True,
            buckets=["id", "length"], keep_details=False, empty_documents="skip",
        )
        for s in systems
    ]
    docs = [r.documents for r in reports if r.documents is not None]
    joint = significance.paired_histogram(docs, ["p", "g"], reports[0].counts.credit)
    resampling = significance.Resampling(level=0.95, **OPTIONS)
    _, groups = api._compared_groups(reports, ["p", "g"], True, resampling, joint)
    assert got.groups == groups
    ids = [json.loads(line)["id"] for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [b["bucket"] for b in got.groups["id"]] == ids


def test_a_field_no_document_has_is_refused(corpora: dict[str, tuple[Path, Path, Path]]) -> None:
    gold, a, b = corpora["sentences"]
    with pytest.raises(OptionError, match=r"'sourse' is not an attribute .* no document of .* their fields are"):
        spanscore.compare(reference=gold, systems=[a, b], buckets=["sourse"], **OPTIONS)


def test_the_dask_engine_gives_the_same_comparison(corpora: dict[str, tuple[Path, Path, Path]]) -> None:
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    gold, a, b = corpora["documents"]
    kw: dict[str, Any] = {"reference": gold, "systems": [a, b], "buckets": ["year", "length"], "per_type": True}
    local = spanscore.compare(**kw, **OPTIONS).to_dict()
    engine = DaskEngine(n_workers=2, partition_bytes=20000)
    assert spanscore.compare(**kw, **OPTIONS, engine=engine).to_dict() == local


def test_what_the_pairing_holds_follows_the_distinct_rows(
    corpora: dict[str, tuple[Path, Path, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same 40 documents 2 and 40 times over: what the pairing holds (every histogram's rows,
    merged and waiting, and the rows not yet paired) stays within a bound of the distinct rows
    and the chunks in flight, at 1,600 documents as at 80, fewer rows than documents."""
    from spanscore.stages import documents

    pile = 16
    monkeypatch.setattr(documents, "PILE_ROWS", pile)
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 3000)
    gold, a, b = corpora["documents"]
    parts = [p.read_text(encoding="utf-8").split("-DOCSTART-")[1:41] for p in (gold, a, b)]
    piles: list[Any] = []
    streams: dict[int, Any] = {}
    peak = 0
    init, take = bucket_scores._Pile.__init__, bucket_scores._Stream.take

    def watched_init(self: Any, fields: tuple[str, ...]) -> None:
        init(self, fields)
        piles.append(self)

    def held() -> int:
        rows = sum(int(p.merged.rows.shape[0]) + sum(int(w.rows.shape[0]) for w in p.waiting) for p in piles)
        pending = sum(int(s.rows.keys.shape[0]) + int(s.group_keys.shape[0]) for s in streams.values())
        return rows + pending

    def watched_take(self: Any, below: int) -> Any:
        nonlocal peak
        streams[id(self)] = self
        peak = max(peak, held())
        return take(self, below)

    monkeypatch.setattr(bucket_scores._Pile, "__init__", watched_init)
    monkeypatch.setattr(bucket_scores._Stream, "take", watched_take)
    for copies in (2, 40):
        piles.clear()
        streams.clear()
        peak = 0
        files = []
        for name, docs in zip(("r", "a", "b"), parts, strict=True):
            path = tmp_path / f"{name}{copies}"
            path.write_text("".join("-DOCSTART-" + d for d in docs * copies), encoding="utf-8")
            files.append(path)
        got = spanscore.compare(reference=files[0], systems=files[1:], buckets=["source", "year"], **OPTIONS)
        assert got.to_dict()["documents"] == 40 * copies
        assert all(r.documents is None for r in got.reports)
        live = [p for p in piles if p.merge().rows.shape[0]]  # (a pile made and not kept is empty)
        histograms = len(live)
        distinct = sum(int(p.merged.rows.shape[0]) for p in live)
        assert distinct <= 41 * histograms  # no more distinct rows than distinct documents (and zero) per group
        in_flight = 2 * 3 * 40  # a few parts' documents per stream, at most a chunk's worth each
        bound = 3 * distinct + histograms * (pile + 10) + in_flight
        assert 0 < peak <= bound, (peak, bound)
        assert copies == 2 or peak < 40 * copies  # fewer rows than documents: no row per document
