"""Real dataset files, as their authors distribute them (excerpts: tests/data/real/datasets/README.md).

For each file, what a careful user expects, checked against something spanscore did not compute:

* the counts of documents, sentences, tokens and mentions equal those written here, which a
  plain-Python reader of this module (``independent``) also finds;
* the file scored against itself is perfect under every criterion;
* on a seeded perturbation of its labels, spanscore's strict figures (micro and per type, from
  the command line and from Python) equal seqeval's and conlleval's;
* every table of evaluate, summarize, validate and compare shows every figure of its --json
  output whole, at 80 and 100 columns.

The layout variants users meet (CRLF line ends, a byte order mark, trailing blank lines,
white-space-only last lines, tabs and spaces mixed) are made here from the real files.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import conlleval
import pytest
from click.testing import CliRunner
from seqeval.metrics.sequence_labeling import get_entities

import spanscore
from spanscore.cli.main import cli
from spanscore.io.reading import Reading

DATA = Path(__file__).parent / "data" / "real" / "datasets"


@dataclass(frozen=True)
class Dataset:
    """A file and how a user reads it: the options, and the same layout for the independent reader."""

    path: str
    options: tuple[str, ...] = ()
    token: int = 0
    label: int = -1
    tab: bool = True  # columns separated by one tab (else runs of white space)
    encoding: str = "utf-8"
    header: bool = False
    comment: str | None = None  # lines starting with this are comments
    # Written here from the distributed files (and found again by ``independent``):
    documents: int = 1
    sentences: int = 0
    tokens: int = 0
    mentions: int = 0
    types: frozenset[str] = field(default_factory=frozenset)

    @property
    def file(self) -> Path:
        return DATA / self.path

    def reading(self) -> Reading:
        return Reading(token_column=self.token, label_column=self.label, encoding=self.encoding, header=self.header)

    @property
    def id(self) -> str:
        return self.path


WNUT = frozenset({"corporation", "creative-work", "group", "location", "person", "product"})
HIPE = ("--label-column", "1", "--header")
DATASETS = [
    Dataset("wnut17/emerging.dev.conll", sentences=300, tokens=4447, mentions=282, types=WNUT),
    # Sentences end with a line holding one tab, as distributed.
    Dataset("wnut17/wnut17train.conll", sentences=300, tokens=5775, mentions=156, types=WNUT),
    Dataset("wnut17/emerging.test.annotated", sentences=300, tokens=4363, mentions=244, types=WNUT),
    Dataset(
        "uner-da-ddt/da_ddt-ud-dev.iob2",
        ("--token-column", "1", "--label-column", "2"),
        token=1,
        label=2,
        comment="# ",
        sentences=150,
        tokens=2980,
        mentions=93,
        types=frozenset({"LOC", "ORG", "PER"}),
    ),
    Dataset(
        "hipe2022-ajmc/HIPE-2022-v2.1-ajmc-dev-en.tsv",
        HIPE,
        label=1,
        header=True,
        comment="#",
        sentences=4,
        tokens=1449,
        mentions=68,
        types=frozenset({"date", "loc", "pers", "scope", "work"}),
    ),
    Dataset(
        "hipe2022-newseye/HIPE-2022-v2.1-newseye-dev-de.tsv",
        HIPE,
        label=1,
        header=True,
        comment="#",
        sentences=1,
        tokens=1154,
        mentions=30,
        types=frozenset({"LOC", "PER"}),
    ),
    Dataset(
        "hipe2022-sonar/HIPE-2022-v2.1-sonar-dev-de.tsv",
        HIPE,
        label=1,
        header=True,
        comment="#",
        sentences=1,
        tokens=1153,
        mentions=33,
        types=frozenset({"LOC", "ORG", "PER"}),
    ),
    Dataset(
        "germeval2014/NER-de-dev.tsv",
        ("--token-column", "1", "--label-column", "2"),
        token=1,
        label=2,
        comment="#",
        sentences=200,
        tokens=3610,
        mentions=248,
        types=frozenset({"LOC", "LOCderiv", "LOCpart", "ORG", "ORGderiv", "ORGpart", "OTH", "PER", "PERpart"}),
    ),
    Dataset(
        "conll2002/esp.testa",
        ("--encoding", "latin-1"),
        tab=False,
        encoding="latin-1",
        sentences=200,
        tokens=3345,
        mentions=296,
        types=frozenset({"LOC", "MISC", "ORG", "PER"}),
    ),
    Dataset(
        "sec-filings/FIN3.txt",
        tab=False,
        documents=1,
        sentences=79,
        tokens=3553,
        mentions=121,
        types=frozenset({"LOC", "MISC", "ORG", "PER"}),
    ),
    Dataset(
        "anem/AnEM.test",
        sentences=150,
        tokens=3741,
        mentions=148,
        types=frozenset(
            {
                "Anatomical_system",
                "Cell",
                "Cellular_component",
                "Immaterial_anatomical_entity",
                "Multi-tissue_structure",
                "Organ",
                "Organism_subdivision",
                "Organism_substance",
                "Pathological_formation",
                "Tissue",
            }
        ),
    ),
    Dataset(
        "turku-ner/dev.tsv",
        documents=14,
        sentences=286,
        tokens=3579,
        mentions=89,
        types=frozenset({"DATE", "EVENT", "LOC", "ORG", "PER", "PRO"}),
    ),
    Dataset(
        "europeana/enp_DE.onb.bio",
        tab=False,
        sentences=1,
        tokens=4000,
        mentions=449,
        types=frozenset({"LOC", "ORG", "PER"}),
    ),
]


# ---------------------------------------------------------------- the independent reader


@dataclass
class Read:
    """What the plain reader found: each sentence's labels, where each token line is, the lines."""

    documents: int
    sentences: list[list[str]]
    tokens: list[list[str]]
    lines: list[str]
    where: list[list[int]]  # line index of each token, per sentence


