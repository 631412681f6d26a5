"""The 21 rolls of a position enumerated in one batch (``Searcher.roll_options``, the luck's and
the search's hot path) are what one roll at a time gives: the same short lists, the same greedy
turns, re-rolls included, and the heuristic of board keys equal to that of positions."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from nardy.bots.heuristic import HeuristicBot
from nardy.core import load_variant
from nardy.core.game import PlayDecision
from nardy.core.movegen import OPP_OFF, BoardKey, position_of
from nardy.core.position import Position
from nardy.core.turnplan import NO_TRANSFER
from nardy.core.variant import Variant
from nardy.engines import Searcher, make_evaluator
from nardy.engines.evaluator import Evaluator, shortlist, shortlists
from nardy.engines.heuristic_batch import evaluate_keys, evaluate_many
from nardy.engines.net import shipped_value_weights
from nardy.engines.search import MAX_REROLLS, ROLLS, Option, _OneTurn, _TurnOver


def _dice(roll: tuple[int, int]) -> tuple[int, ...]:
    a, b = roll
    return (a, b) if a != b else (a,) * 4


def _positions(variant: Variant, seed: int, count: int, every: int = 1) -> Iterator[Position]:
    """Positions on roll of random games, one each ``every`` turns (a new game when one ends)."""
    rng = random.Random(seed)
    bot = HeuristicBot(0, variant=variant)
    position = variant.start_position()
    for turn in range(count * every):
        if turn % every == 0:
            yield position
        plays = variant.legal_plays(position, _dice((rng.randint(1, 6), rng.randint(1, 6))))
        if rng.random() < 0.8:  # mostly the heuristic's play, so that games reach the bear-off
            after = max((play.result for play in plays), key=bot.evaluate)
        else:
            after = plays[rng.randrange(len(plays))].result
        finished = variant.is_finished(after)
        position = variant.start_position() if finished else variant.flip(after)


def _key_groups(variant: Variant, position: Position) -> list[list[BoardKey]]:
    return [variant.legal_plays(position, _dice(roll)).board_keys() for roll, _ in ROLLS]


@pytest.mark.parametrize("name", ["long", "giul", "backgammon", "plakoto"])
def test_heuristic_of_board_keys_is_that_of_their_positions(name: str) -> None:
    # long, giul: the batch on key rows; backgammon (hitting) and plakoto (pins): one by one.
    variant = load_variant(name)
    bot = HeuristicBot(0, variant=variant)
    sizes = set()
    uneven_off = 0  # results where the two sides have borne off different numbers
    for position in _positions(variant, 5, 25, every=4):
        for keys in _key_groups(variant, position):
            sizes.add(min(len(keys), 6))
            expected = evaluate_many(bot.evaluation, [position_of(key) for key in keys])
            assert evaluate_keys(bot.evaluation, keys).tolist() == expected.tolist()
        every = [key for keys in _key_groups(variant, position) for key in keys]
        uneven_off += sum(key[0] != key[OPP_OFF] for key in every)
        assert evaluate_keys(bot.evaluation, every).tolist() == [
            bot.evaluate(position_of(k)) for k in every
        ]
    assert uneven_off > 100
    assert min(sizes) < 6 and 6 in sizes  # groups below and above the batch threshold came up


class _ShortlistOnly:
    """A plugin evaluator with a short list of positions only (no ``shortlist_keys``)."""

    name = "plugin"

    def __init__(self, inner: Evaluator) -> None:
        self._inner = inner

    def shortlist(self, positions: Sequence[Position]) -> list[int] | None:
        return shortlist(self._inner, positions)

    def afterstate_equities(self, positions: Sequence[Position]) -> np.ndarray:
        return self._inner.afterstate_equities(positions)

    def probabilities(self, position: Position) -> None:
        return None


@pytest.mark.parametrize("name", ["long", "giul", "fevga"])
def test_short_lists_of_many_groups_are_each_groups_own(name: str) -> None:
    variant = load_variant(name)
    # The value nets' short lists (long's outcome net, shipped, has none: it ranks every play).
    neural = make_evaluator(f"neural:{shipped_value_weights(name)}", variant)
    assert getattr(neural, "candidates", 0) > 0
    plugin = _ShortlistOnly(neural)
    heuristic = make_evaluator("heuristic", variant)
    shortened = 0
    bot = HeuristicBot(0, variant=variant)
    k = neural.candidates

    def by_hand(keys: Sequence[BoardKey]) -> list[int] | None:
        """The heuristic's k best, ties to the earlier, one position at a time."""
        if len(keys) <= k:
            return None
        priors = [bot.evaluate(position_of(key)) for key in keys]
        return sorted(range(len(keys)), key=lambda j: (-priors[j], j))[:k]

    for position in _positions(variant, 11, 30):
        groups = _key_groups(variant, position)
        one_by_one = [by_hand(keys) for keys in groups]
        assert [shortlist(neural, [position_of(k) for k in keys]) for keys in groups] == one_by_one
        assert shortlists(neural, groups) == one_by_one
        assert shortlists(plugin, groups) == one_by_one
        assert shortlists(heuristic, groups) == [None] * len(groups)
        shortened += sum(chosen is not None for chosen in one_by_one)
    assert shortened > 100


