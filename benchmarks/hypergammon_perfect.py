"""Perfect cubeless hypergammon, read from GNU Backgammon's hypergammon database: the ceiling a net
can reach in that variant, measured instead of guessed (issue 37's "≥ 65 % against heuristic").

Three checkers a side leave 3,276 one-sided positions (≤ 3 checkers on 25 points, the bar the
25th), 10,732,176 ordered pairs: few enough for GNU Backgammon's ``makehyper`` to solve the game by
value iteration (each position's cubeless money equity is the mean over the 21 rolls of its best
play's, iterated until no value moves by more than the threshold). This module reads that file and
plays by it: :class:`PerfectBot` chooses the play whose result has the best cubeless equity, so it
plays as well as any bot can without the cube (gammons and backgammons count as RULES.md §3.11
says: hypergammon is backgammon in every rule).

    /usr/games/makehyper -c 3 -t 1e-4 -f hyper3.bd    # Debian's gnubg: sweeps of ~340 s
    python benchmarks/hypergammon_perfect.py --database hyper3.bd.tmp --check 2000
    python benchmarks/hypergammon_perfect.py --database hyper3.bd.tmp --benchmark \\
        --bot heuristic --bot neural --bot neural:1
    NARDY_HYPERGAMMON_DB=hyper3.bd.tmp PYTHONPATH=benchmarks \\
        python benchmarks/measure_duplicate_play.py -v hypergammon -o cube=false \\
        --bots hypergammon_perfect:PerfectBot,heuristic --games 2000 --seed 12

makehyper writes its checkpoint ``hyper3.bd.tmp`` after every sweep and the final file only once
the cubeful equities settle too, hours later; the cubeless play settles first (docs/bots.md, *The
ceiling in hypergammon*: 18 sweeps), and ``--check`` says how far a checkpoint is from its fixed
point. The reader takes 1, 2 or 3 checkers (``-c``); the 2-checker file takes a minute.

``--check`` replays the database's own equation on positions met in play, through nardy's move
generator: a position's stored equity against the mean over the 21 rolls of the best stored equity
its legal plays reach. A wrong index or a wrong reading of the file gives differences of tenths of
a point; a converged file agrees to its threshold.

The file (GNU Backgammon's ``makehyper.c``): a 40-byte header ``gnubg-H3…``, then one 28-byte record
per pair ``(player on roll, opponent)``, the player on roll's index major: five 24-bit little-endian
probabilities (win, win gammon, win backgammon, lose gammon, lose backgammon; ÷ 0xFFFFFF), four
cubeful equities this module does not read, one byte of padding. A side's index ranks its 25
counts (its points 1–24 from its own side, then the bar) by the combinatorial number system.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from nardy.analysis.benchmark import Entry, choices, read_benchmark
from nardy.analysis.stats import mean_se
from nardy.bots.base import Bot
from nardy.core import load_variant
from nardy.core.game import PlayDecision
from nardy.core.gnubg import board_of_counts
from nardy.core.position import Position
from nardy.core.turnplan import roll_plan
from nardy.core.variant import Variant

SLOTS = 25
"""A side's points 1-24 and its bar; borne-off checkers are what the 25 counts leave of N."""
HEADER_BYTES = 40
RECORD_BYTES = 28
DATABASE_ENV = "NARDY_HYPERGAMMON_DB"

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
"""The 21 distinct rolls; a non-double counts twice of 36."""


def steps(variant: Variant, a: int, b: int) -> tuple[int, ...]:
    """The dice a roll's turn plays, by the variant's turn plan (hypergammon's is backgammon's:
    a double is four steps, RULES.md §2.3, and every turn is that one segment)."""
    kind, dice, last = roll_plan(variant.rules.turn, a, b)
    if kind != "roll" or not last:
        raise ValueError(f"{variant.name}'s turns are not one segment a roll")
    return dice


class DatabaseError(ValueError):
    """The file is not a hypergammon database of GNU Backgammon's layout."""


def sides(checkers: int) -> int:
    """The one-sided positions of ``checkers`` a side: 3,276 for 3, 351 for 2."""
    return math.comb(SLOTS + checkers, checkers)


