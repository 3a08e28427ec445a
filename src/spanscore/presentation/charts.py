"""The report's charts as PNG bytes.

matplotlib is the optional extra ``report``: it is imported here, inside the functions, and only
through ``Figure`` (never pyplot), so drawing neither needs a display nor changes the backend of a
program that already uses matplotlib.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Literal

from ..errors import MissingExtra
from ..results import ErrorKey, EvaluationResult, ScoreKey
from ..runtime.workers import can_fork, forked_map
from .common import PARTIAL_CRITERIA, match_metrics, partial_label, total_errors
from .tables import MISSED, SPURIOUS, confusion_cell

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
BLUE, ORANGE, GREEN, SKY, VERMILION, PURPLE, YELLOW, GREY = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#56B4E9",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
    "#7F7F7F",
)
DPI = 150
CHART_ORDER = ("strict", "boundary", "left", "right", "overlap", "token", "learned")
# Short enough to sit under a bar group of seven.
CHART_HELP = {
    "strict": "span and type",
    "boundary": "span only",
    "left": "type and start",
    "right": "type and end",
    "overlap": "type, overlap",
    "token": "entity tokens",
    "learned": "judge's credit",
}


def _missing() -> MissingExtra:
    return MissingExtra("charts (matplotlib)", "report")


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise _missing() from exc
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", facecolor="white")
    return buf.getvalue()


def _tidy(ax: Axes, counts: str = "") -> None:
    """Plain frame; ``counts`` names the axis ("x" or "y") that shows whole numbers."""
    from matplotlib.ticker import MaxNLocator

    if counts:
        axis = ax.xaxis if counts == "x" else ax.yaxis
        axis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.set_axisbelow(True)


def scores_chart(data: EvaluationResult) -> bytes:
    """Figure 2 of Kong and Sullivan: precision, recall and F1 per criterion, as grouped bars."""
    metrics = data["metrics"]
    names = [n for n in CHART_ORDER if n in metrics]
    fig = _figure(9.0, 4.8)
    ax = fig.add_subplot()
    width = 0.27
    bars_of: tuple[tuple[ScoreKey, str, str], ...] = (
        ("precision", "precision", BLUE),
        ("recall", "recall", ORANGE),
        ("f1", "F1", GREEN),
    )
    for j, (key, label, colour) in enumerate(bars_of):
        xs = [i + (j - 1) * width for i in range(len(names))]
        scores = [metrics[n][key] for n in names]
        bars = ax.bar(xs, [100 * (x or 0.0) for x in scores], width, label=label, color=colour)
        ax.bar_label(
            bars,
            labels=[f"{100 * x:.1f}" if x is not None else "n/a" for x in scores],
            padding=2,
            fontsize=7,
        )
    ax.set_xticks(range(len(names)), [f"{n}\n({CHART_HELP.get(n, '')})" for n in names], fontsize=8)
    ax.set_ylim(0, 112)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("score (%)")
    ax.grid(axis="y", color="#dddddd", linewidth=0.8)
    _tidy(ax)
    ax.set_title("Precision, recall and F1 by criterion", loc="left", fontsize=12)
    ax.legend(loc="upper right", ncols=3, frameon=False, fontsize=9)
    return _png(fig)


def credit_chart(data: EvaluationResult) -> bytes:
    """Figure 1 of Kong and Sullivan: matches with full and with partial credit per criterion."""
    metrics = match_metrics(data["metrics"])
    names = [n for n in PARTIAL_CRITERIA if n in metrics]
    fig = _figure(7.5, 4.5)
    ax = fig.add_subplot()
    width = 0.38
    top = max([metrics[n]["full"] for n in names] + [metrics[n]["partial"] for n in names] + [1])
    kinds: tuple[tuple[Literal["full", "partial"], str, str], ...] = (
        ("full", "exact (1.0 credit)", BLUE),
        ("partial", partial_label(data), ORANGE),
    )
    for j, (key, label, colour) in enumerate(kinds):
        xs = [i + (j - 0.5) * width for i in range(len(names))]
        bars = ax.bar(xs, [metrics[n][key] for n in names], width, label=label, color=colour)
        ax.bar_label(bars, padding=2, fontsize=9)
    ax.set_xticks(range(len(names)), [f"{n}\n({CHART_HELP.get(n, '')})" for n in names], fontsize=9)
    ax.set_ylim(0, top * 1.18)
    ax.set_ylabel("matched pairs")
    ax.grid(axis="y", color="#dddddd", linewidth=0.8)
    _tidy(ax, "y")
    ax.set_title("Exact and partial matches by criterion", loc="left", fontsize=12)
    ax.legend(loc="upper right", ncols=2, frameon=False, fontsize=9)
    return _png(fig)


def errors_chart(data: EvaluationResult) -> bytes:
    """The error taxonomy of Nejadgholi et al. (2020) as horizontal bars; Type-5 split by how the span differs.

    Correct mentions usually outnumber every error type many times over; drawn to one scale they
    would flatten the errors, so their bar is then cut (marked, with its count written on it).
    """
    e = data["errors"]
    n_errors = total_errors(e)
    rows: list[tuple[ErrorKey, str, str | None]] = [
        ("correct", "correct\n(same span and type)", GREEN),
        ("false_positive", "Type-1 false positive", VERMILION),
        ("false_negative", "Type-2 false negative", PURPLE),
        ("wrong_label_same_span", "Type-3 wrong label,\nsame span", SKY),
        ("wrong_label_overlap", "Type-4 wrong label,\noverlapping span", GREY),
        ("right_label_overlap", "Type-5 right label,\noverlapping span", None),
    ]
    fig = _figure(9.0, 5.0)
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    height = 0.62
    largest_error = max([int(e[key]) for key, _, _ in rows[1:]] + [1])
    correct = int(e["correct"])
    cut = correct > 1.4 * largest_error
    scale = largest_error if cut else max(correct, largest_error)
    for y, (key, _, colour) in zip(ys, rows, strict=True):
        count = int(e[key])
        if key == "correct" and cut:
            length = 1.2 * scale
            ax.barh(y, length, color=colour, height=height)
            # Two white slashes across the bar mark where it was cut.
            for dx in (0.0, 0.025 * scale):
                x = 0.95 * scale + dx
                ax.plot([x - 0.015 * scale, x + 0.015 * scale], [y - 0.42, y + 0.42], color="white", lw=3)
            ax.text(length + scale * 0.012, y, f"{count}  (bar cut: not to scale)", va="center", fontsize=9)
            continue
        if colour is not None:
            ax.barh(y, count, color=colour, height=height)
        else:
            left = 0
            parts: tuple[tuple[ErrorKey, str, str], ...] = (
                ("right_label_overlap_longer", "Type-5: prediction longer", BLUE),
                ("right_label_overlap_shorter", "Type-5: prediction shorter", ORANGE),
                ("right_label_overlap_shifted", "Type-5: prediction shifted", YELLOW),
            )
            for sub, label, c in parts:
                n = int(e[sub])
                ax.barh(y, n, left=left, color=c, height=height, label=f"{label} ({n})")
                left += n
        note = str(count)
        if key != "correct" and n_errors:
            note += f"  ({100 * count / n_errors:.1f}% of errors)"
        ax.text(count + scale * 0.012, y, note, va="center", fontsize=9)
    ax.set_yticks(ys, [label for _, label, _ in rows], fontsize=9)
    ax.set_xlim(0, scale * 1.65)
    ax.set_xlabel("mentions (one-to-one matching)")
    ax.grid(axis="x", color="#dddddd", linewidth=0.8)
    _tidy(ax, "x")
    ax.set_title(f"Error taxonomy: {correct} correct, {n_errors} errors", loc="left", fontsize=12)
    fig.legend(loc="outside lower center", ncols=3, frameon=False, fontsize=8)
    return _png(fig)


def confusion_chart(data: EvaluationResult) -> bytes:
    """The type confusion matrix as a heat map: reference types down, predicted types across, the
    spurious row and the missed column apart, each cell labelled as the terminal table labels it.

    Colours follow a log scale (cividis, readable with the common colour-vision deficiencies and
    in grey): the diagonal usually outnumbers the confusions many times over and would leave them
    all one colour on a linear scale. Empty cells are left pale grey and unlabelled.
    """
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm

    confusion = data.get("confusion")
    types = list(confusion["types"]) if confusion else []
    n = len(types)
    size = n + 1
    width, height = min(max(3.0 + 0.62 * size, 5.5), 18.0), min(max(1.8 + 0.5 * size, 3.5), 16.0)
    fig = _figure(width, height)
    ax = fig.add_subplot()
    ax.set_title("Type confusion, one-to-one matching", loc="left", fontsize=12)
    if not n or confusion is None:
        ax.text(0.5, 0.5, "no mentions on either side", ha="center", va="center", fontsize=10)
        ax.set_axis_off()
        return _png(fig)
    total = np.zeros((size, size), dtype=np.int64)
    label = [["" for _ in range(size)] for _ in range(size)]
    where = {t: i for i, t in enumerate(types)}
    for c in confusion["rows"]:
        i = n if c["reference"] is None else where[c["reference"]]
        j = n if c["predicted"] is None else where[c["predicted"]]
        total[i, j] = c["count"]
        matched = c["reference"] is not None and c["predicted"] is not None
        label[i][j] = confusion_cell(c["same_span"], c["overlapping"]) if matched else str(c["count"])
    shown = np.ma.masked_equal(total, 0)
    top = max(int(total.max()), 2)
    norm = LogNorm(vmin=1, vmax=top)
    cmap = colormaps["cividis"].with_extremes(bad="#f2f2f2")
    image = ax.imshow(shown, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
    # Type sizes from the room a cell has (in points), so that many types still fit their labels.
    cell_w, cell_h = 72 * (width - 2.8) / size, 72 * (height - 1.6) / size
    longest = max((len(text) for row in label for text in row), default=1)
    fontsize = max(3.0, min(9.0, 0.9 * cell_w / (0.6 * longest), 0.55 * cell_h))
    for i in range(size):
        for j in range(size):
            if label[i][j]:
                dark = norm(total[i, j]) < 0.55  # cividis is dark at its low end
                ax.text(j, i, label[i][j], ha="center", va="center", fontsize=fontsize,
                        color="white" if dark else "black")
    # The spurious row and the missed column are no types: set them apart.
    ax.axhline(n - 0.5, color="#1f2328", linewidth=1.2)
    ax.axvline(n - 0.5, color="#1f2328", linewidth=1.2)
    ticks = max(4.0, min(9.0, 0.7 * cell_h))
    ax.set_xticks(range(size), [*types, MISSED], fontsize=ticks, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(size), [*types, SPURIOUS], fontsize=ticks)
    ax.set_xlabel("predicted type")
    ax.set_ylabel("reference type")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    bar = fig.colorbar(image, ax=ax, shrink=0.8, pad=0.02)
    steps = [k * 10**e for e in range(len(str(top))) for k in (1, 2, 5) if k * 10**e <= top]
    bar.set_ticks(steps, labels=[str(t) for t in steps])
    bar.ax.minorticks_off()
    bar.set_label("mentions (log scale)", fontsize=9)
    bar.ax.tick_params(labelsize=8)
    return _png(fig)


# file name -> (drawing function, caption)
CHARTS = {
    "scores.png": (scores_chart, "Precision, recall and F1 under each criterion (Kong and Sullivan, Figure 2)."),
    "credit.png": (
        credit_chart,
        "Matched pairs with exact (full) and partial credit under each partial-credit criterion "
        "(Kong and Sullivan, Figure 1).",
    ),
    "errors.png": (
        errors_chart,
        "Error taxonomy of the one-to-one matching (Type-1 to Type-5); Type-5 split by how the predicted "
        "span differs.",
    ),
    "confusion.png": (
        confusion_chart,
        "Type confusion of the one-to-one matching: reference types down, predicted types across, "
        "spurious predictions in the last row and missed reference mentions in the last column; a "
        "cell reads pairs with the same span + pairs with overlapping spans, an empty cell 0; "
        "colours on a log scale.",
    ),
}


def bucket_chart(data: EvaluationResult, attribute: str) -> bytes:
    """One bucket attribute: strict and overlap F1 of each bucket as bars, with their intervals
    as error bars where the evaluation computed them, and each bucket's reference mentions."""
    entries = data.get("buckets", {})[attribute]
    fig = _figure(max(5.0, 1.1 * len(entries) + 2.5), 4.2)
    ax = fig.add_subplot()
    width = 0.38
    for j, (name, colour) in enumerate((("strict", BLUE), ("overlap", ORANGE))):
        xs = [i + (j - 0.5) * width for i in range(len(entries))]
        blocks = [e["metrics"][name] for e in entries]
        values = [100 * (b["f1"] or 0.0) for b in blocks]
        lows = [100 * (b["f1"] or 0.0) - 100 * (b["low"] or 0.0) if b.get("low") is not None else 0 for b in blocks]
        highs = [100 * (b["high"] or 0.0) - 100 * (b["f1"] or 0.0) if b.get("high") is not None else 0 for b in blocks]
        has_ci = any(b.get("low") is not None for b in blocks)
        bars = ax.bar(
            xs, values, width, label=f"{name} F1", color=colour,
            yerr=[lows, highs] if has_ci else None, capsize=3 if has_ci else 0, ecolor=GREY,
        )
        ax.bar_label(bars, labels=[f"{v:.1f}" for v in values], padding=2, fontsize=7)
    labels = [f"{e['bucket']}\n({e['reference_mentions']} ref)" for e in entries]
    ax.set_xticks(range(len(entries)), labels, fontsize=8)
    ax.set_ylim(0, 112)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("F1 (%)")
    ax.grid(axis="y", color="#dddddd", linewidth=0.8)
    _tidy(ax)
    ax.set_title(f"F1 by {attribute}", loc="left", fontsize=12)
    ax.legend(loc="upper right", ncols=2, frameon=False, fontsize=9)
    return _png(fig)


