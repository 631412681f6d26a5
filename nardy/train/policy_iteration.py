"""Approximate policy iteration with Monte Carlo returns (numpy only, deterministic).

Why not TD(λ) self-play alone: in the eight same-direction variants (long nardy and its family)
TD(λ) from the heuristic prior plateaued at the heuristic's level or below, also with six times the
games (docs/bots.md). This method starts from a policy that is already good and improves on it:

1. **Play**: ``games`` self-play games of the current policy, without the cube. Iteration 0's policy
   is ``heuristic``; iteration ``i ≥ 1``'s is the greedy policy of the network fitted in iteration
   ``i − 1``. A play decision whose result ends the mover's turn gives one sample: that result (an
   afterstate, his view) and, as its target, the points he won (+) or lost (−) in that game ÷ the
   variant's scale. A fraction ``explore`` of the decisions plays a uniformly random legal play
   instead (its afterstate is still followed by the policy, so its target is still that policy's
   value).

   Only afterstates that end the turn are samples: those the opponent's own roll follows (or the
   game's end). After a progression stage that goes on, a re-roll, or steps transferred to the
   opponent (§2.8–§2.10), what follows is not on the board; a network fitted to those afterstates
   too learns "boards that look like the middle of a progression win" (their targets include the
   stages still to come) and then prefers such boards on ordinary rolls. In giul that fit lost
   0.51 ± 0.04 points per game to ``heuristic`` (2,000 games). The network still chooses the plays
   of every segment, valuing each result as if the opponent rolled next, as ``heuristic`` does.
2. **Fit**: the network of :mod:`nardy.engines.net` is regressed onto these targets (mean squared
   error, Adam, mini-batches), warm-started from the previous iteration; one game in 20 is held
   out, and the epoch with the lowest held-out error is kept.
3. The fitted U estimates the value of the policy that played; acting greedily on it is a policy
   improvement step (Sutton & Barto, §4.2; Tesauro and Galperin's rollout improvement of a base
   policy), so the next iteration plays better and is measured against ``heuristic`` again.
4. **Short list**: the estimates are trustworthy near the plays the policy made, less so for plays
   it never makes (no sample shows where they lead). So the network may re-rank only the ``k``
   plays the heuristic prior ranks best: each ``k`` of ``candidates`` (0: all plays) is evaluated
   against ``heuristic`` and the best is written to the sidecar (``candidates``), where
   :class:`~nardy.bots.neural.NeuralBot` reads it. In giul, the network alone lost
   0.24 ± 0.06 points per game to ``heuristic``; re-ranking its best 2 won 0.13 ± 0.05 (400 games).

The Monte Carlo targets see the whole result, gammons, mars and koks included; there is no
bootstrapping, so nothing diverges when the heuristic's values are large.

Determinism: game ``k`` of iteration ``i`` uses the dice ``SeededDice(seed · 1,000,003 +
i · 10,000,019 + k)`` and its exploration generator ``default_rng((seed, i, k))``; the initial
weights come from ``default_rng(seed)`` and the mini-batch order from ``default_rng((seed, i))``.
With ``workers > 1`` the games are played in parallel processes and their samples joined in game
order, so the weights do not depend on the number of workers. A checkpoint (``OUT.ckpt.npz``) is
written after every iteration; ``resume=True`` continues with the next iteration.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Protocol

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy
import numpy as np
import numpy.typing as npt

from nardy.bots import HeuristicBot
from nardy.bots.neural import NeuralBot
from nardy.collector import tune as tune_collector
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.encoding import BOARD_SIZE, encode_batch
from nardy.engines.net import INPUTS, PRIOR_SCALE, ValueNet, scale_for
from nardy.train.td import Evaluation, best_path, checkpoint_path, evaluate

__all__ = ["IterationConfig", "Reporter", "Samples", "fit", "play_samples", "train"]

Array = npt.NDArray[np.float64]

METHOD = "policy-iteration"
GAME_SEED_STRIDE = 10_000_019
"""Dice seeds of iteration i start at seed · 1,000,003 + i · this: apart for up to 10⁷ games."""
HOLD_OUT = 20
"""Every 20th game (game index ≡ 0 mod 20) is held out to choose the epoch."""
ENCODE_CHUNK = 50_000


@dataclass(frozen=True, slots=True)
class IterationConfig:
    """What decides a run (all of it is recorded in the sidecar)."""

    variant: str
    iterations: int = 1
    games: int = 18_000
    """Self-play games per iteration."""
    seed: int = 1
    hidden: int = 128
    epochs: int = 8
    """Epochs per fit at most; the one with the lowest held-out error is kept."""
    batch: int = 256
    learning_rate: float = 1e-3
    explore: float = 0.0
    eval_games: int = 200
    candidates: tuple[int, ...] = (0, 2, 4, 8)
    """Short-list lengths tried after each fit (0: every legal play); the best evaluation's is kept."""
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Samples:
    """One sample per play decision: network inputs, target, and the game it came from."""

    inputs: npt.NDArray[np.float32]
    """Shape (n, 197): the chosen result's encoding and the heuristic prior unit."""
    targets: npt.NDArray[np.float32]
    """The mover's points in that game ÷ the variant's scale (negative when he lost)."""
    games: npt.NDArray[np.int64]
    """The index of the game each sample came from."""

    @classmethod
    def join(cls, parts: Sequence[Samples]) -> Samples:
        return cls(
            np.concatenate([p.inputs for p in parts]),
            np.concatenate([p.targets for p in parts]),
            np.concatenate([p.games for p in parts]),
        )


