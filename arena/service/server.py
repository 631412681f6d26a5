"""The arena's gRPC server around its servicer (:mod:`nardy.arena.service.servicer`) and core
(:class:`~nardy.arena.service.core.Arena`).

:class:`ArenaServer` is a ``grpc.aio`` server (streams are coroutines, unary calls run on a thread
pool): the servicer, the standard ``grpc.health.v1`` health service, server reflection, message
size and stream limits (:mod:`nardy.arena.service.streams`), an optional operator's port, and
SIGTERM/SIGINT handling.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from concurrent import futures
from types import FrameType
from typing import Any

import grpc

# grpcio-health-checking and grpcio-reflection ship no type stubs.
from grpc_health.v1 import health as _health  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2 as _health_pb2  # type: ignore[import-untyped,unused-ignore]
from grpc_health.v1 import health_pb2_grpc as _health_pb2_grpc  # type: ignore[import-untyped,unused-ignore]
from grpc_reflection.v1alpha import reflection as _reflection  # type: ignore[import-untyped,unused-ignore]

from nardy.arena.clients.bot_client import (
    DEFAULT_MAX_MESSAGE_BYTES,
)
from nardy.arena.protocol import ARENA_ADMIN_METHODS, ARENA_SERVICE_NAME
from nardy.arena.service.auth import (
    Authenticator,
)
from nardy.arena.service.core import Arena
from nardy.arena.service.limits import (
    ADMIN_WORKERS,
    DEFAULT_HELLO_TIMEOUT,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CALLS_PER_PEER,
    DEFAULT_MAX_PENDING_HELLOS,
    DEFAULT_MAX_REQUEST_BYTES,
    MAX_WAITING_CALLS,
)
from nardy.arena.service.servicer import ArenaServicer, add_arena_servicer
from nardy.arena.service.streams import (
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_PEER,
    Allocator,
    CallQueue,
    Gate,
    OperatorGate,
    PendingHellos,
    StreamLimiter,
)

__all__ = ["ArenaServer"]

log = logging.getLogger(__name__)


class ArenaServer:
    """The arena's gRPC server: ArenaService, health (``grpc.health.v1``), reflection.

    It is a ``grpc.aio`` server on an event loop of its own thread: streams (``Connect``,
    ``WatchTournament``, ``ExportGames``, health ``Watch``, reflection) are coroutines, so a
    thousand open streams cost no threads, and the unary calls run on a pool of
    ``max_workers`` threads that streams never occupy. Streams and unary calls are limited per
    peer and in all, the calls admitted before their request is read, ``Connect`` streams must
    say Hello in time (:mod:`nardy.arena.service.streams`); admin calls without the admin token are
    refused before their request is read, and no request over ``max_message_bytes`` is read.
    The admin's unary calls run on threads of their own, and ``admin_port`` adds the
    operator's own listener.

    ``port=0`` binds a free port (read :attr:`port` after :meth:`start`).
    """

    def __init__(
        self,
        arena: Arena | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_workers: int = 32,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        admin_token: str | None = None,
        max_streams: int = DEFAULT_MAX_STREAMS,
        max_streams_per_peer: int = DEFAULT_MAX_STREAMS_PER_PEER,
        max_calls_per_peer: int = DEFAULT_MAX_CALLS_PER_PEER,
        max_calls: int = DEFAULT_MAX_CALLS,
        hello_timeout: float = DEFAULT_HELLO_TIMEOUT,
        max_pending_hellos: int = DEFAULT_MAX_PENDING_HELLOS,
        admin_port: int | None = None,
        admin_host: str = "127.0.0.1",
    ) -> None:
        """:param admin_token: the token state-changing calls need (``nardy arena serve`` always
            gives one); None: anyone may call them (tests, a private in-process arena).
        :param max_message_bytes: the largest message sent, and read on the operator's port;
            ``max_request_bytes``: the largest read on the public port (at most
            ``max_message_bytes``; :data:`~nardy.arena.service.limits.DEFAULT_MAX_REQUEST_BYTES` says
            why it is small). A larger one is refused unread (``RESOURCE_EXHAUSTED``).
        :param max_workers: threads for the unary calls (streams take none).
        :param max_streams: streams open at once from everyone; ``max_streams_per_peer``: from
            one IP address. The stream over a limit is refused with ``RESOURCE_EXHAUSTED``.
        :param max_calls_per_peer: unary calls in progress (running or waiting) at once from
            one IP address, the admin's not counted; the call over it is refused with
            ``RESOURCE_EXHAUSTED``. ``max_calls``: calls whose request is read and running, from
            everyone; the others wait unread, address by address
            (:class:`~nardy.arena.service.streams.CallQueue`). The admin's calls run on threads of
            their own (:data:`ADMIN_WORKERS`).
        :param hello_timeout: seconds a ``Connect`` may stay open before its Hello;
            ``max_pending_hellos``: such streams open at once, counted apart from
            ``max_streams`` (when full, a new one replaces the oldest of the address holding
            the most, :class:`~nardy.arena.service.streams.PendingHellos`).
        :param admin_port: where the operator's own listener serves (0: a free port; None:
            none), on ``admin_host``: a threaded gRPC server of its own that answers the unary
            calls to the admin token only (anything else is refused unread). A flood of
            anonymous calls on :attr:`port` fills that port's event loop, and every call waits
            its turn there before any priority can apply; the operator's listener is not in
            that line (20 addresses x 250 anonymous calls in flight: admin p99 0.7 to 2.9 s and
            some calls CANCELLED on the public port, about 20 ms on this one; docs/arena.md).
            At most ``4 * ADMIN_WORKERS`` calls at once there (more are refused)."""
        self.arena = arena or Arena()
        self.host = host
        self.max_message_bytes = max_message_bytes
        self.max_request_bytes = min(max_request_bytes, max_message_bytes)
        self.limiter = StreamLimiter(max_streams, max_streams_per_peer)
        self.calls = CallQueue(max_calls, max_calls_per_peer, MAX_WAITING_CALLS)
        self.hellos = PendingHellos(max_pending_hellos, max_streams_per_peer, hello_timeout)
        self._allocator = Allocator()
        self._allocator.tune()
        self._trimmer: asyncio.Future[None] | None = None
        self.executor = futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="arena-rpc"
        )
        self.admin_executor = futures.ThreadPoolExecutor(
            max_workers=ADMIN_WORKERS, thread_name_prefix="arena-admin"
        )
        self.servicer = ArenaServicer(
            self.arena, Authenticator(admin_token), executor=self.executor, hellos=self.hellos
        )
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="arena-grpc", daemon=True
        )
        self._thread.start()
        self.admin_server: grpc.Server | None = None
        self.admin_host = admin_host
        self.admin_port: int | None = None
        try:
            self.server, self.health, self.port = self._run(self._build(port))
            if admin_port is not None:
                self.admin_server, self.admin_port = self._build_operator(admin_port)
        except BaseException:
            self._close_loop()
            raise
        self._stopped = threading.Event()
        self._transport_stopped = False

    def _run(self, coroutine: Any, timeout: float | None = 30.0) -> Any:
        """Run ``coroutine`` on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _build(self, port: int) -> tuple[grpc.aio.Server, Any, int]:
        admin = [f"/{ARENA_SERVICE_NAME}/{m}" for m in sorted(ARENA_ADMIN_METHODS)]
        gate = Gate(
            self.limiter,
            admin_methods=admin,
            caller=self.servicer.caller_of_token,
            self_limited=[f"/{ARENA_SERVICE_NAME}/Connect"],
            calls=self.calls,
            pool=self.executor,
            admin_pool=self.admin_executor,
        )
        server = grpc.aio.server(
            migration_thread_pool=self.executor,
            interceptors=[gate],
            options=[
                ("grpc.max_send_message_length", self.max_message_bytes),
                # The real limit: nothing larger is read, from anyone (a dial-out bot's
                # oversized message ends its stream). Small on this port: a stream's message
                # is held whole before anyone looks at it (DEFAULT_MAX_REQUEST_BYTES).
                ("grpc.max_receive_message_length", self.max_request_bytes),
                # No bandwidth-delay probing: a stream's receive window stays at 64 KiB, so
                # a refused (or not yet read) large request is not buffered by the transport.
                # 16 + 16 anonymous 15 MiB calls: +1 MB (with probing, +50 to +180 MB).
                ("grpc.http2.bdp_probe", 0),
            ],
        )
        add_arena_servicer(self.servicer, server, self.max_request_bytes)
        health = _health.aio.HealthServicer()
        _health_pb2_grpc.add_HealthServicer_to_server(health, server)
        _reflection.enable_server_reflection(
            (ARENA_SERVICE_NAME, _health.SERVICE_NAME, _reflection.SERVICE_NAME), server
        )
        bound = server.add_insecure_port(f"{self.host}:{port}")
        if bound == 0:
            raise OSError(f"cannot listen on {self.host}:{port}")
        return server, health, bound

    def _build_operator(self, port: int) -> tuple[grpc.Server, int]:
        """The operator's listener: a threaded server (its own completion queue and threads,
        not the event loop of the public port) on the admin lane's threads."""
        server = grpc.server(
            self.admin_executor,
            interceptors=[OperatorGate(self.servicer.caller_of_token)],
            options=[
                ("grpc.max_send_message_length", self.max_message_bytes),
                ("grpc.max_receive_message_length", self.max_message_bytes),
                ("grpc.http2.bdp_probe", 0),
            ],
            maximum_concurrent_rpcs=4 * ADMIN_WORKERS,
        )
        add_arena_servicer(self.servicer, server, self.max_message_bytes, plain_unary_only=True)
        bound = server.add_insecure_port(f"{self.admin_host}:{port}")
        if bound == 0:
            raise OSError(f"cannot listen on {self.admin_host}:{port} (the admin port)")
        return server, bound

    @property
    def admin_address(self) -> str | None:
        """The operator's listener (``host:port``), or None without one."""
        return None if self.admin_port is None else f"{self.admin_host}:{self.admin_port}"

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> ArenaServer:
        if self.admin_server is not None:
            self.admin_server.start()

        async def start() -> None:
            await self.server.start()
            for service in ("", ARENA_SERVICE_NAME):
                await self.health.set(service, _health_pb2.HealthCheckResponse.SERVING)
            self._trimmer = asyncio.ensure_future(self._trim_after_calls())

        self._run(start())
        return self

    async def _trim_after_calls(self, every: float = 5.0) -> None:
        """Every ``every`` seconds in which counted calls came, hand the memory freed since
        back to the system (:class:`~nardy.arena.service.streams.Allocator`): after a flood of large
        anonymous calls the arena returns to within a few MB of idle instead of staying
        where the flood left it."""
        seen = self.calls.acquired
        while True:
            await asyncio.sleep(every)
            if self.calls.acquired != seen:
                seen = self.calls.acquired
                await asyncio.get_running_loop().run_in_executor(
                    self.admin_executor, self._allocator.trim
                )

    def stop_transport(self, grace: float | None = None) -> None:
        """Stop the gRPC server only (the port goes away; the arena and its games stay):
        what a network failure looks like to the bots. Idempotent."""
        if not self._transport_stopped:
            self._transport_stopped = True

            async def stop() -> None:
                if self._trimmer is not None:
                    self._trimmer.cancel()
                await self.server.stop(grace)

            if self.admin_server is not None:
                self.admin_server.stop(grace)
            self._run(stop(), None)

    def stop(self, grace: float = 5.0) -> None:
        """Graceful shutdown: health NOT_SERVING, games finished or recorded as interrupted,
        streams closed, then the server stopped. Idempotent."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if not self._transport_stopped:
            self._run(self.health.enter_graceful_shutdown())
        self.arena.shutdown(grace)
        self.stop_transport(grace)

        self._run(self.servicer.close_feeds())
        self._close_loop()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.admin_executor.shutdown(wait=False, cancel_futures=True)

    def serve_forever(self, grace: float = 5.0) -> None:
        """Run until SIGTERM or SIGINT, then :meth:`stop` gracefully (main thread only)."""
        requested = threading.Event()

        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: shutting down", signum)
            requested.set()

        previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            while not requested.wait(0.5):
                pass
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            self.stop(grace)
