"""Write a bot as a small class and run it over either transport with one call.

::

    from nardy.arena.sdk import BotBase, serve_bot, dial_out

    class FirstPlay(BotBase):
        name = "first-play"

        def choose_play(self, request):
            return 0                      # an index into request.context.legal_plays

    serve_bot(FirstPlay(), port=50051).wait()          # the arena calls the bot, or
    dial_out(FirstPlay(), "arena:50050", token).run()   # the bot calls the arena (NAT-friendly)

A bot receives the protocol's request messages unchanged (``nardy.bot.v1``) and answers with a
plain value — a play index or play text, a bool to double, ``"take"`` / ``"drop"`` / ``"beaver"``
— or an :class:`Answer` that adds a comment and key/value info for the record. The kernel's
built-in bots run through :class:`KernelBot` (``builtin("heuristic")``).
"""

from __future__ import annotations

import hmac
import logging
import queue
import random
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import channel_options, rpc_status
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import arena_pb2_grpc as _arena_pb2_grpc
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.protocol import bot_pb2_grpc as _bot_pb2_grpc
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.core.game import WHITE, Cube, DoubleDecision, PlayDecision, Segment, TakeDecision
from nardy.core.plugins import load_variant
from nardy.core.variant import Variant

__all__ = [
    "Answer",
    "BotBase",
    "BotServer",
    "DialOutClient",
    "DialOutRejectedError",
    "KernelBot",
    "RandomBot",
    "backoff_delays",
    "builtin",
    "dial_out",
    "print_status",
    "serve_bot",
]

log = logging.getLogger(__name__)

_TAKE_ACTIONS = {
    "take": _bot_pb2.TAKE_ACTION_TAKE,
    "drop": _bot_pb2.TAKE_ACTION_DROP,
    "beaver": _bot_pb2.TAKE_ACTION_BEAVER,
}


@dataclass(frozen=True, slots=True)
class Answer:
    """A decision plus free-form info for the game record."""

    choice: int | str | bool
    """A play index or text; a bool for double/roll; "take" / "drop" / "beaver"."""
    comment: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)


class BotBase:
    """Subclass and override :meth:`choose_play` (and the cube methods if you play with a cube).

    Methods may be called from several threads at once (several games); keep shared state
    thread-safe. Raising an exception reports the decision as failed (the arena counts a crash).
    """

    name: str = "bot"
    version: str = "0.0"
    author: str = ""
    variants: tuple[str, ...] = ()
    """Variant ids the bot plays; empty = any."""

    def info(self) -> _bot_pb2.BotInfo:
        """The bot's self-description (``GetInfo``, ``Hello.info``)."""
        return _bot_pb2.BotInfo(
            name=self.name, version=self.version, author=self.author, variants=self.variants
        )

    def choose_play(self, request: _bot_pb2.ChoosePlayRequest) -> int | str | Answer:
        """Return the index (``LegalPlay.index``) or text of a legal play."""
        raise NotImplementedError

    def decide_double(self, request: _bot_pb2.DecideDoubleRequest) -> bool | Answer:
        """Return True to double; the default never doubles."""
        return False

    def respond_to_double(self, request: _bot_pb2.RespondToDoubleRequest) -> str | Answer:
        """Return "take", "drop" or "beaver"; the default always takes."""
        return "take"

    def game_ended(self, message: _arena_pb2.GameEnded) -> None:
        """Called (dial-out only) when a game the bot played has ended."""


# -- answers → response messages -----------------------------------------------------------------


def _split(answer: Any) -> tuple[Any, str, Mapping[str, Any]]:
    if isinstance(answer, Answer):
        return answer.choice, answer.comment, answer.values
    return answer, "", {}


def play_response(answer: int | str | Answer) -> _bot_pb2.ChoosePlayResponse:
    """The ``ChoosePlayResponse`` for a bot's return value."""
    choice, comment, values = _split(answer)
    response = _bot_pb2.ChoosePlayResponse()
    if isinstance(choice, bool) or not isinstance(choice, int | str):
        raise TypeError(f"choose_play must return an int or str, not {choice!r}")
    if isinstance(choice, int):
        response.play_index = choice
    else:
        response.play_text = choice
    convert.info_from_mapping(comment, values, response.info)
    return response


