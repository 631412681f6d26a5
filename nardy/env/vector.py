"""Vector environments: many games stepped in lockstep, observations, masks and rewards as numpy
arrays (docs/learning.md).

* :class:`BatchedSelfPlay` (:func:`batched_env`) — PettingZoo-style, both agents: every game stops
  at its next decision; ``obs["observation"][i]`` is game ``i``'s decider's observation,
  ``agents[i]`` says who that is (0 ``player_0`` White, 1 ``player_1`` Black), rewards come per
  agent. A finished game starts the next one in the same step.
* :class:`NardyVectorEnv` (:func:`vector_env`) — a Gymnasium ``VectorEnv``: one agent per game
  against a bot, game ``i`` exactly the single :class:`~nardy.env.gym.NardyGymEnv`'s episode for
  seed ``seed + i`` (Gymnasium's next-step autoreset, as ``gymnasium.make_vec`` does).

Both run the games of the lean variants, plakoto's pinned checkers and the turn plans included
(:class:`NardyVectorEnv`: against the random bot), as one whole-batch flow
(:mod:`nardy.env.batchflow`: boards, dice and movers as arrays, a step in numpy); otherwise both
keep one :class:`~nardy.env.driver.Driver` per game (the single environments' game flow) and do
the per-step work for the whole batch at once: the observations are encoded into one preallocated
array by one numpy pass (:func:`nardy.encoding.encode_into`), the masks are one comparison of the
legal-action counts (the legal actions are always the first ones), legality is checked by array
comparison. Either way the same seed gives the single environment's episode.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode

from nardy import encoding
from nardy.bots import Bot
from nardy.core.batch import BOARD, legal_results
from nardy.core.game import PlayDecision
from nardy.core.lean import LeanGame
from nardy.core.movegen import BoardKey
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.env.batchflow import LeanBatch, LeanVersus, applies, row_key
from nardy.env.driver import Driver, EnvConfig, NumpyDice
from nardy.env.gym import NardyGymEnv, Seat

AGENTS = ("player_0", "player_1")
_FEW = 4
"""Below this many games, observations are encoded one by one (cheaper than one batch pass)."""


class _Arrays:
    """The preallocated batch arrays and the bulk encoding of every game's observer's view."""

    def __init__(self, config: EnvConfig, num_envs: int) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        self.config = config
        self.full = config.encoder == encoding.FULL_ENCODER
        self.obs = np.zeros((num_envs, config.obs_size), dtype=np.float32)
        self.mask = np.zeros((num_envs, config.actions), dtype=np.int8)
        self.counts = np.zeros(num_envs, dtype=np.int64)
        """Legal actions per game: the mask's row ``i`` is ``counts[i]`` ones, then zeros."""
        self._actions = np.arange(config.actions)
        self._mask_width = 0
        """:meth:`masks`: the masks' columns beyond this are zeros."""
        self._mask_table = np.zeros((config.actions + 1, 0), dtype=np.int8)
        """:meth:`masks`: the first columns of every mask (row ``n``: ``n`` legal actions)."""

    def masks(self, whole: bool = False) -> None:
        """The masks from :attr:`counts` (the whole-batch flow's): only the columns that may
        change (up to the most legal actions now or at the last call; ``whole``: every column),
        not the whole width (thousands of actions, mostly zeros: a mask pass cost a tenth of a
        step)."""
        counts, mask = self.counts, self.mask
        most = int(counts.max())
        if whole:
            np.less(self._actions, counts[:, None], out=mask.view(np.bool_))
        else:
            # Rows of a table of masks as wide as needed (a power of two): a gather of small
            # rows, a fifth of the time of comparing every column.
            width = max(most, self._mask_width)
            table = self._mask_table
            if table.shape[1] < width:
                size = min(1 << (width - 1).bit_length(), mask.shape[1])
                rows = np.arange(mask.shape[1] + 1)[:, None]
                table = self._mask_table = (np.arange(size) < rows).astype(np.int8)
            mask[:, : table.shape[1]] = np.take(table, counts, axis=0)
        self._mask_width = most

    def fill(self, drivers: Sequence[Driver], colours: Sequence[int]) -> None:
        """Observations, counts and masks of ``drivers[i]`` seen by ``colours[i]``."""
        positions: list[Position] = []
        contexts: list[encoding.Context] = []
        counts = self.counts
        for i, driver in enumerate(drivers):
            colour = colours[i]
            position, context = driver.view(colour)
            positions.append(position)
            contexts.append(context)
            counts[i] = driver.legal_count(colour)
        if len(positions) < _FEW:
            # A batch pass costs a dozen numpy calls whatever the batch size; for a few games
            # the one-position encoder is cheaper (the same units).
            for i, position in enumerate(positions):
                self.obs[i] = encoding.encode(
                    position, contexts[i] if self.full else None, encoder=self.config.encoder
                )
        else:
            encoding.encode_into(self.obs, positions, contexts if self.full else None)
        np.less(self._actions, counts[:, None], out=self.mask.view(np.bool_))


