"""The arena as the README and the docs show it: the commands run as written on one machine, the
JavaScript examples say `npm ci` when their dependencies are missing, built-ins with an argument
(`gnubg:0`) are built-ins, and a built-in that cannot play here is refused before the start."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.arena.cli import arena_group
from nardy.arena.competition.schedule import split_bots_flag

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "examples" / "bots" / "js"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # two servers started: about 10 s
def test_the_readme_arena_lines_run_as_written(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- readme-arena:start -->")[1].split("<!-- readme-arena:end -->")[0]
    script = block.strip().removeprefix("```sh").removesuffix("```")
    arena_port, bot_port = _free_port(), _free_port()
    script = script.replace("50050", str(arena_port)).replace("50051", str(bot_port))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NARDY_ARENA": f"127.0.0.1:{arena_port}",  # the commands' default, moved with the port
    }
    env.pop("NARDY_ARENA_TOKEN", None)
    log = tmp_path / "readme.log"
    with log.open("w") as out_file:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the background servers die with it
        )
        try:
            proc.wait(timeout=90)  # bash ends with the last command; its servers do not
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = log.read_text()
    assert proc.returncode == 0, out
    assert "registered heur" in out, out


def test_the_js_examples_say_npm_ci_when_their_dependencies_are_missing(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    for name in ("bot.js", "dial_out.js", "player.js", "deps.js"):
        shutil.copy(JS / name, tmp_path / name)  # a copy without node_modules anywhere above it
    for script, args in (("bot.js", ["0", "1"]), ("dial_out.js", ["127.0.0.1:1"])):
        result = subprocess.run(
            [node, str(tmp_path / script), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "NARDY_BOT_TOKEN": "t"},
            cwd=tmp_path,
        )
        assert result.returncode == 2, result
        lines = result.stderr.strip().splitlines()
        assert lines == ["@grpc/grpc-js is not installed: run `npm ci` in . first"], lines


def test_builtins_with_an_argument_are_builtins_not_hosts() -> None:
    assert split_bots_flag("g=gnubg:0,n=neural:w.npz,remote=bots.example:50051,random") == [
        {"name": "g", "builtin": "gnubg:0"},
        {"name": "n", "builtin": "neural:w.npz"},
        {"name": "remote", "endpoint": "bots.example:50051"},
        {"name": "random", "builtin": "random"},
    ]


def test_a_tournament_with_gnubg_missing_is_refused_before_it_starts(tmp_path: Path) -> None:
    if importlib.util.find_spec("gnubg") is not None:
        pytest.skip("gnubg is installed here")
    db = tmp_path / "t.db"
    result = CliRunner().invoke(
        arena_group,
        ["run", "--variant", "backgammon", "--bots", "gnubg0=gnubg:0,random", "--db", str(db)],
    )
    assert result.exit_code != 0
    assert "gnubg0 (gnubg:0)" in result.output and "pip install 'nardy[gnubg]'" in result.output
    assert "Traceback" not in result.output
    assert not db.exists()  # nothing started, nothing stored
