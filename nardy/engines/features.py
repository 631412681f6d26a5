"""Input features an outcome net may read beside the board encoding (issue 37: "inputs from the
encoding plus features a variant family declares, chosen by measurement").

A feature set is computed from the 196 board units of ``nardy196_v1`` alone (:mod:`nardy.encoding`),
so every path that already encodes afterstates — the trainer's batches, the bot, the evaluators, the
search — gets the features by the net's own forward pass (:meth:`OutcomeNet.expand
<nardy.engines.outcome_net.OutcomeNet.expand>`), with no second encoder to keep in step. A checker
count is read back from a point's four units ``[n ≥ 1, n ≥ 2, n ≥ 3, (n − 3) / 2]`` as their sum
with the last counted twice, and a bar from its unit ``bar / 2``.

``hitting_v1`` is for the opposite-direction variants that hit to the bar (RULES.md §1.2, §2.2:
backgammon, portes, hypergammon). What a one-layer net learns slowly from point units is what
gnubg's and TD-Gammon 2's hand-made inputs give at once: the race, whether contact remains, the
shots the opponent (on roll after the afterstate) has at the mover's blots, and the primes.
All are in the mover's coordinates: he moves down to his 1-point and bears off below it, his bar
is 25; the opponent moves up and his bar is the mover's 0.

* pip counts of the mover and the opponent, ÷ 100;
* contact: 1 while some checker of the mover stands behind one of the opponent's;
* the opponent's hitting rolls: of the 36 rolls, those with which a checker of his (or one entering
  from his bar) can land on a lone checker of the mover by one die or by the dice played in turn
  (for doubles up to four steps), landing between only on points the mover has not made; ÷ 36.
  The rule that he must enter from the bar first is not modelled (a feature, not a move generator);
* the mover's and the opponent's blots, ÷ 5;
* the longest run of made points (two or more checkers) of each side, ÷ 6.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nardy.core.variant import Variant
from nardy.encoding import BOARD_SIZE

__all__ = ["FEATURE_SETS", "FeatureSet", "feature_set", "feature_width", "hitting_v1"]

Floats = npt.NDArray[Any]

_POINTS = np.arange(1, 25)
_BITS = np.left_shift(np.uint32(1), np.arange(25, dtype=np.uint32))
_BOARD = np.uint32((1 << 25) - 1)
"""Bits 0…24: the opponent's bar (0) and the mover's points 1…24."""


def _counts(units: Floats, start: int) -> Floats:
    """Checkers per point, shape (B, 24), from one side's 96 point units."""
    u = units[:, start : start + 96].reshape(-1, 24, 4)
    out: Floats = u[..., 0] + u[..., 1] + u[..., 2] + 2.0 * u[..., 3]
    return out


def _mask(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint32]:
    """Each row's flags over bits 0…24 as one integer."""
    out: npt.NDArray[np.uint32] = (flags.astype(np.uint32) * _BITS[: flags.shape[1]]).sum(
        axis=1, dtype=np.uint32
    )
    return out


def _longest_run(mask: npt.NDArray[np.uint32]) -> npt.NDArray[np.float64]:
    """The longest run of set bits of each row (a prime's length)."""
    length = np.zeros(mask.shape[0])
    m = mask.copy()
    while m.any():
        length += m != 0
        m &= m >> np.uint32(1)
    return length


_DICE = np.arange(1, 7, dtype=np.uint32)
_FIRST, _SECOND = (
    np.array(d, dtype=np.uint32) for d in zip(*itertools.combinations(range(1, 7), 2), strict=True)
)
"""The 15 non-double rolls (a < b), as die values."""


