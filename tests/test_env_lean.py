"""The lean game flow of the learning environments (nardy.env.lean) against the kernel's Game:
the same seed gives the same decisions, observations, masks and results, decision by decision;
and the vector env's batched canonical order is play_order's."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from nardy.core import game_variant_names, load_variant
from nardy.core.batch import legal_results
from nardy.env.driver import Driver, EnvConfig, NumpyDice, play_order
from nardy.env.lean import eligible

LEAN = ["backgammon", "trictrac", "long", "nardgammon", "fevga", "hypergammon", "portes", "plakoto"]


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
            )
        )
        driver.step(int(pick.integers(count)))
    seen.append((driver.take_points(), driver.result))
    return seen


BUILTIN = {*LEAN, "mad", "gulbar", "mad_gulbar", "khachapuri", "giul"}


def test_which_variants_run_lean() -> None:
    dice = NumpyDice(np.random.default_rng(0))
    lean = [name for name in game_variant_names() if eligible(_config(name).variant, dice, True)]
    # nardy's own variants (an installed plugin such as the example nackgammon may run lean too)
    assert [name for name in lean if name in BUILTIN] == LEAN
    # Progression, re-roll and transfer: the kernel's flow. Cube, match, chance nodes too.
    for name in ("mad", "gulbar", "mad_gulbar", "khachapuri", "giul"):
        assert name not in lean
    assert not eligible(load_variant("backgammon"), dice, True)  # the cube is on by default
    assert not eligible(load_variant("long", {"match_length": 3}), dice, True)
    assert not eligible(load_variant("long"), None, True)


@pytest.mark.parametrize("variant", LEAN)
def test_lean_games_are_the_kernel_games(variant: str) -> None:
    config = _config(variant)
    reasons = set()
    for seed in range(12 if variant == "plakoto" else 6):  # plakoto: pins, mother-rule ends
        lean = Driver(config, NumpyDice(np.random.default_rng(seed)))
        kernel = Driver(config, NumpyDice(np.random.default_rng(seed)))
        assert lean._lean is not None
        kernel.game  # noqa: B018 (replayed into the kernel's game at once: the reference flow)
        assert kernel._lean is None
        assert _trace(lean, 100 + seed) == _trace(kernel, 100 + seed)
        assert lean.result is not None
        reasons.add(lean.result.reason)
    if variant == "plakoto":  # every way a plakoto game ends (RULES.md §2.6, §3.12.2) was seen
        assert reasons == {"bear_off", "mother", "draw"}


def test_a_lean_game_replayed_mid_game_goes_on_the_same() -> None:
    config = _config("long")
    for seed in range(3):
        driver = Driver(config, NumpyDice(np.random.default_rng(seed)))
        pick = np.random.default_rng(seed)
        for _ in range(20):
            driver.step(int(pick.integers(driver.legal_count())))
        copied = copy.deepcopy(driver)  # replays into a Game, as pickling does
        pickled = pickle.loads(pickle.dumps(driver))
        # Every copy goes on with the same dice and decisions as the original.
        assert _trace(driver, seed) == _trace(copied, seed) == _trace(pickled, seed)


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
