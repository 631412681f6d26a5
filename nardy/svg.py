"""Boards as SVG: :func:`board` draws a position of any variant, python-chess ``chess.svg`` style.

The board is drawn from one player's seat, in that player's own coordinates (RULES.md §1.1): his
points 13…24 on the top row from left to right, 12…1 on the bottom row, his home (1…6) at the
bottom right, where his borne-off tray is. The opponent's checkers go where the variant's geometry
puts them (RULES.md §1.2): opposite direction, the opponent's point ``q`` is the viewer's
``25 − q`` and his tray is at the top right; same direction (long nardy and its family), ``q ± 12``,
his head is the viewer's 12 and his tray at the top left.

Every drawn thing has a class, so tests and pages can find it: ``checker white|black`` (one
element per checker, with ``data-point`` = the point number printed on the board, ``bar`` or
``off``), ``point p13`` (with ``data-point``), ``head``, ``bar``, ``tray``, ``die``, ``cube``,
``arrow`` (``arrow best`` for a second play drawn beside it), ``last-from``/``last-to``, ``count``. The position id is in ``<desc>`` and in the root's
``data-position``. Built with :mod:`xml.etree.ElementTree` only (and written out by :func:`_to_text`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from nardy.core.board_text import pip_counts
from nardy.core.notation import BAR, OFF, Step, parse_steps
from nardy.core.position import Geometry, Position, opposite_point
from nardy.core.variant import Variant

__all__ = [
    "COLOURS",
    "PINNED_LEGEND",
    "Colour",
    "CubeOwner",
    "Numbering",
    "SvgBoard",
    "board",
    "legend",
    "svg_number",
]

Colour = Literal["white", "black"]
CubeOwner = Literal["mover", "opponent"] | None
Numbering = Literal["seat", "mover"]

COLOURS: Mapping[str, str] = {
    "frame": "#5a3a22",
    "frame_edge": "#3b2514",
    "field": "#eadcbc",
    "point_dark": "#8f3b2b",
    "point_light": "#c9a66b",
    "bar": "#4d3120",
    "tray": "#3f2818",
    "label": "#f1e4c8",
    "head_label": "#ffd27a",
    "white": "#f7f1e3",
    "white_edge": "#8a7d66",
    "black": "#2a2522",
    "black_edge": "#0d0b0a",
    "highlight": "#f4b942",
    "arrow": "#2f7fd1",
    "best": "#1f9d55",
    "cube": "#fbf7ee",
    "cube_text": "#222222",
}
"""The default palette; any key can be replaced with ``board(..., colours={...})``."""

# Layout, in SVG user units (the ``size`` argument scales the whole drawing).
_D = 40  # checker diameter
_R = _D / 2 - 1
_PW = 44  # point width
_F = 12  # frame strip between trays, field and outer edge
_T = 56  # tray column width
_M = 30  # top and bottom frame, where the point numbers are
_STACK = 5 * _D  # height of a row's stacking area: five checkers, then the stack is compressed
_GAP = 64  # between the two rows
_TRI = 4.6 * _D  # triangle height
_SLAB = 8  # a borne-off checker seen from the side: height + 1 gap
_H = 2 * _STACK + _GAP  # height of the playing field
_HEIGHT = 2 * _M + _H
_BAND = 36  # the pips/score band above and below the board
_NAME_CHARS = 18  # a longer name is cut (with "…") so that the band keeps its layout
_PIPS_X = 340  # where the pip count starts in a band


@dataclass(frozen=True, slots=True)
class _Frame:
    """Column geometry, which depends on the bar's width (a real bar, or a hinge without one)."""

    bar: float

    @property
    def width(self) -> float:
        return 4 * _F + 2 * _T + 12 * _PW + self.bar

    @property
    def field_left(self) -> float:
        return 2 * _F + _T

    @property
    def bar_left(self) -> float:
        return self.field_left + 6 * _PW

    @property
    def left_tray(self) -> float:
        return _F

    @property
    def right_tray(self) -> float:
        return self.bar_left + self.bar + 6 * _PW + _F

    def column_x(self, column: int) -> float:
        """Centre x of board column 0…11 (left to right)."""
        x = self.field_left + column * _PW + _PW / 2
        return x + self.bar if column >= 6 else x


def _column_of(point: int) -> tuple[int, bool]:
    """(column 0…11, top row?) of the viewer's ``point`` 1…24."""
    if point >= 13:
        return point - 13, True
    return 12 - point, False


