"""TD(λ) self-play training of :class:`~nardy.engines.net.ValueNet` (numpy only, deterministic).

One network plays both sides; every play picks the legal result of highest U (greedy: the dice are
the exploration, as in TD-Gammon). Values are followed from White's side, ``W_t = ±U(r_t)`` (+ when
White made the play), so a turn of several segments (progressions, re-rolls, transfers) needs no
special case: consecutive plays of one player keep the sign, alternating ones flip it. Online
TD(λ) (Sutton & Barto, ch. 12) with one trace per parameter, reset at every game::

    δ_t = W_t − W_{t−1}       θ ← θ + α δ_t e_{t−1}       e_t = λ e_{t−1} + ∇W_t

and at the end δ = (White's points / scale) − W_last. Games are played without the cube.

Determinism: game ``k`` uses the dice ``SeededDice(seed · 1,000,003 + k)`` and the initial weights
come from ``numpy.random.default_rng(seed)``; nothing else is random. Training is float64 with
single-threaded BLAS (``nardy train`` sets the thread variables), so a run is repeatable on one
machine, and stopping at game ``k`` (``--max-seconds``) leaves the same weights as ``--games k``.
A checkpoint (``FILE.ckpt.npz`` + ``.json``) is written every ``checkpoint_every`` games and at the
end; ``resume=True`` continues from it.

Evaluation against ``heuristic`` is in duplicate pairs (same dice, seats swapped), with the
variant's own cube settings: points per game of the network, its standard error (over pairs) and
its win rate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy
import numpy as np

from nardy.bots import HeuristicBot, play_game
from nardy.bots.neural import NeuralBot
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.variant import Variant
from nardy.engines.net import PRIOR_SCALE, ValueNet, scale_for

__all__ = ["Evaluation", "TrainConfig", "best_path", "checkpoint_path", "evaluate", "train"]

EVAL_SEED_OFFSET = 7_000_000_019
"""Evaluation dice seeds start here: far from the training games' seeds."""


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """What decides a training run (all of it is recorded in the sidecar)."""

    variant: str
    games: int = 10_000
    seed: int = 1
    hidden: int = 64
    alpha: float = 0.01
    lam: float = 0.7
    eval_every: int = 1_000
    eval_games: int = 200
    checkpoint_every: int = 500
    prior: str = "tanh"
    """How the heuristic prior enters: ``tanh`` (bounded) or ``linear``."""
    delta_clip: float = 1.0
    """TD errors are clipped to ±this, a guard against divergence on long games (0: none)."""
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The network against ``heuristic`` after ``games`` training games."""

    games: int
    played: int
    points: float
    """Points per game of the network (net: won minus lost)."""
    se: float
    win_rate: float

    def text(self) -> str:
        return (
            f"{self.points:+.3f} ± {self.se:.3f} pts/game, {100 * self.win_rate:.1f} % wins "
            f"({self.played} games)"
        )


def evaluate(
    variant: Variant, net: ValueNet, games: int, seed: int = EVAL_SEED_OFFSET, at: int = 0
) -> Evaluation:
    """``games`` (rounded up to pairs) against ``heuristic`` with duplicate dice."""
    pairs = max(1, (games + 1) // 2)
    pair_points: list[float] = []
    wins = 0
    for pair in range(pairs):
        total = 0.0
        for neural_colour in (0, 1):
            neural = NeuralBot(pair)
            neural.bind(variant, net)
            heuristic = HeuristicBot(pair)
            bots = (neural, heuristic) if neural_colour == 0 else (heuristic, neural)
            game = play_game(variant, bots, SeededDice(seed + pair))
            result = game.result
            assert result is not None
            won = result.winner == neural_colour
            wins += won
            total += result.points if won else -result.points
        pair_points.append(total / 2)
    mean = sum(pair_points) / pairs
    var = sum((p - mean) ** 2 for p in pair_points) / (pairs - 1) if pairs > 1 else 0.0
    return Evaluation(at, 2 * pairs, mean, math.sqrt(var / pairs), wins / (2 * pairs))


class _Trainer:
    """The TD(λ) state of one run: the network and its traces."""

    def __init__(self, variant: Variant, net: ValueNet, config: TrainConfig) -> None:
        self.variant = variant
        self.net = net
        self.config = config
        self.scale = scale_for(variant)
        self.bot = NeuralBot(0)
        self.bot.bind(variant, net)
        self.no_cube = CubeSettings()

    def play(self, index: int) -> int:
        """One self-play game with learning; returns the number of decisions."""
        net, alpha, lam = self.net, self.config.alpha, self.config.lam
        bound = self.config.delta_clip

        def clip(delta: float) -> float:
            return max(-bound, min(bound, delta)) if bound > 0 else delta

        seed = self.config.seed * 1_000_003 + index
        game = Game(self.variant, SeededDice(seed), cube=self.no_cube)
        e_w = np.zeros_like(net.w)
        e_b = np.zeros_like(net.b)
        e_v = np.zeros_like(net.v)
        e_c = 0.0
        e_a = 0.0

        def learn(delta: float) -> None:
            # θ ← θ + α δ e with the traces as they stand (the last play's gradient not yet in).
            step = alpha * clip(delta)
            net.w += step * e_w
            net.b += step * e_b
            net.v += step * e_v
            net.c += step * e_c
            net.a += step * e_a

        previous: float | None = None
        steps = 0
        while True:
            decision = game.decision
            if decision is None:
                break
            if not isinstance(decision, PlayDecision):  # pragma: no cover - the cube is off
                raise RuntimeError(f"unexpected decision {decision!r} with the cube off")
            inputs = self.bot.inputs_of_plays(decision)
            hidden = np.tanh(inputs @ net.w.T + net.b)
            values = hidden @ net.v + net.c + net.a * inputs[:, -1]
            best = int(np.argmax(values))
            sign = 1.0 if decision.player == 0 else -1.0
            current = sign * float(values[best])
            if previous is not None:
                learn(current - previous)
            h = hidden[best]
            x = inputs[best]
            grad_hidden = sign * net.v * (1.0 - h * h)
            e_w *= lam
            e_w += np.outer(grad_hidden, x)
            e_b = lam * e_b + grad_hidden
            e_v = lam * e_v + sign * h
            e_c = lam * e_c + sign
            e_a = lam * e_a + sign * x[-1]
            previous = current
            steps += 1
            game.decide(best)
        result = game.result
        assert result is not None
        if previous is not None:
            target = (result.points if result.winner == 0 else -result.points) / self.scale
            learn(target - previous)
        return steps


def checkpoint_path(out: Path) -> Path:
    """Where a run writing ``out`` keeps its checkpoint (``--resume`` reads it)."""
    return out.with_name(out.stem + ".ckpt.npz")


def best_path(out: Path) -> Path:
    """Where a run writing ``out`` keeps the weights of its best evaluation."""
    return out.with_name(out.stem + ".best.npz")


Progress = Callable[[int, Evaluation | None], None]
"""Called after every game with the games done and, when one was just made, an evaluation."""


def train(
    variant: Variant,
    config: TrainConfig,
    out: Path,
    *,
    resume: bool = False,
    max_seconds: float | None = None,
    progress: Progress | None = None,
) -> ValueNet:
    """Train (or continue from the checkpoint) and write ``out`` (.npz + .json) and
    ``out.best.npz`` (the weights of the best evaluation so far). Returns the final network."""
    out = Path(out)
    checkpoint = checkpoint_path(out)
    if resume:
        if not checkpoint.is_file():
            raise ValueError(f"no checkpoint {str(checkpoint)!r} to resume from")
        net = ValueNet.load(checkpoint)
        saved = net.meta.get("config", {})
        mine = asdict(config)
        for key in ("variant", "seed", "hidden", "alpha", "lam", "options"):
            if saved.get(key) != mine[key]:
                raise ValueError(
                    f"the checkpoint was made with {key}={saved.get(key)!r}, not {mine[key]!r}"
                )
        done = int(net.meta["games"])
        history = [Evaluation(**item) for item in net.meta.get("history", [])]
        seconds = float(net.meta.get("seconds", 0.0))
        decisions = int(net.meta.get("decisions", 0))
    else:
        rng = np.random.default_rng(config.seed)
        net = ValueNet.initial(
            config.hidden, rng, {"prior": config.prior, "prior_scale": PRIOR_SCALE}
        )
        done, history, seconds, decisions = 0, [], 0.0, 0
    trainer = _Trainer(variant, net, config)
    started = time.perf_counter() - seconds
    best_points = max((e.points for e in history), default=-math.inf)

    def record(kind: str) -> dict[str, Any]:
        return {
            "prior": config.prior,
            "prior_scale": PRIOR_SCALE,
            "kind": kind,
            "variant": variant.name,
            "scale": trainer.scale,
            "config": asdict(config),
            "games": done,
            "decisions": decisions,
            "seconds": round(time.perf_counter() - started, 1),
            "history": [asdict(e) for e in history],
        }

    def snapshot(path: Path, kind: str) -> None:
        net.meta = record(kind)
        net.save(path)

    def evaluate_now() -> Evaluation:
        nonlocal best_points
        result = evaluate(variant, net, config.eval_games, at=done)
        history.append(result)
        if result.points > best_points:
            best_points = result.points
            snapshot(best_path(out), "best")
        return result

    if not history and config.eval_games > 0:
        first = evaluate_now()
        if progress:
            progress(done, first)
    while done < config.games:
        if max_seconds is not None and time.perf_counter() - started >= max_seconds:
            break
        decisions += trainer.play(done)
        done += 1
        if not math.isfinite(net.a) or not np.isfinite(net.w).all():
            raise RuntimeError(f"training diverged at game {done}: lower --alpha")
        evaluation: Evaluation | None = None
        if config.eval_games > 0 and done % config.eval_every == 0:
            evaluation = evaluate_now()
        if done % config.checkpoint_every == 0:
            snapshot(checkpoint, "checkpoint")
        if progress:
            progress(done, evaluation)
    if config.eval_games > 0 and (not history or history[-1].games != done):
        last = evaluate_now()
        if progress:
            progress(done, last)
    snapshot(checkpoint, "checkpoint")
    snapshot(out, "final")
    return net
