"""The report's pair and error files, byte for byte: the rows made a chunk at a time (mentions
sliced from the chunk's bytes, cells shared between rows) are the bytes the row-by-row writer
made (pinned here from it), and the pair files are what the csv module writes of
``Report.pair_rows``; on real files (German OCR with umlauts, Spanish read from latin-1, tweets,
JSONL, nesting levels, discontinuous mentions) and a synthetic corpus, whatever the chunk size
and the number of processes."""

from __future__ import annotations

import csv
import hashlib
import io
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore.presentation import ReportWriter, write_report
from spanscore.stages.pairs import pair_fields, sample_row

DATA = Path(__file__).parent / "data"
REAL = DATA / "real" / "datasets"
LABELS = (b"O", b"B-PER", b"I-PER", b"B-LOC", b"I-LOC", b"B-ORG", b"I-ORG", b"B-MISC")
PAIR_FILES = ("strict.csv", "boundary.csv", "left.csv", "right.csv", "overlap.csv")
WAYS: list[dict[str, Any]] = [{"chunk_bytes": 1 << 40, "jobs": 1}, {"chunk_bytes": 2048, "jobs": 2}]


def _perturbed(src: Path, dst: Path, seed: int, column: int = -1) -> Path:
    """A prediction: a tenth of the token lines given another label in ``column``."""
    rng = random.Random(seed)
    out = []
    for line in src.read_bytes().split(b"\n"):
        if line.strip() and not line.startswith((b"-DOCSTART-", b"#")) and rng.random() < 0.1:
            sep = b"\t" if b"\t" in line else b" "
            cells = line.split(sep)
            cells[column] = rng.choice(LABELS)
            line = sep.join(cells)
        out.append(line)
    dst.write_bytes(b"\n".join(out))
    return dst


def _utf8(src: Path, dst: Path) -> Path:
    """The file as UTF-8 (CoNLL-2002's Spanish is latin-1)."""
    raw = src.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raw = raw.decode("latin-1").encode("utf-8")
    dst.write_bytes(raw)
    return dst


