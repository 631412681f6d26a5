"""A tournament's standings: the running tally of its games and the tables made of it.

:class:`Tally` is the engine's running count (per bot, per pairing, per pool: results, points,
match scores, SPRTs); :class:`Standings` (with :class:`PoolStandings`, :class:`BotStanding`,
:class:`PairingStanding`, :class:`SprtStatus`) is the table a moment shows: ranks, ratings with
their errors, head-to-head results with their intervals. They are made from the tally as games
end, from the stored records (:func:`standings_from_records`), from the store's ledger
(:func:`standings_from_store`, :func:`standings_from_aggregates`), and checked against each other
(:func:`ledger_matches_columns`). The engine that plays the games is
:mod:`nardy.arena.competition.tournament`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nardy.arena.competition.ledger import new_sprt
from nardy.arena.competition.ledger import ratings as ledger_ratings
from nardy.arena.competition.ledger import summaries as pairing_summaries
from nardy.arena.competition.schedule import (
    DefinitionError,
    PoolDef,
    ScheduledUnit,
    TournamentDef,
    TournamentError,
    unit_from_id,
)
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.stats import PairingStats, Sprt, fit_ratings, tally
from nardy.arena.records.ledger_rows import BOT_FIELDS, PAIRING_FIELDS, Aggregates
from nardy.arena.records.storage import (
    GameRow,
    SqlStore,
    StorageError,
    Store,
    TournamentRow,
    stored_tournament,
)
from nardy.arena.records.verify import check_row
from nardy.core.game import (
    WHITE,
    GameResult,
)
from nardy.core.match import Match

__all__ = [
    "BotStanding",
    "PairingStanding",
    "PoolStandings",
    "SprtStatus",
    "Standings",
    "Tally",
    "add_to_match",
    "ledger_matches_columns",
    "standings_from_aggregates",
    "standings_from_records",
    "standings_from_store",
]

log = logging.getLogger(__name__)


_FORFEITS = ("time_forfeit", "bot_failure")


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


@dataclass(slots=True)
class _Unit:
    unit: ScheduledUnit
    games: list[GameRow] = field(default_factory=list)
    score: list[int] = field(default_factory=lambda: [0, 0])
    done: bool = False
    aborted: bool = False
    a_adjusted: float | None = None
    """A money game's luck-adjusted points for a (only under a luck-adjusted SPRT)."""

    @property
    def a_result(self) -> float:
        """The unit's result from a's view: points of the game, or +-1 for a match."""
        if self.unit.match_length is None:
            return float(self.games[-1].a_points)
        a_colour = self.unit.leg  # a is White (0) in leg 0, Black (1) in leg 1
        return 1.0 if self.score[a_colour] > self.score[1 - a_colour] else -1.0


@dataclass(frozen=True, slots=True)
class BotStanding:
    rank: int
    bot: str
    games: int
    units: int
    wins: int
    losses: int
    forfeits: int
    net_points: int
    ppg: float | None
    elo: float | None
    elo_se: float | None
    draws: int = 0
    """Units drawn (a 0-point money game, e.g. a plakoto draw): ``units - wins - losses``."""

    @property
    def match_equity(self) -> float | None:
        """In a match pool, what the bots play for: +1 a match won, -1 a match lost (a match never
        ends drawn), per match — its match equity, ``2p - 1`` for ``p`` the share of matches won
        (None before its first match). ``net_points`` and ``ppg`` add the games' points
        uncapped (RULES.md §2.12: a 3-point match won on a cube of 64 counts 64), which is not
        what a match is played for (issue 34)."""
        return (self.wins - self.losses) / self.units if self.units else None

    def to_json(self, *, match: bool = False) -> dict[str, Any]:
        """The row as JSON; ``match`` (a match pool) adds ``match_equity``. The game points stay
        (``net_points``, ``ppg``: what the games scored) and a money pool's row is as before."""
        out = dataclasses.asdict(self)
        out["ppg"] = _finite(self.ppg)
        out["elo"] = _finite(self.elo)
        out["elo_se"] = _finite(self.elo_se)
        out["elo_error"] = None if out["elo_se"] is None else round(1.96 * out["elo_se"], 3)
        if match:
            out["match_equity"] = self.match_equity
        return out


