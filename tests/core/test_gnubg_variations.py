"""Hypergammon (1-, 2-, 3-checker) and the example nackgammon plugin against GNU Backgammon 1.07.

RULES.md §3.11: "where this section is silent, GNU Backgammon 1.07 plays these variations and is
the oracle (its hint/move listing for legal plays, its .mat/SGF import for whole games)". gnubg
evaluates hypergammon only with databases that Debian does not ship, so its hint listing is empty
there; legal plays are cross-checked through its ``move`` command instead, which accepts a move
only when it is one of gnubg's legal moves:

* **Legal plays.** For several hundred positions reached in random games, every result of every
  physically possible step sequence with the dice (found by brute force here, independently of
  the move generator: any checker, any order, any number of dice) is offered to gnubg as a move.
  gnubg must accept exactly the results that nardy lists as legal, and reach the same board.
* **Scores of whole games.** Random games played with nardy's generator are exported as ``.mat``
  and imported into gnubg, which recognises the variation from the moves; gnubg must name the same
  variation, flag no move, and agree on every game's result (single, gammon, backgammon) and the
  final score.

The tests skip, with the reason, only when gnubg is not installed (CI installs it).
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path
from typing import Any

import pluggy
import pytest
from script_modules import load_module
from test_gnubg_formats import _run_gnubg, needs_gnubg

from nardy.core import hookspecs, load_variant
from nardy.core.gnubg import (
    MatAction,
    MatchRecord,
    MatGame,
    mat_moves_from_steps,
    write_mat,
)
from nardy.core.notation import BAR, OFF, Step
from nardy.core.plugins import DEFAULT_PLUGINS
from nardy.core.position import Position
from nardy.core.variant import Variant, apply_steps

pytestmark = pytest.mark.slow  # GNU Backgammon cross-checks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nardy-nackgammon"


def _nackgammon() -> Variant:
    """The example third-party plugin, loaded from its source file into a private manager."""
    module = load_module("nardy_nackgammon", EXAMPLE / "nardy_nackgammon.py")
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    pm.register(module, name="nardy_nackgammon")
    return load_variant("nackgammon", None, pm)


# (gnubg's variation, nardy variant, positions to check)
VARIATIONS: list[tuple[str, str, dict[str, Any], int]] = [
    ("1-chequer hypergammon", "hypergammon", {"checkers": 1}, 60),
    ("2-chequer hypergammon", "hypergammon", {"checkers": 2}, 100),
    ("3-chequer hypergammon", "hypergammon", {"checkers": 3}, 150),
    ("nackgammon", "nackgammon", {}, 100),
]


def _variant(name: str, options: dict[str, Any]) -> Variant:
    return _nackgammon() if name == "nackgammon" else load_variant(name, options)


def _segment(dice: tuple[int, int]) -> tuple[int, ...]:
    return dice if dice[0] != dice[1] else (dice[0],) * 4


def _sample_positions(
    variant: Variant, count: int, seed: int
) -> list[tuple[Position, tuple[int, int]]]:
    """Distinct (position, dice) pairs from random games of ``variant`` (random legal plays)."""
    rng = random.Random(seed)
    found: dict[tuple[Position, tuple[int, int]], None] = {}
    while len(found) < count:
        position = variant.start_position()
        for _ in range(200):
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            if rng.random() < 0.5:
                found.setdefault((position, dice), None)
            plays = variant.legal_plays(position, _segment(dice))
            result = rng.choice(list(plays)).result
            if variant.is_finished(result) or len(found) >= count:
                break
            position = variant.flip(result)
    return list(found)


def _physical_results(position: Position, dice: tuple[int, ...]) -> dict[Position, list[Step]]:
    """Every position that some sequence of steps with some of ``dice`` reaches, ignoring every
    rule but the board's physics (a checker moves by one die; it cannot land on two or more
    opposing checkers; past point 1 it is off). Independent of the move generator."""
    found: dict[Position, list[Step]] = {position: []}

    def walk(current: Position, steps: list[Step], left: tuple[int, ...]) -> None:
        for index, die in enumerate(left):
            if die in left[:index]:
                continue
            rest = left[:index] + left[index + 1 :]
            sources = [BAR] if current.bar[0] else []
            sources += [p for p in range(1, 25) if current.points[p - 1] > 0]
            for src in sources:
                dst = max(src - die, OFF)
                hit = dst != OFF and current.points[dst - 1] == -1
                step = Step(src, dst, die, hit)
                try:
                    after = apply_steps(current, [step])
                except ValueError:
                    continue
                path = [*steps, step]
                if after not in found:
                    found[after] = path
                walk(after, path, rest)

    walk(position, [], dice)
    return found


def _gnubg_move(steps: list[Step]) -> str:
    return " ".join(
        f"{'bar' if s.src == BAR else s.src}/{'off' if s.dst == OFF else s.dst}" for s in steps
    )


def _sides(position: Position) -> list[list[int]]:
    """gnubg's board after the mover moved: [mover (now not on roll), opponent (on roll)]."""
    mover = [max(c, 0) for c in position.points] + [position.bar[0]]
    opponent = [max(-position.points[24 - q], 0) for q in range(1, 25)] + [position.bar[1]]
    return [mover, opponent]


def _board_before(position: Position) -> list[list[int]]:
    mover, opponent = _sides(position)
    return [opponent, mover]


