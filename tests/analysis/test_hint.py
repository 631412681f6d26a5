"""``nardy hint`` and :func:`nardy.analysis.hint.hint`: the engine's ranked plays and cube decision
on a position nobody played (the analysis board's question, issue 35 item 6)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from nardy.analysis.hint import hint
from nardy.cli import cli
from nardy.core import load_variant
from nardy.core.position import Position
from nardy.engines.evaluator import make_evaluator
from nardy.engines.search import Searcher

BACKGAMMON = load_variant("backgammon")
LONG = load_variant("long")
OPENING = BACKGAMMON.start_position()


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(("variant", "dice"), [(BACKGAMMON, (6, 5)), (LONG, (3, 1))])
def test_plays_are_ranked_by_the_evaluators_own_values_at_0_ply(
    variant: object, dice: tuple[int, int]
) -> None:
    """At 0-ply the ranking is the evaluator's afterstate equity of each legal play's result,
    computed here without the searcher: every legal play once, best first, losses from the best."""
    assert isinstance(variant, type(BACKGAMMON))
    position = variant.start_position()
    found = hint(variant, position, dice=dice, evaluator="heuristic")
    plays = variant.legal_plays(position, dice)
    values = make_evaluator("heuristic", variant).afterstate_equities([p.result for p in plays])
    assert sorted(p.index for p in found.plays) == list(range(len(plays)))
    assert [p.equity for p in found.plays] == sorted((float(v) for v in values), reverse=True)
    best = float(np.max(values))
    for play in found.plays:
        assert play.equity == pytest.approx(float(values[play.index]))
        assert play.loss == pytest.approx(best - play.equity)
        assert play.text == plays[play.index].text


def test_deeper_ranking_is_the_searchers_and_the_equity_its_mean_over_rolls() -> None:
    found = hint(BACKGAMMON, OPENING, dice=(3, 1), ply=1, evaluator="heuristic")
    searcher = Searcher(BACKGAMMON, make_evaluator("heuristic", BACKGAMMON))
    assert [(p.index, p.equity) for p in found.plays] == [
        (p.index, p.equity) for p in searcher.rank(OPENING, (3, 1), 1)
    ]
    assert found.equity == pytest.approx(searcher.equity(OPENING, 1))
    assert found.plays[0].text == "8/5 6/5"  # the opening 3-1 makes the 5-point


def test_the_cube_decision_only_where_the_mover_may_double() -> None:
    centred = hint(BACKGAMMON, OPENING, evaluator="heuristic")
    assert centred.cube is not None and centred.cube.double_pass == 1.0
    assert centred.plays == () and centred.dice is None
    assert hint(BACKGAMMON, OPENING, evaluator="heuristic", cube_owner="opponent").cube is None
    assert hint(LONG, LONG.start_position(), evaluator="heuristic").cube is None  # long: no cube


def test_cli_prints_the_ranking_and_json_with_every_play() -> None:
    code, out = run(
        "hint", OPENING.id(), "--dice", "3", "1", "--evaluator", "heuristic", "--top", "2"
    )
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("backgammon, 3-1 at 0-ply (heuristic): equity before the roll")
    assert lines[2].split()[:2] == ["1.", "8/5"]
    assert "more (--top" in out and out.rstrip().splitlines()[-1].startswith("cube: ")
    code, out = run(
        "hint", "4HPwATDgc/ABMA", "--dice", "3", "1", "--evaluator", "heuristic", "--json"
    )
    assert code == 0, out
    data = json.loads(out)
    count = len(BACKGAMMON.legal_plays(OPENING, (3, 1)))
    assert data["position"] == OPENING.id() and len(data["plays"]) == count
    assert [p["rank"] for p in data["plays"]] == list(range(1, count + 1))
    assert data["plays"][0]["loss"] == 0 and data["cube"]["action"] in {
        "no double",
        "double, take",
        "double, pass",
    }


def test_plakoto_pinning_steps_are_marked() -> None:
    plakoto = load_variant("plakoto")
    position = Position.from_sides({24: 1, 2: 7, 3: 7}, {1: 1, 19: 7, 20: 7})
    found = hint(plakoto, position, dice=(2, 1), evaluator="heuristic")
    assert any("^" in text for text in found.texts)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hint", "not-a-position"], "Invalid value for 'POSITION'"),
        (["hint", OPENING.id(), "--evaluator", "oracle"], "unknown evaluator 'oracle'"),
        (["hint", OPENING.id(), "--dice", "7", "1"], "Invalid value for '--dice'"),
        (["hint", OPENING.id(), "--variant", "tavli"], "needs one of those variants"),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    code, out = run(*args)
    assert code != 0 and message in out and "Traceback" not in out


def test_a_finished_game_has_no_hint() -> None:
    over = Position.from_sides({}, {24: 15}, off=(15, 0))
    code, out = run("hint", over.id(), "--dice", "3", "1", "--evaluator", "heuristic")
    assert code == 1 and "Traceback" not in out and out.startswith("Error: ")
    assert len(out.strip().splitlines()) == 1
