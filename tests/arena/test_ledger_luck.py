"""A luck-adjusted SPRT in the standings ledger (``sprt.on = "luck-adjusted"``): the totals kept
with each stored game feed the SPRT the same luck-adjusted pairs as the engine's tally, however
the games arrive, whether the writer hands the values over or the store analyses the games."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ledger import _random_games, _same

from nardy.arena.competition.ledger import count
from nardy.arena.competition.schedule import TournamentDef, parse_definition
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.standings import Tally, standings_from_aggregates, standings_from_store
from nardy.arena.records.storage import GameRow, SqliteStore

SPRT = {"mode": "points", "mu0": 0.0, "mu1": 0.5, "alpha": 0.3, "beta": 0.3}


def _definition(games: int, on: str = "luck-adjusted") -> TournamentDef:
    return parse_definition(
        {
            "name": "t",
            "bots": [{"name": "b0", "builtin": "random"}, {"name": "b1", "builtin": "heuristic"}],
            "games": games,
            "seed": 3,
            "variant": "backgammon",
            "sprt": {**SPRT, "on": on},
        }
    )


def _luck(row: Any) -> float:
    """A stand-in for the analysis: any value per game will do, as long as it is the same one
    wherever the game is counted (not a multiple of 1/2, so it cannot be raw points)."""
    if row.winner is None:
        return 0.0
    sign = 1 if (row.winner == 0) == (row.leg == 0) else -1
    return sign * row.points - 0.37 + (row.seed % 101) / 137


def _counted(row: GameRow) -> bool:
    return row.winner is not None or row.termination == "draw"


def _tally_sprt(d: TournamentDef, rows: list[GameRow]) -> Any:
    t = Tally(d)
    for row in rows:
        t.add(row, _luck(row) if _counted(row) else None)
    (sprt,) = t.sprt.values()
    return sprt


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), games=st.integers(1, 14), batch=st.integers(1, 6))
def test_random_sequences_feed_the_ledger_the_tallys_adjusted_pairs(
    seed: int, games: int, batch: int
) -> None:
    d = _definition(games)
    rows = _random_games(d, random.Random(seed))
    expected = _tally_sprt(d, rows)
    # counted from nothing ...
    counted = standings_from_aggregates(d, count(d, rows, _luck), tournament_id=d.tournament_id)
    # ... and stored game by game or in batches, the values handed to the store
    store = SqliteStore(":memory:")
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch]
        luck = {r.game_id: _luck(r) for r in chunk if _counted(r)}
        if len(chunk) == 1:
            store.save_game(chunk[0], {}, luck.get(chunk[0].game_id))
        else:
            store.save_games([(r, {}) for r in chunk], luck)
    totals = store.ledger(d.tournament_id)
    assert totals is not None
    stored = standings_from_aggregates(d, totals, tournament_id=d.tournament_id)
    store.close()
    for standings in (counted, stored):
        (pool,) = standings.pools
        assert pool.sprt is not None
        assert pool.sprt.pairs == expected.n
        assert pool.sprt.llr == pytest.approx(expected.llr, abs=1e-9)
        assert pool.sprt.decision == expected.decision
    # the very values the tally was fed (each pair's mean of two games' adjusted points)
    counts = [(float(v), c) for v, c in totals.sprt.get("backgammon", {}).get("counts", [])]
    assert sorted(counts) == sorted(expected.counts.items())


def test_the_store_analyses_what_it_is_not_handed_and_rebuilds_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(LuckAdjuster, "a_points", lambda self, row: _luck(row))
    d = _definition(12)
    rows = [r for r in _random_games(d, random.Random(7)) if r.termination != "draw"]
    expected = _tally_sprt(d, rows)
    assert expected.n > 0
    # Stored under a points SPRT first: its ledger keeps that SPRT ...
    points = _definition(12, on="points")
    store = SqliteStore(":memory:")
    store.open_tournament(points.tournament_id, "t", points.to_json(), points.identity(), 12)
    for row in rows:
        store.save_game(row, {})  # no values handed over
    before = standings_from_store(store, points.tournament_id).pools[0].sprt
    assert before is not None and before.pairs == expected.n
    # ... re-opened under the luck-adjusted one, the ledger is rebuilt and analyses each game.
    store.open_tournament(d.tournament_id, "t", d.to_json(), d.identity(), 12)
    after = standings_from_store(store, d.tournament_id).pools[0].sprt
    assert after is not None and after.pairs == expected.n
    assert after.llr == pytest.approx(expected.llr, abs=1e-9)
    assert after.llr != pytest.approx(before.llr)
    store.close()


def test_a_ledger_without_the_luck_keeps_no_luck_adjusted_sprt() -> None:
    d = _definition(6)
    rows = _random_games(d, random.Random(1))
    totals = count(d, rows)
    assert totals.sprt == {}
    _same(count(d, rows).bots, count(d, rows, _luck).bots)


def test_totals_kept_by_a_ledger_without_the_luck_are_rebuilt_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A database written before the ledger kept luck-adjusted SPRTs (its pools' state empty):
    the next game stored rebuilds the totals, analysing the games, instead of failing."""
    monkeypatch.setattr(LuckAdjuster, "a_points", lambda self, row: _luck(row))
    d = _definition(12)
    rows = [r for r in _random_games(d, random.Random(7)) if r.termination != "draw"]
    store = SqliteStore(":memory:")
    store.open_tournament(d.tournament_id, "t", d.to_json(), d.identity(), 12)
    for row in rows[:-1]:
        store.save_game(row, {})
    store.execute("UPDATE ledger_pools SET sprt = NULL")  # what the older ledger kept
    store.save_game(rows[-1], {})
    expected = _tally_sprt(d, rows)
    got = standings_from_store(store, d.tournament_id).pools[0].sprt
    assert got is not None and got.pairs == expected.n
    assert got.llr == pytest.approx(expected.llr, abs=1e-9)
    totals = store.ledger(d.tournament_id)
    assert totals is not None and totals.games == len(rows)  # each game counted once
    store.close()