THRESHOLDS_FILE = "thresholds.png"
THRESHOLD_TYPES = 6  # per-type curves drawn beside the overall one, at most (the JSON has them all)
BOUNDARY_CURVE = "overall, any type (boundary)"


def threshold_curves(data: EvaluationResult) -> dict[str, dict[str, Any]]:
    """The precision-recall curves the thresholds chart draws, by name (``overall``, by place
    alone, then the types with scored spans, by name, at most ``THRESHOLD_TYPES``): the JSON's,
    unchanged."""
    sweep = data.get("located", {}).get("thresholds")
    if not sweep or not sweep["overall"]["thresholds"]:
        return {}
    types = [t for t, curve in sorted(sweep["types"].items()) if curve["thresholds"]]
    boundary = {BOUNDARY_CURVE: sweep["boundary"]} if "boundary" in sweep else {}
    return {"overall": sweep["overall"], **boundary, **{t: sweep["types"][t] for t in types[:THRESHOLD_TYPES]}}


def thresholds_chart(data: EvaluationResult) -> bytes:
    """Precision against recall of the scored spans kept at each threshold (exact matching),
    overall and per type, each curve's best threshold by F1 marked and named."""
    curves = threshold_curves(data)
    fig = _figure(7.0, 5.0)
    ax = fig.add_subplot()
    colours = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY, YELLOW)
    types = [name for name in curves if name not in ("overall", BOUNDARY_CURVE)]
    for name, curve in curves.items():
        whole = name in ("overall", BOUNDARY_CURVE)
        colour = "#000000" if name == "overall" else GREY if whole else colours[types.index(name) % len(colours)]
        recall = [100 * x for x in curve["recall"]]
        precision = [100 * x for x in curve["precision"]]
        ax.plot(recall, precision, color=colour, linewidth=2.2 if whole else 1.2,
                linestyle="--" if name == BOUNDARY_CURVE else "-",
                marker="." if len(recall) < 40 else None, markersize=4, label=name)
        best = curve["best"]
        ax.plot([100 * best["recall"]], [100 * best["precision"]], marker="*", markersize=12, color=colour,
                markeredgecolor="white", linestyle="none")
        ax.annotate(
            f"{best['threshold']:.3g} (F1 {100 * best['f1']:.1f})",
            (100 * best["recall"], 100 * best["precision"]),
            textcoords="offset points", xytext=(6, 4), fontsize=7, color=colour,
        )
    ax.set_xlim(0, 105)
    ax.set_ylim(0, 105)
    ax.set_xlabel("recall (%)")
    ax.set_ylabel("precision (%)")
    ax.grid(color="#dddddd", linewidth=0.8)
    _tidy(ax)
    ax.set_title("Precision and recall by score threshold", loc="left", fontsize=12)
    ax.legend(loc="lower left", frameon=False, fontsize=8)
    return _png(fig)


