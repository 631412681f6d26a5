"""The vector environments (nardy.env.vector): every game's episode is the single env's for the
same seed — observation, mask and reward at every step, across autoresets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import gymnasium

from nardy.env import batched_env, vector_env
from nardy.env.batchflow import KINDS

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
]

LEAN_BATCH: list[Any] = [
    ("backgammon", {"cube": False}),
    ("trictrac", {}),
    ("long", {}),
    ("nardgammon", {}),
    ("fevga", {}),
    ("hypergammon", {"cube": False}),
    ("portes", {}),
    ("backgammon", {"cube": False, "auto_forced": False}),  # forced plays are decisions too
    ("long", {"encoder": "nardy196_v1"}),  # the board units alone
    ("long", {"first_turn_head": "fixed"}),  # another first-turn head allowance (§3.3.4)
]
"""The variants whose batched games run in the whole-batch flow (nardy.env.batchflow)."""

TURN_PLANS: list[Any] = [
    ("khachapuri", {}),  # re-rolls and transferred steps (RULES.md §2.9, §2.10)
    ("gulbar", {}),
    ("mad", {}),  # progression stages (§2.8)
    ("mad_gulbar", {}),  # stages, transferred steps, the fourth-step extra stage
    ("giul", {}),
]
"""The whole-batch flow's variants whose doubles are turn plans (their segments as array state)."""


@pytest.fixture(params=[0, 8], ids=["arrays", "per-game-tail"])
def tail(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Both ways a whole-batch round goes on: every game on the arrays (a tail of 0), and each of
    a round's last few games by itself in a lean game built from its row and stored back (the
    handful of games of these tests are all a tail of 8: ``batchflow._TAIL``)."""
    from nardy.env import batchflow

    monkeypatch.setattr(batchflow, "_TAIL", request.param)
    return int(request.param)


def _same(actual: Any, expected: Any) -> None:
    """``np.testing.assert_array_equal``, its report only on a difference: the comparisons here
    run some 200,000 times a run, where the full assertion costs 26 µs and ``np.array_equal`` 2."""
    if not np.array_equal(actual, expected):
        np.testing.assert_array_equal(actual, expected)


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


@pytest.mark.parametrize(("variant", "options"), LEAN_BATCH)
def test_whole_batch_flow_games_are_the_aec_envs_episodes(
    variant: str, options: dict[str, Any], tail: int
) -> None:
    """The whole-batch flow: observations (encoded from the board array), masks, rewards, game
    ends and restarts, illegal actions (about one step in 40 a game) all as the single env's."""
    assert batched_env(variant, 2, **options)._flow is not None
    _compare_with_aec_envs(variant, options, 6, illegal=0.025, steps=200)


@pytest.mark.parametrize(("variant", "options"), TURN_PLANS)
def test_whole_batch_flow_turn_plans_are_the_aec_envs_episodes(
    variant: str, options: dict[str, Any], tail: int
) -> None:
    """The turn plans in the whole-batch flow: a double's progression stages or re-roll chain and
    transferred steps (RULES.md §2.8-§2.10), played on the batch's arrays, give the
    single env's observations (the segment's kind, later steps and re-roll flag in the context),
    masks and rewards; games end inside a planned turn, illegal actions are answered in one."""
    assert batched_env(variant, 2, **options)._flow is not None
    summary = _compare_with_aec_envs(variant, options, 6, illegal=0.015, steps=300)
    turn = batched_env(variant, 2, **options).config.variant.rules.turn
    planned = {"stage"} if turn.doubles == "progression" else {"reroll"}
    if turn.transfer:
        planned.add("transfer")
    assert planned <= summary["kinds"]  # (also asserted against the rules inside)
    assert summary["planned_ends"] >= 1  # a bear-off inside a planned turn
    assert summary["planned_offences"] >= 1  # an illegal action in a planned segment
    assert summary["restarts"] >= 6


@pytest.mark.parametrize(
    "options",
    [{}, {"mother": "simple"}, {"mother": "off"}],
    ids=["standard", "simple", "off"],
)
def test_whole_batch_flow_plakoto_games_are_the_aec_envs_episodes(
    options: dict[str, Any], tail: int
) -> None:
    """Plakoto in the whole-batch flow (RULES.md §3.12.2): pinned checkers on the boards (their
    bits flipped to the next mover's numbering, encoded as encode() does), the mother rule's wins
    and draws, bear-offs, restarts and illegal actions, all as the single env's episodes."""
    assert batched_env("plakoto", 2, **options)._flow is not None
    summary = _compare_with_aec_envs("plakoto", options, 6, illegal=0.01, steps=260)
    assert summary["pinned"] >= 50  # decisions whose board holds a pinned checker
    assert summary["reasons"]["bear_off"] >= 1
    assert summary["restarts"] >= 4
    if options.get("mother", "standard") == "off":
        assert "mother" not in summary["reasons"]
    else:
        assert summary["reasons"]["mother"] >= 1
        assert summary["reasons"]["draw"] >= (1 if not options else 0)  # both mothers pinned


