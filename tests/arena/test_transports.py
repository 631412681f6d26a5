"""Full games over both transports against a real arena server on a loopback port."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable

import pytest

from nardy.arena.protocol import bot_pb2, game_pb2
from nardy.arena.sdk import Answer, BotServer, RandomBot, dial_out
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.core.position import Position


class RecordingBot(RandomBot):
    """A random bot that keeps every request it receives and comments its answers."""

    name = "recorder"

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.requests: list[bot_pb2.ChoosePlayRequest] = []

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> Answer:  # type: ignore[override]
        self.requests.append(request)
        index = super().choose_play(request)
        return Answer(index, comment="random", values={"n": len(request.context.legal_plays)})


def _check_requests(requests: list[bot_pb2.ChoosePlayRequest], game_id: str) -> None:
    assert requests
    sequences = [r.context.sequence for r in requests]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    for n, request in enumerate(requests):
        ctx = request.context
        assert ctx.game_id == game_id
        assert ctx.variant.name == "long" and ctx.variant.options
        position = Position(
            tuple(ctx.position.points),
            (ctx.position.bar.mover, ctx.position.bar.opponent),
            (ctx.position.off.mover, ctx.position.off.opponent),
        )
        assert ctx.position.position_id == position.id()
        assert ctx.on_roll and ctx.color in (game_pb2.COLOR_WHITE, game_pb2.COLOR_BLACK)
        assert ctx.segment.kind != game_pb2.SEGMENT_KIND_UNSPECIFIED and ctx.segment.steps
        assert ctx.segment.number >= 1 and ctx.turn_number >= 1
        assert len(ctx.dice) == 2
        assert len(ctx.legal_plays) >= 2
        for i, play in enumerate(ctx.legal_plays):
            assert play.index == i and play.text and play.steps
            assert play.result_position_id == play.result.position_id
        assert ctx.time_left.ToNanoseconds() > 0 and ctx.decision_time_limit.ToNanoseconds() > 0
        assert ctx.cube.value == 1 and ctx.match.game_number == 1
        assert ctx.opponent_name
        if n > 0:
            assert ctx.HasField("previous_answer_latency")
    assert any(r.context.opponent_last_play for r in requests[1:])


def _check_record(arena: Arena, record_json: dict[str, object]) -> None:
    json.dumps(record_json)  # JSON-ready
    result = record_json["result"]
    assert isinstance(result, dict) and result["termination"] == "borne_off"
    assert result["winner"] in ("White", "Black")
    decisions = record_json["decisions"]
    assert isinstance(decisions, list) and decisions
    assert all("latency_ms" in d and "fault" not in d for d in decisions)


class TestServerTransport:
    def test_full_game(self, arena: Arena, bot_server: Callable[..., BotServer]) -> None:
        white_bot, black_bot = RecordingBot(1), RecordingBot(2)
        white = arena.register_server_bot("white", bot_server(white_bot).address)
        black = arena.register_server_bot("black", bot_server(black_bot).address)
        record = arena.play_game(white.bot_id, black.bot_id, seed=42)
        _check_record(arena, record.to_json())
        _check_requests(white_bot.requests, record.game_id)
        _check_requests(black_bot.requests, record.game_id)
        assert any(
            d.get("info", {}).get("comment") == "random" for d in record.to_json()["decisions"]
        )

    def test_same_seed_same_game(self, arena: Arena, bot_server: Callable[..., BotServer]) -> None:
        def play() -> list[object]:
            a = arena.register_server_bot("a", bot_server(RandomBot(5)).address)
            b = arena.register_server_bot("b", bot_server(RandomBot(6)).address)
            record = arena.play_game(a.bot_id, b.bot_id, seed=9)
            return [(d["seq"], d["answer"]) for d in record.to_json()["decisions"]]

        assert play() == play()

    @pytest.mark.slow  # waits out a connection probe to a closed port
    def test_registered_over_grpc(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        import grpc

        from nardy.arena.protocol import arena_pb2, arena_pb2_grpc

        bot = bot_server(RandomBot(3))
        with grpc.insecure_channel(server.address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            response = stub.RegisterBot(
                arena_pb2.RegisterBotRequest(
                    name="rb", server=arena_pb2.ServerTransport(address=bot.address)
                ),
                timeout=5,
            )
            assert response.bot_id and response.token
            with_error = None
            try:
                stub.RegisterBot(
                    arena_pb2.RegisterBotRequest(
                        name="x", server=arena_pb2.ServerTransport(address="127.0.0.1:1")
                    ),
                    timeout=10,
                )
            except grpc.RpcError as exc:
                with_error = exc
            assert with_error is not None and with_error.code() == grpc.StatusCode.UNAVAILABLE


class TestDialOutTransport:
    def test_full_game(self, server: ArenaServer, bot_server: Callable[..., BotServer]) -> None:
        arena = server.arena
        bot = RecordingBot(7)
        entry = arena.register_dial_out_bot("dialer")
        client = dial_out(bot, server.address, entry.token).start()
        try:
            assert client.connected.wait(5)
            other = arena.register_server_bot("srv", bot_server(RandomBot(8)).address)
            record = arena.play_game(entry.bot_id, other.bot_id, seed=43)
            _check_record(arena, record.to_json())
            _check_requests(bot.requests, record.game_id)
        finally:
            client.stop()

    def test_many_games_at_once_over_one_stream(self, server: ArenaServer) -> None:
        arena = server.arena
        a = arena.register_dial_out_bot("a")
        b = arena.register_dial_out_bot("b")
        clients = [
            dial_out(RandomBot(1), server.address, a.token).start(),
            dial_out(RandomBot(2), server.address, b.token).start(),
        ]
        try:
            assert all(c.connected.wait(5) for c in clients)
            games = [arena.start_game(a.bot_id, b.bot_id, seed=s) for s in range(6)]
            records = [g.result(timeout=30) for g in games]
            ends = [r.outcome.termination if r.outcome else None for r in records]
            assert ends == ["borne_off"] * 6, (ends, [r.to_json()["faults"] for r in records])
            assert clients[0].connections == 1
        finally:
            for c in clients:
                c.stop()

    def test_reconnect_and_resume(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        """The stream breaks with a decision pending; the bot reconnects, the request is re-sent
        with its original sequence number, and the game completes without a fault."""
        arena = server.arena
        entry = arena.register_dial_out_bot("flaky")
        seen: list[tuple[str, int]] = []
        dropped = threading.Event()

        class DropOnce(RandomBot):
            def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
                seen.append((request.context.game_id, request.context.sequence))
                if len(seen) == 3 and not dropped.is_set():
                    dropped.set()
                    client.drop()  # break the stream before answering
                    raise RuntimeError("dropped")  # no answer on this stream
                return super().choose_play(request)

        client = dial_out(DropOnce(4), server.address, entry.token).start()
        try:
            assert client.connected.wait(5)
            other = arena.register_server_bot("srv", bot_server(RandomBot(8)).address)
            record = arena.play_game(entry.bot_id, other.bot_id, seed=44)
            assert record.outcome is not None and record.outcome.termination == "borne_off"
            assert dropped.is_set()
            assert seen[3] == seen[2]  # re-sent with the same (game, sequence)
            assert client.connections == 2
            assert sum(record.faults[0].values()) == 0
        finally:
            client.stop()

    def test_duplicate_answers_are_ignored(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        from rawstream import RawStream

        from nardy.arena.clients.dial_out import DialOutHub
        from nardy.arena.protocol import arena_pb2

        arena = server.arena
        entry = arena.register_dial_out_bot("dup")
        stream = RawStream(server.address)
        stream.hello(entry.token)
        stream.next_of("welcome")
        other = arena.register_server_bot("srv", bot_server(RandomBot(8)).address)
        game = arena.start_game(entry.bot_id, other.bot_id, seed=45)
        answered = 0
        while not game.done():
            try:
                item = stream.next(timeout=0.2)
            except Exception:
                continue
            if (
                isinstance(item, arena_pb2.ConnectResponse)
                and item.WhichOneof("message") == "decision_request"
            ):
                ctx = item.decision_request.choose_play.context
                answer = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence)
                answer.choose_play.play_index = 0
                for _ in range(2):
                    stream.send(arena_pb2.ConnectRequest(answer=answer))
                answered += 1
        record = game.result()
        stream.close()
        assert record.outcome is not None and record.outcome.termination == "borne_off"
        assert isinstance(entry.client, DialOutHub)
        assert entry.client.stale_answers == answered
        assert sum(entry.faults.counts.values()) == 0


class TestTournament:
    def test_round_robin(self, server: ArenaServer, bot_server: Callable[..., BotServer]) -> None:
        import grpc

        from nardy.arena.protocol import arena_pb2, arena_pb2_grpc

        arena = server.arena
        ids = [
            arena.register_server_bot(f"b{i}", bot_server(RandomBot(i)).address).bot_id
            for i in range(3)
        ]
        with grpc.insecure_channel(server.address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            created = stub.CreateTournament(
                arena_pb2.CreateTournamentRequest(
                    name="t",
                    bot_ids=ids,
                    variant=game_pb2.VariantSpec(name="long"),
                    games_per_pairing=2,
                    seed=1,
                    concurrency=3,
                ),
                timeout=5,
            )
            assert created.games_total == 6
            arena.tournaments[created.tournament_id].done.wait(30)
            standings = stub.GetStandings(
                arena_pb2.GetStandingsRequest(tournament_id=created.tournament_id), timeout=5
            )
        assert standings.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
        assert standings.games_played == 6
        assert sum(s.games for s in standings.standings) == 12
        assert sum(s.net_points for s in standings.standings) == 0


class TestLocalBuiltinBot:
    def test_cli_builtin_bot_as_local_process(
        self, arena: Arena, bot_server: Callable[..., BotServer]
    ) -> None:
        entry = arena.add_local_bot(
            "local-random",
            [
                sys.executable,
                "-m",
                "nardy.arena.cli",
                "bot",
                "serve",
                "--builtin",
                "random",
                "--seed",
                "1",
                "--port",
                "0",
            ],
        )
        other = arena.register_server_bot("srv", bot_server(RandomBot(8)).address)
        record = arena.play_game(entry.bot_id, other.bot_id, seed=46)
        assert record.outcome is not None and record.outcome.termination == "borne_off"


class TestKernelBots:
    def test_heuristic_cube_game(
        self, server: ArenaServer, bot_server: Callable[..., BotServer]
    ) -> None:
        """The kernel's heuristic bot through the protocol, with the cube: double/take requests."""
        from nardy.arena.sdk import builtin
        from nardy.core.game import CubeSettings

        pytest.importorskip("nardy.bots")
        arena = server.arena
        a = arena.register_server_bot("h1", bot_server(builtin("heuristic", 1)).address)
        b = arena.register_dial_out_bot("h2")
        client = dial_out(builtin("heuristic", 2), server.address, b.token).start()
        try:
            assert client.connected.wait(5)
            kinds: set[str] = set()
            for seed in range(4):
                record = arena.play_game(
                    a.bot_id,
                    b.bot_id,
                    variant="backgammon",
                    seed=seed,
                    cube=CubeSettings(enabled=True),
                )
                assert record.outcome is not None
                assert record.outcome.termination in ("borne_off", "double_dropped")
                assert all(sum(f.values()) == 0 for f in record.faults)
                kinds |= {d["kind"] for d in record.to_json()["decisions"]}
        finally:
            client.stop()
        assert {"play", "double"} <= kinds
