"""The spectator's ASGI application (Starlette, server-rendered Jinja2 templates, autoescaped).

Routes (each HTML page has a JSON twin under ``/api``):

* ``/`` tournaments with status and progress;
* ``/t/{tournament}`` standings, pairings, progress, Elo plot; ``/t/{tournament}/live`` the
  server-sent events that update it (from the database, or from the arena's ``WatchTournament``);
* ``/t/{tournament}/games`` the games, filtered by bot, result, termination and fault;
* ``/t/{tournament}/m/{match}`` the games of one match with the running score;
* ``/t/{tournament}/g/{game}?ply=N`` one game, decision by decision (``&partial=1``: the step
  fragment the page's script swaps in);
* ``/t/{tournament}/analysis?evaluator=E`` each bot's error rate and luck-adjusted points per
  game (analysed in the background, :mod:`nardy.web.tournament_analysis`);
* ``/t/{tournament}/a/{game}?d=N&evaluator=E`` a game's analysis: the equity graph, each decision's
  error, the best play beside the one made, the luck of each roll (:mod:`nardy.web.analysis_view`);
  ``&rollout=1`` rolls the decision out (kept, and shown with it from then on);
* ``/position/{id}?variant=long`` one position.

Every endpoint does its own I/O in a worker thread (plain ``def``); templates only format.
Bots are shown by name (:mod:`nardy.web.names`), ids stay in URLs and JSON. Query parameters
are strict: a value the page does not know is a 400, not silently clamped or ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import h11
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from uvicorn.protocols.http.h11_impl import H11Protocol

from nardy.arena.competition.standings import Standings
from nardy.arena.records.rows import tournament_json
from nardy.arena.records.storage import POSTGRES_SCHEMES, StorageError, redact_url
from nardy.core import load_variant
from nardy.core.errors import NardyError
from nardy.core.position import Position
from nardy.engines.evaluator import judges_itself
from nardy.game_view import DecisionStep
from nardy.svg import Colour, board
from nardy.web.analysis_view import (
    EVALUATORS,
    Analyst,
    NoAnalysis,
    analysis_page,
    decision_at,
    decision_steps,
    offered_evaluators,
    with_rollout,
)
from nardy.web.arena_bots import ArenaBots
from nardy.web.arena_watch import ArenaWatch
from nardy.web.board import board_routes
from nardy.web.data import RESULTS, GameFilter, NotFound, Spectator, bot_names
from nardy.web.equity_graph import white_equity
from nardy.web.names import BotNames
from nardy.web.play import play_routes
from nardy.web.plots import elo_plot
from nardy.web.present import (
    BadQuery,
    choice_param,
    int_param,
    match_view,
    pool_view,
    step_words,
)
from nardy.web.templating import (
    TERMINATION_WORDS,
    analysis_url,
    game_url,
    template_environment,
)
from nardy.web.tournament_analysis import TournamentAnalyses
from nardy.words import result_words

__all__ = ["create_app", "serve"]

HERE = Path(__file__).parent
PAGE_SIZE = 100
LIVE_POLL_S = 0.5
"""How often, by default, the live stream looks at the database for new games."""
KEEP_ALIVE_S = 15.0
"""A live stream with nothing new sends a comment this often, so that proxies keep it open.
A visitor who left is noticed at once (the server reports the disconnect), not at the next."""

FAULT_KINDS = ("illegal", "malformed", "timeout", "crash", "disconnect", "flood")

log = logging.getLogger("nardy.web")


def _progress(done: int, total: int, unit: str = "") -> dict[str, Any]:
    return {
        "done": done,
        "total": total,
        "unit": unit,
        "percent": 0.0 if total <= 0 else min(100.0, 100.0 * done / total),
    }


class _Views:
    """The endpoints, bound to one :class:`Spectator`."""

    def __init__(self, spectator: Spectator, arena: str | None, poll_s: float) -> None:
        self.spectator = spectator
        self.arena = arena
        self.poll_s = poll_s
        self.templates = Jinja2Templates(env=template_environment())
        self._fragments: dict[str, tuple[Standings, str]] = {}
        """The live stream's last rendered standings per tournament (every viewer shares it)."""
        self._feeds: dict[str, _LiveFeed] = {}
        """The live feed of each tournament with visitors (:meth:`live`)."""
        self.arena_watch = None if arena is None else ArenaWatch(arena)
        """The arena's ``WatchTournament`` streams: one per tournament, over one channel."""
        self.names = BotNames()
        db = spectator.db
        # The file's name, or the URL without its password: enough to tell databases apart.
        self.db_label = redact_url(db) if db.startswith(POSTGRES_SCHEMES) else Path(db).name
        self.analyst = Analyst()
        """Analyses of games, made on demand and cached (:mod:`nardy.web.analysis_view`)."""
        self.tournament_analyses = TournamentAnalyses(self.analyst)

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
        return [tournament_json(r) for r in self.spectator.tournaments()]

    def tournaments(self, request: Request) -> Response:
        rows = self._tournaments()
        for row in rows:
            unit = row["unit"]
            done = row["games_stored"]
            if unit != "games":  # a match counts once decided: ask the standings
                try:
                    done = self.spectator.standings(row["tournament_id"]).units_done
                except (NotFound, StorageError):
                    done = 0
            row["progress"] = _progress(done, row["units_total"], unit)
        return self.page(request, "tournaments.html", {"tournaments": rows})

    def tournaments_json(self, request: Request) -> Response:
        return JSONResponse(self._tournaments())

    # -- one tournament ---------------------------------------------------------------------------

    def _standings(self, tournament_id: str) -> Standings:
        try:
            return self.spectator.standings(tournament_id)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None

    def _names(self, tournament_id: str, bots: Any) -> dict[str, str]:
        """``bot_id -> the name to show`` (see :mod:`nardy.web.names`)."""
        try:
            sealed = self.spectator.view(tournament_id).sealed
        except NotFound:
            sealed = frozenset()
        return self.names.of(self.spectator.store, tournament_id, bots, sealed)

    def _standings_context(self, standings: Standings) -> dict[str, Any]:
        bots = [b.bot for pool in standings.pools for b in pool.bots]
        names = self._names(standings.tournament_id, bots)
        ppg_se = self.spectator.points_se(standings.tournament_id)
        kinds = {bool(pool.match_length) for pool in standings.pools}
        unit = (
            "matches" if kinds == {True} else "games" if kinds == {False} else "games and matches"
        )
        return {
            "s": standings,
            "names": names,
            "pools": [pool_view(pool, ppg_se) for pool in standings.pools],
            "progress": _progress(standings.units_done, standings.units_total, unit),
            "plots": [elo_plot(pool, names) for pool in standings.pools],
            "running": standings.status in ("pending", "running"),
        }

    def tournament(self, request: Request) -> Response:
        tournament_id = request.path_params["tournament"]
        standings = self._standings(tournament_id)
        return self.page(request, "tournament.html", self._standings_context(standings))

    def tournament_json(self, request: Request) -> Response:
        standings = self._standings(request.path_params["tournament"])
        bots = [b.bot for pool in standings.pools for b in pool.bots]
        return JSONResponse(
            {**standings.to_json(), "names": self._names(standings.tournament_id, bots)}
        )

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
        changes, then ``done`` and the end of the stream once the tournament is over. Every
        visitor of a tournament reads the same :class:`_LiveFeed` (one database poll, one arena
        stream, whatever the number of visitors)."""
        tournament_id = request.path_params["tournament"]
        await run_in_threadpool(self._standings, tournament_id)  # 404 before the stream starts
        feed = self._feed(tournament_id)
        visitor = feed.join()

        async def events() -> AsyncIterator[str]:
            seen = 0
            try:
                while True:
                    if feed.version != seen:
                        # The latest fragment only: a visitor who fell behind skips the ones
                        # in between (they are whole standings, each replacing the last).
                        seen = feed.version
                        data = "\n".join(f"data: {line}" for line in feed.html.splitlines())
                        yield f"event: standings\n{data}\n\n"
                    if feed.done:
                        yield "event: done\ndata: \n\n"
                        return  # the stream ends: nothing more will change (issue 34, 6b)
                    if feed.failed:
                        return  # the browser's EventSource opens the stream again
                    try:
                        await asyncio.wait_for(visitor.wait(), KEEP_ALIVE_S)
                    except TimeoutError:
                        # Keep-alives on the visitor's own clock only: one sent when the
                        # arena's event woke the feed would tell the moment a game of a sealed
                        # round ended.
                        yield ": keep-alive\n\n"
                    visitor.clear()
            finally:
                feed.leave(visitor)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def _feed(self, tournament_id: str) -> _LiveFeed:
        feed = self._feeds.get(tournament_id)
        if feed is None or feed.ended:
            feed = _LiveFeed(self, tournament_id)
            self._feeds[tournament_id] = feed
        return feed

    def close(self) -> None:
        if self.arena_watch is not None:
            self.arena_watch.close()

    # -- games ------------------------------------------------------------------------------------

    def _filters(self, request: Request) -> GameFilter:
        q = request.query_params
        return GameFilter(
            bot=q.get("bot", ""),
            pool=q.get("pool", ""),
            result=choice_param(q, "result", ("", *RESULTS)),
            termination=q.get("termination", ""),
            fault=choice_param(q, "fault", ("", "any", *FAULT_KINDS)),
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
        _check_filters(filters, row.definition, every)
        pages = max(1, math.ceil(len(games) / PAGE_SIZE))
        page = int_param(request.query_params, "page", 1, 1, pages)
        shown = games[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        query = {k: v for k, v in vars_of(filters).items() if v}
        bots = sorted({r.white for r in every} | {r.black for r in every})
        names = self._names(tournament_id, bots)
        variants, pool_variants = self._game_variants(tournament_id, row.definition, shown)
        return {
            "variants": variants,
            "pool_variants": pool_variants,
            "t": row,
            "filters": filters,
            "query": query,
            "names": names,
            "bots": sorted(bots, key=lambda b: (names[b].casefold(), b)),
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

    def _game_variants(
        self, tournament_id: str, definition: Mapping[str, Any] | None, rows: list[Any]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """``game_id -> variant`` of the rows shown that are games of a match variant's pool
        (tavli, RULES.md §3.12.3: portes, plakoto, fevga in turn), from each game's record,
        since the pool's name does not say which of them it is; and ``pool -> variant``."""
        pools: dict[str, str] = {}
        cycled: set[str] = set()
        for pool in (definition or {}).get("pools", []) or []:
            if isinstance(pool, dict) and isinstance(pool.get("variant"), str):
                pools[str(pool.get("label"))] = pool["variant"]
                try:
                    if load_variant(pool["variant"]).info.cycle:
                        cycled.add(str(pool.get("label")))
                except NardyError:
                    pass
        out: dict[str, str] = {}
        for g in rows:
            if g.pool in cycled:
                try:
                    record = self.spectator.store.find_game(g.game_id, tournament_id).record
                except StorageError:
                    record = None
                out[g.game_id] = str((record or {}).get("variant") or pools[g.pool])
        return out, pools

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
                        "match_id": g.unit_id,
                        "pool": g.pool,
                        "variant": context["variants"].get(g.game_id)
                        or context["pool_variants"].get(g.pool),
                        "white": g.white,
                        "black": g.black,
                        "white_name": context["names"].get(g.white, g.white),
                        "black_name": context["names"].get(g.black, g.black),
                        "winner": None if g.winner is None else ("White", "Black")[g.winner],
                        "points": g.points,
                        "termination": g.termination,
                        "finished": g.finished,
                    }
                    for g in context["games"]
                ],
            }
        )

    # -- one match --------------------------------------------------------------------------------

    def _match(self, request: Request) -> dict[str, Any]:
        tournament_id = request.path_params["tournament"]
        unit_id = request.path_params["match"]
        try:
            row = self.spectator.tournament(tournament_id)
            games = [g for g in self.spectator.games(tournament_id) if g.unit_id == unit_id]
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        if not games:
            raise HTTPException(404, f"no stored game of match {unit_id!r}")
        games.sort(key=lambda g: g.game_no)
        records = {}
        for g in games:  # a match has a handful of games: their records give the words
            try:
                records[g.game_id] = self.spectator.store.find_game(g.game_id, tournament_id).record
            except StorageError:
                records[g.game_id] = None
        names = self._names(tournament_id, [games[0].a, games[0].b])
        pools = (row.definition or {}).get("pools", []) or []
        played = next(
            (
                p.get("variant")
                for p in pools
                if isinstance(p, dict) and p.get("label") == games[0].pool
            ),
            None,
        )
        return {"t": row, **match_view(games, records, names, pool_variant=played)}

    def match(self, request: Request) -> Response:
        return self.page(request, "match.html", self._match(request))

    def match_json(self, request: Request) -> Response:
        context = self._match(request)
        return JSONResponse(
            {
                "tournament_id": context["t"].tournament_id,
                "match_id": context["unit_id"],
                "pool": context["pool"],
                "variant": context["variant"],
                "cycle": context["cycle"],
                "length": context["length"],
                "bots": context["bots"],
                "names": context["bot_names"],
                "score": context["score"],
                "winner": context["winner"],
                "games": [
                    {k: v for k, v in game.items() if k != "row"} for game in context["games"]
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
        ply = int_param(request.query_params, "ply", 1, 1, len(steps))
        choice_param(request.query_params, "partial", ("", "1"))
        step = steps[ply - 1]
        names = self._seat_names(tournament_id, row)
        result = (row.record or {}).get("result")
        tournament = self.spectator.tournament(tournament_id)
        return {
            "row": row,
            "t": tournament,
            "record": row.record,
            "names": names,
            "steps": steps,
            "step": step,
            "ply": ply,
            "words": [step_words(s) for s in steps],
            "match": replay.match,
            "result_text": result_words(
                result, replay.variant, cube=steps[-1].cube[0], names=names
            ),
            "board": step.svg(
                replay.variant, names=(names["White"], names["Black"]), match=replay.match
            ),
            "variant": replay.variant,
            "url": lambda n: game_url(tournament_id, game_id, ply=n),
            "partial_url": lambda n: game_url(tournament_id, game_id, partial=1, ply=n),
        }

    def _seat_names(self, tournament_id: str, row: Any) -> dict[str, str]:
        """``{"White": name, "Black": name}``: the name the bot gave itself in this game (a
        remote bot's BotInfo), else its id's."""
        seated = bot_names(row.record)
        ids = self._names(tournament_id, [row.white, row.black])
        return {
            "White": seated[0] or ids.get(row.white, row.white),
            "Black": seated[1] or ids.get(row.black, row.black),
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
                "result_text": context["result_text"],
                "steps": [_step_json(s) for s in context["steps"]],
            }
        )

    # -- a game's analysis ------------------------------------------------------------------------

    def _analysis(self, request: Request) -> dict[str, Any]:
        tournament_id = request.path_params["tournament"]
        game_id = request.path_params["game"]
        q = request.query_params
        evaluator = choice_param(q, "evaluator", ("", *offered_evaluators())) or EVALUATORS[0]
        try:
            # The game page's own access: a game it does not show is not analysed either.
            row, replay = self.spectator.game(tournament_id, game_id)
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None
        analysis = self.analyst.analyse(tournament_id, game_id, row.record or {}, evaluator)
        # One numbering with the game page: ?ply=N is the decision at its step N; ?d=N (the
        # analysis's own count, forced plays included) still opens, and names a forced play.
        plies = decision_steps(analysis.decisions, replay.steps)
        if "ply" in q:
            if "d" in q:
                raise BadQuery("ask for ?ply= (the game page's step) or ?d=, not both")
            number = decision_at(plies, int_param(q, "ply", 1, 1, len(replay.steps)))
        else:
            number = int_param(q, "d", 1, 1, max(len(analysis.decisions), 1))

        def url(n: int, e: str = evaluator) -> str:
            step = plies[n - 1] if 0 < n <= len(plies) else None
            if step is not None:
                return analysis_url(tournament_id, game_id, ply=step, evaluator=e)
            return analysis_url(tournament_id, game_id, d=n, evaluator=e)

        # A rollout of the decision shown: the one kept, or made now on ?rollout=1 (the link).
        wanted = choice_param(q, "rollout", ("", "1")) == "1"
        decision = analysis.decisions[number - 1] if analysis.decisions else None
        found = None
        if decision is not None:
            found = self.analyst.rolled_out(
                tournament_id, game_id, row.record or {}, evaluator, decision, compute=wanted
            )
            if found is not None:
                analysis = with_rollout(analysis, number, found)
        rollable = decision is not None and decision.kind == "play" and decision.choices > 1
        link = url(number)
        page = analysis_page(
            analysis,
            replay,
            self._seat_names(tournament_id, row),
            (row.record or {}).get("result"),
            evaluator,
            number,
            url,
            rollout_url=None
            if found is not None or wanted or not rollable
            else f"{link}{'&' if '?' in link else '?'}rollout=1",
            rollout_refused=wanted and found is None,
        )
        return {
            "row": row,
            "t": self.spectator.tournament(tournament_id),
            **page,
            "game_page": lambda n: game_url(tournament_id, game_id, ply=n),
        }

    def analysis(self, request: Request) -> Response:
        return self.page(request, "analysis.html", self._analysis(request))

    def analysis_json(self, request: Request) -> Response:
        context = self._analysis(request)
        analysis = context["analysis"]
        out = analysis.to_json()
        out.update(
            game_id=context["row"].game_id,
            tournament_id=context["row"].tournament_id,
            evaluator=context["evaluator"],
            white=context["names"]["White"],
            black=context["names"]["Black"],
        )
        for item, decision, ply in zip(
            out["decisions"], analysis.decisions, context["plies"], strict=True
        ):
            item["white_equity"] = round(white_equity(decision), 5)
            item["step"] = ply
        return JSONResponse(out)

    # -- a tournament's analysis ------------------------------------------------------------------

    def _tournament_analysis(self, request: Request) -> dict[str, Any]:
        tournament_id = request.path_params["tournament"]
        evaluator = (
            choice_param(request.query_params, "evaluator", ("", *offered_evaluators()))
            or EVALUATORS[0]
        )
        try:
            row = self.spectator.tournament(tournament_id)
            games = self.spectator.games(tournament_id)  # the public ones
        except NotFound as exc:
            raise HTTPException(404, str(exc)) from None

        def record_of(game_id: str) -> dict[str, Any]:
            return self.spectator.game(tournament_id, game_id)[0].record or {}

        job = self.tournament_analyses.job(
            (tournament_id, len(games), evaluator),
            [(g.pool, g.game_id) for g in games],
            record_of,
            evaluator,
        )
        pools = job.results() if job.finished else []
        return {
            "t": row,
            "job": job,
            "evaluator": evaluator,
            "progress": _progress(job.done, job.total, "games analysed"),
            "pools": pools,
            # A bot graded by its own net shows PR 0.0 and ranks first: say so (issue 37).
            "self_judged": {
                pool: [name for name in bots if judges_itself(name, evaluator)]
                for pool, _, bots in pools
            },
        }

    def tournament_analysis(self, request: Request) -> Response:
        return self.page(request, "tournament_analysis.html", self._tournament_analysis(request))

    def tournament_analysis_json(self, request: Request) -> Response:
        context = self._tournament_analysis(request)
        job = context["job"]
        return JSONResponse(
            {
                "tournament_id": context["t"].tournament_id,
                "evaluator": context["evaluator"],
                "ply": 0,
                "games": job.total,
                "done": job.done,
                "finished": job.finished,
                "error": job.error,
                "pools_left_out": job.pool_errors,
                "games_not_analysed": job.failed,
                "pools": [
                    {
                        "pool": pool,
                        "games": games,
                        "self_judged": context["self_judged"][pool],
                        "bots": {name: r.to_json() for name, r in results.items()},
                    }
                    for pool, games, results in context["pools"]
                ],
            }
        )

    # -- a position -------------------------------------------------------------------------------

    def position(self, request: Request) -> Response:
        text = request.path_params["position"]
        q = request.query_params
        variant_name = q.get("variant", "backgammon")
        flipped = choice_param(q, "side", ("", "mover", "opponent")) == "opponent"
        mover: Colour = (
            "black" if choice_param(q, "mover", ("", "white", "black")) == "black" else "white"
        )
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
                "board": board(position, variant, flipped=flipped, mover=mover, pips=True),
                "flipped": flipped,
                "mover": mover,
            },
        )


