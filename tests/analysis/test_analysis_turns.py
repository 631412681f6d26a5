"""A segment after which the mover's turn goes on (a double played in full before its re-roll,
RULES.md §2.9; a progression's stage before the next, §2.8) is valued at the turn's end, not as if
the opponent rolled next: ``rank`` at 1-ply against brute force over the kernel's own game, which
plays the rest of the turn (its stages, re-rolls and hand-overs) by its rules. A re-roll is the
ply's chance (its ends valued at 0-ply); after a progression's stage the opponent's roll is."""

from __future__ import annotations

import copy
import random

import pytest
from test_analysis import NO_FILTER, HashEvaluator
from test_analysis import _v0 as afterstate_v0

from nardy.core import load_variant
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines import search
from nardy.engines.search import ROLLS, Searcher


def _v0(variant: Variant, evaluator: HashEvaluator, game: Game, player: int) -> float:
    """``player``'s 0-ply value of where ``game`` stands: exact when it is over."""
    if game.result is not None:
        sign = 1.0 if game.result.winner == player else -1.0
        return 0.0 if game.result.draw else sign * game.result.points
    return afterstate_v0(variant, evaluator, game.position_for(player))


def _turn_ends(
    game: Game, player: int, evaluator: HashEvaluator, rerolls: int
) -> list[tuple[float, Game]]:
    """``player``'s turn played on from ``game`` by the kernel, each segment's best result by
    ``V₀`` chosen: every end (the game over, the opponent to act, or a re-roll beyond
    ``rerolls`` left standing) with its probability."""
    variant = game.variant
    ends: list[tuple[float, Game]] = []
    todo = [(1.0, game, rerolls)]
    while todo:
        probability, here, left = todo.pop()
        while here.result is None and here.chance is None:
            decision = here.decision
            assert isinstance(decision, PlayDecision)
            if decision.player != player:
                break
            values = [afterstate_v0(variant, evaluator, play.result) for play in decision.plays]
            here.decide(max(range(len(values)), key=values.__getitem__))
        chance = here.chance
        if here.result is None and chance is not None and chance.player == player and left:
            for roll, weight in ROLLS:  # his re-roll
                again = copy.deepcopy(here)
                again.roll(*roll)
                todo.append((probability * weight, again, left - 1))
        else:
            ends.append((probability, here))
    return ends


def _opponent_value(game: Game, opponent: int, evaluator: HashEvaluator) -> float:
    """The opponent's value where he is to act: the best way through the steps handed to him,
    then the mean over his 21 rolls of his turn played greedily, valued at 0-ply."""
    variant = game.variant
    if game.result is not None:
        return _v0(variant, evaluator, game, opponent)
    decision = game.decision
    if isinstance(decision, PlayDecision):  # handed steps (RULES.md §2.10 item 3)
        assert decision.player == opponent and decision.segment.kind == "transfer"
        best = -float("inf")
        for index in range(len(decision.plays)):
            after = copy.deepcopy(game)
            after.decide(index)
            best = max(best, _opponent_value(after, opponent, evaluator))
        return best
    assert game.chance is not None and game.chance.player == opponent
    total = 0.0
    for roll, weight in ROLLS:
        rolled = copy.deepcopy(game)
        rolled.roll(*roll)
        ends = _turn_ends(rolled, opponent, evaluator, search.MAX_REROLLS)
        total += weight * sum(q * _v0(variant, evaluator, end, opponent) for q, end in ends)
    return total


def _one_ply(game: Game, player: int, evaluator: HashEvaluator) -> float:
    """``player``'s 1-ply value of an end of his turn."""
    variant = game.variant
    if game.result is not None:
        return _v0(variant, evaluator, game, player)
    if game.chance is not None and game.chance.player == player:
        # A re-roll left standing: valued as an afterstate, the opponent to roll.
        opponent = variant.flip(game.position)
        fresh = Game(
            variant, None, position=opponent, mover=0, cube=CubeSettings(), auto_forced=False
        )
        return -_opponent_value(fresh, 0, evaluator)
    return -_opponent_value(game, 1 - player, evaluator)


def _brute_rank(game: Game, evaluator: HashEvaluator) -> list[float]:
    """Each legal play's 1-ply value: the rest of the turn by the kernel, then the opponent's
    roll; where the rest starts with the mover's re-roll, that roll is the ply's chance and the
    ends are valued at 0-ply."""
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    player = decision.player
    left = search.MAX_REROLLS - (decision.segment.kind == "reroll")
    rerolls = game.variant.rules.turn.doubles == "reroll"
    variant = game.variant
    out = []
    for index in range(len(decision.plays)):
        after = copy.deepcopy(game)
        after.decide(index)
        ends = _turn_ends(after, player, evaluator, left)
        if rerolls:
            out.append(sum(q * _v0(variant, evaluator, end, player) for q, end in ends))
        else:
            out.append(sum(q * _one_ply(end, player, evaluator) for q, end in ends))
    return out


def _goes_on(game: Game, index: int) -> bool:
    """Whether the mover acts again in this turn after play ``index`` (per the kernel)."""
    player = game.mover
    after = copy.deepcopy(game)
    after.decide(index)
    if after.result is not None:
        return False
    if after.chance is not None:
        return after.chance.player == player and after.chance.kind == "reroll"
    return isinstance(after.decision, PlayDecision) and after.decision.player == player


