"""The RULES.md §5 cases of kind ``procedure`` (openings, cube and match scenarios), one test each.

Their ``given``/``expect`` blocks are prose-like, so each is scripted here by hand; a guard test fails
when RULES.md gains a procedure case that has no test in this module.
"""

from __future__ import annotations

import pytest
import rules_cases as rc

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.errors import CubeError
from nardy.core.game import (
    BLACK,
    WHITE,
    DoubleDecision,
    Game,
    GameResult,
    PlayDecision,
    TakeDecision,
)
from nardy.core.match import Match
from nardy.core.position import Position

TESTED = {"BG-01", "BG-21", "BG-22", "BG-23", "BG-24", "TT-01", "L-28"}
# §3.12's procedures are scripted with the plakoto and tavli tests (tests/variants/test_plakoto.py).
TESTED |= {"PL-06", "TV-01"}


def test_every_procedure_case_has_a_test() -> None:
    ids = {case["id"] for case in rc.cases_of_kind(rc.KIND_PROCEDURE)}
    assert ids == TESTED


def _case(case_id: str) -> dict:
    return next(c for c in rc.load_cases() if c["id"] == case_id)


# A middle-game backgammon position where both sides can always move, for the cube scenarios.
MIDGAME = Position.from_sides({13: 5, 8: 3, 6: 5, 24: 2}, {1: 2, 12: 5, 17: 3, 19: 5})


def _play_until(game: Game, kind: type) -> None:
    """Answer play decisions with the first legal play until a decision of ``kind`` comes."""
    while not isinstance(game.decision, kind):
        assert isinstance(game.decision, PlayDecision), game.decision
        game.decide(0)


def test_bg01_opening_throw() -> None:
    case = _case("BG-01")
    throws = case["given"]["opening_throws"]
    game = Game(load_variant("backgammon"), ScriptedDice(throws), auto_forced=False)
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    assert decision.player == WHITE  # 3 > 1 after the 4-4 tie
    assert decision.segment.dice == tuple(case["expect"]["first_dice"])
    assert (game.cube.value, game.cube.owner) == (1, None)
    # "first_roll_can_be_double: false": the thrown numbers are never equal.
    assert decision.segment.dice[0] != decision.segment.dice[1]
    # The opening player has no pre-roll moment: no double decision came first.
    assert [e.kind for e in game.events] == ["opening", "opening", "roll"]


def test_bg21_ownership_redouble_drop() -> None:
    game = Game(
        load_variant("backgammon"), ScriptedDice([(3, 1)] * 10), position=MIDGAME, first_turn=False
    )
    assert isinstance(game.decision, DoubleDecision) and game.decision.player == WHITE
    game.decide(True)  # A doubles
    assert isinstance(game.decision, TakeDecision) and game.decision.player == BLACK
    game.decide("take")  # B takes
    assert (game.cube.value, game.cube.owner) == (2, BLACK)
    # A tries to double: he has no access to the cube any more.
    assert not game.may_double(WHITE)
    assert "Black owns the cube" in game.why_no_double(WHITE)
    with pytest.raises(CubeError, match="Black owns the cube"):
        game.decide(True)
    _play_until(game, DoubleDecision)
    assert game.decision is not None and game.decision.player == BLACK  # B may redouble
    game.decide(True)
    assert isinstance(game.decision, TakeDecision) and game.decision.player == WHITE
    game.decide("drop")  # A drops
    assert game.result == GameResult(
        winner=BLACK, points=2, base_value=1, cube_value=2, reason="drop"
    )


def test_bg22_beaver() -> None:
    variant = load_variant("backgammon", {"beavers": True})

    def doubled_and_beavered() -> Game:
        game = Game(variant, ScriptedDice([(3, 1)] * 4), position=MIDGAME, first_turn=False)
        game.decide(True)
        decision = game.decision
        assert isinstance(decision, TakeDecision) and decision.beaver_allowed
        game.decide("beaver")
        return game

    game = doubled_and_beavered()
    decision = game.decision
    assert isinstance(decision, TakeDecision) and decision.player == WHITE and decision.after_beaver
    assert (decision.cube.value, decision.cube.owner) == (
        2,
        BLACK,
    )  # the redoubled cube, beaverer's
    with pytest.raises(CubeError, match="raccoon"):
        game.decide("beaver")
    game.decide("drop")
    assert game.result is not None and (game.result.winner, game.result.points) == (BLACK, 2)

    game = doubled_and_beavered()
    game.decide("take")
    assert (game.cube.value, game.cube.owner) == (4, BLACK)
    assert isinstance(game.decision, PlayDecision) and game.decision.player == WHITE


