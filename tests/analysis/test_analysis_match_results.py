"""``nardy analyze`` on match games in match terms (issue 34): per bot, matches won and the match
equity per match (+1 won, -1 lost) in place of points per game, and the luck of each roll in
match equity (ME = 2·MWC - 1) so that the luck-adjusted figure is in the result's unit."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nardy.analysis.met import default_table, table_for
from nardy.analysis.records import read_records
from nardy.analysis.stats import analyse_games, bot_results
from nardy.cli import cli
from nardy.core import load_variant


def _play(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "games.jsonl"
    result = CliRunner().invoke(cli, ["play", "--quiet", "--jsonl", str(out), *args])
    assert result.exit_code == 0, result.output
    return out


def _analyze(path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["analyze", str(path), "--evaluator", "heuristic", "--json", "-q", *args]
    )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.fixture(scope="module")
def matches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Six 3-point backgammon matches of heuristic against random (seed 5), analysed."""
    path = _play(
        tmp_path_factory.mktemp("matches"),
        *("-v", "backgammon", "--bots", "heuristic,random", "--match", "3", "--games", "6"),
        *("--seed", "5"),
    )
    return path, _analyze(path, "--show", "all")


def test_the_jsonl_records_each_match_games_score(
    matches: tuple[Path, dict[str, Any]],
) -> None:
    """Each line of a match carries its length, the score before it and the Crawford flag, and
    the score follows the previous games' points (capped by the match's end)."""
    path, _ = matches
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    by_match: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        by_match[line["match"]].append(line)
    assert len(by_match) == 6
    for games in by_match.values():
        score = [0, 0]
        for game in games:
            assert game["match_length"] == 3 and game["score"] == score
            winner = ("White", "Black").index(game["result"]["winner"])
            score[winner] += game["result"]["points"]
        assert max(score) >= 3
    assert any(line["crawford"] for line in lines)  # seed 5 reaches a Crawford game


def test_per_bot_matches_and_match_equity_not_points(
    matches: tuple[Path, dict[str, Any]],
) -> None:
    """Per bot: matches played and won, the match equity per match (W - L) / matches, and no
    points per game (no money game); the matches won agree with the records' last games."""
    path, data = matches
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    last = {line["match"]: line for line in lines}
    won: dict[str, int] = defaultdict(int)
    for line in last.values():
        won[line["bots"][line["result"]["winner"]]] += 1
    for name, bot in data["bots"].items():
        match = bot["match"]
        assert match["matches"] == 6 and match["games"] == len(lines)
        assert match["won"] == won[name] and match["won"] + match["lost"] == 6
        assert match["equity_per_match"] == pytest.approx((match["won"] - match["lost"]) / 6)
        assert bot["points_per_game"] is None and bot["luck_per_game"] is None
        assert bot["points"] == 0  # a match game's points count in no money total


def test_a_matchs_games_add_up_to_its_result(matches: tuple[Path, dict[str, Any]]) -> None:
    """Each game's match result is White's ME after less before (from the table at its score);
    over a whole match from 0-0 they add up to +1 or -1; the luck-adjusted result is the result
    less the player's match luck plus his opponent's, all in ME."""
    table = default_table()
    _, data = matches
    totals: dict[str, float] = defaultdict(float)
    for game in data["games"]:
        match = game["match"]
        white, black = match["score"]
        before = table.mwc(3 - white, 3 - black, crawford_done=not match["crawford"])
        assert match["equity_before"] == pytest.approx(2 * before - 1, abs=1e-5)
        assert match["result"] == pytest.approx(match["equity_after"] - match["equity_before"])
        totals[match["match_id"]] += match["result"]
        players = game["players"]
        for me, them in (("White", "Black"), ("Black", "White")):
            mine = players[me]
            assert mine["match_result"] == pytest.approx(
                match["result"] if me == "White" else -match["result"], abs=1e-5
            )
            assert mine["match_luck_adjusted"] == pytest.approx(
                mine["match_result"] - mine["match_luck"] + players[them]["match_luck"], abs=1e-4
            )
    assert len(totals) == 6
    assert all(abs(total) == pytest.approx(1.0, abs=1e-4) for total in totals.values())


def test_the_luck_of_a_roll_in_match_equity(matches: tuple[Path, dict[str, Any]]) -> None:
    """A roll's match luck is its luck per cube times W - L, the mover's MWC after winning the
    cube less after losing it (gnubg's eq2mwc, linear: the mean over the rolls stays 0). At the
    first roll of a game the cube is 1, so the rate is the table's at the game's score."""
    table = default_table()
    _, data = matches
    checked = 0
    for game in data["games"]:
        match = game["match"]
        first = next(d for d in game["decisions"] if "luck" in d)
        mover = ("White", "Black").index(first["player"])
        away = [3 - match["score"][0], 3 - match["score"][1]]
        me, them = away[mover], away[1 - mover]
        done = match["crawford"] or (min(me, them) == 1 and not match["crawford"])

        def mwc(a: int, b: int, done: bool = done) -> float:
            return 1.0 if a <= 0 else 0.0 if b <= 0 else table.after(a, b, crawford_done=done)

        rate = mwc(me - 1, them) - mwc(me, them - 1)
        assert first["match_luck"] == pytest.approx(first["luck"] * rate, abs=1e-4)
        checked += 1
    assert checked == len(data["games"])


