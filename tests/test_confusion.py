"""The type confusion matrix of the error taxonomy's one-to-one matching.

Checked against hand-worked corpora, against the taxonomy's own counts (its margins are the mention
counts of each type), against a reference built here from ``Report.pair_rows`` and plain decoding,
against a brute-force matching of small documents with nested and crossing spans, and for being the
same whatever the chunks and the processes.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

import spanscore
from spanscore.presentation import ReportWriter, write_report
from spanscore.presentation.tables import MISSED, NO_PAIRS, SPURIOUS, confusion_table
from spanscore.presentation.terminal import render
from spanscore.results import EvaluationResult
from spanscore.stages.counts import CONFUSION_FIELDS, count
from spanscore.stages.spans import Spans

DATA = Path(__file__).parent / "data"
TYPES = ("LOC", "MISC", "ORG", "PER")
WHOLE = 1 << 40

Cell = tuple[str | None, str | None, int, int, int]  # reference, predicted, count, same span, overlapping


def _cells(data: EvaluationResult) -> list[Cell]:
    return [
        (c["reference"], c["predicted"], c["count"], c["same_span"], c["overlapping"])
        for c in data["confusion"]["rows"]
    ]


def _conll(path: Path, sentences: list[list[tuple[str, str]]]) -> Path:
    path.write_text("".join("".join(f"{t} {lab}\n" for t, lab in s) + "\n" for s in sentences), encoding="utf-8")
    return path


def _pair(tmp_path: Path, gold: list[list[tuple[str, str]]], pred: list[list[tuple[str, str]]]) -> tuple[Path, Path]:
    return _conll(tmp_path / "gold.conll", gold), _conll(tmp_path / "pred.conll", pred)


# Hand-worked corpora.

# Three sentences, each worked out below. Same-type overlaps are preferred by the matching, so in
# the third sentence "Wall" (LOC) takes "Berlin Wall" and "the Berlin" (ORG) is left spurious.
HAND_GOLD = [
    [("John", "B-PER"), ("Smith", "I-PER"), ("visited", "O"), ("New", "B-LOC"), ("York", "I-LOC"), ("City", "I-LOC")],
    [("Apple", "B-ORG"), ("sued", "O"), ("Google", "B-ORG"), ("in", "O"), ("Paris", "B-LOC")],
    [("the", "O"), ("Berlin", "B-LOC"), ("Wall", "I-LOC"), ("fell", "O"), ("today", "O")],
]
HAND_PRED = [
    # John Smith PER = PER, same span; New York City LOC -> New York LOC, overlapping.
    [("John", "B-PER"), ("Smith", "I-PER"), ("visited", "O"), ("New", "B-LOC"), ("York", "I-LOC"), ("City", "O")],
    # Apple ORG -> PER, same span; Google ORG missed; Paris LOC -> "in Paris" MISC, overlapping.
    [("Apple", "B-PER"), ("sued", "O"), ("Google", "O"), ("in", "B-MISC"), ("Paris", "I-MISC")],
    # Berlin Wall LOC -> Wall LOC, overlapping; "the Berlin" ORG and "today" MISC spurious.
    [("the", "B-ORG"), ("Berlin", "I-ORG"), ("Wall", "B-LOC"), ("fell", "O"), ("today", "B-MISC")],
]
HAND_CELLS: list[Cell] = [
    ("LOC", "LOC", 2, 0, 2),
    ("LOC", "MISC", 1, 0, 1),
    ("ORG", "PER", 1, 1, 0),
    ("ORG", None, 1, 0, 0),
    ("PER", "PER", 1, 1, 0),
    (None, "MISC", 1, 0, 0),
    (None, "ORG", 1, 0, 0),
]

# tests/data/small: "the New York Times" ORG -> "New York Times" ORG and "Bank of America" ORG ->
# "Bank of" ORG overlap; John Smith PER and Paris LOC are correct; Mary PER -> LOC, same span;
# "Berlin Wall" LOC is missed and "here" MISC spurious.
SMALL_CELLS: list[Cell] = [
    ("LOC", "LOC", 1, 1, 0),
    ("LOC", None, 1, 0, 0),
    ("ORG", "ORG", 2, 0, 2),
    ("PER", "LOC", 1, 1, 0),
    ("PER", "PER", 1, 1, 0),
    (None, "MISC", 1, 0, 0),
]


def test_three_sentences_worked_by_hand(tmp_path: Path) -> None:
    gold, pred = _pair(tmp_path, HAND_GOLD, HAND_PRED)
    data = spanscore.evaluate(reference=gold, predicted=pred).to_dict()
    assert data["confusion"]["types"] == list(TYPES)
    assert _cells(data) == HAND_CELLS
    _check_invariants(data)
    e = data["errors"]
    matched = (e["correct"], e["wrong_label_same_span"], e["wrong_label_overlap"], e["right_label_overlap"])
    assert matched == (1, 1, 1, 2)
    assert (e["false_negative"], e["false_positive"], e["false_positive_overlapping"]) == (1, 2, 1)


@pytest.mark.parametrize("fmt", ["conll", "jsonl"])
def test_small_corpus_worked_by_hand(fmt: str) -> None:
    data = spanscore.evaluate(
        reference=DATA / f"small.gold.{fmt}", predicted=DATA / f"small.pred.{fmt}", format=fmt
    ).to_dict()
    assert _cells(data) == SMALL_CELLS
    _check_invariants(data)


def test_table_csv_and_terminal_show_the_cells(tmp_path: Path) -> None:
    gold, pred = _pair(tmp_path, HAND_GOLD, HAND_PRED)
    report = spanscore.evaluate(reference=gold, predicted=pred)
    data = report.to_dict()
    table = confusion_table(data)
    assert table.header == ("reference \\ predicted", *TYPES, MISSED)
    assert [[*table.cells(row)] for row in table.rows] == [
        ["LOC", "0+2", "0+1", NO_PAIRS, NO_PAIRS, NO_PAIRS],
        ["MISC", NO_PAIRS, NO_PAIRS, NO_PAIRS, NO_PAIRS, NO_PAIRS],
        ["ORG", NO_PAIRS, NO_PAIRS, NO_PAIRS, "1+0", "1"],
        ["PER", NO_PAIRS, NO_PAIRS, NO_PAIRS, "1+0", NO_PAIRS],
        [SPURIOUS, NO_PAIRS, "1", "1", NO_PAIRS, ""],
    ]
    out = tmp_path / "report"
    write_report(report, out)
    with (out / "confusion.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["reference", "predicted", "count", "same_span", "overlapping"]
    assert rows[1:] == [[r or "", p or "", str(n), str(s), str(o)] for r, p, n, s, o in HAND_CELLS]
    assert (out / "confusion.csv").read_bytes().count(b"\r\n") == len(rows)  # what the csv module writes
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Type confusion" in page and '<a href="confusion.csv">' in page
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| ORG | · | · | · | 1+0 | 1 |" in summary


def test_confusion_table_follows_the_terminal_width() -> None:
    # Twelve types: too many columns for a narrow terminal, so the table is dealt out.
    rng = random.Random(1)
    types = [f"TYPE{k:02d}" for k in range(12)]
    ref = [[(i, i + 1, rng.choice(types)) for i in range(0, 40, 2)] for _ in range(30)]
    pred = [[(s, e, t if rng.random() < 0.6 else rng.choice(types)) for s, e, t in doc] for doc in ref]
    data = spanscore.evaluate(reference=ref, predicted=pred, format="spans").to_dict()
    table = confusion_table(data)
    expected = {cell for row in table.rows for cell in table.cells(row) if cell}
    for width in (60, 80, 120):
        console = Console(file=io.StringIO(), width=width, record=True)
        console.print(render(data, width=width))
        text = console.export_text()
        assert all(len(line) <= width for line in text.splitlines()), width
        start = text.index("Type confusion")
        shown = text[start : text.index("└", text.rindex("Type confusion"))]
        if width < 120:
            assert "(continued)" in shown
        seen = {c.strip() for line in shown.splitlines() if line.startswith("│") for c in line.strip("│").split("│")}
        assert expected <= seen, width
    # Without the per-type tables, no confusion table either.
    console = Console(file=io.StringIO(), width=120, record=True)
    console.print(render(data, per_type=False, width=120))
    assert "Type confusion" not in console.export_text()


# Invariants: the margins are each type's mentions, the cells the taxonomy's counts.


def _matrix(data: EvaluationResult) -> tuple[list[str], np.ndarray]:
    """[same span / overlapping, reference (types, then none), predicted (types, then none)]."""
    types = data["confusion"]["types"]
    at = {t: i for i, t in enumerate(types)}
    n = len(types)
    m = np.zeros((2, n + 1, n + 1), dtype=np.int64)
    for c in data["confusion"]["rows"]:
        i = n if c["reference"] is None else at[c["reference"]]
        j = n if c["predicted"] is None else at[c["predicted"]]
        if c["reference"] is None or c["predicted"] is None:
            assert c["same_span"] == c["overlapping"] == 0
            m[0, i, j] = c["count"]
        else:
            assert c["count"] == c["same_span"] + c["overlapping"] > 0
            m[0, i, j], m[1, i, j] = c["same_span"], c["overlapping"]
    assert m[:, n, n].sum() == 0
    return types, m


def _check_invariants(data: EvaluationResult) -> None:
    types, m = _matrix(data)
    n = len(types)
    total = m.sum(axis=0)
    per_type = data["per_type"]
    errors = data["errors"]["per_type"]
    assert list(per_type) == types
    for i, t in enumerate(types):
        # Every reference mention is matched once or missed; every prediction matched once or spurious.
        assert total[i, :].sum() == per_type[t]["metrics"]["strict"]["reference"]
        assert total[:, i].sum() == per_type[t]["metrics"]["strict"]["predicted"]
        e = errors[t]
        off = [j for j in range(n) if j != i]
        assert m[0, i, i] == e["correct"]
        assert m[1, i, i] == e["right_label_overlap"]
        assert m[0, i, off].sum() == e["wrong_label_same_span"]
        assert m[1, i, off].sum() == e["wrong_label_overlap"]
        assert total[i, n] == e["false_negative"]
        assert total[n, i] == e["false_positive"]
    assert total.sum() - total[n, :].sum() == data["corpus"]["reference_mentions"]
    assert total.sum() - total[:, n].sum() == data["corpus"]["predicted_mentions"]
    assert np.trace(m[0, :n, :n]) == data["errors"]["correct"]
    # The matched pairs are the SemEval type scheme's: COR for same-type pairs, INC for the others.
    semeval = data["semeval"]["type"]
    assert np.trace(total[:n, :n]) == semeval["correct"]
    assert total[:n, :n].sum() - np.trace(total[:n, :n]) == semeval["incorrect"]
    assert total[:n, n].sum() == semeval["missed"] and total[n, :n].sum() == semeval["spurious"]


# A corpus generated here: every kind of confusion, in BIO that needs no repair.


def _generated(seed: int, n_sentences: int = 400) -> tuple[list[list[tuple[str, str]]], list[list[tuple[str, str]]]]:
    rng = random.Random(seed)
    gold_out, pred_out = [], []
    for k in range(n_sentences):
        length = rng.randint(2, 14)
        tokens = [f"w{k}_{i}" for i in range(length)]
        gold_spans: list[tuple[int, int, str]] = []
        at = 0
        while at < length:
            if rng.random() < 0.35:
                end = min(length, at + rng.randint(1, 4))
                gold_spans.append((at, end, rng.choice(TYPES)))
                at = end + rng.randint(0, 2)
            else:
                at += 1
        pred_spans: list[tuple[int, int, str]] = []
        for s, e, t in gold_spans:
            op = rng.random()
            if op < 0.45:
                pred_spans.append((s, e, t))
            elif op < 0.55:
                pred_spans.append((s, e, rng.choice(TYPES)))
            elif op < 0.75:  # a boundary moved, the type kept or not
                s2 = max(0, s + rng.choice((-1, 0, 1)))
                e2 = min(length, e + rng.choice((-1, 0, 1)))
                if e2 > s2:
                    pred_spans.append((s2, e2, t if rng.random() < 0.6 else rng.choice(TYPES)))
            elif op < 0.85 and e - s >= 2:  # split in two: one reference, two overlapping predictions
                cut = rng.randint(s + 1, e - 1)
                pred_spans += [(s, cut, t), (cut, e, rng.choice(TYPES))]
            # else: missed
        if rng.random() < 0.3:
            s = rng.randrange(length)
            pred_spans.append((s, min(length, s + rng.randint(1, 3)), rng.choice(TYPES)))
        gold_out.append(list(zip(tokens, _bio(gold_spans, length), strict=True)))
        pred_out.append(list(zip(tokens, _bio(pred_spans, length), strict=True)))
    return gold_out, pred_out


def _bio(spans: list[tuple[int, int, str]], length: int) -> list[str]:
    labels = ["O"] * length
    for s, e, t in sorted(spans):
        if any(lab != "O" for lab in labels[s:e]):
            continue  # BIO holds no overlap: the later span gives way
        labels[s : e] = [f"B-{t}"] + [f"I-{t}"] * (e - s - 1)
    return labels


def _decode(sentence: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """Mentions of valid BIO labels, decoded with plain loops."""
    out = []
    start, typ = -1, ""
    for i, (_, label) in enumerate([*sentence, ("", "O")]):
        if start >= 0 and not (label.startswith("I-") and label[2:] == typ):
            out.append((start, i, typ))
            start = -1
        if label.startswith("B-"):
            start, typ = i, label[2:]
    return out


def test_invariants_on_a_generated_corpus(tmp_path: Path) -> None:
    gold, pred = _pair(tmp_path, *_generated(seed=7))
    data = spanscore.evaluate(reference=gold, predicted=pred).to_dict()
    _check_invariants(data)
    _, m = _matrix(data)
    n = len(data["confusion"]["types"])
    # Every part of the matrix is exercised.
    assert np.trace(m[0, :n, :n]) > 0 and np.trace(m[1, :n, :n]) > 0
    assert m[0, :n, :n].sum() > np.trace(m[0, :n, :n]) and m[1, :n, :n].sum() > np.trace(m[1, :n, :n])
    assert m[0, n, :].sum() > 0 and m[0, :, n].sum() > 0
    assert data["errors"]["false_positive_overlapping"] > 0  # contested references


def test_invariants_on_btc(btc: Path, tmp_path: Path) -> None:
    rng = random.Random(5)
    labels = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
    lines = []
    for line in (btc / "test.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("-DOCSTART-") and rng.random() < 0.08:
            token, _, _ = line.rpartition("\t" if "\t" in line else " ")
            line = f"{token}{chr(9) if chr(9) in line else ' '}{rng.choice(labels)}"
        lines.append(line)
    pred = tmp_path / "pred.txt"
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for credit in (0.5, "dice"):
        _check_invariants(spanscore.evaluate(reference=btc / "test.txt", predicted=pred, credit=credit).to_dict())


def test_against_pair_rows_and_plain_decoding(tmp_path: Path) -> None:
    """The reference built independently: the taxonomy's pairs from ``Report.pair_rows`` of the
    SemEval ``type`` scheme, the mentions of each side decoded here, the cells counted in loops."""
    gold_s, pred_s = _generated(seed=11, n_sentences=300)
    gold, pred = _pair(tmp_path, gold_s, pred_s)
    report = spanscore.evaluate(reference=gold, predicted=pred)
    cells: Counter[tuple[str | None, str | None, str]] = Counter()
    matched_ref: set[tuple[int, int, int, str]] = set()
    matched_pred: set[tuple[int, int, int, str]] = set()
    for row in report.pair_rows("type", scheme=True):
        unit = row["sentence"]
        r = (unit, row["reference_start"], row["reference_end"], row["reference_type"])
        p = (unit, row["predicted_start"], row["predicted_end"], row["predicted_type"])
        assert r not in matched_ref and p not in matched_pred  # one to one
        matched_ref.add(r)
        matched_pred.add(p)
        same = (r[1], r[2]) == (p[1], p[2])
        assert same == (row["relation"] == "same")
        cells[(r[3], p[3], "same_span" if same else "overlapping")] += 1
    for k, (g, q) in enumerate(zip(gold_s, pred_s, strict=True)):
        for s, e, t in _decode(g):
            if (k, s, e, t) not in matched_ref:
                cells[(t, None, "count")] += 1
        for s, e, t in _decode(q):
            if (k, s, e, t) not in matched_pred:
                cells[(None, t, "count")] += 1
    types = sorted({t for r, p, _ in cells for t in (r, p) if t is not None})
    expected: list[Cell] = []
    for r in [*types, None]:
        for p in [*types, None]:
            if r is not None and p is not None:
                s, o = cells[(r, p, "same_span")], cells[(r, p, "overlapping")]
                if s + o:
                    expected.append((r, p, s + o, s, o))
            elif cells[(r, p, "count")]:
                expected.append((r, p, cells[(r, p, "count")], 0, 0))
    data = report.to_dict()
    assert data["confusion"]["types"] == types
    assert _cells(data) == expected


# Brute force: every one-to-one matching of small documents with nested and crossing spans.


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def _best_confusions(ref: list[tuple[int, int, str]], pred: list[tuple[int, int, str]]) -> set[tuple[Cell, ...]]:
    """The confusion of every matching the taxonomy may choose: same span and type matched first,
    then any overlapping pairs one to one, best by (same-type pairs, pairs, overlap, -boundary
    distance). Ties are all kept: which of them wins is the matcher's own rule."""
    fixed = [(i, j) for i, r in enumerate(ref) for j, p in enumerate(pred) if r == p]
    used_r, used_p = {i for i, _ in fixed}, {j for _, j in fixed}
    free_r = [i for i in range(len(ref)) if i not in used_r]

    def matchings(k: int, taken: frozenset[int]) -> list[list[tuple[int, int]]]:
        if k == len(free_r):
            return [[]]
        i = free_r[k]
        out = matchings(k + 1, taken)
        for j, p in enumerate(pred):
            if j not in used_p and j not in taken and _overlap(ref[i], p):
                out += [[(i, j), *rest] for rest in matchings(k + 1, taken | {j})]
        return out

    def key(m: list[tuple[int, int]]) -> tuple[int, int, int, int]:
        return (
            sum(ref[i][2] == pred[j][2] for i, j in m),
            len(m),
            sum(_overlap(ref[i], pred[j]) for i, j in m),
            -sum(abs(ref[i][0] - pred[j][0]) + abs(ref[i][1] - pred[j][1]) for i, j in m),
        )

    candidates = matchings(0, frozenset())
    best = max(key(m) for m in candidates)
    out = set()
    for m in candidates:
        if key(m) != best:
            continue
        pairs = fixed + m
        cells: Counter[tuple[str | None, str | None, int]] = Counter()
        for i, j in pairs:
            cells[(ref[i][2], pred[j][2], 0 if ref[i][:2] == pred[j][:2] else 1)] += 1
        for i in set(range(len(ref))) - {i for i, _ in pairs}:
            cells[(ref[i][2], None, 0)] += 1
        for j in set(range(len(pred))) - {j for _, j in pairs}:
            cells[(None, pred[j][2], 0)] += 1
        out.add(_as_cells(cells))
    return out


