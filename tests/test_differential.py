"""Differential tests: spanscore against seqeval, seqscore, conlleval and nervaluate.

The reference is the BTC test split (read from ../shared through the ``btc`` fixture). Predictions
are made from it by a seeded random perturbation (dropped mentions, changed types, shifted,
extended, shrunk and split boundaries, spurious mentions), then corrupted with invalid transitions
(stray ``I-`` tags, ``I-X`` after ``B-Y``, ...), written to ``tmp_path`` as CoNLL and scored by file
path, as a user would. Random label sequences full of invalid transitions complete the picture.

Strict (exact span and type) counts must equal every peer's exactly, and scores to 1e-12 relative.
(On every input below the four implementations in fact agree to the last bit: all of them compute
P = tp / pred, R = tp / ref and F1 = 2PR / (P + R) with the same operations; the tolerance only
keeps the tests honest about what is promised.)

The SemEval categories are compared with nervaluate where nervaluate does not depend on the order
of its input; where it does, pinned hand-made cases show the difference (docs/differences.md).
"""

from __future__ import annotations

import math
import random
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import conlleval
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nervaluate import Evaluator
from nervaluate.loaders import ListLoader
from seqeval.metrics import classification_report, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import BILOU as SEQEVAL_BILOU
from seqeval.scheme import IOB1 as SEQEVAL_IOB1
from seqeval.scheme import IOB2 as SEQEVAL_IOB2
from seqeval.scheme import IOBES as SEQEVAL_IOBES
from seqeval.scheme import Entities as SeqevalEntities
from seqscore.encoding import get_encoding as seqscore_encoding
from seqscore.scoring import score_label_sequences
from seqscore.validation import validate_labels

import spanscore
from spanscore.io.load import Loaded
from spanscore.stages.spans import Spans

TYPES = ("LOC", "ORG", "PER")
REL = 1e-12
Mention = tuple[int, int, str]  # start, end (exclusive), type
Labels = list[list[str]]

# Prefix letters per encoding (begin, inside, end, single); None where the encoding has none.
LETTERS: dict[str, tuple[str | None, str, str | None, str | None]] = {
    "BIO": ("B", "I", None, None),
    "IOB1": ("B", "I", None, None),
    "BIOES": ("B", "I", "E", "S"),
    "BILOU": ("B", "I", "L", "U"),
    "BMES": ("B", "M", "E", "S"),
    "IO": (None, "I", None, None),
}
SEQSCORE_NAME = {"BIO": "BIO", "IOB1": "IOB", "BIOES": "BIOES", "BILOU": "BILOU", "BMES": "BMES", "IO": "IO"}
# Encodings that conlleval (and seqeval's default mode, its port) can read with its chunk rules.
CONLLEVAL_READS = ("BIO", "IOB1", "BIOES", "IO")
# seqeval's strict-mode schemes that keep the same mentions as repair="discard".
SEQEVAL_STRICT = {"BIO": SEQEVAL_IOB2, "BIOES": SEQEVAL_IOBES, "BILOU": SEQEVAL_BILOU}


# --------------------------------------------------------------------------------------------
# Data: reading, writing, decoding valid BIO, encoding, perturbing, corrupting.


@dataclass(frozen=True)
class Corpus:
    tokens: list[list[str]]
    labels: Labels

    @cached_property
    def mentions(self) -> list[list[Mention]]:
        return [bio_mentions(s) for s in self.labels]


def read_conll(path: Path) -> Corpus:
    tokens: list[list[str]] = []
    labels: Labels = []
    cur_t: list[str] = []
    cur_l: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip(" \t\r"):
            if cur_t:
                tokens.append(cur_t)
                labels.append(cur_l)
                cur_t, cur_l = [], []
            continue
        token, label = line.rsplit("\t", 1)
        cur_t.append(token)
        cur_l.append(label)
    if cur_t:
        tokens.append(cur_t)
        labels.append(cur_l)
    return Corpus(tokens, labels)


def write_conll(path: Path, tokens: list[list[str]], labels: Labels) -> Path:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for toks, labs in zip(tokens, labels, strict=True):
            for tok, lab in zip(toks, labs, strict=True):
                f.write(f"{tok}\t{lab}\n")
            f.write("\n")
    return path


def bio_mentions(labels: Sequence[str]) -> list[Mention]:
    """Mentions of a *valid* BIO sequence (an independent decoder: it refuses invalid input)."""
    out: list[Mention] = []
    start: int | None = None
    typ = ""
    for i, lab in enumerate([*labels, "O"]):
        if start is not None and lab != f"I-{typ}":
            out.append((start, i, typ))
            start = None
        if lab.startswith("B-"):
            start, typ = i, lab[2:]
        elif lab.startswith("I-"):
            assert start is not None, f"invalid BIO at {i}: {labels}"
    return out


