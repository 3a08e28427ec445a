"""spaCy's DocBin read and written by spanscore: DocBins written by spaCy itself (a blank pipeline,
``DocBin.to_disk``), read equal to the mentions put into them, scored against themselves and
against perturbed copies (counts worked out here), and round trips through JSONL."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.io.formats import read, write
from spanscore.io.jsonl import read_jsonl
from spanscore.programs.samples import write_samples

spacy = pytest.importorskip("spacy")
from spacy.tokens import DocBin  # noqa: E402

NLP = spacy.blank("en")
DOCBIN = "docbin"  # the format's name in the registry
Mention = tuple[int, int, str]

# Real sentences (news style) with nested mentions: an organisation inside which a place is named.
NESTED = [
    (
        "The University of Edinburgh signed a deal with Bank of Scotland on Monday .",
        [(4, 27, "ORG"), (18, 27, "LOC"), (47, 63, "ORG"), (55, 63, "LOC"), (67, 73, "DATE")],
    ),
    ("Angela Merkel met Emmanuel Macron in Berlin .", [(0, 13, "PER"), (18, 33, "PER"), (37, 43, "LOC")]),
]


def docbin_file(path: Path, docs: list[tuple[str, list[Mention]]], *, key: str | None = None) -> Path:
    """A DocBin written by spaCy: each text tokenised by a blank English pipeline, the mentions set as
    entities (``key`` None) or as the span group ``key``."""
    out = DocBin()
    for text, mentions in docs:
        doc = NLP(text)
        spans = [doc.char_span(s, e, label=lab) for s, e, lab in mentions]
        assert all(span is not None for span in spans), (text, mentions)
        if key is None:
            doc.ents = spans
        else:
            doc.spans[key] = spans
        out.add(doc)
    out.to_disk(path)
    return path


def sample_docs(tmp_path: Path) -> list[tuple[str, list[Mention]]]:
    folder = tmp_path / "samples"
    folder.mkdir()
    write_samples(folder)
    return [(d.text, list(d.spans)) for d in read_jsonl(folder / "gold.jsonl")]


def strict_counts(reference: list[list[Mention]], predicted: list[list[Mention]]) -> tuple[int, int, int]:
    """Independent strict count: (matched, predicted, reference), identical mentions per document."""
    hits = sum(len(set(r) & set(p)) for r, p in zip(reference, predicted, strict=True))
    return hits, sum(map(len, predicted)), sum(map(len, reference))


def test_samples_written_by_spacy_read_equal(tmp_path: Path) -> None:
    docs = sample_docs(tmp_path)
    path = docbin_file(tmp_path / "gold.spacy", docs)
    read_docs, notes = read(DOCBIN, path)
    assert [d.id for d in read_docs] == [str(k) for k in range(len(docs))]
    assert [d.text for d in read_docs] == [t for t, _ in docs]
    assert [sorted(d.spans) for d in read_docs] == [sorted(m) for _, m in docs]
    assert sum(len(d.spans) for d in read_docs) == sum(len(m) for _, m in docs) > 0
    assert notes.skipped == {}


def test_docbin_against_itself_is_perfect_under_every_criterion(tmp_path: Path) -> None:
    path = docbin_file(tmp_path / "gold.spacy", sample_docs(tmp_path))
    data = spanscore.evaluate(reference=path, predicted=path, format=DOCBIN).to_dict()
    for name, block in data["metrics"].items():
        assert block["f1"] == 1.0, name
    for name, block in data["semeval"].items():
        assert block["f1"] == 1.0, name


def perturb(docs: list[tuple[str, list[Mention]]]) -> list[tuple[str, list[Mention]]]:
    """Every third mention dropped, every third (from the second) relabelled, the rest kept."""
    out = []
    k = 0
    for text, mentions in docs:
        kept: list[Mention] = []
        for s, e, lab in mentions:
            if k % 3 == 0:
                pass
            elif k % 3 == 1:
                kept.append((s, e, "MISC" if lab != "MISC" else "PER"))
            else:
                kept.append((s, e, lab))
            k += 1
        out.append((text, kept))
    return out


def test_perturbed_docbin_counts_equal_an_independent_count(tmp_path: Path) -> None:
    docs = sample_docs(tmp_path)
    pred = perturb(docs)
    gold_path = docbin_file(tmp_path / "gold.spacy", docs)
    pred_path = docbin_file(tmp_path / "pred.spacy", pred)
    data = spanscore.evaluate(reference=gold_path, predicted=pred_path, format=DOCBIN).to_dict()
    hits, n_pred, n_ref = strict_counts([m for _, m in docs], [m for _, m in pred])
    strict = data["metrics"]["strict"]
    assert (strict["full"], strict["predicted"], strict["reference"]) == (hits, n_pred, n_ref)
    # Relabelled mentions keep their boundaries: every prediction is a boundary match.
    assert data["metrics"]["boundary"]["full"] == n_pred
    semeval = data["semeval"]["strict"]
    assert (semeval["correct"], semeval["incorrect"], semeval["missed"]) == (hits, n_pred - hits, n_ref - n_pred)
    # The same documents as spanscore's JSONL give the same counts.
    as_jsonl = [tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"]
    for source, target in zip((gold_path, pred_path), as_jsonl, strict=True):
        write("jsonl", read(DOCBIN, source)[0], target)
    again = spanscore.evaluate(reference=as_jsonl[0], predicted=as_jsonl[1], format="jsonl").to_dict()
    assert again["metrics"] == data["metrics"]


def test_span_group_reads_nested_mentions(tmp_path: Path) -> None:
    path = docbin_file(tmp_path / "nested.spacy", NESTED, key="sc")
    docs, notes = read(DOCBIN, path, spans_key="sc")
    assert [sorted(d.spans) for d in docs] == [sorted(m) for _, m in NESTED]
    assert sum(len(d.spans) for d in docs) == 8
    entities, entity_notes = read(DOCBIN, path)
    assert all(d.spans == () for d in entities)
    assert entity_notes.skipped == {"mentions in span groups (read one with spans_key=)": 8}
    assert notes.skipped == {}
    self_scored = spanscore.evaluate(
        reference=path,
        predicted=path,
        format=DOCBIN,
        reference_options={"spans_key": "sc"},
        predicted_options={"spans_key": "sc"},
    ).to_dict()
    assert all(block["f1"] == 1.0 for block in self_scored["metrics"].values())
    # The prediction misses the inner places: recall 6/8 under strict, precision 1.
    outer = [(t, [m for m in ms if m[2] != "LOC" or m[0] == 37]) for t, ms in NESTED]
    pred = docbin_file(tmp_path / "outer.spacy", outer, key="sc")
    scored = spanscore.evaluate(
        reference=path,
        predicted=pred,
        format=DOCBIN,
        reference_options={"spans_key": "sc"},
        predicted_options={"spans_key": "sc"},
    ).to_dict()
    strict = scored["metrics"]["strict"]
    assert (strict["full"], strict["predicted"], strict["reference"]) == (6, 6, 8)


def test_writer_refuses_overlapping_entities_naming_the_mention(tmp_path: Path) -> None:
    docs, _ = read(DOCBIN, docbin_file(tmp_path / "n.spacy", NESTED, key="sc"), spans_key="sc")
    with pytest.raises(spanscore.errors.OptionError) as exc:
        write(DOCBIN, docs, tmp_path / "ents.spacy")
    message = str(exc.value)
    assert "\n" not in message
    assert "18..27 LOC overlaps 4..27 ORG" in message and "spans_key" in message
    assert not (tmp_path / "ents.spacy").exists()
    write(DOCBIN, docs, tmp_path / "group.spacy", spans_key="nested")
    assert read(DOCBIN, tmp_path / "group.spacy", spans_key="nested")[0] == docs


def test_writer_keeps_text_and_mentions_whatever_the_tokens(tmp_path: Path) -> None:
    doc = spanscore.io.document.Document(
        id="odd", text="  New-York\tcity\n\nis  big ", spans=((2, 5, "LOC"), (2, 15, "X"), (6, 10, "LOC"))
    )
    write(DOCBIN, [doc], tmp_path / "odd.spacy", spans_key="g")
    back = read(DOCBIN, tmp_path / "odd.spacy", spans_key="g")[0]
    assert back == [doc]
    # spaCy itself reads what was written.
    (made,) = DocBin().from_disk(tmp_path / "odd.spacy").get_docs(NLP.vocab)
    assert made.text == doc.text
    assert made.user_data["id"] == "odd"
    assert sorted((s.start_char, s.end_char, s.label_) for s in made.spans["g"]) == sorted(doc.spans)


def convert(args: list[str]) -> Any:
    result = CliRunner().invoke(cli, ["convert", *args])
    assert result.exit_code == 0, result.output
    return result


def test_cli_convert_docbin_to_jsonl_and_back(tmp_path: Path) -> None:
    path = docbin_file(tmp_path / "n.spacy", NESTED, key="sc")
    out = str(tmp_path / "n.jsonl")
    convert([str(path), "-o", out, "--from", DOCBIN, "--to", "jsonl", "--option", "spans_key=sc"])
    lines = [json.loads(line) for line in (tmp_path / "n.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [sorted((s["start"], s["end"], s["label"]) for s in line["spans"]) for line in lines] == [
        sorted(m) for _, m in NESTED
    ]
    convert([str(tmp_path / "n.jsonl"), "-o", str(tmp_path / "back.spacy"), "--from", "jsonl", "--to", DOCBIN,
             "--to-option", "spans_key=sc"])
    assert read(DOCBIN, tmp_path / "back.spacy", spans_key="sc")[0] == read(DOCBIN, path, spans_key="sc")[0]
    refused = CliRunner().invoke(cli, ["convert", str(tmp_path / "n.jsonl"), "-o", str(tmp_path / "e.spacy"),
                                       "--from", "jsonl", "--to", DOCBIN])
    assert refused.exit_code == 2
    assert "overlaps" in refused.output and len(refused.output.strip().splitlines()) == 1


WORDS = st.lists(st.sampled_from(["Ann", "Lee", "met", "New", "York", "in", "2020", ",", "the", "Bank"]), min_size=1,
                 max_size=12)


@st.composite
def documents(draw: Any, overlapping: bool) -> tuple[str, list[Mention]]:
    words = draw(WORDS)
    starts, position = [], 0
    for w in words:
        starts.append(position)
        position += len(w) + 1
    text = " ".join(words)
    n = len(words)
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, n)), max_size=6))
    mentions: list[Mention] = []
    taken: set[int] = set()
    for a, b in pairs:
        first, last = min(a, b - 1), max(a, b - 1)
        if not overlapping and taken & set(range(first, last + 1)):
            continue
        taken |= set(range(first, last + 1))
        label = draw(st.sampled_from(["PER", "LOC", "ORG"]))
        mentions.append((starts[first], starts[last] + len(words[last]), label))
    return text, sorted(set(mentions))


@pytest.mark.parametrize("overlapping", [False, True])
def test_round_trip_docbin_jsonl_docbin(tmp_path_factory: pytest.TempPathFactory, overlapping: bool) -> None:
    key = "sc" if overlapping else None
    options = ["--option", "spans_key=sc"] if key else []
    to_options = ["--to-option", "spans_key=sc"] if key else []

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(documents(overlapping), min_size=1, max_size=4))
    def check(docs: list[tuple[str, list[Mention]]]) -> None:
        folder = tmp_path_factory.mktemp("rt")
        source = docbin_file(folder / "in.spacy", docs, key=key)
        convert([str(source), "-o", str(folder / "mid.jsonl"), "--from", DOCBIN, "--to", "jsonl", *options])
        convert([str(folder / "mid.jsonl"), "-o", str(folder / "out.spacy"), "--from", "jsonl", "--to", DOCBIN,
                 *to_options])
        first = read(DOCBIN, source, **({"spans_key": key} if key else {}))[0]
        again = read(DOCBIN, folder / "out.spacy", **({"spans_key": key} if key else {}))[0]
        assert again == first
        assert [sorted(d.spans) for d in again] == [sorted(m) for _, m in docs]

    check()


BTC = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "btc" / "test.txt"


def bio_mentions(tags: list[str]) -> list[tuple[int, int, str]]:
    """Token spans of IOB2 tags (the file's own: no repair needed), counted here."""
    out: list[tuple[int, int, str]] = []
    for k, tag in enumerate(tags):
        if tag.startswith("B-") or (tag.startswith("I-") and (not out or out[-1][1] != k or out[-1][2] != tag[2:])):
            out.append((k, k + 1, tag[2:]))
        elif tag.startswith("I-"):
            out[-1] = (out[-1][0], k + 1, out[-1][2])
    return out


@pytest.mark.skipif(not BTC.is_file(), reason="needs ../shared (the Broad Twitter Corpus)")
def test_real_tweets_docbin_by_spacy_reads_the_corpus_counts(tmp_path: Path) -> None:
    """The Broad Twitter Corpus test split (2001 tweets), each a Doc made by spaCy from its words
    and IOB tags (spaCy decodes them), saved with DocBin.to_disk: read, its mentions are the
    corpus's published counts (PER 1602, LOC 602, ORG 792) and, tweet by tweet, those counted here."""
    from spacy.tokens import Doc

    sentences: list[list[tuple[str, str]]] = [[]]
    for line in BTC.read_text(encoding="utf-8").split("\n"):
        if not line:
            if sentences[-1]:
                sentences.append([])
            continue
        word, tag = line.rsplit("\t", 1)
        sentences[-1].append((word.strip() or "_", tag))  # three blank tokens (all O) in the file
    sentences = [s for s in sentences if s]
    out = DocBin()
    expected = []
    for sentence in sentences:
        words = [w for w, _ in sentence]
        out.add(Doc(NLP.vocab, words=words, spaces=[True] * (len(words) - 1) + [False], ents=[t for _, t in sentence]))
        starts = [sum(len(w) + 1 for w in words[:k]) for k in range(len(words))]
        expected.append(sorted((starts[a], starts[b - 1] + len(words[b - 1]), t) for a, b, t in bio_mentions(
            [t for _, t in sentence])))
    path = tmp_path / "btc.spacy"
    out.to_disk(path)
    docs, _ = read(DOCBIN, path)
    assert len(docs) == 2001
    assert [sorted(d.spans) for d in docs] == expected
    labels = [label for d in docs for _, _, label in d.spans]
    assert {t: labels.count(t) for t in ("PER", "LOC", "ORG")} == {"PER": 1602, "LOC": 602, "ORG": 792}
    data = spanscore.evaluate(reference=path, predicted=path, format=DOCBIN).to_dict()
    assert all(block["f1"] == 1.0 for block in data["metrics"].values())


@st.composite
def any_document(draw: Any) -> spanscore.io.document.Document:
    text = draw(st.text(alphabet=st.sampled_from(list("ab .,-\n\t\r\u00a0😊é")), min_size=1, max_size=30))
    pairs = draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))), max_size=6))
    spans = sorted({(min(a, b), max(a, b), draw(st.sampled_from(["PER", "LOC"]))) for a, b in pairs if a != b})
    return spanscore.io.document.Document(id="d", text=text, spans=tuple(spans))


