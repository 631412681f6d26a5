"""The move generator against the backgammon oracle, its two searches against each other, and
the rule that generating plays never calls a plugin hook.

The oracle (tests/data/backgammon-oracle.jsonl.gz, see tests/data/README-testdata.md) holds 2,550
backgammon cases with the complete set of distinct results on which GNU Backgammon and bgsage
agree. Dice ``[a, a]`` there mean the double's four steps.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nardy.core import game_variant_names, load_variant, plugin_manager
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.core.movegen import MoveGenerator, board_of, position_of
from nardy.core.notation import format_steps, parse_steps, play_text
from nardy.core.position import Position
from nardy.core.variant import Variant, apply_steps

ORACLE = Path(__file__).parents[1] / "data" / "backgammon-oracle.jsonl.gz"


def _oracle_cases() -> list[dict[str, Any]]:
    with gzip.open(ORACLE, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _steps(dice: list[int]) -> tuple[int, ...]:
    """The segment's steps: ``[a, a]`` is the double's four steps."""
    return (dice[0],) * 4 if dice[0] == dice[1] else (dice[0], dice[1])


def _mismatches(cases: list[dict[str, Any]], reverse: bool) -> list[str]:
    variant = load_variant("backgammon")
    bad: list[str] = []
    for case in cases:
        steps = _steps(case["dice"])
        if reverse:
            steps = steps[::-1]
        position = Position.from_json(case["position"])
        got = {play.result for play in variant.legal_plays(position, steps)}
        expected = {Position.from_json(r) for r in case["results"]}
        if got != expected:
            bad.append(
                f"{case['id']} (dice {list(steps)}: {len(got - expected)} extra, "
                f"{len(expected - got)} missing)"
            )
    return bad


@pytest.fixture(scope="module")
def oracle() -> list[dict[str, Any]]:
    return _oracle_cases()


def test_oracle_every_case(oracle: list[dict[str, Any]]) -> None:
    """Every oracle case gives exactly the oracle's set of result positions."""
    assert len(oracle) == 2550
    bad = _mismatches(oracle, reverse=False)
    assert not bad, f"{len(bad)} of {len(oracle)} cases differ, first: {bad[:5]}"


def test_oracle_play_text(oracle: list[dict[str, Any]]) -> None:
    """Every play's text (the fast table-joined :func:`play_text` that ``Play.text`` uses) is
    :func:`format_steps`'s, and reads back to a step list that replays to the play's result."""
    variant = load_variant("backgammon")
    for case in oracle:
        position = Position.from_json(case["position"])
        for play in variant.legal_plays(position, _steps(case["dice"])):
            assert play.text == play_text(play.steps) == format_steps(play.steps), case["id"]
            assert apply_steps(position, parse_steps(play.text)) == play.result, case["id"]


def test_oracle_dice_order_does_not_matter(oracle: list[dict[str, Any]]) -> None:
    """The same cases with the two dice of a non-double given the other way round.

    (A result reached both by one die and by both dice, such as ``6/off`` and ``6/5/off`` with
    1-6, once depended on the order.)
    """
    non_doubles = [c for c in oracle if c["dice"][0] != c["dice"][1]]
    bad = _mismatches(non_doubles, reverse=True)
    assert not bad, f"{len(bad)} of {len(non_doubles)} cases differ, first: {bad[:5]}"


# -- positions of every variant from seeded random games ------------------------------------------


def _random_positions(variant: Variant, games: int, seed: int) -> list[Position]:
    """Every position where a play was chosen, in ``games`` seeded games with random choices."""
    rng = random.Random(seed)
    found: list[Position] = []
    for number in range(games):
        game = Game(variant, SeededDice(seed * 1000 + number))
        decisions = 0
        while not game.is_over and decisions < 2000:
            decision = game.decision
            if isinstance(decision, PlayDecision):
                found.append(decision.position)
                game.decide(rng.randrange(len(decision.plays)))
            elif isinstance(decision, DoubleDecision):
                game.decide(False)
            else:
                game.decide("take")
            decisions += 1
    return found


ALL_DICE: tuple[tuple[int, ...], ...] = (
    *((a, b) for a in range(1, 7) for b in range(1, 7) if a != b),
    *((d,) * n for d in range(1, 7) for n in range(1, 5)),
)
"""Every segment a variant can ask for: the 30 ordered non-doubles and 1-4 equal steps."""

# Variants with options that change legal plays, besides the defaults of every variant.
OPTION_VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("long", {"first_turn_head": "fixed"}),
    ("long", {"first_turn_head": "head_only"}),
    ("mad", {"home_moves": "always"}),
    ("mad", {"home_moves": "never"}),
    ("fevga", {"quarter_timing": "every_step"}),
    ("giul", {"quarter_timing": "every_step"}),
)