def encode(mentions: Sequence[Mention], n: int, encoding: str) -> list[str]:
    """Labels for non-overlapping mentions in one of the encodings (written independently of spanscore)."""
    begin, inside, end, single = LETTERS[encoding]
    labels = ["O"] * n
    prev_end, prev_type = -1, ""
    for s, e, t in sorted(mentions):
        assert s >= prev_end, "mentions must not overlap"
        for i in range(s, e):
            labels[i] = f"{inside}-{t}"
        if encoding == "BIO":
            labels[s] = f"{begin}-{t}"
        elif encoding == "IOB1":
            if s == prev_end and t == prev_type:
                labels[s] = f"{begin}-{t}"
        elif encoding in ("BIOES", "BILOU", "BMES"):
            if e - s == 1:
                labels[s] = f"{single}-{t}"
            else:
                labels[s] = f"{begin}-{t}"
                labels[e - 1] = f"{end}-{t}"
        prev_end, prev_type = e, t
    return labels


def perturb(mentions: Sequence[Mention], n: int, rng: random.Random) -> list[Mention]:
    """A plausible tagger's output: gold mentions damaged in every way a tagger damages them."""
    out: list[Mention] = []
    for s, e, t in mentions:
        r = rng.random()
        if r < 0.08:  # missed
            continue
        if r < 0.16:  # wrong type
            t = rng.choice([x for x in TYPES if x != t])
        elif r < 0.22:  # shifted
            d = rng.choice((-1, 1))
            s, e = s + d, e + d
        elif r < 0.28:  # extended
            if rng.random() < 0.5:
                s -= rng.randint(1, 2)
            else:
                e += rng.randint(1, 2)
        elif r < 0.34 and e - s > 1:  # shrunk
            if rng.random() < 0.5:
                s += 1
            else:
                e -= 1
        elif r < 0.38 and e - s > 1:  # split in two
            m = rng.randrange(s + 1, e)
            out.append((s, m, t))
            s = m
            if rng.random() < 0.5:
                t = rng.choice(TYPES)
        out.append((s, e, t))
    while rng.random() < 0.2:  # spurious
        s = rng.randrange(n)
        out.append((s, s + rng.randint(1, 3), rng.choice(TYPES)))
    kept: list[Mention] = []
    last_end = 0
    for s, e, t in sorted((max(s, 0), min(e, n), t) for s, e, t in out):
        if s < e and s >= last_end:
            kept.append((s, e, t))
            last_end = e
    return kept


def corrupt(labels: Sequence[str], encoding: str, rng: random.Random, rate: float) -> list[str]:
    """Inject invalid transitions: stray inside/end tags, prefixes and types changed inside mentions."""
    begin, inside, end, single = LETTERS[encoding]
    letters = [x for x in (begin, inside, end, single) if x is not None]
    out = list(labels)
    for i, lab in enumerate(out):
        if rng.random() >= rate:
            continue
        if lab == "O":  # a stray I- (or E-, or IOB1's B- after O)
            stray = [x for x in (inside, end) if x is not None] if encoding != "IOB1" else [begin or "B"]
            out[i] = f"{rng.choice(stray)}-{rng.choice(TYPES)}"
        elif rng.random() < 0.5:  # I-X after B-Y, I-Y...
            other = [t for t in TYPES if t != lab.split("-", 1)[1]]
            out[i] = f"{lab.split('-', 1)[0]}-{rng.choice(other)}"
        else:  # B- turned into I-, E- into I-, S- into B-...
            out[i] = f"{rng.choice(letters)}-{lab.split('-', 1)[1]}"
    return out


def random_labels(rng: random.Random, encoding: str, n_sentences: int, types: str = "AB") -> Labels:
    begin, inside, end, single = LETTERS[encoding]
    vocab = ["O"] * 3 + [f"{p}-{t}" for p in (begin, inside, end, single) if p for t in types]
    return [[rng.choice(vocab) for _ in range(rng.randint(1, 12))] for _ in range(n_sentences)]


def mentions_of(spans: Spans) -> list[Mention]:
    """spanscore's decoded mentions as (start, end, type), in its global positions."""
    return [
        (int(s), int(e), spans.types[int(t)])
        for s, e, t in zip(spans.start.tolist(), spans.end.tolist(), spans.type.tolist(), strict=True)
    ]


def by_sentence(spans: Spans, lengths: list[int]) -> list[list[Mention]]:
    """spanscore's decoded mentions per sentence, with sentence-local positions."""
    bounds = [0]
    for n in lengths:
        bounds.append(bounds[-1] + n)
    per: list[list[Mention]] = [[] for _ in lengths]
    for (s, e, t), u in zip(mentions_of(spans), spans.unit.tolist(), strict=True):
        per[u].append((s - bounds[u], e - bounds[u], t))
    return per


def n_invalid(labels: Labels, encoding: str) -> int:
    enc = seqscore_encoding(SEQSCORE_NAME[encoding])
    return sum(len(validate_labels(s, enc).errors) for s in labels)


# --------------------------------------------------------------------------------------------
# Strict scores of spanscore and of each peer, in one shape.


@dataclass(frozen=True)
class PRF:
    tp: int
    pred: int
    ref: int
    precision: float
    recall: float
    f1: float


Scores = dict[str, PRF]  # "" is the micro average, otherwise one entry per type
MICRO = ""


def ours(report: spanscore.Report, criterion: str = "strict") -> Scores:
    d = report.to_dict()

    def prf(b: dict[str, float]) -> PRF:
        return PRF(int(b["full"]), int(b["predicted"]), int(b["reference"]), b["precision"], b["recall"], b["f1"])

    out = {MICRO: prf(d["metrics"][criterion])}
    for t, block in d["per_type"].items():
        out[t] = prf(block["metrics"][criterion])
    return out


