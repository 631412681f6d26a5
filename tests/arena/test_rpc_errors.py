"""The arena's one mapping of domain errors to gRPC status codes (nardy.arena.service.rpc_errors): each
mapping, the decorator on plain, coroutine and streaming handlers, and over a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from nardy.arena.protocol import arena_pb2, arena_pb2_grpc
from nardy.arena.records.storage import StorageError
from nardy.arena.service.limits import LimitError
from nardy.arena.service.rpc_errors import (
    ArenaClosedError,
    BotExistsError,
    BotNotReadyError,
    Refused,
    TournamentExistsError,
    grpc_errors,
    status_of,
)
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import BotTimeoutError

Code = grpc.StatusCode

# What each domain error means to a gRPC client (the status codes' documented meanings:
# NOT_FOUND "some requested entity was not found", ALREADY_EXISTS "the entity that a client
# attempted to create already exists", UNAVAILABLE "the service is currently unavailable" ...).
_EXPECTED: list[tuple[BaseException, Code, str]] = [
    (KeyError("zz"), Code.NOT_FOUND, "not found: zz"),
    (ValueError("bad seed"), Code.INVALID_ARGUMENT, "bad seed"),
    (LimitError("too many bots"), Code.INVALID_ARGUMENT, "too many bots"),
    (BotExistsError("a bot named 'x' is registered already"), Code.ALREADY_EXISTS, "x"),
    (TournamentExistsError("t-1 exists"), Code.ALREADY_EXISTS, "t-1 exists"),
    (BotNotReadyError("bot b is not connected"), Code.FAILED_PRECONDITION, "not connected"),
    (ArenaClosedError("shutting down"), Code.UNAVAILABLE, "shutting down"),
    (StorageError("database is locked"), Code.UNAVAILABLE, "the arena database: database"),
    (BotTimeoutError("no answer in 5 s"), Code.UNAVAILABLE, "no answer in 5 s"),
    (NotImplementedError("TLS"), Code.UNIMPLEMENTED, "TLS"),
    (Refused(Code.PERMISSION_DENIED, "a bot's token"), Code.PERMISSION_DENIED, "a bot's token"),
]


@pytest.mark.parametrize(("error", "code", "words"), _EXPECTED, ids=lambda x: type(x).__name__)
def test_each_domain_error_has_its_status(error: BaseException, code: Code, words: str) -> None:
    status = status_of(error)
    assert status is not None and status[0] == code and words in status[1]


def test_bugs_are_left_to_grpc() -> None:
    """An error that is no domain error (a bug) is not dressed up as a client's mistake."""
    assert status_of(RuntimeError("oops")) is None
    assert status_of(AttributeError("x")) is None


def test_not_found_words_come_from_the_handler() -> None:
    request = arena_pb2.GetStandingsRequest(tournament_id="t-9")
    status = status_of(KeyError("t-9"), request, lambda r, e: f"no tournament {r.tournament_id!r}")
    assert status == (Code.NOT_FOUND, "no tournament 't-9'")


class _Aborted(Exception):
    pass


class _Context:
    """Records the status a handler ends with (like grpc's context, abort raises)."""

    def __init__(self) -> None:
        self.status: tuple[Code, str] | None = None

    def abort(self, code: Code, details: str) -> None:
        self.status = (code, details)
        raise _Aborted


class _AsyncContext(_Context):
    async def abort(self, code: Code, details: str) -> None:  # type: ignore[override]
        self.status = (code, details)
        raise _Aborted


class _Handlers:
    @grpc_errors()
    def unary(self, request: Exception, context: Any) -> str:
        raise request

    @grpc_errors(not_found=lambda request, exc: f"no such thing {exc}")
    async def coroutine(self, request: Exception, context: Any) -> str:
        await asyncio.sleep(0)
        raise request

    @grpc_errors()
    async def stream(self, request: Exception, context: Any) -> AsyncIterator[int]:
        yield 1
        raise request


def test_the_decorator_on_a_plain_handler() -> None:
    context = _Context()
    with pytest.raises(_Aborted):
        _Handlers().unary(StorageError("disk full"), context)
    assert context.status == (Code.UNAVAILABLE, "the arena database: disk full")
    with pytest.raises(RuntimeError):  # a bug passes through untouched
        _Handlers().unary(RuntimeError("bug"), _Context())


def test_the_decorator_on_a_coroutine_and_a_stream() -> None:
    context = _AsyncContext()
    with pytest.raises(_Aborted):
        asyncio.run(_Handlers().coroutine(KeyError("x"), context))
    assert context.status == (Code.NOT_FOUND, "no such thing 'x'")

    async def drain(context: Any) -> list[int]:
        return [i async for i in _Handlers().stream(ValueError("limit must be >= 0"), context)]

    context = _AsyncContext()
    with pytest.raises(_Aborted):
        asyncio.run(drain(context))
    assert context.status == (Code.INVALID_ARGUMENT, "limit must be >= 0")


def _code(call: Any) -> tuple[Code, str]:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code(), info.value.details()


def test_every_handler_maps_the_same_way_over_grpc(
    server: ArenaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unary handlers on the thread pool and async streams on the event loop answer alike."""
    with grpc.insecure_channel(server.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        unknown = "t-nonesuch"
        assert _code(
            lambda: stub.GetStandings(arena_pb2.GetStandingsRequest(tournament_id=unknown))
        ) == (Code.NOT_FOUND, f"no tournament {unknown!r}")
        assert _code(
            lambda: list(stub.ExportGames(arena_pb2.ExportGamesRequest(tournament_id=unknown)))
        ) == (Code.NOT_FOUND, f"no tournament {unknown!r}")
        assert _code(
            lambda: list(
                stub.WatchTournament(arena_pb2.WatchTournamentRequest(tournament_id=unknown))
            )
        ) == (Code.NOT_FOUND, f"no tournament {unknown!r}")
        assert _code(lambda: stub.ListGames(arena_pb2.ListGamesRequest(limit=-1)))[0] == (
            Code.INVALID_ARGUMENT
        )

        def broken(*args: object, **kwargs: object) -> None:
            raise StorageError("database is locked")

        # Every call that reads the database answers UNAVAILABLE when it cannot (ListBots
        # had no mapping before: a failure there was an anonymous UNKNOWN).
        for method in ("list_bots", "list_tournaments", "standings", "export_records"):
            monkeypatch.setattr(server.arena, method, broken)
        monkeypatch.setattr(server.arena, "tournament_status", lambda tid: "finished")
        for call in (
            lambda: stub.ListBots(arena_pb2.ListBotsRequest()),
            lambda: stub.ListTournaments(arena_pb2.ListTournamentsRequest()),
            lambda: stub.GetStandings(arena_pb2.GetStandingsRequest(tournament_id="t")),
            lambda: list(stub.ExportGames(arena_pb2.ExportGamesRequest(tournament_id="t"))),
        ):
            assert _code(call) == (Code.UNAVAILABLE, "the arena database: database is locked")
