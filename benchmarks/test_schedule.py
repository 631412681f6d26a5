"""Creating a tournament costs O(pairings), not O(games): the engine walks lazy unit streams.

The largest tournament the arena allows (64 bots, 496 games per pairing: 999,936 games) is
created — definition, engine, the first unit of every stream — next to the eager list of every
unit (:func:`~nardy.arena.competition.schedule.build_schedule`, what the engine used to build) of a
tournament 100 times smaller. ``pytest benchmarks/test_schedule.py -s`` prints both.
"""

from __future__ import annotations

from typing import Any

from nardy.arena.competition.schedule import (
    TournamentDef,
    build_schedule,
    parse_definition,
    unit_streams,
)
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import MEMORY, open_store


def _definition(bots: int, games: int) -> TournamentDef:
    return parse_definition(
        {
            "name": "largest",
            "bots": [{"name": f"b{i:02d}", "builtin": "random"} for i in range(bots)],
            "variant": "long",
            "games": games,
            "seed": 1,
        }
    )


def test_create_the_largest_tournament_lazily(benchmark: Any) -> None:
    d = _definition(64, 496)
    store = open_store(MEMORY)

    def create() -> int:
        engine = Tournament(d, store)
        return engine.units_total + len(unit_streams(d))

    assert benchmark(create) == 999_936 + 2 * 2016
    benchmark.extra_info["games"] = d.total_units


def test_eager_schedule_of_a_hundredth(benchmark: Any) -> None:
    d = _definition(64, 5)  # 10,080 games: 1/100 of the largest
    units = benchmark(lambda: len(build_schedule(d)))
    assert units == d.total_units == 10_080
    benchmark.extra_info["games"] = d.total_units
