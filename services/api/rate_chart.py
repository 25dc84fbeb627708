"""The console's pages-per-second chart, drawn on the server as SVG coordinates.

Server-rendered so that the console needs no script and no chart library: the
template draws one polyline in a viewBox that scales to any screen width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 600, 120  # viewBox units; the SVG scales to its box


@dataclass(frozen=True)
class RateChart:
    points: str  # "x,y x,y ..." for <polyline points>, one per minute
    area: str  # the same line closed along the bottom, for a filled area
    peak_per_s: float  # the top of the scale
    last_per_s: float  # the last full minute's rate
    minutes: int


def rate_chart(history: Sequence[tuple[float, int]], now: float, minutes: int = 60) -> RateChart:
    """Pages per second in each of the last ``minutes`` full minutes (the current one,
    still filling, would always look like a drop). Minutes with no fetch are zero."""
    current = int(now // 60)
    first = current - minutes
    per_minute = {int(start // 60): n for start, n in history}
    rates = [per_minute.get(m, 0) / 60.0 for m in range(first, current)]
    peak = max(rates, default=0.0)
    scale = peak if peak > 0 else 1.0
    step = WIDTH / max(len(rates) - 1, 1)
    coords = [(round(i * step, 1), round(HEIGHT - rate / scale * (HEIGHT - 4), 1)) for i, rate in enumerate(rates)]
    points = " ".join(f"{x:g},{y:g}" for x, y in coords)
    area = f"0,{HEIGHT} {points} {WIDTH},{HEIGHT}" if coords else ""
    return RateChart(points, area, round(peak, 2), round(rates[-1], 2) if rates else 0.0, minutes)
