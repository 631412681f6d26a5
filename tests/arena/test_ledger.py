"""The standings ledger: totals kept with each stored game equal the standings recounted from
the games (a real tournament, random game sequences, a database migrated from schema 1)."""

from __future__ import annotations

import dataclasses
import math
import random
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from script_modules import load_module

from nardy.arena.competition.ledger import count
from nardy.arena.competition.schedule import TournamentDef, build_schedule, parse_definition
from nardy.arena.competition.standings import (
    Standings,
    Tally,
    ledger_matches_columns,
    standings_from_aggregates,
    standings_from_records,
    standings_from_store,
)
from nardy.arena.competition.tournament import Tournament
from nardy.arena.operator_cli import standings_table
from nardy.arena.records.ledger_rows import Aggregates
from nardy.arena.records.storage import SCHEMA_VERSION, GameRow, SqliteStore, StorageError
from nardy.arena.service.servicer import standings_to_proto
from nardy.arena.tournament_cli import _pool_tables

REPO = Path(__file__).resolve().parents[2]


def _same(x: Any, y: Any, where: str = "") -> None:
    """Equal, floats to 1e-9 (the ledger's variances are exact, a recount's are float sums)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        assert type(x) is type(y), where
        for f in dataclasses.fields(x):
            _same(getattr(x, f.name), getattr(y, f.name), f"{where}.{f.name}")
    elif isinstance(x, tuple | list):
        assert isinstance(y, tuple | list) and len(x) == len(y), where
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(x, float) and isinstance(y, float):
        assert (math.isnan(x) and math.isnan(y)) or math.isclose(
            x, y, rel_tol=1e-9, abs_tol=1e-12
        ), f"{where}: {x} != {y}"
    elif isinstance(x, str) and where.endswith(".line"):
        # the SPRT's status line prints floats: compare its words, numbers to 3 decimals
        assert x.split("|")[0] == y.split("|")[0], where
    else:
        assert x == y, f"{where}: {x!r} != {y!r}"


def _bots(n: int) -> list[dict[str, str]]:
    return [{"name": f"b{i}", "builtin": ("random", "heuristic")[i % 2]} for i in range(n)]


def _definition(**kw: Any) -> TournamentDef:
    data: dict[str, Any] = {
        "name": "t",
        "bots": _bots(3),
        "games": 5,
        "seed": 3,
        "variants": [
            {"name": "backgammon", "label": "money"},
            {"name": "backgammon", "label": "match", "options": {"match_length": 3}},
        ],
    }
    data.update(kw)
    return parse_definition(data)


# -- a real tournament ------------------------------------------------------------------------------


def test_a_real_tournament_ledger_equals_the_recount(tmp_path: Path) -> None:
    d = _definition()
    store = SqliteStore(tmp_path / "t.db")
    result = Tournament(d, store).run()
    assert result.status == "finished"
    ledger = standings_from_store(store, d.tournament_id)
    recount = standings_from_records(store, d.tournament_id)
    _same(ledger, recount)
    _same(ledger.pools, result.standings.pools)  # and what the engine itself counted
    assert ledger.games_stored == len(store.games(d.tournament_id)) > d.total_units
    store.close()


def test_an_sprt_is_fed_the_same_pairs(tmp_path: Path) -> None:
    d = _definition(
        bots=_bots(2),
        variants=[{"name": "backgammon", "label": "money"}],
        games=40,
        sprt={"mode": "points", "mu0": 0.0, "mu1": 0.5},
    )
    store = SqliteStore(tmp_path / "t.db")
    result = Tournament(d, store).run()
    ledger = standings_from_store(store, d.tournament_id)
    _same(ledger, standings_from_records(store, d.tournament_id))
    sprt = ledger.pools[0].sprt
    assert sprt is not None and sprt.pairs == result.standings.pools[0].sprt.pairs  # type: ignore[union-attr]
    assert sprt.pairs > 0
    store.close()


# -- random game sequences -----------------------------------------------------------------------


def _random_games(d: TournamentDef, rnd: random.Random) -> list[GameRow]:
    """Games of a random subset of the schedule in a random order; matches get games until
    decided (or aborted), interleaved with other units' games."""
    units = [u for u in build_schedule(d) if rnd.random() < 0.8]
    rnd.shuffle(units)
    queues: list[tuple[Any, list[int]]] = [(u, [0, 0]) for u in units]
    out: list[GameRow] = []
    game_no: dict[str, int] = {}
    while queues:
        i = rnd.randrange(len(queues))
        unit, score = queues[i]
        n = game_no[unit.unit_id] = game_no.get(unit.unit_id, 0) + 1
        roll = rnd.random()
        winner = None if roll < 0.1 else int(roll < 0.55)
        points = 0 if winner is None else rnd.choice([1, 1, 1, 2, 2, 3, 4, 8])
        termination = (
            ("aborted" if roll < 0.05 else "draw")  # a draw: plakoto, RULES.md §3.12.2
            if winner is None
            else rnd.choice(["borne_off", "borne_off", "double_dropped", "time_forfeit"])
        )
        out.append(
            GameRow.of_unit(
                d.tournament_id,
                unit,
                n,
                winner=winner,
                points=points,
                termination=termination,
                finished=float(len(out)),
            )
        )
        if winner is not None:
            score[winner] += points
        aborted = termination == "aborted"
        if aborted or unit.match_length is None or max(score) >= unit.match_length:
            queues.pop(i)
    return out


