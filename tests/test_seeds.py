"""Hand-worked cases from the seeds.

- Kong and Sullivan (the paper) and the README of its scorer: "the New York Times", "The Ohio State University"/"Ohio",
  section 5.3's gold mention with two predictions (one at each boundary), the first-found rule;
- Batista (2018), the SemEval-2013 blog post: the TIKOSYN ... oral contraceptives table;
- Lee Xin Jie's MUC/SemEval explainer: its category table, from a sentence it shows only in part;
- the paper's own matched pairs (../shared/data/seed-partial-matches, ``seed_pairs`` fixture).
"""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import spanscore

SCHEMES = ("strict", "exact", "partial", "type")
CATEGORIES = ("correct", "incorrect", "partial", "missed", "spurious")
Row = tuple[str, str, str]  # token, gold label, predicted label


def write(tmp_path: Path, sentences: list[list[Row]]) -> tuple[Path, Path]:
    """Two CoNLL files (token<TAB>label) with the gold and the predicted column."""
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    for path, col in ((gold, 1), (pred, 2)):
        path.write_text("".join("".join(f"{r[0]}\t{r[col]}\n" for r in s) + "\n" for s in sentences), "utf-8")
    return gold, pred


def evaluate_rows(tmp_path: Path, sentences: list[list[Row]], **options: Any) -> spanscore.Report:
    gold, pred = write(tmp_path, sentences)
    return spanscore.evaluate(reference=gold, predicted=pred, **options)


def categories(d: dict[str, Any], scheme: str) -> tuple[int, ...]:
    return tuple(d["semeval"][scheme][c] for c in CATEGORIES)


# --------------------------------------------------------------------------------------------
# Kong and Sullivan's motivating examples.

NEW_YORK_TIMES = [
    ("I", "O", "O"),
    ("read", "O", "O"),
    ("the", "B-ORG", "O"),
    ("New", "I-ORG", "B-ORG"),
    ("York", "I-ORG", "I-ORG"),
    ("Times", "I-ORG", "I-ORG"),
    ("today", "O", "O"),
]


def test_new_york_times(tmp_path: Path) -> None:
    """Gold "the New York Times" [ORG], predicted "New York Times" [ORG] (Kong and Sullivan,
    section 1, and the scorer's README)."""
    report = evaluate_rows(tmp_path, [NEW_YORK_TIMES])
    m = report.to_dict()["metrics"]
    # Exact match counts it as a false positive and a false negative.
    assert (m["strict"]["full"], m["strict"]["predicted"], m["strict"]["reference"]) == (0, 1, 1)
    assert (m["strict"]["precision"], m["strict"]["recall"], m["strict"]["f1"]) == (0.0, 0.0, 0.0)
    # Overlap and right boundary give half a true positive; the left boundary differs: nothing.
    for name in ("overlap", "right"):
        assert (m[name]["full"], m[name]["partial"], m[name]["credit"]) == (0, 1, 0.5), name
        assert (m[name]["precision"], m[name]["recall"], m[name]["f1"]) == (0.5, 0.5, 0.5), name
    assert (m["left"]["partial"], m["left"]["credit"], m["left"]["f1"]) == (0, 0.0, 0.0)
    rows = list(report.pair_rows("overlap"))
    assert len(rows) == 1
    row = rows[0]
    assert (row["reference_text"], row["predicted_text"]) == ("the New York Times", "New York Times")
    assert (row["match"], row["credit"], row["relation"]) == ("partial", 0.5, "shorter")
    assert (row["reference_start"], row["reference_end"], row["predicted_start"]) == (2, 6, 3)


def test_ohio_state_university(tmp_path: Path) -> None:
    """Gold "The Ohio State University"[ORG] is in "Ohio"[LOC]; predicted without "The" (the scorer's README)."""
    sentence = [
        ("The", "B-ORG", "O"),
        ("Ohio", "I-ORG", "B-ORG"),
        ("State", "I-ORG", "I-ORG"),
        ("University", "I-ORG", "I-ORG"),
        ("is", "O", "O"),
        ("in", "O", "O"),
        ("Ohio", "B-LOC", "B-LOC"),
        (".", "O", "O"),
    ]
    d = evaluate_rows(tmp_path, [sentence]).to_dict()
    m = d["metrics"]
    # Strict: Ohio is a true positive; the university is a false positive and a false negative.
    assert (m["strict"]["full"], m["strict"]["predicted"], m["strict"]["reference"]) == (1, 2, 2)
    assert (m["strict"]["precision"], m["strict"]["recall"]) == (0.5, 0.5)
    for name in ("overlap", "right"):
        assert (m[name]["full"], m[name]["partial"], m[name]["credit"]) == (1, 1, 1.5), name
        assert (m[name]["precision"], m[name]["recall"], m[name]["f1"]) == (0.75, 0.75, 0.75), name
    assert (m["left"]["full"], m["left"]["partial"], m["left"]["f1"]) == (1, 0, 0.5)
    assert d["per_type"]["LOC"]["metrics"]["strict"]["f1"] == 1.0
    assert d["per_type"]["ORG"]["metrics"]["strict"]["f1"] == 0.0
    assert d["per_type"]["ORG"]["metrics"]["overlap"]["f1"] == 0.5


