"""The learning example runs end to end in its short mode: training through the AEC environment,
weights on disk, the bot served with the SDK and a tournament against the built-in bots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # training

pytest.importorskip("numpy", reason="the rl extra is not installed")
pytest.importorskip("grpc", reason="the arena extra is not installed")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rl" / "td_long.py"


def test_td_example_short_mode(tmp_path):
    out = tmp_path / "td"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--short", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["encoder"] == "nardy196_v1" and meta["games"] == 30
    assert out.with_suffix(".npz").exists()
    assert "finished; 6 games stored" in done.stdout
    for bot in ("td", "heuristic", "random"):
        assert f"│ {bot}" in done.stdout
