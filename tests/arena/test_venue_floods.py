"""The venue under anonymous floods from many addresses (issue 34): unary calls admitted before
their request is read and taken address by address, the operator's calls on a lane and a port
of their own, and ``Connect`` streams that must say Hello in time, in a budget apart from the
watchers' streams. Several addresses on loopback come from :class:`sources.Sources`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped,unused-ignore]
from rawstream import RawStream
from script_modules import load_module
from sources import Sources

from nardy.arena.protocol import arena_pb2, arena_pb2_grpc
from nardy.arena.service.core import Arena, RegisteredBot
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.streams import CallQueue

ADMIN = "admin-token-" + "f" * 32
AS_ADMIN = (("authorization", f"Bearer {ADMIN}"),)
BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "load_arena.py"


def _wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def _code(call: Callable[[], object]) -> grpc.StatusCode:
    try:
        call()
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


# -- the queue of unary calls ---------------------------------------------------------------------


def test_waiting_calls_take_turns_address_by_address() -> None:
    async def scenario() -> list[str]:
        calls = CallQueue(max_running=1, max_per_peer=5, max_waiting=10)
        order: list[str] = []

        async def call(peer: str, name: str) -> None:
            assert await calls.enter(peer) is None
            order.append(name)
            await asyncio.sleep(0.01)
            calls.leave(peer)

        tasks = [asyncio.ensure_future(call("a", f"a{i}")) for i in range(4)]
        await asyncio.sleep(0)  # a0 runs, a1..a3 wait
        tasks.append(asyncio.ensure_future(call("b", "b0")))
        await asyncio.gather(*tasks)
        return order

    # b0 came after a1..a3 but its address had no call yet: it runs second, not last.
    assert asyncio.run(scenario()) == ["a0", "a1", "b0", "a2", "a3"]


def test_calls_over_the_limits_are_refused_and_a_cancelled_wait_frees_its_place() -> None:
    async def scenario() -> None:
        calls = CallQueue(max_running=1, max_per_peer=2, max_waiting=1)
        assert await calls.enter("a") is None
        waiting = asyncio.ensure_future(calls.enter("a"))
        await asyncio.sleep(0)
        assert calls.running == 1 and calls.waiting == 1
        refusal = await calls.enter("a")  # a third from a: over the limit per address
        assert refusal is not None and "--max-calls-per-peer" in refusal
        refusal = await calls.enter("b")  # the one waiting place is taken
        assert refusal is not None and "--max-calls)" in refusal
        waiting.cancel()
        await asyncio.sleep(0)
        assert calls.waiting == 0  # the place of the cancelled call is free again
        turn_of_b = asyncio.ensure_future(calls.enter("b"))
        await asyncio.sleep(0)
        assert calls.waiting == 1 and not turn_of_b.done()
        calls.leave("a")
        assert await asyncio.wait_for(turn_of_b, 1) is None  # admitted when a's call ended
        assert calls.running == 1 and calls.waiting == 0
        calls.leave("b")
        assert calls.running == 0

    asyncio.run(scenario())


def test_calls_over_max_calls_wait_unread_and_the_admin_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every place taken by slow calls, more calls wait (not read, not on a worker) and
    the admin's calls are answered at once, on the public port and on the operator's."""
    arena = Arena()
    server = ArenaServer(
        arena, admin_token=ADMIN, max_calls=2, max_calls_per_peer=8, max_workers=2, admin_port=0
    ).start()
    release = threading.Event()
    listing = arena.list_bots

    def slow_list_bots() -> list[RegisteredBot]:
        release.wait(10)
        return listing()

    monkeypatch.setattr(arena, "list_bots", slow_list_bots)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            held = [stub.ListBots.future(arena_pb2.ListBotsRequest(), timeout=20) for _ in range(5)]
            assert _wait_for(lambda: server.calls.running == 2 and server.calls.waiting == 3)
            cancel = arena_pb2.CancelTournamentRequest(tournament_id="none")
            started = time.monotonic()
            code = _code(lambda: stub.CancelTournament(cancel, timeout=5, metadata=AS_ADMIN))
            assert code == grpc.StatusCode.NOT_FOUND  # every worker busy: the admin's lane
            assert server.admin_address is not None
            with grpc.insecure_channel(server.admin_address) as operator:
                admin = arena_pb2_grpc.ArenaServiceStub(operator)
                code = _code(lambda: admin.CancelTournament(cancel, timeout=5, metadata=AS_ADMIN))
                assert code == grpc.StatusCode.NOT_FOUND
                # The operator's port answers the admin token only, refused unread.
                code = _code(lambda: admin.ListBots(arena_pb2.ListBotsRequest(), timeout=5))
                assert code == grpc.StatusCode.UNAUTHENTICATED
            assert time.monotonic() - started < 3
            release.set()
            assert all(isinstance(f.result(), arena_pb2.ListBotsResponse) for f in held)
    finally:
        release.set()
        server.stop(0.2)


