"""The arena's gate: who may open a stream, and admin calls refused before their body is read.

The arena serves on a ``grpc.aio`` server (:class:`~nardy.arena.server.ArenaServer`): a
long-lived stream (``WatchTournament``, a dial-out bot's ``Connect``, health ``Watch``,
reflection) is a coroutine, not a worker thread, so open streams cannot starve the unary calls
(``GetStandings``, ``ListBots``, the admin's calls), which run on a thread pool of their own.
What a stream still costs (memory, a share of the event loop) is bounded here:

* :class:`StreamLimiter` counts open streams per peer (the caller's IP address, not its port:
  a client opens as many ports as it likes) and in all. The stream over a limit is refused with
  ``RESOURCE_EXHAUSTED``; the streams already open and every unary call are untouched. A dial-out
  bot's ``Connect`` counts while it is anonymous (before its ``Hello`` is accepted); once the
  token is known it no longer counts (a bot holds one stream, and bots are registered by the
  admin, :attr:`~nardy.arena.limits.ArenaLimits.max_registered_bots`).
* :class:`Gate` (a server interceptor) applies the limiter to every streaming method but
  ``Connect`` (which does it itself, see above), and checks the admin token of the admin
  methods from the call's metadata *before* the request message is read: a refused call is
  answered by a request-streaming handler that never reads it, so an anonymous caller cannot
  make the arena buffer large bodies of calls it may not make.
"""

from __future__ import annotations

import inspect
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import grpc
from grpc import aio

from nardy.arena.auth import Caller, bearer_token
from nardy.arena.limits import DEFAULT_MAX_STREAMS, DEFAULT_MAX_STREAMS_PER_PEER

__all__ = [
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_MAX_STREAMS_PER_PEER",
    "Gate",
    "StreamLimiter",
    "peer_host",
]


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer string: ``ipv4:1.2.3.4:5678`` → ``1.2.3.4``,
    ``ipv6:[::1]:5678`` → ``::1``; anything else (a Unix socket) is kept whole."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        host = rest.rpartition(":")[0] or rest
        return host.removeprefix("[").removesuffix("]")
    return peer


class StreamLimiter:
    """Counts open streams per peer and in all; thread-safe."""

    def __init__(self, max_streams: int, max_per_peer: int) -> None:
        if max_streams < 1 or max_per_peer < 1:
            raise ValueError("stream limits must be at least 1")
        self.max_streams = max_streams
        self.max_per_peer = max_per_peer
        self._lock = threading.Lock()
        self._per_peer: Counter[str] = Counter()
        self._total = 0
        self.refused = 0
        """Streams refused so far (for the operator and the tests)."""

    @property
    def open(self) -> int:
        with self._lock:
            return self._total

    def acquire(self, peer: str) -> str | None:
        """Count a new stream of ``peer``; None when allowed, else why not (one line)."""
        with self._lock:
            if self._total >= self.max_streams:
                self.refused += 1
                return f"the arena has {self._total} streams open, its limit (--max-streams)"
            if self._per_peer[peer] >= self.max_per_peer:
                self.refused += 1
                return (
                    f"{self._per_peer[peer]} streams are open from {peer}, the limit per peer "
                    "(--max-streams-per-peer); close one first"
                )
            self._per_peer[peer] += 1
            self._total += 1
            return None

    def release(self, peer: str) -> None:
        with self._lock:
            if self._per_peer[peer] > 0:
                self._per_peer[peer] -= 1
                self._total -= 1
            if self._per_peer[peer] == 0:
                del self._per_peer[peer]


class _Slot:
    """One counted stream; :meth:`release` is idempotent (a Connect releases at its Hello)."""

    def __init__(self, limiter: StreamLimiter, peer: str) -> None:
        self._limiter = limiter
        self._peer = peer
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limiter.release(self._peer)


async def open_slot(limiter: StreamLimiter, context: aio.ServicerContext[Any, Any]) -> _Slot:
    """Count the stream of ``context`` or abort it with ``RESOURCE_EXHAUSTED``."""
    peer = peer_host(context.peer())
    refusal = limiter.acquire(peer)
    if refusal is not None:
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
    return _Slot(limiter, peer)


def _limited(behaviour: Callable[..., Any], limiter: StreamLimiter) -> Callable[..., Any]:
    """``behaviour`` (a streaming handler: an async generator or a coroutine that writes with
    ``context.write``) counted against the limiter while it runs. A plain function (run on the
    thread pool by ``grpc.aio``) is returned as it is: every stream of the arena is async."""
    if not (inspect.isasyncgenfunction(behaviour) or inspect.iscoroutinefunction(behaviour)):
        return behaviour
    if inspect.isasyncgenfunction(behaviour):

        async def generator(
            request: Any, context: aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            slot = await open_slot(limiter, context)
            try:
                async for item in behaviour(request, context):
                    yield item
            finally:
                slot.release()

        return generator

    async def coroutine(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        slot = await open_slot(limiter, context)
        try:
            return await behaviour(request, context)
        finally:
            slot.release()

    return coroutine


def _refusal(code: grpc.StatusCode, details: str) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler that ends the call at once without reading its request message."""

    async def refuse(request_iterator: Any, context: aio.ServicerContext[Any, Any]) -> None:
        await context.abort(code, details)

    return grpc.stream_unary_rpc_method_handler(refuse)


class Gate(aio.ServerInterceptor):
    """Stream limits for every streaming method, and the admin check of the admin methods
    before their request is read (see the module doc)."""

    def __init__(
        self,
        limiter: StreamLimiter,
        *,
        admin_methods: Iterable[str],
        caller: Callable[[str | None], Caller],
        self_limited: Iterable[str] = (),
    ) -> None:
        """:param admin_methods: full method names (``/pkg.Service/Method``) that need the
            admin token.
        :param caller: who presents a bearer token (None: no token), as
            :meth:`~nardy.arena.auth.Authenticator.caller` says.
        :param self_limited: streaming methods that count their streams themselves."""
        self.limiter = limiter
        self._admin = frozenset(admin_methods)
        self._caller = caller
        self._self_limited = frozenset(self_limited)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = handler_call_details.method
        if method in self._admin:
            who = self._caller(bearer_token(handler_call_details.invocation_metadata or ()))
            if who == "bot":
                return _refusal(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "a bot's token cannot do this; use the admin token",
                )
            if who != "admin":
                return _refusal(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "this call needs the admin token (authorization: Bearer <token>)"
                    if who == "anonymous"
                    else "unknown token",
                )
        handler: grpc.RpcMethodHandler[Any, Any] | None = await continuation(handler_call_details)
        if handler is None or method in self._self_limited:
            return handler  # type: ignore[return-value]
        if handler.response_streaming and handler.request_streaming:
            assert handler.stream_stream is not None
            return handler._replace(stream_stream=_limited(handler.stream_stream, self.limiter))  # type: ignore[attr-defined, no-any-return]
        if handler.response_streaming:
            assert handler.unary_stream is not None
            return handler._replace(unary_stream=_limited(handler.unary_stream, self.limiter))  # type: ignore[attr-defined, no-any-return]
        if handler.request_streaming:
            assert handler.stream_unary is not None
            return handler._replace(stream_unary=_limited(handler.stream_unary, self.limiter))  # type: ignore[attr-defined, no-any-return]
        return handler