def _slot_y(top: bool, index: int, count: int) -> float:
    """Centre y of the ``index``-th checker (0 = at the edge) of a stack of ``count``."""
    step = _D if count <= 5 else (_STACK - _D) / (count - 1)
    offset = _R + 1 + index * step
    return _M + offset if top else _M + _H - offset


class SvgBoard(str):
    """An SVG document as a string that Jupyter and IPython display as a picture."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)


PINNED_LEGEND = "gold ring: a pinned checker (RULES.md §3.12.2)"
"""The line a page writes under a board that draws a pinned checker: its gold rim and its
``<title>`` (a tooltip, which a phone does not show) are otherwise the only explanation."""

_PINNED = re.compile(r'class="checker (?:white|black) pinned"')


def legend(svg: str) -> list[str]:
    """The legend lines for what a drawn board marks beyond the usual (a pinned checker), for
    the page to write under it; none for a board without such marks."""
    return [PINNED_LEGEND] if _PINNED.search(svg) else []


def svg_number(value: float) -> str:
    """A coordinate as SVG text: one decimal at most, no trailing zero (``12``, ``12.5``)."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _el(parent: ET.Element, tag: str, **attrs: object) -> ET.Element:
    """A child element; ``None`` attributes are dropped, ``class_`` becomes ``class``, and
    ``data_x`` / ``stroke_width`` become ``data-x`` / ``stroke-width``."""
    out: dict[str, str] = {}
    for key, value in attrs.items():
        if value is None:
            continue
        name = _ATTRIBUTE_NAMES.get(key)
        if name is None:
            name = _ATTRIBUTE_NAMES[key] = key.rstrip("_").replace("_", "-")
        out[name] = svg_number(value) if isinstance(value, float) else str(value)
    return ET.SubElement(parent, tag, out)


_ATTRIBUTE_NAMES: dict[str, str] = {}
""":func:`_el`'s keyword → attribute name, worked out once per keyword (a board has about 120
elements, and the Play page draws several a move)."""


def _steps_of(play: str | Iterable[Step] | None) -> list[Step]:
    if play is None:
        return []
    if isinstance(play, str):
        return parse_steps(play)
    return list(play)


