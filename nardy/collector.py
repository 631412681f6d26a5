"""The garbage collector's thresholds for a nardy program (the ``nardy`` command, its servers and
the tests' processes): full collections kept rare.

The searches, rollouts and analyses keep large caches of positions (hundreds of thousands of
objects the collector tracks), clear them when they are full and fill them again. CPython (3.11)
runs a full collection whenever the objects promoted to its oldest generation since the last one
reach a quarter of that generation, so refilling a cache triggers one full collection after
another, each walking every cached object, and none of them finds garbage (reference counting
already freed it). Measured on this project's 2-core machine: rolling out 3 long nardy benchmark
positions took 5.75 s of CPU with the default thresholds (27 full collections, 0 objects
collected), 3.66 s with those below and 3.47 s with the collector off; analysing 100 long games
with luck 55.5 s (71 full collections) against 34.3 s (docs/performance.md). Reference cycles
are still collected: the young generations as before, only less often, and the oldest one after
100 collections of the middle one.

Only programs call :func:`tune`: the ``nardy`` command, the tests, and the worker processes
nardy starts itself (the arena's and the trainer's process pools, the Ray tasks of analyses,
rollouts and games, which do not inherit a spawned parent's settings). Importing nardy as a
library leaves a program's own collector alone.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)
"""``gc.set_threshold``'s three numbers: allocations before a young collection (default 700),
young collections before a middle one (10), middle ones before a full one (10)."""


def tune() -> None:
    """Set :data:`THRESHOLDS` for this process."""
    gc.set_threshold(*THRESHOLDS)
