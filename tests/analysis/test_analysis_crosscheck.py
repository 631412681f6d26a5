"""nardy's backgammon analysis against GNU Backgammon 1.07's own (``gnubg -t``, ``analyse match``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.analysis.crosscheck import (
    Agreement,
    canonical_play,
    compare,
    gnubg_program,
    parse_export,
    run_gnubg,
)

_EXPORT = """\
Rolled 65:
     1. Cubeless 0-ply   24/13                        Eq.: +0.055
       0.530 0.150 0.010 - 0.470 0.120 0.005
*    3. Cubeless 0-ply   13/8 13/7                    Eq.: -0.034 (-0.090)
* random cannot move
Rolled 52:
     1. Cubeless 0-ply   bar/20 13/11                 Eq.: -0.315
*   ??  Cubeless 0-ply   bar/23 8/3                   Eq.: -0.576 (-0.261)
"""


def test_gnubg_export_is_parsed() -> None:
    first, second = parse_export(_EXPORT)
    assert first.dice == (6, 5) and first.played == 1
    assert first.loss == pytest.approx(0.089)
    assert second.candidates[second.played] == ("bar/23 8/3", -0.576)


def test_notations_of_one_play_agree() -> None:
    assert canonical_play("24/13") == canonical_play("24/18/13") == canonical_play("24/18 18/13")
    assert canonical_play("13/9(2)") == canonical_play("13/9 13/9")
    assert canonical_play("bar/20") == canonical_play("25/20")
    assert canonical_play("6/2* 3/2") != canonical_play("6/2 3/2")  # a hit is another position
    assert canonical_play("24/13") != canonical_play("13/2")


@pytest.mark.slow
@pytest.mark.skipif(gnubg_program() is None, reason="the gnubg program is not installed")
@pytest.mark.skipif(importlib.util.find_spec("gnubg") is None, reason="no gnubg package")
def test_best_plays_agree_with_gnubg_107(tmp_path: Path) -> None:
    from nardy.analysis.records import read_records
    from nardy.analysis.stats import analyse_games
    from nardy.cli import cli

    args = ["play", "-v", "backgammon", "-o", "cube=false", "--bots", "heuristic,random"]
    result = CliRunner().invoke(
        cli, [*args, "--games", "3", "--seed", "4", "--mat", str(tmp_path / "g.mat"), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    program = gnubg_program()
    assert program is not None
    total = Agreement()
    for path in sorted(tmp_path.glob("*.mat")):
        analyses = analyse_games(read_records(path), "gnubg", 0)
        total.add(compare(analyses, parse_export(run_gnubg(path, program))))
    assert total.misaligned == 0 and total.decisions > 60, total.line()
    assert total.same_best >= 0.95 * total.decisions, total.line()
    # Where the best plays differ they are near ties to gnubg, and the errors agree closely
    # (the Python package's nets are not bit-identical to gnubg 1.07's).
    assert total.max_best_gap < 0.01, total.disagreements
    assert total.loss_within >= 0.8 * total.decisions, total.line()
    assert total.max_loss_diff < 0.05, total.line()
