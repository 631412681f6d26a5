"""Wall time of ``nardy analyze`` (0-ply, luck at 0-ply) on a tournament's games: in one process,
and on a loopback Ray cluster of 1, 2 and 4 worker processes (the figures of docs/analysis.md).

    python benchmarks/measure_analysis_ray.py [--games 60] [--variant backgammon] [--json out.json]
    python benchmarks/measure_analysis_ray.py --db T.db [--games N] [--workers 2]

The games: ``neural`` against ``heuristic`` (``nardy play``, seed 1, money play without a cube),
played before any timing, or (``--db``) the first N stored games of a tournament database. The
cluster is ``measure_ray.py``'s: a head that runs no tasks and worker nodes joined one after the
other up to each count of ``--workers`` (default 1, 2, 4: nodes of 1, 1 and 2 CPUs), on
127.0.0.1, stopped by process id; run as root, the script first moves itself into a network
namespace of its own where loopback is the only interface. Each Ray run must give the serial
run's analysis exactly (checked); the first game analysed by a fresh worker also loads the net.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure_ray import PORT

from nardy.testing.ray_cluster import BIN, LoopbackCluster, rerun_in_namespace


def _play(variant: str, games: int, path: Path) -> None:
    args = [str(BIN / "nardy"), "play", "-v", variant, "--bots", "neural,heuristic"]
    args += ["--games", str(games), "--seed", "1", "--jsonl", str(path), "-q"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def measure(games: int, variant: str, workers: list[int], db: Path | None = None) -> dict[str, Any]:
    import ray

    from nardy.analysis.cli import database_games
    from nardy.analysis.distributed import analyse_on_ray
    from nardy.analysis.records import read_records
    from nardy.analysis.stats import analyse_games

    out: dict[str, Any] = {
        "variant": variant,
        "db": None if db is None else str(db),
        "games": games,
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
    }
    with (
        tempfile.TemporaryDirectory(prefix="nardy-mar-") as temp,
        LoopbackCluster(PORT, namespace=False) as cluster,
    ):
        if db is None:
            path = Path(temp) / "games.jsonl"
            _play(variant, games, path)
            records = read_records(path)
        else:
            records = database_games(str(db))[:games]
            out["variant"] = records[0].variant.name
            out["games"] = games = len(records)
        out["decisions"] = sum(len(g.actions) for g in records)
        t0, c0 = time.perf_counter(), time.process_time()
        serial = analyse_games(records, "neural", 0, luck_ply=0)
        wall = time.perf_counter() - t0
        out["serial"] = {"wall_s": wall, "cpu_s": time.process_time() - c0}
        expected = [a.to_json() for a in serial]
        cluster.add_head(num_cpus=0)
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        runs: dict[str, dict[str, float]] = {}
        cpus = 0
        for count in workers:
            cluster.add_node(num_cpus=count - cpus)
            cpus = count
            cluster.wait_for_cpus(count)
            time.sleep(1.0)  # let the new node's worker processes start
            t0 = time.perf_counter()
            analyses = analyse_on_ray(records, "neural", 0, luck_ply=0)
            wall = time.perf_counter() - t0
            assert [a.to_json() for a in analyses] == expected, "not the serial analysis"
            runs[str(count)] = {"wall_s": wall, "games_per_s": games / wall}
            print(f"{count} workers: {wall:.1f} s", file=sys.stderr)
        out["ray"] = runs
        ray.shutdown()
        out["load_average_after"] = os.getloadavg()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games", type=int, help="games analysed per measurement (default 60, with --db all)"
    )
    parser.add_argument("--variant", default="backgammon")
    parser.add_argument("--db", type=Path, help="analyse a tournament database's stored games")
    parser.add_argument(
        "--workers", default="1,2,4", help="worker counts, ascending (default 1,2,4)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    workers = [int(n) for n in args.workers.split(",")]
    if not workers or workers != sorted(set(workers)) or workers[0] < 1:
        parser.error(f"--workers: ascending counts of 1 or more, not {args.workers!r}")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private loopback cluster
    rerun_in_namespace()
    games = args.games or (60 if args.db is None else sys.maxsize)
    figures = measure(games, args.variant, workers, args.db)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
