"""Durable storage of tournaments and their games.

The engine talks to a :class:`Store` (a small protocol), implemented by two backends that share
one schema and the same SQL (:class:`SqlStore`; they differ only in a few column types, the
placeholders, the driver and its errors):

* :class:`SqliteStore`: one SQLite file (stdlib :mod:`sqlite3`, WAL journal), the default;
* :class:`PostgresStore`: a PostgreSQL database (``postgresql://user:pass@host:port/db``), for an
  arena shared by several processes or machines. It needs psycopg 3, an optional dependency
  (``pip install 'nardy[postgres]'``).

Each finished game is one row, written with its full JSON record in a single transaction the
moment the game ends, so a run killed at any point loses no finished game, and the
``PRIMARY KEY (tournament_id, game_id)`` makes storing a game twice impossible
(:class:`DuplicateGameError`), whichever process tries.

SQLite: only the process running the tournament writes; any number of readers (``nardy arena
standings``) may read the file at the same time. ``synchronous=NORMAL`` in WAL mode survives a
killed process without losing a committed game; after a power cut the last few commits may be
missing (those games are simply played again on resume), and the file is never corrupted.

The store only stores: beside each game it writes the tournament's running totals in the same
transaction, as its :class:`TotalsKeeper` (the competition's,
:mod:`nardy.arena.competition.totals`) counts them from the rows of that transaction
(:class:`LedgerTables`); it neither parses a definition nor analyses a game.

PostgreSQL: any number of processes may write and read at once, each on its own connection; the
server's durability settings apply. A connection that broke (e.g. the server restarted) is opened
again by the next call; the call that found it broken fails with a :class:`StorageError`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol
from urllib.parse import urlsplit, urlunsplit

from nardy.arena.records.ledger_rows import BOT_FIELDS, PAIRING_FIELDS, Aggregates, UnitState
from nardy.core.errors import NardyError
from nardy.core.record import GameRecord

if TYPE_CHECKING:
    import psycopg

    from nardy.arena.competition.schedule import ScheduledUnit

__all__ = [
    "MEMORY",
    "POSTGRES_SCHEMES",
    "SCHEMA_VERSION",
    "TERMINATIONS",
    "Counted",
    "DiceRow",
    "DuplicateGameError",
    "GameRow",
    "LedgerSnapshot",
    "LedgerTables",
    "MalformedDatabaseError",
    "PostgresStore",
    "SqlStore",
    "SqliteStore",
    "StorageError",
    "Store",
    "TotalsKeeper",
    "TournamentRow",
    "open_store",
    "stored_tournament",
    "totals_keeper",
]

SCHEMA_VERSION = 2
"""2: the standings ledger (:mod:`nardy.arena.competition.ledger`); a version 1 database is migrated when
a writer opens it (readers still read it, recounting standings from the games)."""

READABLE_VERSIONS = ("1", str(SCHEMA_VERSION))

MEMORY = ":memory:"
"""The target of an in-memory store (``open_store(MEMORY)``): nothing survives the process."""

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""How a PostgreSQL URL given to :func:`open_store` (and ``--db``) starts."""


class StorageError(NardyError, RuntimeError):
    """The store cannot be opened or used (not a database, locked, wrong schema ...)."""


class DuplicateGameError(StorageError):
    """A game id that is already stored for this tournament."""


class MalformedDatabaseError(StorageError):
    """A SQLite file whose pages are damaged (SQLite's ``quick_check`` fails). Refused when it is
    opened, by every command: the standings are read from the ledger's few rows, so a damaged
    page holding game records went unnoticed until ``nardy arena verify`` read them."""


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

    @classmethod
    def of_unit(
        cls,
        tournament_id: str,
        unit: ScheduledUnit,
        game_no: int,
        *,
        winner: int | None,
        points: int,
        termination: str,
        finished: float,
        record: dict[str, Any] | None = None,
    ) -> GameRow:
        """The row of game ``game_no`` of ``unit``: its ids, bots, seats and dice seed are the
        schedule's, the rest is the game's result."""
        return cls(
            tournament_id=tournament_id,
            game_id=unit.game_id(game_no),
            unit_id=unit.unit_id,
            pool=unit.pool,
            a=unit.a,
            b=unit.b,
            round=unit.round,
            leg=unit.leg,
            game_no=game_no,
            white=unit.white,
            black=unit.black,
            seed=unit.game_seed(game_no),
            winner=winner,
            points=points,
            termination=termination,
            finished=finished,
            record=record,
        )

    @staticmethod
    def record_columns(record: GameRecord) -> dict[str, Any]:
        """The columns a stored game takes from its record: its ids and seats (the record's
        tags and seats), its dice seed and its outcome. The row is this codec of the record it
        stores beside them (``a``, ``b`` and ``finished`` are the schedule's and the clock's),
        so that the audit checks one against the other (:func:`nardy.arena.records.verify.check_row`)."""
        tags = dict(record.tags)
        outcome = record.outcome
        winner = None if outcome is None else outcome.winner
        return {
            "game_id": record.game_id,
            "tournament_id": tags.get("tournament_id"),
            "unit_id": tags.get("unit_id"),
            "pool": tags.get("pool"),
            "round": tags.get("round"),
            "leg": tags.get("leg"),
            "game_no": None if record.setup is None else record.match.game_no,
            "seed": record.seed,
            "white": (record.players[0].seat or {}).get("bot_id"),
            "black": (record.players[1].seat or {}).get("bot_id"),
            "winner": winner,
            "points": 0 if outcome is None or winner is None else outcome.points,
            "termination": "aborted" if outcome is None else outcome.termination,
        }

    @property
    def a_points(self) -> int:
        """Points from ``a``'s view: positive when ``a`` won."""
        if self.winner is None:
            return 0
        a_colour = 0 if self.leg == 0 else 1
        return self.points if self.winner == a_colour else -self.points


