"""One engine for every output: the same results whatever the chunking, the processes or the cluster.

Every output (the JSON, the tables, each report file, the judge's verdicts, the per-document
counts) is computed in one chunk, in many tiny chunks, with worker processes and on a Dask
LocalCluster, and compared byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.engines import LocalEngine
from spanscore.errors import InputError
from spanscore.io.conll import parse_conll
from spanscore.io.reading import Reading
from spanscore.io.sources import ConllSource, _simple_sentences
from spanscore.presentation import ReportWriter, write_report
from spanscore.programs.judge import CallableJudge
from spanscore.stages.counts import ERROR_FIELDS, TOKEN_FIELDS
from spanscore.stages.pairs import csv_field

LABELS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
WHOLE = 1 << 40  # one chunk


def _perturb(src: Path, dst: Path, seed: int) -> None:
    rng = random.Random(seed)
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("-DOCSTART-") and rng.random() < 0.08:
            token, _, _ = line.rpartition("\t" if "\t" in line else " ")
            line = f"{token}{chr(9) if chr(9) in line else ' '}{rng.choice(LABELS)}"
        out.append(line)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def btc_pair(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pred = tmp_path_factory.mktemp("btc") / "pred.txt"
    _perturb(btc / "test.txt", pred, seed=5)
    return btc / "test.txt", pred


@pytest.fixture(scope="module")
def synth(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """3000 sentences in 12 documents (a -DOCSTART- line every 250 sentences)."""
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "3000", str(prefix), "--docs-every", "250"], check=True)
    return prefix.with_suffix(".gold"), prefix.with_suffix(".pred")


def _judge() -> CallableJudge:
    return CallableJudge(lambda m: 1.0 if m.relation == "longer" or m.same_end else 0.0, name="longer-or-end")


WAYS: list[dict[str, Any]] = [
    {"chunk_bytes": WHOLE},
    {"chunk_bytes": 300},
    {"chunk_bytes": 2048, "jobs": 2},
]


def _report_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("corpus", ["btc", "synth"])
def test_every_output_is_the_same_whatever_the_chunks_and_processes(
    corpus: str, btc_pair: tuple[Path, Path], synth: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, pred = btc_pair if corpus == "btc" else synth
    seen_json: list[str] = []
    seen_files: list[dict[str, bytes]] = []
    seen_docs: list[list[dict[str, Any]]] = []
    seen_pairs: list[list[dict[str, Any]]] = []
    for k, way in enumerate(WAYS):
        out = tmp_path / f"report{k}"
        writer = ReportWriter(out)
        report = spanscore.evaluate(
            reference=gold,
            predicted=pred,
            judge=_judge(),
            judge_name="j",
            documents=True,
            keep_details=True,
            rows=writer,
            **way,
        )
        writer.finish(report)
        seen_json.append(report.to_json())
        seen_files.append(_report_files(out))
        seen_docs.append(list(report.document_rows()))
        seen_pairs.append(list(report.pair_rows("learned")))
        assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no scratch file left
    assert all(j == seen_json[0] for j in seen_json)
    assert all(f == seen_files[0] for f in seen_files)
    assert all(d == seen_docs[0] for d in seen_docs)
    assert all(p == seen_pairs[0] for p in seen_pairs)
    data = json.loads(seen_json[0])
    assert "learned" in data["metrics"] and data["judge"]["type5"] > 0
    assert {"learned.csv", "errors.csv", "report.html", "summary.json"} <= set(seen_files[0])
    # A report written afterwards from the kept details is the streamed one, file for file.
    again = tmp_path / "again"
    write_report(
        spanscore.evaluate(reference=gold, predicted=pred, judge=_judge(), judge_name="j", documents=True),
        again,
    )
    assert _report_files(again) == seen_files[0]


@pytest.mark.parametrize("corpus", ["btc", "synth"])
def test_per_document_counts_add_up_to_the_totals(
    corpus: str, btc_pair: tuple[Path, Path], synth: tuple[Path, Path]
) -> None:
    gold, pred = btc_pair if corpus == "btc" else synth
    report = spanscore.evaluate(reference=gold, predicted=pred, documents=True, chunk_bytes=1000, credit="dice")
    docs = report.documents
    assert docs is not None
    c = report.counts
    totals = {
        "reference": int(c.reference.sum()),
        "predicted": int(c.predicted.sum()),
        **{
            f"{k}.{f}": int(v[i].sum())
            for k, v in c.criteria.items()
            for i, f in enumerate(spanscore.stages.counts.MATCH_FIELDS)
        },
        **{
            f"semeval_{k}.{f}": int(v[i].sum())
            for k, v in c.schemes.items()
            for i, f in enumerate(spanscore.stages.counts.MATCH_FIELDS)
        },
        **{f"token.{f}": int(c.token[i].sum()) for i, f in enumerate(TOKEN_FIELDS)},
        # Units both sides cover, tallied on the predicted side's group: the same total.
        "token.true_positive_predicted": int(c.token[0].sum()),
        **{f"errors.{f}": int(c.errors[i].sum()) for i, f in enumerate(ERROR_FIELDS)},
    }
    assert set(totals) == set(docs.fields)
    sums = docs.stats.sum(axis=0)
    assert {f: int(sums[i]) for i, f in enumerate(docs.fields)} == totals
    rows = list(report.document_rows())
    if corpus == "synth":
        assert docs.unit == "document" and [r["document"] for r in rows] == list(range(1, 13))
    else:
        assert docs.unit == "sentence" and len(rows) == c.sentences
    macro = report.to_dict()["macro_documents"]
    # Documents without mentions on either side are left out of the mean.
    scored = [r for r in rows if r["reference"] or r["predicted"]]
    f1 = np.array([r["metrics"]["overlap"]["f1"] for r in scored], dtype=float)
    assert macro["overlap"]["f1"] == pytest.approx(float(f1.mean()))
    assert macro["overlap"]["f1_std"] == pytest.approx(float(f1.std()))
    assert macro["count"] == len(scored) and macro["empty"] == len(rows) - len(scored)
    assert macro["unit"] == docs.unit


def test_dask_cluster_gives_the_same_outputs(synth: tuple[Path, Path], tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    gold, pred = synth
    local_out, dask_out = tmp_path / "local", tmp_path / "dask"
    results = []
    import dask

    from spanscore.engines.dask_engine import LOCAL_WORKER_CONFIG

    with (
        dask.config.set(LOCAL_WORKER_CONFIG),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
    ):
        for out, engine in ((local_out, LocalEngine(1)), (dask_out, DaskEngine(scheduler=cluster.scheduler_address))):
            writer = ReportWriter(out)
            report = spanscore.evaluate(
                reference=gold,
                predicted=pred,
                judge=_judge(),
                documents=True,
                rows=writer,
                engine=engine,
                chunk_bytes=4096,
                keep_details=True,  # another engine keeps the pairs only where asked
            )
            writer.finish(report)
            results.append((report.to_json(), list(report.document_rows()), list(report.pair_rows("overlap"))))
    assert results[0] == results[1]
    assert _report_files(local_out) == _report_files(dask_out)


def test_cli_tables_json_and_documents_are_the_same_whatever_the_chunks(
    btc_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, pred = btc_pair
    outputs = []
    for extra in (["--chunk-size", "1000000000", "--jobs", "1"], ["--chunk-size", "500", "--jobs", "2"]):
        docs = tmp_path / f"docs{len(outputs)}.jsonl"
        tables = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), *extra])
        as_json = CliRunner().invoke(
            cli, ["evaluate", str(gold), str(pred), "--json", "--per-document", str(docs), *extra]
        )
        assert tables.exit_code == 0 and as_json.exit_code == 0, tables.output + as_json.output
        outputs.append((tables.output, as_json.output, docs.read_bytes()))
    assert outputs[0] == outputs[1]
    data = json.loads(outputs[0][1])
    assert data["macro_documents"]["unit"] == "sentence"
    first = json.loads(outputs[0][2].splitlines()[0])
    assert first["sentence"] == 1 and "full" in first["metrics"]["strict"] and "f1" in first["metrics"]["overlap"]


def _jsonl(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def _docs(n: int, seed: int, perturb: bool) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    change = random.Random(seed + 1)
    out = []
    vocabulary = ["Ada", "Paris", "met", "in", "the", "Acme", "Corp", "today"]
    for i in range(n):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(3, 12))]
        text = " ".join(words)
        spans, at = [], 0
        for w in words:
            keep, label = rng.random() < 0.7, rng.choice(["PER", "LOC", "ORG"])
            if w[0].isupper() and keep:
                start, end = at, at + len(w)
                if perturb and change.random() < 0.3:
                    end = min(len(text), end + 4)
                spans.append({"start": start, "end": end, "label": label})
            at += len(w) + 1
        out.append({"id": f"d{i}", "text": text, "spans": spans})
    return out


def test_jsonl_streams_and_pairs_ids_in_any_nearby_order(tmp_path: Path) -> None:
    gold_docs = _docs(400, 1, False)
    pred_docs = _docs(400, 1, True)
    random.Random(2).shuffle(pred_docs)
    gold = _jsonl(tmp_path / "g.jsonl", gold_docs)
    pred = _jsonl(tmp_path / "p.jsonl", pred_docs)
    in_order = _jsonl(tmp_path / "p_sorted.jsonl", sorted(pred_docs, key=lambda d: int(d["id"][1:])))
    base = spanscore.evaluate(reference=gold, predicted=in_order, format="jsonl", documents=True, chunk_bytes=WHOLE)
    for kw in ({"chunk_bytes": 200}, {"chunk_bytes": 1000, "jobs": 2}, {"chunk_bytes": WHOLE}):
        got = spanscore.evaluate(reference=gold, predicted=pred, format="jsonl", documents=True, **kw)
        assert got.to_json() == base.to_json()
        assert list(got.document_rows()) == list(base.document_rows())
    assert [r["id"] for r in base.document_rows()] == [d["id"] for d in gold_docs]
    # Past the look-ahead bound, the first id that cannot be paired is named.
    from spanscore.io.sources import JsonlSource, TypeSelection

    far = _jsonl(
        tmp_path / "far.jsonl", [*pred_docs[1:], pred_docs[0]] if pred_docs[0]["id"] != "d0" else pred_docs[::-1]
    )
    source = JsonlSource(str(gold), str(far), TypeSelection(), 1000, lookahead=3)
    with pytest.raises(InputError, match=r"is not among the next 3 documents") as err:
        list(source.parts())
    assert err.value.path == str(gold)
    missing = _jsonl(tmp_path / "missing.jsonl", [d for d in pred_docs if d["id"] != "d7"])
    with pytest.raises(InputError, match="'d7' is missing from"):
        spanscore.evaluate(reference=gold, predicted=missing, format="jsonl")
    extra = _jsonl(tmp_path / "extra.jsonl", [*pred_docs, {"id": "x", "text": "x", "spans": []}])
    with pytest.raises(InputError, match="'x' is not in"):
        spanscore.evaluate(reference=gold, predicted=extra, format="jsonl")


def test_label_lists_in_many_parts_equal_one_part() -> None:
    rng = random.Random(4)
    gold = [[rng.choice(LABELS) for _ in range(rng.randint(1, 9))] for _ in range(2500)]
    pred = [[rng.choice(LABELS) if rng.random() < 0.2 else x for x in s] for s in gold]
    from spanscore.engines import PartCounter, run
    from spanscore.io.sources import LabelsSource, TypeSelection
    from spanscore.stages.parts import Wanted

    whole = spanscore.evaluate(reference=gold, predicted=pred, format="labels", documents=True)
    source = LabelsSource(gold, pred, Reading(format="labels"), TypeSelection(), per_part=7)
    parts = run(PartCounter(source, spanscore.Options(), Wanted(documents=True, details=True)))
    assert parts.counts == whole.counts
    assert whole.documents is not None and parts.docs is not None
    assert np.array_equal(parts.docs.stats, whole.documents.stats)


def test_a_bad_judge_or_input_fails_in_its_turn(btc_pair: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = btc_pair
    lines = pred.read_text(encoding="utf-8").split("\n")
    k = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip())
    lines[k] += "\textra"
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["evaluate", str(gold), str(bad), "--report", str(out), "--chunk-size", "2000"])
    assert result.exit_code == 2 and f"{bad}:{k + 1}:" in result.output
    assert not out.exists() or not any(out.iterdir())  # nothing half written is left


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.lists(st.sampled_from(["a B-X", "bb O", "c I-X", "dd\tO"]), min_size=1, max_size=4).map("\n".join),
            st.just(""),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(["", "\n", "\n\n", "\n\n\n"]),
)
def test_quick_sentence_count_equals_the_parser(blocks: list[str], end: str) -> None:
    data = ("\n".join(blocks) + end).encode()
    quick = _simple_sentences(data)
    if quick is None:
        return
    try:
        table = parse_conll(data, "x", columns=(), allow_empty=True)
    except InputError:
        return
    assert quick == table.n_sentences


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20))
def test_csv_fields_are_written_as_the_csv_module_writes_them(value: str) -> None:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["x", value, "y"])
    assert buffer.getvalue() == f"x,{csv_field(value)},y\r\n"


def test_planned_units_are_checked(btc_pair: tuple[Path, Path]) -> None:
    """Report rows are numbered from the plan's count of each part's sentences; the count is
    checked against what the part holds."""
    gold, pred = btc_pair
    source = ConllSource(str(gold), str(pred), Reading(), chunk_bytes=3000)
    for part in list(source.parts())[:50]:
        assert source.units(part) == source.load(part).units


def test_jsonl_duplicate_ids_are_named_with_both_lines(tmp_path: Path) -> None:
    docs = [{"id": f"d{i}", "text": "a b", "spans": []} for i in range(5)]
    cases = (
        ([*docs, docs[1]], docs, "g.jsonl", 6, 2),
        (docs, [*docs, docs[2]], "p.jsonl", 6, 3),
        ([*docs[:3], docs[1], *docs[3:]], docs, "g.jsonl", 4, 2),
    )
    for gold_docs, pred_docs, where, line, first in cases:
        gold = _jsonl(tmp_path / "g.jsonl", gold_docs)
        pred = _jsonl(tmp_path / "p.jsonl", pred_docs)
        with pytest.raises(InputError, match=rf"also on line {first}$") as err:
            spanscore.evaluate(reference=gold, predicted=pred, format="jsonl")
        assert (err.value.path, err.value.line) == (str(tmp_path / where), line)


def _pid(_: object) -> int:
    import os

    return os.getpid()


@pytest.mark.parametrize(
    ("parts", "jobs", "processes"),
    [(0, 2, 1), (3, 2, 1), (7, 2, 1), (8, 2, 2), (22, 2, 2), (22, 4, 4), (11, 4, 2), (5, 1, 1), (100, 1, 1)],
)
def test_few_parts_are_counted_by_fewer_processes(parts: int, jobs: int, processes: int) -> None:
    from spanscore.engines.local import PARTS_PER_PROCESS, processes_for

    assert processes_for(parts, jobs) == processes
    assert processes == max(1, min(jobs, parts // PARTS_PER_PROCESS))
    pids = list(LocalEngine(jobs).map(_pid, range(parts)))
    assert len(pids) == parts
    # Every worker is handed a part at first, but this process takes back the parts a worker has
    # not started once it runs out of parts of its own, and counts only when no worker's result
    # is waiting, which a loaded machine may never leave it: either may count none here.
    workers = processes - 1
    if not parts:
        assert pids == []
    elif workers == 0:
        assert set(pids) == {os.getpid()}
    else:
        assert len(set(pids) - {os.getpid()}) <= workers