def test_a_large_request_without_the_admin_token_is_refused_unparsed() -> None:
    # An operator who reads large requests on the public port (--max-request-bytes raised)
    # still has anonymous ones refused without being parsed.
    server = ArenaServer(Arena(), admin_token=ADMIN, max_request_bytes=4 * 1024 * 1024).start()
    body = b"\x7a" + bytes([0xA0, 0x8D, 0x06]) + b"\0" * 100_000  # field 15, 100,000 bytes
    try:
        with grpc.insecure_channel(server.address) as channel:
            call = channel.unary_unary(
                "/nardy.arena.v1.ArenaService/ListBots",
                request_serializer=lambda b: b,
                response_deserializer=arena_pb2.ListBotsResponse.FromString,
            )
            with pytest.raises(grpc.RpcError) as refused:
                call(body, timeout=5)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "without the admin token at most 65536" in (refused.value.details() or "")
            assert isinstance(call(body, timeout=5, metadata=AS_ADMIN), arena_pb2.ListBotsResponse)
            assert server.calls.running == 0 and server.calls.waiting == 0
    finally:
        server.stop(0.2)


def _admin_list_bots(address: str, body: bytes) -> grpc.StatusCode:
    """The status of a ``ListBots`` of these raw bytes with the admin token at ``address``."""
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary(
            "/nardy.arena.v1.ArenaService/ListBots",
            request_serializer=lambda b: b,
            response_deserializer=arena_pb2.ListBotsResponse.FromString,
        )
        return _code(lambda: call(body, timeout=5, metadata=AS_ADMIN))


def test_the_public_port_reads_no_message_over_max_request_bytes() -> None:
    """A stream holds a message whole before anyone looks at it (a ``Connect``'s first, before
    the bot is known), so the public port reads at most ``--max-request-bytes`` (32 KiB) of
    one; the operator's port reads up to ``--max-message-bytes``."""
    server = ArenaServer(Arena(), admin_token=ADMIN, admin_port=0).start()
    body = b"\x7a" + bytes([0xA0, 0x8D, 0x06]) + b"\0" * 100_000  # field 15, 100,000 bytes
    raw = RawStream(server.address)
    try:
        raw.send(b"\x0a" + bytes([0x80, 0x80, 0x02]) + b"\0" * 32_768)  # a 32 KiB Hello
        ended = raw.next(5)
        assert isinstance(ended, grpc.RpcError), ended
        assert ended.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert _admin_list_bots(server.address, body) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert server.admin_address is not None
        assert _admin_list_bots(server.admin_address, body) == grpc.StatusCode.OK
    finally:
        raw.close()
        server.stop(0.2)


def _benchmark(*args: str, timeout: float = 240) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_load_benchmarks_operator_probe_takes_any_token() -> None:
    """The probe reads its token from the environment: an arena's token is ``token_urlsafe``,
    and one in 64 begins with "-", which on the probe's command line argparse took for an
    option (a CI run failed so)."""
    token = "-" + "f" * 40
    server = ArenaServer(Arena(), admin_token=token).start()
    try:
        load_arena = load_module("load_arena", BENCHMARK)
        found = load_arena.AdminProbe(server.address, token, 0.3).result()
    finally:
        server.stop(0.2)
    assert set(found["codes"]) == {"NOT_FOUND"}, found


@pytest.mark.slow  # an arena in a subprocess flooded with 4 MB calls for a few seconds
def test_large_anonymous_calls_from_many_addresses_are_bounded_in_memory() -> None:
    """10 addresses x 16 ``ListBots`` of 4 MB kept in flight (within every per-address limit)
    move the arena by less than 200 MB, and it is back within 50 MB of idle a few seconds
    later (before issue 34: +1,890 MB, and +1,470 MB still afterwards)."""
    result = _benchmark(
        "unary-flood", "--sources", "10", "--calls", "16", "--seconds", "5", "--settle", "7"
    )
    idle, peak, after = (
        float(str(result[k])) for k in ("rss_idle_mib", "rss_peak_mib", "rss_after_mib")
    )
    assert peak - idle < 200, result
    assert after - idle < 50, result


@pytest.mark.slow  # an arena in a subprocess and 5,000 calls in flight for 8 s
def test_the_operator_is_answered_under_a_flood_of_anonymous_calls() -> None:
    """20 addresses x 250 anonymous calls in flight: the operator's calls (on its port) are all
    answered. The goal is p99 <= 100 ms (docs/arena.md has the measured figure); the bound here
    leaves room for a loaded shared machine, and is still far below the 2.9 s (and CANCELLED
    calls) of the public port before issue 34."""
    result = _benchmark(
        "unary-flood",
        "--sources",
        "20",
        "--calls",
        "250",
        "--kib",
        "0",
        "--seconds",
        "8",
        "--settle",
        "0",
    )
    admin = result["admin"]
    assert isinstance(admin, dict)
    assert set(admin["codes"]) == {"NOT_FOUND"}, admin  # every call answered (not refused)
    assert admin["latency"]["p99_ms"] < 300, admin


# -- Connect before its Hello ---------------------------------------------------------------------


def _hello_server(timeout: float) -> ArenaServer:
    return ArenaServer(
        Arena(),
        admin_token=ADMIN,
        max_streams=3,
        max_streams_per_peer=3,
        hello_timeout=timeout,
        max_pending_hellos=4,
    ).start()