@dataclass(frozen=True, slots=True)
class PairingStanding:
    """A pairing's result from ``a``'s view; ``mean`` is points per game (match wins +-1 per
    match for a match pool) with its SE over duplicate pairs and a 95% interval."""

    a: str
    b: str
    units: int
    a_wins: int
    b_wins: int
    a_net_points: int
    pairs: int
    unpaired: int
    mean: float | None
    se: float | None
    ci: tuple[float | None, float | None]
    method: str
    se_independent: float | None
    """The SE if the same games were treated as independent (what duplicate dice saved)."""
    draws: int = 0
    """Units neither bot won (0 points): ``units - a_wins - b_wins``."""

    def to_json(self) -> dict[str, Any]:
        """The proto ``PairingResult``'s names (``units`` for its ``games``: matches in a match
        pool; ``ci95`` a ``[low, high]`` pair for its ``ci95_low``/``ci95_high``)."""
        return {
            "bot_a": self.a,
            "bot_b": self.b,
            "units": self.units,
            "wins_a": self.a_wins,
            "wins_b": self.b_wins,
            "draws": self.draws,
            "net_points_a": self.a_net_points,
            "pairs": self.pairs,
            "unpaired": self.unpaired,
            "mean_points": _finite(self.mean),
            "se": _finite(self.se),
            "se_iid": _finite(self.se_independent),
            "ci95": [_finite(self.ci[0]), _finite(self.ci[1])],
            "ci_method": self.method,
        }


@dataclass(frozen=True, slots=True)
class SprtStatus:
    line: str
    decision: str | None
    decided_at: int | None
    pairs: int
    llr: float
    bounds: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.line,
            "decision": self.decision,
            "decided_at": self.decided_at,
            "pairs": self.pairs,
            "llr": self.llr,
            "bounds": list(self.bounds),
        }


@dataclass(frozen=True, slots=True)
class PoolStandings:
    label: str
    variant: str
    options: dict[str, Any]
    match_length: int | None
    units_done: int
    units_total: int
    bots: tuple[BotStanding, ...]
    pairings: tuple[PairingStanding, ...]
    sprt: SprtStatus | None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "variant": self.variant,
            "options": self.options,
            "match_length": self.match_length,
            "units_done": self.units_done,
            "units_total": self.units_total,
            "standings": [b.to_json(match=bool(self.match_length)) for b in self.bots],
            "pairings": [p.to_json() for p in self.pairings],
            "sprt": None if self.sprt is None else self.sprt.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Standings:
    """A snapshot of the tournament's results, pool by pool (ratings per pool)."""

    tournament_id: str
    name: str
    status: str
    detail: str
    games_stored: int
    units_done: int
    units_total: int
    pools: tuple[PoolStandings, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "tournament_id": self.tournament_id,
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "games_stored": self.games_stored,
            "units_done": self.units_done,
            "units_total": self.units_total,
            "pools": [p.to_json() for p in self.pools],
        }