@settings(max_examples=80, deadline=None)
@given(any_document())
def test_writer_keeps_any_text_and_mentions_in_a_span_group(doc: spanscore.io.document.Document) -> None:
    """Whatever the text's white space and wherever the mentions begin and end (inside words, on
    white space), the DocBin written holds the text and the mentions exactly."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.spacy"
        write(DOCBIN, [doc], path, spans_key="g")
        assert read(DOCBIN, path, spans_key="g")[0] == [doc]


def spacy_convert(conll: Path, folder: Path) -> Path:
    """``python -m spacy convert -c ner -n 1``: spaCy's own converter, one Doc per sentence. Its
    reader takes every line for a token, so the samples' -DOCSTART- and comment lines are left out."""
    import subprocess

    clean = folder / conll.name
    lines = [line for line in conll.read_text(encoding="utf-8").split("\n") if not line.startswith(("-DOCSTART-", "#"))]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    clean.write_text(text.lstrip("\n"), encoding="utf-8")
    out = folder / "converted"
    out.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "convert", str(clean), str(out), "-c", "ner", "-n", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out / f"{conll.stem}.spacy"


def test_spacy_convert_output_scores_as_the_samples_jsonl(tmp_path: Path) -> None:
    """The samples' CoNLL files made DocBins by ``spacy convert`` read as the same mentions as the
    samples' JSONL (spaCy's texts end with a space, the only difference), and score the same."""
    folder = tmp_path / "samples"
    folder.mkdir()
    write_samples(folder)
    gold = spacy_convert(folder / "gold.conll", tmp_path)
    pred = spacy_convert(folder / "pred.conll", tmp_path)
    docs, _ = read(DOCBIN, gold)
    expected = read_jsonl(folder / "gold.jsonl")
    assert [d.id for d in docs] == [d.id for d in expected]
    assert [d.text.rstrip(" ") for d in docs] == [d.text for d in expected]
    assert [d.spans for d in docs] == [tuple(sorted(d.spans)) for d in expected]
    by_spacy = spanscore.evaluate(reference=gold, predicted=pred, format=DOCBIN).to_dict()
    as_jsonl = spanscore.evaluate(reference=folder / "gold.jsonl", predicted=folder / "pred.jsonl", format="jsonl")
    assert by_spacy["metrics"] == as_jsonl.to_dict()["metrics"]
    assert by_spacy["semeval"] == as_jsonl.to_dict()["semeval"]
