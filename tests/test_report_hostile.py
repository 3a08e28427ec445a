"""The report's CSV files quote exactly as the csv module does, whatever the tokens hold: quotes,
commas, carriage returns and line feeds (JSONL text), characters of two, three and four bytes in
UTF-8, in mention texts, contexts, type names and document ids. Pair files are compared with the
csv module writing ``Report.pair_rows``; every file is the csv module's own writing of the rows
read back from it (so no field is quoted that need not be, and none left bare that must be); and
streamed in small chunks by two processes, every file is the same bytes."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.presentation import ReportWriter, write_report
from spanscore.stages.pairs import pair_fields

PAIR_FILES = ("strict.csv", "boundary.csv", "left.csv", "right.csv", "overlap.csv")
ROW_FILES = (*PAIR_FILES, "errors.csv", "right_label_overlap.csv")
# No white space (it separates CoNLL columns) and no '#' (a comment line's mark).
TOKEN_CHARS = "ab,\"';é中😀-"
TYPES = ("PER", 'L"C', "O,G")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _tags(draw: st.DrawFn, n: int) -> list[str]:
    out: list[str] = []
    for _ in range(n):
        kind = draw(st.sampled_from(("O", "B", "I")))
        out.append("O" if kind == "O" else f"{kind}-{draw(st.sampled_from(TYPES))}")
    return out


@st.composite
def conll_pairs(draw: st.DrawFn) -> tuple[str, str]:
    gold: list[str] = []
    pred: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        n = draw(st.integers(1, 9))
        tokens = draw(st.lists(st.text(TOKEN_CHARS, min_size=1, max_size=4), min_size=n, max_size=n))
        gold.append("\n".join(f"{t} {g}" for t, g in zip(tokens, _tags(draw, n), strict=True)))
        pred.append("\n".join(f"{t} {p}" for t, p in zip(tokens, _tags(draw, n), strict=True)))
    return "\n\n".join(gold) + "\n", "\n\n".join(pred) + "\n"


@st.composite
def jsonl_pairs(draw: st.DrawFn) -> tuple[str, str]:
    gold: list[str] = []
    pred: list[str] = []
    for k in range(draw(st.integers(1, 6))):
        text = draw(st.text('ab ,"\r\né中😀', min_size=1, max_size=30))
        doc_id = draw(st.sampled_from((f"d{k}", f'd"{k}', f"d,{k}", f"d\r\n{k}")))

        for side in (gold, pred):
            spans = []
            for _ in range(draw(st.integers(0, 4))):
                start = draw(st.integers(0, len(text) - 1))
                end = draw(st.integers(start + 1, len(text)))
                spans.append({"start": start, "end": end, "label": draw(st.sampled_from(TYPES))})
            side.append(json.dumps({"id": doc_id, "text": text, "spans": spans}, ensure_ascii=False))
    return "\n".join(gold) + "\n", "\n".join(pred) + "\n"


def _csv_module(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ROW_FILES}


def _check(gold_text: str, pred_text: str, folder: Path, suffix: str, options: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    gold, pred = folder / f"gold{suffix}", folder / f"pred{suffix}"
    gold.write_bytes(gold_text.encode("utf-8"))
    pred.write_bytes(pred_text.encode("utf-8"))
    report = spanscore.evaluate(reference=gold, predicted=pred, **options)
    whole = folder / "whole"
    write_report(report, whole)
    levels = any(p.details.reference.level is not None for p in report.kept or ())
    for name in PAIR_FILES:
        rows = [pair_fields(report.unit_kind, levels)]
        rows += [[str(v) if not isinstance(v, str) else v for v in r.values()] for r in report.pair_rows(name[:-4])]
        assert (whole / name).read_bytes() == _csv_module(rows), name
    for name in ROW_FILES:
        written = (whole / name).read_bytes()
        back = list(csv.reader(io.StringIO(written.decode("utf-8"), newline="")))
        assert _csv_module(back) == written, name
    errors = list(csv.DictReader(io.StringIO((whole / "errors.csv").read_text(encoding="utf-8"), newline="")))
    counted = report.to_dict()["errors"]
    for kind in ("false_positive", "false_negative", "wrong_label_same_span", "right_label_overlap"):
        assert sum(row["error"] == kind for row in errors) == counted[kind], kind
    streamed = folder / "streamed"
    writer = ReportWriter(streamed)
    done = spanscore.evaluate(
        reference=gold, predicted=pred, keep_details=False, rows=writer, chunk_bytes=64, jobs=2, **options
    )
    writer.finish(done)
    assert _digests(streamed) == _digests(whole)


@SETTINGS
@given(conll_pairs())
def test_conll_tokens_with_quotes_commas_and_wide_characters(tmp_path: Path, pair: tuple[str, str]) -> None:
    _check(*pair, tmp_path / "conll", ".conll", {})


@SETTINGS
@given(jsonl_pairs())
def test_jsonl_text_with_line_breaks_quotes_and_commas(tmp_path: Path, pair: tuple[str, str]) -> None:
    _check(*pair, tmp_path / "jsonl", ".jsonl", {"format": "jsonl"})
