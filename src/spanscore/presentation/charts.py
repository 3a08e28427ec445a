"""The report's charts: the fixed four as SVG written here (``svg.Canvas``, no chart library),
the thresholds and bucket charts as PNG bytes drawn by matplotlib.

matplotlib is the optional extra ``report``: it is imported here, inside the functions, only where
a PNG chart is drawn, and only through ``Figure`` (never pyplot), so drawing neither needs a
display nor changes the backend of a program that already uses matplotlib.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any, Literal

from ..errors import MissingExtra
from ..results import ErrorKey, EvaluationResult, ScoreKey
from ..runtime.workers import can_fork, forked_map
from .common import PARTIAL_CRITERIA, match_metrics, partial_label, total_errors
from .svg import CIVIDIS, PX_PER_PT, Canvas, colour_at, nice_ticks, text_width, tick_label
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


def _missing(exc: ImportError) -> MissingExtra:
    return MissingExtra.of(exc, "charts (matplotlib)", "report")


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise _missing(exc) from exc
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


def _bar_axes(
    c: Canvas, box: tuple[float, float, float, float], top: float, ticks: list[float], ylabel: str, names: list[str]
) -> list[float]:
    """The frame of a bar chart in ``box`` (left, top, right, bottom): horizontal grid lines at
    ``ticks`` (values up to ``top``), the left and bottom axes, and each group's two-line label;
    the centre of each group."""
    left, upper, right, lower = box
    for t in ticks:
        y = lower - (lower - upper) * t / top
        c.line(left, y, right, y, "#dddddd", 0.8)
        c.line(left - 4, y, left, y, "#000000", 0.8)
        c.text(left - 7, y, tick_label(t), 8, "end")
    c.line(left, upper, left, lower, "#000000", 0.8)
    c.line(left, lower, right, lower, "#000000", 0.8)
    widest = max((text_width(tick_label(t), 8) for t in ticks), default=0.0)
    c.text(left - 7 - widest - 14, (upper + lower) / 2, ylabel, 10, "middle", rotate=-90)
    step = (right - left) / max(len(names), 1)
    centres = [left + step * (i + 0.5) for i in range(len(names))]
    for x, n in zip(centres, names, strict=True):
        c.line(x, lower, x, lower + 4, "#000000", 0.8)
        c.text(x, lower + 22, f"{n}\n({CHART_HELP.get(n, '')})", 8.5, "middle")
    return centres


def _legend(c: Canvas, right: float, y: float, items: list[tuple[str, str]], points: float = 9) -> None:
    """Coloured squares with their labels in one row ending at ``right``."""
    size = points * PX_PER_PT
    widths = [size + 5 + text_width(label, points) + 16 for _, label in items]
    x = right - sum(widths) + 16
    for (colour, label), w in zip(items, widths, strict=True):
        c.rect(x, y - size / 2, size, size, colour)
        c.text(x + size + 5, y, label, points)
        x += w


def scores_chart(data: EvaluationResult) -> bytes:
    """Figure 2 of Kong and Sullivan: precision, recall and F1 per criterion, as grouped bars (SVG)."""
    metrics = data["metrics"]
    names = [n for n in CHART_ORDER if n in metrics]
    c = Canvas(900, 480)
    box = (78.0, 62.0, 885.0, 415.0)
    title = "Precision, recall and F1 by criterion"
    c.text(box[0], 26, title, 12)
    bars_of: tuple[tuple[ScoreKey, str, str], ...] = (
        ("precision", "precision", BLUE),
        ("recall", "recall", ORANGE),
        ("f1", "F1", GREEN),
    )
    _legend(c, box[2], 26, [(colour, label) for _, label, colour in bars_of])
    top = 112.0
    centres = _bar_axes(c, box, top, [float(t) for t in range(0, 101, 20)], "score (%)", names)
    step = (box[2] - box[0]) / max(len(names), 1)
    width = 0.27 * step
    height = box[3] - box[1]
    for j, (key, label, colour) in enumerate(bars_of):
        for x, n in zip(centres, names, strict=True):
            value = metrics[n][key]
            h = height * 100 * (value or 0.0) / top
            left = x + (j - 1.5) * width
            shown = f"{100 * value:.1f}" if value is not None else "n/a"
            c.rect(left, box[3] - h, width, h, colour, f"{n} {label}: {shown}")
            c.text(left + width / 2, box[3] - h - 4, shown, 7, "middle", middle=False)
    return c.svg(title)


def credit_chart(data: EvaluationResult) -> bytes:
    """Figure 1 of Kong and Sullivan: matches with full and with partial credit per criterion (SVG)."""
    metrics = match_metrics(data["metrics"])
    names = [n for n in PARTIAL_CRITERIA if n in metrics]
    c = Canvas(750, 450)
    box = (96.0, 62.0, 735.0, 385.0)
    title = "Exact and partial matches by criterion"
    c.text(box[0], 26, title, 12)
    kinds: tuple[tuple[Literal["full", "partial"], str, str], ...] = (
        ("full", "exact (1.0 credit)", BLUE),
        ("partial", partial_label(data), ORANGE),
    )
    _legend(c, box[2], 26, [(colour, label) for _, label, colour in kinds])
    most = max([metrics[n]["full"] for n in names] + [metrics[n]["partial"] for n in names] + [1])
    top = most * 1.18
    centres = _bar_axes(c, box, top, nice_ticks(top, 6), "matched pairs", names)
    step = (box[2] - box[0]) / max(len(names), 1)
    width = 0.38 * step
    height = box[3] - box[1]
    for j, (key, label, colour) in enumerate(kinds):
        for x, n in zip(centres, names, strict=True):
            count = int(metrics[n][key])
            h = height * count / top
            left = x + (j - 1.0) * width
            c.rect(left, box[3] - h, width, h, colour, f"{n} {label}: {count}")
            c.text(left + width / 2, box[3] - h - 4, str(count), 9, "middle", middle=False)
    return c.svg(title)


def errors_chart(data: EvaluationResult) -> bytes:
    """The error taxonomy of Nejadgholi et al. (2020) as horizontal bars; Type-5 split by how the
    span differs (SVG).

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
    correct = int(e["correct"])
    title = f"Error taxonomy: {correct} correct, {n_errors} errors"
    c = Canvas(900, 500)
    box = (178.0, 50.0, 885.0, 405.0)
    left, upper, right, lower = box
    c.text(left, 26, title, 12)
    largest_error = max([int(e[key]) for key, _, _ in rows[1:]] + [1])
    cut = correct > 1.4 * largest_error
    scale = largest_error if cut else max(correct, largest_error)
    span = scale * 1.65

    def at(v: float) -> float:
        return left + (right - left) * v / span

    for t in nice_ticks(span, 8):
        c.line(at(t), upper, at(t), lower, "#dddddd", 0.8)
        c.line(at(t), lower, at(t), lower + 4, "#000000", 0.8)
        c.text(at(t), lower + 14, tick_label(t), 8, "middle")
    row_step = (lower - upper) / len(rows)
    height = 0.62 * row_step
    parts: tuple[tuple[ErrorKey, str, str], ...] = (
        ("right_label_overlap_longer", "Type-5: prediction longer", BLUE),
        ("right_label_overlap_shorter", "Type-5: prediction shorter", ORANGE),
        ("right_label_overlap_shifted", "Type-5: prediction shifted", YELLOW),
    )
    for k, (key, label, colour) in enumerate(rows):
        y = upper + row_step * (k + 0.5)
        top = y - height / 2
        count = int(e[key])
        c.line(left - 4, y, left, y, "#000000", 0.8)
        c.text(left - 7, y, label, 9, "end")
        if key == "correct" and cut:
            length = 1.2 * scale
            c.rect(left, top, at(length) - left, height, GREEN, f"correct: {count}")
            # Two white slashes across the bar mark where it was cut.
            for dx in (0.0, 0.025 * scale):
                x = 0.95 * scale + dx
                c.line(at(x - 0.015 * scale), y + 0.42 * row_step, at(x + 0.015 * scale), y - 0.42 * row_step,
                       "#ffffff", 4)
            c.text(at(length + scale * 0.012), y, f"{count}  (bar cut: not to scale)", 9)
            continue
        if colour is None:
            start = 0
            for sub, part, tint in parts:
                n = int(e[sub])
                c.rect(at(start), top, at(start + n) - at(start), height, tint, f"{part}: {n}")
                start += n
        else:
            c.rect(left, top, at(count) - left, height, colour, f"{key}: {count}")
        note = str(count)
        if key != "correct" and n_errors:
            note += f"  ({100 * count / n_errors:.1f}% of errors)"
        c.text(at(count + scale * 0.012), y, note, 9)
    c.line(left, upper, left, lower, "#000000", 0.8)
    c.line(left, lower, right, lower, "#000000", 0.8)
    c.text((left + right) / 2, lower + 34, "mentions (one-to-one matching)", 10, "middle")
    # The Type-5 parts' legend, centred under the chart.
    items = [(tint, f"{part} ({int(e[sub])})") for sub, part, tint in parts]
    points = 8
    widths = [points * PX_PER_PT + 5 + text_width(label, points) + 16 for _, label in items]
    _legend(c, 450 + (sum(widths) - 16) / 2, 480, items, points)
    return c.svg(title)


