"""Deliberately faulty bots for the fault tests."""

from __future__ import annotations

import threading
from concurrent import futures

import grpc

from nardy.arena.protocol import BOT_SERVICE_NAME, bot_pb2
from nardy.arena.sdk import RandomBot


class HangingBot(RandomBot):
    """Plays normally for ``good`` decisions, then hangs until :attr:`release` is set."""

    name = "hanging"

    def __init__(self, good: int = 3) -> None:
        super().__init__(0)
        self.good = good
        self.calls = 0
        self.release = threading.Event()

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        self.calls += 1
        if self.calls > self.good:
            self.release.wait(10)
        return super().choose_play(request)


class OutOfRangeBot(RandomBot):
    """Answers an index past the end of the legal plays after ``good`` decisions."""

    name = "out-of-range"

    def __init__(self, good: int = 2) -> None:
        super().__init__(0)
        self.good = good
        self.calls = 0

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        self.calls += 1
        if self.calls > self.good:
            return len(request.context.legal_plays) + 7
        return super().choose_play(request)


def serve_garbage() -> tuple[grpc.Server, str]:
    """A BotService server whose every answer is bytes that do not decode as the response."""

    def garbage(request: bytes, context: grpc.ServicerContext) -> bytes:
        return b"\xff\xff\xff\xff\x0f"

    handler = grpc.unary_unary_rpc_method_handler(
        garbage, request_deserializer=lambda b: b, response_serializer=lambda b: b
    )
    methods = {
        name: handler for name in ("GetInfo", "ChoosePlay", "DecideDouble", "RespondToDouble")
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(BOT_SERVICE_NAME, methods),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"
