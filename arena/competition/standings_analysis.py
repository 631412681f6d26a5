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
from nardy.analysis.stats import BotResult, bot_results, judge_of, searchers_for, self_judged
from nardy.arena.records.storage import StorageError, open_store
from nardy.engines.evaluator import STRONGEST

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
    judge: str = "neural"
    """The evaluator that judged the pool's games."""
    self_judged: tuple[str, ...] = ()
    """The bots that play by the judge's own net: their error rates are not skill."""

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "games": self.games,
            "judge": self.judge,
            "self_judged": list(self.self_judged),
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
    evaluator: str = STRONGEST,
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
    inputs: dict[str, list[GameInput]] = {}
    for done, (game, searcher) in enumerate(zip(games, searchers, strict=True), start=1):
        try:
            analysis = analyse_game(game, searcher, 0)
        except RecordError as error:
            raise AnalysisError(str(error)) from None
        by_variant.setdefault(analysis.variant, []).append(analysis)
        inputs.setdefault(analysis.variant, []).append(game)
        if on_game is not None:
            on_game(done, len(games))
    return [
        PoolAnalysis(
            variant,
            len(analyses),
            bot_results(analyses),
            judge_of(evaluator, inputs[variant][0]),
            tuple(self_judged(inputs[variant], evaluator)),
        )
        for variant, analyses in by_variant.items()
    ]


def analysis_table(pool: PoolAnalysis) -> Table:
    """A table of the bots, lowest error rate first, naming its judge; a bot judged by its own
    net is marked in the caption."""
    ranked = dict(sorted(pool.bots.items(), key=lambda item: item[1].stats.error_rate))
    title = (
        f"{pool.variant}: analysis (judged by {pool.judge}, 0-ply, {pool.games} games; "
        "± standard errors)"
    )
    table = results_table(ranked, title)
    if pool.self_judged:
        table.caption = (
            f"{', '.join(pool.self_judged)}: judged by its own net, so its error rate measures "
            "how it disagrees with itself, not its skill (--evaluator another)"
        )
    return table