def _as_cells(cells: Counter[tuple[str | None, str | None, int]]) -> tuple[Cell, ...]:
    types = sorted({t for r, p, _ in cells for t in (r, p) if t is not None})
    rows: list[Cell] = []
    for r in [*types, None]:
        for p in [*types, None]:
            s, o = cells[(r, p, 0)], cells[(r, p, 1)]
            if s + o:
                rows.append((r, p, s + o, s, o) if r is not None and p is not None else (r, p, s, 0, 0))
    return tuple(rows)


def _random_doc(rng: random.Random) -> list[tuple[int, int, str]]:
    spans: set[tuple[int, int, str]] = set()
    for _ in range(rng.randint(0, 4)):
        s = rng.randrange(8)
        spans.add((s, s + rng.randint(1, 4), rng.choice(TYPES[:3])))
    return sorted(spans)


def test_brute_force_matching_of_nested_and_crossing_spans() -> None:
    rng = random.Random(3)
    docs = [(_random_doc(rng), _random_doc(rng)) for _ in range(150)]
    total: Counter[tuple[str | None, str | None, int]] = Counter()
    for ref, pred in docs:
        if not ref and not pred:
            continue
        data = spanscore.evaluate(reference=[ref], predicted=[pred], format="spans").to_dict()
        chosen = tuple(_cells(data))
        assert chosen in _best_confusions(ref, pred), (ref, pred)
        _check_invariants(data)
        for r, p, n, s, o in chosen:
            total[(r, p, 0)] += s if r is not None and p is not None else n
            total[(r, p, 1)] += o
    # Documents counted together are the sum of documents counted alone.
    whole = spanscore.evaluate(
        reference=[r for r, _ in docs], predicted=[p for _, p in docs], format="spans"
    ).to_dict()
    assert tuple(_cells(whole)) == _as_cells(total)
    _check_invariants(whole)


