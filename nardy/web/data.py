"""What the spectator reads from a tournament database, through :mod:`nardy.arena.storage`.

Stored games never change, so replayed games are cached by id; standings are cached until the
tournament's stored-game count or status changes. The fault kinds of each game live in its JSON
record, so they are read once per game the first time the games list is filtered by fault.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nardy.arena.storage import (
    POSTGRES_SCHEMES,
    GameRow,
    PostgresStore,
    SqliteStore,
    StorageError,
    Store,
    TournamentRow,
    open_store,
)
from nardy.arena.tournament import Standings, standings_from_store
from nardy.game_view import GameSteps, ReplayViewError, game_steps

__all__ = ["GameFilter", "NotFound", "Spectator"]

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
        self._standings: dict[str, tuple[tuple[int, str], Standings]] = {}
        self._games: OrderedDict[tuple[str, str], tuple[GameRow, GameSteps]] = OrderedDict()
        self._replay_cache = replay_cache
        self._faults: dict[str, dict[str, frozenset[str]]] = {}
        self._game_lists: dict[str, tuple[int, list[GameRow]]] = {}

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

    def tournaments(self) -> list[TournamentRow]:
        try:
            store = self.store
        except NotFound:
            return []
        return store.tournaments()

    def tournament(self, tournament_id: str) -> TournamentRow:
        for row in self.store.tournaments():
            if row.tournament_id == tournament_id:
                return row
        raise NotFound(f"no tournament {tournament_id!r}")

    def standings(self, tournament_id: str) -> Standings:
        row = self.tournament(tournament_id)
        key = (row.games_stored, row.status + row.detail)
        with self._lock:
            cached = self._standings.get(tournament_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        standings = standings_from_store(self.store, tournament_id)
        with self._lock:
            self._standings[tournament_id] = (key, standings)
        return standings

    def points_se(self, tournament_id: str) -> dict[tuple[str, str], float]:
        """The standard error of each bot's points per game, ``(pool, bot) -> SE``: the sample
        SD of its net points per game over √n (games as independent; the pairings' table has
        the SE over duplicate pairs)."""
        per: dict[tuple[str, str], list[int]] = {}
        for row in self.games(tournament_id):
            white = 0 if row.winner is None else row.points if row.winner == 0 else -row.points
            per.setdefault((row.pool, row.white), []).append(white)
            per.setdefault((row.pool, row.black), []).append(-white)
        out = {}
        for key, values in per.items():
            n = len(values)
            if n >= 2:
                mean = sum(values) / n
                variance = sum((v - mean) ** 2 for v in values) / (n - 1)
                out[key] = math.sqrt(variance / n)
        return out

    # -- games ------------------------------------------------------------------------------------

    def games(self, tournament_id: str) -> list[GameRow]:
        """The stored games (without records), cached until another game is stored."""
        stored = self.tournament(tournament_id).games_stored
        with self._lock:
            cached = self._game_lists.get(tournament_id)
        if cached is not None and cached[0] == stored:
            return cached[1]
        rows = self.store.games(tournament_id)
        with self._lock:
            self._game_lists[tournament_id] = (len(rows), rows)
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
            rows = self.store._query(  # the one query the Store protocol has no method for
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
        key = (tournament_id, game_id)
        with self._lock:
            cached = self._games.get(key)
            if cached is not None:
                self._games.move_to_end(key)
                return cached
        try:
            row = self.store.find_game(game_id, tournament_id)
        except StorageError as exc:
            # The store's message begins with the database's path, which no page shows.
            label = f"{getattr(self.store, 'label', '')}: "
            raise NotFound(str(exc).removeprefix(label)) from None
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
