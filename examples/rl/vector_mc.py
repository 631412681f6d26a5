"""Train a long-nardy bot through the vector environment and check that it beats ``random``.

Self-play in ``nardy.env.batched_env``: many games in lockstep, both agents sharing one linear
value function ``v(x) = w · x + b`` of afterstates (``nardy196_v1``: every legal play's result,
from the view of the player who makes it). Each decider plays its best-valued play (a random one
now and then, to explore); when a game ends, every afterstate its players chose is moved towards
that player's final points (Monte Carlo targets, one least-squares gradient step per batch of
finished games). Then the greedy bot plays ``random`` (seats alternating) and the share of games
won is printed.

    python examples/rl/vector_mc.py                    # about a minute: 2,000 games, 1,000 against random
    python examples/rl/vector_mc.py --short            # seconds: what CI runs

Needs the ``rl`` extra (``pip install -e '.[rl]' --config-settings editable_mode=strict``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nardy.encoding import BOARD_SIZE
from nardy.env import batched_env

VARIANT = "long"
BATCH = 128
RATE = 0.05


class Linear:
    """Expected game points of an afterstate for the player who made it."""

    def __init__(self) -> None:
        self.w = np.zeros(BOARD_SIZE, np.float64)
        self.b = 0.0

    def values(self, xs: np.ndarray) -> np.ndarray:
        return xs @ self.w + self.b

    def fit_step(self, xs: np.ndarray, targets: np.ndarray, rate: float) -> None:
        error = self.values(xs) - targets
        self.w -= rate * xs.T @ error / len(xs)
        self.b -= rate * float(error.mean())


def choose(env: object, model: Linear, i: int, count: int) -> tuple[int, np.ndarray | None]:
    """The best-valued action of game ``i`` and its afterstate (None for a cube decision)."""
    after = env.afterstates(i)  # type: ignore[attr-defined]
    if len(after) == 0:
        return 0, None
    best = int(np.argmax(model.values(after)))
    return best, after[best]


def train(games: int, envs: int, seed: int, explore: float = 0.1) -> Linear:
    model = Linear()
    env = batched_env(VARIANT, envs)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    # Per game and colour, the afterstates chosen in the game under way.
    chosen: list[list[list[np.ndarray]]] = [[[], []] for _ in range(envs)]
    xs: list[np.ndarray] = []
    ys: list[float] = []
    finished = 0
    while finished < games:
        actions = np.zeros(envs, np.int64)
        counts = env.counts.tolist()
        agents = info["agents"].tolist()
        for i in range(envs):
            action, after = choose(env, model, i, counts[i])
            if rng.random() < explore:
                action = int(rng.integers(counts[i]))
                after = None
            actions[i] = action
            if after is not None:
                chosen[i][agents[i]].append(after)
        _, rewards, terminated, info = env.step(actions)
        for i in np.flatnonzero(terminated).tolist():
            for colour in (0, 1):
                xs.extend(chosen[i][colour])
                ys.extend([float(rewards[i, colour])] * len(chosen[i][colour]))
            chosen[i] = [[], []]
            finished += 1
        while len(xs) >= BATCH:  # minibatches of the finished games' afterstates
            model.fit_step(np.array(xs[:BATCH]), np.array(ys[:BATCH]), rate=RATE)
            del xs[:BATCH], ys[:BATCH]
    return model


def play_random(model: Linear, games: int, envs: int, seed: int) -> tuple[int, int, float]:
    """(wins, games, points per game) of the greedy model against uniform random play; the model
    is White in even-numbered batch slots and Black in odd ones."""
    env = batched_env(VARIANT, envs)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    ours = np.arange(envs) % 2
    wins = played = 0
    points = 0.0
    while played < games:
        counts = env.counts.tolist()
        agents = info["agents"].tolist()
        actions = (rng.random(envs) * env.counts).astype(np.int64)
        for i in range(envs):
            if agents[i] == ours[i]:
                actions[i] = choose(env, model, i, counts[i])[0]
        _, rewards, terminated, info = env.step(actions)
        for i in np.flatnonzero(terminated).tolist():
            if played < games:
                score = float(rewards[i, ours[i]])
                wins += score > 0
                points += score
                played += 1
    return wins, played, points / played


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="self-play games")
    parser.add_argument("--eval", type=int, default=1000, help="games against random")
    parser.add_argument("--envs", type=int, default=64, help="games in lockstep")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--short", action="store_true", help="a few games (CI)")
    args = parser.parse_args(argv)
    if args.short:
        args.games, args.eval, args.envs = 64, 40, 16
    start = time.process_time()
    model = train(args.games, args.envs, args.seed)
    trained = time.process_time() - start
    wins, played, ppg = play_random(model, args.eval, args.envs, args.seed + 1000)
    print(
        f"{args.games} self-play games in {trained:.0f} CPU-s; against random: "
        f"won {wins} of {played} ({100 * wins / played:.1f} %), {ppg:+.2f} points a game"
    )
    return wins / played


if __name__ == "__main__":
    main()
