"""nardy's AEC environment beside OpenSpiel's C++ backgammon (pyspiel), in one process.

    python benchmarks/compare_learning.py [--seconds 20] [--variant backgammon] [--profile 25]

Both loops are what a reinforcement-learning user writes: random agents in a Python loop that, at
every decision, reads the observation vector and the legal actions and picks one uniformly.

* nardy: ``raw_aec_env(variant, cube=False)`` — ``env.last()`` (observation and mask), a random
  legal action from the mask, ``env.step``; dice from the env's seeded generator.
* OpenSpiel: ``pyspiel.load_game("backgammon")`` (C++; no cube), chance outcomes sampled with the
  same numpy generator, ``observation_tensor(player)`` and ``legal_actions()`` read at every
  decision.

The two run interleaved in rounds of about one second each (so machine load hits both alike) for
``--seconds`` in all; the rate is finished games per second of process CPU time. ``--profile N``
then profiles nardy's loop alone (cProfile) and prints the N functions with the most own time.
``--every-variant S`` adds nardy's rate for every registered variant (``S`` CPU seconds each,
without the cube) and its ratio to backgammon's.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable

import numpy as np


def nardy_games(variant: str, seed: int) -> Callable[[float], int]:
    from nardy.core import load_variant
    from nardy.env import raw_aec_env

    options = {"cube": False} if "cube" in load_variant(variant).options else {}
    env = raw_aec_env(variant, **options)
    rng = np.random.default_rng(seed)
    state = {"seed": seed}

    def run(budget: float) -> int:
        games = 0
        end = time.process_time() + budget
        while time.process_time() < end:
            state["seed"] += 1
            env.reset(seed=state["seed"])
            for _agent in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[rng.integers(len(legal))]))
            games += 1
        return games

    return run


def openspiel_games(seed: int) -> Callable[[float], int]:
    import pyspiel

    game = pyspiel.load_game("backgammon")
    rng = np.random.default_rng(seed)

    def run(budget: float) -> int:
        games = 0
        end = time.process_time() + budget
        while time.process_time() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    pick = rng.choice(len(outcomes), p=[p for _, p in outcomes])
                    state.apply_action(outcomes[pick][0])
                    continue
                player = state.current_player()
                _ = np.asarray(state.observation_tensor(player), dtype=np.float32)
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
            games += 1
        return games

    return run


def measure(seconds: float, variant: str) -> tuple[float, float]:
    runners = {"nardy": nardy_games(variant, 1), "openspiel": openspiel_games(1)}
    games = dict.fromkeys(runners, 0)
    cpu = dict.fromkeys(runners, 0.0)
    for run in runners.values():  # warm-up, untimed
        run(0.2)
    rounds = max(1, int(seconds / 2))
    for _ in range(rounds):
        for name, run in runners.items():
            start = time.process_time()
            games[name] += run(1.0)
            cpu[name] += time.process_time() - start
    return games["nardy"] / cpu["nardy"], games["openspiel"] / cpu["openspiel"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds in all")
    parser.add_argument(
        "--variant", default="backgammon", help="nardy's variant (default backgammon)"
    )
    parser.add_argument("--profile", type=int, default=0, help="print the top N of a profile")
    parser.add_argument(
        "--every-variant", type=float, default=0.0, help="CPU seconds per variant (0: none)"
    )
    args = parser.parse_args()
    ours, theirs = measure(args.seconds, args.variant)
    print(f"nardy AEC env ({args.variant}): {ours:8.1f} games per CPU-second")
    print(f"OpenSpiel C++ backgammon:     {theirs:8.1f} games per CPU-second")
    print(f"ratio nardy / OpenSpiel:      {ours / theirs:8.2f}x")
    if args.every_variant:
        from nardy.core import game_variant_names

        rates = {}
        for name in game_variant_names():
            run = nardy_games(name, 3)
            run(0.1)
            start = time.process_time()
            played = run(args.every_variant)
            rates[name] = played / (time.process_time() - start)
        base = rates["backgammon"]
        print("\nvariant        games/CPU-s  backgammon / variant")
        for name, rate in rates.items():
            print(f"{name:14} {rate:10.1f}  {base / rate:8.2f}")
    if args.profile:
        run = nardy_games(args.variant, 2)
        profiler = cProfile.Profile()
        profiler.enable()
        played = run(5.0)
        profiler.disable()
        print(f"\nprofile of nardy's loop ({played} games), by own time:")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