def double_response(answer: bool | Answer) -> _bot_pb2.DecideDoubleResponse:
    """The ``DecideDoubleResponse`` for a bot's return value."""
    choice, comment, values = _split(answer)
    response = _bot_pb2.DecideDoubleResponse(
        action=_bot_pb2.DOUBLE_ACTION_DOUBLE if choice else _bot_pb2.DOUBLE_ACTION_ROLL
    )
    convert.info_from_mapping(comment, values, response.info)
    return response


def take_response(answer: str | Answer) -> _bot_pb2.RespondToDoubleResponse:
    """The ``RespondToDoubleResponse`` for a bot's return value."""
    choice, comment, values = _split(answer)
    if choice not in _TAKE_ACTIONS:
        raise ValueError(f"respond_to_double must return take, drop or beaver, not {choice!r}")
    response = _bot_pb2.RespondToDoubleResponse(action=_TAKE_ACTIONS[choice])
    convert.info_from_mapping(comment, values, response.info)
    return response


# -- bots ---------------------------------------------------------------------------------------


class RandomBot(BotBase):
    """Chooses a uniformly random legal play (seeded); never doubles, always takes."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def choose_play(self, request: _bot_pb2.ChoosePlayRequest) -> int:
        with self._lock:
            return self._random.randrange(len(request.context.legal_plays))


class KernelBot(BotBase):
    """Runs a :mod:`nardy.bots` bot (``choose_play(PlayDecision) -> int`` ...) as a protocol bot.

    The request is turned back into the kernel's decision: the variant is loaded from its spec,
    the legal plays are regenerated from the position and the segment's steps, and the chosen
    play is matched to the request's list by its resulting position.
    """

    def __init__(self, bot: Any, name: str | None = None) -> None:
        self.bot = bot
        self.name = name or str(getattr(bot, "name", type(bot).__name__))
        self._lock = threading.Lock()  # kernel bots are not required to be thread-safe
        self._current: tuple[str, int] | None = None

    def _start(self, ctx: _bot_pb2.DecisionContext, variant: Variant, player: int) -> None:
        # A kernel bot plays one game at a time; when decisions of several games interleave,
        # it is (re)started for the game at hand before each switch.
        if self._current != (ctx.game_id, player):
            self._current = (ctx.game_id, player)
            # The score before this game, which every request carries: a kernel bot weighs its
            # cube by it (the built-ins turn no dead cube, nardy.bots.Bot.dead_cube).
            set_match = getattr(self.bot, "set_match", None)
            if set_match is not None:
                match = ctx.match
                length = match.match_length or None  # 0: money play
                set_match(length, (match.score_self, match.score_opponent))
            start = getattr(self.bot, "start_game", None)
            if start is not None:
                start(variant, player)

    @staticmethod
    def _variant(ctx: _bot_pb2.DecisionContext) -> Variant:
        return load_variant(ctx.variant.name, dict(ctx.variant.options))

    def choose_play(self, request: _bot_pb2.ChoosePlayRequest) -> int | str:
        ctx = request.context
        variant = self._variant(ctx)
        player = convert.PLAYER_OF.get(ctx.color, WHITE)
        position = convert.position_from_proto(ctx.position)
        steps = tuple(ctx.segment.steps)
        plays = variant.legal_plays(position, steps)
        segment = Segment(
            player, steps, convert.kind_of_segment(ctx.segment.kind), ctx.segment.description
        )
        with self._lock:
            self._start(ctx, variant, player)
            index = int(self.bot.choose_play(PlayDecision(player, segment, position, plays)))
        chosen = plays[index]
        wanted = chosen.result.id()
        for legal in ctx.legal_plays:
            if legal.result_position_id == wanted:
                return legal.index
        return chosen.text

    def _cube(self, ctx: _bot_pb2.DecisionContext, me: int) -> Cube:
        owner: int | None = None
        if ctx.cube.owner == _game_pb2.CUBE_OWNER_SELF:
            owner = me
        elif ctx.cube.owner == _game_pb2.CUBE_OWNER_OPPONENT:
            owner = 1 - me
        return Cube(ctx.cube.value or 1, owner)

    def decide_double(self, request: _bot_pb2.DecideDoubleRequest) -> bool:
        ctx = request.context
        player = convert.PLAYER_OF.get(ctx.color, WHITE)
        decision = DoubleDecision(
            player, convert.position_from_proto(ctx.position), self._cube(ctx, player)
        )
        with self._lock:
            self._start(ctx, self._variant(ctx), player)
            return bool(self.bot.offer_double(decision))

    def respond_to_double(self, request: _bot_pb2.RespondToDoubleRequest) -> str:
        ctx = request.context
        player = convert.PLAYER_OF.get(ctx.color, WHITE)
        position = convert.position_from_proto(ctx.position)
        if not ctx.on_roll:
            position = self._variant(ctx).flip(position)  # the kernel shows the taker's view
        decision = TakeDecision(
            player,
            position,
            self._cube(ctx, player),
            request.beaver_allowed,
            request.answering_beaver,
        )
        with self._lock:
            self._start(ctx, self._variant(ctx), player)
            return str(self.bot.respond_to_double(decision))


def builtin(name: str, seed: int | None = None) -> BotBase:
    """A built-in bot by name (``random``, ``heuristic``) as a protocol bot."""
    try:
        from nardy.bots import make_bot  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        if name == "random":
            return RandomBot(seed)
        raise ValueError(f"unknown built-in bot {name!r} (nardy.bots is not available)") from None
    return KernelBot(make_bot(name, seed), name=name)


# -- the bot as a server -----------------------------------------------------------------------


_NO_TOKEN = b"Bearer \0"
"""What a server bot expects while its token file is missing or empty: no caller can match."""


class _BotServicer(_bot_pb2_grpc.BotServiceServicer):
    """Thin translator: request message → bot method → response message."""

    def __init__(self, bot: BotBase, token: str | Path | None) -> None:
        """:param token: the arena's token, or a file to read it from at each call (it may
        appear after the bot started: the token is known once the bot is registered)."""
        self.bot = bot
        self._token = token

    @property
    def _expected(self) -> bytes | None:
        token = self._token
        if isinstance(token, Path):
            try:
                token = token.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return _NO_TOKEN  # no file yet: no caller can match
            # An empty file is a token not written yet (or truncated), never "no check".
            return f"Bearer {token}".encode() if token else _NO_TOKEN
        return f"Bearer {token}".encode() if token else None

    def _check(self, context: grpc.ServicerContext) -> None:
        if self._expected is None:
            return
        metadata = dict(context.invocation_metadata())
        presented = metadata.get("authorization", "")
        if isinstance(presented, str):
            presented = presented.encode()
        # Constant time: how long the check takes must not tell how much of a guess was right.
        if not hmac.compare_digest(presented, self._expected):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "wrong or missing arena token")

    def GetInfo(
        self, request: _bot_pb2.GetInfoRequest, context: grpc.ServicerContext
    ) -> _bot_pb2.GetInfoResponse:
        self._check(context)
        return _bot_pb2.GetInfoResponse(info=self.bot.info())

    def ChoosePlay(
        self, request: _bot_pb2.ChoosePlayRequest, context: grpc.ServicerContext
    ) -> _bot_pb2.ChoosePlayResponse:
        self._check(context)
        return play_response(self.bot.choose_play(request))

    def DecideDouble(
        self, request: _bot_pb2.DecideDoubleRequest, context: grpc.ServicerContext
    ) -> _bot_pb2.DecideDoubleResponse:
        self._check(context)
        return double_response(self.bot.decide_double(request))

    def RespondToDouble(
        self, request: _bot_pb2.RespondToDoubleRequest, context: grpc.ServicerContext
    ) -> _bot_pb2.RespondToDoubleResponse:
        self._check(context)
        return take_response(self.bot.respond_to_double(request))


class BotServer:
    """A running ``BotService`` server (see :func:`serve_bot`)."""

    def __init__(self, server: grpc.Server, host: str, port: int) -> None:
        self.server = server
        self.host = host
        self.port = port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self, grace: float | None = None) -> None:
        self.server.stop(grace).wait()

    def wait(self) -> None:
        """Block until the server stops."""
        self.server.wait_for_termination()


def serve_bot(
    bot: BotBase,
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    token: str | Path | None = None,
    max_workers: int = 16,
) -> BotServer:
    """Start ``bot`` as a ``BotService`` server; ``port=0`` picks a free port (``.port``).

    With ``token``, calls without ``authorization: Bearer <token>`` are refused. A
    :class:`~pathlib.Path` is a file the token is read from at every call, so that a bot can be
    started before it is registered and given its token afterwards (until the file exists,
    every call is refused).
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="bot"),
        options=channel_options(),
    )
    _bot_pb2_grpc.add_BotServiceServicer_to_server(_BotServicer(bot, token), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port}")
    server.start()
    return BotServer(server, host, bound)


