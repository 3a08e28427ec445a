"""Scores by mention attribute (buckets "length" and "seen") against an independent count on real data.

The reference below reads CoNLL itself, decodes BIO as conlleval does, indexes the training mentions
itself and counts each bucket's strict precision, recall and F1 in plain Python: nothing of spanscore
takes part in it. The prediction is BTC test perturbed with a fixed seed (boundaries moved, types
changed, mentions dropped and added, some mentions opened with I-), written to tmp_path.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli

TYPES = ("PER", "ORG", "LOC")
ORDER = {"length": ["1", "2", "3", "4+"], "seen": ["seen", "seen-other-type", "unseen"]}
ATTRIBUTES = tuple(ORDER)
TOLERANCE = 1e-12

Sentence = tuple[list[str], list[str]]  # tokens, labels
Mention = tuple[int, int, str]  # start, end (exclusive), type


# --- the independent reference ---------------------------------------------------------------------


def read_conll(path: Path) -> list[Sentence]:
    """Sentences of a token<TAB>label file (blank line between sentences, -DOCSTART- lines skipped)."""
    sentences: list[Sentence] = []
    tokens: list[str] = []
    labels: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip() or line.startswith("-DOCSTART-"):
            if tokens:
                sentences.append((tokens, labels))
                tokens, labels = [], []
            continue
        columns = line.split("\t")
        tokens.append(columns[0])
        labels.append(columns[-1])
    if tokens:
        sentences.append((tokens, labels))
    return sentences


def decode(labels: list[str]) -> list[Mention]:
    """BIO mentions as conlleval finds them: B- starts one; so does I- after O or after another type."""
    mentions: list[Mention] = []
    start, kind = -1, ""
    for i, label in enumerate([*labels, "O"]):
        prefix, _, typ = label.partition("-")
        assert prefix in ("B", "I", "O"), label
        begins = prefix == "B" or (prefix == "I" and typ != kind)
        if kind and (prefix == "O" or begins):
            mentions.append((start, i, kind))
            kind = ""
        if begins:
            start, kind = i, typ
    return mentions


def surface(tokens: list[str], mention: Mention) -> str:
    return " ".join(t.lower() for t in tokens[mention[0] : mention[1]])


def train_index(sentences: list[Sentence]) -> dict[str, set[str]]:
    """Each training mention's lower-cased string -> the types it was annotated with."""
    index: dict[str, set[str]] = {}
    for tokens, labels in sentences:
        for m in decode(labels):
            index.setdefault(surface(tokens, m), set()).add(m[2])
    return index


def bucket_of(attribute: str, tokens: list[str], mention: Mention, index: dict[str, set[str]]) -> str:
    if attribute == "length":
        n = mention[1] - mention[0]
        return str(n) if n < 4 else "4+"
    types = index.get(surface(tokens, mention), set())
    if mention[2] in types:
        return "seen"
    return "seen-other-type" if types else "unseen"


@dataclass
class Bucket:
    reference_mentions: int = 0
    predicted_mentions: int = 0
    reference_credit: int = 0
    predicted_credit: int = 0

    @property
    def precision(self) -> float:
        return self.predicted_credit / self.predicted_mentions if self.predicted_mentions else 0.0

    @property
    def recall(self) -> float:
        return self.reference_credit / self.reference_mentions if self.reference_mentions else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def reference_buckets(
    gold: list[Sentence], predicted: list[Sentence], index: dict[str, set[str]], attribute: str
) -> dict[str, Bucket]:
    """Strict figures per bucket: a mention's credit is 1 when the other side has it exactly (span and type)."""
    assert len(gold) == len(predicted)
    buckets = {name: Bucket() for name in ORDER[attribute]}
    for (tokens, gold_labels), (pred_tokens, pred_labels) in zip(gold, predicted, strict=True):
        assert tokens == pred_tokens
        ref, pred = set(decode(gold_labels)), set(decode(pred_labels))
        for m in ref:
            b = buckets[bucket_of(attribute, tokens, m, index)]
            b.reference_mentions += 1
            b.reference_credit += m in pred
        for m in pred:
            b = buckets[bucket_of(attribute, tokens, m, index)]
            b.predicted_mentions += 1
            b.predicted_credit += m in ref
    return buckets


# --- a seeded, perturbed prediction of BTC test ----------------------------------------------------


