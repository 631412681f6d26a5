"""The learning environments (nardy.env): PettingZoo's and Gymnasium's own checks for every
registered variant, and property tests against the kernel (masks, rewards, seeds)."""

from __future__ import annotations

import random
import warnings

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed")
pytest.importorskip("gymnasium", reason="the rl extra is not installed")

import gymnasium  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pettingzoo.test import api_test, render_test, seed_test  # noqa: E402

from nardy.bots import RandomBot  # noqa: E402
from nardy.core import game_variant_names, load_variant  # noqa: E402
from nardy.core.dice import ScriptedDice  # noqa: E402
from nardy.core.game import DoubleDecision, Game, PlayDecision, TakeDecision  # noqa: E402
from nardy.env import action_space_size, aec_env, gym_env, raw_aec_env  # noqa: E402
from nardy.env.driver import play_order  # noqa: E402
from nardy.env.registration import env_id  # noqa: E402

# Every registered variant with its defaults, plus the main options (cube, match, rule options).
CONFIGS: list[tuple[str, dict[str, object]]] = [(name, {}) for name in game_variant_names()] + [
    ("long", {"cube": True, "beavers": True}),
    ("long", {"first_turn_head": "fixed", "scoring": "per_checker"}),
    ("backgammon", {"match_length": 5}),
    ("khachapuri", {"cube": True}),
    ("fevga", {"quarter_timing": "every_step"}),
    ("mad", {"home_moves": "always"}),
]
IDS = [name + "".join(f"-{k}={v}" for k, v in opts.items()) for name, opts in CONFIGS]


# -- PettingZoo ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "options"), CONFIGS, ids=IDS)
def test_pettingzoo_api_and_seed(variant, options):
    with warnings.catch_warnings():
        # "Observation space ... probably should be Box": the Dict with a mask is PettingZoo's own
        # classic layout; "Observation is not a NumPy array": it is a dict of them.
        warnings.filterwarnings("ignore", message="Observation")
        api_test(aec_env(variant, **options), num_cycles=200)
        seed_test(lambda: aec_env(variant, **options), num_cycles=200)


def test_aec_names_spaces_and_agents():
    env = aec_env("long")
    env.reset(seed=1)
    assert env.metadata["name"] == "nardy_long_v0"
    assert env.possible_agents == ["player_0", "player_1"]
    n = action_space_size("long")
    assert env.action_space("player_0").n == n
    obs = env.observe(env.agent_selection)
    assert obs["observation"].shape == (226,)
    assert obs["action_mask"].shape == (n,) and obs["action_mask"].dtype == np.int8
    other = "player_1" if env.agent_selection == "player_0" else "player_0"
    assert env.observe(other)["action_mask"].sum() == 0


# RULES.md §6: the largest result of one game at cube 1 — koks 3, trictrac's 8 (on the bar),
# per-checker scoring 15 checkers, fevga's 2, backgammon's 3.
LARGEST = {"long": 3, "trictrac": 8, "khachapuri": 15, "fevga": 2, "backgammon": 3}


def illegal_action(mask) -> int:
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("variant", sorted(LARGEST))
def test_an_illegal_action_costs_the_largest_result_in_every_api(variant):
    env = aec_env(variant, cube=False) if variant == "backgammon" else aec_env(variant)
    env.reset(seed=3)
    agent = env.agent_selection
    env.step(illegal_action(env.observe(agent)["action_mask"]))
    assert all(env.terminations.values())
    other = next(a for a in env.possible_agents if a != agent)
    assert (env.rewards[agent], env.rewards[other]) == (-LARGEST[variant], LARGEST[variant])
    assert env.infos[agent]["illegal_action"]
    assert env.observe(agent)["action_mask"].sum() == 0

    gym = gym_env(variant, opponent="random", seat="white")
    obs, _ = gym.reset(seed=2)
    obs, reward, done, _, info = gym.step(illegal_action(obs["action_mask"]))
    assert (done, reward, info["illegal_action"]) == (True, -LARGEST[variant], True)