def _bucket_file(attribute: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in attribute)
    return f"buckets-{safe}.png"


def chart_captions(data: EvaluationResult) -> dict[str, str]:
    """Every chart's file name and caption: the fixed ones, then one per bucket attribute."""
    out = {name: caption for name, (_, caption) in CHARTS.items()}
    if threshold_curves(data):
        out[THRESHOLDS_FILE] = (
            "Precision against recall of the scored predictions kept at each threshold (a mention kept where its"
            " score is at least the threshold): exact place and type (strict) overall and per type, and place"
            " alone (boundary, dashed); a star marks each curve's best threshold by F1, named beside it"
            " (thresholds.csv has every point)."
        )
    for attribute in data.get("buckets", {}):
        interval = " with their intervals" if _has_intervals(data, attribute) else ""
        out[_bucket_file(attribute)] = (
            f"Strict and overlap F1 of each {attribute} bucket{interval}: precision over the bucket's predicted"
            " mentions, recall over its reference mentions (their number under each bucket)."
        )
    return out


def _has_intervals(data: EvaluationResult, attribute: str) -> bool:
    return any("low" in e["metrics"]["strict"] for e in data.get("buckets", {})[attribute])


def _draw(data: EvaluationResult, name: str) -> bytes:
    if name in CHARTS:
        return CHARTS[name][0](data)
    if name == THRESHOLDS_FILE:
        return thresholds_chart(data)
    attribute = next(a for a in data.get("buckets", {}) if _bucket_file(a) == name)
    return bucket_chart(data, attribute)