class _LiveFeed:
    """One tournament's live standings, shared by all its visitors: one task polls the database
    (and listens to the arena's stream) and wakes each visitor's event when the fragment changed.

    Nothing here waits on a visitor: a slow one only misses fragments in between (each is the
    whole standings), so a thousand visitors cost one render per change and the arena sees one
    stream (issue 34 item 4)."""

    def __init__(self, views: _Views, tournament_id: str) -> None:
        self.views = views
        self.tournament_id = tournament_id
        self.visitors: set[asyncio.Event] = set()
        self.version = 0
        """Bumped with every new fragment; a visitor sends when it differs from what it sent."""
        self.html = ""
        self.done = False
        self.failed = False
        self.ended = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def join(self) -> asyncio.Event:
        visitor = asyncio.Event()
        if self.version:
            visitor.set()  # the current fragment at once
        self.visitors.add(visitor)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        return visitor

    def leave(self, visitor: asyncio.Event) -> None:
        self.visitors.discard(visitor)
        if not self.visitors:
            self._wake.set()  # the feed stops at once, and with it the arena's stream

    def _publish(self) -> None:
        for visitor in self.visitors:
            visitor.set()

    async def _run(self) -> None:
        views = self.views
        loop = asyncio.get_running_loop()

        def wake_up() -> None:  # from the arena stream's thread
            loop.call_soon_threadsafe(self._wake.set)

        stop_watch: Callable[[], None] | None = None
        watching = False  # a stream was opened (it is not opened again once it ended)
        last: tuple[int, str] | None = None
        try:
            while self.visitors:
                if views.arena_watch is not None and not watching:
                    stop_watch = views.arena_watch.watch(self.tournament_id, wake_up)
                    watching = stop_watch is not None
                try:
                    key, html = await run_in_threadpool(views._live_fragment, self.tournament_id)
                except Exception:  # the database went away, the tournament was removed …
                    log.exception("live standings of %s", self.tournament_id)
                    self.failed = True
                    return
                if key != last:
                    last = key
                    self.html = html
                    self.version += 1
                    self.done = key[1] not in ("pending", "running")
                    self._publish()
                if self.done:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), views.poll_s)
                self._wake.clear()
        finally:
            self.ended = True
            if stop_watch is not None:
                stop_watch()
            self._publish()  # visitors waiting see done, failed, or nothing more to come