def _brat(folder: Path, docs: dict[str, tuple[str, list[tuple[str, list[tuple[int, int]]]]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (text, mentions) in docs.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
        lines = [
            f"T{k}\t{label} {';'.join(f'{a} {b}' for a, b in pieces)}\t{' '.join(text[a:b] for a, b in pieces)}\n"
            for k, (label, pieces) in enumerate(mentions, start=1)
        ]
        (folder / f"{name}.ann").write_text("".join(lines), encoding="utf-8")
    return folder


KNEE = "severe pain in left and right knee, and \"stiff\" neck"
BRAT_GOLD = {
    "knee": (KNEE, [("ADR", [(15, 19), (30, 34)]), ("ADR", [(24, 34)]), ("ADR", [(0, 11)]), ("ADR", [(40, 52)])]),
    "aspirin": ("Aspirin, helps", [("DRUG", [(0, 8)])]),
}
BRAT_PRED = {
    "knee": (KNEE, [("ADR", [(15, 34)]), ("ADR", [(24, 34)]), ("SYM", [(0, 11)]), ("ADR", [(48, 52)])]),
    "aspirin": ("Aspirin, helps", [("DRUG", [(0, 7)]), ("DRUG", [(9, 14)])]),
}


def _case(name: str, folder: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The reference, the prediction and the options of each case."""
    if name == "jsonl":
        return DATA / "small.gold.jsonl", DATA / "small.pred.jsonl", {"format": "jsonl"}
    if name == "brat":
        gold, pred = _brat(folder / "gold", BRAT_GOLD), _brat(folder / "pred", BRAT_PRED)
        return gold, pred, {"format": "brat"}
    if name == "germeval":
        gold = REAL / "germeval2014" / "NER-de-dev.tsv"
        return gold, _perturbed(gold, folder / "pred.tsv", 4, column=2), {"token_column": 1, "levels": (2, 3)}
    files = {
        "europeana": "europeana/enp_DE.onb.bio",
        "esp": "conll2002/esp.testa",
        "wnut": "wnut17/emerging.dev.conll",
        "europeana-dice": "europeana/enp_DE.onb.bio",
    }
    gold = _utf8(REAL / files[name], folder / "gold.conll")
    options = {"credit": "dice"} if name.endswith("dice") else {}
    return gold, _perturbed(gold, folder / "pred.conll", 3), options


# Each file's SHA-256 (the first 16 hex digits), from the row-by-row writer.
PINNED = {
    "europeana": {
        "boundary.csv": "16848d43cfc55451",
        "confusion.csv": "e3b0677bc07ea582",
        "errors.csv": "b4762ff94e1952de",
        "left.csv": "9504698c6f9beb70",
        "overlap.csv": "0cf6b8ad9d63b1a5",
        "right.csv": "c9937e54ed4741c7",
        "right_label_overlap.csv": "cd345f6eb293062d",
        "strict.csv": "2c1438c38afdfac0",
    },
    "esp": {
        "boundary.csv": "09c95105aa51fa7c",
        "confusion.csv": "e317715e1069beb9",
        "errors.csv": "f67fe2f8b452f988",
        "left.csv": "03e85cb654f3642f",
        "overlap.csv": "ceb9fde24ea15c31",
        "right.csv": "509be77715fe09e6",
        "right_label_overlap.csv": "7854475f31eaac92",
        "strict.csv": "0f1df063a0038f1c",
    },
    "wnut": {
        "boundary.csv": "0a69772e1421c754",
        "confusion.csv": "d66a85cbeb8cd6bf",
        "errors.csv": "7f30437b96bb9966",
        "left.csv": "2d864fa0aa6164dd",
        "overlap.csv": "4edfe7344e0bd061",
        "right.csv": "5777abb2c75398ba",
        "right_label_overlap.csv": "8e03114ab199bb49",
        "strict.csv": "5f64b0aa36ecdcb1",
    },
    "europeana-dice": {
        "boundary.csv": "16848d43cfc55451",
        "confusion.csv": "e3b0677bc07ea582",
        "errors.csv": "b4762ff94e1952de",
        "left.csv": "9982b6284f2ff011",
        "overlap.csv": "d1199ac9a45dee43",
        "right.csv": "09e1e62d9479cdb0",
        "right_label_overlap.csv": "cd345f6eb293062d",
        "strict.csv": "2c1438c38afdfac0",
    },
    "jsonl": {
        "boundary.csv": "3c64c2a1f05fee09",
        "confusion.csv": "24c0e9ad8683ccc6",
        "errors.csv": "fd0f75bdad0c71a6",
        "left.csv": "43f70a63b5c2a1cb",
        "overlap.csv": "51d368a407afb46a",
        "right.csv": "2f3be2be31ef0a2c",
        "right_label_overlap.csv": "dd38d2de7233d34b",
        "strict.csv": "df9c619dd914da60",
    },
    "germeval": {
        "boundary.csv": "8d2a0193996a8355",
        "confusion.csv": "184dbe0a4bbc083b",
        "errors.csv": "dfec09dbdd4dbbd0",
        "left.csv": "8beaa1ec2e4b62f0",
        "overlap.csv": "6c9efbc7327f5cae",
        "right.csv": "a356aaf6c436af66",
        "right_label_overlap.csv": "35d9659225aa0498",
        "strict.csv": "94bb305b24b714c7",
    },
    "brat": {
        "boundary.csv": "3f6a1c8c9dff7e53",
        "confusion.csv": "e8924d2701bb84e3",
        "errors.csv": "b6815a7fbaad682c",
        "left.csv": "86ebd9e4f6109132",
        "overlap.csv": "ca904772f0e19d86",
        "right.csv": "3b44a661c3874460",
        "right_label_overlap.csv": "76fe079710a4b1c3",
        "strict.csv": "2f2503839912bc0e",
    },
}


def _streamed(
    gold: Path, pred: Path, options: dict[str, Any], out: Path, way: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    """The report written as ``evaluate --report`` writes it; the partial pairs of each file
    that report.html lists."""
    writer = ReportWriter(out)
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **options, **way)
    samples = {name: f.sample for name, f in writer.files.items()}
    writer.finish(report)
    return samples


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(folder.glob("*.csv"))}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_report_rows_are_the_row_by_row_writers_bytes(case: str, tmp_path: Path) -> None:
    gold, pred, options = _case(case, tmp_path)
    for k, way in enumerate(WAYS):
        out = tmp_path / f"out{k}"
        _streamed(gold, pred, options, out, way)
        assert _digests(out) == PINNED[case], way


def _independent(report: spanscore.Report, criterion: str) -> bytes:
    """The csv module writing ``Report.pair_rows``."""
    levels = any(p.details.reference.level is not None for p in report.kept or ())
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(pair_fields(report.unit_kind, levels))
    for row in report.pair_rows(criterion):
        writer.writerow(row.values())
    return buffer.getvalue().encode("utf-8")


@pytest.fixture(scope="module")
def synth(synth_tool: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    prefix = tmp_path_factory.mktemp("synth") / "s"
    subprocess.run([sys.executable, str(synth_tool), "2000", str(prefix), "--docs-every", "250"], check=True)
    return prefix.with_suffix(".gold"), prefix.with_suffix(".pred")


@pytest.mark.parametrize("case", [*sorted(PINNED), "synth"])
def test_pair_files_are_the_csv_module_writing_pair_rows(
    case: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if case == "synth":
        gold, pred = request.getfixturevalue("synth")
        options: dict[str, Any] = {}
    else:
        gold, pred, options = _case(case, tmp_path)
    report = spanscore.evaluate(reference=gold, predicted=pred, **options)
    out = tmp_path / "out"
    write_report(report, out)
    for name in PAIR_FILES:
        assert (out / name).read_bytes() == _independent(report, name.removesuffix(".csv")), name
    streamed = tmp_path / "streamed"
    _streamed(gold, pred, options, streamed, WAYS[1])
    assert _digests(streamed) == _digests(out)


@pytest.mark.parametrize("case", ["germeval", "jsonl", "europeana-dice"])
def test_the_pages_partial_pairs_are_pair_rows(case: str, tmp_path: Path) -> None:
    """The partial pairs report.html lists, read back from their rows, are ``pair_rows``'s first
    partial pairs, with the same types (integers, floats, text)."""
    gold, pred, options = _case(case, tmp_path)
    report = spanscore.evaluate(reference=gold, predicted=pred, **options)
    samples = _streamed(gold, pred, options, tmp_path / "out", WAYS[1])
    for criterion in ("left", "right", "overlap"):
        expected = [r for r in report.pair_rows(criterion) if r["match"] == "partial"][:200]
        got = samples[f"{criterion}.csv"]
        assert expected and [list(r.items()) for r in got] == [list(r.items()) for r in expected], criterion
        assert all(type(a) is type(b) for g, e in zip(got, expected, strict=True) for a, b in zip(
            g.values(), e.values(), strict=True))


UNITS = {
    # case: the unit column, and each pair's unit in every pair file, found here from the input
    "europeana": "sentence",
    "jsonl": "document",
    "brat": "document",
}


def _units_by_hand(case: str, gold: Path) -> dict[tuple[str, int, int], set[str]]:
    """Where each reference mention lies, read from the input here: (type, start, end) within its
    unit -> the units holding one (a CoNLL sentence's 0-based place in the file, a JSONL id, a
    BRAT file's name)."""
    import json

    out: dict[tuple[str, int, int], set[str]] = {}
    if case == "jsonl":
        for line in gold.read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            for m in doc["spans"]:
                out.setdefault((m["label"], m["start"], m["end"]), set()).add(doc["id"])
        return out
    if case == "brat":
        for name, (_, mentions) in BRAT_GOLD.items():
            for label, pieces in mentions:
                out.setdefault((label, pieces[0][0], pieces[-1][1]), set()).add(name)
        return out
    sentences = [s for s in gold.read_text(encoding="utf-8").split("\n\n") if s.strip()]
    skip = ("-DOCSTART-", "#")
    numbered = [[line for line in s.split("\n") if line and not line.startswith(skip)] for s in sentences]
    numbered = [s for s in numbered if s]
    for k, lines in enumerate(numbered):
        tags = [line.split()[-1] for line in lines] + ["O"]
        start = None
        for i, tag in enumerate(tags):
            if start is not None and tag != "I-" + tags[start][2:]:
                out.setdefault((tags[start][2:], start, i), set()).add(str(k))
                start = None
            if tag.startswith("B-") or (tag.startswith("I-") and start is None):
                start = i
    return out


@pytest.mark.parametrize("case", sorted(UNITS))
def test_pair_rows_and_the_pair_files_name_units_alike(case: str, tmp_path: Path) -> None:
    """``Report.pair_rows`` and the pair files give each pair the same unit: a document's id where
    the format names documents (JSONL, BRAT), else the sentence's 0-based place in the corpus (an
    integer in ``pair_rows``), whatever the chunk size; each unit is the one the input puts the
    reference mention in."""
    gold, pred, options = _case(case, tmp_path)
    unit = UNITS[case]
    by_hand = _units_by_hand(case, gold)
    for k, chunk in enumerate((1 << 40, 300)):
        report = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, **options)
        assert report.unit_kind == unit
        out = tmp_path / f"out{k}"
        write_report(report, out)
        for criterion in ("strict", "overlap"):
            rows = list(report.pair_rows(criterion))
            with (out / f"{criterion}.csv").open(encoding="utf-8", newline="") as handle:
                written = list(csv.DictReader(handle))
            assert rows and len(rows) == len(written)
            assert [str(r[unit]) for r in rows] == [w[unit] for w in written]
            named = case != "europeana"
            assert all(isinstance(r[unit], str if named else int) for r in rows)
            for r in rows:
                key = (r["reference_type"], r["reference_start"], r["reference_end"])
                assert str(r[unit]) in by_hand[key], r


def test_sample_row_reads_quotes_commas_and_line_breaks_back() -> None:
    fields = pair_fields("document")
    values = ["d,1", 'say "hi", then', "PER", 0, 14, "a\r\nb", "LOC", 3, 5, "partial", 0.3333333333333333, "longer",
              'ctx, "q"\nmore']
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerow(values)
    assert list(sample_row(buffer.getvalue(), fields, named=True).values()) == values
    values[0] = 7
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerow(values)
    assert list(sample_row(buffer.getvalue(), fields, named=False).values()) == values


def test_rows_are_the_same_bytes_without_kernel_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scratch files' rows (of a worker no one tells where its rows go, as a Dask worker's)
    are copied by the kernel where it can; on a file system that refuses, from the start or part
    way, they are copied through a buffer from where it stopped."""
    import os

    from spanscore.stages.pairs import HeldRows

    gold, pred, options = _case("wnut", tmp_path)  # many chunks, counted in worker processes
    monkeypatch.setattr(HeldRows, "here", classmethod(lambda cls, rows_dir: None))
    real = os.copy_file_range
    calls = {"n": 0}

    def partway(src: int, dst: int, count: int, offset_src: int | None = None, offset_dst: int | None = None) -> int:
        calls["n"] += 1
        if calls["n"] % 2 == 0:
            raise OSError(95, "Operation not supported")
        return real(src, dst, min(count, 1000), offset_src, offset_dst)

    def never(*args: Any) -> int:
        raise OSError(18, "Invalid cross-device link")

    for k, copy in enumerate((partway, never, None)):
        if copy is None:
            monkeypatch.delattr(os, "copy_file_range")
        else:
            monkeypatch.setattr(os, "copy_file_range", copy)
        _streamed(gold, pred, options, tmp_path / f"out{k}", WAYS[1])
        assert _digests(tmp_path / f"out{k}") == PINNED["wnut"], copy
    assert calls["n"] > 1


def test_rows_counted_in_the_writers_process_are_written_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted in the process that writes the report (one process, or a one-chunk corpus), a
    chunk's rows go to the CSVs as they are: no scratch file, nothing copied; the same bytes."""
    import os
    import tempfile

    gold, pred, options = _case("wnut", tmp_path)
    made: list[str] = []
    real = tempfile.mkstemp

    def counted(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, path = real(*args, **kwargs)
        made.append(path)
        return fd, path

    def refused(*args: Any) -> int:
        raise AssertionError("rows copied from a scratch file")

    monkeypatch.setattr(tempfile, "mkstemp", counted)
    monkeypatch.setattr(os, "copy_file_range", refused)
    for k, way in enumerate(({"chunk_bytes": 2048, "jobs": 1}, {"chunk_bytes": 1 << 40, "jobs": 2})):
        _streamed(gold, pred, options, tmp_path / f"out{k}", way)
        assert _digests(tmp_path / f"out{k}") == PINNED["wnut"], way
    assert not [p for p in made if p.endswith(".rows")]


def test_the_rows_folder_names_its_process_across_pickles() -> None:
    """A Dask worker in another process gets the folder and its owner, so it leaves its rows
    there."""
    import os
    import pickle

    from spanscore.stages.pairs import RowsDir

    folder = RowsDir("/tmp/rows", os.getpid())
    back = pickle.loads(pickle.dumps(folder))
    assert type(back) is RowsDir and back == "/tmp/rows" and back.owner == os.getpid()
