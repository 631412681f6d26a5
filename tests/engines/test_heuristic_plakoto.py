"""The heuristic bot's plakoto terms (RULES.md §3.12.2): it pins, guards its mother, pins his
mother, and leaves every non-pinning variant's evaluation exactly as it was."""

from __future__ import annotations

import dataclasses

import pytest

from nardy.bots import HeuristicBot, RandomBot, play_game
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import PlayDecision, Segment
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines.heuristic import (
    HeuristicEvaluation,
    evaluate_opposite,
    evaluate_same,
    evaluation_for,
)

WHITE = 0


def _decision(variant: Variant, position: Position, dice: tuple[int, ...]) -> PlayDecision:
    segment = Segment(WHITE, dice, "roll", "test roll")
    return PlayDecision(WHITE, segment, position, variant.legal_plays(position, dice))


def _plain(variant: Variant) -> HeuristicBot:
    """The bot with its pinning terms off (the plain opposite-direction evaluation)."""
    bot = HeuristicBot(variant=variant)
    bot.evaluation = HeuristicEvaluation(dataclasses.replace(bot.evaluation.weights, pins=False))
    return bot


def _choice(bot: HeuristicBot, decision: PlayDecision) -> Position:
    return decision.plays[bot.choose_play(decision)].result


def test_pins_a_blot_rather_than_a_quiet_move() -> None:
    """6-1 with his blot on my 7: 13/7^ (or 8/7^) pins it; the plain evaluation, which loses
    the pinned checker from his pip count, plays quietly instead."""
    variant = load_variant("plakoto")
    position = Position.from_sides({24: 10, 13: 3, 8: 2}, {1: 12, 7: 1, 19: 2})
    decision = _decision(variant, position, (6, 1))
    assert any(7 in play.result.pinned for play in decision.plays)
    assert any(7 not in play.result.pinned for play in decision.plays)
    result = _choice(HeuristicBot(variant=variant), decision)
    assert 7 in result.pinned and result.points[6] > 0
    assert 7 not in _choice(_plain(variant), decision).pinned


def test_pins_his_mother() -> None:
    """His mother alone on his 24 (my 1) and nothing of mine on my 24: landing there wins (the
    plain evaluation, blind to the mother rule, plays 8/3 8/6)."""
    variant = load_variant("plakoto")
    position = Position.from_sides({8: 5, 6: 5, 3: 5}, {1: 1, 20: 7, 21: 7})
    decision = _decision(variant, position, (5, 2))
    result = _choice(HeuristicBot(variant=variant), decision)
    assert result.pinned == (1,) and result.points[0] > 0
    assert 1 not in _choice(_plain(variant), decision).pinned


@pytest.mark.parametrize("mother", ["standard", "simple"])
def test_does_not_leave_the_mother_alone_in_reach(mother: str) -> None:
    """Two on my 24, the rest in my home, his stacks two to four pips short of my 24 and none left
    on his own 24; 6-5 must move from my 24. 24/19/13 leaves my mother alone where 22 of his 36
    rolls pin her (a mother end); 24/19 24/18 takes both away. The plain evaluation, which sees
    only a blot that loses a few pips, leaves her."""
    variant = load_variant("plakoto", {"mother": mother})
    position = Position.from_sides({24: 2, 5: 6, 4: 2, 3: 5}, {20: 5, 21: 5, 22: 5})
    decision = _decision(variant, position, (6, 5))
    assert _choice(HeuristicBot(variant=variant), decision).points[23] != 1
    assert _choice(_plain(variant), decision).points[23] == 1


def test_avoids_a_blot_in_direct_reach() -> None:
    """5-2 from {24: 2, 13: 6, 8: 4, 6: 3} with his stacks on my 1 and 3: 13/8 13/11 leaves a
    blot on 11 eight and ten pips from his stacks; 13/8 8/6 (or 13/6) leaves none."""
    variant = load_variant("plakoto")
    position = Position.from_sides({24: 2, 13: 6, 8: 4, 6: 3}, {1: 13, 3: 2})
    decision = _decision(variant, position, (5, 2))
    result = _choice(HeuristicBot(variant=variant), decision)
    blots = [i + 1 for i, count in enumerate(result.points) if count == 1]
    assert blots == []


def test_pinned_checkers_count_in_the_pips_and_the_evaluation() -> None:
    """His checker pinned on my 5 is worth more to me than the same stack on a bare point, and
    mine pinned there costs me: the sign of a pin is the pinner's."""
    bot = HeuristicBot(variant=load_variant("plakoto"))
    his_pinned = Position.from_sides({5: 2, 13: 13}, {1: 14}, pinned=(5,))
    no_pin = Position.from_sides({5: 2, 13: 13}, {1: 14, 2: 1})
    assert bot.evaluate(his_pinned) > bot.evaluate(no_pin)
    mine_pinned = Position.from_sides({13: 14}, {5: 2, 1: 13}, pinned=(5,))
    mine_free = Position.from_sides({13: 14, 4: 1}, {5: 2, 1: 13})
    assert bot.evaluate(mine_pinned) < bot.evaluate(mine_free)


class _Recorder(HeuristicBot):
    """Records every legal play's resulting position it is asked to choose among."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.seen: list[Position] = []

    def choose_play(self, decision: PlayDecision) -> int:
        self.seen.extend(play.result for play in decision.plays)
        return super().choose_play(decision)


NON_PINNING = ["backgammon", "portes", "hypergammon", "trictrac", "long", "mad", "fevga", "giul"]


@pytest.mark.parametrize("name", NON_PINNING)
def test_other_variants_keep_their_evaluation(name: str) -> None:
    """Without pinning, the pinning weights are zero and the bot evaluates with the unchanged
    geometry formula, on every position of a seeded game."""
    variant = load_variant(name)
    bot = HeuristicBot(variant=variant)
    weights = bot.evaluation.weights
    assert not weights.pins and weights.mother == "off"
    assert weights.pin_base == weights.pin_depth == weights.mother_value == 0.0
    old = evaluate_opposite if weights.opposite else evaluate_same
    assert evaluation_for(weights) is old
    recorder = _Recorder(1)
    play_game(variant, (recorder, RandomBot(1)), SeededDice(5))
    positions = recorder.seen
    assert len(positions) > 20
    for position in positions:
        assert bot.evaluate(position) == old(position, weights)