class Reporter(Protocol):
    """Where a run reports its progress (the CLI draws bars and prints lines)."""

    def phase(self, description: str, total: int) -> None: ...

    def advance(self, amount: int) -> None: ...

    def line(self, text: str) -> None: ...


class _Silent:
    def phase(self, description: str, total: int) -> None:
        pass

    def advance(self, amount: int) -> None:
        pass

    def line(self, text: str) -> None:
        pass


def game_seed(seed: int, iteration: int, game: int) -> int:
    """The dice seed of game ``game`` of iteration ``iteration`` (module docstring)."""
    return seed * 1_000_003 + iteration * GAME_SEED_STRIDE + game


def ends_the_turn(game: Game, mover: int, logged: int) -> bool:
    """Whether the play logged as event ``logged`` ended its mover's turn with nothing handed
    over: the next event is the game's end or the opponent's roll, not the mover's next stage,
    re-roll or transfer of steps."""
    if logged + 1 == len(game.events):
        # Nothing logged since: the game is over, or the mover's next stage is asked for at once.
        return game.result is not None
    following = game.events[logged + 1]
    return following.kind == "end" or (following.kind == "roll" and following.player != mover)


def play_samples(
    variant: Variant,
    net: ValueNet | None,
    seed: int,
    iteration: int,
    games: range,
    explore: float = 0.0,
    advance: Callable[[int], None] | None = None,
) -> Samples:
    """Self-play ``games`` of iteration ``iteration``: heuristic's play when ``net`` is ``None``,
    else ``net``'s; one sample per play whose result ends its mover's turn (module docstring,
    step 1)."""
    scale = scale_for(variant)
    heuristic = HeuristicBot(0)
    heuristic.bind(variant)
    greedy: NeuralBot | None = None
    if net is not None:
        greedy = NeuralBot(0)
        greedy.bind(variant, net)
    no_cube = CubeSettings()
    results: list[Position] = []
    priors: list[float] = []
    targets: list[float] = []
    game_ids: list[int] = []
    for index in games:
        game = Game(variant, SeededDice(game_seed(seed, iteration, index)), cube=no_cube)
        explorer = np.random.default_rng((seed, iteration, index))
        base = HeuristicBot(game_seed(seed, iteration, index))
        base.bind(variant)
        movers: list[int] = []
        while (decision := game.decision) is not None:
            if not isinstance(decision, PlayDecision):  # pragma: no cover - the cube is off
                raise RuntimeError(f"unexpected decision {decision!r} with the cube off")
            plays = decision.plays
            if len(plays) == 1:
                choice = 0
            elif explore > 0 and explorer.random() < explore:
                choice = int(explorer.integers(len(plays)))
            elif greedy is None:
                choice = base.choose_play(decision)
            else:
                choice = greedy.choose_play(decision)
            result = plays[choice].result
            logged = len(game.events)
            game.decide(choice)
            if not ends_the_turn(game, decision.player, logged):
                continue
            results.append(result)
            priors.append(heuristic.evaluate(result))
            movers.append(decision.player)
        outcome = game.result
        assert outcome is not None
        value = outcome.points / scale
        targets.extend(value if mover == outcome.winner else -value for mover in movers)
        game_ids.extend([index] * len(movers))
        if advance is not None:
            advance(1)
    inputs = np.empty((len(results), INPUTS), np.float32)
    for start in range(0, len(results), ENCODE_CHUNK):
        chunk = results[start : start + ENCODE_CHUNK]
        inputs[start : start + len(chunk), :BOARD_SIZE] = encode_batch(chunk)
    inputs[:, BOARD_SIZE] = np.asarray(priors, np.float64) / PRIOR_SCALE
    return Samples(inputs, np.asarray(targets, np.float32), np.asarray(game_ids, np.int64))


