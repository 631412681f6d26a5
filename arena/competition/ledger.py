"""The standings ledger: a tournament's standings kept as running totals, one game at a time.

Reading a tournament's standings from its games means reading every stored game; the ledger
instead keeps, next to the games, the few numbers the standings are made of, and updates them in
the same transaction that stores a game (:mod:`nardy.arena.records.storage`). Its totals are *additive*:

* per game: each bot's games, net points and forfeits, and the pairing's net points;
* per unit (a game, or a match): once it is complete, its result (wins, losses, units);
* per duplicate pair (the two legs of a round): once both are complete, the pair's sum and
  square, from which the pairing's mean and standard errors follow exactly;
* per pool: the SPRT's state, fed pairs in schedule order (as :class:`~nardy.arena.competition.tournament.
  Tally` feeds it). A luck-adjusted SPRT (``sprt.on = "luck-adjusted"``) is fed each game's
  luck-adjusted points for ``a`` (:mod:`nardy.arena.competition.sprt_luck`), which the ledger is given
  (``luck``): the values of the units complete but not fed yet (a pair waits for the earlier
  ones) are kept in the SPRT's state, under ``"adjusted"``.

When a game changes a unit, the unit's (and its pair's) old contribution is taken off and the
new one added, so the totals always equal what recomputing from the games gives (the tests
compare both). Every total belongs to one round of one pool, which is what lets the spectator
take the rounds still being played out of the standings (:meth:`Aggregates.subtract`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal, Protocol

from nardy.arena.competition.schedule import PoolDef, ScheduledUnit, SprtDef, TournamentDef, unit_at
from nardy.arena.competition.stats import Sprt, Summary, fit_ratings, summarize_sums
from nardy.arena.records.ledger_rows import (
    BOT_FIELDS,
    PAIRING_FIELDS,
    Aggregates,
    UnitState,
    add_values,
)

__all__ = [
    "FORFEITS",
    "Game",
    "Ledger",
    "LuckSource",
    "count",
    "new_sprt",
    "points_se",
    "ratings",
    "results_for_ratings",
    "round_size",
    "summaries",
]

FORFEITS = ("time_forfeit", "bot_failure")


class Game(Protocol):
    """What the ledger reads of a stored game (a :class:`~nardy.arena.records.storage.GameRow`)."""

    @property
    def unit_id(self) -> str: ...
    @property
    def white(self) -> str: ...
    @property
    def black(self) -> str: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def points(self) -> int: ...
    @property
    def termination(self) -> str: ...
    @property
    def finished(self) -> float: ...


def round_size(d: TournamentDef, r: int) -> int:
    """How many units round ``r`` (0-based) of each pool has: every pairing, both legs (the last
    round of an odd ``games``: leg ``a`` only)."""
    legs = min(2, d.games - 2 * r)
    return max(0, legs) * len(d.pairings())


def _a_result(unit: ScheduledUnit, state: UnitState) -> int:
    """The unit's result from ``a``'s view: the points of the game, or +-1 for a match."""
    if unit.match_length is None:
        return state.last_a
    a_colour = unit.leg
    return 1 if state.score[a_colour] > state.score[1 - a_colour] else -1


def new_sprt(spec: SprtDef, pool: PoolDef) -> Sprt:
    """A pool's sequential test as ``spec`` defines it (the engine's and the ledger's): on
    luck-adjusted points, the normal-model test, which uses their smaller spread
    (:class:`~nardy.arena.competition.stats.Sprt`)."""
    if spec.mode == "elo":
        return Sprt(spec.elo0, spec.elo1, spec.alpha, spec.beta)
    max_points = spec.max_points if pool.match_length is None else 1.0
    model: Literal["pairs", "normal"] = "normal" if spec.on == "luck-adjusted" else "pairs"
    return Sprt.for_points(
        spec.mu0, spec.mu1, spec.alpha, spec.beta, max_points=max_points, model=model
    )


UnitSource = Callable[[str], "UnitState | None"]
"""Reads a unit's stored state (None: no game of it stored)."""

LuckSource = Callable[["Game"], float]
"""A game's luck-adjusted points for ``a`` (:meth:`nardy.arena.competition.sprt_luck.LuckAdjuster.a_points`)."""