class BatchedSelfPlay:
    """``num_envs`` games of one variant, both agents' decisions, stepped together.

    ``reset(seed)`` seeds game ``i`` with ``seed + i`` (the single AEC env's ``reset(seed=seed +
    i)``); a finished game starts the next from the same generator (the AEC env's ``reset()``), so
    game ``i``'s episodes are the AEC env's. ``step(actions)`` answers every game's decision:

    * ``obs``: ``{"observation": float32 (N, size), "action_mask": int8 (N, actions)}`` from
      each game's decider's view (after a finished game: the next game's first decision);
    * ``rewards``: float32 (N, 2), the game points of (White, Black) of games that just ended;
    * ``terminated``: bool (N,), the game (the match, with ``match_length``) ended in this step;
    * ``info``: ``{"agents": int (N,) the decider now, "illegal": bool (N,)}``.

    An illegal action ends that game as in the wrapped AEC env: the offender loses
    :meth:`Driver.illegal_penalty` and the other agent wins as much. The arrays are reused by the
    next step (copy what you keep).
    """

    def __init__(self, config: EnvConfig, num_envs: int) -> None:
        self.config = config
        self.num_envs = num_envs
        self.arrays = _Arrays(config, num_envs)
        self.rewards = np.zeros((num_envs, 2), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=np.bool_)
        self.agents = np.zeros(num_envs, dtype=np.int64)
        self.illegal = np.zeros(num_envs, dtype=np.bool_)
        self.drivers: list[Driver] = []
        self._rngs: list[np.random.Generator] = []
        self._colours: list[int] = [0] * num_envs
        self._rows: list[tuple[np.ndarray, int, array[int] | None] | None] = [None] * num_envs
        """Per lean game waiting for an action: its legal results' boards in the canonical
        order (a batch's array, shared), where its rows start, and the batch's pinned points' bits
        (a pinning variant's, else None)."""
        self._waiting: list[int] = []
        """Lean games whose next segment's legal results are still to be generated."""
        self._flow: LeanBatch | None = None
        """The whole-batch flow of the lean variants' games (:mod:`nardy.env.batchflow`); None:
        a :class:`Driver` per game."""
        if applies(config):
            self._flow = LeanBatch(
                config,
                self.arrays.obs,
                self.arrays.counts,
                self.rewards,
                self.terminated,
                self.illegal,
                self.agents,
            )
        self._started = False

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """Legal actions per game (the first ``counts[i]`` actions are legal)."""
        return self.arrays.counts

    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start every game; ``seed`` seeds game ``i`` with ``seed + i`` (None: fresh entropy)."""
        self._rngs = [
            seeding.np_random(None if seed is None else seed + i)[0] for i in range(self.num_envs)
        ]
        self._started = True
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self.illegal[:] = False
        if self._flow is not None:
            self._flow.reset(self._rngs)
            return self._observe_flow(whole=True)
        self.drivers = [self._new_driver(i) for i in range(self.num_envs)]
        for i, driver in enumerate(self.drivers):
            # A game may end before its first decision (every segment forced): play on.
            self._settle(i, driver)
        self._generate()
        return self._observe()

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, dict[str, Any]]:
        """Answer every game's decision with ``actions[i]``."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.num_envs} integers, not shape {acts.shape} of {acts.dtype}"
            )
        legal = (acts >= 0) & (acts < self.arrays.counts)
        if self._flow is not None:
            self._flow.step(acts, legal)
            obs, info = self._observe_flow()
            return obs, self.rewards, self.terminated, info
        self.rewards[:] = 0.0
        self.terminated[:] = False
        np.logical_not(legal, out=self.illegal)
        drivers = self.drivers
        pending = self._rows
        for i, (action, ok) in enumerate(zip(acts.tolist(), legal.tolist(), strict=True)):
            driver = drivers[i]
            rows = pending[i]
            pending[i] = None
            if not ok:
                penalty = float(driver.illegal_penalty())
                sign = 1.0 if driver.player == 0 else -1.0
                self.rewards[i] = (-sign * penalty, sign * penalty)
                self.terminated[i] = True
                drivers[i] = driver = self._new_driver(i)
            elif rows is not None:
                # A lean game: the chosen row of its batch is the play's result board.
                board, start, pins = rows
                driver.choose_key(row_key(board, pins, start + action))
            else:
                driver.step_legal(action)
            self._settle(i, driver)
        self._generate()
        obs, info = self._observe()
        return obs, self.rewards, self.terminated, info

    def afterstates(self, i: int, encoder: str = encoding.BOARD_ENCODER) -> np.ndarray:
        """Game ``i``'s afterstates: every legal play's result encoded, row ``a`` for action
        ``a``, from the decider's view (empty for a cube decision; :meth:`Driver.afterstates`)."""
        if self._flow is not None and self._started:
            encoding.encoder_size(encoder)  # a clear error for an unknown encoder
            return self._flow.afterstates(i, encoder)
        return self.driver(i).afterstates(encoder)

    def afterstate_keys(self, i: int) -> list[BoardKey]:
        """Game ``i``'s afterstates as board keys (:func:`~nardy.core.movegen.board_of`), key
        ``a`` for action ``a``, from the decider's view: the rows of :meth:`afterstates` before
        encoding, for an evaluation that reads positions (a heuristic opponent in training:
        :mod:`nardy.train.batched`). Empty for a cube decision."""
        if self._flow is not None and self._started:
            return [tuple(key) for key in self._flow.result_keys(i)]
        driver = self.driver(i)
        decision = driver.decision
        if not isinstance(decision, PlayDecision):
            return []
        keys = decision.plays.board_keys()
        return [keys[a] for a in driver.order()]

    def driver(self, i: int) -> Driver:
        """Game ``i``'s :class:`Driver` (in the whole-batch flow, a replay of the game at its
        current decision: stepping it does not step the batch)."""
        if not self._started:
            raise RuntimeError("call reset() first")
        if self._flow is not None:
            return self._flow.driver(i)
        return self.drivers[i]

    def _new_driver(self, i: int) -> Driver:
        """Game ``i``'s next game from its generator (a lean one hands its segments to
        :meth:`_generate`)."""
        return Driver(self.config, NumpyDice(self._rngs[i]), deferred=True)

    def _settle(self, i: int, driver: Driver) -> None:
        """Pay finished games' points into ``rewards[i]``; a finished episode starts the next. A
        lean game waiting for its legal results goes to :meth:`_generate`."""
        while True:
            lean = driver.lean_game
            if lean is not None and lean.awaiting:
                self._waiting.append(i)
                return
            white, black = driver.take_points()
            if white or black:
                self.rewards[i, 0] += white
                self.rewards[i, 1] += black
            if not driver.over:
                break
            self.terminated[i] = True
            self.drivers[i] = driver = self._new_driver(i)
        self._colours[i] = driver.player

    def _generate(self) -> None:
        """The legal results of every waiting lean game's segment, in one batch
        (:func:`nardy.core.batch.legal_results`: arrays, no Python object per result left for the
        collector), each game's results in the canonical action order (``order="board"``: sorted
        by their boards, as :func:`~nardy.env.driver.play_order`) with the dice they use (a
        progression's or re-roll chain's next segment depends on it: nardy.core.turnplan);
        forced segments are played and their games' next segments (the next turn's, or the
        same turn's next stage, re-roll or transferred group) generated in the next round."""
        variant = self.config.variant
        drivers = self.drivers
        while self._waiting:
            games, self._waiting = self._waiting, []
            leans: list[LeanGame] = []
            for i in games:
                lean = drivers[i].lean_game
                assert lean is not None
                leans.append(lean)
            pairs = [(lean.position, lean.dice) for lean in leans]
            batch = legal_results(variant, pairs, order="board")
            offsets = batch.offsets.tolist()
            used = batch.dice_used.tolist()
            rows = np.frombuffer(batch.boards, dtype=np.int8).reshape(-1, BOARD)
            pins = batch.pinned
            for k, i in enumerate(games):
                start, count = offsets[k], offsets[k + 1] - offsets[k]
                driver = drivers[i]
                driver.give(count, row_key(rows, pins, start) if count == 1 else (), used[k])
                if driver.decision_count():
                    self._rows[i] = (rows, start, pins)
                self._settle(i, driver)

    def _observe_flow(self, whole: bool = False) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays = self.arrays
        arrays.masks(whole)
        obs: dict[str, np.ndarray] = {"observation": arrays.obs, "action_mask": arrays.mask}
        return obs, {"agents": self.agents, "illegal": self.illegal}

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        self.arrays.fill(self.drivers, self._colours)
        self.agents[:] = self._colours
        obs: dict[str, np.ndarray] = {
            "observation": self.arrays.obs,
            "action_mask": self.arrays.mask,
        }
        return obs, {"agents": self.agents, "illegal": self.illegal}


