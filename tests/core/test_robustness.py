"""Robustness fixes of issue 11 §5: bad input gets an answer or one line, never a crash."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from nardy.cli import cli
from nardy.core import GameStateError, Position, load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.game import CubeSettings, Game
from nardy.core.jsonl import run_jsonl_stream
from nardy.core.mat import mat_game
from nardy.core.record import of_game

BACKGAMMON = load_variant("backgammon")
START = BACKGAMMON.start_position()
GOOD = json.dumps({"position": START.to_json(), "dice": [3, 1]})
DEEP = "[" * 1000 + "]" * 1000


def test_jsonl_answers_every_line_of_a_buffer_with_a_deeply_nested_one() -> None:
    deep_id = (
        json.dumps({"position": START.to_json(), "dice": [3, 1]})[:-1] + ', "id": ' + DEEP + "}"
    )
    lines = [GOOD, DEEP, '{"position": ' + DEEP + ', "dice": [3, 1]}', deep_id, GOOD]
    out = io.StringIO()
    stats = run_jsonl_stream(BACKGAMMON, io.BytesIO("\n".join(lines).encode()), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == 5 and stats.queries == 5 and stats.errors == 3
    assert "plays" in answers[0] and "plays" in answers[4]
    assert all("nested too deeply" in answer["error"] for answer in answers[1:4])


def test_show_and_plays_refuse_deep_json_in_one_line() -> None:
    runner = CliRunner()
    deep = '{"points": ' + DEEP + "}"
    for args in (["show", deep], ["plays", "-v", "backgammon", deep, "31"]):
        done = runner.invoke(cli, args)
        assert done.exit_code == 2, done.output
        assert "nested too deeply" in done.output and "Traceback" not in done.output


def test_a_finished_position_has_no_plays() -> None:
    finished = Position.from_sides({}, {6: 3}, off=(15, 12))
    with pytest.raises(GameStateError, match="the game is over: the mover has borne off all 15"):
        BACKGAMMON.legal_plays(finished, (3, 1))
    out = io.StringIO()
    query = json.dumps({"position": finished.to_json(), "dice": [3, 1]})
    run_jsonl_stream(BACKGAMMON, io.BytesIO(query.encode()), out)
    assert "the game is over" in json.loads(out.getvalue())["error"]


def test_mat_export_refuses_automatic_doubles() -> None:
    variant = load_variant("backgammon", {"auto_doubles": True})
    cube = CubeSettings(enabled=True, auto_doubles_limit=1)
    game = Game(variant, ScriptedDice([(3, 3), (4, 2), (6, 5)]), cube=cube)
    assert game.cube.value == 2
    with pytest.raises(GameStateError, match="no automatic doubles"):
        mat_game(of_game(game), (0, 0))
    done = CliRunner().invoke(
        cli, ["play", "-v", "backgammon", "-o", "auto_doubles=true", "--mat", "m.mat"]
    )
    assert done.exit_code == 2 and "no automatic doubles" in done.output


@pytest.mark.parametrize("seed", ["-5", str(10**23)])
def test_play_seed_has_the_arena_range(seed: str) -> None:
    done = CliRunner().invoke(cli, ["play", "-v", "long", "--games", "1", "--seed", seed])
    assert done.exit_code == 2
    assert "is not in the range 0<=x<=9223372036854775807" in done.output


@pytest.mark.slow  # a subprocess interrupted mid-run
def test_ctrl_c_in_play_shows_the_seed_and_the_partial_summary() -> None:
    command = [sys.executable, "-m", "nardy", "play", "-v", "long", "--games", "1000000"]
    child = subprocess.Popen(
        [*command, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert child.stderr is not None
    first = child.stderr.readline()  # printed before the first game: a random seed
    found = re.fullmatch(r"Seed (\d+) \(random; repeat this run with --seed \1\)\.\n", first)
    assert found, first
    seed = found[1]
    time.sleep(1.5)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert (
        "Interrupted after" in stderr and f"(seed {seed})" in stderr and "Traceback" not in stderr
    )
    assert "heuristic" in stdout and "Points/game" in stdout  # the partial summary


def test_the_seed_line_only_for_a_random_seed() -> None:
    """A seed given with --seed is not echoed back as advice to give it; a random one is printed
    before the first game, so that the run can be repeated."""
    given = CliRunner().invoke(cli, ["play", "-v", "long", "--games", "1", "--seed", "7"])
    assert given.exit_code == 0, given.output
    assert "repeat this run" not in given.output and "seed 7" in given.output
    drawn = CliRunner().invoke(cli, ["play", "-v", "long", "--games", "1"])
    assert drawn.exit_code == 0, drawn.output
    seed = re.search(r"Seed (\d+) \(random; repeat this run with --seed (\d+)\)\.", drawn.output)
    assert seed and seed[1] == seed[2] and f"seed {seed[1]}" in drawn.output


def test_show_accepts_gnubg_position_ids() -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["show", "4HPwATDgc/ABMA", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["id"] == START.id()
    done = runner.invoke(cli, ["show", "-v", "hypergammon", "AACgAgAAKgAAAA", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["id"] == load_variant("hypergammon").start_position().id()
    done = runner.invoke(cli, ["show", "4HPwATDgc/ABMB"])
    assert done.exit_code == 2 and "Traceback" not in done.output
