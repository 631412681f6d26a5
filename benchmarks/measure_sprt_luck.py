"""Games an SPRT needs on raw against luck-adjusted points, on the same tournament games.

    python benchmarks/measure_sprt_luck.py [--variant backgammon] [--bots neural,heuristic]
        [--games 60] [--seeds 1,2,3] [--mu 0,0.5] [--budget-s 170]

Per seed: plays a duplicate-dice head-to-head of ``--games`` games (``nardy.arena``, no SPRT),
then feeds the pairs, in schedule order, to two points-mode SPRTs (H0 ``mu0``, H1 ``mu1``,
alpha = beta = 0.05): one on the games' points, one on their luck-adjusted points
(:class:`nardy.arena.sprt_luck.LuckAdjuster`, 0-ply neural). Prints the pairs each needed (``-``:
undecided within the games) and, over the seeds, the medians. Seeds stop being started after
``--budget-s`` seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.arena.schedule import parse_definition
from nardy.arena.sprt_luck import LuckAdjuster
from nardy.arena.stats import Sprt
from nardy.arena.storage import SqliteStore
from nardy.arena.tournament import Tournament


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="backgammon")
    parser.add_argument("--bots", default="neural,heuristic")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--mu", default="0,0.5")
    parser.add_argument("--budget-s", type=float, default=170.0)
    args = parser.parse_args()
    mu0, mu1 = (float(x) for x in args.mu.split(","))
    started = time.perf_counter()
    needed: dict[str, list[float]] = {"raw": [], "adjusted": []}
    luck = LuckAdjuster()
    for seed in (int(s) for s in args.seeds.split(",")):
        if time.perf_counter() - started > args.budget_s:
            break
        d = parse_definition(
            {
                "name": "sprt-luck",
                "bots": args.bots.split(","),
                "variant": args.variant,
                "games": args.games,
                "seed": seed,
            }
        )
        with tempfile.TemporaryDirectory() as tmp:
            store = SqliteStore(Path(tmp) / "t.db")
            Tournament(d, store).run()
            rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.unit_id)
            store.close()
        tests = {name: Sprt.for_points(mu0, mu1) for name in needed}
        for i in range(0, len(rows) - 1, 2):
            pair = rows[i : i + 2]
            if any(r.winner is None for r in pair):
                continue
            tests["raw"].update(*(float(r.a_points) for r in pair))
            tests["adjusted"].update(*(luck.a_points(r) for r in pair))
        line = []
        for name, test in tests.items():
            at = test.decided_at
            needed[name].append(at if at is not None else float("inf"))
            line.append(f"{name} {test.decision or '-'} at {at if at is not None else '-'}")
        print(f"seed {seed}: {len(rows)} games; " + ", ".join(line), flush=True)
    medians = {k: statistics.median(v) for k, v in needed.items() if v}
    print(
        f"{args.variant} {args.bots}, mu {mu0:g}/{mu1:g}, {len(needed['raw'])} seeds: median "
        f"pairs raw {medians.get('raw')}, luck-adjusted {medians.get('adjusted')} "
        f"({time.perf_counter() - started:.0f} s wall)"
    )


if __name__ == "__main__":
    main()