@pytest.fixture
def hello_server() -> Iterator[ArenaServer]:
    server = _hello_server(1.0)
    try:
        yield server
    finally:
        server.stop(0.2)


@pytest.fixture
def patient_server() -> Iterator[ArenaServer]:
    server = _hello_server(30.0)
    try:
        yield server
    finally:
        server.stop(0.2)


def test_a_connect_without_hello_is_closed_at_the_deadline(hello_server: ArenaServer) -> None:
    raw = RawStream(hello_server.address)
    try:
        started = time.monotonic()
        ended = raw.next(5)
        assert isinstance(ended, grpc.RpcError), ended
        assert ended.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "--hello-timeout" in (ended.details() or "")
        assert 0.8 < time.monotonic() - started < 3
        assert hello_server.hellos.limiter.open == 0
    finally:
        raw.close()


def test_silent_streams_from_many_addresses_take_no_watcher_or_bot_places(
    patient_server: ArenaServer,
) -> None:
    """Three addresses hold two silent ``Connect`` streams each (six, over the budget of four
    and over ``--max-streams``, each address within its limit): watchers still get every place
    of ``--max-streams``, and an honest bot from another address connects (then reconnects) at
    once, taking the place of a silent stream of the address holding the most."""
    arena = patient_server.arena
    entry = arena.register_dial_out_bot("honest")
    with Sources(patient_server.address, 4) as sources:
        silent = [RawStream(sources.address(i % 3)) for i in range(6)]
        watchers: list[grpc.Channel] = []
        try:
            assert _wait_for(lambda: patient_server.hellos.limiter.open == 4)
            assert patient_server.limiter.open == 0  # none of them in --max-streams
            watchers = [grpc.insecure_channel(sources.address(3)) for _ in range(3)]
            calls = [
                health_pb2_grpc.HealthStub(w).Watch(health_pb2.HealthCheckRequest(service=""))
                for w in watchers
            ]
            assert all(
                next(call).status == health_pb2.HealthCheckResponse.SERVING for call in calls
            )
            for attempt in range(2):  # connect, then reconnect
                started = time.monotonic()
                bot = RawStream(sources.address(3))
                bot.hello(entry.token)
                bot.next_of("welcome", timeout=5)
                assert time.monotonic() - started < 5, attempt
                bot.close()
            ended = [s for s in silent if s.ended.is_set()]
            assert len(ended) >= 2  # refused, or replaced when the honest bot came
            for call in calls:
                call.cancel()
        finally:
            for s in silent:
                s.close()
            for w in watchers:
                w.close()


def test_a_watch_stream_is_counted_before_its_request_is_read_and_capped() -> None:
    """A stream with one request (health ``Watch`` here, ``WatchTournament`` alike) is counted
    before its request is read, and a caller without the admin token cannot make the arena
    parse (and keep for the stream's life) a large request."""
    server = ArenaServer(
        Arena(),
        admin_token=ADMIN,
        max_streams=2,
        max_streams_per_peer=2,
        max_request_bytes=4 * 1024 * 1024,  # raised by the operator: the anonymous cap still holds
    ).start()
    body = b"\x7a" + bytes([0xA0, 0x8D, 0x06]) + b"\0" * 100_000  # field 15, 100,000 bytes
    try:
        with grpc.insecure_channel(server.address) as channel:
            watch = channel.unary_stream(
                "/grpc.health.v1.Health/Watch",
                request_serializer=lambda b: b,
                response_deserializer=health_pb2.HealthCheckResponse.FromString,
            )
            with pytest.raises(grpc.RpcError) as refused:
                next(watch(body, timeout=5))
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "without the admin token at most 65536" in (refused.value.details() or "")
            assert _wait_for(lambda: server.limiter.open == 0)
            held = watch(body, metadata=AS_ADMIN)  # the admin's request is not capped
            assert next(held).status == health_pb2.HealthCheckResponse.SERVING
            assert server.limiter.open == 1
            held.cancel()
    finally:
        server.stop(0.2)


def test_health_checks_wait_their_turn_like_every_anonymous_call() -> None:
    """An async unary handler (health ``Check``) holds no worker, but its request is read like
    any other: anonymous ones are admitted by the same queue, before the read."""
    server = ArenaServer(Arena(), admin_token=ADMIN).start()
    body = b"\x7a" + bytes([0xA0, 0x8D, 0x06]) + b"\0" * 100_000  # field 15, 100,000 bytes
    try:
        with grpc.insecure_channel(server.address) as channel:
            check = channel.unary_unary(
                "/grpc.health.v1.Health/Check",
                request_serializer=lambda b: b,
                response_deserializer=health_pb2.HealthCheckResponse.FromString,
            )
            admitted = server.calls.acquired
            assert check(b"", timeout=5).status == health_pb2.HealthCheckResponse.SERVING
            assert server.calls.acquired == admitted + 1
            with pytest.raises(grpc.RpcError) as refused:
                check(body, timeout=5)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        server.stop(0.2)
