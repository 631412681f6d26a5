"""Results of a set of analysed games: per bot, raw and luck-adjusted points per game with their
standard errors.

The luck-adjusted result of a game (for one player) is his net points minus the luck of his rolls
plus the luck of his opponent's. Each roll's luck has expectation 0 given the position it was
rolled in, whatever the evaluator (it is an equity minus its mean over the rolls), so the adjusted
mean estimates the same quantity as the raw one: a control variate that removes the dice's share
of the variance as far as the evaluator sees it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from nardy.analysis.evaluator import make_evaluator
from nardy.analysis.game import GameAnalysis, PlayerStats, analyse_game
from nardy.analysis.records import GameInput
from nardy.analysis.search import Searcher

__all__ = [
    "BotResult",
    "adjusted_results",
    "analyse_games",
    "bot_results",
    "mean_se",
    "searchers_for",
]


def mean_se(values: list[float]) -> tuple[float, float]:
    """Mean and standard error (sample SD / √n; NaN for fewer than two values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


@dataclass(frozen=True, slots=True)
class BotResult:
    """One bot's numbers over a set of games."""

    stats: PlayerStats
    points_per_game: float
    points_se: float
    adjusted_per_game: float
    adjusted_se: float
    luck_per_game: float

    def to_json(self) -> dict[str, object]:
        def finite(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 5)

        return {
            **self.stats.to_json(),
            "points_per_game": finite(self.points_per_game),
            "points_se": finite(self.points_se),
            "luck_per_game": finite(self.luck_per_game),
            "luck_adjusted_per_game": finite(self.adjusted_per_game),
            "luck_adjusted_se": finite(self.adjusted_se),
        }


def bot_results(analyses: Iterable[GameAnalysis]) -> dict[str, BotResult]:
    """Per player name: totals and raw / luck-adjusted points per game with standard errors."""
    totals: dict[str, PlayerStats] = {}
    raw: dict[str, list[float]] = {}
    adjusted: dict[str, list[float]] = {}
    for analysis in analyses:
        for player in analysis.players:
            total = totals.setdefault(player.name, PlayerStats(player.name, games=0))
            total.add(player)
            raw.setdefault(player.name, []).append(player.points)
            adjusted.setdefault(player.name, []).append(player.adjusted)
    out = {}
    for name, total in totals.items():
        mean, se = mean_se(raw[name])
        adjusted_mean, adjusted_se = mean_se(adjusted[name])
        out[name] = BotResult(
            total, mean, se, adjusted_mean, adjusted_se, total.luck / max(total.games, 1)
        )
    return out


def searchers_for(games: Sequence[GameInput], evaluator: str) -> list[Searcher]:
    """A searcher for each game: one per variant and options, shared (with its caches) by the
    games of that variant. :class:`ValueError` for an unknown or unusable evaluator."""
    by_variant: dict[str, Searcher] = {}
    out = []
    for game in games:
        key = json.dumps([game.variant.name, game.variant.options], sort_keys=True, default=str)
        if key not in by_variant:
            by_variant[key] = Searcher(game.variant, make_evaluator(evaluator, game.variant))
        out.append(by_variant[key])
    return out


def analyse_games(
    games: Sequence[GameInput],
    evaluator: str = "neural",
    ply: int = 0,
    *,
    luck_ply: int = 0,
    on_decision: Callable[[], None] | None = None,
) -> list[GameAnalysis]:
    """Analyse every game (:func:`~nardy.analysis.game.analyse_game`)."""
    searchers = searchers_for(games, evaluator)
    return [
        analyse_game(game, searcher, ply, luck_ply=luck_ply, on_decision=on_decision)
        for game, searcher in zip(games, searchers, strict=True)
    ]


def adjusted_results(
    games: Sequence[GameInput], evaluator: str = "neural", ply: int = 0
) -> dict[str, BotResult]:
    """Per bot: raw and luck-adjusted points per game with standard errors, error rate and PR
    (what a standings table needs) for a set of game records."""
    return bot_results(analyse_games(games, evaluator, ply))