def test_kernel_variants_keep_a_driver_per_game() -> None:
    """The kernel's flow (cube, match) is not in the batch flow."""
    assert batched_env("backgammon", 2, cube=True)._flow is None
    assert batched_env("long", 2, match_length=3)._flow is None


def _compare_with_aec_envs(
    variant: str, options: dict[str, Any], n: int, *, illegal: float = 0.0, steps: int = 0
) -> dict[str, Any]:
    """Step a batch and its games' single envs side by side; a summary of what was reached: the
    finished games' end reasons, the restarts, the decisions on a board with a pinned checker."""
    from collections import Counter

    from nardy.env.aec import NardyAECEnv

    seed = 40
    steps = steps or (600 if "match_length" in options else 160)  # a match is several games
    vec = batched_env(variant, n, **options)
    singles = [NardyAECEnv(variant, illegal_loses=True, **options) for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    obs, info = vec.reset(seed=seed)
    rng = np.random.default_rng(5)
    finished = offences = pinned = 0
    reasons: Counter[str] = Counter()
    kinds: set[str] = set()
    flow = vec._flow
    planned_ends = planned_offences = 0
    for _ in range(steps):
        if flow is not None:  # the whole-batch flow's turn plans, as arrays
            kinds |= {KINDS[k] for k in np.unique(flow.kind).tolist()}
            inside = set(np.flatnonzero(flow.in_plan).tolist())
        else:
            kinds |= {
                driver.lean_game.kind for driver in vec.drivers if driver.lean_game is not None
            }
            inside = set()
        for i, env in enumerate(singles):
            agent, observation, mask = _single_decider(env)
            assert info["agents"][i] == agent
            _same(obs["observation"][i], observation)
            _same(obs["action_mask"][i], mask)
            assert vec.counts[i] == mask.sum()
            pinned += bool(env.driver.view(agent)[0].pinned)
        actions = (rng.random(n) * vec.counts).astype(np.int64)
        wrong = rng.random(n) < illegal
        actions[wrong] = np.where(rng.random(n) < 0.5, -1, vec.counts)[wrong]
        offences += int(wrong.sum())
        obs, rewards, terminated, info = vec.step(actions)
        _same(info["illegal"], wrong)
        for i, env in enumerate(singles):
            env.step(int(actions[i]))
            expected = [env.rewards["player_0"], env.rewards["player_1"]]
            _same(rewards[i], expected)
            done = all(env.terminations.values())
            assert bool(terminated[i]) == done
            if done:
                finished += 1
                planned_ends += i in inside and not wrong[i]
                planned_offences += i in inside and bool(wrong[i])
                reasons[env.infos["player_0"].get("reason", "illegal")] += 1
                env.reset()  # no seed: the same generator goes on, as the batch's game does
    assert finished - offences >= 1  # the comparison crossed an autoreset after a game's end
    assert offences >= (1 if illegal else 0)
    summary = {
        "reasons": reasons,
        "restarts": finished,
        "pinned": pinned,
        "planned_ends": planned_ends,
        "planned_offences": planned_offences,
        "kinds": kinds,
    }
    # The batch's lean games reached their turn plans' segments (RULES.md §2.8-§2.10).
    turn = vec.config.variant.rules.turn
    assert ("stage" in kinds) == (turn.doubles == "progression")
    assert ("reroll" in kinds) == (turn.doubles == "reroll")
    if turn.transfer:
        assert "transfer" in kinds
    return summary


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


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("backgammon", {"cube": True}),  # a NardyGymEnv per game
        *LEAN_BATCH,  # the whole-batch flow against the random bot
        *TURN_PLANS,
        ("plakoto", {}),  # pinned checkers, the mother rule's wins and draws
        ("plakoto", {"mother": "simple"}),
        ("long", {"seat": "black"}),
        ("backgammon", {"cube": False, "seat": "white", "auto_forced": False}),
    ],
)
def test_vector_env_equals_gymnasium_sync_vectorisation(
    variant: str, options: dict[str, Any], tail: int
) -> None:
    """The vector env against the random bot is Gymnasium's own loop over the single envs, step
    by step, illegal actions (about one in 40) and autoresets included."""
    import nardy.env  # noqa: F401  (registers the ids)
    from nardy.env.registration import env_id as id_of

    n, seed = 4, 11
    env_id = id_of(variant)
    ours = vector_env(variant, n, opponent="random", **options)
    lean = (
        (variant, options) in LEAN_BATCH + TURN_PLANS or "seat" in options or variant == "plakoto"
    )
    assert (ours._flow is not None) == lean
    reasons: list[str] = []
    if variant == "plakoto":  # which ends the flow reached (RULES.md §3.12.2)
        flow = ours._flow
        assert flow is not None
        end = flow._end

        def counted(i: int, key: Any, pins: int, result: Any) -> None:
            reasons.append("bear_off" if result is None else result.reason)
            end(i, key, pins, result)

        flow._end = counted  # type: ignore[method-assign]
    played_out: list[int] = []
    if variant == "mad":  # an agent all home has no decision left: his game plays out at once
        flow = ours._flow
        assert flow is not None
        ask = flow._played_out

        def seen(games: Any) -> Any:
            out = ask(games)
            played_out.extend(games[out].tolist())
            return out

        flow._played_out = seen  # type: ignore[method-assign]
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
            _same(a[key], b[key])
        _same(info_a["colour"], info_b["colour"])
        counts = a["action_mask"].sum(axis=1)
        actions = (rng.random(n) * np.maximum(counts, 1)).astype(np.int64)
        wrong = (rng.random(n) < 0.025) & (counts > 0)
        actions[wrong] = counts[wrong]
        a, ra, ta, ua, info_a = ours.step(actions)
        b, rb, tb, ub, info_b = theirs.step(actions)
        _same(ra, rb)
        _same(ta, tb)
        _same(ua, ub)
        ends += int(ta.sum())
    assert ends >= 1
    if variant == "mad" and tail == 0:  # (with a tail of 8 these four games are all a tail)
        assert played_out
    if variant == "plakoto":  # the standard rule's draw: both mothers pinned
        assert {"bear_off", "mother", *(["draw"] if not options else [])} <= set(reasons)
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


