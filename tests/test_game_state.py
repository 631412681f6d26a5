"""The explicit-chance game state behind the OpenSpiel games (nardy.env.state) against the
kernel's Game: same dice, same answers, same decisions and results."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core import load_variant, variant_names
from nardy.core.dice import ScriptedDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.env.state import GameState

CUBE_OPTIONS = {"cube": True, "beavers": True, "auto_doubles": True}
CONFIGS = [(name, {}) for name in variant_names()] + [
    ("long", CUBE_OPTIONS),
    ("khachapuri", CUBE_OPTIONS),
    ("mad_gulbar", {"cube": True, "max_cube": 4}),
    ("backgammon", {"beavers": True, "jacoby": True, "auto_doubles": True}),
    ("backgammon", {"match_length": 3}),
]


def decision_key(d):
    if isinstance(d, PlayDecision):
        return ("play", d.player, d.position, d.segment, len(d.plays))
    if isinstance(d, DoubleDecision):
        return ("double", d.player, d.position, d.cube)
    return ("take", d.player, d.position, d.cube, d.beaver_allowed, d.after_beaver)


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**31 - 1))
def test_game_state_plays_exactly_like_the_kernel_game(config, seed):
    """Random dice and answers through GameState; the same dice and answers through Game must
    give the same decisions (player, position, segment, plays, cube), result and final board."""
    name, options = config
    variant = load_variant(name, options)
    rng = random.Random(seed)
    state = GameState(variant)
    rolls, answers, keys = [], [], []
    while not state.is_terminal:
        if state.is_chance:
            outcomes = state.chance_outcomes()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            roll = rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]
            rolls.append(roll)
            state.apply_roll(roll)
            continue
        d = state.decision
        keys.append(decision_key(d))
        if isinstance(d, PlayDecision):
            answer = rng.randrange(len(d.plays))
        elif isinstance(d, DoubleDecision):
            answer = rng.random() < 0.3
        else:
            answer = rng.choice(
                ["take", "drop", "beaver"] if d.beaver_allowed else ["take", "drop"]
            )
        answers.append(answer)
        # A clone taken now is independent of the original.
        twin = state.clone()
        state.apply(answer)
        assert twin.decision is d
    game = Game(variant, ScriptedDice(rolls))
    for answer in answers:
        assert game.decision is not None
        keys_seen = decision_key(game.decision)
        assert keys_seen == keys.pop(0)
        game.decide(answer)
    assert game.decision is None and not game.dice.source.remaining
    assert game.result == state.result
    assert game.position == state.position
