"""Tournaments on a Ray cluster (``--executor ray``): the same games as the local executor, a
worker process killed mid-run, the driver SIGKILLed and restarted.

The cluster is real: a head and one worker node (``ray start --block``, one CPU each), in a
network namespace of its own where loopback is the only interface (Ray would otherwise advertise
the machine's address). The test creates the namespace (``unshare --net``, as root), runs every
Ray process and every driver in it (``nsenter``), and stops them by process id.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nardy.arena.competition.schedule import TournamentDef, load_definition
from nardy.arena.competition.standings import standings_from_store
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import SqliteStore
from nardy.testing.ray_cluster import LoopbackCluster, namespace_unavailable

pytest.importorskip("ray", reason="the Ray executor needs ray: pip install 'nardy[ray]'")

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
HEAD_PORT = 6390
ADDRESS = f"127.0.0.1:{HEAD_PORT}"  # the head's, for the driver's --ray-address

pytestmark = [
    pytest.mark.slow,  # a Ray cluster
    pytest.mark.skipif(namespace_unavailable() is not None, reason=str(namespace_unavailable())),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    """A head and one worker node, one CPU each."""
    # A node that stops answering is declared dead after about 2 s (default: 15 s or more).
    env = {
        "PYTHONPATH": str(HERE),
        "RAY_health_check_period_ms": "500",
        "RAY_health_check_timeout_ms": "500",
        "RAY_health_check_failure_threshold": "4",
    }
    with LoopbackCluster(HEAD_PORT, env=env) as c:
        c.add_head(num_cpus=1)
        c.add_node(num_cpus=1)
        c.wait_for_cpus(2)
        yield c


# -- helpers ----------------------------------------------------------------------------------------


def _toml(path: Path, *, games: int, command_bot: bool, pid_file: Path | None = None) -> Path:
    bots = [
        '[[bots]]\nname = "heuristic"\nbuiltin = "heuristic"\ncapacity = 4\n',
        '[[bots]]\nname = "random"\nbuiltin = "random"\ncapacity = 4\n',
    ]
    if command_bot:
        command = [sys.executable, str(HERE / "per_game_bot.py")]
        if pid_file is not None:
            command.append(str(pid_file))
        bots.append(f'[[bots]]\nname = "cmd"\ncommand = {json.dumps(command)}\ncapacity = 2\n')
    path.write_text(
        f'name = "ray-test"\nvariant = "long"\ngames = {games}\nseed = 5\n\n' + "\n".join(bots)
    )
    return path


def _cli(toml: Path, db: Path, concurrency: int = 2) -> list[str]:
    return [
        sys.executable,
        "-m",
        "nardy.arena.tournament_cli",
        "run",
        str(toml),
        "--db",
        str(db),
        "--executor",
        "ray",
        "--ray-address",
        ADDRESS,
        "--concurrency",
        str(concurrency),
        "--quiet",
    ]


def _essence(record: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on where a game ran: ids, seeds, seats, every roll and event, every
    decision and its answer, the result (not timings, not a command bot's port)."""
    return {
        "ids": [record[k] for k in ("game_id", "match_id", "unit_id", "pool", "round", "leg")],
        "seed": record["seed"],
        "seats": [record[c]["name"] for c in ("white", "black")],
        "setup": record["setup"],
        "game": record["game"],
        "decisions": [
            {k: v for k, v in d.items() if k != "latency_ms"} for d in record["decisions"]
        ],
        "faults": record["faults"],
        "result": record["result"],
    }


def _stored(db: Path, d: TournamentDef) -> dict[str, tuple[Any, ...]]:
    """game id -> the stored row's columns (but the time) and the record's essence; asserts
    each game is stored once."""
    store = SqliteStore(db)
    try:
        games = store.games(d.tournament_id, records=True)
    finally:
        store.close()
    counts = Counter(g.game_id for g in games)
    assert max(counts.values(), default=1) == 1, [k for k, n in counts.items() if n > 1]
    out = {}
    for g in games:
        assert g.record is not None
        columns = (g.unit_id, g.a, g.b, g.white, g.black, g.seed, g.winner, g.points)
        out[g.game_id] = (*columns, g.termination, json.dumps(_essence(g.record), sort_keys=True))
    return out


def _local_reference(toml: Path, db: Path) -> dict[str, tuple[Any, ...]]:
    d = load_definition(toml)
    store = SqliteStore(db)
    try:
        assert Tournament(d, store, concurrency=2).run().status == "finished"
    finally:
        store.close()
    return _stored(db, d)