# --------------------------------------------------------------------------------------------
# Batista (2018): the SemEval-2013 table of the blog post.

# scenario: (sentence rows, expected category per scheme strict/exact/partial/type)
BLOG_ROWS: dict[str, tuple[list[Row], dict[str, str]]] = {
    "III TIKOSYN missed": (
        [("TIKOSYN", "B-brand", "O")],
        {"type": "MIS", "partial": "MIS", "exact": "MIS", "strict": "MIS"},
    ),
    "II healthy spurious": (
        [("healthy", "O", "B-brand")],
        {"type": "SPU", "partial": "SPU", "exact": "SPU", "strict": "SPU"},
    ),
    "V warfarin / of warfarin": (
        [("of", "O", "B-drug"), ("warfarin", "B-drug", "I-drug")],
        {"type": "COR", "partial": "PAR", "exact": "INC", "strict": "INC"},
    ),
    "IV propranolol drug / brand": (
        [("propranolol", "B-drug", "B-brand")],
        {"type": "INC", "partial": "COR", "exact": "COR", "strict": "INC"},
    ),
    "I phenytoin": (
        [("phenytoin", "B-drug", "B-drug")],
        {"type": "COR", "partial": "COR", "exact": "COR", "strict": "COR"},
    ),
    # The blog writes the gold type as "Drug" and the predicted one as "drug" and still counts the
    # row correct under every scheme, so the case difference is a typo: types are case-sensitive
    # here, and this row uses "drug" on both sides.
    "I theophylline": (
        [("theophylline", "B-drug", "B-drug")],
        {"type": "COR", "partial": "COR", "exact": "COR", "strict": "COR"},
    ),
    "VI contraceptives / oral contraceptives": (
        [("oral", "O", "B-drug"), ("contraceptives", "B-group", "I-drug")],
        {"type": "INC", "partial": "PAR", "exact": "INC", "strict": "INC"},
    ),
}
CATEGORY_OF = {"COR": "correct", "INC": "incorrect", "PAR": "partial", "MIS": "missed", "SPU": "spurious"}


@pytest.mark.parametrize("row", list(BLOG_ROWS))
def test_semeval_blog_rows(tmp_path: Path, row: str) -> None:
    sentence, expected = BLOG_ROWS[row]
    d = evaluate_rows(tmp_path, [sentence]).to_dict()
    for scheme, cat in expected.items():
        got = {c: d["semeval"][scheme][c] for c in CATEGORIES}
        assert got == {c: int(c == CATEGORY_OF[cat]) for c in CATEGORIES}, (row, scheme)


def test_semeval_blog_table(tmp_path: Path) -> None:
    d = evaluate_rows(tmp_path, [s for s, _ in BLOG_ROWS.values()]).to_dict()
    # COR, INC, PAR, MIS, SPU as printed in the blog's table.
    assert categories(d, "type") == (3, 2, 0, 1, 1)
    assert categories(d, "partial") == (3, 0, 2, 1, 1)
    assert categories(d, "exact") == (3, 2, 0, 1, 1)
    assert categories(d, "strict") == (2, 3, 0, 1, 1)
    for scheme in SCHEMES:
        assert (d["semeval"][scheme]["possible"], d["semeval"][scheme]["actual"]) == (6, 6)
    s = d["semeval"]
    assert (s["type"]["precision"], s["type"]["recall"], s["type"]["f1"]) == (0.5, 0.5, 0.5)
    assert (s["exact"]["precision"], s["exact"]["recall"], s["exact"]["f1"]) == (0.5, 0.5, 0.5)
    assert s["strict"]["precision"] == s["strict"]["recall"] == s["strict"]["f1"] == pytest.approx(1 / 3)
    # The blog prints precision 0.5 for the partial scheme, but by its own formula
    # (COR + 0.5 PAR) / ACT = (3 + 1) / 6 = 0.667, which is also the recall (0.66) it prints.
    assert s["partial"]["precision"] == s["partial"]["recall"] == s["partial"]["f1"] == pytest.approx(4 / 6)
    assert s["partial"]["precision"] != 0.5


