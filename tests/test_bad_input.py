"""Bad input, the way a new user meets it: one line naming the file, line or argument, exit 2, a
SpanscoreError in Python; never a traceback, never a silently wrong score.

The first tests pin the cases found by hand; the last ones are a seeded mutation fuzz of real
files through every command and the Python API.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError, SpanscoreError

GOLD = "John\tB-PER\nSmith\tI-PER\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\n\nShe\tO\nleft\tO\n\n"
PRED = "John\tB-PER\nSmith\tO\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\n\nShe\tB-PER\nleft\tO\n\n"


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def run(*args: str) -> tuple[int, str]:
    """The installed command, as a user runs it (stdout and stderr together)."""
    proc = subprocess.run(
        [sys.executable, "-m", "spanscore.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
    )
    return proc.returncode, proc.stdout + proc.stderr


def refused(code: int, output: str, *needles: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("spanscore: error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], errors[0]


# Reading inputs as meant.


def test_docstart_in_one_file_only_gives_one_answer_everywhere(tmp_path: Path) -> None:
    rng = random.Random(3)
    labels = ["O", "B-PER", "I-PER", "B-LOC"]
    sentences = [[(f"w{i}_{j}", rng.choice(labels)) for j in range(rng.randint(1, 7))] for i in range(3000)]
    gold, pred = [], []
    for i, s in enumerate(sentences):
        if i % 50 == 0:
            gold.append("-DOCSTART- O\n\n")
        block = "".join(f"{t} {lab}\n" for t, lab in s) + "\n"
        gold.append(block)
        pred.append(block.replace("\n\n", "\n   \n"))  # and blank lines made of spaces in the other
    g, p = write(tmp_path / "g", "".join(gold)), write(tmp_path / "p", "".join(pred))
    whole = spanscore.evaluate(reference=g, predicted=p, keep_details=False, chunk_bytes=1 << 30)
    for chunk in (500, 4096):
        assert (
            spanscore.evaluate(reference=g, predicted=p, keep_details=False, chunk_bytes=chunk).counts == whole.counts
        )
    assert whole.counts.sentences == 3000 and whole.counts.documents == 60
    assert whole.metrics["strict"]["f1"] == 1.0


def test_jsonl_is_read_by_its_name_and_refused_as_conll(tmp_path: Path) -> None:
    doc = {"id": "a", "text": "Ada met Bob", "spans": [{"start": 0, "end": 3, "label": "PER"}]}
    named = write(tmp_path / "g.jsonl", json.dumps(doc) + "\n")
    code, out = run("evaluate", str(named), str(named), "--json")
    assert code == 0 and json.loads(out)["metrics"]["strict"]["f1"] == 1.0
    plain = write(tmp_path / "g.txt", json.dumps(doc) + "\n")
    refused(*run("evaluate", str(plain), str(plain)), f"{plain}:1:", "pass --format jsonl")


def test_jsonl_byte_order_mark_and_line_separators_are_text(tmp_path: Path) -> None:
    doc = {"id": "a", "text": "Ada\u2028met\u0085Bob", "spans": [{"start": 0, "end": 3, "label": "PER"}]}
    path = write(tmp_path / "g.jsonl", b"\xef\xbb\xbf" + (json.dumps(doc, ensure_ascii=False) + "\n").encode())
    report = spanscore.evaluate(reference=path, predicted=path, format="jsonl")
    assert report.metrics["strict"]["f1"] == 1.0


def test_unknown_label_names_the_first_bad_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "b", "a\tPER\nb\tPER\nc\tO\nd\tLOC\n\n")
    with pytest.raises(InputError) as err:
        spanscore.evaluate(reference=bad, predicted=bad)
    assert err.value.line == 1 and "'PER'" in str(err.value)
    lower = write(tmp_path / "l", "a\tb-per\nb\ti-per\nc\to\n\n")
    with pytest.raises(InputError) as err:
        spanscore.evaluate(reference=lower, predicted=lower)
    assert err.value.line == 1 and "'b-per'" in str(err.value)
    odd = write(tmp_path / "o", "a\tB-X\tO\nb\tO\nc\tO\n\n")
    with pytest.raises(InputError, match="as most lines have"):
        spanscore.evaluate(reference=odd, predicted=odd, format="conll", delimiter="tab")


def test_types_that_neither_side_has_are_refused(tmp_path: Path) -> None:
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    refused(*run("evaluate", str(g), str(p), "--types", "PERSON"), "PERSON", "LOC, PER")
    refused(*run("evaluate", str(g), str(p), "--type-map", "PERS=X"), "PERS", "LOC, PER")
    with pytest.raises(OptionError, match="not the string"):
        spanscore.evaluate(reference=g, predicted=p, types="PER")  # type: ignore[arg-type]
    ok = spanscore.evaluate(reference=g, predicted=p, type_map={"PER": "PERSON"}, types=["PERSON"])
    assert ok.counts.types == ("PERSON",)


# Tracebacks found by hand.


def test_markup_in_labels_is_printed_as_it_is(tmp_path: Path) -> None:
    g = write(tmp_path / "g", "a\tB-[/x]\nb\tB-[bold]PER\n\n")
    code, out = run("evaluate", str(g), str(g))
    assert code == 0, out
    assert "[/x]" in out and "[bold]PER" in out
    code, out = run("summarize", str(g))
    assert code == 0 and "[/x]" in out, out


def test_output_to_a_full_disk_is_one_line(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    for args in (["evaluate", str(g), str(p), "--json"], ["transform", str(g), "-o", "-", "--merge-at-mentions"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run(
                [sys.executable, "-m", "spanscore.cli.main", *args], stdout=full, stderr=subprocess.PIPE, text=True
            )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "No space left on device" in proc.stderr


def test_bad_options_and_files_are_one_line(tmp_path: Path) -> None:
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    latin = write(tmp_path / "map.tsv", b"PER\tPERSON\xe9\n")
    refused(*run("evaluate", str(g), str(p), "--type-map", str(latin)), "not UTF-8")
    code, out = run("evaluate", str(g), str(p), "--chunk-size", "-5")
    assert code == 2 and "Traceback" not in out and "chunk-size" in out
    code, out = run("evaluate", str(g), str(p), "--chunk-size", "0")
    assert code == 2 and "Traceback" not in out and "file is empty" not in out
    surrogate = write(tmp_path / "s.jsonl", '{"id": "a", "text": "x \\ud83d y", "spans": []}\n')
    refused(*run("evaluate", str(surrogate), str(surrogate)), "lone surrogate", ":1:")
    label = write(
        tmp_path / "l.jsonl", '{"id": "a", "text": "xy", "spans": [{"start": 0, "end": 1, "label": "\\udc00"}]}\n'
    )
    refused(*run("evaluate", str(label), str(label), "--json"), "lone surrogate")
    refused(
        *run("convert", str(surrogate), "-o", str(tmp_path / "c.jsonl"), "--from", "jsonl", "--to", "jsonl"),
        "JSONL already",
    )
    long_line = write(tmp_path / "long", "x" * 100_000 + "\n")
    code, out = run("evaluate", str(long_line), str(long_line))
    assert code == 2 and len(out) < 1000, out[:300]


def test_read_only_report_folder_is_one_line(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write into a read-only folder")
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        refused(*run("evaluate", str(g), str(p), "--report", str(folder)), str(folder))
    finally:
        folder.chmod(0o700)


def test_python_arguments_are_refused_as_spanscore_errors() -> None:
    labels = [["B-PER", "O"]]
    cases: list[dict[str, Any]] = [
        {"reference": None, "predicted": labels, "format": "labels"},
        {"reference": labels, "predicted": labels, "format": "labels", "credit": None},
        {"reference": (s for s in labels), "predicted": labels, "format": "labels"},
        {"reference": labels, "predicted": labels, "format": "labels", "min_overlap": "x"},
        {"reference": [[1, 2]], "predicted": [[1, 2]], "format": "labels"},
        {"reference": [[(0, 1, "PER")]], "predicted": [[(True, 2, "PER")]], "format": "spans"},
        {"reference": labels, "predicted": labels, "format": "csv"},
        {"reference": labels, "predicted": labels, "format": "labels", "labels": "XYZ"},
    ]
    for kw in cases:
        with pytest.raises(SpanscoreError):
            spanscore.evaluate(**kw)


def test_numpy_integer_offsets_are_offsets() -> None:
    ref = [[(np.int64(0), np.int64(3), "PER")]]
    assert spanscore.evaluate(reference=ref, predicted=[[(0, 3, "PER")]], format="spans").metrics["strict"]["f1"] == 1.0


def test_labels_that_differ_in_invalid_bytes_or_hold_nul_are_refused(tmp_path: Path) -> None:
    a = write(tmp_path / "a", b"x\tB-X\xff\ny\tO\n\n")
    b = write(tmp_path / "b", b"x\tB-X\xfe\ny\tO\n\n")
    with pytest.raises(InputError, match="not UTF-8") as err:
        spanscore.evaluate(reference=a, predicted=b)
    assert err.value.line == 1
    for data, line in ((b"x\tO\ny\tB-X\0\n\n", 2), (b"x\tB-X\0\n\n", 1), (b"x\tB-X\0\ny\tB-X\n\n", 1)):
        f = write(tmp_path / "n", data)
        with pytest.raises(InputError, match="NUL") as err:
            spanscore.evaluate(reference=f, predicted=f)
        assert err.value.line == line


def test_a_missing_token_names_lines_not_chunk_sentence_numbers(tmp_path: Path) -> None:
    g = write(tmp_path / "g", GOLD * 200)
    short = write(tmp_path / "p", GOLD * 150 + GOLD.replace("left\tO\n", "") + GOLD * 49)
    for kw in ({"chunk_bytes": 1 << 30}, {"chunk_bytes": 300, "keep_details": False}):
        with pytest.raises(InputError) as err:
            spanscore.evaluate(reference=g, predicted=short, **kw)
        assert "sentence of line 1508 has 1 tokens here but 2" in str(err.value), str(err.value)


# A seeded mutation fuzz of real files through every command.

MUTATIONS = (
    "drop_line",
    "duplicate_line",
    "swap_lines",
    "truncate",
    "garble_bytes",
    "insert_bytes",
    "extra_column",
    "blank_to_spaces",
    "label_prefix",
    "crlf",
)


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    lines = data.split(b"\n")
    kind = rng.choice(MUTATIONS)
    k = rng.randrange(len(lines))
    if kind == "drop_line":
        del lines[k]
    elif kind == "duplicate_line":
        lines.insert(k, lines[k])
    elif kind == "swap_lines":
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    elif kind == "truncate":
        return kind, data[: rng.randrange(len(data) + 1)]
    elif kind == "garble_bytes":
        out = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return kind, bytes(out)
    elif kind == "insert_bytes":
        at = rng.randrange(len(data) + 1)
        return kind, data[:at] + bytes(
            rng.choice([0, 9, 10, 13, 32, 34, 35, 45, 91, 123, 0xC3, 0xFF]) for _ in range(3)
        ) + data[at:]
    elif kind == "extra_column":
        lines[k] += b"\tX"
    elif kind == "blank_to_spaces":
        lines = [line or b"  " for line in lines]
    elif kind == "label_prefix":
        lines[k] = lines[k].replace(b"B-", b"Q-").replace(b"\tO", b"\tI-ORG")
    elif kind == "crlf":
        return kind, data.replace(b"\n", b"\r\n")
    return kind, b"\n".join(lines)


def _commands(g: Path, p: Path, tmp: Path, jsonl: bool) -> list[list[str]]:
    fmt = ["--format", "jsonl"] if jsonl else []
    out = [
        ["evaluate", str(g), str(p), "--json", *fmt],
        ["evaluate", str(g), str(p), "--chunk-size", "200", "--jobs", "2", *fmt],
        ["evaluate", str(g), str(p), "--report", str(tmp / "rep"), "--per-document", str(tmp / "docs.jsonl"), *fmt],
        ["summarize", str(g), *fmt],
        ["review", "create", str(g), str(p), "--db", str(tmp / "review.db"), "--type5", *fmt],
        ["compare", str(g), str(p), str(g), "--resamples", "20", "--trials", "20", "--json", *fmt],
        ["evaluate", str(g), str(p), "--ci", "0.9", "--resamples", "20", *fmt],
    ]
    if not jsonl:
        out += [
            ["validate", str(g)],
            ["repair", str(g), "-o", str(tmp / "rep.conll")],
            ["convert", str(g), "-o", str(tmp / "conv.conll"), "--to", "BIOES"],
            ["convert", str(g), "-o", str(tmp / "conv.jsonl"), "--to", "JSONL"],
            ["transform", str(g), "-o", str(tmp / "t.conll"), "--merge-at-mentions"],
            ["evaluate", str(g), str(p), "--repair", "none", "--labels", "BIOES"],
        ]
    return out


@pytest.mark.parametrize("jsonl", [False, True], ids=["conll", "jsonl"])
def test_mutated_files_never_give_a_traceback(btc: Path, tmp_path: Path, jsonl: bool) -> None:
    rng = random.Random(20261123)
    source = (btc / "dev.txt").read_bytes().split(b"\n\n")[:40]
    gold = b"\n\n".join(source) + b"\n\n"
    if jsonl:
        conll = write(tmp_path / "src.conll", gold)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "spanscore.cli.main",
                "convert",
                str(conll),
                "-o",
                str(tmp_path / "src.jsonl"),
                "--to",
                "JSONL",
            ],
            check=True,
            capture_output=True,
        )
        gold = (tmp_path / "src.jsonl").read_bytes()
    results: dict[str, int] = {"ok": 0, "refused": 0}
    mutants = 0
    runner = CliRunner()
    for m in range(60):
        kind, data = mutate(gold, rng)
        side = rng.choice(["gold", "pred", "both"])
        g = write(tmp_path / "g", data if side in ("gold", "both") else gold)
        p = write(tmp_path / "p", data if side in ("pred", "both") else gold)
        mutants += 1
        for args in _commands(g, p, tmp_path, jsonl):
            out = runner.invoke(cli, args)
            assert out.exception is None or isinstance(out.exception, SystemExit), (m, kind, args, out.output)
            assert "Traceback" not in out.output, (m, kind, args)
            assert out.exit_code in (0, 1, 2), (m, kind, args, out.exit_code, out.output)
            if out.exit_code == 2:
                errors = [line for line in out.output.splitlines() if line.startswith("spanscore: error:")]
                assert len(errors) == 1, (m, kind, args, out.output)
                results["refused"] += 1
            else:
                results["ok"] += 1
            leftovers = [f.name for f in tmp_path.iterdir() if f.name.startswith(".") and f.name.endswith(".part")]
            assert not leftovers, (m, kind, args, leftovers)
    assert mutants == 60 and results["refused"] > 0 and results["ok"] > 0


def test_mutated_python_data_never_gives_a_bare_error() -> None:
    rng = random.Random(7)
    base = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    junk: list[Any] = [None, 1, 1.5, "", "B-", "I-X", b"O", ["O"], ("O",), {"O": 1}, True, np.int64(1)]
    for _ in range(300):
        ref = [list(s) for s in base]
        pred = [list(s) for s in base]
        target = rng.choice([ref, pred])
        how = rng.randrange(4)
        if how == 0:
            target[rng.randrange(len(target))][0] = rng.choice(junk)
        elif how == 1:
            target.append(rng.choice(junk))
        elif how == 2:
            target[rng.randrange(len(target))].append("O")
        else:
            target[rng.randrange(len(target))] = rng.choice(junk)
        with contextlib.suppress(SpanscoreError):  # anything else (a TypeError...) fails the test
            spanscore.evaluate(reference=ref, predicted=pred, format="labels")


def test_jsonl_report_rows_carry_the_document_ids(tmp_path: Path) -> None:
    from spanscore.presentation import ReportWriter, write_report

    gold = [
        {"id": f"doc,{i}", "text": "Ada met Bob", "spans": [{"start": 0, "end": 3, "label": "PER"}]} for i in range(3)
    ]
    pred = [
        {"id": f"doc,{i}", "text": "Ada met Bob", "spans": [{"start": 0, "end": 7, "label": "PER"}]} for i in range(3)
    ]
    g = write(tmp_path / "g.jsonl", "".join(json.dumps(d) + "\n" for d in gold))
    p = write(tmp_path / "p.jsonl", "".join(json.dumps(d) + "\n" for d in pred))
    writer = ReportWriter(tmp_path / "streamed")
    writer.finish(spanscore.evaluate(reference=g, predicted=p, format="jsonl", keep_details=False, rows=writer))
    write_report(spanscore.evaluate(reference=g, predicted=p, format="jsonl"), tmp_path / "kept")
    streamed = (tmp_path / "streamed" / "overlap.csv").read_text(encoding="utf-8")
    assert streamed == (tmp_path / "kept" / "overlap.csv").read_text(encoding="utf-8")
    assert streamed.splitlines()[1].startswith('"doc,0",Ada,PER,0,3,Ada met,PER,0,7,partial,0.5,longer')
    assert '"doc,2",' in (tmp_path / "streamed" / "errors.csv").read_text(encoding="utf-8")


def test_repairs_are_reported_once_per_file_without_changing_scores(tmp_path: Path) -> None:
    g = write(tmp_path / "g", GOLD * 30)
    p = write(tmp_path / "p", (PRED.replace("B-LOC", "I-LOC") + GOLD) * 15)
    clean = spanscore.evaluate(reference=g, predicted=g).to_dict()
    assert "repairs" not in clean
    for chunk in (1 << 20, 300):
        data = spanscore.evaluate(reference=g, predicted=p, chunk_bytes=chunk, keep_details=False).to_dict()
        assert data["repairs"] == {
            "policy": "conlleval",
            "predicted": {"file": str(p), "invalid_transitions": 15, "first_line": 4},
        }
    discard = spanscore.evaluate(reference=g, predicted=p, repair="discard").to_dict()
    assert discard["repairs"]["policy"] == "discard" and discard["repairs"]["predicted"]["invalid_transitions"] == 15
    code, out = run("evaluate", str(g), str(p))
    assert code == 0 and f"15in{p}(firstatline4)" in "".join(out.split())  # wrapped at 80 columns
    code, out = run("evaluate", str(g), str(p), "--report", str(tmp_path / "r"), "--json")
    data = json.JSONDecoder().raw_decode(out)[0]  # stderr follows: "report written to ..."
    assert code == 0 and data["repairs"]["predicted"]["first_line"] == 4
    assert "first at line 4" in (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "first at line 4" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")


def test_repair_and_convert_change_the_label_column_and_nothing_else(tmp_path: Path) -> None:
    source = b"John NNP B-NP I-PER\nSmith NNP I-NP I-PER\n# sent_id=2\nParis NNP B-NP I-LOC\ncaf\xe9 NN I-NP O\n\n"
    f = write(tmp_path / "f.conll", source)
    code, out = run("repair", str(f), "-o", str(f))
    assert code == 0, out
    assert f.read_bytes() == source.replace(b"B-NP I-PER", b"B-NP B-PER").replace(b"B-NP I-LOC", b"B-NP B-LOC")
    code, out = run("convert", str(f), "-o", str(tmp_path / "f.bioes"), "--to", "BIOES")
    assert code == 0, out
    expected = f.read_bytes().replace(b"I-NP I-PER", b"I-NP E-PER").replace(b"B-NP B-LOC", b"B-NP S-LOC")
    assert (tmp_path / "f.bioes").read_bytes() == expected
    assert not [x for x in tmp_path.iterdir() if x.name.endswith(".part")]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_report_that_fails_half_way_leaves_the_folder_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    from spanscore.presentation import ReportWriter, html

    g, p = write(tmp_path / "g", GOLD * 50), write(tmp_path / "p", PRED * 50)
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")

    def broken(*args: Any, **kwargs: Any) -> str:
        raise failure

    monkeypatch.setattr(html, "render_html", broken)  # the writer imports it when the page is written
    w = ReportWriter(out)
    report = spanscore.evaluate(reference=g, predicted=p, keep_details=False, rows=w, chunk_bytes=300)
    with pytest.raises((InputError, KeyboardInterrupt)):
        w.finish(report)
    assert [f.name for f in out.iterdir()] == ["keep.txt"]  # no CSV, chart or half a page; no staging


def test_an_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    refused(*run("evaluate", str(g), str(p), "--per-document", str(p)), "is one of the inputs")
    assert p.read_text(encoding="utf-8") == PRED


def test_judgements_with_impossible_offsets_or_labels_are_refused(tmp_path: Path) -> None:
    from spanscore.programs.judge.corpus import read_corpus
    from spanscore.programs.judge.judgements import locate, read_judgements

    base = {"sentence": "John Smith left", "gold_text": "John Smith", "pred_text": "John", "score": 4}
    for extra in ({"gold_start": -15, "gold_end": -5}, {"gold_start": 10, "gold_end": 0}):
        f = write(tmp_path / "j.jsonl", json.dumps({**base, "gold_label": "PER", **extra}) + "\n")
        with pytest.raises(InputError, match="need 0 <= start < end") as err:
            read_judgements(f)
        assert err.value.line == 1
    corpus = read_corpus(write(tmp_path / "train.conll", GOLD))
    f = write(tmp_path / "j.jsonl", json.dumps({**base, "gold_label": "PERSON"}) + "\n")
    with pytest.raises(InputError, match=r"'PERSON' is not a type of .*LOC, PER"):
        locate(read_judgements(f), corpus, str(f))


def test_a_killed_writer_leaves_nothing_behind(tmp_path: Path) -> None:
    """Outputs are written with no name until complete (O_TMPFILE where Linux has it)."""
    import signal
    import time

    script = (
        "import sys, time\n"
        "from spanscore.io.files import atomic_output\n"
        "with atomic_output(sys.argv[1]) as h:\n"
        "    h.write(b'half'); h.flush(); print('writing', flush=True); time.sleep(30)\n"
    )
    target = tmp_path / "out.conll"
    target.write_bytes(b"old")
    proc = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    time.sleep(0.1)
    assert [f.name for f in tmp_path.iterdir()] == ["out.conll"] and target.read_bytes() == b"old"


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_tables_fit_the_terminal_and_the_signature_is_one_line(tmp_path: Path, columns: int) -> None:
    g, p = write(tmp_path / "g", GOLD * 20), write(tmp_path / "p", PRED * 20)
    proc = subprocess.run(
        [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(g), str(p)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(columns)},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    signature = lines[-1]
    assert signature.startswith("spanscore:") and signature.endswith("units:tokens")
    assert "zero-division:0" in signature and "type-map:none" in signature
    assert all(len(line) <= columns for line in lines[:-1])
    body = proc.stdout
    for word in ("boundary", "overlap", "partial", "Type-5", "strict", "macro"):
        assert word in body  # never cut inside
    assert not proc.stderr  # no progress bar frames when stderr is not a terminal


def test_outputs_that_are_inputs_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    g = write(tmp_path / "g", GOLD * 5)
    refused(*run("train", "crf", str(g), "-o", str(g), "--iterations", "1"), "is one of the inputs")
    refused(*run("judge", "train", str(g), "-o", str(g)), "is one of the inputs")
    assert g.read_text(encoding="utf-8") == GOLD * 5


def test_progress_bars_only_on_a_terminal_and_help_cites_papers_by_author() -> None:
    from spanscore.cli.tagger import ProgressDisplay

    assert ProgressDisplay()._progress.disable  # stderr is not a terminal under pytest: no bar frames
    seed_file = re.compile(r"(?<![0-9])00[0-4](?![0-9])")  # the seed documents' numbers, not 1000
    for args in (["judge", "user-f", "--help"], ["judge", "train", "--help"], ["evaluate", "--help"]):
        out = CliRunner().invoke(cli, args).output
        assert not seed_file.search(out), args
    assert "Nejadgholi et al." in CliRunner().invoke(cli, ["judge", "user-f", "--help"]).output


def test_the_token_row_names_its_unit() -> None:
    from spanscore.presentation.tables import scores_table

    for fmt, unit in (("labels", "entity tokens"), ("spans", "entity characters")):
        ref: Any = [["B-PER", "O"]] if fmt == "labels" else [[(0, 3, "PER")]]
        data = spanscore.evaluate(reference=ref, predicted=ref, format=fmt).to_dict()
        row = next(r for r in scores_table(data).rows if r.cells[0] == "token")
        assert row.cells[1] == unit


def test_an_unreachable_dask_scheduler_is_one_error() -> None:
    pytest.importorskip("distributed")
    from spanscore.engines.dask_engine import DaskEngine

    engine = DaskEngine(scheduler="tcp://127.0.0.1:1", connect_timeout=1)
    labels = [["B-PER", "O"]]
    with pytest.raises(OptionError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:1 \(waited 1 s\)"):
        spanscore.evaluate(reference=labels, predicted=labels, format="labels", engine=engine)


def test_a_full_disk_while_repairing_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from spanscore.io import files

    f = write(tmp_path / "f.conll", GOLD.replace("B-LOC", "I-LOC"))

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    out = CliRunner().invoke(cli, ["repair", str(f), "-o", str(f)])
    assert out.exit_code == 2 and "No space left on device" in out.output and "Traceback" not in out.output
    assert [p.name for p in tmp_path.iterdir()] == ["f.conll"]
    assert f.read_text(encoding="utf-8") == GOLD.replace("B-LOC", "I-LOC")


def test_a_review_store_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    not_a_db = write(tmp_path / "notes.db", "these are notes\n")
    refused(*run("review", "stats", "--db", str(not_a_db)), "--db", "not a database")
    refused(*run("review", "stats", "--db", str(tmp_path / "absent" / "r.db")), "--db", "unable to open")
    refused(*run("review", "stats", "--db", "mysql://someone@localhost/db"), "--db", "postgresql://")
    code, out = run("review", "stats", "--db", "postgresql://someone:secret@127.0.0.1:1/db")
    refused(code, out, "--db", "cannot open the review store")
    assert "secret" not in out  # the password is not printed
    # A store that does not exist is not made by a command that reads one.
    refused(*run("review", "stats", "--db", str(tmp_path / "new.db")), "no such review store")
    assert not (tmp_path / "new.db").exists()


def test_mutated_judgements_never_give_a_traceback(medmentions: Path, seed_pairs: Path, tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    rng = random.Random(11)
    sources = {
        ".jsonl": "\n".join((medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()[:30]) + "\n",
        ".md": (seed_pairs / "judgements.md").read_text(encoding="utf-8"),
    }
    runner = CliRunner()
    outcomes = {0: 0, 2: 0}
    for m in range(60):
        suffix = ".jsonl" if m % 2 else ".md"
        kind, data = mutate(sources[suffix].encode("utf-8"), rng)
        path = write(tmp_path / f"j{suffix}", data)
        db = tmp_path / f"r{m}.db"
        args = ["review", "import", str(path), "--db", str(db), "--name", "t", "--reviewer", "x"]
        out = runner.invoke(cli, args)
        assert out.exception is None or isinstance(out.exception, SystemExit), (m, kind, out.output)
        assert out.exit_code in (0, 2), (m, kind, out.exit_code, out.output)
        if out.exit_code == 2:
            errors = [line for line in out.output.splitlines() if line.startswith("spanscore: error:")]
            assert len(errors) == 1, (m, kind, out.output)
        outcomes[out.exit_code] += 1
    assert outcomes[0] > 0 and outcomes[2] > 0


def test_mutated_annotation_exports_and_strings_never_give_a_traceback(tmp_path: Path) -> None:
    # Each tool's export and the LLM strings, mutated, through evaluate and convert: a score or one
    # line naming the file, never a traceback.
    from spanscore.io.formats import Doc, write

    text = "Ann Lee met Bob Smith in New York today ."
    docs = [Doc(f"d{k}", text, ((0, 7, "PER"), (12, 21, "PER"), (25, 33, "LOC"))) for k in range(6)]
    sources = {}
    files = {"doccano": "d.jsonl", "label-studio": "ls.json", "prodigy": "p.jsonl", "jsonl": "j.jsonl"}
    for name, file in files.items():
        write(name, docs, tmp_path / file)
        sources[name] = (tmp_path / file).read_bytes()
    strings = "".join(
        json.dumps({"id": d.id, "mentions": [{"text": "Ann Lee", "label": "PER"}, {"text": "new york", "label": "LOC"}]}
                   )
        + "\n"
        for d in docs
    ).encode()
    rng = random.Random(14)
    runner = CliRunner()
    outcomes = {0: 0, 2: 0}
    for m in range(48):
        name = list(sources)[m % len(sources)]
        kind, data = mutate(sources[name], rng)
        mutant = write_bytes(tmp_path / f"m{m}", data)
        reference = tmp_path / files[name]
        runs = [
            ["evaluate", str(reference), str(mutant), "--format", name, "--json"],
            ["convert", str(mutant), "-o", str(tmp_path / f"out{m}.jsonl"), "--from", name, "--to", "jsonl"],
        ]
        if name == "jsonl":
            _, bad_strings = mutate(strings, rng)
            runs.append(["evaluate", str(reference), str(write_bytes(tmp_path / f"s{m}", bad_strings)),
                         "--format", "jsonl", "--predicted-format", "strings", "--json"])
        for args in runs:
            out = runner.invoke(cli, args)
            assert out.exception is None or isinstance(out.exception, SystemExit), (m, kind, args, out.output)
            assert out.exit_code in (0, 2), (m, kind, args, out.output)
            if out.exit_code == 2:
                errors = [line for line in out.output.splitlines() if line.startswith("spanscore: error:")]
                assert len(errors) == 1, (m, kind, args, out.output)
            outcomes[out.exit_code] += 1
    assert outcomes[0] > 0 and outcomes[2] > 0


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