def board(
    position: Position,
    variant: Variant | str | None = None,
    *,
    flipped: bool = False,
    mover: Colour = "white",
    last_play: str | Iterable[Step] | None = None,
    dice: Sequence[int] | None = None,
    cube: tuple[int, CubeOwner] | None = None,
    size: int | None = None,
    coordinates: bool = True,
    colours: Mapping[str, str] | None = None,
    numbering: Numbering = "seat",
    pips: bool = False,
    names: tuple[str, str] | None = None,
    score: tuple[int, int] | None = None,
    match_length: int = 0,
    crawford: bool = False,
    offered: int | None = None,
    best_play: str | Iterable[Step] | None = None,
) -> SvgBoard:
    """The SVG picture of ``position`` (seen from its mover, as every position in nardy is).

    :param variant: a variant or its name, for its geometry (where the opponent's checkers and
        tray are, the heads, whether there is a bar); None draws the mover's view with a bar and
        the opponent's tray at the top right, which is right for the backgammon family.
    :param flipped: draw it from the opponent's seat (the flip follows the variant's geometry).
    :param mover: the colour of the position's mover (the opponent has the other one).
    :param last_play: a play of the mover (text such as ``"24/18 13/11"`` or steps), in the
        mover's coordinates, drawn as arrows from each step's source to its destination; the
        position may be the one before or after it.
    :param dice: dice to show on the mover's half (a roll, or the steps of one segment).
    :param cube: ``(value, owner)`` with owner ``"mover"``, ``"opponent"`` or None (centred).
    :param size: width in pixels (the height follows); default: the natural size.
    :param coordinates: print the point numbers.
    :param colours: replacements for entries of :data:`COLOURS`.
    :param numbering: ``"seat"``: the points are numbered in the coordinates of the side the
        board is drawn from; ``"mover"``: in the mover's, wherever he sits (GNU Backgammon's
        rule: a play, written in the mover's coordinates, then reads on the board). Checkers'
        and points' ``data-point`` are the printed numbers.
    :param pips: write both sides' pip counts (RULES.md: a checker on its owner's point ``p``
        counts ``p``, on the bar 25) in a band above and below the board.
    :param names: (White's, Black's) names for those bands.
    :param score: (White's, Black's) match score before this game, in the bands;
        ``match_length`` (0: money play) and ``crawford`` (this is the Crawford game) beside it.
    :param offered: the value of a double offered to the mover (the cube before it is ``cube``):
        the cube, turned to this value, is drawn on the mover's half, where the dice would be.
    :param best_play: another play of the mover (an analysis' best play), drawn beside
        ``last_play`` as dashed arrows in the ``best`` colour (``class="arrow best"``).
    """
    palette = {**COLOURS, **(colours or {})}
    if isinstance(variant, str):
        from nardy.core import load_variant

        variant = load_variant(variant)
    name = "" if variant is None else variant.name
    geometry: Geometry = "opposite" if variant is None else variant.rules.geometry
    has_bar = True if variant is None else variant.rules.hitting.hits
    frame = _Frame(bar=52 if has_bar else 22)
    opponent: Colour = "black" if mover == "white" else "white"
    viewer, other = (opponent, mover) if flipped else (mover, opponent)
    shown = position.flip(geometry) if flipped else position

    def to_view(point: int) -> int:
        """A point of the position's mover in the coordinates the board is drawn in."""
        return opposite_point(point, geometry) if flipped else point

    relabel = flipped and numbering == "mover"

    def printed(point: int) -> int:
        """The number printed for the viewer's ``point``."""
        return opposite_point(point, geometry) if relabel else point

    numbered = mover if relabel or not flipped else viewer
    banded = pips or names is not None or score is not None
    band = _BAND if banded else 0
    width, height = frame.width, _HEIGHT + 2 * band
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "version": "1.1",
            "viewBox": f"0 0 {svg_number(width)} {svg_number(height)}",
            "class": f"nardy-board {name}".rstrip(),
            "data-position": position.id(),
            "data-variant": name,
            "data-mover": mover,
            "data-viewer": viewer,
        },
    )
    if size is not None:
        root.set("width", str(size))
        root.set("height", svg_number(size * height / width))
    to_move = "to move" if dice is None else "to play"
    root.set("role", "img")
    root.set("aria-label", f"{name or 'nardy'} board, {mover.title()} {to_move}")
    _el(root, "desc").text = (
        f"nardy position {position.id()} ({name or 'no variant given'}); {mover.title()} {to_move}; "
        f"drawn from {viewer.title()}'s seat, numbered in {numbered.title()}'s coordinates"
    )
    root.set("data-numbering", numbered)
    _defs(root, palette)
    _el(root, "rect", class_="frame", width=width, height=height, rx=10, fill=palette["frame"])
    canvas = root
    if banded:
        mover_pips, other_pips = pip_counts(position, geometry)
        counts = {mover: mover_pips, opponent: other_pips}
        for colour, top in ((other, True), (viewer, False)):
            index = 0 if colour == "white" else 1
            _band(
                root,
                width,
                0 if top else height - band,
                colour,
                name=None if names is None else names[index],
                pips=counts[colour] if pips else None,
                score=None if score is None else score[index],
                match=(match_length, crawford) if top else None,
                to_move=colour == mover,
                palette=palette,
            )
        canvas = _el(root, "g", class_="playing-area", transform=f"translate(0 {band})")

    # Frame, field, trays, bar.
    _el(
        canvas,
        "rect",
        class_="frame-edge",
        x=2,
        y=2,
        width=width - 4,
        height=_HEIGHT - 4,
        rx=9,
        fill="none",
        stroke=palette["frame_edge"],
        stroke_width=3,
    )
    for half in (0, 1):
        x = frame.field_left + half * (6 * _PW + frame.bar)
        _el(
            canvas,
            "rect",
            class_="field",
            x=x,
            y=_M,
            width=6 * _PW,
            height=_H,
            fill=palette["field"],
        )
    for x in (frame.left_tray, frame.right_tray):
        for top in (True, False):
            y = _M if top else _M + _H / 2 + 4
            _el(
                canvas,
                "rect",
                class_="tray",
                x=x,
                y=y,
                width=_T,
                height=_H / 2 - 4,
                rx=4,
                fill=palette["tray"],
            )
    _el(
        canvas,
        "rect",
        class_="bar" if has_bar else "hinge",
        x=frame.bar_left,
        y=_M - 6,
        width=frame.bar,
        height=_H + 12,
        fill=palette["bar"],
    )

    # Points.
    steps = _steps_of(last_play)
    sources = {to_view(s.src) for s in steps if s.src != BAR}
    targets = {to_view(s.dst) for s in steps if s.dst != OFF}
    heads = {24, opposite_point(24, geometry)} if geometry == "same" else set()
    for point in range(1, 25):
        column, top = _column_of(point)
        cx = frame.column_x(column)
        base = _M if top else _M + _H
        tip = base + _TRI if top else base - _TRI
        classes = ["point", f"p{printed(point)}", "dark" if column % 2 == 0 else "light"]
        if point in heads:
            classes.append("head")
        if point in sources:
            classes.append("last-from")
        if point in targets:
            classes.append("last-to")
        fill = palette["point_dark" if column % 2 == 0 else "point_light"]
        _el(
            canvas,
            "polygon",
            class_=" ".join(classes),
            data_point=printed(point),
            points=f"{svg_number(cx - _PW / 2 + 1)},{svg_number(base)} {svg_number(cx + _PW / 2 - 1)},{svg_number(base)} "
            f"{svg_number(cx)},{svg_number(tip)}",
            fill=fill,
            stroke=palette["highlight"] if point in sources | targets else None,
            stroke_width=3 if point in sources | targets else None,
        )
        if coordinates:
            label = _el(
                canvas,
                "text",
                class_="label head" if point in heads else "label",
                x=cx,
                y=_M / 2 + 5 if top else _M + _H + _M / 2 + 5,
                text_anchor="middle",
                font_family="Helvetica, Arial, sans-serif",
                font_size=14,
                font_weight="bold" if point in heads else None,
                fill=palette["head_label" if point in heads else "label"],
            )
            label.text = str(printed(point))

    # Checkers on the points. A pinned checker (RULES.md §3.12.2, plakoto) is the other side's,
    # drawn beneath the stack: in the slot at the edge, the stack above it.
    pinned = set(shown.pinned)
    for point in range(1, 25):
        count = shown.points[point - 1]
        if count == 0:
            continue
        colour = viewer if count > 0 else other
        column, top = _column_of(point)
        cx = frame.column_x(column)
        n = abs(count)
        under = 1 if point in pinned else 0
        if under:
            pinned_colour = other if count > 0 else viewer
            cy = _slot_y(top, 0, n + 1)
            _checker(canvas, pinned_colour, cx, cy, str(printed(point)), palette, pinned=True)
        for index in range(n):
            cy = _slot_y(top, index + under, n + under)
            _checker(canvas, colour, cx, cy, str(printed(point)), palette)
        if n > 5 - under:
            _count(canvas, cx, _slot_y(top, n - 1 + under, n + under), n, colour, palette)

    # The bar: the viewer's checkers on its upper half (they enter into the top right quarter),
    # the other side's on its lower half, each stack growing away from the middle.
    bar_x = frame.bar_left + frame.bar / 2
    for side, colour, upward in ((0, viewer, True), (1, other, False)):
        n = shown.bar[side]
        step = min(_D, (_STACK - _D) / max(n - 1, 1))
        for index in range(n):
            offset = _GAP / 2 + _R + 2 + index * step
            cy = _M + _H / 2 - offset if upward else _M + _H / 2 + offset
            _checker(canvas, colour, bar_x, cy, "bar", palette)
        if n > 1:
            offset = _GAP / 2 + _R + 2 + (n - 1) * step
            _count(canvas, bar_x, _M + _H / 2 + (-offset if upward else offset), n, colour, palette)

    # Borne-off checkers: each side's tray is beyond its own point 1.
    viewer_tray = (frame.right_tray, False)
    other_tray = (frame.right_tray if geometry == "opposite" else frame.left_tray, True)
    for side, colour, (tray_x, top) in ((0, viewer, viewer_tray), (1, other, other_tray)):
        n = shown.off[side]
        for index in range(n):
            y = _M + 4 + index * _SLAB if top else _M + _H - 4 - (index + 1) * _SLAB
            _el(
                canvas,
                "rect",
                class_=f"checker {colour}",
                data_point="off",
                x=tray_x + 6,
                y=y,
                width=_T - 12,
                height=_SLAB - 1,
                rx=2,
                fill=palette[colour],
                stroke=palette[f"{colour}_edge"],
                stroke_width=1,
            )
        if n:
            y = _M + 4 + n * _SLAB + 14 if top else _M + _H - 4 - n * _SLAB - 5
            text = _el(
                canvas,
                "text",
                class_="count off",
                x=tray_x + _T / 2,
                y=y,
                text_anchor="middle",
                font_family="Helvetica, Arial, sans-serif",
                font_size=13,
                fill=palette["label"],
            )
            text.text = f"{n} off"

    if cube is not None and offered is None:
        _cube(canvas, frame, cube, flipped, palette)
    if dice:
        # The mover's dice lie on the mover's half: the right one when he sits at the bottom.
        mover_right = not flipped
        _dice(canvas, frame, list(dice), mover, mover_right, palette)
    # The mover's own bar half and tray, wherever the board is drawn from.
    mover_tray, mover_up = (other_tray, False) if flipped else (viewer_tray, True)
    best_steps = _steps_of(best_play)
    if best_steps:
        _arrows(canvas, frame, best_steps, to_view, mover_tray, mover_up, palette, best=True)
    if steps:
        _arrows(canvas, frame, steps, to_view, mover_tray, mover_up, palette)

    if offered is not None:
        _cube(canvas, frame, (offered, None), flipped, palette, offer_right=not flipped)

    ET.indent(root, space=" ")
    return SvgBoard(_to_text(root))