def seqeval_scores(gold: Labels, pred: Labels, **mode: object) -> Scores:
    """seqeval 1.2.2: default mode (conlleval's chunk rules) unless mode="strict", scheme=... is given."""

    def entities(labels: Labels) -> set[tuple[str, int, int, int]]:
        if mode:
            return {
                (e.tag, i, e.start, e.end)
                for i, s in enumerate(SeqevalEntities(labels, mode["scheme"]).entities)
                for e in s
            }
        # get_entities flattens the sentences with an O between them: positions are unique
        return {(t, 0, s, e) for t, s, e in get_entities(labels)}

    ents_g, ents_p = entities(gold), entities(pred)
    tp = Counter(e[0] for e in ents_g & ents_p)
    np_ = Counter(e[0] for e in ents_p)
    nr = Counter(e[0] for e in ents_g)
    kw = {"zero_division": 0, **mode}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {
            MICRO: PRF(
                sum(tp.values()),
                sum(np_.values()),
                sum(nr.values()),
                precision_score(gold, pred, **kw),
                recall_score(gold, pred, **kw),
                f1_score(gold, pred, **kw),
            )
        }
        report = classification_report(gold, pred, output_dict=True, **kw)
    for t in set(np_) | set(nr):
        r = report[t]
        assert r["support"] == nr[t]
        out[t] = PRF(tp[t], np_[t], nr[t], r["precision"], r["recall"], r["f1-score"])
    return out


def seqscore_scores(gold: Labels, pred: Labels, encoding: str = "BIO", repair: str | None = "conlleval") -> Scores:
    """seqscore 0.9.0's library entry point (note: predictions first)."""
    score, _ = score_label_sequences(pred, gold, SEQSCORE_NAME[encoding], repair=repair)
    out = {MICRO: PRF(score.true_pos, score.total_pos, score.total_ref, score.precision, score.recall, score.f1)}
    for t, s in score.type_scores.items():
        out[t] = PRF(s.true_pos, s.total_pos, s.total_ref, s.precision, s.recall, s.f1)
    return out


def conlleval_scores(gold: Labels, pred: Labels) -> Scores:
    """The conlleval PyPI port. It splits lines on whitespace, and BTC has empty tokens and tokens
    ending in a space, so the token column is a placeholder (conlleval never reads it)."""
    lines: list[str] = []
    for g, p in zip(gold, pred, strict=True):
        lines += [f"t {a} {b}" for a, b in zip(g, p, strict=True)]
        lines.append("")
    res = conlleval.evaluate(lines)

    def prf(block: dict[str, dict[str, float]]) -> PRF:
        s, e = block["stats"], block["evals"]
        return PRF(int(s["correct"]), int(s["pred"]), int(s["gold"]), e["prec"], e["rec"], e["f1"])

    out = {MICRO: prf(res["overall"]["chunks"])}
    for t, block in res["slots"]["chunks"].items():
        out[t] = prf(block)
    return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=0.0)


def assert_same(
    mine: Scores, peer: Scores, name: str, *, conlleval_zero: bool = False, discarded: bool = False
) -> None:
    """Counts exactly, scores to 1e-12 relative, overall and per type.

    ``discarded``: with repair="discard" spanscore still lists a type all of whose mentions were
    discarded (all zeros); the peers do not. test_discard_lists_no_type_without_mentions pins that
    bug on its own, so the comparisons of the numbers skip those empty entries.
    """
    if discarded:
        mine = {k: v for k, v in mine.items() if k == MICRO or v.pred or v.ref}
    assert set(mine) == set(peer), f"{name}: types {sorted(mine)} vs {sorted(peer)}"
    for key in sorted(mine):
        a, b = mine[key], peer[key]
        where = f"{name} {key or 'micro'}"
        assert (a.tp, a.pred, a.ref) == (b.tp, b.pred, b.ref), f"{where}: counts {a} vs {b}"
        if conlleval_zero and a.pred == 0:
            # conlleval scores precision 1 when nothing was predicted; spanscore follows
            # scikit-learn/seqeval/seqscore (zero_division=0). See test_conlleval_zero_prediction_precision.
            assert (a.precision, b.precision) == (0.0, 1.0), where
        else:
            assert close(a.precision, b.precision), f"{where}: precision {a.precision!r} vs {b.precision!r}"
        assert close(a.recall, b.recall), f"{where}: recall {a.recall!r} vs {b.recall!r}"
        assert close(a.f1, b.f1), f"{where}: f1 {a.f1!r} vs {b.f1!r}"


def assert_matches_all_peers(report: spanscore.Report, gold: Labels, pred: Labels, encoding: str = "BIO") -> None:
    mine = ours(report)
    assert_same(mine, seqeval_scores(gold, pred), "seqeval")
    assert_same(mine, conlleval_scores(gold, pred), "conlleval", conlleval_zero=True)
    if encoding in ("BIO", "IOB1"):  # seqscore repairs only these
        assert_same(mine, seqscore_scores(gold, pred, encoding), "seqscore")
    elif n_invalid(pred, encoding) == 0 and n_invalid(gold, encoding) == 0:
        assert_same(mine, seqscore_scores(gold, pred, encoding, repair=None), "seqscore")