# -- the bot dials out --------------------------------------------------------------------------


class DialOutRejectedError(RuntimeError):
    """The arena refused the bot's token."""


def print_status(line: str) -> None:
    """The default sink of a dial-out client's connection lines: one line on standard error."""
    print(line, file=sys.stderr, flush=True)


def backoff_delays(
    initial: float, maximum: float, rand: Callable[[], float] = random.random
) -> Iterator[float]:
    """Jittered exponential back-off: the n-th delay is drawn from [d/2, d] with
    d = min(initial * 2**n, maximum), so that bots cut off together do not retry in step
    ("equal jitter"), yet never retry sooner than half the nominal delay."""
    nominal = initial
    while True:
        yield nominal / 2 + rand() * nominal / 2
        nominal = min(nominal * 2, maximum)


class DialOutClient:
    """Keeps one Connect stream to the arena open, answers requests (several games at once),
    and reconnects with ``resume_game_ids`` when the stream breaks. See :func:`dial_out`.

    Every connection, lost connection and retry is reported as one line to ``status``
    (default :func:`print_status`, standard error; ``None`` for silence)::

        connected to 127.0.0.1:50050 as bot-1-33ef150e
        connection lost: the arena is shutting down
        retrying in 0.03s (attempt 1)
        cannot reach the arena at 127.0.0.1:50050: UNAVAILABLE: failed to connect to all addresses; …
        retrying in 0.07s (attempt 2)

    Retries wait a jittered, exponentially growing delay (:func:`backoff_delays` over
    ``backoff = (initial, maximum)`` seconds) that starts afresh after every successful connection.
    """

    def __init__(
        self,
        bot: BotBase,
        address: str,
        token: str,
        *,
        workers: int = 8,
        reconnect: bool = True,
        backoff: tuple[float, float] = (0.05, 2.0),
        status: Callable[[str], None] | None = print_status,
    ) -> None:
        self.bot = bot
        self.address = address
        self.token = token
        self.reconnect = reconnect
        self.backoff = backoff
        self.status = status
        self.bot_id: str | None = None
        self.connected = threading.Event()
        self.connections = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._games: set[str] = set()
        self._games_lock = threading.Lock()
        self._pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dialout")
        self._thread: threading.Thread | None = None
        self._call: Any = None
        self._outbox: queue.Queue[_arena_pb2.ConnectRequest | None] | None = None
        self._welcomed = False
        self._farewell = ""

    # -- life cycle -----------------------------------------------------------------------------

    def start(self) -> DialOutClient:
        """Run in a background thread; returns self."""
        self._thread = threading.Thread(target=self._run_safely, name="dialout", daemon=True)
        self._thread.start()
        return self

    def _say(self, line: str) -> None:
        log.info("%s", line)
        if self.status is not None:
            self.status(line)

    def run(self) -> None:
        """Run in this thread until :meth:`stop` (or the token is rejected)."""
        delays = backoff_delays(*self.backoff)
        attempt = 0
        while not self._stop.is_set():
            self._welcomed, self._farewell = False, ""
            reason = ""
            try:
                self._session()
                reason = self._farewell or "the arena closed the stream"
            except DialOutRejectedError as exc:
                self._say(f"token rejected by the arena at {self.address}: {exc}")
                raise
            except grpc.RpcError as exc:
                code, details = rpc_status(exc)
                if code == grpc.StatusCode.UNAUTHENTICATED:
                    self._say(f"token rejected by the arena at {self.address}: {details}")
                    raise DialOutRejectedError(details) from None
                name = code.name if code is not None else "UNKNOWN"
                reason = self._farewell or f"{name}: {details}"
            self.connected.clear()
            if self._stop.is_set():
                return
            if self._welcomed:
                self._say(f"connection lost: {reason}")
                delays, attempt = backoff_delays(*self.backoff), 0
            else:
                self._say(f"cannot reach the arena at {self.address}: {reason}")
            if not self.reconnect:
                return
            delay = next(delays)
            attempt += 1
            self._say(f"retrying in {delay:.2f}s (attempt {attempt})")
            self._stop.wait(delay)

    def _run_safely(self) -> None:
        try:
            self.run()
        except BaseException as exc:
            self.error = exc
            self.connected.clear()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Close the stream and stop reconnecting."""
        self._stop.set()
        self.drop()
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def drop(self) -> None:
        """Break the current stream (the client reconnects unless stopped); for tests and demos."""
        outbox, call = self._outbox, self._call
        if outbox is not None:
            outbox.put(None)
        if call is not None:
            call.cancel()

    @property
    def active_games(self) -> set[str]:
        with self._games_lock:
            return set(self._games)

    # -- one stream -----------------------------------------------------------------------------

    def _session(self) -> None:
        outbox: queue.Queue[_arena_pb2.ConnectRequest | None] = queue.Queue()
        hello = _arena_pb2.Hello(
            token=self.token, resume_game_ids=sorted(self.active_games), info=self.bot.info()
        )
        outbox.put(_arena_pb2.ConnectRequest(hello=hello))

        def requests() -> Iterator[_arena_pb2.ConnectRequest]:
            while True:
                item = outbox.get()
                if item is None:
                    return
                yield item

        with grpc.insecure_channel(self.address, options=channel_options()) as channel:
            stub = _arena_pb2_grpc.ArenaServiceStub(channel)
            call = stub.Connect(requests())
            self._call, self._outbox = call, outbox
            self.connections += 1
            try:
                for message in call:
                    self._handle(message, outbox)
            finally:
                outbox.put(None)
                self._call = self._outbox = None

    def _handle(
        self,
        message: _arena_pb2.ConnectResponse,
        outbox: queue.Queue[_arena_pb2.ConnectRequest | None],
    ) -> None:
        which = message.WhichOneof("message")
        if which == "welcome":
            self.bot_id = message.welcome.bot_id
            self._welcomed = True
            resumed = len(message.welcome.resumed_game_ids)
            self._say(
                f"connected to {self.address} as {self.bot_id}"
                + (f" (resuming {resumed} games)" if resumed else "")
            )
            self.connected.set()
        elif which == "decision_request":
            request = message.decision_request
            self._pool.submit(self._answer, request, outbox)
        elif which == "game_ended":
            with self._games_lock:
                self._games.discard(message.game_ended.game_id)
            self.bot.game_ended(message.game_ended)
        elif which == "error":
            error = message.error
            if error.code == _arena_pb2.ERROR_CODE_UNAUTHENTICATED:
                raise DialOutRejectedError(error.message)
            if error.fatal:
                self._farewell = error.message  # the reason the stream is about to end
            log.info("arena error %s: %s", error.code, error.message)

    def _answer(
        self,
        request: _arena_pb2.DecisionRequest,
        outbox: queue.Queue[_arena_pb2.ConnectRequest | None],
    ) -> None:
        which = request.WhichOneof("request")
        answer = _arena_pb2.DecisionAnswer()
        try:
            if which == "choose_play":
                ctx = request.choose_play.context
                answer.choose_play.CopyFrom(
                    play_response(self.bot.choose_play(request.choose_play))
                )
            elif which == "decide_double":
                ctx = request.decide_double.context
                answer.decide_double.CopyFrom(
                    double_response(self.bot.decide_double(request.decide_double))
                )
            elif which == "respond_to_double":
                ctx = request.respond_to_double.context
                answer.respond_to_double.CopyFrom(
                    take_response(self.bot.respond_to_double(request.respond_to_double))
                )
            else:
                return
        except Exception:
            log.exception("bot %s failed a decision", self.bot.name)
            return  # no answer: the arena's clock decides
        with self._games_lock:
            self._games.add(ctx.game_id)
        answer.game_id = ctx.game_id
        answer.sequence = ctx.sequence
        outbox.put(_arena_pb2.ConnectRequest(answer=answer))


def dial_out(
    bot: BotBase,
    arena_address: str,
    token: str,
    *,
    workers: int = 8,
    reconnect: bool = True,
    status: Callable[[str], None] | None = print_status,
) -> DialOutClient:
    """A :class:`DialOutClient` for ``bot``; call ``.run()`` to block or ``.start()`` for a thread.

    ``status`` receives the connection lines (connected, lost, retrying); default: standard error.
    """
    return DialOutClient(
        bot, arena_address, token, workers=workers, reconnect=reconnect, status=status
    )