_SPECIAL_ATTRIBUTE = re.compile('[&<>"\r\n\t]')
_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\r": "&#13;",
        "\n": "&#10;",
        "\t": "&#09;",
    }
)
_SPECIAL_TEXT = re.compile("[&<>]")
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _to_text(root: ET.Element) -> str:
    """``ET.tostring(root, encoding="unicode")``, character for character, for the elements this
    module builds (plain tag and attribute names, no comments), in about half its time (0.19
    against 0.34 ms of CPU for a backgammon board): the library's general serializer (a namespace
    scan, one call per element and per write) was half of a board's cost, and the Play page draws
    several boards a move (docs/play.md, "How fast it answers"). tests/viewer/test_svg.py
    compares the two on every variant's boards."""
    out: list[str] = []
    write = out.append

    def attribute(value: str) -> str:
        return value.translate(_ATTRIBUTE_ESCAPES) if _SPECIAL_ATTRIBUTE.search(value) else value

    def text(value: str) -> str:
        return value.translate(_TEXT_ESCAPES) if _SPECIAL_TEXT.search(value) else value

    def element(elem: ET.Element) -> None:
        tag = elem.tag
        write(f"<{tag}")
        for key, value in elem.items():
            write(f' {key}="{attribute(value)}"')
        inner = elem.text
        if inner or len(elem):
            write(">")
            if inner:
                write(text(inner))
            for child in elem:
                element(child)
            write(f"</{tag}>")
        else:
            write(" />")
        if elem.tail:
            write(text(elem.tail))

    element(root)
    return "".join(out)


