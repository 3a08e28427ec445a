"""Buckets named by a document field, and ``--by`` beside buckets of any kind, keep each group's
per-document statistics as additive state (a histogram per group, folded as parts come back),
the field read as the reference streams: the same report, intervals included, as grouping the
whole per-document table (``documents=True`` still does that), whatever the chunks, processes or
engine; and what the fold holds follows the distinct rows, not the documents."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.stages.documents import DocState, Histogram

HIPE = Path(__file__).parent / "data" / "real" / "datasets" / "hipe2022-ajmc" / "HIPE-2022-v2.1-ajmc-dev-en.tsv"
VALUES = ("news", "web", "talk")


def _tagged(src: Path, dst: Path, *, seed: int, docstart: bool) -> None:
    """``src`` with ``# source = ...`` and ``# year = ...`` lines opening each document (or
    sentence), about one in ten left without them."""
    rng = random.Random(seed)
    out = []
    for block in src.read_text(encoding="utf-8").split("\n\n"):
        if not block.strip():
            continue
        tag = "" if rng.random() < 0.1 else f"# source = {rng.choice(VALUES)}\n# year = {rng.choice([2019, 2020])}\n"
        if docstart and block.startswith("-DOCSTART-"):
            out += [block, tag.rstrip("\n") or "# other = x"]
        elif docstart:
            out.append(block)
        else:
            out.append(tag + block)
    dst.write_text("\n\n".join(out) + "\n\n", encoding="utf-8")


@pytest.fixture(scope="module")
def corpora(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("fields")
    subprocess.run([sys.executable, str(synth_tool), "1500", str(folder / "s")], check=True)
    subprocess.run([sys.executable, str(synth_tool), "1500", str(folder / "d"), "--docs-every", "7"], check=True)
    _tagged(folder / "s.gold", folder / "s.bygold", seed=1, docstart=False)
    _tagged(folder / "d.gold", folder / "d.bygold", seed=2, docstart=True)
    return {
        "sentences": (folder / "s.bygold", folder / "s.pred"),
        "documents": (folder / "d.bygold", folder / "d.pred"),
    }


def _json(report: spanscore.Report) -> str:
    return json.dumps(report.to_dict(), sort_keys=True, default=str)


def _run(ref: Path, pred: Path, **kw: Any) -> spanscore.Report:
    return spanscore.evaluate(reference=ref, predicted=pred, keep_details=False, **kw)


CASES = [
    {"buckets": ["source"]},
    {"buckets": ["year", "length"]},
    {"by": "source", "buckets": ["length"]},
    {"by": "source", "buckets": ["year"]},
    {"by": "year", "buckets": ["length", "source", "year"]},
]


@pytest.mark.parametrize("kind", ["sentences", "documents"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join([c.get("by") or "", *c["buckets"]]))
@pytest.mark.parametrize("ci", [None, 0.95])
def test_state_gives_the_report_of_the_whole_table(
    corpora: dict[str, tuple[Path, Path]], kind: str, case: dict[str, Any], ci: float | None
) -> None:
    ref, pred = corpora[kind]
    more = {} if ci is None else {"ci": ci, "resamples": 150, "seed": 5}
    streamed = _run(ref, pred, **case, **more)
    rows = _run(ref, pred, **case, documents=True, **more)  # the whole per-document table, grouped
    assert streamed.documents is None and rows.documents is not None
    assert streamed.buckets == rows.buckets and streamed.buckets
    assert streamed.breakdown == rows.breakdown
    assert streamed.intervals == rows.intervals
    small = _run(ref, pred, **case, **more, jobs=2, chunk_bytes=6000)
    assert _json(small) == _json(streamed)
    # Independent of spanscore: each field bucket's reference mentions, counted from the file's
    # comment lines and its B- labels.
    for field in (f for f in case["buckets"] if f != "length"):
        table = {b["bucket"]: b["reference_mentions"] for b in streamed.buckets[field]}
        assert table == _mentions_by_field(ref, field, docstart=kind == "documents")


def _mentions_by_field(path: Path, field: str, *, docstart: bool) -> dict[str, int]:
    out: Counter[str] = Counter()
    text = path.read_text(encoding="utf-8")
    units = re.split(r"^-DOCSTART-.*$", text, flags=re.M) if docstart else text.split("\n\n")
    for unit in units:
        if not re.search(r"^(?!#)\S", unit, flags=re.M):
            continue  # no sentence: not a document the counts hold
        found = re.search(rf"^# {re.escape(field)} = (.*)$", unit, flags=re.M)
        out[found.group(1) if found else "(missing)"] += len(re.findall(r"\sB-\S+$", unit, flags=re.M))
    return dict(out)


def test_the_dask_engine_gives_the_same_report(corpora: dict[str, tuple[Path, Path]]) -> None:
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    ref, pred = corpora["documents"]
    kw: dict[str, Any] = {"by": "source", "buckets": ["length", "year"], "ci": 0.95, "resamples": 120}
    local = _json(_run(ref, pred, **kw))
    engine = DaskEngine(n_workers=2, partition_bytes=40000)
    assert _json(_run(ref, pred, engine=engine, chunk_bytes=10000, **kw)) == local


@pytest.mark.filterwarnings("ignore::spanscore.analysis.reliability.FewUnitsWarning")
def test_a_real_corpus_bucketed_by_its_document_fields(tmp_path: Path) -> None:
    """HIPE-2022 (ajmc): a header line, its documents' fields in comments; a prediction with
    labels changed."""
    rng = random.Random(11)
    labels = ["O", "B-pers", "I-pers", "B-work", "I-work", "B-loc"]
    out = []
    for line in HIPE.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if len(cells) > 2 and not line.startswith(("#", "TOKEN")) and rng.random() < 0.1:
            cells[1] = rng.choice(labels)
        out.append("\t".join(cells))
    pred = tmp_path / "pred.tsv"
    pred.write_text("\n".join(out) + "\n", encoding="utf-8")
    reading = spanscore.Reading(header=True, label_column=1)
    kw: dict[str, Any] = {
        "reading": reading,
        "by": "ajmc:title",
        "buckets": ["hipe2022:document_id", "length"],
        "ci": 0.95,
        "resamples": 200,
    }
    streamed = _run(HIPE, pred, **kw)
    rows = _run(HIPE, pred, documents=True, **kw)
    assert streamed.buckets == rows.buckets and streamed.breakdown == rows.breakdown
    assert _json(_run(HIPE, pred, chunk_bytes=4000, jobs=2, **kw)) == _json(streamed)
    # Independent of spanscore: each document's mentions, from its own lines.
    expected: dict[str, int] = {}
    doc = ""
    for line in HIPE.read_text(encoding="utf-8").splitlines()[1:]:
        found = re.match(r"# hipe2022:document_id = (\S+)$", line)
        if found:
            doc = found.group(1)
        elif not line.startswith("#") and line.count("\t") > 1 and line.split("\t")[1].startswith("B-"):
            expected[doc] = expected.get(doc, 0) + 1
    assert streamed.buckets is not None
    got = {b["bucket"]: b["reference_mentions"] for b in streamed.buckets["hipe2022:document_id"]}
    assert got == {d: expected.get(d, 0) for d in got} and set(expected) <= set(got)


def _held(state: DocState | None) -> int:
    """Rows the state holds: every histogram's (piled-up ones too) and its open documents'."""
    if state is None:
        return 0
    hists: list[Histogram] = [state.closed, *(state.types or {}).values()]
    rows = sum(int(h.rows.shape[0]) + sum(int(p.rows.shape[0]) for p in h.pending) for h in hists)
    edges = state.edges
    return rows + int(edges.keys.shape[0]) + (0 if edges.type_rows is None else int(edges.type_rows.keys.shape[0]))


@pytest.mark.parametrize(
    "kw",
    [{"buckets": ["source"]}, {"by": "source", "buckets": ["length", "year"], "ci": 0.9, "resamples": 50}],
    ids=["field", "by-length-year-ci"],
)
def test_what_the_fold_holds_follows_the_distinct_rows(
    corpora: dict[str, tuple[Path, Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kw: dict[str, Any]
) -> None:
    """The same 40 documents 2 and 40 times over: the fold holds no per-document rows, and its
    state (histograms, with small piles) at most three times the distinct rows of its finished
    histograms and a pile of each, at 1,600 documents as at 80, fewer rows than documents."""
    from spanscore.engines import local
    from spanscore.stages import documents
    from spanscore.stages.parts import Folder

    pile = 16
    monkeypatch.setattr(documents, "PILE_ROWS", pile)
    ref, pred = corpora["documents"]
    docs_ref = ref.read_text(encoding="utf-8").split("-DOCSTART-")[1:41]
    docs_pred = pred.read_text(encoding="utf-8").split("-DOCSTART-")[1:41]
    finished: list[DocState] = []
    for copies in (2, 40):
        finished.clear()
        r, p = tmp_path / f"r{copies}", tmp_path / f"p{copies}"
        r.write_text("".join("-DOCSTART-" + d for d in docs_ref * copies), encoding="utf-8")
        p.write_text("".join("-DOCSTART-" + d for d in docs_pred * copies), encoding="utf-8")
        peak = 0

        class Watched(Folder):
            def add(self, part: Any) -> None:
                nonlocal peak
                assert part.docs is None and not part.bucket_documents  # no per-document rows come back
                super().add(part)
                assert not self.docs  # none kept
                # A part's bucket rows are each bucket's totals (a row per bucket), not per document.
                for rows, _ in self.buckets.get("length", []):
                    assert len(set(rows.type_index.tolist())) == len(rows.type_index)
                assert self.result is not None
                peak = max(peak, _held(self.result.state))

            def total(self) -> Any:
                out = super().total()
                assert out.state is not None
                finished.append(out.state)
                return out

        monkeypatch.setattr(local, "Folder", Watched)
        report = _run(r, p, chunk_bytes=3000, **kw)
        assert report.counts.documents == 40 * copies
        state = finished[0]
        histograms = 1 + len(state.types or {})
        distinct = _held(state)
        assert distinct <= 40 * histograms  # no more distinct rows than distinct documents per group
        # Merged rows, and piles of up to twice them (or ``pile``) and one part's (a few documents).
        bound = 3 * distinct + histograms * (pile + 10)
        assert 0 < peak <= bound, (peak, bound)
        assert copies == 2 or peak < 40 * copies  # fewer rows than documents: no row per document
