"""--by keeps each group's per-document statistics as additive state (a histogram per group,
folded as parts come back): the same breakdown, intervals included, as grouping the whole
per-document table (``documents=True`` still does that), whatever the chunks, processes or engine."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.analysis.breakdown import conll_field_groups, conll_field_values

HIPE = Path(__file__).parent / "data" / "real" / "datasets" / "hipe2022-ajmc" / "HIPE-2022-v2.1-ajmc-dev-en.tsv"
VALUES = ("news", "web", "talk", "forum")


def _tagged(src: Path, dst: Path, *, seed: int, docstart: bool) -> None:
    """``src`` with a ``# source = ...`` line opening each document (or sentence), about one in
    ten left without one."""
    rng = random.Random(seed)
    out = []
    blocks = src.read_text(encoding="utf-8").split("\n\n")
    for block in blocks:
        if not block.strip():
            continue
        tag = "" if rng.random() < 0.1 else f"# source = {rng.choice(VALUES)}\n"
        if docstart and block.startswith("-DOCSTART-"):
            out.append(block)
            out.append(tag.rstrip("\n") or "# other = x")
        elif docstart:
            out.append(block)
        else:
            out.append(tag + block)
    dst.write_text("\n\n".join(out) + "\n\n", encoding="utf-8")


@pytest.fixture(scope="module")
def corpora(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    folder = tmp_path_factory.mktemp("by")
    subprocess.run([sys.executable, str(synth_tool), "2500", str(folder / "s")], check=True)
    subprocess.run([sys.executable, str(synth_tool), "2500", str(folder / "d"), "--docs-every", "7"], check=True)
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


@pytest.mark.parametrize("kind", ["sentences", "documents"])
def test_breakdown_from_state_is_the_breakdown_of_the_rows(corpora: dict[str, tuple[Path, Path]], kind: str) -> None:
    ref, pred = corpora[kind]
    ci = {"ci": 0.95, "resamples": 200, "seed": 4}
    streamed = _run(ref, pred, by="source", **ci)
    rows = _run(ref, pred, by="source", documents=True, **ci)  # the whole per-document table, grouped
    assert streamed.documents is None and rows.documents is not None
    assert streamed.breakdown == rows.breakdown
    assert streamed.intervals == rows.intervals
    assert streamed.to_dict()["macro_documents"] == rows.to_dict()["macro_documents"]
    groups = streamed.breakdown["groups"] if streamed.breakdown else []
    # Independent of spanscore: each group's documents counted from the file's own comment lines.
    expected: dict[str, int] = {}
    for value in conll_field_values(ref, "source").values():
        expected[value] = expected.get(value, 0) + 1
    assert {g["value"]: g["documents"] for g in groups} == expected
    assert [g["value"] for g in groups] == list(expected)  # order of first appearance
    assert all("intervals" in g for g in groups) and len(groups) == len(VALUES) + 1
    lines = ref.read_text(encoding="utf-8").splitlines()
    begins = sum(1 for line in lines if line.strip() and not line.startswith("#") and line.split()[-1].startswith("B-"))
    assert sum(g["reference_mentions"] for g in groups) == begins


@pytest.mark.parametrize("kind", ["sentences", "documents"])
def test_breakdown_the_same_whatever_the_chunks_and_processes(corpora: dict[str, tuple[Path, Path]], kind: str) -> None:
    ref, pred = corpora[kind]
    for ci in ({}, {"ci": 0.9, "resamples": 150, "seed": 2}):
        first = _json(_run(ref, pred, by="source", **ci))
        for chunk in (3000, 20000):
            assert _json(_run(ref, pred, by="source", chunk_bytes=chunk, jobs=2, **ci)) == first


@pytest.mark.filterwarnings("ignore::spanscore.analysis.reliability.FewUnitsWarning")
def test_a_real_corpus_grouped_by_its_document_ids(tmp_path: Path) -> None:
    """HIPE-2022 (ajmc): a header line, fields in comments; a prediction with labels changed."""
    rng = random.Random(9)
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
    ci = {"ci": 0.95, "resamples": 300}
    streamed = _run(HIPE, pred, reading=reading, by="hipe2022:document_id", **ci)
    rows = _run(HIPE, pred, reading=reading, by="hipe2022:document_id", documents=True, **ci)
    assert streamed.breakdown == rows.breakdown and streamed.breakdown is not None
    ids = re.findall(r"^# hipe2022:document_id = (\S+)$", HIPE.read_text(encoding="utf-8"), flags=re.M)
    assert [g["value"] for g in streamed.breakdown["groups"]][: len(ids)] == ids
    small = _run(HIPE, pred, reading=reading, by="hipe2022:document_id", chunk_bytes=4000, jobs=2, **ci)
    assert _json(small) == _json(streamed)


def test_jsonl_documents_grouped_by_a_nested_field(tmp_path: Path) -> None:
    rng = random.Random(5)
    ref, pred = tmp_path / "ref.jsonl", tmp_path / "pred.jsonl"
    with ref.open("w") as r, pred.open("w") as p:
        for i in range(400):
            text = " ".join(f"w{k}" for k in range(30))
            spans = [
                {"start": s, "end": s + 2, "label": rng.choice("ABC")} for s in range(0, 80, 12) if rng.random() < 0.5
            ]
            guess = [
                dict(s, label=rng.choice("ABC")) if rng.random() < 0.2 else s for s in spans if rng.random() < 0.85
            ]
            doc: dict[str, Any] = {"id": f"d{i}", "text": text, "spans": spans}
            if rng.random() < 0.85:
                doc["meta"] = {"src": rng.choice(["a", "b", "c"])}
            r.write(json.dumps(doc) + "\n")
            p.write(json.dumps({"id": f"d{i}", "text": text, "spans": guess}) + "\n")
    ci = {"ci": 0.95, "resamples": 200}
    streamed = _run(ref, pred, format="jsonl", by="meta.src", **ci)
    rows = _run(ref, pred, format="jsonl", by="meta.src", documents=True, **ci)
    assert streamed.breakdown == rows.breakdown and streamed.breakdown is not None
    assert {g["value"] for g in streamed.breakdown["groups"]} == {"a", "b", "c", "(missing)"}
    small = _run(ref, pred, format="jsonl", by="meta.src", chunk_bytes=3000, jobs=2, **ci)
    assert _json(small) == _json(streamed)


def test_the_field_is_read_as_it_streams_in_small_blocks(
    corpora: dict[str, tuple[Path, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks that cut lines (and "\\r\\n") anywhere give the values of the whole file read at once."""
    from spanscore.analysis import breakdown

    for kind in ("sentences", "documents"):
        ref = corpora[kind][0]
        whole = conll_field_values(ref, "source")
        crlf = ref.with_suffix(".crlf")
        crlf.write_bytes(b"\xef\xbb\xbf" + ref.read_bytes().replace(b"\n", b"\r\n"))
        for block in (7, 64, 1 << 24):
            monkeypatch.setattr(breakdown, "_BLOCK", block)
            for path in (ref, crlf):
                groups = conll_field_groups(path, "source")
                assert [groups.values[c] for c in groups.codes.tolist()] == list(whole.values())


