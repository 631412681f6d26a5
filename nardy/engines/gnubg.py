"""GNU Backgammon as an engine (the optional extra ``nardy[gnubg]``): its module, its cubeless
probabilities of a position, and the cube model the gnubg bot and the analysis share.

The ``gnubg`` bot (:mod:`nardy.bots.gnubg_bot`) plays with it, the ``gnubg`` evaluator
(:mod:`nardy.engines.evaluator`) evaluates with it, and the cube analysis
(:mod:`nardy.analysis.cube`) reads its probabilities through :func:`janowski`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nardy.core.gnubg import board_from_position, board_of_counts
from nardy.core.position import Position
from nardy.engines.gnubg_thread import GnubgModule, gnubg_module
from nardy.quiet import quiet_stdout

__all__ = [
    "CUBE_LIFE",
    "Probabilities",
    "cubeless_probabilities",
    "cubeless_probabilities_of",
    "janowski",
    "load_gnubg",
]

CUBE_LIFE = 0.68
"""Janowski's cube efficiency ``x`` for money play (0 = dead cube, 1 = fully live)."""


def load_gnubg() -> Any:
    """The ``gnubg`` module (called on its own thread: see :mod:`nardy.engines.gnubg_thread`), or a
    clear error naming the extra to install."""
    try:
        module = gnubg_module()
    except ImportError:
        raise ValueError(
            "the gnubg bot needs the gnubg package: pip install 'nardy[gnubg]'"
        ) from None
    return module


@dataclass(frozen=True, slots=True)
class Probabilities:
    """gnubg's cubeless estimate for the player on roll: P(win), P(win ≥ gammon), P(win
    backgammon), P(lose ≥ gammon), P(lose backgammon)."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float

    @classmethod
    def of_output(cls, out: Sequence[float]) -> Probabilities:
        """The probabilities of ``gnubg.evaluate``'s output (its first five numbers)."""
        return cls(*(float(v) for v in out[:5]))

    @property
    def equity(self) -> float:
        """Cubeless money equity."""
        return (
            2 * self.win
            - 1
            + self.win_gammon
            + self.win_backgammon
            - self.lose_gammon
            - self.lose_backgammon
        )

    def outcomes(self) -> tuple[tuple[int, float], ...]:
        """(points won in units of the cube, probability): ±1, ±2, ±3."""
        return (
            (1, self.win - self.win_gammon),
            (2, self.win_gammon - self.win_backgammon),
            (3, self.win_backgammon),
            (-1, 1 - self.win - self.lose_gammon),
            (-2, self.lose_gammon - self.lose_backgammon),
            (-3, self.lose_backgammon),
        )

    def single(self) -> Probabilities:
        """The same with gammons counted single (Jacoby, centred cube)."""
        return Probabilities(self.win, 0.0, 0.0, 0.0, 0.0)


def janowski(p: Probabilities, owner: str, x: float = CUBE_LIFE) -> float:
    """Janowski's cubeful money equity of the player on roll, normalised to the cube value;
    ``owner`` is ``"centre"``, ``"me"`` or ``"opponent"``."""
    win = min(max(p.win, 1e-9), 1 - 1e-9)
    w = (win + p.win_gammon + p.win_backgammon) / win  # average points of a win
    lose = 1 - win
    loss = (lose + p.lose_gammon + p.lose_backgammon) / lose  # average points of a loss
    dead = win * w - lose * loss
    take_point = (loss - 0.5) / (w + loss + 0.5)
    cash_point = (loss + 1.0) / (w + loss + 0.5)
    if owner == "me":
        live = 1.0 if win >= cash_point else win * (w + loss + 0.5) - loss
    elif owner == "opponent":
        live = -1.0 if win <= take_point else win * (w + loss + 0.5) - loss - 0.5
    elif win <= take_point:
        live = -1.0
    elif win >= cash_point:
        live = 1.0
    else:
        live = -1.0 + 2.0 * (win - take_point) / (cash_point - take_point)
    return (1 - x) * dead + x * live


def cubeless_probabilities_of(
    gnubg: GnubgModule, positions: Sequence[Position], cubeinfo: Any, context: Any
) -> list[Probabilities]:
    """:func:`cubeless_probabilities` of each of ``positions`` (kernel positions, trusted), in one
    call on gnubg's thread with its output silenced once: a call a position spent some 200 µs
    handing over and redirecting, against a few for the evaluation."""
    boards = [board_of_counts(position.points, position.bar) for position in positions]

    def evaluate_all(module: Any) -> list[Probabilities]:
        with quiet_stdout():
            return [
                Probabilities.of_output(module.evaluate(board, cubeinfo, context))
                for board in boards
            ]

    return gnubg.with_module(evaluate_all)


def cubeless_probabilities(
    gnubg: Any, position: Position, cubeinfo: Any, context: Any
) -> Probabilities:
    """gnubg's cubeless probabilities for the player on roll in ``position`` (``cubeinfo`` and
    ``context``: gnubg's cube info and evaluation context, e.g. a bot's match and ply)."""
    board = board_from_position(position.points, position.bar)
    with quiet_stdout():
        out = gnubg.evaluate(board, cubeinfo, context)
    return Probabilities.of_output(out)
