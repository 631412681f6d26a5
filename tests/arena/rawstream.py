"""A hand-driven Connect stream for tests: send any bytes, read every response."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import grpc

from nardy.arena.protocol import ARENA_SERVICE_NAME
from nardy.arena.protocol import arena_pb2 as _arena_pb2


class RawStream:
    """Opens ``ArenaService.Connect`` and exposes the two directions as queues.

    Requests are raw bytes (so a test can send garbage); responses are decoded messages. When
    the stream ends, ``responses`` receives the final :class:`grpc.RpcError` (or ``None``).
    """

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        method = self.channel.stream_stream(
            f"/{ARENA_SERVICE_NAME}/Connect",
            request_serializer=lambda b: b,
            response_deserializer=_arena_pb2.ConnectResponse.FromString,
        )
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self.responses: queue.Queue[_arena_pb2.ConnectResponse | grpc.RpcError | None] = (
            queue.Queue()
        )
        self.call = method(self._requests())
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _requests(self) -> Iterator[bytes]:
        while True:
            item = self._out.get()
            if item is None:
                return
            yield item

    def _read(self) -> None:
        try:
            for message in self.call:
                self.responses.put(message)
            self.responses.put(None)
        except grpc.RpcError as exc:
            self.responses.put(exc)
        finally:
            self.ended.set()

    def send(self, message: _arena_pb2.ConnectRequest | bytes) -> None:
        self._out.put(message if isinstance(message, bytes) else message.SerializeToString())

    def hello(self, token: str, resume: tuple[str, ...] = ()) -> None:
        self.send(
            _arena_pb2.ConnectRequest(
                hello=_arena_pb2.Hello(token=token, resume_game_ids=list(resume))
            )
        )

    def next(self, timeout: float = 5.0) -> _arena_pb2.ConnectResponse | grpc.RpcError | None:
        return self.responses.get(timeout=timeout)

    def next_of(self, kind: str, timeout: float = 5.0) -> _arena_pb2.ConnectResponse:
        """The next response whose ``message`` oneof is ``kind`` (others are skipped)."""
        while True:
            item = self.next(timeout)
            if not isinstance(item, _arena_pb2.ConnectResponse):
                raise AssertionError(f"stream ended while waiting for {kind}: {item!r}")
            if item.WhichOneof("message") == kind:
                return item

    def close(self) -> None:
        self._out.put(None)
        self.call.cancel()
        self.channel.close()
