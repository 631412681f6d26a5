"""The per-bot table of an analysis (``nardy analyze`` and ``nardy arena standings --analysis``):
one layout and one set of column names for both. Money games are counted in points per game,
match games in matches and match equity per match (:mod:`nardy.analysis.stats`): each set of
columns appears where there are such games, so a money analysis prints as it always did."""

from __future__ import annotations

import math
from collections.abc import Mapping

from rich.table import Table

from nardy.analysis.quantities import quantities
from nardy.analysis.stats import BotResult

__all__ = ["results_table"]

_COLUMNS = (
    ("bot", "left"),
    ("games", "right"),
    ("decisions", "right"),
    ("error rate", "right"),
    ("PR", "right"),
    ("??/?/?!", "right"),
)
_MONEY_COLUMNS = ("points/game", "luck/game", "luck-adjusted/game")
_MATCH_COLUMNS = ("matches", "won", "equity/match", "luck/match", "luck-adjusted/match")


def _pm(value: float, se: float) -> str:
    """``value ± se``; ``–`` for no value (no game), the value alone where no SE can be had."""
    if math.isnan(value):
        return "–"
    return f"{value:+.3f}" if math.isnan(se) else f"{value:+.3f} ± {se:.3f}"


def _mean(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.3f}"


def results_table(results: Mapping[str, BotResult], title: str) -> Table:
    """One row per bot, in the order of ``results``: games, decisions, error rate, PR, marks
    (blunders/errors/doubtful); over the money games raw points per game ± SE, luck per game and
    luck-adjusted points per game ± SE; over the match games matches played and won, match
    equity per match ± SE, its luck and luck-adjusted match equity per match ± SE."""
    table = Table(title=title, title_justify="left")
    match = [r.match for r in results.values()]
    money = any(
        r.stats.games > (m.games if m is not None else 0)
        for r, m in zip(results.values(), match, strict=True)
    )
    matches = any(m is not None for m in match)
    extra = quantities()  # registered analysis quantities, each a column after the marks
    columns = [
        *_COLUMNS,
        *((q.heading, "right") for q in extra),
        *((name, "right") for name in (_MONEY_COLUMNS if money or not matches else ())),
        *((name, "right") for name in (_MATCH_COLUMNS if matches else ())),
    ]
    for name, justify in columns:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name, result in results.items():
        stats = result.stats
        marks = stats.marks
        row = [
            name,
            str(stats.games),
            str(stats.decisions),
            f"{stats.error_rate:.4f}",
            f"{stats.pr:.1f}",
            f"{marks['blunder']}/{marks['error']}/{marks['doubtful']}",
            *(_mean(stats.quantity(q.name), q.digits) for q in extra),
        ]
        if money or not matches:
            row += [
                _pm(result.points_per_game, result.points_se),
                _signed(result.luck_per_game),
                _pm(result.adjusted_per_game, result.adjusted_se),
            ]
        if matches:
            m = result.match
            row += (
                ["0", "0", "–", "–", "–"]
                if m is None
                else [
                    str(m.matches),
                    str(m.won),
                    _pm(m.equity_per_match, m.equity_se),
                    _signed(m.luck_per_match),
                    _pm(m.adjusted_per_match, m.adjusted_se),
                ]
            )
        table.add_row(*row)
    return table
