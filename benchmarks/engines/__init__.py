"""Engine adapters for ``benchmarks/compare_engines.py``: one small module per engine.

Every adapter module has ``NAME`` and ``load() -> Engine``; ``load`` raises :class:`EngineUnavailable`
(with the reason) when the engine's package is missing or unusable here, and the harness then skips it
with that note. An :class:`Engine` offers one or more timed :class:`Mode`\\ s. A mode

* converts a :class:`Case` into the engine's own representation **once**, outside the timing
  (:attr:`Mode.prepare`; it raises :class:`Unsupported` for a corpus the engine cannot load),
* is timed as ``mode.call(*prepared)``: "all legal plays of one (position, dice)",
* and, outside the timing again, turns what the call returned back into position keys
  (:attr:`Mode.results`) so the harness can check it against the reference result set (or, where the
  engine's answer cannot be turned back into positions, just the number of distinct results).

A position key is the position JSON flattened to 28 ints, mover's view (see ``tests/data/README-testdata.md``):
``points[0..23] + bar (mover, opponent) + off (mover, opponent)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CHECKERS = 15

Key = tuple[int, ...]
"""A position as 28 ints: the 24 points, bar (mover, opponent), off (mover, opponent)."""

ENGINE_NAMES: tuple[str, ...] = ("nardy", "bgsage", "open_spiel", "gnubg")
"""The adapters, in table order."""


class EngineUnavailable(Exception):
    """The engine cannot be used here (not installed, failed to load); the message says why."""


class Unsupported(Exception):
    """A mode cannot take this corpus (e.g. it cannot be set to an arbitrary position)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One (position, dice) query with its reference result set."""

    id: str
    position: Mapping[str, Sequence[int]]
    """The position JSON, mover's view."""
    dice: tuple[int, int]
    results: frozenset[Key] | None
    """The reference set of distinct result positions (``None``: no reference for this case)."""
    native: Mapping[str, Any] = field(default_factory=dict)
    """Engine-made objects for this case (OpenSpiel's own game states for its corpus)."""

    @property
    def doubles(self) -> bool:
        return self.dice[0] == self.dice[1]

    @property
    def steps(self) -> tuple[int, ...]:
        """The dice as steps to play: a double is four equal steps."""
        return self.dice * 2 if self.doubles else self.dice


@dataclass(frozen=True, slots=True)
class Mode:
    """One timed way of asking an engine for all legal plays."""

    label: str
    """Row label in the tables, e.g. ``"bgsage possible_moves"``."""
    returns: str
    """What one timed call gives back, in a few words."""
    prepare: Callable[[Case], tuple[Any, ...]]
    """Case → the call's arguments in the engine's own representation (untimed)."""
    call: Callable[..., Any]
    """The timed call: ``call(*prepare(case))``."""
    results: Callable[[tuple[Any, ...], Any], frozenset[Key] | int] | None
    """(prepared arguments, call output) → the distinct result keys (untimed); an ``int`` when the output
    only tells how many distinct results there are; ``None``: the mode gives no result positions at all,
    only speed is reported."""
    complete: bool = True
    """False when one call is not the whole answer (e.g. OpenSpiel's half-turn action list on doubles)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Engine:
    """A loaded engine: its modes and what it needed."""

    name: str
    packages: tuple[tuple[str, str], ...]
    """(distribution, version) of what it runs on."""
    modes: tuple[Mode, ...]
    notes: tuple[str, ...] = ()

    @property
    def versions(self) -> str:
        return ", ".join(f"{dist} {version}" for dist, version in self.packages)


# -- position-key helpers --------------------------------------------------------------------------------


def key_of_json(obj: Mapping[str, Sequence[int]]) -> Key:
    """The key of a position JSON object."""
    bar = obj.get("bar", (0, 0))
    off = obj.get("off", (0, 0))
    return (*obj["points"], bar[0], bar[1], off[0], off[1])


def json_of_key(key: Key) -> dict[str, list[int]]:
    """The position JSON of a key."""
    return {"points": list(key[:24]), "bar": [key[24], key[25]], "off": [key[26], key[27]]}


def key_of_sides(mover: Sequence[int], opponent: Sequence[int]) -> Key:
    """The key of a two-sided board as gnubg writes it: each side 25 counts in its own coordinates
    (index ``i`` = its point ``i + 1``, index 24 = its bar); borne-off counts are what is missing of 15."""
    points = tuple(mover[i] - opponent[23 - i] for i in range(24))
    return (
        *points,
        mover[24],
        opponent[24],
        CHECKERS - sum(mover),
        CHECKERS - sum(opponent),
    )


def sides_of_json(obj: Mapping[str, Sequence[int]]) -> tuple[list[int], list[int]]:
    """(mover, opponent) sides of a position JSON, each 25 counts in its own coordinates (see
    :func:`key_of_sides`)."""
    points = obj["points"]
    bar = obj.get("bar", (0, 0))
    mover = [max(points[i], 0) for i in range(24)] + [bar[0]]
    opponent = [max(-points[23 - j], 0) for j in range(24)] + [bar[1]]
    return mover, opponent