def independent(spec: Dataset, data: bytes | None = None) -> Read:
    """The file read line by line in plain Python, as its documentation describes it."""
    raw = spec.file.read_bytes() if data is None else data
    text = raw.decode("utf-8-sig" if spec.encoding == "utf-8" else spec.encoding)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    documents, sentences, tokens, where = 0, [], [], []
    labels: list[str] = []
    words: list[str] = []
    at: list[int] = []
    header = spec.header

    def close() -> None:
        nonlocal labels, words, at
        if labels:
            sentences.append(labels)
            tokens.append(words)
            where.append(at)
        labels, words, at = [], [], []

    for i, line in enumerate(lines):
        line = line.rstrip("\r")
        if not line.strip():
            close()
            continue
        if header:
            header = False
            continue
        if line.startswith("-DOCSTART-"):
            documents += 1
            close()
            continue
        if spec.comment is not None and line.startswith(spec.comment):
            continue
        fields = line.split("\t") if spec.tab else line.split()
        words.append(fields[spec.token])
        labels.append(fields[spec.label].strip())
        at.append(i)
    close()
    return Read(max(documents, 1), sentences, tokens, lines, where)


def chunks(labels: list[str]) -> list[tuple[int, int, str]]:
    """Mentions as conlleval finds them: B- starts one; I- starts one after O or another type."""
    found: list[tuple[int, int, str]] = []
    start, kind = -1, ""
    for k, label in enumerate([*labels, "O"]):
        prefix, _, name = label.partition("-")
        begins = prefix == "B" or (prefix == "I" and (start < 0 or name != kind))
        if start >= 0 and (prefix == "O" or begins):
            found.append((start, k, kind))
            start, kind = -1, ""
        if begins:
            start, kind = k, name
    return found


# ---------------------------------------------------------------- the perturbed prediction


