"""The Elo-interval plot of a pool's standings, as SVG (ElementTree, so names are escaped)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from nardy.arena.competition.standings import PoolStandings
from nardy.svg import svg_number

__all__ = ["elo_plot"]

_ROW = 26
_LEFT = 150
_WIDTH = 620
_RIGHT = 30
_Z95 = 1.96


def elo_plot(pool: PoolStandings, names: Mapping[str, str] | None = None) -> str:
    """Each bot's Elo with its 95% interval on one axis (bots without a rating are listed, no bar);
    ``names``: ``bot_id -> the name to show``."""
    rated = [
        (b.bot, b.elo, b.elo_se) for b in pool.bots if b.elo is not None and math.isfinite(b.elo)
    ]
    lows = [e - _Z95 * (s or 0) for _, e, s in rated if s is None or math.isfinite(s)]
    highs = [e + _Z95 * (s or 0) for _, e, s in rated if s is None or math.isfinite(s)]
    lo = min([*lows, -100.0])
    hi = max([*highs, 100.0])
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    height = 40 + _ROW * max(len(pool.bots), 1)
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {_WIDTH} {height}",
            "class": "elo-plot",
            "role": "img",
        },
    )
    ET.SubElement(root, "title").text = f"Elo ratings with 95% intervals, pool {pool.label}"

    def x(value: float) -> float:
        return _LEFT + (value - lo) / (hi - lo) * (_WIDTH - _LEFT - _RIGHT)

    # Axis with ticks every 50/100/200… Elo.
    span = hi - lo
    step = next(s for s in (25, 50, 100, 200, 500, 1000, 2000, 5000, 10**9) if span / s <= 8)
    tick = math.ceil(lo / step) * step
    axis_y = height - 22
    ET.SubElement(
        root,
        "line",
        {
            "x1": svg_number(_LEFT),
            "x2": svg_number(_WIDTH - _RIGHT),
            "y1": svg_number(axis_y),
            "y2": svg_number(axis_y),
            "class": "axis",
        },
    )
    while tick <= hi:
        tx = x(tick)
        ET.SubElement(
            root,
            "line",
            {
                "x1": svg_number(tx),
                "x2": svg_number(tx),
                "y1": "10",
                "y2": svg_number(axis_y + 4),
                "class": "grid zero" if tick == 0 else "grid",
            },
        )
        label = ET.SubElement(
            root, "text", {"x": svg_number(tx), "y": svg_number(axis_y + 17), "class": "tick"}
        )
        label.text = f"{tick:+d}" if tick else "0"
        tick += step
    for row, bot in enumerate(pool.bots):
        y = 24 + row * _ROW
        name = ET.SubElement(
            root, "text", {"x": svg_number(_LEFT - 10), "y": svg_number(y + 5), "class": "name"}
        )
        name.text = (names or {}).get(bot.bot, bot.bot)
        if bot.elo is None or not math.isfinite(bot.elo):
            continue
        group = ET.SubElement(root, "g", {"class": "bot", "data-bot": bot.bot})
        if bot.elo_se is not None and math.isfinite(bot.elo_se):
            low, high = bot.elo - _Z95 * bot.elo_se, bot.elo + _Z95 * bot.elo_se
            ET.SubElement(
                group,
                "line",
                {
                    "x1": svg_number(x(low)),
                    "x2": svg_number(x(high)),
                    "y1": svg_number(y),
                    "y2": svg_number(y),
                    "class": "interval",
                },
            )
            for end in (low, high):
                ET.SubElement(
                    group,
                    "line",
                    {
                        "x1": svg_number(x(end)),
                        "x2": svg_number(x(end)),
                        "y1": svg_number(y - 6),
                        "y2": svg_number(y + 6),
                        "class": "interval",
                    },
                )
        ET.SubElement(
            group,
            "circle",
            {"cx": svg_number(x(bot.elo)), "cy": svg_number(y), "r": "5", "class": "elo"},
        )
    return ET.tostring(root, encoding="unicode")
