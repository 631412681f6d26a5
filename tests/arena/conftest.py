"""Fixtures for the arena tests: a real arena server on a free loopback port, and bots."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Helpers beside the tests (rawstream.py, faulty_bots.py) are imported by plain name.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

pytest.importorskip("grpc")

from nardy.arena.runner import FaultPolicy, TimeControl
from nardy.arena.sdk import BotBase, BotServer, RandomBot, serve_bot
from nardy.arena.server import Arena, ArenaServer

FAST = TimeControl(per_decision=0.5, reserve=0.0, slack=0.05)
"""The default clock of the tests: generous for a loopback bot, short enough for fast faults."""


@pytest.fixture
def server() -> Iterator[ArenaServer]:
    arena = Arena(time_control=FAST, policy=FaultPolicy(), reconnect_grace=0.5)
    srv = ArenaServer(arena).start()
    try:
        yield srv
    finally:
        srv.stop(grace=0.5)


@pytest.fixture
def arena(server: ArenaServer) -> Arena:
    return server.arena


@pytest.fixture
def bot_server() -> Iterator[Callable[..., BotServer]]:
    """Start SDK bots as servers; all are stopped at the end of the test."""
    started: list[BotServer] = []

    def start(bot: BotBase, **kwargs: object) -> BotServer:
        srv = serve_bot(bot, **kwargs)  # type: ignore[arg-type]
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop(0)


@pytest.fixture
def healthy_pair(arena: Arena, bot_server: Callable[..., BotServer]) -> tuple[str, str]:
    """Two registered random server bots, for the healthy game that runs beside a faulty one."""
    a = arena.register_server_bot("healthy-a", bot_server(RandomBot(11)).address)
    b = arena.register_server_bot("healthy-b", bot_server(RandomBot(12)).address)
    return a.bot_id, b.bot_id
