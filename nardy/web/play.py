"""Playing in the browser: the Play page and its JSON API (docs/play.md, "Playing in the browser").

* ``GET /play`` the form: variant, its options, match length, opponent (a bot or a friend), colour;
* ``POST /api/play`` creates a game: ``{"id", "seat_url", "friend_url", "watch_url"}``;
* ``GET /play/{id}`` the game page; the seat's secret travels in the URL's fragment
  (``#seat=…``), which browsers never send to a server or to another site, and the page's script
  sends it in the ``X-Nardy-Seat`` header;
* ``GET /api/play/{id}`` the state (schema ``play-state``), from the seat's view when the header
  holds its secret, else from White's (anyone may watch); ``?after=VERSION`` waits for the next
  change (a long poll, the page's way of following the bot's or the friend's moves);
* ``POST /api/play/{id}/step|undo|confirm|cube|resign|next|rematch`` the seat's actions: 403
  without the seat's secret, 400 (with the reason in words) for what the rules refuse;
* ``GET /api/play/{id}/records`` every game's record, for export and analysis.

The server is the referee (:mod:`nardy.web.play_session`); the page only shows what it says.
Endpoints are plain ``def`` (Starlette runs them in worker threads), and bots think in their own
threads, so neither blocks the event loop; a long poll waits on the event loop itself, holding
no thread. The state is rendered once per change and seat, however many ask for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from nardy.arena.records.storage import POSTGRES_SCHEMES
from nardy.bots.registry import installed_bots
from nardy.core.game import COLOURS, DoubleDecision, GameResult, PlayDecision, TakeDecision
from nardy.core.notation import BAR, OFF, Step, parse_steps
from nardy.core.plugins import registry
from nardy.core.position import Position
from nardy.core.record import outcome_of
from nardy.core.variant import Variant, apply_steps
from nardy.svg import PINNED_LEGEND, Colour, CubeOwner, board
from nardy.web.arena_bots import ArenaBots
from nardy.web.play_session import (
    LastPlay,
    PlayError,
    PlayForbidden,
    PlaySession,
    PlayStorageError,
    PlayStore,
    SeatSpec,
    new_secret,
)
from nardy.web.templating import template_environment
from nardy.web.variant_options import option_specs
from nardy.words import result_words

__all__ = ["BOT_CHOICES", "play_routes", "play_store_path"]

_T = TypeVar("_T")

HERE = Path(__file__).parent
SEAT_HEADER = "X-Nardy-Seat"
BOT_CHOICES = ("heuristic", "neural", "neural:1", "random")
"""The built-in bots the form offers by name; any other installed or ``module:Class`` bot can be
typed in (``nardy play --bots`` accepts the same names)."""
MAX_BODY = 4096
LONG_POLL_S = 25.0
"""Seconds a long poll (``GET /api/play/{id}?after=VERSION``) waits for a change at most: under
the 30 s after which proxies commonly close an idle request, and a page whose game stands still
asks again at this pace only."""
BOARDS_KEPT = 1024
"""How many drawn boards the Play page keeps (about 15 KB each): the latest few of each game
being played, where a board is asked for again (:func:`_drawn`)."""
RECENT = 20
"""How many of the latest games the form lists (to watch, or to analyse once over)."""


NEW_GAMES_PER_ADDRESS = 20
"""Games (new ones and rematches) one client address may start in :data:`NEW_GAMES_WINDOW`."""
NEW_GAMES_IN_ALL = 600
"""Games everyone together may start in :data:`NEW_GAMES_WINDOW`."""
NEW_GAMES_WINDOW = 600.0
"""Seconds. Every game is a row of the played games' file kept for ever (and a bot's threads
while it plays), so an anonymous visitor must not start them without end: within these limits
the file grows by at most 600 games in 10 minutes, whatever the number of addresses."""


class NewGameLimit:
    """How many games one address, and everyone, may start in a sliding window (module data).

    Its memory is bounded by the window's starts from everyone (``in_all`` times at most)."""

    def __init__(
        self,
        per_address: int = NEW_GAMES_PER_ADDRESS,
        in_all: int = NEW_GAMES_IN_ALL,
        window: float = NEW_GAMES_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_address = per_address
        self.in_all = in_all
        self.window = window
        self._clock = clock
        self._starts: deque[tuple[float, str]] = deque()
        self._by_address: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def addresses(self) -> int:
        """Addresses with a start still in the window (the others are forgotten)."""
        return len(self._by_address)

    def admit(self, address: str) -> float | None:
        """Count a start from ``address`` and return None, or refuse it: the seconds until one
        more is allowed."""
        with self._lock:
            now = self._clock()
            starts, counts = self._starts, self._by_address
            while starts and starts[0][0] <= now - self.window:
                _, old = starts.popleft()
                counts[old] -= 1
                if not counts[old]:
                    del counts[old]
            if len(starts) >= self.in_all:
                return starts[0][0] + self.window - now
            if counts.get(address, 0) >= self.per_address:
                first = next(t for t, a in starts if a == address)
                return first + self.window - now
            starts.append((now, address))
            counts[address] = counts.get(address, 0) + 1
            return None


def _refused_start(wait: float, limit: NewGameLimit) -> JSONResponse:
    seconds = max(1, round(wait))
    return JSONResponse(
        {
            "error": f"too many new games: at most {limit.per_address} from one address and "
            f"{limit.in_all} in all every {round(limit.window / 60)} minutes; try again in "
            f"{seconds} s"
        },
        429,
        headers={"Retry-After": str(seconds)},
    )


def play_store_path(db: str) -> Path:
    """Where the played games are kept: beside a SQLite tournament database (``arena.db`` →
    ``arena-play.db``), or ``nardy-play.db`` in the working directory for a PostgreSQL one."""
    if db.startswith(POSTGRES_SCHEMES):
        return Path("nardy-play.db")
    path = Path(db)
    return path.with_name(f"{path.stem}-play.db")


def _point_json(point: int) -> int | str:
    return "bar" if point == BAR else "off" if point == OFF else point


def _point_of(value: Any) -> int:
    if value == "bar":
        return BAR
    if value == "off":
        return OFF
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 24:
        return value
    raise PlayError(f"a point is 1-24, 'bar' or 'off', not {value!r}")


def _step_json(step: Step) -> dict[str, Any]:
    return {"from": _point_json(step.src), "to": _point_json(step.dst), "die": step.die}


def _colour_name(colour: int) -> Colour:
    return "white" if colour == 0 else "black"


def _seat_name(seat: SeatSpec, colour: int, viewer: int | None = None) -> str:
    """A bot by its name; a human as "you" to himself, else by his name or "player"."""
    if seat.kind == "bot":
        return seat.bot
    if viewer == colour:
        return "you"
    return seat.name or "player"


class _Rendered:
    """One session's state as each seat (None: a spectator) last asked for it, with the version
    it shows, and the frames of the opponent's last play (:func:`state_json`)."""

    __slots__ = ("frames", "states")

    def __init__(self) -> None:
        self.states: dict[int | None, tuple[int, bytes]] = {}
        self.frames: FramesMemo = {}


class _PlayViews:
    def __init__(self, store: PlayStore, db_label: str, limit: NewGameLimit | None = None) -> None:
        self.store = store
        self.db_label = db_label
        self.limit = limit or NewGameLimit()
        # The spectator's templates, filters and links (imported here: the spectator's app
        # mounts these routes, so it imports this module first).
        from nardy.web.analysis_view import Analyst

        self.templates = Jinja2Templates(env=template_environment())

        self.analyst = Analyst()
        """Analyses of played games, made on demand and cached (as the spectator's)."""
        self._rendered: weakref.WeakKeyDictionary[PlaySession, _Rendered] = (
            weakref.WeakKeyDictionary()
        )
        """What was rendered of each session; gone with the session when the store lets it
        leave memory."""
        self._rendered_lock = threading.Lock()

    # -- helpers ------------------------------------------------------------------------------------

    def page(self, request: Request, name: str, context: dict[str, Any]) -> Response:
        return self.templates.TemplateResponse(
            request, name, {"arena": None, "db": self.db_label, **context}
        )

    def session(self, request: Request) -> PlaySession:
        try:
            return self.store.get(request.path_params["id"])
        except KeyError:
            raise HTTPException(404, "no such game") from None
        except PlayStorageError as exc:
            raise HTTPException(503, str(exc)) from None

    @staticmethod
    def seat(request: Request, session: PlaySession) -> int | None:
        return session.seat_of(request.headers.get(SEAT_HEADER, ""))

    @staticmethod
    def body(request: Request) -> dict[str, Any]:
        raw = request.scope.get("_play_body")
        data = json.loads(raw) if raw else {}
        if not isinstance(data, dict):
            raise PlayError("the request body is a JSON object")
        return data

    # -- the form -----------------------------------------------------------------------------------

    def form(self, request: Request) -> Response:
        variants = []
        for name, info in registry().items():
            variants.append(
                {
                    "name": name,
                    "title": info.title,
                    "match_only": bool(info.cycle),
                    "options": option_specs(info),
                }
            )
        others = [n for n, b in installed_bots().items() if not b.builtin]
        arena = self.store.arena
        arena_bots = [] if arena is None else arena.names()
        games = [
            {
                "id": game_id,
                "variant": data["variant"],
                "seats": " vs ".join(
                    s["bot"] if s["kind"] == "bot" else s.get("name") or "player"
                    for s in data["seats"]
                ),
                "finished": finished,
            }
            for game_id, data, finished, _ in self._recent()
        ]
        return self.page(
            request,
            "play.html",
            {
                "variants": variants,
                "bots": [*BOT_CHOICES, *others],
                "arena_bots": arena_bots,
                "games": games,
            },
        )

    def _recent(self) -> list[tuple[str, dict[str, Any], bool, float]]:
        try:
            return self.store.ids()[:RECENT]
        except PlayStorageError:
            return []  # the form still shows; starting a game says why it cannot

    async def create(self, request: Request) -> Response:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return JSONResponse({"error": "request too large"}, 413)
        wait = self.limit.admit(_address(request))
        if wait is not None:
            return _refused_start(wait, self.limit)
        return await _threaded(self._create, raw)

    def _create(self, raw: bytes) -> Response:
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        if not isinstance(data, dict):
            return JSONResponse({"error": "the body is a JSON object"}, 400)
        try:
            session = self._new(data)
        except PlayStorageError as exc:
            return JSONResponse({"error": str(exc)}, 503)
        except (PlayError, ValueError, TypeError, KeyError) as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse(
            _links(session, 0 if data.get("colour", "white") == "white" else 1), 201
        )

    def _new(self, data: dict[str, Any]) -> PlaySession:
        variant = data.get("variant")
        if variant not in registry():
            raise PlayError(f"no variant {variant!r}")
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise PlayError("options is an object")
        length = data.get("match_length")
        if length is not None and (not isinstance(length, int) or length < 1 or length > 99):
            raise PlayError("match_length is a number of points, 1-99, or null for money play")
        opponent = data.get("opponent") or {"kind": "bot", "bot": "heuristic"}
        colour = data.get("colour", "white")
        if colour not in ("white", "black"):
            raise PlayError("colour is 'white' or 'black'")
        me = SeatSpec("human", secret=new_secret(), name=str(data.get("name", ""))[:40])
        if opponent.get("kind") == "friend":
            other = SeatSpec("human", secret=new_secret(), name="")
        elif opponent.get("kind") == "bot" and isinstance(opponent.get("bot"), str):
            other = SeatSpec("bot", bot=opponent["bot"])
        else:
            raise PlayError("opponent is {'kind': 'bot', 'bot': NAME} or {'kind': 'friend'}")
        seats = (me, other) if colour == "white" else (other, me)
        return self.store.create(variant, options, length, seats, seed=data.get("seed"))

    # -- a game -------------------------------------------------------------------------------------

    def game_page(self, request: Request) -> Response:
        session = self.session(request)
        # The gold ring of a pinned checker, explained under the board when one is drawn (the
        # script shows it): its tooltip is the only other explanation, and a phone has none.
        context = {"session": session, "pinned_legend": PINNED_LEGEND}
        return self.page(request, "play_game.html", context)

    def analysis(self, request: Request) -> Response:
        """A played game on the spectator's analysis page (its template and analyses), from
        the game's arena-shaped record."""
        from nardy.game_view import ReplayViewError, game_steps
        from nardy.web.analysis_view import (
            EVALUATORS,
            NoAnalysis,
            analysis_page,
            offered_evaluators,
        )
        from nardy.web.present import choice_param, int_param

        session = self.session(request)
        number = int(request.path_params["game"])
        with session.lock:
            try:
                record = session.arena_record(number)
            except KeyError:
                raise HTTPException(404, f"game {number} has not been played") from None
        if record["result"] is None:
            raise HTTPException(404, "the game is not over yet: analyse it at its end")
        q = request.query_params
        evaluator = choice_param(q, "evaluator", ("", *offered_evaluators())) or EVALUATORS[0]
        try:
            replay = game_steps(record)
        except ReplayViewError as exc:
            raise HTTPException(404, str(exc)) from None
        try:
            analysis = self.analyst.analyse("play", record["game_id"], record, evaluator)
        except NoAnalysis as exc:
            raise HTTPException(404, str(exc)) from None
        index = int_param(q, "d", 1, 1, max(len(analysis.decisions), 1))
        names = {"White": record["white"]["name"], "Black": record["black"]["name"]}
        base = f"/play/{session.id}/analysis/{number}"

        def url(n: int, e: str = evaluator) -> str:
            return f"{base}?d={n}" + (f"&evaluator={e}" if e != EVALUATORS[0] else "")

        context = {
            "arena": None,
            "db": self.db_label,
            "play_id": session.id,
            "row": {"game_id": record["game_id"], "tournament_id": "play"},
            "t": {"name": "Play"},
            **analysis_page(analysis, replay, names, record["result"], evaluator, index, url),
            "game_page": lambda n: f"/play/{session.id}",
            "json_url": f"/api/play/{session.id}/records",
        }
        return self.templates.TemplateResponse(request, "play_analysis.html", context)

    async def state(self, request: Request) -> Response:
        """The state; with ``?after=VERSION`` a long poll: answered at once when the session's
        version is not VERSION (a change the page has not seen, or a restarted server), else
        when it next changes or after ``wait`` seconds (default and at most
        :data:`LONG_POLL_S`), whichever comes first. The wait holds no thread: the session
        tells this request's event loop of its next change (:meth:`PlaySession.listen`)."""
        q = request.query_params
        if "after" not in q:
            return await _threaded(self._state, request)
        try:
            after = int(q["after"])
            wait = float(q.get("wait", LONG_POLL_S))
        except ValueError:
            return JSONResponse({"error": "after is a version (an integer), wait seconds"}, 400)
        if not 0 <= wait <= LONG_POLL_S:
            return JSONResponse({"error": f"wait is 0-{LONG_POLL_S:g} seconds"}, 400)
        session = await _threaded(self.session, request)
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def notify() -> None:  # from the thread that changed the session
            with contextlib.suppress(RuntimeError):  # the loop closed: the server is stopping
                loop.call_soon_threadsafe(changed.set)

        try:
            if session.listen(notify) == after:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), wait)
        finally:
            session.unlisten(notify)
        return await _threaded(self._state, request)

    def _state(self, request: Request) -> Response:
        session = self.session(request)
        with session.lock:
            return self._state_response(session, self.seat(request, session))

    def _state_response(self, session: PlaySession, seat: int | None) -> Response:
        """The state of ``session`` from ``seat``, rendered once per version and seat: building
        it (the boards as SVG, the steps offered) costs milliseconds, and every player and
        spectator of a game asks for it after every change. Called with ``session.lock`` held,
        so the version read is the one rendered."""
        with self._rendered_lock:
            memo = self._rendered.get(session)
            if memo is None:
                memo = self._rendered[session] = _Rendered()
        hit = memo.states.get(seat)
        if hit is None or hit[0] != session.version:
            state = state_json(session, seat, memo.frames)
            body = json.dumps(state, separators=(",", ":")).encode()
            hit = memo.states[seat] = (session.version, body)
        return Response(hit[1], media_type="application/json")

    def records(self, request: Request) -> Response:
        session = self.session(request)
        with session.lock:
            return JSONResponse({"id": session.id, "games": session.records()})

    async def action(self, request: Request) -> Response:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return JSONResponse({"error": "request too large"}, 413)
        request.scope["_play_body"] = raw
        return await _threaded(self._action, request)

    def _action(self, request: Request) -> Response:
        session = self.session(request)
        seat = self.seat(request, session)
        name = request.path_params["action"]
        try:
            body = self.body(request)
            if name == "step":
                die = body.get("die")
                if die is not None and (not isinstance(die, int) or not 1 <= die <= 6):
                    raise PlayError("die is 1-6")
                session.step(seat, _point_of(body.get("from")), _point_of(body.get("to")), die)
            elif name == "undo":
                session.undo(seat)
            elif name == "confirm":
                session.confirm(seat)
            elif name == "cube":
                session.cube(seat, str(body.get("action", "")))
            elif name == "resign":
                session.resign(seat)
            elif name == "next":
                session.next_game(seat)
            elif name == "rematch":
                return self._rematch(session, seat, _address(request))
            else:
                raise HTTPException(404, f"no action {name!r}")
        except PlayForbidden as exc:
            return JSONResponse({"error": str(exc)}, 403)
        except (PlayError, ValueError) as exc:
            return JSONResponse({"error": str(exc)}, 400)
        try:
            self.store.changed(session)
        except PlayStorageError as exc:
            return JSONResponse({"error": str(exc)}, 503)
        with session.lock:
            return self._state_response(session, seat)

    def _rematch(self, session: PlaySession, seat: int | None, address: str) -> Response:
        """The same settings, colours swapped, the seats' secrets kept (each player's link to
        the rematch is his old one with the new id); asked twice, the same rematch. A new
        rematch counts as a new game (:class:`NewGameLimit`)."""
        if seat is None:
            raise PlayForbidden("only a seated player may ask for a rematch")
        with session.lock:
            if session.game_result is None:
                raise PlayError("the game is not over")
            if not session.rematch:
                wait = self.limit.admit(address)
                if wait is not None:
                    return _refused_start(wait, self.limit)
                white, black = session.seats
                new = self.store.create(
                    session.variant_name,
                    {k: v for k, v in session.options.items() if k != "match_length"},
                    session.match_length,
                    (black, white),
                    rematch_of=session.id,
                )
                session.rematch = new.id
                session.bump()
                self.store.save(session)
            return JSONResponse({"id": session.rematch, "url": f"/play/{session.rematch}"})


