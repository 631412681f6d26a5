"""Wall time of one ``nardy rollout`` in this process's way (local) and on a loopback Ray cluster
of 1 and of 2 CPUs (the figures of docs/analysis.md, *Rollouts*), with the load average.

    python benchmarks/measure_rollout_ray.py [--trials 72] [--truncate 5] [--evaluator neural]

Each cluster is a head of N CPUs (``ray start --block`` on 127.0.0.1) in a network namespace of
its own (run as root: :class:`~nardy.testing.ray_cluster.LoopbackCluster`), stopped by process
id; the rollout runs as a command inside it, timed from its start to its end (Ray's connection
included). The three rollouts must agree exactly (the same seed): the script says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from nardy.testing.ray_cluster import LoopbackCluster

PORT = 6397


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--position", default="4HPwATDgc/ABMA")
    parser.add_argument("--dice", nargs=2, default=["4", "2"])
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--truncate", type=int, default=5)
    parser.add_argument("--evaluator", default="neural")
    args = parser.parse_args()
    command = [sys.executable, "-m", "nardy", "rollout", args.position, "--dice", *args.dice]
    command += ["--trials", str(args.trials), "--truncate", str(args.truncate)]
    command += ["--evaluator", args.evaluator, "--json", "-q"]
    results = {}
    print(f"load before: {os.getloadavg()}")
    start = time.perf_counter()
    local = subprocess.run(command, capture_output=True, text=True, check=True)
    results["local"] = (time.perf_counter() - start, json.loads(local.stdout))
    for cpus in (1, 2):
        with LoopbackCluster(PORT) as cluster:
            cluster.add_head(num_cpus=cpus)
            address = f"127.0.0.1:{PORT}"
            start = time.perf_counter()
            done = cluster.run([*command, "--executor", "ray", "--ray-address", address], 600)
            took = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(done.stderr[-2000:])
            results[f"ray {cpus} CPU"] = (took, json.loads(done.stdout))
    print(f"load after: {os.getloadavg()}")
    reference = results["local"][1]
    for name, (took, found) in results.items():
        same = "the same result" if found == reference else "A DIFFERENT RESULT"
        print(f"{name}: {took:.1f} s wall, {same}")


if __name__ == "__main__":
    main()
