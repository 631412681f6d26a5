"""Match play in the analysis: the match equity table (``nardy.analysis.met``) and the cube
decisions valued in match winning chances (``analyse_match_cube``), against hand-worked cases,
textbook facts and a published table."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from nardy.analysis.cube import MatchScore, analyse_match_cube
from nardy.analysis.met import GAMMON_RATE, MatchEquityTable, default_table
from nardy.analysis.records import read_records
from nardy.cli import cli
from nardy.engines.gnubg import Probabilities

MET = default_table()

# Kit Woolsey's match equity table (rec.games.backgammon, 24 May 1994; built from Hal Heinrich's
# database of expert matches, not from this model): the leader's MWC in %, leader a-away (row)
# against trailer b-away (column), the 1-away row before the Crawford game.
WOOLSEY = {
    1: {2: 70, 3: 75, 4: 83, 5: 85, 6: 90, 7: 91},
    2: {3: 60, 4: 68, 5: 75, 6: 81, 7: 85},
    3: {4: 59, 5: 66, 6: 71, 7: 76},
    4: {5: 58, 6: 64, 7: 70},
    5: {6: 57, 7: 63},
    6: {7: 56},
}


def _gammonless(win: float) -> Probabilities:
    return Probabilities(win, 0.0, 0.0, 0.0, 0.0)


@given(st.integers(1, 40), st.integers(1, 40), st.booleans())
def test_the_table_is_zero_sum(a: int, b: int, crawford_done: bool) -> None:
    mine = MET.mwc(a, b, crawford_done=crawford_done)
    theirs = MET.mwc(b, a, crawford_done=crawford_done)
    assert mine + theirs == pytest.approx(1.0, abs=1e-12)
    assert 0.0 <= mine <= 1.0


@given(st.integers(2, 30), st.integers(2, 30))
def test_more_points_to_go_is_worse(a: int, b: int) -> None:
    assert MET.mwc(a + 1, b) <= MET.mwc(a, b) + 1e-12
    assert MET.mwc(a, b + 1) >= MET.mwc(a, b) - 1e-12


def test_the_table_agrees_with_woolseys_within_one_and_a_half_percent() -> None:
    for leader, row in WOOLSEY.items():
        for trailer, percent in row.items():
            assert MET.mwc(leader, trailer) == pytest.approx(percent / 100, abs=0.015)


def test_the_end_of_the_match_worked_by_hand() -> None:
    g = GAMMON_RATE
    assert MET.mwc(1, 1) == MET.mwc(1, 1, crawford_done=True) == 0.5  # double match point
    # Post-Crawford, trailer 2-away: he doubles at once; taking and passing both leave DMP or
    # the match on one game (no free-drop allowance in the model).
    assert MET.mwc(2, 1, crawford_done=True) == pytest.approx(0.5)
    # Trailer 3-away: he doubles, the leader takes; the trailer needs a single win then DMP,
    # or a gammon.
    assert MET.mwc(3, 1, crawford_done=True) == pytest.approx((1 - g) / 2 * 0.5 + g / 2)
    # The Crawford game, trailer 2-away (no cube): a single win leads to DMP, a gammon wins.
    assert MET.mwc(2, 1) == pytest.approx((1 - g) / 2 * 0.5 + g / 2)
    # Without gammons the Crawford game at 1-away, 2-away is worth 3/4 to the leader.
    assert MatchEquityTable(0.0).mwc(1, 2) == pytest.approx(0.75)


def test_a_bad_gammon_rate_and_a_long_match_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="gammon rate"):
        MatchEquityTable(1.0)
    with pytest.raises(ValueError, match="64 points away"):
        MET.mwc(65, 3)


@pytest.mark.parametrize("win", [0.05, 0.3, 0.5, 0.8, 0.99])
def test_at_double_match_point_the_cube_is_dead(win: float) -> None:
    cube = analyse_match_cube(
        Probabilities(win, 0.2, 0.01, 0.1, 0.01), MatchScore(1, 1, crawford_done=True), 1
    )
    assert cube.no_double == pytest.approx(cube.double_take)  # the match is on this game
    assert cube.double_loss(True) == pytest.approx(0.0)
    assert cube.double_loss(False) == pytest.approx(0.0)
    assert cube.should_take  # passing loses the match; taking keeps 1 − win
    assert cube.take_loss(False) == pytest.approx(1.0 - cube.double_take)


def test_post_crawford_the_trailer_doubles_at_once() -> None:
    opening = Probabilities(0.5, 0.13, 0.005, 0.13, 0.005)
    for trailer in (2, 3, 4, 5, 6, 7):
        cube = analyse_match_cube(opening, MatchScore(trailer, 1, crawford_done=True), 1)
        assert cube.should_double, trailer
        assert cube.double_loss(False) > 0.0
        # At an odd score away the leader must take; at an even one passing leaves the
        # trailer an odd score, nearly as good for the leader (the "free drop").
        if trailer % 2:
            assert cube.should_take, trailer


def test_post_crawford_two_away_the_leader_passes_when_behind() -> None:
    score = MatchScore(2, 1, crawford_done=True)
    even = analyse_match_cube(_gammonless(0.5), score, 1)
    assert even.should_double
    assert even.double_take == pytest.approx(even.double_pass)  # the free drop's edge: none
    assert analyse_match_cube(_gammonless(0.6), score, 1).best == "double, pass"


def test_post_crawford_the_leader_never_doubles() -> None:
    for win in (0.5, 0.8, 0.95):
        cube = analyse_match_cube(
            Probabilities(win, 0.3, 0.0, 0.0, 0.0), MatchScore(1, 4, crawford_done=True), 1
        )
        assert not cube.should_double


def test_at_two_away_two_away_the_take_point_is_the_crawford_equity() -> None:
    # Doubled at 2-away, 2-away the match is on this game; passing leaves the taker 2-away
    # against 1-away in the Crawford game, 30 % in this table: take with 30 % or more.
    score = MatchScore(2, 2, crawford_done=False)
    crawford = MET.mwc(2, 1)
    assert crawford == pytest.approx(0.30)
    assert analyse_match_cube(_gammonless(0.69), score, 1).should_take
    assert not analyse_match_cube(_gammonless(0.71), score, 1).should_take
    cube = analyse_match_cube(_gammonless(0.6), score, 1)
    assert cube.mwc is not None
    assert cube.mwc[1] == pytest.approx(0.6)  # double/take: the match on a gammonless game
    assert cube.mwc[2] == pytest.approx(1 - crawford)


def test_a_small_edge_early_in_a_long_match_is_no_double() -> None:
    # Money-like scores: the cube keeps its value, as in money play a 55 % position is not
    # a double (the dead-cube equities alone would double any edge).
    cube = analyse_match_cube(Probabilities(0.55, 0.12, 0.0, 0.1, 0.0), MatchScore(9, 9, False), 1)
    assert not cube.should_double


def test_a_mat_match_rates_its_cube_decisions_in_match_equities(tmp_path: Path) -> None:
    from nardy.analysis.stats import analyse_games

    mat = tmp_path / "m.mat"
    args = ["play", "-v", "backgammon", "--bots", "heuristic,heuristic", "--match", "5"]
    result = CliRunner().invoke(cli, [*args, "--seed", "2", "--games", "1", "--mat", str(mat)])
    assert result.exit_code == 0, result.output
    games = read_records(mat)
    assert [g.match is not None and (g.match.crawford, g.match.post_crawford) for g in games] == [
        (False, False),
        (True, False),
        (False, True),
    ]
    analyses = analyse_games(games, "heuristic")
    for game, analysis in zip(games, analyses, strict=True):
        cubes = [d for d in analysis.decisions if d.kind != "play"]
        assert game.match is not None
        if game.match.crawford:
            assert not cubes  # no doubling in the Crawford game
        else:
            assert cubes
            assert all(d.cube is not None and d.cube.mwc is not None for d in cubes)
            assert all(d.cube is not None and d.cube.double_pass == 1.0 for d in cubes)


def test_arena_match_games_carry_their_score(tmp_path: Path) -> None:
    from nardy.analysis.records import RecordError, from_arena_record
    from nardy.arena.competition.schedule import parse_definition
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    d = parse_definition(
        {
            "name": "m",
            "bots": ["heuristic", "random"],
            "variant": "backgammon",
            "games": 1,
            "seed": 3,
            "match_length": 7,
        }
    )
    store = SqliteStore(tmp_path / "t.db")
    Tournament(d, store, executor="inline").run()
    rows = store.games(d.tournament_id, records=True)
    store.close()
    assert len(rows) >= 2
    score = [0, 0]
    for row in sorted(rows, key=lambda r: r.game_id):
        assert row.record is not None
        game = from_arena_record(row.game_id, row.record)
        assert game.match is not None and game.rate_cube
        assert game.match.length == 7 and game.match.score == tuple(score)
        assert row.winner is not None
        score[row.winner] += row.points
    bad = dict(rows[0].record or {})
    bad["setup"] = {**bad["setup"], "match": {"length": 7, "score": [7, 0]}}
    with pytest.raises(RecordError, match="match score 7-0 in a 7-point match"):
        from_arena_record("g", bad)


def test_the_table_is_close_to_gnubgs_own() -> None:
    """GNU Backgammon's default match equity table (its Python package's ``met``), where
    installed: within 1 % before the Crawford game, 2.5 % at the Crawford and post-Crawford
    scores (the model's 20 % gammon rate is below a real Crawford game's)."""
    gnubg = pytest.importorskip("gnubg", reason="gnubg's table needs pip install 'nardy[gnubg]'")
    from nardy.quiet import quiet_stdout

    with quiet_stdout():
        pre, post, _ = gnubg.met(64)
    for a in range(2, 16):
        for b in range(2, 16):
            assert MET.mwc(a, b) == pytest.approx(float(pre[a - 1][b - 1]), abs=0.01), (a, b)
    for b in range(2, 16):
        assert MET.mwc(1, b) == pytest.approx(float(pre[0][b - 1]), abs=0.025), b
        trailer = float(post[b - 1])  # post[k]: the trailer (k + 1)-away against 1-away
        assert MET.mwc(1, b, crawford_done=True) == pytest.approx(1 - trailer, abs=0.025), b