def _defs(root: ET.Element, palette: Mapping[str, str]) -> None:
    defs = _el(root, "defs")
    for colour, light in (("white", "#ffffff"), ("black", "#5a524c")):
        gradient = _el(defs, "radialGradient", id=f"nardy-{colour}", cx="35%", cy="30%", r="75%")
        _el(gradient, "stop", offset="0%", stop_color=light)
        _el(gradient, "stop", offset="100%", stop_color=palette[colour])
    # One arrowhead per arrow colour: a move's ("arrow") and the best move's ("best").
    for marker_id, fill in (("nardy-arrowhead", "arrow"), ("nardy-arrowhead-best", "best")):
        marker = _el(
            defs,
            "marker",
            id=marker_id,
            viewBox="0 0 10 10",
            refX=5,
            refY=5,
            markerWidth=3.2,
            markerHeight=3.2,
            orient="auto-start-reverse",
        )
        _el(marker, "path", d="M 0 0 L 10 5 L 0 10 z", fill=palette[fill])


def _checker(
    root: ET.Element,
    colour: Colour,
    cx: float,
    cy: float,
    point: str,
    palette: Mapping[str, str],
    *,
    pinned: bool = False,
) -> None:
    """One checker; a pinned one (beneath an opposing stack) has the class ``pinned``, a title and
    a highlighted rim."""
    circle = _el(
        root,
        "circle",
        class_=f"checker {colour} pinned" if pinned else f"checker {colour}",
        data_point=point,
        cx=cx,
        cy=cy,
        r=_R,
        fill=f"url(#nardy-{colour})",
        stroke=palette["highlight"] if pinned else palette[f"{colour}_edge"],
        stroke_width=3 if pinned else 1.5,
    )
    if pinned:
        _el(circle, "title").text = f"{colour.title()}'s checker pinned on {point}"


