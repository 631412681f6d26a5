"""Every learning environment pickles and deep-copies mid-game, and the copy has the same future
(issue 23: a deep copy of the PettingZoo env used to be a fresh, never-reset env)."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

np = pytest.importorskip("numpy", reason="the rl extra is not installed")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed")

from nardy.env import aec_env, gym_env, raw_aec_env  # noqa: E402


def aec_future(env, seed: int) -> list:
    """The rest of an AEC episode under seeded random legal actions: every agent, action,
    observation and reward."""
    rng = random.Random(seed)
    out = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            out.append((agent, reward))
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        out.append((agent, action, obs["observation"].tobytes()))
        env.step(action)
    return out


def play_some(env, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(steps):
        obs, _, terminated, *_ = env.last()
        if terminated:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize(
    ("make", "variant", "options"),
    [
        (raw_aec_env, "long", {}),
        (raw_aec_env, "mad_gulbar", {}),
        (aec_env, "backgammon", {"cube": True}),
        (aec_env, "khachapuri", {"match_length": 3}),
    ],
)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_aec_env_copies_mid_game_have_the_same_future(make, variant, options, how):
    env = make(variant, **options)
    env.reset(seed=4)
    play_some(env, 12, seed=1)
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    assert twin.agent_selection == env.agent_selection
    future = aec_future(env, 9)
    assert future
    assert aec_future(twin, 9) == future


def gym_future(env, obs) -> list:
    out, done = [], False
    while not done:
        action = int(np.flatnonzero(obs["action_mask"])[-1])
        obs, reward, done, _, _ = env.step(action)
        out.append((action, reward, obs["observation"].tobytes()))
    return out


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("opponent", ["heuristic", "random"])
def test_gym_env_copies_mid_game_have_the_same_future(how, opponent):
    env = gym_env("long", opponent=opponent)
    obs, _ = env.reset(seed=3)
    for _ in range(4):
        obs, _, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert not done
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    assert np.array_equal(twin._obs()["observation"], obs["observation"])
    future = gym_future(env, obs)
    assert gym_future(twin, obs) == future


def test_a_fresh_env_pickles_and_resets():
    env = aec_env("long")
    twin = pickle.loads(pickle.dumps(env))
    twin.reset(seed=1)
    env.reset(seed=1)
    assert aec_future(twin, 2) == aec_future(env, 2)
