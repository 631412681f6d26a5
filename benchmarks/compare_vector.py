"""nardy's vector environments beside OpenSpiel's C++ backgammon (pyspiel), in one process.

    python benchmarks/compare_vector.py [--seconds 2] [--sizes 1 64 256] [--variants backgammon long]
                                        [--every-variant] [--gym] [--profile 25]

Random agents, as a reinforcement-learning user writes them:

* OpenSpiel: ``pyspiel.load_game("backgammon")`` (C++, no cube), one game after another in a
  Python loop (pyspiel has no batched backgammon), ``observation_tensor`` and ``legal_actions``
  read at every decision, chance outcomes sampled (benchmarks/compare_learning.py's loop).
* nardy: ``batched_env(variant, N)`` (both agents of every game; the cube off where the variant
  has one): every step reads the ``(N, 226)`` observations and the masks' legal counts and picks
  one legal action per game at once (``floor(u * count)``).
* ``--gym``: also ``vector_env(variant, N, opponent="random")``, the Gymnasium ``VectorEnv``
  (the agent's actions from the masks; the opponent is nardy's random bot), and beside it
  ``gymnasium.make_vec`` of the registered id (``gym-sync``: Gymnasium's own loop over the
  single envs), which plays the same games.

Each measurement plays until N games have ended (so the games are spread over their lengths),
then counts the games that end within ``--seconds`` of process CPU time. OpenSpiel is measured
between the nardy sizes, so machine load hits both alike. ``--profile N`` prints the top N of a
cProfile of the batched loop at the largest size. ``--gc-threshold N`` sets CPython's
young-generation collection threshold for the whole run (both loops): with hundreds of games a
batch, the pending legal results of every game make each young collection costly
(docs/learning.md).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from compare_learning import openspiel_games


def _options(variant: str) -> dict[str, Any]:
    from nardy.core import load_variant

    return {"cube": False} if "cube" in load_variant(variant).options else {}


def batched_games(variant: str, size: int, seed: int) -> Callable[[float], int]:
    from nardy.env import batched_env

    env = batched_env(variant, size, **_options(variant))
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def steps(budget: float, games_at_least: int = 0) -> int:
        games = 0
        end = time.process_time() + budget
        while time.process_time() < end or games < games_at_least:
            obs, _, terminated, _ = env.step((rng.random(size) * env.counts).astype(np.int64))
            _ = obs["observation"]
            games += int(np.count_nonzero(terminated))
        return games

    steps(0.0, size)  # warm-up: until the games are spread over their lengths
    return steps


def gym_games(variant: str, size: int, seed: int, *, sync: bool = False) -> Callable[[float], int]:
    from nardy.env import vector_env

    env: Any
    if sync:  # Gymnasium's own vectorisation of the registered id, for comparison
        import gymnasium

        from nardy.env.registration import env_id

        env = gymnasium.make_vec(
            env_id(variant),
            num_envs=size,
            vectorization_mode="sync",
            opponent="random",
            **_options(variant),
        )
    else:
        env = vector_env(variant, size, opponent="random", **_options(variant))
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    state = {"obs": obs}

    def steps(budget: float, games_at_least: int = 0) -> int:
        games = 0
        end = time.process_time() + budget
        while time.process_time() < end or games < games_at_least:
            counts = state["obs"]["action_mask"].sum(axis=1)
            actions = (rng.random(size) * counts).astype(np.int64)
            state["obs"], _, terminated, _, _ = env.step(actions)
            games += int(np.count_nonzero(terminated))
        return games

    steps(0.0, size)
    return steps


def rate(run: Callable[[float], int], seconds: float) -> float:
    start = time.process_time()
    games = run(seconds)
    return games / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 256])
    parser.add_argument("--variants", nargs="+", default=["backgammon"])
    parser.add_argument("--every-variant", action="store_true", help="every registered variant")
    parser.add_argument("--gym", action="store_true", help="also the Gymnasium VectorEnv")
    parser.add_argument("--profile", type=int, default=0, help="print the top N of a profile")
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=0,
        help="gc.set_threshold(N) for the whole run (0: CPython's default, 700)",
    )
    args = parser.parse_args()
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold)
    variants = args.variants
    if args.every_variant:
        from nardy.core import game_variant_names

        variants = list(game_variant_names())
    openspiel = openspiel_games(1)
    openspiel(0.2)
    theirs: list[float] = []
    print("variant        API      games  games/CPU-s  OpenSpiel (same round)  ratio")
    for variant in variants:
        kinds: list[tuple[str, Callable[[str, int, int], Callable[[float], int]]]] = [
            ("batched", batched_games)
        ]
        if args.gym:
            kinds.append(("gym", gym_games))
            kinds.append(("gym-sync", lambda v, n, seed: gym_games(v, n, seed, sync=True)))
        for kind, make in kinds:
            for size in args.sizes:
                ours = rate(make(variant, size, 7), args.seconds)
                reference = rate(openspiel, max(1.0, args.seconds / 2))
                theirs.append(reference)
                print(
                    f"{variant:14} {kind:8} {size:5} {ours:12.1f} {reference:14.1f}"
                    f"          {ours / reference:6.2f}x",
                    flush=True,
                )
    print(f"OpenSpiel C++ backgammon, mean of {len(theirs)} rounds: {np.mean(theirs):.1f}")
    if args.profile:
        run = batched_games(variants[0], max(args.sizes), 3)
        profiler = cProfile.Profile()
        profiler.enable()
        played = run(args.seconds)
        profiler.disable()
        print(f"\nprofile of the batched loop ({played} games), by own time:")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