class Tally:
    """Results accumulated game by game; :meth:`standings` summarises them.

    Units (games, or matches) are counted once complete. The SPRT (if any) is fed duplicate pairs
    in schedule order only, whatever order games finish in, so its decision point does not
    depend on concurrency or on interruptions.
    """

    def __init__(self, definition: TournamentDef) -> None:
        self.definition = definition
        self.units: dict[str, _Unit] = {}
        """The units with at least one stored game (made as games arrive: lazy scheduling)."""
        self.units_total = definition.total_units
        self.games_stored = 0
        self.units_completed = 0
        self.done_game_ids: set[str] = set()
        self.sprt: dict[str, Sprt] = {}
        self._sprt_round: dict[str, int] = {}
        self.luck: LuckAdjuster | None = None
        if definition.sprt is not None and definition.sprt.on == "luck-adjusted":
            if any(pool.match_length for pool in definition.pools):
                raise TournamentError(
                    "a luck-adjusted SPRT runs on money games, not matches (sprt.on = points)"
                )
            self.luck = LuckAdjuster()
        if definition.sprt is not None:
            for pool in definition.pools:
                self.sprt[pool.label] = _new_sprt(definition, pool)
                self._sprt_round[pool.label] = 0

    def luck_points(self, row: GameRow, known: float | None = None) -> float | None:
        """The luck-adjusted points for ``a`` that :meth:`add` will need for ``row`` (None when
        there is no luck-adjusted SPRT, or :meth:`add` will not use them: a game already counted,
        not scheduled, or aborted).

        It analyses the game (:class:`~nardy.arena.competition.sprt_luck.LuckAdjuster`), which takes a
        while, so the one thread that adds rows calls it *before* taking the lock that guards the
        tally (it reads, and only that thread writes, what it reads): standings and other games'
        results are not held up meanwhile. ``known``: the value analysed elsewhere (e.g. on the
        Ray worker that played the game), used instead of analysing it here."""
        if self.luck is None or row.game_id in self.done_game_ids:
            return None
        if row.unit_id not in self.units and unit_from_id(self.definition, row.unit_id) is None:
            return None
        if row.winner is None and row.termination != "draw":
            return None
        if known is not None:
            return float(known)
        try:
            return self.luck.a_points(row)
        except ValueError as error:
            raise TournamentError(f"luck-adjusted SPRT: {error}") from None

    def add(
        self, row: GameRow, luck_points: float | None = None, *, feed_sprt: bool = True
    ) -> _Unit | None:
        """Count one stored game; returns its unit's state (None for a game not scheduled).
        ``luck_points``: :meth:`luck_points` of the row, computed beforehand (else here).
        ``feed_sprt=False``: the SPRT counts the pairs this game completes only when
        :meth:`count_sprt_pair` is called (the engine: one event per pair)."""
        if row.game_id in self.done_game_ids:
            return None
        state = self.units.get(row.unit_id)
        if state is None:
            unit = unit_from_id(self.definition, row.unit_id)
            if unit is None:
                return None
            state = self.units[row.unit_id] = _Unit(unit)
        self.done_game_ids.add(row.game_id)
        self.games_stored += 1
        state.games.append(row)
        if row.winner is None and row.termination != "draw":
            state.aborted = state.done = True
        else:
            # A draw (plakoto, RULES.md §3.12.2) scores 0 and the unit goes on: a money game is
            # then a 0-point unit (half a win each in Elo), a match plays its next game.
            if row.winner is not None:
                state.score[row.winner] += row.points
            length = state.unit.match_length
            state.done = length is None or max(state.score) >= length
            if self.luck is not None:
                state.a_adjusted = luck_points if luck_points is not None else self.luck_points(row)
        if state.done:
            self.units_completed += 1
            if feed_sprt:
                self._feed_sprt(state.unit.pool)
        return state

    def count_sprt_pair(self) -> bool:
        """Count the next complete pair of one pool's SPRT; False when none is waiting. Games
        may complete several pairs at once (two games ending together, or a pair's last game
        ending after the next pair's), and the engine reports the test after each one."""
        return any(self._feed_sprt(pool, one=True) for pool in self.sprt)

    def _feed_sprt(self, pool: str, *, one: bool = False) -> bool:
        """Count the pool's complete pairs in order (``one``: at most one); True if any."""
        sprt = self.sprt.get(pool)
        if sprt is None:
            return False
        # An SPRT runs on exactly one pairing: pair i of the pool is round i's legs a and b.
        d = self.definition
        (a, b), label = d.pairings()[0], pool
        i = self._sprt_round[pool]
        counted = False
        while 2 * i < d.games and not (one and counted):
            ids = [f"{label}:{a}~{b}:{i + 1:04d}{leg}" for leg in "ab"[: min(2, d.games - 2 * i)]]
            legs = [self.units.get(unit_id) for unit_id in ids]
            if not all(u is not None and u.done for u in legs):
                break
            results = [
                u.a_result if u.a_adjusted is None else u.a_adjusted
                for u in legs
                if u is not None and not u.aborted
            ]
            if len(results) == 2:
                sprt.update(results[0], results[1])
                counted = True
            i += 1
        self._sprt_round[pool] = i
        return counted

    @property
    def sprt_decided(self) -> bool:
        return bool(self.sprt) and all(s.decision is not None for s in self.sprt.values())

    def sprt_lines(self) -> list[str]:
        if len(self.sprt) == 1:
            return [s.status_line() for s in self.sprt.values()]
        return [f"{label}: {s.status_line()}" for label, s in self.sprt.items()]

    def unit_done(self, unit_id: str) -> bool:
        state = self.units.get(unit_id)
        return state is not None and state.done

    def games_of(self, unit_id: str) -> list[GameRow]:
        """The stored games of a unit, as stored."""
        state = self.units.get(unit_id)
        return [] if state is None else state.games

    @property
    def all_done(self) -> bool:
        return self.units_completed >= self.units_total

    def standings(
        self, *, tournament_id: str, status: str = "running", detail: str = ""
    ) -> Standings:
        d = self.definition
        pools = tuple(self._pool_standings(p) for p in d.pools)
        return _make_standings(d, pools, self.games_stored, tournament_id, status, detail)

    def _pool_standings(self, pool: PoolDef) -> PoolStandings:
        d = self.definition
        states = [s for s in self.units.values() if s.unit.pool == pool.label]
        done = [s for s in states if s.done and not s.aborted]
        names = [b.name for b in d.bots]
        games = dict.fromkeys(names, 0)
        units = dict.fromkeys(names, 0)
        wins = dict.fromkeys(names, 0)
        losses = dict.fromkeys(names, 0)
        forfeits = dict.fromkeys(names, 0)
        net = dict.fromkeys(names, 0)
        for s in states:
            for g in s.games:
                if g.winner is None:
                    if g.termination == "draw":  # played by both, for 0 points (RULES.md §3.12.2)
                        games[g.white] += 1
                        games[g.black] += 1
                    continue
                winner = g.white if g.winner == 0 else g.black
                loser = g.black if g.winner == 0 else g.white
                games[winner] += 1
                games[loser] += 1
                net[winner] += g.points
                net[loser] -= g.points
                if g.termination in _FORFEITS:
                    forfeits[loser] += 1
        unit_results: list[tuple[str, str, float]] = []
        for s in done:
            a, b, res = s.unit.a, s.unit.b, s.a_result
            units[a] += 1
            units[b] += 1
            if res > 0:
                wins[a] += 1
                losses[b] += 1
            elif res < 0:
                wins[b] += 1
                losses[a] += 1
            unit_results.append((a, b, res))
        elo: dict[str, float] = {}
        elo_se: dict[str, float] = {}
        if unit_results:
            try:
                ratings = fit_ratings(tally(unit_results))
                elo, elo_se = ratings.elo, ratings.se
            except ValueError:
                pass
        per = {
            n: {
                "games": games[n],
                "units": units[n],
                "wins": wins[n],
                "losses": losses[n],
                "forfeits": forfeits[n],
                "net": net[n],
            }
            for n in names
        }
        bots = _ranked_bots(names, per, elo, elo_se, match=pool.match_length is not None)
        pairings: list[PairingStanding] = []
        for a, b in d.pairings():
            mine = [s for s in done if s.unit.a == a and s.unit.b == b]
            mine.sort(key=lambda s: s.unit.order)
            ps = PairingStats.from_games(
                [s.a_result for s in mine], pair_ids=[s.unit.pair_id for s in mine]
            )
            paired = ps.paired
            a_net = sum(
                g.a_points for s in states if s.unit.a == a and s.unit.b == b for g in s.games
            )
            pairings.append(
                PairingStanding(
                    a=a,
                    b=b,
                    units=len(mine),
                    a_wins=sum(1 for s in mine if s.a_result > 0),
                    b_wins=sum(1 for s in mine if s.a_result < 0),
                    draws=sum(1 for s in mine if s.a_result == 0),
                    a_net_points=a_net,
                    pairs=ps.n_pairs,
                    unpaired=len(ps.unpaired),
                    mean=paired.mean,
                    se=paired.se,
                    ci=paired.ci,
                    method=paired.method,
                    se_independent=ps.independent.se,
                )
            )
        units_done = len([s for s in states if s.done])
        return _make_pool_standings(d, pool, units_done, bots, pairings, self.sprt.get(pool.label))


