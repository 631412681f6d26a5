"""Decision latency of the neural bot: median and p99 of ``choose_play`` per variant.

    python benchmarks/measure_neural_latency.py [--games 10] [--seed 1]

Plays ``--games`` games of ``neural`` against ``heuristic`` per built-in variant and times every call
of the neural bot's ``choose_play`` that has two or more legal plays (one batched evaluation of all
of them); a forced play returns without evaluating and is not counted. Variants without shipped
weights (hypergammon) are skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from nardy.bots import HeuristicBot, play_game
from nardy.bots.neural import NeuralBot
from nardy.core import game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import PlayDecision
from nardy.engines.net import shipped_weights


class TimedNeural(NeuralBot):
    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.times: list[float] = []
        self.sizes: list[int] = []

    def choose_play(self, decision: PlayDecision) -> int:
        if len(decision.plays) < 2:
            return 0
        started = time.perf_counter()
        index = super().choose_play(decision)
        self.times.append(time.perf_counter() - started)
        self.sizes.append(len(decision.plays))
        return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant", "-v", action="append", help="only this variant (repeatable); default: all"
    )
    args = parser.parse_args()
    print("| variant | decisions | plays per decision (mean) | median ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name in args.variant or game_variant_names():
        try:
            shipped_weights(name)
        except ValueError:
            continue
        variant = load_variant(name)
        bot = TimedNeural(args.seed)
        for game in range(args.games):
            other = HeuristicBot(game)
            bots = (bot, other) if game % 2 == 0 else (other, bot)
            play_game(variant, bots, SeededDice(args.seed * 1000 + game))
        times = sorted(bot.times)
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(
            f"| {name} | {len(times)} | {statistics.fmean(bot.sizes):.1f} | "
            f"{1000 * statistics.median(times):.2f} | {1000 * p99:.2f} |"
        )


if __name__ == "__main__":
    main()
