"""Charts as SVG text, with no plotting package: a scatter on log axes with its diagonal, and step curves of
sorted values. Deterministic: the same input gives the same bytes (coordinates rounded to 0.1, no ids or
dates); every text is escaped.

A `Figure` collects elements in the order drawn; `scatter` and `curves` draw a panel into a `Box` of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import attrs

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
"""Curve colors, in the order the curves are given."""
FONT = "font-family=\"sans-serif\""


def _n(value: float) -> str:
    """A coordinate: one decimal, no `-0.0`."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


@attrs.frozen
class Box:
    """A panel's plotting area: left, top, width, height (pixels)."""

    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height


@attrs.define
class Figure:
    width: int
    height: int
    elements: list[str] = attrs.field(factory=list)

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#000", dash: bool = False,
             width: float = 1.0) -> None:
        extra = ' stroke-dasharray="4 3"' if dash else ""
        self.elements.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" '
                             f'stroke-width="{width:g}"{extra}/>')

    def text(self, x: float, y: float, text: str, anchor: str = "middle", size: int = 12, rotate: bool = False) -> None:
        turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
        self.elements.append(f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" font-size="{size}" {FONT}{turn}>'
                             f'{escape(text, quote=False)}</text>')

    def points(self, points: Sequence[tuple[float, float]], color: str, radius: float = 2.0) -> None:
        """Dots at `points`, one `circle` each, in a group that colors them."""
        self.elements.append(f'<g class="points" fill="{color}" fill-opacity="0.4">')
        self.elements += (f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{radius:g}"/>' for x, y in points)
        self.elements.append("</g>")

    def polyline(self, points: Sequence[tuple[float, float]], color: str, label: str) -> None:
        coords = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self.elements.append(f'<polyline class="curve" points="{coords}" fill="none" stroke="{color}" '
                             f'stroke-width="1.8"><title>{escape(label, quote=False)}</title></polyline>')

    def svg(self) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}">')
        background = f'<rect width="{self.width}" height="{self.height}" fill="#fff"/>'
        return "\n".join([head, background, *self.elements, "</svg>"]) + "\n"


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2, 5 (and 3 when `lo` to `hi` spans at most two decades) times powers of ten, from the largest at or
    below `lo` to the smallest at or above `hi`."""
    marks = (1, 2, 5) if hi / lo > 100 else (1, 2, 3, 5)
    steps = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
             for m in marks]
    first = max(t for t in steps if t <= lo * (1 + 1e-12))
    last = min(t for t in steps if t > first and t >= hi * (1 - 1e-12))  # two ticks at least: a range to scale
    return [t for t in steps if first <= t <= last]


def _tick_label(value: float) -> str:
    return f"{value:g}"


def scatter(fig: Figure, box: Box, points: Sequence[tuple[float, float]], x_label: str, y_label: str,
            title: str, color: str = COLORS[0]) -> None:
    """Points (x, y > 0) on log axes with one range for both, the diagonal y = x dashed."""
    values = [v for p in points for v in p]
    if not values:
        _frame(fig, box, title, x_label, y_label)
        fig.text(box.left + box.width / 2, box.top + box.height / 2, "no positive prediction to show")
        _axes(fig, box)
        return
    ticks = log_ticks(min(values), max(values))
    lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])

    def at(x: float, y: float) -> tuple[float, float]:
        return (box.left + (math.log10(x) - lo) / (hi - lo) * box.width,
                box.bottom - (math.log10(y) - lo) / (hi - lo) * box.height)

    _frame(fig, box, title, x_label, y_label)
    for t in ticks:
        x, y = at(t, t)
        fig.line(x, box.bottom, x, box.top, "#ddd")
        fig.line(box.left, y, box.right, y, "#ddd")
        fig.text(x, box.bottom + 16, _tick_label(t), size=10)
        fig.text(box.left - 6, y + 4, _tick_label(t), anchor="end", size=10)
    fig.line(box.left, box.bottom, box.right, box.top, "#555", dash=True)
    fig.text(box.right - 6, box.top + 14, "measured = predicted", anchor="end", size=10)
    fig.points([at(x, y) for x, y in points], color)
    _axes(fig, box)


def curves(fig: Figure, box: Box, series: Sequence[tuple[str, Sequence[float]]], x_label: str, y_label: str,
           title: str) -> None:
    """Each series' values (fractions, at most 1) sorted ascending as a step curve over the share of its
    values (0 to 100%), one color each, with a legend; a dashed line at 10% (where P10 is read)."""
    low = min(min(values) for _, values in series)
    floor = min(0.9, math.floor(low * 10) / 10)

    def at(share: float, value: float) -> tuple[float, float]:
        return box.left + share * box.width, box.bottom - (value - floor) / (1 - floor) * box.height

    _frame(fig, box, title, x_label, y_label)
    for step in range(round(floor * 100), 101, 5 if 1 - floor <= 0.3 else 10):
        _, y = at(0, step / 100)
        fig.line(box.left, y, box.right, y, "#ddd")
        fig.text(box.left - 6, y + 4, f"{step}%", anchor="end", size=10)
    for share in range(0, 101, 20):
        x, _ = at(share / 100, floor)
        fig.text(x, box.bottom + 16, f"{share}%", size=10)
    x10, _ = at(0.1, floor)
    fig.line(x10, box.bottom, x10, box.top, "#999", dash=True)
    fig.text(x10 + 4, box.top + 24, "P10", anchor="start", size=10)
    for number, (label, values) in enumerate(series):
        ordered = sorted(values)
        count = len(ordered)
        points = [p for i, v in enumerate(ordered) for p in (at(i / count, v), at((i + 1) / count, v))]
        color = COLORS[number % len(COLORS)]
        fig.polyline(points, color, label)
        y = box.bottom - 12 - 16 * (len(series) - 1 - number)
        fig.line(box.left + box.width * 0.2, y - 4, box.left + box.width * 0.2 + 18, y - 4, color, width=2.5)
        fig.text(box.left + box.width * 0.2 + 24, y, label, anchor="start", size=11)
    _axes(fig, box)


def _frame(fig: Figure, box: Box, title: str, x_label: str, y_label: str) -> None:
    fig.text(box.left + box.width / 2, box.top - 10, title, size=13)
    fig.text(box.left + box.width / 2, box.bottom + 36, x_label)
    fig.text(box.left - 46, box.top + box.height / 2, y_label, rotate=True)


def _axes(fig: Figure, box: Box) -> None:
    fig.line(box.left, box.bottom, box.right, box.bottom)
    fig.line(box.left, box.bottom, box.left, box.top)
