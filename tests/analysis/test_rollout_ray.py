"""``nardy rollout --executor ray``: the same rollout as the local run for the same seed, on a real
Ray cluster; the trials split in order; and the clear errors of a cluster that cannot be used.

The cluster is a head of two CPUs (``ray start --block``) in a network namespace of its own where
loopback is the only interface (as in ``tests/analysis/test_analysis_ray.py``); the driver runs in it
(``nsenter``), and every Ray process is stopped by process id.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from ray_head import free_port, two_cpu_head

from nardy.analysis.rollout_ray import split
from nardy.cli import cli
from nardy.testing.ray_cluster import LoopbackCluster

HEAD_PORT = 6395
ADDRESS = f"127.0.0.1:{HEAD_PORT}"
ROLLOUT = ["rollout", "4HPwATDgc/ABMA", "--dice", "4", "2", "--evaluator", "heuristic"]
"""The backgammon opening 4-2, rolled out by the cheap evaluator."""


def test_split_keeps_every_trial_once_in_order() -> None:
    for first, count, parts in ((0, 36, 2), (36, 36, 5), (72, 7, 16), (5, 1, 3)):
        runs = split(first, count, parts)
        trials = [t for a, n in runs for t in range(a, a + n)]
        assert trials == list(range(first, first + count))
        assert len(runs) == min(parts, count)
        sizes = [n for _, n in runs]
        assert max(sizes) - min(sizes) <= 1


def test_ray_address_needs_the_ray_executor() -> None:
    result = CliRunner().invoke(cli, [*ROLLOUT, "--ray-address", ADDRESS])
    assert result.exit_code == 2
    assert "--ray-address goes with --executor ray" in result.output


def test_without_ray_or_a_cluster_one_clear_error() -> None:
    args = [*ROLLOUT, "--trials", "2", "--executor", "ray", "-q"]
    try:
        import ray  # noqa: F401
    except ImportError:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1
        assert "nardy rollout --executor ray needs ray: pip install 'nardy[ray]'" in result.output
        assert "Traceback" not in result.output
        return
    port = free_port()
    result = CliRunner().invoke(cli, [*args, "--ray-address", f"127.0.0.1:{port}"])
    assert result.exit_code == 1
    assert f"cannot connect to Ray at 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """A two-CPU Ray head in a network namespace of its own."""
    yield from two_cpu_head(HEAD_PORT)


@pytest.mark.slow  # a Ray cluster
def test_rollout_on_ray_equals_the_local_run(cluster: LoopbackCluster) -> None:
    # 45 trials: a batch of 36 split between the two CPUs, then a batch of 9.
    args = [*ROLLOUT, "--trials", "45", "--truncate", "3", "--seed", "5", "--json", "-q"]
    local = CliRunner().invoke(cli, args)
    assert local.exit_code == 0, local.output
    ray_args = [*args, "--executor", "ray", "--ray-address", ADDRESS]
    on_ray = cluster.run([sys.executable, "-m", "nardy", *ray_args], timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    expected, got = json.loads(local.output), json.loads(on_ray.stdout)
    assert got["trials"] == 45
    assert got == expected  # every play's equity, SE and loss, bit for bit
    other = CliRunner().invoke(cli, [*args[:-4], "--seed", "6", "--json", "-q"])
    assert json.loads(other.output)["plays"] != got["plays"]  # the seed matters


@pytest.mark.slow  # a Ray cluster
def test_analyze_rollout_on_ray_equals_the_local_run(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    games = tmp_path / "games.jsonl"
    play = ["play", "-v", "backgammon", "--bots", "random,heuristic", "--games", "1"]
    result = CliRunner().invoke(cli, [*play, "--seed", "5", "--jsonl", str(games), "-q"])
    assert result.exit_code == 0, result.output
    args = ["analyze", str(games), "--evaluator", "heuristic", "--json", "-q", "--rollout"]
    args += ["--rollout-trials", "40", "--rollout-truncate", "2", "--rollout-seed", "4"]
    local = CliRunner().invoke(cli, args)
    assert local.exit_code == 0, local.output
    ray_args = [*args, "--executor", "ray", "--ray-address", ADDRESS]
    on_ray = cluster.run([sys.executable, "-m", "nardy", *ray_args], timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    expected, got = json.loads(local.output), json.loads(on_ray.stdout)
    rolled = [d for g in got["games"] for d in g["decisions"] if "rollout" in d]
    assert rolled and all(d["rollout"]["trials"] == 40 for d in rolled)
    assert got == expected  # the analyses and every rollout, bit for bit


@pytest.mark.slow  # a Ray cluster
def test_benchmark_labelling_on_ray_writes_the_local_file(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    """``nardy benchmark --generate --executor ray``: the rollouts' trials split among the
    cluster's CPUs, the file the same, byte for byte (its default evaluator: long's net)."""
    files = {}
    for where in ("local", "ray"):
        path = tmp_path / where / "long.jsonl.gz"
        args = ["benchmark", "-v", "long", "--generate", "2", "--max-trials", "72", "-q"]
        args += ["--file", str(path)]
        if where == "local":
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, result.output
        else:
            ray_args = [*args, "--executor", "ray", "--ray-address", ADDRESS]
            on_ray = cluster.run([sys.executable, "-m", "nardy", *ray_args], timeout=300)
            assert on_ray.returncode == 0, on_ray.stderr[-3000:]
        files[where] = path.read_bytes()
    assert files["ray"] == files["local"]
