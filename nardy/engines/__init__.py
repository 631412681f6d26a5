"""Engines: what evaluates positions and searches plays, below the bots and the analysis that use
them (docs/architecture.md).

* :mod:`nardy.engines.net` — the value network (:class:`~nardy.engines.net.ValueNet`), its shipped
  weights (``nardy/engines/weights/``) and :class:`~nardy.engines.net.NetEngine`, a net bound to a
  variant;
* :mod:`nardy.engines.heuristic` and :mod:`nardy.engines.heuristic_batch` — the hand-written
  evaluation, of one position and of many at once (the nets' prior unit);
* :mod:`nardy.engines.gnubg` — GNU Backgammon's cubeless probabilities and the cube model
  (``nardy[gnubg]``);
* :mod:`nardy.engines.evaluator` — evaluators: the cubeless equity of afterstates, by name
  (``neural``, ``neural-consistent``, ``heuristic``, ``gnubg``, a plugin's);
* :mod:`nardy.engines.search` — the N-ply search over an evaluator (:class:`Searcher`): the
  ranking of plays that the analysis, the hints and ``neural:PLY`` share.

The ``neural`` bot (:mod:`nardy.bots.neural`) plays by a net and a search from here; the analysis
(:mod:`nardy.analysis`) rates plays and rolls by them. Nothing here imports either.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nardy.engines.evaluator import (
        Evaluator,
        evaluator_names,
        make_evaluator,
        register_evaluator,
    )
    from nardy.engines.search import ROLLS, MoveFilter, RankedPlay, Searcher

# The names below load on first use (PEP 562): numpy comes with them, so importing a light module of
# the package (``nardy.engines.blas``, which must run before numpy) loads no numpy.
_LAZY = {
    "Evaluator": "nardy.engines.evaluator",
    "evaluator_names": "nardy.engines.evaluator",
    "make_evaluator": "nardy.engines.evaluator",
    "register_evaluator": "nardy.engines.evaluator",
    "ROLLS": "nardy.engines.search",
    "MoveFilter": "nardy.engines.search",
    "RankedPlay": "nardy.engines.search",
    "Searcher": "nardy.engines.search",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nardy.engines' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "ROLLS",
    "Evaluator",
    "MoveFilter",
    "RankedPlay",
    "Searcher",
    "evaluator_names",
    "make_evaluator",
    "register_evaluator",
]