def _variants() -> list[tuple[str, dict[str, Any]]]:
    names = game_variant_names()
    return [(n, {}) for n in names] + [(n, o) for n, o in OPTION_VARIANTS if n in names]


def _cases(variant: Variant, games: int, per_position: int, seed: int) -> Iterator[Any]:
    """(position, steps) pairs: the start positions with every segment, then random ones."""
    rng = random.Random(seed)
    start = variant.start_position()
    for position in (start, variant.flip(start)):
        for steps in ALL_DICE:
            yield position, steps
    for position in _random_positions(variant, games, seed):
        for steps in rng.sample(ALL_DICE, per_position):
            yield position, steps


def _variant_id(name: str, options: dict[str, Any]) -> str:
    return name + "".join(f"[{k}={v}]" for k, v in options.items())


@pytest.mark.parametrize(
    ("name", "options"), _variants(), ids=[_variant_id(n, o) for n, o in _variants()]
)
def test_plays_are_consistent(name: str, options: dict[str, Any]) -> None:
    """For every variant: each representative step list reaches its result and uses N dice, and
    the fast path or the ordered search (whichever the variant has) agrees with the general
    search."""
    variant = load_variant(name, options)
    own = variant.generator
    general = (
        MoveGenerator(variant.rules, fast=False) if own.fast or own.ordered or own.pins else None
    )
    problems: list[str] = []
    count = 0
    for position, steps in _cases(variant, games=4, per_position=8, seed=11):
        count += 1
        segment = variant.generator.segment(position, steps)
        for key, play in segment.plays.items():
            # The play ended the game: the last checker off, or (plakoto) the mother rule.
            finished = variant.outcome(position_of(key)) is not None
            reached = apply_steps(position, play, pins=variant.rules.hitting.pins)
            if tuple(board_of(reached)) != key or not (len(play) == segment.dice_used or finished):
                problems.append(f"{position} {steps}: steps {play} do not make a play")
        if general is not None:
            other = general.segment(position, steps)
            if (segment.dice_used, set(segment.plays)) != (other.dice_used, set(other.plays)):
                problems.append(
                    f"{position} {steps}: own search N={segment.dice_used} "
                    f"{len(segment.plays)} plays, general search N={other.dice_used} "
                    f"{len(other.plays)} plays"
                )
    assert count > 300
    assert not problems, f"{len(problems)} problems, first: {problems[:3]}"


ORDERED_VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("nardgammon", {}),
    ("mad", {}),
    ("mad", {"home_moves": "never"}),
    ("mad_gulbar", {}),
    ("fevga", {}),
    ("fevga", {"quarter_timing": "every_step"}),
    ("giul", {}),
    ("giul", {"quarter_timing": "every_step"}),
)
"""The rule sets with steps that depend on their order (the ordered search answers them)."""


@pytest.mark.parametrize(
    ("name", "options"),
    ORDERED_VARIANTS,
    ids=[_variant_id(n, o) for n, o in ORDERED_VARIANTS],
)
@pytest.mark.slow  # a long property run (every segment of random-game positions); test_plays_are_consistent samples it
@pytest.mark.parametrize("shortcut", [True, False], ids=["shortcut", "no-shortcut"])
def test_ordered_search_agrees_with_general_search(
    name: str, options: dict[str, Any], shortcut: bool
) -> None:
    """The ordered search (two-dice loops, equal dice keyed by an integer) gives the general
    search's results and dice on every segment of random-game positions, both dice orders and
    1-4 equal steps; without the shortcuts, its own loops and depth-first search answer every
    segment (not the fast path's where no order-dependent rule binds)."""
    variant = load_variant(name, options)
    own = MoveGenerator(variant.rules, shortcuts=shortcut)
    assert own.ordered and not own.fast
    general = MoveGenerator(variant.rules, fast=False)
    assert not general.ordered and not general.fast
    problems: list[str] = []
    count = 0
    positions = [variant.start_position(), *_random_positions(variant, 2, 23)]
    for position in positions:
        for steps in ALL_DICE:
            count += 1
            mine = own.segment(position, steps)
            other = general.segment(position, steps)
            if (mine.dice_used, set(mine.plays)) != (other.dice_used, set(other.plays)):
                problems.append(
                    f"{position.id()} {steps}: ordered N={mine.dice_used} {len(mine.plays)} "
                    f"plays, general N={other.dice_used} {len(other.plays)} plays"
                )
    assert count > 5000
    assert not problems, f"{len(problems)} problems, first: {problems[:3]}"


# Fevga, the mover past the opponent's head (on his 5), his 20…23 held: with 5s only 24/19 can
# move, and it closes the quarter 19…24 (RULES.md §3.9). With the default end-of-segment check
# every play of 1-4 fives ends closed, so nothing is played; with every_step the step is illegal.
QUARTER_CASE = {
    "points": [0, 0, 0, 0, 1, *[0] * 8, -3, -3, -3, -3, -3, 0, 1, 1, 1, 1, 10],
    "bar": [0, 0],
    "off": [0, 0],
}


