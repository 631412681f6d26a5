"""The analysis board: any position of any single-game variant, and the engine's hint on it
(docs/play.md, "The analysis board").

* ``GET /board?variant=V&position=P&dice=65&ply=1&evaluator=E&cube_owner=O`` the page: the board,
  the editing tools, and (when a position is given) the ranked plays, the position's equity and
  the cube decision. The URL is the analysis: sharing it reproduces it.
* ``GET /api/board?…`` the same query: :meth:`nardy.analysis.hint.Hint.to_json` plus the board's
  SVG (``"svg"``); a bad query is a 400 with the reason in one line (``{"error": …}``).
* ``GET /api/board/position?variant=V&position=P&action=show|flip|start|clear`` what the page's
  editor asks after each click: the position checked by the variant's rules (``Variant.validate``),
  its id and JSON, and the board redrawn; ``flip`` swaps the sides (the other player to move),
  ``start`` and ``clear`` ignore ``position``.

The ranking is :func:`nardy.analysis.hint.hint`'s, the one ``nardy hint`` prints; this module only
reads the query and formats. Endpoints are plain ``def`` (Starlette runs them in worker threads);
at most :data:`MAX_RUNNING` hints are computed at once and ``ply`` is at most :data:`MAX_PLY`, so a
visitor cannot tie up the server's cores with deep searches.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from nardy.analysis.hint import CubeOwner, Hint, hint
from nardy.core.errors import NardyError
from nardy.core.gnubg import parse_position_text
from nardy.core.jsonl import QueryError, parse_segment
from nardy.core.options import parse_option_assignments
from nardy.core.plugins import load_variant, registry
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.svg import CubeOwner as SvgCubeOwner
from nardy.svg import board
from nardy.web.analysis_view import offered_evaluators
from nardy.web.present import BadQuery, choice_param, int_param, text_param
from nardy.web.variant_options import option_specs

__all__ = [
    "MAX_PLY",
    "MAX_RUNNING",
    "BoardQuery",
    "board_routes",
    "board_variants",
    "draft_position",
]

MAX_PLY = 2
"""The deepest search the board runs: a 2-ply ranking takes seconds, a 3-ply one minutes."""
MAX_RUNNING = 2
"""Hints computed at once (the others wait): the spectator shares its cores with the arena."""
MAX_POSITION_CHARS = 2000
"""A position id is about 30 characters and its JSON a few hundred; longer is not a position."""
CUBE_OWNERS: tuple[CubeOwner, ...] = ("centre", "mover", "opponent")
ACTIONS = ("show", "flip", "start", "clear")
DICE = tuple(f"{a}{b}" for a in range(1, 7) for b in range(1, 7))

_running = threading.BoundedSemaphore(MAX_RUNNING)


def board_variants() -> list[dict[str, Any]]:
    """The variants the board offers: every registered one that is a single game (a tavli match
    is three games, each by its own variant's rules: the board asks for one of them)."""
    out = []
    for name, info in registry().items():
        variant = load_variant(name)
        if variant.is_match_variant:
            continue
        out.append(
            {
                "name": name,
                "title": info.title,
                "cube": variant.rules.cube.available,
                "checkers": variant.checkers,
                "bar": variant.rules.hitting.hits,
                "pins": variant.rules.hitting.pins,
                "options": option_specs(info),
            }
        )
    return out


def _options(query: Mapping[str, str]) -> dict[str, str]:
    """``?options=name=value,name=value`` (the variant's options, ``nardy variants``; absent:
    the defaults), as the command line's ``-o name=value`` reads them."""
    text = text_param(query, "options")
    if not text.strip():
        return {}
    try:
        return parse_option_assignments([item for item in text.split(",") if item.strip()])
    except NardyError as error:
        raise BadQuery(f"?options= {error}") from None


def _variant(query: Mapping[str, str]) -> Variant:
    names = list(registry())
    name = choice_param(query, "variant", ["", *names]) or "backgammon"
    options = _options(query)
    if "match_length" in options:
        raise BadQuery("?options= match_length is a match's: the board analyses one game")
    try:
        variant = load_variant(name, options)
    except NardyError as error:
        raise BadQuery(f"?options= {error}") from None
    if variant.is_match_variant:
        cycle = " → ".join(variant.info.cycle)
        raise BadQuery(
            f"{name} is a match of {cycle}, each game by its own variant's rules: "
            f"choose one of those variants (?variant={variant.info.cycle[0]})"
        )
    return variant


def _position(query: Mapping[str, str], variant: Variant) -> Position | None:
    text = query.get("position", "")
    if not text.strip():
        return None
    if len(text) > MAX_POSITION_CHARS:
        raise BadQuery(f"?position= is longer than {MAX_POSITION_CHARS} characters")
    try:
        return parse_position_text(text, variant)
    except ValueError as error:
        raise BadQuery(f"not a {variant.name} position: {error}") from None


@dataclass(frozen=True, slots=True)
class BoardQuery:
    """One analysis board query, read strictly (a value the board does not know is a 400)."""

    variant: Variant
    position: Position | None
    """None: no position given (the page shows the starting one, without analysis)."""
    dice: tuple[int, int] | None
    ply: int
    evaluator: str
    cube_owner: CubeOwner

    @classmethod
    def read(cls, query: Mapping[str, str]) -> BoardQuery:
        variant = _variant(query)
        position = _position(query, variant)
        if query.get("dice", "") not in ("", *DICE):
            raise BadQuery(f"?dice= must be two dice 1-6 such as 65, not {query['dice']!r}")
        dice_text = choice_param(query, "dice", ("", *DICE))
        dice = (int(dice_text[0]), int(dice_text[1])) if dice_text else None
        ply = int_param(query, "ply", 0, 0, MAX_PLY)
        evaluators = ("", *offered_evaluators(), "heuristic")
        evaluator = choice_param(query, "evaluator", evaluators) or evaluators[1]
        owner = choice_param(query, "cube_owner", ("", *CUBE_OWNERS)) or "centre"
        return cls(variant, position, dice, ply, evaluator, CUBE_OWNERS[CUBE_OWNERS.index(owner)])

    def url(self, position: Position) -> str:
        """The page's shareable URL for this query about ``position``."""
        query: dict[str, Any] = {"variant": self.variant.name, "position": position.id()}
        options = option_text(self.variant)
        if options:
            query["options"] = options
        if self.dice is not None:
            query["dice"] = f"{self.dice[0]}{self.dice[1]}"
        query["ply"] = self.ply
        query["evaluator"] = self.evaluator
        if self.variant.rules.cube.available and self.cube_owner != "centre":
            query["cube_owner"] = self.cube_owner
        return "/board?" + urlencode(query)

    def hint(self, position: Position) -> Hint:
        """:func:`nardy.analysis.hint.hint` on ``position``; :class:`BadQuery` with the kernel's
        reason where it refuses (the game is over, an evaluator without a net for the variant)."""
        steps = None
        if self.dice is not None:
            try:
                steps = parse_segment({"dice": list(self.dice)})
            except QueryError as error:  # not expected of two dice 1-6; said, not a traceback
                raise BadQuery(str(error)) from None
        with _running:
            try:
                return hint(
                    self.variant,
                    position,
                    dice=steps,
                    ply=self.ply,
                    evaluator=self.evaluator,
                    cube_owner=self.cube_owner,
                )
            except (ValueError, NardyError) as error:
                raise BadQuery(" ".join(str(error).split())) from None


def option_text(variant: Variant) -> str:
    """The variant's options that differ from their defaults, as ``?options=`` writes them."""
    defaults = {o.name: o.default for o in variant.info.options}
    changed = [
        f"{name}={'true' if value is True else 'false' if value is False else value}"
        for name, value in sorted(variant.options.items())
        if name in defaults and value != defaults[name]
    ]
    return ",".join(changed)


def board_svg(variant: Variant, position: Position, query: BoardQuery | None = None) -> str:
    """The board seen from the mover (White), numbered in his coordinates: the editor's clicks
    name the points of the position's JSON (``points[p - 1]``)."""
    dice = query.dice if query is not None else None
    cube: tuple[int, SvgCubeOwner] | None = None
    if variant.rules.cube.available:
        owner = "centre" if query is None else query.cube_owner
        cube = (1, None if owner == "centre" else owner)
    return str(board(position, variant, dice=dice, cube=cube, pips=True))


def _editor_json(variant: Variant, position: Position, problem: str = "") -> dict[str, Any]:
    return {
        "variant": variant.name,
        "options": option_text(variant),
        "cube": variant.rules.cube.available,
        "id": position.id(),
        "position": position.to_json(),
        "svg": board_svg(variant, position),
        "problem": problem,
    }


def _counts(value: Any, size: int, high: int) -> tuple[int, ...] | None:
    if not isinstance(value, list) or len(value) != size:
        return None
    if not all(
        isinstance(v, int) and not isinstance(v, bool) and -high <= v <= high for v in value
    ):
        return None
    return tuple(value)


def _left(variant: Variant, position: Position, side: int) -> int:
    """How many of ``side``'s checkers a draft has still to place (none in a legal position)."""
    sign = 1 if side == 0 else -1
    on_board = sum(c * sign for c in position.points if c * sign > 0)
    on_board += position.pinned_counts[side]
    return variant.checkers - on_board - position.bar[side] - position.off[side]


def draft_position(variant: Variant, text: str) -> tuple[Position, str]:
    """The position ``text`` (:func:`parse_position_text`) and ``""``, or, for position JSON the
    variant refuses but that can be drawn (24 points, bar and tray, at most N checkers a side),
    the draft as it is and the variant's reason.

    A position being set up is rarely legal between clicks: a side has fewer than N checkers
    until the last is placed, and in long nardy a side with borne-off checkers may have none
    outside home, so there is no legal place to put a checker taken off the board. The editor
    draws the draft and says what is wrong; the engine is asked only about a legal position
    (:class:`BoardQuery` parses strictly). Raises :class:`BadQuery` for anything else."""
    try:
        return parse_position_text(text, variant), ""
    except ValueError as error:
        reason = f"not yet a legal {variant.name} position: {error}"
        try:
            obj = json.loads(text) if text.strip().startswith("{") else None
        except (ValueError, RecursionError):
            obj = None
        n = variant.checkers
        if not isinstance(obj, dict) or set(obj) - {"points", "bar", "off", "pinned"}:
            raise BadQuery(f"not a {variant.name} position: {error}") from None
        points = _counts(obj.get("points"), 24, n)
        bar = _counts(obj.get("bar", [0, 0]), 2, n)
        off = _counts(obj.get("off", [0, 0]), 2, n)
        pinned = obj.get("pinned", [])
        if points is None or bar is None or off is None or not _pins_drawable(pinned, points):
            raise BadQuery(f"not a {variant.name} position: {error}") from None
        if pinned and not variant.rules.hitting.pins:
            raise BadQuery(
                f"{variant.name} pins no checker: 'pinned' is plakoto's (§3.12.2)"
            ) from None
        # A pinned checker is the other side's than its point's stack (core.position).
        mover = sum(p for p in points if p > 0) + bar[0] + off[0]
        mover += sum(1 for p in pinned if points[p - 1] < 0)
        opponent = -sum(p for p in points if p < 0) + bar[1] + off[1]
        opponent += sum(1 for p in pinned if points[p - 1] > 0)
        if min(bar + off) < 0 or mover > n or opponent > n:
            raise BadQuery(f"not a {variant.name} position: {error}") from None
        position = Position(points, (bar[0], bar[1]), (off[0], off[1]), tuple(sorted(pinned)))
        return position, reason


def _pins_drawable(pinned: Any, points: tuple[int, ...] | None) -> bool:
    """A draft's pinned points: distinct points 1-24, each under a stack (a checker pinned
    beneath nothing cannot be drawn)."""
    if not isinstance(pinned, list) or points is None:
        return False
    if not all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= 24 for p in pinned):
        return False
    return len(set(pinned)) == len(pinned) and all(points[p - 1] != 0 for p in pinned)