def side_rank(counts: Sequence[int], checkers: int) -> int:
    """The index of one side's 25 counts (points 1-24 from that side, then its bar).

    The counts are written as a row of 25 + N cells (N = ``checkers``), the top one and then one
    divider after each point's checkers: 25 marked cells. The index is that subset's rank in the
    combinatorial number system, the sum of C(c_k, k) over its cells c_1 < … < c_25."""
    if len(counts) != SLOTS or min(counts) < 0 or sum(counts) > checkers:
        raise ValueError(f"a side is 25 counts of at most {checkers} checkers, not {counts!r}")
    cell = SLOTS - 1 + sum(counts)
    cells = [cell]
    for count in counts[:-1]:
        cell -= count + 1
        cells.append(cell)
    return sum(math.comb(c, k) for k, c in enumerate(sorted(cells), start=1))


@cache
def rank_table(checkers: int) -> dict[tuple[int, ...], int]:
    """Every one-sided position's index, built once and checked to be a bijection onto
    0 … sides(checkers) − 1."""
    table: dict[tuple[int, ...], int] = {}
    for on_board in range(checkers + 1):
        for slots in itertools.combinations_with_replacement(range(SLOTS), on_board):
            counts = [0] * SLOTS
            for slot in slots:
                counts[slot] += 1
            table[tuple(counts)] = side_rank(counts, checkers)
    if sorted(table.values()) != list(range(sides(checkers))):
        raise AssertionError(f"the side ranks of {checkers} checkers are not a bijection")
    return table


class HypergammonDatabase:
    """GNU Backgammon's ``hyperN.bd``, mapped read-only; :meth:`equities` are cubeless, in points."""

    def __init__(self, path: Path) -> None:
        try:
            size = path.stat().st_size
            with path.open("rb") as handle:
                header = handle.read(HEADER_BYTES)
        except OSError as error:
            raise DatabaseError(f"cannot read the hypergammon database {path}: {error}") from None
        if len(header) < 9 or not header.startswith(b"gnubg-H") or header[7:8] not in b"123":
            raise DatabaseError(
                f"{path} is not a hypergammon database (header {header[:8]!r}, expected "
                "b'gnubg-H1' to b'gnubg-H3'; make one with makehyper -c 3)"
            )
        self.checkers = int(header[7:8])
        self.sides = sides(self.checkers)
        expected = HEADER_BYTES + self.sides * self.sides * RECORD_BYTES
        if size != expected:
            raise DatabaseError(
                f"{path} has {size} bytes, a {self.checkers}-checker database {expected}: "
                "truncated or another format"
            )
        self.path = path
        self._records = np.memmap(
            path,
            dtype=np.uint8,
            mode="r",
            offset=HEADER_BYTES,
            shape=(self.sides * self.sides, RECORD_BYTES),
        )
        self._ranks = rank_table(self.checkers)

    def index(self, on_roll: Sequence[int], other: Sequence[int]) -> int:
        """The record of ``on_roll`` to play against ``other`` (each side's 25 counts)."""
        return self._ranks[tuple(on_roll)] * self.sides + self._ranks[tuple(other)]

    def probabilities(self, indices: Sequence[int]) -> np.ndarray:
        """Rows of (win, win gammon, win backgammon, lose gammon, lose backgammon) of the player on
        roll, one row per record."""
        rows = self._records[np.asarray(indices, dtype=np.int64), :15].astype(np.uint32)
        values = rows[:, 0::3] | (rows[:, 1::3] << 8) | (rows[:, 2::3] << 16)
        return values.astype(np.float64) / 0xFFFFFF

    def equities(self, indices: Sequence[int]) -> np.ndarray:
        """Cubeless money equity of the player on roll: 2·win − 1 + gammons and backgammons won
        less those lost (each of them already counted once in win or loss)."""
        p = self.probabilities(indices)
        equity: np.ndarray = 2.0 * p[:, 0] - 1.0 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]
        return equity

    def position_index(self, position: Position) -> int:
        """The record of ``position`` with its mover on roll."""
        other, mover = board_of_counts(position.points, position.bar)
        return self.index(mover, other)

    def result_index(self, result: Position) -> int:
        """The record of a play's result (still from the mover's view): the opponent is on roll."""
        mover_after, other = board_of_counts(result.points, result.bar)
        return self.index(mover_after, other)

    def play_values(self, results: Sequence[Position]) -> np.ndarray:
        """Each result's cubeless equity for the player who made the play."""
        return -self.equities([self.result_index(result) for result in results])

    def play_wins(self, results: Sequence[Position]) -> np.ndarray:
        """Each result's probability that the player who made the play wins, both sides playing
        on perfectly for equity."""
        win: np.ndarray = 1.0 - self.probabilities([self.result_index(r) for r in results])[:, 0]
        return win


