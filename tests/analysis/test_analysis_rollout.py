"""``nardy analyze --rollout`` (nardy.analysis.rollout_errors): the errors the analysis marks are
rolled out by the one rollout there is (``nardy rollout``'s figures, the same seed), the play made
and the best among the plays, and without ``--rollout`` nothing changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nardy.analysis.game import analyse_game
from nardy.analysis.records import read_records
from nardy.analysis.rollout import record_decision, roll_decisions
from nardy.analysis.rollout_errors import ROLLED_OUT_MARKS
from nardy.cli import cli
from nardy.engines import Searcher, make_evaluator

FAST = ["--evaluator", "heuristic", "--rollout-trials", "2", "--rollout-truncate", "2"]
"""Cheap rollouts: the weak evaluator, 2 trials (the fewest), 2 rolls deep."""


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two backgammon games of random against heuristic: random's plays give many errors."""
    path = tmp_path_factory.mktemp("rollout") / "games.jsonl"
    args = ["play", "-v", "backgammon", "--bots", "random,heuristic", "--games", "2"]
    result = CliRunner().invoke(cli, [*args, "--seed", "5", "--jsonl", str(path), "-q"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def short_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hypergammon game of random against heuristic: a few errors, and rollouts to the end of
    a 3-checker game are short (a backgammon game's full rollouts take a minute)."""
    path = tmp_path_factory.mktemp("short") / "games.jsonl"
    args = ["play", "-v", "hypergammon", "--bots", "random,heuristic", "--games", "1"]
    result = CliRunner().invoke(cli, [*args, "--seed", "5", "--jsonl", str(path), "-q"])
    assert result.exit_code == 0, result.output
    return path


def _analyze(games: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["analyze", str(games), "-q", *args])
    assert result.exit_code == 0, result.output
    return result


def _json(games: Path, *args: str) -> Any:
    return json.loads(_analyze(games, "--json", *args).stdout)


@pytest.fixture(scope="module")
def rolled_out(games: Path) -> Any:
    """The two games analysed with cheap rollouts of their errors, seed 11 (the default seed, 0,
    is :func:`test_full_rollouts_and_bad_truncation`'s): one analysis for the tests that read it."""
    return _json(games, "--rollout", *FAST, "--rollout-seed", "11")


def test_the_marked_first_segments_are_rolled_out_and_nothing_else(
    games: Path, rolled_out: Any
) -> None:
    out = rolled_out
    assert out["rollout"] == {
        "trials": 2,
        "truncate": 2,
        "seed": 11,
        "top": 3,
        "marks": ["blunder", "error"],
    }
    rolled = 0
    for game, data in zip(read_records(games), out["games"], strict=True):
        starts = roll_decisions(game)
        for decision in data["decisions"]:
            wanted = (
                decision["kind"] == "play"
                and decision["mark"] in ROLLED_OUT_MARKS
                and decision["number"] in starts
            )
            assert ("rollout" in decision) == wanted, decision
            if not wanted:
                continue
            rolled += 1
            found = decision["rollout"]
            assert found["trials"] == 2 and found["truncate"] == 2
            plays = {p["play"]: p for p in found["plays"]}
            # The play made and the analysis's best are rolled out, whatever the top 3 are.
            assert decision["played"] in plays and decision["best"] in plays
            assert 3 <= len(plays) <= 5
            best = found["plays"][0]
            made = plays[decision["played"]]
            assert found["loss"] == made["loss"]
            assert made["loss"] == pytest.approx(best["equity"] - made["equity"], abs=2e-6)
    assert rolled >= 5


def test_the_figures_are_nardy_rollouts_of_the_same_decision(games: Path, rolled_out: Any) -> None:
    decision = next(d for d in rolled_out["games"][1]["decisions"] if "rollout" in d)
    args = ["rollout", "--record", str(games), "--game", "2"]
    args += ["--decision", str(decision["number"]), "--evaluator", "heuristic"]
    args += ["--trials", "2", "--truncate", "2", "--seed", "11", "--top", "5", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    alone = {p["play"]: p for p in json.loads(result.output)["plays"]}
    for play in decision["rollout"]["plays"]:
        if play["play"] in alone:  # each play's trials are its own: the same dice, the same seed
            assert play["equity"] == alone[play["play"]]["equity"]
            assert play["se"] == alone[play["play"]]["se"]
    assert decision["rollout"]["plays"][0]["play"] in alone


def test_without_rollout_the_output_is_unchanged(short_game: Path) -> None:
    games = short_game
    plain = _analyze(games, "--evaluator", "heuristic", "--show", "all").stdout
    rolled = _analyze(games, "--show", "all", "--rollout", *FAST, "--rollout-top", "1")
    lines = rolled.stdout.splitlines()
    extra = [line for line in lines if line.strip().startswith("rolled out (")]
    assert extra
    assert [line for line in lines if line not in extra] == plain.splitlines()
    assert "rolled out" not in plain
    # Each rolled-out line follows its decision's line: the play made and the best, ± SE.
    for line in extra:
        assert "played " in line and "best " in line and " ± " in line
    data = _json(games, "--evaluator", "heuristic")
    assert "rollout" not in data
    assert not any("rollout" in d for g in data["games"] for d in g["decisions"])


def test_full_rollouts_and_bad_truncation(short_game: Path) -> None:
    games = short_game
    out = _json(games, "--evaluator", "heuristic", "--rollout", "--rollout-trials", "2")
    assert out["rollout"]["truncate"] == 5 and out["rollout"]["seed"] == 0  # the defaults
    out = _json(
        games,
        "--evaluator",
        "heuristic",
        "--rollout",
        "--rollout-trials",
        "2",
        "--rollout-truncate",
        "full",
    )
    found = next(d["rollout"] for g in out["games"] for d in g["decisions"] if "rollout" in d)
    assert found["truncate"] is None
    # A full game's result is whole points: the plain results of 2 trials average to halves.
    for play in found["plays"]:
        assert (play["plain_equity"] * 2) == pytest.approx(round(play["plain_equity"] * 2))
    for option, value in (("--rollout-trials", "9"), ("--rollout-seed", "0")):
        result = CliRunner().invoke(cli, ["analyze", str(games), option, value])
        assert result.exit_code == 2
        assert f"{option} goes with --rollout" in result.output
    result = CliRunner().invoke(cli, ["analyze", str(games), "--rollout", "--show", "none"])
    assert result.exit_code == 2
    assert "--rollout with --show none shows nothing" in result.output
    for bad in ("-1", "five"):
        result = CliRunner().invoke(
            cli, ["analyze", str(games), "--rollout", "--rollout-truncate", bad]
        )
        assert result.exit_code == 2
        assert "is not a number of rolls (0 or more) or 'full'" in result.output
        assert "Traceback" not in result.output


def test_roll_decisions_are_the_first_segments_record_decision_accepts(tmp_path: Path) -> None:
    # In mad a double is a progression (RULES.md §2.8): its later stages are segments of the turn
    # that a rollout cannot start from.
    path = tmp_path / "mad.jsonl"
    args = ["play", "-v", "mad", "--bots", "heuristic,heuristic", "--games", "1"]
    result = CliRunner().invoke(cli, [*args, "--seed", "2", "--jsonl", str(path), "-q"])
    assert result.exit_code == 0, result.output
    game = read_records(path)[0]
    starts = roll_decisions(game)
    # The analysis's decision numbers (without the rolls' luck, which changes none of them and
    # was most of the test's time).
    searcher = Searcher(game.variant, make_evaluator("heuristic", game.variant))
    analysed = analyse_game(game, searcher, luck_ply=None)
    plays = [d.number for d in analysed.decisions if d.kind == "play"]
    later = [n for n in plays if n not in starts]
    assert set(starts) <= set(plays)
    assert later, "the game has no progression: choose another seed"
    for number in plays:
        if number in starts:
            assert record_decision(game, number) == starts[number]
        else:
            with pytest.raises(Exception, match="not the first segment of a roll"):
                record_decision(game, number)
