"""Discontinuous mentions (BRAT's ``T2 ORG 19 22;23 27``) scored by their fragments.

Hand-worked cases for every criterion, the SemEval schemes and the error taxonomy; the figures of
Dai et al. (2020) worked by hand; property tests (a pair of continuous mentions is read exactly as
before, fragment-based strict never exceeds extent-based strict); and a real corpus in BRAT
(PGxCorpus, Legrand et al. 2020) read against an independent count of its ``.ann`` lines, scored
against itself and against a seeded perturbation counted by hand in plain Python.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import FewUnitsWarning
from spanscore.stages.counts import Options, count
from spanscore.stages.matching import find_pairs
from spanscore.stages.spans import Pieces, Spans

REAL = Path(__file__).parent / "data" / "real" / "pgxcorpus" / "brat"
CRITERIA = ("strict", "boundary", "left", "right", "overlap")
SCHEMES = ("strict", "exact", "partial", "type")
SETTINGS = settings(max_examples=80, deadline=None)


def write_brat(folder: Path, docs: dict[str, tuple[str, list[tuple[str, list[tuple[int, int]]]]]]) -> Path:
    """Each document's text and its mentions, (type, fragments), as a BRAT folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (text, mentions) in docs.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
        lines = []
        for k, (label, pieces) in enumerate(mentions, start=1):
            offsets = ";".join(f"{a} {b}" for a, b in pieces)
            lines.append(f"T{k}\t{label} {offsets}\t{' '.join(text[a:b] for a, b in pieces)}\n")
        (folder / f"{name}.ann").write_text("".join(lines), encoding="utf-8")
    return folder


KNEE = "severe pain in left and right knee"
P53 = "mutant and wild-type p53"
GOLD = {
    "knee": (KNEE, [("ADR", [(15, 19), (30, 34)]), ("ADR", [(24, 34)]), ("ADR", [(0, 11)])]),
    "aspirin": ("Aspirin helps", [("DRUG", [(0, 7)])]),
    "p53": (P53, [("VAR", [(0, 6), (21, 24)])]),
}
# The extent "left and right knee" for "left … knee"; the rest exactly.
PRED = {
    "knee": (KNEE, [("ADR", [(15, 34)]), ("ADR", [(24, 34)]), ("ADR", [(0, 11)])]),
    "aspirin": ("Aspirin helps", [("DRUG", [(0, 7)])]),
    "p53": (P53, [("VAR", [(0, 6), (21, 24)])]),
}


@pytest.fixture
def worked(tmp_path: Path) -> tuple[Path, Path]:
    return write_brat(tmp_path / "gold", GOLD), write_brat(tmp_path / "pred", PRED)


