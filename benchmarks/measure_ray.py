"""Games per second on a loopback Ray cluster for 1, 2 and 4 worker processes, and Ray's
overhead per game against the local executor (the figures of docs/distributed.md).

    python benchmarks/measure_ray.py [--games 160] [--json out.json]

The cluster: a head that runs no games (``--num-cpus 0``) and worker nodes joined one after the
other (1 CPU, then a second node of 1 CPU, then a third of 2 CPUs: 1, 2, 4 worker processes),
all started with ``ray start --block`` on 127.0.0.1 and stopped by process id. Run as root, the
script first moves itself into a network namespace of its own, where loopback is the only
interface (Ray would otherwise advertise the machine's address). Each measurement is one fresh
tournament of ``heuristic`` against ``random`` in long nardy (duplicate dice), timed from the
first submitted game to the last stored one.

Ray's overhead per game is measured two ways, side by side in the same run: the CPU time per game
of the whole cluster (every process of the nodes, and the driver; less what the idle cluster
and the idle driver use over the same time, measured for 5 s just before) minus that of the local
executor playing the same kind of games in one process (``inline``) — CPU time, because on a
shared machine wall time measures the neighbours too; and the round trip of an empty task that
returns a record-sized result (one at a time: latency; 200 in flight: throughput). The load
average before and after is part of the output.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from nardy.testing.ray_cluster import LoopbackCluster, rerun_in_namespace

PORT = 6391
ADDRESS = f"127.0.0.1:{PORT}"


def _definition(games: int, seed: int) -> Any:
    from nardy.arena.competition.schedule import parse_definition

    bots = [
        {"name": "heuristic", "builtin": "heuristic", "capacity": 64},
        {"name": "random", "builtin": "random", "capacity": 64},
    ]
    return parse_definition(
        {"name": f"bench-{seed}", "variant": "long", "games": games, "seed": seed, "bots": bots}
    )


def _run(definition: Any, executor: Any, concurrency: int, db: Path) -> int:
    """Play one fresh tournament; the number of games played."""
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    store = SqliteStore(db)
    try:
        result = Tournament(definition, store, concurrency=concurrency, executor=executor).run()
    finally:
        store.close()
    assert result.status == "finished", result.detail
    return result.played


def _cluster_cpu(sessions: set[int]) -> float:
    """CPU seconds used so far by every process of the cluster (the sessions of the nodes we
    started: raylets, object stores, GCS, workers), reaped children included."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) in sessions:  # fields[0] is the state: field 3 of stat
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick


def _idle_cpu(sessions: set[int], seconds: float = 5.0) -> tuple[float, float]:
    """CPU seconds per second the idle cluster (GCS, raylets, agents) and this idle, connected
    driver (Ray's threads) use: a fixed cost, not a cost per game."""
    before, driver = _cluster_cpu(sessions), time.process_time()
    time.sleep(seconds)
    cluster = (_cluster_cpu(sessions) - before) / seconds
    return cluster, (time.process_time() - driver) / seconds


def _cpu_per_game(
    run: Any, sessions: set[int], idle: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, float, float]:
    """(games/s, CPU seconds per game of this process and the cluster, CPU seconds per game of
    this process) of ``run()``, less what the idle cluster and driver use over the same time."""
    cpu0, cluster0, t0 = time.process_time(), _cluster_cpu(sessions), time.perf_counter()
    played = run()
    elapsed = time.perf_counter() - t0
    driver = time.process_time() - cpu0 - idle[1] * elapsed
    cpu = driver + _cluster_cpu(sessions) - cluster0 - idle[0] * elapsed
    return played / elapsed, cpu / played, driver / played


def _overhead(ray: Any, record: dict[str, Any]) -> dict[str, float]:
    """An empty task returning a record: latency one at a time, throughput 200 in flight."""

    @ray.remote(num_cpus=1)
    def echo(payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    ray.get([echo.remote(record) for _ in range(20)])  # warm the workers
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        ray.get(echo.remote(record))
    latency = (time.perf_counter() - t0) / n
    t0, c0 = time.perf_counter(), time.process_time()
    ray.get([echo.remote(record) for _ in range(n)])
    pipelined, driver = (time.perf_counter() - t0) / n, (time.process_time() - c0) / n
    return {
        "task_round_trip_ms": latency * 1000,
        "task_pipelined_ms": pipelined * 1000,
        "task_driver_cpu_ms": driver * 1000,
    }


def measure(games: int) -> dict[str, Any]:
    import ray

    from nardy.arena.competition.ray_executor import RayExecutor
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    out: dict[str, Any] = {
        "games": 2 * (games // 2),
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
    }
    with (
        tempfile.TemporaryDirectory(prefix="nardy-mr-") as temp,
        LoopbackCluster(PORT, namespace=False) as cluster,
    ):
        # The local executor first: one process, then two worker processes.
        rate, cpu, _ = _cpu_per_game(
            lambda: _run(_definition(games, 100), "inline", 1, Path(temp) / "l1.db"), set()
        )
        out["local_inline"] = {"games_per_s": rate, "cpu_ms_per_game": 1000 * cpu}
        rate, _, _ = _cpu_per_game(
            lambda: _run(_definition(games, 101), "process", 2, Path(temp) / "l2.db"), set()
        )
        out["local_process_2"] = {"games_per_s": rate}
        cluster.add_head(num_cpus=0)
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        sample = SqliteStore(":memory:")
        d = _definition(2, 1)
        Tournament(d, sample).run()
        record = sample.games(d.tournament_id, records=True)[0].record
        rays: dict[str, dict[str, float]] = {}
        for workers, cpus in ((1, 1), (2, 1), (4, 2)):
            cluster.add_node(num_cpus=cpus)
            cluster.wait_for_cpus(workers)
            time.sleep(1.0)  # let the new node's worker processes start
            if workers == 1:
                out.update(_overhead(ray, record))
            sessions = {n.pid for n in cluster.nodes}
            idle = _idle_cpu(sessions)
            rate, cpu, driver = _cpu_per_game(
                lambda w=workers: _run(
                    _definition(games, 200 + w), RayExecutor(ADDRESS), 2 * w, Path(temp) / "r.db"
                ),
                sessions,
                idle,
            )
            rays[str(workers)] = {
                "games_per_s": rate,
                "cpu_ms_per_game": 1000 * cpu,
                "driver_cpu_ms_per_game": 1000 * driver,
                "idle_cluster_cpu_per_s": idle[0],
                "idle_driver_cpu_per_s": idle[1],
            }
        out["ray"] = rays
        out["ray_cpu_overhead_ms_per_game"] = (
            rays["1"]["cpu_ms_per_game"] - out["local_inline"]["cpu_ms_per_game"]
        )
        ray.shutdown()
        out["load_average_after"] = os.getloadavg()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=160, help="games per measurement")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--no-netns", action="store_true", help="do not move into a network namespace"
    )
    args = parser.parse_args()
    # A private loopback cluster without token authentication, for the nodes and this driver
    # alike (a ~/.ray/auth_token turns it on for `ray start` but not for a connecting driver).
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if not args.no_netns:
        rerun_in_namespace()
    figures = measure(args.games)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
