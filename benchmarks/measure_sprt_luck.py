"""Games an SPRT needs on raw against luck-adjusted points, on the same tournament games.

    python benchmarks/measure_sprt_luck.py [--variant backgammon] [--bots neural,heuristic]
        [--games 60] [--seeds 1,2,3 | --seeds 1-20] [--mu 0,0.5] [--no-cube]
        [--evaluator neural] [--out seeds.jsonl] [--budget-s 170]

Per seed: plays a duplicate-dice head-to-head of ``--games`` games (``nardy.arena``, no SPRT),
then feeds the pairs, in schedule order, to two points-mode SPRTs (H0 ``mu0``, H1 ``mu1``,
alpha = beta = 0.05), each as the arena makes it (:func:`nardy.arena.competition.ledger.new_sprt`): one on the
games' points (the distribution-free GSPRT), one on their luck-adjusted points (the normal-model
test)
(:class:`nardy.arena.competition.sprt_luck.LuckAdjuster`, 0-ply, by ``--evaluator``: the arena's
``neural`` by default, ``gnubg`` for backgammon with the gnubg package). Only the pairs the adjusted test
reads are analysed (it stops at its decision), so a long ``--games`` costs little more than the
playing. Prints the pairs each needed (``-``: undecided within the games) and, over the seeds, the
medians and the median of the per-seed ratio (an undecided test counts as needing more pairs than
were played, so its seed's ratio is an upper bound).

``--no-cube`` plays money games without the doubling cube (``options.<variant>.cube = false``;
without it the arena's default, the cube in play, applies). With ``--out`` each finished seed
is appended to a JSON-lines file (pairs' raw and adjusted points, the decisions) and seeds
already there are not played again, so an interrupted run resumes. Seeds stop being started
after ``--budget-s`` seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.arena.competition.ledger import new_sprt
from nardy.arena.competition.schedule import PoolDef, SprtDef, parse_definition
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.stats import Sprt
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import SqliteStore


def parse_seeds(text: str) -> list[int]:
    """``1,2,5`` or ``1-20`` (or a mix: ``1-3,7``)."""
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def hypotheses(args: argparse.Namespace) -> list[tuple[float, float]]:
    """The ``--mu`` pairs (H0, H1)."""
    out = []
    for text in args.mu or ["0,0.5"]:
        mu0, mu1 = (float(x) for x in text.split(","))
        out.append((mu0, mu1))
    return out


def new_test(mu0: float, mu1: float, on: str) -> Sprt:
    """The arena's points-mode SPRT on ``on`` (``points`` or ``luck-adjusted``) for a money pool."""
    spec = SprtDef(mode="points", mu0=mu0, mu1=mu1, on=on)  # type: ignore[arg-type]
    return new_sprt(spec, PoolDef("money", "backgammon"))


def decide(
    pairs: list[list[float]], mu0: float, mu1: float, on: str
) -> tuple[str | None, int | None]:
    """Feed ``pairs`` in order to the arena's SPRT on ``on``: (decision, pairs it needed) or
    (None, None)."""
    test = new_test(mu0, mu1, on)
    for pair in pairs:
        if test.update(*pair) is not None:
            break
    return test.decision, test.decided_at


def run_seed(args: argparse.Namespace, seed: int, luck: LuckAdjuster) -> dict[str, Any]:
    """Play one seed's games and record the pairs' raw and (as far as every adjusted test needs
    them) luck-adjusted points: the seed's JSON-lines entry."""
    definition: dict[str, Any] = {
        "name": "sprt-luck",
        "bots": args.bots.split(","),
        "variant": args.variant,
        "games": args.games,
        "seed": seed,
        "concurrency": 1,
    }
    if args.no_cube:
        definition["options"] = {args.variant: {"cube": False}}
    d = parse_definition(definition)
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "t.db")
        Tournament(d, store).run()
        rows = sorted(store.games(d.tournament_id, records=True), key=lambda r: r.unit_id)
        store.close()
    tests = [new_test(mu0, mu1, "luck-adjusted") for mu0, mu1 in hypotheses(args)]
    raw_pairs: list[list[float]] = []
    adjusted_pairs: list[list[float]] = []
    for i in range(0, len(rows) - 1, 2):
        pair = rows[i : i + 2]
        if any(r.winner is None for r in pair):
            continue
        raw_pairs.append([float(r.a_points) for r in pair])
        if any(t.decision is None for t in tests):  # analysing costs: only what a test reads
            adjusted = [luck.a_points(r) for r in pair]
            adjusted_pairs.append(adjusted)
            for test in tests:
                test.update(*adjusted)
    return {
        "seed": seed,
        "variant": args.variant,
        "bots": args.bots,
        "cube": not args.no_cube,
        "evaluator": args.evaluator,
        "games": len(rows),
        "raw": raw_pairs,
        "adjusted": adjusted_pairs,
    }