def test_beaver_not_allowed_in_match_play() -> None:
    variant = load_variant("backgammon", {"beavers": True, "match_length": 7})
    game = Game(variant, ScriptedDice([(3, 1)] * 4), position=MIDGAME, first_turn=False)
    game.decide(True)
    assert isinstance(game.decision, TakeDecision) and not game.decision.beaver_allowed
    with pytest.raises(CubeError, match="beavers are not allowed"):
        game.decide("beaver")


def test_bg23_crawford() -> None:
    match = Match(load_variant("backgammon"), length=5, score=[2, 2])
    assert not match.crawford_game
    match.add_result(GameResult(WHITE, 2, 2, 1, "bear_off"))
    assert match.score == [4, 2]
    assert match.crawford_game and not match.cube_settings().enabled
    match.add_result(GameResult(BLACK, 1, 1, 1, "bear_off"))
    assert match.score == [4, 3]
    assert not match.crawford_game and match.cube_settings().enabled  # both may double
    match.add_result(GameResult(BLACK, 1, 1, 1, "bear_off"))
    assert match.score == [4, 4] and not match.crawford_game  # never again
    match.add_result(GameResult(WHITE, 1, 1, 1, "bear_off"))
    assert match.is_over and match.winner == WHITE


def test_bg24_automatic_doubles_and_one_point_match() -> None:
    case = _case("BG-24")
    variant = load_variant("backgammon", case["options"])
    game = Match(variant).new_game(ScriptedDice(case["given"]["opening_throws"]), auto_forced=False)
    assert (game.cube.value, game.cube.owner) == (
        2,
        None,
    )  # limit 1: the second tie doubles nothing
    assert isinstance(game.decision, PlayDecision)
    assert game.decision.player == WHITE and game.decision.segment.dice == (5, 3)
    one_point = Match(variant, length=1)
    assert not one_point.cube_settings().enabled
    game = one_point.new_game(ScriptedDice(case["given"]["opening_throws"]), auto_forced=False)
    assert game.cube.value == 1  # automatic doubles are money play only


def test_bg25_closed_out_may_double_and_max_cube() -> None:
    case = _case("BG-25")
    position = Position.from_json(rc.case_position(case))
    game = Game(
        load_variant("backgammon"), ScriptedDice([(6, 5)]), position=position, first_turn=False
    )
    assert isinstance(game.decision, DoubleDecision) and game.decision.player == WHITE
    capped = load_variant("backgammon", {"max_cube": 4})
    game = Game(capped, ScriptedDice([(6, 5)] * 3), position=MIDGAME, first_turn=False)
    game.decide(True)
    game.decide("take")
    _play_until(game, DoubleDecision)
    game.decide(True)  # Black redoubles to 4
    game.decide("take")
    assert game.cube.value == 4
    assert "max_cube is 4" in game.why_no_double(WHITE)


def test_tt01_white_starts_every_game() -> None:
    variant = load_variant("trictrac")
    match = Match(variant, length=5)
    assert not match.cube_settings().enabled
    for game_number in range(2):
        game = match.new_game(ScriptedDice([(6, 6), (2, 1)]), auto_forced=False)
        assert [e.kind for e in game.events] == ["roll"]  # no opening throw
        decision = game.decision
        assert isinstance(decision, PlayDecision) and decision.player == WHITE
        assert decision.segment.dice == (6, 6, 6, 6)  # the first roll may be a double
        match.add_result(GameResult(BLACK, 1, 1, 1, "bear_off"))  # even after Black wins
        assert game_number == 0 or match.starter() == WHITE


def test_l28_who_starts_and_game_end() -> None:
    throws = [(2, 2), (5, 3)]
    variant = load_variant("long")
    game = Game(variant, ScriptedDice([*throws, (6, 4)]), auto_forced=False)
    assert isinstance(game.decision, PlayDecision) and game.decision.player == WHITE
    assert game.decision.segment.dice == (6, 4)  # White rolls two dice after winning the throw
    styled = Game(
        load_variant("long", {"opening": "backgammon_style"}),
        ScriptedDice(throws),
        auto_forced=False,
    )
    assert isinstance(styled.decision, PlayDecision) and styled.decision.segment.dice == (5, 3)
    # White bears off his 15th checker while Black could finish next roll: no last roll, no draw.
    near_end = Position.from_sides({1: 1}, {13: 1}, off=(14, 14))
    game = Game(variant, ScriptedDice([(1, 2)]), position=near_end)
    assert game.result is not None and game.result.winner == WHITE and game.result.points == 1
    assert [e.kind for e in game.events] == ["roll", "play", "end"]
    match = Match(variant, length=3)
    match.add_result(game.result)
    assert match.starter() == WHITE  # the previous winner starts, no opening throw
    assert not match.cube_settings().enabled  # no cube by default
