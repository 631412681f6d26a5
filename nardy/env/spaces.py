"""The size of the discrete action space per variant, from a measured worst case (docs/learning.md).

An action indexes the legal plays of the segment to be played (``LegalPlays`` order), or answers a
cube decision (double: 0 roll, 1 double; take: 0 take, 1 drop, 2 beaver). The space must hold the
largest number of distinct legal plays any segment can have.

**Measured.** ``benchmarks/search_max_plays.py`` searched for it (hill climbs over legal positions
for every segment's dice, two seeds × 20-25 s per variant, plus random one-checker-per-point
positions). :data:`MEASURED_MAX` holds the largest count found per variant with its position, and
``tests/env/test_env_spaces.py`` re-counts each. Every worst case is the same shape: the mover's 15
checkers one per point, playing 1-1.

**Chosen.** A search finds a lower bound, so the space keeps a margin: 1.5 × the largest measured
count over the built-in variants (2,125), rounded up to a multiple of 256 = **3,328** for every
built-in variant (one network shape serves them all).

**Proven.** A segment's result is fixed by which checkers moved how many steps (equal steps: each
checker's path is fixed by its start and step count), so with ``S`` occupied start points there are
at most ``S + S² + C(S+1, 2) + S·C(S+1, 2) + C(S+3, 4)`` results of four equal steps (5,220 for 15
checkers) and ``S² + 4S`` of two different dice. :func:`upper_bound` computes it; a variant that was
not measured (a third-party plugin) gets this bound as its space. A decision with more plays than
the space raises a clear error (never seen).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Final

from nardy.core.variant import Variant


@dataclass(frozen=True, slots=True)
class WorstCase:
    """The most distinct legal plays found for one variant, and where (mover's view)."""

    plays: int
    position: str
    """Position id; borne-off counts follow from it."""
    dice: tuple[int, ...]


MEASURED_MAX: Final[dict[str, WorstCase]] = {
    "backgammon": WorstCase(2125, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "trictrac": WorstCase(2125, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "long": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "nardgammon": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "mad": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "gulbar": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "mad_gulbar": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "khachapuri": WorstCase(2124, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "fevga": WorstCase(2052, "--AAAA/A-A-AA/Ab--AA/-AA-AA", (1, 1, 1, 1)),
    "giul": WorstCase(2052, "--AAAA/A-A-AA/Ab--AA/-AA-AA", (1, 1, 1, 1)),
    # The tavli games (RULES.md §3.12): backgammon's worst case; plakoto's pins add no result
    # there (no opposing blot to land on), and no seeded position with pins came near it.
    "portes": WorstCase(2125, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
    "plakoto": WorstCase(2125, "o-A-AA/AA-AA-/A-A-AA/A-AA-A", (1, 1, 1, 1)),
}
"""The largest number of distinct legal plays of one segment found per built-in variant."""

CUBE_ACTIONS: Final = 3
"""take / drop / beaver: the largest cube decision."""

MARGIN: Final = 1.5
GRANULE: Final = 256


def upper_bound(checkers: int) -> int:
    """A proven bound on the distinct results of one segment for a side of ``checkers`` checkers
    (see the module docstring)."""
    s = min(checkers, 25)
    four = s + s * s + comb(s + 1, 2) + s * comb(s + 1, 2) + comb(s + 3, 4)
    return max(four, s * s + 4 * s, CUBE_ACTIONS)


def _measured_size() -> int:
    top = max(case.plays for case in MEASURED_MAX.values())
    return -(-int(top * MARGIN) // GRANULE) * GRANULE


BUILTIN_SIZE: Final = _measured_size()
"""3,328: the action space of every measured variant."""


def action_space_size(variant: Variant | str) -> int:
    """The number of discrete actions of ``variant``'s environments (a name is looked up among the
    measured variants only)."""
    name = variant if isinstance(variant, str) else variant.name
    if name in MEASURED_MAX:
        return BUILTIN_SIZE
    if isinstance(variant, str):
        raise ValueError(f"variant {name!r} was not measured; pass the Variant to bound its space")
    return upper_bound(sum(variant.rules.layout.points.values()))
