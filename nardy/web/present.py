"""What the pages show, computed from what the data layer gives: strict query parameters, pool
tables (games or matches), a match's running score, each decision in words."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from nardy.arena.competition.standings import PoolStandings
from nardy.arena.records.rows import progress_unit
from nardy.arena.records.storage import GameRow
from nardy.arena.records.verify import cached_variant
from nardy.core import load_variant
from nardy.core.errors import NardyError
from nardy.game_view import DecisionStep
from nardy.words import cube_action, result_words

__all__ = [
    "BadQuery",
    "choice_param",
    "int_param",
    "match_view",
    "pool_view",
    "progress_unit",
    "step_words",
    "text_param",
]


class BadQuery(ValueError):
    """A query parameter the page does not accept (HTTP 400)."""


def _one(query: Mapping[str, str], name: str) -> str | None:
    if name not in query:
        return None
    values = query.getlist(name) if hasattr(query, "getlist") else [query[name]]
    if len(values) > 1:
        raise BadQuery(f"?{name}= is given {len(values)} times")
    return values[0]


def text_param(query: Mapping[str, str], name: str) -> str:
    """``?name=`` as given (``""`` when absent); :class:`BadQuery` when given twice."""
    return _one(query, name) or ""


def int_param(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """``?name=N`` with ``low ≤ N ≤ high`` (``default`` when absent); :class:`BadQuery` else."""
    text = _one(query, name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise BadQuery(f"?{name}= must be a whole number from {low} to {high}, not {text!r}")
    return int(text)


def choice_param(query: Mapping[str, str], name: str, choices: Sequence[str]) -> str:
    """``?name=`` one of ``choices`` (``""`` when absent; allowed if ``""`` is a choice)."""
    text = _one(query, name)
    if text is None:
        text = ""
    if text not in choices:
        shown = ", ".join(repr(c) for c in choices if c)
        raise BadQuery(f"?{name}= must be one of {shown}, not {text!r}")
    return text


def _binomial_se(wins: int, losses: int) -> tuple[float | None, float | None]:
    n = wins + losses
    if n == 0:
        return None, None
    p = wins / n
    return p, math.sqrt(p * (1 - p) / n) if n >= 2 else None


def pool_view(pool: PoolStandings, ppg_se: Mapping[tuple[str, str], float]) -> dict[str, Any]:
    """A pool's table rows: for a match pool the units are matches (won, lost, win rate ± SE)
    and the games and points are counted apart; for a money pool the units are games."""
    rows = []
    for b in pool.bots:
        rate, rate_se = _binomial_se(b.wins, b.losses)
        rows.append(
            {
                "b": b,
                "win_rate": rate,
                "win_rate_se": rate_se,
                "ppg_se": ppg_se.get((pool.label, b.bot)),
            }
        )
    drawn = _can_draw(pool) or any(b.draws for b in pool.bots)
    return {"pool": pool, "match": bool(pool.match_length), "rows": rows, "drawn": drawn}


def _can_draw(pool: PoolStandings) -> bool:
    """Whether a game of the pool can end drawn: only plakoto's double mother pin can (RULES.md
    §2.6, ``mother: standard``), in a match variant's games too. The other pools get no Drawn
    column: it would be 0 for good, and widen the table past its Elo column."""
    try:
        variant = cached_variant(pool.variant, pool.options)
        games = [cached_variant(name, {}) for name in variant.info.cycle] or [variant]
    except NardyError:  # a variant whose plugin is not installed here
        return False
    return any(g.rules.hitting.pins and g.rules.game_end.mother == "standard" for g in games)


def step_words(step: DecisionStep) -> str:
    """A decision in one line: ``roll 6-5: 24/18 13/8``, ``White doubles to 4``, …"""
    if step.kind == "end":
        return "end"
    if step.kind == "play":
        answer = "—" if step.answer is None else step.shown or step.answer or "(no move)"
        return f"{step.segment}: {answer}"
    return cube_action(step.kind, step.answer, step.player, step.cube[0], step.offered)


def match_view(
    games: Sequence[GameRow],
    records: Mapping[str, Mapping[str, Any] | None],
    names: Mapping[str, str],
    *,
    pool_variant: str | None = None,
) -> dict[str, Any]:
    """One match's games in order, each with its variant, its result in words and the score after
    it. ``pool_variant``: the pool's variant, which a match variant's games (tavli, RULES.md
    §3.12.3: portes → plakoto → fevga) do not name; its cycle is then shown too."""
    first = games[0]
    a, b = first.a, first.b
    score = {a: 0, b: 0}
    length = 0
    variant_name = ""
    rows = []
    winner = None
    for g in games:
        record = records.get(g.game_id) or {}
        setup = (record.get("setup") or {}).get("match") or {}
        length = int(setup.get("length") or length or 0)
        variant_name = str(record.get("variant") or variant_name)
        seat_names = {"White": names.get(g.white, g.white), "Black": names.get(g.black, g.black)}
        words = ""
        try:
            variant = load_variant(record["variant"], record.get("options") or {})
            cube = int(((record.get("game") or {}).get("result") or {}).get("cube") or 1)
            words = result_words(record.get("result"), variant, cube=cube, names=seat_names)
        except (KeyError, TypeError, ValueError, NardyError):
            words = "(the record cannot be read)"
        if g.winner is not None:
            score[g.white if g.winner == 0 else g.black] += g.points
        if length and winner is None and max(score.values()) >= length:
            winner = max(score, key=lambda k: score[k])
        rows.append(
            {
                "row": g,
                "game_id": g.game_id,
                "game_no": g.game_no,
                "variant": str(record.get("variant") or ""),
                "white": g.white,
                "black": g.black,
                "white_name": seat_names["White"],
                "black_name": seat_names["Black"],
                "crawford": bool(setup.get("crawford")),
                "points": g.points,
                "winner": None if g.winner is None else ("White", "Black")[g.winner],
                "result": words,
                "score_after": [score[a], score[b]],
            }
        )
    cycle: list[str] = []
    if pool_variant:
        try:
            cycle = list(load_variant(pool_variant).info.cycle)
        except NardyError:  # a variant this installation lacks: the games still name theirs
            cycle = []
        variant_name = pool_variant
    return {
        "unit_id": first.unit_id,
        "pool": first.pool,
        "variant": variant_name,
        "cycle": cycle,
        "length": length,
        "bots": [a, b],
        "bot_names": [names.get(a, a), names.get(b, b)],
        "score": [score[a], score[b]],
        "winner": winner,
        "games": rows,
    }