def _address(request: Request) -> str:
    """The client's address (behind a proxy, the proxy's: run uvicorn with its forwarded-for
    settings there, docs/spectator.md)."""
    return request.client.host if request.client is not None else "unknown"


async def _threaded(fn: Callable[..., _T], *args: Any) -> _T:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


def _links(session: PlaySession, me: int) -> dict[str, Any]:
    """The creator's seat link (colour ``me``), the friend's (a game against a friend) and the
    spectators' link."""
    out: dict[str, Any] = {"id": session.id, "watch_url": f"/play/{session.id}"}
    out["seat_url"] = f"/play/{session.id}#seat={session.seats[me].secret}"
    out["colour"] = _colour_name(me)
    out["friend_url"] = None
    friend = session.seats[1 - me]
    if friend.kind == "human":
        out["friend_url"] = f"/play/{session.id}#seat={friend.secret}"
    return out


def _decision_json(session: PlaySession) -> dict[str, Any] | None:
    decision = session.decision
    if decision is None:
        return None
    out: dict[str, Any] = {"player": _colour_name(decision.player)}
    if isinstance(decision, PlayDecision):
        out.update(
            kind="play",
            dice=list(decision.segment.dice),
            segment=decision.segment.description,
            segment_kind=decision.segment.kind,
            dice_used=decision.plays.dice_used,
        )
    elif isinstance(decision, DoubleDecision):
        out.update(kind="double", cube=decision.cube.value)
    elif isinstance(decision, TakeDecision):
        out.update(
            kind="take",
            cube=decision.cube.value,
            offered=2 * decision.cube.value,
            beaver_allowed=decision.beaver_allowed,
        )
    return out