def test_a_mat_match_is_reported_in_match_terms(tmp_path: Path) -> None:
    """A .mat match (one match a file): the table has matches, won and equity/match columns and
    no points/game; its games' points (more than the 3 the match was to) are no bot's result."""
    mat = tmp_path / "m.mat"
    args = ["play", "-v", "backgammon", "--bots", "heuristic,random", "--match", "3"]
    result = CliRunner().invoke(cli, [*args, "--seed", "5", "--games", "1", "--mat", str(mat)])
    assert result.exit_code == 0, result.output
    games = read_records(mat)
    assert sum(g.points for g in games) > 3
    text = CliRunner().invoke(
        cli, ["analyze", str(mat), "--evaluator", "heuristic", "-q", "--show", "none"]
    )
    assert text.exit_code == 0, text.output
    header = next(line for line in text.stdout.splitlines() if "bot" in line)
    assert "equity/match" in header and "luck-adjusted/match" in header
    assert "points/game" not in header
    results = bot_results(analyse_games(games, "heuristic"))
    for result_ in results.values():
        assert result_.match is not None and result_.match.matches == 1
        assert abs(result_.match.equity_per_match) == pytest.approx(1.0)


def test_money_games_have_no_match_keys(tmp_path: Path) -> None:
    """Money games are analysed as before: no match keys anywhere, points per game reported."""
    path = _play(
        tmp_path, "-v", "backgammon", "--bots", "heuristic,random", "--games", "2", "--seed", "3"
    )
    data = _analyze(path, "--show", "all")
    assert "match" not in json.dumps(data)
    assert all(bot["points_per_game"] is not None for bot in data["bots"].values())


@pytest.mark.parametrize(
    "name",
    [
        "portes",  # single and double games: its matches have games that do not end them
        # Each game ends its match (15 points); the luck of its re-rolled doubles is costly to
        # enumerate (5 s of CPU), and the code is the same as for any variant without a table.
        pytest.param("khachapuri", marks=pytest.mark.slow),
    ],
)
def test_without_a_table_only_the_matchs_end_counts(tmp_path: Path, name: str) -> None:
    """Khachapuri's per-checker stakes and portes' single and double games (the Fevga family's
    scoring) have no match equity table: each match counts +1 / -1 at the game that ends it, and
    its luck has no match measure."""
    assert table_for(load_variant(name)) is None
    path = _play(
        tmp_path,
        *("-v", name, "--bots", "heuristic,random", "--match", "3", "--games", "2"),
        *("--seed", "1"),
    )
    data = _analyze(path, "--show", "none")
    for game in data["games"]:
        match = game["match"]
        assert not match["rated"]
        assert match["result"] == (0.0 if not match["ends_match"] else match["equity_after"])
        assert game["players"]["White"]["match_luck"] is None
    for bot in data["bots"].values():
        assert bot["match"]["matches"] == 2 and bot["match"]["luck_per_match"] is None
        assert abs(bot["match"]["equity_per_match"]) <= 1.0


def test_a_tournament_match_pool_counts_its_matches(tmp_path: Path) -> None:
    """``nardy analyze --db`` on a match pool: each unit (match) is one match, so each bot's
    matches and matches won are the standings' units and wins."""
    from nardy.analysis.cli import database_games
    from nardy.arena.competition.schedule import parse_definition
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    d = parse_definition(
        {
            "name": "m",
            "bots": ["heuristic", "random"],
            "variant": "backgammon",
            "games": 2,
            "seed": 3,
            "match_length": 7,
        }
    )
    store = SqliteStore(tmp_path / "t.db")
    standings = Tournament(d, store, executor="inline").run().standings
    store.close()
    games = database_games(str(tmp_path / "t.db"))
    assert len(games) > 2  # some match had more than one game
    results = bot_results(analyse_games(games, "heuristic"))
    for row in standings.pools[0].bots:
        match = results[row.bot].match
        assert match is not None
        assert (match.matches, match.won, match.lost) == (row.units, row.wins, row.losses)
        assert match.equity_per_match == pytest.approx(row.match_equity)


def test_money_and_match_games_mixed(tmp_path: Path, matches: tuple[Path, dict[str, Any]]) -> None:
    """Money and match games analysed together: points per game over the money games alone,
    match equity per match over the match games, and the table shows both sets of columns."""
    from nardy.analysis.report import results_table
    from nardy.listing import table_console

    money = read_records(
        _play(tmp_path, "-v", "backgammon", "--bots", "heuristic,random", "--games", "2")
    )
    path, _ = matches
    # Two of the module's six matches (3 of its 10 games): a mix needs matches, not all of them.
    played = read_records(path)
    two = list(dict.fromkeys(g.match.match_id for g in played if g.match is not None))[:2]
    matched = [g for g in played if g.match is not None and g.match.match_id in two]
    analyses = analyse_games([*money, *matched], "heuristic")
    results = bot_results(analyses)
    for name, result in results.items():
        points = [p.points for a in analyses[: len(money)] for p in a.players if p.name == name]
        assert result.points_per_game == pytest.approx(sum(points) / len(points))
        assert result.stats.games == len(analyses)
        assert result.match is not None and result.match.matches == 2
    console = table_console()
    with console.capture() as captured:
        console.print(results_table(results, "mixed"))
    header = next(line for line in captured.get().splitlines() if "bot" in line)
    assert "points/game" in header and "equity/match" in header
