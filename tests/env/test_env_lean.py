"""The lean game flow of the learning environments (nardy.core.lean) against the kernel's Game:
the same seed gives the same decisions, observations, masks and results, decision by decision;
and the vector env's batched canonical order is play_order's."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("gymnasium")

from nardy.core import game_variant_names, load_variant
from nardy.core.batch import legal_results
from nardy.core.game import Game
from nardy.core.lean import LeanGame, eligible
from nardy.core.position import Position
from nardy.core.turnplan import all_home, one_segment_turns
from nardy.env.driver import Driver, EnvConfig, NumpyDice, play_order

FOUR = ["backgammon", "trictrac", "long", "nardgammon", "fevga", "hypergammon", "portes", "plakoto"]
"""Doubles are four steps: a turn is one segment."""
PLANNED = ["mad", "gulbar", "mad_gulbar", "khachapuri", "giul"]
"""Progression stages (RULES.md §2.8), re-rolls (§2.9), transferred steps (§2.10)."""
LEAN = FOUR + PLANNED


def _config(variant: str, **options: Any) -> EnvConfig:
    if "cube" in load_variant(variant).options:
        options.setdefault("cube", False)
    return EnvConfig.build(variant, options)


def _trace(driver: Driver, seed: int) -> list[Any]:
    """Everything an agent sees, decision by decision, random legal actions."""
    pick = np.random.default_rng(seed)
    seen: list[Any] = []
    while not driver.over:
        player, count = driver.player, driver.legal_count()
        seen.append(
            (
                player,
                count,
                driver.mask().tolist(),
                driver.observation(player).tolist(),
                driver.observation(1 - player).tolist(),
                driver.play(0).result,
                driver.decision.segment,  # type: ignore[union-attr]
            )
        )
        driver.step(int(pick.integers(count)))
    seen.append((driver.take_points(), driver.result))
    return seen


def test_which_variants_run_lean() -> None:
    dice = NumpyDice(np.random.default_rng(0))
    lean = [name for name in game_variant_names() if eligible(_config(name).variant, dice, True)]
    # Every nardy variant's money game without the cube, whatever its doubles rule.
    assert set(LEAN) <= set(lean)
    assert not eligible(load_variant("backgammon"), dice, True)  # the cube is on by default
    assert not eligible(load_variant("long", {"match_length": 3}), dice, True)
    assert not eligible(load_variant("long"), None, True)
    assert [name for name in LEAN if one_segment_turns(load_variant(name).rules.turn)] == FOUR


SEEDS: dict[str, list[int]] = {
    "plakoto": list(range(12)),  # pins: every mother-rule end and a draw
    "mad_gulbar": [0, 1, 4, 5, 12],  # an entry on a stage's fourth step; a stage not started
    "giul": list(range(7)),  # a game that ends in a stage
}


@pytest.mark.parametrize("variant", LEAN)
def test_lean_games_are_the_kernel_games(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(variant)
    reasons = set()
    stops: set[str] = set()
    monkeypatch.setattr(LeanGame, "_next", _spied(LeanGame._next, stops))
    reached: set[str] = set()
    for seed in SEEDS.get(variant, list(range(6))):
        lean = Driver(config, NumpyDice(np.random.default_rng(seed)))
        kernel = Driver(config, NumpyDice(np.random.default_rng(seed)))
        assert lean.lean_game is not None
        kernel.game  # noqa: B018 (replayed into the kernel's game at once: the reference flow)
        assert kernel.lean_game is None
        assert _trace(lean, 100 + seed) == _trace(kernel, 100 + seed)
        assert lean.result is not None
        reasons.add(lean.result.reason)
        record = kernel.game.record()
        assert lean.game.record() == record  # the lean game replayed: the same events
        reached |= _turn_plan_features(record)
    if variant == "plakoto":  # every way a plakoto game ends (RULES.md §2.6, §3.12.2) was seen
        assert reasons == {"bear_off", "mother", "draw"}
    # The seeds reach every case of the variant's turn plan (the kernel's records say so).
    rules = config.variant.rules.turn
    if rules.doubles == "progression":
        assert {"later stage", "game ends in a stage"} <= reached
        # RULES.md §2.8: a progression not started, one whose player is all home as it starts,
        # entry in a stage, and (mad_gulbar's extra stage) entry on the fourth step.
        assert {"not started", "all home", "entry"} <= stops
        if rules.progression_stop == "fourth_step_extra":
            assert "fourth-step entry" in stops
    if rules.doubles == "reroll":
        assert {"re-rolled double", "re-rolled two dice", "game ends in a reroll"} <= reached
    if rules.transfer:
        assert "steps transferred" in reached
        if rules.doubles == "progression":
            assert "several groups" in reached


def _turn_plan_features(record: dict[str, Any]) -> set[str]:
    """What a game record shows of the progression, re-roll and transfer rules."""
    found = set()
    plays = [event for event in record["events"] if event["kind"] == "play"]
    for event in record["events"]:
        if event["kind"] == "transfer":
            found.add("steps transferred")
            if len(event["steps"]) > 1:
                found.add("several groups")
        if event["kind"] == "roll" and event.get("reroll"):
            a, b = event["dice"]
            found.add("re-rolled double" if a == b else "re-rolled two dice")
    for event in plays:
        words = event["segment"].split()
        if event["segment_kind"] == "stage" and words[0] == "stage" and words[1] != words[4][0]:
            found.add("later stage")
    found.add(f"game ends in a {plays[-1]['segment_kind']}")
    return found


def _spied(next_segment: Any, stops: set[str]) -> Any:
    """``LeanGame._next``, noting which stop of a progression (RULES.md §2.8) each stage met."""

    def spy(game: LeanGame, used: int) -> bool:
        if game.kind == "stage":
            first, start, now = game.dice[0] == game._first, game._start, game.position
            if first and used == 0:
                stops.add("not started")
            elif first and all_home(start):
                stops.add("all home")
            elif not all_home(start) and all_home(now):
                on_fourth = used == 4 and now.off[0] == start.off[0]
                stops.add("fourth-step entry" if on_fourth else "entry")
        answer: bool = next_segment(game, used)
        return answer

    return spy


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    variant=st.sampled_from(LEAN),
    seed=st.integers(0, 2**32 - 1),
    auto_forced=st.booleans(),
)
def test_any_lean_game_is_the_kernel_game(variant: str, seed: int, auto_forced: bool) -> None:
    """Any seed, with forced segments played or asked (``auto_forced=False``: every segment a
    decision, a segment without a legal step one empty play)."""
    options = {"cube": False} if "cube" in load_variant(variant).options else {}
    config = EnvConfig.build(variant, options, auto_forced=auto_forced)
    lean = Driver(config, NumpyDice(np.random.default_rng(seed)))
    kernel = Driver(config, NumpyDice(np.random.default_rng(seed)))
    kernel.game  # noqa: B018
    assert _trace(lean, seed) == _trace(kernel, seed)
    assert lean.game.record() == kernel.game.record()


@pytest.mark.parametrize("variant", ["long", "mad_gulbar", "gulbar", "giul"])
def test_a_lean_game_copied_in_a_planned_segment_goes_on_the_same(variant: str) -> None:
    """Copies made at a progression stage, a re-roll or transferred steps (and in long nardy,
    at a roll) replay into the kernel's game at that decision and go on as the original, and as
    a twin that was never copied (lean to the end)."""
    config = _config(variant)
    for seed in range(3):
        driver = Driver(config, NumpyDice(np.random.default_rng(seed)))
        twin = Driver(config, NumpyDice(np.random.default_rng(seed)))
        pick = np.random.default_rng(seed)
        steps = 0
        while steps < 20 or (variant != "long" and driver.lean_game.kind == "roll"):  # type: ignore[union-attr]
            action = int(pick.integers(driver.legal_count()))
            driver.step(action)
            twin.step(action)
            steps += 1
        copied = copy.deepcopy(driver)  # replays into a Game, as pickling does
        pickled = pickle.loads(pickle.dumps(driver))
        assert twin.lean_game is not None
        # Every copy goes on with the same dice and decisions as the original.
        expected = _trace(twin, seed)
        assert _trace(driver, seed) == _trace(copied, seed) == _trace(pickled, seed) == expected


def test_lean_game_record_is_the_kernel_record() -> None:
    config = _config("backgammon")
    lean = Driver(config, NumpyDice(np.random.default_rng(4)))
    kernel = Driver(config, NumpyDice(np.random.default_rng(4)))
    kernel.game  # noqa: B018
    pick_a, pick_b = np.random.default_rng(1), np.random.default_rng(1)
    while not lean.over:
        lean.step(int(pick_a.integers(lean.legal_count())))
        kernel.step(int(pick_b.integers(kernel.legal_count())))
    assert lean.game.record() == kernel.game.record()


def test_lean_decision_for_bots_is_the_kernels() -> None:
    config = _config("hypergammon")
    lean = Driver(config, NumpyDice(np.random.default_rng(9)))
    kernel = Driver(config, NumpyDice(np.random.default_rng(9)))
    kernel.game  # noqa: B018
    a, b = lean.decision, kernel.decision
    assert a is not None and b is not None
    assert (a.player, a.segment, a.position) == (b.player, b.segment, b.position)
    assert [p.result for p in a.plays] == [p.result for p in b.plays]  # type: ignore[union-attr]
    assert lean.order() == kernel.order()
    np.testing.assert_array_equal(lean.afterstates(), kernel.afterstates())


@pytest.mark.parametrize("variant", ["backgammon", "long", "plakoto"])  # plakoto: pins in keys
def test_canonical_order_of_a_batch_is_play_order(variant: str) -> None:
    config = _config(variant)
    pairs, expected = [], []
    for seed in range(3):
        driver = Driver(config, NumpyDice(np.random.default_rng(seed)))
        pick = np.random.default_rng(seed)
        while not driver.over:
            decision = driver.decision
            assert decision is not None
            pairs.append((decision.position, decision.plays.dice))  # type: ignore[union-attr]
            expected.append(play_order(decision.plays))  # type: ignore[union-attr,arg-type]
            driver.step(int(pick.integers(driver.legal_count())))
    batch = legal_results(config.variant, pairs, order="board")  # what the vector env asks for
    offsets = batch.offsets.tolist()
    assert batch.play_index is not None
    for k, want in enumerate(expected):
        assert batch.play_index[offsets[k] : offsets[k + 1]].tolist() == want


@settings(max_examples=300, deadline=None)
@example(home=[0, 1, 0, 0, 0, 0], theirs=[0, 0, 0, 0, 0, 1], dice=(1, 2), home_moves="never")
@given(
    home=st.lists(st.integers(0, 6), min_size=6, max_size=6).filter(lambda c: 0 < sum(c) <= 15),
    theirs=st.lists(st.integers(0, 5), min_size=6, max_size=6).filter(lambda c: 0 < sum(c) <= 15),
    dice=st.one_of(
        st.tuples(st.integers(1, 6), st.integers(1, 6)).filter(lambda d: d[0] != d[1]),
        st.integers(1, 6).flatmap(lambda d: st.integers(1, 4).map(lambda n: (d,) * n)),
    ),
    home_moves=st.sampled_from(["until_all_home", "never"]),
)
def test_an_all_home_segment_under_the_exact_bear_off_is_told_without_generating(
    home: list[int], theirs: list[int], dice: tuple[int, ...], home_moves: str
) -> None:
    """RULES.md §3.5: once all home, each step bears a checker off its die's point or nothing
    (no step inside home), so the lean game plays the segment's one legal play without the
    generator: the generator's one play, whatever the dice (a roll, a stage's four steps, fewer
    transferred ones)."""
    variant = load_variant("mad", {"home_moves": home_moves})
    points = [0] * 24
    points[:6] = home
    points[12:18] = [-n for n in theirs]  # the opponent's home, where his checkers end
    position = Position(tuple(points), (0, 0), (15 - sum(home), 15 - sum(theirs)))
    variant.validate(position)
    game = LeanGame.at_segment(
        variant, NumpyDice(np.random.default_rng(0)), position, 0, "stage", dice, False
    )
    found = game._home_play()
    assert found is not None
    segment = variant.generator.checked_segment(position, dice)
    assert segment is not None
    assert list(segment.plays) == [tuple(found[0])]
    assert segment.dice_used == found[1]
    # Not all home, or another variant's rules (moves inside home, the standard bear-off): the
    # generator decides.
    points[6] = 1
    away = Position(tuple(points), (0, 0), (14 - sum(home), 15 - sum(theirs)))
    dice_source = NumpyDice(np.random.default_rng(0))
    assert (
        LeanGame.at_segment(variant, dice_source, away, 0, "stage", dice, False)._home_play()
        is None
    )
    for other in ("long", "mad_gulbar", "giul"):
        assert not LeanGame.at_segment(
            load_variant(other), dice_source, position, 0, "stage", dice, False
        )._exact
    always = load_variant("mad", {"home_moves": "always"})
    assert not LeanGame.at_segment(always, dice_source, position, 0, "stage", dice, False)._exact


@settings(max_examples=200, deadline=None)
@given(
    mine=st.lists(st.integers(0, 4), min_size=6, max_size=6).filter(lambda c: 0 < sum(c) <= 15),
    theirs=st.lists(st.integers(0, 4), min_size=6, max_size=6).filter(lambda c: 0 < sum(c) <= 15),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_race_of_two_all_home_sides_is_the_kernel_game(
    mine: list[int], theirs: list[int], seed: int
) -> None:
    """Both sides all home under mad's exact bear-off (RULES.md §3.5): no decision is left, the
    lean game plays the turns on counts; the same dice give the kernel game's rolls, end, points
    and final board."""
    variant = load_variant("mad")
    points = [0] * 24
    points[:6] = mine
    points[12:18] = [-n for n in theirs]  # his points 1…6 (the same geometry)
    position = Position(tuple(points), (0, 0), (15 - sum(mine), 15 - sum(theirs)))
    variant.validate(position)
    kernel = Game(variant, NumpyDice(np.random.default_rng(seed)), position=position)
    dice = NumpyDice(np.random.default_rng(seed))
    lean = LeanGame.at_segment(variant, dice, position, 0, "roll", (), True)
    lean._rolled(lean._roll())
    lean.enter()
    assert kernel.result is not None and lean.result == kernel.result
    assert lean.position == kernel.position
    assert [list(roll) for roll in lean.rolls] == kernel.record()["rolls"]