# --------------------------------------------------------------------------------------------
# Fixtures.


@pytest.fixture(scope="module")
def gold(btc: Path) -> Corpus:
    return read_conll(btc / "test.txt")


@dataclass(frozen=True)
class Prediction:
    mentions: list[list[Mention]]  # the perturbed mentions (before any corruption)
    labels: Labels  # BIO labels of them, corrupted with invalid transitions


def make_prediction(gold: Corpus, seed: int, rate: float = 0.03) -> Prediction:
    rng = random.Random(seed)
    mentions = [perturb(m, len(t), rng) for m, t in zip(gold.mentions, gold.tokens, strict=True)]
    labels = [corrupt(encode(m, len(t), "BIO"), "BIO", rng, rate) for m, t in zip(mentions, gold.tokens, strict=True)]
    return Prediction(mentions, labels)


SEEDS = (11, 22, 33)


# --------------------------------------------------------------------------------------------
# BTC against perturbed and corrupted predictions.


def test_btc_reference_is_what_the_paper_describes(btc: Path, gold: Corpus) -> None:
    assert len(gold.labels) == 2001
    assert n_invalid(gold.labels, "BIO") == 0
    assert Counter(t for m in gold.mentions for _, _, t in m) == {"PER": 1602, "LOC": 602, "ORG": 792}
    d = spanscore.evaluate(reference=btc / "test.txt", predicted=btc / "test.txt").to_dict()
    assert d["corpus"] == {
        "documents": 1,
        "sentences": 2001,
        "tokens": sum(len(t) for t in gold.tokens),
        "reference_mentions": 2996,
        "predicted_mentions": 2996,
    }
    assert all(d["metrics"][c]["f1"] == 1.0 for c in ("strict", "boundary", "left", "right", "overlap", "token"))


@pytest.mark.parametrize("seed", SEEDS)
def test_btc_strict_matches_seqeval_seqscore_conlleval(btc: Path, gold: Corpus, tmp_path: Path, seed: int) -> None:
    pred = make_prediction(gold, seed)
    # The corruption must really produce many invalid transitions of several kinds.
    assert n_invalid(pred.labels, "BIO") > 300
    flat = [(a, b) for s in pred.labels for a, b in zip(["O", *s[:-1]], s, strict=True)]
    assert any(a == "O" and b.startswith("I-") for a, b in flat)  # stray I- after O
    assert any(a.startswith("B-") and b.startswith("I-") and a[2:] != b[2:] for a, b in flat)  # I-X after B-Y
    assert any(a.startswith("I-") and b.startswith("I-") and a[2:] != b[2:] for a, b in flat)  # I-X after I-Y
    path = write_conll(tmp_path / "pred.conll", gold.tokens, pred.labels)
    report = spanscore.evaluate(reference=btc / "test.txt", predicted=path)
    m = report.to_dict()["metrics"]
    # A realistic, imperfect prediction: every criterion sees something different.
    assert 0.5 < m["strict"]["f1"] < m["left"]["f1"] < m["overlap"]["f1"] < 1.0
    assert m["strict"]["f1"] < m["right"]["f1"] < m["overlap"]["f1"]
    assert m["strict"]["f1"] < m["boundary"]["f1"]
    assert_matches_all_peers(report, gold.labels, pred.labels)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_btc_discard_matches_seqscore_discard_and_seqeval_strict(
    btc: Path, gold: Corpus, tmp_path: Path, seed: int
) -> None:
    pred = make_prediction(gold, seed)
    path = write_conll(tmp_path / "pred.conll", gold.tokens, pred.labels)
    discard = spanscore.evaluate(reference=btc / "test.txt", predicted=path, repair="discard")
    mine = ours(discard)
    assert_same(mine, seqscore_scores(gold.labels, pred.labels, repair="discard"), "seqscore discard", discarded=True)
    # seqeval's strict mode with IOB2 drops the same mentions.
    assert_same(
        mine,
        seqeval_scores(gold.labels, pred.labels, mode="strict", scheme=SEQEVAL_IOB2),
        "seqeval strict",
        discarded=True,
    )
    # ...and discarding really differs from conlleval's repair here.
    conll = ours(spanscore.evaluate(reference=btc / "test.txt", predicted=path))
    assert mine[MICRO].pred < conll[MICRO].pred


def test_btc_repair_none_raises_exactly_on_invalid_transitions(btc: Path, gold: Corpus, tmp_path: Path) -> None:
    pred = make_prediction(gold, SEEDS[0])
    bad = write_conll(tmp_path / "bad.conll", gold.tokens, pred.labels)
    with pytest.raises(spanscore.InputError) as info:
        spanscore.evaluate(reference=btc / "test.txt", predicted=bad, repair="none")
    assert len(info.value.details) == n_invalid(pred.labels, "BIO")
    assert info.value.path == str(bad) and info.value.line is not None
    # The same prediction without the corruption is valid: no error, and the same scores as with repair.
    valid = [encode(m, len(t), "BIO") for m, t in zip(pred.mentions, gold.tokens, strict=True)]
    assert n_invalid(valid, "BIO") == 0
    good = write_conll(tmp_path / "good.conll", gold.tokens, valid)
    strict_none = spanscore.evaluate(reference=btc / "test.txt", predicted=good, repair="none").to_dict()
    assert strict_none["metrics"] == spanscore.evaluate(reference=btc / "test.txt", predicted=good).to_dict()["metrics"]


