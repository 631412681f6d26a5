"""The venue's limits against a hostile outsider: stream limits per peer and in all (the stream
over a limit refused, everything else still answering), requests never read beyond the
message limit, admin calls refused before their body is read, tokens and databases written
private, and the requests that used to be silently accepted (format 99, an empty name)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped,unused-ignore]
from rawstream import RawStream

from nardy.arena.cli import arena_group
from nardy.arena.clients.bot_client import GrpcBotClient
from nardy.arena.protocol import ARENA_SERVICE_NAME, arena_pb2, arena_pb2_grpc
from nardy.arena.sdk import RandomBot, serve_bot
from nardy.arena.service.auth import write_secret_file
from nardy.arena.service.core import Arena, RegisteredBot
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.streams import peer_host
from nardy.bots.faults import BotCrashedError

ADMIN = "admin-token-" + "a" * 32
AS_ADMIN = (("authorization", f"Bearer {ADMIN}"),)


@pytest.fixture
def limited() -> Iterator[ArenaServer]:
    server = ArenaServer(
        Arena(), admin_token=ADMIN, max_streams=5, max_streams_per_peer=3, max_workers=4
    ).start()
    try:
        yield server
    finally:
        server.stop(0.2)


def _code(call: Callable[[], object]) -> grpc.StatusCode:
    try:
        call()
    except grpc.RpcError as exc:
        return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _health_watch(channel: grpc.Channel) -> grpc.Future:  # type: ignore[type-arg]
    """A health Watch stream, once its first status has arrived (it is open and counted)."""
    call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
    first = next(call)
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    return call  # type: ignore[no-any-return]


def _wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def _refused(channel: grpc.Channel) -> grpc.RpcError:
    call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
    with pytest.raises(grpc.RpcError) as info:
        next(call)
    return info.value


def _unary_calls_answer(server: ArenaServer) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        stub.ListBots(arena_pb2.ListBotsRequest(), timeout=5)
        stub.ListTournaments(arena_pb2.ListTournamentsRequest(), timeout=5)
        code = _code(
            lambda: stub.GetStandings(arena_pb2.GetStandingsRequest(tournament_id="x"), timeout=5)
        )
        assert code == grpc.StatusCode.NOT_FOUND  # answered, not refused
        request = arena_pb2.RegisterBotRequest(name=f"b{time.monotonic_ns()}")
        request.dial_out.SetInParent()
        assert stub.RegisterBot(request, timeout=5, metadata=AS_ADMIN).token


def test_peer_host_is_the_address_without_the_port() -> None:
    assert peer_host("ipv4:127.0.0.1:50123") == "127.0.0.1"
    assert peer_host("ipv6:[::1]:50123") == "::1"
    assert peer_host("unix:/tmp/s") == "unix:/tmp/s"


def test_the_stream_over_the_per_peer_limit_is_refused_and_only_it(
    limited: ArenaServer,
) -> None:
    channels = [grpc.insecure_channel(limited.address) for _ in range(3)]
    try:
        # Three streams from one address (each on its own connection: ports do not matter).
        open_calls = [_health_watch(c) for c in channels]
        refused = _refused(channels[0])
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "--max-streams-per-peer" in (refused.details() or "")
        assert not any(call.done() for call in open_calls)  # the open ones are untouched
        _unary_calls_answer(limited)  # and unary calls, admin's included, still answer
        # A Connect before its Hello counts in a budget of its own (issue 34), not against the
        # streams: it opens although this peer's streams are at their limit.
        raw = RawStream(limited.address)
        assert _wait_for(lambda: limited.hellos.limiter.open == 1)
        assert raw.responses.empty() and limited.limiter.open == 3
        raw.close()
        # Closing one frees its place.
        open_calls[0].cancel()
        deadline = time.monotonic() + 5
        while limited.limiter.open > 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        open_calls[0] = _health_watch(channels[0])
        for call in open_calls:
            call.cancel()
    finally:
        for c in channels:
            c.close()


def test_a_connected_bot_no_longer_counts_and_the_total_limit_holds() -> None:
    arena = Arena()
    server = ArenaServer(arena, admin_token=ADMIN, max_streams=2, max_streams_per_peer=3).start()
    streams: list[RawStream] = []
    try:
        for i in range(3):  # three bots connected: none of them counts once its Hello is known
            entry = arena.register_dial_out_bot(f"d{i}")
            streams.append(RawStream(server.address))
            streams[-1].hello(entry.token)
            streams[-1].next_of("welcome")
        assert server.limiter.open == 0
        with grpc.insecure_channel(server.address) as channel:
            calls = [_health_watch(channel), _health_watch(channel)]
            refused = _refused(channel)
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "--max-streams)" in (refused.details() or "")
            _unary_calls_answer(server)
            for call in calls:
                call.cancel()
    finally:
        for s in streams:
            s.close()
        server.stop(0.2)


# -- messages are not read beyond the limit; admin bodies are not read without the token ---------


def _padded(size: int) -> bytes:
    """A request of ``size`` bytes: one unknown length-delimited field (number 15), which a
    protobuf parser skips."""
    payload = size - 4
    head = bytes([15 << 3 | 2, 0x80 | payload & 0x7F, 0x80 | payload >> 7 & 0x7F, payload >> 14])
    return head + b"\0" * payload


def test_no_request_over_the_message_limit_is_read() -> None:
    server = ArenaServer(
        Arena(), admin_token=ADMIN, max_message_bytes=64 * 1024, max_request_bytes=1024 * 1024
    ).start()  # the public port reads at most the smaller of the two
    try:
        with grpc.insecure_channel(server.address) as channel:
            list_bots = channel.unary_unary(
                f"/{ARENA_SERVICE_NAME}/ListBots",
                request_serializer=lambda b: b,
                response_deserializer=arena_pb2.ListBotsResponse.FromString,
            )
            assert _code(lambda: list_bots(_padded(100_000), timeout=5)) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED  # 4x the limit used to be read
            )
            assert _code(lambda: list_bots(_padded(60_000), timeout=5)) == grpc.StatusCode.OK
    finally:
        server.stop(0.2)


def test_admin_calls_are_refused_before_their_body_is_read(limited: ArenaServer) -> None:
    with grpc.insecure_channel(limited.address) as channel:
        # A body the servicer could never decode: refused for want of a token, not parsed.
        raw = channel.unary_unary(
            f"/{ARENA_SERVICE_NAME}/CreateTournament",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        garbage = b"\xff" * 1000
        assert _code(lambda: raw(garbage, timeout=5)) == grpc.StatusCode.UNAUTHENTICATED
        wrong = (("authorization", "Bearer " + "w" * 43),)
        code = _code(lambda: raw(garbage, timeout=5, metadata=wrong))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        # With the admin token the body is read (and found undecodable).
        assert _code(lambda: raw(garbage, timeout=5, metadata=AS_ADMIN)) in (
            grpc.StatusCode.INTERNAL,
            grpc.StatusCode.UNKNOWN,
        )


# -- requests that used to be silently accepted ----------------------------------------------------


def test_unknown_format_and_empty_bot_name_are_invalid(limited: ArenaServer) -> None:
    with grpc.insecure_channel(limited.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        ids = []
        for name in ("f1", "f2"):
            request = arena_pb2.RegisterBotRequest(name=name)
            request.dial_out.SetInParent()
            ids.append(stub.RegisterBot(request, timeout=5, metadata=AS_ADMIN).bot_id)
        create = arena_pb2.CreateTournamentRequest(bot_ids=ids, format=99)  # type: ignore[arg-type]
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateTournament(create, timeout=5, metadata=AS_ADMIN)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "format 99" in (info.value.details() or "")
        for transport in ("dial_out", "server"):
            nameless = arena_pb2.RegisterBotRequest(name="")
            if transport == "server":
                nameless.server.address = "127.0.0.1:1"
            else:
                nameless.dial_out.SetInParent()
            with pytest.raises(grpc.RpcError) as info:
                stub.RegisterBot(nameless, timeout=5, metadata=AS_ADMIN)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "empty" in (info.value.details() or "")
        listed = stub.ListBots(arena_pb2.ListBotsRequest(), timeout=5)
        assert sorted(b.name for b in listed.bots) == ["f1", "f2"]  # no "bot" was made up


# -- secrets on disk -----------------------------------------------------------------------------


def test_empty_token_file_refuses_every_caller(tmp_path: Path) -> None:
    token_file = tmp_path / "bot.token"
    token_file.write_text("")
    server = serve_bot(RandomBot(1), token=token_file)
    try:
        for presented in ("", "anything", "Bearer"):
            with pytest.raises(BotCrashedError, match="UNAUTHENTICATED"):
                GrpcBotClient(server.address, presented).get_info()
        token_file.write_text("the-token-now-written\n")
        assert GrpcBotClient(server.address, "the-token-now-written").get_info().name == "random"
    finally:
        server.stop(0)


def test_bot_serve_refuses_an_empty_token_file_at_start(tmp_path: Path) -> None:
    token_file = tmp_path / "bot.token"
    token_file.write_text("  \n")
    command = [sys.executable, "-m", "nardy.arena.cli", "bot", "serve", "--builtin", "random"]
    result = subprocess.run(
        [*command, "--token-file", str(token_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result
    assert "is empty" in result.stderr and "Traceback" not in result.stderr
    assert "LISTENING" not in result.stdout


def test_register_writes_the_token_file_atomically_with_mode_0600(tmp_path: Path) -> None:
    arena = Arena()
    server = ArenaServer(arena, admin_token=ADMIN).start()
    try:
        admin_file = tmp_path / "admin.token"
        admin_file.write_text(ADMIN + "\n")
        token_file = tmp_path / "bot.token"
        token_file.write_text("old contents\n")
        os.chmod(token_file, 0o644)
        inode = token_file.stat().st_ino
        result = CliRunner().invoke(
            arena_group,
            [
                *("register", "dialer", "--dial-out", "--token-file", str(token_file)),
                *("--arena", server.address, "--admin-token-file", str(admin_file)),
            ],
        )
        assert result.exit_code == 0, result.output
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.stat().st_ino != inode  # replaced by a rename, never truncated
        token = token_file.read_text().strip()
        entry = arena.bot_for_token(token)
        assert entry is not None and entry.name == "dialer"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["admin.token", "bot.token"]
    finally:
        server.stop(0.2)


def test_a_reader_never_sees_a_partial_token_file(tmp_path: Path) -> None:
    path = tmp_path / "t"
    tokens = [f"token-{i:04d}-" + "x" * 40 for i in range(60)]
    write_secret_file(path, tokens[0] + "\n")
    seen: set[str] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(path.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    for token in tokens[1:]:
        write_secret_file(path, token + "\n")
    done.set()
    reader.join()
    assert seen <= {t + "\n" for t in tokens}, sorted(seen - {t + "\n" for t in tokens})[:3]


def test_the_arena_database_is_created_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        arena = Arena(db=tmp_path / "nardy-arena.db")
        arena.register_dial_out_bot("d")  # something written: the WAL files exist too
        files = sorted(tmp_path.glob("nardy-arena.db*"))
        assert files and files[0].name == "nardy-arena.db"
        for f in files:
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        arena.shutdown(0)
    finally:
        os.umask(old)


def test_watch_streams_of_a_live_tournament_are_limited_too() -> None:
    arena = Arena()
    server = ArenaServer(arena, admin_token=ADMIN, max_streams_per_peer=3).start()
    bots = [serve_bot(RandomBot(i)) for i in range(2)]
    try:
        ids = [arena.register_server_bot(f"s{i}", b.address).bot_id for i, b in enumerate(bots)]
        t = arena.create_tournament(ids, games_per_pairing=2_000, concurrency=1, seed=5)
        with grpc.insecure_channel(server.address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            request = arena_pb2.WatchTournamentRequest(tournament_id=t.tournament_id, replay=True)
            watchers = [stub.WatchTournament(request) for _ in range(3)]
            for w in watchers:
                assert next(w).WhichOneof("event") == "tournament_started"
            with pytest.raises(grpc.RpcError) as info:
                next(stub.WatchTournament(request))
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            standings = stub.GetStandings(
                arena_pb2.GetStandingsRequest(tournament_id=t.tournament_id), timeout=5
            )
            assert standings.tournament_id == t.tournament_id
            for w in watchers:  # the open ones still deliver events
                assert next(w).event_sequence > 1
                w.cancel()
        arena.cancel_tournament(t.tournament_id)
    finally:
        server.stop(0.2)
        for b in bots:
            b.stop(0)


def test_slow_unary_calls_are_limited_per_peer_and_the_admin_still_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arena = Arena()
    server = ArenaServer(arena, admin_token=ADMIN, max_calls_per_peer=2, max_workers=4).start()
    release = threading.Event()
    listing = arena.list_bots

    def slow_list_bots() -> list[RegisteredBot]:
        release.wait(10)
        return listing()

    monkeypatch.setattr(arena, "list_bots", slow_list_bots)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            held = [stub.ListBots.future(arena_pb2.ListBotsRequest(), timeout=20) for _ in range(2)]
            deadline = time.monotonic() + 5
            while server.calls.running < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            code = _code(
                lambda: stub.ListTournaments(arena_pb2.ListTournamentsRequest(), timeout=5)
            )
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED  # the third call of this address
            cancel = arena_pb2.CancelTournamentRequest(tournament_id="none")
            code = _code(lambda: stub.CancelTournament(cancel, timeout=5, metadata=AS_ADMIN))
            assert code == grpc.StatusCode.NOT_FOUND  # the admin is answered meanwhile
            release.set()
            assert all(isinstance(f.result(), arena_pb2.ListBotsResponse) for f in held)
            stub.ListTournaments(arena_pb2.ListTournamentsRequest(), timeout=5)  # free again
    finally:
        release.set()
        server.stop(0.2)