def _check(game: Game, evaluator: HashEvaluator) -> None:
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    searcher = Searcher(game.variant, evaluator, NO_FILTER, NO_FILTER)
    segment = decision.segment
    ranking = searcher.rank(decision.position, segment.dice, 1, kind=segment.kind)
    expected = _brute_rank(game, evaluator)
    got = {r.index: r.equity for r in ranking}
    assert [got[i] for i in range(len(expected))] == pytest.approx(expected, abs=1e-12)


def _turn_start(variant: Variant, position: Position, double: int) -> Game:
    """White to play ``double``-``double`` in ``position`` (the kernel's game from the roll; forced
    plays asked for too, so that a turn's end stops before the steps it hands over are played)."""
    game = Game(variant, None, position=position, mover=0, cube=CubeSettings(), auto_forced=False)
    game.roll(double, double)
    return game


@pytest.mark.parametrize(
    ("name", "seed", "needed"),
    [
        ("mad", 1, 3),
        ("giul", 2, 3),
        ("mad_gulbar", 3, 3),
        ("khachapuri", 5, 2),
        ("gulbar", 4, 2),
    ],
)
def test_a_segment_the_turn_goes_on_from_is_valued_at_the_turns_end(
    name: str, seed: int, needed: int
) -> None:
    variant = load_variant(name)
    evaluator = HashEvaluator()
    rng = random.Random(seed)
    position = variant.start_position()
    checked = 0
    for _ in range(60):  # turns of a random game, each a double for White
        game = _turn_start(variant, position, rng.randint(1, 5))
        while game.result is None and isinstance(game.decision, PlayDecision):
            decision = game.decision
            if decision.player != 0:
                break
            plays = decision.plays
            if len(plays) > 1 and plays.dice_used == 4 and _goes_on(game, 0):
                _check(game, evaluator)
                checked += 1
                if checked >= needed:
                    return
            game.decide(rng.randrange(len(plays)))
        if game.result is not None:
            position = variant.start_position()
            continue
        # The opponent's turn: a random play of a random roll, from the position he stands in.
        opponent = game.position_for(1)
        a, b = rng.randint(1, 6), rng.randint(1, 6)
        plays = variant.legal_plays(opponent, (a, b) if a != b else (a,) * 4)
        after = rng.choice(list(plays)).result
        position = variant.start_position() if variant.is_finished(after) else variant.flip(after)
    pytest.fail(f"only {checked} decisions the turn goes on from")


def test_an_entry_on_the_fourth_step_plays_one_stage_more() -> None:
    """mad_gulbar (§2.8, ``fourth_step_extra``): coming home on a stage's fourth step grants the
    next stage, as the last; coming home earlier in it ends the turn there."""
    variant = load_variant("mad_gulbar")
    evaluator = HashEvaluator()
    # White: one checker on 10 (four 1s bring it to 6, home on the fourth), 14 at home, four of
    # them on his 2-point (after the entry only bear-offs are legal: the 2s take those four off).
    position = Position.from_sides(
        {10: 1, 6: 4, 5: 3, 4: 3, 2: 4}, {14: 3, 16: 6, 18: 6}, checkers=15
    )
    variant.validate(position)
    game = _turn_start(variant, position, 1)
    decision = game.decision
    assert isinstance(decision, PlayDecision) and decision.segment.kind == "stage"
    texts = [p.text for p in decision.plays]
    entry = texts.index("10/9/8/7/6")
    assert _goes_on(game, entry)  # the extra stage (2s)
    _check(game, evaluator)
    searcher = Searcher(variant, evaluator)
    rest = searcher.rest_of_turn(position, decision.plays[entry].result, (1,) * 4, "stage", 4)
    assert rest is not None and not rest.rerolled
    # After the extra stage of 2s the turn ends (nothing handed over: the 3s and later are not
    # played, as the stage of an entry on an earlier step is the last).
    [(probability, end, handed)] = rest.ends
    assert probability == 1.0 and handed == () and end.off[0] == 4
    other = texts.index("6/5/4/3/2")  # no entry: the 2s, 3s, … follow (all of them from 6-5-4-3)
    assert searcher.rest_of_turn(position, decision.plays[other].result, (1,) * 4, "stage", 4)


def test_a_later_stage_that_cannot_start_hands_its_steps_over() -> None:
    """mad_gulbar (§2.8 item 3, §2.10): a stage after the first that cannot be played at all
    passes its four steps (a first stage not started would pass nothing)."""
    variant = load_variant("mad_gulbar")
    evaluator = HashEvaluator()
    # White: two checkers on 22 and 13 on his 1-point; Black holds White's 6-point, so once
    # both checkers stand on 12 no six can be played.
    position = Position.from_sides({22: 2, 1: 13}, {6: 1, 14: 3, 16: 5, 18: 6}, checkers=15)
    variant.validate(position)
    game = _turn_start(variant, position, 5)
    decision = game.decision
    assert isinstance(decision, PlayDecision) and decision.segment.dice == (5,) * 4
    texts = [p.text for p in decision.plays]
    stuck = texts.index("22/17(2) 17/12(2)")
    assert _goes_on(game, stuck)  # the kernel asks for the sixes: there are none to play
    _check(game, evaluator)
    result = decision.plays[stuck].result
    rest = Searcher(variant, evaluator).rest_of_turn(position, result, (5,) * 4, "stage", 4)
    assert rest is not None and rest.ends == [(1.0, result, ((6, 4),))]
