"""The arena's gate: who may open a stream, which unary calls are read when, and the admin's
calls refused before their body is read.

The arena serves on a ``grpc.aio`` server (:class:`~nardy.arena.service.server.ArenaServer`): a
long-lived stream (``WatchTournament``, a dial-out bot's ``Connect``, health ``Watch``,
reflection) is a coroutine, not a worker thread, so open streams cannot starve the unary calls
(``GetStandings``, ``ListBots``, the admin's calls), which run on a thread pool of their own.
What streams and calls still cost (memory, a share of the event loop) is bounded here, per peer
(the caller's IP address, not its port: a client opens as many ports as it likes) and in all,
because a flood comes from many addresses (issue 34):

* :class:`StreamLimiter` counts open streams. The stream over a limit is refused with
  ``RESOURCE_EXHAUSTED``; the streams already open and every unary call are untouched.
* :class:`PendingHellos`: a dial-out bot's ``Connect`` before its ``Hello`` is accepted counts
  in a budget of its own (not in ``--max-streams``: silent streams never take the watchers'
  places), must send Hello before a deadline, and when the budget is full the newcomer takes the
  place of the oldest silent stream of the address that holds the most. Once the token is known
  it no longer counts (a bot holds one stream, and bots are registered by the admin).
* :class:`CallQueue`: a unary call that is not the admin's is admitted *before its request is
  read*; at most ``--max-calls`` are read and run at once, the others wait unread and take turns
  address by address. Its request is refused unparsed over 64 KiB. The admin's unary calls run
  on threads of their own (``_admin_lane``); :class:`OperatorGate` guards the operator's own
  listener.
* :class:`Gate` (a server interceptor) applies all of this and checks the admin token of the
  admin methods from the call's metadata *before* the request message is read: a refused call
  is answered by a request-streaming handler that never reads it, so an anonymous caller cannot
  make the arena buffer large bodies of calls it may not make.
* :class:`Allocator` hands the memory of freed request bodies back to the system (glibc).
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import threading
from collections import Counter, deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from concurrent.futures import Executor
from typing import Any

import grpc
from grpc import aio

from nardy.arena.service.auth import Caller, bearer_token
from nardy.arena.service.limits import (
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_PEER,
    MAX_ANONYMOUS_REQUEST_BYTES,
)

__all__ = [
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_MAX_STREAMS_PER_PEER",
    "Allocator",
    "CallQueue",
    "Gate",
    "OperatorGate",
    "PendingHellos",
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
    """Counts open streams (or calls in progress) per peer and in all; thread-safe."""

    def __init__(
        self,
        max_streams: int,
        max_per_peer: int,
        *,
        noun: str = "streams",
        flags: tuple[str, str] = ("--max-streams", "--max-streams-per-peer"),
    ) -> None:
        """:param noun: what is counted, and ``flags`` the options that set the two limits
        (for the refusal's message)."""
        if max_streams < 1 or max_per_peer < 1:
            raise ValueError("stream limits must be at least 1")
        self.max_streams = max_streams
        self.max_per_peer = max_per_peer
        self.noun = noun
        self.flags = flags
        self._lock = threading.Lock()
        self._per_peer: Counter[str] = Counter()
        self._total = 0
        self.refused = 0
        """Streams refused so far (for the operator and the tests)."""

    @property
    def open(self) -> int:
        with self._lock:
            return self._total

    def held_by(self, peer: str) -> int:
        """Streams (or calls) of ``peer`` counted now."""
        with self._lock:
            return self._per_peer[peer]

    def acquire(self, peer: str) -> str | None:
        """Count a new stream of ``peer``; None when allowed, else why not (one line)."""
        with self._lock:
            if self._total >= self.max_streams:
                self.refused += 1
                return f"the arena has {self._total} {self.noun} open, its limit ({self.flags[0]})"
            if self._per_peer[peer] >= self.max_per_peer:
                self.refused += 1
                return (
                    f"{self._per_peer[peer]} {self.noun} are open from {peer}, the limit per "
                    f"peer ({self.flags[1]}); wait for one to end"
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


class CallQueue:
    """Unary calls that are not the admin's: at most ``max_running`` have their request read
    and run at once, from everyone; the others wait, *unread*, their turn taken address by
    address (round robin), so that one address (or a few) flooding the arena delays the other
    callers by one call each, not by the whole flood.

    Per address at most ``max_per_peer`` calls running or waiting; in all at most
    ``max_waiting`` waiting (a waiting call costs a coroutine and the stream's receive window,
    64 KiB). A call over either is refused with ``RESOURCE_EXHAUSTED``. Bounding the calls
    *read* (not only those running on a worker, as before issue 34) is what bounds the memory
    anonymous callers can claim: ``max_running`` request bodies, whatever the number of their
    addresses. Used on the server's event loop only.
    """

    def __init__(self, max_running: int, max_per_peer: int, max_waiting: int) -> None:
        if max_running < 1 or max_per_peer < 1 or max_waiting < 0:
            raise ValueError("call limits must be at least 1 (waiting: 0)")
        self.max_running = max_running
        self.max_per_peer = max_per_peer
        self.max_waiting = max_waiting
        self.running = 0
        self.waiting = 0
        self._per_peer: Counter[str] = Counter()
        self._queues: dict[str, deque[asyncio.Future[None]]] = {}
        """Waiting calls per address, the addresses in turn order (a dict keeps order)."""
        self.refused = 0
        self.acquired = 0
        """Calls admitted so far (the memory trimmer looks whether calls came)."""

    def _refuse(self, peer: str) -> str | None:
        if self._per_peer[peer] >= self.max_per_peer:
            return (
                f"{self._per_peer[peer]} calls are in progress or waiting from {peer}, the limit "
                "per peer (--max-calls-per-peer); wait for one to end"
            )
        if self.running >= self.max_running and self.waiting >= self.max_waiting:
            return (
                f"{self.running} calls are running and {self.waiting} waiting, the arena's "
                "limit (--max-calls); try again later"
            )
        return None

    async def enter(self, peer: str) -> str | None:
        """Wait for this call's turn; None once it may read its request and run (then
        :meth:`leave` when it ends), else why it is refused (one line)."""
        refusal = self._refuse(peer)
        if refusal is not None:
            self.refused += 1
            return refusal
        self._per_peer[peer] += 1
        if self.running < self.max_running and not self.waiting:
            self.running += 1
            self.acquired += 1
            return None
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(peer, deque()).append(turn)
        self.waiting += 1
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.leave(peer)  # admitted as it was cancelled: pass the turn on
            else:
                self._forget(peer, turn)
            raise
        return None

    def _forget(self, peer: str, turn: asyncio.Future[None]) -> None:
        """A waiting call that went away (its caller cancelled it)."""
        queue = self._queues.get(peer)
        if queue is not None and turn in queue:
            queue.remove(turn)
            self.waiting -= 1
            if not queue:
                del self._queues[peer]
        self._drop(peer)

    def _drop(self, peer: str) -> None:
        self._per_peer[peer] -= 1
        if self._per_peer[peer] <= 0:
            del self._per_peer[peer]

    def leave(self, peer: str) -> None:
        """A call admitted by :meth:`enter` ended: its place goes to the next address's
        oldest waiting call."""
        self._drop(peer)
        self.running -= 1
        while self._queues and self.running < self.max_running:
            next_peer = next(iter(self._queues))
            queue = self._queues.pop(next_peer)
            turn = queue.popleft()
            self.waiting -= 1
            if queue:
                self._queues[next_peer] = queue  # to the end of the round
            if turn.cancelled():
                continue
            self.running += 1
            self.acquired += 1
            turn.set_result(None)


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_MMAP_THRESHOLD = 128 * 1024


class Allocator:
    """The C allocator's side of the request bodies (glibc only; elsewhere it does nothing).

    A request is read into native buffers, copied into a ``bytes`` and parsed; all of it is
    freed when the call ends, but glibc's malloc keeps freed memory for reuse: its threshold for
    giving large blocks their own mapping rises with every large block freed (so 4 MB bodies
    end up on the heap), and freed small blocks (the transport's frames) stay in each thread's
    arena. After a flood of large anonymous calls the arena would stay hundreds of MB above
    idle. :meth:`tune` fixes the threshold at 128 KiB (a large body is mapped, and unmapped when
    freed), and :meth:`trim` (``malloc_trim``) hands freed pages back, run by the server a few
    seconds after calls came.
    """

    def __init__(self) -> None:
        self._libc: Any = None
        try:
            libc = ctypes.CDLL(None)
            if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt"):
                self._libc = libc
        except OSError:
            pass

    def tune(self) -> bool:
        return self._libc is not None and bool(
            self._libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
        )

    def trim(self) -> None:
        if self._libc is not None:
            self._libc.malloc_trim(0)


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


class PendingHellos:
    """``Connect`` streams that have not said ``Hello`` yet: a budget of their own and a
    deadline.

    Such a stream is anonymous and costs a coroutine and its buffers, so it is counted here
    (per peer and in all) and *not* against ``--max-streams``: streams nobody has
    authenticated can never take the places of watchers. A stream whose first message has not
    arrived within ``timeout`` seconds is ended with ``DEADLINE_EXCEEDED`` (an honest bot
    sends Hello at once). When the budget is full, a new ``Connect`` takes the place of the
    oldest silent stream of the address that holds the most of them (if that address holds
    more than the newcomer's would), which is ended with ``RESOURCE_EXHAUSTED``; otherwise the
    newcomer is refused. So an attacker who fills the budget from many addresses (each within
    its per-peer limit) ends up with an equal share per address and cannot keep an honest bot
    from connecting: the honest address holds one silent stream, for the milliseconds until its
    Hello, and is never the one evicted unless the budget is spread over more addresses than
    it has places. Used on the server's event loop only.
    """

    def __init__(self, max_pending: int, max_per_peer: int, timeout: float) -> None:
        if timeout <= 0:
            raise ValueError("the Hello deadline must be positive")
        self.limiter = StreamLimiter(
            max_pending,
            max_per_peer,
            noun="Connect streams without a Hello",
            flags=("--max-pending-hellos", "--max-streams-per-peer"),
        )
        self.timeout = timeout
        self._waiting: dict[str, dict[_Slot, asyncio.Event]] = {}
        """Silent streams per address, oldest first (a dict keeps insertion order)."""
        self.timed_out = 0
        self.evicted = 0

    def _forget(self, peer: str, slot: _Slot) -> None:
        mine = self._waiting.get(peer)
        if mine is not None:
            mine.pop(slot, None)
            if not mine:
                del self._waiting[peer]

    def _evict_for(self, peer: str) -> None:
        """The budget is full: end the oldest silent stream of the address holding the most,
        if it holds more than ``peer`` would with one more."""
        if not self._waiting:
            return
        victim = max(self._waiting, key=lambda p: len(self._waiting[p]))
        if len(self._waiting[victim]) <= self.limiter.held_by(peer) + 1:
            return
        oldest, replaced = next(iter(self._waiting[victim].items()))
        self._forget(victim, oldest)
        replaced.set()
        oldest.release()
        self.evicted += 1

    async def first_message(
        self, request_iterator: AsyncIterable[Any], context: aio.ServicerContext[Any, Any]
    ) -> tuple[Any, _Slot, AsyncIterator[Any]]:
        """The stream's first message (None if it ended first), its slot, still counted
        (release it once the Hello is accepted: the stream is then a bot's), and the iterator
        of the messages that follow. Aborts the call when it is refused, replaced, or silent
        past the deadline."""
        peer = peer_host(context.peer())
        limiter = self.limiter
        refusal = limiter.acquire(peer)
        if refusal is not None and limiter.held_by(peer) < limiter.max_per_peer:
            self._evict_for(peer)
            refusal = limiter.acquire(peer)
        if refusal is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        slot = _Slot(limiter, peer)
        replaced = asyncio.Event()
        self._waiting.setdefault(peer, {})[slot] = replaced

        requests: list[AsyncIterator[Any]] = []

        async def first() -> Any:
            # The iterator is made here, not before: a call refused or replaced before this
            # runs never creates it (gRPC's, never iterated, is reported as never awaited).
            requests.append(request_iterator.__aiter__())
            return await requests[0].__anext__()

        read = asyncio.ensure_future(first())
        # A read cancelled at the deadline (or at the server's stop) may still end with the
        # stream's end or error: retrieve it so that asyncio does not log it as lost.
        read.add_done_callback(lambda f: f.cancelled() or f.exception())
        evicted = asyncio.ensure_future(replaced.wait())
        try:
            done, _ = await asyncio.wait(
                {read, evicted}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except BaseException:
            slot.release()
            raise
        finally:
            self._forget(peer, slot)
            evicted.cancel()
            if not read.done():
                read.cancel()
        if read in done:
            try:
                return read.result(), slot, requests[0]
            except StopAsyncIteration:
                slot.release()
                return None, slot, requests[0]  # the stream ended before a first message
            except BaseException:
                slot.release()
                raise
        slot.release()
        if replaced.is_set():
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many Connect streams without a Hello (--max-pending-hellos): this one, "
                "the oldest still silent of the address holding the most, made way for a "
                "newer one",
            )
        self.timed_out += 1
        await context.abort(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"no Hello within {self.timeout:g} s of opening the stream (--hello-timeout)",
        )
        raise AssertionError("unreachable: abort raises")


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


class _Aborted(Exception):
    """Raised in a worker thread by :meth:`_ThreadContext.abort`; the coroutine that waits for
    the thread ends the call with the status it carries."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _ThreadContext:
    """What a plain (thread-pool) handler sees of an aio call when :class:`Gate` runs it on a
    pool itself: the call's metadata, peer and deadline, and an ``abort`` that raises (as the
    synchronous ``grpc.ServicerContext.abort`` does) so that the handler stops where it is."""

    def __init__(self, context: aio.ServicerContext[Any, Any]) -> None:
        self._context = context

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return self._context.peer()

    def time_remaining(self) -> float | None:
        return self._context.time_remaining()

    def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise _Aborted(code, details)


async def _in_pool(
    behaviour: Callable[..., Any],
    request: Any,
    context: aio.ServicerContext[Any, Any],
    pool: Executor,
) -> Any:
    """Run the plain handler ``behaviour`` on ``pool`` and end the call as it says."""
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(pool, behaviour, request, _ThreadContext(context))
    except _Aborted as aborted:
        await context.abort(aborted.code, aborted.details)


class _TooLarge:
    """A request not parsed: larger than a caller without the admin token may send."""

    def __init__(self, size: int) -> None:
        self.size = size


def _counted_unary(
    handler: grpc.RpcMethodHandler[Any, Any],
    calls: CallQueue,
    pool: Executor,
    max_request_bytes: int = MAX_ANONYMOUS_REQUEST_BYTES,
) -> grpc.RpcMethodHandler[Any, Any]:
    """A unary call that is not the admin's, admitted by ``calls`` *before its request is
    read* (it waits for its turn unread, or is refused unread) and counted until it ends.
    ``grpc.aio`` reads a unary request before it calls the handler, so the call is served as a
    request-streaming one (the wire is the same for every arity): the handler is entered
    first, waits for its turn, then reads the one message and runs the plain handler on
    ``pool``. Counting only the calls running on a worker (before issue 34) let every address
    queue any number of calls whose bodies were already read: 10 addresses x 16 calls of
    4 MB took the arena from 68 to 1,956 MB."""
    assert handler.unary_unary is not None
    behaviour: Callable[..., Any] = handler.unary_unary  # a plain function or a coroutine
    # Every request a caller without the admin token may make is a few hundred bytes; a
    # larger one is not parsed (parsing would copy it once more).
    deserialize = _capped(handler.request_deserializer, max_request_bytes)

    async def call(
        request_iterator: AsyncIterator[Any], context: aio.ServicerContext[Any, Any]
    ) -> Any:
        peer = peer_host(context.peer())
        refusal = await calls.enter(peer)
        if refusal is not None:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        try:
            # context.read(), not the request iterator: an async generator left suspended
            # after its first message keeps that message's buffers until the garbage
            # collector finds it (4 MB requests: +500 MB retained, measured).
            request = await _read_request(context, max_request_bytes)
            if inspect.iscoroutinefunction(behaviour):  # health Check: holds no worker
                return await behaviour(request, context)
            return await _in_pool(behaviour, request, context, pool)
        finally:
            calls.leave(peer)

    return grpc.stream_unary_rpc_method_handler(
        call,
        request_deserializer=deserialize,
        response_serializer=handler.response_serializer,
    )


def _capped(
    parse: Callable[[bytes], Any] | None, max_request_bytes: int | None
) -> Callable[[bytes], Any]:
    """A request deserializer that does not parse a request over ``max_request_bytes`` (None:
    no cap) but returns :class:`_TooLarge` for the handler to refuse."""

    def deserialize(data: bytes) -> Any:
        if max_request_bytes is not None and len(data) > max_request_bytes:
            return _TooLarge(len(data))
        return data if parse is None else parse(data)

    return deserialize


async def _read_request(
    context: aio.ServicerContext[Any, Any], max_request_bytes: int | None
) -> Any:
    """The one request message of a call served as request-streaming, or the call aborted."""
    request = await context.read()
    if request is aio.EOF:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call sent no request")
    if isinstance(request, _TooLarge):
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"a request of {request.size} bytes; without the admin token at most "
            f"{max_request_bytes}",
        )
    return request


def _counted_stream(
    handler: grpc.RpcMethodHandler[Any, Any],
    limiter: StreamLimiter,
    *,
    anonymous: bool,
    max_request_bytes: int = MAX_ANONYMOUS_REQUEST_BYTES,
) -> grpc.RpcMethodHandler[Any, Any]:
    """A stream with one request (``WatchTournament``, ``ExportGames``, health ``Watch``)
    counted against the stream limits *before its request is read*, and for a caller without
    the admin token its request refused unparsed over ``max_request_bytes``. ``grpc.aio``
    reads a unary request before it calls the handler, and the handler keeps it for the
    stream's life: counted after the read, thousands of watch streams could each make the
    arena read (and keep) a 4 MiB request. Served as a bidirectional stream (the wire is the
    same), which reads its one request after counting."""
    assert handler.unary_stream is not None
    behaviour: Callable[..., Any] = handler.unary_stream  # a coroutine or async generator
    cap = max_request_bytes if anonymous else None
    deserialize = _capped(handler.request_deserializer, cap)
    served: Callable[..., Any]
    if inspect.isasyncgenfunction(behaviour):

        async def generator(
            request_iterator: AsyncIterator[Any], context: aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            slot = await open_slot(limiter, context)
            try:
                request = await _read_request(context, cap)
                async for item in behaviour(request, context):
                    yield item
            finally:
                slot.release()

        served = generator
    else:

        async def coroutine(
            request_iterator: AsyncIterator[Any], context: aio.ServicerContext[Any, Any]
        ) -> Any:
            slot = await open_slot(limiter, context)
            try:
                return await behaviour(await _read_request(context, cap), context)
            finally:
                slot.release()

        served = coroutine
    return grpc.stream_stream_rpc_method_handler(
        served, request_deserializer=deserialize, response_serializer=handler.response_serializer
    )


def _admin_lane(
    handler: grpc.RpcMethodHandler[Any, Any], pool: Executor
) -> grpc.RpcMethodHandler[Any, Any]:
    """The admin's unary call, run on the admin's own ``pool`` (not the workers anonymous
    callers can fill): under any flood of other calls the operator's wait only for each
    other and for the event loop."""
    behaviour = handler.unary_unary
    assert behaviour is not None

    async def call(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        return await _in_pool(behaviour, request, context, pool)

    return handler._replace(unary_unary=call)  # type: ignore[attr-defined, no-any-return]


def _refusal(code: grpc.StatusCode, details: str) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler that ends the call at once without reading its request message."""

    async def refuse(request_iterator: Any, context: aio.ServicerContext[Any, Any]) -> None:
        await context.abort(code, details)

    return grpc.stream_unary_rpc_method_handler(refuse)


class Gate(aio.ServerInterceptor):
    """Stream limits for every streaming method, the admin check of the admin methods before
    their request is read, and the two lanes of the unary calls (see the module doc)."""

    def __init__(
        self,
        limiter: StreamLimiter,
        *,
        admin_methods: Iterable[str],
        caller: Callable[[str | None], Caller],
        self_limited: Iterable[str] = (),
        calls: CallQueue | None = None,
        pool: Executor | None = None,
        admin_pool: Executor | None = None,
    ) -> None:
        """:param admin_methods: full method names (``/pkg.Service/Method``) that need the
            admin token.
        :param caller: who presents a bearer token (None: no token), as
            :meth:`~nardy.arena.service.auth.Authenticator.caller` says.
        :param self_limited: streaming methods that count their streams themselves.
        :param calls: admits the unary calls that are not the admin's before their request is
            read; they run on ``pool``. None: not limited.
        :param admin_pool: where the admin's unary calls run (None: with everyone's)."""
        if calls is not None and pool is None:
            raise ValueError("counted calls need the pool they run on")
        self.limiter = limiter
        self.calls = calls
        self._pool = pool
        self._admin_pool = admin_pool
        self._admin = frozenset(admin_methods)
        self._caller = caller
        self._self_limited = frozenset(self_limited)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = handler_call_details.method
        who = self._caller(bearer_token(handler_call_details.invocation_metadata or ()))
        if method in self._admin:
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
            if inspect.isasyncgenfunction(handler.unary_stream) or inspect.iscoroutinefunction(
                handler.unary_stream
            ):
                return _counted_stream(handler, self.limiter, anonymous=who != "admin")
            return handler._replace(unary_stream=_limited(handler.unary_stream, self.limiter))  # type: ignore[attr-defined, no-any-return]
        if handler.request_streaming:
            assert handler.stream_unary is not None
            return handler._replace(stream_unary=_limited(handler.stream_unary, self.limiter))  # type: ignore[attr-defined, no-any-return]
        behaviour = handler.unary_unary
        if behaviour is None:
            return handler
        if who == "admin":
            if self._admin_pool is None or inspect.iscoroutinefunction(behaviour):
                return handler  # an async handler holds no worker
            return _admin_lane(handler, self._admin_pool)
        if self.calls is not None:
            # Async ones too (health Check): what is counted is the request read.
            assert self._pool is not None
            return _counted_unary(handler, self.calls, self._pool)
        return handler


class OperatorGate(grpc.ServerInterceptor):
    """The operator's listener (a threaded ``grpc.server``) answers the admin token only:
    any other call is refused before its request is read, so the port stays the operator's
    even if it is reachable by others."""

    def __init__(self, caller: Callable[[str | None], Caller]) -> None:
        self._caller = caller

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Any],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        who = self._caller(bearer_token(handler_call_details.invocation_metadata or ()))
        if who == "admin":
            return continuation(handler_call_details)  # type: ignore[no-any-return]

        def refuse(request_iterator: Any, context: grpc.ServicerContext) -> None:
            context.abort(
                grpc.StatusCode.PERMISSION_DENIED
                if who == "bot"
                else grpc.StatusCode.UNAUTHENTICATED,
                "this port is the operator's: every call needs the admin token",
            )

        return grpc.stream_unary_rpc_method_handler(refuse)