class PerfectBot(Bot):
    """Cubeless perfect play in hypergammon: the play with the best database equity.

    The database comes from ``$NARDY_HYPERGAMMON_DB`` (``nardy play`` seats a ``module:factory``
    bot with its seed alone). Ties keep the generator's first play, so the bot is deterministic."""

    name = "perfect"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        path = os.environ.get(DATABASE_ENV)
        if not path:
            raise DatabaseError(f"set {DATABASE_ENV} to a hyper3.bd made by makehyper -c 3")
        self.database = _open(path)

    def start_game(self, variant: Variant, colour: int) -> None:
        if variant.name != "hypergammon" or variant.checkers != self.database.checkers:
            raise ValueError(
                f"{self.database.path} plays {self.database.checkers}-checker hypergammon, not "
                f"{variant.name} with {variant.checkers} checkers"
            )

    def choose_play(self, decision: PlayDecision) -> int:
        if len(decision.plays) == 1:
            return 0
        return int(np.argmax(self.values([play.result for play in decision.plays])))

    def values(self, results: Sequence[Position]) -> np.ndarray:
        return self.database.play_values(results)


class MostWinsBot(PerfectBot):
    """The play that wins most often, gammons not counted: the database's win probability of each
    result, play then going on perfectly for equity. Not the policy that maximises wins over the
    whole game (no database holds that), but its first step: a win rate that a bot playing for
    points gives away to play for gammons shows here."""

    name = "most-wins"

    def values(self, results: Sequence[Position]) -> np.ndarray:
        return self.database.play_wins(results)


@cache
def _open(path: str) -> HypergammonDatabase:
    return HypergammonDatabase(Path(path))


def sample_positions(variant: Variant, count: int, seed: int) -> list[Position]:
    """Positions met by the mover in random games (every one a legal hypergammon position)."""
    rng = random.Random(seed)
    positions: list[Position] = []
    while len(positions) < count:
        position = variant.start_position()
        while not variant.is_finished(position) and len(positions) < count:
            positions.append(position)
            plays = variant.legal_plays(
                position, steps(variant, rng.randint(1, 6), rng.randint(1, 6))
            )
            position = variant.flip(plays[rng.randrange(len(plays))].result)
    return positions


def bellman_residuals(
    database: HypergammonDatabase, variant: Variant, positions: Sequence[Position]
) -> np.ndarray:
    """Stored equity minus the mean over the 21 rolls of the best stored equity a legal play reaches
    (a roll with no legal play passes the turn: the result is the position itself)."""
    residuals = []
    for position in positions:
        total = 0.0
        for a, b in ROLLS:
            plays = variant.legal_plays(position, steps(variant, a, b))
            best = float(np.max(database.play_values([play.result for play in plays])))
            total += best if a == b else 2.0 * best
        stored = float(database.equities([database.position_index(position)])[0])
        residuals.append(stored - total / 36.0)
    return np.asarray(residuals)


