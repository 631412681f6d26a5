"""Rollouts and analyses in re-roll variants (RULES.md §2.9): every throw of a chain has its own
luck, valued by its first segment alone (Searcher.throw_luck), a luck with mean 0 over the 21
rolls, so the variance-reduced estimate and the luck-adjusted results stay unbiased; elsewhere,
and at a luck ply above 0, the luck is Searcher.luck's."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest

from nardy.analysis.benchmark import sample_decisions
from nardy.analysis.game import analyse_game
from nardy.analysis.records import from_kernel_record
from nardy.analysis.rollout import TrialDice, _start, play_out
from nardy.bots import make_bot, play_game
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings
from nardy.core.plugins import load_variant
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines.evaluator import Evaluator, make_evaluator
from nardy.engines.search import ROLLS, Searcher

GULBAR = load_variant("gulbar")
KHACHAPURI = load_variant("khachapuri")
BACKGAMMON = load_variant("backgammon")


@pytest.mark.parametrize("variant", [GULBAR, KHACHAPURI], ids=lambda v: v.name)
def test_throw_luck_has_mean_zero_over_the_21_rolls(variant: Variant) -> None:
    # The estimate is unbiased because each throw's luck averages to exactly 0 over the dice
    # (weights 1/36 for a double, 2/36 otherwise), from wherever it is thrown.
    searcher = Searcher(variant, make_evaluator("heuristic", variant))
    positions = [variant.start_position()] + [
        position for position, _ in itertools.islice(sample_decisions(variant), 4)
    ]
    for position in positions:
        lucks = [searcher.throw_luck(position, roll) for roll, _ in ROLLS]
        assert sum(w * x for (_, w), x in zip(ROLLS, lucks, strict=True)) == pytest.approx(
            0.0, abs=1e-12
        )
        assert max(lucks) > min(lucks)  # not a luck of 0 everywhere


def test_a_double_played_in_full_is_valued_on_roll_where_it_ends() -> None:
    # Gulbar's start: a double of 2s is played in full (one checker off the head, RULES.md
    # §3.3.4), so the roller throws again: the throw is worth his equity on roll where it ends,
    # not the value of an afterstate the opponent rolls from.
    searcher = Searcher(GULBAR, make_evaluator("heuristic", GULBAR))
    start = GULBAR.start_position()
    values = dict(zip((roll for roll, _ in ROLLS), searcher.throw_values(start), strict=True))
    best = searcher.rank(start, (2, 2, 2, 2), 0)[0]
    end = GULBAR.legal_plays(start, (2, 2, 2, 2))[best.index].result
    assert GULBAR.legal_plays(start, (2, 2, 2, 2)).dice_used == 4
    assert values[(2, 2)] == pytest.approx(searcher.equity(end, 0), abs=1e-12)
    assert values[(2, 2)] != pytest.approx(best.equity, abs=1e-6)
    # A non-double is one segment: its value is that of the best play's afterstate.
    assert values[(1, 2)] == pytest.approx(searcher.rank(start, (1, 2), 0)[0].equity, abs=1e-12)


def test_without_re_rolls_the_throw_values_are_the_roll_values() -> None:
    # Where a roll is one segment the throw's value is the whole turn's, as Searcher.luck has it.
    searcher = Searcher(BACKGAMMON, make_evaluator("heuristic", BACKGAMMON))
    start = BACKGAMMON.start_position()
    roll_values = searcher.roll_values(start, 0)
    for (roll, _), value in zip(ROLLS, searcher.throw_values(start), strict=True):
        assert value == pytest.approx(roll_values[roll], abs=1e-12)


class _Scripted(TrialDice):
    """The throws given, in order."""

    def __init__(self, throws: Sequence[tuple[int, int]]) -> None:
        self._throws = list(throws)

    def throw(self) -> tuple[int, int]:
        return self._throws.pop(0)


class _Counting(Searcher):
    """A searcher whose every luck is 1, counting where it is asked."""

    def __init__(self, variant: Variant, evaluator: Evaluator) -> None:
        super().__init__(variant, evaluator)
        self.asked: list[tuple[Position, tuple[int, int]]] = []

    def throw_luck(
        self, position: Position, roll: Sequence[int], ply: int = 0, *, remember: bool = False
    ) -> float:
        self.asked.append((position, (roll[0], roll[1])))
        return 1.0


@pytest.mark.parametrize(
    ("variant", "counted"), [(GULBAR, 2), (BACKGAMMON, 1)], ids=["gulbar", "backgammon"]
)
def test_every_throw_of_a_chain_has_its_luck(variant: Variant, counted: int) -> None:
    # White plays 3-1 from the start; Black throws 2-2, played in full, and in gulbar throws
    # again (1-2): two throws, each its luck, from the opponent's side (−1 each); in
    # backgammon the double is the turn, one luck. The next roll is White's: truncated there.
    searcher = _Counting(variant, make_evaluator("heuristic", variant))
    game = _start(variant, variant.start_position(), (3, 1))
    game.decide(0)
    trial = play_out(searcher, game, _Scripted([(2, 2), (1, 2)]), truncate=1)
    assert trial.luck == -float(counted)
    assert len(searcher.asked) == counted
    if counted == 2:
        # The re-roll is valued from where the double left the roller's checkers.
        assert searcher.asked[1][0] != searcher.asked[0][0]


def test_the_analysis_counts_each_throw_of_a_chain_by_its_own_luck() -> None:
    # A gulbar game analysed at 0-ply: the luck of every roll and of every re-roll is
    # Searcher.throw_luck where it was thrown (the first roll after the opening throw carries
    # that throw's luck too: its whole value). Following each double through its re-rolls
    # (Searcher.luck) cost 99 % of a gulbar analysis.
    bots = (make_bot("heuristic", 3), make_bot("random", 3))
    record = play_game(GULBAR, bots, SeededDice(3), cube=CubeSettings()).record()
    game = from_kernel_record("g", record, ("heuristic", "random"), CubeSettings())
    searcher = Searcher(GULBAR, make_evaluator("heuristic", GULBAR))
    analysis = analyse_game(game, searcher)
    counted = [d for d in analysis.decisions if d.kind == "play" and d.luck is not None]
    rerolls = 0
    for decision in counted[1:]:
        position = Position.from_id(decision.position, GULBAR.checkers)
        roll = (decision.dice[0], decision.dice[1])
        mover_luck = searcher.throw_luck(position, roll)
        assert decision.luck == pytest.approx(mover_luck, abs=1e-9), decision.segment
        rerolls += decision.segment.startswith("re-roll")
    assert rerolls >= 2
    first = counted[0]
    start = Position.from_id(first.position, GULBAR.checkers)
    worth = searcher.luck_values(start)[(min(first.dice[:2]), max(first.dice[:2]))]
    assert first.luck == pytest.approx(worth, abs=1e-9)


class _Which(Searcher):
    """A searcher that says which values its luck was measured by."""

    used = ""

    def roll_values(self, position: Position, ply: int = 0) -> dict[tuple[int, int], float]:
        self.used = f"roll values at {ply}"
        return {roll: float(roll[0]) for roll, _ in ROLLS}

    def throw_values(self, position: Position) -> list[float]:
        self.used = "throw values"
        return [float(roll[0]) for roll, _ in ROLLS]


@pytest.mark.parametrize(
    ("variant", "ply", "used"),
    [
        (KHACHAPURI, 0, "throw values"),
        (KHACHAPURI, 1, "roll values at 1"),  # each double with its re-rolls (Searcher.luck)
        (BACKGAMMON, 0, "roll values at 0"),
    ],
    ids=["chain-0", "chain-1", "no-chain-0"],
)
def test_only_a_chain_at_0_ply_is_measured_by_its_throws(
    variant: Variant, ply: int, used: str
) -> None:
    searcher = _Which(variant, make_evaluator("heuristic", variant))
    luck = searcher.throw_luck(variant.start_position(), (6, 6), ply)
    assert searcher.used == used
    assert luck == pytest.approx(6 - sum(w * roll[0] for roll, w in ROLLS))