def batched_env(
    variant: str | Variant = "long", num_envs: int = 64, **options: Any
) -> BatchedSelfPlay:
    """:class:`BatchedSelfPlay` of ``num_envs`` games of ``variant``; ``options`` are the variant's
    options and ``encoder``, ``action_space_size``, ``auto_forced`` (as for ``aec_env``)."""
    encoder = options.pop("encoder", encoding.FULL_ENCODER)
    actions = options.pop("action_space_size", None)
    auto_forced = options.pop("auto_forced", True)
    config = EnvConfig.build(
        variant, options, encoder=encoder, actions=actions, auto_forced=auto_forced
    )
    return BatchedSelfPlay(config, num_envs)


class NardyVectorEnv(gymnasium.vector.VectorEnv[dict[str, np.ndarray], np.ndarray, np.ndarray]):
    """``num_envs`` single-agent games against a bot (the Gymnasium env's), in lockstep.

    Game ``i`` is :class:`~nardy.env.gym.NardyGymEnv`'s episode for seed ``seed + i``, with
    Gymnasium's next-step autoreset: the step after a game ends starts the next (its action is
    ignored, its reward 0), exactly what ``gymnasium.make_vec(..., vectorization_mode="sync")``
    returns (tested), observations and masks built for the whole batch at once. The observation
    returned with ``terminations[i]`` set is the finished game's: its ``action_mask`` row is all
    zeros (no action is legal there; the next step ignores game ``i``'s action), so a policy
    sampling ``mask.nonzero()`` gives such a row any action (docs/learning.md). ``info`` holds
    ``colour`` (the agent's colour per game) and ``illegal_action`` (bool per game). Against the
    random bot, the lean variants' games run in the whole-batch flow
    (:class:`~nardy.env.batchflow.LeanVersus`), the same episodes."""

    def __init__(
        self,
        variant: str | Variant = "long",
        num_envs: int = 64,
        *,
        opponent: str | Bot = "random",
        seat: Seat = "random",
        **options: Any,
    ) -> None:
        self.envs = [
            NardyGymEnv(variant, opponent=opponent, seat=seat, **options) for _ in range(num_envs)
        ]
        if not self.envs:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        first = self.envs[0]
        config = first.config
        for env in self.envs[1:]:
            env.config = config  # one variant object for all (a copy per env is only memory)
        self.config = config
        self.num_envs = num_envs
        self.metadata = {**first.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.render_mode = None
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = gymnasium.vector.utils.batch_space(
            first.observation_space, num_envs
        )
        self.action_space = gymnasium.vector.utils.batch_space(first.action_space, num_envs)
        self.arrays = _Arrays(config, num_envs)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._illegal = np.zeros(num_envs, dtype=np.bool_)
        self._colours = np.zeros(num_envs, dtype=np.int64)
        self._flow: LeanVersus | None = None
        """The whole-batch flow (:mod:`nardy.env.batchflow`) of lean games against the random
        bot; None: the envs step one by one."""
        if LeanVersus.takes(self.envs):
            self._flow = LeanVersus(config, self.arrays.obs, self.arrays.counts, self.envs)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        seeds: list[int | None]
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} environments")
        if self._flow is not None:
            for env, each in zip(self.envs, seeds, strict=True):
                gymnasium.Env.reset(env, seed=each)
            self._flow.reset_all()
            self.arrays.masks(whole=True)
            return self._flow_observation()
        for env, each in zip(self.envs, seeds, strict=True):
            gymnasium.Env.reset(env, seed=each)
            env.begin()
        self._autoreset[:] = False
        self._illegal[:] = False
        return self._observe()

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), not {acts.shape}")
        flow = self._flow
        if flow is not None:
            flow.act(acts.astype(np.int64))
            self.arrays.masks()
            obs, info = self._flow_observation()
            rewards = flow.reward.copy()
            return obs, rewards, flow.autoreset.copy(), self._truncations.copy(), info
        rewards, terminations = self._rewards, self._terminations
        for i, action in enumerate(acts.tolist()):
            env = self.envs[i]
            if self._autoreset[i]:
                env.begin()
                rewards[i], terminations[i], self._illegal[i] = 0.0, False, False
                continue
            reward, illegal = env.act(action)
            rewards[i] = reward
            self._illegal[i] = illegal
            terminations[i] = illegal or env.current_driver().over
        np.copyto(self._autoreset, terminations)
        obs, info = self._observe()
        return obs, rewards.copy(), terminations.copy(), self._truncations.copy(), info

    def _flow_observation(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        flow = self._flow
        assert flow is not None
        obs: dict[str, np.ndarray] = {
            "observation": self.arrays.obs.copy(),
            "action_mask": self.arrays.mask.copy(),
        }
        return obs, {"colour": flow.colour.copy(), "illegal_action": flow.illegal.copy()}

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        envs = self.envs
        colours = [env.colour for env in envs]
        arrays = self.arrays
        arrays.fill([env.current_driver() for env in envs], colours)
        if self._illegal.any():  # an abandoned game has no legal action left
            arrays.mask[self._illegal] = 0
            arrays.counts[self._illegal] = 0
        self._colours[:] = colours
        obs: dict[str, np.ndarray] = {
            "observation": arrays.obs.copy(),
            "action_mask": arrays.mask.copy(),
        }
        info = {"colour": self._colours.copy(), "illegal_action": self._illegal.copy()}
        return obs, info


def vector_env(
    variant: str | Variant = "long",
    num_envs: int = 64,
    opponent: str | Bot = "random",
    **options: Any,
) -> NardyVectorEnv:
    """:class:`NardyVectorEnv`: ``num_envs`` games of ``variant`` against ``opponent``;
    ``options`` are :func:`~nardy.env.gym.gym_env`'s (``seat``, ``encoder``, variant options)."""
    return NardyVectorEnv(variant, num_envs, opponent=opponent, **options)
