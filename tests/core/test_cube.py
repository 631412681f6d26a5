"""The doubling cube in games and matches (RULES.md §2.12), beyond the §5 procedure cases."""

from __future__ import annotations

import pytest

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.errors import CubeError
from nardy.core.game import (
    BLACK,
    WHITE,
    CubeSettings,
    DoubleDecision,
    Game,
    GameResult,
    PlayDecision,
    TakeDecision,
    cube_settings_for,
)
from nardy.core.match import Match
from nardy.core.position import Position

# White bears off his last checker with any roll; Black has borne off nothing: a gammon.
GAMMON_NEXT = Position.from_sides({1: 1}, {19: 5, 20: 5, 21: 5}, off=(14, 0))


def _finish(game: Game) -> GameResult:
    while game.result is None:
        decision = game.decision
        if isinstance(decision, DoubleDecision):
            game.decide(False)
        elif isinstance(decision, TakeDecision):
            game.decide("take")
        else:
            assert isinstance(decision, PlayDecision)
            game.decide(0)
    return game.result


@pytest.mark.parametrize(
    ("options", "double_first", "points"),
    [
        ({}, False, 2),  # gammon, cube 1
        ({"jacoby": True}, False, 1),  # Jacoby: a centred cube makes it single
        ({"jacoby": True}, True, 4),  # the cube was turned: gammon × 2
        ({"jacoby": True, "match_length": 7}, False, 2),  # Jacoby is ignored in match play
    ],
)
def test_jacoby(options: dict[str, object], double_first: bool, points: int) -> None:
    variant = load_variant("backgammon", options)
    game = Game(variant, ScriptedDice([(6, 5)]), position=GAMMON_NEXT, first_turn=False)
    assert isinstance(game.decision, DoubleDecision)
    game.decide(double_first)
    if double_first:
        game.decide("take")
    result = _finish(game)
    assert (result.winner, result.points, result.base_value) == (WHITE, points, 2)


def test_per_checker_drop_costs_the_droppers_checkers() -> None:
    # RULES.md §2.12: "under per_checker scoring the dropper pays v × (15 − his borne-off count)".
    variant = load_variant("long", {"scoring": "per_checker", "cube": True})
    position = Position.from_sides({1: 5}, {13: 5}, off=(10, 10))
    game = Game(variant, ScriptedDice([(2, 1)]), position=position, first_turn=False)
    game.decide(True)
    game.decide("drop")
    assert game.result == GameResult(WHITE, 5, 1, 1, "drop")


@pytest.mark.parametrize(("limit", "value"), [(1, 2), (2, 4), (3, 8)])
def test_automatic_doubles_limit(limit: int, value: int) -> None:
    variant = load_variant("backgammon", {"auto_doubles": True, "auto_doubles_limit": limit})
    game = Game(variant, ScriptedDice([(1, 1), (2, 2), (3, 3), (5, 3)]), auto_forced=False)
    assert (game.cube.value, game.cube.owner) == (value, None)


def test_no_cube_action_between_rolls_of_a_reroll_chain() -> None:
    variant = load_variant("gulbar", {"cube": True})
    position = Position.from_sides({24: 14, 13: 1}, {12: 15})
    game = Game(
        variant, ScriptedDice([(2, 2), (6, 5), (1, 2)]), position=position, first_turn=False
    )
    kinds = []
    while game.decision is not None and game.decision.player == WHITE:
        kinds.append(type(game.decision).__name__)
        game.decide(False if isinstance(game.decision, DoubleDecision) else 0)
    # One cube decision before the first roll, none before the re-roll.
    assert kinds[0] == "DoubleDecision" and kinds.count("DoubleDecision") == 1
    assert [e.kind for e in game.events].count("roll") >= 2


def test_cube_is_off_where_rules_say() -> None:
    assert not cube_settings_for(load_variant("backgammon"), match_length=1).enabled
    assert not cube_settings_for(
        load_variant("long"), match_length=None
    ).enabled  # option, default off
    assert cube_settings_for(load_variant("long", {"cube": True}), match_length=5).enabled
    for name in ("trictrac", "fevga", "giul"):
        assert not load_variant(name).rules.cube.available


def test_doubling_without_access_is_a_clear_error() -> None:
    variant = load_variant("backgammon")
    game = Game(
        variant,
        ScriptedDice([(6, 5)] * 3),
        position=GAMMON_NEXT,
        first_turn=False,
        auto_forced=False,
    )
    game.decide(False)  # roll instead
    with pytest.raises(CubeError, match="cannot double now"):
        game.decide(True)  # a play is due
    game = Game(
        variant,
        ScriptedDice([(6, 5)]),
        position=GAMMON_NEXT,
        cube=CubeSettings(),
        first_turn=False,
        auto_forced=False,
    )
    assert "not in use" in game.why_no_double(WHITE)


def test_match_end_and_crawford_with_cube_games() -> None:
    match = Match(load_variant("backgammon"), length=3)
    assert match.cube_settings().enabled and not match.crawford_game
    match.add_result(GameResult(BLACK, 2, 2, 1, "bear_off"))
    assert match.crawford_game and not match.cube_settings().enabled  # Black at 2 of 3
    match.add_result(GameResult(WHITE, 1, 1, 1, "bear_off"))
    assert not match.crawford_game and match.cube_settings().enabled and not match.is_over
    match.add_result(GameResult(WHITE, 4, 2, 2, "bear_off"))
    assert match.is_over and match.winner == WHITE and match.score == [5, 2]
