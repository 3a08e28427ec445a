"""WebAnno TSV 3 as INCEpTION writes it: the reference files of INCEpTION's own TSV 3 writer
(tests/data/real/webanno/inception/README.md), read equal to a count made here by a parser of the
test's own, scored against themselves and against perturbed copies (counts worked out by hand)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.io.document import Document
from spanscore.io.formats import read, write

DATA = Path(__file__).parent / "data" / "real" / "webanno" / "inception"
FILES = sorted(DATA.glob("*.tsv"))
Mention = tuple[int, int, str]


def independent(path: Path, column: int, short: str) -> tuple[str, list[Mention]]:
    """The text and mentions of a one-layer file, read the plain way: the #Text lines joined by
    line breaks (every file here is one sentence starting at offset 0), each cell split at '|',
    '[N]' joining lines, UTF-16 offsets turned into characters by encoding the text."""
    lines = path.read_text(encoding="utf-8").split("\n")
    text = "\n".join(line[len("#Text=") :] for line in lines if line.startswith("#Text="))
    units = text.encode("utf-16-le")

    def char(offset: int) -> int:
        return len(units[: 2 * offset].decode("utf-16-le"))

    found: dict[str, list[int | str]] = {}
    single: list[Mention] = []
    for line in lines:
        if not re.match(r"\d+-\d+", line):
            continue
        fields = line.split("\t")
        begin, end = (int(x) for x in fields[1].split("-"))
        cell = fields[column]
        if cell == "_":
            continue
        for entry in cell.split("|"):
            label, _, ident = entry.partition("[")
            label = short if label == "*" else label
            if not ident:
                single.append((char(begin), char(end), label))
                continue
            span = found.setdefault(ident, [begin, end, label])
            span[0], span[1] = min(int(span[0]), begin), max(int(span[1]), end)
    joined = [(char(int(b)), char(int(e)), str(lab)) for b, e, lab in found.values()]
    return text, sorted(single + joined)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_inception_files_read_equal_to_an_independent_count(path: Path) -> None:
    # The label's column (the value feature) and the short name of the file's span layer.
    layout = {"testDependencyWithValues": (3, "POS"), "multipleStackedAnnotationsAreNotMerged-user1": (4, "")}
    column, short = layout.get(path.stem, (3, "Span"))
    text, mentions = independent(path, column, short)
    (doc,), notes = read("webanno", path)
    assert doc.id == "0"
    assert doc.text == text
    assert sorted(doc.spans) == mentions
    assert notes.skipped == {}


def test_hand_counts_of_the_inception_files() -> None:
    # Worked by hand from the files: stacked mentions are separate mentions.
    counts = {p.stem: len(read("webanno", p)[0][0].spans) for p in FILES}
    assert counts == {
        "multipleStackedAnnotationsAreNotMerged-user1": 2,
        "testDependencyWithValues": 2,
        "testMultiTokenSpanWithFeatureValue": 1,
        "testMultiTokenStackedSpanWithoutFeatureValue": 2,
        "testSentenceWithEmoji": 1,
        "testSentenceWithLineBreak": 1,
        "testTokenBoundedStackedSpanWithFeatureValue": 10,
    }
    (emoji,), _ = read("webanno", DATA / "testSentenceWithEmoji.tsv")
    assert emoji.spans == ((10, 11, "Span"),) and emoji.text[10] == "\N{SMILING FACE WITH SMILING EYES}"
    (stacked,), _ = read("webanno", DATA / "testMultiTokenStackedSpanWithoutFeatureValue.tsv")
    assert stacked.spans == ((0, 16, "Span"), (0, 16, "Span"))
    (news,), _ = read("webanno", DATA / "multipleStackedAnnotationsAreNotMerged-user1.tsv")
    assert news.spans == ((40, 56, "ORG"), (40, 56, "ORGpart")) and news.text[40:56] == "Champions League"


def test_layer_and_feature_options() -> None:
    path = DATA / "testDependencyWithValues.tsv"
    assert read("webanno", path)[0][0].spans == ((0, 4, "POS1"), (5, 7, "POS2"))
    by_layer = read("webanno", path, layer="POS", feature="PosValue")[0]
    assert by_layer == read("webanno", path, layer="de.tudarmstadt.ukp.dkpro.core.api.lexmorph.type.pos.POS")[0]
    # coarseValue is unset ('*'): the mentions are labelled with the layer's short name.
    assert read("webanno", path, feature="coarseValue")[0][0].spans == ((0, 4, "POS"), (5, 7, "POS"))
    layers = r"no span layer 'Dependency': the span layers are POS \(de.*lexmorph\.type\.pos\.POS\)"
    with pytest.raises(OptionError, match=layers):
        read("webanno", path, layer="Dependency")
    with pytest.raises(OptionError, match="no feature 'lemma': its features are 'PosValue', 'coarseValue'"):
        read("webanno", path, feature="lemma")


def test_each_file_against_itself_is_perfect() -> None:
    for path in FILES:
        data = spanscore.evaluate(reference=path, predicted=path, format="webanno").to_dict()
        assert all(block["f1"] == 1.0 for block in data["metrics"].values()), path.name
        assert all(block["f1"] == 1.0 for block in data["semeval"].values()), path.name


def test_perturbed_prediction_counts_by_hand(tmp_path: Path) -> None:
    source = DATA / "testTokenBoundedStackedSpanWithFeatureValue.tsv"
    pred = tmp_path / "pred.tsv"
    text = source.read_text(encoding="utf-8")
    # Token 'is' loses one of its two stacked mentions; token 'a' has one relabelled.
    text = text.replace("is\tNE[3]|NE[4]", "is\tNE[3]").replace("a\tNE[5]|NE[6]", "a\tNE[5]|ORG[6]")
    pred.write_text(text, encoding="utf-8")
    data = spanscore.evaluate(reference=source, predicted=pred, format="webanno").to_dict()
    strict = data["metrics"]["strict"]
    # 10 reference mentions, 9 predicted; 8 exact (the relabelled one is a type error).
    assert (strict["full"], strict["predicted"], strict["reference"]) == (8, 9, 10)
    assert data["metrics"]["boundary"]["full"] == 9
    semeval = data["semeval"]["strict"]
    assert (semeval["correct"], semeval["incorrect"], semeval["missed"], semeval["spurious"]) == (8, 1, 1, 0)


def test_folder_of_exports_pairs_documents_by_path(tmp_path: Path) -> None:
    for user in ("alice", "bob"):
        for path in FILES[:3]:
            target = tmp_path / user / f"{path.stem}.txt" / "annotation.tsv"
            target.parent.mkdir(parents=True)
            shutil.copy(path, target)
    docs, _ = read("webanno", tmp_path / "alice")
    assert [d.id for d in docs] == sorted(f"{p.stem}.txt/annotation" for p in FILES[:3])
    result = CliRunner().invoke(
        cli, ["evaluate", str(tmp_path / "alice"), str(tmp_path / "bob"), "--format", "webanno", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert '"f1": 1.0' in result.output
    # A folder is one system to compare, as a BRAT folder is.
    compared = CliRunner().invoke(
        cli, ["compare", str(tmp_path / "alice"), str(tmp_path / "bob"), str(tmp_path / "alice"), "--format",
              "webanno", "--json"]
    )
    assert compared.exit_code == 0, compared.output
    assert [s["name"] for s in json.loads(compared.output)["systems"]] == ["bob", "alice"]


def test_convert_webanno_to_jsonl(tmp_path: Path) -> None:
    path = DATA / "testSentenceWithEmoji.tsv"
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out), "--from", "webanno", "--to", "jsonl"])
    assert result.exit_code == 0, result.output
    assert read("jsonl", out)[0] == read("webanno", path)[0]


PIECES = st.sampled_from(["Ann", "Lee", "Köln", "😊", "a\\b", "x_y", "[1]", "|", "*", "->", ";", ".", "2020"])
GAPS = st.sampled_from([" ", "  ", "\n", "\r\n", "\t", " \n "])


@st.composite
def documents(draw: st.DrawFn) -> Document:
    words = draw(st.lists(PIECES, min_size=1, max_size=10))
    text, starts = "", []
    for k, w in enumerate(words):
        if k:
            text += draw(GAPS)
        starts.append(len(text))
        text += w
    lead = draw(st.sampled_from(["", " ", "\n"]))
    text = lead + text + draw(st.sampled_from(["", "\n", " "]))
    starts = [s + len(lead) for s in starts]
    spans = set()
    for a, b in draw(st.lists(st.tuples(st.integers(0, len(words) - 1), st.integers(0, len(words) - 1)), max_size=6)):
        first, last = min(a, b), max(a, b)
        label = draw(st.sampled_from(["PER", "LOC", "B_x", "a|b", "*", "[2]", "x\\y"]))
        start, end = starts[first], starts[last] + len(words[last])
        # Now and then a boundary on white space (a prediction's), which the writer must keep too.
        start = max(0, start - draw(st.integers(0, 1)))
        end = min(len(text), end + draw(st.integers(0, 1)))
        spans.add((start, end, label))
    return Document(id="d", text=text, spans=tuple(sorted(spans)))


@settings(max_examples=60, deadline=None)
@given(st.lists(documents(), min_size=1, max_size=3))
def test_round_trip_jsonl_webanno_jsonl(docs: list[Document]) -> None:
    import tempfile

    docs = [Document(id=f"doc{k}", text=d.text, spans=d.spans) for k, d in enumerate(docs)]
    with tempfile.TemporaryDirectory() as folder:
        write("webanno", docs, Path(folder) / "out")
        back, notes = read("webanno", Path(folder) / "out")
    assert back == docs
    assert notes.skipped == {}


def test_writer_refuses_what_it_would_lose(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="white space alone"):
        write("webanno", [Document(id="a", text="  ", spans=())], tmp_path / "w")
    with pytest.raises(OptionError, match="discontinuous"):
        write("webanno", [Document(id="a", text="Ann Lee", spans=((0, 7, "PER"),), fragments=(((0, 3), (4, 7)),))],
              tmp_path / "w")
    assert not (tmp_path / "w").exists()
    write("webanno", [Document(id="empty", text="", spans=())], tmp_path / "w")
    assert read("webanno", tmp_path / "w")[0] == [Document(id="empty", text="", spans=())]


@st.composite
def any_document(draw: st.DrawFn) -> Document:
    text = draw(st.text(alphabet=st.sampled_from(list("ab .,-\n\t\r\u00a0😊é\\|_*[]")), min_size=1, max_size=30))
    text = text if text.strip() else text + "a"
    pairs = draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), max_size=6))
    spans = sorted({(min(a, b), max(a, b), draw(st.sampled_from(["PER", "L|C"]))) for a, b in pairs if a != b})
    return Document(id="d", text=text, spans=tuple(spans))


@settings(max_examples=80, deadline=None)
@given(any_document())
def test_writer_keeps_any_text_and_mentions(doc: Document) -> None:
    """Whatever the text (white space, escapes, characters beyond 16 bits) and wherever the
    mentions begin and end (inside words, on white space), the file written reads back the same."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        write("webanno", [doc], Path(folder) / "out")
        assert read("webanno", Path(folder) / "out")[0] == [doc]