def _count_games(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _wait_for_games(db: Path, n: int, proc: subprocess.Popen[bytes], timeout: float = 90) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        stored = _count_games(db)
        if stored >= n:
            return stored
        time.sleep(0.02)
    raise AssertionError(f"the run ended or stalled before {n} games were stored")


def _game_workers() -> list[int]:
    """Pids of Ray worker processes playing a game now (their title names the task)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::play_game_task"):
                pids.append(int(entry.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


# -- the tests --------------------------------------------------------------------------------------


def test_round_robin_on_ray_equals_the_local_run(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """Built-in bots and a command bot: the Ray run stores the games of the local executor,
    identical in every row and record field that does not measure time."""
    toml = _toml(tmp_path / "t.toml", games=4, command_bot=True)
    reference = _local_reference(toml, tmp_path / "local.db")
    done = cluster.run(_cli(toml, tmp_path / "ray.db"), timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    on_ray = _stored(tmp_path / "ray.db", load_definition(toml))
    assert len(reference) == 12
    assert on_ray == reference
    store = SqliteStore(tmp_path / "ray.db")
    try:
        cmd_seats = [
            g.record["white"] if g.white == "cmd" else g.record["black"]
            for g in store.games(load_definition(toml).tournament_id, records=True)
            if g.record is not None and "cmd" in (g.white, g.black)
        ]
    finally:
        store.close()
    assert cmd_seats and all(s["kind"] == "command" and s["version"] == "1" for s in cmd_seats)


def test_a_worker_killed_mid_run(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """SIGKILL a Ray worker process while it plays: Ray reruns its game; the tournament
    completes with every game stored exactly once, identical to the local run."""
    toml = _toml(tmp_path / "t.toml", games=60, command_bot=False)
    db = tmp_path / "ray.db"
    driver = cluster.start(_cli(toml, db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed: list[int] = []
    try:
        _wait_for_games(db, 5, driver)
        deadline = time.monotonic() + 30
        while not killed and time.monotonic() < deadline and driver.poll() is None:
            workers = _game_workers()
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
            time.sleep(0.01)
        assert killed, "no worker was playing a game"
        stored_at_kill = _count_games(db)
        _, err = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, err.decode()[-3000:]
    assert stored_at_kill < 60, "the run ended before the kill"
    assert not _alive(killed[0])
    on_ray = _stored(db, load_definition(toml))
    assert on_ray == _local_reference(toml, tmp_path / "local.db")


def test_driver_killed_and_restarted(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """SIGKILL the driver (`nardy arena run --executor ray`) mid-run, run it again: it resumes;
    the games are those of an uninterrupted local run, each once; no command bot process that
    a worker started outlives the run."""
    pids = tmp_path / "bot-pids"
    toml = _toml(tmp_path / "t.toml", games=12, command_bot=True, pid_file=pids)
    db = tmp_path / "ray.db"
    driver = cluster.start(_cli(toml, db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        stored = _wait_for_games(db, 6, driver)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver's own process group
        driver.wait()
    assert driver.returncode == -signal.SIGKILL
    assert stored < 36
    again = cluster.run(_cli(toml, db), timeout=180)
    assert again.returncode == 0, again.stderr[-3000:]
    on_ray = _stored(db, load_definition(toml))
    assert len(on_ray) == 36
    assert on_ray == _local_reference(toml, tmp_path / "local.db")
    bots = [int(line) for line in pids.read_text().split()]
    assert bots
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in bots) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in bots if _alive(p)], "a command bot outlived its Ray worker"


def test_a_worker_node_killed_mid_run(cluster: LoopbackCluster, tmp_path: Path) -> None:
    """SIGKILL the whole worker node (its raylet, object store and workers) while it plays: its
    games are played again on the head; every game stored once, identical to the local run.
    (Last in the module: the cluster is left with the head alone.)"""
    toml = _toml(tmp_path / "t.toml", games=40, command_bot=False)
    db = tmp_path / "ray.db"
    node = cluster.nodes[1]
    driver = cluster.start(_cli(toml, db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_games(db, 5, driver)
        os.killpg(node.pid, signal.SIGKILL)  # the node's own process group, started above
        node.wait()
        stored_at_kill = _count_games(db)
        _, err = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, err.decode()[-3000:]
    assert stored_at_kill < 40, "the run ended before the kill"
    on_ray = _stored(db, load_definition(toml))
    assert on_ray == _local_reference(toml, tmp_path / "local.db")


def test_a_luck_adjusted_sprt_on_ray_equals_the_local_run(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    """``--sprt-on luck-adjusted`` with the games on Ray: the same games, the same test (fed
    the games' luck-adjusted points, analysed on the workers), kept by the store's ledger too."""
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "ray-luck"\nvariant = "backgammon"\ngames = 4\nseed = 5\n\n'
        '[sprt]\nmode = "points"\nmu0 = 0.0\nmu1 = 0.1\nalpha = 0.001\nbeta = 0.001\n'
        'on = "luck-adjusted"\n\n'
        '[[bots]]\nname = "heuristic"\nbuiltin = "heuristic"\n\n'
        '[[bots]]\nname = "random"\nbuiltin = "random"\n'
    )
    d = load_definition(toml)
    reference = _local_reference(toml, tmp_path / "local.db")
    done = cluster.run(_cli(toml, tmp_path / "ray.db"), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _stored(tmp_path / "ray.db", d) == reference
    tests = []
    for name in ("local.db", "ray.db"):
        store = SqliteStore(tmp_path / name)
        try:
            (pool,) = standings_from_store(store, d.tournament_id).pools
        finally:
            store.close()
        assert pool.sprt is not None and pool.sprt.pairs == 2
        tests.append(pool.sprt)
    assert tests[0].llr == pytest.approx(tests[1].llr, abs=1e-9)
    assert tests[0].line == tests[1].line