def _tally(d: TournamentDef, rows: list[GameRow]) -> Standings:
    t = Tally(d)
    for row in rows:
        t.add(row)
    return t.standings(tournament_id=d.tournament_id)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    bots=st.integers(2, 4),
    games=st.integers(1, 7),
    match=st.sampled_from([None, 1, 3, 5]),
    gauntlet=st.booleans(),
    sprt=st.booleans(),
    batch=st.integers(1, 9),
)
def test_random_sequences_ledger_equals_tally(
    seed: int, bots: int, games: int, match: int | None, gauntlet: bool, sprt: bool, batch: int
) -> None:
    options = {} if match is None else {"match_length": match}
    d = _definition(
        bots=_bots(bots),
        games=games,
        format="gauntlet" if gauntlet else "round_robin",
        variants=[
            {"name": "backgammon", "label": "p1"},
            {"name": "backgammon", "label": "p2", "options": options},
        ][: 1 if sprt else 2],
        **({"sprt": {"mode": "elo", "elo0": 0, "elo1": 20}} if sprt and bots == 2 else {}),
    )
    rows = _random_games(d, random.Random(seed))
    expected = _tally(d, rows)
    _counts_draws(d, rows, expected)
    # counted from nothing, in memory ...
    _same(standings_from_aggregates(d, count(d, rows), tournament_id=d.tournament_id), expected)
    # ... and stored game by game or in batches, through the SQL totals
    store = SqliteStore(":memory:")
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch]
        if len(chunk) == 1:
            store.save_game(chunk[0], {})
        else:
            store.save_games([(r, {}) for r in chunk])
    totals = store.ledger(d.tournament_id)
    assert totals is not None
    _same(standings_from_aggregates(d, totals, tournament_id=d.tournament_id), expected)
    # the check against the games' columns accepts these totals (draws and aborts among them),
    # so the standings are read from the ledger, not recounted
    assert ledger_matches_columns(totals, store.column_totals(d.tournament_id), d)
    store.close()


