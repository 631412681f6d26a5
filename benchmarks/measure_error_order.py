"""Error rate against result on a small ladder: do the bots ordered by their error rate finish in
the same order as by their points?

    python benchmarks/measure_error_order.py [--variants backgammon,long,fevga]
        [--bots random,heuristic,neural] [--games 8] [--evaluator neural] [--ply 0] [--seed 1]

Per variant, a round robin of ``--bots``: ``--games`` games per pairing (colours alternating,
game i of a pairing on dice seed SEED*1000003+i, money play without the cube), every game
analysed at ``--ply`` with ``--evaluator``. It prints each bot's points per game and error rate
per decision (and PR) and whether the two orders agree (lower error rate, more points).

Mind the evaluator: at 0-ply the ``neural`` evaluator is the ``neural`` bot's own choice, so
that bot's error rate is 0 by construction; ``--ply 1`` (slower) or another evaluator makes
the comparison less circular. The ``random`` against ``heuristic`` order is informative either
way.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.analysis.game import PlayerStats, analyse_game
from nardy.analysis.records import from_kernel_record
from nardy.analysis.stats import searchers_for
from nardy.bots import make_bot, play_game
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings


def ladder(
    variant_name: str, bots: list[str], games: int, evaluator: str, ply: int, seed: int
) -> dict[str, tuple[float, float, int]]:
    """Per bot: (points per game, error rate, decisions counted)."""
    variant = load_variant(variant_name)
    totals = {name: PlayerStats(name, games=0) for name in bots}
    searcher = None
    for a, b in itertools.combinations(bots, 2):
        for index in range(games):
            names = (a, b) if index % 2 == 0 else (b, a)
            players = (make_bot(names[0], index), make_bot(names[1], index))
            game = play_game(
                variant, players, SeededDice(seed * 1_000_003 + index), cube=CubeSettings()
            )
            record = game.record()
            inputs = from_kernel_record(str(index), record, record, names, CubeSettings())
            if searcher is None:
                searcher = searchers_for([inputs], evaluator)[0]
            analysis = analyse_game(inputs, searcher, ply)
            for player in analysis.players:
                totals[player.name].add(player)
    return {
        name: (t.points / max(t.games, 1), t.error_rate, t.decisions) for name, t in totals.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="backgammon,long,fevga")
    parser.add_argument("--bots", default="random,heuristic,neural")
    parser.add_argument("--games", type=int, default=8, help="games per pairing")
    parser.add_argument("--evaluator", default="neural")
    parser.add_argument("--ply", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bots = args.bots.split(",")
    for name in args.variants.split(","):
        started, cpu = time.perf_counter(), time.process_time()
        results = ladder(name, bots, args.games, args.evaluator, args.ply, args.seed)
        by_points = sorted(bots, key=lambda b: -results[b][0])
        by_errors = sorted(bots, key=lambda b: results[b][1])
        print(
            f"{name}: {args.games} games per pairing, {args.evaluator} at {args.ply}-ply "
            f"({time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu:.0f} s CPU)"
        )
        for bot in by_points:
            points, rate, decisions = results[bot]
            print(
                f"  {bot:10} {points:+.3f} points/game  error rate {rate:.4f} "
                f"(PR {500 * rate:.1f}, {decisions} decisions)"
            )
        agree = "agree" if by_points == by_errors else f"differ (by error rate: {by_errors})"
        print(f"  orders {agree}")


if __name__ == "__main__":
    main()
