"""The protobuf Position with pinned checkers (RULES.md §3.12.2): a compatible addition.

A pinned position survives kernel → message → bytes → message → kernel unchanged; a position
without pins is written exactly as before (no field 5 on the wire), so older readers see the same
bytes; a message whose pins the rules cannot have is refused; a plakoto end reaches the protocol
as its own termination.
"""

from __future__ import annotations

import pytest
from pinned_positions import pinned_positions

from nardy.arena.clients import convert
from nardy.arena.protocol import game_pb2
from nardy.core import load_variant
from nardy.core.errors import InvalidPositionError
from nardy.core.game import BLACK, WHITE, GameResult
from nardy.core.position import Position
from nardy.core.record import outcome_of


def test_pinned_positions_round_trip_through_the_wire() -> None:
    positions = pinned_positions()
    assert len(positions) > 50
    for position in positions:
        msg = convert.position_to_proto(position)
        assert list(msg.pinned) == list(position.pinned)
        assert msg.position_id == position.id() and "^" in msg.position_id
        back = game_pb2.Position.FromString(msg.SerializeToString())
        assert convert.position_from_proto(back) == position
        # The id alone says the same (a bot that keys on ids only).
        assert Position.from_id(back.position_id) == position


def test_the_pinned_side_is_the_one_that_does_not_own_the_stack() -> None:
    # PL-02's second play: the mover's stack on his 5-point pins the opponent's blot.
    position = Position.from_sides({5: 1, 1: 13}, {20: 7, 21: 7}, pinned=[5], off=(1, 0))
    msg = convert.position_to_proto(position)
    assert list(msg.pinned) == [5] and msg.points[4] == 1
    # Each side still totals 15 with its pinned checker: 14 + 1 off for the mover, 14 + 1 pinned.
    opponent_on_board = -sum(n for n in msg.points if n < 0)
    assert opponent_on_board + len(msg.pinned) + msg.off.opponent == 15
    assert convert.position_from_proto(msg).pinned_counts == (0, 1)


def test_a_position_without_pins_is_written_exactly_as_before() -> None:
    start = load_variant("backgammon").start_position()
    msg = convert.position_to_proto(start)
    assert not msg.pinned
    old = game_pb2.Position(points=list(start.points), position_id=start.id())
    old.bar.SetInParent()
    old.off.SetInParent()
    assert msg.SerializeToString() == old.SerializeToString()
    assert convert.position_from_proto(msg) == start


def test_impossible_pins_are_refused() -> None:
    msg = convert.position_to_proto(load_variant("plakoto").start_position())
    msg.pinned.append(10)  # an empty point has nothing to pin a checker beneath
    with pytest.raises(InvalidPositionError):
        convert.position_from_proto(msg)


@pytest.mark.parametrize(
    ("result", "winner", "points", "termination"),
    [
        (GameResult(WHITE, 1, 1, 1, "bear_off"), WHITE, 1, game_pb2.TERMINATION_BORNE_OFF),
        (GameResult(BLACK, 2, 2, 1, "mother"), BLACK, 2, game_pb2.TERMINATION_MOTHER),
        (GameResult(WHITE, 0, 0, 1, "draw", draw=True), None, 0, game_pb2.TERMINATION_DRAW),
    ],
)
def test_plakoto_ends_reach_the_protocol(
    result: GameResult, winner: int | None, points: int, termination: int
) -> None:
    outcome = outcome_of(result)
    assert (outcome.winner, outcome.points) == (winner, points)
    msg = convert.outcome_to_proto(outcome)
    assert msg.termination == termination
    assert msg.points == points
    if winner is None:
        assert msg.winner == game_pb2.COLOR_UNSPECIFIED
