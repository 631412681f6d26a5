"""Dead cubes in match play (issue 34): a built-in bot told the score turns no cube that cannot
gain (nardy.core.match.cube_is_dead), and the tournaments tell it the score."""

from __future__ import annotations

import pytest

from nardy.bots import Bot, HeuristicBot, RandomBot
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision, cube_settings_for
from nardy.core.match import cube_is_dead


@pytest.mark.parametrize(
    ("length", "score", "cube", "dead"),
    [
        (3, (0, 0), 1, False),  # 3-away: a win at 1 or 2 does not win the match yet
        (3, (0, 0), 2, False),
        (3, (0, 0), 4, True),  # any win at 4 wins the match: doubling only helps the opponent
        (3, (2, 0), 1, True),  # the leader 1-away (post-Crawford) never doubles
        (3, (0, 2), 1, False),  # the trailer against him doubles at once
        (7, (3, 5), 4, True),
        (7, (3, 5), 2, False),
    ],
)
def test_the_rule(length: int, score: tuple[int, int], cube: int, dead: bool) -> None:
    assert cube_is_dead(length, score, cube) is dead


def _a_double(bot: Bot) -> DoubleDecision:
    """The first cube decision of seeded money games where ``bot`` (playing both sides) doubles."""
    variant = load_variant("backgammon")
    for seed in range(100):
        game = Game(variant, SeededDice(seed), cube=cube_settings_for(variant, match_length=None))
        bot.start_game(variant, 0)
        while not game.is_over:
            decision = game.decision
            if isinstance(decision, DoubleDecision):
                if bot.offer_double(decision):
                    return decision
                game.decide(False)
            elif isinstance(decision, PlayDecision):
                game.decide(bot.choose_play(decision))
            else:
                game.decide("take")
    raise AssertionError("the bot never doubled")


def _bots() -> list[Bot]:
    from nardy.bots.neural import NeuralBot

    return [HeuristicBot(), NeuralBot(), RandomBot(1, double_rate=1.0)]


@pytest.mark.parametrize("index", range(3), ids=["heuristic", "neural", "random"])
def test_a_bot_told_the_score_turns_no_dead_cube(index: int) -> None:
    bot = _bots()[index]
    decision = _a_double(bot)
    assert decision.cube.value == 1
    bot.set_match(3, (0, 0))  # 3-away: the double can gain
    assert bot.offer_double(decision)
    bot.set_match(3, (2, 0))  # 1-away: any win wins the match, the double cannot gain
    assert not bot.offer_double(decision)
    bot.set_match(None, (0, 0))  # money play again
    assert bot.offer_double(decision)


def test_a_served_bot_reads_the_score_from_the_request() -> None:
    """A kernel bot behind the protocol (``nardy bot serve heuristic``, or an in-process bot
    facing a remote one in a tournament) is told the score each request carries."""
    from nardy.arena.clients import convert
    from nardy.arena.protocol import bot_pb2
    from nardy.arena.sdk import KernelBot

    decision = _a_double(HeuristicBot())
    served = KernelBot(HeuristicBot())

    def doubles(game_id: str, score: tuple[int, int]) -> bool:
        request = bot_pb2.DecideDoubleRequest()
        ctx = request.context
        ctx.game_id = game_id
        convert.variant_spec(load_variant("backgammon"), ctx.variant)
        ctx.on_roll = True
        ctx.color = convert.COLOR_OF[decision.player]
        ctx.cube.value = decision.cube.value
        ctx.match.match_length = 3
        ctx.match.score_self, ctx.match.score_opponent = score
        convert.position_to_proto(decision.position, ctx.position)
        return bool(served.decide_double(request))

    assert doubles("g1", (0, 0))
    assert not doubles("g2", (2, 0))  # 1-away: dead
