"""nardy.svg draws a pinned checker (RULES.md §3.12.2, plakoto) beneath the stack that pins it:
the other side's colour, on the same point, in the slot at the board's edge, from either seat;
each side still shows its 15 checkers, and the pip bands count the pinned ones."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from pinned_positions import pinned_positions

from nardy.core import Position
from nardy.svg import board

SVG = "{http://www.w3.org/2000/svg}"


def _other_seat(point: int) -> int:
    return 25 - point  # plakoto is opposite-direction (RULES.md §1.2)


def _circles(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}circle") if "checker" in (e.get("class") or "")]


@pytest.mark.parametrize("flipped", [False, True])
def test_each_pinned_checker_lies_beneath_the_opposing_stack(flipped: bool) -> None:
    positions = pinned_positions()[:80]
    for position in positions:
        root = ET.fromstring(board(position, "plakoto", flipped=flipped))
        circles = _circles(root)
        pinned = [c for c in circles if "pinned" in (c.get("class") or "").split()]
        assert len(pinned) == len(position.pinned)
        for p in position.pinned:
            printed = str(_other_seat(p) if flipped else p)
            (under,) = [c for c in pinned if c.get("data-point") == printed]
            stack = [c for c in circles if c.get("data-point") == printed and c is not under]
            stack_colour = "white" if position.points[p - 1] > 0 else "black"  # White moves
            assert len(stack) == abs(position.points[p - 1])
            assert all(f"checker {stack_colour}" == c.get("class") for c in stack)
            assert stack_colour not in (under.get("class") or "")
            # Beneath: nearer the board's edge than every checker of the stack (the top row's
            # edge is y small, the bottom row's y large).
            y = float(under.get("cy") or 0)
            ys = [float(c.get("cy") or 0) for c in stack]
            assert y < min(ys) or y > max(ys)
            top_row = y < min(ys)
            assert all((cy > y) == top_row for cy in ys)
        # Every checker of both sides is drawn: on points (pinned included) and off.
        for colour, side in (("white", 0), ("black", 1)):
            on_board = sum(1 for c in circles if f"checker {colour}" in (c.get("class") or ""))
            assert on_board + position.off[side] == 15, (position, colour)


def test_pip_bands_count_pinned_checkers() -> None:
    # PL-02 after 8/5^ 1/off: White 13 on 1 and his 5; Black 7 + 7 on his 5 and 4, one pinned on
    # his 20 (White's 5): 35 + 28 + 20 = 83.
    position = Position.from_sides({5: 1, 1: 13}, {20: 7, 21: 7}, pinned=[5], off=(1, 0))
    root = ET.fromstring(board(position, "plakoto", pips=True))
    pips = {
        e.get("class"): e.get("data-pips") for e in root.iter() if e.get("data-pips") is not None
    }
    assert pips == {"pips white": "18", "pips black": "83"}
