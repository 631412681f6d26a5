"""The RULES.md §5 cases of kind ``turn``: whole turns made of several segments.

A turn case lists the rolls, then every segment in order — by the mover or (transferred steps) by the
opponent — with the complete set of its legal plays and the one to continue from, and the steps handed
to the opponent. The game is driven through :class:`nardy.core.game.Game` with scripted dice, so the
turn plan (progression, re-roll chain, transfer, all-home stop) is the kernel's, not the test's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import rules_cases as rc

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.game import BLACK, WHITE, Game, PlayDecision
from nardy.core.position import Position

TURN_CASES = [pytest.param(case, id=case["id"]) for case in rc.cases_of_kind(rc.KIND_TURN)]

# A roll for the opponent after the listed turn, so that the game can go on to his first decision.
_FILLER = [(2, 1)] * 4


def _side(play: Mapping[str, Any]) -> tuple[tuple[tuple[int, int], ...], int]:
    """A segment result as (own points, borne off), in the coordinates of the player who made it."""
    points = tuple(sorted((int(p), int(n)) for p, n in (play.get("points") or {}).items() if n))
    return points, int(play.get("borne_off", 0))


def _result_side(position: Position) -> tuple[tuple[tuple[int, int], ...], int]:
    return tuple(sorted(position.side(0, "same").items())), position.off[0]


@pytest.mark.parametrize("case", TURN_CASES)
def test_turn_case(case: dict[str, Any]) -> None:
    variant = load_variant(case["variant"], case.get("options") or {})
    start = Position.from_json(rc.case_position(case))
    rolls = [tuple(r) for r in case["rolls"]]
    game = Game(
        variant, ScriptedDice([*rolls, *_FILLER]), position=start, mover=WHITE, auto_forced=False
    )

    for number, expected in enumerate(case["segments"], 1):
        where = f"{case['id']} segment {number}"
        decision = game.decision
        assert isinstance(decision, PlayDecision), (
            f"{where}: expected a play decision, got {decision}"
        )
        player = WHITE if expected["by"] == "mover" else BLACK
        assert decision.player == player, f"{where}: played by the wrong side"
        assert decision.segment.dice == tuple(expected["dice"]), f"{where}: {decision.segment}"
        if player == BLACK:
            assert decision.segment.kind == "transfer", f"{where}: {decision.segment}"
        got = [_result_side(p.result) for p in decision.plays]
        want = [_side(p) for p in expected["plays"]] or [_result_side(decision.position)]
        assert sorted(got) == sorted(want), f"{where}: legal plays {got} != {want}"
        game.decide(got.index(want[expected.get("choose", 0)]))
        if game.is_over:
            break

    # The steps handed to the opponent, in playing order.
    transfers = [step for e in game.events if e.kind == "transfer" for step in e.data["steps"]]
    assert transfers == [list(t) for t in case["transfer"]], f"{case['id']}: transfer {transfers}"

    if "score" in case:
        assert game.result is not None and game.result.winner == WHITE
        assert game.result.points == case["score"]
        return
    assert not game.is_over
    # "A turn test checks exactly the segments it lists": once the mover's listed segments are played,
    # his turn is over; the next decision is the opponent's (transferred steps or his own roll).
    last_by_mover = all(s["by"] == "mover" for s in case["segments"])
    if last_by_mover:
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        assert decision.player == BLACK, (
            f"{case['id']}: the mover's turn went on: {decision.segment}"
        )
