"""What the spectator reads from a tournament database, through :mod:`nardy.arena.records.storage`.

Everything goes through the tournament's public view (:mod:`nardy.arena.service.public`): while a
duplicate-dice tournament runs, the games of a round still being played are withheld (their rolls
are the rolls of the round's games to come), from the lists, the counts, the game pages and the
standings alike.

The standings come from the ledger's totals (:mod:`nardy.arena.competition.ledger`, a few rows per pairing)
and are cached until the public game count or the status changes; requests that arrive while
they are being made wait for that one computation (one lock per tournament) instead of repeating
it. Stored games never change, so replayed games are cached by id. The fault kinds of each game
live in its JSON record, so they are read once per game the first time the games list is
filtered by fault.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nardy.arena.competition.ledger import points_se
from nardy.arena.competition.schedule import DefinitionError, TournamentDef
from nardy.arena.competition.standings import (
    Standings,
    standings_from_aggregates,
    standings_from_records,
)
from nardy.arena.records.storage import (
    POSTGRES_SCHEMES,
    GameRow,
    PostgresStore,
    SqliteStore,
    SqlStore,
    StorageError,
    Store,
    TournamentRow,
    open_store,
)
from nardy.arena.service.public import PublicView, public_view
from nardy.game_view import GameSteps, ReplayViewError, game_steps

__all__ = ["GameFilter", "NotFound", "Spectator"]

VIEW_TTL_S = 0.2
"""How long a tournament's public view is reused (its reads are a few queries)."""

RESULTS = ("white", "black", "aborted")
"""The games list's result filter: who won (or no winner)."""


class NotFound(LookupError):
    """A tournament or game that the database does not hold (HTTP 404)."""


def _is_url(db: str) -> bool:
    return db.startswith(POSTGRES_SCHEMES)


@dataclass(frozen=True, slots=True)
class GameFilter:
    """The games list's filters; empty strings mean "any"."""

    bot: str = ""
    pool: str = ""
    result: str = ""
    termination: str = ""
    fault: str = ""

    def matches(self, row: GameRow, faults: Iterable[str]) -> bool:
        if self.bot and self.bot not in (row.white, row.black):
            return False
        if self.pool and row.pool != self.pool:
            return False
        if self.result:
            won = "aborted" if row.winner is None else ("white", "black")[row.winner]
            if won != self.result:
                return False
        if self.termination and row.termination != self.termination:
            return False
        if self.fault:
            kinds = set(faults)
            return bool(kinds) if self.fault == "any" else self.fault in kinds
        return True


