"""The arena's handler table and admin set come from the protos (arena.proto), not from lists
written by hand: an RPC added to the proto is served, and marked admin there, without another
edit (docs/architecture.md, "Adding an arena RPC")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc

from nardy.arena.protocol import ARENA_ADMIN_METHODS, ARENA_SERVICE, ARENA_SERVICE_NAME, arena_pb2
from nardy.arena.service.servicer import ArenaServicer, add_arena_servicer


@dataclass
class _Call:
    method: str


class _Server:
    """What ``add_arena_servicer`` registers on, kept to look the handlers up."""

    def __init__(self) -> None:
        self.generic: list[Any] = []

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)

    def handler(self, name: str) -> grpc.RpcMethodHandler[Any, Any] | None:
        found = [g.service(_Call(f"/{ARENA_SERVICE_NAME}/{name}")) for g in self.generic]
        return next((h for h in found if h is not None), None)


def _table(*, plain_unary_only: bool = False) -> _Server:
    server = _Server()
    add_arena_servicer(ArenaServicer(None), server, plain_unary_only=plain_unary_only)  # type: ignore[arg-type]
    return server


def test_the_admin_methods_are_those_the_proto_marks() -> None:
    assert {"RegisterBot", "CreateTournament", "CancelTournament", "AskBot"} == ARENA_ADMIN_METHODS


def test_every_rpc_of_the_proto_is_served_with_its_streaming_and_messages() -> None:
    server = _table()
    for method in ARENA_SERVICE.methods:
        handler = server.handler(method.name)
        assert handler is not None, method.name
        assert (handler.request_streaming, handler.response_streaming) == (
            method.client_streaming,
            method.server_streaming,
        ), method.name
    listed = server.handler("ListBots")
    assert listed is not None and listed.request_deserializer is not None
    assert listed.request_deserializer(b"") == arena_pb2.ListBotsRequest()
    # Connect decodes tolerantly: bytes that are no message become a fault, not an exception.
    connect = server.handler("Connect")
    assert connect is not None and connect.request_deserializer is not None
    assert type(connect.request_deserializer(b"\xff\xff")).__name__ == "Undecodable"


def test_the_operator_port_serves_the_plain_unary_methods_only() -> None:
    server = _table(plain_unary_only=True)
    served = {m.name for m in ARENA_SERVICE.methods if server.handler(m.name) is not None}
    assert served >= ARENA_ADMIN_METHODS
    assert not {"Connect", "WatchTournament", "ExportGames"} & served