class Ledger:
    """Turns stored games into :class:`Aggregates` changes and unit states, for one tournament.

    ``units`` reads the state of units not changed by this ledger yet (from the database, or
    nothing for a fresh count); the states it changes are kept in :attr:`changed` until written.
    ``luck`` gives a game's luck-adjusted points for ``a``, asked only of the games a
    luck-adjusted SPRT needs (money games of its pairing, decided or drawn) whose value
    :meth:`add` was not handed; without it the ledger keeps no luck-adjusted SPRT.
    """

    def __init__(
        self,
        definition: TournamentDef,
        units: UnitSource | None = None,
        luck: LuckSource | None = None,
    ) -> None:
        self.definition = definition
        self._source = units or (lambda unit_id: None)
        self._luck = luck
        self._pairings = definition.pairings()
        self._pairing_index = {f"{a}~{b}": i for i, (a, b) in enumerate(self._pairings)}
        self._pool_index = {pool.label: i for i, pool in enumerate(definition.pools)}
        self._units: dict[str, ScheduledUnit | None] = {}
        self.changed: dict[str, UnitState] = {}
        self.delta = Aggregates()
        self._sprt: dict[str, tuple[Sprt, int]] = {}
        self._pending: dict[str, dict[str, float]] = {}

    def unit_state(self, unit_id: str) -> UnitState | None:
        state = self.changed.get(unit_id)
        return state if state is not None else self._source(unit_id)

    def unit(self, unit_id: str) -> ScheduledUnit | None:
        """The scheduled unit (None: not in the schedule), as :func:`~nardy.arena.competition.schedule.unit_from_id` finds it,
        with the pairings' and pools' indexes made once per ledger."""
        if unit_id in self._units:
            return self._units[unit_id]
        unit: ScheduledUnit | None = None
        label, _, rest = unit_id.partition(":")
        pairing, _, tail = rest.partition(":")
        p, q = self._pool_index.get(label), self._pairing_index.get(pairing)
        if p is not None and q is not None and len(tail) >= 2 and tail[:-1].isdigit():
            r, leg = int(tail[:-1]) - 1, "ab".find(tail[-1])
            if r >= 0 and leg >= 0 and 2 * r + leg < self.definition.games:
                unit = unit_at(self.definition, p, q, r, leg, self._pairings)
                if unit.unit_id != unit_id:
                    unit = None
        self._units[unit_id] = unit
        return unit

    def add(
        self,
        row: Game,
        sprt_state: Callable[[str], dict[str, Any] | None],
        adjusted: float | None = None,
    ) -> bool:
        """Count one stored game (a :class:`~nardy.arena.records.storage.GameRow`); False when its unit
        is not in the schedule (the standings leave such a game out, as the engine does).
        ``sprt_state`` reads a pool's stored SPRT state (None: nothing fed yet). ``adjusted``: the
        game's luck-adjusted points for ``a`` when already known (else ``luck`` is asked, if a
        luck-adjusted SPRT needs them)."""
        unit = self.unit(row.unit_id)
        if unit is None:
            return False
        d = self.delta
        # -- the game itself
        white_net = 0 if row.winner is None else row.points if row.winner == 0 else -row.points
        if row.winner is not None:
            winner, loser = (row.white, row.black) if row.winner == 0 else (row.black, row.white)
            add_values(d.bots, (unit.pool, winner), _bot(games=1, net=row.points))
            forfeit = 1 if row.termination in FORFEITS else 0
            add_values(d.bots, (unit.pool, loser), _bot(games=1, net=-row.points, forfeits=forfeit))
        elif row.termination == "draw":
            # A draw (plakoto, RULES.md §3.12.2) is a game played by both, for 0 points.
            add_values(d.bots, (unit.pool, row.white), _bot(games=1))
            add_values(d.bots, (unit.pool, row.black), _bot(games=1))
        add_values(d.bots, (unit.pool, row.white), _bot(seats=1, net_sq=white_net * white_net))
        add_values(d.bots, (unit.pool, row.black), _bot(seats=1, net_sq=white_net * white_net))
        a_points = white_net if unit.leg == 0 else -white_net
        add_values(d.pairings, (unit.pool, unit.a, unit.b), _pairing(a_net=a_points))
        add_values(d.pools, unit.pool, (1, 0))
        rkey = (unit.pool, unit.round)
        add_values(d.rounds, rkey, (1, 0))
        d.finished[rkey] = max(row.finished, d.finished.get(rkey, row.finished))
        # -- its unit and the unit's duplicate pair
        old = self.unit_state(unit.unit_id)
        new = UnitState() if old is None else UnitState(*_fields(old))
        new.games += 1
        new.last_a = a_points
        if row.winner is None and row.termination != "draw":
            new.aborted = new.done = True
        else:
            # A draw (plakoto) scores 0 and the unit goes on, as in the engine's Tally.
            score = list(new.score)
            if row.winner is not None:
                score[row.winner] += row.points
            new.score = (score[0], score[1])
            length = unit.match_length
            new.done = length is None or max(new.score) >= length
        twin_id = unit.unit_id[:-1] + ("b" if unit.leg == 0 else "a")
        twin_unit = self.unit(twin_id)
        twin = None if twin_unit is None else self.unit_state(twin_id)
        for state, sign in ((old, -1), (new, 1)):
            self._unit_totals(unit, state, sign)
            self._pair_totals(unit, state, twin_unit, twin, sign)
        self.changed[unit.unit_id] = new
        if new.done and not new.aborted and self._luck_sprt(unit):
            value = adjusted
            if value is None:
                assert self._luck is not None  # _luck_sprt: a ledger without it keeps none
                value = self._luck(row)
            self._load_sprt(unit.pool, sprt_state)
            self._adjusted(unit.pool)[unit.unit_id] = float(value)
        if new.done:
            self._feed_sprt(unit.pool, sprt_state)
        return True

    def _luck_sprt(self, unit: ScheduledUnit) -> bool:
        """Whether a luck-adjusted SPRT this ledger keeps is fed ``unit``'s result (a money
        game of the SPRT's pairing, the pool's first)."""
        spec = self.definition.sprt
        return (
            spec is not None
            and spec.on == "luck-adjusted"
            and self._luck is not None
            and unit.match_length is None
            and (unit.a, unit.b) == self._pairings[0]
        )

    def _adjusted(self, pool_label: str) -> dict[str, float]:
        """The luck-adjusted points of the pool's units complete but not fed to its SPRT yet."""
        return self._pending.setdefault(pool_label, {})

    def _unit_totals(self, unit: ScheduledUnit, state: UnitState | None, sign: int) -> None:
        if state is None or not state.done:
            return
        d = self.delta
        add_values(d.pools, unit.pool, (0, 1), sign)
        add_values(d.rounds, (unit.pool, unit.round), (0, 1), sign)
        if state.aborted:
            return
        res = _a_result(unit, state)
        a_won, b_won = int(res > 0), int(res < 0)
        add_values(
            d.pairings,
            (unit.pool, unit.a, unit.b),
            _pairing(units=1, a_wins=a_won, b_wins=b_won),
            sign,
        )
        add_values(d.bots, (unit.pool, unit.a), _bot(units=1, wins=a_won, losses=b_won), sign)
        add_values(d.bots, (unit.pool, unit.b), _bot(units=1, wins=b_won, losses=a_won), sign)

    def _pair_totals(
        self,
        unit: ScheduledUnit,
        state: UnitState | None,
        twin_unit: ScheduledUnit | None,
        twin: UnitState | None,
        sign: int,
    ) -> None:
        values = [
            _a_result(u, s)
            for u, s in ((unit, state), (twin_unit, twin))
            if u is not None and s is not None and s.done and not s.aborted
        ]
        if not values:
            return
        key = (unit.pool, unit.a, unit.b)
        if len(values) == 1:
            add_values(self.delta.pairings, key, _pairing(unpaired=1), sign)
            return
        total = values[0] + values[1]
        squares = values[0] ** 2 + values[1] ** 2
        pair = _pairing(
            pairs=1, pair_sum=total, pair_sq=total * total, game_sum=total, game_sq=squares
        )
        add_values(self.delta.pairings, key, pair, sign)

    def _load_sprt(
        self, pool_label: str, stored: Callable[[str], dict[str, Any] | None]
    ) -> tuple[Sprt, int]:
        """The pool's SPRT and the next round it is fed, from its stored state the first time."""
        if pool_label not in self._sprt:
            spec = self.definition.sprt
            assert spec is not None
            sprt = new_sprt(spec, self.definition.pool(pool_label))
            state = stored(pool_label)
            i = 0
            if state is not None:
                sprt.restore(state)
                i = int(state["round"])
                pending = state.get("adjusted") or {}
                self._pending[pool_label] = {str(k): float(v) for k, v in pending.items()}
            self._sprt[pool_label] = (sprt, i)
        return self._sprt[pool_label]

    def _feed_sprt(self, pool_label: str, stored: Callable[[str], dict[str, Any] | None]) -> None:
        """Feed the pool's SPRT the duplicate pairs now complete, in schedule order."""
        spec = self.definition.sprt
        if spec is None:
            return
        luck = spec.on == "luck-adjusted"
        if luck and (self._luck is None or self.definition.pool(pool_label).match_length):
            return  # no values to feed it (a match pool: the engine refuses such a tournament)
        sprt, i = self._load_sprt(pool_label, stored)
        pending = self._adjusted(pool_label) if luck else {}
        d = self.definition
        a, b = self._pairings[0]
        while 2 * i < d.games:
            ids = [
                f"{pool_label}:{a}~{b}:{i + 1:04d}{leg}" for leg in "ab"[: min(2, d.games - 2 * i)]
            ]
            legs = [(u_id, self.unit(u_id), self.unit_state(u_id)) for u_id in ids]
            if not all(s is not None and s.done for _, _, s in legs):
                break
            results = [
                pending.pop(u_id) if luck else _a_result(u, s)
                for u_id, u, s in legs
                if u is not None and s is not None and not s.aborted
            ]
            if len(results) == 2:
                sprt.update(results[0], results[1])
            i += 1
        self._sprt[pool_label] = (sprt, i)
        state: dict[str, Any] = {**sprt.state(), "round": i}
        if luck:
            state["adjusted"] = dict(sorted(pending.items()))
        self.delta.sprt[pool_label] = state


