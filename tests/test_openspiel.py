"""The OpenSpiel games (nardy.openspiel): OpenSpiel's own random simulation test for every
variant, chance outcomes, observations, and its MCTS bot against its random bot."""

from __future__ import annotations

import pytest

from nardy.core import variant_names

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


def test_openspiel_parameters_are_the_variant_options():
    register(["long", "backgammon"])
    game = pyspiel.load_game("python_nardy_long", {"cube": True, "match_length": 5})
    assert game.variant.options["cube"] is True
    assert game.variant.options["match_length"] == 5
    assert game.variant.options["max_cube"] is None  # 0 = unset
    assert game.max_utility() == 3 * 64  # koks × the largest cube counted
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    plain = pyspiel.load_game("python_nardy_long")
    assert plain.variant.options["cube"] is False and plain.max_utility() == 3
    capped = pyspiel.load_game("python_nardy_backgammon", {"max_cube": 8})
    assert capped.max_utility() == 3 * 8
    with pytest.raises(Exception, match="first_turn_head"):
        pyspiel.load_game("python_nardy_long", {"first_turn_head": "sometimes"})
