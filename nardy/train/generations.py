"""Generations of an outcome net: its 0-ply outcome probabilities fitted to those of its own 1-ply
search, so that the net agrees with its own look-ahead (the outcome-net half of
:mod:`nardy.train.consistency`, which plays the games and runs the rounds).

Why: ``neural:1`` averages the net over the opponent's 21 rolls and his best replies. Where the
net's value of a position differs from that average by more than the search's gain, the search
ranks plays by the net's errors as much as by the look-ahead (backgammon's outcome net of batched
TD: ``neural:1`` did not beat ``neural``). Labelling positions with the deeper search of the
current net and fitting the next net to them is the loop of gnubg's and wildbg's training.

**Targets.** For an afterstate ``r`` (the mover's view), the opponent rolls each of the 21 rolls
(:data:`~nardy.engines.search.ROLLS`, weight ``w``) and makes the reply of highest 0-ply equity
among his options (:meth:`~nardy.engines.search.Searcher.roll_options`: the legal plays, or a
whole turn where a roll is a turn plan; an option is its ends with their probabilities). The
target is the probability vector of that search::

    P₁(r) = Σ_rolls w · flip(Σ_ends q · P₀(end))

where ``P₀`` is the net's outcome probabilities (:meth:`OutcomeNet.probabilities`, float64 as
play reads them), a finished game's exact outcome vector
(:func:`~nardy.engines.outcome_net.outcome_targets`), and ``flip`` the change of view
(:func:`~nardy.engines.outcome_net.flip_outcomes`). The equity is linear in the probabilities,
so ``equity(P₁(r))`` is the searcher's ``V₁(r)``: the same replies, the same values (the tests
check it). Steps handed over at the end of a turn (RULES.md §2.10) are not seen, as in
:func:`nardy.train.consistency.one_ply_targets`: ``V₀`` values positions only.

**Rollout targets** (:func:`rollout_outcomes`, ``--targets rollout``): instead of the 1-ply
search, the mean outcome vector of ``trials`` games played on from the afterstate through the
kernel's game loop by the net itself (its 0-ply plays, as the rollouts choose them:
:func:`nardy.analysis.rollout.play_on`), each stopped at its end (the exact outcome vector) or
after ``truncate`` rolls (the net's probabilities there). Trial ``t`` of an afterstate throws the
dice of :class:`~nardy.analysis.rollout.TrialDice` seeded by the round's seed and the position,
so the targets are deterministic. Deeper than one ply (each trial sees ``truncate`` turns and
the net's play in them) but sampled, and not variance-reduced: the luck that reduces a
rollout's equity (docs/analysis.md) is measured in equity, not per outcome, so the noise of a
target averages out over the fit's many samples instead.

**Fit.** Adam on the outcomes' cross-entropy (:mod:`nardy.train.batched`'s step, the trainer's
own), warm-started from the current net, in mini-batches; one game in 20 is held out and the
epoch with the lowest held-out cross-entropy kept.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import math
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nardy.analysis.rollout import TrialDice, play_on
from nardy.core.game import CubeSettings, Game
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.encoding import encode_batch
from nardy.engines.evaluator import NeuralEvaluator
from nardy.engines.outcome_net import (
    OutcomeEngine,
    OutcomeNet,
    cross_entropy,
    flip_outcomes,
    outcome_targets,
)
from nardy.engines.search import ROLLS, Searcher
from nardy.train.batched import Adam, fit_step
from nardy.train.policy_iteration import HOLD_OUT

__all__ = ["fit_outcomes", "one_ply_outcomes", "rollout_outcomes"]

Array = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
CHUNK = 256
"""Afterstates searched together (their replies' ends valued in one batch)."""


def one_ply_outcomes(
    variant: Variant, net: OutcomeNet, afterstates: Sequence[Position]
) -> tuple[Array, Array]:
    """``V₀`` and ``V₁`` of each afterstate by ``net`` (points; shape (2, n)) and the 1-ply
    outcome probabilities ``P₁`` (shape (n, 2L − 1)) of the module docstring."""
    searcher = Searcher(variant, NeuralEvaluator(variant, engine=OutcomeEngine(net, variant)))
    values = np.empty((2, len(afterstates)))
    targets = np.empty((len(afterstates), 2 * net.levels - 1))
    for start in range(0, len(afterstates), CHUNK):
        part = list(afterstates[start : start + CHUNK])
        rows = slice(start, start + len(part))
        values[0, rows] = searcher.values(part, 0)
        values[1, rows], targets[rows] = _one_ply(searcher, net, part)
    return values, targets


def _one_ply(
    searcher: Searcher, net: OutcomeNet, afterstates: list[Position]
) -> tuple[Array, Array]:
    variant, levels = searcher.variant, net.levels
    value = np.zeros(len(afterstates))
    target = np.zeros((len(afterstates), 2 * levels - 1))
    # Every reply's ends in one list: (option, probability) per end; per (afterstate, roll) the
    # range of its options.
    ends: list[Position] = []
    end_option: list[int] = []
    end_weight: list[float] = []
    groups: list[tuple[int, float, int, int]] = []
    options = 0
    for i, position in enumerate(afterstates):
        # A result that ends the game is scored exactly (Searcher.terminal: RULES.md §2.6, and
        # plakoto's mother rule §3.12.2), as the search scores it.
        terminal = searcher.terminal(position)
        if terminal is not None:
            value[i] = terminal
            target[i] = outcome_targets(np.array([terminal]), levels)[0]
            continue
        for (_, weight), replies in zip(
            ROLLS, searcher.roll_options(variant.flip(position)), strict=True
        ):
            first = options
            for option in replies:
                for probability, end, _ in option:
                    ends.append(end)
                    end_option.append(options)
                    end_weight.append(probability)
                options += 1
            groups.append((i, weight, first, options))
    if not ends:
        return value, target
    # The replier's view of each end: its probabilities and its 0-ply value, computed as the
    # search's evaluator computes it (OutcomeNet.values × scale), from one forward pass.
    v0 = np.empty(len(ends))
    p0 = np.empty((len(ends), target.shape[1]))
    exact = [searcher.terminal(end) for end in ends]
    open_ = [k for k, known in enumerate(exact) if known is None]
    if open_:
        p0[open_] = net.probabilities(encode_batch([ends[k] for k in open_]))
        v0[open_] = net.equity_of_outcomes(p0[open_]) / net.scale * net.scale
    done = [k for k, known in enumerate(exact) if known is not None]
    if done:
        v0[done] = [exact[k] for k in done]
        p0[done] = outcome_targets(v0[done], levels)
    owner = np.asarray(end_option, dtype=np.int64)
    q = np.asarray(end_weight)
    option_value = np.bincount(owner, weights=q * v0, minlength=options)
    option_p = np.zeros((options, target.shape[1]))
    np.add.at(option_p, owner, q[:, None] * p0)
    mover_p = flip_outcomes(option_p, levels)
    for i, weight, first, last in groups:
        best = first + int(np.argmax(option_value[first:last]))
        value[i] -= weight * option_value[best]
        target[i] += weight * mover_p[best]
    return value, target


def rollout_outcomes(
    variant: Variant,
    net: OutcomeNet,
    afterstates: Sequence[Position],
    *,
    trials: int,
    truncate: int | None,
    seed: int,
) -> tuple[Array, Array]:
    """``V₀`` and the rolled-out equity of each afterstate (points; shape (2, n)) and its
    rolled-out outcome probabilities (shape (n, 2L − 1)), the mover's view (the module
    docstring's *Rollout targets*)."""
    if trials < 1:
        raise ValueError(f"trials must be 1 or more, not {trials}")
    searcher = Searcher(variant, NeuralEvaluator(variant, engine=OutcomeEngine(net, variant)))
    levels = net.levels
    values = np.empty((2, len(afterstates)))
    targets = np.zeros((len(afterstates), 2 * levels - 1))
    # Where a trial was stopped: (afterstate, the afterstate seen by whoever moved last, whether
    # that is the opponent, colour 0 of the trial's game), valued in batches at the end.
    stopped: list[tuple[int, Position, bool]] = []
    played = np.ones(len(afterstates), dtype=bool)  # not ended: their targets are trial means
    for i, afterstate in enumerate(afterstates):
        terminal = searcher.terminal(afterstate)
        if terminal is not None:
            targets[i] = outcome_targets(np.array([terminal]), levels)[0]
            played[i] = False
            continue
        dice_seed = zlib.crc32(f"{seed}:{afterstate.id()}".encode())
        ends = []
        for t in range(trials):
            # The opponent, colour 0 here, rolls first; the afterstate's mover is colour 1.
            game = Game(
                variant,
                None,
                position=variant.flip(afterstate),
                mover=0,
                cube=CubeSettings(),
                auto_forced=False,
            )
            play_on(searcher, game, TrialDice(dice_seed, t), truncate=truncate, reduce=False)
            result = game.result
            if result is None:  # a roll to throw: valued by the side that has just moved
                stopped.append((i, variant.flip(game.position), game.mover == 1))
                continue
            points = 0.0 if result.draw else float(result.points)
            ends.append(points if result.winner == 1 else -points)
        if ends:
            targets[i] += outcome_targets(np.array(ends), levels).sum(axis=0)
    for start in range(0, len(stopped), CHUNK):
        part = stopped[start : start + CHUNK]
        p = net.probabilities(encode_batch([position for _, position, _ in part]))
        for (i, _, by_opponent), row in zip(part, p, strict=True):
            targets[i] += flip_outcomes(row, levels) if by_opponent else row
    targets[played] /= trials
    values[0] = searcher.values(list(afterstates), 0)
    values[1] = net.equity_of_outcomes(targets)
    return values, targets


def fit_outcomes(
    net: OutcomeNet,
    inputs: F32,
    targets: F32,
    games: npt.NDArray[np.int64],
    *,
    epochs: int,
    batch: int,
    learning_rate: float,
    rng: np.random.Generator,
    held_out: npt.NDArray[np.bool_] | None = None,
) -> tuple[OutcomeNet, list[float], int]:
    """Fit ``net`` (a copy) to the probability vectors ``targets`` of ``inputs`` (the module
    docstring); returns the net of the epoch with the lowest held-out cross-entropy, that
    cross-entropy after each epoch (index 0: before fitting) and the epoch kept (0: none
    improved, the net unchanged). The held-out samples are those of every ``HOLD_OUT``-th game
    unless ``held_out`` marks others."""
    if held_out is None:
        held_out = games % HOLD_OUT == 0
    train_x, train_y = inputs[~held_out], targets[~held_out]
    check_x, check_y = inputs[held_out], targets[held_out]
    current = net.copy()
    adam = Adam(current, None, 0)
    losses = [cross_entropy(current.outcomes(check_x), check_y)]
    best, kept = current.copy(), 0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(train_x))
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            fit_step(current, adam, train_x[rows], train_y[rows], learning_rate)
        if not all(np.isfinite(a).all() for a in current.params().values()):
            raise RuntimeError(f"the fit diverged in epoch {epoch}: lower --learning-rate")
        losses.append(cross_entropy(current.outcomes(check_x), check_y))
        if losses[-1] < losses[kept] or not math.isfinite(losses[kept]):
            best, kept = current.copy(), epoch
    return best, losses, kept
