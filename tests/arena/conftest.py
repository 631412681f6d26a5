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

from arena_clock import CLOCK

from nardy.arena.sdk import BotBase, BotServer, RandomBot, serve_bot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy


@pytest.fixture
def server() -> Iterator[ArenaServer]:
    # A bot that reconnects must make it within the grace also on a loaded machine; the test
    # of a bot that never comes back shortens its own bot's grace.
    arena = Arena(time_control=CLOCK, policy=FaultPolicy(), reconnect_grace=5.0)
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
