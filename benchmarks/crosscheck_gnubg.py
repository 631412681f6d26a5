"""nardy's backgammon analysis (``--evaluator gnubg --ply 0``) against GNU Backgammon's own
``analyse match`` of the same exported ``.mat`` (the ``gnubg`` program, cubeless 0-ply).

    python benchmarks/crosscheck_gnubg.py [--games 10] [--bots heuristic,random] [--seed 1]

Plays ``--games`` money games without the cube (``nardy play --mat``: one .mat per game), runs
``gnubg -t`` on each and compares every chequer-play decision with two plays or more: the best
play (same resulting position), and the equity lost (within 0.002; gnubg prints 3 decimals).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from nardy.analysis.crosscheck import Agreement, compare, gnubg_program, parse_export, run_gnubg
from nardy.analysis.records import read_records
from nardy.analysis.stats import analyse_games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--bots", default="heuristic,random")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    program = gnubg_program()
    if program is None:
        sys.exit("the gnubg program is not installed (Debian: apt-get install gnubg)")
    total = Agreement()
    with tempfile.TemporaryDirectory() as tmp:
        mat = Path(tmp) / "game.mat"
        subprocess.run(
            [
                *(sys.executable, "-m", "nardy", "play", "-v", "backgammon", "-o", "cube=false"),
                *("--bots", args.bots, "--games", str(args.games), "--seed", str(args.seed)),
                *("--mat", str(mat), "--quiet"),
            ],
            check=True,
            capture_output=True,
        )
        for path in sorted(Path(tmp).glob("*.mat")):
            games = analyse_games(read_records(path), "gnubg", 0)
            total.add(compare(games, parse_export(run_gnubg(path, program))))
    print(f"{args.games} games ({args.bots}, seed {args.seed}): {total.line()}")
    for line in total.disagreements:
        print("  ", line)


if __name__ == "__main__":
    main()
