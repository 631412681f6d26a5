"""Deliberately faulty bots: each fault is detected, counted under its own kind and reported,
while a healthy game runs in parallel and completes; no record is lost or broken."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

import pytest
from faulty_bots import HangingBot, OutOfRangeBot, serve_garbage
from rawstream import RawStream

from nardy.arena.clients.dial_out import DialOutHub
from nardy.arena.protocol import arena_pb2
from nardy.arena.sdk import BotServer, RandomBot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy
from nardy.bots.loop import TimeControl
from nardy.core.record import GameRecord

HERE = Path(__file__).parent


@contextmanager
def healthy_game(arena: Arena, pair: tuple[str, str]) -> Iterator[Future[GameRecord]]:
    """A healthy game running while the block runs; checked to complete cleanly afterwards."""
    future = arena.start_game(*pair, seed=100)
    yield future
    record = future.result(timeout=30)
    assert record.outcome is not None and record.outcome.termination == "borne_off"
    assert all(sum(f.values()) == 0 for f in record.faults)


def _only_fault(record: GameRecord, colour: int, kind: str) -> None:
    assert record.faults[colour][kind] >= 1
    others = {k: v for k, v in record.faults[colour].items() if k != kind}
    assert sum(others.values()) == 0, record.faults
    assert sum(record.faults[1 - colour].values()) == 0
    faulty = [d for d in record.to_json()["decisions"] if "fault" in d]
    assert faulty and all(d["fault"]["kind"] == kind for d in faulty)
    json.dumps(record.to_json())


class TestServerBotFaults:
    def test_hang_past_deadline(
        self, arena: Arena, bot_server: Callable[..., BotServer], healthy_pair: tuple[str, str]
    ) -> None:
        hanging = HangingBot(good=2)
        bad = arena.register_server_bot("hang", bot_server(hanging).address)
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        try:
            with healthy_game(arena, healthy_pair):
                tc = TimeControl(per_decision=0.15, slack=0.05)
                started = time.perf_counter()
                record = arena.play_game(bad.bot_id, good.bot_id, seed=1, time_control=tc)
                # Cut at the deadline, not after the bot's 10 s hang (margin for a loaded machine).
                assert time.perf_counter() - started < 5
        finally:
            hanging.release.set()
        _only_fault(record, 0, "timeout")
        assert record.outcome is not None
        assert record.outcome.termination == "time_forfeit" and record.outcome.winner == 1
        late = next(d for d in record.to_json()["decisions"] if "fault" in d)
        assert 150 <= late["latency_ms"] < 5000
        assert bad.faults.counts["timeout"] == 1

    def test_out_of_range_index(
        self, arena: Arena, bot_server: Callable[..., BotServer], healthy_pair: tuple[str, str]
    ) -> None:
        bad = arena.register_server_bot("oor", bot_server(OutOfRangeBot()).address)
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        with healthy_game(arena, healthy_pair):
            record = arena.play_game(good.bot_id, bad.bot_id, seed=2)
        _only_fault(record, 1, "illegal")
        assert record.outcome is not None and record.outcome.termination == "bot_failure"
        assert record.outcome.winner == 0
        assert "out of range" in record.outcome.reason

    def test_garbage_answer(
        self, arena: Arena, bot_server: Callable[..., BotServer], healthy_pair: tuple[str, str]
    ) -> None:
        garbage, address = serve_garbage()
        try:
            bad = arena.register_server_bot("garbage", address, verify=False)
            good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
            with healthy_game(arena, healthy_pair):
                record = arena.play_game(bad.bot_id, good.bot_id, seed=3)
        finally:
            garbage.stop(0)
        _only_fault(record, 0, "malformed")
        assert record.outcome is not None and record.outcome.termination == "bot_failure"

    def test_crash_mid_game_and_restart(
        self,
        arena: Arena,
        bot_server: Callable[..., BotServer],
        healthy_pair: tuple[str, str],
        tmp_path: Path,
    ) -> None:
        marker = tmp_path / "crashed"
        bad = arena.add_local_bot(
            "crasher", [sys.executable, str(HERE / "crashing_bot.py"), str(marker), "5"]
        )
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        assert bad.process is not None
        first_pid = bad.process.pid
        with healthy_game(arena, healthy_pair):
            record = arena.play_game(bad.bot_id, good.bot_id, seed=4)
        assert marker.exists()
        _only_fault(record, 0, "crash")
        assert record.outcome is not None and record.outcome.termination == "bot_failure"
        # The arena restarts the process it started; the next game is played normally.
        assert bad.process.wait_restarted(1, timeout=10)
        assert bad.process.pid != first_pid
        again = arena.play_game(bad.bot_id, good.bot_id, seed=5)
        assert again.outcome is not None and again.outcome.termination == "borne_off"
        assert bad.faults.counts["crash"] == 1

    def test_random_policy_strikes_then_disqualifies(
        self, arena: Arena, bot_server: Callable[..., BotServer], healthy_pair: tuple[str, str]
    ) -> None:
        bad = arena.register_server_bot("oor", bot_server(OutOfRangeBot(good=1)).address)
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        policy = FaultPolicy(on_fault="random", max_faults=3)
        with healthy_game(arena, healthy_pair):
            record = arena.play_game(good.bot_id, bad.bot_id, seed=6, policy=policy)
        assert record.faults[1]["illegal"] == 3
        fallbacks = [d for d in record.to_json()["decisions"] if d.get("fallback")]
        assert len(fallbacks) == 2  # strikes 1 and 2 were played randomly; the 3rd disqualifies
        assert record.outcome is not None and record.outcome.termination == "bot_failure"
        assert "disqualified" in record.outcome.reason
        assert bad.faults.disqualified
        with pytest.raises(Exception, match="disqualified"):
            arena.start_game(good.bot_id, bad.bot_id)


class TestDialOutFaults:
    def _raw_bot(self, server: ArenaServer, name: str) -> tuple[Arena, object, RawStream]:
        arena = server.arena
        entry = arena.register_dial_out_bot(name)
        stream = RawStream(server.address)
        stream.hello(entry.token)
        stream.next_of("welcome")
        return arena, entry, stream

    def test_garbage_on_stream(
        self,
        server: ArenaServer,
        bot_server: Callable[..., BotServer],
        healthy_pair: tuple[str, str],
    ) -> None:
        arena, entry, stream = self._raw_bot(server, "garbage")
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        with healthy_game(arena, healthy_pair):
            game = arena.start_game(entry.bot_id, good.bot_id, seed=7)  # type: ignore[attr-defined]
            stream.next_of("decision_request")
            stream.send(b"\xff\xff\xff\xff\x0f")
            error = stream.next_of("error")
            assert error.error.code == arena_pb2.ERROR_CODE_PROTOCOL and error.error.fatal
            record = game.result(timeout=10)
        stream.close()
        _only_fault(record, 0, "malformed")

    def test_disconnect_without_return(
        self,
        server: ArenaServer,
        bot_server: Callable[..., BotServer],
        healthy_pair: tuple[str, str],
    ) -> None:
        arena, entry, stream = self._raw_bot(server, "gone")
        hub = entry.client  # type: ignore[attr-defined]
        assert isinstance(hub, DialOutHub)
        hub.reconnect_grace = 0.5  # this test waits for the grace to pass
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        with healthy_game(arena, healthy_pair):
            game = arena.start_game(good.bot_id, entry.bot_id, seed=8)  # type: ignore[attr-defined]
            stream.next_of("decision_request")
            stream.close()  # never answers, never comes back
            record = game.result(timeout=10)
        _only_fault(record, 1, "disconnect")
        assert record.outcome is not None and record.outcome.termination == "bot_failure"

    def test_disconnect_and_reconnect_with_raw_stream(
        self,
        server: ArenaServer,
        bot_server: Callable[..., BotServer],
        healthy_pair: tuple[str, str],
    ) -> None:
        arena, entry, stream = self._raw_bot(server, "back")
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        with healthy_game(arena, healthy_pair):
            game = arena.start_game(entry.bot_id, good.bot_id, seed=9)  # type: ignore[attr-defined]
            first = stream.next_of("decision_request").decision_request.choose_play.context
            stream.close()
            again = RawStream(server.address)
            again.hello(entry.token, resume=(first.game_id,))  # type: ignore[attr-defined]
            welcome = again.next_of("welcome").welcome
            assert list(welcome.resumed_game_ids) == [first.game_id]
            while not game.done():
                try:
                    item = again.next(timeout=0.2)
                except Exception:
                    continue
                if (
                    isinstance(item, arena_pb2.ConnectResponse)
                    and item.WhichOneof("message") == "decision_request"
                ):
                    ctx = item.decision_request.choose_play.context
                    answer = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence)
                    answer.choose_play.play_index = 0
                    again.send(arena_pb2.ConnectRequest(answer=answer))
            record = game.result()
            again.close()
        assert record.outcome is not None and record.outcome.termination == "borne_off"
        resumed = [d for d in record.to_json()["decisions"] if d["seq"] == first.sequence]
        assert len(resumed) == 1 and "fault" not in resumed[0]  # answered after the reconnect
        assert sum(record.faults[0].values()) == 0

    def test_flood(
        self,
        server: ArenaServer,
        bot_server: Callable[..., BotServer],
        healthy_pair: tuple[str, str],
    ) -> None:
        arena, entry, stream = self._raw_bot(server, "flooder")
        good = arena.register_server_bot("ok", bot_server(RandomBot(1)).address)
        # The flooder never answers its decision: a clock longer than the wait below means only
        # the flood guard can end this game in time (a 0.5 s clock raced the flood on a loaded
        # machine, and a timeout fault was recorded instead).
        patient = TimeControl(per_decision=20.0)
        with healthy_game(arena, healthy_pair):
            flooder = entry.bot_id  # type: ignore[attr-defined]
            game = arena.start_game(flooder, good.bot_id, seed=10, time_control=patient)
            ctx = stream.next_of("decision_request").decision_request.choose_play.context
            junk = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence + 1000)
            junk.choose_play.play_index = 0
            payload = arena_pb2.ConnectRequest(answer=junk).SerializeToString()
            for _ in range(1000):
                stream.send(payload)
            record = game.result(timeout=10)
        stream.close()
        _only_fault(record, 0, "flood")
        hub = entry.client  # type: ignore[attr-defined]
        assert isinstance(hub, DialOutHub) and hub.floods == 1
        assert hub.stale_answers > arena.flood.burst