@pytest.mark.parametrize("encoding", ["IOB1", "BIOES", "BILOU", "BMES", "IO"])
def test_btc_other_encodings_match_seqscore(btc: Path, gold: Corpus, tmp_path: Path, encoding: str) -> None:
    """BTC and a perturbed prediction converted to each encoding (valid labels: seqscore without repair)."""
    pred = make_prediction(gold, SEEDS[1])
    g = [encode(m, len(t), encoding) for m, t in zip(gold.mentions, gold.tokens, strict=True)]
    p = [encode(m, len(t), encoding) for m, t in zip(pred.mentions, gold.tokens, strict=True)]
    assert n_invalid(g, encoding) == 0 and n_invalid(p, encoding) == 0
    gp = write_conll(tmp_path / "gold.conll", gold.tokens, g)
    pp = write_conll(tmp_path / "pred.conll", gold.tokens, p)
    report = spanscore.evaluate(reference=gp, predicted=pp, labels=encoding, repair="none")
    mine = ours(report)
    assert_same(mine, seqscore_scores(g, p, encoding, repair=None), f"seqscore {encoding}")
    if encoding in CONLLEVAL_READS:
        assert_same(mine, seqeval_scores(g, p), f"seqeval {encoding}")
        assert_same(mine, conlleval_scores(g, p), f"conlleval {encoding}", conlleval_zero=True)
    if encoding != "IO":  # IO merges adjacent same-type mentions; the others encode the same mentions
        bio = [encode(m, len(t), "BIO") for m, t in zip(pred.mentions, gold.tokens, strict=True)]
        bio_path = write_conll(tmp_path / "bio.conll", gold.tokens, bio)
        same = spanscore.evaluate(reference=btc / "test.txt", predicted=bio_path).to_dict()
        assert report.to_dict()["metrics"] == same["metrics"]
        assert report.to_dict()["semeval"] == same["semeval"]


@pytest.mark.parametrize("encoding", ["IOB1", "BIOES"])
def test_btc_other_encodings_with_invalid_transitions(btc: Path, gold: Corpus, tmp_path: Path, encoding: str) -> None:
    pred = make_prediction(gold, SEEDS[2])
    rng = random.Random(encoding)
    g = [encode(m, len(t), encoding) for m, t in zip(gold.mentions, gold.tokens, strict=True)]
    p = [
        corrupt(encode(m, len(t), encoding), encoding, rng, 0.03)
        for m, t in zip(pred.mentions, gold.tokens, strict=True)
    ]
    errors = n_invalid(p, encoding)
    assert errors > 300
    gp = write_conll(tmp_path / "gold.conll", gold.tokens, g)
    pp = write_conll(tmp_path / "pred.conll", gold.tokens, p)
    report = spanscore.evaluate(reference=gp, predicted=pp, labels=encoding)
    # seqscore repairs IOB1 only (conlleval); for BIOES it can only validate.
    assert_matches_all_peers(report, g, p, encoding)
    with pytest.raises(spanscore.InputError) as info:
        spanscore.evaluate(reference=gp, predicted=pp, labels=encoding, repair="none")
    assert len(info.value.details) == errors


# --------------------------------------------------------------------------------------------
# Random label sequences full of invalid transitions.


@pytest.mark.parametrize(("encoding", "seed"), [("BIO", 1), ("BIO", 2), ("IOB1", 3), ("BIOES", 4), ("IO", 5)])
def test_random_label_files_match_peers(tmp_path: Path, encoding: str, seed: int) -> None:
    rng = random.Random(seed)
    gold = random_labels(rng, encoding, 600)
    pred = random_labels(rng, encoding, 600)
    pred = [p[: len(g)] + ["O"] * (len(g) - len(p)) for g, p in zip(gold, pred, strict=True)]
    tokens = [[f"w{i}" for i in range(len(g))] for g in gold]
    gp = write_conll(tmp_path / "gold.conll", tokens, gold)
    pp = write_conll(tmp_path / "pred.conll", tokens, pred)
    report = spanscore.evaluate(reference=gp, predicted=pp, labels=encoding)
    assert report.to_dict()["metrics"]["strict"]["full"] > 50
    assert_matches_all_peers(report, gold, pred, encoding)
    if encoding == "BIO":
        discard = spanscore.evaluate(reference=gp, predicted=pp, repair="discard")
        assert_same(ours(discard), seqscore_scores(gold, pred, repair="discard"), "seqscore discard", discarded=True)
    if encoding != "IO":
        with pytest.raises(spanscore.InputError) as info:
            spanscore.evaluate(reference=gp, predicted=pp, labels=encoding, repair="none")
        # spanscore checks the reference first and stops at the first file with errors.
        assert len(info.value.details) == n_invalid(gold, encoding)


def vocabulary(encoding: str) -> list[str]:
    begin, inside, end, single = LETTERS[encoding]
    return ["O", *(f"{p}-{t}" for p in (begin, inside, end, single) if p for t in "XY")]


