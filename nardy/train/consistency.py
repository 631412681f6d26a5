"""Self-consistent nets: a net fitted so that its 0-ply value of an afterstate matches its own
1-ply value (numpy only, deterministic); for the outcome nets, generations of the net.

Why: without the cube, a game's luck-adjusted result telescopes into the two sides' 0-ply errors
plus the evaluator's *inconsistency* — its value of each position minus the mean over the
opponent's 21 rolls of its value after his best reply — summed over the game (docs/analysis.md).
Luck adjustment cannot remove that term; an evaluator whose ``V₀`` equals its ``V₁`` has none.

The recipe, for one variant, starting from the shipped weights of :mod:`nardy.engines.net`
(``net = "value"``: the value net of policy iteration, :func:`~nardy.engines.net.
shipped_value_weights`; ``net = "shipped"``: the net ``neural`` plays, ``VARIANT.npz``, an outcome
net of batched TD where one ships):

1. **Positions**: ``games`` games per round without the cube, played through the kernel's game
   loop (:class:`~nardy.core.game.Game`). With the value net, by the *shipped* neural bot:
   even-numbered games against ``heuristic`` (colours alternating), odd-numbered ones against
   itself — the games the analysis is asked about. With ``net = "shipped"``, by the *current*
   net against itself (a generation's self-play, as gnubg's and wildbg's loops play it). Every
   play whose result ends the mover's turn (as :mod:`nardy.train.policy_iteration` defines it)
   and does not end the game gives one sample: that afterstate (with ``rivals`` K, also the K
   best other results of its decision: :func:`collect_positions` says why).
2. **Targets**: the current net's 1-ply value of each sample, ``V₁(r) = −Σ_rolls w · max_plays
   V₀(result)`` (:class:`~nardy.engines.search.Searcher`, batched; short lists and whole-turn
   plans exactly as the analysis uses them), optionally mixed with the game's outcome
   (``outcome_weight``) to keep the fixed point tied to real results. An outcome net's targets
   are the 1-ply search's outcome *probabilities* (:func:`nardy.train.generations.
   one_ply_outcomes`), whose equity is that ``V₁``; or, with ``targets = "rollout"``, the
   outcome probabilities of truncated rollouts by the current net (:func:`nardy.train.
   generations.rollout_outcomes`; the round still reports ``V₀ − V₁``).
3. **Fit**: the net is regressed onto the targets (a value net: mean squared error; an outcome
   net: cross-entropy, :func:`nardy.train.generations.fit_outcomes`; Adam), warm-started from
   the current net; one game in 20 is held out (with ``versus_heuristic``, one in 20 of each
   kind: :func:`held_out`) and the epoch with the lowest held-out error kept.
4. Repeat with fresh games (new dice) for ``rounds`` rounds. Each round reports the held-out root
   mean square and standard deviation of ``V₀ − V₁`` (points) before and after its fit.

The sidecar's ``consistency.shipped_sha256`` names the net the refit was fitted from: a refit
stands for that net only (:func:`nardy.engines.net.fitted_from`; ``neural:1`` searches over
``VARIANT.consistent.npz`` only while it is a refit of ``VARIANT.npz``).

Determinism: game ``k`` of round ``i`` uses the dice ``SeededDice(seed · 1,000,003 + i ·
10,000,019 + k + 5,000,000)`` (apart from those of ``nardy train``) and the mini-batch order
``default_rng((seed, i))``.

    python -m nardy.train.consistency --variant backgammon --rounds 3 --games 150 --out W.npz
    python -m nardy.train.consistency --variant backgammon --net shipped --rounds 2 --games 400 \
        --out backgammon.consistent.npz
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
from nardy.core.turnplan import roll_plans
from nardy.core.variant import Variant
from nardy.encoding import encode_batch
from nardy.engines.evaluator import NeuralEvaluator
from nardy.engines.net import (
    Net,
    NetEngine,
    ValueNet,
    load_net,
    scale_for,
    shipped_value_weights,
    shipped_weights,
)
from nardy.engines.outcome_net import OutcomeNet, outcome_targets
from nardy.engines.search import Searcher
from nardy.train.generations import fit_outcomes, one_ply_outcomes, rollout_outcomes
from nardy.train.policy_iteration import HOLD_OUT, IterationConfig, Samples, ends_the_turn, fit

__all__ = [
    "ConsistencyConfig",
    "Positions",
    "collect_positions",
    "held_out",
    "inconsistency",
    "one_ply_targets",
    "plays_heuristic",
    "spread",
    "train_consistent",
    "zero_and_one_ply",
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
    """Games per round (the value net: half against heuristic, half self-play; ``net = "shipped"``:
    all self-play of the current net)."""
    seed: int = 1
    epochs: int = 6
    batch: int = 128
    learning_rate: float = 3e-4
    outcome_weight: float = 0.0
    """Target = (1 − w) · V₁ + w · the game's outcome (both ÷ the variant's scale)."""
    net: str = "value"
    """Which net is refitted (the module docstring): ``value`` or ``shipped``."""
    rivals: int = 0
    """Results of each decision sampled beside the played one (:func:`collect_positions`)."""
    versus_heuristic: float = 0.0
    """With ``net = "shipped"``: the share of a round's games the current net plays against
    ``heuristic`` instead of itself (:func:`collect_positions`)."""
    targets: str = "search"
    """With ``net = "shipped"``: ``search``, the 1-ply search's outcome probabilities, or
    ``rollout``, those of rollouts by the current net
    (:func:`nardy.train.generations.rollout_outcomes`)."""
    rollout_trials: int = 36
    """With ``targets = "rollout"``: games played on from each sample."""
    rollout_truncate: int | None = 2
    """With ``targets = "rollout"``: rolls after which a game is valued by the net (None: played
    to its end)."""


@dataclass(slots=True)
class Positions:
    """End-of-turn afterstates (mover's view) with the game they came from and its outcome for
    their mover (points ÷ scale)."""

    afterstates: list[Position]
    games: npt.NDArray[np.int64]
    outcomes: npt.NDArray[np.float64]
    played: npt.NDArray[np.bool_]
    """Whether each afterstate was played (False: a rival, see :func:`collect_positions`)."""
    by_heuristic: npt.NDArray[np.bool_]
    """Whether each afterstate is ``heuristic``'s (its plays in the games against it); the rest
    are the net's."""
    movers: npt.NDArray[np.int64]
    """The seat (0 White, 1 Black) whose play each afterstate is."""


def _dice_seed(seed: int, round_index: int, game: int) -> int:
    return seed * 1_000_003 + round_index * ROUND_STRIDE + game + DICE_OFFSET


def plays_heuristic(game: int, versus_heuristic: float) -> bool:
    """Whether game ``game`` of a round is the current net's against ``heuristic``: that share
    of the round's games, spread evenly over them (:func:`collect_positions`)."""
    return int((game + 1) * versus_heuristic) > int(game * versus_heuristic)


def held_out(games: npt.NDArray[np.int64], versus_heuristic: float) -> npt.NDArray[np.bool_]:
    """Which samples a fit holds out, by the game they came from: one game in ``HOLD_OUT`` of
    each kind, self-play and against ``heuristic``. Why both: the epoch a fit keeps is the one
    best on the held-out games, and every ``HOLD_OUT``-th game alone is all self-play with
    ``versus_heuristic = 0.5`` (the odd games are the others), so a fit that mends the positions
    ``heuristic`` leads to was judged on none of them. Without games against ``heuristic`` this
    is every ``HOLD_OUT``-th game, as before."""
    count = int(games.max()) + 1 if games.size else 0
    kind = np.array([plays_heuristic(g, versus_heuristic) for g in range(count)], dtype=bool)
    rank = np.empty(count, dtype=np.int64)  # a game's place among the games of its kind
    for mask in (kind, ~kind):
        rank[mask] = np.arange(int(mask.sum()))
    chosen: npt.NDArray[np.bool_] = (rank % HOLD_OUT == 0)[games]
    return chosen


def collect_positions(
    variant: Variant,
    games: int,
    seed: int,
    round_index: int,
    player: Net | None = None,
    rivals: int = 0,
    versus_heuristic: float = 0.0,
) -> Positions:
    """Step 1 of the module docstring, no cube: the shipped value net's games (the net a refit is
    of, :func:`~nardy.engines.net.shipped_value_weights`), or with ``player`` that net's games
    against itself. ``rivals`` (with ``player``): after each sampled play of a decision whose
    every legal result ends the turn (:func:`_every_result_ends_the_turn`), that many more
    results of the same decision, the best others by the player's 0-ply value. Why: the played
    result is the one whose value is most overestimated (it won the comparison), so a fit to the
    played results alone lowers them against the results they beat, and the net then plays
    those. ``versus_heuristic`` (with ``player``): that share of the games, spread evenly over
    them, the player plays against ``heuristic`` (seats alternating), and both sides' plays are
    sampled. Why: self-play's positions are the ones the net leads to; the positions a
    different opponent leads to, and where it is beaten, may never come up there."""
    if (rivals or versus_heuristic) and player is None:
        raise ValueError(
            "rivals and games against heuristic need the current net's games (--net shipped)"
        )
    if not 0.0 <= versus_heuristic <= 1.0:
        raise ValueError(f"versus_heuristic is a share from 0 to 1, not {versus_heuristic}")
    scale = scale_for(variant)
    weights = shipped_value_weights(variant.name)
    afterstates: list[Position] = []
    game_ids: list[int] = []
    outcomes: list[float] = []
    played: list[bool] = []
    by_heuristic: list[bool] = []
    seats: list[int] = []
    for index in range(games):
        dice_seed = _dice_seed(seed, round_index, index)
        bots: tuple[Bot, Bot]
        if player is not None:
            # A 0-ply bot is a function of the position: one bot sits in both seats.
            neural = NeuralBot(dice_seed)
            neural.bind(variant, player)
            bots = (neural, neural)
            if plays_heuristic(index, versus_heuristic):
                heuristic = HeuristicBot(dice_seed)
                heuristic.start_game(variant, 1)
                bots = (neural, heuristic) if index % 2 == 0 else (heuristic, neural)
        else:
            neural = NeuralBot(dice_seed, weights, variant=variant)
            opponent: Bot = (
                HeuristicBot(dice_seed)
                if index % 2 == 0
                else NeuralBot(dice_seed, weights, variant=variant)
            )
            opponent.start_game(variant, 1)
            bots = (neural, opponent) if index % 4 < 2 else (opponent, neural)
        game = Game(variant, SeededDice(dice_seed), cube=CubeSettings())
        movers: list[int] = []
        heuristic_seats = {seat for seat, bot in enumerate(bots) if isinstance(bot, HeuristicBot)}
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
                played.append(True)
                by_heuristic.append(decision.player in heuristic_seats)
                if (
                    rivals
                    and len(decision.plays) > 1
                    and _every_result_ends_the_turn(variant, decision)
                ):
                    engine = neural.engine
                    values = engine.net.values(engine.inputs_of_plays(decision.plays))
                    values[choice] = -np.inf
                    order = np.argsort(-values, kind="stable")[: min(rivals, len(values) - 1)]
                    for other in order:
                        afterstates.append(decision.plays[int(other)].result)
                        movers.append(decision.player)
                        played.append(False)
                        by_heuristic.append(decision.player in heuristic_seats)
        outcome = game.result
        assert outcome is not None
        value = outcome.points / scale
        outcomes.extend(value if mover == outcome.winner else -value for mover in movers)
        game_ids.extend([index] * len(movers))
        seats.extend(movers)
    return Positions(
        afterstates,
        np.asarray(game_ids, np.int64),
        np.asarray(outcomes, np.float64),
        np.asarray(played, np.bool_),
        np.asarray(by_heuristic, np.bool_),
        np.asarray(seats, np.int64),
    )


def _every_result_ends_the_turn(variant: Variant, decision: PlayDecision) -> bool:
    """Whether every legal result of ``decision`` ends its mover's turn, so that its rivals are
    afterstates as the played one is: a roll's first segment that the turn plan makes the turn's
    last whatever is played (:func:`~nardy.core.turnplan.roll_plan`: two different dice, or a
    double of four steps; a progression's stage or a re-roll chain's double may go on)."""
    segment = decision.segment
    if segment.kind != "roll":
        return False
    return roll_plans(variant.rules.turn)[(segment.dice[0], segment.dice[1])][2]


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


def spread(values: Array) -> float:
    """Standard deviation of ``V₀ − V₁`` (points): the part of the inconsistency a constant
    offset does not explain, which is what reorders a search's plays."""
    return float(np.std(values[0] - values[1])) if values.shape[1] else 0.0


def zero_and_one_ply(variant: Variant, net: Net, afterstates: list[Position]) -> Array:
    """``V₀`` and ``V₁`` of each afterstate by either format of net."""
    if isinstance(net, OutcomeNet):
        return one_ply_outcomes(variant, net, afterstates)[0]
    return one_ply_targets(variant, net, afterstates)


def _fit_round(
    variant: Variant,
    net: Net,
    positions: Positions,
    config: ConsistencyConfig,
    rng: np.random.Generator,
    round_index: int,
) -> tuple[Net, Array, list[float], int, float]:
    """Steps 2 and 3 of the module docstring for one round: the fitted net, the positions'
    ``V₀`` and ``V₁`` before the fit, the held-out losses, the epoch kept and the seconds the
    targets took."""
    scale = scale_for(variant)
    w = config.outcome_weight
    clock = time.perf_counter()
    if isinstance(net, OutcomeNet):
        if config.targets == "rollout":
            _, probabilities = rollout_outcomes(
                variant,
                net,
                positions.afterstates,
                trials=config.rollout_trials,
                truncate=config.rollout_truncate,
                seed=_dice_seed(config.seed, round_index, 0),
            )
            # The round's report measures the net against its 1-ply look-ahead either way.
            values = one_ply_outcomes(variant, net, positions.afterstates)[0]
        else:
            values, probabilities = one_ply_outcomes(variant, net, positions.afterstates)
        target_s = time.perf_counter() - clock
        results = outcome_targets(positions.outcomes * scale, net.levels)
        targets = ((1.0 - w) * probabilities + w * results).astype(np.float32)
        inputs = encode_batch(positions.afterstates).astype(np.float32)
        fitted, losses, kept = fit_outcomes(
            net,
            inputs,
            targets,
            positions.games,
            epochs=config.epochs,
            batch=config.batch,
            learning_rate=config.learning_rate,
            rng=rng,
            held_out=held_out(positions.games, config.versus_heuristic),
        )
        return fitted, values, losses, kept, target_s
    values = one_ply_targets(variant, net, positions.afterstates)
    target_s = time.perf_counter() - clock
    bot = NeuralBot(0)
    bot.bind(variant, net)
    samples = Samples(
        bot.inputs_of(positions.afterstates).astype(np.float32),
        (((1.0 - w) * values[1] + w * positions.outcomes * scale) / scale).astype(np.float32),
        positions.games,
    )
    settings = IterationConfig(
        variant.name,
        epochs=config.epochs,
        batch=config.batch,
        learning_rate=config.learning_rate,
    )
    value_net, losses, kept = fit(net, samples, settings, rng)
    return value_net, values, losses, kept, target_s


def _base(variant: Variant, config: ConsistencyConfig) -> Path:
    """The weights file a run refits (the module docstring's ``net``)."""
    if config.net == "value":
        return shipped_value_weights(variant.name)
    if config.net == "shipped":
        return shipped_weights(variant.name)
    raise ValueError(f"net must be 'value' or 'shipped', not {config.net!r}")


def train_consistent(
    variant: Variant,
    config: ConsistencyConfig,
    out: Path,
    start: Net | None = None,
    say: Any = print,
) -> Net:
    """Run the recipe of the module docstring; writes ``out`` (.npz and .json sidecar)."""
    base = _base(variant, config)
    net = start if start is not None else load_net(base)
    # Before any game is played: a run refused at its first fit would have wasted a round.
    if config.targets not in ("search", "rollout"):
        raise ValueError(f"targets must be 'search' or 'rollout', not {config.targets!r}")
    if config.targets == "rollout" and not isinstance(net, OutcomeNet):
        raise ValueError("rollout targets are an outcome net's (net = 'shipped')")
    history: list[dict[str, Any]] = []
    began = time.perf_counter()
    origin = {
        "start_sha256": net.meta.get("sha256"),
        "shipped_sha256": load_net(base).meta.get("sha256"),
    }
    for round_index in range(config.rounds):
        clock = time.perf_counter()
        player = net if config.net == "shipped" else None
        positions = collect_positions(
            variant,
            config.games,
            config.seed,
            round_index,
            player,
            config.rivals,
            config.versus_heuristic,
        )
        play_s = time.perf_counter() - clock
        clock = time.perf_counter()
        net, values, losses, kept, target_s = _fit_round(
            variant,
            net,
            positions,
            config,
            np.random.default_rng((config.seed, round_index)),
            round_index,
        )
        fit_s = time.perf_counter() - clock - target_s
        # Measured on the played results of the held-out games (the positions a game asks about).
        checked = held_out(positions.games, config.versus_heuristic) & positions.played
        refit = zero_and_one_ply(
            variant, net, [p for p, h in zip(positions.afterstates, checked, strict=True) if h]
        )
        before, after = inconsistency(values[:, checked]), inconsistency(refit)
        sd_before, sd_after = spread(values[:, checked]), spread(refit)
        entry = {
            "round": round_index + 1,
            "samples": len(positions.afterstates),
            "play_seconds": round(play_s, 1),
            "target_seconds": round(target_s, 1),
            "fit_seconds": round(fit_s, 1),
            "held_out_loss": [round(x, 6) for x in losses],
            "epoch_kept": kept,
            "held_out_rms_v0_minus_v1": [round(before, 5), round(after, 5)],
            "held_out_sd_v0_minus_v1": [round(sd_before, 5), round(sd_after, 5)],
        }
        history.append(entry)
        say(
            f"round {round_index + 1}/{config.rounds}: {config.games} games, "
            f"{entry['samples']} samples, RMS(V0-V1) held out {before:.4f} -> {after:.4f} "
            f"points (SD {sd_before:.4f} -> {sd_after:.4f}), epoch {kept}, "
            f"{play_s:.0f} s play, {target_s:.0f} s targets, {fit_s:.0f} s fit"
        )
        # Written after every round, so that a run cut short leaves its last complete round.
        meta: dict[str, Any] = {
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
        net.meta = meta
        out.parent.mkdir(parents=True, exist_ok=True)
        net.save(out)
    return net


def main(argv: list[str] | None = None) -> int:
    from nardy.core import load_variant

    parser = argparse.ArgumentParser(
        prog="python -m nardy.train.consistency",
        description=" ".join(__doc__.split("\n\n")[0].split()),
        epilog="examples:\n"
        "  python -m nardy.train.consistency --variant backgammon --rounds 3 --games 150 "
        "--out W.npz\n"
        "  python -m nardy.train.consistency --variant giul --net shipped --rounds 3 --games 300 "
        "--rivals 4 --out giul.npz\n"
        "  python -m nardy.train.consistency --variant hypergammon --net shipped --targets rollout "
        "--rollout-trials 36 --rollout-truncate -1 --out hypergammon.npz\n"
        "(docs/bots.md, Generations: the recipe and what it measured)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--variant", required=True, help="the variant whose net is refitted")
    parser.add_argument(
        "--out", required=True, type=Path, help="where the weights go (saved after every round)"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of games, labels and fit (%(default)s)"
    )
    parser.add_argument("--games", type=int, default=150, help="games played a round (%(default)s)")
    parser.add_argument(
        "--seed", type=int, default=1, help="the dice and mini-batch order (%(default)s)"
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=6,
        help="passes over a round's samples, the best held out kept (%(default)s)",
    )
    parser.add_argument(
        "--batch", type=int, default=128, help="samples a gradient step (%(default)s)"
    )
    parser.add_argument(
        "--learning-rate", type=float, default=3e-4, help="Adam's step size (%(default)s)"
    )
    parser.add_argument(
        "--outcome-weight",
        type=float,
        default=0.0,
        help="share of the game's outcome in each target, the rest the 1-ply value, 0 to 1 (%(default)s)",
    )
    parser.add_argument(
        "--net",
        choices=("value", "shipped"),
        default="value",
        help="refit the value net (VARIANT.value.npz where an outcome net ships) or the net "
        "neural plays (VARIANT.npz: generations of an outcome net, on its own self-play; "
        "%(default)s)",
    )
    parser.add_argument(
        "--rivals",
        type=int,
        default=0,
        help="also fit the K best other results of each decision whose every result ends the "
        "turn (--net shipped; %(default)s)",
    )
    parser.add_argument(
        "--versus-heuristic",
        type=float,
        default=0.0,
        help="share of a round's games the current net plays against heuristic instead of itself "
        "(--net shipped; %(default)s)",
    )
    parser.add_argument(
        "--targets",
        choices=("search", "rollout"),
        default="search",
        help="what each sample is fitted to (--net shipped): the current net's 1-ply search, or "
        "rollouts of the current net (%(default)s)",
    )
    parser.add_argument(
        "--rollout-trials",
        type=int,
        default=36,
        help="with --targets rollout: games played on from each sample (%(default)s)",
    )
    parser.add_argument(
        "--rollout-truncate",
        type=int,
        default=2,
        help="with --targets rollout: rolls after which a game is valued by the net, -1 to play "
        "it to its end (%(default)s)",
    )
    parser.add_argument("--start", type=Path, help="weights to start from (default: --net's)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.games < 2 or args.epochs < 1 or not 0 <= args.outcome_weight <= 1:
        parser.error("--rounds ≥ 1, --games ≥ 2, --epochs ≥ 1 and 0 ≤ --outcome-weight ≤ 1")
    if args.rivals < 0 or (args.rivals and args.net != "shipped"):
        parser.error("--rivals is a count ≥ 0, with --net shipped only")
    if not 0 <= args.versus_heuristic <= 1 or (args.versus_heuristic and args.net != "shipped"):
        parser.error("--versus-heuristic is a share from 0 to 1, with --net shipped only")
    if args.targets == "rollout" and args.net != "shipped":
        parser.error("--targets rollout goes with --net shipped (an outcome net's generations)")
    if args.rollout_trials < 1 or args.rollout_truncate < -1:
        parser.error("--rollout-trials ≥ 1 and --rollout-truncate ≥ 0 (or -1: to the end)")
    try:
        variant = load_variant(args.variant)
        start = load_net(args.start) if args.start else None
        if args.rivals:
            collect_positions(variant, 0, 0, 0, start or load_net(shipped_weights(variant.name)), 1)
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
        args.net,
        args.rivals,
        args.versus_heuristic,
        args.targets,
        args.rollout_trials,
        None if args.rollout_truncate == -1 else args.rollout_truncate,
    )
    train_consistent(variant, config, args.out, start, say=lambda t: print(t, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
