"""Gymnasium environment: one agent against a fixed opponent (docs/learning.md).

The opponent (a built-in bot by name, or any :class:`nardy.bots.Bot`) makes its decisions
inside :meth:`NardyGymEnv.step` and :meth:`NardyGymEnv.reset`, so every observation the agent gets is
one of its own decisions. The reward is 0 until the game ends, then the agent's game points (+ for a
win, − for a loss). The legal actions are ``obs["action_mask"]`` (also ``info["action_mask"]``).

An illegal action — Gymnasium's ``check_env`` sends unmasked samples — ends the episode as a loss:
the agent's reward is minus :meth:`Driver.illegal_penalty` (the variant's largest result at the
current cube, as in the AEC environment), ``info["illegal_action"]`` is True, nothing is raised.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from nardy import encoding
from nardy.bots import Bot
from nardy.bots.decider import Reply, ask
from nardy.bots.registry import BotMaker
from nardy.core.variant import Variant
from nardy.env.driver import Driver, EnvConfig, NumpyDice

Seat = Literal["white", "black", "random"]


def decision_space(config: EnvConfig) -> spaces.Dict:
    """What an agent observes at each of its decisions, here and in the AEC environment: the
    encoder's features of the position and the mask of the legal actions."""
    return spaces.Dict(
        {
            "observation": spaces.Box(
                config.obs_low, config.obs_high, (config.obs_size,), np.float32
            ),
            "action_mask": spaces.Box(0, 1, (config.actions,), np.int8),
        }
    )


class NardyGymEnv(gymnasium.Env[dict[str, np.ndarray], int]):
    """A single agent plays one game per episode against ``opponent``."""

    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium's attribute)
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
    }

    def __init__(
        self,
        variant: str | Variant = "long",
        *,
        opponent: str | Bot = "heuristic",
        seat: Seat = "random",
        encoder: str = encoding.FULL_ENCODER,
        action_space_size: int | None = None,
        auto_forced: bool = True,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        if seat not in ("white", "black", "random"):
            raise ValueError(f"seat must be white, black or random, not {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be ansi or rgb_array, not {render_mode!r}")
        self.make_opponent: BotMaker | None = None
        if isinstance(opponent, str):
            # Resolved once (make_bot read every package's metadata at each reset, more than half
            # of a vector env's time against the random bot); a bot now: a clear error now.
            self.make_opponent = BotMaker(opponent)
            self.make_opponent()
        elif not isinstance(opponent, Bot):
            raise TypeError(
                f"opponent must be a built-in bot name or a nardy.bots.Bot, not {opponent!r}"
            )
        self.config = EnvConfig.build(
            variant,
            options,
            encoder=encoder,
            actions=action_space_size,
            auto_forced=auto_forced,
        )
        self.opponent_spec = opponent
        self.seat = seat
        self.render_mode = render_mode
        n = self.config.actions
        self.action_space: spaces.Discrete = spaces.Discrete(n)  # type: ignore[assignment]
        self.observation_space: spaces.Dict = decision_space(self.config)  # type: ignore[assignment]
        self.driver: Driver | None = None
        self.colour = 0
        self.opponent: Bot | None = None
        self._abandoned = False

    # -- Gymnasium API -----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.begin()
        # A game may end before the agent decides anything (forced plays only): the episode then
        # starts terminated; its one observation is the final board.
        return self._obs(), self._info()

    def begin(self) -> None:
        """A new game from ``np_random`` (seat, opponent, dice), played to the agent's first
        decision (what :meth:`reset` and a vector env's reset share)."""
        rng = self.np_random
        if self.seat == "random":
            self.colour = int(rng.integers(2))
        else:
            self.colour = 0 if self.seat == "white" else 1
        opponent: Bot
        if self.make_opponent is not None:
            opponent = self.make_opponent(int(rng.integers(2**31)))
        else:
            assert isinstance(self.opponent_spec, Bot)
            opponent = self.opponent_spec
        self.opponent = opponent
        self.driver = Driver(self.config, NumpyDice(rng))
        self._abandoned = False
        opponent.start_game(self.config.variant, 1 - self.colour)
        self._opponent_moves()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        reward, illegal = self.act(action)
        if illegal:
            info = {**self._info(), "illegal_action": True}
            return self._obs(), reward, True, False, info
        return self._obs(), reward, self.current_driver().over, False, self._info()

    def act(self, action: int) -> tuple[float, bool]:
        """The agent's action and the opponent's answers: (the agent's reward, whether the action
        was illegal: the game is then abandoned as a loss; the kernel's game stays unscored)."""
        driver = self.current_driver()
        if driver.over or self._abandoned:
            raise RuntimeError("the episode is over; call reset()")
        action = int(action)
        if not driver.is_legal(action):
            self._abandoned = True
            return float(-driver.illegal_penalty()), True
        driver.step_legal(action)
        self._opponent_moves()
        return float(driver.take_points()[self.colour]), False

    def render(self) -> Any:
        if self.render_mode is None:
            return None
        game = self.current_driver().game
        if self.render_mode == "rgb_array":
            from nardy.env.render import board_rgb

            return board_rgb(game.position_for(self.colour))  # the agent's view
        from nardy.core.board_text import render_board

        return render_board(
            game.position_for(self.colour),
            game.variant,
            mover_colour="white" if self.colour == 0 else "black",
        )

    def afterstates(self, encoder: str = encoding.BOARD_ENCODER) -> np.ndarray:
        """Every legal play's resulting position, encoded (``nardy196_v1`` by default), row ``i``
        for action ``i``, from the agent's view; empty for a cube decision."""
        return self.current_driver().afterstates(encoder)

    # -- internals ---------------------------------------------------------------------------

    def _opponent_moves(self) -> None:
        driver = self.current_driver()
        bot = self.opponent
        assert bot is not None
        while not driver.over and driver.player != self.colour:
            decision = driver.decision
            assert decision is not None
            reply = ask(bot, decision)
            answer = reply.answer if isinstance(reply, Reply) else reply
            # A play's index as a plain int (a numpy integer would miss the lean flow's path).
            driver.answer(answer if isinstance(answer, bool | str) else int(answer))

    def _mask(self) -> np.ndarray:
        mask = self.current_driver().mask(self.colour)
        if self._abandoned:
            mask[:] = 0
        return mask

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "observation": self.current_driver().observation(self.colour),
            "action_mask": self._mask(),
        }

    def _info(self) -> dict[str, Any]:
        driver = self.current_driver()
        info: dict[str, Any] = {"action_mask": self._mask(), "colour": self.colour}
        result = driver.result
        if result is not None:
            info["points"] = result.points
            info["winner"] = result.winner
        if driver.match is not None:
            info["score"] = driver.score  # (White, Black) before the current game
        return info

    def current_driver(self) -> Driver:
        """The game's driver (the vector env steps it directly); an error before ``reset()``."""
        if self.driver is None:
            raise RuntimeError("call reset() before step()")
        return self.driver


def gym_env(
    variant: str | Variant = "long", opponent: str | Bot = "heuristic", **options: Any
) -> NardyGymEnv:
    """The Gymnasium environment of ``variant`` against ``opponent`` (``"heuristic"``, ``"random"`` or
    a :class:`~nardy.bots.Bot`). ``options`` are the variant's options and ``seat``,
    ``encoder``, ``action_space_size``, ``auto_forced``, ``render_mode``."""
    return NardyGymEnv(variant, opponent=opponent, **options)
