"""``benchmarks/measure_duplicate_play.py``, the script behind docs/bots.md's duplicate-dice figures:
a pair is game ``i`` of both runs, the same dice with the seats exchanged, so swapping the bots of
``--bots`` must negate the figure exactly, whatever the bots are called in the records."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "measure_duplicate_play.py"

# A Python bot (``module:Class``) is recorded under its own ``name``, not the text of ``--bots``:
# the script once looked it up by that text, found it in no game, and counted Black's points.
FIRST_PLAY_BOT = """
from nardy.bots.base import Bot

class FirstPlay(Bot):
    name = "first-play"

    def __init__(self, seed=None):
        self.seed = seed

    def choose_play(self, decision):
        return 0
"""


def _figure(bots: str, folder: Path) -> float:
    options = ["-v", "hypergammon", "-o", "cube=false", "--games", "30", "--seed", "4"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *options, "--bots", bots],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
        },
        timeout=300,
    )
    found = re.search(r"against \S+: ([+-]\d+\.\d+) ±", done.stdout)
    assert found, done.stdout + done.stderr
    return float(found.group(1))


def test_swapping_the_bots_negates_the_figure_for_a_python_bot(tmp_path: Path) -> None:
    (tmp_path / "first_play_bot.py").write_text(textwrap.dedent(FIRST_PLAY_BOT), encoding="utf-8")
    forward = _figure("first_play_bot:FirstPlay,heuristic", tmp_path)
    backward = _figure("heuristic,first_play_bot:FirstPlay", tmp_path)
    assert forward == -backward
    assert forward < 0  # the first legal play loses to heuristic over 30 pairs
