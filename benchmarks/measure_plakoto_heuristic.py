"""The plakoto terms of ``heuristic``: the bot against itself without them, on duplicate dice.

    python benchmarks/measure_plakoto_heuristic.py [--pairs 100] [--seed 11] [--mother standard]

``heuristic`` evaluates plakoto with :func:`nardy.engines.heuristic.evaluate_pin` (pins, blots in reach of a
pin, the mother); the baseline below binds the same weights with the pinning terms switched off,
which is the plain opposite-direction evaluation the bot used for plakoto before them. Each pair
plays one dice seed twice with the colours swapped; the script prints ``heuristic``'s points per
game with the SE over pairs, a 95 % interval and the win rate (draws count as no win).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

from nardy.bots import Bot, HeuristicBot, play_game
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.variant import Variant
from nardy.engines.heuristic import HeuristicEvaluation


class PlainOppositeHeuristic(HeuristicBot):
    """``heuristic`` with its pinning terms off: plakoto seen as backgammon without a bar."""

    name = "heuristic-plain"

    def bind(self, variant: Variant) -> None:
        super().bind(variant)
        self.evaluation = HeuristicEvaluation(
            dataclasses.replace(self.evaluation.weights, pins=False)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--mother", default="standard", choices=("standard", "simple", "off"))
    args = parser.parse_args()
    variant = load_variant("plakoto", {"mother": args.mother})
    started = time.perf_counter()
    pair_points: list[float] = []
    wins = 0
    for pair in range(args.pairs):
        total = 0.0
        for colour in (0, 1):
            new, old = HeuristicBot(pair), PlainOppositeHeuristic(pair)
            bots: tuple[Bot, Bot] = (new, old) if colour == 0 else (old, new)
            result = play_game(variant, bots, SeededDice(args.seed * 1_000_003 + pair)).result
            assert result is not None
            if not result.draw:
                won = result.winner == colour
                wins += won
                total += result.points if won else -result.points
        pair_points.append(total / 2)
    n = len(pair_points)
    mean = sum(pair_points) / n
    var = sum((p - mean) ** 2 for p in pair_points) / (n - 1) if n > 1 else 0.0
    se = math.sqrt(var / n)
    print(
        f"plakoto (mother={args.mother}), {2 * n} games ({n} duplicate pairs, seed {args.seed}): "
        f"heuristic vs heuristic-plain {mean:+.3f} ± {se:.3f} pts/game "
        f"(95 % [{mean - 1.96 * se:+.3f}, {mean + 1.96 * se:+.3f}]), "
        f"{100 * wins / (2 * n):.1f} % wins, {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
