"""Authentication, health checking, reflection and graceful shutdown of the arena server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from arena_clock import CLOCK
from rawstream import RawStream

from nardy.arena.clients.dial_out import DialOutHub
from nardy.arena.protocol import ARENA_SERVICE_NAME, arena_pb2, bot_pb2, bot_pb2_grpc
from nardy.arena.sdk import BotServer, RandomBot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy


class TestAuth:
    def test_wrong_token_is_rejected(self, server: ArenaServer) -> None:
        server.arena.register_dial_out_bot("real")
        stream = RawStream(server.address)
        stream.hello("not-a-token")
        error = stream.next_of("error").error
        assert error.code == arena_pb2.ERROR_CODE_UNAUTHENTICATED and error.fatal
        end = stream.next()
        assert isinstance(end, grpc.RpcError) and end.code() == grpc.StatusCode.UNAUTHENTICATED
        stream.close()

    def test_first_message_must_be_hello(self, server: ArenaServer) -> None:
        stream = RawStream(server.address)
        stream.send(arena_pb2.ConnectRequest(answer=arena_pb2.DecisionAnswer(game_id="x")))
        assert stream.next_of("error").error.code == arena_pb2.ERROR_CODE_PROTOCOL
        stream.close()

    def test_server_bot_token_cannot_dial_in(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        entry = server.arena.register_server_bot("srv", bot_server(RandomBot(1)).address)
        stream = RawStream(server.address)
        stream.hello(entry.token)
        assert stream.next_of("error").error.code == arena_pb2.ERROR_CODE_UNAUTHENTICATED
        stream.close()

    def test_a_bot_cannot_answer_for_another(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        """Mallory knows Alice's game id and sequence and answers first: ignored, counted as
        Mallory's stale answer; Alice's own answer is the one applied."""
        arena = server.arena
        alice = arena.register_dial_out_bot("alice")
        mallory = arena.register_dial_out_bot("mallory")
        a_stream, m_stream = RawStream(server.address), RawStream(server.address)
        a_stream.hello(alice.token)
        m_stream.hello(mallory.token)
        a_stream.next_of("welcome")
        m_stream.next_of("welcome")
        other = arena.register_server_bot("srv", bot_server(RandomBot(2)).address)
        game = arena.start_game(alice.bot_id, other.bot_id, seed=3)
        ctx = a_stream.next_of("decision_request").decision_request.choose_play.context
        forged = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence)
        forged.choose_play.play_index = 10_000  # would be an illegal answer if it were applied
        m_stream.send(arena_pb2.ConnectRequest(answer=forged))
        stale = m_stream.next_of("error").error
        assert stale.code == arena_pb2.ERROR_CODE_STALE_ANSWER and not stale.fatal
        mine = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence)
        mine.choose_play.play_index = 0
        a_stream.send(arena_pb2.ConnectRequest(answer=mine))
        answered = 1
        while not game.done():
            try:
                item = a_stream.next(timeout=0.2)
            except Exception:
                continue
            if (
                isinstance(item, arena_pb2.ConnectResponse)
                and item.WhichOneof("message") == "decision_request"
            ):
                c = item.decision_request.choose_play.context
                answer = arena_pb2.DecisionAnswer(game_id=c.game_id, sequence=c.sequence)
                answer.choose_play.play_index = 0
                a_stream.send(arena_pb2.ConnectRequest(answer=answer))
                answered += 1
        record = game.result()
        a_stream.close()
        m_stream.close()
        assert record.outcome is not None and record.outcome.termination == "borne_off"
        assert sum(record.faults[0].values()) == 0
        assert isinstance(mallory.client, DialOutHub) and mallory.client.stale_answers == 1
        assert isinstance(alice.client, DialOutHub) and alice.client.stale_answers == 0

    def test_sdk_server_bot_checks_the_arena_token(
        self, bot_server: Callable[..., BotServer]
    ) -> None:
        bot = bot_server(RandomBot(1), token="s3cret")
        with grpc.insecure_channel(bot.address) as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            with pytest.raises(grpc.RpcError) as info:
                stub.GetInfo(bot_pb2.GetInfoRequest(), timeout=5)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            ok = stub.GetInfo(
                bot_pb2.GetInfoRequest(), timeout=5, metadata=(("authorization", "Bearer s3cret"),)
            )
            assert ok.info.name == "random"


class TestMaintenance:
    def test_health(self, server: ArenaServer) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        with grpc.insecure_channel(server.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for service in ("", ARENA_SERVICE_NAME):
                response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                assert response.status == health_pb2.HealthCheckResponse.SERVING

    def test_reflection(self, server: ArenaServer) -> None:
        from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
            ProtoReflectionDescriptorDatabase,
        )

        with grpc.insecure_channel(server.address) as channel:
            database = ProtoReflectionDescriptorDatabase(channel)
            services = database.get_services()
            assert ARENA_SERVICE_NAME in services
            assert "grpc.health.v1.Health" in services
            file = database.FindFileContainingSymbol(ARENA_SERVICE_NAME)
            assert file.package == "nardy.arena.v1"

    def test_message_size_limit(self, server: ArenaServer) -> None:
        with grpc.insecure_channel(server.address) as channel:
            register = channel.unary_unary(
                f"/{ARENA_SERVICE_NAME}/RegisterBot",
                request_serializer=lambda b: b,
                response_deserializer=arena_pb2.RegisterBotResponse.FromString,
            )
            # Beyond the public port's request limit (32 KiB, --max-request-bytes) gRPC refuses
            # the request unread; below it, the request's own limits do (a name of 30,000).
            huge = arena_pb2.RegisterBotRequest(name="x" * 40_000).SerializeToString()
            with pytest.raises(grpc.RpcError) as info:
                register(huge, timeout=10)
            assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            big = arena_pb2.RegisterBotRequest(name="x" * 30_000)
            big.dial_out.SetInParent()
            with pytest.raises(grpc.RpcError) as info:
                register(big.SerializeToString(), timeout=10)
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


class SlowBot(RandomBot):
    """Waits for :attr:`gate` on every decision after the first few (to hold a game open)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.calls = 0
        self.started = threading.Event()

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        self.calls += 1
        if self.calls >= 3:
            self.started.set()
        return super().choose_play(request)


