"""The per-bot table of an analysis (``nardy analyze`` and ``nardy arena standings --analysis``):
one layout and one set of column names for both."""

from __future__ import annotations

import math
from collections.abc import Mapping

from rich.table import Table

from nardy.analysis.stats import BotResult

__all__ = ["results_table"]

_COLUMNS = (
    ("bot", "left"),
    ("games", "right"),
    ("decisions", "right"),
    ("error rate", "right"),
    ("PR", "right"),
    ("??/?/?!", "right"),
    ("points/game", "right"),
    ("luck/game", "right"),
    ("luck-adjusted/game", "right"),
)


def _pm(value: float, se: float) -> str:
    """``value ± se``; ``–`` for no value (no game), the value alone where no SE can be had."""
    if math.isnan(value):
        return "–"
    return f"{value:+.3f}" if math.isnan(se) else f"{value:+.3f} ± {se:.3f}"


def results_table(results: Mapping[str, BotResult], title: str) -> Table:
    """One row per bot, in the order of ``results``: games, decisions, error rate, PR, marks
    (blunders/errors/doubtful), raw points per game ± SE, luck per game and luck-adjusted points
    per game ± SE."""
    table = Table(title=title, title_justify="left")
    for name, justify in _COLUMNS:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name, result in results.items():
        stats = result.stats
        marks = stats.marks
        table.add_row(
            name,
            str(stats.games),
            str(stats.decisions),
            f"{stats.error_rate:.4f}",
            f"{stats.pr:.1f}",
            f"{marks['blunder']}/{marks['error']}/{marks['doubtful']}",
            _pm(result.points_per_game, result.points_se),
            f"{result.luck_per_game:+.3f}",
            _pm(result.adjusted_per_game, result.adjusted_se),
        )
    return table
