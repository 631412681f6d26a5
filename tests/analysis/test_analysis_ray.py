"""``nardy analyze --executor ray``: the same analysis as the serial run, game for game, on a real
Ray cluster; and the clear errors of a cluster that cannot be used.

The cluster is a head of two CPUs (``ray start --block``) in a network namespace of its own where
loopback is the only interface (as in ``tests/arena/test_ray.py``: Ray would otherwise advertise
the machine's address); every Ray process and the driver run in it (``nsenter``), and are stopped
by process id.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from ray_head import free_port, two_cpu_head

from nardy.cli import cli
from nardy.testing.ray_cluster import LoopbackCluster

HEAD_PORT = 6393
ADDRESS = f"127.0.0.1:{HEAD_PORT}"


def _games(tmp_path: Path) -> Path:
    """Six games in two variants (a worker then keeps two searchers)."""
    out = tmp_path / "games.jsonl"
    lines = []
    for variant, seed in (("backgammon", 3), ("long", 4)):
        path = tmp_path / f"{variant}.jsonl"
        play = ["play", "-v", variant, "--bots", "heuristic,random", "--games", "3"]
        result = CliRunner().invoke(cli, [*play, "--seed", str(seed), "--jsonl", str(path), "-q"])
        assert result.exit_code == 0, result.output
        lines.append(path.read_text())
    out.write_text("".join(lines))
    return out


def test_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    games = tmp_path / "g.jsonl"
    games.write_text("{}\n")
    result = CliRunner().invoke(cli, ["analyze", str(games), "--ray-address", ADDRESS])
    assert result.exit_code == 2
    assert "--ray-address goes with --executor ray" in result.output


def test_an_unreachable_cluster_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    games = _games(tmp_path)
    port = free_port()
    args = ["analyze", str(games), "-q", "--executor", "ray"]
    result = CliRunner().invoke(cli, [*args, "--ray-address", f"127.0.0.1:{port}"])
    assert result.exit_code == 1
    assert f"cannot connect to Ray at 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """A two-CPU Ray head in a network namespace of its own."""
    yield from two_cpu_head(HEAD_PORT)


@pytest.mark.slow  # a Ray cluster
def test_analysis_on_ray_equals_the_serial_run(cluster: LoopbackCluster, tmp_path: Path) -> None:
    games = _games(tmp_path)
    args = ["analyze", str(games), "--show", "all", "--json", "-q"]
    serial = CliRunner().invoke(cli, args)
    assert serial.exit_code == 0, serial.output
    ray_args = [*args, "--executor", "ray", "--ray-address", ADDRESS]
    on_ray = cluster.run([sys.executable, "-m", "nardy", *ray_args], timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    expected, got = json.loads(serial.output), json.loads(on_ray.stdout)
    assert len(got["games"]) == 6
    assert [g["game"] for g in got["games"]] == [g["game"] for g in expected["games"]]
    assert got == expected  # every decision, equity, luck and total, bit for bit