@st.composite
def label_pairs(draw: st.DrawFn) -> tuple[str, Labels, Labels]:
    encoding = draw(st.sampled_from(sorted(LETTERS)))
    vocab = vocabulary(encoding)
    gold = draw(st.lists(st.lists(st.sampled_from(vocab), min_size=1, max_size=8), min_size=1, max_size=4))
    # Each predicted label is the gold one or any label: from near copies to noise.
    pred = [[draw(st.one_of(st.just(lab), st.sampled_from(vocab))) for lab in g] for g in gold]
    return encoding, gold, pred


@settings(max_examples=200, deadline=None)
@given(label_pairs())
def test_random_labels_match_peers(case: tuple[str, Labels, Labels]) -> None:
    encoding, gold, pred = case
    report = spanscore.evaluate(reference=gold, predicted=pred, format="labels", labels=encoding)
    mine = ours(report)
    if encoding in CONLLEVAL_READS:
        assert_same(mine, seqeval_scores(gold, pred), "seqeval")
        assert_same(mine, conlleval_scores(gold, pred), "conlleval", conlleval_zero=True)
    if encoding in ("BIO", "IOB1") or (n_invalid(gold, encoding) == 0 and n_invalid(pred, encoding) == 0):
        assert_same(
            mine,
            seqscore_scores(gold, pred, encoding, repair="conlleval" if encoding in ("BIO", "IOB1") else None),
            "seqscore",
        )
    if encoding in SEQEVAL_STRICT:
        discard = ours(
            spanscore.evaluate(reference=gold, predicted=pred, format="labels", labels=encoding, repair="discard")
        )
        strict_mode = seqeval_scores(gold, pred, mode="strict", scheme=SEQEVAL_STRICT[encoding])
        assert_same(discard, strict_mode, "seqeval strict", discarded=True)
        if encoding == "BIO":
            assert_same(discard, seqscore_scores(gold, pred, repair="discard"), "seqscore discard", discarded=True)
    # repair="none" refuses the input exactly when seqscore's validation finds errors, naming each.
    errors = n_invalid(gold, encoding) or n_invalid(pred, encoding)
    try:
        spanscore.evaluate(reference=gold, predicted=pred, format="labels", labels=encoding, repair="none")
        found = 0
    except spanscore.InputError as exc:
        found = len(exc.details)
        assert found > 0
    assert found == errors


# --------------------------------------------------------------------------------------------
# Pinned differences from the label-sequence scorers.


def test_conlleval_zero_prediction_precision() -> None:
    """conlleval scores precision 1 for a type that was never predicted; spanscore scores 0 as
    scikit-learn, seqeval and seqscore do, unless zero_division=1 is asked for."""
    gold = [["B-PER", "O", "B-LOC"]]
    pred = [["B-PER", "O", "O"]]
    c = conlleval_scores(gold, pred)
    assert (c["LOC"].pred, c["LOC"].precision, c["LOC"].recall, c["LOC"].f1) == (0, 1, 0, 0)
    mine = ours(spanscore.evaluate(reference=gold, predicted=pred, format="labels"))
    assert (mine["LOC"].precision, mine["LOC"].recall, mine["LOC"].f1) == (0.0, 0.0, 0.0)
    assert seqeval_scores(gold, pred)["LOC"].precision == 0.0
    assert seqscore_scores(gold, pred)["LOC"].precision == 0.0
    one = ours(spanscore.evaluate(reference=gold, predicted=pred, format="labels", zero_division=1.0))
    assert (one["LOC"].precision, one["LOC"].recall, one["LOC"].f1) == (1.0, 0.0, 0.0)
    # Only the zero-denominator case differs: both agree on the micro average.
    assert_same(mine, c, "conlleval", conlleval_zero=True)


