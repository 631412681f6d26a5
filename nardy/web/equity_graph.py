"""The equity graph of an analysed game, as SVG (ElementTree, so every text is escaped): the
equity after each decision from White's side (the decider's, negated for Black's), each decision
a dot coloured by its mark and linked to its page, the luck of each roll as bars beneath
(lichess's analysis graph, with gnubg's luck)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

from nardy.analysis.game import DecisionAnalysis
from nardy.core.game import COLOURS
from nardy.svg import svg_number

__all__ = ["SYMBOLS", "equity_graph", "white_equity"]

SYMBOLS = {"blunder": "??", "error": "?", "doubtful": "?!"}
"""lichess's annotation of each mark."""


def white_equity(decision: DecisionAnalysis) -> float:
    """The equity after the decision (the decider's, per unit of the cube) from White's side."""
    return decision.equity_played if decision.player == 0 else -decision.equity_played


_W = 1000
_LEFT = 46
_RIGHT = 12
_TOP = 12
_EQ_H = 170
_GAP = 26
_LUCK_H = 56
_BOTTOM = 22


def _el(parent: ET.Element, tag: str, **attrs: object) -> ET.Element:
    clean = {k.rstrip("_").replace("_", "-"): str(v) for k, v in attrs.items() if v is not None}
    return ET.SubElement(parent, tag, clean)


def equity_graph(
    decisions: Sequence[DecisionAnalysis],
    names: tuple[str, str],
    current: int | None = None,
    href: Callable[[int], str] | None = None,
) -> str:
    """The SVG graph: one dot per decision (``circle.decision``, ``data-decision`` its number,
    ``data-mark`` its mark or ``none``, ``data-equity`` White's equity), linked to
    ``href(number)``; the area between the curve and 0 light where White is ahead, dark where
    Black is; the luck of each roll a bar beneath (``rect.luck``, up for White's luck)."""
    n = len(decisions)
    equities = [white_equity(d) for d in decisions]
    top_equity = max((abs(e) for e in equities), default=0.0)
    scale = min(3.0, max(1.0, math.ceil(top_equity * 2) / 2))
    top_luck = max((abs(d.luck) for d in decisions if d.luck is not None), default=0.0)
    luck_scale = max(0.5, math.ceil(top_luck * 4) / 4)
    height = _TOP + _EQ_H + _GAP + _LUCK_H + _BOTTOM
    inner = _W - _LEFT - _RIGHT
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {_W} {height}",
            "class": "equity-graph",
            "role": "img",
            "data-decisions": str(n),
        },
    )
    _el(root, "title").text = (
        f"Equity over the game from White's side ({names[0]}; {names[1]} is Black), "
        "one dot per decision, and the luck of each roll"
    )

    def x(index: int) -> float:
        return _LEFT + (index + 0.5) * inner / max(n, 1)

    def y(equity: float) -> float:
        clipped = max(-scale, min(scale, equity))
        return _TOP + (scale - clipped) / (2 * scale) * _EQ_H

    zero = y(0.0)
    _el(root, "rect", class_="field", x=_LEFT, y=_TOP, width=inner, height=_EQ_H)
    for value in (scale, scale / 2, 0.0, -scale / 2, -scale):
        _el(
            root,
            "line",
            class_="grid zero" if value == 0 else "grid",
            x1=_LEFT,
            x2=_W - _RIGHT,
            y1=svg_number(y(value)),
            y2=svg_number(y(value)),
        )
        label = _el(root, "text", class_="tick", x=_LEFT - 5, y=svg_number(y(value) + 4))
        label.text = f"{value:+g}" if value else "0"
    if n:
        curve = " ".join(f"{svg_number(x(i))},{svg_number(y(e))}" for i, e in enumerate(equities))
        area = f"{svg_number(x(0))},{svg_number(zero)} {curve} {svg_number(x(n - 1))},{svg_number(zero)}"
        defs = _el(root, "defs")
        for side, (y0, h) in {
            "white": (_TOP, zero - _TOP),
            "black": (zero, _TOP + _EQ_H - zero),
        }.items():
            clip = _el(defs, "clipPath", id=f"equity-{side}")
            _el(clip, "rect", x=_LEFT, y=svg_number(y0), width=inner, height=svg_number(h))
            _el(
                root,
                "polygon",
                class_=f"area {side}",
                points=area,
                clip_path=f"url(#equity-{side})",
            )
        _el(root, "polyline", class_="curve", points=curve)
    side_label = _el(root, "text", class_="side", x=_LEFT + 6, y=_TOP + 14)
    side_label.text = f"White ({names[0]}) ahead"
    side_label = _el(root, "text", class_="side", x=_LEFT + 6, y=_TOP + _EQ_H - 6)
    side_label.text = f"Black ({names[1]}) ahead"

    # The luck band: each roll's luck from White's side.
    middle = _TOP + _EQ_H + _GAP + _LUCK_H / 2
    luck_label = _el(root, "text", class_="band", x=_LEFT + 6, y=_TOP + _EQ_H + _GAP - 6)
    luck_label.text = f"luck of each roll (White's up, Black's down; ±{luck_scale:g})"
    _el(
        root,
        "line",
        class_="grid zero",
        x1=_LEFT,
        x2=_W - _RIGHT,
        y1=svg_number(middle),
        y2=svg_number(middle),
    )
    bar_width = max(1.0, min(10.0, inner / max(n, 1) * 0.7))
    for index, decision in enumerate(decisions):
        if decision.luck is None:
            continue
        luck = decision.luck if decision.player == 0 else -decision.luck
        h = abs(luck) / luck_scale * _LUCK_H / 2
        rect = _el(
            root,
            "rect",
            class_=f"luck {COLOURS[decision.player].lower()}",
            data_decision=decision.number,
            data_luck=f"{decision.luck:.4f}",
            x=svg_number(x(index) - bar_width / 2),
            y=svg_number(middle - h if luck > 0 else middle),
            width=svg_number(bar_width),
            height=svg_number(max(h, 0.5)),
        )
        _el(rect, "title").text = (
            f"{decision.number}. {COLOURS[decision.player]} rolls "
            f"{'-'.join(map(str, decision.dice))}: luck {decision.luck:+.3f}"
        )

    # The cursor, then the dots (on top, each a link).
    if current is not None and 1 <= current <= n:
        cx = svg_number(x(current - 1))
        _el(root, "line", class_="cursor", x1=cx, x2=cx, y1=_TOP, y2=_TOP + _EQ_H + _GAP + _LUCK_H)
    for index, (decision, equity) in enumerate(zip(decisions, equities, strict=True)):
        parent = root
        if href is not None:
            parent = _el(root, "a", href=href(decision.number))
        marked = decision.mark
        classes = ["decision", marked or "none"]
        if decision.number == current:
            classes.append("current")
        dot = _el(
            parent,
            "circle",
            class_=" ".join(classes),
            data_decision=decision.number,
            data_mark=marked or "none",
            data_equity=f"{equity:.4f}",
            cx=svg_number(x(index)),
            cy=svg_number(y(equity)),
            r=5.5 if marked else 3,
        )
        what = decision.played or "(no move)"
        note = f", {marked} {SYMBOLS[marked]} (lost {decision.loss:.3f})" if marked else ""
        _el(dot, "title").text = (
            f"{decision.number}. {COLOURS[decision.player]}: {what}, "
            f"White's equity {equity:+.3f}{note}"
        )
    axis = _el(root, "text", class_="tick axis", x=_W - _RIGHT, y=height - 6)
    axis.text = f"decision 1 … {n}"
    return ET.tostring(root, encoding="unicode")