def confusion_chart(data: EvaluationResult) -> bytes:
    """The type confusion matrix as a heat map (SVG): reference types down, predicted types
    across, the spurious row and the missed column apart, each cell labelled as the terminal
    table labels it.

    Colours follow a log scale (cividis, readable with the common colour-vision deficiencies and
    in grey): the diagonal usually outnumbers the confusions many times over and would leave them
    all one colour on a linear scale. Empty cells are left pale grey and unlabelled.
    """
    confusion = data.get("confusion")
    types = list(confusion["types"]) if confusion else []
    n = len(types)
    size = n + 1
    width, height = min(max(3.0 + 0.62 * size, 5.5), 18.0), min(max(1.8 + 0.5 * size, 3.5), 16.0)
    title = "Type confusion, one-to-one matching"
    c = Canvas(100 * width, 100 * height)
    if not n or confusion is None:
        c.text(20, 26, title, 12)
        c.text(c.width / 2, c.height / 2, "no mentions on either side", 10, "middle")
        return c.svg(title)
    total = [[0] * size for _ in range(size)]
    label = [["" for _ in range(size)] for _ in range(size)]
    where = {t: i for i, t in enumerate(types)}
    for row in confusion["rows"]:
        i = n if row["reference"] is None else where[row["reference"]]
        j = n if row["predicted"] is None else where[row["predicted"]]
        total[i][j] = row["count"]
        matched = row["reference"] is not None and row["predicted"] is not None
        label[i][j] = confusion_cell(row["same_span"], row["overlapping"]) if matched else str(row["count"])
    top = max(max(max(r) for r in total), 2)
    # Type sizes from the room a cell has (in points), so that many types still fit their labels.
    cell_w, cell_h = 72 * (width - 2.8) / size, 72 * (height - 1.6) / size
    longest = max((len(text) for r in label for text in r), default=1)
    fontsize = max(3.0, min(9.0, 0.9 * cell_w / (0.6 * longest), 0.55 * cell_h))
    ticks = max(4.0, min(9.0, 0.7 * cell_h))
    names = [*types, MISSED]
    rows = [*types, SPURIOUS]
    margin_left = max(text_width(t, ticks) for t in rows) + 48
    margin_bottom = max(text_width(t, ticks) for t in names) * 0.71 + ticks * PX_PER_PT + 40
    bar_room = 110.0
    left, upper = margin_left, 48.0
    right, lower = c.width - bar_room, c.height - margin_bottom
    cw, ch = (right - left) / size, (lower - upper) / size
    c.text(left, 26, title, 12)

    def fraction(v: int) -> float:
        return math.log(v) / math.log(top) if v > 0 else 0.0

    for i in range(size):
        for j in range(size):
            v = total[i][j]
            x, y = left + j * cw, upper + i * ch
            c.rect(x, y, cw, ch, colour_at(fraction(v)) if v > 0 else "#f2f2f2",
                   f"{rows[i]} → {names[j]}: {label[i][j] or 0}")
            if label[i][j]:
                dark = fraction(v) < 0.55  # cividis is dark at its low end
                c.text(x + cw / 2, y + ch / 2, label[i][j], fontsize, "middle",
                       fill="#ffffff" if dark else "#000000")
    # The spurious row and the missed column are no types: set them apart.
    c.line(left, upper + n * ch, right, upper + n * ch, "#1f2328", 1.6)
    c.line(left + n * cw, upper, left + n * cw, lower, "#1f2328", 1.6)
    for k, name in enumerate(names):
        x = left + (k + 0.5) * cw
        c.text(x, lower + 8, name, ticks, "end", rotate=-45)
    for k, name in enumerate(rows):
        c.text(left - 6, upper + (k + 0.5) * ch, name, ticks, "end")
    c.text((left + right) / 2, c.height - 14, "predicted type", 10, "middle")
    c.text(18, (upper + lower) / 2, "reference type", 10, "middle", rotate=-90)
    # The colour bar: the log scale from 1 to the largest cell.
    bar_left, bar_w = right + 16, 14.0
    bar_top, bar_bottom = upper + 0.1 * (lower - upper), lower - 0.1 * (lower - upper)
    c.rect(bar_left, bar_top, bar_w, bar_bottom - bar_top, c.gradient("cividis", CIVIDIS))
    steps = [k * 10**p for p in range(len(str(top))) for k in (1, 2, 5) if k * 10**p <= top]
    last = math.inf
    for t in steps:
        y = bar_bottom - (bar_bottom - bar_top) * fraction(t)
        if last - y < 8 * PX_PER_PT:  # too close to the tick below to be read
            continue
        last = y
        c.line(bar_left + bar_w, y, bar_left + bar_w + 4, y, "#000000", 0.8)
        c.text(bar_left + bar_w + 7, y, str(t), 8)
    c.text(bar_left + bar_w + 62, (bar_top + bar_bottom) / 2, "mentions (log scale)", 9, "middle", rotate=-90)
    return c.svg(title)


