"""How far each variant's net disagrees with its own look-ahead: the standard deviation of
``V₀ − V₁`` over the afterstates of its self-play, for the value net of policy iteration (the
nets shipped when issue 37 was filed, ``VARIANT.value.npz``) and the net ``neural`` plays now
(``VARIANT.npz``), side by side.

    python benchmarks/measure_self_consistency.py [-v long ...] [--games 40] [--seed 1]
    python benchmarks/measure_self_consistency.py -v khachapuri --net candidate.npz

``--net FILE`` measures a candidate in the shipped net's place (one variant), so a new net is
judged against the goal before it ships.

``--versus-heuristic`` measures where luck adjustment meets the net instead (``--judge FILE``:
another net values the positions the shipped net's games lead to, as an analysis with
``--evaluator neural:FILE`` would): the shipped net (or
``--net``) plays every game against ``heuristic`` (seats alternating) and each side's
afterstates are valued as above. Luck adjustment keeps what the judge's values and its 1-ply
search disagree on, summed over a game from one side's view: the net's afterstates count as
they are, ``heuristic``'s with the opposite sign (docs/analysis.md). The table gives the mean
``V₀ − V₁`` of each side's afterstates and the mean and SD over games of that sum, beside the
same sum over the net's self-play on the same dice (seat 0's view).

Issue 37's consistency goal: "in every variant the SD of V₀ − V₁ over played positions is at
most half of today's nets'". Why the SD and not the root mean square: a constant offset between
a net's value and its 1-ply value reorders no search and cancels in luck adjustment's pairs; the
spread is what does neither (:func:`nardy.train.consistency.spread`).

Each net plays ``--games`` cubeless games against itself through the kernel's game loop
(:func:`nardy.train.consistency.collect_positions`, the positions a generation of that net fits:
every played result that ends the mover's turn and not the game), and each such afterstate is
valued at 0-ply and by the net's 1-ply search (:func:`nardy.train.consistency.zero_and_one_ply`,
points). Both nets play on the same dice. The ratio column is now ÷ then (the goal: ≤ 0.5).
Variants without a value net (hypergammon, whose first net is the outcome net) get one row.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from nardy.core import game_variant_names, load_variant
from nardy.engines.net import (
    Net,
    engine_for,
    load_net,
    shipped_value_weights,
    shipped_weights,
)
from nardy.train.consistency import collect_positions, spread, zero_and_one_ply


def measure(variant_name: str, net: Net, games: int, seed: int) -> tuple[int, float, float, float]:
    """Afterstates, SD and mean of ``V₀ − V₁`` (points) and the seconds taken."""
    variant = load_variant(variant_name)
    started = time.process_time()
    positions = collect_positions(variant, games, seed, 0, player=net)
    values = zero_and_one_ply(variant, net, positions.afterstates)
    seconds = time.process_time() - started
    return (
        len(positions.afterstates),
        spread(values),
        float(np.mean(values[0] - values[1])),
        seconds,
    )


def per_game_sums(games: np.ndarray, differences: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Each game's sum of ``signs · (V₀ − V₁)`` over its afterstates."""
    count = int(games.max()) + 1 if games.size else 0
    return np.bincount(games, weights=signs * differences, minlength=count)


def measure_versus_heuristic(
    variant_name: str, net: Net, games: int, seed: int, judge: Net | None = None
) -> str:
    """A row of the ``--versus-heuristic`` table: ``net`` plays, ``judge`` (default: ``net``)
    values."""
    variant = load_variant(variant_name)
    judge = judge or net
    started = time.process_time()
    mixed = collect_positions(variant, games, seed, 0, player=net, versus_heuristic=1.0)
    plain = collect_positions(variant, games, seed, 0, player=net)
    mixed_v = zero_and_one_ply(variant, judge, mixed.afterstates)
    plain_v = zero_and_one_ply(variant, judge, plain.afterstates)
    mixed_d, plain_d = mixed_v[0] - mixed_v[1], plain_v[0] - plain_v[1]
    seconds = time.process_time() - started
    theirs = mixed.by_heuristic
    against = per_game_sums(mixed.games, mixed_d, np.where(theirs, -1.0, 1.0))
    itself = per_game_sums(plain.games, plain_d, np.where(plain.movers == 0, 1.0, -1.0))
    return (
        f"| {variant_name} | {int((~theirs).sum())}, {int(theirs.sum())} "
        f"| {mixed_d[~theirs].mean():+.4f}, {mixed_d[theirs].mean():+.4f} "
        f"| {against.mean():+.2f} ({against.std():.2f}) | {itself.mean():+.2f} ({itself.std():.2f}) "
        f"| {seconds:.0f} |"
    )


