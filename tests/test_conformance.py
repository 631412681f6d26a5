"""One conformance battery over every registered variant (OpenSpiel's RandomSimTest, for race games).

Seeded random games are played to the end; at every decision the battery checks that the position is
legal for the variant, that the position id and JSON round-trip, that every legal play's text parses
back to the same play, that results are distinct and each uses the same number of dice, and that the
game ends within a bound on its length.
"""

from __future__ import annotations

import random

import pytest

from nardy.core import Position, load_variant, parse_steps, variant_names
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.variant import Variant, apply_steps

GAMES_PER_VARIANT = 6
MAX_DECISIONS = 3000


def check_position(variant: Variant, position: Position) -> None:
    variant.validate(position)
    assert Position.from_id(position.id()) == position
    assert Position.from_json(position.to_json()) == position
    assert variant.flip(variant.flip(position)) == position


def check_decision(variant: Variant, decision: PlayDecision) -> None:
    position = decision.position
    check_position(variant, position)
    plays = decision.plays
    assert len(plays) >= 1, "there is always a legal play, if only the empty one"
    results = [p.result for p in plays]
    assert len(set(results)) == len(results), "plays are deduplicated by resulting position"
    for play in plays:
        check_position(variant, play.result)
        assert play in plays and play.result in plays
        # Every play uses the segment's N dice, unless it bore off the 15th checker (§2.3 item 2).
        if play.result.off[0] < 15:
            assert len(play.steps) == plays.dice_used
        assert apply_steps(position, play.steps) == play.result
        assert apply_steps(position, parse_steps(play.text)) == play.result
        assert plays.find(play.text).result == play.result
    if plays.dice_used == 0:
        assert results == [position]


@pytest.mark.parametrize("name", variant_names())
def test_random_games_conform(name: str) -> None:
    variant = load_variant(name)
    cube = CubeSettings(enabled=variant.rules.cube.available, beavers=True)
    for seed in range(GAMES_PER_VARIANT):
        rng = random.Random(seed)
        game = Game(variant, SeededDice(seed), cube=cube, auto_forced=False)
        for _ in range(MAX_DECISIONS):
            decision = game.decision
            if decision is None:
                break
            if isinstance(decision, PlayDecision):
                check_decision(variant, decision)
                game.decide(rng.randrange(len(decision.plays)))
            elif isinstance(decision, DoubleDecision):
                game.decide(rng.random() < 0.05)
            elif isinstance(decision, TakeDecision):
                game.decide("take" if rng.random() < 0.9 else "drop")
        assert game.result is not None, (
            f"{name} seed {seed}: no result after {MAX_DECISIONS} decisions"
        )
        assert game.result.points >= 1
        final = game.position
        if game.result.reason == "bear_off":
            assert final.off[0] == 15 and final.off[1] < 15


@pytest.mark.parametrize("name", variant_names())
def test_same_seed_same_game(name: str) -> None:
    variant = load_variant(name)
    records = []
    for _ in range(2):
        rng = random.Random(3)
        game = Game(variant, SeededDice(11))
        while game.decision is not None:
            if isinstance(game.decision, DoubleDecision):
                game.decide(False)
                continue
            assert isinstance(game.decision, PlayDecision)
            game.decide(rng.randrange(len(game.decision.plays)))
        records.append(game.record())
    assert records[0] == records[1]
