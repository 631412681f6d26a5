"""PettingZoo AEC environment of any registered variant (docs/learning.md).

``nardy.env.aec_env("long")`` is the wrapped environment (an illegal action ends the game: the
offender loses the variant's largest result at the current cube, as in the Gymnasium env;
out-of-bounds actions assert; order enforced), as PettingZoo's classic games do; ``raw_aec_env``
is the bare one. Agents are ``"player_0"`` (White) and ``"player_1"`` (Black); the agent
selected is always the one who must decide (a play of any segment, a double, an answer to it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from nardy import encoding
from nardy.core.board_text import render_board
from nardy.core.variant import Variant
from nardy.env.driver import Driver, EnvConfig, NumpyDice
from nardy.env.gym import decision_space

AGENTS = ("player_0", "player_1")
"""White and Black (PettingZoo's agent naming)."""
_COLOUR = {agent: colour for colour, agent in enumerate(AGENTS)}


class NardyAECEnv(AECEnv[str, dict[str, np.ndarray], int | None], EzPickle):  # type: ignore[misc]
    """Two agents take turns at the decisions of one game; rewards are the game's points at the end."""

    metadata: dict[str, Any] = {  # noqa: RUF012 (PettingZoo's attribute, renamed per instance)
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: str | Variant = "long",
        *,
        encoder: str = encoding.FULL_ENCODER,
        action_space_size: int | None = None,
        auto_forced: bool = True,
        render_mode: str | None = None,
        illegal_loses: bool = False,
        **options: Any,
    ) -> None:
        """``illegal_loses``: an illegal action ends the game as a loss of
        :meth:`Driver.illegal_penalty` for the offender (his opponent wins as much) instead of
        raising ``ValueError``."""
        EzPickle.__init__(
            self,
            variant,
            encoder=encoder,
            action_space_size=action_space_size,
            auto_forced=auto_forced,
            render_mode=render_mode,
            illegal_loses=illegal_loses,
            **options,
        )
        self.illegal_loses = illegal_loses
        self._forfeited = False
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            modes = ", ".join(self.metadata["render_modes"])
            raise ValueError(f"render_mode must be one of {modes}, not {render_mode!r}")
        self.config = EnvConfig.build(
            variant,
            options,
            encoder=encoder,
            actions=action_space_size,
            auto_forced=auto_forced,
        )
        self.metadata = {**self.metadata, "name": f"nardy_{self.config.variant.name}_v0"}
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        n = self.config.actions
        obs_space = decision_space(self.config)
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(n) for a in AGENTS}
        size, high = self.config.obs_size, self.config.obs_high
        self.state_space = spaces.Box(self.config.obs_low, high, (2 * size,), np.float32)
        """:meth:`state`: both players' observations, White's first."""
        self.driver: Driver | None = None
        self.np_random, _ = seeding.np_random(None)

    # EzPickle's state is the constructor's arguments: a copy would be a fresh, never-reset env.
    # The whole state is copied instead (the game pickles by replaying its inputs), so a pickled
    # or deep-copied env continues with the same dice and the same future.
    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- AEC API -----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self.driver is None:
            self.np_random, _ = seeding.np_random(seed)
        self.driver = Driver(self.config, NumpyDice(self.np_random))
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.driver.player]
        self._forfeited = False
        # A game may end before any decision (every segment forced): settle it at once.
        white, black = self.driver.take_points()
        self.rewards = {AGENTS[0]: float(white), AGENTS[1]: float(black)}
        if self.driver.over:
            self._finish()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        driver = self._driver()
        colour = _COLOUR[agent]
        mask = driver.mask(colour)
        if self._forfeited:
            mask[:] = 0
        return {"observation": driver.observation(colour), "action_mask": mask}

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        driver = self._driver()
        assert action is not None, "a live agent must act"
        self._cumulative_rewards[self.agent_selection] = 0.0
        action = int(action)
        if not driver.is_legal(action):
            self.rewards = dict.fromkeys(AGENTS, 0.0)
            if not self.illegal_loses:
                driver.step(action)  # raises, naming the legal actions
            self._forfeit(self.agent_selection)
            self._accumulate_rewards()
            return
        driver.step_legal(action)
        white, black = driver.take_points()  # a game of a match may end without ending it
        if white or black:
            self.rewards = {AGENTS[0]: float(white), AGENTS[1]: float(black)}
            self._accumulate_rewards()
        elif self.rewards[AGENTS[0]] or self.rewards[AGENTS[1]]:
            self.rewards = dict.fromkeys(AGENTS, 0.0)
        # (Zero rewards leave the cumulative ones as they are: no dict built at most steps.)
        if driver.over:
            self._finish()
        else:
            self.agent_selection = AGENTS[driver.player]
        if self.render_mode == "human":
            self.render()

    def afterstates(self, encoder: str = encoding.BOARD_ENCODER) -> np.ndarray:
        """Every legal play's resulting position, encoded (``nardy196_v1`` by default), row ``i``
        for action ``i``, from the selected agent's view; empty for a cube decision."""
        return self._driver().afterstates(encoder)

    def _forfeit(self, offender: str) -> None:
        penalty = float(self._driver().illegal_penalty())
        self._forfeited = True
        self.rewards = {a: -penalty if a == offender else penalty for a in AGENTS}
        self.terminations = {a: True for a in AGENTS}
        for agent in AGENTS:
            self.infos[agent] = {"illegal_action": True, "points": penalty, "offender": offender}

    def _finish(self) -> None:
        """The episode is over (its last points are already in ``rewards``)."""
        driver = self._driver()
        self.terminations = {a: True for a in AGENTS}
        result = driver.result
        assert result is not None
        for agent in AGENTS:
            info: dict[str, Any] = {"points": result.points, "reason": result.reason}
            if driver.match is not None:
                info["score"] = driver.score
            self.infos[agent] = info

    def state(self) -> np.ndarray:
        """The global state: White's observation then Black's (each from his own view, with the
        decision's context for the one who decides)."""
        driver = self._driver()
        return np.concatenate([driver.observation(0), driver.observation(1)])

    def render(self) -> Any:
        if self.render_mode is None:
            return None
        game = self._driver().game
        if self.render_mode == "rgb_array":
            from nardy.env.render import board_rgb

            return board_rgb(game.position_for(0))  # White's view
        text = render_board(
            game.position, game.variant, mover_colour="white" if game.mover == 0 else "black"
        )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.driver = None

    def _driver(self) -> Driver:
        if self.driver is None:
            raise RuntimeError("call reset() before using the environment")
        return self.driver


def raw_aec_env(variant: str | Variant = "long", **options: Any) -> NardyAECEnv:
    """The bare AEC environment (no wrappers): an illegal action raises ``ValueError`` naming the
    legal ones, and nothing changes."""
    return NardyAECEnv(variant, **options)


def aec_env(
    variant: str | Variant = "long", *, illegal_reward: float | None = None, **options: Any
) -> Any:
    """The AEC environment of ``variant`` with PettingZoo's usual wrappers: an illegal action ends
    the game — by default the offender loses :meth:`Driver.illegal_penalty` (the variant's largest
    result at the current cube) and the other agent wins as much; a number ``illegal_reward``
    gives PettingZoo's ``TerminateIllegalWrapper`` instead (that reward for the offender, 0 for the
    other). Out-of-bounds actions assert; the call order is enforced. ``options`` are the
    variant's options (``cube=True``) and ``encoder``, ``action_space_size``, ``auto_forced``,
    ``render_mode``."""
    env: Any = raw_aec_env(variant, illegal_loses=illegal_reward is None, **options)
    if illegal_reward is not None:
        env = wrappers.TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)
