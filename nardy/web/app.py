"""The spectator's ASGI application (Starlette, server-rendered Jinja2 templates, autoescaped).

Routes (each HTML page has a JSON twin under ``/api``):

* ``/`` tournaments with status and progress;
* ``/t/{tournament}`` standings, pairings, progress, Elo plot; ``/t/{tournament}/live`` the
  server-sent events that update it (from the database, or from the arena's ``WatchTournament``);
* ``/t/{tournament}/games`` the games, filtered by bot, result, termination and fault;
* ``/t/{tournament}/g/{game}?ply=N`` one game, decision by decision (``&partial=1``: the step
  fragment the page's script swaps in);
* ``/position/{id}?variant=long`` one position.

Every endpoint does its own I/O in a worker thread (plain ``def``); templates only format.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from nardy.arena.storage import POSTGRES_SCHEMES, StorageError, redact_url
from nardy.arena.tournament import Standings
from nardy.core import load_variant
from nardy.core.errors import NardyError
from nardy.core.position import Position
from nardy.game_view import DecisionStep
from nardy.svg import Colour, board
from nardy.web.data import RESULTS, GameFilter, NotFound, Spectator, bot_names
from nardy.web.plots import elo_plot

__all__ = ["create_app"]

HERE = Path(__file__).parent
PAGE_SIZE = 100
LIVE_POLL_S = 0.5
"""How often, by default, the live stream looks at the database for new games."""

FAULT_KINDS = ("illegal", "malformed", "timeout", "crash", "disconnect", "flood")


def _num(value: float | None, fmt: str = "+.3f") -> str:
    return "–" if value is None or not math.isfinite(value) else format(value, fmt)


def _when(stamp: float | None) -> str:
    return "" if not stamp else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _game_url(tournament_id: str, game_id: str, **query: Any) -> str:
    url = f"/t/{quote(tournament_id, safe='')}/g/{quote(game_id, safe='')}"
    return url + ("?" + urlencode(query) if query else "")


def _environment() -> jinja2.Environment:
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
    env.globals["game_url"] = _game_url
    return env


def _progress(done: int, total: int) -> dict[str, Any]:
    return {
        "done": done,
        "total": total,
        "percent": 0.0 if total <= 0 else min(100.0, 100.0 * done / total),
    }


class _Views:
    """The endpoints, bound to one :class:`Spectator`."""

    def __init__(self, spectator: Spectator, arena: str | None, poll_s: float) -> None:
        self.spectator = spectator
        self.arena = arena
        self.poll_s = poll_s
        self.templates = Jinja2Templates(env=_environment())
        self._fragments: dict[str, tuple[Standings, str]] = {}
        """The live stream's last rendered standings per tournament (every viewer shares it)."""
        db = spectator.db
        # The file's name, or the URL without its password: enough to tell databases apart.
        self.db_label = redact_url(db) if db.startswith(POSTGRES_SCHEMES) else Path(db).name

    def page(
        self, request: Request, name: str, context: dict[str, Any], status: int = 200
    ) -> Response:
        return self.templates.TemplateResponse(
            request,
            name,
            {"arena": self.arena, "db": self.db_label, **context},
            status_code=status,
        )

    # -- tournaments ------------------------------------------------------------------------------

    def _tournaments(self) -> list[dict[str, Any]]:
        return [
            {
                "tournament_id": r.tournament_id,
                "name": r.name,
                "status": r.status,
                "detail": r.detail,
                "games_stored": r.games_stored,
                "units_total": r.games_total,
                "created": r.created,
                "updated": r.updated,
                "variants": sorted(
                    {
                        str(pool.get("variant", ""))
                        for pool in r.definition.get("pools", []) or []
                        if isinstance(pool, dict)
                    }
                ),
            }
            for r in self.spectator.tournaments()
        ]

    def tournaments(self, request: Request) -> Response:
        rows = self._tournaments()
        for row in rows:
            row["progress"] = _progress(row["games_stored"], row["units_total"])
        return self.page(request, "tournaments.html", {"tournaments": rows})

    def tournaments_json(self, request: Request) -> Response:
        return JSONResponse(self._tournaments())

    # -- one tournament ---------------------------------------------------------------------------

    def _standings(self, tournament_id: str) -> Standings:
        try:
            return self.spectator.standings(tournament_id)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None

    def _standings_context(self, standings: Standings) -> dict[str, Any]:
        return {
            "s": standings,
            "ppg_se": self.spectator.points_se(standings.tournament_id),
            "progress": _progress(standings.units_done, standings.units_total),
            "plots": [elo_plot(pool) for pool in standings.pools],
            "running": standings.status in ("pending", "running"),
        }

    def tournament(self, request: Request) -> Response:
        tournament_id = request.path_params["tournament"]
        standings = self._standings(tournament_id)
        return self.page(request, "tournament.html", self._standings_context(standings))

    def tournament_json(self, request: Request) -> Response:
        return JSONResponse(self._standings(request.path_params["tournament"]).to_json())

    def _live_fragment(self, tournament_id: str) -> tuple[tuple[int, str], str]:
        standings = self._standings(tournament_id)
        cached = self._fragments.get(tournament_id)
        if cached is not None and cached[0] is standings:  # the spectator's cached standings
            html = cached[1]
        else:
            template = self.templates.env.get_template("_standings.html")
            html = template.render(self._standings_context(standings))
            self._fragments[tournament_id] = (standings, html)
        return (standings.games_stored, standings.status), html

    async def live(self, request: Request) -> Response:
        """Server-sent events: the standings fragment whenever a game is stored or the status
        changes (polling the database, or woken by the arena's ``WatchTournament`` stream)."""
        tournament_id = request.path_params["tournament"]
        await run_in_threadpool(self._standings, tournament_id)  # 404 before the stream starts
        wake = asyncio.Event()
        stop_watch = self._watch_arena(tournament_id, wake) if self.arena else None

        async def events() -> AsyncIterator[str]:
            last: tuple[int, str] | None = None
            woken = False
            try:
                while not await request.is_disconnected():
                    key, html = await run_in_threadpool(self._live_fragment, tournament_id)
                    if key != last:
                        last = key
                        data = "\n".join(f"data: {line}" for line in html.splitlines())
                        yield f"event: standings\n{data}\n\n"
                        if key[1] not in ("pending", "running"):
                            yield "event: done\ndata: \n\n"
                    elif not woken:
                        # Keep-alives on the clock only: one sent when the arena's event woke
                        # us would tell the moment a game of a sealed round ended.
                        yield ": keep-alive\n\n"
                    woken = False
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), self.poll_s)
                        woken = True
                    wake.clear()
            finally:
                if stop_watch is not None:
                    stop_watch()

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def _watch_arena(self, tournament_id: str, wake: asyncio.Event) -> Callable[[], None]:
        from nardy.web.arena_watch import watch

        loop = asyncio.get_running_loop()

        def wake_up() -> None:
            loop.call_soon_threadsafe(wake.set)

        return watch(self.arena or "", tournament_id, wake_up)

    # -- games ------------------------------------------------------------------------------------

    def _filters(self, request: Request) -> GameFilter:
        q = request.query_params
        return GameFilter(
            bot=q.get("bot", ""),
            pool=q.get("pool", ""),
            result=q.get("result", "") if q.get("result", "") in RESULTS else "",
            termination=q.get("termination", ""),
            fault=q.get("fault", "") if q.get("fault", "") in ("any", *FAULT_KINDS) else "",
        )

    def _games(self, request: Request) -> dict[str, Any]:
        tournament_id = request.path_params["tournament"]
        filters = self._filters(request)
        try:
            row = self.spectator.tournament(tournament_id)
            every = self.spectator.games(tournament_id)
            games = self.spectator.filtered_games(every, tournament_id, filters)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        try:
            page = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page = 1
        pages = max(1, math.ceil(len(games) / PAGE_SIZE))
        page = min(page, pages)
        shown = games[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        query = {k: v for k, v in vars_of(filters).items() if v}
        return {
            "t": row,
            "filters": filters,
            "query": query,
            "bots": sorted({r.white for r in every} | {r.black for r in every}),
            "terminations": sorted({r.termination for r in every}),
            "pools": sorted({r.pool for r in every}),
            "results": RESULTS,
            "fault_kinds": FAULT_KINDS,
            "games": shown,
            "count": len(games),
            "total": len(every),
            "page": page,
            "pages": pages,
            "page_url": lambda n: f"?{urlencode({**query, 'page': n})}",
        }

    def games(self, request: Request) -> Response:
        return self.page(request, "games.html", self._games(request))

    def games_json(self, request: Request) -> Response:
        context = self._games(request)
        return JSONResponse(
            {
                "tournament_id": context["t"].tournament_id,
                "count": context["count"],
                "page": context["page"],
                "pages": context["pages"],
                "games": [
                    {
                        "game_id": g.game_id,
                        "pool": g.pool,
                        "white": g.white,
                        "black": g.black,
                        "winner": None if g.winner is None else ("White", "Black")[g.winner],
                        "points": g.points,
                        "termination": g.termination,
                        "finished": g.finished,
                    }
                    for g in context["games"]
                ],
            }
        )

    # -- one game ---------------------------------------------------------------------------------

    def _game(self, request: Request) -> dict[str, Any]:
        tournament_id = request.path_params["tournament"]
        game_id = request.path_params["game"]
        try:
            row, replay = self.spectator.game(tournament_id, game_id)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        steps = replay.steps
        try:
            ply = int(request.query_params.get("ply", "1"))
        except ValueError:
            ply = 1
        ply = min(max(ply, 1), len(steps))
        step = steps[ply - 1]
        names = bot_names(row.record)
        return {
            "row": row,
            "record": row.record,
            "names": {"White": names[0], "Black": names[1]},
            "steps": steps,
            "step": step,
            "ply": ply,
            "board": step.svg(replay.variant),
            "variant": replay.variant,
            "url": lambda n: _game_url(tournament_id, game_id, ply=n),
            "partial_url": lambda n: _game_url(tournament_id, game_id, partial=1, ply=n),
        }

    def game(self, request: Request) -> Response:
        context = self._game(request)
        if request.query_params.get("partial"):
            return self.page(request, "_step.html", context)
        return self.page(request, "game.html", context)

    def game_json(self, request: Request) -> Response:
        context = self._game(request)
        return JSONResponse(
            {
                "game_id": context["row"].game_id,
                "tournament_id": context["row"].tournament_id,
                "variant": context["variant"].name,
                "white": context["names"]["White"],
                "black": context["names"]["Black"],
                "result": (context["record"] or {}).get("result"),
                "steps": [_step_json(s) for s in context["steps"]],
            }
        )

    # -- a position -------------------------------------------------------------------------------

    def position(self, request: Request) -> Response:
        text = request.path_params["position"]
        variant_name = request.query_params.get("variant", "backgammon")
        flipped = request.query_params.get("side") == "opponent"
        mover: Colour = "black" if request.query_params.get("mover") == "black" else "white"
        try:
            variant = load_variant(variant_name)
            position = Position.from_id(text)
            variant.validate(position)
        except (NardyError, ValueError) as exc:
            return self.page(
                request, "error.html", {"title": "Not a position", "message": str(exc)}, 400
            )
        return self.page(
            request,
            "position.html",
            {
                "position": position,
                "variant": variant,
                "board": board(position, variant, flipped=flipped, mover=mover),
                "flipped": flipped,
                "mover": mover,
            },
        )


def vars_of(filters: GameFilter) -> dict[str, str]:
    return {
        "bot": filters.bot,
        "pool": filters.pool,
        "result": filters.result,
        "termination": filters.termination,
        "fault": filters.fault,
    }


def _step_json(step: DecisionStep) -> dict[str, Any]:
    return {
        "number": step.number,
        "kind": step.kind,
        "player": step.player,
        "position": step.position.id(),
        "white_view": step.white_view.id(),
        "cube": list(step.cube),
        "roll": None if step.roll is None else list(step.roll),
        "dice": None if step.dice is None else list(step.dice),
        "segment": step.segment,
        "choices": step.choices,
        "answer": step.answer,
        "info": step.info,
        "latency_ms": step.latency_ms,
        "fault": step.fault,
        "fallback": step.fallback,
        "before": list(step.before),
        "after": list(step.after),
        "result": step.result,
    }


def create_app(db: str, *, arena: str | None = None, poll_s: float = LIVE_POLL_S) -> Starlette:
    """The spectator for the tournament database ``db`` (a SQLite file or PostgreSQL URL);
    ``arena``: an arena server's address whose ``WatchTournament`` events wake the live pages;
    ``poll_s``: how often the live pages look at the database.

    Raises :class:`nardy.arena.storage.StorageError` when it cannot be opened."""
    spectator = Spectator(db)
    views = _Views(spectator, arena, poll_s)

    async def not_found(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return views.page(
            request, "error.html", {"title": "Not found", "message": exc.detail}, exc.status_code
        )

    async def storage_error(request: Request, exc: Exception) -> Response:
        return HTMLResponse(f"database error: {exc}", status_code=503)

    t = "/t/{tournament}"
    routes = [
        Route("/", views.tournaments),
        Route("/api/tournaments", views.tournaments_json),
        Route(t, views.tournament),
        Route(f"/api{t}", views.tournament_json),
        Route(f"{t}/live", views.live),
        Route(f"{t}/games", views.games),
        Route(f"/api{t}/games", views.games_json),
        Route(t + "/g/{game:path}", views.game),
        Route("/api" + t + "/g/{game:path}", views.game_json),
        Route("/position/{position:path}", views.position),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            spectator.close()

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found, StorageError: storage_error},
        lifespan=lifespan,
    )
    app.state.spectator = spectator
    return app