@pytest.mark.parametrize("opponent", ["random", "heuristic"])  # the whole-batch flow and per env
def test_vector_env_masks_are_all_zero_exactly_where_a_game_just_ended(opponent: str) -> None:
    """docs/learning.md: a finished game's observation has an all-zero mask (its next action is
    ignored); every other observation has a legal action, so a policy over ``mask.nonzero()``
    needs a fallback only on the rows ``terminations`` marks."""
    env = vector_env("long", 8, opponent=opponent)
    obs, _ = env.reset(seed=3)
    terminated = np.zeros(8, dtype=np.bool_)
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(100):  # 16 games end in them against random, 27 against heuristic
        mask = obs["action_mask"]
        np.testing.assert_array_equal(~mask.any(axis=1), terminated)
        ended += int(terminated.sum())
        actions = [rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask]
        obs, _, terminated, _, _ = env.step(np.array(actions, dtype=np.int64))
    assert ended > 0


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


def test_whole_batch_dice_are_each_games_numpy_dice_stream() -> None:
    """Each game's rolls (the opening throw's re-rolls included) are NumpyDice's stream of its
    seed's generator, a fresh NumpyDice per game across restarts, as the single env draws them."""
    from gymnasium.utils import seeding

    from nardy.env.driver import NumpyDice

    n, seed = 8, 21
    vec = batched_env("hypergammon", n, cube=False)  # short games: many restarts
    vec.reset(seed=seed)
    flow = vec._flow
    assert flow is not None
    references = [seeding.np_random(seed + i)[0] for i in range(n)]
    rng = np.random.default_rng(3)
    games = ties = 0
    last = [flow.rolls(i) for i in range(n)]
    for _ in range(150):
        _, _, terminated, _ = vec.step((rng.random(n) * vec.counts).astype(np.int64))
        for i in np.flatnonzero(terminated).tolist():
            dice = NumpyDice(references[i])
            assert last[i] == [dice.roll() for _ in last[i]]  # the finished game's rolls
            games += 1
            ties += last[i][0][0] == last[i][0][1]  # an opening tie, thrown again
        last = [flow.rolls(i) for i in range(n)]
    assert games >= 20 and ties >= 1


