"""The OpenSpiel games (nardy.openspiel): OpenSpiel's own random simulation test for every
variant, chance outcomes, observations, and its MCTS bot against its random bot."""

from __future__ import annotations

import pytest

from nardy.core import game_variant_names

pyspiel = pytest.importorskip(
    "pyspiel", reason="open_spiel is not installed (pip install open-spiel)"
)
np = pytest.importorskip("numpy")

from nardy.openspiel import game_name, register  # noqa: E402


@pytest.mark.parametrize(
    "variant",
    [
        v if v in ("backgammon", "hypergammon") else pytest.param(v, marks=pytest.mark.slow)
        for v in game_variant_names()
    ],
)
def test_openspiel_random_simulations(variant):
    """OpenSpiel's test clones every state; a clone replays the game, so long games take seconds."""
    register([variant])
    game = pyspiel.load_game(game_name(variant))
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize(
    ("variant", "params"),
    [("hypergammon", {}), ("backgammon", {"cube": True, "auto_doubles": True, "beavers": True})],
)
def test_openspiel_random_simulations_with_serialization(variant, params):
    register([variant])
    game = pyspiel.load_game(game_name(variant), params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("variant", game_variant_names())
def test_openspiel_random_simulations_with_serialization_every_variant(variant):
    """Serialisation replays the game (a copy of the generator-driven flow): O(n) a state, so
    OpenSpiel's test, which serialises every state, takes seconds per variant."""
    register([variant])
    game = pyspiel.load_game(game_name(variant))
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_openspiel_chance_outcomes_and_observations():
    register(["long"])
    game = pyspiel.load_game("python_nardy_long")
    state = game.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    # The opening throw's ties are inside this node: 30 ordered pairs of different dice.
    assert len(outcomes) == 30 and sum(p for _, p in outcomes) == pytest.approx(1)
    assert all(a // 6 != a % 6 for a, _ in outcomes)
    state.apply_action(6 * (5 - 1) + (3 - 1))  # White 5, Black 3: White starts and rolls
    assert state.is_chance_node()
    outcomes = dict(state.chance_outcomes())
    assert len(outcomes) == 21
    assert outcomes[6 * 5 + 3] == pytest.approx(2 / 36) and outcomes[0] == pytest.approx(1 / 36)
    state.apply_action(6 * (3 - 1) + (3 - 1))  # 3-3: two head checkers may leave (§3.3.4)
    assert state.current_player() == 0
    assert state.legal_actions() == list(range(len(state.game.decision.plays)))
    tensor = np.array(state.observation_tensor(0))
    assert tensor.shape == (226,)
    texts = {state.action_to_string(0, a) for a in state.legal_actions()}
    # Two head checkers: both to 18, or one to 21 and one to 15 (the opponent's head closes 12).
    assert texts == {"24/21(2) 21/18(2)", "24/21(2) 21/18/15"}


@pytest.mark.slow  # MCTS clones the state for every simulation; a clone replays the game
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


@pytest.mark.parametrize("variant", ["backgammon", "long", "hypergammon"])
def test_the_opening_throw_is_one_chance_node(variant):
    """Every outcome of the opening node leads past it (a naive driver never loops), and the
    outcomes are the 30 ordered pairs of different dice, 1/30 each."""
    register([variant])
    game = pyspiel.load_game(game_name(variant))
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    assert sorted(a for a, _ in outcomes) == [
        6 * (w - 1) + (b - 1) for w in range(1, 7) for b in range(1, 7) if w != b
    ]
    assert [p for _, p in outcomes] == pytest.approx([1 / 30] * 30)
    for action, _ in outcomes:
        child = state.child(action)
        assert not (child.is_chance_node() and child.game.chance.kind == "opening")
    with pytest.raises(Exception, match="not an outcome"):
        state.child(6 * 2 + 2)  # a tie is not an outcome of its own


def test_opening_ties_that_double_the_cube_are_outcomes_of_the_one_node():
    register(["backgammon"])
    game = pyspiel.load_game(
        "python_nardy_backgammon", {"cube": True, "auto_doubles": True, "auto_doubles_limit": 2}
    )
    assert game.max_chance_outcomes() == 3 * 36
    state = game.new_initial_state()
    outcomes = dict(state.chance_outcomes())
    assert len(outcomes) == 90 and sum(outcomes.values()) == pytest.approx(1)
    # No tie: 5/6; one tie then a decision: 1/6 · 5/6; two or more ties (the limit): 1/36.
    assert outcomes[6 * 4 + 2] == pytest.approx(5 / 6 / 30)
    assert outcomes[36 + 6 * 4 + 2] == pytest.approx(5 / 36 / 30)
    assert outcomes[72 + 6 * 4 + 2] == pytest.approx(1 / 36 / 30)
    for ties in range(3):
        child = state.child(36 * ties + 6 * 4 + 2)  # White 5, Black 3
        assert child.game.cube.value == 2**ties
        assert child.current_player() == 0 and not child.is_chance_node()


def test_strings_carry_the_dice_and_turn_plan():
    """Decisions after 4-4 and after 3-3 and the chance node before them are told apart by the
    information-state and observation strings (issue 23: they were equal)."""
    register(["backgammon"])
    game = pyspiel.load_game("python_nardy_backgammon", {"cube": False})
    opening = game.new_initial_state().child(6 * 4 + 2)  # White 5, Black 3: White plays 5-3
    start = opening.child(opening.legal_actions()[0])  # Black to roll: a chance node
    assert start.is_chance_node()
    strings = {start.information_state_string(1)}
    for double in (4, 3):
        child = start.child(6 * (double - 1) + (double - 1))
        assert child.current_player() == 1
        text = child.information_state_string(1)
        assert text == child.observation_string(1)
        assert f"{double}-{double}-{double}-{double}" in text
        strings.add(text)
    assert len(strings) == 3
    assert "Black to throw" in start.observation_string(0)


def test_serialize_game_and_state_round_trip():
    register(["long"])
    game = pyspiel.load_game("python_nardy_long", {"cube": True})
    state = game.new_initial_state()
    rng = np.random.RandomState(3)
    for _ in range(40):
        if state.is_terminal():
            break
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game)
    assert state2.history() == state.history() and str(state2) == str(state)
    assert state2.legal_actions() == state.legal_actions()
    assert state2.observation_tensor(0) == state.observation_tensor(0)
    clone = state.clone()
    for twin in (clone, state2):
        assert twin.history() == state.history()


def test_observation_tensor_is_the_aec_observation():
    """The same dice and actions through OpenSpiel and the AEC environment: at every decision the
    decider's tensor equals the AEC observation (first turn, later steps, re-roll, cube, match)."""
    from nardy.core.dice import ScriptedDice
    from nardy.core.game import Game
    from nardy.env import raw_aec_env
    from nardy.env.driver import Driver

    cases = [("long", {}), ("mad", {}), ("gulbar", {}), ("backgammon", {"match_length": 5})]
    for variant, params in cases:
        register([variant])
        game = pyspiel.load_game(game_name(variant), params)
        state = game.new_initial_state()
        rng = np.random.RandomState(11)
        actions = []
        while not state.is_terminal() and len(actions) < 120:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                action = int(rng.choice(outcomes, p=probs))
                if variant in ("mad", "gulbar") and len(actions) > 1:
                    action = 7 * int(rng.randint(6))  # doubles only: progressions, re-rolls
                if variant == "long" and len(actions) == 1:
                    action = 6 * 2 + 2  # a first-turn 3-3: two head checkers may move (§3.3.4)
            else:
                action = int(rng.choice(state.legal_actions()))
            actions.append((state.current_player(), action))
            state.apply_action(action)
        env = raw_aec_env(variant, **params)
        env.reset(seed=0)
        rolls = list(state.game.dice.rolls) + [(2, 1)] * 20  # the env runs on to its next turn
        env.driver = Driver.of(env.config, Game(env.config.variant, ScriptedDice(rolls)))
        env.agent_selection = env.possible_agents[env.driver.player]
        replay = game.new_initial_state()
        units = set()
        for player, action in actions:
            if player >= 0:
                agent = env.possible_agents[player]
                assert env.agent_selection == agent
                tensor = np.array(replay.observation_tensor(player), dtype=np.float32)
                observed = env.observe(agent)["observation"]
                assert np.array_equal(tensor, observed)
                units |= set(np.flatnonzero(observed[196:]) + 196)
                env.step(action)
            replay.apply_action(action)
        if variant == "long":
            assert {216, 217} <= units  # the first-turn units were exercised
        if variant == "mad":
            assert any(209 <= u < 215 for u in units)  # later stages of a progression (§2.8)
        if variant == "gulbar":
            assert 215 in units  # a re-roll follows (§2.9)
        if variant == "backgammon":
            assert 222 in units  # match play


def test_a_match_variant_is_refused():
    """tavli (RULES.md §3.12.3) is a match of three variants, not one game's rules: registering it
    is refused, naming its cycle; the default registration leaves it out."""
    from nardy.core.errors import MatchVariantError

    with pytest.raises(MatchVariantError, match="portes → plakoto → fevga"):
        register(["tavli"])
    assert game_name("tavli") not in register()