def add_to_match(match: Match, winner: int | None, points: int) -> None:
    """A stored game's result added to its unit's match. A game of a match unit without a winner
    is a draw (the tally ends a unit at any other game without one): it adds 0, and the next game
    starts with a new opening throw (RULES.md §3.12.2, "after a draw, a new opening throw")."""
    if winner is None:
        match.add_result(GameResult(WHITE, 0, 0, 1, "draw", draw=True))
    else:
        match.add_result(GameResult(winner, points, 1, 1, "bear_off"))


def _new_sprt(d: TournamentDef, pool: PoolDef) -> Sprt:
    assert d.sprt is not None
    return new_sprt(d.sprt, pool)


def _stored_tournament(
    store: Store, tournament_id: str | None
) -> tuple[TournamentRow, TournamentDef]:
    row = stored_tournament(store, tournament_id)
    try:
        definition = TournamentDef.from_json(row.definition)
    except (KeyError, TypeError, DefinitionError) as exc:
        raise StorageError(
            f"tournament {row.tournament_id}: stored definition is damaged: {exc}"
        ) from None
    return row, definition


def standings_from_records(store: Store, tournament_id: str | None = None) -> Standings:
    """The standings recounted from every stored game and its record (each column checked
    against the record): what the ledger's totals must equal, and the way to find the game
    whose columns were changed when they do not."""
    row, definition = _stored_tournament(store, tournament_id)
    t = Tally(definition)
    for game in store.games(row.tournament_id, records=True):
        # The standings count the columns; a column that disagrees with the game's record was
        # changed after the game was stored: refuse rather than count it.
        problems = check_row(game, game.record or {})
        if problems:
            raise StorageError(
                f"tournament {row.tournament_id}: {problems[0]} (the database was changed; "
                "`nardy arena verify` checks every game)"
            )
        t.add(game)
    return t.standings(tournament_id=row.tournament_id, status=row.status, detail=row.detail)