@dataclass(frozen=True, slots=True)
class DiceRow:
    """A tournament's commitment to its seed (:mod:`nardy.arena.records.audit`, ``docs/audit.md``).

    ``salt`` is secret until ``revealed`` (a timestamp) is set; ``revealed_seed`` is the seed
    published at that moment."""

    tournament_id: str
    scheme: str
    commitment: str
    """SHA-256 hex digest over the scheme's prefix, the salt and the seed."""
    salt: str
    """32 random bytes as hex."""
    created: float
    revealed: float | None
    revealed_seed: int | None


@dataclass(slots=True)
class LedgerSnapshot:
    """What :meth:`SqlStore.ledger_snapshot` read, all of one moment."""

    totals: Aggregates
    columns: list[dict[str, Any]] | None = None
    """:meth:`SqlStore.column_totals`, when asked for."""
    sealed: frozenset[tuple[str, int]] = frozenset()
    """``(pool, round)`` of the rounds found sealed."""
    sealed_games: list[GameRow] = field(default_factory=list)
    """Their games (without records), in the order stored."""
    last_public_finished: float | None = None
    """When the last game of a round not sealed finished (None: no such round)."""


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

    def save_game(
        self, row: GameRow, record: dict[str, Any], adjusted: float | None = None
    ) -> None:
        """Store one finished game with its record, atomically; :class:`DuplicateGameError`
        if the game id is already stored. ``adjusted``: its luck-adjusted points for ``a``, when
        a luck-adjusted SPRT needs them and the caller has them (else the store analyses it)."""

    def save_games(
        self,
        games: Sequence[tuple[GameRow, dict[str, Any]]],
        adjusted: Mapping[str, float] | None = None,
    ) -> None:
        """Store several finished games in one transaction (all or none), in this order;
        :class:`DuplicateGameError` if one of them is already stored. ``adjusted``: luck-adjusted
        points for ``a`` by game id, as :meth:`save_game`'s."""

    def games(self, tournament_id: str, *, records: bool = False) -> list[GameRow]:
        """The stored games in the order they were stored."""

    def tournaments(self) -> list[TournamentRow]:
        """Every stored tournament, most recently updated first."""

    def find_game(self, game_id: str, tournament_id: str | None = None) -> GameRow:
        """One game with its record; :class:`StorageError` if absent or ambiguous."""

    def commit_dice(self, tournament_id: str, scheme: str, commitment: str, salt: str) -> DiceRow:
        """Store a tournament's dice commitment unless it has one; the stored one either way."""

    def dice(self, tournament_id: str) -> DiceRow | None:
        """The tournament's dice commitment (None: none stored, e.g. an older database)."""

    def reveal_dice(self, tournament_id: str, seed: int) -> DiceRow:
        """Publish the seed (once: a second call keeps the first reveal); the row after it."""

    def close(self) -> None: ...


def stored_tournament(store: Store, tournament_id: str | None = None) -> TournamentRow:
    """A stored tournament's row: ``tournament_id``'s, or the most recently updated one when
    None; :class:`StorageError`, one line, when the store has no such tournament."""
    rows = store.tournaments()
    if not rows:
        raise StorageError("the database holds no tournament")
    if tournament_id is None:
        return rows[0]
    for row in rows:
        if row.tournament_id == tournament_id:
            return row
    known = ", ".join(r.tournament_id for r in rows)
    raise StorageError(f"no tournament {tournament_id!r} (stored: {known})")


# -- the shared SQL -------------------------------------------------------------------------------

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    identity TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    games_total INTEGER NOT NULL,
    created {real} NOT NULL,
    updated {real} NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS games (
    {games_seq}tournament_id TEXT NOT NULL REFERENCES tournaments(tournament_id),
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
    seed {int64} NOT NULL,
    winner INTEGER,
    points INTEGER NOT NULL,
    termination TEXT NOT NULL,
    finished {real} NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (tournament_id, game_id)
)""",
    "CREATE INDEX IF NOT EXISTS games_by_id ON games (game_id)",
    """CREATE TABLE IF NOT EXISTS dice_commitments (
    tournament_id TEXT PRIMARY KEY REFERENCES tournaments(tournament_id),
    scheme TEXT NOT NULL,
    commitment TEXT NOT NULL,
    salt TEXT NOT NULL,
    created {real} NOT NULL,
    revealed {real},
    revealed_seed {int64}
)""",
    "CREATE INDEX IF NOT EXISTS games_by_round ON games (tournament_id, pool, round)",
    # Covers SqlStore.column_totals: the ledger's check reads this index, not the records.
    "CREATE INDEX IF NOT EXISTS games_totals ON games "
    "(tournament_id, pool, a, b, leg, white, black, winner, termination, points)",
    """CREATE TABLE IF NOT EXISTS ledger_units (
    tournament_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    games INTEGER NOT NULL,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    last_a INTEGER NOT NULL,
    done INTEGER NOT NULL,
    aborted INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, unit_id)
)""",
    """CREATE TABLE IF NOT EXISTS ledger_bots (
    tournament_id TEXT NOT NULL,
    pool TEXT NOT NULL,
    bot TEXT NOT NULL,
    {bot_fields},
    PRIMARY KEY (tournament_id, pool, bot)
)""",
    """CREATE TABLE IF NOT EXISTS ledger_pairings (
    tournament_id TEXT NOT NULL,
    pool TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    {pairing_fields},
    PRIMARY KEY (tournament_id, pool, a, b)
)""",
    """CREATE TABLE IF NOT EXISTS ledger_pools (
    tournament_id TEXT NOT NULL,
    pool TEXT NOT NULL,
    games INTEGER NOT NULL,
    units_done INTEGER NOT NULL,
    sprt TEXT,
    PRIMARY KEY (tournament_id, pool)
)""",
    """CREATE TABLE IF NOT EXISTS ledger_rounds (
    tournament_id TEXT NOT NULL,
    pool TEXT NOT NULL,
    round INTEGER NOT NULL,
    games INTEGER NOT NULL,
    units_done INTEGER NOT NULL,
    finished {real} NOT NULL,
    PRIMARY KEY (tournament_id, pool, round)
)""",
)
"""The tables, one statement each, with the few column types that differ between backends as
``{real}`` (a float64 timestamp), ``{int64}`` (a 63-bit seed) and ``{games_seq}`` (the column
that orders games as stored, where the backend has no implicit one). The ``ledger_*`` tables hold
the standings' running totals (:mod:`nardy.arena.competition.ledger`), written with each game.