def _board_svg(
    session: PlaySession,
    viewer: int,
    seat: int | None,
    shown: tuple[int, Position, Any] | None = None,
) -> str:
    """The board from ``viewer``'s seat, numbered in his coordinates (so the page's clicks name
    his points, which are the kernel's when he is to play): his entered steps as arrows while he
    plays, else the last play made, drawn from its mover's side; ``shown``: (mover, position
    from his view, steps as arrows) to draw instead (a frame of a play shown step by step)."""
    game = session.game
    variant = game.variant
    names = (_seat_name(session.seats[0], 0, seat), _seat_name(session.seats[1], 1, seat))
    score = (session.match.score[0], session.match.score[1])
    decision = session.decision
    mover = viewer
    position: Position = game.position_for(viewer)
    last: Any = None
    if shown is not None:
        mover, position, last = shown
    elif isinstance(decision, PlayDecision) and decision.player == viewer and session.entered:
        position = apply_steps(decision.position, session.entered, pins=variant.rules.hitting.pins)
        last = list(session.entered)
    else:
        plays = [e for e in game.events if e.kind == "play"]
        if plays:
            mover = plays[-1].player
            position = game.position_for(mover)
            last = str(plays[-1].data["play"]) or None
    owner = game.cube.owner
    cube: tuple[int, CubeOwner] | None = None
    if game.cube_settings.enabled:
        side: CubeOwner = None if owner is None else "mover" if owner == mover else "opponent"
        cube = (game.cube.value, side)
    # A play's arrows are drawn from its steps' sources and destinations, in order, whether it
    # is given as text or as steps (nardy.svg): so the board after a play and the last frame of
    # it, or the last step entered and the play confirmed, are one drawing, drawn once.
    steps = parse_steps(last) if isinstance(last, str) else last or ()
    arrows = tuple((s.src, s.dst) for s in steps)
    return _drawn(
        position,
        variant,
        mover != viewer,
        _colour_name(mover),
        arrows,
        cube,
        names,
        score if session.match_length else None,
        session.match_length or 0,
        session.match.crawford_game,
    )


