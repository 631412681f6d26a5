"""Positions with pinned checkers (RULES.md §3.12.2), reached by seeded random plakoto games: the
test data of every reader and writer of positions outside the kernel (protocol, encodings, svg,
gnubg formats)."""

from __future__ import annotations

import random
from functools import cache

from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game, PlayDecision
from nardy.core.position import Position


@cache
def pinned_positions(games: int = 6, seed: int = 3) -> tuple[Position, ...]:
    """Distinct positions (mover's view, start of a segment) holding at least one pinned checker,
    from ``games`` random plakoto games; both sides' pins occur among them."""
    variant = load_variant("plakoto")
    found: dict[str, Position] = {}
    for g in range(games):
        rng = random.Random(seed * 1000 + g)
        game = Game(variant, SeededDice(seed * 1000 + g))
        while not game.is_over:
            decision = game.decision
            assert isinstance(decision, PlayDecision)  # plakoto has no cube
            position = game.position
            if position.pinned:
                found.setdefault(position.id(), position)
            game.decide(rng.randrange(len(decision.plays)))
    return tuple(found.values())
