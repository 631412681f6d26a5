"""The shapes of a tournament's stored running totals: the columns of the store's ``ledger_*``
tables, the totals as read (:class:`Aggregates`) and a unit's stored state (:class:`UnitState`).

They are the records' (the store creates the tables from these columns and reads its rows into
these values); what the totals mean and how a game changes them is the competition's
(:mod:`nardy.arena.competition.ledger`, kept up by :mod:`nardy.arena.competition.totals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BOT_FIELDS",
    "PAIRING_FIELDS",
    "POOL_FIELDS",
    "Aggregates",
    "UnitState",
    "add_values",
]

BOT_FIELDS = ("games", "units", "wins", "losses", "forfeits", "net", "seats", "net_sq")
"""Per pool and bot: decided games (draws included), complete units, unit wins and losses (its
drawn units are ``units - wins - losses``), games lost by forfeit, net points, and over every
stored game (``seats``, aborted ones included) the sum of squares of its points from the bot's
view (``net_sq``: the SE of points per game)."""

PAIRING_FIELDS = (
    "units",
    "a_wins",
    "b_wins",
    "a_net",
    "pairs",
    "unpaired",
    "pair_sum",
    "pair_sq",
    "game_sum",
    "game_sq",
)
"""Per pool and pairing: complete units and who won them, ``a``'s net points over every game,
complete duplicate pairs and lone units, and over the pairs ``sum(r1 + r2)``, ``sum((r1 +
r2)^2)``, ``sum(r)``, ``sum(r^2)`` of the units' results ``r`` from ``a``'s view."""

POOL_FIELDS = ("games", "units_done")
"""Per pool: games counted, units complete (aborted ones included)."""


def add_values(into: dict[Any, list[int]], key: Any, values: Sequence[int], sign: int = 1) -> None:
    """Add ``sign`` times ``values`` to the totals of ``key`` (zeros where there are none yet)."""
    row = into.setdefault(key, [0] * len(values))
    for i, v in enumerate(values):
        row[i] += sign * v


@dataclass
class Aggregates:
    """The ledger's totals of one tournament (or of some of its rounds)."""

    bots: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    pairings: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    pools: dict[str, list[int]] = field(default_factory=dict)
    rounds: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    finished: dict[tuple[str, int], float] = field(default_factory=dict)
    """The last finish time of each round's games (not additive: kept, never subtracted)."""
    sprt: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per pool with an SPRT, its state (:meth:`nardy.arena.competition.stats.Sprt.state` plus ``round``)."""

    def merge(self, other: Aggregates, sign: int = 1) -> None:
        """Add (``sign=-1``: take away) ``other``'s additive totals."""
        for key, values in other.bots.items():
            add_values(self.bots, key, values, sign)
        for pkey, values in other.pairings.items():
            add_values(self.pairings, pkey, values, sign)
        for pool, values in other.pools.items():
            add_values(self.pools, pool, values, sign)
        for rkey, values in other.rounds.items():
            add_values(self.rounds, rkey, values, sign)
        if sign > 0:
            for rkey, when in other.finished.items():
                self.finished[rkey] = max(when, self.finished.get(rkey, when))
            self.sprt.update(other.sprt)

    def subtract(self, other: Aggregates) -> None:
        """Take ``other``'s totals away (e.g. the rounds a spectator may not see yet)."""
        self.merge(other, -1)
        for rkey in other.rounds:
            self.rounds.pop(rkey, None)
            self.finished.pop(rkey, None)

    @property
    def games(self) -> int:
        return sum(v[0] for v in self.pools.values())


@dataclass(slots=True)
class UnitState:
    """What the ledger remembers of one unit (as :class:`nardy.arena.competition.standings.Tally` does)."""

    games: int = 0
    score: tuple[int, int] = (0, 0)
    last_a: int = 0
    """The last game's points from ``a``'s view (a money game's result)."""
    done: bool = False
    aborted: bool = False