def perturb(read: Read, seed: int) -> list[list[str]]:
    """Each sentence's labels with mentions dropped, retyped, shifted and added (seeded)."""
    rng = random.Random(seed)
    kinds = sorted({kind for labels in read.sentences for *_, kind in chunks(labels)}) or ["X"]
    out = []
    for labels in read.sentences:
        n = len(labels)
        placed: list[tuple[int, int, str]] = []
        for start, end, kind in chunks(labels):
            r = rng.random()
            if r < 0.15:
                continue
            if r < 0.3:
                kind = rng.choice(kinds)
            elif r < 0.4:
                end = min(end + 1, n)
            elif r < 0.5 and end - start > 1:
                start += 1
            elif r < 0.55 and start > 0:
                start -= 1
            placed.append((start, end, kind))
        for k in range(n):
            if labels[k] == "O" and rng.random() < 0.02:
                placed.append((k, k + 1, rng.choice(kinds)))
        new = ["O"] * n
        taken = [False] * n
        for start, end, kind in sorted(placed):
            if any(taken[start:end]):
                continue
            for k in range(start, end):
                taken[k] = True
                new[k] = ("B-" if k == start else "I-") + kind
        out.append(new)
    return out


def write_prediction(spec: Dataset, read: Read, labels: list[list[str]], target: Path) -> Path:
    """The reference's bytes with each token line's label field replaced: every other byte kept."""
    lines = list(read.lines)
    for at, new in zip(read.where, labels, strict=True):
        for i, label in zip(at, new, strict=True):
            line = lines[i]
            cr = "\r" if line.endswith("\r") else ""
            line = line.removesuffix("\r")
            if spec.tab:
                fields = line.split("\t")
                fields[spec.label] = label
                lines[i] = "\t".join(fields) + cr
            else:
                pieces = re.split(r"(\s+)", line)
                words = list(range(0, len(pieces), 2))
                pieces[words[spec.label]] = label
                lines[i] = "".join(pieces) + cr
    text = "\n".join(lines) + "\n"
    target.write_bytes(text.encode("utf-8" if spec.encoding == "utf-8" else spec.encoding))
    return target


# ---------------------------------------------------------------- helpers


def cli_json(*args: str, width: int = 100) -> Any:
    out = CliRunner().invoke(cli, [*args, "--json"], terminal_width=width, env={"COLUMNS": str(width)})
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def shown(*args: str, width: int, code: int = 0) -> str:
    out = CliRunner().invoke(cli, list(args), terminal_width=width, env={"COLUMNS": str(width)})
    assert out.exit_code == code, out.output
    return out.output


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def seqeval_counts(truth: list[list[str]], guess: list[list[str]]) -> dict[str, Counter[str]]:
    """True positives, predicted and reference mentions per type, from seqeval's own decoding."""

    def spans(seqs: list[list[str]]) -> set[tuple[int, str, int, int]]:
        return {(s, kind, a, b) for s, labels in enumerate(seqs) for kind, a, b in get_entities(labels)}

    t, g = spans(truth), spans(guess)
    return {
        "full": Counter(k for _, k, _, _ in t & g),
        "predicted": Counter(k for _, k, _, _ in g),
        "reference": Counter(k for _, k, _, _ in t),
    }


@pytest.fixture(params=DATASETS, ids=lambda d: d.id)
def dataset(request: pytest.FixtureRequest) -> Dataset:
    spec: Dataset = request.param
    return spec


# ---------------------------------------------------------------- counts


def test_the_independent_reader_finds_the_counts_written_here(dataset: Dataset) -> None:
    read = independent(dataset)
    assert read.documents == dataset.documents
    assert len(read.sentences) == dataset.sentences
    assert sum(map(len, read.sentences)) == dataset.tokens
    assert sum(len(chunks(s)) for s in read.sentences) == dataset.mentions
    if dataset.types:
        assert {kind for s in read.sentences for *_, kind in chunks(s)} == dataset.types


def test_spanscore_counts_equal_the_counts_written_here(dataset: Dataset) -> None:
    f = str(dataset.file)
    for corpus in (
        cli_json("evaluate", f, f, *dataset.options)["corpus"],
        spanscore.evaluate(reference=f, predicted=f, reading=dataset.reading()).to_dict()["corpus"],
    ):
        assert corpus == {
            "documents": dataset.documents,
            "sentences": dataset.sentences,
            "tokens": dataset.tokens,
            "reference_mentions": dataset.mentions,
            "predicted_mentions": dataset.mentions,
        }
    row = cli_json("summarize", f, *dataset.options)  # one file: one object
    read = independent(dataset)
    assert row["types"] == dict(Counter(kind for s in read.sentences for *_, kind in chunks(s)))
    assert (row["documents"], row["sentences"], row["tokens"], row["mentions"]) == (
        dataset.documents,
        dataset.sentences,
        dataset.tokens,
        dataset.mentions,
    )


