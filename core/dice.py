"""Dice sources: seeded (same seed → same game) or scripted (tests, replays)."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Protocol

from nardy.core.errors import GameStateError

Roll = tuple[int, int]

MAX_SEED = 2**63 - 1
"""Seeds of runs and tournaments are 0…2**63-1 everywhere (``nardy play``, ``nardy arena run``)."""


class DiceSource(Protocol):
    """Where a game's dice come from. Every throw of two dice, the opening throw included, is one roll."""

    def roll(self) -> Roll:
        """The next two dice."""
        ...


class SeededDice:
    """Pseudo-random dice from a seed; the same seed always gives the same sequence."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**63)
        self._random = random.Random(self.seed)

    def roll(self) -> Roll:
        # The sequence of randint(1, 6): randint calls randrange(1, 7), which draws 3 random bits and
        # draws again while they are 6 or 7 (CPython's Random._randbelow). Drawn here directly, a
        # roll costs 0.15 µs instead of 0.5 (a game has ~110 rolls); tests/core/test_dice.py checks the
        # sequence against randint's.
        bits = self._random.getrandbits
        a = bits(3)
        while a >= 6:
            a = bits(3)
        b = bits(3)
        while b >= 6:
            b = bits(3)
        return (a + 1, b + 1)


class ScriptedDice:
    """Dice from a fixed list, e.g. a recorded game; running out is an error."""

    def __init__(self, rolls: Iterable[Iterable[int]]) -> None:
        self._rolls: list[Roll] = []
        for roll in rolls:
            a, b = roll
            if not (1 <= a <= 6 and 1 <= b <= 6):
                raise ValueError(f"a die shows 1-6, not {roll}")
            self._rolls.append((a, b))
        self._next = 0

    def roll(self) -> Roll:
        if self._next >= len(self._rolls):
            raise GameStateError(f"the scripted dice ran out after {len(self._rolls)} rolls")
        roll = self._rolls[self._next]
        self._next += 1
        return roll

    @property
    def remaining(self) -> int:
        """Rolls not yet used."""
        return len(self._rolls) - self._next


class RecordingDice:
    """Wraps a source and remembers every roll it gave (for game records and replays)."""

    def __init__(self, source: DiceSource) -> None:
        self.source = source
        self.rolls: list[Roll] = []

    def roll(self) -> Roll:
        roll = self.source.roll()
        self.rolls.append(roll)
        return roll