class _Query(dict[str, str]):
    """A query without one of its parameters, keeping :func:`present._one`'s check that none is
    given twice (``getlist`` of the original query)."""

    def __init__(self, items: Mapping[str, str], original: Any) -> None:
        super().__init__(items)
        self._original = original

    def getlist(self, name: str) -> list[str]:
        return list(self._original.getlist(name))


class _BoardViews:
    def __init__(self, templates: Jinja2Templates, context: dict[str, Any]) -> None:
        self.templates = templates
        self.context = context

    def page(self, request: Request) -> Response:
        """The page; a position the variant refuses, or one the engine cannot answer about (a
        finished game), is shown as the page with the reason beside the board (status 400), so
        the visitor can mend it; any other bad parameter is the spectator's error page."""
        params = request.query_params
        error = ""
        pasted = params.get("position", "")
        try:
            query = BoardQuery.read(params)
        except BadQuery as refused:
            without = {k: v for k, v in params.multi_items() if k != "position"}
            query = BoardQuery.read(_Query(without, params))  # raises if the rest is bad too
            error = str(refused)
        position = query.position
        draft = None
        if error and pasted.strip() and len(pasted) <= MAX_POSITION_CHARS:
            with contextlib.suppress(BadQuery):
                draft = draft_position(query.variant, pasted)[0]  # drawn as it is, with the reason
        found = None
        if position is not None:
            try:
                found = query.hint(position)
            except BadQuery as refused:
                error = str(refused)
        shown = position or draft or query.variant.start_position()
        context = {
            **self.context,
            "variants": board_variants(),
            "q": query,
            "position": shown,
            "position_text": pasted if error and position is None else shown.id(),
            "position_json": shown.to_json(),
            "left": [_left(query.variant, shown, side) for side in (0, 1)],
            "svg": board_svg(query.variant, shown, query),
            "hint": None if found is None else found.to_json(),
            "share": None if found is None or position is None else query.url(position),
            "error": error,
            "options": dict(query.variant.options),
            "options_text": option_text(query.variant),
            "evaluators": (*offered_evaluators(), "heuristic"),
            "cube_owners": CUBE_OWNERS,
            "max_ply": MAX_PLY,
        }
        return self.templates.TemplateResponse(
            request, "board.html", context, status_code=400 if error else 200
        )

    def api(self, request: Request) -> Response:
        query = BoardQuery.read(request.query_params)
        if query.position is None:
            raise BadQuery("?position= is required: a nardy position id, position JSON or gnubg ID")
        found = query.hint(query.position)
        return JSONResponse(
            {
                **found.to_json(),
                "url": query.url(query.position),
                "svg": board_svg(query.variant, query.position, query),
            }
        )

    def position(self, request: Request) -> Response:
        q = request.query_params
        variant = _variant(q)
        action = choice_param(q, "action", ("", *ACTIONS)) or "show"
        if action == "start":
            return JSONResponse(_editor_json(variant, variant.start_position()))
        if action == "clear":
            empty = json.dumps({"points": [0] * 24, "bar": [0, 0], "off": [0, 0]})
            return JSONResponse(_editor_json(variant, *draft_position(variant, empty)))
        text = q.get("position", "")
        if not text.strip():
            raise BadQuery("?position= is required")
        if len(text) > MAX_POSITION_CHARS:
            raise BadQuery(f"?position= is longer than {MAX_POSITION_CHARS} characters")
        position, problem = draft_position(variant, text)
        if action == "flip":
            position = variant.flip(position)  # a legal position's flip is legal
        return JSONResponse(_editor_json(variant, position, problem))


def board_routes(templates: Jinja2Templates, context: dict[str, Any]) -> list[BaseRoute]:
    """The analysis board's routes; ``templates``: the spectator's (the page extends its base),
    ``context``: what its base template needs (the database's label, the arena)."""
    views = _BoardViews(templates, context)
    return [
        Route("/board", views.page),
        Route("/api/board", views.api),
        Route("/api/board/position", views.position),
    ]