# The same whatever the chunks and the processes.


def test_same_whatever_the_chunks_and_processes(tmp_path: Path) -> None:
    gold_s, pred_s = _generated(seed=23, n_sentences=600)
    gold, pred = _pair(tmp_path, gold_s, pred_s)
    seen: list[tuple[str, Any, bytes]] = []
    for k, way in enumerate([{"chunk_bytes": WHOLE}, {"chunk_bytes": 300}, {"chunk_bytes": 2048, "jobs": 2}]):
        out = tmp_path / f"report{k}"
        writer = ReportWriter(out)
        report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, rows=writer, **way)
        writer.finish(report)
        seen.append((report.to_json(), report.counts.confusion, (out / "confusion.csv").read_bytes()))
    first = seen[0]
    for other in seen[1:]:
        assert other[0] == first[0]
        assert np.array_equal(other[1], first[1])
        assert other[2] == first[2]
    assert b"\r\n" in first[2]


# Counts: additive, widened and narrowed on both type axes.


def _spans(items: list[tuple[int, int, str]], types: tuple[str, ...]) -> Spans:
    index = {t: i for i, t in enumerate(types)}
    return Spans.build(
        np.array([s for s, _, _ in items], dtype=np.int64),
        np.array([e for _, e, _ in items], dtype=np.int64),
        np.array([index[t] for _, _, t in items], dtype=np.int64),
        np.zeros(len(items), dtype=np.int64),
        types,
    )


