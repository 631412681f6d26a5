"""Luck-adjusted points per game against raw points per game: means and standard errors on the
same games.

    python benchmarks/measure_luck_adjustment.py [--variant long] [--bots neural,heuristic]
        [--games 300] [--evaluator neural] [--seed 1] [--budget-s 170]

Plays games of the two bots (colours alternating, game i on dice seed SEED*1000003+i, money play
without the cube), analyses each at 0-ply with ``--evaluator`` and prints, for the first bot, the
raw and the luck-adjusted points per game with their standard errors and the ratio of the SEs.
Games stop being started after ``--budget-s`` seconds (the count played is printed).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.analysis.game import analyse_game
from nardy.analysis.records import from_kernel_record
from nardy.analysis.stats import mean_se, searchers_for
from nardy.bots import make_bot, play_game
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="long")
    parser.add_argument("--bots", default="neural,heuristic")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--evaluator", default="neural")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget-s", type=float, default=170.0)
    args = parser.parse_args()
    variant = load_variant(args.variant)
    a, b = args.bots.split(",")
    raw, adjusted = [], []
    started = time.perf_counter()
    cpu = time.process_time()
    searcher = None
    for index in range(args.games):
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
        inputs = from_kernel_record(str(index), record, record, names, CubeSettings())
        if searcher is None:
            searcher = searchers_for([inputs], args.evaluator)[0]
        analysis = analyse_game(inputs, searcher)
        mine = analysis.players[0 if a_white else 1]
        raw.append(mine.points)
        adjusted.append(mine.adjusted)
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