def standings_from_store(store: Store, tournament_id: str | None = None) -> Standings:
    """The standings of a stored (finished or running) tournament; the most recently updated
    one if ``tournament_id`` is None.

    Read from the ledger's totals (:mod:`nardy.arena.competition.ledger`: a few rows per pairing, whatever
    the number of games), after checking them against totals the database sums from the games'
    columns; when they disagree (a column changed after the game was stored), or the database
    has no ledger, the standings are recounted from the games (:func:`standings_from_records`),
    which names a changed game."""
    row, definition = _stored_tournament(store, tournament_id)
    if isinstance(store, SqlStore):
        snapshot = store.ledger_snapshot(row.tournament_id, check=True)
        if snapshot is not None and ledger_matches_columns(
            snapshot.totals, snapshot.columns or [], definition
        ):
            totals = snapshot.totals
            return standings_from_aggregates(
                definition,
                totals,
                tournament_id=row.tournament_id,
                status=row.status,
                detail=row.detail,
            )
    return standings_from_records(store, row.tournament_id)


def ledger_matches_columns(
    totals: Aggregates, groups: Sequence[Mapping[str, Any]], definition: TournamentDef
) -> bool:
    """Whether the ledger's per-game totals (each bot's games, net points, forfeits and seats,
    each pairing's net points, each pool's games) equal those of the games' columns, as
    summed by :meth:`~nardy.arena.records.storage.SqlStore.column_totals`."""
    pools = {p.label for p in definition.pools}
    pairings = set(definition.pairings())
    bots: dict[tuple[str, str], list[int]] = {}
    pairs: dict[tuple[str, str, str], int] = {}
    games: dict[str, int] = {}
    for g in groups:
        if g["pool"] not in pools or (g["a"], g["b"]) not in pairings:
            return False  # a game the schedule has not: never stored by the engine
        n, points, winner = int(g["n"]), int(g["points"] or 0), g["winner"]
        pool = g["pool"]
        games[pool] = games.get(pool, 0) + n
        for seat in (g["white"], g["black"]):
            bots.setdefault((pool, seat), [0, 0, 0, 0])[3] += n
        if winner is None:
            if points:
                return False
            if g.get("draw"):
                # A draw (plakoto, RULES.md §3.12.2) is a game played by both, as the ledger
                # counts it; an aborted game is no one's.
                bots[(pool, g["white"])][0] += n
                bots[(pool, g["black"])][0] += n
            continue
        won, lost = (g["white"], g["black"]) if winner == 0 else (g["black"], g["white"])
        w = bots[(pool, won)]
        w[0] += n
        w[1] += points
        lo = bots[(pool, lost)]
        lo[0] += n
        lo[1] -= points
        lo[2] += n * int(g["forfeit"])
        a_won = winner == g["leg"]
        key = (pool, g["a"], g["b"])
        pairs[key] = pairs.get(key, 0) + (points if a_won else -points)
    fields = [BOT_FIELDS.index(f) for f in ("games", "net", "forfeits", "seats")]
    ledger_bots = {
        k: [v[i] for i in fields] for k, v in totals.bots.items() if any(v[i] for i in fields)
    }
    column_bots = {k: v for k, v in bots.items() if any(v)}
    a_net = PAIRING_FIELDS.index("a_net")
    ledger_pairs = {k: v[a_net] for k, v in totals.pairings.items() if v[a_net]}
    ledger_games = {k: v[0] for k, v in totals.pools.items() if v[0]}
    return (
        ledger_bots == column_bots
        and ledger_pairs == {k: v for k, v in pairs.items() if v}
        and ledger_games == {k: v for k, v in games.items() if v}
    )