def perturb(sentences: list[Sentence], rng: random.Random) -> list[list[str]]:
    """Labels of a plausible, imperfect system: every kind of error a tagger makes, on every length."""
    out: list[list[str]] = []
    for tokens, labels in sentences:
        n = len(tokens)
        wanted: list[Mention] = []
        for start, end, typ in decode(labels):
            roll = rng.random()
            if roll < 0.45:
                wanted.append((start, end, typ))
            elif roll < 0.55:  # wrong type
                wanted.append((start, end, rng.choice([t for t in TYPES if t != typ])))
            elif roll < 0.65:  # left boundary moved
                wanted.append((max(0, min(end - 1, start + rng.choice((-1, 1)))), end, typ))
            elif roll < 0.75:  # right boundary moved
                wanted.append((start, min(n, max(start + 1, end + rng.choice((-1, 1)))), typ))
            elif roll < 0.85:  # missed
                continue
            elif roll < 0.92:  # far too long
                wanted.append((start, min(n, end + rng.randint(2, 4)), typ))
            else:  # split in two where it can be
                if end - start > 1:
                    cut = rng.randint(start + 1, end - 1)
                    wanted += [(start, cut, typ), (cut, end, typ)]
                else:
                    wanted.append((start, end, typ))
        for _ in range(2):  # spurious mentions
            if rng.random() < 0.2:
                start = rng.randrange(n)
                wanted.append((start, min(n, start + rng.choice((1, 1, 1, 2, 2, 3, 5))), rng.choice(TYPES)))
        rng.shuffle(wanted)
        taken = [False] * n
        pred = ["O"] * n
        for start, end, typ in wanted:
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            pred[start:end] = [f"I-{typ}"] * (end - start)
            # Mostly B-; sometimes I- (conlleval starts a mention there too, or continues one of its type).
            if rng.random() < 0.9:
                pred[start] = f"B-{typ}"
        out.append(pred)
    return out


def write_conll(path: Path, tokens: list[list[str]], labels: list[list[str]]) -> None:
    lines: list[str] = []
    for toks, labs in zip(tokens, labels, strict=True):
        lines += [f"{t}\t{label}" for t, label in zip(toks, labs, strict=True)]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- the case all tests share ----------------------------------------------------------------------


@dataclass
class Case:
    gold_path: Path
    pred_path: Path
    train_path: Path
    gold: list[Sentence]
    predicted: list[Sentence]
    index: dict[str, set[str]]

    def reference(self, attribute: str) -> dict[str, Bucket]:
        return reference_buckets(self.gold, self.predicted, self.index, attribute)


