"""The canonical action encoding (issue 23 item 1): an action names the same play whatever the
order of the dice, and whatever order a move generator lists the plays in (docs/encoding.md)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="the rl extra is not installed")

from nardy.core import game_variant_names, load_variant  # noqa: E402
from nardy.core.dice import ScriptedDice, SeededDice  # noqa: E402
from nardy.core.game import Game, PlayDecision  # noqa: E402
from nardy.core.movegen import board_of  # noqa: E402
from nardy.env.driver import Driver, EnvConfig, play_order  # noqa: E402


def positions_of(variant_name: str, seed: int, count: int):
    """Positions of the mover at the start of ordinary rolls, from a random seeded game."""
    variant = load_variant(variant_name)
    game = Game(variant, SeededDice(seed))
    rng = random.Random(seed)
    out = []
    while game.decision is not None and len(out) < count:
        d = game.decision
        if isinstance(d, PlayDecision) and d.segment.kind == "roll":
            out.append(d.position)
        game.decide(rng.randrange(len(d.plays)) if isinstance(d, PlayDecision) else False)
    return variant, out


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(game_variant_names()),
    seed=st.integers(0, 2**31 - 1),
    dice=st.tuples(st.integers(1, 6), st.integers(1, 6)).filter(lambda d: d[0] != d[1]),
)
def test_an_action_makes_the_same_play_for_dice_a_b_and_b_a(name, seed, dice):
    variant, positions = positions_of(name, seed, 6)
    config = EnvConfig.build(variant, {})
    a, b = dice
    for position in positions:
        if variant.is_finished(position):
            continue
        drivers = []
        for roll in ((a, b), (b, a)):
            game = Game(
                variant, ScriptedDice([roll]), position=position, first_turn=True, auto_forced=False
            )
            drivers.append(Driver.of(config, game))
        masks = [d.mask() for d in drivers]
        assert np.array_equal(*masks)
        legal = np.flatnonzero(masks[0])
        plays = [[d.play(int(x)).result for x in legal] for d in drivers]
        assert plays[0] == plays[1]
        assert np.array_equal(drivers[0].afterstates(), drivers[1].afterstates())
        assert np.array_equal(drivers[0].observation(0), drivers[1].observation(0))
        # The documented order: ascending resulting board keys.
        keys = [tuple(board_of(r)) for r in plays[0]]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_the_generator_order_does_depend_on_the_dice_order():
    """Why the canonical order is needed: the kernel's LegalPlays order differs between 2-4 and
    4-2 in long nardy and backgammon (issue 23: 2 of 4 and 11 of 14 indexes)."""
    for name in ("long", "backgammon"):
        variant, positions = positions_of(name, 3, 20)
        differs = 0
        for position in positions:
            ab = [p.result for p in variant.legal_plays(position, (2, 4))]
            ba = [p.result for p in variant.legal_plays(position, (4, 2))]
            assert set(ab) == set(ba)
            differs += ab != ba
            assert [ab[i] for i in play_order(variant.legal_plays(position, (2, 4)))] == [
                ba[i] for i in play_order(variant.legal_plays(position, (4, 2)))
            ]
        assert differs > 0