def draw_all(data: EvaluationResult, jobs: int = 1) -> dict[str, bytes]:
    """Every chart as PNG bytes by file name; raises MissingExtra without matplotlib.

    With ``jobs`` > 1 the charts are drawn in that many forked processes (each takes a few
    tenths of a second); matplotlib must be imported before, so that no fork happens mid-import.
    """
    names = list(chart_captions(data))
    if jobs <= 1 or not can_fork():
        return {name: _draw(data, name) for name in names}
    _figure(1, 1)  # raises MissingExtra here, not in a worker

    def draw(name: str) -> bytes:
        return _draw(data, name)

    order = _balanced(names)
    drawn = dict(zip(order, forked_map(draw, order, min(jobs, len(names))), strict=True))
    return {name: drawn[name] for name in names}


# How long each chart takes to draw, roughly (the confusion matrix, a cell per pair of types, most).
_COST = {"confusion.png": 4.0, "errors.png": 3.0, "scores.png": 2.0, "credit.png": 1.5}


def _balanced(names: list[str]) -> list[str]:
    """The charts in the order to hand to workers that take two at a time: the costliest paired
    with the cheapest, so that no worker draws the two costliest while another waits."""
    by_cost = sorted(names, key=lambda n: -_COST.get(n, 2.0))
    out = []
    while by_cost:
        out.append(by_cost.pop(0))
        if by_cost:
            out.append(by_cost.pop())
    return out
