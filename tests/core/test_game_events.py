"""A game's record in order (RULES.md §2.1): transferred steps, cube action, roll, segments, end."""

from __future__ import annotations

from nardy.core import Position, load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.game import BLACK, WHITE, DoubleDecision, Game, PlayDecision, TakeDecision


def test_turns_record_transfer_cube_roll_and_plays_in_order() -> None:
    # Gulbar with the cube: White's 6-6 from the head is blocked after three sixes (Black holds
    # White's 12), so the fourth six goes to Black (§2.9), who plays it before his cube action and
    # his roll (§2.10 item 3).
    variant = load_variant("gulbar", {"cube": True})
    start = Position.from_sides({24: 14, 13: 1}, {12: 15})
    dice = ScriptedDice([(6, 6), (2, 1), (3, 1), (4, 2)])
    game = Game(variant, dice, position=start, first_turn=False)
    decisions = []
    while game.decision is not None and len(decisions) < 8:
        decision = game.decision
        decisions.append((type(decision).__name__, decision.player))
        if isinstance(decision, PlayDecision):
            game.decide(0)
        elif isinstance(decision, DoubleDecision):
            game.decide(len(decisions) > 2)  # roll twice, then double at every turn
        else:
            assert isinstance(decision, TakeDecision)
            game.decide("take")

    assert decisions == [
        ("DoubleDecision", WHITE),
        ("DoubleDecision", BLACK),  # after his transferred six, before his roll
        ("PlayDecision", BLACK),
        ("DoubleDecision", WHITE),
        ("TakeDecision", BLACK),
        ("PlayDecision", WHITE),
        ("DoubleDecision", BLACK),
        ("TakeDecision", WHITE),
    ]
    events = [(e.kind, e.player, e.data) for e in game.events]
    assert events == [
        ("roll", WHITE, {"dice": [6, 6]}),
        (
            "play",
            WHITE,
            {
                "dice": [6, 6, 6, 6],
                "segment_kind": "roll",
                "segment": "roll 6-6",
                "play": "24/18 13/7/1",
                "choices": 1,
            },
        ),
        ("transfer", WHITE, {"steps": [[6, 1]]}),
        (
            "play",
            BLACK,
            {
                "dice": [6],
                "segment_kind": "transfer",
                "segment": "1 six transferred from the opponent",
                "play": "24/18",
                "choices": 1,
            },
        ),
        ("roll", BLACK, {"dice": [2, 1]}),
        (
            "play",
            BLACK,
            {
                "dice": [2, 1],
                "segment_kind": "roll",
                "segment": "roll 2-1",
                "play": "24/22/21",
                "choices": 4,
            },
        ),
        ("double", WHITE, {"value": 2}),
        ("take", BLACK, {}),
        ("roll", WHITE, {"dice": [3, 1]}),
        (
            "play",
            WHITE,
            {
                "dice": [3, 1],
                "segment_kind": "roll",
                "segment": "roll 3-1",
                "play": "24/21/20",
                "choices": 4,
            },
        ),
        ("double", BLACK, {"value": 4}),
        ("take", WHITE, {}),
        ("roll", BLACK, {"dice": [4, 2]}),
    ]
    assert game.record()["rolls"] == [[6, 6], [2, 1], [3, 1], [4, 2]]
    assert (game.cube.value, game.cube.owner, game.turns) == (4, WHITE, 4)
