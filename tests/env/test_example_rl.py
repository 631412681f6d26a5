"""The learning example runs end to end in its short mode: training through the AEC environment,
weights on disk, the bot served with the SDK and a tournament against the built-in bots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import load_module

pytest.importorskip("numpy", reason="the rl extra is not installed")
pytest.importorskip("grpc", reason="the arena extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rl" / "td_long.py"


def test_the_weights_do_not_go_into_the_repository(monkeypatch):
    """Run from the repository root (as the README does), the default stem is outside it."""
    module = load_module("td_long_example", EXAMPLE)
    monkeypatch.chdir(ROOT)
    out = module.parse_arguments(["--short"]).out.resolve()
    assert not out.is_relative_to(ROOT), out
    assert module.parse_arguments(["--out", "w"]).out == Path("w")


@pytest.mark.slow  # training
def test_td_example_short_mode(tmp_path):
    """Run with no --out: the weights go to the user's cache, never the working directory."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--short"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    out = cache / "nardy" / "td-long"
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["encoder"] == "nardy196_v1" and meta["games"] == 30
    assert out.with_suffix(".npz").exists()
    assert not list(cwd.iterdir())
    assert "finished; 6 games stored" in done.stdout
    for bot in ("td", "heuristic", "random"):
        assert f"│ {bot}" in done.stdout
