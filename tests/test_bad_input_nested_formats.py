"""Bad input to the DocBin and WebAnno TSV readers, as a user meets it: one line naming the file
(and line) and what to do, exit 2 from ``spanscore evaluate`` and the same message as a
SpanscoreError from ``spanscore.evaluate``; never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import SpanscoreError

DOCBIN = "docbin"  # the format's name in the registry
DATA = Path(__file__).parent / "data" / "real" / "webanno" / "inception"
HEADER = "#FORMAT=WebAnno TSV 3.3\n#T_SP=webanno.custom.Span|value\n\n\n#Text=Ann Lee .\n"

TWO_LAYERS = "#FORMAT=WebAnno TSV 3.3\n#T_SP=a.B|value\n#T_SP=c.D|value\n\n\n#Text=A\n1-1\t0-1\tA\tX\t_\t\n"
RELATIONS_ONLY = "#FORMAT=WebAnno TSV 3.3\n#T_RL=a.R|f|BT_a.B\n\n\n#Text=A\n"
NO_SENTENCE = "#FORMAT=WebAnno TSV 3.3\n#T_SP=a.B|value\n\n1-1\t0-1\tA\t_\t\n"


def docbin(path: Path, key: str | None = None) -> Path:
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import DocBin, Span

    doc = spacy.blank("en")("Ann Lee met Bob .")
    if key is None:
        doc.ents = [Span(doc, 0, 2, "PER")]
    else:
        doc.spans[key] = [Span(doc, 0, 2, "PER"), Span(doc, 0, 1, "X")]
    DocBin(docs=[doc]).to_disk(path)
    return path


def text_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


Make = Callable[[Path], tuple[Path, str, dict[str, str]]]

CASES: dict[str, tuple[Make, tuple[str, ...]]] = {
    "not a DocBin": (
        lambda tmp: (text_file(tmp / "x.spacy", "Ann Lee\tB-PER\n"), DOCBIN, {}),
        ("x.spacy", "not a spaCy DocBin (.spacy) file", "DocBin.to_disk"),
    ),
    "no such DocBin": (lambda tmp: (tmp / "missing.spacy", DOCBIN, {}), ("missing.spacy", "no such file")),
    "span group that is not there": (
        lambda tmp: (docbin(tmp / "g.spacy", key="sc"), DOCBIN, {"spans_key": "spans"}),
        ("g.spacy", "no span group 'spans'", "its span groups are 'sc'"),
    ),
    "span group in a DocBin without groups": (
        lambda tmp: (docbin(tmp / "e.spacy"), DOCBIN, {"spans_key": "sc"}),
        ("e.spacy", "no span group 'sc'", "no span groups", "leave spans_key out"),
    ),
    "unknown DocBin option": (
        lambda tmp: (docbin(tmp / "e.spacy"), DOCBIN, {"key": "sc"}),
        ("option 'key'", "it takes spans_key"),
    ),
    "not WebAnno TSV": (
        lambda tmp: (text_file(tmp / "x.tsv", "Ann\tB-PER\nLee\tI-PER\n"), "webanno", {}),
        ("x.tsv:1", "not WebAnno TSV 3", "#FORMAT=WebAnno TSV 3.x"),
    ),
    "empty WebAnno file": (lambda tmp: (text_file(tmp / "e.tsv", ""), "webanno", {}), ("e.tsv:1", "not WebAnno TSV 3")),
    "folder without .tsv files": (lambda tmp: (tmp, "webanno", {}), ("no .tsv files",)),
    "layer that is not there": (
        lambda tmp: (DATA / "testDependencyWithValues.tsv", "webanno", {"layer": "NamedEntity"}),
        ("testDependencyWithValues.tsv", "no span layer 'NamedEntity'", "the span layers are POS ("),
    ),
    "feature that is not there": (
        lambda tmp: (DATA / "testDependencyWithValues.tsv", "webanno", {"feature": "lemma"}),
        ("no feature 'lemma'", "its features are 'PosValue', 'coarseValue'"),
    ),
    "several span layers and no choice": (
        lambda tmp: (
            text_file(tmp / "two.tsv", TWO_LAYERS),
            "webanno",
            {},
        ),
        ("two.tsv", "several span layers", "B (a.B), D (c.D)", "layer="),
    ),
    "no span layer": (
        lambda tmp: (text_file(tmp / "rel.tsv", RELATIONS_ONLY), "webanno", {}),
        ("rel.tsv", "no span layer (#T_SP=)"),
    ),
    "token line with too few columns": (
        lambda tmp: (text_file(tmp / "cols.tsv", HEADER + "1-1\t0-3\tAnn\n"), "webanno", {}),
        ("cols.tsv:6", "needs 4 tab-separated columns", "got 3"),
    ),
    "token not at its offsets": (
        lambda tmp: (text_file(tmp / "off.tsv", HEADER + "1-1\t0-3\tAnn\tPER\t\n1-2\t4-6\tLee\t_\t\n"), "webanno", {}),
        ("off.tsv:7", "token 'Lee' is not the text at 4-6"),
    ),
    "offsets outside the text": (
        lambda tmp: (text_file(tmp / "far.tsv", HEADER + "1-1\t0-3\tAnn\t_\t\n1-2\t4-90\tLee\t_\t\n"), "webanno", {}),
        ("far.tsv:7", "offset 90 is outside"),
    ),
    "bad position column": (
        lambda tmp: (text_file(tmp / "pos.tsv", HEADER + "one\t0-3\tAnn\t_\t\n"), "webanno", {}),
        ("pos.tsv:6", "SENT-TOK and BEGIN-END"),
    ),
    "token line before any sentence": (
        lambda tmp: (text_file(tmp / "pre.tsv", NO_SENTENCE), "webanno", {}),
        ("pre.tsv:4", "before any #Text= line"),
    ),
    "unknown WebAnno option": (
        lambda tmp: (DATA / "testSentenceWithEmoji.tsv", "webanno", {"spans_key": "x"}),
        ("option 'spans_key'", "it takes layer, feature"),
    ),
}


def one_line(message: str, needles: tuple[str, ...]) -> None:
    assert "\n" not in message.strip(), message
    assert "Traceback" not in message
    for needle in needles:
        assert needle in message, message


@pytest.mark.parametrize("name", list(CASES))
def test_refused_with_one_line(tmp_path: Path, name: str) -> None:
    make, needles = CASES[name]
    path, fmt, options = make(tmp_path)
    args = ["evaluate", str(path), str(path), "--format", fmt]
    for key, value in options.items():
        args += ["--reference-option", f"{key}={value}", "--predicted-option", f"{key}={value}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    one_line(result.output, needles)
    with pytest.raises(SpanscoreError) as exc:
        spanscore.evaluate(
            reference=path, predicted=path, format=fmt, reference_options=options, predicted_options=options
        )
    one_line(str(exc.value), needles)
    assert str(exc.value) in result.output


@pytest.mark.parametrize("direction", ["read", "write"])
def test_missing_spacy_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direction: str) -> None:
    path = docbin(tmp_path / "a.spacy")
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy now raises ImportError
    if direction == "read":
        args: list[Any] = ["evaluate", str(path), str(path), "--format", DOCBIN]
    else:
        gold = text_file(tmp_path / "g.jsonl", '{"id": "a", "text": "Ann", "spans": []}\n')
        args = ["convert", str(gold), "-o", str(tmp_path / "out.spacy"), "--from", "jsonl", "--to", DOCBIN]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    one_line(result.output, ("spaCy DocBin needs: pip install 'spanscore[spacy]'",))
    if direction == "read":
        with pytest.raises(SpanscoreError) as exc:
            spanscore.evaluate(reference=path, predicted=path, format=DOCBIN)
        one_line(str(exc.value), ("pip install 'spanscore[spacy]'",))
    assert not (tmp_path / "out.spacy").exists()


def test_convert_refuses_overlapping_entities_and_writes_nothing(tmp_path: Path) -> None:
    path = docbin(tmp_path / "g.spacy", key="sc")
    out = tmp_path / "ents.spacy"
    mid = tmp_path / "g.jsonl"
    ok = CliRunner().invoke(cli, ["convert", str(path), "-o", str(mid), "--from", DOCBIN, "--to", "jsonl",
                                  "--option", "spans_key=sc"])
    assert ok.exit_code == 0, ok.output
    result = CliRunner().invoke(cli, ["convert", str(mid), "-o", str(out), "--from", "jsonl", "--to", DOCBIN])
    assert result.exit_code == 2
    one_line(result.output, ("ents.spacy: not written", "mention 0..7 PER overlaps 0..3 X", "spans_key=NAME"))
    assert not out.exists()
