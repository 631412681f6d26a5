"""Standings with analysis: each bot's error rate and luck-adjusted points per game (with their
standard errors) over a tournament's stored games, by :mod:`nardy.analysis` at 0-ply
(``nardy arena standings --analysis``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from nardy.analysis.game import GameAnalysis, analyse_game
from nardy.analysis.records import GameInput, RecordError, from_arena_record
from nardy.analysis.report import results_table
from nardy.analysis.stats import BotResult, bot_results, searchers_for
from nardy.arena.storage import StorageError, open_store

__all__ = ["AnalysisError", "PoolAnalysis", "analysed_standings", "analysis_table"]


class AnalysisError(ValueError):
    """The games cannot be analysed (no evaluator for a variant, a record that does not replay)."""


@dataclass(frozen=True, slots=True)
class PoolAnalysis:
    """One variant's games analysed."""

    variant: str
    games: int
    bots: dict[str, BotResult]
    """Per bot, by the name it played under."""

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "games": self.games,
            "bots": {name: result.to_json() for name, result in self.bots.items()},
        }


def _stored_games(db: str, tournament_id: str) -> list[GameInput]:
    try:
        store = open_store(db, readonly=True)
    except StorageError as error:
        raise AnalysisError(str(error)) from None
    try:
        rows = store.games(tournament_id, records=True)
    except StorageError as error:
        raise AnalysisError(str(error)) from None
    finally:
        store.close()
    return [from_arena_record(r.game_id, r.record) for r in rows if r.record is not None]


def analysed_standings(
    db: str,
    tournament_id: str,
    evaluator: str = "neural",
    *,
    on_game: Callable[[int, int], None] | None = None,
) -> list[PoolAnalysis]:
    """Per variant of the tournament: each bot's error rate, PR, raw and luck-adjusted points
    per game with standard errors over its stored games; ``on_game(done, total)`` after each
    game. :class:`AnalysisError` for what cannot be analysed."""
    try:
        games = _stored_games(db, tournament_id)
        searchers = searchers_for(games, evaluator)
    except (RecordError, ValueError) as error:
        raise AnalysisError(str(error)) from None
    by_variant: dict[str, list[GameAnalysis]] = {}
    for done, (game, searcher) in enumerate(zip(games, searchers, strict=True), start=1):
        try:
            analysis = analyse_game(game, searcher, 0)
        except RecordError as error:
            raise AnalysisError(str(error)) from None
        by_variant.setdefault(analysis.variant, []).append(analysis)
        if on_game is not None:
            on_game(done, len(games))
    return [
        PoolAnalysis(variant, len(analyses), bot_results(analyses))
        for variant, analyses in by_variant.items()
    ]


def analysis_table(pool: PoolAnalysis, evaluator: str) -> Table:
    """A table of the bots, lowest error rate first."""
    ranked = dict(sorted(pool.bots.items(), key=lambda item: item[1].stats.error_rate))
    title = f"{pool.variant}: analysis ({evaluator}, 0-ply, {pool.games} games; ± standard errors)"
    return results_table(ranked, title)
