"""Luck-adjusted points per game against raw points per game: means and standard errors on the
same games.

    python benchmarks/measure_luck_adjustment.py [--variant long] [--bots neural,heuristic]
        [--games 300] [--evaluator neural] [--seed 1] [--budget-s 170]
    python benchmarks/measure_luck_adjustment.py --db T.db [--tournament T] [--bots A,B]
        [--analysis analysis.json | --evaluator neural] [--games N]

Without ``--db``: plays games of the two bots (colours alternating, game i on dice seed
SEED*1000003+i, money play without the cube), analyses each at 0-ply with ``--evaluator`` and
prints, for the first bot, the raw and the luck-adjusted points per game with their standard
errors and the ratio of the SEs. Games stop being started after ``--budget-s`` seconds.

With ``--db``: the stored games of a duplicate-dice tournament (``nardy arena run``,
``duplicate = true``) between the two bots, analysed here at 0-ply, or read from the output of
``nardy analyze --db T.db --json --show none`` given as ``--analysis`` (so one analysis serves
its timing and these figures). Besides the per-game figures it gives the duplicate-dice SE (over
pairs: the two games of a pair share their dice, seats swapped), the adjusted SE over pairs, and
where the adjusted result's variance comes from: the skill term (the opponent's equity lost minus
one's own, at 0-ply) and the rest (the opening's equity and the evaluator's inconsistency
between its value of a position and the mean of its values one roll later).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.analysis.game import analyse_game
from nardy.analysis.records import from_arena_record, from_kernel_record
from nardy.analysis.stats import mean_se, searchers_for
from nardy.bots import make_bot, play_game
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings
from nardy.engines.search import Searcher


@dataclass(frozen=True, slots=True)
class GameNumbers:
    """One game from the first bot's view."""

    unit: str
    """The duplicate pair (schedule unit) the game belongs to."""
    raw: float
    adjusted: float
    luck: float
    """His luck minus his opponent's (raw − adjusted)."""
    skill: float
    """The opponent's equity lost minus his own (0-ply, summed over the game)."""


def _played(args: argparse.Namespace) -> tuple[list[float], list[float]]:
    variant = load_variant(args.variant)
    a, b = args.bots.split(",")
    raw, adjusted = [], []
    started = time.perf_counter()
    searcher = None
    for index in range(args.games or 300):
        if time.perf_counter() - started > args.budget_s:
            break
        a_white = index % 2 == 0
        bots = (make_bot(a, index), make_bot(b, index))
        if not a_white:
            bots = (bots[1], bots[0])
        game = play_game(
            variant, bots, SeededDice(args.seed * 1_000_003 + index), cube=CubeSettings()
        )
        record = game.record()
        names = (a, b) if a_white else (b, a)
        inputs = from_kernel_record(str(index), record, names, CubeSettings())
        if searcher is None:
            searcher = searchers_for([inputs], args.evaluator)[0]
        analysis = analyse_game(inputs, searcher)
        mine = analysis.players[0 if a_white else 1]
        raw.append(mine.points)
        adjusted.append(mine.adjusted)
    return raw, adjusted


def _stored(args: argparse.Namespace) -> list[GameNumbers]:
    from nardy.arena.records.storage import open_store

    a = args.bots.split(",")[0]
    store = open_store(args.db, readonly=True)
    try:
        ids = (
            [args.tournament] if args.tournament else [t.tournament_id for t in store.tournaments()]
        )
        rows = [row for t in ids for row in store.games(t, records=args.analysis is None)]
        rows = rows[: args.games] if args.games else rows
    finally:
        store.close()
    # The two games of a duplicate pair share their round and dice seed (seats swapped).
    units = {
        row.game_id: f"{row.pool}:{row.round}:{row.seed}" for row in rows if row.winner is not None
    }
    per_game: dict[str, dict[str, float]] = {}
    if args.analysis is not None:
        with open(args.analysis, encoding="utf-8") as handle:
            for game in json.load(handle)["games"]:
                for player in game["players"].values():
                    per_game.setdefault(game["game"], {})[player["name"]] = _numbers(player)
    else:
        searchers: dict[str, Searcher] = {}
        for row in rows:
            if row.winner is None or row.record is None:
                continue
            inputs = from_arena_record(row.game_id, row.record)
            if inputs.variant.name not in searchers:
                searchers[inputs.variant.name] = searchers_for([inputs], args.evaluator)[0]
            analysis = analyse_game(inputs, searchers[inputs.variant.name])
            for player in analysis.players:
                per_game.setdefault(row.game_id, {})[player.name] = {
                    "raw": player.points,
                    "adjusted": player.adjusted,
                    "luck": player.luck,
                    "loss": player.total_loss,
                }
    out = []
    for game_id, unit in units.items():
        players = per_game.get(game_id)
        if players is None or a not in players or len(players) != 2:
            continue
        mine = players[a]
        other = next(v for k, v in players.items() if k != a)
        out.append(
            GameNumbers(
                unit,
                mine["raw"],
                mine["adjusted"],
                mine["luck"] - other["luck"],
                other["loss"] - mine["loss"],
            )
        )
    return out


def _numbers(player: dict[str, float]) -> dict[str, float]:
    """A player's numbers from ``nardy analyze --json`` (total loss = error rate × decisions)."""
    return {
        "raw": float(player["points"]),
        "adjusted": float(player["luck_adjusted"]),
        "luck": float(player["luck"]),
        "loss": float(player["error_rate"]) * float(player["decisions"]),
    }


