"""The learning curve of a judge: how good it is after K reviews, in the review's order and at random.

For each size K, a judge learns from the first K scores in an order: the judge's review order
(``order.review_order``, what ``spanscore review create --judge`` gives) or a random one, one per
seed; each is measured against held-out human scores. Size 0 is the judge without scores.

Two ways to hold scores out:

- ``test`` given: the judges learn from ``scores`` and are measured on ``test``, which must share
  no sentence with ``scores``; the classifier is trained on the corpus less every sentence whose
  text is a test sentence;
- ``test`` left out: nested cross-fitting over contiguous blocks of the corpus (the corpus holds
  the judged sentences, as for ``judge benchmark``): the scores of block k are measured by judges
  whose classifier never saw block k and whose scores come from the other blocks, taken in their
  order, K of them; the blocks' measurements are pooled.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import InputError, OptionError
from .benchmark import agreement, intervals
from .corpus import Corpus
from .crossfit import Trainer, backend_trainer, check_folds, check_seed, fold_data, fold_plan, prepare
from .judgements import USERS, Judgement, accepts, check_labels, check_user
from .model import Rule, features_of
from .order import ORDERS, order_of

FloatArray = npt.NDArray[np.float64]
Size = int | None  # None: every score


def size_name(size: Size) -> int | str:
    return "all" if size is None else size


def _f1(block: dict[str, float]) -> float:
    p, r = block["precision"], block["recall"]
    if math.isnan(p) or math.isnan(r) or p + r == 0:
        return float("nan")
    return 2 * p * r / (p + r)


def _rounded(block: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if math.isnan(v) else round(v, 4)) for k, v in block.items()}


@dataclass(frozen=True)
class CurvePoint:
    """A judge that learned from ``size`` scores taken in ``order``, measured for both users."""

    size: Size
    order: str
    seed: int
    users: dict[str, dict[str, float]]
    # per user, 95% intervals: Wilson for precision and recall, stratified bootstrap for the AUC
    intervals: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"size": size_name(self.size), "order": self.order, "seed": self.seed}
        for user, block in self.users.items():
            out[user] = _rounded({**block, "f1": _f1(block)})
            if user in self.intervals:
                out[user]["intervals"] = {
                    k: [None if math.isnan(v) else round(v, 4) for v in pair]
                    for k, pair in self.intervals[user].items()
                }
        return out


@dataclass(frozen=True)
class LearningCurve:
    """Every point of a learning curve, and what it was measured on (``to_dict`` is the JSON of
    ``spanscore judge curve --json``)."""

    points: tuple[CurvePoint, ...]
    judge: str  # the judge without scores that every point starts from
    user: str  # whose acceptance the judges learn
    scores: int  # scores to learn from
    test: int  # scores measured on
    folds: int | None  # blocks of nested cross-fitting; None with a test set
    seeds: int
    seconds: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "user": self.user,
            "scores": self.scores,
            "test": self.test,
            "folds": self.folds,
            "seeds": self.seeds,
            "points": [p.to_dict() for p in self.points],
        }

    def summary(self) -> list[dict[str, Any]]:
        """Per size and order, the mean over seeds (and the lowest and highest) of each figure."""
        out: list[dict[str, Any]] = []
        keys: list[tuple[Size, str]] = list(dict.fromkeys((p.size, p.order) for p in self.points))
        for size, order in keys:
            points = [p for p in self.points if p.size == size and p.order == order]
            row: dict[str, Any] = {"size": size_name(size), "order": order, "seeds": len(points)}
            for user in USERS:
                block: dict[str, dict[str, float | None]] = {}
                for figure in ("precision", "recall", "f1", "auc", "judge_accepts"):
                    values = [
                        _f1(p.users[user]) if figure == "f1" else p.users[user][figure] for p in points
                    ]
                    finite = [v for v in values if not math.isnan(v)]
                    block[figure] = {
                        "mean": round(float(np.mean(finite)), 4) if finite else None,
                        "min": round(min(finite), 4) if finite else None,
                        "max": round(max(finite), 4) if finite else None,
                    }
                    # the seeds' 95% intervals, their bounds averaged
                    bounds = [p.intervals[user][figure] for p in points if figure in p.intervals.get(user, {})]
                    for side, name in ((0, "low"), (1, "high")):
                        ends = [b[side] for b in bounds if not math.isnan(b[side])]
                        if ends:
                            block[figure][name] = round(float(np.mean(ends)), 4)
                row[user] = block
            out.append(row)
        return out

    def to_html(self) -> str:
        """A self-contained page: forgiving-user F1 and AUC against the number of reviews."""
        return curve_page(self)


def _check_sizes(sizes: Sequence[Size], pool: int, what: str) -> None:
    for size in sizes:
        if size is not None and size < 0:
            raise OptionError(f"--sizes: {size} is not a number of scores (0 or more, or all)")
        if size is not None and size > pool:
            raise OptionError(f"--sizes {size}: {what} hold only {pool} scores to learn from (use all)")


def learning_curve(
    corpus: Corpus,
    scores: Sequence[Judgement],
    *,
    test: Sequence[Judgement] | None = None,
    sizes: Sequence[Size] = (100, 200, 400),
    seeds: int = 3,
    user: str = "forgiving",
    backend: str = "tfidf",
    rule: Rule = "contains",
    folds: int = 5,
    seed: int = 0,
    trainer: Trainer | None = None,
    scores_path: str = "scores",
    test_path: str = "test",
) -> LearningCurve:
    """The learning curve of a judge trained on ``corpus`` (see the module's docstring)."""
    t0 = time.perf_counter()
    check_user(user)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise OptionError(f"--seeds must be a whole number, 1 or more, not {seeds!r}")
    check_folds(folds)
    check_seed(seed)
    if rule != "agnostic":
        check_labels(scores, corpus, scores_path)
        if test is not None:
            check_labels(test, corpus, test_path)
    train = trainer or backend_trainer(backend, seed)
    runs = [(size, order, s) for size in sizes for order in ORDERS for s in range(seeds)]
    if test is not None:
        name, measured, probabilities = _held_out(
            corpus, scores, test, sizes, runs, rule, train, user, folds, scores_path, test_path
        )
    else:
        name, measured, probabilities = _cross_fitted(
            corpus, scores, sizes, runs, rule, train, user, folds, scores_path
        )
    truth = {u: accepts(measured, u) for u in USERS}
    ranges: dict[tuple[str, bytes], dict[str, tuple[float, float]]] = {}  # equal probabilities, equal intervals

    def ranged(user: str, p: FloatArray) -> dict[str, tuple[float, float]]:
        key = (user, p.tobytes())
        if key not in ranges:
            ranges[key] = intervals(truth[user], p)
        return ranges[key]

    points = tuple(
        CurvePoint(
            size, order, s,
            {u: agreement(truth[u], probabilities[(size, order, s)]) for u in USERS},
            {u: ranged(u, probabilities[(size, order, s)]) for u in USERS},
        )
        for size, order, s in runs
    )
    return LearningCurve(points, name, user, len(scores), len(measured), None if test is not None else folds, seeds,
                         time.perf_counter() - t0)


Run = tuple[Size, str, int]


def _held_out(
    corpus: Corpus,
    scores: Sequence[Judgement],
    test: Sequence[Judgement],
    sizes: Sequence[Size],
    runs: list[Run],
    rule: Rule,
    train: Trainer,
    user: str,
    folds: int,
    scores_path: str,
    test_path: str,
) -> tuple[str, Sequence[Judgement], dict[Run, FloatArray]]:
    learned = {j.sentence for j in scores}
    for j in test:
        if j.sentence in learned:
            raise InputError(
                f"this judgement's sentence also has scores in {scores_path}: a curve never measures on a"
                " sentence it learned from",
                path=test_path,
                line=j.line,
            )
    _check_sizes(sizes, len(scores), scores_path)
    texts = {j.sentence for j in test}
    keep = [i for i, s in enumerate(corpus.sentences) if s.text not in texts]
    prepared = prepare(corpus.subset(keep), scores, rule=rule, trainer=train, share=1.0 / folds)
    items = [j.mismatch() for j in test]
    judge = prepared.judge()
    x = features_of(items, judge.classifier, judge.lexicon, rule)
    rule_p = judge.rule_probability(items)
    out: dict[Run, FloatArray] = {}
    cache: dict[tuple[int, ...], FloatArray] = {}
    for size, order, s in runs:
        if size == 0:
            out[(size, order, s)] = rule_p
            continue
        rows = order_of(order, prepared.items, prepared.rule_probability, s)
        chosen = tuple(sorted(rows[:size].tolist() if size is not None else rows.tolist()))
        if chosen not in cache:
            cache[chosen] = prepared.acceptance(chosen, user).predict(x, items, rule_p)
        out[(size, order, s)] = cache[chosen]
    return judge.name, test, out


def _cross_fitted(
    corpus: Corpus,
    scores: Sequence[Judgement],
    sizes: Sequence[Size],
    runs: list[Run],
    rule: Rule,
    train: Trainer,
    user: str,
    folds: int,
    scores_path: str,
) -> tuple[str, Sequence[Judgement], dict[Run, FloatArray]]:
    plan, _ = fold_plan(corpus, scores, folds=folds, path=scores_path)
    pools = [len(scores) - f.rows.shape[0] for f in plan if f.rows.shape[0]]
    if not pools or min(pools) == 0:
        raise OptionError("a cross-fitted curve needs scores in more than one block of the corpus")
    _check_sizes(sizes, min(pools), "the blocks' other blocks")
    out = {run: np.zeros(len(scores)) for run in runs}
    items = [j.mismatch() for j in scores]
    name = ""
    for fold in plan:
        if fold.rows.shape[0] == 0:
            continue
        data = fold_data(corpus, scores, fold, rule=rule, trainer=train, learn=True, share=1.0 / folds)
        prepared = data.prepared
        name = prepared.judge().name
        test = [items[k] for k in fold.rows.tolist()]
        cache: dict[tuple[int, ...], FloatArray] = {}
        for size, order, s in runs:
            if size == 0:
                out[(size, order, s)][fold.rows] = data.test_rule
                continue
            # One order per seed and block; the seeds of two blocks differ.
            rows = order_of(order, prepared.items, prepared.rule_probability, s * folds + fold.block)
            chosen = tuple(sorted(rows[:size].tolist() if size is not None else rows.tolist()))
            if chosen not in cache:
                cache[chosen] = prepared.acceptance(chosen, user).predict(data.test_x, test, data.test_rule)
            out[(size, order, s)][fold.rows] = cache[chosen]
    return name, scores, out


# --- the page ----------------------------------------------------------------------------------

_COLOURS = {"judge": "#1f6fb2", "random": "#c0392b"}


def _panel(curve: LearningCurve, figure: str, title: str, x0: int, width: int, height: int) -> str:
    rows = curve.summary()
    sizes = list(dict.fromkeys(r["size"] for r in rows if r["size"] != 0))
    base = next((r for r in rows if r["size"] == 0), None)
    values = [
        v
        for r in rows
        for v in (r["forgiving"][figure]["min"], r["forgiving"][figure]["max"])
        if v is not None
    ]
    if base is not None and base["forgiving"][figure]["mean"] is not None:
        values.append(base["forgiving"][figure]["mean"])  # the no-scores line stays on the chart
    if not values or not sizes:
        return ""
    low, high = float(min(values)), float(max(values))
    pad = max(0.005, (high - low) * 0.1)
    low, high = low - pad, high + pad
    left, right, top, bottom = x0 + 55, x0 + width - 15, 40, height - 45

    def xpos(i: int) -> float:
        return left + (right - left) * (i + 0.5) / len(sizes)

    def ypos(v: float) -> float:
        return bottom - (bottom - top) * (v - low) / (high - low)

    parts = [f'<text x="{(left + right) / 2}" y="22" text-anchor="middle" class="title">{html.escape(title)}</text>']
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" class="axis"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" class="axis"/>')
    for k in range(5):
        v = low + (high - low) * k / 4
        parts.append(f'<text x="{left - 6}" y="{ypos(v) + 4:.1f}" text-anchor="end">{v:.3f}</text>')
        parts.append(f'<line x1="{left}" y1="{ypos(v):.1f}" x2="{right}" y2="{ypos(v):.1f}" class="grid"/>')
    for i, size in enumerate(sizes):
        parts.append(f'<text x="{xpos(i):.1f}" y="{bottom + 18}" text-anchor="middle">{html.escape(str(size))}</text>')
    parts.append(
        f'<text x="{(left + right) / 2}" y="{height - 8}" text-anchor="middle">reviews (scores learned from)</text>'
    )
    if base is not None and base["forgiving"][figure]["mean"] is not None:
        y = ypos(base["forgiving"][figure]["mean"])
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" class="base"/>')
        parts.append(f'<text x="{right}" y="{y - 5:.1f}" text-anchor="end" class="note">no scores</text>')
    for order, colour in _COLOURS.items():
        line = [(i, r) for i, size in enumerate(sizes) for r in rows if r["size"] == size and r["order"] == order]
        line = [(i, r) for i, r in line if r["forgiving"][figure]["mean"] is not None]
        if not line:
            continue
        band = [(xpos(i), ypos(r["forgiving"][figure]["max"])) for i, r in line]
        band += [(xpos(i), ypos(r["forgiving"][figure]["min"])) for i, r in reversed(line)]
        parts.append(
            f'<polygon points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in band)}" fill="{colour}" opacity="0.15"/>'
        )
        mean = " ".join(f"{xpos(i):.1f},{ypos(r['forgiving'][figure]['mean']):.1f}" for i, r in line)
        parts.append(f'<polyline points="{mean}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, r in line:
            parts.append(f'<circle cx="{xpos(i):.1f}" cy="{ypos(r["forgiving"][figure]["mean"]):.1f}" r="3" '
                         f'fill="{colour}"/>')
    return "\n".join(parts)


def curve_page(curve: LearningCurve) -> str:
    width, height = 460, 300
    panels = _panel(curve, "f1", "F1 for the forgiving user", 0, width, height)
    panels += _panel(curve, "auc", "AUC for the forgiving user", width, width, height)
    legend = " ".join(
        f'<span style="color:{c}">&#9632; {html.escape(o)} order</span>' for o, c in _COLOURS.items()
    )
    how = (f"nested cross-fitting over {curve.folds} blocks" if curve.folds is not None
           else f"{curve.test} held-out scores")
    head = ("<tr><th>reviews</th><th>order</th><th>seeds</th>"
            + "".join(f"<th>{u} {f}</th>" for u in USERS for f in ("P", "R", "F1", "AUC")) + "</tr>")
    body = []
    for r in curve.summary():
        cells = [str(r["size"]), r["order"], str(r["seeds"])]
        for u in USERS:
            for f in ("precision", "recall", "f1", "auc"):
                m = r[u][f]["mean"]
                cells.append("n/a" if m is None else f"{m:.3f}")
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>spanscore: learning curve of a judge</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
svg text {{ font-size: 12px; fill: #333; }} svg .title {{ font-size: 14px; font-weight: 600; }}
svg .axis {{ stroke: #333; }} svg .grid {{ stroke: #ddd; }} svg .base {{ stroke: #555; stroke-dasharray: 5 4; }}
svg .note {{ fill: #555; font-style: italic; }}
table {{ border-collapse: collapse; margin-top: 1.5em; }} td, th {{ border: 1px solid #ccc; padding: 3px 8px; }}
td {{ text-align: right; font-variant-numeric: tabular-nums; }}
</style></head><body>
<h1>Learning curve of a judge</h1>
<p>{html.escape(curve.judge)} learning from the {html.escape(curve.user)} user's acceptance; {curve.scores} scores to
learn from, measured on {html.escape(how)}; mean over {curve.seeds} seed(s), the band from the lowest to the
highest seed. {legend}</p>
<svg width="{2 * width}" height="{height}" viewBox="0 0 {2 * width} {height}" role="img"
 aria-label="F1 and AUC against the number of reviews">
{panels}
</svg>
<table><thead>{head}</thead><tbody>
{chr(10).join(body)}
</tbody></table>
</body></html>
"""