def test_discard_lists_no_type_without_mentions() -> None:
    """A type seen only in labels that repair="discard" throws away has no mention on either side.
    seqeval (strict mode) and seqscore do not report it; neither should spanscore, above all not in
    the macro average, where its 0/0 scores pull the average down."""
    gold = [["B-PER", "O", "I-LOC"]]  # the stray I-LOC is discarded
    pred = [["B-PER", "O", "O"]]
    d = spanscore.evaluate(reference=gold, predicted=pred, format="labels", repair="discard").to_dict()
    assert d["metrics"]["strict"]["f1"] == 1.0
    assert set(seqscore_scores(gold, pred, repair="discard")) == {MICRO, "PER"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        macro = precision_score(gold, pred, average="macro", mode="strict", scheme=SEQEVAL_IOB2)
    assert macro == 1.0
    assert set(d["per_type"]) == {"PER"}
    assert d["macro"]["strict"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_seqeval_strict_iob1_keeps_fragments_of_invalid_mentions() -> None:
    """On *invalid* IOB1 (``B-`` after ``O``), seqeval's strict mode keeps the part of the mention
    after the invalid token; repair="discard" drops the whole mention, as it does for every encoding
    (and as seqeval's strict mode itself does for BIO and BIOES). seqscore has no discard for IOB1."""
    labels = [["B-A", "I-A", "O"]]
    assert n_invalid(labels, "IOB1") == 1
    theirs = [(e.start, e.end, e.tag) for e in SeqevalEntities(labels, SEQEVAL_IOB1).entities[0]]
    assert theirs == [(1, 2, "A")]
    discard = spanscore.load(reference=labels, predicted=labels, format="labels", labels="IOB1", repair="discard")
    assert len(discard.reference) == 0
    repaired = spanscore.load(reference=labels, predicted=labels, format="labels", labels="IOB1")
    assert mentions_of(repaired.reference) == [(0, 2, "A")]
    assert [
        (m.span.start, m.span.end)
        for m in seqscore_encoding("IOB").decode_labels(seqscore_encoding("IOB").repair_labels(labels[0], "conlleval"))
    ] == [(0, 2)]


def test_seqeval_strict_bioes_equals_discard() -> None:
    """For BIOES, seqeval's strict mode and repair="discard" keep the same mentions."""
    rng = random.Random(7)
    labels = random_labels(rng, "BIOES", 400)
    got = spanscore.load(reference=labels, predicted=labels, format="labels", labels="BIOES", repair="discard")
    mine = {(u, *m) for u, doc in enumerate(by_sentence(got.reference, [len(s) for s in labels])) for m in doc}
    theirs = {
        (i, e.start, e.end, e.tag) for i, s in enumerate(SeqevalEntities(labels, SEQEVAL_IOBES).entities) for e in s
    }
    assert len(mine) > 100
    assert mine == theirs


# --------------------------------------------------------------------------------------------
# SemEval categories against nervaluate 1.2.1.

SCHEMES = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual")


def spans_by_sentence(loaded: Loaded, lengths: list[int]) -> tuple[list[list[Mention]], list[list[Mention]]]:
    return by_sentence(loaded.reference, lengths), by_sentence(loaded.predicted, lengths)


def overlaps(a: Mention, b: Mention) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def order_independent(gold: list[Mention], pred: list[Mention]) -> bool:
    """Every gold mention overlaps at most one predicted mention and vice versa."""
    return all(sum(overlaps(g, p) for p in pred) <= 1 for g in gold) and all(
        sum(overlaps(g, p) for g in gold) <= 1 for p in pred
    )


def nervaluate_counts(gold: list[list[Mention]], pred: list[list[Mention]], tags: Sequence[str] = TYPES) -> dict:
    """nervaluate over documents given as our mentions (its ends are inclusive: end - 1)."""

    def dicts(docs: list[list[Mention]]) -> list[list[dict[str, object]]]:
        return [[{"label": t, "start": s, "end": e - 1} for s, e, t in doc] for doc in docs]

    res = Evaluator(dicts(gold), dicts(pred), tags=list(tags), loader="dict").evaluate()
    return res


def nervaluate_block(result: object) -> dict[str, float]:
    return {c: getattr(result, c) for c in (*CATEGORIES, "precision", "recall", "f1")}


def ours_semeval(gold: list[list[Mention]], pred: list[list[Mention]]) -> dict:
    return spanscore.evaluate(reference=gold, predicted=pred, format="spans").to_dict()


def test_nervaluate_list_loader_decodes_bio_like_us(btc: Path, gold: Corpus, tmp_path: Path) -> None:
    """nervaluate's own BIO reader agrees with conlleval's chunk rules on corrupted BIO."""
    pred = make_prediction(gold, SEEDS[0])
    path = write_conll(tmp_path / "pred.conll", gold.tokens, pred.labels)
    loaded = spanscore.load(reference=btc / "test.txt", predicted=path)
    _, ours_pred = spans_by_sentence(loaded, [len(t) for t in gold.tokens])
    theirs = ListLoader().load(pred.labels)
    assert [sorted((e.start, e.end + 1, e.label) for e in doc) for doc in theirs] == ours_pred


@pytest.mark.parametrize("seed", SEEDS)
def test_semeval_matches_nervaluate_where_it_is_order_independent(
    btc: Path, gold: Corpus, tmp_path: Path, seed: int
) -> None:
    pred = make_prediction(gold, seed)
    path = write_conll(tmp_path / "pred.conll", gold.tokens, pred.labels)
    loaded = spanscore.load(reference=btc / "test.txt", predicted=path)
    g_all, p_all = spans_by_sentence(loaded, [len(t) for t in gold.tokens])
    keep = [i for i in range(len(g_all)) if order_independent(g_all[i], p_all[i])]
    assert len(keep) > 1700  # most tweets (about 92%)
    g = [g_all[i] for i in keep]
    p = [p_all[i] for i in keep]
    theirs = nervaluate_counts(g, p)["overall"]
    mine = ours_semeval(g, p)["semeval"]
    for scheme, their_name in SCHEMES.items():
        t = nervaluate_block(theirs[their_name])
        for c in CATEGORIES:
            assert mine[scheme][c] == t[c], f"{scheme} {c}: {mine[scheme][c]} vs {t[c]}"
        for c in ("precision", "recall", "f1"):
            assert close(mine[scheme][c], t[c]), f"{scheme} {c}"
    # The kept sentences hold every kind of disagreement, so the comparison means something.
    assert mine["strict"]["incorrect"] > 100 and mine["partial"]["partial"] > 50
    assert mine["type"]["incorrect"] > 30 and mine["exact"]["incorrect"] > 50
    assert min(mine["strict"]["missed"], mine["strict"]["spurious"]) > 50

    # Elsewhere nervaluate's categories may depend on the order it reads the predictions in; ours
    # never do (spans are matched as a set).
    rest = [i for i in range(len(g_all)) if i not in set(keep)]
    forward = ours_semeval([g_all[i] for i in rest], [p_all[i] for i in rest])["semeval"]
    backward = ours_semeval([g_all[i] for i in rest], [p_all[i][::-1] for i in rest])["semeval"]
    assert forward == backward
    changed = 0
    for i in rest:
        a = nervaluate_counts([g_all[i]], [p_all[i]])["overall"]
        b = nervaluate_counts([g_all[i]], [p_all[i][::-1]])["overall"]
        changed += any(nervaluate_block(a[k]) != nervaluate_block(b[k]) for k in a)
    assert changed > 20  # about 45% of these tweets (66 of 148 for seed 11)


def test_nervaluate_depends_on_prediction_order() -> None:
    """Gold X over tokens 0-2; predictions X over token 0 and X over tokens 0-2 (exact).

    nervaluate lets the first prediction it reads claim the gold mention: read in one order, the
    partial one takes it (INC in strict) and the exact one is spurious; read in the other order, the
    exact one is correct. spanscore fixes exact pairs first and gives the same answer either way.
    """
    gold = [[(0, 3, "X")]]
    pred = [[(0, 1, "X"), (0, 3, "X")]]
    rev = [pred[0][::-1]]
    a = nervaluate_counts(gold, pred, ["X"])["overall"]
    b = nervaluate_counts(gold, rev, ["X"])["overall"]
    cats = ("correct", "incorrect", "partial", "missed", "spurious")
    assert [getattr(a["strict"], c) for c in cats] == [0, 1, 0, 0, 1]
    assert [getattr(b["strict"], c) for c in cats] == [1, 0, 0, 0, 1]
    assert [getattr(a["exact"], c) for c in cats] == [0, 1, 0, 0, 1]
    assert [getattr(a["partial"], c) for c in cats] == [0, 0, 1, 0, 1]
    assert [getattr(b["partial"], c) for c in cats] == [1, 0, 0, 0, 1]
    for p in (pred, rev):
        mine = ours_semeval(gold, p)["semeval"]
        for scheme in ("strict", "exact", "partial", "type"):
            assert [mine[scheme][c] for c in cats] == [1, 0, 0, 0, 1], scheme
        assert mine == ours_semeval(gold, pred)["semeval"]


def test_nervaluate_greedy_leaves_credit_unassigned() -> None:
    """Two gold mentions, a long prediction over both and a short one over the first.

    Reading the long prediction first, nervaluate gives it the first gold mention and the short one
    finds nothing left (PAR 1, MIS 1, SPU 1). spanscore pairs long-second, short-first (PAR 2).
    """
    gold = [[(0, 2, "X"), (3, 5, "X")]]
    pred = [[(1, 4, "X"), (0, 1, "X")]]
    theirs = nervaluate_counts(gold, pred, ["X"])["overall"]["partial"]
    assert (theirs.correct, theirs.partial, theirs.missed, theirs.spurious) == (0, 1, 1, 1)
    back = nervaluate_counts(gold, [pred[0][::-1]], ["X"])["overall"]["partial"]
    assert (back.correct, back.partial, back.missed, back.spurious) == (0, 2, 0, 0)
    mine = ours_semeval(gold, pred)["semeval"]["partial"]
    assert (mine["correct"], mine["partial"], mine["missed"], mine["spurious"]) == (0, 2, 0, 0)


def test_nervaluate_per_type_counts_do_not_add_up() -> None:
    """nervaluate scores each type by filtering both sides to it, so a wrong-type prediction is INC
    overall but MIS + SPU per type. spanscore's per-type categories add up to its totals."""
    gold = [[(0, 2, "PER"), (4, 5, "LOC")], [(0, 1, "ORG")]]
    pred = [[(0, 2, "ORG"), (3, 5, "LOC")], [(0, 1, "ORG"), (2, 3, "PER")]]
    res = nervaluate_counts(gold, pred)
    cats = ("correct", "incorrect", "partial", "missed", "spurious")
    for scheme in ("strict", "exact", "partial", "ent_type"):
        total = [getattr(res["overall"][scheme], c) for c in cats]
        summed = [sum(getattr(res["entities"][t][scheme], c) for t in res["entities"]) for c in cats]
        assert total != summed, scheme
    assert [getattr(res["overall"]["strict"], c) for c in cats] == [1, 2, 0, 0, 1]
    strict_sum = [sum(getattr(res["entities"][t]["strict"], c) for t in res["entities"]) for c in cats]
    assert strict_sum == [1, 1, 0, 1, 2]

    d = ours_semeval(gold, pred)
    for scheme in ("strict", "exact", "partial", "type"):
        for c in CATEGORIES:
            assert sum(d["per_type"][t]["semeval"][scheme][c] for t in d["per_type"]) == d["semeval"][scheme][c]
    assert d["semeval"]["strict"]["incorrect"] == 2
    # Wrong-type pairs are counted under the reference mention's type.
    assert d["per_type"]["PER"]["semeval"]["strict"]["incorrect"] == 1
    assert d["per_type"]["ORG"]["semeval"]["strict"]["spurious"] == 0