def _counts_draws(d: TournamentDef, rows: list[GameRow], standings: Standings) -> None:
    """Counted from the rows alone, not by the tally: a bot's games are the games it sat in that
    were not aborted (a draw is a game played by both), and its drawn units are the money games
    drawn (a match never ends drawn: it plays on to its length)."""
    for pool in standings.pools:
        mine = [r for r in rows if r.pool == pool.label]
        for b in pool.bots:
            sat = [r for r in mine if b.bot in (r.white, r.black)]
            assert b.games == sum(1 for r in sat if r.termination != "aborted")
            money = pool.match_length is None
            assert b.draws == (sum(1 for r in sat if r.termination == "draw") if money else 0)
            assert b.wins + b.losses + b.draws == b.units
        for p in pool.pairings:
            assert p.a_wins + p.b_wins + p.draws == p.units


def test_subtracting_rounds_equals_counting_the_others() -> None:
    d = _definition(games=6)
    rows = _random_games(d, random.Random(5))
    full = count(d, rows)
    hidden = {("money", 1), ("match", 2)}
    full.subtract(count(d, [r for r in rows if (r.pool, r.round) in hidden]))
    rest = count(d, [r for r in rows if (r.pool, r.round) not in hidden])
    for agg in (full, rest):
        agg.sprt.clear()
    _same(
        standings_from_aggregates(d, full, tournament_id="x"),
        standings_from_aggregates(d, rest, tournament_id="x"),
    )
    assert isinstance(full, Aggregates)


# -- migration from schema 1 -------------------------------------------------------------------------


