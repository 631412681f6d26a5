"""The luck-adjusted points of a stored game, the input of an SPRT with ``on = "luck-adjusted"``.

A game's luck-adjusted result for ``a`` is his points minus the luck of his rolls plus the luck of
his opponent's (:mod:`nardy.analysis`, 0-ply, the variant's neural net). Each roll's luck has mean
zero given its position, so the adjusted points estimate the same points per game as the raw ones
with (much) less variance: the SPRT needs fewer games for the same error rates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from nardy.analysis.records import RecordError, from_arena_record
from nardy.engines.search import Searcher

if TYPE_CHECKING:
    # Only the row's shape: a store opened without a keeper takes the competition's
    # (nardy.arena.competition.totals), which analyses games with this module, so importing the
    # store here would close a cycle.
    from nardy.arena.records.storage import GameRow

__all__ = ["LuckAdjuster"]

EVALUATOR = "neural"
"""The evaluator of the luck (shipped with every variant)."""


class LuckAdjuster:
    """Luck-adjusted points from ``a``'s view, one searcher (with its caches) per variant."""

    def __init__(self, evaluator: str = EVALUATOR) -> None:
        self.evaluator = evaluator
        self._searchers: dict[str, Searcher] = {}

    def a_points(self, row: GameRow) -> float:
        """``row``'s luck-adjusted points for ``a``; :class:`ValueError` (a
        :class:`~nardy.analysis.records.RecordError`) when the row has no usable record."""
        from nardy.analysis.game import analyse_game
        from nardy.analysis.stats import searchers_for

        if row.winner is None:
            return 0.0
        if row.record is None:
            raise RecordError(f"{row.game_id}: a luck-adjusted SPRT needs the game's record")
        game = from_arena_record(row.game_id, row.record)
        key = json.dumps([game.variant.name, game.variant.options], sort_keys=True, default=str)
        searcher = self._searchers.get(key)
        if searcher is None:
            searcher = self._searchers[key] = searchers_for([game], self.evaluator)[0]
        analysis = analyse_game(game, searcher)
        a_colour = 0 if row.leg == 0 else 1  # as GameRow.a_points
        player: Any = analysis.players[a_colour]
        raw = float(player.points)
        if raw != row.a_points:
            raise RecordError(
                f"{row.game_id}: the record scores {raw:+g} for a, the stored row {row.a_points:+d}"
            )
        return float(player.adjusted)