def test_a_file_against_itself_is_perfect_under_every_criterion(dataset: Dataset) -> None:
    f = str(dataset.file)
    report = spanscore.evaluate(reference=f, predicted=f, reading=dataset.reading()).to_dict()
    for name, block in report["metrics"].items():
        assert (block["precision"], block["recall"], block["f1"]) == (1.0, 1.0, 1.0), name
    for name, block in report["semeval"].items():
        assert block["f1"] == 1.0, name
    for name, block in report["macro"].items():
        assert block["f1"] == 1.0, name
    errors = report["errors"]
    assert errors["correct"] == dataset.mentions
    assert errors["false_positive"] == errors["false_negative"] == errors["wrong_label_same_span"] == 0


# ---------------------------------------------------------------- peers on a perturbed prediction


@pytest.mark.parametrize("seed", [0, 1])
def test_strict_figures_equal_seqeval_and_conlleval_on_a_perturbed_prediction(
    dataset: Dataset, seed: int, tmp_path: Path
) -> None:
    read = independent(dataset)
    guess = perturb(read, seed)
    pred = write_prediction(dataset, read, guess, tmp_path / ("pred-" + dataset.file.name))
    assert independent(dataset, pred.read_bytes()).sentences == guess  # the file says what was meant
    f = str(dataset.file)
    from_cli = cli_json("evaluate", f, str(pred), *dataset.options)
    from_python = spanscore.evaluate(reference=f, predicted=str(pred), reading=dataset.reading()).to_dict()
    for report in (from_cli, from_python):
        assert report["metrics"] == from_cli["metrics"] and report["per_type"] == from_cli["per_type"]

    counts = seqeval_counts(read.sentences, guess)
    strict = from_cli["metrics"]["strict"]
    full, predicted, reference = (sum(counts[k].values()) for k in ("full", "predicted", "reference"))
    assert (strict["full"], strict["predicted"], strict["reference"]) == (full, predicted, reference)
    assert strict["partial"] == 0
    from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

    assert same(strict["precision"], precision_score(read.sentences, guess))
    assert same(strict["recall"], recall_score(read.sentences, guess))
    assert same(strict["f1"], f1_score(read.sentences, guess))
    per_type = classification_report(read.sentences, guess, output_dict=True, zero_division=0)
    kinds = set(counts["predicted"]) | set(counts["reference"])
    assert set(from_cli["per_type"]) == kinds
    for kind in kinds:
        mine = from_cli["per_type"][kind]["metrics"]["strict"]
        assert (mine["full"], mine["predicted"], mine["reference"]) == (
            counts["full"][kind],
            counts["predicted"][kind],
            counts["reference"][kind],
        ), kind
        if kind in per_type:
            for name in ("precision", "recall", "f1-score"):
                assert same(mine[name.removesuffix("-score")], per_type[kind][name]), (kind, name)

    lines = []
    for truth, labels in zip(read.sentences, guess, strict=True):  # tokens as "w": some hold spaces
        lines += [f"w {t} {g}" for t, g in zip(truth, labels, strict=True)] + ["-X- O O"]
    peer = conlleval.evaluate(lines)
    overall = peer["overall"]["chunks"]
    assert (overall["stats"]["correct"], overall["stats"]["gold"], overall["stats"]["pred"]) == (
        full,
        reference,
        predicted,
    )
    assert same(strict["precision"], overall["evals"]["prec"])
    assert same(strict["recall"], overall["evals"]["rec"])
    assert same(strict["f1"], overall["evals"]["f1"])


