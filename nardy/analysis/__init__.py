"""Analysis for every variant: N-ply equities of plays, errors, the luck of rolls, cube decisions
and luck-adjusted results (``docs/analysis.md``)."""

import nardy.bots._blas  # noqa: F401 - single-threaded BLAS, asked for before numpy is imported
from nardy.analysis.evaluator import (
    Evaluator,
    evaluator_names,
    make_evaluator,
    register_evaluator,
)
from nardy.analysis.search import ROLLS, MoveFilter, RankedPlay, Searcher

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