def _worker_samples(
    variant_name: str,
    options: dict[str, Any],
    params: dict[str, Array] | None,
    meta: dict[str, Any],
    seed: int,
    iteration: int,
    games: range,
    explore: float,
) -> Samples:
    """:func:`play_samples` in a worker process (the variant and the net travel as plain data)."""
    from nardy.core.plugins import load_variant

    variant = load_variant(variant_name, options)
    net = ValueNet.from_params(params, meta) if params is not None else None
    return play_samples(variant, net, seed, iteration, games, explore)


def _play_in_parallel(
    variant: Variant,
    net: ValueNet | None,
    config: IterationConfig,
    iteration: int,
    workers: int,
    reporter: Reporter,
) -> Samples:
    total = config.games
    if workers <= 1:
        return play_samples(
            variant, net, config.seed, iteration, range(total), config.explore, reporter.advance
        )
    chunk = max(1, min(200, math.ceil(total / (4 * workers))))
    spans = [range(start, min(total, start + chunk)) for start in range(0, total, chunk)]
    params = net.params() if net is not None else None
    meta = dict(net.meta) if net is not None else {}
    parts: list[Samples] = []
    with ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=tune_collector
    ) as pool:
        futures = [
            pool.submit(
                _worker_samples,
                variant.name,
                dict(variant.options),
                params,
                meta,
                config.seed,
                iteration,
                span,
                config.explore,
            )
            for span in spans
        ]
        for span, future in zip(spans, futures, strict=True):
            parts.append(future.result())
            reporter.advance(len(span))
    return Samples.join(parts)


