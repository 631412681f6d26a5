"""The neural bots' search depth: decision latency per ply, and ``neural:PLY`` against ``neural``
on duplicate dice.

    python benchmarks/measure_search_depth.py latency [--variants long,giul] [--games 2] [--plies 0,1,2]
        [--max-decisions N]
    python benchmarks/measure_search_depth.py match [--variants long] [--pairs 50] [--ply 1] [--seed 1]

``latency`` plays ``--games`` games of ``neural:PLY`` against ``heuristic`` per variant and times
every ``choose_play`` with two or more legal plays in CPU time (median, p90, mean). ``match`` plays ``--pairs``
pairs of games: the same dice seed twice with the colours swapped (duplicate dice), money play
without the cube; it prints ``neural:PLY``'s points per game with the SE over pairs and a 95 %
interval. ``--budget-s`` bounds a match's wall time (pairs are not started after it); ``--every N``
prints the running figure every N pairs; ``--start K`` plays pairs K… (dice seed SEED*1000003+pair);
``--deep-net`` gives the searching bot another net than ``neural:PLY``'s own choice: ``play`` (the
shipped net), ``refit`` (its self-consistent refit) or a weights file.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from nardy.bots import Bot, HeuristicBot, play_game
from nardy.bots.neural import NeuralBot
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, PlayDecision
from nardy.engines.net import shipped_consistent_weights, shipped_weights


class _Enough(Exception):
    """The bot has timed as many decisions as asked for."""


class TimedNeural(NeuralBot):
    def __init__(self, seed: int, ply: int, limit: int) -> None:
        super().__init__(seed, ply=ply)
        self.times: list[float] = []
        self.limit = limit

    def choose_play(self, decision: PlayDecision) -> int:
        if len(decision.plays) < 2:
            return 0
        if len(self.times) >= self.limit:
            raise _Enough
        started = time.process_time()  # CPU time: the shared machine's wall clock says little
        index = super().choose_play(decision)
        self.times.append(time.process_time() - started)
        return index


def latency(variants: list[str], games: int, plies: list[int], limit: int) -> None:
    for name in variants:
        variant = load_variant(name)
        for ply in plies:
            bot = TimedNeural(1, ply, limit)
            for game in range(games):
                bots: tuple[Bot, Bot] = (bot, HeuristicBot(game))
                if game % 2:
                    bots = (bots[1], bots[0])
                try:
                    play_game(variant, bots, SeededDice(1000 + game), cube=CubeSettings())
                except _Enough:
                    break
            times = sorted(bot.times)
            p90 = times[int(0.9 * (len(times) - 1))]
            print(
                f"{name:11} ply {ply}: {len(times):4} decisions, median "
                f"{1000 * statistics.median(times):8.1f} ms, p90 {1000 * p90:8.1f} ms, "
                f"mean {1000 * statistics.fmean(times):8.1f} ms",
                flush=True,
            )


def _report(name: str, ply: int, results: list[float], started: float, cpu: float) -> None:
    mean = statistics.fmean(results)
    se = statistics.stdev(results) / math.sqrt(len(results)) if len(results) > 1 else math.nan
    print(
        f"{name:11} neural:{ply} vs neural, {2 * len(results)} games ({len(results)} duplicate "
        f"pairs): {mean:+.3f} ± {se:.3f} points/game, 95% [{mean - 1.96 * se:+.3f}, "
        f"{mean + 1.96 * se:+.3f}], {time.perf_counter() - started:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU",
        flush=True,
    )


def _weights(name: str, which: str) -> Path | None:
    """``--deep-net``: the bot's default (None), the shipped play net, its refit, or a file."""
    if which == "default":
        return None
    if which == "play":
        return shipped_weights(name)
    if which == "refit":
        return shipped_consistent_weights(name)
    return Path(which)


def match(
    variants: list[str],
    pairs: int,
    ply: int,
    seed: int,
    budget: float,
    every: int,
    deep_net: str = "default",
    start: int = 0,
) -> None:
    for name in variants:
        variant = load_variant(name)
        deep, shallow = NeuralBot(1, _weights(name, deep_net), ply=ply), NeuralBot(2)
        results: list[float] = []
        started, cpu = time.perf_counter(), time.process_time()
        for pair in range(start, start + pairs):
            if time.perf_counter() - started > budget:
                break
            if every and results and len(results) % every == 0:
                _report(name + " …", ply, results, started, cpu)
            total = 0
            for deep_colour in (0, 1):
                bots: tuple[Bot, Bot] = (deep, shallow) if deep_colour == 0 else (shallow, deep)
                game = play_game(
                    variant, bots, SeededDice(seed * 1_000_003 + pair), cube=CubeSettings()
                )
                assert game.result is not None
                won = game.result.winner == deep_colour
                total += game.result.points if won else -game.result.points
            results.append(total / 2)
        _report(name, ply, results, started, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["latency", "match"])
    parser.add_argument("--variants", default="backgammon,long,giul")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--plies", default="0,1,2")
    parser.add_argument(
        "--max-decisions", type=int, default=1000, help="latency: time at most this many"
    )
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--ply", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--budget-s", type=float, default=170.0, help="match: stop starting pairs after this"
    )
    parser.add_argument(
        "--every", type=int, default=0, help="match: print the running figure every N pairs"
    )
    parser.add_argument(
        "--deep-net",
        default="default",
        help="match: the searching bot's net: default (neural:PLY's own choice), play (the "
        "shipped net), refit (its self-consistent refit) or a weights file",
    )
    parser.add_argument("--start", type=int, default=0, help="match: the first pair's number")
    args = parser.parse_args()
    variants = args.variants.split(",")
    if args.what == "latency":
        latency(variants, args.games, [int(p) for p in args.plies.split(",")], args.max_decisions)
    else:
        match(
            variants,
            args.pairs,
            args.ply,
            args.seed,
            args.budget_s,
            args.every,
            args.deep_net,
            args.start,
        )


if __name__ == "__main__":
    main()
