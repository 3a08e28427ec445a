"""A few shapes and words written as SVG text: the report's charts without a chart library.

Sizes are in pixels of a canvas 100 pixels to the inch; type sizes are given in points, as the
charts were designed (a point is 100/72 pixels here). Text widths are estimated from the
character classes of a sans-serif face (no font is read), so layouts leave some room.
"""

from __future__ import annotations

import math
from html import escape

PX_PER_PT = 100 / 72
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
# cividis (Nuñez, Anderton and Renslow 2018) at 17 even steps: readable with the common
# colour-vision deficiencies and in grey; colours between the steps are interpolated.
CIVIDIS = (
    "#00224e", "#002e6a", "#1a386f", "#32436d", "#434e6c", "#535a6d", "#61656f", "#6f7073", "#7d7c78",
    "#8c8878", "#9b9476", "#aba072", "#bcae6c", "#cdbb63", "#dec958", "#f0d846", "#fee838",
)
_NARROW = set("iljtfrI.,:;|!'()[] ")
_WIDE = set("mwMW%@")


def text_width(text: str, points: float) -> float:
    """About how many pixels ``text`` takes at ``points`` (the widest line where it has several)."""
    widest = 0.0
    for line in text.split("\n"):
        units = sum(0.34 if c in _NARROW else 0.9 if c in _WIDE else 0.72 if c.isupper() else 0.6 for c in line)
        widest = max(widest, units)
    return widest * points * PX_PER_PT


def _n(x: float) -> str:
    """A coordinate with two decimals at most, so that the same chart is the same bytes."""
    out = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if out == "-0" else out


class Canvas:
    """An SVG document built in order: later shapes are drawn over earlier ones."""

    def __init__(self, width: float, height: float) -> None:
        self.width = width
        self.height = height
        self.parts: list[str] = [f'<rect width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>']
        self.defs: list[str] = []

    def rect(self, x: float, y: float, w: float, h: float, fill: str, title: str | None = None) -> None:
        tip = f"<title>{escape(title)}</title>" if title else ""
        end = f">{tip}</rect>" if tip else "/>"
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.0))}" height="{_n(max(h, 0.0))}" '
                          f'fill="{fill}"{end}')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1.0) -> None:
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" '
                          f'stroke-width="{_n(width)}"/>')

    def text(
        self,
        x: float,
        y: float,
        text: str,
        points: float,
        anchor: str = "start",
        *,
        fill: str = "#000000",
        rotate: float = 0.0,
        middle: bool = True,
        line_gap: float = 1.2,
    ) -> None:
        """``text`` at (x, y): ``anchor`` start, middle or end; vertically centred on y where
        ``middle``, else standing on it. Lines split at newlines, centred together on y."""
        size = points * PX_PER_PT
        lines = text.split("\n")
        step = size * line_gap
        first = y - step * (len(lines) - 1) / 2 if middle else y - step * (len(lines) - 1)
        turn = f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate else ""
        baseline = ' dominant-baseline="central"' if middle else ""
        spans = "".join(
            f'<tspan x="{_n(x)}" y="{_n(first + k * step)}">{escape(line)}</tspan>' for k, line in enumerate(lines)
        )
        self.parts.append(f'<text font-size="{_n(size)}" text-anchor="{anchor}" fill="{fill}"{baseline}{turn}>'
                          f"{spans}</text>")

    def gradient(self, name: str, colours: tuple[str, ...]) -> str:
        """A vertical gradient from the last colour at the top to the first at the bottom; its url."""
        last = len(colours) - 1
        stops = "".join(f'<stop offset="{_n(k / last)}" stop-color="{c}"/>' for k, c in enumerate(reversed(colours)))
        self.defs.append(f'<linearGradient id="{name}" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient>')
        return f"url(#{name})"

    def svg(self, label: str) -> bytes:
        """The document, ``label`` its accessible name."""
        defs = f"<defs>{''.join(self.defs)}</defs>" if self.defs else ""
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(self.width)}" height="{_n(self.height)}" '
            f'viewBox="0 0 {_n(self.width)} {_n(self.height)}" font-family="{FONT}" role="img" '
            f'aria-label="{escape(label)}">'
        )
        return (head + defs + "".join(self.parts) + "</svg>\n").encode("utf-8")


def nice_ticks(top: float, most: int = 8, integer: bool = True) -> list[float]:
    """Ticks from 0 to ``top`` at a step of 1, 2 or 5 times a power of ten (at least 1 where
    ``integer``), at most ``most`` + 1 of them."""
    if top <= 0:
        return [0.0]
    raw = top / most
    power = 10 ** math.floor(math.log10(raw))
    step = next((k * power for k in (1, 2, 5, 10) if k * power >= raw), 10 * power)
    if integer:
        step = max(step, 1.0)
    count = math.floor(top / step + 1e-9)
    return [k * step for k in range(count + 1)]


def tick_label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def colour_at(fraction: float, colours: tuple[str, ...] = CIVIDIS) -> str:
    """The colour a fraction of the way along ``colours`` (0: the first, 1: the last)."""
    t = min(max(fraction, 0.0), 1.0) * (len(colours) - 1)
    k = min(int(t), len(colours) - 2)
    a, b = colours[k], colours[k + 1]
    w = t - k
    mixed = (round(int(a[i : i + 2], 16) * (1 - w) + int(b[i : i + 2], 16) * w) for i in (1, 3, 5))
    return "#" + "".join(f"{v:02x}" for v in mixed)