def _schema_1_module(folder: Path) -> Any:
    """The storage module as it was at schema 1 (from git history)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", "521f21d:arena/storage.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "SCHEMA_VERSION = 1\n" in source
    module_path = folder / "storage_v1.py"
    module_path.write_text(source)
    return load_module("storage_v1", module_path, register=True)


def _schema_1_store(path: Path) -> Any:
    """A SqliteStore of the storage module as it was at schema 1."""
    return _schema_1_module(path.parent).SqliteStore(path)


def test_a_schema_1_database_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = _schema_1_store(path)
    d = _definition(bots=_bots(2), games=4)
    Tournament(d, old).run()
    old.close()
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone() == ("1",)
    # a reader leaves it as it is, and recounts
    reader = SqliteStore(path, readonly=True)
    assert not reader.has_ledger and reader.ledger(d.tournament_id) is None
    recount = standings_from_store(reader, d.tournament_id)
    reader.close()
    # a writer migrates it: the totals equal the recount
    store = SqliteStore(path)
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone() == (
        str(SCHEMA_VERSION),
    )
    totals = store.ledger(d.tournament_id)
    assert totals is not None and totals.games == len(store.games(d.tournament_id))
    _same(standings_from_store(store, d.tournament_id), recount)
    # and the migrated database goes on: another tournament's games are counted as stored
    more = _definition(bots=_bots(2), games=6, seed=4)
    Tournament(more, store).run()
    _same(
        standings_from_store(store, more.tournament_id),
        standings_from_records(store, more.tournament_id),
    )
    store.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99'")
    with pytest.raises(StorageError, match="schema 99"):
        SqliteStore(path, readonly=True)


def test_a_draw_ends_a_money_unit_at_0_and_lets_a_match_go_on() -> None:
    """RULES.md §3.12.2: a plakoto draw scores 0. A single-game unit ends with it (0 points for a,
    half a win each in Elo), a match unit plays on; neither is aborted."""
    for match in (None, 3):
        options = {} if match is None else {"match_length": match}
        d = _definition(bots=_bots(2), games=2, variants=[{"name": "plakoto", "options": options}])
        unit = build_schedule(d)[0]
        t = Tally(d)
        state = t.add(
            GameRow(
                tournament_id=d.tournament_id,
                game_id=unit.game_id(1),
                unit_id=unit.unit_id,
                pool=unit.pool,
                a=unit.a,
                b=unit.b,
                round=unit.round,
                leg=unit.leg,
                game_no=1,
                white=unit.white,
                black=unit.black,
                seed=unit.game_seed(1),
                winner=None,
                points=0,
                termination="draw",
                finished=0.0,
            )
        )
        assert state is not None and not state.aborted
        assert state.done == (match is None)
        if match is None:
            assert state.a_result == 0.0


def test_drawn_games_count_as_played_zero_points_and_half_a_win() -> None:
    """RULES.md §3.12.2 with issue 22: a plakoto draw is a game played by both bots, for 0
    points, a drawn unit in the standings and half a win each in Elo. Four money games, a's view:
    win (1 point), draw, win (2 points), draw; the tally, the ledger counted in memory and the
    SQL ledger all say so."""
    d = _definition(bots=_bots(2), games=4, variants=[{"name": "plakoto"}])
    results = [(0, 1, "borne_off"), (None, 0, "draw"), (0, 2, "mother"), (None, 0, "draw")]
    rows = []
    for i, (unit, (a_won, points, termination)) in enumerate(
        zip(build_schedule(d), results, strict=True)
    ):
        winner = None if a_won is None else unit.leg  # a plays White in leg a, Black in leg b
        rows.append(
            GameRow.of_unit(
                d.tournament_id,
                unit,
                1,
                winner=winner,
                points=points,
                termination=termination,
                finished=float(i),
            )
        )
    store = SqliteStore(":memory:")
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.save_games([(r, {}) for r in rows])
    totals = store.ledger(d.tournament_id)
    assert totals is not None
    assert ledger_matches_columns(totals, store.column_totals(d.tournament_id), d)
    store.close()
    tallied = _tally(d, rows)
    for standings in (
        tallied,
        standings_from_aggregates(d, count(d, rows), tournament_id=d.tournament_id),
        standings_from_aggregates(d, totals, tournament_id=d.tournament_id),
    ):
        (pool,) = standings.pools
        by_bot = {b.bot: b for b in pool.bots}
        a, b = by_bot["b0"], by_bot["b1"]
        assert (a.games, a.units, a.wins, a.losses, a.draws, a.net_points) == (4, 4, 2, 0, 2, 3)
        assert (b.games, b.units, b.wins, b.losses, b.draws, b.net_points) == (4, 4, 0, 2, 2, -3)
        assert a.ppg == 0.75 and b.ppg == -0.75  # 3 points over 4 games played, draws included
        assert standings.to_json()["pools"][0]["standings"][0]["draws"] == 2
        (pairing,) = pool.pairings
        assert (pairing.a_wins, pairing.b_wins, pairing.draws) == (2, 0, 2)
        assert pairing.to_json()["draws"] == 2
        # Bradley-Terry for two bots: P(a beats b) = a's share of the wins, draws as halves and
        # the fit's prior of one virtual draw (0.5 each): (2 + 1 + 0.5) / 5.
        edge = 400 * math.log10(3.5 / 1.5)
        assert a.elo is not None and b.elo is not None
        assert math.isclose(a.elo - b.elo, edge, rel_tol=1e-6)
    _same(standings_from_aggregates(d, totals, tournament_id=d.tournament_id), tallied)
    # ... and the protocol's GetStandingsResponse carries them (Standing.draws, PairingResult.draws)
    response = standings_to_proto(tallied)
    assert {(r.bot_id, r.games, r.draws) for r in response.standings} == {
        ("b0", 4, 2),
        ("b1", 4, 2),
    }
    assert [p.draws for p in response.pairings] == [2]
    # ... and the standings table shows a D column (only a pool with a drawn unit has one)
    console = Console(width=200, record=True)
    console.print(*_pool_tables(tallied.pools[0]))
    header = next(line for line in console.export_text().splitlines() if " Bot " in line)
    assert header.split("┃")[3:7] == [" Games ", " W ", " L ", " D "]
    console = Console(width=200, record=True)
    console.print(standings_table(response))
    header = next(line for line in console.export_text().splitlines() if " Bot " in line)
    assert header.split("┃")[3:7] == [" Games ", " W ", " L ", " D "]
