"""Standings of a match pool in match terms (issue 34): matches won and the match equity per
match (+1 won, -1 lost) where a money pool shows net points and points per game; an Elo that
rounds to zero prints as 0."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nardy.arena.competition.schedule import parse_definition
from nardy.arena.competition.standings import (
    BotStanding,
    PoolStandings,
    Standings,
    _ranked_bots,
    standings_from_store,
)
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import SqliteStore
from nardy.arena.tournament_cli import main as cli
from nardy.arena.tournament_cli import render_standings
from nardy.listing import table_console


def _text(standings: Standings) -> str:
    console = table_console()
    with console.capture() as captured:
        console.print(render_standings(standings))
    return captured.get()


def _standings(pool: PoolStandings) -> Standings:
    return Standings("t-1", "t", "finished", "", 0, pool.units_done, pool.units_total, (pool,))


def _bot(name: str, elo: float, **kw: int) -> BotStanding:
    counts = {"games": 6, "units": 2, "wins": 1, "losses": 1, "forfeits": 0, "net_points": 0}
    counts.update(kw)
    return BotStanding(rank=1, bot=name, ppg=0.0, elo=elo, elo_se=None, **counts)


def _header(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if "Bot" in line and "Elo" in line)
    return [cell.strip() for cell in line.strip("┃│ ").split("┃")]


def test_a_match_pool_shows_match_equity_not_game_points(tmp_path: Path) -> None:
    """Backgammon 3-point matches, heuristic against random: the table shows each bot's matches
    won and its match equity per match, (W - L) / matches, in place of the games' points (a
    cube of 4 won 12 points in one game); the JSON adds ``match_equity`` and keeps the points.
    The standings rebuilt from the store (the ledger's totals) show the same."""
    d = parse_definition(
        {
            "name": "m",
            "bots": ["heuristic", "random"],
            "variant": "backgammon",
            "match_length": 3,
            "games": 4,
            "seed": 2,
        }
    )
    store = SqliteStore(tmp_path / "m.db")
    try:
        live = Tournament(d, store, concurrency=1).run().standings
        stored = standings_from_store(store, d.tournament_id)
    finally:
        store.close()
    assert live.to_json()["pools"] == stored.to_json()["pools"]
    (pool,) = live.pools
    rows = {b.bot: b for b in pool.bots}
    assert rows["heuristic"].units == rows["random"].units == 4
    for row in rows.values():
        assert row.match_equity == (row.wins - row.losses) / row.units
    # A match's points are not what it is worth: the games scored more than one point a match.
    assert abs(rows["heuristic"].net_points) > rows["heuristic"].units
    text = _text(live)
    header = _header(text)
    assert "Eq/match" in header and "Net" not in header and "Pts/g" not in header, header
    heuristic = next(line for line in text.splitlines() if "heuristic" in line and "│" in line)
    assert f"{rows['heuristic'].match_equity:+.2f}" in heuristic
    assert f"{rows['heuristic'].net_points:+d}" not in heuristic.split("│")
    result = CliRunner().invoke(cli, ["standings", "--db", str(tmp_path / "m.db"), "--json"])
    assert result.exit_code == 0, result.output
    shown = {b["bot"]: b for b in json.loads(result.stdout)["pools"][0]["standings"]}
    for name, row in rows.items():
        assert shown[name]["match_equity"] == row.match_equity
        assert shown[name]["net_points"] == row.net_points  # the games' points are still there


def test_a_money_pool_keeps_net_and_points_per_game() -> None:
    """A money pool's table and JSON are as before: Net and Pts/g, no match equity."""
    bots = (_bot("a", 35.0, net_points=9), _bot("b", -35.0, net_points=-9))
    pool = PoolStandings("long", "long", {}, None, 2, 2, bots, (), None)
    header = _header(_text(_standings(pool)))
    assert header[-4:] == ["Net", "Pts/g", "Elo", "±95%"] and "Eq/match" not in header
    assert "match_equity" not in json.dumps(pool.to_json())


def test_match_ties_on_elo_are_broken_by_match_equity() -> None:
    """Two bots level in Elo in a match pool rank by matches, not by the games' points: the
    one that won more points lost more matches than it won here."""
    per = {
        "points": {"games": 9, "units": 3, "wins": 1, "losses": 2, "forfeits": 0, "net": 40},
        "matches": {"games": 9, "units": 3, "wins": 2, "losses": 1, "forfeits": 0, "net": 2},
    }
    elo = {"points": 0.0, "matches": 0.0}
    assert [b.bot for b in _ranked_bots(list(per), per, elo, {}, match=True)] == [
        "matches",
        "points",
    ]
    assert next(b.bot for b in _ranked_bots(list(per), per, elo, {})) == "points"  # money pools


def test_an_elo_of_zero_prints_as_0() -> None:
    """The fit gives -0.0 (or -0.3) to a bot level with the field: printed ``0``, not ``-0``;
    other Elos keep their sign."""
    bots = (_bot("level", -0.0), _bot("near", -0.3), _bot("up", 12.4), _bot("down", -12.6))
    pool = PoolStandings("long", "long", {}, None, 2, 2, bots, (), None)
    text = _text(_standings(pool))
    elos = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) > 3 and cells[1] in ("level", "near", "up", "down"):
            elos[cells[1]] = cells[-2]
    assert elos == {"level": "0", "near": "0", "up": "+12", "down": "-13"}