def test_semeval_counts_equal_nervaluate_on_a_perturbed_prediction(dataset: Dataset) -> None:
    """On the sentences where no mention overlaps two of the other side's (there, nervaluate's
    categories do not depend on the order it reads predictions in), SemEval-2013 counts equal
    nervaluate's; mentions as the independent reader decodes them."""
    from nervaluate import Evaluator

    read = independent(dataset)
    guess = perturb(read, 3)

    def overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
        return a[0] < b[1] and b[0] < a[1]

    # Each cluster of mentions joined by overlaps (on both sides) is a document of its own.
    gold, pred = [], []
    for truth, labels in zip(read.sentences, guess, strict=True):
        both = sorted([(a, b, k, 0) for a, b, k in chunks(truth)] + [(a, b, k, 1) for a, b, k in chunks(labels)])
        clusters: list[list[tuple[int, int, str, int]]] = []
        for m in both:
            if clusters and m[0] < max(x[1] for x in clusters[-1]):
                clusters[-1].append(m)
            else:
                clusters.append([m])
        for cluster in clusters:
            g = [(a, b, k) for a, b, k, side in cluster if side == 0]
            p = [(a, b, k) for a, b, k, side in cluster if side == 1]
            if all(sum(overlaps(x, y) for y in p) <= 1 for x in g) and all(
                sum(overlaps(x, y) for x in g) <= 1 for y in p
            ):
                gold.append(g)
                pred.append(p)
    assert sum(map(len, gold)) > 0.5 * dataset.mentions  # most mentions are compared
    kinds = sorted({kind for doc in gold + pred for *_, kind in doc})

    def dicts(docs: list[list[tuple[int, int, str]]]) -> list[list[dict[str, object]]]:
        return [[{"label": k, "start": a, "end": b - 1} for a, b, k in doc] for doc in docs]  # ends inclusive

    theirs = Evaluator(dicts(gold), dicts(pred), tags=kinds, loader="dict").evaluate()["overall"]
    mine = spanscore.evaluate(
        reference=[[(a, b, k) for a, b, k in doc] for doc in gold],
        predicted=[[(a, b, k) for a, b, k in doc] for doc in pred],
        format="spans",
    ).to_dict()["semeval"]
    for scheme, name in {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}.items():
        for count in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"):
            assert mine[scheme][count] == getattr(theirs[name], count), (scheme, count)
        for score in ("precision", "recall", "f1"):
            assert same(mine[scheme][score], getattr(theirs[name], score)), (scheme, score)


# ---------------------------------------------------------------- the layouts users meet


VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "crlf": lambda b: b.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
    "bom": lambda b: b"\xef\xbb\xbf" + b,
    "two trailing blank lines": lambda b: b.rstrip(b"\n") + b"\n\n\n",
    "four trailing blank lines": lambda b: b.rstrip(b"\n") + b"\n\n\n\n\n",
    "white-space-only last line": lambda b: b.rstrip(b"\n") + b"\n   \n",
    "crlf trailing blank lines": lambda b: (b.rstrip(b"\n") + b"\n\n\n").replace(b"\n", b"\r\n"),
    "tab-only trailing lines": lambda b: b.rstrip(b"\n") + b"\n\t\n\t\n",
    "no final newline": lambda b: b.rstrip(b"\n"),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("side", ["reference", "predicted"])
def test_layout_variants_read_alike(dataset: Dataset, variant: str, side: str, tmp_path: Path) -> None:
    original = dataset.file.read_bytes()
    changed = tmp_path / ("changed-" + dataset.file.name)
    changed.write_bytes(VARIANTS[variant](original))
    ref = str(changed) if side in ("reference", "both") else str(dataset.file)
    pred = str(changed) if side in ("predicted", "both") else str(dataset.file)
    for chunk in ("524288", "4096"):
        report = cli_json("evaluate", ref, pred, *dataset.options, "--chunk-size", chunk)
        assert report["corpus"]["sentences"] == dataset.sentences, (variant, chunk)
        assert report["corpus"]["tokens"] == dataset.tokens
        assert report["metrics"]["strict"]["f1"] == 1.0
    python = spanscore.evaluate(reference=ref, predicted=pred, reading=dataset.reading()).to_dict()
    assert python["corpus"]["reference_mentions"] == dataset.mentions