def _count(
    root: ET.Element, cx: float, cy: float, n: int, colour: Colour, palette: Mapping[str, str]
) -> None:
    """The number of checkers, written on the top checker of a tall stack."""
    text = _el(
        root,
        "text",
        class_="count",
        x=cx,
        y=cy + 6,
        text_anchor="middle",
        font_family="Helvetica, Arial, sans-serif",
        font_size=17,
        font_weight="bold",
        fill=palette["black" if colour == "white" else "white"],
    )
    text.text = str(n)


_PIPS = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)),
}


def _dice(
    root: ET.Element,
    frame: _Frame,
    dice: list[int],
    colour: Colour,
    right: bool,
    palette: Mapping[str, str],
) -> None:
    size, gap = 36, 10
    total = len(dice) * size + (len(dice) - 1) * gap
    half_left = frame.bar_left + frame.bar if right else frame.field_left
    x = half_left + (6 * _PW - total) / 2
    y = _M + _H / 2 - size / 2
    pip = palette["black" if colour == "white" else "white"]
    for value in dice:
        group = _el(root, "g", class_=f"die {colour}", data_value=value)
        _el(
            group,
            "rect",
            x=x,
            y=y,
            width=size,
            height=size,
            rx=6,
            fill=palette[colour],
            stroke=palette[f"{colour}_edge"],
            stroke_width=1.5,
        )
        for dx, dy in _PIPS.get(value, ()):
            _el(
                group, "circle", cx=x + size / 2 + dx * 9, cy=y + size / 2 + dy * 9, r=3.3, fill=pip
            )
        x += size + gap


def _cube(
    root: ET.Element,
    frame: _Frame,
    cube: tuple[int, CubeOwner],
    flipped: bool,
    palette: Mapping[str, str],
    offer_right: bool | None = None,
) -> None:
    """The cube in the left column: in the middle when centred (showing 64, as real cubes do),
    near its owner otherwise; a cube on offer (``offer_right``: on the right half or the left)
    lies in the middle of the half of the player who must answer, turned to the new value."""
    value, owner = cube
    size = 38
    middle = _M + _H / 2
    if owner is None:
        cy = middle
    else:
        at_bottom = (owner == "mover") != flipped
        cy = middle + 62 if at_bottom else middle - 62
    x = frame.left_tray + (_T - size) / 2
    classes = "cube centred" if owner is None else f"cube {owner}"
    if offer_right is not None:
        half_left = frame.bar_left + frame.bar if offer_right else frame.field_left
        x = half_left + (6 * _PW - size) / 2
        classes = "cube offered"
    group = _el(root, "g", class_=classes, data_value=value)
    _el(
        group,
        "rect",
        x=x,
        y=cy - size / 2,
        width=size,
        height=size,
        rx=6,
        fill=palette["cube"],
        stroke=palette["frame_edge"],
        stroke_width=2,
    )
    text = _el(
        group,
        "text",
        x=x + size / 2,
        y=cy + 7,
        text_anchor="middle",
        font_family="Helvetica, Arial, sans-serif",
        font_size=19 if value < 100 else 14,
        font_weight="bold",
        fill=palette["cube_text"],
    )
    text.text = str(64 if owner is None and value == 1 and offer_right is None else value)


