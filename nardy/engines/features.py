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

``pinning_v1`` is for the variants that pin instead of hitting (RULES.md §3.12.2: plakoto). A pinned
checker is written into its owner's block as ``[1, 0, 0, −½]`` (:data:`nardy.encoding.PINNED_UNITS`),
so the count read back is the free checkers and a negative last unit marks the pin. What the rule
adds to a race with blocks: a pinned checker is stuck until the stack above it leaves, and a pinned
mother (a side's only checker on its own 24-point) ends the game. In the mover's coordinates:

* pip counts of the mover and the opponent, pinned checkers included, ÷ 100;
* contact: 1 while some checker of the mover (free or pinned) stands behind one of the opponent's;
* the checkers of each side that are pinned, ÷ 3;
* whether the mover's mother is pinned (his point 24), and the opponent's (the mover's point 1);
* the opponent's pinning rolls (of 36, counted as ``hitting_v1`` counts shots) at the mover's
  blots, and at the mover's mother alone; the mover's pinning rolls at the opponent's blots (the
  threat he poses once the opponent has moved). A point is closed to a side when the other side
  stacks two there or pins one of his checkers there (§3.12.2, *Landing*); a lone checker that pins
  is no blot;
* the blots of each side, ÷ 5;
* the longest run of points closed to the opponent, and to the mover, ÷ 6.

``blocking_v1`` is for the same-direction variants (RULES.md §1.2, §3.3: the long-nardy family, fevga
and giul), where one checker closes a point and nothing is hit, so the game is a race with blocks.
Both sides move down to their own 1-point; the opponent's point ``q`` is the mover's
``opposite_point`` (his 24-point, his head, is the mover's 12). The opponent's path in the mover's
coordinates runs 12 … 1, then 24 … 13:

* pip counts of the mover and the opponent (each in his own coordinates), ÷ 100;
* the checkers each side still has on its head (its 24-point), ÷ 15;
* contact: 1 while some checker of either side must still pass one of the other's;
* the longest run of points the mover holds along the opponent's path, and the opponent's along
  the mover's, ÷ 6 (a block; six in a row is the six-block of §3.3.5);
* the opponent's checkers behind that run of the mover's (they must still pass it), and the mover's
  behind the opponent's, ÷ 15;
* the checkers each side has in its home (its points 1 … 6), ÷ 15;
* the points each side holds, ÷ 12.
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

from nardy.core.position import opposite_point
from nardy.core.variant import Variant
from nardy.encoding import BOARD_SIZE

__all__ = [
    "FEATURE_SETS",
    "FeatureSet",
    "blocking_v1",
    "feature_set",
    "feature_width",
    "hitting_v1",
    "pinning_v1",
]

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


def _highest(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Per row, the highest point (1 … 24, a column each in ascending order) flagged; 0 if none."""
    out: npt.NDArray[np.int64] = np.where(flags.any(axis=1), 24 - flags[:, ::-1].argmax(1), 0)
    return out


def _lowest(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Per row, the lowest point (1 … 24, a column each in ascending order) flagged; 25 if none."""
    out: npt.NDArray[np.int64] = np.where(flags.any(axis=1), flags.argmax(1) + 1, 25)
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
    rearmost = np.where(mover_bar > 0.5, 25, _highest(held))
    there = opponent > 0.5
    frontmost = np.where(opponent_bar > 0.5, 0, _lowest(there))
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


def _pinned(units: Floats, start: int) -> npt.NDArray[np.bool_]:
    """Which of one side's 24 points hold a checker of his pinned beneath the other's stack
    (its block's last unit is −½, which a free count never makes)."""
    pinned: npt.NDArray[np.bool_] = units[:, start + 3 : start + 96 : 4] < -0.25
    return pinned


def pinning_v1(units: Floats) -> Floats:
    """The 14 features of ``pinning_v1`` (the module docstring) of rows of board units."""
    x = units[:, :BOARD_SIZE]
    mover = _counts(x, 0)  # free checkers: a pinned block reads 1 + 0 + 0 − 2 × ½ = 0
    opponent = _counts(x, 96)
    mover_pinned = _pinned(x, 0)
    opponent_pinned = _pinned(x, 96)
    mover_all = mover + mover_pinned
    opponent_all = opponent + opponent_pinned
    batch = x.shape[0]
    out = np.empty((batch, 14), dtype=x.dtype)
    out[:, 0] = mover_all @ _POINTS / 100.0
    out[:, 1] = opponent_all @ (25 - _POINTS) / 100.0
    held = mover_all > 0.5
    there = opponent_all > 0.5
    out[:, 2] = _highest(held) > _lowest(there)
    out[:, 3] = mover_pinned.sum(axis=1) / 3.0
    out[:, 4] = opponent_pinned.sum(axis=1) / 3.0
    out[:, 5] = mover_pinned[:, 23]
    out[:, 6] = opponent_pinned[:, 0]
    # Closed to the opponent: my stack of two, or mine pinning his checker (§3.12.2, Landing).
    closed_to_opponent = (mover > 1.5) | ((mover > 0.5) & opponent_pinned)
    closed_to_mover = (opponent > 1.5) | ((opponent > 0.5) & mover_pinned)
    my_blots = (mover == 1.0) & ~opponent_pinned
    their_blots = (opponent == 1.0) & ~mover_pinned

    def bits(*rows: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint32]:
        """Rows of point flags (bits 1…24), one block of ``batch`` rows after another."""
        flags = np.concatenate(rows, axis=0)
        return _mask(np.concatenate([np.zeros((len(flags), 1), dtype=bool), flags], axis=1))

    # The opponent moves up the mover's numbering (bit p is the mover's point p); no bar here.
    # The mover's shots are the same count on the board turned round (his point p is bit 25 − p).
    # All three counts in one call: a decision's few rows pay for numpy calls, not for rows.
    sources = bits(opponent > 0.5, opponent > 0.5, (mover > 0.5)[:, ::-1])
    open_ = bits(~closed_to_opponent, ~closed_to_opponent, ~closed_to_mover[:, ::-1])
    mother = np.zeros_like(my_blots)
    mother[:, 23] = my_blots[:, 23]  # the mover's mother: a lone checker on his 24-point
    targets = bits(my_blots, mother, their_blots[:, ::-1])
    rolls = _hitting_rolls(sources, open_, targets).reshape(3, batch) / 36.0
    out[:, 7:10] = rolls.T
    out[:, 10] = my_blots.sum(axis=1) / 5.0
    out[:, 11] = their_blots.sum(axis=1) / 5.0
    runs = _longest_run(bits(closed_to_opponent, closed_to_mover)).reshape(2, batch) / 6.0
    out[:, 12:14] = runs.T
    return out


_THEIR_POINT = np.array([opposite_point(p, "same") for p in range(1, 25)])
"""The opponent's number of each of the mover's points 1 … 24 (same direction)."""
_THEIR_PATH = np.argsort(-_THEIR_POINT)
"""The mover's point indices in the order the opponent passes them: his 24 (the mover's 12) first."""
_HOME = _POINTS <= 6
_THEIR_HOME = _THEIR_POINT <= 6
"""The mover's points 13 … 18: the opponent's home."""


def _run_behind(held: Floats, other: Floats) -> tuple[Floats, Floats]:
    """Along one path (columns in the order a side passes them): the longest run of ``held``
    points, and how many of ``other``'s checkers stand before it on that path."""
    batch, width = held.shape
    run = np.zeros(batch)
    best = np.zeros(batch)
    end = np.zeros(batch, dtype=np.int64)
    for column in range(width):
        run = np.where(held[:, column], run + 1.0, 0.0)
        longer = run > best
        best = np.where(longer, run, best)
        end = np.where(longer, column, end)
    before = np.cumsum(other, axis=1)  # checkers on the path up to and including each column
    start = end - best.astype(np.int64) + 1
    rows = np.arange(batch)
    behind = np.where((best > 0) & (start > 0), before[rows, np.maximum(start - 1, 0)], 0.0)
    return best, behind


def blocking_v1(units: Floats) -> Floats:
    """The 13 features of ``blocking_v1`` (the module docstring) of rows of board units."""
    x = units[:, :BOARD_SIZE]
    mover = _counts(x, 0)
    opponent = _counts(x, 96)
    batch = x.shape[0]
    out = np.empty((batch, 13), dtype=x.dtype)
    out[:, 0] = mover @ _POINTS / 100.0
    out[:, 1] = opponent @ _THEIR_POINT / 100.0
    out[:, 2] = mover[:, 23] / 15.0
    out[:, 3] = opponent[:, 11] / 15.0
    held = mover > 0.5
    there = opponent > 0.5
    # The mover still passes an opponent's checker below his rearmost one; the opponent, one of
    # the mover's before his own rearmost (in his numbering).
    mine_on_path = held[:, _THEIR_PATH]
    # Reversed, the path is the opponent's numbering ascending (his 1 … 24).
    theirs_by_his_point = there[:, _THEIR_PATH[::-1]]
    mine_by_his_point = mine_on_path[:, ::-1]
    out[:, 4] = (_highest(held) > _lowest(there)) | (
        _highest(theirs_by_his_point) > _lowest(mine_by_his_point)
    )
    # The mover's points in the opponent's order of passage, and the opponent's in the mover's
    # (from his 24 down), both in one call.
    blocks, behind = _run_behind(
        np.concatenate([mine_on_path, there[:, ::-1]]),
        np.concatenate([opponent[:, _THEIR_PATH], mover[:, ::-1]]),
    )
    out[:, 5:7] = blocks.reshape(2, batch).T / 6.0
    out[:, 7:9] = behind.reshape(2, batch).T / 15.0
    out[:, 9] = mover[:, _HOME].sum(axis=1) / 15.0
    out[:, 10] = opponent[:, _THEIR_HOME].sum(axis=1) / 15.0
    out[:, 11] = held.sum(axis=1) / 12.0
    out[:, 12] = there.sum(axis=1) / 12.0
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


def _pins(variant: Variant) -> bool:
    return variant.rules.hitting.pins


def _same_direction(variant: Variant) -> bool:
    return variant.rules.geometry == "same"


FEATURE_SETS: dict[str, FeatureSet] = {
    "hitting_v1": FeatureSet(
        "hitting_v1", 8, hitting_v1, _hits_to_the_bar, "opposite direction, hitting to the bar"
    ),
    "pinning_v1": FeatureSet("pinning_v1", 14, pinning_v1, _pins, "pinning instead of hitting"),
    "blocking_v1": FeatureSet(
        "blocking_v1", 13, blocking_v1, _same_direction, "the same direction (the long family)"
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