# --------------------------------------------------------------------------------------------
# Lee Xin Jie: the MUC/SemEval explainer's table.


def test_muc_explainer_table() -> None:
    """The explainer shows only part of its sentence ("The news agency is here"); these mentions give its
    categories: one pair right in span and type, one with the right span and wrong type, one
    overlapping with the right type, one overlapping with the wrong type, a miss and a spurious one.

    The explainer's text writes recall for the partial and type schemes as
    ``(COR + 0.5 PAR) / POS = COR / ACT = TP / (TP + FP)``; only the first expression is right
    (COR / ACT is not a recall), and it is the one its own worked numbers (a2, b2) use.
    """
    gold = [[(1, 3, "Org"), (5, 7, "Org"), (9, 12, "Per"), (14, 16, "Loc"), (20, 21, "Loc")]]
    pred = [[(1, 3, "Org"), (5, 7, "Loc"), (10, 12, "Per"), (14, 15, "Org"), (24, 25, "Per")]]
    d = spanscore.evaluate(reference=gold, predicted=pred, format="spans").to_dict()
    assert categories(d, "partial") == (2, 0, 2, 1, 1)
    assert categories(d, "type") == (2, 2, 0, 1, 1)
    assert categories(d, "exact") == (2, 2, 0, 1, 1)
    assert categories(d, "strict") == (1, 3, 0, 1, 1)
    expected = {"partial": 0.6, "type": 0.4, "exact": 0.4, "strict": 0.2}
    for scheme, value in expected.items():
        s = d["semeval"][scheme]
        assert (s["possible"], s["actual"]) == (5, 5)
        for k in ("precision", "recall", "f1"):
            assert s[k] == pytest.approx(value, rel=1e-12), (scheme, k)


# --------------------------------------------------------------------------------------------
# Kong and Sullivan, section 5.3: one gold mention, two predictions (one at each boundary).

BIEBER = ["@", "justinbieber", "@", "scooterbraun", "@", "Ludacris"]
RYAN = "@ ryanbutcher321 @ ijamesmacdonald @ ReganStevely @ GeorgioMartini"


def test_left_and_right_fragments_of_one_gold_mention(tmp_path: Path) -> None:
    """The paper's dev set had two gold mentions each predicted as two separate fragments, one at
    its left boundary and one at its right: left and right each count one partial match, overlap
    only one (a gold mention matches at most one prediction), so left + right != overlap."""
    labels_g = ["B-PER"] + ["I-PER"] * 5
    labels_p = ["B-PER", "I-PER", "O", "O", "B-PER", "I-PER"]
    sentence = [("Thanks", "O", "O"), *zip(BIEBER, labels_g, labels_p, strict=True)]
    report = evaluate_rows(tmp_path, [sentence])
    m = report.to_dict()["metrics"]
    for name in ("left", "right", "overlap"):
        assert (m[name]["full"], m[name]["partial"], m[name]["credit"]) == (0, 1, 0.5), name
        assert (m[name]["predicted"], m[name]["reference"]) == (2, 1)
    assert m["left"]["partial"] + m["right"]["partial"] == 2 != m["overlap"]["partial"]
    # Like the paper's scorer (partial_dev_overlap.csv), overlap keeps the left fragment: both tie
    # on credit, overlap and boundary distance, and the earlier prediction wins.
    (row,) = report.pair_rows("overlap")
    assert row["predicted_text"] == "@ justinbieber"
    (row,) = report.pair_rows("right")
    assert row["predicted_text"] == "@ Ludacris"
    # The paper's first-found rule gives the same counts and keeps the same fragment.
    greedy = evaluate_rows(tmp_path, [sentence], matching="greedy")
    assert greedy.to_dict()["metrics"] == report.to_dict()["metrics"]
    (row,) = greedy.pair_rows("overlap")
    assert row["predicted_text"] == "@ justinbieber"