@lru_cache(maxsize=BOARDS_KEPT)
def _drawn(
    position: Position,
    variant: Variant,
    flipped: bool,
    mover: Colour,
    arrows: tuple[tuple[int, int], ...],
    cube: tuple[int, CubeOwner] | None,
    names: tuple[str, str],
    score: tuple[int, int] | None,
    match_length: int,
    crawford: bool,
) -> str:
    """A Play page's board (:func:`nardy.svg.board` with the page's options), remembered: a
    move shows one board several times (a step's, then the play's; the opponent's last frame,
    then his play's), and every seat and spectator of a game asks for the same ones."""
    svg = board(
        position,
        variant,
        flipped=flipped,
        mover=mover,
        last_play=[Step(src, dst, 0) for src, dst in arrows],
        cube=cube,
        pips=True,
        names=names,
        score=score,
        match_length=match_length,
        crawford=crawford,
    )
    return str(svg._repr_svg_())


FramesMemo = dict[int | None, tuple[tuple[LastPlay, int, int | None], list[str]]]
"""The frames of a play shown step by step, by seat: the play they show with the cube they
draw (value, owner), and its boards."""


def state_json(
    session: PlaySession, seat: int | None, frames_memo: FramesMemo | None = None
) -> dict[str, Any]:
    """The game as the page (or a script) sees it from ``seat`` (None: a spectator, White's view).

    ``frames_memo`` keeps the opponent's last play step by step between calls: the state carries
    those boards until the next play, through every step the seat enters meanwhile, and they are
    most of its cost."""
    viewer = 0 if seat is None else seat
    decision = session.decision
    offered: list[Step] = []
    complete = False
    if isinstance(decision, PlayDecision) and decision.player == seat:
        offered, complete = session.offered(decision)
    result = session.game_result
    names = {COLOURS[c]: _seat_name(session.seats[c], c, seat) for c in (0, 1)}
    result_out = None
    if result is not None:
        record = session.records()[-1]
        result_out = {
            **(record.get("result") or {}),
            "text": _result_text(result, session.game.variant, names),
        }
    log = [
        {
            "player": _colour_name(e.player),
            "kind": e.kind,
            "text": _event_words(e.kind, e.data),
        }
        for e in session.game.events
    ]
    frames: list[str] = []
    last_play = session.last_play
    plays_made = sum(1 for e in session.game.events if e.kind == "play")
    if last_play is not None and last_play.number == plays_made and last_play.player != seat:
        # The opponent's play step by step (the page shows these frames, then the board).
        cube = session.game.cube  # drawn on every frame; a double after the play changes it
        key = (last_play, cube.value, cube.owner)
        kept = None if frames_memo is None else frames_memo.get(seat)
        if kept is not None and kept[0][0] is last_play and kept[0][1:] == key[1:]:
            frames = kept[1]
        else:
            pins = session.game.variant.rules.hitting.pins
            for k in range(1, len(last_play.steps) + 1):
                after = apply_steps(last_play.before, last_play.steps[:k], pins=pins)
                shown = (last_play.player, after, last_play.steps[:k])
                frames.append(_board_svg(session, viewer, seat, shown))
            if frames_memo is not None:
                frames_memo[seat] = (key, frames)
    match = session.match
    return {
        "id": session.id,
        "last_play": None
        if not frames or last_play is None
        else {"player": _colour_name(last_play.player), "number": plays_made, "frames": frames},
        "version": session.version,
        "variant": session.game.variant.name,
        "match_variant": session.variant_name,
        "options": {k: v for k, v in session.options.items() if k != "match_length"},
        "match_length": session.match_length,
        "score": list(match.score),
        "crawford": match.crawford_game,
        "game_number": len(session.logs),
        "seat": None if seat is None else _colour_name(seat),
        "seats": [
            {"colour": _colour_name(c), "kind": s.kind, "name": _seat_name(s, c, seat)}
            for c, s in enumerate(session.seats)
        ],
        "decision": _decision_json(session),
        "entered": [_step_json(s) for s in session.entered],
        "offered": [_step_json(s) for s in offered],
        "complete": complete,
        "cube": {
            "enabled": session.game.cube_settings.enabled,
            "value": session.game.cube.value,
            "owner": None
            if session.game.cube.owner is None
            else _colour_name(session.game.cube.owner),
        },
        "board": _board_svg(session, viewer, seat),
        "log": log,
        "result": result_out,
        "match_over": match.is_over,
        "can_next": result is not None and match.length is not None and not match.is_over,
        "rematch": session.rematch or None,
        "analysis_url": None
        if result is None
        else f"/play/{session.id}/analysis/{len(session.logs)}",
        "bot_error": session.bot_error or None,
    }