def _hitting_rolls(
    sources: npt.NDArray[np.uint32], open_: npt.NDArray[np.uint32], blots: npt.NDArray[np.uint32]
) -> npt.NDArray[np.float64]:
    """Of the 36 rolls, how many let the opponent land on a blot (the module docstring): every
    roll at once, a column each (a decision's few rows pay for a few numpy calls, not 200)."""
    land = (open_ & _BOARD)[:, None]
    one = (sources[:, None] << _DICE) & land  # (B, 6): where one die of each value lands
    hit = (one & blots[:, None]) != 0
    reach = one
    for _ in range(3):  # a double's second to fourth step
        reach = (reach << _DICE) & land
        hit |= (reach & blots[:, None]) != 0
    a, b = one[:, _FIRST - 1], one[:, _SECOND - 1]  # (B, 15)
    two = ((a << _SECOND) & land) | ((b << _FIRST) & land)
    either = ((a | b | two) & blots[:, None]) != 0
    out: npt.NDArray[np.float64] = hit.sum(axis=1) + 2.0 * either.sum(axis=1)
    return out


def hitting_v1(units: Floats) -> Floats:
    """The 8 features of ``hitting_v1`` (the module docstring) of rows of board units."""
    x = units[:, :BOARD_SIZE]
    mover = _counts(x, 0)
    opponent = _counts(x, 96)
    mover_bar = 2.0 * x[:, 192]
    opponent_bar = 2.0 * x[:, 193]
    batch = x.shape[0]
    out = np.empty((batch, 8), dtype=x.dtype)
    out[:, 0] = (mover @ _POINTS + 25.0 * mover_bar) / 100.0
    out[:, 1] = (opponent @ (25 - _POINTS) + 25.0 * opponent_bar) / 100.0
    held = mover > 0.5
    rearmost = np.where(
        mover_bar > 0.5, 25, np.where(held.any(axis=1), 24 - held[:, ::-1].argmax(1), 0)
    )
    there = opponent > 0.5
    frontmost = np.where(
        opponent_bar > 0.5, 0, np.where(there.any(axis=1), there.argmax(1) + 1, 25)
    )
    out[:, 2] = rearmost > frontmost
    zero = np.zeros((batch, 1), dtype=bool)
    blot = mover == 1.0
    sources = _mask(np.concatenate([(opponent_bar > 0.5)[:, None], there], axis=1))
    open_ = _mask(np.concatenate([zero, mover < 1.5], axis=1))
    blots = _mask(np.concatenate([zero, blot], axis=1))
    out[:, 3] = _hitting_rolls(sources, open_, blots) / 36.0
    out[:, 4] = blot.sum(axis=1) / 5.0
    out[:, 5] = (opponent == 1.0).sum(axis=1) / 5.0
    out[:, 6] = _longest_run(_mask(np.concatenate([zero, mover > 1.5], axis=1))) / 6.0
    out[:, 7] = _longest_run(_mask(np.concatenate([zero, opponent > 1.5], axis=1))) / 6.0
    return out


@dataclass(frozen=True, slots=True)
class FeatureSet:
    """A named feature set: its width, its function of the board units, and which variants it
    describes (a net trained with it for another family would read nonsense)."""

    name: str
    size: int
    compute: Callable[[Floats], Floats]
    fits: Callable[[Variant], bool]
    family: str
    """The variants it fits, for messages."""


def _hits_to_the_bar(variant: Variant) -> bool:
    rules = variant.rules
    return rules.geometry == "opposite" and rules.hitting.mode == "bar"


FEATURE_SETS: dict[str, FeatureSet] = {
    "hitting_v1": FeatureSet(
        "hitting_v1", 8, hitting_v1, _hits_to_the_bar, "opposite direction, hitting to the bar"
    ),
}


def feature_width(name: str) -> int:
    """The inputs the feature set ``name`` adds (0 for none, the empty name); a clear
    :class:`ValueError` for an unknown one."""
    return feature_set(name).size if name else 0


def feature_set(name: str, variant: Variant | None = None) -> FeatureSet:
    """The feature set ``name``; a clear :class:`ValueError` for an unknown one or one that does
    not fit ``variant``."""
    try:
        chosen = FEATURE_SETS[name]
    except KeyError:
        known = ", ".join(sorted(FEATURE_SETS))
        raise ValueError(f"unknown feature set {name!r}; known: {known}") from None
    if variant is not None and not chosen.fits(variant):
        raise ValueError(
            f"feature set {name!r} is for variants of {chosen.family}; {variant.name} is not one"
        )
    return chosen