def test_a_lean_game_reads_its_games_dice_stream() -> None:
    """A round's tail game draws its rolls through the batch's block (the lean game's dice
    source), the batch's own rolls go on after it: together, across block refills, they are the
    game's NumpyDice stream, and the batch's current roll is the last drawn."""
    from gymnasium.utils import seeding

    from nardy.env.batchflow import _GameDice
    from nardy.env.driver import NumpyDice

    vec = batched_env("mad", 1)
    vec.reset(seed=5)
    flow = vec._flow
    assert flow is not None
    drawn = list(flow.rolls(0))
    rng = np.random.default_rng(1)
    for _ in range(60):  # about 360 rolls: the block of 128 refilled twice or more
        dice = _GameDice(flow, 0)
        for _ in range(int(rng.integers(0, 12))):
            drawn.append(dice.roll())
        dice.sync()
        assert tuple(flow.dice[0]) == drawn[-1]
        drawn.append(flow._roll_one(0))
    assert flow.rolls(0) == drawn and len(drawn) > 2 * NumpyDice.BATCH
    reference = NumpyDice(seeding.np_random(5)[0])
    assert drawn == [reference.roll() for _ in drawn]


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("long", {}),
        ("backgammon", {"cube": False}),
        ("plakoto", {}),
        ("mad_gulbar", {}),  # turn plans: a planned game replays and copies mid-plan
        ("gulbar", {}),
    ],
)
def test_whole_batch_games_replay_as_the_single_envs(
    variant: str, options: dict[str, Any], tail: int
) -> None:
    """A batch-flow game materialises on demand: its afterstates, position and rolls are the
    single env's at the same decision, and a deep copy or a pickle of the batch has the same
    future."""
    import copy
    import pickle

    from nardy import encoding
    from nardy.env.aec import NardyAECEnv

    n, seed = 3, 9
    vec = batched_env(variant, n, **options)
    singles = [NardyAECEnv(variant, **options) for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    vec.reset(seed=seed)
    rng = np.random.default_rng(1)
    flow = vec._flow
    assert flow is not None
    planned_checks = 0
    for step in range(60):
        actions = (rng.random(n) * vec.counts).astype(np.int64)
        if step % 15 == 14 or (flow.in_plan.any() and step % 3 == 0):
            planned_checks += int(flow.in_plan.sum())
            for i, env in enumerate(singles):
                for encoder in (encoding.BOARD_ENCODER, encoding.FULL_ENCODER):
                    expected = env.afterstates(encoder)
                    np.testing.assert_array_equal(vec.afterstates(i, encoder), expected)
                    np.testing.assert_array_equal(vec.driver(i).afterstates(encoder), expected)
                game = vec.driver(i).game
                assert game.position == env.driver.game.position
                assert game.dice.rolls == env.driver.game.dice.rolls
        if step == 30:
            futures = []
            for twin in (copy.deepcopy(vec), pickle.loads(pickle.dumps(vec))):
                twin_obs, twin_rewards, _, _ = twin.step(actions)
                futures.append(({k: v.copy() for k, v in twin_obs.items()}, twin_rewards.copy()))
        obs, rewards, terminated, _ = vec.step(actions)
        if step == 30:
            for twin_obs, twin_rewards in futures:
                for key in obs:
                    np.testing.assert_array_equal(obs[key], twin_obs[key])
                np.testing.assert_array_equal(rewards, twin_rewards)
        for i, env in enumerate(singles):
            env.step(int(actions[i]))
            if terminated[i]:
                env.reset()
    if flow._planning:
        assert planned_checks >= 1  # a game was compared inside a planned turn


@pytest.mark.parametrize("variant", ["plakoto", "long"])  # the opposite and the same geometry
def test_pinned_bits_flip_as_positions_do(variant: str) -> None:
    """flip_pins renumbers pinned points' bits as Position.flip renumbers the pinned points
    (RULES.md §1.2: the other player's point of the mover's p)."""
    from nardy.core import load_variant
    from nardy.core.movegen import _pin_mask
    from nardy.core.position import opposite_point
    from nardy.env.batchflow import flip_pins, pin_flip_tables

    geometry = load_variant(variant).rules.geometry
    tables = pin_flip_tables(load_variant(variant))
    rng = np.random.default_rng(2)
    sizes = rng.integers(0, 8, size=160).tolist()
    sets = [tuple(sorted(set(rng.integers(1, 25, size=k).tolist()))) for k in sizes]
    sets += [(p,) for p in range(1, 25)]
    found = flip_pins(tables, np.array([_pin_mask(s) for s in sets], dtype=np.int64))
    expected = [_pin_mask(tuple(opposite_point(p, geometry) for p in s)) for s in sets]
    assert found.tolist() == expected


def test_whole_batch_encoding_of_pinned_boards_is_encodes() -> None:
    """The flow's board units of plakoto boards with pinned checkers of either side (mothers
    included, RULES.md §3.12.2) are encode()'s, row by row."""
    from random import Random

    from nardy import encoding
    from nardy.core import load_variant
    from nardy.core.dice import SeededDice
    from nardy.core.game import Game
    from nardy.core.movegen import board_of

    variant = load_variant("plakoto")
    positions = []
    pick = Random(4)
    for seed in range(6):
        game = Game(variant, SeededDice(seed))
        while game.result is None and len(positions) < 60 * (seed + 1):
            decision = game.decision
            positions.append(decision.position)
            game.decide(pick.randrange(len(decision.plays)))
    keys = [[*board_of(p), 0] for p in positions]
    board = np.array([key[:28] for key in keys], dtype=np.int8)
    pins = np.array([key[28] for key in keys], dtype=np.int64)
    assert np.count_nonzero(pins) >= 100
    assert any(p.pinned_of(1, "opposite") and p.pinned_of(0, "opposite") for p in positions)
    flow = batched_env("plakoto", 2)._flow
    assert flow is not None
    out = np.zeros((len(positions), encoding.BOARD_SIZE), dtype=np.float32)
    flow._encode_boards(board, out, pins)
    expected = np.stack([encoding.encode(p) for p in positions])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("variant", [name for name, _ in TURN_PLANS])
def test_a_lean_games_turn_plan_goes_through_the_batch_arrays(variant: str) -> None:
    """The per-game tail's round trip: a lean game's state at every decision of random games
    (RULES.md §2.8-§2.10: progression stages with their first value, last-stage flag and stage
    start, re-rolls, transferred groups), stored in a batch row and read back, is the same."""
    import random

    from nardy.core.lean import LeanGame
    from nardy.env.batchflow import _GameDice
    from nardy.env.driver import NumpyDice

    vec = batched_env(variant, 1)
    vec.reset(seed=1)
    flow = vec._flow
    assert flow is not None
    rng = random.Random(3)
    dice = NumpyDice(np.random.default_rng(4))
    game = LeanGame(flow.variant, dice)
    kinds: set[str] = set()

    def state(g: LeanGame) -> tuple[Any, ...]:
        fields: tuple[Any, ...] = (g.position, g.mover, g.kind, g.dice, g.final)
        if g.kind == "stage":
            fields += (g._first, g._last, g._start)
        if g.kind == "transfer":
            fields += (g._groups, g._group)
        return fields

    for _ in range(1500):
        if game.result is not None:
            game = LeanGame(flow.variant, dice)
        flow._store(0, game)
        assert state(flow._lean_of(0, _GameDice(flow, 0))) == state(game)
        kinds.add(game.kind)
        game.choose(rng.choice(game.sorted_keys()))
    turn = flow.variant.rules.turn
    assert kinds >= ({"stage"} if turn.doubles == "progression" else {"reroll"})
    assert ("transfer" in kinds) == turn.transfer


def test_a_games_several_answers_in_one_log_entry_replay_in_order() -> None:
    """A game played on alone logs every choice it made inside one step in one entry (rows of
    the same game in their order), and its replay reads them all, in that order."""
    from nardy.core.batch import BOARD

    vec = batched_env("long", 3)
    vec.reset(seed=1)
    vec.step(np.zeros(3, dtype=np.int64))
    flow = vec._flow
    assert flow is not None
    before = [flow.answers(i) for i in range(3)]
    rows = (np.arange(3 * BOARD).reshape(3, BOARD) % 5).astype(np.int8)
    flow._record(np.array([2, 0, 2]), rows, np.zeros(3, dtype=np.int64))
    assert flow.answers(2) == [*before[2], tuple(rows[0].tolist()), tuple(rows[2].tolist())]
    assert flow.answers(0) == [*before[0], tuple(rows[1].tolist())]
    assert flow.answers(1) == before[1]
    against_bot = vector_env("long", 2, opponent="random")
    against_bot.reset(seed=1)
    assert against_bot._flow is not None
    with pytest.raises(NotImplementedError):
        against_bot._flow.answers(0)  # (never replayed: nothing is logged)
