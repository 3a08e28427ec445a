"""Readers, every criterion, the CLI and the report on a small corpus shipped in tests/data.

These run in any clone, without ../shared. Five sentences, six reference and six predicted mentions,
each a case worked by hand:

1. "the New York Times reported": ORG "the New York Times", predicted "New York Times" (same end);
2. "John Smith met Mary": PER "John Smith" exact; PER "Mary" predicted as LOC (same span);
3. "Bank of America in Paris": ORG "Bank of America" predicted "Bank of" (same start); LOC "Paris" exact;
4. "nothing here": a spurious MISC "here";
5. "Berlin Wall": LOC missed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import spanscore

DATA = Path(__file__).resolve().parent / "data"
GOLD, PRED = DATA / "small.gold.conll", DATA / "small.pred.conll"

# criterion: credit earned (over 6 predicted and 6 reference mentions)
EXPECTED = {"strict": 2.0, "boundary": 3.0, "left": 2.5, "right": 2.5, "overlap": 3.0}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spanscore.cli.main", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "kw",
    [
        {"reference": GOLD, "predicted": PRED},
        {"reference": DATA / "small.merged.conll", "merged": True},
        {"reference": DATA / "small.gold.jsonl", "predicted": DATA / "small.pred.jsonl", "format": "jsonl"},
        {"reference": GOLD, "predicted": PRED, "chunk_bytes": 40, "jobs": 2},
    ],
    ids=["conll", "merged", "jsonl", "chunks"],
)
def test_every_criterion_by_hand(kw: dict[str, object]) -> None:
    report = spanscore.evaluate(**kw)  # type: ignore[arg-type]
    m = report.metrics
    for name, credit in EXPECTED.items():
        assert m[name]["credit"] == credit
        assert m[name]["precision"] == pytest.approx(credit / 6)
        assert m[name]["recall"] == pytest.approx(credit / 6)
    s = report.semeval
    assert (s["strict"]["correct"], s["strict"]["incorrect"], s["strict"]["missed"], s["strict"]["spurious"]) == (
        2,
        3,
        1,
        1,
    )
    assert (s["type"]["correct"], s["type"]["incorrect"]) == (4, 1)
    e = report.to_dict()["errors"]
    assert (e["false_positive"], e["false_negative"], e["wrong_label_same_span"], e["right_label_overlap"]) == (
        1,
        1,
        1,
        2,
    )
    if kw.get("format") != "jsonl":  # tokens: 8 of 10 predicted and of 13 reference entity tokens agree
        assert (m["token"]["precision"], m["token"]["recall"]) == (pytest.approx(0.8), pytest.approx(8 / 13))


def test_cli_tables_json_and_report(tmp_path: Path) -> None:
    tables = _cli("evaluate", str(GOLD), str(PRED))
    assert tables.returncode == 0 and "overlap" in tables.stdout and "50.00" in tables.stdout
    out = _cli("evaluate", str(GOLD), str(PRED), "--json", "--report", str(tmp_path / "r"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["metrics"]["left"]["credit"] == 2.5
    files = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"report.html", "summary.md", "summary.json", "strict.csv", "overlap.csv", "errors.csv"} <= files
    rows = (tmp_path / "r" / "overlap.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + 4  # header, two exact and two partial pairs
    assert "New York Times" in rows[1] and "partial,0.5" in rows[1]


def test_corpus_commands(tmp_path: Path) -> None:
    summary = json.loads(_cli("summarize", str(GOLD), "--json").stdout)
    assert (summary["sentences"], summary["tokens"], summary["mentions"]) == (5, 18, 6)
    assert summary["types"] == {"LOC": 2, "ORG": 2, "PER": 2}
    assert _cli("validate", str(GOLD)).returncode == 0
    assert _cli("convert", str(GOLD), "-o", str(tmp_path / "g.bioes"), "--to", "BIOES").returncode == 0
    assert "S-PER" in (tmp_path / "g.bioes").read_text(encoding="utf-8")
    back = _cli("convert", str(tmp_path / "g.bioes"), "-o", str(tmp_path / "g.bio"), "--from", "BIOES", "--to", "BIO")
    assert back.returncode == 0 and (tmp_path / "g.bio").read_bytes() == GOLD.read_bytes()
    assert _cli("transform", str(GOLD), "-o", str(tmp_path / "t"), "--type-map", "LOC=PLACE").returncode == 0
    assert "B-PLACE" in (tmp_path / "t").read_text(encoding="utf-8")
    per_doc = _cli(
        "evaluate",
        str(DATA / "small.gold.jsonl"),
        str(DATA / "small.pred.jsonl"),
        "--json",
        "--per-document",
        str(tmp_path / "d"),
    )
    assert per_doc.returncode == 0, per_doc.stderr
    ids = [json.loads(line)["id"] for line in (tmp_path / "d").read_text(encoding="utf-8").splitlines()]
    assert ids == ["s1", "s2", "s3", "s4", "s5"]
