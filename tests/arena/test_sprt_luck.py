"""The SPRT on luck-adjusted points (``sprt.on = "luck-adjusted"``, ``--sprt-on``)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nardy.arena.competition.schedule import DefinitionError, parse_definition
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.standings import standings_from_store
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import SqliteStore
from nardy.arena.tournament_cli import main as cli


def _data(**sprt: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "bots": ["heuristic", "random"],
        "variant": "backgammon",
        "games": 60,
        "seed": 5,
        "sprt": sprt,
    }


@pytest.mark.slow
def test_a_luck_adjusted_sprt_reaches_a_decision(tmp_path: Path) -> None:
    # Without the cube: with it, random's doubles and takes spread the points (about ±28 a pair
    # here), and the normal-model test rightly needs many more pairs to tell 0 from 0.5.
    sprt = {"mode": "points", "mu0": 0.0, "mu1": 0.5, "alpha": 0.2, "beta": 0.2}
    data = {**_data(**sprt, on="luck-adjusted"), "options": {"backgammon": {"cube": False}}}
    d = parse_definition(data)
    assert d.sprt is not None and d.sprt.on == "luck-adjusted"
    store = SqliteStore(tmp_path / "t.db")
    t = Tournament(d, store)
    result = t.run()
    (pool,) = result.standings.pools
    assert pool.sprt is not None and pool.sprt.decision == "H1"
    assert result.status == "stopped" and result.played == 2 * pool.sprt.pairs < 60
    # It ran on the adjusted points: pair means that are not multiples of 1/2 (raw points are
    # whole numbers), and each fed value is the game's luck-adjusted points for a.
    (sprt_state,) = t.tally.sprt.values()
    assert any(2 * x != round(2 * x) for x in sprt_state.counts)
    luck = LuckAdjuster()
    rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.unit_id)
    assert len(rows) == result.played
    pairs = [(luck.a_points(rows[i]) + luck.a_points(rows[i + 1])) / 2 for i in (0, 2)]
    for x in pairs:
        assert any(abs(x - v) < 1e-9 for v in sprt_state.counts)
    # The store's ledger kept the same test (what `nardy arena standings` and the arena
    # service's GetStandings read), and rebuilt from the games it is the same again.
    stored = standings_from_store(store, d.tournament_id).pools[0].sprt
    assert stored is not None and stored.decision == "H1" and stored.pairs == pool.sprt.pairs
    assert stored.llr == pytest.approx(pool.sprt.llr, abs=1e-9)
    with store._transaction():
        store._rebuild_ledger(d.tournament_id)
    rebuilt = standings_from_store(store, d.tournament_id).pools[0].sprt
    assert rebuilt is not None and rebuilt.llr == pytest.approx(pool.sprt.llr, abs=1e-9)
    # Resuming reads the stored records and plays nothing more.
    assert Tournament(d, store).run().played == 0
    store.close()


def test_adjusted_points_are_zero_sum_and_need_the_record(tmp_path: Path) -> None:
    d = parse_definition({**_data(), "games": 2, "sprt": None})
    store = SqliteStore(tmp_path / "t.db")
    Tournament(d, store).run()
    rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.leg)
    store.close()
    luck = LuckAdjuster()
    for row in rows:
        adjusted = luck.a_points(row)
        assert adjusted != row.a_points  # the luck of a whole game is never exactly 0
        # The same game seen from b: a's seat swapped, so b's adjusted points are -a's.
        other = type(row)(**{**_fields(row), "leg": 1 - row.leg, "winner": row.winner})
        assert luck.a_points(other) == pytest.approx(-adjusted)
    with pytest.raises(ValueError, match="needs the game's record"):
        luck.a_points(type(rows[0])(**{**_fields(rows[0]), "record": None}))


def _fields(row: Any) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__dataclass_fields__}


@pytest.mark.parametrize(
    ("sprt", "message"),
    [
        ({"mode": "points", "mu0": 0, "mu1": 0.5, "on": "lucky"}, "points or luck-adjusted"),
        ({"elo0": 0, "elo1": 50, "on": "luck-adjusted"}, "mode = points"),
    ],
)
def test_bad_sprt_inputs_are_clear_errors(sprt: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        parse_definition(_data(**sprt))


def test_a_luck_adjusted_sprt_refuses_matches() -> None:
    """Refused with the definition (a TOML, the CLI's flags, the arena service's request)."""
    data = _data(mode="points", mu0=0, mu1=0.5, on="luck-adjusted")
    with pytest.raises(DefinitionError, match="money games"):
        parse_definition({**data, "match_length": 3})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sprt", "0,0.5", "--sprt-on", "lucky"], "Invalid value for '--sprt-on'"),
        (["--sprt-on", "luck-adjusted"], "--sprt-on needs --sprt"),
        (["--sprt", "0,50", "--sprt-on", "luck-adjusted"], "mu0 < mu1 < max_points"),
    ],
)
def test_cli_sprt_on_errors(tmp_path: Path, args: list[str], message: str) -> None:
    base = ["run", "--variant", "backgammon", "--bots", "heuristic,random"]
    result = CliRunner().invoke(cli, [*base, *args, "--db", str(tmp_path / "x.db")])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow  # four games played and analysed, and a 10 s wait if it fails
def test_the_luck_analysis_runs_outside_the_results_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a game's luck is analysed, the standings (which take the results lock) answer;
    the SPRT is then fed exactly the games' luck-adjusted points."""
    d = parse_definition({**_data(mode="points", mu0=0.0, mu1=0.5, on="luck-adjusted"), "games": 4})
    store = SqliteStore(tmp_path / "t.db")
    t = Tournament(d, store, executor="inline")
    entered, release = threading.Event(), threading.Event()
    real = LuckAdjuster.a_points

    def slow(self: LuckAdjuster, row: Any) -> float:
        entered.set()
        assert release.wait(60), "the test never released the analysis"
        return real(self, row)

    monkeypatch.setattr(LuckAdjuster, "a_points", slow)
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(t.run()), daemon=True)
    runner.start()
    try:
        assert entered.wait(60), "no game was analysed"
        standings: list[Any] = []
        reader = threading.Thread(target=lambda: standings.append(t.standings()), daemon=True)
        reader.start()
        reader.join(10)
        blocked = reader.is_alive()
    finally:
        release.set()
    runner.join(120)
    assert not blocked, "the standings waited for a game's luck analysis"
    assert standings and results and results[0].played == 4
    (sprt_state,) = t.tally.sprt.values()
    monkeypatch.undo()
    luck = LuckAdjuster()
    rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.unit_id)
    pairs = [(luck.a_points(rows[i]) + luck.a_points(rows[i + 1])) / 2 for i in (0, 2)]
    assert sprt_state.n == 2
    for x in pairs:
        assert any(abs(x - v) < 1e-9 for v in sprt_state.counts)
    store.close()
