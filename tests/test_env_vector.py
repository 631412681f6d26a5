"""The vector environments (nardy.env.vector): every game's episode is the single env's for the
same seed — observation, mask and reward at every step, across autoresets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium

from nardy.env import batched_env, raw_aec_env, vector_env

CASES: list[Any] = [
    ("backgammon", {"cube": False}),
    ("backgammon", {"cube": True}),
    ("long", {}),
    pytest.param("long", {"match_length": 3}, marks=pytest.mark.slow),  # 4 s: several games
    ("fevga", {}),
    ("khachapuri", {}),  # re-rolls and transferred steps (RULES.md §2.9, §2.10)
    ("gulbar", {}),
    ("mad", {}),  # progression stages (§2.8)
    ("mad_gulbar", {}),  # stages, transferred steps, the fourth-step extra stage
    ("giul", {}),
    ("trictrac", {}),
    ("plakoto", {}),  # pinned checkers in the batch encoding
]


def _single_decider(env: Any) -> tuple[int, np.ndarray, np.ndarray]:
    agent = env.agent_selection
    obs = env.observe(agent)
    return int(agent[-1]), obs["observation"], obs["action_mask"]


@pytest.mark.parametrize(("variant", "options"), CASES)
def test_batched_games_are_the_aec_envs_episodes(variant: str, options: dict[str, Any]) -> None:
    _compare_with_aec_envs(variant, options, 4)


def test_a_few_batched_games_are_the_aec_envs_episodes() -> None:
    """Fewer than four games are encoded one by one: the same observations."""
    _compare_with_aec_envs("long", {}, 2)


def _compare_with_aec_envs(variant: str, options: dict[str, Any], n: int) -> None:
    seed = 40
    steps = 600 if "match_length" in options else 160  # a match is several games
    vec = batched_env(variant, n, **options)
    singles = [raw_aec_env(variant, **options) for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    obs, info = vec.reset(seed=seed)
    rng = np.random.default_rng(5)
    finished = 0
    kinds: set[str] = set()
    for _ in range(steps):
        kinds |= {driver._lean.kind for driver in vec.drivers if driver._lean is not None}
        for i, env in enumerate(singles):
            agent, observation, mask = _single_decider(env)
            assert info["agents"][i] == agent
            np.testing.assert_array_equal(obs["observation"][i], observation)
            np.testing.assert_array_equal(obs["action_mask"][i], mask)
            assert vec.counts[i] == mask.sum()
        actions = (rng.random(n) * vec.counts).astype(np.int64)
        obs, rewards, terminated, info = vec.step(actions)
        for i, env in enumerate(singles):
            env.step(int(actions[i]))
            expected = [env.rewards["player_0"], env.rewards["player_1"]]
            np.testing.assert_array_equal(rewards[i], expected)
            done = all(env.terminations.values())
            assert bool(terminated[i]) == done
            if done:
                finished += 1
                env.reset()  # no seed: the same generator goes on, as the batch's game does
    assert finished >= 1  # the comparison crossed an autoreset
    # The batch's lean games reached their turn plans' segments (RULES.md §2.8-§2.10).
    turn = vec.config.variant.rules.turn
    assert ("stage" in kinds) == (turn.doubles == "progression")
    assert ("reroll" in kinds) == (turn.doubles == "reroll")
    if turn.transfer:
        assert "transfer" in kinds


def test_batched_illegal_action_ends_the_game_as_the_wrapped_aec_env() -> None:
    vec = batched_env("backgammon", 2, cube=False)
    obs, info = vec.reset(seed=3)
    offender = int(info["agents"][0])
    actions = np.zeros(2, dtype=np.int64)
    actions[0] = vec.counts[0]  # the first action past the legal ones
    obs, rewards, terminated, info = vec.step(actions)
    assert terminated.tolist() == [True, False]
    assert info["illegal"].tolist() == [True, False]
    penalty = vec.config.variant.max_game_value()  # cube 1
    assert rewards[0, offender] == -penalty and rewards[0, 1 - offender] == penalty
    assert obs["action_mask"][0].sum() > 0  # the next game's first decision


def test_batched_rejects_bad_actions_clearly() -> None:
    vec = batched_env("long", 2)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(2, dtype=np.int64))
    vec.reset(seed=1)
    with pytest.raises(ValueError, match="2 integers"):
        vec.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="at least 1"):
        batched_env("long", 0)


@pytest.mark.parametrize(("variant", "options"), [("long", {}), ("backgammon", {"cube": True})])
def test_vector_env_equals_gymnasium_sync_vectorisation(
    variant: str, options: dict[str, Any]
) -> None:
    import nardy.env  # noqa: F401  (registers the ids)

    n, seed = 4, 11
    env_id = {"long": "nardy/Long-v0", "backgammon": "nardy/Backgammon-v0"}[variant]
    ours = vector_env(variant, n, opponent="random", **options)
    theirs = gymnasium.make_vec(
        env_id,
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP},
        opponent="random",
        **options,
    )
    assert isinstance(ours, gymnasium.vector.VectorEnv)
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    a, info_a = ours.reset(seed=seed)
    b, info_b = theirs.reset(seed=seed)
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(120):
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(a[key], b[key])
        np.testing.assert_array_equal(info_a["colour"], info_b["colour"])
        counts = a["action_mask"].sum(axis=1)
        actions = (rng.random(n) * np.maximum(counts, 1)).astype(np.int64)
        a, ra, ta, ua, info_a = ours.step(actions)
        b, rb, tb, ub, info_b = theirs.step(actions)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)
        np.testing.assert_array_equal(ua, ub)
        ends += int(ta.sum())
    assert ends >= 1
    theirs.close()


def test_vector_env_illegal_action_is_a_loss() -> None:
    env = vector_env("long", 2, opponent="random")
    obs, _ = env.reset(seed=4)
    actions = obs["action_mask"].sum(axis=1).astype(np.int64)  # past the legal ones
    actions[1] = 0
    obs, rewards, terminated, _, info = env.step(actions)
    assert terminated[0] and info["illegal_action"][0]
    assert rewards[0] == -env.config.variant.max_game_value()
    assert obs["action_mask"][0].sum() == 0
    obs, rewards, terminated, _, info = env.step(np.zeros(2, dtype=np.int64))
    assert not terminated[0] and rewards[0] == 0.0 and obs["action_mask"][0].sum() > 0


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("backgammon", {"cube": True}),
        ("long", {"match_length": 3}),
        ("giul", {}),
        ("fevga", {}),
        ("trictrac", {}),
    ],
)
def test_remembered_roll_contexts_equal_context_of(variant: str, options: dict[str, Any]) -> None:
    """Driver.view answers roll decisions from a table: the same context as computing it."""
    from nardy import encoding
    from nardy.env.driver import Driver, EnvConfig, NumpyDice

    config = EnvConfig.build(variant, options)
    rng = np.random.default_rng(8)
    driver = Driver(config, NumpyDice(np.random.default_rng(3)))
    checked = 0
    for _ in range(400):
        if driver.over:
            driver = Driver(config, NumpyDice(rng))
        colour = driver.player
        score = driver.score if colour == 0 else driver.score[::-1]
        expected = encoding.context_of(
            driver.game, match_length=driver.match_length, score=score, crawford=driver.crawford
        )
        assert driver.view(colour)[1] == expected
        checked += 1
        driver.step(int(rng.integers(driver.legal_count())))
    assert checked == 400


def test_encode_into_equals_encode_row_by_row() -> None:
    from nardy import encoding
    from nardy.env.driver import Driver, EnvConfig, NumpyDice

    config = EnvConfig.build("long", {})
    rng = np.random.default_rng(1)
    driver = Driver(config, NumpyDice(rng))
    views = []
    for _ in range(30):
        views.append(driver.view(driver.player))
        driver.step(int(rng.integers(driver.legal_count())))
    positions = [position for position, _ in views]
    contexts = [context for _, context in views]
    out = np.full((30, encoding.FULL_SIZE), np.nan, dtype=np.float32)
    encoding.encode_into(out, positions, contexts)
    for row, (position, context) in zip(out, views, strict=True):
        np.testing.assert_array_equal(row, encoding.encode(position, context))
    board = np.empty((30, encoding.BOARD_SIZE), dtype=np.float32)
    encoding.encode_into(board, positions)
    np.testing.assert_array_equal(board, out[:, : encoding.BOARD_SIZE])
    with pytest.raises(ValueError, match="rows"):
        encoding.encode_into(out[:3], positions)