def standings_from_aggregates(
    definition: TournamentDef,
    totals: Aggregates,
    *,
    tournament_id: str,
    status: str = "running",
    detail: str = "",
) -> Standings:
    """The standings made of the ledger's totals (what :meth:`Tally.standings` makes of the
    same games)."""
    pools = tuple(_pool_from_totals(definition, pool, totals) for pool in definition.pools)
    return _make_standings(definition, pools, totals.games, tournament_id, status, detail)


def _make_standings(
    d: TournamentDef,
    pools: tuple[PoolStandings, ...],
    games_stored: int,
    tournament_id: str,
    status: str,
    detail: str,
) -> Standings:
    """The whole tournament's standings from its pools' (live tally and ledger alike)."""
    return Standings(
        tournament_id=tournament_id,
        name=d.name,
        status=status,
        detail=detail,
        games_stored=games_stored,
        units_done=sum(p.units_done for p in pools),
        units_total=d.total_units,
        pools=pools,
    )


def _ranked_bots(
    names: list[str],
    per: Mapping[str, Mapping[str, int]],
    elo: Mapping[str, float],
    elo_se: Mapping[str, float],
    *,
    match: bool = False,
) -> list[BotStanding]:
    """The standings' bot rows, best first: by Elo, then points per game (in a match pool,
    ``match``: match equity per match, what its bots play for), then declared order.

    Bots tied on both (rounded) share a rank. ``per`` holds each bot's ``BOT_FIELDS`` counts.
    Shared by the live standings and those rebuilt from the ledger's totals, so both rank alike.

    The order uses the same rounded Elo as the ranks: the fit is iterative, so two bots with the
    same results come out of it equal only to its tolerance (127.23233459190988 against
    127.23233459190986 in a long tournament, issue 34), and sorting on the raw floats put the
    bot with fewer points above the other. Points per game break the tie, which orders bots as
    their net points do when they played equally many games (a round robin) and stays fair
    where they did not (a gauntlet's champion plays every game).
    """

    def ppg_or_zero(n: str) -> float:
        if match:
            return (per[n]["wins"] - per[n]["losses"]) / max(per[n]["units"], 1)
        return per[n]["net"] / max(per[n]["games"], 1)

    def key(n: str) -> tuple[float, float]:
        return round(elo.get(n, -math.inf), 6), round(ppg_or_zero(n), 6)

    order = sorted(names, key=lambda n: (-key(n)[0], -key(n)[1], names.index(n)))
    bots: list[BotStanding] = []
    previous: tuple[float, float] | None = None
    rank = 0
    for i, n in enumerate(order):
        key_n = key(n)
        if key_n != previous:
            rank = i + 1
            previous = key_n
        mine = per[n]
        bots.append(
            BotStanding(
                rank=rank,
                bot=n,
                games=mine["games"],
                units=mine["units"],
                wins=mine["wins"],
                losses=mine["losses"],
                forfeits=mine["forfeits"],
                net_points=mine["net"],
                ppg=mine["net"] / mine["games"] if mine["games"] else None,
                elo=elo.get(n),
                elo_se=elo_se.get(n),
                draws=mine["units"] - mine["wins"] - mine["losses"],
            )
        )
    return bots