The ledger's integer columns are BIGINT on PostgreSQL (sums of squares of points grow)."""

_LEDGER_TABLES = ("ledger_units", "ledger_bots", "ledger_pairings", "ledger_pools", "ledger_rounds")

_LEDGER_BATCH = 2000
"""Games counted per query when the ledger is rebuilt from the games (migration)."""

_GAME_COLUMNS = (
    "tournament_id, game_id, unit_id, pool, a, b, round, leg, game_no, white, black, seed, "
    "winner, points, termination, finished"
)

_ADD_GAME = (
    f"INSERT INTO games ({_GAME_COLUMNS}, record) "
    f"VALUES ({', '.join('?' * (len(_GAME_COLUMNS.split(',')) + 1))})"
)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def _compact(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


TERMINATIONS = (
    "borne_off",
    "double_dropped",
    "time_forfeit",
    "bot_failure",
    "aborted",
    "mother",
    "draw",
)
"""What a stored game's ``termination`` column may hold (the runner's terminations)."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_game_columns(r: _Row) -> None:
    """Refuse a row whose columns the standings use hold what no game can have (a damaged or
    hand-edited database): one :class:`ValueError` line naming the game and the column."""

    def bad(column: str, want: str) -> ValueError:
        return ValueError(f"game {r['game_id']}: column {column} holds {r[column]!r}, not {want}")

    if r["winner"] is not None and not (_is_int(r["winner"]) and r["winner"] in (0, 1)):
        raise bad("winner", "0 (White), 1 (Black) or NULL")
    if not (_is_int(r["points"]) and r["points"] >= 0):
        raise bad("points", "a whole number >= 0")
    if r["winner"] is None and r["points"] != 0:
        raise bad("points", "0 (the game has no winner)")
    if not (_is_int(r["leg"]) and r["leg"] in (0, 1)):
        raise bad("leg", "0 or 1")
    for column in ("round", "game_no", "seed"):
        if not (_is_int(r[column]) and r[column] >= 0):
            raise bad(column, "a whole number >= 0")
    if r["termination"] not in TERMINATIONS:
        raise bad("termination", " or ".join(TERMINATIONS))


class _Row(Protocol):
    """A result row, read by column name (:class:`sqlite3.Row`, psycopg's ``dict_row``)."""

    def __getitem__(self, key: str, /) -> Any: ...


class _Result(NamedTuple):
    rows: Sequence[_Row]
    rowcount: int


class SqlStore(ABC):
    """A :class:`Store` in an SQL database: the schema and every query, shared by the backends.

    A backend supplies the connection (:meth:`_execute` with ``?`` placeholders,
    :meth:`_transaction`), its column types (:attr:`_types`), the column that orders games as
    stored (:attr:`_order`) and how to recognise its errors. One connection per object, shared by
    threads under one lock.
    """

    _types: ClassVar[Mapping[str, str]]
    """The values of ``{real}``, ``{int64}`` and ``{games_seq}`` in the schema."""
    _order: ClassVar[str]
    """The column (or ``rowid``) that orders the games of a tournament as stored."""

    def __init__(
        self, label: str, error: type[Exception], keeper: TotalsKeeper | None = None
    ) -> None:
        """:param label: names the database in error messages (never with a password).
        :param error: the base class of the driver's errors.
        :param keeper: keeps the running totals as games are stored (:func:`totals_keeper`)."""
        self.label = label
        self._error = error
        self._lock = threading.Lock()
        self.has_ledger = True
        self._keeper = totals_keeper() if keeper is None else keeper

    # -- what a backend supplies -------------------------------------------------------------------

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        """Run one statement (``?`` placeholders); raises the driver's errors."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[object]:
        """A block whose statements commit together, or roll back on an exception."""

    @abstractmethod
    def _is_duplicate(self, exc: Exception) -> bool:
        """Whether a driver error is a primary-key violation."""

    @abstractmethod
    def _is_missing_table(self, exc: Exception) -> bool:
        """Whether a driver error says that a table (or a column of it) does not exist."""

    @abstractmethod
    def _close(self) -> None: ...

    def _snapshot(self) -> AbstractContextManager[object]:
        """A read transaction whose statements all see one moment of the database."""
        return self._transaction()

    def _before_schema(self) -> None:
        """Called in the schema's transaction before it is created (e.g. to take a lock)."""
        return None

    def _reconnect_if_broken(self) -> None:
        """Called (under the lock) before each operation."""
        return None

    # -- the shared part ---------------------------------------------------------------------------

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Serialise the callers and turn the driver's errors into :class:`StorageError`."""
        with self._lock:
            try:
                self._reconnect_if_broken()
                yield
            except self._error as exc:
                raise StorageError(f"{self.label}: {_first_line(exc)}") from None

    def _setup(self, readonly: bool) -> None:
        """Create the schema (unless ``readonly``) and check its version; on failure, close."""
        try:
            self._check_schema(readonly)
        except BaseException:
            self._close()
            raise

    def _schema_args(self) -> dict[str, str]:
        def columns(names: Sequence[str]) -> str:
            return ",\n    ".join(f"{n} {self._types['int64']} NOT NULL" for n in names)

        return {
            **self._types,
            "bot_fields": columns(BOT_FIELDS),
            "pairing_fields": columns(PAIRING_FIELDS),
        }

    def _check_schema(self, readonly: bool) -> None:
        with self._guard():
            if not readonly:
                with self._transaction():
                    self._before_schema()
                    args = self._schema_args()
                    for statement in _SCHEMA:
                        self._execute(statement.format(**args))
                    self._execute(
                        "INSERT INTO meta (key, value) VALUES ('schema', ?) "
                        "ON CONFLICT (key) DO NOTHING",
                        (str(SCHEMA_VERSION),),
                    )
                    rows = self._execute("SELECT value FROM meta WHERE key = 'schema'").rows
                    if rows and rows[0]["value"] == "1":
                        self._migrate_1_to_2()
            try:
                with self._transaction():
                    rows = self._execute("SELECT value FROM meta WHERE key = 'schema'").rows
            except self._error as exc:
                if not self._is_missing_table(exc):
                    raise
                raise StorageError(f"{self.label}: not a nardy tournament database") from None
        found = rows[0]["value"] if rows else None
        if found not in READABLE_VERSIONS or (not readonly and found != str(SCHEMA_VERSION)):
            raise StorageError(
                f"{self.label}: tournament database schema {found}, this nardy reads {SCHEMA_VERSION}"
            )
        self.has_ledger = found == str(SCHEMA_VERSION)
        """False for a version 1 database opened read-only: standings are recounted."""

    def _migrate_1_to_2(self) -> None:
        """Version 1 had no ledger: count every tournament's stored games into it (in the
        schema's transaction: a migration interrupted leaves version 1 behind)."""
        for r in self._execute("SELECT tournament_id FROM tournaments").rows:
            self._rebuild_ledger(r["tournament_id"])
        self._execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    def query(self, sql: str, params: Sequence[Any] = ()) -> Sequence[_Row]:
        """The rows of one read-only ``sql`` in one snapshot, for a reader (the web's bot names
        and filters) that needs a query no method gives."""
        with self._guard(), self._transaction():  # one snapshot; read-only where the store is
            return self._execute(sql, params).rows

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one statement of another module's tables (``?`` placeholders; ``{real}`` and
        ``{int64}`` column types) in a transaction of its own; returns the rows as dicts."""
        with self._guard(), self._transaction():
            rows = self._execute(sql.format(**self._types), params).rows
        return [{key: row[key] for key in row.keys()} for row in rows]  # type: ignore[attr-defined]  # noqa: SIM118 - sqlite3.Row iterates values

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
        identity_text = _canonical(identity)
        with self._guard(), self._transaction():
            # Insert-or-nothing first, so that two processes opening the same new tournament at
            # once both succeed (the second one waits for the first one's row, then checks it).
            inserted = self._execute(
                "INSERT INTO tournaments (tournament_id, name, definition, identity, status, "
                "games_total, created, updated) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) "
                "ON CONFLICT (tournament_id) DO NOTHING",
                (tournament_id, name, _canonical(definition), identity_text, games_total, now, now),
            ).rowcount
            if inserted:
                return
            (row,) = self._execute(
                "SELECT identity, definition FROM tournaments WHERE tournament_id = ?",
                (tournament_id,),
            ).rows
            if json.loads(row["identity"]) != json.loads(identity_text):
                raise StorageError(
                    f"{self.label}: tournament {tournament_id} is stored with a different "
                    "definition (bots, variants, seed or format); use another name or database"
                )
            self._execute(
                "UPDATE tournaments SET definition = ?, games_total = ?, updated = ? "
                "WHERE tournament_id = ?",
                (_canonical(definition), games_total, now, tournament_id),
            )
            before = json.loads(row["definition"])
            if any(before.get(k) != definition.get(k) for k in ("games", "sprt")):
                # More games (or another SPRT) change which rounds exist and what the SPRT
                # was fed: count the stored games again under the new definition.
                self._rebuild_ledger(tournament_id)

    def set_status(self, tournament_id: str, status: str, detail: str = "") -> None:
        with self._guard(), self._transaction():
            self._execute(
                "UPDATE tournaments SET status = ?, detail = ?, updated = ? WHERE tournament_id = ?",
                (status, detail, time.time(), tournament_id),
            )

    def tournaments(self) -> list[TournamentRow]:
        rows = self.query(
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

    def save_game(
        self, row: GameRow, record: dict[str, Any], adjusted: float | None = None
    ) -> None:
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
        with self._guard():
            try:
                with self._transaction():  # one transaction: the game, its record, its totals
                    self._execute(_ADD_GAME, values)
                    self._count(
                        [dataclasses.replace(row, record=record)],
                        None if adjusted is None else {row.game_id: adjusted},
                    )
                    self._execute(
                        "UPDATE tournaments SET updated = ? WHERE tournament_id = ?",
                        (row.finished, row.tournament_id),
                    )
            except self._error as exc:
                if self._is_duplicate(exc):
                    raise DuplicateGameError(
                        f"game {row.game_id} of {row.tournament_id} is already stored"
                    ) from None
                raise

    def save_games(
        self,
        games: Sequence[tuple[GameRow, dict[str, Any]]],
        adjusted: Mapping[str, float] | None = None,
    ) -> None:
        """One transaction for many games (what a writer fed by many workers needs: the cost of
        a commit is paid once per batch). A duplicate rolls the whole batch back."""
        if not games:
            return
        values = [
            (*(getattr(row, c.strip()) for c in _GAME_COLUMNS.split(",")), _compact(record))
            for row, record in games
        ]
        updated: dict[str, float] = {}
        for row, _ in games:
            updated[row.tournament_id] = max(row.finished, updated.get(row.tournament_id, 0.0))
        with self._guard():
            try:
                with self._transaction():
                    for v in values:
                        self._execute(_ADD_GAME, v)
                    self._count(
                        [dataclasses.replace(row, record=record) for row, record in games],
                        adjusted,
                    )
                    for tournament_id, when in updated.items():
                        self._execute(
                            "UPDATE tournaments SET updated = ? WHERE tournament_id = ?",
                            (when, tournament_id),
                        )
            except self._error as exc:
                if self._is_duplicate(exc):
                    ids = ", ".join(row.game_id for row, _ in games)
                    raise DuplicateGameError(
                        f"one of the games {ids} is already stored (nothing of the batch was)"
                    ) from None
                raise

    # -- the standings ledger (nardy.arena.competition.ledger) -----------------------------------------------

    def _count(self, games: Sequence[GameRow], adjusted: Mapping[str, float] | None = None) -> None:
        """Count ``games`` (just inserted, in this transaction) into their totals: the keeper's
        job (:class:`TotalsKeeper`), on this transaction's rows."""
        self._keeper.count(LedgerTables(self), games, adjusted)

    def _rebuild_ledger(self, tournament_id: str) -> None:
        """Count a tournament's stored games into its totals from nothing (in the caller's
        transaction), by the keeper."""
        self._keeper.rebuild(LedgerTables(self), tournament_id)

    def ledger(self, tournament_id: str) -> Aggregates | None:
        """The tournament's running totals (None: the database has no ledger, a schema 1
        database opened read-only)."""
        snapshot = self.ledger_snapshot(tournament_id)
        return None if snapshot is None else snapshot.totals

    def ledger_snapshot(
        self,
        tournament_id: str,
        *,
        check: bool = False,
        full_round: int = 0,
        sealed: Callable[[str, int, int], bool] | None = None,
    ) -> LedgerSnapshot | None:
        """The totals, and what goes with them, read in one snapshot of the database (a game
        stored meanwhile is in all of it or in none): with ``check``, :meth:`column_totals`;
        with ``sealed`` (``pool, round, units complete -> withheld?``, asked of the rounds with
        games and fewer than ``full_round`` units complete), the games of those rounds and the
        last finish time of the other rounds. None: no ledger (see :meth:`ledger`)."""
        if not self.has_ledger:
            return None
        t = (tournament_id,)
        out = LedgerSnapshot(Aggregates())
        totals = out.totals
        with self._guard(), self._snapshot():
            for r in self._execute("SELECT * FROM ledger_bots WHERE tournament_id = ?", t).rows:
                totals.bots[(r["pool"], r["bot"])] = [r[f] for f in BOT_FIELDS]
            rows = self._execute("SELECT * FROM ledger_pairings WHERE tournament_id = ?", t).rows
            for r in rows:
                totals.pairings[(r["pool"], r["a"], r["b"])] = [r[f] for f in PAIRING_FIELDS]
            for r in self._execute("SELECT * FROM ledger_pools WHERE tournament_id = ?", t).rows:
                totals.pools[r["pool"]] = [r["games"], r["units_done"]]
                if r["sprt"]:
                    totals.sprt[r["pool"]] = json.loads(r["sprt"])
            if check:
                out.columns = self._column_totals(tournament_id)
            if sealed is not None:
                self._sealed_rounds(tournament_id, full_round, sealed, out)
        return out

    def _sealed_rounds(
        self,
        tournament_id: str,
        full_round: int,
        sealed: Callable[[str, int, int], bool],
        out: LedgerSnapshot,
    ) -> None:
        rows = self._execute(
            "SELECT pool, round, units_done FROM ledger_rounds "
            "WHERE tournament_id = ? AND units_done < ? AND games > 0",
            (tournament_id, full_round),
        ).rows
        out.sealed = frozenset(
            (r["pool"], r["round"]) for r in rows if sealed(r["pool"], r["round"], r["units_done"])
        )
        for pool, round_ in sorted(out.sealed):
            games = self._execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE tournament_id = ? AND pool = ? "
                f"AND round = ? ORDER BY {self._order}",
                (tournament_id, pool, round_),
            ).rows
            try:
                out.sealed_games.extend(self._game(r, False) for r in games)
            except (ValueError, KeyError) as exc:
                raise StorageError(f"{self.label}: a stored game is damaged: {exc}") from None
        latest = self._execute(
            "SELECT pool, round, finished FROM ledger_rounds WHERE tournament_id = ? "
            "ORDER BY finished DESC LIMIT ?",
            (tournament_id, len(out.sealed) + 1),
        ).rows
        out.last_public_finished = next(
            (float(r["finished"]) for r in latest if (r["pool"], r["round"]) not in out.sealed),
            None,
        )

    def column_totals(self, tournament_id: str) -> list[dict[str, Any]]:
        """Games grouped by what the per-game totals depend on (pool, seats, pairing, winner,
        forfeit, draw), each group with its count and points: summed by the database (from a
        covering index), so that the ledger can be checked against the games' columns without
        reading every game."""
        with self._guard(), self._transaction():
            return self._column_totals(tournament_id)

    def _column_totals(self, tournament_id: str) -> list[dict[str, Any]]:
        forfeits = ", ".join(f"'{t}'" for t in ("time_forfeit", "bot_failure"))
        rows = self._execute(
            "SELECT pool, a, b, leg, white, black, winner, "
            f"CASE WHEN termination IN ({forfeits}) THEN 1 ELSE 0 END AS forfeit, "
            "CASE WHEN termination = 'draw' THEN 1 ELSE 0 END AS draw, "
            "COUNT(*) AS n, SUM(points) AS points "
            "FROM games WHERE tournament_id = ? "
            "GROUP BY pool, a, b, leg, white, black, winner, forfeit, draw",
            (tournament_id,),
        ).rows
        keys = (
            "pool",
            "a",
            "b",
            "leg",
            "white",
            "black",
            "winner",
            "forfeit",
            "draw",
            "n",
            "points",
        )
        return [{k: r[k] for k in keys} for r in rows]

    @staticmethod
    def _game(r: _Row, with_record: bool) -> GameRow:
        _check_game_columns(r)
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
        rows = self.query(
            f"SELECT {columns} FROM games WHERE tournament_id = ? ORDER BY {self._order}",
            (tournament_id,),
        )
        try:
            return [self._game(r, records) for r in rows]
        except (ValueError, KeyError) as exc:
            raise StorageError(f"{self.label}: a stored game is damaged: {exc}") from None

    def find_game(self, game_id: str, tournament_id: str | None = None) -> GameRow:
        sql = f"SELECT {_GAME_COLUMNS}, record FROM games WHERE game_id = ?"
        params: list[Any] = [game_id]
        if tournament_id is not None:
            sql += " AND tournament_id = ?"
            params.append(tournament_id)
        rows = self.query(sql, params)
        if not rows:
            where = f" in tournament {tournament_id}" if tournament_id else ""
            raise StorageError(f"{self.label}: no game {game_id!r}{where}")
        if len(rows) > 1:
            ids = ", ".join(sorted(r["tournament_id"] for r in rows))
            raise StorageError(
                f"game {game_id!r} is in several tournaments ({ids}); choose one with --tournament"
            )
        try:
            return self._game(rows[0], True)
        except ValueError as exc:
            raise StorageError(f"{self.label}: the stored game is damaged: {exc}") from None

    # -- dice commitments (nardy.arena.records.audit) ----------------------------------------------------

    @staticmethod
    def _dice(r: _Row) -> DiceRow:
        return DiceRow(
            tournament_id=r["tournament_id"],
            scheme=r["scheme"],
            commitment=r["commitment"],
            salt=r["salt"],
            created=r["created"],
            revealed=r["revealed"],
            revealed_seed=r["revealed_seed"],
        )

    def commit_dice(self, tournament_id: str, scheme: str, commitment: str, salt: str) -> DiceRow:
        with self._guard(), self._transaction():
            self._execute(
                "INSERT INTO dice_commitments (tournament_id, scheme, commitment, salt, created) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id) DO NOTHING",
                (tournament_id, scheme, commitment, salt, time.time()),
            )
            (row,) = self._execute(
                "SELECT * FROM dice_commitments WHERE tournament_id = ?", (tournament_id,)
            ).rows
        return self._dice(row)

    def dice(self, tournament_id: str) -> DiceRow | None:
        with self._guard():
            try:
                with self._transaction():
                    rows = self._execute(
                        "SELECT * FROM dice_commitments WHERE tournament_id = ?", (tournament_id,)
                    ).rows
            except self._error as exc:
                if self._is_missing_table(exc):  # a database from before commitments (readers)
                    return None
                raise
        return self._dice(rows[0]) if rows else None

    def reveal_dice(self, tournament_id: str, seed: int) -> DiceRow:
        with self._guard(), self._transaction():
            self._execute(
                "UPDATE dice_commitments SET revealed = ?, revealed_seed = ? "
                "WHERE tournament_id = ? AND revealed IS NULL",
                (time.time(), seed, tournament_id),
            )
            rows = self._execute(
                "SELECT * FROM dice_commitments WHERE tournament_id = ?", (tournament_id,)
            ).rows
        if not rows:
            raise StorageError(f"{self.label}: tournament {tournament_id} has no dice commitment")
        return self._dice(rows[0])

    def close(self) -> None:
        with self._lock:
            self._close()