def test_a_prediction_of_the_extent_is_not_strict_correct(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    data = spanscore.evaluate(reference=gold, predicted=pred, format="brat").to_dict()
    m = data["metrics"]
    # 5 mentions a side; 4 identical. "left … knee" (fragments 15-19, 30-34: 8 characters) against
    # "left and right knee" (15-34: 19 characters): neither its first fragment's end nor its
    # fragments' number agree, so no start or end bit; the pair only overlaps.
    for name in ("strict", "boundary", "left", "right"):
        assert (m[name]["full"], m[name]["partial"], m[name]["precision"], m[name]["recall"]) == (4, 0, 0.8, 0.8)
    assert (m["overlap"]["full"], m["overlap"]["partial"], m["overlap"]["precision"]) == (4, 1, 0.9)
    s = data["semeval"]
    assert (s["strict"]["correct"], s["strict"]["incorrect"]) == (4, 1)
    assert (s["exact"]["correct"], s["exact"]["incorrect"]) == (4, 1)
    assert (s["partial"]["correct"], s["partial"]["partial"], s["partial"]["precision"]) == (4, 1, 0.9)
    assert s["type"]["correct"] == 5
    e = data["errors"]
    assert (e["correct"], e["right_label_overlap"], e["right_label_overlap_longer"]) == (4, 1, 1)
    assert (e["right_label_overlap_left_match"], e["right_label_overlap_right_match"]) == (0, 0)
    # Characters: the reference covers 11 + 4 + 10 (its "knee" is shared by two mentions) + 7 + 9;
    # the prediction 11 + 19 + 7 + 9; every reference character is predicted with its type.
    assert (m["token"]["true_positive"], m["token"]["reference"], m["token"]["predicted"]) == (41, 41, 46)


def test_dice_credit_counts_the_characters_the_fragments_share(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    data = spanscore.evaluate(reference=gold, predicted=pred, format="brat", credit="dice").to_dict()
    # 2 x 8 shared / (8 + 19), not the extents' 2 x 19 / (19 + 19) = 1.
    assert data["metrics"]["overlap"]["credit"] == pytest.approx(4 + 16 / 27)


def test_the_extent_reading_scores_the_extent_as_before(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", discontinuous="extent")
    data = report.to_dict()
    assert all(data["metrics"][c]["f1"] == 1.0 for c in CRITERIA)
    assert report.signature.endswith("|discontinuous:extent")
    fragments = spanscore.evaluate(reference=gold, predicted=pred, format="brat")
    assert "discontinuous" not in fragments.signature
    assert data["discontinuous"]["reading"] == "extent"


def test_dai_figures_worked_by_hand(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    d = spanscore.evaluate(reference=gold, predicted=pred, format="brat").to_dict()["discontinuous"]
    # All mentions: 4 of 5 on each side.
    assert (d["all"]["reference"], d["all"]["predicted"], d["all"]["correct"]) == (5, 5, 4)
    assert d["all"]["f1"] == pytest.approx(0.8)
    # Discontinuous mentions only: the reference's "left … knee" and "mutant … p53", the
    # prediction's "mutant … p53" alone, which is correct: P 1/1, R 1/2.
    m = d["mentions"]
    assert (m["reference"], m["predicted"], m["correct"], m["precision"], m["recall"]) == (2, 1, 1, 1.0, 0.5)
    assert m["f1"] == pytest.approx(2 / 3)
    # Documents whose reference holds one: "knee" and "p53", all their mentions: 3 of 4.
    u = d["units"]
    assert (u["units"], u["unit"], u["reference"], u["predicted"], u["correct"]) == (2, "document", 4, 4, 3)
    assert u["f1"] == pytest.approx(0.75)


def test_the_result_types_describe_the_block(worked: tuple[Path, Path]) -> None:
    from typing import is_typeddict

    from spanscore import results

    gold, pred = worked
    block = spanscore.evaluate(reference=gold, predicted=pred, format="brat").to_dict()["discontinuous"]

    def keys(typed: Any, value: Any) -> None:
        assert is_typeddict(typed)
        assert typed.__required_keys__ <= set(value) <= typed.__required_keys__ | typed.__optional_keys__

    keys(results.Discontinuous, block)
    keys(results.DiscontinuousFigure, block["all"])
    keys(results.DiscontinuousFigure, block["mentions"])
    keys(results.DiscontinuousUnits, block["units"])


def test_no_discontinuous_block_without_discontinuous_mentions(tmp_path: Path) -> None:
    flat = {"aspirin": ("Aspirin helps", [("DRUG", [(0, 7)])])}
    gold, pred = write_brat(tmp_path / "g", flat), write_brat(tmp_path / "p", flat)
    assert "discontinuous" not in spanscore.evaluate(reference=gold, predicted=pred, format="brat").to_dict()


def test_a_mention_shows_its_fragments_not_its_extent(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat")
    example = report.to_dict()["errors"]["examples"]["right_label_overlap"][0]
    assert example["reference"]["text"] == "left … knee"
    assert (example["reference"]["start"], example["reference"]["end"]) == (15, 34)
    assert example["predicted"]["text"] == "left and right knee"
    rows = list(report.pair_rows("overlap"))
    assert {r["reference_text"] for r in rows} >= {"left … knee", "mutant … p53"}
    text = report.to_text(width=100)
    assert "Discontinuous mentions: strict scores (%), matched by their fragments" in text


def test_review_items_show_fragments_with_the_extents_offsets(worked: tuple[Path, Path]) -> None:
    pytest.importorskip("sqlalchemy")
    from spanscore.review.sources import items_from_report

    gold, pred = worked
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", keep_details=True)
    (item,) = items_from_report(report)
    assert (item.gold_text, item.pred_text) == ("left … knee", "left and right knee")
    # The page marks the mention in its sentence by the extent's offsets.
    assert (item.gold_start, item.gold_end, item.pred_start, item.pred_end) == (15, 34, 15, 34)
    # ...and each fragment by its own, the gap " and right " left out; the continuous side has none.
    assert item.gold_fragments == ((15, 19), (30, 34)) and item.pred_fragments is None
    assert [KNEE[a:b] for a, b in item.gold_fragments] == ["left", "knee"]


def test_review_items_keep_their_fragments_in_the_store_and_the_api(worked: tuple[Path, Path], tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    import dataclasses
    import hashlib

    from spanscore.review import Store
    from spanscore.review.server import ReviewApp
    from spanscore.review.sources import items_from_report

    gold, pred = worked
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", keep_details=True)
    (item,) = items_from_report(report)
    store = Store(str(tmp_path / "r.db"))
    store.create_task("fragments", "goodbad", [item])
    token = store.add_reviewer("r0")
    status, body = ReviewApp(store).handle("GET", "/api/next", {"authorization": f"Bearer {token}"}, b"")
    assert status == 200
    assert body["item"]["reference"]["fragments"] == [[15, 19], [30, 34]]
    assert "fragments" not in body["item"]["predicted"]  # continuous: its start and end say it all
    # Fragments make an item another item; an item without them keeps the key it had before them.
    assert item.key() != dataclasses.replace(item, gold_fragments=None).key()
    plain = dataclasses.replace(item, gold_fragments=None)
    old = {
        k: v
        for k, v in dataclasses.asdict(plain).items()
        if k not in ("probability", "gold_level", "pred_level", "gold_fragments", "pred_fragments")
    }
    assert plain.key() == hashlib.sha256(json.dumps(old, sort_keys=True).encode("utf-8")).hexdigest()
    # Made twice, the task holds the item once.
    assert store.create_task("fragments", "goodbad", [item])[1] == 0


def test_a_store_made_before_fragments_is_migrated_and_serves_its_items(tmp_path: Path) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from alembic import command
    from alembic.config import Config

    from spanscore.review import Store
    from spanscore.review.server import ReviewApp

    db = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    config = Config()
    config.set_main_option("script_location", "spanscore.review:migrations")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0002")
        connection.execute(sa.text("INSERT INTO tasks (id, name, scale, created) VALUES (1, 'old', 'goodbad', 0)"))
        connection.execute(
            sa.text(
                "INSERT INTO items (task_id, key, position, criterion, sentence, gold_text, gold_label, gold_start,"
                " gold_end, pred_text, pred_label, pred_start, pred_end, credit) VALUES (1, 'k', 0, 'overlap',"
                " :s, 'left … knee', 'ADR', 15, 34, 'left and right knee', 'ADR', 15, 34, 0.5)"
            ),
            {"s": KNEE},
        )
    engine.dispose()
    store = Store(str(db))
    with store.engine.connect() as connection:
        assert connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one() == "0003"
    token = store.add_reviewer("r0")
    status, body = ReviewApp(store).handle("GET", "/api/next", {"authorization": f"Bearer {token}"}, b"")
    assert status == 200
    assert body["item"]["reference"] == {"text": "left … knee", "label": "ADR", "start": 15, "end": 34}


def test_report_csvs_show_fragments(worked: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = worked
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--format", "brat", "--report", str(out)])
    assert result.exit_code == 0, result.output
    errors = (out / "errors.csv").read_text(encoding="utf-8")
    assert "left … knee" in errors
    assert "left … knee" in (out / "overlap.csv").read_text(encoding="utf-8")


def test_cli_option_and_its_refusal(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    runner = CliRunner()
    result = runner.invoke(
        cli, ["evaluate", str(gold), str(pred), "--format", "brat", "--discontinuous", "extent", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["metrics"]["strict"]["f1"] == 1.0
    assert data["signature"].endswith("|discontinuous:extent")
    bad = runner.invoke(cli, ["evaluate", str(gold), str(pred), "--format", "brat", "--discontinuous", "gaps"])
    assert bad.exit_code == 2
    assert "--discontinuous" in bad.output
    with pytest.raises(spanscore.OptionError, match="discontinuous must be fragments or extent"):
        spanscore.Scoring(discontinuous="gaps")  # type: ignore[arg-type]


def test_compare_gives_each_systems_figures(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    with pytest.warns(FewUnitsWarning):
        comparison = spanscore.compare(reference=gold, systems=[pred, gold], names=["extent", "exact"], format="brat")
    figures = comparison.to_dict()["discontinuous"]
    assert figures["extent"]["mentions"]["f1"] == pytest.approx(2 / 3)
    assert figures["exact"]["mentions"]["f1"] == 1.0
    assert comparison.to_text(width=100).count("Discontinuous mentions: strict F1 (%)") == 1
    from spanscore.presentation.comparison import html_page

    assert "Discontinuous mentions: strict F1 (%)" in html_page(comparison.to_dict())


def test_length_buckets_count_the_fragments(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", buckets=["length"])
    buckets = report.to_dict()["buckets"]["length"]
    rows = {b["bucket"]: (b["reference_mentions"], b["predicted_mentions"]) for b in buckets}
    # Reference: "left … knee" 8 characters, "Aspirin" 7, "mutant … p53" 9 (the extents: 19 and
    # 24); "right knee" 10, "severe pain" 11. Prediction: the extent 19 instead of 8.
    assert rows["5-9"] == (3, 2)
    assert rows["10-19"] == (2, 3)


# --------------------------------------------------------------------------------------------
# Spans with fragments, and the properties.

Mention = tuple[tuple[tuple[int, int], ...], int]  # fragments, type


def spans(mentions: list[Mention], types: tuple[str, ...] = ("A", "B")) -> Spans:
    start = np.array([m[0][0][0] for m in mentions], dtype=np.int64)
    end = np.array([m[0][-1][1] for m in mentions], dtype=np.int64)
    type_ = np.array([m[1] for m in mentions], dtype=np.int64)
    owner = [k for k, m in enumerate(mentions) for _ in m[0] if len(m[0]) > 1]
    frags = [f for m in mentions if len(m[0]) > 1 for f in m[0]]
    pieces = Pieces.of(
        np.array(owner, dtype=np.int64),
        np.array([a for a, _ in frags], dtype=np.int64),
        np.array([b for _, b in frags], dtype=np.int64),
    )
    return Spans.build(start, end, type_, np.zeros(len(mentions), dtype=np.int64), types, pieces)


@st.composite
def fragmented(draw: st.DrawFn) -> Mention:
    """A mention of one to three fragments with gaps between them."""
    start = draw(st.integers(0, 20))
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        end = start + draw(st.integers(1, 4))
        pieces.append((start, end))
        start = end + draw(st.integers(1, 4))
    return tuple(pieces), draw(st.integers(0, 1))


@st.composite
def near(draw: st.DrawFn, m: Mention) -> Mention:
    """A prediction near a reference mention: a copy, its extent, a fragment dropped or moved."""
    pieces, t = list(m[0]), m[1]
    how = draw(st.integers(0, 4))
    if how == 1:
        pieces = [(pieces[0][0], pieces[-1][1])]
    elif how == 2 and len(pieces) > 1:
        pieces.pop(draw(st.integers(0, len(pieces) - 1)))
    elif how == 3:
        k = draw(st.integers(0, len(pieces) - 1))
        a, b = pieces[k]
        pieces[k] = (a, b + 1) if k == len(pieces) - 1 or b + 1 < pieces[k + 1][0] else (a, b)
    if draw(st.integers(0, 4)) == 0:
        t = 1 - t
    return tuple(pieces), t


@st.composite
def fragmented_pairs(draw: st.DrawFn) -> tuple[list[Mention], list[Mention]]:
    gold = draw(st.lists(fragmented(), max_size=6))
    pred = [draw(near(m)) for m in gold if draw(st.integers(0, 5))]
    pred += draw(st.lists(fragmented(), max_size=3))
    return gold, pred


def _as_extent(m: Mention) -> Mention:
    return ((m[0][0][0], m[0][-1][1]),), m[1]


@SETTINGS
@given(fragmented_pairs())
def test_pairs_of_continuous_mentions_are_read_as_before(case: tuple[list[Mention], list[Mention]]) -> None:
    gold, pred = case
    ref, hyp = spans(gold), spans(pred)
    by_fragments = find_pairs(ref, hyp)
    by_extent = find_pairs(ref.without_pieces(), hyp.without_pieces())
    continuous = ~ref.discontinuous()[by_extent.ref] & ~hyp.discontinuous()[by_extent.pred]
    a = {(int(r), int(p)): k for k, (r, p) in enumerate(zip(by_fragments.ref, by_fragments.pred, strict=True))}
    for k in np.flatnonzero(continuous).tolist():
        key = (int(by_extent.ref[k]), int(by_extent.pred[k]))
        assert key in a
        j = a[key]
        for field in ("kind", "overlap", "ref_len", "pred_len", "distance"):
            assert int(getattr(by_fragments, field)[j]) == int(getattr(by_extent, field)[k]), field


@SETTINGS
@given(fragmented_pairs())
def test_continuous_mentions_score_exactly_as_before(case: tuple[list[Mention], list[Mention]]) -> None:
    """Every mention continuous: the same counts under every criterion whichever the reading,
    and whether a continuous mention is given as one span or as touching fragments."""
    gold, pred = ([_as_extent(m) for m in side] for side in case)
    plain = count(spans(gold), spans(pred), Options())[0]
    assert plain == count(spans(gold), spans(pred), Options(discontinuous="extent"))[0]

    def split(m: Mention) -> Mention:
        (a, b), = m[0]
        return (((a, a + 1), (a + 1, b)) if b - a > 1 else m[0]), m[1]

    touching = count(spans([split(m) for m in gold]), spans([split(m) for m in pred]), Options())[0]
    assert touching == plain


@SETTINGS
@given(fragmented_pairs(), st.sampled_from([0.5, "dice", "iou"]))
def test_fragment_strict_never_exceeds_extent_strict(case: tuple[list[Mention], list[Mention]], credit: Any) -> None:
    gold, pred = case
    by_fragments = count(spans(gold), spans(pred), Options(credit=credit))[0]
    by_extent = count(spans(gold), spans(pred), Options(credit=credit, discontinuous="extent"))[0]
    assert by_fragments.criteria["strict"][0].sum() <= by_extent.criteria["strict"][0].sum()
    assert by_fragments.schemes["strict"][0].sum() <= by_extent.schemes["strict"][0].sum()
    assert by_fragments.criteria["boundary"][0].sum() <= by_extent.criteria["boundary"][0].sum()
    # Against itself, every criterion is perfect under both readings.
    for options in (Options(credit=credit), Options(credit=credit, discontinuous="extent")):
        own = count(spans(gold), spans(gold), options)[0]
        for name in CRITERIA:
            assert int(own.criteria[name][0].sum()) == len(gold)


def test_touching_and_overlapping_fragments_are_joined() -> None:
    p = Pieces.of(np.array([0, 0, 0, 1, 1]), np.array([5, 0, 3, 0, 4]), np.array([8, 3, 4, 2, 6]))
    assert p is not None
    # Mention 0: 0-3, 3-4 and 5-8 -> 0-4 and 5-8; mention 1: 0-2 and 4-6.
    assert (p.owner.tolist(), p.start.tolist(), p.end.tolist()) == ([0, 0, 1, 1], [0, 5, 0, 4], [4, 8, 2, 6])
    assert Pieces.of(np.array([0, 0]), np.array([0, 3]), np.array([3, 5])) is None


# --------------------------------------------------------------------------------------------
# A real corpus: PGxCorpus (Legrand et al. 2020), 40 sentences in BRAT.

_ENTITY = re.compile(r"^(T\d+)\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t")


def _ann(path: Path) -> list[tuple[str, list[tuple[int, int]]]]:
    """The entity lines of an .ann file, as plain Python reads them: (type, fragments)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ENTITY.match(line)
        if m:
            pieces = sorted((int(a), int(b)) for a, b in (p.split() for p in m.group(3).split(";")))
            out.append((m.group(2), pieces))
    return out


def _corpus() -> dict[str, tuple[str, list[tuple[str, list[tuple[int, int]]]]]]:
    return {
        p.stem: (p.with_suffix(".txt").read_text(encoding="utf-8"), _ann(p)) for p in sorted(REAL.glob("*.ann"))
    }


def test_real_corpus_read_equal_to_an_independent_count() -> None:
    from spanscore.io.formats import brat

    corpus = _corpus()
    docs, notes = brat.read(REAL)
    assert len(docs) == len(corpus) == 40
    mentions = sum(len(m) for _, m in corpus.values())
    discontinuous = sum(1 for _, ms in corpus.values() for _, pieces in ms if len(pieces) > 1)
    assert (mentions, discontinuous) == (270, 13)
    assert sum(len(d.spans) for d in docs) == mentions
    assert sum(1 for d in docs for f in d.fragments if f is not None) == discontinuous
    relations = sum(
        1 for p in REAL.glob("*.ann") for line in p.read_text(encoding="utf-8").splitlines() if line[:1] == "R"
    )
    assert notes.skipped["relations"] == relations
    for doc in docs:
        _, ms = corpus[doc.id]
        expected = sorted((pieces[0][0], pieces[-1][1], label) for label, pieces in ms)
        assert sorted(doc.spans) == expected


def test_real_corpus_against_itself_is_perfect() -> None:
    for reading in ("fragments", "extent"):
        data = spanscore.evaluate(reference=REAL, predicted=REAL, format="brat", discontinuous=reading).to_dict()
        assert all(data["metrics"][c]["f1"] == 1.0 for c in (*CRITERIA, "token"))
        assert all(data["semeval"][s]["f1"] == 1.0 for s in SCHEMES)
        d = data["discontinuous"]
        assert (d["mentions"]["reference"], d["mentions"]["correct"], d["mentions"]["f1"]) == (13, 13, 1.0)
        assert (d["units"]["units"], d["units"]["reference"], d["units"]["f1"]) == (7, 59, 1.0)


def _perturbed(tmp_path: Path, seed: int) -> tuple[Path, dict[str, int]]:
    """The corpus with each discontinuous mention changed one way (seeded): joined into its
    extent, its last fragment dropped, or its last fragment's end moved one character left;
    what was done, counted."""
    rng = random.Random(seed)
    corpus = _corpus()
    done = {"extent": 0, "dropped": 0, "shifted": 0}
    out = {}
    for name, (text, ms) in corpus.items():
        changed = []
        for label, pieces in ms:
            if len(pieces) > 1:
                how = rng.choice(("extent", "dropped", "shifted"))
                done[how] += 1
                if how == "extent":
                    pieces = [(pieces[0][0], pieces[-1][1])]
                elif how == "dropped":
                    pieces = pieces[:-1]
                else:
                    pieces = [*pieces[:-1], (pieces[-1][0], pieces[-1][1] - 1)]
            changed.append((label, pieces))
        out[name] = (text, changed)
    return write_brat(tmp_path / "perturbed", out), done


def _strict_by_hand(tmp_path: Path, pred: Path) -> int:
    """Mentions given alike on both sides (type and every fragment), as a multiset per document:
    Dai et al.'s exact match, in plain Python."""
    from collections import Counter

    total = 0
    for name, (_, ms) in _corpus().items():
        gold = Counter((label, tuple(pieces)) for label, pieces in ms)
        hyp = Counter((label, tuple(pieces)) for label, pieces in _ann(pred / f"{name}.ann"))
        total += sum((gold & hyp).values())
    return total


def test_real_corpus_against_a_perturbed_prediction(tmp_path: Path) -> None:
    pred, done = _perturbed(tmp_path, seed=32)
    shifted, dropped, joined = done["shifted"], done["dropped"], done["extent"]
    assert shifted + dropped + joined == 13 and min(shifted, dropped, joined) > 0
    data = spanscore.evaluate(reference=REAL, predicted=pred, format="brat").to_dict()
    # Every continuous mention is untouched; each of the 13 discontinuous ones now differs from
    # its reference in its fragments, so none is strict (or boundary) correct: 270 - 13.
    assert _strict_by_hand(tmp_path, pred) == 257
    m = data["metrics"]
    for name in ("strict", "boundary"):
        assert (m[name]["full"], m[name]["partial"]) == (257, 0)
    # Left: a moved last end keeps every start (as many fragments, the same starts); right:
    # nothing of the three keeps every end. Every continuous reference is matched exactly, so a
    # changed mention can only pair with a discontinuous reference.
    assert (m["left"]["full"], m["left"]["partial"]) == (257, shifted)
    assert (m["right"]["full"], m["right"]["partial"]) == (257, 0)
    assert (m["overlap"]["full"], m["overlap"]["partial"]) == (257, 13)
    d = data["discontinuous"]
    # The prediction's discontinuous mentions are the shifted ones (every mention here has two
    # fragments: a dropped one or the extent is continuous); none is correct.
    mentions = d["mentions"]
    assert (mentions["reference"], mentions["predicted"], mentions["correct"]) == (13, shifted, 0)
    assert (d["units"]["units"], d["units"]["reference"], d["units"]["predicted"], d["units"]["correct"]) == (
        7, 59, 59, 46
    )
    # Read as extents, the joined ones are correct: only the dropped and shifted ones changed their extent.
    extent = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", discontinuous="extent").to_dict()
    assert extent["metrics"]["strict"]["full"] == 270 - shifted - dropped


def test_chunks_workers_and_per_document_rows_give_the_same_figures(tmp_path: Path) -> None:
    pred, _ = _perturbed(tmp_path, seed=7)
    whole = spanscore.evaluate(reference=REAL, predicted=pred, format="brat").to_dict()
    for options in ({"chunk_bytes": 300}, {"chunk_bytes": 300, "jobs": 2}, {"documents": True}):
        other = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", **options).to_dict()
        for key in ("metrics", "semeval", "errors", "discontinuous"):
            assert other[key] == whole[key], (options, key)
    rows = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", documents=True).document_rows()
    assert sum(r["metrics"]["strict"]["full"] for r in rows) == whole["metrics"]["strict"]["full"]


@pytest.mark.parametrize("width", [80, 100])
def test_real_corpus_tables_keep_every_figure(tmp_path: Path, width: int) -> None:
    pred, _ = _perturbed(tmp_path, seed=32)
    report = spanscore.evaluate(reference=REAL, predicted=pred, format="brat")
    text = report.to_text(width=width)
    d = report.to_dict()["discontinuous"]
    assert all(len(line) <= width for line in text.splitlines()[:-1])  # the signature line may run on
    for figure in (d["all"], d["mentions"], d["units"]):
        for key in ("precision", "recall", "f1"):
            assert f"{100 * figure[key]:.2f}" in text


# A learned judge reads a discontinuous mention by its fragments' words, in the counting and in review create.


def _recording_judge(accept: str) -> tuple[Any, list[Any]]:
    from spanscore.programs.judge.model import CallableJudge

    seen: list[Any] = []

    def fn(m: Any) -> float:
        seen.append(m)
        return 1.0 if m.reference_text == accept else 0.0

    return CallableJudge(fn), seen


def test_the_judge_reads_a_discontinuous_mention_by_its_fragments_words(worked: tuple[Path, Path]) -> None:
    gold, pred = worked
    judge, seen = _recording_judge("left knee")
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", credit=1.0, judge=judge)
    # "left … knee" against its extent (and against "right knee", which shares its "knee"): the
    # judge sees the words of the two fragments, never " and right " nor the page's gap mark,
    # and its verdict counts.
    pairs = {(m.reference_text, m.predicted_text) for m in seen}
    assert ("left knee", "left and right knee") in pairs
    assert all(m.reference_text in ("left knee", "right knee") and "…" not in m.predicted_text for m in seen)
    assert "left knee" in {m.reference_text for m in seen}
    assert (report.metrics["learned"]["full"], report.metrics["learned"]["partial"]) == (4, 1)
    rejected = spanscore.evaluate(
        reference=gold, predicted=pred, format="brat", credit=1.0, judge=_recording_judge("left and right knee")[0]
    )
    assert rejected.metrics["learned"]["partial"] == 0
    # Read as extents, the judge reads extents too ("left and right knee"), and the pair is exact.
    judge, seen = _recording_judge("left knee")
    extent = spanscore.evaluate(
        reference=gold, predicted=pred, format="brat", credit=1.0, judge=judge, discontinuous="extent"
    )
    assert seen and "left knee" not in {m.reference_text for m in seen}
    assert "left and right knee" in {m.reference_text for m in seen}
    assert extent.metrics["learned"]["full"] == 5


def test_review_create_asks_the_judge_about_the_fragments_words(worked: tuple[Path, Path]) -> None:
    pytest.importorskip("sqlalchemy")
    from spanscore.review.sources import items_from_report

    gold, pred = worked
    judge, seen = _recording_judge("left knee")
    report = spanscore.evaluate(reference=gold, predicted=pred, format="brat", keep_details=True)
    (item,) = items_from_report(report, judge=judge)
    assert item.gold_text == "left … knee"  # the page shows the gap
    assert [(m.reference_text, m.predicted_text) for m in seen] == [("left knee", "left and right knee")]
    assert item.probability == 1.0
