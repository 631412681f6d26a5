"""The vector-environment example (examples/rl/vector_mc.py) runs end to end in its short mode."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gymnasium", reason="the rl extra is not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl" / "vector_mc.py"


@pytest.mark.slow  # training and 40 games against random: a few seconds
def test_vector_example_short_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--short"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"64 self-play games .* won (\d+) of 40 ", done.stdout)
    assert found, done.stdout
    assert not list(tmp_path.iterdir())  # nothing written
