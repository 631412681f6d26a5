"""Durable storage of tournaments and their games.

The engine talks to a :class:`Store` (a small protocol); :class:`SqliteStore` implements it in one
SQLite file (stdlib :mod:`sqlite3`, WAL journal). Each finished game is one row, written with its
full JSON record in a single transaction the moment the game ends, so a run killed at any point
loses no finished game, and the ``PRIMARY KEY (tournament_id, game_id)`` makes storing a game twice
impossible (:class:`DuplicateGameError`).

Only the process running the tournament writes; any number of readers (``nardy arena standings``)
may read the file at the same time. ``synchronous=NORMAL`` in WAL mode survives a killed process
without losing a committed game; after a power cut the last few commits may be missing (those games
are simply played again on resume), and the file is never corrupted.

PostgreSQL: :func:`open_store` recognises ``postgresql://`` URLs, but no PostgreSQL store is
implemented yet; such a URL gives a clear error (see docs/tournaments.md).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nardy.core.errors import NardyError

__all__ = [
    "MEMORY",
    "SCHEMA_VERSION",
    "DuplicateGameError",
    "GameRow",
    "SqliteStore",
    "StorageError",
    "Store",
    "TournamentRow",
    "open_store",
]

SCHEMA_VERSION = 1

MEMORY = ":memory:"
"""The target of an in-memory store (``open_store(MEMORY)``): nothing survives the process."""


class StorageError(NardyError, RuntimeError):
    """The store cannot be opened or used (not a database, locked, wrong schema ...)."""


class DuplicateGameError(StorageError):
    """A game id that is already stored for this tournament."""


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A stored tournament."""

    tournament_id: str
    name: str
    definition: dict[str, Any]
    status: str
    """``pending``, ``running``, ``finished``, ``stopped`` (SPRT decided) or ``interrupted``."""
    detail: str
    games_total: int
    games_stored: int
    created: float
    updated: float


@dataclass(frozen=True, slots=True)
class GameRow:
    """One stored game: the columns statistics need, and (optionally) the full record."""

    tournament_id: str
    game_id: str
    unit_id: str
    pool: str
    a: str
    b: str
    round: int
    leg: int
    game_no: int
    white: str
    black: str
    seed: int
    winner: int | None
    """0 White, 1 Black, None for an aborted game."""
    points: int
    """What the winner scored (cube and gammons included)."""
    termination: str
    finished: float
    record: dict[str, Any] | None = None

    @property
    def a_points(self) -> int:
        """Points from ``a``'s view: positive when ``a`` won."""
        if self.winner is None:
            return 0
        a_colour = 0 if self.leg == 0 else 1
        return self.points if self.winner == a_colour else -self.points


