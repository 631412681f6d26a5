"""From a learning environment to the arena: train a TD(0) bot for long nardy, then enter it in a
tournament against the built-in bots.

1. Training: self-play through the PettingZoo AEC environment (``nardy.env.aec_env``). Both agents
   share one small numpy network that values afterstates (``env.afterstates()``: every legal play's
   result, ``nardy196_v1``) in game points for the player who made the play; each agent plays the
   best-valued play (a few random ones to explore) and moves the value of its previous afterstate
   towards that of its next one, or towards the game's points at the end (TD(0), Tesauro style).
2. The weights go to ``<out>.npz`` with a JSON sidecar (encoder id, sizes, games, seed); by
   default ``$XDG_CACHE_HOME/nardy/td-long`` (``~/.cache/nardy/td-long``), never the working
   directory (a run from the repository root would otherwise leave them in the checkout).
3. The arena: the trained bot is served over gRPC with the SDK (``nardy.arena.sdk.serve_bot``) and
   a duplicate-dice round robin against ``heuristic`` and ``random`` runs through the tournament
   engine (``nardy.arena.competition.tournament``); the standings are printed.

    python examples/rl/td_long.py                      # about 3 minutes of training, 40 games a pairing
    python examples/rl/td_long.py --minutes 10 --games 100
    python examples/rl/td_long.py --short              # seconds: what CI runs

Needs the ``rl`` and ``arena`` extras (``pip install -e '.[rl,arena]' --config-settings editable_mode=strict``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from nardy.arena.competition.schedule import definition_from_flags
from nardy.arena.competition.standings import Standings
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import open_store
from nardy.arena.sdk import KernelBot, serve_bot
from nardy.arena.tournament_cli import render_standings
from nardy.bots import Bot
from nardy.core.game import PlayDecision
from nardy.encoding import BOARD_ENCODER, BOARD_SIZE, encode_plays
from nardy.env import raw_aec_env

VARIANT = "long"


class ValueNet:
    """``v(x) = w2 · tanh(W1 x + b1) + b2``: expected game points of an afterstate for its mover."""

    def __init__(self, hidden: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.w1 = rng.normal(0, 0.1, (hidden, BOARD_SIZE)).astype(np.float32)
        self.b1 = np.zeros(hidden, np.float32)
        self.w2 = rng.normal(0, 0.1, hidden).astype(np.float32)
        self.b2 = np.float32(0.0)

    def values(self, xs: np.ndarray) -> np.ndarray:
        return np.tanh(xs @ self.w1.T + self.b1) @ self.w2 + self.b2

    def update(self, x: np.ndarray, target: float, lr: float) -> None:
        """One gradient step of ``(target − v(x))² / 2``."""
        h = np.tanh(self.w1 @ x + self.b1)
        error = target - float(h @ self.w2 + self.b2)
        dh = error * self.w2 * (1 - h * h)
        self.w2 += lr * error * h
        self.b2 += lr * error
        self.w1 += lr * np.outer(dh, x)
        self.b1 += lr * dh

    def save(self, path: Path, meta: dict[str, Any]) -> None:
        np.savez(path.with_suffix(".npz"), w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2)
        sidecar = {"encoder": BOARD_ENCODER, "hidden": len(self.b1), "variant": VARIANT, **meta}
        path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ValueNet:
        meta = json.loads(path.with_suffix(".json").read_text())
        if meta["encoder"] != BOARD_ENCODER:
            raise ValueError(f"{path}: encoder {meta['encoder']}, expected {BOARD_ENCODER}")
        net = cls(int(meta["hidden"]), 0)
        with np.load(path.with_suffix(".npz"), allow_pickle=False) as data:
            net.w1, net.b1, net.w2 = data["w1"], data["b1"], data["w2"]
            net.b2 = np.float32(data["b2"])
        return net


def train(
    net: ValueNet, *, seconds: float, max_games: int, seed: int, lr: float, explore: float
) -> int:
    """Self-play games through the AEC environment until the time or the game count runs out."""
    env = raw_aec_env(VARIANT, encoder=BOARD_ENCODER)
    rng = np.random.default_rng(seed)
    deadline = time.monotonic() + seconds
    games = 0
    while games < max_games and time.monotonic() < deadline:
        env.reset(seed=seed + games)
        previous: dict[str, np.ndarray] = {}
        for agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                if agent in previous:  # the game's points for this agent's last afterstate
                    net.update(previous.pop(agent), float(reward), lr)
                env.step(None)
                continue
            states = env.afterstates()
            if len(states) == 0:  # a cube decision (none in long nardy without the cube option)
                env.step(0)
                continue
            values = net.values(states)
            best = int(np.argmax(values))
            action = int(rng.integers(len(states))) if rng.random() < explore else best
            if agent in previous:
                net.update(previous[agent], float(values[best]), lr)
            previous[agent] = states[action]
            env.step(action)
        games += 1
    return games


class TDBot(Bot):
    """The trained network as a kernel bot: the play whose result it values most."""

    name = "td"

    def __init__(self, net: ValueNet) -> None:
        self.net = net

    def choose_play(self, decision: PlayDecision) -> int:
        return int(np.argmax(self.net.values(encode_plays(decision.plays))))


def tournament(net: ValueNet, games: int, seed: int, db: Path) -> Standings:
    """A duplicate round robin of the served TD bot, heuristic and random; its standings."""
    server = serve_bot(KernelBot(TDBot(net)), port=0)
    try:
        definition = definition_from_flags(
            variants=[VARIANT],
            bots=f"td={server.address},heuristic,random",
            games=games,
            seed=seed,
            name="td-example",
        )
        store = open_store(db)
        try:
            result = Tournament(definition, store, concurrency=2).run()
        finally:
            store.close()
    finally:
        server.stop(1.0)
    return result.standings


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; ``out`` defaults to the user's cache, never the working directory."""
    parser = argparse.ArgumentParser(
        description="Train a TD(0) long-nardy bot, then enter it in a tournament."
    )
    parser.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    parser.add_argument("--games", type=int, default=40, help="tournament games per pairing")
    parser.add_argument("--hidden", type=int, default=40, help="hidden units")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="weights file stem (default: $XDG_CACHE_HOME/nardy/td-long)",
    )
    parser.add_argument("--short", action="store_true", help="a few seconds of everything (CI)")
    args = parser.parse_args(argv)
    if args.out is None:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        args.out = Path(cache) / "nardy" / "td-long"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    seconds, max_games, games = args.minutes * 60, 10**9, args.games
    if args.short:
        seconds, max_games, games = 60.0, 30, 2

    net = ValueNet(args.hidden, args.seed)
    start = time.monotonic()
    played = train(net, seconds=seconds, max_games=max_games, seed=args.seed, lr=0.01, explore=0.02)
    took = time.monotonic() - start
    print(f"trained on {played} self-play games in {took:.0f} s ({played / took:.1f} games/s)")
    net.save(args.out, {"games": played, "seed": args.seed, "lr": 0.01, "explore": 0.02})
    print(f"weights: {args.out.with_suffix('.npz')} (+ .json)")

    with tempfile.TemporaryDirectory() as tmp:
        standings = tournament(ValueNet.load(args.out), games, args.seed, Path(tmp) / "td.db")
    Console(width=120).print(render_standings(standings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