def test_the_dask_engine_gives_the_same_breakdown(corpora: dict[str, tuple[Path, Path]]) -> None:
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    ref, pred = corpora["documents"]
    ci = {"ci": 0.95, "resamples": 150}
    local = _json(_run(ref, pred, by="source", **ci))
    engine = DaskEngine(n_workers=2, partition_bytes=40000)
    assert _json(_run(ref, pred, by="source", engine=engine, chunk_bytes=10000, **ci)) == local


@pytest.mark.parametrize("breaks", ["\n", "\r\n", "\r", "\u2028"])
@pytest.mark.parametrize("docstart", [False, True])
def test_odd_lines_read_as_the_whole_file_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breaks: str, docstart: bool
) -> None:
    """Comments that are no fields, fields inside a sentence, blank lines of spaces, a header line,
    a file without a final line break, every kind of line break: the streamed values are those of
    the file read whole (``conll_field_values``), for blocks of any size."""
    from spanscore.analysis import breakdown

    rng = random.Random(len(breaks) + docstart)
    lines = ["TOKEN TAG"]
    for k in range(60):
        if docstart and k % 7 == 0:
            lines += ["-DOCSTART- O", ""]
        for _ in range(rng.randint(0, 2)):
            lines.append(rng.choice([f"# source = v{rng.randint(0, 3)}", "# not a field", "#", "# other = 1"]))
        for t in range(rng.randint(1, 4)):
            lines.append(f"w{t} {rng.choice(['O', 'B-X'])}")
            if rng.random() < 0.1:
                lines.append(f"# source = inside{k}")
        lines.append(rng.choice(["", "  ", "\t"]))
    text = breaks.join(lines).rstrip() + ("" if rng.random() < 0.5 else breaks)
    path = tmp_path / "odd.conll"
    path.write_bytes(text.encode("utf-8"))
    whole = conll_field_values(path, "source", header=True)
    assert len(set(whole.values())) > 2
    for block in (1, 2, 5, 16, 1 << 18):
        monkeypatch.setattr(breakdown, "_BLOCK", block)
        groups = conll_field_groups(path, "source", header=True)
        assert [groups.values[c] for c in groups.codes.tolist()] == list(whole.values()), block


def test_a_part_made_into_state_in_small_slices_gives_the_same(
    corpora: dict[str, tuple[Path, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from spanscore.analysis import breakdown

    ref, pred = corpora["documents"]
    ci = {"ci": 0.95, "resamples": 100}
    whole = _json(_run(ref, pred, by="source", **ci))
    monkeypatch.setattr(breakdown, "_SLICE", 3)
    assert _json(_run(ref, pred, by="source", **ci)) == whole
    assert _json(_run(ref, pred, by="source", chunk_bytes=5000, **ci)) == whole
