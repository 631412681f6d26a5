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

from dataclasses import dataclass

from nardy.arena.audit import REVEALED_STATUSES
from nardy.arena.ledger import Aggregates, count, round_size
from nardy.arena.schedule import TournamentDef
from nardy.arena.storage import GameRow, SqlStore, TournamentRow

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

    def shows(self, game: GameRow) -> bool:
        return (game.pool, game.round) not in self.sealed


def _revealed(store: SqlStore, row: TournamentRow) -> bool:
    dice = store.dice(row.tournament_id)
    if dice is None:  # a database from before dice commitments: the status says
        return row.status in REVEALED_STATUSES
    return dice.revealed is not None


def public_view(store: SqlStore, row: TournamentRow, definition: TournamentDef) -> PublicView:
    """The public view of one stored tournament (its totals from the ledger, or counted from
    the games' columns in a database without one)."""
    totals = store.ledger(row.tournament_id)
    counted = totals is None
    if totals is None:  # a schema 1 database opened read-only
        totals = count(definition, store.games(row.tournament_id))
    if not definition.duplicate or _revealed(store, row):
        return PublicView(row, frozenset(), totals)
    full = round_size(definition, 0)
    if counted:
        open_rounds = [
            (pool, r, v[0], v[1]) for (pool, r), v in totals.rounds.items() if v[1] < full
        ]
    else:
        open_rounds = store.open_rounds(row.tournament_id, full)
    sealed = frozenset(
        (pool, r)
        for pool, r, games, done in open_rounds
        if games and done < round_size(definition, r)
    )
    if not sealed:
        return PublicView(row, sealed, totals)
    hidden = Aggregates()
    for pool, r in sorted(sealed):
        hidden.merge(count(definition, store.round_games(row.tournament_id, pool, r)))
    totals.subtract(hidden)
    stored = row.games_stored - hidden.games
    if counted:
        updated = max(totals.finished.values(), default=row.created)
    else:
        updated = store.last_finished(row.tournament_id, set(sealed)) or row.created
    public_row = TournamentRow(
        tournament_id=row.tournament_id,
        name=row.name,
        definition=row.definition,
        status=row.status,
        detail=row.detail,
        games_total=row.games_total,
        games_stored=stored,
        created=row.created,
        updated=updated,
    )
    return PublicView(public_row, sealed, totals)