def needed(pairs: list[list[float]], mu0: float, mu1: float, on: str) -> float:
    """Pairs the test needed; undecided: infinity."""
    at = decide(pairs, mu0, mu1, on)[1]
    return float(at) if at is not None else math.inf


def summary(entries: list[dict[str, Any]], mu0: float, mu1: float) -> str:
    """Medians over the seeds, and the median of the per-seed ratio adjusted / raw."""
    raw = [needed(e["raw"], mu0, mu1, "points") for e in entries]
    adjusted = [needed(e["adjusted"], mu0, mu1, "luck-adjusted") for e in entries]
    ratios = []
    for e, r, a in zip(entries, raw, adjusted, strict=True):
        # An undecided raw test needed more than the seed's pairs: the seed's ratio is below
        # adjusted / (pairs + 1), an upper bound (an undecided adjusted test gives inf).
        ratios.append(a / r if math.isfinite(r) else a / (len(e["raw"]) + 1))
    return (
        f"mu {mu0:g}/{mu1:g}, {len(entries)} seeds: median pairs raw {statistics.median(raw)}, "
        f"luck-adjusted {statistics.median(adjusted)}; median per-seed ratio "
        f"{statistics.median(ratios):.3f}; ratio of medians "
        f"{statistics.median(adjusted) / statistics.median(raw):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="backgammon")
    parser.add_argument("--bots", default="neural,heuristic")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--mu", action="append", help="H0,H1 in points per game (repeatable)")
    parser.add_argument("--no-cube", action="store_true", help="money play without the cube")
    parser.add_argument("--evaluator", default="neural", help="the luck's evaluator (0-ply)")
    parser.add_argument("--out", type=Path, help="JSON-lines file of finished seeds (resumes)")
    parser.add_argument("--budget-s", type=float, default=170.0)
    args = parser.parse_args()
    started = time.perf_counter()
    done: dict[int, dict[str, Any]] = {}
    if args.out is not None and args.out.exists():
        for line in args.out.read_text().splitlines():
            entry = json.loads(line)
            done[entry["seed"]] = entry
    luck = LuckAdjuster(args.evaluator)
    entries: list[dict[str, Any]] = []
    for seed in parse_seeds(args.seeds):
        entry = done.get(seed)
        if entry is None:
            if time.perf_counter() - started > args.budget_s:
                break
            entry = run_seed(args, seed, luck)
            if args.out is not None:
                with args.out.open("a") as out:
                    out.write(json.dumps(entry) + "\n")
        entries.append(entry)
        line = []
        for mu0, mu1 in hypotheses(args):
            for name, on in (("raw", "points"), ("adjusted", "luck-adjusted")):
                decision, at = decide(entry[name], mu0, mu1, on)
                line.append(f"{mu0:g}/{mu1:g} {name} {decision or '-'} at {at or '-'}")
        print(f"seed {seed}: {entry['games']} games; " + ", ".join(line), flush=True)
    if entries:
        cube = "" if entries[0]["cube"] else ", no cube"
        for mu0, mu1 in hypotheses(args):
            luck_by = entries[0].get("evaluator", "neural")
            print(
                f"{args.variant} {args.bots}{cube}, luck by {luck_by}, {summary(entries, mu0, mu1)}"
            )
        print(f"({time.perf_counter() - started:.0f} s wall)")


if __name__ == "__main__":
    main()