class Spectator:
    """Read-only access to one tournament database, shared by the web server's threads."""

    def __init__(self, db: str, *, replay_cache: int = 64) -> None:
        self.db = db
        # A SQLite file that does not exist yet (``nardy web`` started before ``nardy arena
        # run``) is opened by the first request that finds it; until then there is no tournament.
        self._store: Store | None = None
        self._open_lock = threading.Lock()
        if _is_url(db) or Path(db).exists():
            self._store = open_store(db, readonly=True)
        self._lock = threading.Lock()
        self._flights: dict[str, threading.Lock] = {}
        self._standings: dict[str, tuple[tuple[Any, ...], Standings, dict[Any, float]]] = {}
        self._games: OrderedDict[tuple[str, str], tuple[GameRow, GameSteps]] = OrderedDict()
        self._replay_cache = replay_cache
        self._faults: dict[str, dict[str, frozenset[str]]] = {}
        self._game_lists: dict[str, tuple[tuple[Any, ...], list[GameRow]]] = {}
        self._definitions: dict[str, tuple[str, TournamentDef | None]] = {}
        self._views: dict[str, tuple[float, PublicView]] = {}

    @property
    def store(self) -> Store:
        """The open store; :class:`NotFound` while the database file does not exist."""
        if self._store is None:
            with self._open_lock:
                if self._store is None:
                    if not Path(self.db).exists():
                        raise NotFound("the database holds no tournament yet")
                    self._store = open_store(self.db, readonly=True)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    # -- tournaments ------------------------------------------------------------------------------

    def _definition(self, row: TournamentRow) -> TournamentDef | None:
        text = repr(row.definition)
        with self._lock:
            cached = self._definitions.get(row.tournament_id)
        if cached is not None and cached[0] == text:
            return cached[1]
        try:
            definition: TournamentDef | None = TournamentDef.from_json(row.definition)
        except (KeyError, TypeError, ValueError, DefinitionError):
            definition = None
        with self._lock:
            self._definitions[row.tournament_id] = (text, definition)
        return definition

    def _view(self, row: TournamentRow) -> PublicView | None:
        """The public view (None: a tournament whose definition cannot be read; nothing of
        its games is shown)."""
        definition = self._definition(row)
        if definition is None or not isinstance(self.store, SqlStore):
            return None
        return public_view(self.store, row, definition)

    def _public(self, row: TournamentRow) -> TournamentRow:
        view = self._view(row)
        if view is None:
            return dataclasses.replace(row, games_stored=0, updated=row.created)
        return view.row

    def tournaments(self) -> list[TournamentRow]:
        """Every tournament as the public sees it, most recently updated first (none while
        the database file does not exist)."""
        try:
            store = self.store
        except NotFound:
            return []
        rows = [self._public(r) for r in store.tournaments()]
        return sorted(rows, key=lambda r: -r.updated)

    def _stored(self, tournament_id: str) -> TournamentRow:
        for row in self.store.tournaments():
            if row.tournament_id == tournament_id:
                return row
        raise NotFound(f"no tournament {tournament_id!r}")

    def tournament(self, tournament_id: str) -> TournamentRow:
        return self._public(self._stored(tournament_id))

    def view(self, tournament_id: str) -> PublicView:
        """The tournament's public view, read at most once per :data:`VIEW_TTL_S` (every live
        page polls it: a hundred viewers cost what one does)."""
        now = time.monotonic()
        with self._lock:
            cached = self._views.get(tournament_id)
        if cached is not None and now - cached[0] < VIEW_TTL_S:
            return cached[1]
        row = self._stored(tournament_id)
        view = self._view(row)
        if view is None:
            raise NotFound(f"tournament {tournament_id!r}: its stored definition is damaged")
        with self._lock:
            self._views[tournament_id] = (now, view)
        return view

    def standings(self, tournament_id: str) -> Standings:
        return self._cached_standings(tournament_id)[0]

    def points_se(self, tournament_id: str) -> dict[tuple[str, str], float]:
        """The standard error of each bot's points per game, ``(pool, bot) -> SE``: the sample
        SD of its net points per game over √n (games as independent; the pairings' table has
        the SE over duplicate pairs)."""
        return self._cached_standings(tournament_id)[1]

    def _cached_standings(
        self, tournament_id: str
    ) -> tuple[Standings, dict[tuple[str, str], float]]:
        with self._lock:
            flight = self._flights.setdefault(tournament_id, threading.Lock())
        # One computation at a time per tournament: who waits here finds it in the cache.
        with flight:
            view = self.view(tournament_id)
            row = view.row
            key = (row.games_stored, view.sealed, row.status, row.detail)
            with self._lock:
                cached = self._standings.get(tournament_id)
            if cached is not None and cached[0] == key:
                return cached[1], cached[2]
            standings, se = self._compute(view)
            with self._lock:
                self._standings[tournament_id] = (key, standings, se)
            return standings, se

    def _compute(self, view: PublicView) -> tuple[Standings, dict[tuple[str, str], float]]:
        row = view.row
        definition = self._definition(row)
        assert definition is not None and isinstance(self.store, SqlStore)
        store = self.store
        checked = public_view(store, self._stored(row.tournament_id), definition, check=True)
        if checked.consistent is False:
            # A column changed after its game was stored: the recount names the game and
            # refuses (HTTP 503), or counts the column where the record was changed too.
            standings_from_records(store, row.tournament_id)
        standings = standings_from_aggregates(
            definition,
            checked.totals,
            tournament_id=row.tournament_id,
            status=checked.row.status,
            detail=checked.row.detail,
        )
        return standings, points_se(checked.totals.bots)

    # -- games ------------------------------------------------------------------------------------

    def games(self, tournament_id: str) -> list[GameRow]:
        """The public stored games (without records), cached until that list changes."""
        view = self.view(tournament_id)
        key = (view.row.games_stored, view.sealed)
        with self._lock:
            cached = self._game_lists.get(tournament_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        rows = [r for r in self.store.games(tournament_id) if view.shows(r)]
        with self._lock:
            self._game_lists[tournament_id] = (key, rows)
        return rows

    def _stored_faults(self, tournament_id: str) -> dict[str, Any]:
        """``game_id -> the record's "faults" object`` for every stored game.

        The SQL stores let the database pick the one field out of each JSON record (SQLite's
        ``json_extract``, PostgreSQL's ``->``): ten times faster than parsing whole records,
        which is what any other :class:`Store` gets.
        """
        if isinstance(self.store, SqliteStore | PostgresStore):
            field = (
                "json_extract(record, '$.faults')"
                if isinstance(self.store, SqliteStore)
                else "(record::json -> 'faults')::text"
            )
            rows = self.store.query(  # the one query the Store protocol has no method for
                f"SELECT game_id, {field} AS faults FROM games WHERE tournament_id = ?",
                (tournament_id,),
            )
            return {r["game_id"]: json.loads(r["faults"] or "{}") for r in rows}
        return {
            row.game_id: (row.record or {}).get("faults") or {}
            for row in self.store.games(tournament_id, records=True)
        }

    def fault_kinds(self, tournament_id: str, rows: list[GameRow]) -> dict[str, frozenset[str]]:
        """Each game's fault kinds (read once per game, when first asked for)."""
        with self._lock:
            known = self._faults.setdefault(tournament_id, {})
            missing = any(r.game_id not in known for r in rows)
        if missing:
            found = {}
            for game_id, faults in self._stored_faults(tournament_id).items():
                kinds: set[str] = set()
                for seat in faults.values() if isinstance(faults, dict) else ():
                    kinds |= {kind for kind, n in (seat or {}).items() if n}
                found[game_id] = frozenset(kinds)
            with self._lock:
                known.update(found)
        return known

    def filtered_games(
        self, rows: list[GameRow], tournament_id: str, filters: GameFilter
    ) -> list[GameRow]:
        faults = self.fault_kinds(tournament_id, rows) if filters.fault else {}
        return [r for r in rows if filters.matches(r, faults.get(r.game_id, ()))]

    def game(self, tournament_id: str, game_id: str) -> tuple[GameRow, GameSteps]:
        """One public game, replayed. A game of a sealed round is answered exactly as a game
        that does not exist (its existence is news about its round's dice too)."""
        view = self.view(tournament_id)
        key = (tournament_id, game_id)
        with self._lock:
            cached = self._games.get(key)
            if cached is not None:
                self._games.move_to_end(key)
        missing = f"no game {game_id!r} in tournament {tournament_id}"
        if cached is not None:
            if not view.shows(cached[0]):  # pragma: no cover - a shown round never closes again
                raise NotFound(missing)
            return cached
        try:
            row = self.store.find_game(game_id, tournament_id)
        except StorageError:
            raise NotFound(missing) from None
        if not view.shows(row):
            raise NotFound(missing)
        assert row.record is not None
        try:
            steps = game_steps(row.record)
        except ReplayViewError as exc:
            raise NotFound(f"game {game_id!r} cannot be shown: {exc}") from None
        with self._lock:
            self._games[key] = (row, steps)
            while len(self._games) > self._replay_cache:
                self._games.popitem(last=False)
        return row, steps


def bot_names(record: dict[str, Any] | None) -> tuple[str, str]:
    """The names the bots gave themselves (a remote bot's ``BotInfo.name``), White's first."""
    if not record:
        return "", ""
    return tuple(  # type: ignore[return-value]
        str((record.get(seat) or {}).get("name") or (record.get(seat) or {}).get("bot_id") or "")
        for seat in ("white", "black")
    )