class Store(Protocol):
    """What the tournament engine needs from storage."""

    def open_tournament(
        self,
        tournament_id: str,
        name: str,
        definition: dict[str, Any],
        identity: dict[str, Any],
        games_total: int,
    ) -> None:
        """Create the tournament, or check that the stored one has the same identity (and
        update its definition: e.g. more games)."""

    def set_status(self, tournament_id: str, status: str, detail: str = "") -> None: ...

    def save_game(self, row: GameRow, record: dict[str, Any]) -> None:
        """Store one finished game with its record, atomically; :class:`DuplicateGameError`
        if the game id is already stored."""

    def games(self, tournament_id: str, *, records: bool = False) -> list[GameRow]:
        """The stored games in the order they were stored."""

    def tournaments(self) -> list[TournamentRow]:
        """Every stored tournament, most recently updated first."""

    def find_game(self, game_id: str, tournament_id: str | None = None) -> GameRow:
        """One game with its record; :class:`StorageError` if absent or ambiguous."""

    def close(self) -> None: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    identity TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    games_total INTEGER NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    tournament_id TEXT NOT NULL REFERENCES tournaments(tournament_id),
    game_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    pool TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    round INTEGER NOT NULL,
    leg INTEGER NOT NULL,
    game_no INTEGER NOT NULL,
    white TEXT NOT NULL,
    black TEXT NOT NULL,
    seed INTEGER NOT NULL,
    winner INTEGER,
    points INTEGER NOT NULL,
    termination TEXT NOT NULL,
    finished REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (tournament_id, game_id)
);
CREATE INDEX IF NOT EXISTS games_by_id ON games (game_id);
"""

_GAME_COLUMNS = (
    "tournament_id, game_id, unit_id, pool, a, b, round, leg, game_no, white, black, seed, "
    "winner, points, termination, finished"
)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


class SqliteStore:
    """A :class:`Store` in one SQLite file. Safe to share between threads (one lock)."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        """Open (``readonly``: an existing file, never created nor changed by this object).
        ``":memory:"`` is a private in-memory database (gone with this object)."""
        self.path = Path(path)
        self.in_memory = str(path) == MEMORY
        self._lock = threading.Lock()
        if self.in_memory and readonly:
            raise StorageError("an in-memory database cannot be opened read-only")
        if readonly and not self.path.exists():
            raise StorageError(f"{self.path}: no such database")
        try:
            if readonly:
                # mode=rw: never create a file; a WAL reader still needs the -shm file.
                uri = f"file:{self.path.resolve()}?mode=rw"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
            else:
                target = MEMORY if self.in_memory else self.path
                self._db = sqlite3.connect(target, check_same_thread=False, timeout=30)
            self._db.row_factory = sqlite3.Row
            self._setup(readonly)
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: {exc}") from None

    def _setup(self, readonly: bool) -> None:
        db = self._db
        if not readonly:
            if not self.in_memory:
                mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":  # pragma: no cover - e.g. some network filesystems
                    raise StorageError(f"{self.path}: cannot use the WAL journal (got {mode})")
                db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            with db:
                db.executescript(_SCHEMA)
                db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)",
                    (str(SCHEMA_VERSION),),
                )
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.OperationalError:
            raise StorageError(f"{self.path}: not a nardy tournament database") from None
        if row is None or row[0] != str(SCHEMA_VERSION):
            found = None if row is None else row[0]
            raise StorageError(
                f"{self.path}: tournament database schema {found}, this nardy reads {SCHEMA_VERSION}"
            )

    def _run(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._db.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    # -- tournaments ------------------------------------------------------------------------------

    def open_tournament(
        self,
        tournament_id: str,
        name: str,
        definition: dict[str, Any],
        identity: dict[str, Any],
        games_total: int,
    ) -> None:
        now = time.time()
        with self._lock:
            try:
                with self._db:
                    row = self._db.execute(
                        "SELECT identity FROM tournaments WHERE tournament_id = ?",
                        (tournament_id,),
                    ).fetchone()
                    if row is None:
                        self._db.execute(
                            "INSERT INTO tournaments (tournament_id, name, definition, identity, "
                            "status, games_total, created, updated) "
                            "VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)",
                            (
                                tournament_id,
                                name,
                                _canonical(definition),
                                _canonical(identity),
                                games_total,
                                now,
                                now,
                            ),
                        )
                        return
                    if json.loads(row[0]) != json.loads(_canonical(identity)):
                        raise StorageError(
                            f"{self.path}: tournament {tournament_id} is stored with a different "
                            "definition (bots, variants, seed or format); use another name or file"
                        )
                    self._db.execute(
                        "UPDATE tournaments SET definition = ?, games_total = ?, updated = ? "
                        "WHERE tournament_id = ?",
                        (_canonical(definition), games_total, now, tournament_id),
                    )
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    def set_status(self, tournament_id: str, status: str, detail: str = "") -> None:
        with self._lock:
            try:
                with self._db:
                    self._db.execute(
                        "UPDATE tournaments SET status = ?, detail = ?, updated = ? "
                        "WHERE tournament_id = ?",
                        (status, detail, time.time(), tournament_id),
                    )
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    def tournaments(self) -> list[TournamentRow]:
        rows = self._run(
            "SELECT t.*, (SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.tournament_id) "
            "AS stored FROM tournaments t ORDER BY t.updated DESC"
        )
        return [
            TournamentRow(
                tournament_id=r["tournament_id"],
                name=r["name"],
                definition=json.loads(r["definition"]),
                status=r["status"],
                detail=r["detail"],
                games_total=r["games_total"],
                games_stored=r["stored"],
                created=r["created"],
                updated=r["updated"],
            )
            for r in rows
        ]

    # -- games ----------------------------------------------------------------------------------

    def save_game(self, row: GameRow, record: dict[str, Any]) -> None:
        values = (
            row.tournament_id,
            row.game_id,
            row.unit_id,
            row.pool,
            row.a,
            row.b,
            row.round,
            row.leg,
            row.game_no,
            row.white,
            row.black,
            row.seed,
            row.winner,
            row.points,
            row.termination,
            row.finished,
            json.dumps(record, separators=(",", ":")),
        )
        with self._lock:
            try:
                with self._db:  # one transaction: the game and its record, or nothing
                    self._db.execute(
                        f"INSERT INTO games ({_GAME_COLUMNS}, record) "
                        f"VALUES ({', '.join('?' * len(values))})",
                        values,
                    )
                    self._db.execute(
                        "UPDATE tournaments SET updated = ? WHERE tournament_id = ?",
                        (row.finished, row.tournament_id),
                    )
            except sqlite3.IntegrityError as exc:
                if "UNIQUE" in str(exc) or "PRIMARY" in str(exc):
                    raise DuplicateGameError(
                        f"game {row.game_id} of {row.tournament_id} is already stored"
                    ) from None
                raise StorageError(f"{self.path}: {exc}") from None
            except sqlite3.Error as exc:
                raise StorageError(f"{self.path}: {exc}") from None

    @staticmethod
    def _game(r: sqlite3.Row, with_record: bool) -> GameRow:
        return GameRow(
            tournament_id=r["tournament_id"],
            game_id=r["game_id"],
            unit_id=r["unit_id"],
            pool=r["pool"],
            a=r["a"],
            b=r["b"],
            round=r["round"],
            leg=r["leg"],
            game_no=r["game_no"],
            white=r["white"],
            black=r["black"],
            seed=r["seed"],
            winner=r["winner"],
            points=r["points"],
            termination=r["termination"],
            finished=r["finished"],
            record=json.loads(r["record"]) if with_record else None,
        )

    def games(self, tournament_id: str, *, records: bool = False) -> list[GameRow]:
        columns = _GAME_COLUMNS + (", record" if records else "")
        rows = self._run(
            f"SELECT {columns} FROM games WHERE tournament_id = ? ORDER BY rowid",
            (tournament_id,),
        )
        try:
            return [self._game(r, records) for r in rows]
        except (ValueError, KeyError) as exc:
            raise StorageError(f"{self.path}: a stored record is damaged: {exc}") from None

    def find_game(self, game_id: str, tournament_id: str | None = None) -> GameRow:
        sql = f"SELECT {_GAME_COLUMNS}, record FROM games WHERE game_id = ?"
        params: list[Any] = [game_id]
        if tournament_id is not None:
            sql += " AND tournament_id = ?"
            params.append(tournament_id)
        rows = self._run(sql, params)
        if not rows:
            where = f" in tournament {tournament_id}" if tournament_id else ""
            raise StorageError(f"{self.path}: no game {game_id!r}{where}")
        if len(rows) > 1:
            ids = ", ".join(sorted(r["tournament_id"] for r in rows))
            raise StorageError(
                f"game {game_id!r} is in several tournaments ({ids}); choose one with --tournament"
            )
        try:
            return self._game(rows[0], True)
        except ValueError as exc:
            raise StorageError(f"{self.path}: the record of {game_id} is damaged: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(target: str | Path, *, readonly: bool = False) -> Store:
    """The store at ``target``: a SQLite file path (created if needed unless ``readonly``), or
    :data:`MEMORY` (``":memory:"``) for a database that lives in this process only."""
    text = str(target)
    if text.startswith(("postgres://", "postgresql://")):
        raise StorageError(
            "PostgreSQL storage is not implemented yet; use a SQLite file (--db FILE)"
        )
    return SqliteStore(text, readonly=readonly)