# file name -> (drawing function, caption)
CHARTS = {
    "scores.svg": (scores_chart, "Precision, recall and F1 under each criterion (Kong and Sullivan, Figure 2)."),
    "credit.svg": (
        credit_chart,
        "Matched pairs with exact (full) and partial credit under each partial-credit criterion "
        "(Kong and Sullivan, Figure 1).",
    ),
    "errors.svg": (
        errors_chart,
        "Error taxonomy of the one-to-one matching (Type-1 to Type-5); Type-5 split by how the predicted "
        "span differs.",
    ),
    "confusion.svg": (
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


def draw_all(data: EvaluationResult, jobs: int = 1) -> tuple[dict[str, bytes], MissingExtra | None]:
    """Every chart by file name, in ``chart_captions``'s order: the fixed ones as SVG (written
    here, in a few milliseconds), the thresholds and bucket charts as PNG (matplotlib, imported
    only where one is drawn); and why the PNG ones were left out, where matplotlib is missing.

    With ``jobs`` > 1 the PNG charts are drawn in that many forked processes (each takes a few
    tenths of a second); matplotlib is imported before, so that no fork happens mid-import.
    """
    names = list(chart_captions(data))
    drawn = {name: CHARTS[name][0](data) for name in names if name in CHARTS}
    raster = [name for name in names if name not in CHARTS]
    missing = None
    if raster:
        try:
            _figure(1, 1)
        except MissingExtra as exc:
            missing, raster = exc, []
    if len(raster) <= 1 or jobs <= 1 or not can_fork():
        drawn.update((name, _draw(data, name)) for name in raster)
    else:

        def draw(name: str) -> bytes:
            return _draw(data, name)

        drawn.update(zip(raster, forked_map(draw, raster, min(jobs, len(raster))), strict=True))
    return {name: drawn[name] for name in names if name in drawn}, missing
