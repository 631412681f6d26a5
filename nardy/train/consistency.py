"""Self-consistent analysis nets: a value net fitted so that its 0-ply value of an afterstate
matches its own 1-ply value (numpy only, deterministic).

Why: without the cube, a game's luck-adjusted result telescopes into the two sides' 0-ply errors
plus the evaluator's *inconsistency* — its value of each position minus the mean over the
opponent's 21 rolls of its value after his best reply — summed over the game (docs/analysis.md).
Luck adjustment cannot remove that term; an evaluator whose ``V₀`` equals its ``V₁`` has none.

The recipe, for one variant, starting from the shipped weights of :mod:`nardy.engines.net`:

1. **Positions**: ``games`` games per round without the cube, played by the *shipped* neural bot:
   even-numbered games against ``heuristic`` (colours alternating), odd-numbered ones against
   itself — the games the analysis is asked about. Every play whose result ends the mover's turn
   (as :mod:`nardy.train.policy_iteration` defines it) and does not end the game gives one sample:
   that afterstate.
2. **Targets**: the current net's 1-ply value of each sample, ``V₁(r) = −Σ_rolls w · max_plays
   V₀(result)`` (:class:`~nardy.engines.search.Searcher`, batched; short lists and whole-turn
   plans exactly as the analysis uses them), optionally mixed with the game's outcome
   (``outcome_weight``) to keep the fixed point tied to real results.
3. **Fit**: the net is regressed onto the targets (mean squared error, Adam), warm-started from
   the current net; one game in 20 is held out and the epoch with the lowest held-out error kept.
4. Repeat with fresh games (new dice) for ``rounds`` rounds. Each round reports the held-out root
   mean square of ``V₀ − V₁`` (points) before and after its fit.

Determinism: game ``k`` of round ``i`` uses the dice ``SeededDice(seed · 1,000,003 + i ·
10,000,019 + k + 5,000,000)`` (apart from those of ``nardy train``) and the mini-batch order
``default_rng((seed, i))``.

    python -m nardy.train.consistency --variant backgammon --rounds 3 --games 150 --out W.npz
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import argparse
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nardy.bots import HeuristicBot
from nardy.bots.base import Bot
from nardy.bots.neural import NeuralBot
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines.evaluator import NeuralEvaluator
from nardy.engines.net import NetEngine, ValueNet, scale_for, shipped_value_weights
from nardy.engines.search import Searcher
from nardy.train.policy_iteration import IterationConfig, Samples, ends_the_turn, fit

__all__ = [
    "ConsistencyConfig",
    "Positions",
    "collect_positions",
    "inconsistency",
    "one_ply_targets",
    "train_consistent",
]

Array = npt.NDArray[np.float64]
ROUND_STRIDE = 10_000_019
DICE_OFFSET = 5_000_000
"""Keeps these dice apart from ``nardy train``'s (which start at seed · 1,000,003)."""


@dataclass(frozen=True, slots=True)
class ConsistencyConfig:
    """What decides a run (all of it is recorded in the sidecar)."""

    variant: str
    rounds: int = 3
    games: int = 150
    """Games per round (half against heuristic, half self-play)."""
    seed: int = 1
    epochs: int = 6
    batch: int = 128
    learning_rate: float = 3e-4
    outcome_weight: float = 0.0
    """Target = (1 − w) · V₁ + w · the game's outcome (both ÷ the variant's scale)."""


@dataclass(slots=True)
class Positions:
    """End-of-turn afterstates (mover's view) with the game they came from and its outcome for
    their mover (points ÷ scale)."""

    afterstates: list[Position]
    games: npt.NDArray[np.int64]
    outcomes: npt.NDArray[np.float64]


def _dice_seed(seed: int, round_index: int, game: int) -> int:
    return seed * 1_000_003 + round_index * ROUND_STRIDE + game + DICE_OFFSET


def collect_positions(variant: Variant, games: int, seed: int, round_index: int) -> Positions:
    """Step 1 of the module docstring: the shipped value net's games (the net a refit is of,
    :func:`~nardy.engines.net.shipped_value_weights`), no cube."""
    scale = scale_for(variant)
    weights = shipped_value_weights(variant.name)
    afterstates: list[Position] = []
    game_ids: list[int] = []
    outcomes: list[float] = []
    for index in range(games):
        dice_seed = _dice_seed(seed, round_index, index)
        neural = NeuralBot(dice_seed, weights, variant=variant)
        opponent: Bot = (
            HeuristicBot(dice_seed)
            if index % 2 == 0
            else NeuralBot(dice_seed, weights, variant=variant)
        )
        opponent.start_game(variant, 1)
        bots: tuple[Bot, Bot] = (neural, opponent) if index % 4 < 2 else (opponent, neural)
        game = Game(variant, SeededDice(dice_seed), cube=CubeSettings())
        movers: list[int] = []
        while (decision := game.decision) is not None:
            if not isinstance(decision, PlayDecision):  # pragma: no cover - the cube is off
                raise RuntimeError(f"unexpected decision {decision!r} with the cube off")
            choice = 0 if len(decision.plays) == 1 else bots[decision.player].choose_play(decision)
            result = decision.plays[choice].result
            logged = len(game.events)
            game.decide(choice)
            if game.result is None and ends_the_turn(game, decision.player, logged):
                afterstates.append(result)
                movers.append(decision.player)
        outcome = game.result
        assert outcome is not None
        value = outcome.points / scale
        outcomes.extend(value if mover == outcome.winner else -value for mover in movers)
        game_ids.extend([index] * len(movers))
    return Positions(afterstates, np.asarray(game_ids, np.int64), np.asarray(outcomes, np.float64))


