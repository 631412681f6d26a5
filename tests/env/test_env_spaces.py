"""The action-space sizes (nardy.env.spaces): the recorded worst cases are real, the spaces hold
them, and the proven bound holds them too."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("numpy", reason="the rl extra is not installed")

from nardy.core import Position, game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.env.spaces import (
    BUILTIN_SIZE,
    MEASURED_MAX,
    action_space_size,
    upper_bound,
)


def test_every_builtin_variant_was_measured():
    assert set(MEASURED_MAX) >= set(game_variant_names()) - {"nackgammon", "hypergammon"}


@pytest.mark.parametrize("name", sorted(MEASURED_MAX))
def test_recorded_worst_case_has_that_many_plays(name):
    case = MEASURED_MAX[name]
    variant = load_variant(name)
    position = Position.from_id(case.position)
    variant.validate(position)
    plays = variant.legal_plays(position, case.dice)
    assert len(plays) == case.plays
    assert len({p.result for p in plays}) == case.plays  # distinct results
    assert case.plays < BUILTIN_SIZE <= upper_bound(15)
    assert action_space_size(name) == BUILTIN_SIZE == 3328


def test_upper_bound_formula():
    # 15 checkers: 15 + 225 + 120 + 1800 + 3060 (RULES-independent counting of step multisets)
    assert upper_bound(15) == 5220
    assert upper_bound(1) == 5
    assert upper_bound(3) == 3 + 9 + 6 + 18 + 15


def test_unmeasured_name_is_a_clear_error():
    with pytest.raises(ValueError, match="not measured"):
        action_space_size("unknown_variant")


def test_no_decision_of_random_games_exceeds_the_space():
    most = 0
    for name in game_variant_names():
        variant = load_variant(name)
        for seed in range(3):
            rng = random.Random(seed)
            game = Game(variant, SeededDice(seed))
            while game.decision is not None:
                d = game.decision
                if isinstance(d, PlayDecision):
                    most = max(most, len(d.plays))
                    game.decide(rng.randrange(len(d.plays)))
                else:
                    game.decide(False if isinstance(d, DoubleDecision) else "take")
    assert 0 < most <= BUILTIN_SIZE