def test_tabs_and_spaces_mixed(tmp_path: Path) -> None:
    """A space-separated file where an editor put tabs on some lines, or tabs in blank lines."""
    spec = next(d for d in DATASETS if d.path == "sec-filings/FIN3.txt")
    lines = spec.file.read_bytes().split(b"\n")
    mixed = tmp_path / "mixed.txt"
    # every third token line tab-separated; blank lines holding a tab
    mixed.write_bytes(
        b"\n".join(
            (line.replace(b" ", b"\t") if k % 3 == 0 else line) if line.strip() else b"\t" * (k % 2)
            for k, line in enumerate(lines)
        )
    )
    report = cli_json("evaluate", str(mixed), str(spec.file))
    assert (report["corpus"]["tokens"], report["corpus"]["sentences"]) == (spec.tokens, spec.sentences)
    assert report["metrics"]["strict"]["f1"] == 1.0


# ---------------------------------------------------------------- tables at 80 and 100 columns


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def _prediction(dataset: Dataset, tmp_path: Path) -> str:
    read = independent(dataset)
    return str(write_prediction(dataset, read, perturb(read, 7), tmp_path / ("pred-" + dataset.file.name)))


@pytest.mark.parametrize("width", [80, 100])
def test_evaluate_tables_keep_every_figure(dataset: Dataset, width: int, tmp_path: Path) -> None:
    f, pred, opts = str(dataset.file), _prediction(dataset, tmp_path), dataset.options
    data = cli_json("evaluate", f, pred, *opts, width=width)
    out = shown("evaluate", f, pred, *opts, width=width)
    problems = ["a cell is cut (…)"] if "…" in out else []
    for name, block in data["metrics"].items():
        for metric in ("precision", "recall", "f1"):
            if _pct(block[metric]) not in out:
                problems.append(f"{name} {metric} {_pct(block[metric])} missing")
    # The per-type table gives F1 under every criterion, and each type's counts.
    for kind, block in data["per_type"].items():
        if not re.search(rf"│ {re.escape(kind)} +│", out):
            problems.append(f"type {kind} missing")
        for name, scores in block["metrics"].items():
            if _pct(scores["f1"]) not in out:
                problems.append(f"{kind} {name} F1 {_pct(scores['f1'])} missing")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [80, 100])
def test_summarize_tables_keep_every_figure(dataset: Dataset, width: int, tmp_path: Path) -> None:
    f, pred, opts = str(dataset.file), _prediction(dataset, tmp_path), dataset.options
    rows = cli_json("summarize", f, pred, *opts, width=width)  # two files: a list
    out = shown("summarize", f, pred, *opts, width=width)
    problems = ["a cell is cut (…)"] if "…" in out else []
    for row in rows:
        for name in ("documents", "sentences", "tokens", "mentions"):
            if not re.search(rf"\b{row[name]}\b", out):
                problems.append(f"{name} {row[name]} missing")
        for kind, count in row["types"].items():
            if kind not in out or not re.search(rf"\b{count}\b", out):
                problems.append(f"type {kind} ({count}) missing")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", [80, 100])
def test_validate_and_compare_tables_keep_every_figure(dataset: Dataset, width: int, tmp_path: Path) -> None:
    f, pred, opts = str(dataset.file), _prediction(dataset, tmp_path), dataset.options
    # I- after O or after another type: invalid in BIO (SEC filings are IOB1, as CoNLL-2003;
    # Europeana's files have a few such slips).
    invalid = sum(
        1
        for labels in independent(dataset).sentences
        for k, label in enumerate(labels)
        if label.startswith("I-") and (k == 0 or labels[k - 1][2:] != label[2:] or labels[k - 1] == "O")
    )
    out = shown("validate", f, *opts, width=width, code=1 if invalid else 0)
    assert "…" not in out
    if invalid:
        assert f"{invalid} invalid BIO transitions" in out
    else:
        assert f"valid BIO ({dataset.sentences} sentences, {dataset.tokens} tokens)" in out
    args = ["compare", f, pred, f, *opts, "--resamples", "50", "--trials", "50"]
    data = cli_json(*args, width=width)
    out = shown(*args, width=width)
    assert "…" not in out
    for system in data["systems"]:
        for score, block in system["metrics"].items():
            value = block["f1"]["value"]
            assert value is None or _pct(value) in out, (system["name"], score)
