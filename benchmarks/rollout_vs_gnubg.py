"""nardy's rollouts against GNU Backgammon's own (issue 39): agreement and variance reduction.

Backgammon positions are drawn from seeded games of ``neural`` against ``heuristic`` (the
decisions with a choice that start a roll). For each, nardy rolls out its best play
(:func:`nardy.analysis.rollout.rollout`, evaluator ``gnubg``: gnubg's 0-ply net through its Python
bindings plays, values the truncated ends and measures the luck), and GNU Backgammon 1.07
(``gnubg -t``) rolls out the play's result with the opponent on roll, with the same settings:
cubeless, 0-ply cubeless chequer play, truncated after the same number of plies, its own
variance reduction. nardy's equity of the play is minus gnubg's of that position.

Printed (and with ``--json`` written): the fraction of positions where the two agree within
their combined SE (``|a − b| ≤ √(SEa² + SEb²)``; 68 % expected of two unbiased estimates) and
within 1.96 of it (a 95 % interval), also over the unsettled positions only (combined SE at
least 0.001) with the mean and spread of ``(a − b) / SE`` there (0 and 1 expected), and the SE
per trial of nardy's variance-reduced estimates against plain results of the same trials.

    PYTHONPATH=DIR_WITH_GNUBG_MODULE nice -n 5 .venv/bin/python benchmarks/rollout_vs_gnubg.py \
        --positions 100 --trials 72 --truncate 5 --json out.json

Needs ``/usr/games/gnubg`` (or ``--gnubg``), ``script`` (util-linux: gnubg prints a rollout's
result only to a terminal) and the ``gnubg`` Python package.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nardy.analysis.rollout import rollout
from nardy.bots.registry import make_bot
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.gnubg import position_id_of
from nardy.core.plugins import load_variant
from nardy.core.position import Position
from nardy.core.variant import Variant

_RESULT = re.compile(r"CL\s+([+-]?\d+\.\d+)")
_FLOOR = 0.001
"""A position whose combined SE is below this is settled (module doc of the summary)."""


def positions(variant: Variant, count: int, seed: int) -> list[tuple[Position, tuple[int, int]]]:
    """``count`` decisions (the mover's position and roll) from seeded games, about one in four
    of the decisions with a choice that start a roll."""
    rng = random.Random(seed)
    out: list[tuple[Position, tuple[int, int]]] = []
    game_seed = seed
    while len(out) < count:
        game_seed += 1
        bots = (make_bot("neural", game_seed), make_bot("heuristic", game_seed))
        game = Game(variant, SeededDice(game_seed), cube=CubeSettings())
        for colour, bot in enumerate(bots):
            bot.start_game(variant, colour)
        while game.decision is not None and len(out) < count:
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            last = game.events[-1] if game.events else None
            if (
                len(decision.plays) > 1
                and last is not None
                and last.kind == "roll"
                and rng.random() < 0.25
            ):
                a, b = last.data["dice"]
                out.append((decision.position, (a, b)))
            game.decide(bots[decision.player].choose_play(decision))
    return out


def gnubg_rollouts(
    ids: list[str], trials: int, truncate: int, seed: int, binary: str
) -> list[tuple[float, float]]:
    """GNU Backgammon's cubeless rollout (equity, SE) of each Position ID, the player on roll's."""
    lines = [
        "set automatic game off",
        "set automatic roll off",
        "new game",
        "set rollout cubeful off",
        f"set rollout trials {trials}",
        "set rollout truncation enable on",
        f"set rollout truncation plies {truncate}",
        "set rollout varredn on",
        f"set rollout seed {seed}",
        "set rollout chequerplay plies 0",
        "set rollout chequerplay cubeful off",
        "set rollout truncation chequerplay plies 0",
        "set rollout truncation chequerplay cubeful off",
        "set output digits 5",
    ]
    for position_id in ids:
        lines += [f"set board {position_id}", "rollout"]
    lines += ["quit", "y"]
    with tempfile.NamedTemporaryFile("w", suffix=".gnubg", delete=False) as handle:
        handle.write("\n".join(lines) + "\n")
        commands = handle.name
    run = subprocess.run(
        ["script", "-q", "-c", f"{binary} -t -q < {commands}", "/dev/null"],
        capture_output=True,
        text=True,
        check=False,
    )
    Path(commands).unlink()
    blocks = run.stdout.split("Rollout done. Printing final results.")[1:]
    if len(blocks) != len(ids):
        raise RuntimeError(f"gnubg gave {len(blocks)} rollouts for {len(ids)} positions")
    out = []
    for block in blocks:
        found = _RESULT.findall(block)
        out.append((float(found[0]), float(found[1])))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--trials", type=int, default=72, help="nardy's trials a position")
    parser.add_argument("--gnubg-trials", type=int, default=324)
    parser.add_argument("--truncate", type=int, default=5)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--gnubg", default="/usr/games/gnubg")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    variant = load_variant("backgammon")
    rows: list[dict[str, Any]] = []
    start = time.process_time()
    for n, (position, roll) in enumerate(positions(variant, args.positions, args.seed)):
        found = rollout(
            variant,
            position,
            roll,
            evaluator="gnubg",
            top=1,
            trials=args.trials,
            truncate=args.truncate,
            seed=args.seed + n,
        )
        play = found.plays[0]
        after = variant.legal_plays(position, found.dice)[play.index].result
        if after.off[0] == variant.checkers:
            continue  # the play wins at once: nothing to roll out in gnubg
        rows.append(
            {
                "position": position.id(),
                "dice": list(roll),
                "play": play.text,
                "gnubg_id": position_id_of(variant.flip(after)),
                "nardy": play.equity(),
                "nardy_se": play.se(),
                "nardy_plain_se": play.se(False),
            }
        )
        print(f"{n + 1}: {play.text} {play.equity():+.4f} ± {play.se():.4f}", file=sys.stderr)
    nardy_seconds = time.process_time() - start
    started = time.time()
    theirs = gnubg_rollouts(
        [row["gnubg_id"] for row in rows], args.gnubg_trials, args.truncate, args.seed, args.gnubg
    )
    gnubg_seconds = time.time() - started
    within = within95 = floored = 0
    z: list[float] = []
    for row, (equity, se) in zip(rows, theirs, strict=True):
        row["gnubg"], row["gnubg_se"] = -equity, se
        combined = math.hypot(row["nardy_se"], se)
        gap = abs(row["nardy"] + equity)
        within += gap <= combined
        within95 += gap <= 1.96 * combined
        # Settled positions (bear-offs, a game decided) have an SE of about 0 in both, and the
        # two programs' bear-off databases and printed digits differ by up to 0.0002 there.
        floored += gap <= 1.96 * combined + _FLOOR
        if combined >= _FLOOR:
            z.append((row["nardy"] - row["gnubg"]) / combined)
    ratios = [r["nardy_se"] / r["nardy_plain_se"] for r in rows if r["nardy_plain_se"] > 0]
    summary = {
        "positions": len(rows),
        "nardy_trials": args.trials,
        "gnubg_trials": args.gnubg_trials,
        "truncate": args.truncate,
        "within_combined_se": within / len(rows),
        "within_1.96_combined_se": within95 / len(rows),
        "within_1.96_combined_se_plus_0.001": floored / len(rows),
        "unsettled_positions": len(z),
        "unsettled_within_combined_se": sum(abs(x) <= 1 for x in z) / len(z),
        "unsettled_within_1.96_combined_se": sum(abs(x) <= 1.96 for x in z) / len(z),
        "unsettled_z_mean": statistics.fmean(z),
        "unsettled_z_sd": statistics.pstdev(z),
        "mean_difference": statistics.fmean(r["nardy"] - r["gnubg"] for r in rows),
        "se_ratio_median": statistics.median(ratios),
        "se_ratio_pooled": math.sqrt(
            statistics.fmean(r["nardy_se"] ** 2 for r in rows)
            / statistics.fmean(r["nardy_plain_se"] ** 2 for r in rows)
        ),
        "nardy_cpu_s": round(nardy_seconds, 1),
        "gnubg_wall_s": round(gnubg_seconds, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
