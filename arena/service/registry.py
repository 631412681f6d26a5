"""The arena's own durable state, next to the tournament engine's tables in the same database.

* ``arena_bots``: every bot registered over ``RegisterBot``: id, name, kind, address,
  the SHA-256 hash of its token (never the token), its ``BotInfo`` and when it was registered;
* ``arena_tournaments``: the tournaments created over ``CreateTournament`` (their definitions are
  the engine's ``tournaments`` rows) and whether the operator cancelled them;
* ``arena_faults``: every bot's fault counts (JSON, by kind) and whether it is disqualified,
  written at each counted fault.

On start the arena reads them (:meth:`Registry.bots`, :meth:`Registry.tournaments`,
:meth:`Registry.faults`) so that bots keep their ids, tokens and fault counts and unfinished
tournaments resume. Every table is created if missing, so a database written by an earlier
version gains the new ones on its first start. Local bots (``--local-bot``) are not
stored: they are defined anew by every start (with stable ids, ``local-<name>``).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

from nardy.arena.records.storage import SqlStore, StorageError, Store

__all__ = ["BotRow", "Faults", "Registry", "TournamentEntry"]

_TABLES = (
    """CREATE TABLE IF NOT EXISTS arena_bots (
    bot_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    address TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    info TEXT NOT NULL,
    created {real} NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS arena_tournaments (
    tournament_id TEXT PRIMARY KEY,
    created {real} NOT NULL,
    cancelled INTEGER NOT NULL DEFAULT 0
)""",
    """CREATE TABLE IF NOT EXISTS arena_faults (
    bot_id TEXT PRIMARY KEY,
    counts TEXT NOT NULL,
    disqualified INTEGER NOT NULL DEFAULT 0,
    updated {real} NOT NULL
)""",
)


@dataclass(frozen=True, slots=True)
class BotRow:
    """A stored bot registration."""

    bot_id: str
    name: str
    kind: str
    """``server`` or ``dial_out``."""
    address: str
    token_hash: str
    info: bytes
    """The serialised ``nardy.bot.v1.BotInfo``."""
    created: float


@dataclass(frozen=True, slots=True)
class TournamentEntry:
    """A tournament created over gRPC."""

    tournament_id: str
    created: float
    cancelled: bool


@dataclass(frozen=True, slots=True)
class Faults:
    """A bot's stored fault counts."""

    counts: dict[str, int]
    """Counted faults by kind (:data:`nardy.bots.faults.FAULT_KINDS`)."""
    disqualified: bool


class Registry:
    """Bots and arena tournaments in the arena's store (SQLite or PostgreSQL)."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, SqlStore):  # pragma: no cover - every store is one today
            raise StorageError("the arena's registry needs an SQL store")
        self._store = store
        for statement in _TABLES:
            store.execute(statement)

    # -- bots -------------------------------------------------------------------------------------

    def add_bot(self, row: BotRow) -> None:
        """Store a new registration; :class:`StorageError` if the id is taken."""
        self._store.execute(
            "INSERT INTO arena_bots (bot_id, name, kind, address, token_hash, info, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.bot_id,
                row.name,
                row.kind,
                row.address,
                row.token_hash,
                base64.b64encode(row.info).decode("ascii"),
                row.created,
            ),
        )

    def bots(self) -> list[BotRow]:
        """Every stored bot, in registration order."""
        rows = self._store.execute("SELECT * FROM arena_bots ORDER BY created, bot_id")
        return [
            BotRow(
                bot_id=r["bot_id"],
                name=r["name"],
                kind=r["kind"],
                address=r["address"],
                token_hash=r["token_hash"],
                info=base64.b64decode(r["info"]),
                created=float(r["created"]),
            )
            for r in rows
        ]

    # -- faults -----------------------------------------------------------------------------------

    def save_faults(self, bot_id: str, counts: Mapping[str, int], disqualified: bool) -> None:
        """Store a bot's fault counts (replacing the earlier ones)."""
        self._store.execute(
            "INSERT INTO arena_faults (bot_id, counts, disqualified, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (bot_id) DO UPDATE SET counts = excluded.counts, "
            "disqualified = excluded.disqualified, updated = excluded.updated",
            (bot_id, json.dumps(dict(counts), sort_keys=True), int(disqualified), time.time()),
        )

    def faults(self) -> dict[str, Faults]:
        """Every bot's stored fault counts, by bot id."""
        rows = self._store.execute("SELECT bot_id, counts, disqualified FROM arena_faults")
        return {
            r["bot_id"]: Faults(
                {str(k): int(v) for k, v in json.loads(r["counts"]).items()},
                bool(r["disqualified"]),
            )
            for r in rows
        }

    # -- tournaments ------------------------------------------------------------------------------

    def add_tournament(self, tournament_id: str) -> None:
        self._store.execute(
            "INSERT INTO arena_tournaments (tournament_id, created) VALUES (?, ?) "
            "ON CONFLICT (tournament_id) DO NOTHING",
            (tournament_id, time.time()),
        )

    def cancel_tournament(self, tournament_id: str) -> None:
        self._store.execute(
            "UPDATE arena_tournaments SET cancelled = 1 WHERE tournament_id = ?", (tournament_id,)
        )

    def tournaments(self) -> list[TournamentEntry]:
        """The arena's tournaments, oldest first."""
        rows = self._store.execute("SELECT * FROM arena_tournaments ORDER BY created")
        return [
            TournamentEntry(r["tournament_id"], float(r["created"]), bool(r["cancelled"]))
            for r in rows
        ]