def read_pairs(path: Path) -> list[tuple[str, str, float]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        assert [h.strip() for h in header] == ["gold", "prediction", "credit"]
        return [(g, p, float(c)) for g, p, c in reader]


def test_paper_pairs_show_the_two_fragment_cases(seed_pairs: Path) -> None:
    """Table 5 of the paper: 15 left, 13 right and 26 overlap partial matches on dev; every overlap
    match is a left or a right one, and the two missing ones are the right fragments of gold mentions
    whose left fragment overlap kept."""
    half = {
        name: {(g, p) for g, p, c in read_pairs(seed_pairs / f"partial_dev_{name}.csv") if c == 0.5}
        for name in ("left_bound", "right_bound", "overlap")
    }
    assert [len(half[n]) for n in ("left_bound", "right_bound", "overlap")] == [15, 13, 26]
    assert half["overlap"] <= half["left_bound"] | half["right_bound"]
    lost = (half["left_bound"] | half["right_bound"]) - half["overlap"]
    assert lost == {(" ".join(BIEBER), "@ Ludacris"), (RYAN, "@ GeorgioMartini")}
    kept = {(" ".join(BIEBER), "@ justinbieber"), (RYAN, "@ ryanbutcher321")}
    assert kept <= half["overlap"] & half["left_bound"]


@pytest.mark.parametrize("split", ["dev", "test"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_paper_pairs_get_the_papers_credit(seed_pairs: Path, split: str, side: str) -> None:
    """Every pair the paper's scorer credited under the left (right) boundary criterion, laid out
    as the shared-boundary pair it must be, gets the same credit here."""
    pairs = read_pairs(seed_pairs / f"partial_{split}_{side}_bound.csv")
    gold, pred, credit = [], [], Fraction(0)
    for g, p, c in pairs:
        gt, pt = g.split(" "), p.split(" ")
        longer, n_g, n_p = (gt, len(gt), len(pt)) if len(gt) >= len(pt) else (pt, len(gt), len(pt))
        n = len(longer)
        if side == "left":
            assert gt[: len(pt)] == pt or pt[: len(gt)] == gt, (g, p)
            gold.append([(0, n_g, "X")])
            pred.append([(0, n_p, "X")])
        else:
            assert gt[len(gt) - len(pt) :] == pt or pt[len(pt) - len(gt) :] == gt, (g, p)
            gold.append([(n - n_g, n, "X")])
            pred.append([(n - n_p, n, "X")])
        credit += Fraction(c)
    d = spanscore.evaluate(reference=gold, predicted=pred, format="spans").to_dict()["metrics"]
    assert d[side]["full"] == sum(c == 1.0 for _, _, c in pairs)
    assert d[side]["partial"] == sum(c == 0.5 for _, _, c in pairs)
    assert d[side]["credit"] == credit
    # Only the exact ones count under strict; every pair counts under overlap.
    assert d["strict"]["full"] == d[side]["full"]
    assert d["overlap"]["credit"] == credit


# --------------------------------------------------------------------------------------------
# Optimal versus first-found matching.


def test_greedy_first_found_can_get_less_credit_than_optimal() -> None:
    """Gold X over 0-3 and X over 4-5; predictions X over 0-4 (overlapping both) and X over 1-2.

    The paper's first-found rule (matching="greedy") gives the first gold mention the first
    prediction it overlaps (0-4), and the second gold mention then has none left: 0.5 credit.
    The optimal matching pairs 1-2 with the first and 0-4 with the second: 1.0.
    """
    gold = [[(0, 4, "X"), (4, 6, "X")]]
    pred = [[(0, 5, "X"), (1, 3, "X")]]
    optimal = spanscore.evaluate(reference=gold, predicted=pred, format="spans").to_dict()
    greedy = spanscore.evaluate(reference=gold, predicted=pred, format="spans", matching="greedy").to_dict()
    assert (greedy["metrics"]["overlap"]["partial"], greedy["metrics"]["overlap"]["credit"]) == (1, 0.5)
    assert (optimal["metrics"]["overlap"]["partial"], optimal["metrics"]["overlap"]["credit"]) == (2, 1.0)
    assert greedy["metrics"]["overlap"]["f1"] == 0.25 < optimal["metrics"]["overlap"]["f1"] == 0.5
    # The SemEval schemes use the same engine: greedy leaves a miss and a spurious prediction.
    assert categories(greedy, "partial") == (0, 0, 1, 1, 1)
    assert categories(optimal, "partial") == (0, 0, 2, 0, 0)
    # Where nothing competes, the two agree.
    assert greedy["metrics"]["strict"] == optimal["metrics"]["strict"]
