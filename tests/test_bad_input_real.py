"""Bad input as real files bring it: encodings of every file a command reads, the endings many
writers leave, header and comment lines of distributed datasets. One line naming the file and line
and what to do, exit 2, a SpanscoreError in Python; and read as meant once the option is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.io.reading import Reading

# CoNLL-2002's Spanish files are latin-1: "Coruña" holds the byte 0xf1.
LATIN1 = "La DA B-LOC\nCoruña NC I-LOC\n, Fc O\n23 Z O\nmay NC O\n( Fpa O\nEFE NC B-ORG\n) Fpt O\n\n"
PRED = LATIN1.replace("NC B-ORG", "NC O")


def run(*args: str) -> tuple[int, str]:
    out = CliRunner().invoke(cli, list(args))
    return out.exit_code, out.output


def refused(code: int, output: str, *needles: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("spanscore: error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], errors[0]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text, encoding in (
        ("gold", LATIN1, "latin-1"),
        ("pred", PRED, "latin-1"),
        ("gold8", LATIN1, "utf-8"),
        ("pred8", PRED, "utf-8"),
    ):
        out[name] = tmp_path / f"{name}.conll"
        out[name].write_bytes(text.encode(encoding))
    return out


# ---------------------------------------------------------------- encodings, every side


def test_a_latin1_reference_read_as_utf8_names_the_file_and_line(files: dict[str, Path]) -> None:
    code, out = run("evaluate", str(files["gold"]), str(files["pred8"]))
    refused(code, out, f"{files['gold']}:2:", "not UTF-8 text", "byte 0xf1", "--encoding")


def test_a_latin1_prediction_read_as_utf8_names_the_file_and_line(files: dict[str, Path]) -> None:
    code, out = run("evaluate", str(files["gold8"]), str(files["pred"]))
    refused(code, out, f"{files['pred']}:2:", "not UTF-8 text", "--encoding")


def test_a_latin1_training_file_names_the_file_and_line(files: dict[str, Path]) -> None:
    code, out = run(
        "evaluate", str(files["gold8"]), str(files["pred8"]), "--buckets", "seen", "--train", str(files["gold"])
    )
    refused(code, out, f"{files['gold']}:2:", "not UTF-8 text", "--encoding")


@pytest.mark.parametrize("command", ["summarize", "validate"])
def test_one_file_commands_name_the_file_and_line(files: dict[str, Path], command: str) -> None:
    code, out = run(command, str(files["gold"]))
    refused(code, out, f"{files['gold']}:2:", "--encoding")


def test_python_raises_an_input_error_naming_the_file_and_line(files: dict[str, Path]) -> None:
    with pytest.raises(InputError) as caught:
        spanscore.evaluate(reference=str(files["gold"]), predicted=str(files["pred"]))
    assert (caught.value.path, caught.value.line) == (str(files["gold"]), 2)


def test_with_its_encoding_a_latin1_file_is_read_as_meant(files: dict[str, Path]) -> None:
    """Read as latin-1, the files score exactly as their UTF-8 copies do, every token equal."""
    expected = json.loads(run("evaluate", str(files["gold8"]), str(files["pred8"]), "--json")[1])
    code, out = run("evaluate", str(files["gold"]), str(files["pred"]), "--encoding", "latin-1", "--json")
    assert code == 0, out
    got = json.loads(out)
    assert got["metrics"] == expected["metrics"]
    assert got["corpus"] == {
        "documents": 1, "sentences": 1, "tokens": 8, "reference_mentions": 2, "predicted_mentions": 1,
    }  # fmt: skip
    assert got["metrics"]["strict"]["full"] == 1
    report = spanscore.evaluate(
        reference=str(files["gold"]), predicted=str(files["pred"]), reading=Reading(encoding="latin-1")
    ).to_dict()
    assert report["metrics"] == expected["metrics"]
    code, out = run(
        "evaluate", str(files["gold"]), str(files["pred"]), "--encoding", "latin-1",
        "--buckets", "seen", "--train", str(files["gold"]), "--json",
    )  # fmt: skip
    assert code == 0, out


def test_a_latin1_reference_against_a_utf8_prediction(files: dict[str, Path]) -> None:
    """A tagger writes UTF-8: each side is read in its own encoding, and tokens compare as text."""
    code, out = run("evaluate", str(files["gold"]), str(files["pred8"]), "--encoding", "latin-1")
    refused(code, out, f"{files['pred8']}:2:", "differs")  # UTF-8 read as latin-1: "CoruÃ±a"
    code, out = run(
        "evaluate", str(files["gold"]), str(files["pred8"]), "--encoding", "latin-1",
        "--predicted-encoding", "utf-8", "--json",
    )  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["metrics"]["strict"]["full"] == 1


@pytest.mark.parametrize(
    ("value", "needle"),
    [("klingon", "unknown encoding 'klingon'"), ("utf-16", "does not keep ASCII's bytes")],
)
def test_an_encoding_that_cannot_read_conll_is_refused(files: dict[str, Path], value: str, needle: str) -> None:
    refused(*run("evaluate", str(files["gold"]), str(files["pred"]), "--encoding", value), needle)
    with pytest.raises(OptionError, match=needle):
        Reading(encoding=value)


def test_an_encoding_for_json_formats_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="is for CoNLL files"):
        Reading(format="jsonl", encoding="latin-1")


# ---------------------------------------------------------------- the endings writers leave


ENDINGS = {
    "two blank lines": "\n\n\n",
    "three blank lines": "\n\n\n\n",
    "white-space-only last line": "\n   \n",
    "white-space-only, no newline": "\n\n   ",
    "CRLF, two blank lines": "\r\n\r\n\r\n",
    "a tab-only line": "\n\t\n",
}
TEXT = "EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\ncall\tO\n\nPeter\tB-PER\nBlackburn\tI-PER"


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("side", ["reference", "predicted"])
def test_trailing_blank_lines_are_read_on_either_side(tmp_path: Path, ending: str, side: str) -> None:
    """`cat a.conll b.conll`, many writers and CRLF files leave these; the file is not empty."""
    text = TEXT + ENDINGS[ending]
    if "CRLF" in ending:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    odd = tmp_path / "odd.conll"
    odd.write_bytes(text.encode())
    plain = tmp_path / "plain.conll"
    plain.write_text(TEXT + "\n")
    ref, pred = (odd, plain) if side == "reference" else (plain, odd)
    for chunk in ("524288", "8"):
        code, out = run("evaluate", str(ref), str(pred), "--json", "--chunk-size", chunk)
        assert code == 0, out
        corpus = json.loads(out)["corpus"]
        assert (corpus["sentences"], corpus["tokens"], corpus["reference_mentions"]) == (2, 6, 3)
    report = spanscore.evaluate(reference=str(ref), predicted=str(pred)).to_dict()
    assert report["metrics"]["strict"]["f1"] == 1.0
    for command in ("summarize", "validate"):
        code, out = run(command, str(odd))
        assert code == 0, out


@pytest.mark.parametrize("blank", ["\n", "\n\n\n", "   \n\t\n", "\r\n\r\n", "\xef\xbb\xbf\n\n"])
def test_a_file_of_blank_lines_is_still_empty(tmp_path: Path, blank: str) -> None:
    empty = tmp_path / "empty.conll"
    empty.write_bytes(blank.encode("latin-1"))
    plain = tmp_path / "plain.conll"
    plain.write_text(TEXT + "\n")
    refused(*run("evaluate", str(empty), str(plain)), str(empty), "empty")
    refused(*run("evaluate", str(plain), str(empty)), str(empty))


# ---------------------------------------------------------------- header and comment lines


HIPE = (
    "TOKEN\tNE-COARSE-LIT\tNE-COARSE-METO\tMISC\n"
    "# hipe2022:document_id = d1\n"
    "Odysseus\tB-pers\t_\t_\nis\tO\t_\t_\nwarmed\tO\t_\tEndOfSentence\n\n"
    "# hipe2022:document_id = d2\n"
    "Ajax\tB-pers\t_\t_\nhad\tO\t_\t_\n"
)


def test_a_header_line_is_refused_by_name_and_read_with_header(tmp_path: Path) -> None:
    hipe = tmp_path / "hipe.tsv"
    hipe.write_text(HIPE)
    refused(*run("evaluate", str(hipe), str(hipe), "--label-column", "1"), f"{hipe}:1:", "NE-COARSE-LIT")
    code, out = run("evaluate", str(hipe), str(hipe), "--label-column", "1", "--header", "--json")
    assert code == 0, out
    assert json.loads(out)["corpus"] == {
        "documents": 1, "sentences": 2, "tokens": 5, "reference_mentions": 2, "predicted_mentions": 2,
    }  # fmt: skip
    # The header of the first chunk only: a later chunk's first line is a token.
    code, out = run("evaluate", str(hipe), str(hipe), "--label-column", "1", "--header", "--json", "--chunk-size", "8")
    assert code == 0 and json.loads(out)["corpus"]["tokens"] == 5, out
    with pytest.raises(OptionError, match="header=True is for CoNLL"):
        Reading(format="jsonl", header=True)


def test_germeval_comment_lines_with_as_many_fields_as_tokens(tmp_path: Path) -> None:
    germeval = tmp_path / "germeval.tsv"
    germeval.write_text(
        "#\thttp://de.wikipedia.org/wiki/Troia\t[2009-10-17]\t\n1\tin\tO\tO\n2\tTroia\tB-LOC\tO\n\n"
        "#\thttp://www.heise.de/tp/\t[2010-07-04]\t\n1\tEcce\tB-OTH\tO\n2\thomo\tI-OTH\tO\n\n"
    )
    code, out = run("evaluate", str(germeval), str(germeval), "--token-column", "1", "--label-column", "2", "--json")
    assert code == 0, out
    assert json.loads(out)["corpus"]["tokens"] == 4
    # With the token first, "#<TAB>..." is a token line (a hashtag), as WNUT's files have them.
    wnut = tmp_path / "wnut.conll"
    wnut.write_text("#\tO\nTroia\tB-location\n\n#ny\tO\n")
    code, out = run("evaluate", str(wnut), str(wnut), "--json")
    assert code == 0 and json.loads(out)["corpus"]["tokens"] == 3, out


def test_train_and_predict_read_tokens_in_the_files_encoding(tmp_path: Path) -> None:
    """A tagger trained and applied on CoNLL-2002's latin-1 file sees the same tokens as on a UTF-8
    copy: the labels it writes are the same, and the latin-1 bytes are kept around them."""
    pytest.importorskip("sklearn_crfsuite")
    source = Path(__file__).parent / "data" / "real" / "datasets" / "conll2002" / "esp.testa"
    latin = source.read_bytes()
    utf8 = tmp_path / "esp.utf8"
    utf8.write_bytes(latin.decode("latin-1").encode("utf-8"))
    refused(*run("train", "crf", str(source), "-o", str(tmp_path / "m.crf")), f"{source}:", "--encoding")
    model = tmp_path / "esp.crf"
    code, out = run("train", "crf", str(source), "-o", str(model), "--iterations", "5", "--encoding", "latin-1")
    assert code == 0, out
    refused(*run("predict", str(model), str(source), "-o", str(tmp_path / "x")), f"{source}:", "--encoding")
    a, b = tmp_path / "a.conll", tmp_path / "b.conll"
    code, out = run("predict", str(model), str(source), "-o", str(a), "--encoding", "latin-1", "--append")
    assert code == 0, out
    code, out = run("predict", str(model), str(utf8), "-o", str(b), "--append")
    assert code == 0, out
    assert a.read_bytes().decode("latin-1") == b.read_bytes().decode("utf-8")
    assert a.read_bytes().decode("latin-1").count("Coruña") == latin.decode("latin-1").count("Coruña") > 0


def test_convert_reads_latin1_and_keeps_a_header(tmp_path: Path) -> None:
    real = Path(__file__).parent / "data" / "real" / "datasets"
    esp = real / "conll2002" / "esp.testa"
    out = tmp_path / "esp.jsonl"
    refused(*run("convert", str(esp), "-o", str(out), "--to", "jsonl"), f"{esp}:", "--encoding")
    code, said = run("convert", str(esp), "-o", str(out), "--to", "jsonl", "--encoding", "latin-1")
    assert code == 0, said
    assert "Coruña" in out.read_text(encoding="utf-8")
    # Rewriting labels keeps every other byte: the header line, comments, latin-1 tokens.
    hipe = real / "hipe2022-ajmc" / "HIPE-2022-v2.1-ajmc-dev-en.tsv"
    bioes = tmp_path / "hipe.bioes"
    code, said = run("convert", str(hipe), "-o", str(bioes), "--to", "bioes", "--label-column", "1", "--header")
    assert code == 0, said
    before, after = hipe.read_text().split("\n"), bioes.read_text().split("\n")
    assert [line.split("\t")[:1] + line.split("\t")[2:] for line in before] == [
        line.split("\t")[:1] + line.split("\t")[2:] for line in after
    ]
    assert before[0] == after[0] and any(a != b for a, b in zip(before, after, strict=True))
    code, said = run("evaluate", str(hipe), str(bioes), "--label-column", "1", "--header", "--json")
    assert code != 0  # BIOES labels read as BIO: refused, not scored
    lat = tmp_path / "esp.bioes"
    code, said = run("convert", str(esp), "-o", str(lat), "--to", "bioes")
    assert code == 0, said  # a rewrite needs no encoding: the bytes stay latin-1
    assert lat.read_bytes().decode("latin-1").count("Coruña") == esp.read_bytes().decode("latin-1").count("Coruña")
