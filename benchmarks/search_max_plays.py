"""Search for the largest number of distinct legal plays of one segment, per variant.

The learning environments (docs/learning.md) index the legal plays of a segment with a fixed,
discrete action space, so its size must cover the worst case. This script looks for that worst
case: a hill climb over legal positions (seeded random game positions and random spreads, moved
one checker at a time; most starts put the mover's checkers one per point, where the most plays
are found), for every segment the turn plans can ask for (the 15 non-doubles and four
equal steps of 1…6), keeping a change when the number of distinct results does not drop.

    python benchmarks/search_max_plays.py --seconds 30 --seed 1 > max_plays.json
    python benchmarks/search_max_plays.py --variant long --seconds 10

It prints one JSON line per variant: the largest count found, with its position id and dice, so
each figure can be checked (tests/env/test_env_spaces.py replays them). A hill climb finds a lower
bound of the true maximum; the action spaces keep a margin above it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from nardy.core import game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.errors import InvalidPositionError
from nardy.core.game import DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.position import Position, opposite_point
from nardy.core.variant import Variant

SEGMENTS: tuple[tuple[int, ...], ...] = (
    *((d,) * 4 for d in range(1, 7)),
    *((a, b) for a in range(1, 7) for b in range(1, a)),
)


def _opp(p: int) -> int:
    return p + 12 if p <= 12 else p - 12


def _illegal_block(own: set[int], other_own: set[int]) -> bool:
    """RULES.md §3.3.5 for ``own`` (a side's occupied points, its coordinates) against ``other_own``
    (the other side's occupied board points, in the other side's coordinates)."""
    qs = sorted(_opp(p) for p in own)
    if not other_own:
        return False
    lowest = min(other_own)
    k = None
    for i, q in enumerate(qs):
        k = q if k is None else k
        if i + 1 == len(qs) or qs[i + 1] != q + 1:
            if q - k + 1 >= 6 and lowest > k:
                return True
            k = None
    return False


def plausible(variant: Variant, position: Position) -> bool:
    """Whether ``position`` can start a segment (RULES.md §2.7: no illegal block, quarter open;
    fevga's runner rule respected by a side that has not passed)."""
    try:
        variant.validate(position)
    except InvalidPositionError:
        return False
    rules = variant.rules
    if rules.geometry == "opposite":
        return True
    sides = [position.side(s, "same") for s in (0, 1)]
    for s in (0, 1):
        own, other = sides[s], sides[1 - s]
        blocks = rules.blocks.six_block != "none" and not position.off[1 - s]
        if blocks and _illegal_block(set(own), set(other)):
            return False
        if rules.blocks.quarter != "none" and all(own.get(p, 0) > 0 for p in range(19, 25)):
            return False
        if rules.head.runner:
            passed = position.off[s] > 0 or any(p <= 11 for p in own)
            off_head = sum(n for p, n in own.items() if p != 24)
            if not passed and off_head > 1:
                return False
    return True


def count(variant: Variant, position: Position, dice: tuple[int, ...]) -> int:
    return len(variant.generator.segment(position, dice).plays)


def _mutate(variant: Variant, position: Position, rng: random.Random) -> Position | None:
    points = list(position.points)
    sign = 1 if rng.random() < 0.75 else -1  # mostly the mover's checkers
    sources = [i for i, c in enumerate(points) if c * sign > 0]
    if not sources:
        return None
    src = rng.choice(sources)
    targets = [i for i, c in enumerate(points) if c * sign >= 0 and i != src]
    dst = rng.choice(targets)
    points[src] -= sign
    points[dst] += sign
    candidate = Position(tuple(points), position.bar, position.off)
    return candidate if plausible(variant, candidate) else None


def _spread(variant: Variant, rng: random.Random) -> Position | None:
    """A random position with both sides spread over many points (no bar, nothing off)."""
    geometry = variant.rules.geometry
    mover = {p: 0 for p in range(1, 25)}
    opponent_own: dict[int, int] = {}
    checkers = sum(variant.rules.layout.points.values())
    low = 1 if rng.random() < 0.5 else 7
    for _ in range(checkers):
        p = rng.randint(low, 24)
        mover[p] += 1
    taken = {p for p, n in mover.items() if n}
    free_own = [q for q in range(1, 25) if opposite_point(q, geometry) not in taken]
    for _ in range(checkers):
        q = rng.choice(free_own)
        opponent_own[q] = opponent_own.get(q, 0) + 1
    try:
        position = Position.from_sides(
            {p: n for p, n in mover.items() if n},
            {opposite_point(q, geometry): n for q, n in opponent_own.items()},
        )
    except InvalidPositionError:
        return None
    return position if plausible(variant, position) else None


def _singles(variant: Variant, rng: random.Random) -> Position | None:
    """The mover's checkers one per point (where the most plays are found), the opponent's stacked
    on some of the other points."""
    checkers = sum(variant.rules.layout.points.values())
    points = [0] * 24
    for p in rng.sample(range(24), min(checkers, 24)):
        points[p] = 1
    free = [i for i in range(24) if points[i] == 0]
    if not free:
        return None
    chosen = rng.sample(free, rng.randint(1, len(free)))
    for j in range(checkers):
        points[chosen[j % len(chosen)]] -= 1
    position = Position(tuple(points), (0, 0), (0, 0))
    return position if plausible(variant, position) else None


def _game_positions(variant: Variant, seed: int, games: int) -> list[Position]:
    found: list[Position] = []
    for g in range(games):
        rng = random.Random(seed * 1000 + g)
        game = Game(variant, SeededDice(seed * 1000 + g))
        while game.decision is not None:
            d = game.decision
            if isinstance(d, PlayDecision):
                found.append(d.position)
                game.decide(rng.randrange(len(d.plays)))
            elif isinstance(d, DoubleDecision):
                game.decide(False)
            else:
                assert isinstance(d, TakeDecision)
                game.decide("take")
    return found


def search(variant: Variant, seconds: float, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    starts = _game_positions(variant, seed, 4)
    best: tuple[int, Position, tuple[int, ...]] = (0, variant.start_position(), SEGMENTS[0])
    # Screen: every segment on a sample of game positions, to pick promising start points.
    for position in rng.sample(starts, min(200, len(starts))):
        for dice in SEGMENTS:
            n = count(variant, position, dice)
            if n > best[0]:
                best = (n, position, dice)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        kind = rng.random()
        if kind < 0.5:
            start = _singles(variant, rng)
        elif kind < 0.75 or not starts:
            start = _spread(variant, rng)
        else:
            start = rng.choice(starts)
        if start is None:
            continue
        dice = rng.choice(SEGMENTS[:3]) if rng.random() < 0.9 else rng.choice(SEGMENTS)
        current, value = start, count(variant, start, dice)
        stale = 0
        while stale < 60 and time.monotonic() < deadline:
            candidate = _mutate(variant, current, rng)
            if candidate is None:
                stale += 1
                continue
            n = count(variant, candidate, dice)
            if n >= value:
                stale = 0 if n > value else stale + 1
                current, value = candidate, n
            else:
                stale += 1
        if value > best[0]:
            best = (value, current, dice)
    n, position, dice = best
    return {
        "variant": variant.name,
        "max_plays": n,
        "position": position.id(),
        "off": list(position.off),
        "dice": list(dice),
        "seconds": seconds,
        "seed": seed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", help="variant (repeatable; default all)")
    parser.add_argument("--seconds", type=float, default=30.0, help="hill-climb time per variant")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in args.variant or game_variant_names():
        result = search(load_variant(name), args.seconds, args.seed)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