def _result_text(result: GameResult, variant: Variant, names: dict[str, str]) -> str:
    """The result in the arena pages' words (its outcome format: multiplier, termination); a
    resignation says who resigned, then what the winner scores for it."""
    if not result.resigned:
        outcome = outcome_of(result).to_json()
        return result_words(outcome, variant, cube=result.cube_value, names=names)
    outcome = {
        "winner": COLOURS[result.winner],
        "points": result.points,
        "multiplier": result.base_value,
        "termination": "resigned",
    }
    loser = COLOURS[1 - result.winner]
    resigner = f"{loser} ({names[loser]})" if names.get(loser) else loser
    words = result_words(outcome, variant, cube=result.cube_value, names=names)
    return f"{resigner} resigns. {words}"


def _event_words(kind: str, data: dict[str, Any]) -> str:
    if kind == "play":
        return f"{data.get('segment', '')}: {data.get('play') or 'no move'}"
    if kind in ("roll", "opening"):
        return f"{'re-roll' if data.get('reroll') else kind} {'-'.join(map(str, data.get('dice', [])))}"
    if kind == "double":
        return f"doubles to {data.get('value')}"
    if kind == "transfer":
        return "hands over " + ", ".join(f"{n}×{v}" for v, n in data.get("steps", []))
    if kind == "end":
        return f"wins {data.get('points')} ({data.get('reason')})"
    return kind


def play_routes(
    db: str,
    *,
    store: PlayStore | None = None,
    db_label: str = "",
    arena: ArenaBots | None = None,
) -> list[BaseRoute]:
    """The Play page's routes, for :func:`nardy.web.app.create_app` (games kept beside ``db``;
    ``arena``: the attached arena, whose registered bots are offered as opponents)."""
    store = store or PlayStore(play_store_path(db), arena=arena)
    views = _PlayViews(store, db_label or Path(db).name)
    return [
        Route("/play", views.form),
        Route("/api/play", views.create, methods=["POST"]),
        Route("/play/{id:str}", views.game_page),
        Route("/api/play/{id:str}", views.state),
        Route("/api/play/{id:str}/records", views.records),
        Route("/play/{id:str}/analysis/{game:int}", views.analysis),
        Route("/api/play/{id:str}/{action:str}", views.action, methods=["POST"]),
    ]
