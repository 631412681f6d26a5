"""The upkeep of a tournament's stored running totals (the ledger's rows), for the store.

The store (:mod:`nardy.arena.records.storage`) keeps the totals next to the games and writes them
in the same transaction as each game, so that a run killed at any point never leaves a game
counted without its totals or the reverse. What the totals *are* is the competition's business:
which rounds exist and what the SPRT is fed follow from the tournament's definition
(:mod:`nardy.arena.competition.ledger`), and a luck-adjusted SPRT needs each game's luck
(:mod:`nardy.arena.competition.sprt_luck`). So the store hands a :class:`TotalsKeeper` the rows of
its open transaction (:class:`~nardy.arena.records.storage.LedgerTables`) and the keeper reads
and writes the totals through them: the store only stores.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nardy.arena.competition.ledger import Game, Ledger
from nardy.arena.competition.schedule import DefinitionError, TournamentDef

if TYPE_CHECKING:
    # Only the shapes: the store builds its keeper from this module, so importing the store here
    # would close a cycle.
    from nardy.arena.competition.sprt_luck import LuckAdjuster
    from nardy.arena.records.storage import GameRow, LedgerTables

__all__ = ["TotalsKeeper"]


class TotalsKeeper:
    """Counts stored games into their tournament's totals, or all of them again from nothing.

    One per store: it keeps, across saves, the parsed definition of each tournament (parsed
    again when the stored text changes) and the luck analysis of a luck-adjusted SPRT (with its
    searchers' caches)."""

    def __init__(self) -> None:
        self._definitions: dict[str, tuple[str, TournamentDef | None]] = {}
        self._adjuster: LuckAdjuster | None = None
        """Analyses the games a luck-adjusted SPRT's ledger needs (:meth:`_luck_points`)."""

    def definition(self, tables: LedgerTables, tournament_id: str) -> TournamentDef | None:
        """The tournament's definition as stored (None: absent or not a definition, in which
        case its games are stored without totals, and its standings cannot be shown)."""
        text = tables.definition_text(tournament_id)
        if text is None:
            return None
        cached = self._definitions.get(tournament_id)
        if cached is not None and cached[0] == text:
            return cached[1]
        try:
            definition: TournamentDef | None = TournamentDef.from_json(json.loads(text))
        except (KeyError, TypeError, ValueError, DefinitionError):
            definition = None
        self._definitions[tournament_id] = (text, definition)
        return definition

    def count(
        self,
        tables: LedgerTables,
        games: Sequence[GameRow],
        adjusted: Mapping[str, float] | None = None,
    ) -> None:
        """Count ``games`` (just inserted, in the transaction of ``tables``) into their
        tournaments' totals; ``adjusted``: luck-adjusted points for ``a`` by game id (those
        missing that a luck-adjusted SPRT needs are analysed here: :meth:`_luck_points`)."""
        by_tournament: dict[str, list[GameRow]] = {}
        for row in games:
            by_tournament.setdefault(row.tournament_id, []).append(row)
        known = adjusted or {}
        for tournament_id, rows in by_tournament.items():
            definition = self.definition(tables, tournament_id)
            if definition is None:
                continue
            if self._luck_sprt_stale(tables, tournament_id, definition):
                self.rebuild(tables, tournament_id)  # counts these games too
                continue
            ledger = Ledger(
                definition,
                functools.partial(tables.unit, tournament_id),
                functools.partial(self._luck_points, tables),
            )
            sprt = functools.partial(tables.sprt, tournament_id)
            for row in rows:
                ledger.add(row, sprt, known.get(row.game_id))
            tables.write(tournament_id, ledger)

    def rebuild(self, tables: LedgerTables, tournament_id: str) -> None:
        """Count a tournament's stored games into its totals from nothing (in the transaction of
        ``tables``), a batch at a time in the order stored: on a migration, and when the games
        or the SPRT of a stored tournament change."""
        tables.clear(tournament_id)
        self._definitions.pop(tournament_id, None)
        for games in tables.stored_games(tournament_id):
            self.count(tables, games)

    def _luck_sprt_stale(
        self, tables: LedgerTables, tournament_id: str, definition: TournamentDef
    ) -> bool:
        """Whether a luck-adjusted SPRT's totals were kept by a nardy whose ledger kept none
        (games counted, no ``adjusted`` in the pool's state): they are then rebuilt, once."""
        if definition.sprt is None or definition.sprt.on != "luck-adjusted":
            return False
        return any(
            games and (not sprt or "adjusted" not in json.loads(sprt))
            for games, sprt in tables.pool_sprts(tournament_id)
        )

    def _luck_points(self, tables: LedgerTables, game: Game) -> float:
        """A stored game's luck-adjusted points for ``a`` (:mod:`nardy.arena.competition.sprt_luck`,
        0-ply), for a luck-adjusted SPRT's ledger when the writer did not hand them over (the
        engine does: it analyses each game before storing it); the record is read if the row
        lacks it. Slow (about a second a game): a ledger rebuilt under a luck-adjusted SPRT
        analyses every game of its pairing again."""
        from nardy.analysis.records import RecordError
        from nardy.arena.competition.sprt_luck import LuckAdjuster

        row = tables.with_record(game)
        if self._adjuster is None:
            self._adjuster = LuckAdjuster()
        try:
            return self._adjuster.a_points(row)
        except RecordError as error:
            raise tables.error(f"luck-adjusted SPRT: {error}") from None