class TestGracefulShutdown:
    def test_running_games_are_recorded_as_interrupted(
        self, bot_server: Callable[..., BotServer], tmp_path: Path
    ) -> None:
        records = tmp_path / "records.jsonl"
        arena = Arena(time_control=CLOCK, policy=FaultPolicy(), records_path=records)
        server = ArenaServer(arena).start()
        slow = SlowBot()
        a = arena.register_server_bot("slow", bot_server(slow).address)
        b = arena.register_server_bot("b", bot_server(RandomBot(1)).address)
        games = [arena.start_game(a.bot_id, b.bot_id, seed=s) for s in range(3)]
        assert slow.started.wait(5)
        server.stop(grace=0.0)
        results = [g.result(timeout=5) for g in games]
        lines = [json.loads(line) for line in records.read_text().splitlines()]
        assert len(lines) == len(results) == 3
        assert {line["game_id"] for line in lines} == {r.game_id for r in results}
        interrupted = [r for r in results if r.outcome and r.outcome.termination == "aborted"]
        assert interrupted, [r.outcome for r in results]
        assert all("interrupted" in r.outcome.reason for r in interrupted if r.outcome)
        with pytest.raises(RuntimeError, match="shutting down"):
            arena.start_game(a.bot_id, b.bot_id)

    @pytest.mark.slow  # an arena server in a subprocess
    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
    def test_cli_server_stops_on_signal(self, signum: int, tmp_path: Path) -> None:
        # In a directory of its own: the server writes its token file and database there.
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nardy.arena.cli",
                "arena",
                "serve",
                "--port",
                "0",
                "--grace",
                "1",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("LISTENING "), line
            address = line.split()[1]
            from grpc_health.v1 import health_pb2, health_pb2_grpc

            with grpc.insecure_channel(address) as channel:
                status = (
                    health_pb2_grpc.HealthStub(channel)
                    .Check(health_pb2.HealthCheckRequest(), timeout=5)
                    .status
                )
                assert status == health_pb2.HealthCheckResponse.SERVING
            os.kill(proc.pid, signum)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