_LEGALITY_SCRIPT = """
import gnubg, json, sys

cases = json.load(open({path!r}))
gnubg.command("set variation {variation}")
gnubg.command("set player 0 human")
gnubg.command("set player 1 human")
gnubg.command("set automatic game off")
gnubg.command("set jacoby off")
gnubg.command("new session")
print("@@READY"); sys.stdout.flush()
answers = []
for board, dice, moves in cases:
    row = []
    for move in moves:
        if gnubg.posinfo()["gamestate"] != 1:
            gnubg.command("new game")
        gnubg.command("set turn 1")
        gnubg.command("set board " + gnubg.positionid((tuple(board[0]), tuple(board[1]))))
        gnubg.command("set dice %d %d" % tuple(dice))
        before = [list(s) for s in gnubg.board()]
        gnubg.command("move " + move)
        after = [list(s) for s in gnubg.board()]
        row.append(None if after == before else after)
    answers.append(row)
json.dump(answers, open({out!r}, "w"))
print("@@DONE"); sys.stdout.flush()
"""


def _gnubg_legality(
    variation: str, cases: list[tuple[list[list[int]], tuple[int, int], list[str]]], tmp_path: Path
) -> list[list[list[list[int]] | None]]:
    data, out, script = tmp_path / "cases.json", tmp_path / "answers.json", tmp_path / "check.py"
    data.write_text(json.dumps(cases))
    script.write_text(_LEGALITY_SCRIPT.format(path=str(data), out=str(out), variation=variation))
    output = _run_gnubg(["-p", str(script)], tmp_path)
    if "@@READY" not in output:
        pytest.skip(f"this gnubg build cannot run Python scripts (-p): {output[-500:]}")
    assert "@@DONE" in output, output[-3000:]
    answers: list[list[list[list[int]] | None]] = json.loads(out.read_text())
    return answers


@needs_gnubg
@pytest.mark.parametrize(("variation", "name", "options", "count"), VARIATIONS)
def test_gnubg_accepts_exactly_the_legal_plays(
    variation: str, name: str, options: dict[str, Any], count: int, tmp_path: Path
) -> None:
    variant = _variant(name, options)
    cases: list[tuple[list[list[int]], tuple[int, int], list[str]]] = []
    expected: list[list[tuple[bool, list[list[int]]]]] = []
    for position, dice in _sample_positions(variant, count, seed=len(variation)):
        legal = variant.legal_plays(position, _segment(dice)).results
        candidates = _physical_results(position, _segment(dice))
        moves, rows = [], []
        for result, steps in candidates.items():
            if not steps:
                continue  # the empty play: gnubg has no move command for it (see below)
            moves.append(_gnubg_move(steps))
            rows.append((result in legal, _sides(result)))
        if legal == frozenset({position}):
            # No legal play: gnubg must then refuse every move (checked below).
            assert all(not ok for ok, _ in rows)
        cases.append((_board_before(position), dice, moves))
        expected.append(rows)
    answers = _gnubg_legality(variation, cases, tmp_path)
    assert len(answers) == len(cases)
    checked = disagreements = 0
    report = []
    for case, rows, row in zip(cases, expected, answers, strict=True):
        for move, (ours, board), theirs in zip(case[2], rows, row, strict=True):
            checked += 1
            if ours != (theirs is not None) or (theirs is not None and theirs != board):
                disagreements += 1
                report.append(f"dice {case[1]} board {case[0]} move {move}: nardy {ours}")
    print(
        f"{variation}: {len(cases)} positions, {checked} candidate plays, {disagreements} disagreements"
    )
    assert disagreements == 0, "\n".join(report[:20])
    assert checked > 2 * len(cases)


def _random_session(variant: Variant, seed: int, games: int) -> MatchRecord:
    """Cubeless random games of ``variant`` with nardy's generator, as a money session."""
    rng = random.Random(seed)
    score = [0, 0]
    records = []
    for _ in range(games):
        position = variant.start_position()
        while True:  # the opening throw: no doubles, the higher die starts
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            if dice[0] != dice[1]:
                break
        player = rng.randint(0, 1)
        before = (score[0], score[1])
        actions = []
        while True:
            play = rng.choice(list(variant.legal_plays(position, _segment(dice))))
            actions.append(MatAction.roll(player, dice, mat_moves_from_steps(play.steps)))
            if variant.is_finished(play.result):
                points = variant.game_points(variant.loser_side(play.result, 1), jacoby=False)
                score[player] += points
                records.append(MatGame(before, actions, player, points))
                break
            position = variant.flip(play.result)
            player = 1 - player
            dice = (rng.randint(1, 6), rng.randint(1, 6))
    return MatchRecord(("nardyA", "nardyB"), 0, records)


@needs_gnubg
@pytest.mark.parametrize(("variation", "name", "options", "count"), VARIATIONS)
def test_gnubg_scores_whole_games_as_nardy(
    variation: str, name: str, options: dict[str, Any], count: int, tmp_path: Path
) -> None:
    variant = _variant(name, options)
    record = _random_session(variant, seed=count, games=30)
    source = tmp_path / "games.mat"
    source.write_text(write_mat(record))
    # gnubg's .mat import recognises the variation from the moves ("show variation" then says
    # "You are playing: …"), whatever the default variation is; it must recognise ours.
    commands = f"set jacoby off\nimport mat {source}\nshow score\nshow variation\n"
    output = _run_gnubg([], tmp_path, stdin=commands)
    assert "Invalid" not in output and "WARNING" not in output, output[-3000:]
    assert f"you are playing: {variation}" in output.lower(), output[-1000:]
    found = re.findall(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+)", output)
    assert found, output[-3000:]
    games, name1, score1, name2, score2 = found[-1]
    assert int(games) == len(record.games)
    assert {name1: int(score1), name2: int(score2)} == dict(
        zip(record.players, record.final_score, strict=True)
    )
    values = sorted({g.points for g in record.games})
    print(f"{variation}: {len(record.games)} games, values {values}, score {record.final_score}")
    if variant.checkers == 3:
        assert 2 in values, "a 3-checker game scores gammons"
