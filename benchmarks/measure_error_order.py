"""Error rate against Elo on each variant's ladder: do the bots ordered by their error rate finish
in the same order as by their Elo?

    python benchmarks/measure_error_order.py [--variants backgammon,long,fevga | --variants all]
        [--bots random,heuristic,neural] [--games 8] [--rate neural 0 8] [--rate neural 1 2]
        [--gnubg] [--seed 1] [--out ladders.jsonl]

Per variant, a round robin of ``--bots``: ``--games`` games per pairing (colours alternating,
game i of a pairing on dice seed SEED*1000003+i, money play without the cube). The Elo ratings
are fitted on all of them (Bradley-Terry on wins, ``nardy.arena.competition.stats.fit_ratings``, with
standard errors); each ``--rate EVALUATOR PLY GAMES`` analyses the first GAMES games of every
pairing at PLY with EVALUATOR (no luck: error rates only) and gives each bot's error rate per
decision (and PR). It prints, per rating, whether the error-rate order is the Elo order, and
whether the Elo order is clear (each neighbour's Elo difference beyond 1.96 SE). ``--variants
all`` is every single-game variant with a shipped net; ``--gnubg`` adds the ``gnubg`` bot and the
``gnubg`` evaluator (0-ply, all games) in backgammon when the gnubg package is installed. With
``--out`` each finished variant is appended to a JSON-lines file, and variants already there are
not played again.

Mind the evaluator: at 0-ply the ``neural`` evaluator's choice is the ``neural`` bot's own, so
that bot's error rate is 0 by construction; a rating at 1-ply, or by another program's evaluator
(gnubg), is the less circular check.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from nardy.analysis.game import PlayerStats, analyse_game
from nardy.analysis.records import GameInput, from_kernel_record
from nardy.analysis.stats import searchers_for
from nardy.arena.competition.stats import Ratings, fit_ratings, tally
from nardy.bots import make_bot, play_game
from nardy.core import game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import CubeSettings

WEIGHTS = Path(__file__).resolve().parent.parent / "nardy" / "bots" / "weights"


class Played(NamedTuple):
    """One game of the ladder (a named tuple: tests load this file without registering it as a
    module, which a dataclass needs)."""

    names: tuple[str, str]
    """White's and Black's bot."""
    white_points: float
    """White's net points (negative: Black won)."""
    game: GameInput
    pairing_index: int
    """Its index within its pairing's games."""


def play_ladder(variant_name: str, bots: list[str], games: int, seed: int) -> list[Played]:
    """``games`` games of every pairing of ``bots``."""
    variant = load_variant(variant_name)
    out = []
    for a, b in itertools.combinations(bots, 2):
        for index in range(games):
            names = (a, b) if index % 2 == 0 else (b, a)
            players = (make_bot(names[0], index), make_bot(names[1], index))
            game = play_game(
                variant, players, SeededDice(seed * 1_000_003 + index), cube=CubeSettings()
            )
            result = game.result
            assert result is not None  # play_game returns a finished game
            points = 0.0 if result.draw else float(result.points)
            record = game.record()
            inputs = from_kernel_record(str(index), record, names, CubeSettings())
            out.append(Played(names, points if result.winner == 0 else -points, inputs, index))
    return out


def rate(played: list[Played], evaluator: str, ply: int, games: int) -> dict[str, PlayerStats]:
    """Each bot's numbers over the first ``games`` games of every pairing, analysed at ``ply``."""
    chosen = [p for p in played if p.pairing_index < games]
    totals: dict[str, PlayerStats] = {}
    if not chosen:
        return totals
    searcher = searchers_for([chosen[0].game], evaluator)[0]
    for p in chosen:
        analysis = analyse_game(p.game, searcher, ply, luck_ply=None)
        for player in analysis.players:
            totals.setdefault(player.name, PlayerStats(player.name, games=0)).add(player)
    return totals


def elo(played: list[Played]) -> Ratings:
    """Bradley-Terry Elo on wins (a draw: half a win each)."""
    return fit_ratings(tally((p.names[0], p.names[1], p.white_points) for p in played))


def ladder(
    variant_name: str, bots: list[str], games: int, evaluator: str, ply: int, seed: int
) -> dict[str, tuple[float, float, int]]:
    """Per bot: (points per game, error rate, decisions counted), every game analysed."""
    played = play_ladder(variant_name, bots, games, seed)
    totals = rate(played, evaluator, ply, games)
    return {
        name: (t.points / max(t.games, 1), t.error_rate, t.decisions) for name, t in totals.items()
    }


def variants_with_nets() -> list[str]:
    """Every single-game variant that ships a net (the ``neural`` bot and evaluator)."""
    return [n for n in game_variant_names() if (WEIGHTS / f"{n}.npz").exists()]


