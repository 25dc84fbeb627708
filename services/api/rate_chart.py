"""The console's pages-per-second chart, drawn on the server as SVG coordinates.

Server-rendered so that the console needs no script and no chart library. The plot
is WIDTH x HEIGHT units; the template draws it with room around for the axes: pages
per second on the left (0, half and the top of a round scale), time below (from
``minutes`` ago to now), so the line can be read without the caption.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH, HEIGHT = 600, 120  # the plot, in viewBox units; the SVG scales to its box


@dataclass(frozen=True)
class RateChart:
    points: str  # "x,y x,y ..." for <polyline points>, one per minute
    area: str  # the same line closed along the bottom, for a filled area
    peak_per_s: float  # the highest minute's rate
    last_per_s: float  # the last full minute's rate
    minutes: int
    top_per_s: float = 1.0  # the top of the scale: a round number at or above the peak
    y_ticks: list[tuple[float, str]] = field(default_factory=list)  # (y, label), bottom first
    x_ticks: list[tuple[float, str]] = field(default_factory=list)  # (x, label), oldest first


def round_top(peak: float) -> float:
    """The smallest of 1, 2, 5 x 10^k at or above ``peak`` (1 for an idle crawl)."""
    if peak <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(peak))
    for step in (1, 2, 5, 10):
        if step * power >= peak - 1e-12:
            return step * power
    return 10 * power


def _label(value: float) -> str:
    return f"{value:g}"


def rate_chart(history: Sequence[tuple[float, int]], now: float, minutes: int = 60) -> RateChart:
    """Pages per second in each of the last ``minutes`` full minutes (the current one,
    still filling, would always look like a drop). Minutes with no fetch are zero."""
    current = int(now // 60)
    first = current - minutes
    per_minute = {int(start // 60): n for start, n in history}
    rates = [per_minute.get(m, 0) / 60.0 for m in range(first, current)]
    peak = max(rates, default=0.0)
    top = round_top(peak)
    step = WIDTH / max(len(rates) - 1, 1)
    coords = [(round(i * step, 1), round(HEIGHT - rate / top * (HEIGHT - 4), 1)) for i, rate in enumerate(rates)]
    points = " ".join(f"{x:g},{y:g}" for x, y in coords)
    area = f"0,{HEIGHT} {points} {WIDTH},{HEIGHT}" if coords else ""
    y_ticks = [(round(HEIGHT - f * (HEIGHT - 4), 1), _label(top * f)) for f in (0.0, 0.5, 1.0)]
    x_ticks = [(0.0, f"{minutes} 分钟前"), (WIDTH / 2, f"{minutes / 2:g} 分钟前"), (float(WIDTH), "现在")]
    return RateChart(points, area, round(peak, 2), round(rates[-1], 2) if rates else 0.0, minutes,
                     top, y_ticks, x_ticks)  # fmt: skip
