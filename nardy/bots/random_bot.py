"""The ``random`` bot: a uniformly random legal play."""

from __future__ import annotations

import random

from nardy.bots.base import Bot
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """A uniformly random legal play, from its own ``random.Random(seed)``.

    Cube: offers a double with probability ``double_rate`` (2 %); takes a double with probability
    ``take_rate`` (80 %) and drops otherwise; never beavers.
    """

    name = "random"

    def __init__(
        self, seed: int | None = None, *, double_rate: float = 0.02, take_rate: float = 0.8
    ) -> None:
        self.seed = seed
        self.double_rate = double_rate
        self.take_rate = take_rate
        self._random = random.Random(seed)

    @property
    def rng(self) -> random.Random:
        """The generator its choices are drawn from: a batched flow that plays for it draws from
        the same one, so its games are this bot's (tests/env/test_env_vector.py)."""
        return self._random

    def choose_play(self, decision: PlayDecision) -> int:
        return self._random.randrange(len(decision.plays))

    def offer_double(self, decision: DoubleDecision) -> bool:
        # The draw comes first, so that the bot's random stream is the same as before the dead
        # cube was refused: games without a dead cube stay as they were, seed for seed.
        wants = self._random.random() < self.double_rate
        return wants and not self.dead_cube(decision)

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        return "take" if self._random.random() < self.take_rate else "drop"
