"""The arena's registered bots as Play opponents (``nardy web --arena``, docs/play.md): a real
arena server on 127.0.0.1 with a server bot and a dial-out bot registered, each decision asked
through the arena (``ArenaService.AskBot``, admin token) and its bot client."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")
pytest.importorskip("grpc", reason="the arena needs the arena extra")

import grpc
from starlette.testclient import TestClient

from nardy.arena.clients import convert
from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, bot_pb2
from nardy.arena.sdk import builtin, dial_out, serve_bot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game, PlayDecision
from nardy.web.app import create_app

TOKEN = "the-admin-token"


ASKED: dict[str, int] = {"srv": 0, "dial": 0}
"""Plays the arena asked of each bot through its client (server bot, dial-out stream)."""


def _counting(name: str, ask: Any) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        ASKED[name] += 1
        return ask(*args, **kwargs)

    return counted


def _bot_decisions(record: dict[str, Any], colour: str) -> int:
    """The plays of ``colour`` that were decisions (a forced play is made without asking)."""
    return sum(
        1
        for e in record["events"]
        if e["kind"] == "play" and e["player"] == colour and e.get("choices", 2) > 1
    )


@pytest.fixture(scope="module")
def arena() -> Iterator[ArenaServer]:
    server = ArenaServer(
        Arena(),
        host="127.0.0.1",
        admin_token=TOKEN,
        admin_port=0,  # the operator's port, where the web asks (no 32 KiB cap on a request)
    ).start()
    served = serve_bot(builtin("heuristic", 1))
    server.arena.register_server_bot("srv", served.address, unique=True)
    entry = server.arena.register_dial_out_bot("dial", unique=True)
    dialer = dial_out(builtin("random", 2), server.address, entry.token, status=None).start()
    for name in ("srv", "dial"):  # count what the arena asks each bot's own client
        client = server.arena.bot_by_name_or_id(name).client
        client.choose_play = _counting(name, client.choose_play)  # type: ignore[method-assign]
    try:
        assert dialer.connected.wait(10)
        yield server
    finally:
        dialer.stop()
        served.stop(0)
        server.stop(grace=0.5)


@pytest.fixture
def web(tmp_path: Path, arena: ArenaServer) -> Iterator[TestClient]:
    app = create_app(
        str(tmp_path / "arena.db"),
        arena=arena.address,
        arena_token=TOKEN,
        arena_admin=arena.admin_address,
    )
    with TestClient(app) as client:
        yield client


def _play(client: TestClient, game: str, secret: str, moves: int | None) -> dict[str, Any]:
    """Play random offered steps (taking every double) until the game ends, or until the bot
    has moved ``moves`` times; the last state."""
    h = {"X-Nardy-Seat": secret}
    rng = random.Random(3)
    state = client.get(f"/api/play/{game}", headers=h).json()
    replies = 0
    for _ in range(3000):
        assert not state["bot_error"], state["bot_error"]
        if state["result"] is not None or (moves is not None and replies >= moves):
            return dict(state)
        d = state["decision"]
        if d["player"] != state["seat"]:
            params = {"after": state["version"], "wait": 15}
            state = client.get(f"/api/play/{game}", params=params, headers=h).json()
            replies += 1
            continue
        if d["kind"] == "double":
            r = client.post(f"/api/play/{game}/cube", json={"action": "roll"}, headers=h)
        elif d["kind"] == "take":
            r = client.post(f"/api/play/{game}/cube", json={"action": "take"}, headers=h)
        elif state["complete"]:
            r = client.post(f"/api/play/{game}/confirm", headers=h)
        else:
            r = client.post(f"/api/play/{game}/step", json=rng.choice(state["offered"]), headers=h)
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


def test_the_form_lists_the_arenas_bots(web: TestClient) -> None:
    page = web.get("/play").text
    assert 'value="bot:@srv"' in page and 'value="bot:@dial"' in page


def test_a_whole_game_against_an_arena_server_bot(web: TestClient) -> None:
    made = web.post(
        "/api/play",
        json={"variant": "backgammon", "opponent": {"kind": "bot", "bot": "@srv"}, "seed": 5},
    )
    assert made.status_code == 201, made.text
    game, secret = made.json()["id"], made.json()["seat_url"].split("#seat=")[1]
    end = _play(web, game, secret, None)
    assert end["result"] is not None
    assert {s["name"] for s in end["seats"]} == {"you", "@srv"}
    record = web.get(f"/api/play/{game}/records").json()["games"][0]
    bot = "White" if end["seat"] == "black" else "Black"
    assert ASKED["srv"] == _bot_decisions(record, bot) > 5  # each asked through the arena


def test_a_dial_out_bot_plays_through_its_stream(web: TestClient) -> None:
    made = web.post(
        "/api/play",
        json={"variant": "long", "opponent": {"kind": "bot", "bot": "@dial"}, "colour": "black"},
    ).json()
    state = _play(web, made["id"], made["seat_url"].split("#seat=")[1], 4)
    plays = [e for e in state["log"] if e["kind"] == "play" and e["player"] == "white"]
    assert len(plays) >= 3  # White is the dial-out bot
    record = web.get(f"/api/play/{made['id']}/records").json()["games"][0]
    assert ASKED["dial"] == _bot_decisions(record, "White") >= 1  # each down its stream


def test_unknown_arena_bots_and_no_arena_are_refused_in_words(
    web: TestClient, tmp_path: Path, arena: ArenaServer
) -> None:
    r = web.post("/api/play", json={"variant": "long", "opponent": {"kind": "bot", "bot": "@x"}})
    assert r.status_code == 400 and "no bot '@x' in the arena" in r.json()["error"]
    assert "srv" in r.json()["error"]  # the bots it has
    # Without the admin token the arena's bots cannot be asked: none offered, none seated.
    with TestClient(create_app(str(tmp_path / "b.db"), arena=arena.address)) as bare:
        assert "bot:@srv" not in bare.get("/play").text
        body = {"variant": "long", "opponent": {"kind": "bot", "bot": "@srv"}}
        r = bare.post("/api/play", json=body)
        assert r.status_code == 400 and "no arena" in r.json()["error"]


def test_ask_bot_needs_the_admin_token(arena: ArenaServer) -> None:
    """AskBot makes the arena call a bot: only its operator may (the web with the token)."""
    variant = load_variant("backgammon")
    ask = bot_pb2.DecideDoubleRequest()
    convert.variant_spec(variant, ask.context.variant)
    convert.position_to_proto(variant.start_position(), ask.context.position)
    ask.context.game_id, ask.context.sequence = "g", 7
    request = arena_pb2.AskBotRequest(bot="srv", request=arena_pb2.DecisionRequest())
    request.request.decide_double.CopyFrom(ask)
    with grpc.insecure_channel(arena.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.AskBot(request, timeout=5)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        admin = (("authorization", f"Bearer {TOKEN}"),)
        with pytest.raises(grpc.RpcError) as unknown:
            stub.AskBot(arena_pb2.AskBotRequest(bot="nobody"), timeout=5, metadata=admin)
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        started = time.monotonic()
        answer = stub.AskBot(request, timeout=5, metadata=admin).answer
        assert answer.WhichOneof("answer") == "decide_double" and time.monotonic() - started < 5
        assert (answer.game_id, answer.sequence) == ("g", 7)
        # No double in the opening position (the heuristic bot's answer, through the arena).
        assert answer.decide_double.action == bot_pb2.DOUBLE_ACTION_ROLL


def _big_decision() -> bot_pb2.ChoosePlayRequest:
    """A plakoto decision whose request, with all its legal plays, is over 32 KiB."""
    variant = load_variant("plakoto")
    for seed in range(100):
        game = Game(variant, SeededDice(seed))
        rng = random.Random(seed)
        while game.decision is not None:
            decision = game.decision
            if isinstance(decision, PlayDecision):
                request = bot_pb2.ChoosePlayRequest()
                ctx = request.context
                convert.variant_spec(variant, ctx.variant)
                convert.position_to_proto(decision.position, ctx.position)
                ctx.dice.extend(decision.segment.dice)
                convert.segment_to_proto(decision.segment, 1, ctx.segment)
                for index, play in enumerate(decision.plays):
                    convert.legal_play(index, play, ctx.legal_plays.add())
                if request.ByteSize() > 40_000:
                    return request
                game.decide(rng.randrange(len(decision.plays)))
            else:
                game.decide(False)
    raise AssertionError("no decision that large")


def test_a_decision_larger_than_the_public_ports_cap_goes_to_the_operators_port(
    arena: ArenaServer,
) -> None:
    """Some decisions' legal plays make a request over the public port's 32 KiB (plakoto:
    66 KB in a sample of games): the web asks on the operator's port (--arena-admin)."""
    request = arena_pb2.AskBotRequest(bot="srv", request=arena_pb2.DecisionRequest())
    request.request.choose_play.CopyFrom(_big_decision())
    admin = (("authorization", f"Bearer {TOKEN}"),)
    assert arena.admin_address is not None
    with grpc.insecure_channel(arena.admin_address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        answer = stub.AskBot(request, timeout=10, metadata=admin).answer
        index = answer.choose_play.play_index
        assert 0 <= index < len(request.request.choose_play.context.legal_plays)
    with grpc.insecure_channel(arena.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.AskBot(request, timeout=10, metadata=admin)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
