"""Luck-adjusted against duplicate-dice results with several evaluators on the same stored games
(issue 21's variance goal: the shipped ``neural`` nets against ``neural-consistent``).

    python benchmarks/measure_consistency.py analyse --db T.db --evaluators neural,neural-consistent \
        --out games.jsonl [--part 0/2]
    python benchmarks/measure_consistency.py report --db T.db games.jsonl [more.jsonl ...] \
        [--analysis neural=analysis.json] [--bots neural,heuristic]

``analyse`` goes through the stored games of a duplicate-dice tournament (``nardy arena run``)
in order, analyses each at 0-ply with every evaluator and appends one JSON line per game, so a run
cut short still counts and ``--part i/n`` runs share the work (game ``k`` goes to part
``k mod n``). ``report`` joins those lines (and, with ``--analysis NAME=FILE``, the per-game
numbers of ``nardy analyze --db T.db --json --show none`` under NAME), keeps the games every
evaluator has and whose duplicate partner is there too, and prints for each evaluator the figures
of ``measure_luck_adjustment.py --db``: raw and luck-adjusted means with SEs (over pairs), their
ratio, and the per-game SD of the skill term and of the rest (the evaluator's inconsistency).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent


def _luck_module() -> Any:
    spec = importlib.util.spec_from_file_location("_luck", HERE / "measure_luck_adjustment.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_luck"] = module
    spec.loader.exec_module(module)
    return module


def analyse(args: argparse.Namespace) -> None:
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import from_arena_record
    from nardy.analysis.stats import searchers_for
    from nardy.arena.records.storage import open_store

    part, _, parts = args.part.partition("/")
    index, count = int(part), int(parts or 1)
    store = open_store(args.db, readonly=True)
    try:
        rows = [r for t in store.tournaments() for r in store.games(t.tournament_id, records=True)]
    finally:
        store.close()
    evaluators = args.evaluators.split(",")
    searchers: dict[str, Any] = {}
    with open(args.out, "a", encoding="utf-8") as handle:
        for k, row in enumerate(rows):
            if k % count != index or row.winner is None or row.record is None:
                continue
            inputs = from_arena_record(row.game_id, row.record)
            line: dict[str, Any] = {
                "game": row.game_id,
                "unit": f"{row.pool}:{row.round}:{row.seed}",
            }
            for spec in evaluators:
                if spec not in searchers:
                    searchers[spec] = searchers_for([inputs], spec)[0]
                analysis = analyse_game(inputs, searchers[spec])
                line[spec] = {
                    p.name: {
                        "raw": p.points,
                        "adjusted": p.adjusted,
                        "luck": p.luck,
                        "loss": p.total_loss,
                    }
                    for p in analysis.players
                }
            handle.write(json.dumps(line) + "\n")
            handle.flush()


def report(args: argparse.Namespace) -> None:
    luck = _luck_module()
    units: dict[str, str] = {}
    per_evaluator: dict[str, dict[str, dict[str, dict[str, float]]]] = defaultdict(dict)
    for path in args.lines:
        with open(path, encoding="utf-8") as handle:
            for text in handle:
                line = json.loads(text)
                units[line["game"]] = line["unit"]
                for key, players in line.items():
                    if isinstance(players, dict):
                        per_evaluator[key][line["game"]] = players
    for item in args.analysis or []:
        name, _, path = item.partition("=")
        with open(path, encoding="utf-8") as handle:
            for game in json.load(handle)["games"]:
                per_evaluator[name][game["game"]] = {
                    p["name"]: luck._numbers(p) for p in game["players"].values()
                }
    common = set(units)
    for games in per_evaluator.values():
        common &= set(games)
    by_unit: dict[str, list[str]] = defaultdict(list)
    for game_id in common:
        by_unit[units[game_id]].append(game_id)
    kept = sorted(g for ids in by_unit.values() if len(ids) == 2 for g in ids)
    a = args.bots.split(",")[0]
    for name, games in per_evaluator.items():
        numbers = []
        for game_id in kept:
            players = games[game_id]
            mine = players[a]
            other = next(v for k, v in players.items() if k != a)
            numbers.append(
                luck.GameNumbers(
                    units[game_id],
                    mine["raw"],
                    mine["adjusted"],
                    mine["luck"] - other["luck"],
                    other["loss"] - mine["loss"],
                )
            )
        print(f"== evaluator {name}")
        luck._report_stored(argparse.Namespace(db=args.db, bots=args.bots), numbers, "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("analyse")
    run.add_argument("--db", required=True)
    run.add_argument("--evaluators", default="neural,neural-consistent")
    run.add_argument("--out", required=True)
    run.add_argument("--part", default="0/1", help="i/n: the games k with k mod n = i")
    show = commands.add_parser("report")
    show.add_argument("--db", default="", help="named in the output only")
    show.add_argument("lines", nargs="+")
    show.add_argument("--analysis", action="append", metavar="NAME=FILE")
    show.add_argument("--bots", default="neural,heuristic")
    args = parser.parse_args()
    analyse(args) if args.command == "analyse" else report(args)


if __name__ == "__main__":
    main()