# -- SQLite ---------------------------------------------------------------------------------------


class Counted(Protocol):
    """What a keeper counted, to be added to the stored totals
    (:class:`nardy.arena.competition.ledger.Ledger`)."""

    @property
    def changed(self) -> Mapping[str, UnitState]:
        """The units changed, as they now are."""

    @property
    def delta(self) -> Aggregates:
        """What the games counted add to the totals."""


class TotalsKeeper(Protocol):
    """Keeps a tournament's running totals in the store's ``ledger_*`` tables
    (:class:`nardy.arena.competition.totals.TotalsKeeper`): the store calls it inside the
    transaction that stores games, so that games and totals commit together."""

    def count(
        self,
        tables: LedgerTables,
        games: Sequence[GameRow],
        adjusted: Mapping[str, float] | None = None,
    ) -> None: ...

    def rebuild(self, tables: LedgerTables, tournament_id: str) -> None: ...


class LedgerTables:
    """The rows a :class:`TotalsKeeper` reads and writes, in the store's open transaction (made
    by the store for one call of its keeper; never used outside it)."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store

    def error(self, message: str) -> StorageError:
        """The store's error for ``message`` (prefixed with the database's label)."""
        return StorageError(f"{self._store.label}: {message}")

    def definition_text(self, tournament_id: str) -> str | None:
        """The tournament's stored definition (JSON), None if it is not stored."""
        rows = self._store._execute(
            "SELECT definition FROM tournaments WHERE tournament_id = ?", (tournament_id,)
        ).rows
        return str(rows[0]["definition"]) if rows else None

    def unit(self, tournament_id: str, unit_id: str) -> UnitState | None:
        rows = self._store._execute(
            "SELECT * FROM ledger_units WHERE tournament_id = ? AND unit_id = ?",
            (tournament_id, unit_id),
        ).rows
        if not rows:
            return None
        r = rows[0]
        return UnitState(
            r["games"], (r["score0"], r["score1"]), r["last_a"], bool(r["done"]), bool(r["aborted"])
        )

    def sprt(self, tournament_id: str, pool: str) -> dict[str, Any] | None:
        rows = self._store._execute(
            "SELECT sprt FROM ledger_pools WHERE tournament_id = ? AND pool = ?",
            (tournament_id, pool),
        ).rows
        return json.loads(rows[0]["sprt"]) if rows and rows[0]["sprt"] else None

    def pool_sprts(self, tournament_id: str) -> list[tuple[int, str | None]]:
        """Each pool's games counted and its SPRT's state as stored (JSON text, or None)."""
        rows = self._store._execute(
            "SELECT games, sprt FROM ledger_pools WHERE tournament_id = ?", (tournament_id,)
        ).rows
        return [(r["games"], r["sprt"]) for r in rows]

    def with_record(self, game: object) -> GameRow:
        """``game`` (a stored row) with its record, read from the database if the row lacks it."""
        assert isinstance(game, GameRow)
        row = game
        if row.record is None:
            found = self._store._execute(
                "SELECT record FROM games WHERE tournament_id = ? AND game_id = ?",
                (row.tournament_id, row.game_id),
            ).rows
            if found:
                row = dataclasses.replace(row, record=json.loads(found[0]["record"]))
        return row

    def stored_games(self, tournament_id: str) -> Iterator[list[GameRow]]:
        """The tournament's stored games in the order stored, a batch at a time (a damaged row
        is left out here, and refused by the standings' check)."""
        store = self._store
        last = -1
        while True:
            rows = store._execute(
                f"SELECT {store._order} AS ord, {_GAME_COLUMNS} FROM games "
                f"WHERE tournament_id = ? AND {store._order} > ? ORDER BY {store._order} LIMIT ?",
                (tournament_id, last, _LEDGER_BATCH),
            ).rows
            if not rows:
                return
            last = rows[-1]["ord"]
            games = []
            for r in rows:
                try:
                    games.append(store._game(r, False))
                except (ValueError, KeyError):
                    continue
            yield games

    def _add_totals(
        self, table: str, keys: Sequence[str], fields: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> None:
        columns = (*keys, *fields)
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
            f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET "
            + ", ".join(f"{f} = {table}.{f} + excluded.{f}" for f in fields)
        )
        for values in rows:
            self._store._execute(sql, values)

    def write(self, tournament_id: str, ledger: Counted) -> None:
        """Add what ``ledger`` counted to the stored totals (its units as they now are)."""
        t = tournament_id
        for unit_id, u in ledger.changed.items():
            self._store._execute(
                "INSERT INTO ledger_units (tournament_id, unit_id, games, score0, score1, last_a, "
                "done, aborted) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tournament_id, unit_id) DO UPDATE SET games = excluded.games, "
                "score0 = excluded.score0, score1 = excluded.score1, last_a = excluded.last_a, "
                "done = excluded.done, aborted = excluded.aborted",
                (
                    t,
                    unit_id,
                    u.games,
                    u.score[0],
                    u.score[1],
                    u.last_a,
                    int(u.done),
                    int(u.aborted),
                ),
            )
        d = ledger.delta
        self._add_totals(
            "ledger_bots",
            ("tournament_id", "pool", "bot"),
            BOT_FIELDS,
            [(t, *key, *values) for key, values in d.bots.items()],
        )
        self._add_totals(
            "ledger_pairings",
            ("tournament_id", "pool", "a", "b"),
            PAIRING_FIELDS,
            [(t, *key, *values) for key, values in d.pairings.items()],
        )
        for pool, (games, done) in d.pools.items():
            sprt = d.sprt.get(pool)
            self._store._execute(
                "INSERT INTO ledger_pools (tournament_id, pool, games, units_done, sprt) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id, pool) DO UPDATE SET "
                "games = ledger_pools.games + excluded.games, "
                "units_done = ledger_pools.units_done + excluded.units_done, "
                "sprt = COALESCE(excluded.sprt, ledger_pools.sprt)",
                (t, pool, games, done, None if sprt is None else _compact(sprt)),
            )
        for (pool, rnd), (games, done) in d.rounds.items():
            when = d.finished.get((pool, rnd), 0.0)
            self._store._execute(
                "INSERT INTO ledger_rounds (tournament_id, pool, round, games, units_done, "
                "finished) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tournament_id, pool, round) "
                "DO UPDATE SET games = ledger_rounds.games + excluded.games, "
                "units_done = ledger_rounds.units_done + excluded.units_done, finished = CASE "
                "WHEN excluded.finished > ledger_rounds.finished THEN excluded.finished "
                "ELSE ledger_rounds.finished END",
                (t, pool, rnd, games, done, when),
            )

    def clear(self, tournament_id: str) -> None:
        """Delete the tournament's totals (before they are counted again from its games)."""
        for table in _LEDGER_TABLES:
            self._store._execute(f"DELETE FROM {table} WHERE tournament_id = ?", (tournament_id,))


