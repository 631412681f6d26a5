"""The heuristic's evaluation of many positions at once, equal to its value one by one.

The neural bots feed the heuristic's value of every afterstate to their nets (the prior unit) and
choose their short lists by it (``candidates``), so a 1-ply search or an analysis evaluates it for
every reply: in a long-nardy analysis it was two thirds of the time (444,944 calls of
``evaluate_same`` in 17 s). Here the same-direction evaluation (no hitting: the long-nardy
family) runs on an ``(N, 24)`` array with numpy; every float is computed by the same operations
in the same order as :func:`~nardy.engines.heuristic.evaluate_same`, so the values are equal, not close, and the
short lists and choices do not change (tested). Other evaluations go one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Final

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy
import numpy as np
import numpy.typing as npt

from nardy.core.movegen import OPP_OFF, BoardKey, position_of
from nardy.core.position import Position
from nardy.engines.heuristic import (
    AHEAD_MINE,
    BLOCK_VALUE,
    SAME_AHEAD_OPP,
    HeuristicEvaluation,
    Weights,
    opp_same,
)

Array = npt.NDArray[np.float64]

_BATCH_FROM: Final = 6
"""Fewer positions than this are evaluated one by one (numpy's per-call cost is higher)."""


def _ahead_matrix(ahead: Sequence[Sequence[int]]) -> npt.NDArray[np.int64]:
    """``M[a, i] = 1`` where point index ``a`` is among ``ahead[i]``: ``X @ M`` counts, for
    each index ``i``, the points ahead of it where ``X`` is 1."""
    matrix = np.zeros((24, 24), dtype=np.int64)
    for index, points in enumerate(ahead):
        matrix[list(points), index] = 1
    return matrix


_OPP_AHEAD: Final = _ahead_matrix(SAME_AHEAD_OPP)
_MINE_AHEAD: Final = _ahead_matrix(AHEAD_MINE)
_BLOCKS: Final = np.array(BLOCK_VALUE)
_POINT: Final = np.arange(1, 25, dtype=np.int64)
_OPP_POINT: Final = np.array([opp_same(p) for p in range(1, 25)], dtype=np.int64)
_OUTSIDE: Final = _POINT > 6
_BACK: Final = _POINT > 18
_NOT_HEAD: Final = _POINT != 24


def evaluate_many(evaluation: HeuristicEvaluation, positions: Sequence[Position]) -> Array:
    """``[evaluation.evaluate(p) for p in positions]`` as an array, equal value for value."""
    weights = evaluation.weights
    if weights.opposite or weights.pins or len(positions) < _BATCH_FROM:
        evaluate = evaluation.function
        return np.array([evaluate(p, weights) for p in positions], dtype=np.float64)
    points = np.array([p.points for p in positions], dtype=np.int64)
    off = np.array([p.off for p in positions], dtype=np.int64)
    return _evaluate_same(points, off[:, 0], off[:, 1], weights)


def evaluate_keys(evaluation: HeuristicEvaluation, keys: Sequence[BoardKey]) -> Array:
    """:func:`evaluate_many` of the positions of generator board keys (``LegalPlays.board_keys``),
    equal value for value, without building a :class:`Position` where the batch applies: a search
    ranks every legal result of 21 rolls per decision and keeps a few."""
    weights = evaluation.weights
    if weights.opposite or weights.pins or len(keys) < _BATCH_FROM:
        return evaluate_many(evaluation, [position_of(key) for key in keys])
    # Without pins every key is 28 ints: my off, points 1-24, both bars, the opponent's off.
    count = len(keys)
    rows = np.fromiter(chain.from_iterable(keys), dtype=np.int64, count=28 * count)
    rows = rows.reshape(count, 28)
    return _evaluate_same(rows[:, 1:25], rows[:, 0], rows[:, OPP_OFF], weights)


def _evaluate_same(
    points: npt.NDArray[np.int64],
    my_off: npt.NDArray[np.int64],
    opp_off: npt.NDArray[np.int64],
    w: Weights,
) -> Array:
    """:func:`~nardy.engines.heuristic.evaluate_same` of each row, step for step (the comments name the
    scalar code's lines)."""
    mine = points > 0
    theirs = points < 0
    held = np.where(mine, points, 0)
    # my_pips, opp_pips, occupied, outside, back, stack: integers, exact in any order.
    my_pips = held @ _POINT
    opp_pips = np.where(theirs, -points, 0) @ _OPP_POINT
    occupied = mine.sum(axis=1)
    outside = (held * _OUTSIDE).sum(axis=1)
    back = (held * _BACK).sum(axis=1)
    stack = (np.maximum(held - w.stack_free, 0) * _NOT_HEAD).sum(axis=1)
    # value = float(opp_pips - my_pips) + w.off * (my_off - opp_off) - w.stack * stack
    value = (opp_pips - my_pips).astype(np.float64) + w.off * (my_off - opp_off) - w.stack * stack
    value = np.where(my_off != 0, value + w.first_off, value)
    head = points[:, 23]
    value = np.where(head > 1, value - w.head * (head - 1), value)
    value = value + w.home_spread * mine[:, :6].sum(axis=1)
    value = np.where(outside != 0, value + w.spread * occupied, value)
    late = (opp_pips < 90) & (my_off == 0)
    hurry = w.back * back + 0.5 * w.back * outside * (90 - opp_pips) / 90
    value = np.where(late, value - hurry, value)
    # block -= count * BLOCK_VALUE[held] over the opponent's checkers, blocked += … over mine
    # beyond my home, each summed point by point in index order.
    blocking = _BLOCKS[mine.astype(np.int64) @ _OPP_AHEAD]
    facing = _BLOCKS[theirs.astype(np.int64) @ _MINE_AHEAD]
    block_terms = np.where(theirs, -(points * blocking), 0.0)
    blocked_terms = np.where(mine & _OUTSIDE, points * facing, 0.0)
    block = _in_index_order(block_terms)
    blocked = _in_index_order(blocked_terms)
    result: Array = value + w.block * block - w.blocked * blocked
    return result


def _in_index_order(terms: Array) -> Array:
    """Each row's sum, its terms added one by one in index order as the scalar loop adds them:
    numpy reduces along the slow axis of an array term by term (it sums pairwise only along the
    fast one), so the rows are made columns; 5 times faster than ``np.add.accumulate`` along
    the rows at 600 rows (a decision's 21 rolls)."""
    reduced: Array = np.add.reduce(np.ascontiguousarray(terms.T), axis=0)
    return reduced