def _bot(**values: int) -> list[int]:
    return [values.get(name, 0) for name in BOT_FIELDS]


def _pairing(**values: int) -> list[int]:
    return [values.get(name, 0) for name in PAIRING_FIELDS]


def _fields(state: UnitState) -> tuple[int, tuple[int, int], int, bool, bool]:
    return state.games, state.score, state.last_a, state.done, state.aborted


def count(
    definition: TournamentDef, rows: Iterable[Game], luck: LuckSource | None = None
) -> Aggregates:
    """The aggregates of ``rows`` (stored games in the order stored), counted from nothing
    (a luck-adjusted SPRT only with ``luck``, see :class:`Ledger`)."""
    ledger = Ledger(definition, luck=luck)
    for row in rows:
        ledger.add(row, lambda pool: None)
    return ledger.delta


# -- from totals to standings ----------------------------------------------------------------------


def summaries(values: Sequence[int]) -> tuple[Summary, Summary]:
    """A pairing's ``(paired, independent)`` summaries from its :data:`PAIRING_FIELDS` totals
    (exactly those of :class:`nardy.arena.competition.stats.PairingStats` over the same units)."""
    p = dict(zip(PAIRING_FIELDS, values, strict=True))
    pairs = p["pairs"]
    # a pair's unit is (r1 + r2) / 2: its sum and square sum are pair_sum / 2 and pair_sq / 4.
    paired = summarize_sums(pairs, Fraction(p["pair_sum"], 2), Fraction(p["pair_sq"], 4))
    independent = summarize_sums(2 * pairs, Fraction(p["game_sum"]), Fraction(p["game_sq"]))
    return paired, independent