def _pool_from_totals(d: TournamentDef, pool: PoolDef, totals: Aggregates) -> PoolStandings:
    names = [b.name for b in d.bots]
    per = {
        n: dict(
            zip(BOT_FIELDS, totals.bots.get((pool.label, n), [0] * len(BOT_FIELDS)), strict=True)
        )
        for n in names
    }
    elo, elo_se = ledger_ratings(totals.pairings, pool.label)
    bots = _ranked_bots(names, per, elo, elo_se, match=pool.match_length is not None)
    pairings: list[PairingStanding] = []
    for a, b in d.pairings():
        values = totals.pairings.get((pool.label, a, b), [0] * len(PAIRING_FIELDS))
        p = dict(zip(PAIRING_FIELDS, values, strict=True))
        paired, independent = pairing_summaries(values)
        pairings.append(
            PairingStanding(
                a=a,
                b=b,
                units=p["units"],
                a_wins=p["a_wins"],
                b_wins=p["b_wins"],
                draws=p["units"] - p["a_wins"] - p["b_wins"],
                a_net_points=p["a_net"],
                pairs=p["pairs"],
                unpaired=p["unpaired"],
                mean=paired.mean,
                se=paired.se,
                ci=paired.ci,
                method=paired.method,
                se_independent=independent.se,
            )
        )
    sprt = None
    state = totals.sprt.get(pool.label)
    if d.sprt is not None:
        sprt = _new_sprt(d, pool)
        if state is not None:
            sprt.restore(state)
    units_done = totals.pools.get(pool.label, [0, 0])[1]
    return _make_pool_standings(d, pool, units_done, bots, pairings, sprt)


def _make_pool_standings(
    d: TournamentDef,
    pool: PoolDef,
    units_done: int,
    bots: Sequence[BotStanding],
    pairings: Sequence[PairingStanding],
    sprt: Sprt | None,
) -> PoolStandings:
    """A pool's standings from its counts, ranked bots, pairings and SPRT (the live tally and the
    ledger's totals both end here)."""
    status = None
    if sprt is not None:
        status = SprtStatus(
            sprt.status_line(), sprt.decision, sprt.decided_at, sprt.n, sprt.llr, sprt.bounds
        )
    return PoolStandings(
        label=pool.label,
        variant=pool.variant,
        options=dict(pool.options),
        match_length=pool.match_length,
        units_done=units_done,
        units_total=len(d.pairings()) * d.games,
        bots=tuple(bots),
        pairings=tuple(pairings),
        sprt=status,
    )
