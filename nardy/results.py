"""The breakdown of game results for ``nardy play``'s summary: how the points per game came about.

Each game counts once under its kind of result — its value before the cube, named as RULES.md
names it where the variant's scoring has names (single / gammon / backgammon, oin / mars / koks),
``value N`` otherwise, ``N checkers`` for per-checker stakes, ``drop`` for a refused double — with
the cube's value and the points the winner scored, and how many of them each bot won. A draw
(plakoto, RULES.md §3.12.2) is its own kind, ``draw``, won by neither bot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from nardy.core.game import GameResult
from nardy.core.record import TERMINATION, outcome_of
from nardy.core.rules import BackgammonScoring, LongScoring, Scoring

__all__ = ["RESULT_NAMES", "TERMINATION", "ResultCounter", "arena_result_keys", "result_kind"]

RESULT_NAMES: Mapping[type, Mapping[int, str]] = {
    BackgammonScoring: {1: "single", 2: "gammon", 3: "backgammon"},  # RULES.md §3.1
    LongScoring: {1: "oin", 2: "mars", 3: "koks"},  # RULES.md §3.3.7
}
"""The names of the values before the cube, per scoring rule (others are ``value N``)."""


def arena_result_keys(result: GameResult) -> dict[str, Any]:
    """The keys an arena record's ``result`` has for this game (docs/tournaments.md):
    ``termination`` and ``multiplier`` (the value before the cube)."""
    outcome = outcome_of(result)
    return {"termination": outcome.termination, "multiplier": result.base_value}


def result_kind(scoring: Scoring, result: GameResult) -> str:
    """The kind of a finished game's result, in words."""
    if result.draw:
        return "draw"
    if result.reason == "drop":
        return "drop"
    if scoring.per_checker:
        kind = f"{result.base_value} checker{'s' if result.base_value != 1 else ''}"
    else:
        kind = RESULT_NAMES.get(type(scoring), {}).get(result.base_value, "")
        kind = kind or f"value {result.base_value}"
    return kind + (" (resigned)" if result.resigned else "")


_DRAW = 2
"""The slot under which a draw is counted (neither bot's win)."""


class ResultCounter:
    """Counts results by (kind, value, cube, points) and by the slot of the bot that won (draws
    apart: a draw's ``GameResult.winner`` is only who made the last step, not a winner)."""

    def __init__(self, scoring: Scoring) -> None:
        self.scoring = scoring
        self._counts: Counter[tuple[str, int, int, int, int]] = Counter()

    def add(self, result: GameResult, winner_slot: int) -> None:
        """One finished game, won by the bot of ``winner_slot`` (0 = A, 1 = B) unless a draw."""
        kind = result_kind(self.scoring, result)
        slot = _DRAW if result.draw else winner_slot
        key = (kind, result.base_value, result.cube_value, result.points, slot)
        self._counts[key] += 1

    @property
    def draws(self) -> int:
        """How many of the games were draws."""
        return sum(count for key, count in self._counts.items() if key[4] == _DRAW)

    def rows(self) -> list[dict[str, Any]]:
        """One row per kind of result, fewest points first: ``{"result", "value", "cube",
        "points", "wins": [A's, B's], "draws"}`` (``draws``: games of the row that were draws,
        which neither bot won)."""
        rows: dict[tuple[str, int, int, int], list[int]] = {}
        for (kind, value, cube, points, slot), count in self._counts.items():
            rows.setdefault((kind, value, cube, points), [0, 0, 0])[slot] += count
        return [
            {
                "result": kind,
                "value": value,
                "cube": cube,
                "points": points,
                "wins": counts[:2],
                "draws": counts[2],
            }
            for (kind, value, cube, points), counts in sorted(
                rows.items(), key=lambda item: (item[0][3], item[0][2], item[0][1], item[0][0])
            )
        ]