def test_the_illegal_action_penalty_scales_with_the_cube():
    env = aec_env("backgammon", cube=True)
    env.reset(seed=1)
    for _ in range(400):
        agent = env.agent_selection
        obs = env.observe(agent)
        game = env.unwrapped.driver.game
        if game.cube.value == 2 and obs["action_mask"].sum():
            env.step(illegal_action(obs["action_mask"]))
            assert env.rewards[agent] == -6  # backgammon 3 × cube 2
            return
        legal = np.flatnonzero(obs["action_mask"])
        decision = game.decision
        # Double and take at once, then play on.
        action = 1 if isinstance(decision, DoubleDecision) else 0
        env.step(int(action if action in legal else legal[0]))
    pytest.fail("no take happened")


def test_pettingzoos_own_illegal_reward_on_request():
    env = aec_env("long", illegal_reward=-1.0)
    env.reset(seed=3)
    agent = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the wrapper warns about the illegal move
        env.step(illegal_action(env.observe(agent)["action_mask"]))
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="unknown encoder"):
        aec_env("long", encoder="nope")
    with pytest.raises(Exception, match="unknown variant"):
        aec_env("nope")
    with pytest.raises(Exception, match="option"):
        aec_env("long", bogus=1)
    with pytest.raises(ValueError, match="seat"):
        gym_env("long", seat="left")
    with pytest.raises(Exception, match="bot"):
        gym_env("long", opponent="nobody")


# -- property tests against the kernel ---------------------------------------------------------


def run_episode(variant: str, options: dict, seed: int, **env_kwargs):
    """A full AEC episode with random legal actions; checks the mask at every step against the
    kernel and returns (trace, final rewards, the game)."""
    env = raw_aec_env(variant, **options, **env_kwargs)
    env.reset(seed=seed)
    rng = random.Random(seed)
    trace = []
    kernel = load_variant(variant, options)
    final = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
            continue
        game = env.driver.game
        decision = game.decision
        mask = obs["action_mask"]
        assert decision.player == env.possible_agents.index(agent)
        legal = np.flatnonzero(mask)
        if isinstance(decision, PlayDecision):
            # The kernel's legal plays of the segment, computed afresh from its position and dice.
            plays = kernel.legal_plays(decision.position, decision.segment.dice)
            assert list(legal) == list(range(len(plays)))
            assert [p.result for p in plays] == [p.result for p in decision.plays]
        elif isinstance(decision, DoubleDecision):
            assert game.may_double(decision.player)
            assert list(legal) == [0, 1]
        else:
            assert isinstance(decision, TakeDecision)
            assert list(legal) == ([0, 1, 2] if decision.beaver_allowed else [0, 1])
        for other in env.agents:
            if other != agent:
                assert env.observe(other)["action_mask"].sum() == 0
        action = int(rng.choice(legal))
        trace.append((agent, action, obs["observation"].tobytes()))
        env.step(action)
    assert not env.agents  # every agent was stepped dead at the end
    return trace, final, env.driver.game


def replay_points(variant: str, options: dict, game: Game, trace) -> tuple[int, int]:
    """Replay the trace's actions in a fresh kernel game with the same dice: (winner, points)."""
    replay = Game(load_variant(variant, options), ScriptedDice(game.dice.rolls))
    for _, action, _ in trace:
        d = replay.decision
        if isinstance(d, PlayDecision):
            replay.decide(play_order(d.plays)[action])  # actions in the canonical order
        elif isinstance(d, DoubleDecision):
            replay.decide(action == 1)
        else:
            replay.decide(("take", "drop", "beaver")[action])
    assert replay.decision is None
    return replay.result.winner, replay.result.points


EPISODE_CONFIGS = [(name, {}) for name in game_variant_names()] + [
    ("long", {"cube": True, "beavers": True}),
    ("khachapuri", {"cube": True}),
]


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(EPISODE_CONFIGS), seed=st.integers(0, 2**31 - 1))
def test_masks_rewards_and_seeds_agree_with_the_kernel(config, seed):
    variant, options = config
    trace, rewards, game = run_episode(variant, options, seed)
    winner, points = replay_points(variant, options, game, trace)
    assert (game.result.winner, game.result.points) == (winner, points)
    agents = ("player_0", "player_1")
    assert rewards == {agents[winner]: points, agents[1 - winner]: -points}
    # The same seed gives the same episode: every agent, action and observation.
    again, rewards_again, _ = run_episode(variant, options, seed)
    assert again == trace and rewards_again == rewards