def _reference_turn(
    searcher: Searcher, position: Position, roll: tuple[int, int], rerolls: int
) -> Option:
    """The greedy turn of the module's definition, one simulated turn per roll and re-roll."""
    game = _OneTurn(searcher.variant, position, roll)
    while game.stopped is None and isinstance(game.decision, PlayDecision):
        results = game.decision.plays.positions()
        eligible = shortlist(searcher.evaluator, results) or list(range(len(results)))
        values = searcher._values0([results[j] for j in eligible])
        game.decide(eligible[int(np.argmax(values))])
    if isinstance(game.stopped, _TurnOver):
        handed = tuple(sorted(game.pending_transfer[1]))
        return [(1.0, searcher.variant.flip(game.position), handed)]
    if game.stopped is not None:  # another roll after a fully played double
        here = game.position
        if rerolls >= MAX_REROLLS:
            return [(1.0, here, NO_TRANSFER)]
        out: Option = []
        for again, weight in ROLLS:
            for probability, end, handed in _reference_turn(searcher, here, again, rerolls + 1):
                out.append((weight * probability, end, handed))
        return out
    return [(1.0, game.position, NO_TRANSFER)]


def _reference_options(
    searcher: Searcher, position: Position, roll: tuple[int, int]
) -> list[Option]:
    variant = searcher.variant
    if variant.rules.turn.doubles == "four":
        results = variant.legal_plays(position, _dice(roll)).positions()
        kept = shortlist(searcher.evaluator, results)
        return [[(1.0, results[j], NO_TRANSFER)] for j in (kept or range(len(results)))]
    return [_reference_turn(searcher, position, roll, 0)]


@pytest.mark.parametrize(
    ("name", "evaluator", "turns"),
    [
        ("long", "neural", 20),
        ("backgammon", "neural", 20),
        ("giul", "neural", 12),
        ("mad", "heuristic", 12),
        ("gulbar", "neural", 4),  # re-rolls: 21 more turns each, up to two deep
        ("khachapuri", "heuristic", 4),
    ],
)
def test_roll_options_are_one_roll_at_a_time(name: str, evaluator: str, turns: int) -> None:
    variant = load_variant(name)
    rerolled = 0
    for position in _positions(variant, 3, turns):
        batched = Searcher(variant, make_evaluator(evaluator, variant)).roll_options(position)
        reference = Searcher(variant, make_evaluator(evaluator, variant))
        for (roll, _), options in zip(ROLLS, batched, strict=True):
            expected = _reference_options(reference, position, roll)
            assert options == expected, (position.id(), roll)
            rerolled += sum(len(option) > 1 for option in expected)
    if name in ("gulbar", "khachapuri"):
        assert rerolled > 0  # the re-roll branch was compared
