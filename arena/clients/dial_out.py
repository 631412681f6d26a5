"""The arena's end of the dial-out transport: one :class:`DialOutHub` per dial-out bot.

A hub is the bot's :class:`~nardy.arena.clients.bot_client.BotClient`. Games call :meth:`DialOutHub.choose_play`
and friends from their own threads; the hub puts the request on the bot's current Connect stream
(:class:`Connection`) and waits for the matching answer. Pending requests outlive a stream: when
the bot reconnects (``Hello`` again) they are re-sent with their original sequence numbers, and an
answer is only accepted for the ``(game_id, sequence)`` that is pending — everything else is
stale and ignored. A bot that sends many unsolicited messages is cut off (``flood``); one that
sends undecodable bytes breaks the protocol (``malformed``); one that stays away longer than the
reconnect grace is ``disconnect``-ed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import Message

from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import BotClient
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.bots.faults import (
    BotDisconnectedError,
    BotError,
    BotFloodError,
    BotMalformedError,
    BotTimeoutError,
)

__all__ = ["Connection", "DialOutHub", "FloodLimit", "Undecodable"]

_M = TypeVar("_M", bound=Message)


class Undecodable:
    """A stream message that could not be decoded (produced by the server's safe deserializer)."""

    __slots__ = ("error", "size")

    def __init__(self, size: int, error: str) -> None:
        self.size = size
        self.error = error


@dataclass(frozen=True, slots=True)
class FloodLimit:
    """A token bucket for unsolicited messages (stale answers) on one stream."""

    burst: int = 100
    per_second: float = 20.0


class Connection:
    """One accepted Connect stream: an outbox the servicer's generator drains (``None`` ends
    the stream)."""

    def __init__(
        self,
        flood: FloodLimit,
        put: Callable[[_arena_pb2.ConnectResponse | None], None] | None = None,
    ) -> None:
        """:param put: where messages go (the served arena's event loop; it is called from game
        threads, so it must be thread-safe); None: :attr:`outbox`, a thread-safe queue."""
        self.outbox: queue.Queue[_arena_pb2.ConnectResponse | None] = queue.Queue()
        self._put = put or self.outbox.put
        self.closed = False
        self.abort: tuple[str, str] | None = None
        """(gRPC status code name, details) to end the stream with, after a fatal Error."""
        self._lock = threading.Lock()
        self._flood = flood
        self._tokens = float(flood.burst)
        self._refilled = time.monotonic()

    def send(self, message: _arena_pb2.ConnectResponse) -> None:
        with self._lock:
            if not self.closed:
                self._put(message)

    def close(
        self,
        code: int = 0,
        message: str = "",
        status: str = "",
    ) -> None:
        """Close the stream, first sending a fatal ``Error`` when ``code`` is given."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if code:
                error = _arena_pb2.Error(code=code, message=message, fatal=True)  # type: ignore[arg-type]
                self._put(_arena_pb2.ConnectResponse(error=error))
                self.abort = (status, message) if status else None
            self._put(None)

    def take_flood_token(self) -> bool:
        """Charge one unsolicited message; False when the bucket is empty."""
        now = time.monotonic()
        self._tokens = min(
            float(self._flood.burst), self._tokens + (now - self._refilled) * self._flood.per_second
        )
        self._refilled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class _Pending:
    __slots__ = ("answer", "deadline", "error", "game_id", "kind", "message", "sequence")

    def __init__(
        self,
        game_id: str,
        sequence: int,
        kind: str,
        message: _arena_pb2.DecisionRequest,
        deadline: float,
    ) -> None:
        self.game_id = game_id
        self.sequence = sequence
        self.kind = kind
        self.message = message
        self.deadline = deadline
        self.answer: Message | None = None
        self.error: BotError | None = None


class DialOutHub(BotClient):
    """All of one dial-out bot's games, over whichever stream it has open now."""

    def __init__(
        self,
        bot_id: str,
        *,
        reconnect_grace: float = 5.0,
        flood: FloodLimit | None = None,
        keep_ended: int = 1000,
    ) -> None:
        self.bot_id = bot_id
        self.reconnect_grace = reconnect_grace
        self.flood = flood or FloodLimit()
        self._cond = threading.Condition()
        self._conn: Connection | None = None
        self._away_since = time.monotonic()
        self._pending: dict[str, _Pending] = {}
        self._ended: OrderedDict[str, _arena_pb2.GameEnded] = OrderedDict()
        self._keep_ended = keep_ended
        self.connections = 0
        self.stale_answers = 0
        self.floods = 0
        self.protocol_errors = 0

    @property
    def connected(self) -> bool:
        return self._conn is not None

    # -- streams ----------------------------------------------------------------------------------

    def attach(self, conn: Connection, hello: _arena_pb2.Hello) -> None:
        """Make ``conn`` the bot's stream: welcome, re-send pending requests, report ended games."""
        with self._cond:
            old, self._conn = self._conn, conn
            self.connections += 1
            if old is not None:
                old.close(
                    _arena_pb2.ERROR_CODE_REPLACED, "a new stream replaced this one", "ABORTED"
                )
            now = time.monotonic()
            welcome = _arena_pb2.Welcome(
                bot_id=self.bot_id,
                resumed_game_ids=sorted(self._pending),
                reconnect_grace=convert.duration(self.reconnect_grace),
            )
            conn.send(_arena_pb2.ConnectResponse(welcome=welcome))
            for pending in self._pending.values():
                pending.message.answer_within.CopyFrom(convert.duration(pending.deadline - now))
                conn.send(_arena_pb2.ConnectResponse(decision_request=pending.message))
            for game_id in hello.resume_game_ids:
                ended = self._ended.get(game_id)
                if ended is not None:
                    conn.send(_arena_pb2.ConnectResponse(game_ended=ended))
            self._cond.notify_all()

    def detach(self, conn: Connection) -> None:
        """The stream ``conn`` ended (either side); the reconnect grace starts."""
        conn.close()
        with self._cond:
            if self._conn is conn:
                self._conn = None
                self._away_since = time.monotonic()
                self._cond.notify_all()

    def close_stream(self, code: int, message: str, status: str) -> None:
        """Close the current stream with a fatal error (e.g. the arena shuts down)."""
        with self._cond:
            conn = self._conn
        if conn is not None:
            conn.close(code, message, status)
            self.detach(conn)

    def shut_down(self) -> None:
        """Close the current stream because the arena shuts down: the bot is told so
        (``ERROR_CODE_SHUTTING_DOWN``, ending the stream ``UNAVAILABLE``) and may reconnect to
        the arena's next process."""
        self.close_stream(
            _arena_pb2.ERROR_CODE_SHUTTING_DOWN, "the arena is shutting down", "UNAVAILABLE"
        )

    def on_message(
        self, conn: Connection, message: _arena_pb2.ConnectRequest | Undecodable
    ) -> None:
        """Handle one message the bot sent on ``conn`` after its Hello."""
        with self._cond:
            if conn is not self._conn:
                return  # a replaced stream; its messages no longer count
            if isinstance(message, Undecodable) or message.WhichOneof("message") != "answer":
                self.protocol_errors += 1
                what = (
                    f"undecodable message ({message.size} bytes): {message.error}"
                    if isinstance(message, Undecodable)
                    else "a second Hello"
                    if message.WhichOneof("message") == "hello"
                    else "an empty message"
                )
                self._fail_all(BotMalformedError(f"protocol violation: {what}"))
                conn.close(
                    _arena_pb2.ERROR_CODE_PROTOCOL,
                    f"protocol violation: {what}",
                    "INVALID_ARGUMENT",
                )
                self._drop(conn)
                return
            answer = message.answer
            pending = self._pending.get(answer.game_id)
            if pending is None or pending.sequence != answer.sequence or pending.answer is not None:
                self.stale_answers += 1
                if not conn.take_flood_token():
                    self.floods += 1
                    self._fail_all(BotFloodError("too many unsolicited messages; stream closed"))
                    conn.close(
                        _arena_pb2.ERROR_CODE_PROTOCOL,
                        "flooding: too many unsolicited messages",
                        "RESOURCE_EXHAUSTED",
                    )
                    self._drop(conn)
                    return
                conn.send(
                    _arena_pb2.ConnectResponse(
                        error=_arena_pb2.Error(
                            code=_arena_pb2.ERROR_CODE_STALE_ANSWER,
                            message="no such pending decision; answer ignored",
                            game_id=answer.game_id,
                            sequence=answer.sequence,
                        )
                    )
                )
                return
            which = answer.WhichOneof("answer")
            if which != pending.kind:
                pending.error = BotMalformedError(f"answered {which} to a {pending.kind} request")
            else:
                pending.answer = getattr(answer, pending.kind)
            self._cond.notify_all()

    def _drop(self, conn: Connection) -> None:
        if self._conn is conn:
            self._conn = None
            self._away_since = time.monotonic()
        self._cond.notify_all()

    def _fail_all(self, error: BotError) -> None:
        for pending in self._pending.values():
            if pending.answer is None and pending.error is None:
                pending.error = error
        self._cond.notify_all()

    # -- BotClient --------------------------------------------------------------------------------

    def _ask(self, kind: str, request: Any, timeout: float, expected: type[_M]) -> _M:
        ctx: _bot_pb2.DecisionContext = request.context
        message = _arena_pb2.DecisionRequest(answer_within=convert.duration(timeout))
        getattr(message, kind).CopyFrom(request)
        now = time.monotonic()
        pending = _Pending(ctx.game_id, ctx.sequence, kind, message, now + timeout)
        with self._cond:
            self._pending[ctx.game_id] = pending
            try:
                if self._conn is not None:
                    self._conn.send(_arena_pb2.ConnectResponse(decision_request=message))
                while True:
                    if pending.error is not None:
                        raise pending.error
                    if pending.answer is not None:
                        assert isinstance(pending.answer, expected)
                        return pending.answer
                    now = time.monotonic()
                    away_limit = (
                        self._away_since + self.reconnect_grace if self._conn is None else None
                    )
                    if away_limit is not None and now >= away_limit:
                        raise BotDisconnectedError(
                            f"not connected for {self.reconnect_grace:.3f}s (reconnect grace)"
                        )
                    if now >= pending.deadline:
                        if self._conn is None:
                            raise BotDisconnectedError("not connected when the deadline passed")
                        raise BotTimeoutError(f"no answer within {timeout:.3f}s")
                    wake = (
                        pending.deadline
                        if away_limit is None
                        else min(pending.deadline, away_limit)
                    )
                    self._cond.wait(wake - now)
            finally:
                if self._pending.get(ctx.game_id) is pending:
                    del self._pending[ctx.game_id]

    def choose_play(
        self, request: _bot_pb2.ChoosePlayRequest, timeout: float
    ) -> _bot_pb2.ChoosePlayResponse:
        return self._ask("choose_play", request, timeout, _bot_pb2.ChoosePlayResponse)

    def decide_double(
        self, request: _bot_pb2.DecideDoubleRequest, timeout: float
    ) -> _bot_pb2.DecideDoubleResponse:
        return self._ask("decide_double", request, timeout, _bot_pb2.DecideDoubleResponse)

    def respond_to_double(
        self, request: _bot_pb2.RespondToDoubleRequest, timeout: float
    ) -> _bot_pb2.RespondToDoubleResponse:
        return self._ask("respond_to_double", request, timeout, _bot_pb2.RespondToDoubleResponse)

    def game_ended(self, message: _arena_pb2.GameEnded) -> None:
        with self._cond:
            self._ended[message.game_id] = message
            while len(self._ended) > self._keep_ended:
                self._ended.popitem(last=False)
            conn = self._conn
        if conn is not None:
            conn.send(_arena_pb2.ConnectResponse(game_ended=message))