def test_every_segment_kind_and_cube_decision_is_an_agent_turn():
    """Across seeded games of the variants that have them, the agents are asked to play stages,
    re-rolls and transferred steps and to double and take."""
    kinds: set[str] = set()
    for variant, options in [
        ("mad_gulbar", {}),
        ("gulbar", {}),
        ("giul", {}),
        ("long", {"cube": True}),
    ]:
        for seed in range(6):
            env = raw_aec_env(variant, **options)
            env.reset(seed=seed)
            rng = random.Random(seed)
            for _agent in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                d = env.driver.game.decision
                kinds.add(
                    d.segment.kind
                    if isinstance(d, PlayDecision)
                    else "double"
                    if isinstance(d, DoubleDecision)
                    else "take"
                )
                legal = np.flatnonzero(obs["action_mask"])
                # Double often, so that cube decisions occur.
                pick = 1 if isinstance(d, DoubleDecision) and rng.random() < 0.5 else 0
                env.step(int(legal[pick]) if pick < len(legal) else int(rng.choice(legal)))
    assert kinds >= {"roll", "stage", "reroll", "transfer", "double", "take"}


def test_forced_plays_are_turns_too_when_asked():
    env = raw_aec_env("long", auto_forced=False)
    env.reset(seed=5)
    sizes = []
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        sizes.append(int(obs["action_mask"].sum()))
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert 1 in sizes


