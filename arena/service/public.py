"""What anyone may see of a stored tournament while it runs: nothing that tells a roll not yet
played.

With duplicate dice, round ``r`` of a pool is played on one dice stream by every pairing and
both legs (``docs/tournaments.md``): a finished game's rolls are the rolls of the games of its
round still to come, and so, less directly, are its plays, its length, its result and the moment
it ended. So the public view *seals* each round of a pool until every unit of it is complete (or
the tournament's seed is published, when every roll is public anyway): the games of a sealed
round are left out of everything shown — the games list and its counts, the game pages, the
standings, the games-stored count and the last-update time. A round is unsealed when its last
game is stored, all at once. Tournaments without duplicate dice share no dice between games and
are shown as stored. See ``docs/spectator.md`` ("What a spectator sees").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nardy.arena.competition.ledger import count, round_size
from nardy.arena.competition.schedule import TournamentDef
from nardy.arena.competition.standings import ledger_matches_columns
from nardy.arena.records.audit import REVEALED_STATUSES
from nardy.arena.records.ledger_rows import Aggregates
from nardy.arena.records.storage import GameRow, LedgerSnapshot, SqlStore, TournamentRow

__all__ = ["PublicView", "public_view"]


@dataclass(frozen=True, slots=True)
class PublicView:
    """A tournament as the public sees it now."""

    row: TournamentRow
    """The stored row with ``games_stored`` and ``updated`` of the unsealed games only."""
    sealed: frozenset[tuple[str, int]]
    """``(pool label, round)`` of the rounds whose games are withheld."""
    totals: Aggregates
    """The ledger's totals without the sealed rounds' games."""
    consistent: bool | None = None
    """Whether the ledger's totals equal what the database sums from the games' columns at
    the same moment (None: not checked; False: a column was changed after its game was
    stored, see :func:`nardy.arena.competition.standings.standings_from_store`)."""

    def shows(self, game: GameRow) -> bool:
        return (game.pool, game.round) not in self.sealed


def _revealed(store: SqlStore, row: TournamentRow) -> bool:
    dice = store.dice(row.tournament_id)
    if dice is None:  # a database from before dice commitments: the status says
        return row.status in REVEALED_STATUSES
    return dice.revealed is not None


def public_view(
    store: SqlStore, row: TournamentRow, definition: TournamentDef, *, check: bool = False
) -> PublicView:
    """The public view of one stored tournament, read in one snapshot of the database (its
    totals from the ledger, or counted from the games' columns in a database without one).
    ``check``: also read the columns' totals the ledger is checked against
    (:attr:`PublicView.columns`)."""
    seal = definition.duplicate and not _revealed(store, row)

    def sealed(pool: str, round_: int, units_done: int) -> bool:
        return units_done < round_size(definition, round_)

    snapshot = store.ledger_snapshot(
        row.tournament_id,
        check=check,
        full_round=round_size(definition, 0),
        sealed=sealed if seal else None,
    )
    if snapshot is None:  # a schema 1 database opened read-only: count from the columns
        games = store.games(row.tournament_id)
        snapshot = LedgerSnapshot(count(definition, games))
        if seal:
            snapshot.sealed = frozenset(
                key for key, (n, done) in snapshot.totals.rounds.items() if n and sealed(*key, done)
            )
            snapshot.sealed_games = [g for g in games if (g.pool, g.round) in snapshot.sealed]
            snapshot.last_public_finished = max(
                (t for key, t in snapshot.totals.finished.items() if key not in snapshot.sealed),
                default=None,
            )
    totals = snapshot.totals
    consistent = (
        None
        if snapshot.columns is None
        else ledger_matches_columns(totals, snapshot.columns, definition)
    )
    if snapshot.sealed:
        totals.subtract(count(definition, snapshot.sealed_games))
    # The stored row, but counting and dated by the public games only.
    public_row = replace(
        row,
        games_stored=totals.games,
        updated=(snapshot.last_public_finished or row.created) if snapshot.sealed else row.updated,
    )
    return PublicView(public_row, snapshot.sealed, totals, consistent)