def _check_filters(filters: GameFilter, definition: dict[str, Any], games: list[Any]) -> None:
    """:class:`BadQuery` for a bot, pool or termination the tournament does not have."""
    items = [i for i in definition.get("bots", []) or [] if isinstance(i, dict)]
    bots = {str(i.get("name")) for i in items} | {g.white for g in games} | {g.black for g in games}
    pools = [p for p in definition.get("pools", []) or [] if isinstance(p, dict)]
    labels = {str(p.get("label")) for p in pools} | {g.pool for g in games}
    for name, value, known in (
        ("bot", filters.bot, bots),
        ("pool", filters.pool, labels),
        ("termination", filters.termination, set(TERMINATION_WORDS)),
    ):
        if value and value not in known:
            raise BadQuery(
                f"?{name}={value!r} is not one of this tournament's: {', '.join(sorted(known))}"
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
        "shown": step.shown or step.answer,
        "info": step.info,
        "latency_ms": step.latency_ms,
        "fault": step.fault,
        "fallback": step.fallback,
        "before": list(step.before),
        "after": list(step.after),
        "result": step.result,
    }


# -- the server -----------------------------------------------------------------------------------

MAX_CONNECTIONS = 1000
"""Open connections at most by default (fewer when the file descriptor limit is lower)."""
HEADER_TIMEOUT_S = 10.0
"""A request head must be complete this long after the connection opened (or the previous
response ended), however its bytes trickle in (nginx's ``client_header_timeout``)."""
SEND_TIMEOUT_S = 30.0
"""A client that takes nothing of what is sent to it for this long (the transport's buffer over
its high-water mark all the while) is dropped: a live page whose visitor stopped reading would
otherwise hold its connection, busy and so never closed to make room, for as long as the
kernel keeps trying."""
BACKLOG = 64
"""Connections the kernel queues before they are accepted; also how many asyncio accepts in one
go (each loop iteration) before the protocol sees any of them, hence :data:`FD_RESERVE`."""
FD_RESERVE = 4 * BACKLOG + 96
"""File descriptors kept out of the connection cap. A connection is seen (``connection_made``)
two loop iterations after its accept, and one closed to make room frees its descriptor an
iteration later, while each iteration accepts up to :data:`BACKLOG` more: four bursts are in
flight at worst. Then the database, the threads' pipes, the arena's channel, the log. With one
burst only (128 + 96), 1,100 half-sent requests at ``ulimit -n 1024`` still ran the process
out of descriptors (27 times in a run), and asyncio stops accepting for a second each time."""


