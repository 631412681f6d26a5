"""Results of a set of analysed games: per bot, raw and luck-adjusted points per game with their
standard errors; for match games, matches won and the match equity per match instead.

The luck-adjusted result of a game (for one player) is his net points minus the luck of his rolls
plus the luck of his opponent's. Each roll's luck has expectation 0 given the position it was
rolled in, whatever the evaluator (it is an equity minus its mean over the rolls), so the adjusted
mean estimates the same quantity as the raw one: a control variate that removes the dice's share
of the variance as far as the evaluator sees it.

A match is played for the match, not for points (the kernel's
:meth:`~nardy.core.match.Match.add_result` adds a game's points uncapped: a dead cube can make a
game of a 3-point match "win 64"). So the games of a match with a known score count in match
terms (:class:`~nardy.analysis.game.MatchOutcome`): each bot's unit is the
match, his result in it the match equity it moved (+1 a match won from an even start, −1 one
lost), the luck of his rolls in the same unit, and the mean per match with its SE over matches.
Points per game then count the money games only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from nardy.analysis.game import GameAnalysis, PlayerStats, analyse_game
from nardy.analysis.records import GameInput
from nardy.engines.evaluator import (
    STRONGEST,
    judges_itself,
    make_evaluator,
    strongest_evaluator,
)
from nardy.engines.search import Searcher

__all__ = [
    "BotResult",
    "MatchResult",
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


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 5)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """One bot's match games (module doc): per match, the sum of its games' match results, luck
    and luck-adjusted results, all in match equity (ME = 2·MWC − 1: +1 a match won, −1 lost)."""

    matches: int
    """Matches he played a game of."""
    won: int
    """Matches he won (a game of his reached the match length)."""
    lost: int
    games: int
    equity_per_match: float
    equity_se: float
    luck_per_match: float
    """NaN where a match's luck has no measure (a variant without a match equity table)."""
    adjusted_per_match: float
    adjusted_se: float

    def to_json(self) -> dict[str, object]:
        return {
            "matches": self.matches,
            "won": self.won,
            "lost": self.lost,
            "games": self.games,
            "equity_per_match": _finite(self.equity_per_match),
            "equity_se": _finite(self.equity_se),
            "luck_per_match": _finite(self.luck_per_match),
            "luck_adjusted_per_match": _finite(self.adjusted_per_match),
            "luck_adjusted_se": _finite(self.adjusted_se),
        }


@dataclass(frozen=True, slots=True)
class BotResult:
    """One bot's numbers over a set of games: decisions over all of them, points over the
    money games, match equity over the match games (:attr:`match`)."""

    stats: PlayerStats
    points_per_game: float
    points_se: float
    adjusted_per_game: float
    adjusted_se: float
    luck_per_game: float
    match: MatchResult | None = None
    """His match games in match terms (None: he played no match game with a known score)."""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            **self.stats.to_json(),
            "points_per_game": _finite(self.points_per_game),
            "points_se": _finite(self.points_se),
            "luck_per_game": _finite(self.luck_per_game),
            "luck_adjusted_per_game": _finite(self.adjusted_per_game),
            "luck_adjusted_se": _finite(self.adjusted_se),
        }
        if self.match is not None:
            out["match"] = self.match.to_json()
        return out


@dataclass(slots=True)
class _MatchSums:
    """One bot's sums over the games of one match (ME)."""

    result: float = 0.0
    luck: float = 0.0
    adjusted: float = 0.0
    measured: bool = True
    """Every game's luck had a match measure."""
    won: bool = False
    lost: bool = False


def _match_result(sums: Mapping[str, _MatchSums], games: int) -> MatchResult:
    matches = list(sums.values())
    equity, equity_se = mean_se([m.result for m in matches])
    measured = all(m.measured for m in matches)
    luck = mean_se([m.luck for m in matches])[0] if measured else math.nan
    adjusted, adjusted_se = mean_se([m.adjusted for m in matches]) if measured else (math.nan,) * 2
    return MatchResult(
        len(matches),
        sum(m.won for m in matches),
        sum(m.lost for m in matches),
        games,
        equity,
        equity_se,
        luck,
        adjusted,
        adjusted_se,
    )


def bot_results(analyses: Iterable[GameAnalysis]) -> dict[str, BotResult]:
    """Per player name: totals, raw / luck-adjusted points per money game, and for match games
    the match equity per match (module doc), with standard errors."""
    totals: dict[str, PlayerStats] = {}
    raw: dict[str, list[float]] = {}
    adjusted: dict[str, list[float]] = {}
    per_match: dict[str, dict[str, _MatchSums]] = {}
    match_games: dict[str, int] = {}
    for analysis in analyses:
        outcome = analysis.match
        for colour, player in enumerate(analysis.players):
            name = player.name
            total = totals.setdefault(name, PlayerStats(name, games=0))
            raw.setdefault(name, [])
            adjusted.setdefault(name, [])
            if outcome is None:
                total.add(player)
                raw[name].append(player.points)
                adjusted[name].append(player.adjusted)
                continue
            total.add(player, points=False)
            match_games[name] = match_games.get(name, 0) + 1
            sums = per_match.setdefault(name, {}).setdefault(outcome.match_id, _MatchSums())
            sums.result += player.match_result or 0.0
            if player.match_luck is None or player.match_adjusted is None:
                sums.measured = False
            else:
                sums.luck += player.match_luck
                sums.adjusted += player.match_adjusted
            if outcome.ends_match and analysis.winner is not None:
                if analysis.winner == colour:
                    sums.won = True
                else:
                    sums.lost = True
    out = {}
    for name, total in totals.items():
        mean, se = mean_se(raw[name])
        adjusted_mean, adjusted_se = mean_se(adjusted[name])
        money_games = len(raw[name])
        luck = total.luck / max(money_games, 1) if money_games or not total.games else math.nan
        match = per_match.get(name)
        out[name] = BotResult(
            total,
            mean,
            se,
            adjusted_mean,
            adjusted_se,
            luck,
            None if match is None else _match_result(match, match_games[name]),
        )
    return out


def judge_of(evaluator: str, game: GameInput) -> str:
    """The evaluator that judges ``game``: ``evaluator``, or for ``strongest`` the strongest one
    available for the game's variant (:func:`~nardy.engines.evaluator.strongest_evaluator`)."""
    return strongest_evaluator(game.variant) if evaluator == STRONGEST else evaluator


def self_judged(games: Sequence[GameInput], evaluator: str) -> list[str]:
    """The bots of ``games`` that ``evaluator`` judges by their own net, each once, in order
    (:func:`~nardy.engines.evaluator.judges_itself`): their error rates are not skill."""
    found: dict[str, None] = {}
    for game in games:
        judge = judge_of(evaluator, game)
        for bot in game.players:
            if judges_itself(bot, judge):
                found[bot] = None
    return list(found)


def searchers_for(games: Sequence[GameInput], evaluator: str) -> list[Searcher]:
    """A searcher for each game: one per variant and options, shared (with its caches) by the
    games of that variant; ``evaluator`` may be ``strongest`` (:func:`judge_of`).
    :class:`ValueError` for an unknown or unusable evaluator."""
    by_variant: dict[str, Searcher] = {}
    out = []
    for game in games:
        key = json.dumps([game.variant.name, game.variant.options], sort_keys=True, default=str)
        if key not in by_variant:
            judge = make_evaluator(judge_of(evaluator, game), game.variant)
            by_variant[key] = Searcher(game.variant, judge)
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
