"""``nardy protos --out DIR``: the .proto files shipped in the package, enough on their own to
build a bot (protoc compiles them; the JavaScript example runs on them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bot_process import BotProcess
from click.testing import CliRunner

from nardy.arena.clients.bot_client import GrpcBotClient
from nardy.cli import cli

REPO_PROTOS = Path(__file__).resolve().parents[2] / "protos"
JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.proto")}


def test_writes_exactly_the_repository_protos(tmp_path: Path) -> None:
    out = tmp_path / "protos"
    (out / "nardy" / "bot" / "v1").mkdir(parents=True)
    (out / "nardy" / "bot" / "v1" / "bot.proto").write_text("stale")
    (out / "mine.txt").write_text("kept")
    result = CliRunner().invoke(cli, ["protos", "--out", str(out)])
    assert result.exit_code == 0, result.output
    expected = {
        p.relative_to(REPO_PROTOS).as_posix(): p.read_bytes() for p in REPO_PROTOS.rglob("*.proto")
    }
    assert set(expected) == {
        "nardy/arena/v1/arena.proto",
        "nardy/bot/v1/bot.proto",
        "nardy/game/v1/game.proto",
    }
    assert _tree(out) == expected  # the stale copy replaced
    assert (out / "mine.txt").read_text() == "kept"  # nothing else touched
    assert sorted(result.stdout.split()) == sorted(str(out / name) for name in expected)


def test_out_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(cli, ["protos", "--out", str(tmp_path / "file")])
    assert result.exit_code == 2
    assert "is a file" in result.output and "Traceback" not in result.output


def test_written_protos_compile_with_protoc_alone(tmp_path: Path) -> None:
    """Only the written folder and protoc's own well-known types: the include root is complete."""
    grpc_tools = pytest.importorskip("grpc_tools")
    from grpc_tools import protoc

    assert CliRunner().invoke(cli, ["protos", "--out", str(tmp_path / "p")]).exit_code == 0
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    (tmp_path / "gen").mkdir()
    files = sorted(
        p.relative_to(tmp_path / "p").as_posix() for p in (tmp_path / "p").rglob("*.proto")
    )
    code = protoc.main(
        [
            "protoc",
            f"-I{tmp_path / 'p'}",
            f"-I{well_known}",
            f"--python_out={tmp_path / 'gen'}",
            *files,
        ]
    )
    assert code == 0
    assert (tmp_path / "gen" / "nardy" / "arena" / "v1" / "arena_pb2.py").is_file()


def test_js_bot_runs_on_the_written_protos(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("needs node and `npm ci` in examples/bots/js (.ci/run does both)")
    assert CliRunner().invoke(cli, ["protos", "--out", str(tmp_path / "p")]).exit_code == 0
    bot = BotProcess(
        [node, str(JS_BOT / "bot.js"), "0", "1"], env={"NARDY_PROTOS": str(tmp_path / "p")}
    )
    try:
        address = bot.wait_for(r"^LISTENING ")[0].split()[1]
        assert GrpcBotClient(address).get_info().name == "js-random"
    finally:
        assert bot.stop() == 0, bot.lines


def test_installed_script(tmp_path: Path) -> None:
    """The console script, as a bot author runs it."""
    result = subprocess.run(
        [sys.executable, "-m", "nardy", "protos", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "include root" in result.stderr and len(result.stdout.splitlines()) == 3
