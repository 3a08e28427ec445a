"""Readers, options, streaming, corpus commands and CLI errors of the core."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.io.conll import parse_conll
from spanscore.io.reading import Reading
from spanscore.programs.corpus import convert, summarize, validate


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def ev(gold: Path, pred: Path | None = None, **kw: object) -> dict:
    return spanscore.evaluate(reference=gold, predicted=pred, **kw).to_dict()  # type: ignore[arg-type]


GOLD = "The\tO\nNew\tB-ORG\nYork\tI-ORG\nTimes\tI-ORG\nsaid\tO\n\nOhio\tB-LOC\nis\tO\nhere\tO\n\n"
PRED = "The\tO\nNew\tB-ORG\nYork\tI-ORG\nTimes\tI-ORG\nsaid\tO\n\nOhio\tB-ORG\nis\tO\nhere\tO\n\n"


# Reading CoNLL


def test_tab_file_keeps_tokens_with_spaces_and_empty_tokens() -> None:
    t = parse_conll(b"a b\tO\n\tB-PER\nc\tI-PER\n\n", "x")
    assert [t.token_text(i) for i in range(3)] == ["a b", "", "c"]
    assert t.columns[0].vocab[t.columns[0].ids[1]] == "B-PER"


def test_crlf_bom_comments_docstart_and_whitespace_columns() -> None:
    data = "\ufeff-DOCSTART- -X- O\r\n\r\n# sent_id = 1\r\nA  x  B-PER\r\nB x I-PER\r\n\r\n#  x  O\r\n".encode()
    t = parse_conll(data, "x")
    assert t.n_tokens == 3 and t.n_sentences == 2 and t.n_docstarts == 1
    assert [t.token_text(i) for i in range(3)] == ["A", "B", "#"]  # '#  x  O' has 3 columns: a token
    assert [t.columns[0].vocab[i] for i in t.columns[0].ids] == ["B-PER", "I-PER", "O"]
    assert t.token_line.tolist() == [4, 5, 7]


def test_documents_counted_from_docstart_lines(tmp_path: Path) -> None:
    g = write(tmp_path / "g", "-DOCSTART- O\n\na B-X\n\nb O\n\n-DOCSTART- O\n\nc B-Y\n")
    r = spanscore.evaluate(reference=g, predicted=g)
    assert (r.counts.documents, r.counts.sentences, r.counts.tokens) == (2, 3, 3)
    s = spanscore.evaluate(reference=g, predicted=g, keep_details=False, chunk_bytes=8)
    assert (s.counts.documents, s.counts.sentences, s.counts.tokens) == (2, 3, 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "file is empty"),
        ("a\tO\nb\tB-X\tZ\n", "x:2: expected 2 columns"),
        ("a\tO\nb\tQ-X\n", "x:2: unknown label 'Q-X' for encoding BIO"),
        ("a\tO\nb\t\n", "x:2: empty label"),
    ],
)
def test_bad_conll_names_file_and_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        t = parse_conll(text.encode(), "x")
        from spanscore.io.load import decode_column

        decode_column(t, 0, "BIO", "conlleval")
    assert message in str(err.value)


def test_token_mismatch_names_both_files(tmp_path: Path) -> None:
    g = write(tmp_path / "g", GOLD)
    p = write(tmp_path / "p", GOLD.replace("York", "Yrok"))
    with pytest.raises(InputError, match=r"p:3: token 'Yrok' differs from .*g:3 'York'"):
        spanscore.evaluate(reference=g, predicted=p)
    short = write(tmp_path / "s", GOLD.replace("said\tO\n", ""))
    with pytest.raises(InputError, match="the sentence of line 1 has 4 tokens here but 5"):
        spanscore.evaluate(reference=g, predicted=short)
    with pytest.raises(InputError, match="the sentence of line 1 has 4 tokens here but 5"):
        spanscore.evaluate(reference=g, predicted=short, keep_details=False)
    # Tokens are compared a word of 8 bytes at a time, then the tails of longer ones: a difference
    # past the 8th byte, and one between two long tokens' tails, are found as well.
    lg = write(tmp_path / "lg", "Internationalisation\tB-X\nis\tO\nlong\tO\n\n")
    lp = write(tmp_path / "lp", "Internationalizationn\tB-X\nis\tO\nlong\tO\n\n".replace("nn", "n"))
    with pytest.raises(InputError, match=r"lp:1: token 'Internationalization' differs"):
        spanscore.evaluate(reference=lg, predicted=lp, keep_details=False)


def test_repair_none_lists_every_invalid_transition(tmp_path: Path) -> None:
    p = write(tmp_path / "p", "a\tI-X\nb\tO\nc\tB-X\nd\tI-Y\n\n")
    with pytest.raises(InputError) as err:
        spanscore.evaluate(reference=p, predicted=p, repair="none")
    assert str(err.value).startswith(f"{p}:1: I-X cannot follow a sentence start (2 invalid BIO transitions")
    assert err.value.details == (f"{p}:1: I-X cannot follow a sentence start", f"{p}:4: I-Y cannot follow B-X")


def test_repair_policies() -> None:
    seq = [["I-X", "I-X", "O", "B-X", "I-Y", "I-Y"]]
    gold = [["B-X", "I-X", "O", "B-X", "B-Y", "I-Y"]]
    conll = spanscore.evaluate(reference=gold, predicted=seq, format="labels").metrics["strict"]
    assert (conll["full"], conll["predicted"]) == (3, 3)
    discard = spanscore.evaluate(reference=gold, predicted=seq, format="labels", repair="discard").metrics["strict"]
    assert (discard["full"], discard["predicted"]) == (1, 1)


@pytest.mark.parametrize("encoding", ["IOB1", "IOE1", "IOE2", "BIOES", "BILOU", "BMES"])
def test_encodings_round_trip_on_btc(btc: Path, tmp_path: Path, encoding: str) -> None:
    src = btc / "dev.txt"
    convert(src, tmp_path / "enc", Reading(labels="BIO"), target=encoding)
    assert validate(tmp_path / "enc", Reading(labels=encoding)).ok
    convert(tmp_path / "enc", tmp_path / "back", Reading(labels=encoding), target="BIO")
    assert (tmp_path / "back").read_bytes() == src.read_bytes()
    same = spanscore.evaluate(reference=src, predicted=src).metrics
    other = spanscore.evaluate(reference=tmp_path / "enc", predicted=tmp_path / "enc", labels=encoding).metrics
    assert other["strict"]["reference"] == same["strict"]["reference"]


def test_jsonl_round_trip_and_errors(btc: Path, tmp_path: Path) -> None:
    # JSONL text joins tokens with spaces, so sentences with empty or spaced tokens cannot come back whole.
    blocks = (btc / "dev.txt").read_text(encoding="utf-8").split("\n\n")
    keep = [b for b in blocks if b and all(ln.split("\t")[0].strip() and " " not in ln for ln in b.split("\n"))]
    src = write(tmp_path / "src", "\n\n".join(keep) + "\n\n")
    convert(src, tmp_path / "d.jsonl", Reading(labels="BIO"), target="JSONL")
    convert(tmp_path / "d.jsonl", tmp_path / "back", Reading(format="jsonl"), target="BIO")
    assert (tmp_path / "back").read_bytes() == src.read_bytes()
    convert(btc / "dev.txt", tmp_path / "d.jsonl", Reading(labels="BIO"), target="JSONL")
    a = spanscore.evaluate(reference=tmp_path / "d.jsonl", predicted=tmp_path / "d.jsonl", format="jsonl")
    assert a.metrics["strict"]["reference"] == 1126 and a.metrics["strict"]["f1"] == 1.0
    bad = write(tmp_path / "bad.jsonl", '{"id": 1, "text": "ab", "spans": [{"start": 1, "end": 5, "label": "X"}]}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:1: span 0: need 0 <= start < end <= 2"):
        spanscore.evaluate(reference=bad, predicted=bad, format="jsonl")
    broken = write(tmp_path / "broken.jsonl", '{"id": 1, "text": "ab", "spans": []}\n{"id": 2,\n')
    with pytest.raises(InputError, match=r"broken.jsonl:2: malformed JSON"):
        spanscore.evaluate(reference=broken, predicted=broken, format="jsonl")


def test_jsonl_documents_paired_by_id_and_nested_spans(tmp_path: Path) -> None:
    g = write(
        tmp_path / "g",
        '{"id": "a", "text": "the New York Times", "spans": [{"start": 0, "end": 18, "label": "ORG"},'
        ' {"start": 4, "end": 12, "label": "LOC"}]}\n{"id": "b", "text": "x", "spans": []}\n',
    )
    p = write(
        tmp_path / "p",
        '{"id": "b", "text": "x", "spans": []}\n'
        '{"id": "a", "text": "the New York Times", "spans": [{"start": 4, "end": 18, "label": "ORG"},'
        ' {"start": 4, "end": 12, "label": "LOC"}]}\n',
    )
    d = ev(g, p, format="jsonl")
    assert d["metrics"]["strict"]["full"] == 1 and d["metrics"]["right"]["partial"] == 1
    assert d["metrics"]["right"]["f1"] == pytest.approx(0.75)
    assert d["options"]["units"] == "characters"
    missing = write(tmp_path / "m", '{"id": "a", "text": "the New York Times", "spans": []}\n')
    with pytest.raises(InputError, match="document 'b' is missing"):
        spanscore.evaluate(reference=g, predicted=missing, format="jsonl")


# Scores and options


def test_paper_new_york_times_example(tmp_path: Path) -> None:
    gold = [["B-ORG", "I-ORG", "I-ORG", "I-ORG"]]
    pred = [["O", "B-ORG", "I-ORG", "I-ORG"]]
    m = spanscore.evaluate(reference=gold, predicted=pred, format="labels").metrics
    assert (m["strict"]["f1"], m["left"]["f1"], m["right"]["f1"], m["overlap"]["f1"]) == (0.0, 0.0, 0.5, 0.5)
    d = spanscore.evaluate(reference=gold, predicted=pred, format="labels", credit="dice").metrics
    assert d["overlap"]["precision"] == pytest.approx(2 * 3 / 7)
    i = spanscore.evaluate(reference=gold, predicted=pred, format="labels", credit="iou").metrics
    assert i["overlap"]["precision"] == pytest.approx(3 / 4)
    t = spanscore.evaluate(reference=gold, predicted=pred, format="labels", min_overlap=0.8).metrics
    assert t["overlap"]["partial"] == 0
    t = spanscore.evaluate(reference=gold, predicted=pred, format="labels", min_overlap=0.75).metrics
    assert t["overlap"]["partial"] == 1


def test_proportional_credit_gives_back_exact_fractions() -> None:
    gold = [["B-ORG", "I-ORG", "O", "O"]]
    pred = [["O", "B-ORG", "I-ORG", "I-ORG"]]  # overlap 1 token of 2 and 3: dice 2/5, iou 1/4
    d = spanscore.evaluate(reference=gold, predicted=pred, format="labels", credit="dice").metrics["overlap"]
    assert (d["precision"], d["recall"], d["credit"]) == (0.4, 0.4, 0.4)
    i = spanscore.evaluate(reference=gold, predicted=pred, format="labels", credit="iou").metrics["overlap"]
    assert (i["precision"], i["recall"]) == (0.25, 0.25)


def test_type_map_and_types_filter(tmp_path: Path) -> None:
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    base = ev(g, p)
    assert base["metrics"]["strict"]["full"] == 1 and base["semeval"]["exact"]["correct"] == 2
    merged = ev(g, p, type_map={"LOC": "ORG"})
    assert merged["metrics"]["strict"]["full"] == 2 and set(merged["per_type"]) == {"ORG"}
    only = ev(g, p, types=["LOC"])
    assert (only["metrics"]["strict"]["reference"], only["metrics"]["strict"]["predicted"]) == (1, 0)
    assert "types:LOC" in only["signature"]


def test_zero_division_and_empty_prediction() -> None:
    gold, pred = [["B-X", "O"]], [["O", "O"]]
    m = spanscore.evaluate(reference=gold, predicted=pred, format="labels").metrics["strict"]
    assert (m["precision"], m["recall"], m["f1"]) == (0.0, 0.0, 0.0)
    m = spanscore.evaluate(reference=gold, predicted=pred, format="labels", zero_division=1).metrics["strict"]
    assert (m["precision"], m["recall"]) == (1.0, 0.0)
    empty = spanscore.evaluate(reference=[["O"]], predicted=[["O"]], format="labels", zero_division=float("nan"))
    assert empty.to_dict()["metrics"]["strict"]["f1"] is None  # NaN is written as null


def test_per_type_counts_add_up_with_cross_type_pairs(tmp_path: Path) -> None:
    d = ev(write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED))
    for name in ("strict", "exact", "partial", "type"):
        total = d["semeval"][name]
        for key in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"):
            assert sum(t["semeval"][name][key] for t in d["per_type"].values()) == total[key]
    # The cross-type exact-span pair is COR for 'exact' on the reference side (LOC) and the prediction side (ORG).
    assert d["per_type"]["LOC"]["semeval"]["exact"]["correct"] == 1
    assert d["per_type"]["ORG"]["semeval"]["exact"]["correct_predicted"] == 2


def test_options_are_validated() -> None:
    lab = [["B-X"]]
    for kw in ({"credit": 1.5}, {"credit": "half"}, {"matching": "best"}, {"min_overlap": 2.0}, {"zero_division": 0.5}):
        with pytest.raises(OptionError):
            spanscore.evaluate(reference=lab, predicted=lab, format="labels", **kw)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="expects reference as a file path"):
        spanscore.evaluate(reference=lab, predicted=lab)
    with pytest.raises(OptionError, match="format='labels' expects"):
        spanscore.evaluate(reference="a.txt", predicted="b.txt", format="labels")


# Streaming


@pytest.mark.parametrize("chunk", [64, 4096, 1 << 20])
def test_stream_equals_memory_on_btc(btc: Path, tmp_path: Path, chunk: int) -> None:
    gold = btc / "test.txt"
    lines = gold.read_text(encoding="utf-8").split("\n")
    # A prediction that drops every third B- tag (I- tags then start mentions under conlleval).
    pred = write(
        tmp_path / "p",
        "\n".join(ln.replace("\tB-", "\tI-") if i % 3 == 0 else ln for i, ln in enumerate(lines)),
    )
    memory = spanscore.evaluate(reference=gold, predicted=pred).to_dict()
    # The error examples too: the first of each kind in corpus order, whatever the chunks.
    stream = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, chunk_bytes=chunk).to_dict()
    assert stream == memory


def test_worker_processes_give_the_same_counts_and_the_first_error(btc: Path, tmp_path: Path) -> None:
    gold = btc / "test.txt"
    lines = gold.read_text(encoding="utf-8").split("\n")
    drop_b = (ln.replace("\tB-", "\tI-") if i % 3 == 0 else ln for i, ln in enumerate(lines))
    pred = write(tmp_path / "p", "\n".join(drop_b))
    one = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, chunk_bytes=1 << 13)
    two = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, chunk_bytes=1 << 13, jobs=2)
    assert two.to_dict() == one.to_dict() and two.counts == one.counts
    # Two bad lines in different chunks: the error is the first one's, with its file and line, as in one process.
    bad = list(lines)
    first, second = len(bad) // 3, 2 * len(bad) // 3
    first += bad[first:].index(next(x for x in bad[first:] if x.strip()))
    second += bad[second:].index(next(x for x in bad[second:] if x.strip()))
    bad[first] += "\textra"
    bad[second] += "\textra"
    broken = write(tmp_path / "b", "\n".join(bad))
    for jobs in (1, 2):
        with pytest.raises(InputError) as err:
            spanscore.evaluate(reference=gold, predicted=broken, keep_details=False, chunk_bytes=1 << 13, jobs=jobs)
        assert (err.value.path, err.value.line) == (str(broken), first + 1)


def test_merged_file_equals_two_files(tmp_path: Path) -> None:
    g, p = write(tmp_path / "g", GOLD), write(tmp_path / "p", PRED)
    m = write(
        tmp_path / "m",
        "".join(
            f"{a.split(chr(9))[0]} {a.split(chr(9))[1]} {b.split(chr(9))[1]}\n" if a else "\n"
            for a, b in zip(GOLD.split("\n")[:-1], PRED.split("\n")[:-1], strict=True)
        ),
    )
    two = spanscore.evaluate(reference=g, predicted=p, keep_details=False)
    one = spanscore.evaluate(reference=m, merged=True, keep_details=False)
    one_mem = spanscore.evaluate(reference=m, merged=True)
    assert one.counts == two.counts == one_mem.counts


def test_summarize_reproduces_table_1_of_the_paper(btc: Path) -> None:
    table = {"train.txt": (6338, 3101, 1996, 2267), "dev.txt": (998, 705, 151, 270), "test.txt": (2001, 1602, 602, 792)}
    for name, (tweets, per, loc, org) in table.items():
        s = summarize(btc / name)
        assert (s["sentences"], s["types"]["PER"], s["types"]["LOC"], s["types"]["ORG"]) == (tweets, per, loc, org)


# CLI


def test_cli_evaluate_json_has_every_block(btc: Path) -> None:
    gold = str(btc / "dev.txt")
    out = CliRunner().invoke(cli, ["evaluate", gold, gold, "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    for name in ("strict", "boundary", "left", "right", "overlap", "token"):
        assert d["metrics"][name]["f1"] == 1.0
    for name in ("strict", "exact", "partial", "type"):
        assert set(d["semeval"][name]) >= {"correct", "incorrect", "partial", "missed", "spurious", "possible",
                                           "actual", "precision", "recall", "f1"}
    assert set(d["per_type"]) == {"PER", "LOC", "ORG"} and "errors" in d
    assert d["signature"].startswith("spanscore:") and "credit:0.5" in d["signature"]
    table = CliRunner().invoke(cli, ["evaluate", gold, gold])
    assert table.exit_code == 0 and "SemEval" in table.output and "overlap" in table.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evaluate", "missing.txt", "missing.txt"], "missing.txt: no such file"),
        (["evaluate", "{g}", "{empty}"], "empty: file is empty"),
        (["evaluate", "{g}", "{bad}", "--repair", "none"], "bad:2: I-ORG cannot follow O"),
        (["evaluate", "{g}", "{g}", "--credit", "lots"], "--credit takes a number"),
        (["evaluate", "{g}", "{badjson}", "--format", "jsonl"], "malformed JSON"),
        (["validate", "{bad}"], "bad:2: I-ORG cannot follow O"),
    ],
)
def test_cli_bad_input_is_one_line_and_nonzero(tmp_path: Path, args: list[str], message: str) -> None:
    files = {
        "g": write(tmp_path / "g", GOLD),
        "empty": write(tmp_path / "empty", "\n\n"),
        "bad": write(tmp_path / "bad", GOLD.replace("B-ORG", "I-ORG")),
        "badjson": write(tmp_path / "badjson", "{nope\n"),
    }
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    out = CliRunner().invoke(cli, argv)
    assert out.exit_code != 0
    assert "Traceback" not in out.output
    assert message in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_cli_corpus_commands(btc: Path, tmp_path: Path) -> None:
    r = CliRunner()
    out = r.invoke(cli, ["summarize", str(btc / "test.txt"), "--json"])
    assert json.loads(out.output)["types"] == {"LOC": 602, "ORG": 792, "PER": 1602}
    bad = write(tmp_path / "bad", GOLD.replace("B-ORG", "I-ORG"))
    fixed = tmp_path / "fixed"
    assert r.invoke(cli, ["repair", str(bad), "-o", str(fixed)]).exit_code == 0
    assert fixed.read_text() == GOLD
    assert r.invoke(cli, ["validate", str(fixed)]).exit_code == 0
    assert r.invoke(cli, ["convert", str(fixed), "-o", str(tmp_path / "e"), "--to", "BIOES"]).exit_code == 0
    assert "S-LOC" in (tmp_path / "e").read_text()


def test_every_cli_command_is_in_the_lazy_table() -> None:
    import importlib
    import pkgutil

    import spanscore.cli
    from spanscore.cli import main

    found = {}
    for info in pkgutil.iter_modules(spanscore.cli.__path__):
        module = importlib.import_module(f"spanscore.cli.{info.name}")
        for command in getattr(module, "commands", []):
            found[command.name] = info.name
    assert found == main.COMMANDS
    result = CliRunner().invoke(cli, ["--help"])
    assert all(name in result.output for name in found)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="BIO-PERLOCxé", min_size=1, max_size=20), min_size=1, max_size=300))
def test_label_ids_name_every_label(labels: list[str]) -> None:
    """Labels of any length (one word or several per label) map to ids that name them back."""
    data = "".join(f"t{i} {lab}\n" for i, lab in enumerate(labels)).encode("utf-8")
    col = parse_conll(data, "x").columns[0]
    assert [col.vocab[i] for i in col.ids.tolist()] == labels
    assert len(set(col.vocab)) == len(col.vocab)


def test_nul_byte_in_a_label_is_an_error() -> None:
    with pytest.raises(InputError, match=r"x:2: label contains a NUL byte"):
        parse_conll(b"a X\nb X\x00\n", "x")
