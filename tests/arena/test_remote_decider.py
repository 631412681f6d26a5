"""A remote bot is a decider of the one game loop (nardy.arena.clients.runner.RemoteDecider): its requests
carry the loop's question number and limit, its failures are the loop's typed faults, and an
in-process bot meeting it sits in its seat as itself."""

from __future__ import annotations

from typing import Any

from nardy.arena.clients.bot_client import BotClient
from nardy.arena.clients.runner import Seat, run_game
from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import RandomBot as ProtocolRandom
from nardy.arena.sdk import double_response, play_response, take_response
from nardy.bots import RandomBot
from nardy.bots.faults import BotMalformedError, FaultPolicy
from nardy.bots.loop import TimeControl
from nardy.core import load_variant


class Recording(BotClient):
    """Answers as the SDK's random bot, keeps every request, and fails every ``fail``-th call."""

    def __init__(self, fail: int = 0) -> None:
        self.bot = ProtocolRandom(7)
        self.requests: list[Any] = []
        self.fail = fail

    def _check(self, request: Any) -> None:
        self.requests.append(request)
        if self.fail and len(self.requests) % self.fail == 0:
            raise BotMalformedError("no choice set")

    def choose_play(
        self, request: bot_pb2.ChoosePlayRequest, timeout: float
    ) -> bot_pb2.ChoosePlayResponse:
        self._check(request)
        return play_response(self.bot.choose_play(request))

    def decide_double(
        self, request: bot_pb2.DecideDoubleRequest, timeout: float
    ) -> bot_pb2.DecideDoubleResponse:
        self._check(request)
        return double_response(self.bot.decide_double(request))

    def respond_to_double(
        self, request: bot_pb2.RespondToDoubleRequest, timeout: float
    ) -> bot_pb2.RespondToDoubleResponse:
        self._check(request)
        return take_response(self.bot.respond_to_double(request))


def _play(client: Recording, policy: FaultPolicy) -> Any:
    seats = (Seat("local", "local", None, bot=RandomBot(1)), Seat("remote", "remote", client))
    return run_game(
        load_variant("long"),
        seats,
        game_id="g1",
        seed=4,
        time_control=TimeControl(per_decision=2.0, reserve=3.0),
        policy=policy,
    )


def test_requests_carry_the_loops_number_and_limit() -> None:
    client = Recording()
    record = _play(client, FaultPolicy())
    assert record.outcome is not None and record.outcome.termination == "borne_off"
    remote = [d for d in record.to_json()["decisions"] if d["player"] == "Black"]
    assert [r.context.sequence for r in client.requests] == [d["seq"] for d in remote]
    first = client.requests[0].context
    assert first.time_left.seconds == 5 and first.decision_time_limit.seconds == 2
    assert not first.HasField("previous_answer_latency")
    assert client.requests[1].context.HasField("previous_answer_latency")
    assert {d["player"] for d in record.to_json()["decisions"]} == {"White", "Black"}


def test_a_remote_fault_is_the_loops_fault() -> None:
    record = _play(Recording(fail=4), FaultPolicy(on_fault="random", max_faults=0))
    assert record.outcome is not None and record.outcome.termination == "borne_off"
    faults = [d for d in record.to_json()["decisions"] if "fault" in d]
    assert faults and all(d["fault"]["kind"] == "malformed" and d["fallback"] for d in faults)
    assert record.faults[1]["malformed"] == len(faults) and record.faults[0]["malformed"] == 0
    record = _play(Recording(fail=4), FaultPolicy())
    assert record.outcome is not None and record.outcome.termination == "bot_failure"
    assert record.outcome.winner == 0
    assert record.outcome.reason == "remote: malformed: no choice set"