def points_per_game(played: list[Played]) -> dict[str, float]:
    points: dict[str, float] = {}
    counts: dict[str, int] = {}
    for p in played:
        for colour, name in enumerate(p.names):
            points[name] = points.get(name, 0.0) + (
                p.white_points if colour == 0 else -p.white_points
            )
            counts[name] = counts.get(name, 0) + 1
    return {name: points[name] / counts[name] for name in points}


def measure(variant: str, args: argparse.Namespace) -> dict[str, Any]:
    """One variant's ladder: Elo, points and every rating's error rates, as a JSON-able dict."""
    bots = args.bots.split(",")
    ratings = list(args.rate or [["neural", "0", str(args.games)]])
    if variant == "backgammon" and args.gnubg and importlib.util.find_spec("gnubg") is not None:
        bots = [*bots, "gnubg"]
        ratings.append(["gnubg", "0", str(args.games)])
    started, cpu = time.perf_counter(), time.process_time()
    played = play_ladder(variant, bots, args.games, args.seed)
    fitted = elo(played)
    by_elo = [row[0] for row in fitted.table()]
    gaps = [fitted.diff(stronger, weaker) for stronger, weaker in itertools.pairwise(by_elo)]
    out: dict[str, Any] = {
        "variant": variant,
        "games_per_pairing": args.games,
        "seed": args.seed,
        "elo": {b: [round(fitted.elo[b], 1), round(fitted.se[b], 1)] for b in by_elo},
        "elo_order": by_elo,
        "neighbour_gaps": [[round(d, 1), round(se, 1)] for d, se in gaps],
        "elo_order_clear": all(d > 1.96 * se for d, se in gaps),
        "points_per_game": {b: round(v, 3) for b, v in points_per_game(played).items()},
        "ratings": [],
    }
    for evaluator, ply, games in ratings:
        totals = rate(played, evaluator, int(ply), int(games))
        by_errors = sorted(totals, key=lambda b: totals[b].error_rate)
        out["ratings"].append(
            {
                "evaluator": evaluator,
                "ply": int(ply),
                "games_per_pairing": min(int(games), args.games),
                "error_rate": {b: round(totals[b].error_rate, 5) for b in by_errors},
                "decisions": {b: totals[b].decisions for b in by_errors},
                "order": by_errors,
                "agrees": by_errors == by_elo,
            }
        )
    out["wall_s"] = round(time.perf_counter() - started, 1)
    out["cpu_s"] = round(time.process_time() - cpu, 1)
    return out


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['variant']}: {result['games_per_pairing']} games per pairing "
        f"({result['wall_s']:.0f} s wall, {result['cpu_s']:.0f} s CPU); Elo order "
        f"{' > '.join(result['elo_order'])} "
        f"({'clear' if result['elo_order_clear'] else 'NOT clear'}: neighbour gaps "
        + ", ".join(f"{d:+.0f} ± {se:.0f}" for d, se in result["neighbour_gaps"])
        + ")"
    ]
    for bot in result["elo_order"]:
        elo_value, se = result["elo"][bot]
        lines.append(
            f"  {bot:10} Elo {elo_value:+7.1f} ± {se:5.1f}  "
            f"{result['points_per_game'][bot]:+.3f} points/game"
        )
    for r in result["ratings"]:
        rates = ", ".join(f"{b} {r['error_rate'][b]:.4f} ({r['decisions'][b]})" for b in r["order"])
        agree = "agrees" if r["agrees"] else "DIFFERS"
        lines.append(
            f"  {r['evaluator']} {r['ply']}-ply, {r['games_per_pairing']} games per pairing: "
            f"{rates}: {agree}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="backgammon,long,fevga")
    parser.add_argument("--bots", default="random,heuristic,neural")
    parser.add_argument("--games", type=int, default=8, help="games per pairing")
    parser.add_argument(
        "--rate",
        nargs=3,
        action="append",
        metavar=("EVALUATOR", "PLY", "GAMES"),
        help="rate the first GAMES games per pairing at PLY (default: neural 0 GAMES=--games)",
    )
    parser.add_argument("--gnubg", action="store_true", help="add gnubg in backgammon")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="JSON-lines file of finished variants (resumes)")
    args = parser.parse_args()
    names = variants_with_nets() if args.variants == "all" else args.variants.split(",")
    done: dict[str, dict[str, Any]] = {}
    if args.out is not None and args.out.exists():
        for line in args.out.read_text().splitlines():
            entry = json.loads(line)
            done[entry["variant"]] = entry
    for name in names:
        result = done.get(name)
        if result is None:
            result = measure(name, args)
            if args.out is not None:
                with args.out.open("a") as out:
                    out.write(json.dumps(result) + "\n")
        print(report(result), flush=True)


if __name__ == "__main__":
    main()