def rollout_check(database: HypergammonDatabase, entries: Sequence[Entry]) -> dict[str, float]:
    """How the benchmark's rolled-out equities stand against the exact ones: their mean and RMS
    difference, the share more than 2 and 3 SEs away (5 % and 0.3 % for unbiased estimates), how
    often the file's best play is the exact best, and the mean exact loss of the file's best."""
    differences, z_scores, best_right, best_loss = [], [], [], []
    for entry in entries:
        exact = database.play_values(entry.results)
        for index, (equity, se) in entry.rolled.items():
            differences.append(equity - exact[index])
            z_scores.append((equity - exact[index]) / se if se > 0 else 0.0)
        best_right.append(float(exact[entry.best] == np.max(exact)))
        best_loss.append(float(np.max(exact) - exact[entry.best]))
    d, z = np.asarray(differences), np.abs(np.asarray(z_scores))
    return {
        "rolled_plays": float(len(d)),
        "mean_difference": float(np.mean(d)),
        "rms_difference": float(np.sqrt(np.mean(d * d))),
        "beyond_2_se": float(np.mean(z > 2)),
        "beyond_3_se": float(np.mean(z > 3)),
        "best_is_exact_best": float(np.mean(best_right)),
        "best_exact_loss_mp": 1000.0 * float(np.mean(best_loss)),
    }


def exact_losses(
    database: HypergammonDatabase, entries: Sequence[Entry], picked: Sequence[int]
) -> list[float]:
    """The millipoints each picked play loses by the exact equities: what ``nardy benchmark``
    estimates from the file's rollouts (:meth:`Entry.loss`)."""
    losses = []
    for entry, index in zip(entries, picked, strict=True):
        exact = database.play_values(entry.results)
        losses.append(1000.0 * float(np.max(exact) - exact[index]))
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", type=Path, required=True, help="hyperN.bd from makehyper")
    parser.add_argument("--check", type=int, default=300, help="positions to check (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--benchmark",
        action="store_true",
        help="also grade the shipped hypergammon benchmark: its rolled-out equities against the "
        "exact ones, and each --bot's error rate by both",
    )
    parser.add_argument("--bot", action="append", default=[], help="a bot to grade (repeatable)")
    args = parser.parse_args()
    try:
        database = HypergammonDatabase(args.database)
    except DatabaseError as error:
        sys.exit(f"error: {error}")
    variant = load_variant("hypergammon", {"checkers": database.checkers})
    positions = sample_positions(variant, args.check, args.seed)
    residuals = bellman_residuals(database, variant, positions)
    start = float(database.equities([database.position_index(variant.start_position())])[0])
    print(
        f"{len(positions)} positions from random games: |stored − mean of the 21 rolls' best| "
        f"max {np.max(np.abs(residuals)):.2e}, mean {np.mean(np.abs(residuals)):.2e}; "
        f"the opening position's equity for the player on roll {start:+.4f}"
    )
    if not args.benchmark:
        return
    os.environ[DATABASE_ENV] = str(args.database)  # for a --bot of this module's bots
    entries = read_benchmark(variant)
    check = rollout_check(database, entries)
    print(
        f"benchmark, {len(entries)} decisions, {int(check['rolled_plays'])} rolled-out plays: "
        f"rolled − exact mean {check['mean_difference']:+.4f}, RMS {check['rms_difference']:.4f}; "
        f"beyond 2 SE {100 * check['beyond_2_se']:.1f} %, beyond 3 SE "
        f"{100 * check['beyond_3_se']:.1f} %; the file's best is the exact best in "
        f"{100 * check['best_is_exact_best']:.1f} % (exact loss of the file's best "
        f"{check['best_exact_loss_mp']:.1f} mp a decision)"
    )
    previous: list[float] | None = None
    for name in args.bot:
        picked = choices(variant, name, entries)
        exact = exact_losses(database, entries, picked)
        by_file = [1000.0 * entry.loss(index) for entry, index in zip(entries, picked, strict=True)]
        line = "{}: exact {:.1f} ± {:.1f} mp; the benchmark's {:.1f} ± {:.1f} mp".format(
            name, *mean_se(exact), *mean_se(by_file)
        )
        if previous is not None:
            lead = [a - b for a, b in zip(exact, previous, strict=True)]
            line += "; minus the bot before, exact {:+.1f} ± {:.1f} mp".format(*mean_se(lead))
        print(line)
        previous = exact


if __name__ == "__main__":
    main()