@pytest.fixture(scope="module")
def case(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> Case:
    gold_path, train_path = btc / "test.txt", btc / "train.txt"
    gold = read_conll(gold_path)
    labels = perturb(gold, random.Random(7))
    pred_path = tmp_path_factory.mktemp("buckets") / "test.pred.txt"
    write_conll(pred_path, [t for t, _ in gold], labels)
    predicted = read_conll(pred_path)
    return Case(gold_path, pred_path, train_path, gold, predicted, train_index(read_conll(train_path)))


def bucketed(case: Case, **how: int) -> dict[str, Any]:
    report = spanscore.evaluate(
        reference=case.gold_path, predicted=case.pred_path, buckets=list(ATTRIBUTES), train=case.train_path, **how
    )
    return report.to_dict()


@pytest.fixture(scope="module")
def ours(case: Case) -> dict[str, Any]:
    """spanscore's report (to_dict) with both buckets, read whole in one process."""
    return bucketed(case)


# --- the reference checked on its own ----------------------------------------------------------------


def test_reference_reader_reproduces_the_btc_table(btc: Path) -> None:
    """The reference's reader and decoder give the README's mention counts (Table 1 of the paper)."""
    table = {"train": {"PER": 3101, "LOC": 1996, "ORG": 2267}, "test": {"PER": 1602, "LOC": 602, "ORG": 792}}
    sizes = {"train": 6338, "test": 2001}
    for split, counts in table.items():
        sentences = read_conll(btc / f"{split}.txt")
        assert len(sentences) == sizes[split]
        assert Counter(m[2] for _, labels in sentences for m in decode(labels)) == counts


def test_reference_decoder_follows_conlleval() -> None:
    assert decode(["B-PER", "I-PER", "O", "I-LOC", "I-LOC", "I-ORG", "B-ORG", "I-ORG"]) == [
        (0, 2, "PER"),
        (3, 5, "LOC"),
        (5, 6, "ORG"),
        (6, 8, "ORG"),
    ]
    assert decode(["I-PER", "B-PER", "I-LOC"]) == [(0, 1, "PER"), (1, 2, "PER"), (2, 3, "LOC")]


def test_reference_buckets_on_a_hand_made_example() -> None:
    index = {"new york": {"LOC"}, "obama": {"PER"}, "apple": {"ORG"}}
    gold = [
        (
            ["New", "York", "and", "Obama", "and", "Apple", "Inc", "x", "y"],
            ["B-LOC", "I-LOC", "O", "B-PER", "O", "B-ORG", "I-ORG", "I-ORG", "I-ORG"],
        )
    ]
    pred = [(gold[0][0], ["B-LOC", "I-LOC", "O", "B-ORG", "O", "B-ORG", "O", "O", "O"])]
    seen = reference_buckets(gold, pred, index, "seen")
    # seen: new york and obama in the reference, new york and apple predicted.
    assert (seen["seen"].reference_mentions, seen["seen"].predicted_mentions) == (2, 2)
    assert (seen["seen"].precision, seen["seen"].recall) == (0.5, 0.5)
    assert (seen["seen-other-type"].reference_mentions, seen["seen-other-type"].predicted_mentions) == (0, 1)
    assert (seen["unseen"].reference_mentions, seen["unseen"].predicted_mentions) == (1, 0)
    assert (seen["unseen"].precision, seen["unseen"].recall, seen["unseen"].f1) == (0.0, 0.0, 0.0)
    length = reference_buckets(gold, pred, index, "length")
    assert [length[b].reference_mentions for b in ORDER["length"]] == [1, 1, 0, 1]
    assert [length[b].predicted_mentions for b in ORDER["length"]] == [2, 1, 0, 0]


def test_perturbation_leaves_every_bucket_populated(case: Case) -> None:
    """The prediction is wrong often enough, in every bucket, for the comparison to mean something."""
    for attribute in ATTRIBUTES:
        for name, b in case.reference(attribute).items():
            assert b.reference_mentions > 0 or name == "seen-other-type", (attribute, name)
            assert b.predicted_mentions > 0, (attribute, name)
            assert 0 < b.predicted_credit < b.predicted_mentions, (attribute, name)
    total = case.reference("length")
    credit = sum(b.reference_credit for b in total.values())
    assert 0.4 < credit / sum(b.reference_mentions for b in total.values()) < 0.8


def test_reference_totals_agree_with_corpus_strict(case: Case) -> None:
    """Summed over buckets, the reference gives spanscore's corpus-wide strict figures (scored without buckets)."""
    strict = spanscore.evaluate(reference=case.gold_path, predicted=case.pred_path).to_dict()["metrics"]["strict"]
    for attribute in ATTRIBUTES:
        buckets = case.reference(attribute).values()
        assert sum(b.reference_mentions for b in buckets) == strict["reference"]
        assert sum(b.predicted_mentions for b in buckets) == strict["predicted"]
        assert sum(b.predicted_credit for b in buckets) == strict["full"]
        assert sum(b.reference_credit for b in buckets) == strict["full"]


# --- spanscore against the reference -----------------------------------------------------------------


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_buckets_match_the_reference(case: Case, ours: dict[str, Any], attribute: str) -> None:
    entries = ours["buckets"][attribute]
    assert [e["bucket"] for e in entries] == ORDER[attribute]
    reference = case.reference(attribute)
    wrong: list[str] = []
    for entry in entries:
        ref = reference[entry["bucket"]]
        for key in ("reference_mentions", "predicted_mentions"):
            if entry[key] != getattr(ref, key):
                wrong.append(f"{attribute}/{entry['bucket']} {key}: ours {entry[key]}, reference {getattr(ref, key)}")
        for key in ("precision", "recall", "f1"):
            ours = entry["metrics"]["strict"][key]
            ref_value = getattr(ref, key)
            if abs(ours - ref_value) > TOLERANCE:
                wrong.append(f"{attribute}/{entry['bucket']} strict {key}: ours {ours!r}, reference {ref_value!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_bucket_counts_sum_to_the_corpus(ours: dict[str, Any], attribute: str) -> None:
    entries = ours["buckets"][attribute]
    corpus = ours["corpus"]
    assert sum(e["reference_mentions"] for e in entries) == corpus["reference_mentions"]
    assert sum(e["predicted_mentions"] for e in entries) == corpus["predicted_mentions"]


def test_cli_json_gives_the_same_buckets(case: Case, ours: dict[str, Any]) -> None:
    out = CliRunner().invoke(
        cli,
        [
            "evaluate",
            str(case.gold_path),
            str(case.pred_path),
            "--buckets",
            ",".join(ATTRIBUTES),
            "--train",
            str(case.train_path),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["buckets"] == json.loads(json.dumps(ours["buckets"]))


@pytest.mark.parametrize(
    "how",
    [{"chunk_bytes": 4096}, {"jobs": 2}, {"chunk_bytes": 4096, "jobs": 2}],
    ids=["chunk-4096", "jobs-2", "chunk-4096-jobs-2"],
)
def test_chunks_and_processes_give_the_same_buckets(case: Case, ours: dict[str, Any], how: dict[str, int]) -> None:
    assert bucketed(case, **how)["buckets"] == ours["buckets"]
