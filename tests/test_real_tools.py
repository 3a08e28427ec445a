"""Real files of taggers and annotation tools from outside the project (tests/data/real/tools/
README.md names each file's source, commit, licence and what was cut).

For each file, what a careful user expects, checked against what spanscore did not compute:

- its documents, sentences, tokens and mentions equal a count made here from the raw file with
  plain ``json`` and string splitting;
- scored against itself, it is perfect under every criterion;
- against a seeded perturbation of it (mentions dropped, retyped, shortened, spurious ones added),
  spanscore's figures equal nervaluate's and seqeval's on the same mentions, and an exact-match
  count made here;
- every table of ``evaluate``, ``compare`` and ``summarize`` renders at 80 and 100 columns with
  every figure of ``--json`` whole.

A spaCy pipeline and a Hugging Face pipeline are also run here (no model downloaded) and their
output, written the ways users write it, scored the same way.
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

import pytest
from click.testing import CliRunner
from nervaluate import Evaluator

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.io import formats

TOOLS = Path(__file__).parent / "data" / "real" / "tools"
EXPLOSION = TOOLS / "explosion-projects"
REVIEW = EXPLOSION / "restaurant-review-two-sessions.jsonl"
DOCCANO = TOOLS / "doccano-transformer"
LS = TOOLS / "label-studio-sdk"
IOB = TOOLS / "spacy" / "ner-token-per-line.iob"

Span = tuple[int, int, str]


@dataclass
class Expected:
    """One side as read here, independently of spanscore: per document id, its text and mentions."""

    texts: dict[str, str] = field(default_factory=dict)
    spans: dict[str, list[Span]] = field(default_factory=dict)
    tokens: int = 0
    sentences: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def mentions(self) -> int:
        return sum(len(s) for s in self.spans.values())


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def prodigy(path: Path, session: str | None = None) -> Expected:
    """Accepted records (a review export's version of ``session``); tokens as Prodigy stored them."""
    out = Expected()
    for record in lines(path):
        if session is not None:
            versions = [v for v in record.get("versions", []) if session in v.get("sessions", [])]
            if versions:
                record = {**record, **versions[0]}
            elif record.get("_session_id") != session:
                continue
        if record.get("answer") != "accept":
            out.skipped[{"reject": "rejected", "ignore": "ignored"}[record["answer"]]] += 1
            continue
        doc_id = str(record.get("meta", {}).get("id", record["_input_hash"]))
        out.texts[doc_id] = record["text"]
        out.spans[doc_id] = [(s["start"], s["end"], s["label"]) for s in record.get("spans", [])]
        out.tokens += len(record["tokens"]) if "tokens" in record else len(record["text"].split())
        out.sentences += 1
        out.skipped["relations"] += len(record.get("relations", []))
    return out


def doccano(path: Path, user: str | None = None) -> Expected:
    out = Expected()
    for number, record in enumerate(lines(path), 1):
        doc_id = str(record.get("id", number))
        if "annotations" in record:
            chosen = [a for a in record["annotations"] if user is None or str(a["user"]) == user]
            if not chosen:
                out.skipped["documents without annotations by that user"] += 1
                continue
            spans = [(a["start_offset"], a["end_offset"], str(a["label"])) for a in chosen]
        else:
            spans = [(s, e, label) for s, e, label in record.get("labels", record.get("label", []))]
        out.texts[doc_id] = record["text"]
        out.spans[doc_id] = spans
        out.tokens += len(record["text"].split())
        out.sentences += 1
    return out


def label_studio(path: Path) -> Expected:
    out = Expected()
    for k, task in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        doc_id = str(task.get("id", k))
        annotation = task["annotations"][0]
        out.texts[doc_id] = task["data"]["text"]
        out.spans[doc_id] = [
            (r["value"]["start"], r["value"]["end"], label)
            for r in annotation["result"] if r["type"] == "labels" for label in r["value"]["labels"]
        ]
        out.skipped.update(f"{r['type']} results" for r in annotation["result"] if r["type"] != "labels")
        out.tokens += len(out.texts[doc_id].split())
        out.sentences += 1
    return out


@dataclass
class Conll:
    """A CoNLL file as read here: sentences of (columns, tag), and its document count."""

    sentences: list[list[tuple[list[str], str]]]
    documents: int

    @property
    def spans(self) -> list[list[Span]]:
        """BIO mentions per sentence (token offsets, end exclusive): these files are valid BIO."""
        out = []
        for sentence in self.sentences:
            found: list[Span] = []
            for k, (_, tag) in enumerate(sentence):
                if tag.startswith("B-"):
                    found.append((k, k + 1, tag[2:]))
                elif tag.startswith("I-"):
                    assert found and found[-1][1] == k and found[-1][2] == tag[2:]
                    found[-1] = (found[-1][0], k + 1, tag[2:])
            out.append(found)
        return out


def conll(path: Path) -> Conll:
    sentences: list[list[tuple[list[str], str]]] = [[]]
    documents = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-DOCSTART-"):
            documents += 1
            continue
        if not line.strip():
            sentences.append([])
            continue
        columns = line.split()
        sentences[-1].append((columns, columns[-1]))
    return Conll([s for s in sentences if s], max(documents, 1))


@dataclass
class Case:
    name: str
    fmt: str
    path: Path
    options: dict[str, str]
    expected: Callable[[], Expected]
    documents: int  # written down from the file, as a user counts them
    mentions: int


OFFSET_CASES = [
    Case("review, annotators", "prodigy", REVIEW, {"session": "original_annotations"},
         lambda: prodigy(REVIEW, "original_annotations"), 35, 81),
    Case("review, model", "prodigy", REVIEW, {"session": "ner_model"}, lambda: prodigy(REVIEW, "ner_model"), 35, 86),
    Case("review, reviewed", "prodigy", REVIEW, {}, lambda: prodigy(REVIEW), 35, 84),
    *[
        Case(path.stem, "prodigy", path, {}, lambda path=path: prodigy(path), documents, mentions)
        for path, documents, mentions in (
            (EXPLOSION / "fashion-brands-eval.jsonl", 30, 12),
            (EXPLOSION / "drugs-eval.jsonl", 30, 22),
            (EXPLOSION / "tweets-test-annotated.jsonl", 26, 21),
            (EXPLOSION / "rel-component-annotations.jsonl", 20, 60),
            (EXPLOSION / "nel-emerson-annotated.jsonl", 15, 15),
        )
    ],
    Case("doccano user 1", "doccano", DOCCANO / "labeling.jsonl", {"user": "1"},
         lambda: doccano(DOCCANO / "labeling.jsonl", "1"), 1, 5),
    Case("doccano user 2", "doccano", DOCCANO / "labeling.jsonl", {"user": "2"},
         lambda: doccano(DOCCANO / "labeling.jsonl", "2"), 2, 11),
    Case("doccano label names", "doccano", DOCCANO / "labeling_text_label.jsonl", {},
         lambda: doccano(DOCCANO / "labeling_text_label.jsonl"), 2, 11),
]
EMPTY_CASES = [
    Case("label studio, choices", "label-studio", LS / "csv_test_history.json", {},
         lambda: label_studio(LS / "csv_test_history.json"), 1, 0),
    Case("label studio, image boxes", "label-studio", LS / "csv_test.json", {},
         lambda: label_studio(LS / "csv_test.json"), 2, 0),
]
CONLL_CASES = {  # file: (documents, sentences, tokens, mentions), counted by hand from the file
    DOCCANO / "labeling.conll2003.user1": (1, 3, 20, 5),
    DOCCANO / "labeling.conll2003.user2": (2, 6, 37, 11),
    DOCCANO / "labeling_text_label.conll2003.user0": (2, 6, 37, 11),
    IOB: (1, 1, 66, 7),
}


def options(case: Case) -> list[str]:
    out = []
    for key, value in case.options.items():
        out += ["--reference-option", f"{key}={value}", "--predicted-option", f"{key}={value}"]
    return out


def invoke(args: list[str], width: int = 100) -> str:
    result = CliRunner().invoke(cli, args, terminal_width=width, env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


DOCBIN = EXPLOSION / "tweets-demo.spacy"
DOCBIN_SOURCE = EXPLOSION / "tweets-demo.jsonl"


def test_every_file_is_a_test_case() -> None:
    used = {c.path for c in OFFSET_CASES + EMPTY_CASES} | set(CONLL_CASES) | {DOCBIN, DOCBIN_SOURCE}
    files = {p for p in TOOLS.rglob("*") if p.is_file() and p.name not in ("README.md", "LICENSE")}
    assert files == used
    readme = (TOOLS / "README.md").read_text(encoding="utf-8")
    for path in files:
        assert path.name in readme, path


# ------------------------------------------------------------------------------------------------
# Counts


@pytest.mark.parametrize("case", OFFSET_CASES + EMPTY_CASES, ids=lambda c: c.name)
def test_counts_equal_an_independent_count(case: Case) -> None:
    expected = case.expected()
    assert (len(expected.texts), expected.mentions) == (case.documents, case.mentions)
    data = json.loads(invoke(["evaluate", str(case.path), str(case.path), "--format", case.fmt, "--json",
                              *options(case)]))
    assert data["corpus"] == {
        "documents": case.documents,
        "sentences": expected.sentences,
        "tokens": expected.tokens,
        "reference_mentions": case.mentions,
        "predicted_mentions": case.mentions,
    }
    skipped = {k: v for k, v in expected.skipped.items() if v}
    assert data["read"]["reference"]["skipped"] == skipped
    docs, _ = formats.read(case.fmt, case.path, **case.options)
    assert {d.id: sorted(d.spans) for d in docs} == {k: sorted(v) for k, v in expected.spans.items()}
    assert {d.id: d.text for d in docs} == expected.texts


@pytest.mark.parametrize("path", list(CONLL_CASES), ids=lambda p: p.name)
def test_conll_counts_equal_an_independent_count(path: Path) -> None:
    mine = conll(path)
    documents, sentences, tokens, mentions = CONLL_CASES[path]
    assert (mine.documents, len(mine.sentences), sum(map(len, mine.sentences)), sum(map(len, mine.spans))) == (
        documents, sentences, tokens, mentions
    )
    data = json.loads(invoke(["evaluate", str(path), str(path), "--format", "conll", "--json"]))
    assert data["corpus"] == {
        "documents": documents, "sentences": sentences, "tokens": tokens,
        "reference_mentions": mentions, "predicted_mentions": mentions,
    }


def test_the_doccano_users_agree_with_their_conll_conversions() -> None:
    """doccano-transformer wrote one CoNLL file per user: the same mentions, by their text."""
    for user in ("1", "2"):
        docs, _ = formats.read("doccano", DOCCANO / "labeling.jsonl", user=user)
        ours = sorted((d.text[s:e].split(), label) for d in docs for s, e, label in d.spans)
        theirs = conll(DOCCANO / f"labeling.conll2003.user{user}")
        found = sorted(
            ([c[0] for c, _ in sentence[s:e]], label)
            for sentence, spans in zip(theirs.sentences, theirs.spans, strict=True) for s, e, label in spans
        )
        assert ours == found


# ------------------------------------------------------------------------------------------------
# Against itself


def assert_perfect(data: dict[str, Any], mentions: int) -> None:
    for name, block in data["metrics"].items():
        assert (block["precision"], block["recall"], block["f1"]) == (1.0, 1.0, 1.0), name
    for name, block in data["semeval"].items():
        assert block["correct"] == mentions and block["f1"] == 1.0, name
        assert block["incorrect"] == block["partial"] == block["missed"] == block["spurious"] == 0, name
    for label, block in data["per_type"].items():
        assert all(m["f1"] == 1.0 for m in block["metrics"].values()), label
    assert data["errors"]["correct"] == mentions
    assert sum(v for k, v in data["errors"].items() if k != "correct" and isinstance(v, int)) == 0


@pytest.mark.parametrize("case", OFFSET_CASES, ids=lambda c: c.name)
def test_scored_against_itself_is_perfect_under_every_criterion(case: Case) -> None:
    data = json.loads(invoke(["evaluate", str(case.path), str(case.path), "--format", case.fmt, "--json",
                              *options(case)]))
    assert_perfect(data, case.mentions)
    assert data["read"]["misaligned"]["count"] == 0


@pytest.mark.parametrize("path", list(CONLL_CASES), ids=lambda p: p.name)
def test_conll_scored_against_itself_is_perfect(path: Path) -> None:
    data = json.loads(invoke(["evaluate", str(path), str(path), "--json"]))
    assert_perfect(data, CONLL_CASES[path][3])


@pytest.mark.parametrize("case", EMPTY_CASES, ids=lambda c: c.name)
def test_an_export_without_text_mentions_scores_nothing_and_says_why(case: Case) -> None:
    data = json.loads(invoke(["evaluate", str(case.path), str(case.path), "--format", case.fmt, "--json"]))
    assert data["metrics"]["strict"]["reference"] == 0
    assert sum(data["read"]["reference"]["skipped"].values()) == sum(case.expected().skipped.values()) > 0


# ------------------------------------------------------------------------------------------------
# Against a perturbed prediction, beside the peers


def perturb(texts: dict[str, str], spans: dict[str, list[Span]], seed: int) -> dict[str, list[Span]]:
    """Each mention kept, dropped, retyped or cut short by its last word; a spurious mention on a
    word outside every mention now and then. No prediction overlaps two references or the
    reverse, so nervaluate's counts do not depend on its reading order."""
    rng = random.Random(seed)
    labels = sorted({label for doc in spans.values() for _, _, label in doc}) or ["X"]
    out: dict[str, list[Span]] = {}
    seen = 0  # the first mention is dropped, the second retyped, the first of several words cut
    cut = False
    for doc_id, text in texts.items():
        pred: list[Span] = []
        for start, end, label in spans[doc_id]:
            roll = rng.random()
            words = [m.span() for m in re.finditer(r"\S+", text[start:end])]
            seen += 1
            if seen == 1:
                roll = 0.0
            elif seen == 2:
                roll = 0.2
            elif not cut and len(words) > 1:
                roll, cut = 0.4, True
            if roll < 0.15:
                continue
            if roll < 0.3 and len(labels) > 1:
                pred.append((start, end, rng.choice([x for x in labels if x != label])))
            elif roll < 0.45 and len(words) > 1:
                pred.append((start, start + words[-2][1], label))
            else:
                pred.append((start, end, label))
        taken = [(s, e) for s, e, _ in spans[doc_id]]
        for m in re.finditer(r"\w+", text):
            if rng.random() < 0.04 and all(m.end() <= s or e <= m.start() for s, e in taken):
                pred.append((m.start(), m.end(), rng.choice(labels)))
        out[doc_id] = sorted(set(pred))
    return out


SEMEVAL = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")


def nervaluate(gold: list[list[Span]], pred: list[list[Span]]) -> dict[str, Any]:
    def dicts(docs: list[list[Span]]) -> list[list[dict[str, Any]]]:
        return [[{"label": t, "start": s, "end": e - 1} for s, e, t in doc] for doc in docs]  # inclusive ends

    tags = sorted({t for doc in gold + pred for _, _, t in doc})
    return Evaluator(dicts(gold), dicts(pred), tags=tags, loader="dict").evaluate()["overall"]


def assert_as_peers(data: dict[str, Any], gold: list[list[Span]], pred: list[list[Span]]) -> None:
    exact = sum(len(set(g) & set(p)) for g, p in zip(gold, pred, strict=True))
    strict = data["metrics"]["strict"]
    assert (strict["full"], strict["reference"], strict["predicted"]) == (
        exact, sum(map(len, gold)), sum(map(len, pred)))
    theirs = nervaluate(gold, pred)
    for scheme, name in SEMEVAL.items():
        for c in CATEGORIES:
            assert data["semeval"][scheme][c] == getattr(theirs[name], c), (scheme, c)
        for c in ("precision", "recall", "f1"):
            assert math.isclose(data["semeval"][scheme][c], getattr(theirs[name], c), rel_tol=1e-12), (scheme, c)
    # The perturbation made every kind of disagreement the comparison is about.
    assert data["semeval"]["strict"]["incorrect"] > 0 and data["semeval"]["strict"]["missed"] > 0


def write_prediction(path: Path, texts: dict[str, str], pred: dict[str, list[Span]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for doc_id, text in texts.items():
            spans = [{"start": s, "end": e, "label": t} for s, e, t in pred[doc_id]]
            handle.write(json.dumps({"id": doc_id, "text": text, "spans": spans}, ensure_ascii=False) + "\n")


PERTURBED = [c for c in OFFSET_CASES if c.mentions >= 10]


@pytest.mark.parametrize("case", PERTURBED, ids=lambda c: c.name)
def test_a_perturbed_prediction_scores_as_the_peers_count(case: Case, tmp_path: Path) -> None:
    expected = case.expected()
    pred = perturb(expected.texts, expected.spans, seed=len(case.name))
    write_prediction(tmp_path / "pred.jsonl", expected.texts, pred)
    ref_options = [x for k, v in case.options.items() for x in ("--reference-option", f"{k}={v}")]
    data = json.loads(invoke(["evaluate", str(case.path), str(tmp_path / "pred.jsonl"), "--format", case.fmt,
                              "--predicted-format", "jsonl", "--json", *ref_options]))
    ids = list(expected.texts)
    assert_as_peers(data, [sorted(expected.spans[i]) for i in ids], [pred[i] for i in ids])


def test_the_review_sessions_score_as_the_peers_count() -> None:
    """The file's own disagreement: the model's session against the annotators'."""
    gold, model = prodigy(REVIEW, "original_annotations"), prodigy(REVIEW, "ner_model")
    assert gold.texts == model.texts
    data = json.loads(invoke(["evaluate", str(REVIEW), str(REVIEW), "--format", "prodigy", "--json",
                              "--reference-option", "session=original_annotations",
                              "--predicted-option", "session=ner_model"]))
    ids = list(gold.texts)
    g, p = [sorted(gold.spans[i]) for i in ids], [sorted(model.spans[i]) for i in ids]
    exact = sum(len(set(a) & set(b)) for a, b in zip(g, p, strict=True))
    assert (data["metrics"]["strict"]["full"], data["metrics"]["strict"]["reference"],
            data["metrics"]["strict"]["predicted"]) == (exact, 81, 86)
    from seqeval.metrics import f1_score  # strict F1 over tokens' BIO tags, by a peer

    def bio(text: str, record_spans: list[Span], tokens: list[tuple[int, int]]) -> list[str]:
        tags = ["O"] * len(tokens)
        for s, e, label in record_spans:
            inside = [k for k, (a, b) in enumerate(tokens) if s <= a and b <= e]
            for n, k in enumerate(inside):
                tags[k] = ("B-" if n == 0 else "I-") + label
        return tags

    tokens = {str(r["_input_hash"]): [(t["start"], t["end"]) for t in r["tokens"]] for r in lines(REVIEW)}
    y_true = [bio(gold.texts[i], gold.spans[i], tokens[i]) for i in ids]
    y_pred = [bio(gold.texts[i], model.spans[i], tokens[i]) for i in ids]
    assert math.isclose(data["metrics"]["strict"]["f1"], f1_score(y_true, y_pred), rel_tol=1e-12)


def perturb_tags(conll_file: Conll, seed: int) -> list[list[str]]:
    """BIO tags of a perturbation made as ``perturb`` makes it, on tokens."""
    rng = random.Random(seed)
    labels = sorted({t for s in conll_file.spans for _, _, t in s})
    out = []
    for sentence, spans in zip(conll_file.sentences, conll_file.spans, strict=True):
        tags = ["O"] * len(sentence)
        for s, e, label in spans:
            roll = rng.random()
            if roll < 0.15:
                continue
            if roll < 0.3 and len(labels) > 1:
                label = rng.choice([x for x in labels if x != label])
            elif roll < 0.45 and e - s > 1:
                e -= 1
            for k in range(s, e):
                tags[k] = ("B-" if k == s else "I-") + label
        for k, (_, gold) in enumerate(sentence):
            free = gold == "O" and (k == 0 or tags[k - 1] == "O") and (k + 1 == len(tags) or sentence[k + 1][1] == "O")
            if free and rng.random() < 0.1:
                tags[k] = "B-" + rng.choice(labels)
        out.append(tags)
    return out


@pytest.mark.parametrize("path", [p for p, counts in CONLL_CASES.items() if counts[3] >= 5], ids=lambda p: p.name)
def test_a_perturbed_conll_prediction_scores_as_the_peers_count(path: Path, tmp_path: Path) -> None:
    from seqeval.metrics import f1_score, precision_score, recall_score

    gold = conll(path)
    pred_tags = perturb_tags(gold, seed=7)
    # The prediction as a tagger writes it: the same lines, the last column replaced.
    out, k = [], 0
    rows = [row for sentence in pred_tags for row in sentence]
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-DOCSTART-") or not line.strip():
            out.append(line)
            continue
        columns = line.split()
        out.append(" ".join([*columns[:-1], rows[k]]) if " " in line else "\t".join([*columns[:-1], rows[k]]))
        k += 1
    assert k == len(rows)
    (tmp_path / "pred.conll").write_text("\n".join(out) + "\n", encoding="utf-8")
    data = json.loads(invoke(["evaluate", str(path), str(tmp_path / "pred.conll"), "--json"]))
    pred = Conll([[(c, t) for (c, _), t in zip(sentence, tags, strict=True)]
                  for sentence, tags in zip(gold.sentences, pred_tags, strict=True)], gold.documents)
    assert_as_peers(data, gold.spans, pred.spans)
    y_true = [[t for _, t in sentence] for sentence in gold.sentences]
    strict = data["metrics"]["strict"]
    assert math.isclose(strict["precision"], precision_score(y_true, pred_tags), rel_tol=1e-12)
    assert math.isclose(strict["recall"], recall_score(y_true, pred_tags), rel_tol=1e-12)
    assert math.isclose(strict["f1"], f1_score(y_true, pred_tags), rel_tol=1e-12)


# ------------------------------------------------------------------------------------------------
# A spaCy pipeline's output, written as users write doc.ents


PATTERNS = [
    {"label": "PERSON", "pattern": [{"TEXT": "Sebastian"}, {"TEXT": "Thrun"}]},
    {"label": "PERSON", "pattern": "Thrun"},
    {"label": "ORG", "pattern": "Google"},
    {"label": "NORP", "pattern": "American"},
    {"label": "DATE", "pattern": "this week"},  # the gold has "earlier this week"
    {"label": "ORG", "pattern": "Recode"},
    {"label": "ORG", "pattern": "CEOs"},  # spurious
]


def spacy_doc() -> Any:
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(PATTERNS)
    words = [line.split("\t")[0] for line in IOB.read_text(encoding="utf-8").splitlines()]
    return nlp(Doc(nlp.vocab, words=words))


def test_a_spacy_pipeline_tagging_spacys_example_scores_as_counted(tmp_path: Path) -> None:
    doc = spacy_doc()
    (tmp_path / "pred.iob").write_text(
        "".join(f"{t.text}\t{t.ent_iob_ + '-' + t.ent_type_ if t.ent_type_ else 'O'}\n" for t in doc),
        encoding="utf-8",
    )
    data = json.loads(invoke(["evaluate", str(IOB), str(tmp_path / "pred.iob"), "--json"]))
    gold = conll(IOB).spans[0]
    pred = [(e.start, e.end, e.label_) for e in doc.ents]
    # Counted by hand: 7 gold mentions; the ruler finds 7, of which 5 exactly ("2007" and
    # "earlier this week" missed or cut, "CEOs" spurious).
    assert (len(gold), len(pred), len(set(gold) & set(pred))) == (7, 7, 5)
    assert_as_peers(data, [gold], [pred])
    assert data["metrics"]["overlap"]["partial"] == 1  # "this week" inside "earlier this week"


def test_spacy_ents_as_character_offsets_score_as_the_same_tokens(tmp_path: Path) -> None:
    """The same output written as JSONL of ent.start_char / end_char, against the gold as JSONL
    over the same text: every figure of the token-level run but the token count."""
    doc = spacy_doc()
    gold = Conll([[(c, t) for c, t in conll(IOB).sentences[0]]], 1).spans[0]
    by_char = {"start": [t.idx for t in doc], "end": [t.idx + len(t) for t in doc]}
    gold_spans = [{"start": by_char["start"][s], "end": by_char["end"][e - 1], "label": t} for s, e, t in gold]
    pred_spans = [{"start": e.start_char, "end": e.end_char, "label": e.label_} for e in doc.ents]
    for name, spans in (("gold", gold_spans), ("pred", pred_spans)):
        (tmp_path / f"{name}.jsonl").write_text(
            json.dumps({"id": "thrun", "text": doc.text, "spans": spans}, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    by_chars = json.loads(invoke(["evaluate", str(tmp_path / "gold.jsonl"), str(tmp_path / "pred.jsonl"), "--json"]))
    (tmp_path / "pred.iob").write_text(
        "".join(f"{t.text}\t{t.ent_iob_ + '-' + t.ent_type_ if t.ent_type_ else 'O'}\n" for t in doc),
        encoding="utf-8",
    )
    by_tokens = json.loads(invoke(["evaluate", str(IOB), str(tmp_path / "pred.iob"), "--json"]))
    for scheme in SEMEVAL:
        assert by_chars["semeval"][scheme] == by_tokens["semeval"][scheme]
    for name in ("strict", "boundary", "overlap"):
        assert by_chars["metrics"][name]["full"] == by_tokens["metrics"][name]["full"]


# ------------------------------------------------------------------------------------------------
# Selectors that select nothing name what was given and what the file has


def test_a_session_nobody_used_names_the_sessions_present() -> None:
    result = CliRunner().invoke(cli, ["evaluate", str(REVIEW), str(REVIEW), "--format", "prodigy",
                                      "--reference-option", "session=nobody"])
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        "no record of session='nobody'; the file's sessions: 'original_annotations', 'ner_model'"
    )
    assert len(result.output.strip().splitlines()) == 1


def test_an_annotator_nobody_used_names_the_annotators_present() -> None:
    path = LS / "csv_test_history.json"
    result = CliRunner().invoke(cli, ["evaluate", str(path), str(path), "--format", "label-studio",
                                      "--reference-option", "annotator=7"])
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        "annotator='7' annotated none of the file's 1 task; those present: '14', 'sergei@heartex.test'"
    )
    # The annotator present, by id and by e-mail, is read.
    for who in ("14", "sergei@heartex.test"):
        docs, _ = formats.read("label-studio", path, annotator=who)
        assert [d.id for d in docs] == ["6141"]


def test_a_doccano_user_nobody_was_names_the_users_present() -> None:
    message = r"user='3' annotated none of the file's 2 documents; those present: '1', '2'"
    with pytest.raises(OptionError, match=message):
        formats.read("doccano", DOCCANO / "labeling.jsonl", user="3")
    with pytest.raises(InputError, match="choose one with the reader option user="):
        formats.read("doccano", DOCCANO / "labeling.jsonl")


def test_a_document_the_chosen_user_never_annotated_is_left_out_of_both_sides(tmp_path: Path) -> None:
    docs, notes = formats.read("doccano", DOCCANO / "labeling.jsonl", user="1")
    assert [d.id for d in docs] == ["2578"] and notes.left_out == {"2580"}
    # User 2's reading as the prediction: the document user 1 never saw is not counted missed.
    report = spanscore.evaluate(reference=DOCCANO / "labeling.jsonl", predicted=DOCCANO / "labeling.jsonl",
                                format="doccano", reference_options={"user": "1"}, predicted_options={"user": "2"})
    assert report.metrics["strict"]["f1"] == 1.0 and report.metrics["strict"]["reference"] == 5


# ------------------------------------------------------------------------------------------------
# Tables


def figures(data: dict[str, Any]) -> list[str]:
    """Every figure of --json that the tables show, as they show it."""
    pct = [f"{100 * b[m]:.2f}" for b in data["metrics"].values() for m in ("precision", "recall", "f1")]
    semeval = [f"{100 * b[m]:.2f}" for b in data["semeval"].values() for m in ("precision", "recall", "f1")]
    counts = [str(b[c]) for b in data["semeval"].values() for c in CATEGORIES]
    per_type = [f"{100 * m['f1']:.2f}" for t in data["per_type"].values() for m in t["metrics"].values()]
    return pct + semeval + counts + per_type


RENDERED = PERTURBED


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize("case", RENDERED, ids=lambda c: c.name)
def test_tables_keep_every_figure_at_80_and_100_columns(case: Case, width: int, tmp_path: Path) -> None:
    expected = case.expected()
    write_prediction(tmp_path / "pred.jsonl", expected.texts, perturb(expected.texts, expected.spans, seed=3))
    ref_options = [x for k, v in case.options.items() for x in ("--reference-option", f"{k}={v}")]
    args = ["evaluate", str(case.path), str(tmp_path / "pred.jsonl"), "--format", case.fmt,
            "--predicted-format", "jsonl", *ref_options]
    data = json.loads(invoke([*args, "--json"], width))
    shown = invoke(args, width)
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines() if not line.startswith("spanscore:")) <= width
    for figure in figures(data):
        assert figure in shown, figure


@pytest.mark.parametrize("width", [80, 100])
def test_type_names_stay_whole_in_every_table(width: int, tmp_path: Path) -> None:
    """The review file's longest type, Restaurant_Name, in the confusion table's header too."""
    args = ["evaluate", str(REVIEW), str(REVIEW), "--format", "prodigy",
            "--reference-option", "session=original_annotations", "--predicted-option", "session=ner_model"]
    shown = invoke(args, width)
    headers = [line for line in shown.splitlines() if "┃" in line]
    pieces = [cell.strip() for line in headers for cell in line.split("┃") if cell.strip()]
    assert not [p for p in pieces if p != "Restaurant_Name" and "Restaurant_Name".startswith(p) and p != "R"]


@pytest.mark.parametrize("width", [80, 100])
@pytest.mark.parametrize(
    "case",
    [c for c in OFFSET_CASES + EMPTY_CASES if not c.options],
    ids=lambda c: c.name,
)
def test_summarize_shows_the_independent_counts(case: Case, width: int) -> None:
    expected = case.expected()
    shown = invoke(["summarize", str(case.path), "--format", case.fmt], width)
    assert "…" not in shown
    for figure in (case.documents, expected.tokens, case.mentions):
        assert re.search(rf"\b{figure:,}\b|\b{figure}\b", shown), figure


# ------------------------------------------------------------------------------------------------
# A Hugging Face token-classification pipeline's output, as users keep it beside its text

HF_LABELS = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER", "B-ORG", "I-ORG"]


@pytest.fixture(scope="module")
def hf_pipeline() -> Callable[..., Any]:
    """A transformers pipeline over a tiny random BERT (no weights downloaded) whose WordPiece
    vocabulary holds the words of doccano-transformer's texts and their endings: its output has
    every quirk of a real one (``word`` decoded from tokens, float32 scores, mentions ending
    inside a word), though its guesses are random."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.processors import TemplateProcessing

    texts = [r["text"] for r in lines(DOCCANO / "labeling_text_label.jsonl")]
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
    for word in sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t)}):
        vocab.setdefault(word, len(vocab))
        for k in range(1, len(word)):
            vocab.setdefault("##" + word[k:], len(vocab))
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tok.post_processor = TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        num_labels=len(HF_LABELS), id2label=dict(enumerate(HF_LABELS)),
        label2id={x: i for i, x in enumerate(HF_LABELS)},
    )
    torch.manual_seed(5)
    model = transformers.BertForTokenClassification(config).eval()

    def run(aggregation: str = "simple") -> list[list[dict[str, Any]]]:
        ner = transformers.pipeline("token-classification", model=model, tokenizer=fast,
                                    aggregation_strategy=aggregation, device=-1)
        return [ner(t) for t in texts]

    return run


def write_pipeline_output(path: Path, outputs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """As users write it: the id and text beside the list, float32 scores made floats (json
    cannot write them)."""
    records = lines(DOCCANO / "labeling_text_label.jsonl")
    rows = [{"id": r["id"], "text": r["text"],
             "entities": [{**e, "score": float(e["score"]),
                           **({"index": int(e["index"])} if "index" in e else {})} for e in out]}
            for r, out in zip(records, outputs, strict=True)]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return rows


def test_a_hf_pipeline_output_scores_as_the_peers_count(hf_pipeline: Callable[..., Any], tmp_path: Path) -> None:
    rows = write_pipeline_output(tmp_path / "pred.jsonl", hf_pipeline())
    pred = {str(r["id"]): sorted((e["start"], e["end"], e["entity_group"]) for e in r["entities"]) for r in rows}
    assert sum(map(len, pred.values())) > 10
    # The pipeline's "word" is decoded from its tokens ("AL - AIN" for "AL-AIN"): offsets rule.
    rows[0]["entities"][0]["word"] = rows[0]["entities"][0]["word"].lower() + " ##x"
    (tmp_path / "pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gold = doccano(DOCCANO / "labeling_text_label.jsonl")
    data = json.loads(invoke(["evaluate", str(DOCCANO / "labeling_text_label.jsonl"), str(tmp_path / "pred.jsonl"),
                              "--format", "doccano", "--predicted-format", "hf-pipeline", "--json"]))
    ids = list(gold.texts)
    g, p = [sorted(gold.spans[i]) for i in ids], [pred[i] for i in ids]
    # Random guesses overlap one reference mention several times, where nervaluate's categories
    # depend on its reading order (docs/differences.md): the exact counts are compared here.
    strict, boundary = data["metrics"]["strict"], data["metrics"]["boundary"]
    assert (strict["reference"], strict["predicted"]) == (sum(map(len, g)), sum(map(len, p)))
    assert strict["full"] == sum(len(set(a) & set(b)) for a, b in zip(g, p, strict=True))
    assert boundary["full"] == sum(
        len({(s, e) for s, e, _ in a} & {(s, e) for s, e, _ in b}) for a, b in zip(g, p, strict=True)
    )
    assert data["semeval"]["strict"]["correct"] == strict["full"]
    # A prediction that overlaps no reference is spurious under every scheme (more may be: a
    # second guess on a reference already matched).
    alone = sum(1 for a, b in zip(g, p, strict=True) for s, e, _ in b if not any(x < e and s < y for x, y, _ in a))
    assert min(block["spurious"] for block in data["semeval"].values()) >= alone > 0
    again = json.loads(invoke(["evaluate", str(tmp_path / "pred.jsonl"), str(tmp_path / "pred.jsonl"),
                               "--format", "hf-pipeline", "--json"]))
    assert_perfect(again, sum(map(len, pred.values())))


def test_min_score_leaves_out_what_scores_below_it(hf_pipeline: Callable[..., Any], tmp_path: Path) -> None:
    rows = write_pipeline_output(tmp_path / "pred.jsonl", hf_pipeline())
    scores = sorted(e["score"] for r in rows for e in r["entities"])
    threshold = scores[len(scores) // 2]
    below = sum(1 for s in scores if s < threshold)
    docs, notes = formats.read("hf-pipeline", tmp_path / "pred.jsonl", min_score=str(threshold))
    assert sum(len(d.spans) for d in docs) == len(scores) - below
    assert notes.skipped == {"mentions below min_score": below}


def test_a_hf_pipeline_output_without_aggregation_is_refused_with_the_fix(
    hf_pipeline: Callable[..., Any], tmp_path: Path
) -> None:
    write_pipeline_output(tmp_path / "tokens.jsonl", hf_pipeline("none"))
    message = invoke_refused(["evaluate", str(DOCCANO / "labeling_text_label.jsonl"), str(tmp_path / "tokens.jsonl"),
                              "--format", "doccano", "--predicted-format", "hf-pipeline"])
    assert "tokens.jsonl:1: entities[0] is one sub-word token's tag" in message
    assert 'aggregation_strategy="simple"' in message


def invoke_refused(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    return line


def test_summarize_can_choose_the_annotator_its_error_asks_for() -> None:
    """doccano's refusal of two annotators says to choose one with user=; summarize cannot."""
    shown = invoke(["summarize", str(DOCCANO / "labeling.jsonl"), "--format", "doccano", "--option", "user=1"])
    assert "5" in shown


@pytest.mark.parametrize("width", [80, 100])
def test_compare_tables_keep_every_figure_of_two_taggers_on_a_real_export(width: int, tmp_path: Path) -> None:
    case = next(c for c in OFFSET_CASES if c.name == "rel-component-annotations")
    expected = case.expected()
    systems = []
    for seed in (1, 2):
        systems.append(tmp_path / f"tagger-{seed}.jsonl")
        write_prediction(systems[-1], expected.texts, perturb(expected.texts, expected.spans, seed))
    args = ["compare", str(case.path), *map(str, systems), "--format", "prodigy", "--predicted-format", "jsonl",
            "--resamples", "100", "--trials", "100"]
    data = json.loads(invoke([*args, "--json"], width))
    shown = invoke(args, width)
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines() if not line.startswith("spanscore:")) <= width

    def pct(x: float) -> str:
        return f"{100 * x:.2f}"

    for system, path in zip(data["systems"], systems, strict=True):
        for block in system["metrics"].values():
            f1 = block["f1"]
            assert f"{pct(f1['value'])} [{pct(f1['low'])}, {pct(f1['high'])}]" in shown
        alone = json.loads(invoke(["evaluate", str(case.path), str(path), "--format", "prodigy",
                                   "--predicted-format", "jsonl", "--json"]))
        assert system["metrics"]["strict"]["f1"]["value"] == alone["metrics"]["strict"]["f1"]
    for c in data["comparisons"]:
        if c["metric"] == "f1" and c["difference"] is not None:
            assert f"{100 * c['difference']:+.2f} [{pct(c['low'])}, {pct(c['high'])}]" in shown


def test_a_spacy_docbin_reads_as_the_prodigy_record_it_was_made_from() -> None:
    """spaCy's binary corpus and the Prodigy record beside it, read here with json alone: the same
    text, the same mention, the same 20 tokens."""
    pytest.importorskip("spacy")
    (record,) = lines(DOCBIN_SOURCE)
    docs, _ = formats.read("docbin", DOCBIN)
    assert [(d.id, d.text) for d in docs] == [("0", record["text"])]  # no user data: numbered from 0
    assert list(docs[0].spans) == [(s["start"], s["end"], s["label"]) for s in record["spans"]]
    assert list(docs[0].tokens or ()) == [(t["start"], t["end"]) for t in record["tokens"]]
    data = json.loads(invoke(["evaluate", str(DOCBIN), str(DOCBIN), "--format", "docbin", "--json"]))
    assert data["corpus"] == {"documents": 1, "sentences": 1, "tokens": len(record["tokens"]),
                              "reference_mentions": 1, "predicted_mentions": 1}
    assert_perfect(data, 1)


def test_a_spacy_pipeline_output_kept_as_a_docbin_scores_as_counted(tmp_path: Path) -> None:
    """The EntityRuler's output over spaCy's example, saved as users save nlp.pipe's docs
    (DocBin(docs=...).to_disk), against the gold read from the .iob file as JSONL."""
    spacy = pytest.importorskip("spacy")
    doc = spacy_doc()
    spacy.tokens.DocBin(docs=[doc]).to_disk(tmp_path / "pred.spacy")
    gold = conll(IOB).spans[0]
    spans = [{"start": doc[s].idx, "end": doc[e - 1].idx + len(doc[e - 1]), "label": t} for s, e, t in gold]
    (tmp_path / "gold.jsonl").write_text(json.dumps({"id": "0", "text": doc.text, "spans": spans}) + "\n",
                                         encoding="utf-8")
    data = json.loads(invoke(["evaluate", str(tmp_path / "gold.jsonl"), str(tmp_path / "pred.spacy"),
                              "--predicted-format", "docbin", "--json"]))
    pred = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
    assert_as_peers(data, [sorted((s["start"], s["end"], s["label"]) for s in spans)], [sorted(pred)])


def test_a_spans_key_nobody_used_names_the_groups_present(tmp_path: Path) -> None:
    spacy = pytest.importorskip("spacy")
    doc = spacy_doc()
    doc.spans["sc"] = list(doc.ents)
    spacy.tokens.DocBin(docs=[doc]).to_disk(tmp_path / "spans.spacy")
    assert formats.read("docbin", tmp_path / "spans.spacy", spans_key="sc")[0][0].spans == tuple(
        sorted((e.start_char, e.end_char, e.label_) for e in doc.ents)
    )
    message = invoke_refused(["evaluate", str(tmp_path / "spans.spacy"), str(tmp_path / "spans.spacy"),
                              "--format", "docbin", "--reference-option", "spans_key=spans"])
    assert message.endswith("no span group 'spans': its span groups are 'sc'")
    message = invoke_refused(["evaluate", str(DOCBIN), str(DOCBIN), "--format", "docbin",
                              "--reference-option", "spans_key=sc"])
    assert message.endswith("its Docs have no span groups (read doc.ents: leave spans_key out)")
