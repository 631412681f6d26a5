"""bgsage (PyPI ``bgsage``, the Open Sage C++ engine): ``bgbot_cpp.possible_moves(board, die1, die2)``.

Its board is 26 ints from the mover's view: ``b[1..24]`` the mover's points 1…24 (positive = mover,
negative = opponent), ``b[0]`` the opponent's checkers on the bar, ``b[25]`` the mover's; borne-off counts
are implied. ``possible_moves`` returns every distinct result board (same orientation, not flipped), or the
unchanged board when nothing can be played. It is a plain generator with no cache (``cpp/src/moves.cpp``:
``possible_boards``), so nothing needs disabling.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from . import CHECKERS, Case, Engine, EngineUnavailable, Key, Mode

NAME = "bgsage"


def board_of(case: Case) -> tuple[int, ...]:
    """bgsage's 26-int board of a case's position."""
    points = case.position["points"]
    bar = case.position.get("bar", (0, 0))
    return (bar[1], *points, bar[0])


def key_of_board(board: Any) -> Key:
    points = tuple(board[1:25])
    mover = sum(n for n in points if n > 0) + board[25]
    opponent = sum(-n for n in points if n < 0) + board[0]
    return (*points, board[25], board[0], CHECKERS - mover, CHECKERS - opponent)


def load() -> Engine:
    try:
        cpp = importlib.import_module("bgbot_cpp")
        version = metadata.version("bgsage")
    except (ImportError, metadata.PackageNotFoundError) as exc:
        raise EngineUnavailable(f"`pip install bgsage` (not installed: {exc})") from exc

    def prepare(case: Case) -> tuple[Any, ...]:
        return (board_of(case), case.dice[0], case.dice[1])

    def results(_args: tuple[Any, ...], out: Any) -> frozenset[Key]:
        return frozenset(key_of_board(b) for b in out)

    mode = Mode(
        label="bgsage possible_moves",
        returns="list of distinct result boards (26-int lists)",
        prepare=prepare,
        call=cpp.possible_moves,
        results=results,
        notes=("timed: bgbot_cpp.possible_moves(board_tuple, die1, die2)",),
    )
    return Engine(NAME, (("bgsage", version),), (mode,), notes=("no cache in its move generator",))
