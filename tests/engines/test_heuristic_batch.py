"""The heuristic's batch evaluation equals the bot's one by one, value for value: the neural
bots' prior unit and short lists read it, so their choices must not move."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.bots.heuristic import HeuristicBot
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.engines.heuristic_batch import evaluate_many

SAME = ["long", "nardgammon", "mad", "gulbar", "mad_gulbar", "khachapuri", "fevga", "giul"]
"""The same-direction variants, evaluated as arrays."""


def _afterstates(variant_name: str, seed: int) -> list[Position]:
    """Every legal result of every decision of a random game."""
    variant = load_variant(variant_name)
    game = Game(variant, SeededDice(seed), cube=CubeSettings())
    pick = np.random.default_rng(seed)
    found: list[Position] = []
    while game.decision is not None:
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        found.extend(play.result for play in decision.plays)
        game.decide(int(pick.integers(len(decision.plays))))
    return found


@pytest.mark.parametrize("variant", [*SAME, "backgammon", "plakoto"])
def test_a_games_afterstates_evaluate_as_one_by_one(variant: str) -> None:
    bot = HeuristicBot(0, variant=load_variant(variant))
    positions = [p for seed in range(3) for p in _afterstates(variant, seed)]
    assert len(positions) > 500
    expected = [bot.evaluate(p) for p in positions]
    for size in (1, 7, 40, len(positions)):  # one by one below the batch size, arrays above
        got = [
            v
            for k in range(0, len(positions), size)
            for v in evaluate_many(bot.evaluation, positions[k : k + size])
        ]
        assert got == expected  # equal, not close: the same operations in the same order


@st.composite
def _same_direction(draw: st.DrawFn) -> Position:
    """A position of the same geometry: each side's checkers on points (the opponent's as
    negatives on points the mover does not hold), the rest borne off."""
    points = [0] * 24
    mine = draw(st.integers(0, 15))
    theirs = draw(st.integers(0, 15))
    for _ in range(mine):
        points[draw(st.integers(0, 23))] += 1
    free = [i for i in range(24) if points[i] == 0]
    if free:
        for _ in range(theirs):
            points[draw(st.sampled_from(free))] -= 1
    else:
        theirs = 0
    return Position(tuple(points), (0, 0), (15 - mine, 15 - theirs))


@settings(max_examples=200, deadline=None)
@given(
    positions=st.lists(_same_direction(), min_size=6, max_size=30),
    variant=st.sampled_from(SAME),
)
def test_any_same_direction_positions_evaluate_as_one_by_one(
    positions: list[Position], variant: str
) -> None:
    bot = HeuristicBot(0, variant=load_variant(variant))
    assert evaluate_many(bot.evaluation, positions).tolist() == [bot.evaluate(p) for p in positions]


@pytest.mark.parametrize("variant", ["long", "giul", "backgammon", "plakoto"])  # plakoto: pins
def test_legal_plays_positions_are_the_plays_results_in_order(variant: str) -> None:
    """``LegalPlays.positions`` (what a search reads, no ``Play`` built) is every play's
    result, in the plays' order, whether or not plays were built before."""
    game = Game(load_variant(variant), SeededDice(4), cube=CubeSettings())
    pick = np.random.default_rng(4)
    decisions = 0
    while game.decision is not None:
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        plays = decision.plays
        before = plays.positions()
        assert before == [play.result for play in plays] == plays.positions()
        decisions += 1
        game.decide(int(pick.integers(len(plays))))
    assert decisions > 20
