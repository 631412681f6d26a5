"""The JSON of a stored tournament's row: one builder for every place that lists tournaments.

``nardy arena standings --list --json`` and the viewer's ``/tournaments.json`` print the same
object per tournament (schema ``arena-tournaments`` in :mod:`nardy.schemas`), so a script reads
both alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nardy.arena.records.storage import TournamentRow

__all__ = ["progress_unit", "tournament_json"]


def progress_unit(definition: Mapping[str, Any]) -> str:
    """What a tournament's units are: ``games``, ``matches``, or ``games and matches``."""
    kinds = set()
    for pool in definition.get("pools", []) or []:
        options = (pool.get("options") or {}) if isinstance(pool, dict) else {}
        kinds.add(bool(options.get("match_length")))
    if kinds == {True}:
        return "matches"
    return "games and matches" if kinds == {True, False} else "games"


def tournament_json(row: TournamentRow) -> dict[str, Any]:
    """A stored tournament as JSON: id, name, status (and its detail), games stored of the
    units in all (``unit``: what a unit is), when created and last updated (Unix seconds), and
    the variants of its pools."""
    return {
        "tournament_id": row.tournament_id,
        "name": row.name,
        "status": row.status,
        "detail": row.detail,
        "games_stored": row.games_stored,
        "units_total": row.games_total,
        "unit": progress_unit(row.definition),
        "created": row.created,
        "updated": row.updated,
        "variants": sorted(
            {
                str(pool.get("variant", ""))
                for pool in row.definition.get("pools", []) or []
                if isinstance(pool, dict)
            }
        ),
    }