def _cell(counts: Any, field: str, ref: str, pred: str) -> int:
    return int(counts.confusion[CONFUSION_FIELDS.index(field), counts.types.index(ref), counts.types.index(pred)])


def test_counts_merge_and_map_both_type_axes() -> None:
    # Not symmetric, so that a transposed axis shows: PER predicted for LOC, never LOC for PER.
    a_types = ("LOC", "PER", "ZZZ")  # ZZZ: vocabulary without a mention, dropped on both axes
    a, _ = count(_spans([(0, 2, "LOC"), (5, 7, "PER")], a_types), _spans([(0, 2, "PER"), (5, 6, "PER")], a_types))
    assert a.types == ("LOC", "PER")
    assert a.confusion.shape == (2, 2, 2)
    assert _cell(a, "same_span", "LOC", "PER") == 1 and _cell(a, "same_span", "PER", "LOC") == 0
    assert _cell(a, "overlapping", "PER", "PER") == 1
    b_types = ("ORG", "PER")
    b, _ = count(_spans([(0, 3, "ORG")], b_types), _spans([(1, 3, "PER"), (9, 10, "ORG")], b_types))
    merged = a.merge(b)
    assert merged.types == ("LOC", "ORG", "PER")
    assert merged.confusion.shape == (2, 3, 3)
    assert _cell(merged, "same_span", "LOC", "PER") == 1
    assert _cell(merged, "overlapping", "ORG", "PER") == 1
    assert _cell(merged, "overlapping", "PER", "ORG") == 0
    assert _cell(merged, "overlapping", "PER", "PER") == 1
    assert merged.confusion.sum() == a.confusion.sum() + b.confusion.sum() == 3
    assert merged == b.merge(a)
    # Widening then dropping the empty types gives the counts back.
    wide = a.with_types(("AAA", "LOC", "MMM", "PER"))
    assert wide.confusion.shape == (2, 4, 4)
    assert _cell(wide, "same_span", "LOC", "PER") == 1 and wide.confusion.sum() == a.confusion.sum()
    assert wide.without_empty_types() == a
    assert wide != a  # the confusion is compared too
    one_more = a.confusion.copy()
    one_more[0, 0, 0] += 1
    assert dataclasses.replace(a, confusion=one_more) != a


