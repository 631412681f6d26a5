"""The names players know the bots by, for a tournament's bot ids.

The tables (standings, pairings, games) key bots by id, and an arena server's ids are its own
(``local-heur`` for ``--local-bot heur=…``, ``bot-…`` for a registered bot), while game records
carry each seat's ``name``. Every page shows the name; the id stays in URLs and JSON. Two bots
of one tournament with the same name are told apart by their ids.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable

from nardy.arena.records.storage import PostgresStore, SqliteStore, StorageError, Store

__all__ = ["BotNames", "display_names"]


def display_names(names: dict[str, str]) -> dict[str, str]:
    """``bot_id -> name``, with ``name (id)`` where a name is shared or empty."""
    seen: dict[str, int] = {}
    for name in names.values():
        seen[name] = seen.get(name, 0) + 1
    return {
        bot: name if name and seen[name] == 1 else f"{name or bot} ({bot})" if name != bot else bot
        for bot, name in names.items()
    }


Hidden = Collection[tuple[str, int]]
"""``(pool, round)`` of the sealed rounds (:mod:`nardy.arena.service.public`): a name read from one of
their games would tell the moment a bot's first game ended."""


def _first_names(
    store: Store, tournament_id: str, bots: Iterable[str], hidden: Hidden
) -> dict[str, str]:
    """The seat name of each bot in one of its stored public games (bots without one are left
    out).

    The SQL stores read one record's ``white``/``black`` object per bot (the Store protocol has
    no method for it; the spectator's fault filter reads records the same way)."""
    found: dict[str, str] = {}
    wanted = set(bots)
    if isinstance(store, SqliteStore | PostgresStore):
        skip = "".join(" AND NOT (pool = ? AND round = ?)" for _ in hidden)
        skipped = [value for key in sorted(hidden) for value in key]
        for seat in ("white", "black"):
            field = (
                f"json_extract(record, '$.{seat}.name')"
                if isinstance(store, SqliteStore)
                else f"(record::json -> '{seat}' ->> 'name')"
            )
            for bot in sorted(wanted - set(found)):
                rows = store.query(
                    f"SELECT {field} AS name FROM games WHERE tournament_id = ? AND {seat} = ?"
                    f"{skip} LIMIT 1",
                    (tournament_id, bot, *skipped),
                )
                if rows and rows[0]["name"]:
                    found[bot] = str(rows[0]["name"])
        return found
    for row in store.games(tournament_id, records=True):
        if (row.pool, row.round) in hidden:
            continue
        for seat, bot in (("white", row.white), ("black", row.black)):
            if bot in wanted and bot not in found:
                name = ((row.record or {}).get(seat) or {}).get("name")
                if name:
                    found[bot] = str(name)
    return found


def _registered_names(store: Store, bots: Iterable[str]) -> dict[str, str]:
    """Names from the arena server's own table of registered bots, where the database has it."""
    if not isinstance(store, SqliteStore | PostgresStore):
        return {}
    try:
        rows = store.query("SELECT bot_id, name FROM arena_bots", ())
    except StorageError:  # no such table: not an arena server's database
        return {}
    wanted = set(bots)
    return {str(r["bot_id"]): str(r["name"]) for r in rows if r["bot_id"] in wanted}


class BotNames:
    """``bot_id -> name`` per tournament, read once per bot (a stored game never changes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, dict[str, str]] = {}

    def of(
        self,
        store: Store,
        tournament_id: str,
        bots: Iterable[str],
        hidden: Hidden = (),
    ) -> dict[str, str]:
        """The display name of each of ``bots`` (its id when nothing better is known; names
        come from public games only, see :data:`Hidden`)."""
        bots = list(dict.fromkeys(bots))
        with self._lock:
            known = dict(self._known.get(tournament_id, {}))
        missing = [b for b in bots if b not in known]
        if missing:
            found = _first_names(store, tournament_id, missing, hidden)
            rest = [b for b in missing if b not in found]
            if rest:
                found.update(_registered_names(store, rest))
            with self._lock:
                # Only names read from a stored game are final; the others are asked again.
                final = {b: n for b, n in found.items() if b not in rest}
                self._known.setdefault(tournament_id, {}).update(final)
            known.update({b: found.get(b, b) for b in missing})
        return display_names({b: known.get(b, b) for b in bots})
