"""Analysis for every variant: N-ply equities of plays, errors, the luck of rolls, cube decisions
and luck-adjusted results (``docs/analysis.md``)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nardy.analysis.evaluator import (
        Evaluator,
        evaluator_names,
        make_evaluator,
        register_evaluator,
    )
    from nardy.analysis.search import ROLLS, MoveFilter, RankedPlay, Searcher

# The names below load on first use (PEP 562): numpy comes with them, so importing a light part
# of the package (the `nardy analyze` command, the record readers) needs no numpy.
_LAZY = {
    "Evaluator": "nardy.analysis.evaluator",
    "evaluator_names": "nardy.analysis.evaluator",
    "make_evaluator": "nardy.analysis.evaluator",
    "register_evaluator": "nardy.analysis.evaluator",
    "ROLLS": "nardy.analysis.search",
    "MoveFilter": "nardy.analysis.search",
    "RankedPlay": "nardy.analysis.search",
    "Searcher": "nardy.analysis.search",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nardy.analysis' has no attribute {name!r}")
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
