"""Variants, positions and games pickle and deep-copy; a copied game has the same future
(issue 23: Ray, multiprocessing vector envs and MCTS all copy states). Games without a dice
source stop at every throw (explicit chance nodes)."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core import game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.errors import GameStateError
from nardy.core.game import ChanceNode, DoubleDecision, Game, PlayDecision

CONFIGS = [(name, {}) for name in game_variant_names()] + [
    ("long", {"cube": True, "beavers": True, "auto_doubles": True}),
    ("backgammon", {"match_length": 5}),
]


def answer(decision, rng: random.Random):
    if isinstance(decision, PlayDecision):
        return rng.randrange(len(decision.plays))
    if isinstance(decision, DoubleDecision):
        return rng.random() < 0.3
    return rng.choice(["take", "drop", "beaver"] if decision.beaver_allowed else ["take", "drop"])


def decision_key(decision) -> tuple:
    if isinstance(decision, PlayDecision):
        plays = [p.result for p in decision.plays]
        return (decision.player, decision.segment, decision.position, plays)
    return (decision,)


def finish(game: Game, seed: int) -> tuple:
    rng = random.Random(seed)
    while game.decision is not None:
        game.decide(answer(game.decision, rng))
    return game.result, game.position, [(e.kind, e.player, e.data) for e in game.events]


@pytest.mark.parametrize(("name", "options"), CONFIGS)
def test_variants_pickle_and_play_the_same(name, options):
    variant = load_variant(name, options)
    again = pickle.loads(pickle.dumps(variant))
    assert again.name == variant.name and again.options == variant.options
    assert again.rules == variant.rules
    start = variant.start_position()
    assert [p.result for p in again.legal_plays(start, (6, 5))] == [
        p.result for p in variant.legal_plays(start, (6, 5))
    ]
    assert copy.deepcopy(variant) is variant  # immutable: shared


def test_positions_pickle():
    variant = load_variant("long")
    position = variant.legal_plays(variant.start_position(), (6, 5))[0].result
    assert pickle.loads(pickle.dumps(position)) == position


@settings(max_examples=25, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**31 - 1), cut=st.integers(0, 40))
def test_a_copied_game_has_the_same_future(config, seed, cut):
    """Pickled or deep-copied mid-game, a game continues with the same dice, decisions, events
    and result as the original under the same answers."""
    name, options = config
    game = Game(load_variant(name, options), SeededDice(seed))
    rng = random.Random(seed)
    for _ in range(cut):
        if game.decision is None:
            break
        game.decide(answer(game.decision, rng))
    pickled = pickle.loads(pickle.dumps(game))
    copied = copy.deepcopy(game)
    assert pickled.events == game.events
    assert decision_key(pickled.decision) == decision_key(game.decision)
    future = finish(game, seed + 1)
    assert finish(pickled, seed + 1) == future
    assert finish(copied, seed + 1) == future
    assert pickled.dice.rolls == copied.dice.rolls == game.dice.rolls


@settings(max_examples=25, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**31 - 1))
def test_explicit_chance_nodes_play_the_same_game(config, seed):
    """Without a dice source every throw is a chance node; throwing the dice a seeded game drew
    gives that game's decisions and result, and a copy taken at a chance node continues alike."""
    name, options = config
    variant = load_variant(name, options)
    reference = Game(variant, SeededDice(seed))
    expected = finish(reference, seed)
    rolls = list(reference.dice.rolls)
    game = Game(variant, None)
    rng = random.Random(seed)
    copies = []
    thrown = 0
    while game.decision is not None or game.chance is not None:
        if game.chance is not None:
            assert isinstance(game.chance, ChanceNode)
            if thrown in (1, 3):
                copies.append((copy.deepcopy(game), thrown, rng.getstate()))
            game.roll(*rolls[thrown])
            thrown += 1
        else:
            game.decide(answer(game.decision, rng))
    assert thrown == len(rolls)
    events = [(e.kind, e.player, e.data) for e in game.events]
    assert (game.result, game.position, events) == expected
    assert game.dice.rolls == reference.dice.rolls
    for twin, done, state in copies:
        rng.setstate(state)
        while twin.decision is not None or twin.chance is not None:
            if twin.chance is not None:
                twin.roll(*rolls[done])
                done += 1
            else:
                twin.decide(answer(twin.decision, rng))
        assert (twin.result, [(e.kind, e.player, e.data) for e in twin.events]) == (
            expected[0],
            expected[2],
        )


def test_chance_node_errors_are_clear():
    game = Game(load_variant("backgammon"), None)
    assert game.chance == ChanceNode(0, "opening")
    with pytest.raises(GameStateError, match="throw"):
        game.decide(0)
    with pytest.raises(ValueError, match="1-6"):
        game.roll(0, 7)
    seeded = Game(load_variant("backgammon"), SeededDice(1))
    with pytest.raises(GameStateError, match="dice source"):
        seeded.roll(3, 1)