def raise_descriptor_limit(wanted: int) -> None:
    """Raise the soft file descriptor limit towards ``wanted`` (never above the hard limit, never
    lower): a soft 1,024 under a higher hard limit is a shell's default, not a decision, and
    would cap the connections, live visitors included, at 672 (Go's runtime does the same)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft >= wanted:
            return
        top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if top > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))
    except (ImportError, OSError, ValueError):
        return  # not on this platform, or not allowed: the cap follows the limit as it is


def connection_cap(max_connections: int) -> int:
    """``max_connections``, lowered to what the file descriptor limit (``ulimit -n``) leaves
    after :data:`FD_RESERVE`: the server must stay able to accept, or a full table of idle
    connections would hold honest ones in the kernel's queue (issue 34 item 5)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return max_connections
    if soft == resource.RLIM_INFINITY:
        return max_connections
    return max(1, min(max_connections, soft - FD_RESERVE))


class _Guard:
    """The connections of one server: the cap, and those waiting for a request head (oldest
    first), which are the ones closed to make room."""

    def __init__(self, cap: int, header_timeout_s: float, send_timeout_s: float) -> None:
        self.cap = cap
        self.header_timeout_s = header_timeout_s
        self.send_timeout_s = send_timeout_s
        self.open: set[GuardedH11] = set()
        self.waiting: dict[GuardedH11, None] = {}  # insertion-ordered: the oldest first
        self.evicted = 0
        self.refused = 0
        self.timed_out = 0
        self.stalled = 0


BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 5\r\ncontent-length: 5\r\nconnection: close\r\n\r\nbusy\n"
)


class SpectatorConfig(uvicorn.Config):
    """uvicorn's configuration with the spectator's connection guard (:class:`GuardedH11`)."""

    def __init__(
        self,
        app: Starlette,
        *,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        send_timeout_s: float = SEND_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, http=GuardedH11, backlog=BACKLOG, **kwargs)
        self.guard = _Guard(connection_cap(max_connections), header_timeout_s, send_timeout_s)


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with what it lacks against slowloris (issue 34 item 5).

    uvicorn has no deadline for a request head (its keep-alive timer is reset by every byte, and
    is not armed before the first request) and no cap on connections (``limit_concurrency``
    answers 503 to the honest request while the idle connections stay). Here:

    * a head must be complete :data:`HEADER_TIMEOUT_S` after the connection opened or the last
      response ended, else the connection is closed;
    * at the cap, a new connection closes the oldest one still waiting for its head (a slow
      client's, or an idle keep-alive's), so idle connections can never lock honest ones out;
      when every connection is busy with a request (live streams), the new one is answered 503;
    * a client that stops reading is dropped after :data:`SEND_TIMEOUT_S` (its responses or
      live stream stay over the write buffer's high-water mark all that time).
    """

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        assert isinstance(config, SpectatorConfig)
        self.guard = config.guard
        self._head_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard = self.guard
        if len(guard.open) >= guard.cap:
            if guard.waiting:
                oldest = next(iter(guard.waiting))
                guard.evicted += 1
                oldest._close_waiting()
            else:
                guard.refused += 1
                transport.write(BUSY)
                transport.close()
                return
        guard.open.add(self)
        self._await_head()

    def _await_head(self) -> None:
        self.guard.waiting[self] = None
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.guard.header_timeout_s, self._head_late)

    def _head_arrived(self) -> None:
        self.guard.waiting.pop(self, None)
        self._cancel_head_timer()

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self in self.guard.waiting:
            self.guard.timed_out += 1
            self._close_waiting()

    def _close_waiting(self) -> None:
        self.guard.waiting.pop(self, None)
        self.guard.open.discard(self)
        self._cancel_head_timer()
        if not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in: a request is under way
            self._head_arrived()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # kept alive: the next head has the same deadline

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.guard.send_timeout_s, self._send_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_send_timer()

    def _cancel_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_stalled(self) -> None:
        self._send_timer = None
        self.guard.stalled += 1
        self.transport.abort()  # its buffered bytes are dropped: nothing would take them

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.waiting.pop(self, None)
        self.guard.open.discard(self)
        self._cancel_head_timer()
        self._cancel_send_timer()
        super().connection_lost(exc)


def serve(
    app: Starlette,
    host: str,
    port: int,
    *,
    max_connections: int = MAX_CONNECTIONS,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    send_timeout_s: float = SEND_TIMEOUT_S,
) -> None:
    """Run ``app`` under uvicorn as docs/spectator.md describes (the connection guard, the
    keep-alive and head-size limits)."""
    raise_descriptor_limit(max_connections + FD_RESERVE)
    config = SpectatorConfig(
        app,
        host=host,
        port=port,
        max_connections=max_connections,
        header_timeout_s=header_timeout_s,
        send_timeout_s=send_timeout_s,
        log_level="warning",
        timeout_keep_alive=5,  # an idle keep-alive connection (uvicorn's default, said here)
        timeout_graceful_shutdown=2,  # live streams never end by themselves
        h11_max_incomplete_event_size=16 * 1024,  # a head larger than this is a 400
        lifespan="on",
    )
    uvicorn.Server(config).run()


def create_app(
    db: str,
    *,
    arena: str | None = None,
    poll_s: float = LIVE_POLL_S,
    arena_token: str | None = None,
    arena_admin: str | None = None,
) -> Starlette:
    """The spectator for the tournament database ``db`` (a SQLite file or PostgreSQL URL);
    ``arena``: an arena server's address whose ``WatchTournament`` events wake the live pages;
    ``poll_s``: how often the live pages look at the database; ``arena_token``: the arena's
    admin token, with which the Play page seats the arena's registered bots (``AskBot``, sent to
    ``arena_admin``, the arena's operator port, or else to ``arena``).

    Raises :class:`nardy.arena.records.storage.StorageError` when it cannot be opened."""
    spectator = Spectator(db)
    views = _Views(spectator, arena, poll_s)
    arena_bots = None
    if arena is not None and arena_token:
        arena_bots = ArenaBots(arena_admin or arena, arena_token)

    titles = {400: "Bad request", 404: "Not found", 405: "Method not allowed"}

    def error_page(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status)
        title = titles.get(status, "Error")
        return views.page(request, "error.html", {"title": title, "message": message}, status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error_page(request, exc.status_code, str(exc.detail))

    async def bad_query(request: Request, exc: Exception) -> Response:
        return error_page(request, 400, str(exc))

    async def storage_error(request: Request, exc: Exception) -> Response:
        # The driver's message names the database (its path or host): the log has it, the page
        # does not.
        log.error("database error on %s: %s", request.url.path, exc)
        return error_page(request, 503, "The tournament database cannot be read just now.")

    async def no_analysis(request: Request, exc: Exception) -> Response:
        message = str(exc)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=404)
        return views.page(request, "error.html", {"title": "No analysis", "message": message}, 404)

    async def favicon(request: Request) -> Response:
        return Response((HERE / "static" / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    t = "/t/{tournament}"
    routes = [
        Route("/", views.tournaments),
        Route("/api/tournaments", views.tournaments_json),
        Route(t, views.tournament),
        Route(f"/api{t}", views.tournament_json),
        Route(f"{t}/live", views.live),
        Route(f"{t}/games", views.games),
        Route(f"{t}/analysis", views.tournament_analysis),
        Route(f"/api{t}/analysis", views.tournament_analysis_json),
        Route(f"/api{t}/games", views.games_json),
        Route(t + "/m/{match:path}", views.match),
        Route("/api" + t + "/m/{match:path}", views.match_json),
        Route(t + "/g/{game:path}", views.game),
        Route("/api" + t + "/g/{game:path}", views.game_json),
        Route(t + "/a/{game:path}", views.analysis),
        Route("/api" + t + "/a/{game:path}", views.analysis_json),
        Route("/position/{position:path}", views.position),
        Route("/favicon.ico", favicon),
        # The Play page (nardy.web.play), with the arena's bots where it may ask them.
        *play_routes(db, db_label=views.db_label, arena=arena_bots),
        # The analysis board (nardy.web.board): the spectator's templates, its base's context.
        *board_routes(views.templates, {"arena": arena, "db": views.db_label}),
        # follow_symlink: an editable install (the README's, editable_mode=strict) links each
        # static file into the source tree; without it Starlette resolves the link, finds it
        # outside the folder and answers 404: every page unstyled and without its script.
        # The folder check still applies to the requested path (no ``..`` escapes).
        Mount(
            "/static",
            StaticFiles(directory=HERE / "static", follow_symlink=True),
            name="static",
        ),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            views.close()
            spectator.close()

    app = Starlette(
        routes=routes,
        exception_handlers={
            HTTPException: http_error,
            BadQuery: bad_query,
            StorageError: storage_error,
            NoAnalysis: no_analysis,
        },
        lifespan=lifespan,
    )
    app.state.spectator = spectator
    app.state.analyst = views.analyst
    return app