def _pair_means(games: list[GameNumbers], field: str) -> list[float]:
    by_unit: dict[str, list[float]] = defaultdict(list)
    for game in games:
        by_unit[game.unit].append(getattr(game, field))
    return [sum(v) / 2 for v in by_unit.values() if len(v) == 2]


def _within_pairs(games: list[GameNumbers], field: str) -> float:
    """The correlation of the two games of a pair (first and second stored)."""
    by_unit: dict[str, list[float]] = defaultdict(list)
    for game in games:
        by_unit[game.unit].append(getattr(game, field))
    pairs = [v for v in by_unit.values() if len(v) == 2]
    return statistics.correlation([p[0] for p in pairs], [p[1] for p in pairs])


def _report_stored(args: argparse.Namespace, games: list[GameNumbers], seconds: str) -> None:
    n = len(games)
    a, b = args.bots.split(",")
    pairs = len(_pair_means(games, "raw"))
    raw_mean, raw_se = mean_se([g.raw for g in games])
    adj_mean, adj_se = mean_se([g.adjusted for g in games])
    dup_mean, dup_se = mean_se(_pair_means(games, "raw"))
    adjp_mean, adjp_se = mean_se(_pair_means(games, "adjusted"))
    print(f"{args.db}: {a} vs {b}, {n} games ({pairs} duplicate pairs){seconds}")
    print(f"  raw per game          {raw_mean:+.3f} ± {raw_se:.3f}")
    print(f"  raw, duplicate pairs  {dup_mean:+.3f} ± {dup_se:.3f}")
    print(f"  luck-adjusted, games  {adj_mean:+.3f} ± {adj_se:.3f}")
    print(f"  luck-adjusted, pairs  {adjp_mean:+.3f} ± {adjp_se:.3f}")
    print(
        f"  SE ratio adjusted/duplicate: {adj_se / dup_se:.2f} (games), {adjp_se / dup_se:.2f} "
        f"(pairs); adjusted/raw per game {adj_se / raw_se:.2f}; |adjusted - duplicate| = "
        f"{abs(adjp_mean - dup_mean) / dup_se:.2f} duplicate SE"
    )
    sd = {f: statistics.stdev([getattr(g, f) for g in games]) for f in GameNumbers.__slots__[1:]}
    rest = [g.adjusted - g.skill for g in games]
    raw, luck = [g.raw for g in games], [g.luck for g in games]
    corr = statistics.correlation(raw, luck)
    beta = statistics.covariance(raw, luck) / statistics.variance(luck)
    print(
        "  SD per game: raw {raw:.3f}, luck difference {luck:.3f}, adjusted {adjusted:.3f}, "
        "skill term {skill:.3f}".format(**sd)
        + f", rest {statistics.stdev(rest):.3f} (mean {statistics.fmean(rest):+.3f}); "
        f"corr(skill, rest) {statistics.correlation([g.skill for g in games], rest):+.2f}"
    )
    pair_raw, pair_luck = _pair_means(games, "raw"), _pair_means(games, "luck")
    pair_corr = statistics.correlation(pair_raw, pair_luck)
    pair_beta = statistics.covariance(pair_raw, pair_luck) / statistics.variance(pair_luck)
    print(
        f"  corr(raw, luck) {corr:.3f} per game, {pair_corr:.3f} per pair: the best coefficient "
        f"({beta:.2f}, {pair_beta:.2f}) instead of 1 would leave SD "
        f"{sd['raw'] * math.sqrt(1 - corr * corr):.3f} per game, "
        f"{statistics.stdev(pair_raw) * math.sqrt(1 - pair_corr * pair_corr):.3f} per pair "
        f"(SD per pair: raw {statistics.stdev(pair_raw):.3f}, adjusted "
        f"{statistics.stdev(_pair_means(games, 'adjusted')):.3f}); within a pair the games "
        f"correlate {_within_pairs(games, 'raw'):+.2f} (raw), {_within_pairs(games, 'adjusted'):+.2f}"
        " (adjusted)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="long")
    parser.add_argument("--bots", default="neural,heuristic")
    parser.add_argument(
        "--games", type=int, help="games to play (default 300); with --db: the first N stored"
    )
    parser.add_argument("--evaluator", default="neural")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=170.0)
    parser.add_argument("--db", help="a duplicate-dice tournament database instead of playing")
    parser.add_argument("--tournament", help="with --db: only this tournament")
    parser.add_argument("--analysis", help="with --db: `nardy analyze --db ... --json` output")
    args = parser.parse_args()
    started = time.perf_counter()
    cpu = time.process_time()
    if args.db is not None:
        games = _stored(args)
        seconds = (
            ""
            if args.analysis
            else f"; analysed in {time.perf_counter() - started:.0f} s wall, "
            f"{time.process_time() - cpu:.0f} s CPU"
        )
        _report_stored(args, games, seconds)
        return
    a, b = args.bots.split(",")
    raw, adjusted = _played(args)
    n = len(raw)
    raw_mean, raw_se = mean_se(raw)
    adj_mean, adj_se = mean_se(adjusted)
    print(
        f"{args.variant}: {a} vs {b}, {n} games, evaluator {args.evaluator} (0-ply luck): "
        f"raw {raw_mean:+.3f} ± {raw_se:.3f}, luck-adjusted {adj_mean:+.3f} ± {adj_se:.3f}, "
        f"SE ratio {adj_se / raw_se:.2f}; {time.perf_counter() - started:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
