"""``rgb_array`` frames of a board, drawn with numpy alone (no image library needed).

The board from one player's view: his points 1-12 along the bottom from right to left, 13-24 along
the top from left to right (the text board's layout), his checkers light and the opponent's dark,
up to five per point (a sixth and more darken the top one's centre), the bar in the middle and
borne-off checkers as bars on the right.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from nardy.core.position import Position

Frame = npt.NDArray[np.uint8]

POINT: Final = 24
"""Width of a point in pixels; a checker is as wide."""
BAR: Final = 24
TRAY: Final = 24
HEIGHT: Final = 11 * POINT
WIDTH: Final = 12 * POINT + BAR + TRAY
_FELT: Final = (34, 110, 64)
_WOOD: Final = (110, 72, 38)
_POINTS: Final = ((190, 160, 110), (150, 50, 40))
_CHECKERS: Final = ((240, 236, 222), (30, 30, 34))
_MARK: Final = (200, 40, 40)

_Y, _X = np.mgrid[0:HEIGHT, 0:WIDTH]


def _column(point: int) -> tuple[int, bool]:
    """Left x of a point (1-24, the viewer's numbering) and whether it is on the top row."""
    top = point >= 13
    slot = point - 13 if top else 12 - point  # 0…11 from the left
    x = slot * POINT + (BAR if slot >= 6 else 0)
    return x, top


def _disc(frame: Frame, cx: float, cy: float, r: float, colour: tuple[int, int, int]) -> None:
    y0, y1 = max(int(cy - r), 0), min(int(cy + r) + 1, HEIGHT)
    x0, x1 = max(int(cx - r), 0), min(int(cx + r) + 1, WIDTH)
    ys, xs = _Y[y0:y1, x0:x1], _X[y0:y1, x0:x1]
    inside = (xs + 0.5 - cx) ** 2 + (ys + 0.5 - cy) ** 2 <= r * r
    frame[y0:y1, x0:x1][inside] = colour


def _stack(frame: Frame, x: int, top: bool, count: int, colour: tuple[int, int, int]) -> None:
    r = POINT / 2 - 1
    for i in range(min(count, 5)):
        cy = (i + 0.5) * POINT if top else HEIGHT - (i + 0.5) * POINT
        _disc(frame, x + POINT / 2, cy, r, colour)
    if count > 5:  # more than fit: a mark on the outermost checker
        cy = 4.5 * POINT if top else HEIGHT - 4.5 * POINT
        _disc(frame, x + POINT / 2, cy, r / 3, _MARK)


def board_rgb(position: Position) -> Frame:
    """An ``(HEIGHT, WIDTH, 3)`` uint8 frame of ``position`` from its mover's view."""
    frame = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
    frame[:] = _FELT
    frame[:, 6 * POINT : 6 * POINT + BAR] = _WOOD
    frame[:, 12 * POINT + BAR :] = _WOOD
    depth = 5 * POINT
    for point in range(1, 25):
        x, top = _column(point)
        xs, ys = _X[:, x : x + POINT] + 0.5 - (x + POINT / 2), _Y[:, x : x + POINT] + 0.5
        reach = ys if top else HEIGHT - ys  # distance from the point's base
        triangle = (reach <= depth) & (np.abs(xs) <= (POINT / 2) * (1 - reach / depth))
        frame[:, x : x + POINT][triangle] = _POINTS[point % 2]
    pinned = set(position.pinned)
    for point, count in enumerate(position.points, start=1):
        if count:
            x, top = _column(point)
            if point in pinned:
                # RULES.md §3.12.2: the other side's checker lies beneath the stack, at the base.
                _stack(frame, x, top, abs(count) + 1, _CHECKERS[0 if count > 0 else 1])
                _stack(frame, x, top, 1, _CHECKERS[1 if count > 0 else 0])
            else:
                _stack(frame, x, top, abs(count), _CHECKERS[0 if count > 0 else 1])
    bar_x = 6 * POINT
    # The mover's bar checkers sit in the lower half (he enters on the opponent's home, top right
    # for an opposite-direction game), the opponent's in the upper half.
    _stack(frame, bar_x, False, position.bar[0], _CHECKERS[0])
    _stack(frame, bar_x, True, position.bar[1], _CHECKERS[1])
    tray = 12 * POINT + BAR
    for side, top in ((0, False), (1, True)):
        off = position.off[side]
        for i in range(off):
            y = i * 6 + 2 if top else HEIGHT - (i * 6 + 6)
            frame[y : y + 4, tray + 3 : tray + TRAY - 3] = _CHECKERS[side]
    return frame
