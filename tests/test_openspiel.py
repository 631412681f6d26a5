"""The explicit-chance game state (nardy.env.state) against the kernel's Game, and the OpenSpiel
games built on it (nardy.openspiel): OpenSpiel's own random simulation test for every variant and
its MCTS bot against its random bot."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core import load_variant, variant_names
from nardy.core.dice import ScriptedDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.env.state import GameState

CUBE_OPTIONS = {"cube": True, "beavers": True, "auto_doubles": True}
CONFIGS = [(name, {}) for name in variant_names()] + [
    ("long", CUBE_OPTIONS),
    ("khachapuri", CUBE_OPTIONS),
    ("mad_gulbar", {"cube": True, "max_cube": 4}),
    ("backgammon", {"beavers": True, "jacoby": True, "auto_doubles": True}),
    ("backgammon", {"match_length": 3}),
]


def decision_key(d):
    if isinstance(d, PlayDecision):
        return ("play", d.player, d.position, d.segment, len(d.plays))
    if isinstance(d, DoubleDecision):
        return ("double", d.player, d.position, d.cube)
    return ("take", d.player, d.position, d.cube, d.beaver_allowed, d.after_beaver)


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**31 - 1))
def test_game_state_plays_exactly_like_the_kernel_game(config, seed):
    """Random dice and answers through GameState; the same dice and answers through Game must
    give the same decisions (player, position, segment, plays, cube), result and final board."""
    name, options = config
    variant = load_variant(name, options)
    rng = random.Random(seed)
    state = GameState(variant)
    rolls, answers, keys = [], [], []
    while not state.is_terminal:
        if state.is_chance:
            outcomes = state.chance_outcomes()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            roll = rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]
            rolls.append(roll)
            state.apply_roll(roll)
            continue
        d = state.decision
        keys.append(decision_key(d))
        if isinstance(d, PlayDecision):
            answer = rng.randrange(len(d.plays))
        elif isinstance(d, DoubleDecision):
            answer = rng.random() < 0.3
        else:
            answer = rng.choice(
                ["take", "drop", "beaver"] if d.beaver_allowed else ["take", "drop"]
            )
        answers.append(answer)
        # A clone taken now is independent of the original.
        twin = state.clone()
        state.apply(answer)
        assert twin.decision is d
    game = Game(variant, ScriptedDice(rolls))
    for answer in answers:
        assert game.decision is not None
        keys_seen = decision_key(game.decision)
        assert keys_seen == keys.pop(0)
        game.decide(answer)
    assert game.decision is None and not game.dice.source.remaining
    assert game.result == state.result
    assert game.position == state.position


pyspiel = pytest.importorskip(
    "pyspiel", reason="open_spiel is not installed (pip install open-spiel)"
)
np = pytest.importorskip("numpy")

from nardy.openspiel import game_name, register  # noqa: E402


@pytest.mark.parametrize("variant", variant_names())
def test_openspiel_random_simulations(variant):
    register([variant])
    game = pyspiel.load_game(game_name(variant))
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


def test_openspiel_chance_outcomes_and_observations():
    register(["long"])
    game = pyspiel.load_game("python_nardy_long")
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 36 and sum(p for _, p in outcomes) == pytest.approx(1)
    state.apply_action(6 * (5 - 1) + (3 - 1))  # White 5, Black 3: White starts and rolls
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert len(outcomes) == 21
    assert outcomes[6 * 5 + 3] == pytest.approx(2 / 36) and outcomes[0] == pytest.approx(1 / 36)
    state.apply_action(6 * (3 - 1) + (3 - 1))  # 3-3: two head checkers may leave (§3.3.4)
    assert state.current_player() == 0
    assert state.legal_actions() == list(range(len(state.state.decision.plays)))
    tensor = np.array(state.observation_tensor(0))
    assert tensor.shape == (226,)
    texts = {state.action_to_string(0, a) for a in state.legal_actions()}
    # Two head checkers: both to 18, or one to 21 and one to 15 (the opponent's head closes 12).
    assert texts == {"24/21(2) 21/18(2)", "24/21(2) 21/18/15"}


def test_openspiel_mcts_against_random():
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.bots import uniform_random

    register(["long"])
    game = pyspiel.load_game("python_nardy_long")
    rng = np.random.RandomState(7)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    bots = [
        mcts.MCTSBot(game, 2.0, 4, evaluator, random_state=rng, solve=False),
        uniform_random.UniformRandomBot(1, rng),
    ]
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(bots[state.current_player()].step(state))
    white, black = state.returns()
    assert white == -black and abs(white) in (1, 2, 3)