def initial_net(samples: Samples, hidden: int, seed: int) -> ValueNet:
    """Random hidden weights, a silent hidden layer (v = 0) and the skip term fitted to the
    targets by least squares, so the first fit starts from the heuristic's ranking."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 1.0 / math.sqrt(INPUTS), size=(hidden, INPUTS))
    prior = samples.inputs[:, BOARD_SIZE].astype(np.float64)
    targets = samples.targets.astype(np.float64)
    spread = float(prior.var())
    a = (
        float(np.mean((prior - prior.mean()) * (targets - targets.mean())) / spread)
        if spread
        else 0
    )
    c = float(targets.mean() - a * prior.mean())
    meta = {"prior": "linear", "prior_scale": PRIOR_SCALE}
    return ValueNet(w, np.zeros(hidden), np.zeros(hidden), c, a, meta)


def _loss(
    net: ValueNet, inputs: npt.NDArray[np.float32], targets: npt.NDArray[np.float32]
) -> float:
    total = 0.0
    for start in range(0, len(inputs), ENCODE_CHUNK):
        x = inputs[start : start + ENCODE_CHUNK].astype(np.float64)
        errors = net.values(x) - targets[start : start + ENCODE_CHUNK]
        total += float(errors @ errors)
    return total / max(1, len(inputs))


def fit(
    net: ValueNet,
    samples: Samples,
    config: IterationConfig,
    rng: np.random.Generator,
    reporter: Reporter | None = None,
) -> tuple[ValueNet, list[float], int]:
    """Regress ``net`` (a copy) onto ``samples`` by Adam; returns the net of the epoch with the
    lowest held-out mean squared error, the held-out error after each epoch (index 0: before
    fitting) and that epoch."""
    reporter = reporter or _Silent()
    held_out = samples.games % HOLD_OUT == 0
    train_x, train_y = samples.inputs[~held_out], samples.targets[~held_out]
    check_x, check_y = samples.inputs[held_out], samples.targets[held_out]
    params = {name: value.copy() for name, value in net.params().items()}
    first = {name: np.zeros_like(value) for name, value in params.items()}
    second = {name: np.zeros_like(value) for name, value in params.items()}
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8

    def as_net(values: dict[str, Array]) -> ValueNet:
        return ValueNet.from_params(
            {name: value.copy() for name, value in values.items()}, dict(net.meta)
        )

    losses = [_loss(net, check_x, check_y)]
    best, best_epoch = as_net(params), 0
    step = 0
    batches = math.ceil(len(train_x) / config.batch)
    for epoch in range(1, config.epochs + 1):
        reporter.phase(f"fit, epoch {epoch}/{config.epochs}", batches)
        order = rng.permutation(len(train_x))
        for start in range(0, len(order), config.batch):
            rows = order[start : start + config.batch]
            x = train_x[rows].astype(np.float64)
            y = train_y[rows]
            hidden = np.tanh(x @ params["w"].T + params["b"])
            out = hidden @ params["v"] + params["c"][0] + params["a"][0] * x[:, -1]
            error = (out - y) * (2.0 / len(rows))
            back = np.outer(error, params["v"]) * (1.0 - hidden * hidden)
            grads = {
                "w": back.T @ x,
                "b": back.sum(axis=0),
                "v": hidden.T @ error,
                "c": np.array([error.sum()]),
                "a": np.array([error @ x[:, -1]]),
            }
            step += 1
            correction1 = 1.0 - beta1**step
            correction2 = 1.0 - beta2**step
            for name, grad in grads.items():
                first[name] = beta1 * first[name] + (1.0 - beta1) * grad
                second[name] = beta2 * second[name] + (1.0 - beta2) * grad * grad
                params[name] -= (
                    config.learning_rate
                    * (first[name] / correction1)
                    / (np.sqrt(second[name] / correction2) + epsilon)
                )
            reporter.advance(1)
        candidate = as_net(params)
        if not np.isfinite(candidate.w).all() or not math.isfinite(candidate.a):
            raise RuntimeError(f"the fit diverged in epoch {epoch}: lower --learning-rate")
        losses.append(_loss(candidate, check_x, check_y))
        if losses[-1] < losses[best_epoch]:
            best, best_epoch = candidate, epoch
    return best, losses, best_epoch


def select_candidates(
    variant: Variant,
    net: ValueNet,
    config: IterationConfig,
    at: int,
    advance: Callable[[int], None] | None = None,
) -> dict[int, Evaluation]:
    """Evaluate ``net`` against ``heuristic`` re-ranking the heuristic's k best plays for each k of
    ``config.candidates`` (0: all plays); set ``net.meta["candidates"]`` to the best k (the first
    of equals) and return every evaluation."""
    trials: dict[int, Evaluation] = {}
    for k in config.candidates:
        net.meta["candidates"] = k
        trials[k] = evaluate(variant, net, config.eval_games, at=at)
        if advance is not None:
            advance(1)
    best = max(trials, key=lambda k: (trials[k].points, -config.candidates.index(k)))
    net.meta["candidates"] = best
    return trials


_RESUME_KEYS = ("variant", "seed", "hidden", "games", "epochs", "batch", "learning_rate")


def train(
    variant: Variant,
    config: IterationConfig,
    out: Path,
    *,
    resume: bool = False,
    workers: int = 1,
    reporter: Reporter | None = None,
) -> ValueNet:
    """Run (or continue) ``config.iterations`` iterations and write ``out`` (.npz + .json),
    ``out.best.npz`` (the best evaluation so far) and a checkpoint after every iteration."""
    reporter = reporter or _Silent()
    out = Path(out)
    checkpoint = checkpoint_path(out)
    net: ValueNet | None = None
    done, seconds = 0, 0.0
    history: list[dict[str, Any]] = []
    if resume:
        if not checkpoint.is_file():
            raise ValueError(f"no checkpoint {str(checkpoint)!r} to resume from")
        net = ValueNet.load(checkpoint)
        saved = net.meta.get("config", {})
        if net.meta.get("method") != METHOD:
            raise ValueError(f"{checkpoint} was not written by --method {METHOD}")
        mine = asdict(config)
        for key in (*_RESUME_KEYS, "explore", "candidates", "options"):
            wanted = list(mine[key]) if isinstance(mine[key], tuple) else mine[key]
            if saved.get(key) != wanted:
                raise ValueError(
                    f"the checkpoint was made with {key}={saved.get(key)!r}, not {mine[key]!r}"
                )
        done = int(net.meta["iterations_done"])
        history = list(net.meta.get("history", []))
        seconds = float(net.meta.get("seconds", 0.0))
    started = time.perf_counter() - seconds
    best_points = max(
        (item["evaluation"]["points"] for item in history if "evaluation" in item),
        default=-math.inf,
    )

    def record(kind: str, current: ValueNet) -> dict[str, Any]:
        return {
            "candidates": current.meta.get("candidates", 0),
            "prior": "linear",
            "prior_scale": PRIOR_SCALE,
            "method": METHOD,
            "kind": kind,
            "variant": variant.name,
            "scale": scale_for(variant),
            "config": asdict(config),
            "iterations_done": done,
            "games": done * config.games,
            "seconds": round(time.perf_counter() - started, 1),
            "history": history,
        }

    def snapshot(current: ValueNet, path: Path, kind: str) -> None:
        current.meta = record(kind, current)
        current.save(path)

    while done < config.iterations:
        iteration = done
        clock = time.perf_counter()
        reporter.phase(f"iteration {iteration + 1}/{config.iterations}: self-play", config.games)
        samples = _play_in_parallel(variant, net, config, iteration, workers, reporter)
        played = time.perf_counter() - clock
        if net is None:
            net = initial_net(samples, config.hidden, config.seed)
        clock = time.perf_counter()
        rng = np.random.default_rng((config.seed, iteration))
        net, losses, epoch = fit(net, samples, config, rng, reporter)
        fitted = time.perf_counter() - clock
        item: dict[str, Any] = {
            "iteration": iteration + 1,
            "policy": "heuristic" if iteration == 0 else f"network of iteration {iteration}",
            "samples": len(samples.targets),
            "play_seconds": round(played, 1),
            "fit_seconds": round(fitted, 1),
            "held_out_mse": [round(loss, 5) for loss in losses],
            "epoch_kept": epoch,
        }
        evaluation: Evaluation | None = None
        if config.eval_games > 0:
            reporter.phase(f"iteration {iteration + 1}: evaluation", len(config.candidates))
            trials = select_candidates(
                variant, net, config, (iteration + 1) * config.games, reporter.advance
            )
            item["candidates"] = {str(k): asdict(e) for k, e in trials.items()}
            evaluation = trials[int(net.meta["candidates"])]
            item["evaluation"] = asdict(evaluation)
        else:
            net.meta["candidates"] = config.candidates[0]
        history.append(item)
        done += 1
        reporter.line(
            f"{variant.name} iteration {done}/{config.iterations} "
            f"({len(samples.targets)} samples, epoch {epoch} kept, held-out MSE "
            f"{losses[0]:.4f} → {losses[epoch]:.4f}, {time.perf_counter() - started:.0f} s)"
            + (f": {evaluation.text()}" if evaluation else "")
        )
        if evaluation is not None and evaluation.points > best_points:
            best_points = evaluation.points
            snapshot(net, best_path(out), "best")
        snapshot(net, checkpoint, "checkpoint")
    if net is None:
        raise ValueError("nothing to do: the checkpoint already has every iteration")
    snapshot(net, out, "final")
    return net
