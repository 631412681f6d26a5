"""Duplicate-dice figures from ``nardy play`` as a user runs it: the same seed twice with the bots'
order swapped, so game ``i`` of both runs has the same dice with the seats exchanged; points per
game of the first bot with the standard error over those pairs (docs/statistics.md).

    python benchmarks/measure_duplicate_play.py --variant backgammon -o cube=false \\
        --bots neural:nardy/engines/weights/backgammon.outcome.npz,neural --games 400 --seed 11
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path


def _points(path: Path, seat: int) -> list[float]:
    """Points in each game of a ``--jsonl`` file, in game order, of the bot named ``seat``-th in
    ``--bots`` (0 or 1). Records name a bot as ``nardy play`` shows it, which for a Python bot
    (``module:Class``) is the bot's own ``name``, not the text of ``--bots``; the first game seats
    the first-named bot White (colours then alternate), so its record gives both names."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    first = records[0]["bots"]
    bot = first["White"] if seat == 0 else first["Black"]
    out: list[float] = []
    for record in records:
        result = record["result"]
        colour = "White" if record["bots"]["White"] == bot else "Black"
        sign = 1.0 if result["winner"] == colour else -1.0
        out.append(sign * float(result["points"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", "-v", required=True)
    parser.add_argument("--option", "-o", action="append", default=[])
    parser.add_argument("--bots", required=True, help="A,B: figures are A's")
    parser.add_argument("--games", type=int, default=200, help="games per run (pairs)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--pairs-out",
        type=Path,
        help="write each pair's points (JSON list) here: two bots measured against the same "
        "opponent with the same seed then compare pair by pair (--paired)",
    )
    parser.add_argument(
        "--paired",
        type=Path,
        help="a --pairs-out file of another bot against the same opponent, seed and games: "
        "also print this bot's lead over it, with the SE of the paired differences",
    )
    args = parser.parse_args()
    first, second = args.bots.split(",")
    runs: list[list[float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for order in (f"{first},{second}", f"{second},{first}"):
            jsonl = Path(folder) / f"{len(runs)}.jsonl"
            command = [sys.executable, "-m", "nardy", "play", "-v", args.variant, "-q"]
            for option in args.option:
                command += ["-o", option]
            command += ["--bots", order, "--games", str(args.games), "--seed", str(args.seed)]
            done = subprocess.run([*command, "--jsonl", str(jsonl)], stdout=subprocess.DEVNULL)
            if done.returncode:  # nardy play has said why on standard error
                sys.exit(done.returncode)
            # The first-named bot is seat 0 of the first run and seat 1 of the second; two bots of
            # one name are told apart by seat alone, the first of each order.
            runs.append(_points(jsonl, 0 if first == second or not runs else 1))
    pairs = [(a + b) / 2 for a, b in zip(*runs, strict=True)]
    n = len(pairs)
    mean = sum(pairs) / n
    sd = math.sqrt(sum((p - mean) ** 2 for p in pairs) / (n - 1))
    wins = sum(p > 0 for run in runs for p in run) / (2 * n)
    print(
        f"{args.variant}: {first} against {second}: {mean:+.3f} ± {sd / math.sqrt(n):.3f} "
        f"points per game (SE over {n} duplicate pairs, {2 * n} games), {100 * wins:.1f} % won"
    )
    if args.pairs_out:
        args.pairs_out.write_text(json.dumps(pairs), encoding="utf-8")
    if args.paired:
        other = json.loads(args.paired.read_text(encoding="utf-8"))
        if len(other) != n:
            sys.exit(f"{args.paired}: {len(other)} pairs, not {n}")
        lead = [a - b for a, b in zip(pairs, other, strict=True)]
        d = sum(lead) / n
        sd_d = math.sqrt(sum((x - d) ** 2 for x in lead) / (n - 1))
        print(f"  lead over {args.paired.name}: {d:+.3f} ± {sd_d / math.sqrt(n):.3f} (paired)")


if __name__ == "__main__":
    main()