def results_for_ratings(
    pairings: Mapping[tuple[str, str, str], Sequence[int]], pool: str
) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(x, y): (x_wins, y_wins)}`` with ``x < y``, draws as halves (what
    :func:`nardy.arena.competition.stats.tally` makes of the same units)."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for (label, a, b), values in pairings.items():
        p = dict(zip(PAIRING_FIELDS, values, strict=True))
        if label != pool or p["units"] <= 0:
            continue
        draws = p["units"] - p["a_wins"] - p["b_wins"]
        wa, wb = p["a_wins"] + 0.5 * draws, p["b_wins"] + 0.5 * draws
        key, (x, y) = ((a, b), (wa, wb)) if a <= b else ((b, a), (wb, wa))
        old = out.get(key, (0.0, 0.0))
        out[key] = (old[0] + x, old[1] + y)
    return out


def ratings(
    pairings: Mapping[tuple[str, str, str], Sequence[int]], pool: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Elo and its SE per bot of a pool (empty when they cannot be fitted yet)."""
    results = results_for_ratings(pairings, pool)
    if not results:
        return {}, {}
    try:
        fitted = fit_ratings(results)
    except ValueError:
        return {}, {}
    return fitted.elo, fitted.se


def points_se(bots: Mapping[tuple[str, str], Sequence[int]]) -> dict[tuple[str, str], float]:
    """The SE of each bot's points per game over its stored games (as independent games)."""
    out: dict[tuple[str, str], float] = {}
    for key, values in bots.items():
        b = dict(zip(BOT_FIELDS, values, strict=True))
        n = b["seats"]
        if n >= 2:
            summary = summarize_sums(n, Fraction(b["net"]), Fraction(b["net_sq"]))
            if math.isfinite(summary.se):
                out[key] = summary.se
    return out