def _evaluator(variant: Variant, net: ValueNet) -> NeuralEvaluator:
    return NeuralEvaluator(variant, engine=NetEngine(net, variant))


def one_ply_targets(variant: Variant, net: ValueNet, afterstates: list[Position]) -> Array:
    """``V₀`` and ``V₁`` of each afterstate by ``net`` (points; shape (2, n)), batched."""
    searcher = Searcher(variant, _evaluator(variant, net))
    out = np.empty((2, len(afterstates)))
    chunk = 256
    for start in range(0, len(afterstates), chunk):
        part = afterstates[start : start + chunk]
        out[0, start : start + len(part)] = searcher.values(part, 0)
        out[1, start : start + len(part)] = searcher.values(part, 1)
    return out


def inconsistency(values: Array) -> float:
    """Root mean square of ``V₀ − V₁`` (points) over the afterstates of :func:`one_ply_targets`."""
    return float(np.sqrt(np.mean((values[0] - values[1]) ** 2))) if values.shape[1] else 0.0


def train_consistent(
    variant: Variant,
    config: ConsistencyConfig,
    out: Path,
    start: ValueNet | None = None,
    say: Any = print,
) -> ValueNet:
    """Run the recipe of the module docstring; writes ``out`` (.npz and .json sidecar)."""
    net = start if start is not None else ValueNet.load(shipped_value_weights(variant.name))
    scale = scale_for(variant)
    bot = NeuralBot(0)
    bot.bind(variant, net)
    history: list[dict[str, Any]] = []
    began = time.perf_counter()
    origin = {
        "start_sha256": net.meta.get("sha256"),
        "shipped_sha256": ValueNet.load(shipped_value_weights(variant.name)).meta.get("sha256"),
    }
    for round_index in range(config.rounds):
        clock = time.perf_counter()
        positions = collect_positions(variant, config.games, config.seed, round_index)
        play_s = time.perf_counter() - clock
        clock = time.perf_counter()
        values = one_ply_targets(variant, net, positions.afterstates)
        target_s = time.perf_counter() - clock
        w = config.outcome_weight
        targets = ((1.0 - w) * values[1] + w * positions.outcomes * scale) / scale
        bot.bind(variant, net)
        samples = Samples(
            bot.inputs_of(positions.afterstates).astype(np.float32),
            targets.astype(np.float32),
            positions.games,
        )
        settings = IterationConfig(
            variant.name,
            epochs=config.epochs,
            batch=config.batch,
            learning_rate=config.learning_rate,
        )
        clock = time.perf_counter()
        net, losses, kept = fit(
            net, samples, settings, np.random.default_rng((config.seed, round_index))
        )
        fit_s = time.perf_counter() - clock
        held_out = positions.games % 20 == 0
        before = inconsistency(values[:, held_out])
        after = inconsistency(
            one_ply_targets(
                variant, net, [p for p, h in zip(positions.afterstates, held_out, strict=True) if h]
            )
        )
        entry = {
            "round": round_index + 1,
            "samples": len(positions.afterstates),
            "play_seconds": round(play_s, 1),
            "target_seconds": round(target_s, 1),
            "fit_seconds": round(fit_s, 1),
            "held_out_mse": [round(x, 6) for x in losses],
            "epoch_kept": kept,
            "held_out_rms_v0_minus_v1": [round(before, 5), round(after, 5)],
        }
        history.append(entry)
        say(
            f"round {round_index + 1}/{config.rounds}: {entry['samples']} samples, "
            f"RMS(V0-V1) held out {before:.4f} -> {after:.4f} points, epoch {kept}, "
            f"{play_s:.0f}+{target_s:.0f}+{fit_s:.0f} s"
        )
        # Written after every round, so that a run cut short leaves its last complete round.
        net.meta = {
            **net.meta,
            "kind": "consistent",
            "method": "consistency",
            "consistency": {
                "config": asdict(config),
                "rounds_done": round_index + 1,
                "history": history,
                "seconds": round(time.perf_counter() - began, 1),
                **origin,
            },
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        net.save(out)
    return net


def main(argv: list[str] | None = None) -> int:
    from nardy.core import load_variant

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--outcome-weight", type=float, default=0.0)
    parser.add_argument("--start", type=Path, help="weights to start from (default: shipped)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.games < 2 or args.epochs < 1 or not 0 <= args.outcome_weight <= 1:
        parser.error("--rounds ≥ 1, --games ≥ 2, --epochs ≥ 1 and 0 ≤ --outcome-weight ≤ 1")
    try:
        variant = load_variant(args.variant)
        start = ValueNet.load(args.start) if args.start else None
    except ValueError as error:
        parser.error(str(error))
    config = ConsistencyConfig(
        variant.name,
        args.rounds,
        args.games,
        args.seed,
        args.epochs,
        args.batch,
        args.learning_rate,
        args.outcome_weight,
    )
    train_consistent(variant, config, args.out, start, say=lambda t: print(t, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
