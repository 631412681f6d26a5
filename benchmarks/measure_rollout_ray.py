"""Wall time of one ``nardy rollout`` in this process's way (local) and on a loopback Ray cluster
of 1 and of 2 CPUs (the figures of docs/analysis.md, *Rollouts*), with the load average; or,
with ``--benchmark VARIANT``, of labelling the first ``--positions`` benchmark positions
(``nardy benchmark --generate N``, the file's defaults but for ``--max-trials``).

    python benchmarks/measure_rollout_ray.py [--trials 72] [--truncate 5] [--evaluator neural]
    python benchmarks/measure_rollout_ray.py --benchmark khachapuri --positions 4

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
import tempfile
import time
from pathlib import Path

from nardy.testing.ray_cluster import LoopbackCluster

PORT = 6397


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--position", default="4HPwATDgc/ABMA")
    parser.add_argument("--dice", nargs=2, default=["4", "2"])
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--truncate", type=int, default=5)
    parser.add_argument("--evaluator", default="neural")
    parser.add_argument("--benchmark", metavar="VARIANT", help="time benchmark labelling instead")
    parser.add_argument("--positions", type=int, default=4, help="with --benchmark")
    parser.add_argument("--max-trials", type=int, default=1296, help="with --benchmark")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="measure_rollout_ray_"))
    os.chmod(scratch, 0o755)  # written by the command inside the cluster's namespace too

    def benchmark_file(name: str) -> Path:
        """Where the run ``name`` writes its benchmark file (with ``--benchmark``)."""
        return scratch / name.replace(" ", "_") / f"{args.benchmark}.jsonl.gz"

    def command(name: str) -> list[str]:
        if args.benchmark is None:
            out = [sys.executable, "-m", "nardy", "rollout", args.position, "--dice", *args.dice]
            out += ["--trials", str(args.trials), "--truncate", str(args.truncate)]
            return [*out, "--evaluator", args.evaluator, "--json", "-q"]
        out = [sys.executable, "-m", "nardy", "benchmark", "-v", args.benchmark, "-q"]
        out += ["--generate", str(args.positions), "--max-trials", str(args.max_trials)]
        return [*out, "--file", str(benchmark_file(name))]

    def result(name: str, stdout: str) -> object:
        if args.benchmark is None:
            return json.loads(stdout)
        return benchmark_file(name).read_bytes()

    results = {}
    print(f"load before: {os.getloadavg()}")
    start = time.perf_counter()
    local = subprocess.run(command("local"), capture_output=True, text=True, check=True)
    results["local"] = (time.perf_counter() - start, result("local", local.stdout))
    for cpus in (1, 2):
        name = f"ray {cpus} CPU"
        with LoopbackCluster(PORT) as cluster:
            cluster.add_head(num_cpus=cpus)
            address = f"127.0.0.1:{PORT}"
            start = time.perf_counter()
            done = cluster.run(
                [*command(name), "--executor", "ray", "--ray-address", address], 3600
            )
            took = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(done.stderr[-2000:])
            results[name] = (took, result(name, done.stdout))
    print(f"load after: {os.getloadavg()}")
    reference = results["local"][1]
    for name, (took, found) in results.items():
        same = "the same result" if found == reference else "A DIFFERENT RESULT"
        print(f"{name}: {took:.1f} s wall, {same}")


if __name__ == "__main__":
    main()
