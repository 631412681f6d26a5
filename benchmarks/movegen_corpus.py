"""Inputs of the move-generation benchmarks: the backgammon oracle corpus and seeded random games.

Used by benchmarks/conftest.py (fixtures), benchmarks/test_movegen.py and
benchmarks/measure_movegen.py. Inputs are built before any timing; the benchmarks time only the
calls they name (legal-play generation caches nothing between calls).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "data" / "backgammon-oracle.jsonl.gz"


@dataclass(frozen=True)
class OracleCase:
    """One oracle case, ready to time: its position JSON, its steps and the expected play count."""

    id: str
    position: dict[str, Any]
    steps: tuple[int, ...]
    results: int

    @property
    def doubles(self) -> bool:
        return len(self.steps) != 2


def load_oracle() -> list[OracleCase]:
    """tests/data/backgammon-oracle.jsonl.gz; dice ``[a, a]`` become the four steps."""
    cases: list[OracleCase] = []
    with gzip.open(ORACLE, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            obj = json.loads(line)
            a, b = obj["dice"]
            steps = (a,) * 4 if a == b else (a, b)
            cases.append(OracleCase(obj["id"], obj["position"], steps, len(obj["results"])))
    return cases


def random_game(
    variant: Variant, seed: int, on_play: Callable[[PlayDecision], None] | None = None
) -> int:
    """Play one game with seeded dice and seeded random choices (no doubling); return its
    number of play decisions. ``on_play`` sees every play decision before it is answered."""
    rng = random.Random(seed)
    game = Game(variant, SeededDice(seed))
    plays = 0
    while not game.is_over:
        decision = game.decision
        if isinstance(decision, PlayDecision):
            if on_play is not None:
                on_play(decision)
            plays += 1
            game.decide(rng.randrange(len(decision.plays)))
        elif isinstance(decision, DoubleDecision):
            game.decide(False)
        else:
            game.decide("take")
    return plays


def game_corpus(
    variant: Variant, games: int, seed: int = 1
) -> list[tuple[Position, tuple[int, ...]]]:
    """(position, segment steps) of every play decision of ``games`` seeded random games."""
    found: list[tuple[Position, tuple[int, ...]]] = []
    for number in range(games):
        random_game(
            variant,
            seed * 10_000 + number,
            lambda d: found.append((d.position, d.segment.dice)),
        )
    return found