# -- Gymnasium -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "options"), CONFIGS, ids=IDS)
def test_gymnasium_check_env(variant, options):
    """Made through its registered id, every variant passes check_env with every check on (the
    render modes included), warnings turned into errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gymnasium.make(env_id(variant), **options)
        assert env.spec.id == env_id(variant)
        check_env(env.unwrapped)


def test_gymnasium_ids_name_every_variant():
    assert env_id("long") == "nardy/Long-v0" and env_id("mad_gulbar") == "nardy/MadGulbar-v0"
    for name in game_variant_names():
        assert env_id(name) in gymnasium.registry
    env = gymnasium.make("nardy.env:nardy/Backgammon-v0", opponent="random", seat="black")
    _, info = env.reset(seed=1)
    assert info["colour"] == 1 and env.unwrapped.config.variant.name == "backgammon"


def test_a_match_variant_is_refused_with_its_reason():
    """tavli (RULES.md §3.12.3) changes rules and board between games (portes → plakoto →
    fevga); an episode is one variant's game or match, so its environments refuse it clearly
    (never a portes game under tavli's name) and no gymnasium id is registered for it."""
    from nardy.core.errors import MatchVariantError

    for make in (
        lambda: gym_env("tavli", opponent="random"),
        lambda: aec_env("tavli"),
        lambda: gym_env("tavli", opponent="random", match_length=5),
    ):
        with pytest.raises(MatchVariantError, match=r"portes → plakoto → fevga.*learning env"):
            make()
    assert env_id("tavli") not in gymnasium.registry


@pytest.mark.parametrize("variant", ["long", "backgammon", "fevga"])
def test_rgb_array_frames(variant):
    render_test(lambda render_mode=None: aec_env(variant, render_mode=render_mode))
    env = gym_env(variant, opponent="random", render_mode="rgb_array")
    env.reset(seed=2)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    # The start position: as many light (mover) as dark checker pixels, both present.
    from nardy.env.render import board_rgb

    start = board_rgb(load_variant(variant).start_position())
    light = np.all(start == (240, 236, 222), axis=2).sum()
    dark = np.all(start == (30, 30, 34), axis=2).sum()
    assert light > 0 and light == dark


def test_pettingzoo_state():
    from pettingzoo.test.state_test import test_state, test_state_space

    env = aec_env("long")
    test_state_space(env)
    test_state(env, 30)
    env.reset(seed=1)
    agent = env.agent_selection
    size = env.unwrapped.config.obs_size
    state = env.state()
    colour = env.possible_agents.index(agent)
    own = state[colour * size : (colour + 1) * size]
    assert np.array_equal(own, env.observe(agent)["observation"])


@pytest.mark.parametrize("opponent", ["heuristic", "random", RandomBot(seed=1)])
def test_gym_episode_reward_is_the_agents_points(opponent):
    env = gym_env("backgammon", opponent=opponent, seat="black")
    obs, info = env.reset(seed=11)
    assert info["colour"] == 1
    total, done = 0.0, False
    rng = random.Random(0)
    while not done:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, done, truncated, info = env.step(action)
        assert not truncated
        total += reward
    sign = 1 if info["winner"] == 1 else -1
    assert total == sign * info["points"] == sign * env.driver.game.result.points


def test_gym_illegal_action_is_a_loss_and_ends_the_episode():
    env = gym_env("khachapuri", opponent="random", seat="white")
    obs, _ = env.reset(seed=2)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, done, _, info = env.step(illegal)
    # per-checker scoring: the largest result at cube 1 is all 15 checkers
    assert (done, reward, info["illegal_action"]) == (True, -15.0, True)
    assert obs["action_mask"].sum() == 0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_gym_same_seed_same_episode():
    def episode(seed):
        env = gym_env("mad", opponent="heuristic")
        obs, _ = env.reset(seed=seed)
        out, done = [], False
        while not done:
            action = int(np.flatnonzero(obs["action_mask"])[-1])
            obs, reward, done, _, _ = env.step(action)
            out.append((action, reward, obs["observation"].tobytes()))
        return out

    assert episode(4) == episode(4)


def test_raw_aec_illegal_action_raises_and_changes_nothing():
    env = raw_aec_env("long")
    env.reset(seed=3)
    agent = env.agent_selection
    before = env.observe(agent)
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    after = env.observe(agent)
    assert env.agent_selection == agent
    assert np.array_equal(before["observation"], after["observation"])


# -- match play ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "length"), [("backgammon", 5), ("long", 3)])
def test_a_match_is_one_episode_with_the_score_in_the_observation(variant, length):
    """With ``match_length`` an episode is the whole match (RULES.md §2.11): rewards are each
    game's points as it ends (adding up to the final score difference), the match units of every
    decision's observation show the score from the decider's view, and the Crawford game comes."""
    from nardy.encoding import MATCH

    games_seen = 0
    for seed in range(20):
        env = raw_aec_env(variant, match_length=length)
        env.reset(seed=seed)
        rng = random.Random(seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        scores = set()
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            totals[agent] += reward
            if terminated or truncated:
                env.step(None)
                continue
            driver = env.driver
            colour = env.possible_agents.index(agent)
            own, other = driver.score[colour], driver.score[1 - colour]
            o = obs["observation"]
            assert o[MATCH] == 1.0
            assert o[MATCH + 1] == pytest.approx(max(length - own, 0) / length)
            assert o[MATCH + 2] == pytest.approx(max(length - other, 0) / length)
            assert o[MATCH + 3] == float(driver.crawford)
            scores.add(driver.score)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        final = env.driver.score
        assert max(final) >= length
        assert info["score"] == final
        assert totals["player_0"] == final[0] - final[1] == -totals["player_1"]
        games_seen = max(games_seen, len(env.driver.match.games))
        if len(scores) > 2:
            break
    assert games_seen > 2  # several games in one episode


def test_a_gym_match_episode():
    env = gym_env("backgammon", opponent="random", match_length=3, seat="white")
    obs, info = env.reset(seed=5)
    total, done = 0.0, False
    while not done:
        obs, reward, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        total += reward
    assert max(info["score"]) >= 3 and total == info["score"][0] - info["score"][1]


def test_gymnasium_vector_env_from_the_registered_ids():
    """gymnasium.make_vec batches the env (observations, masks, rewards as arrays), and each
    sub-env's episode is the single env's for the same seed."""
    seeds = [11, 12, 13]
    envs = gymnasium.make_vec(
        "nardy/Long-v0", num_envs=3, vectorization_mode="sync", opponent="random", seat="white"
    )
    obs, _ = envs.reset(seed=seeds)
    assert obs["observation"].shape == (3, 226) and obs["action_mask"].dtype == np.int8
    batched: list[list[float]] = [[], [], []]
    live = [True] * 3
    while any(live):
        actions = np.array(
            [int(np.flatnonzero(m)[0]) if m.any() else 0 for m in obs["action_mask"]]
        )
        obs, rewards, terminated, _, _ = envs.step(actions)
        for i in range(3):
            if live[i]:
                batched[i].append(float(rewards[i]))
                live[i] = not terminated[i]
    for i, seed in enumerate(seeds):
        single = gym_env("long", opponent="random", seat="white")
        o, _ = single.reset(seed=seed)
        rewards, done = [], False
        while not done:
            o, r, done, _, _ = single.step(int(np.flatnonzero(o["action_mask"])[0]))
            rewards.append(r)
        assert rewards == batched[i]