def _band(
    root: ET.Element,
    width: float,
    y: float,
    colour: Colour,
    *,
    name: str | None,
    pips: int | None,
    score: int | None,
    match: tuple[int, bool] | None,
    to_move: bool,
    palette: Mapping[str, str],
) -> None:
    """One side's band: its chip and name, pip count and score (the top band also says the
    match length and whether this is the Crawford game)."""
    group = _el(root, "g", class_=f"band {colour}" + (" to-move" if to_move else ""))
    middle = y + _BAND / 2
    _el(
        group,
        "circle",
        class_=f"chip {colour}",
        cx=_F + 14,
        cy=middle,
        r=9,
        fill=palette[colour],
        stroke=palette["highlight" if to_move else f"{colour}_edge"],
        stroke_width=3 if to_move else 1.5,
    )
    font = {"font_family": "Helvetica, Arial, sans-serif", "font_size": 17}
    label = colour.title()
    if name:
        short = name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "…"
        label = f"{short} ({colour.title()})"
    # The name may not run into the pip count, whatever its letters: it is clipped. (Every board
    # defines the same two clips, so boards sharing a page may share their ids.)
    clip_id = f"nardy-band-{'top' if y == 0 else 'bottom'}"
    clip = _el(_el(group, "defs"), "clipPath", id=clip_id)
    _el(clip, "rect", x=0, y=y, width=_PIPS_X - 12, height=_BAND)
    who = _el(
        group,
        "text",
        class_="who",
        x=_F + 30,
        y=middle + 5,
        fill=palette["label"],
        clip_path=f"url(#{clip_id})",
        **font,
    )
    who.text = label
    if to_move:
        who.set("font-weight", "bold")
    if pips is not None:
        text = _el(
            group,
            "text",
            class_=f"pips {colour}",
            data_pips=pips,
            x=_PIPS_X,
            y=middle + 5,
            fill=palette["label"],
            **font,
        )
        text.text = f"{pips} pips"
    right: list[str] = []
    if score is not None:
        right.append(f"score {score}")
    if match is not None and match[0]:
        right.append(f"match to {match[0]}" + (" · Crawford" if match[1] else ""))
    if right:
        text = _el(
            group,
            "text",
            class_=f"score {colour}",
            data_score=score,
            data_length=match[0] if match else None,
            data_crawford=("yes" if match[1] else "no") if match and match[0] else None,
            x=width - _F - 6,
            y=middle + 5,
            text_anchor="end",
            fill=palette["head_label"],
            **font,
        )
        text.text = " · ".join(right)


def _arrows(
    root: ET.Element,
    frame: _Frame,
    steps: list[Step],
    to_view: Callable[[int], int],
    tray: tuple[float, bool],
    bar_up: bool,
    palette: Mapping[str, str],
    *,
    best: bool = False,
) -> None:
    """One arrow per step, from the source's stack to the destination's (anchored at the second
    checker's place, so an arrow reads the same before and after the play); ``best``: dashed,
    bent the other way, in the ``best`` colour (so that a step both plays share shows twice)."""
    middle = _M + _H / 2

    def anchor(point: int, source: bool) -> tuple[float, float]:
        if source and point == BAR:
            offset = _GAP / 2 + _R + 2
            return frame.bar_left + frame.bar / 2, middle - offset if bar_up else middle + offset
        if not source and point == OFF:
            tray_x, top = tray
            return tray_x + _T / 2, _M + 40 if top else _M + _H - 40
        view = to_view(point)
        column, top = _column_of(view)
        return frame.column_x(column), _slot_y(top, 1, 1)

    for step in steps:
        x1, y1 = anchor(step.src, True)
        x2, y2 = anchor(step.dst, False)
        # A gentle curve towards the middle of the board, so a checker's chain of steps along
        # one row reads as separate hops; stop short of the target so the head stays visible.
        dx, dy = x2 - x1, y2 - y1
        length = max((dx * dx + dy * dy) ** 0.5, 1.0)
        nx, ny = -dy / length, dx / length
        if (((y1 + y2) / 2 - middle) * ny > 0) != best:
            nx, ny = -nx, -ny
        bend = min(0.18 * length, 60.0)
        qx, qy = (x1 + x2) / 2 + nx * bend, (y1 + y2) / 2 + ny * bend
        tx, ty = x2 - qx, y2 - qy
        tail = max((tx * tx + ty * ty) ** 0.5, 1.0)
        shorten = min(12.0, tail / 3)
        ex, ey = x2 - tx / tail * shorten, y2 - ty / tail * shorten
        _el(
            root,
            "path",
            class_="arrow best" if best else "arrow",
            data_step=f"{step.src}/{step.dst}",
            d=f"M {svg_number(x1)} {svg_number(y1)} Q {svg_number(qx)} {svg_number(qy)} {svg_number(ex)} {svg_number(ey)}",
            fill="none",
            stroke=palette["best" if best else "arrow"],
            stroke_width=6,
            stroke_dasharray="12 7" if best else None,
            stroke_linecap="round",
            opacity=0.85,
            marker_end="url(#nardy-arrowhead-best)" if best else "url(#nardy-arrowhead)",
        )