def test_confusion_of_no_mentions(tmp_path: Path) -> None:
    data = spanscore.evaluate(reference=[["O", "O"]], predicted=[["O", "O"]], format="labels").to_dict()
    assert data["confusion"] == {"types": [], "rows": []}
    assert confusion_table(data).rows == ()
    out = tmp_path / "out"
    write_report(spanscore.evaluate(reference=[["O", "O"]], predicted=[["O", "O"]], format="labels"), out)
    assert (out / "confusion.csv").read_bytes() == b"reference,predicted,count,same_span,overlapping\r\n"


def test_heat_map_is_drawn(tmp_path: Path) -> None:
    """An SVG heat map: a cell per pair of types (and the missed and spurious ones), each
    labelled as the terminal table labels it, empty cells pale and unlabelled; the sizes grow
    with the types."""
    import xml.etree.ElementTree as ET

    from spanscore.presentation.charts import confusion_chart

    svg = "{http://www.w3.org/2000/svg}"
    gold, pred = _pair(tmp_path, HAND_GOLD, HAND_PRED)
    data = spanscore.evaluate(reference=gold, predicted=pred).to_dict()
    root = ET.fromstring(confusion_chart(data))
    assert float(root.attrib["height"]) > 300 and float(root.attrib["width"]) > 500
    types = data["confusion"]["types"]
    cells = [r for r in root.iter(f"{svg}rect") if r.find(f"{svg}title") is not None]
    assert len(cells) == (len(types) + 1) ** 2
    counted = {(c["reference"], c["predicted"]): c for c in data["confusion"]["rows"]}
    words = ["".join(t.itertext()) for t in root.iter(f"{svg}text")]
    for cell in cells:
        ref, pred_type = (cell.findtext(f"{svg}title") or "").split(": ")[0].split(" → ")
        row = counted.get((None if ref == SPURIOUS else ref, None if pred_type == MISSED else pred_type))
        assert (cell.attrib["fill"] == "#f2f2f2") == (row is None)
        if row is not None and row["reference"] and row["predicted"]:
            assert f"{row['same_span']}+{row['overlapping']}" in words
    empty = spanscore.evaluate(reference=[["O"]], predicted=[["O"]], format="labels").to_dict()
    assert "no mentions on either side" in confusion_chart(empty).decode("utf-8")
    many = [[(i, i + 1, f"T{i % 40:02d}") for i in range(0, 80)]]
    big = ET.fromstring(confusion_chart(spanscore.evaluate(reference=many, predicted=many, format="spans").to_dict()))
    assert float(big.attrib["height"]) > 1000
