"""A position as a text board, laid out like a real one (used by ``nardy show``).

The board is drawn from one player's seat, in that player's own coordinates (RULES.md §1.1): his points
13…24 on the top row from left to right, his points 12…1 on the bottom row, his home (1…6) at the bottom
right. ``X`` always marks the mover's checkers and ``O`` the opponent's; a cell shows the number of
checkers on the point (``5X``) or ``.`` when it is empty; a checker pinned beneath the stack (plakoto,
RULES.md §3.12.2) adds its side's letter in lower case (``2Xo``: two X checkers pinning one O). Below the board come the bar and borne-off
counts and both pip counts; above it, which side is shown and whose coordinates number the points.

Absolute numbering (RULES.md §1.3) is White's coordinates. A position does not know its mover's colour,
so :func:`render_board` takes it as ``mover_colour``; Black's own point ``q`` is absolute
``opp(q)`` (``25 − q`` in opposite-direction variants, ``q ± 12`` in same-direction ones).
"""

from __future__ import annotations

from typing import Literal

from nardy.core.position import Geometry, Position, opposite_point
from nardy.core.variant import Variant

__all__ = ["Colour", "Side", "pip_counts", "render_board"]

Side = Literal["mover", "opponent"]
Colour = Literal["white", "black"]

_CELL = 4
"""Characters per point on the board."""
_TOP = (range(13, 19), range(19, 25))
_BOTTOM = (range(12, 6, -1), range(6, 0, -1))


def pip_counts(position: Position, geometry: Geometry) -> tuple[int, int]:
    """(mover's, opponent's) pip counts, each in the side's own coordinates: a checker on its owner's
    point ``p`` counts ``p``, one on the bar counts 25."""
    mover = 25 * position.bar[0] + sum(p * n for p, n in position.side(0, geometry).items())
    opponent = 25 * position.bar[1] + sum(p * n for p, n in position.side(1, geometry).items())
    if position.pinned:  # pinned checkers count where they lie
        mover += sum(position.pinned_of(0, geometry))
        opponent += sum(position.pinned_of(1, geometry))
    return mover, opponent


def render_board(
    position: Position,
    variant: Variant,
    *,
    side: Side = "mover",
    absolute: bool = False,
    mover_colour: Colour = "white",
) -> str:
    """The text board of ``position`` (mover's view) for ``variant``.

    :param side: whose seat and coordinates the board is drawn from (the opponent's view flips the
        position with the variant's geometry).
    :param absolute: number the points in absolute numbering (White's coordinates) instead of the
        shown side's own coordinates; the layout stays that of the shown side's seat.
    :param mover_colour: the mover's colour, which decides what absolute numbering is.
    """
    geometry = variant.rules.geometry
    shown = position if side == "mover" else position.flip(geometry)
    own, other = ("X", "O") if side == "mover" else ("O", "X")
    opponent_colour: Colour = "black" if mover_colour == "white" else "white"
    shown_colour = mover_colour if side == "mover" else opponent_colour

    def label(point: int) -> int:
        if absolute and shown_colour == "black":
            return opposite_point(point, geometry)
        return point

    def cell(point: int) -> str:
        count = shown.points[point - 1]
        text = "." if count == 0 else f"{count}{own}" if count > 0 else f"{-count}{other}"
        if point in shown.pinned:
            text += (other if count > 0 else own).lower()
        return text.rjust(_CELL)

    has_bar = variant.rules.hitting.hits
    gap = " " * 5

    def row(quarters: tuple[range, range], labels: bool) -> str:
        left, right = (
            "".join(str(label(p)).rjust(_CELL) if labels else cell(p) for p in quarter)
            for quarter in quarters
        )
        middle = " BAR " if labels and has_bar else gap
        return f"{left} |{middle}| {right}"

    rule = "-" * (6 * _CELL + 1) + "+-----+" + "-" * (6 * _CELL + 1)
    name = {"white": "White", "black": "Black"}
    if absolute:
        numbering = f"absolute (White's coordinates; the mover is {name[mover_colour]})"
        legend = f"X = mover ({name[mover_colour]}), O = opponent ({name[opponent_colour]})"
    else:
        numbering = f"the {side}'s own coordinates ({own} moves 24 → 1, home 1–6)"
        legend = "X = mover (to play), O = opponent"
    mover_pips, opponent_pips = pip_counts(position, geometry)
    lines = [
        f"Position {position.id()} ({variant.name})",
        legend,
        f"Seen by: the {side}" + (f" ({name[shown_colour]})" if absolute else ""),
        f"Numbering: {numbering}",
        "",
        row(_TOP, True),
        rule,
        row(_TOP, False),
        row(_BOTTOM, False),
        rule,
        row(_BOTTOM, True),
        "",
    ]
    if has_bar:
        lines.append(f"Bar:  X {position.bar[0]}   O {position.bar[1]}")
    if position.pinned:
        lines.append("Pinned: x / o beneath a stack (e.g. 2Xo: two X checkers pinning one O)")
    lines.append(f"Off:  X {position.off[0]}   O {position.off[1]}")
    lines.append(f"Pips: X {mover_pips}   O {opponent_pips}   (each side in its own coordinates)")
    return "\n".join(line.rstrip() for line in lines) + "\n"