def with_nets(names: list[str] | None) -> list[tuple[str, Path]]:
    """The variants asked for (default: every game variant) that ship a net, with its path."""
    found = []
    for name in names or game_variant_names():
        try:
            found.append((name, shipped_weights(name)))
        except ValueError:
            continue  # no net ships for this variant
    return found


def print_header(*columns: str) -> None:
    """A Markdown table's first two lines: the first column left, the others right aligned."""
    print("| " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * (len(columns) - 1))


def load_candidate(
    parser: argparse.ArgumentParser, args: argparse.Namespace, flag: str
) -> Net | None:
    """The net of ``--net`` or ``--judge`` (None where not given): one clear error for a
    missing, corrupt or mismatched file, or one the variant's engine refuses (trained for
    another variant, another scale of points)."""
    path = getattr(args, flag)
    if path is None:
        return None
    if len(args.variant or []) != 1:
        parser.error(f"--{flag} needs exactly one --variant")
    try:
        net = load_net(path)  # its errors name the file
    except ValueError as error:
        parser.error(str(error))
    try:
        engine_for(net, load_variant(args.variant[0]))
    except ValueError as error:
        parser.error(f"{path}: {error}")
    return net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40, help="self-play games per net")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variant", "-v", action="append", help="only this variant (repeatable); default: all"
    )
    parser.add_argument(
        "--net",
        type=Path,
        metavar="FILE",
        help="weights measured in the shipped net's place (with exactly one --variant)",
    )
    parser.add_argument(
        "--versus-heuristic",
        action="store_true",
        help="the net against heuristic: V0 - V1 by side and summed over each game (see above)",
    )
    parser.add_argument(
        "--judge",
        type=Path,
        metavar="FILE",
        help="with --versus-heuristic: weights that value the positions in the playing net's "
        "place (with exactly one --variant)",
    )
    args = parser.parse_args()
    if args.judge is not None and not args.versus_heuristic:
        parser.error("--judge goes with --versus-heuristic")
    candidate = load_candidate(parser, args, "net")
    judge = load_candidate(parser, args, "judge")
    variants = with_nets(args.variant)
    if args.versus_heuristic:
        print_header(
            "variant",
            "afterstates (net's, heuristic's)",
            "mean V₀ − V₁ (net's, heuristic's)",
            "per-game sum against heuristic, mean (SD)",
            "the same in self-play",
            "CPU-s",
        )
        for name, shipped in variants:
            net = candidate or load_net(shipped)
            print(measure_versus_heuristic(name, net, args.games, args.seed, judge), flush=True)
        return
    print_header(
        "variant",
        "afterstates (then, now)",
        "SD of V₀ − V₁, value net",
        "SD now (mean)",
        "now ÷ then",
        "CPU-s",
    )
    for name, now_path in variants:
        then_path = shipped_value_weights(name)
        now = measure(name, candidate or load_net(now_path), args.games, args.seed)
        if then_path == now_path and candidate is None:
            print(f"| {name} | {now[0]} | — | {now[1]:.3f} ({now[2]:+.3f}) | — | {now[3]:.0f} |")
            continue
        then = measure(name, load_net(then_path), args.games, args.seed)
        print(
            f"| {name} | {then[0]}, {now[0]} | {then[1]:.3f} | {now[1]:.3f} ({now[2]:+.3f}) "
            f"| {now[1] / then[1]:.2f} | {then[3] + now[3]:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
