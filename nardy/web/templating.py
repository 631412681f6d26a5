"""The pages' templates: one Jinja2 environment for the spectator's and the Play page's, with
their filters and links (a page module asks here, not the app that mounts it)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2

from nardy.analysis.quantities import quantities
from nardy.svg import legend
from nardy.web.analysis_view import EVALUATORS
from nardy.web.equity_graph import SYMBOLS

__all__ = ["TERMINATION_WORDS", "analysis_url", "game_url", "match_url", "template_environment"]

HERE = Path(__file__).parent

TERMINATION_WORDS = {
    "borne_off": "bearing off",
    "double_dropped": "double dropped",
    "time_forfeit": "time forfeit",
    "bot_failure": "bot failure",
    "aborted": "aborted",
    "mother": "mother rule",  # plakoto, RULES.md §3.12.2
    "draw": "draw",
}


def _num(value: float | None, fmt: str = "+.3f") -> str:
    return "–" if value is None or not math.isfinite(value) else format(value, fmt)


def _when(stamp: float | None) -> str:
    return "" if not stamp else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def game_url(tournament_id: str, game_id: str, **query: Any) -> str:
    """A game's page, with its query (the step shown, a partial page)."""
    url = f"/t/{quote(tournament_id, safe='')}/g/{quote(game_id, safe='')}"
    return url + ("?" + urlencode(query) if query else "")


def analysis_url(tournament_id: str, game_id: str, **query: Any) -> str:
    """A game's analysis page; the default evaluator and empty values are left out."""
    url = f"/t/{quote(tournament_id, safe='')}/a/{quote(game_id, safe='')}"
    query = {k: v for k, v in query.items() if v not in (None, "", EVALUATORS[0])}
    return url + ("?" + urlencode(query) if query else "")


def match_url(tournament_id: str, unit_id: str) -> str:
    """A match's page (its games in order)."""
    return f"/t/{quote(tournament_id, safe='')}/m/{quote(unit_id, safe='')}"


def template_environment() -> jinja2.Environment:
    """The pages' Jinja2 environment: autoescaped, strict, with the spectator's filters and links
    (the Play page's templates extend the same base)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # everything a bot sends (names, comments) is shown as text
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["when"] = _when
    env.filters["q"] = lambda s: quote(str(s), safe="")
    env.globals["game_url"] = game_url
    env.globals["match_url"] = match_url
    env.globals["analysis_url"] = analysis_url
    env.globals["board_legend"] = legend
    env.globals["mark_symbols"] = SYMBOLS
    env.globals["analysis_quantities"] = quantities  # registered ones, a column each
    env.globals["terminations_words"] = TERMINATION_WORDS
    return env