class SqliteStore(SqlStore):
    """A :class:`Store` in one SQLite file. Safe to share between threads (one lock)."""

    _types: ClassVar[Mapping[str, str]] = {"real": "REAL", "int64": "INTEGER", "games_seq": ""}
    _order: ClassVar[str] = "rowid"

    def __init__(
        self, path: str | Path, *, readonly: bool = False, keeper: TotalsKeeper | None = None
    ) -> None:
        """Open (``readonly``: an existing file, never created nor changed by this object).
        ``":memory:"`` is a private in-memory database (gone with this object)."""
        self.path = Path(path)
        self.in_memory = str(path) == MEMORY
        super().__init__(str(self.path), sqlite3.Error, keeper)
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
                if not self.in_memory:
                    _create_private(self.path)
                target = MEMORY if self.in_memory else self.path
                self._db = sqlite3.connect(target, check_same_thread=False, timeout=30)
            self._db.row_factory = sqlite3.Row
            if not readonly:
                if not self.in_memory:
                    mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                    if str(mode).lower() != "wal":  # pragma: no cover - e.g. network filesystems
                        raise StorageError(f"{self.path}: cannot use the WAL journal (got {mode})")
                    self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
            if not self.in_memory:
                self._refuse_malformed()
        except sqlite3.Error as exc:
            self._db_close_quietly()
            raise StorageError(f"{self.path}: {exc}") from None
        except StorageError:
            self._db_close_quietly()
            raise
        self._setup(readonly)

    def _refuse_malformed(self) -> None:
        """Raise :class:`MalformedDatabaseError` unless SQLite's ``quick_check`` passes.

        Every page is checked, not only those the command is about to read: the standings come
        from the ledger's few rows, so a damaged page of game records would otherwise be found
        only by ``verify``, and a writer would go on adding games to a damaged file. The check is
        ``quick_check`` (the b-tree structure, page by page; not the indexes' contents, which
        ``integrity_check`` compares at several times the cost): about 0.07 s for 250 MB."""
        rows = self._db.execute("PRAGMA quick_check(1)").fetchall()
        found = str(rows[0][0]) if rows else "no answer"
        if found != "ok":
            # One line: SQLite's answer without its "*** in database main ***" heading.
            first = " ".join(found.replace("*** in database main ***", "").split())
            raise MalformedDatabaseError(
                f"{self.path}: malformed database (SQLite quick_check: {first}); restore a "
                "backup, or copy out what is readable with the sqlite3 shell's .recover"
            )

    def _db_close_quietly(self) -> None:
        """Close the connection of a store that failed to open (if there is one)."""
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        cursor = self._db.execute(sql, tuple(params))
        return _Result(cursor.fetchall(), cursor.rowcount)

    def _transaction(self) -> AbstractContextManager[object]:
        return self._db  # commits at the end of the block, rolls back on an exception

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        # sqlite3 opens no transaction for a SELECT: each would see its own moment. BEGIN
        # makes the first read fix the snapshot (WAL) until COMMIT.
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    def _is_duplicate(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and (
            "UNIQUE" in str(exc) or "PRIMARY" in str(exc)
        )

    def _is_missing_table(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.OperationalError)

    def _close(self) -> None:
        self._db.close()


# -- PostgreSQL -----------------------------------------------------------------------------------

_SCHEMA_LOCK = 0x6E61726479  # "nardy": the advisory lock that serialises creating the schema


def redact_url(url: str) -> str:
    """``url`` without its password and query (for messages and logs)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.partition(':')[0]}:***@{host}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:  # e.g. a bad port: say no more than the scheme
        return url.partition("://")[0] + "://..."


class PostgresStore(SqlStore):
    """A :class:`Store` in a PostgreSQL database, given by a ``postgresql://`` URL (libpq's
    syntax: ``postgresql://user:password@host:port/dbname?sslmode=require``; whatever the URL
    leaves out comes from the ``PG*`` environment variables and libpq's defaults).

    The tables are created if missing (in the connection's default schema, so
    ``?options=-csearch_path%3Dname`` selects another one); ``readonly`` creates nothing and
    runs every transaction read-only. Safe to share between threads (one connection, one lock);
    other processes use their own connections. No session state and no prepared statements, so
    a transaction-mode pooler may stand in between. Needs psycopg 3 (``nardy[postgres]``).
    """

    _types: ClassVar[Mapping[str, str]] = {
        "real": "DOUBLE PRECISION",
        "int64": "BIGINT",
        "games_seq": "seq BIGINT GENERATED ALWAYS AS IDENTITY,\n    ",
    }
    _order: ClassVar[str] = "seq"

    def __init__(
        self,
        url: str,
        *,
        readonly: bool = False,
        connect_timeout: int = 10,
        keeper: TotalsKeeper | None = None,
    ) -> None:
        try:
            import psycopg
        except ImportError:
            raise StorageError(
                "PostgreSQL storage needs psycopg: pip install 'nardy[postgres]'"
            ) from None
        super().__init__(redact_url(url), psycopg.Error, keeper)
        self._psycopg = psycopg
        self._url = url
        self._readonly = readonly
        self._connect_timeout = connect_timeout
        self._db = self._connect()
        self._setup(readonly)

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        from psycopg.rows import dict_row

        try:
            db = self._psycopg.connect(
                self._url,
                autocommit=True,  # a statement outside _transaction() commits by itself
                row_factory=dict_row,
                prepare_threshold=None,  # no server-side prepared statements (poolers)
                connect_timeout=self._connect_timeout,
                application_name="nardy",
            )
        except self._psycopg.Error as exc:
            raise StorageError(
                f"{self.label}: cannot connect to PostgreSQL: {_first_line(exc)}"
            ) from None
        db.read_only = self._readonly or None  # BEGIN READ ONLY: every query is in a transaction
        return db

    def _reconnect_if_broken(self) -> None:
        if self._db.broken:
            self._db = self._connect()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> _Result:
        # The shared SQL has no other "?" and no "%" (psycopg's placeholders are %s).
        cursor = self._db.execute(sql.replace("?", "%s"), tuple(params))
        rows = cursor.fetchall() if cursor.description is not None else []
        return _Result(rows, cursor.rowcount)

    def _transaction(self) -> AbstractContextManager[object]:
        return self._db.transaction()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        # READ COMMITTED gives each statement its own snapshot; one for the whole transaction:
        with self._db.transaction():
            self._execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield

    def _before_schema(self) -> None:
        # CREATE TABLE IF NOT EXISTS is not safe against a concurrent one: serialise them.
        self._execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def _is_duplicate(self, exc: Exception) -> bool:
        return isinstance(exc, self._psycopg.errors.UniqueViolation)

    def _is_missing_table(self, exc: Exception) -> bool:
        errors = self._psycopg.errors
        return isinstance(exc, errors.UndefinedTable | errors.UndefinedColumn)

    def _close(self) -> None:
        self._db.close()


def _create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist: the database holds running
    tournaments' seeds (every future roll). SQLite gives its -wal and -shm files the database
    file's mode."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StorageError(f"{path}: {exc.strerror or exc}") from None


def open_store(
    target: str | Path, *, readonly: bool = False, keeper: TotalsKeeper | None = None
) -> Store:
    """The store at ``target``: a SQLite file path (created if needed unless ``readonly``),
    :data:`MEMORY` (``":memory:"``) for a database that lives in this process only, or a
    ``postgresql://`` URL (:class:`PostgresStore`). ``keeper``: see :func:`totals_keeper`."""
    text = str(target)
    if isinstance(target, Path) and text.startswith(("postgresql:/", "postgres:/")):
        # Path("postgresql://h/db") is "postgresql:/h/db": the URL is lost; say so.
        raise StorageError(
            "a PostgreSQL URL was taken for a file path (which drops a slash); pass it as a string"
        )
    if text.startswith(POSTGRES_SCHEMES):
        return PostgresStore(text, readonly=readonly, keeper=keeper)
    return SqliteStore(text, readonly=readonly, keeper=keeper)


def totals_keeper() -> TotalsKeeper:
    """The keeper of a store opened without one: the competition's
    (:class:`nardy.arena.competition.totals.TotalsKeeper`), what every writer of tournaments
    needs. The one place the records reach the competition, and only here, when a store is
    opened: what the totals are (the definition's rounds, the SPRT, the luck analysis) is the
    competition's, while every store must keep them in the transaction of its games."""
    from nardy.arena.competition.totals import TotalsKeeper as CompetitionKeeper

    return CompetitionKeeper()