@pytest.mark.parametrize("name", ["fevga", "giul"])
@pytest.mark.parametrize("timing", ["turn_end", "every_step"])
@pytest.mark.parametrize(
    ("steps", "used", "count"),
    [
        ((5,), (0, 0), 1),
        ((5, 5), (0, 0), 1),
        ((5, 5, 5), (0, 0), 1),
        ((5, 5, 5, 5), (0, 0), 1),
        # 24/19 with a 1 that opens the quarter again (23/22, 22/21, 21/20 or 20/19); with
        # every_step the 1 comes first.
        ((5, 1), (2, 2), 4),
        ((1, 5), (2, 2), 4),
        # 24/13: the checker that closed the quarter on 19 moves on, which only the end-of-segment
        # check allows.
        ((5, 6), (2, 0), 1),
        ((6, 5), (2, 0), 1),
    ],
)
def test_quarter_rule_cases(
    name: str, timing: str, steps: tuple[int, ...], used: tuple[int, int], count: int
) -> None:
    """Positions where plays close the quarter: where the runner has passed, the fast path's
    searches answer first and hand over to the ordered search when every play of the most dice
    closes it; the ordered search answers as the general search does. ``used`` is the dice
    played with turn_end and with every_step."""
    expected = used[0] if timing == "turn_end" else used[1]
    variant = load_variant(name, {"quarter_timing": timing})
    position = Position.from_json(QUARTER_CASE)
    plays = variant.legal_plays(position, steps)
    general = MoveGenerator(variant.rules, fast=False).segment(position, steps)
    assert (plays.dice_used, len(plays)) == (expected, count)
    assert general.dice_used == expected
    assert [p.result for p in plays] == [position_of(k) for k in general.plays]
    if not expected:
        assert [p.result for p in plays] == [position]


# Long nardy family: the mover holds his 13…17 (O's 1…5), O is on the mover's 1…12, so six points
# of the mover's on his 13…18 would be an illegal block (RULES.md §3.3.5). Every play of all the
# dice makes one, so fewer dice are played; the fast path hands such segments to the general
# search.
BLOCK_CASES = (
    ("aaaaaa/aaaaad/-BBBBB/-----E", (6, 5), 1, ["24/18"]),
    ("aaaaaa/aaaaad/ABBBB-/B--A-C", (6, 6, 6, 6), 3, ["22/16 19/13(2)"]),
)


@pytest.mark.parametrize("name", ["long", "gulbar", "khachapuri", "nardgammon", "mad"])
@pytest.mark.parametrize(("position_id", "steps", "used", "texts"), BLOCK_CASES)
def test_end_check_leaves_fewer_dice(
    name: str, position_id: str, steps: tuple[int, ...], used: int, texts: list[str]
) -> None:
    variant = load_variant(name)
    position = Position.from_id(position_id)
    plays = variant.legal_plays(position, steps)
    assert plays.dice_used == used
    assert [p.text for p in plays] == texts
    generator = variant.generator
    if generator.fast:
        board = board_of(position)
        assert generator._fast(board, steps, generator.head_limit) is None  # the fallback
    general = MoveGenerator(variant.rules, fast=False).segment(position, steps)
    assert general.dice_used == used
    assert list(general.plays.items()) == list(generator.segment(position, steps).plays.items())


def test_no_hook_is_called_while_generating_plays() -> None:
    """The generator reads compiled rules only: generating plays calls no pluggy hook."""
    variants = [load_variant(name, options) for name, options in _variants()]
    work = [(v, list(_cases(v, games=2, per_position=4, seed=5))) for v in variants]
    calls: list[str] = []

    def before(hook_name: str, hook_impls: object, kwargs: object) -> None:
        calls.append(hook_name)

    def after(outcome: object, hook_name: str, hook_impls: object, kwargs: object) -> None:
        pass

    undo = plugin_manager().add_hookcall_monitoring(before, after)
    try:
        generated = 0
        for variant, cases in work:
            for position, steps in cases:
                plays = variant.legal_plays(position, steps)
                for play in plays:
                    assert play.text is not None
                generated += len(plays)
    finally:
        undo()
    assert generated > 1000
    assert calls == [], f"{len(calls)} hook calls while generating plays: {sorted(set(calls))}"


def test_monitoring_sees_hook_calls() -> None:
    """The monitor used above does see hook calls (so its empty list means something)."""
    calls: list[str] = []
    undo = plugin_manager().add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append(name), lambda *args: None
    )
    try:
        plugin_manager().hook.nardy_layout(variant="backgammon", options={})
    finally:
        undo()
    assert calls == ["nardy_layout"]
