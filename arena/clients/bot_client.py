"""The arena's side of a bot: ask for one decision, with a deadline, and get an answer or a
typed :class:`~nardy.bots.faults.BotError`.

:class:`BotClient` is the interface the game runner uses; :class:`GrpcBotClient` calls a bot that
runs as a ``nardy.bot.v1.BotService`` server, and :class:`nardy.arena.clients.dial_out.DialOutHub` sends
the same requests down a bot's Connect stream. The driver owns the clock (python-chess
``SimpleEngine._timeout_for``): every call carries a gRPC deadline.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError, Message

from nardy.arena.protocol import BOT_PROTOCOL, BOT_SERVICE_NAME
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.bots.faults import (
    BotCrashedError,
    BotError,
    BotMalformedError,
    BotTimeoutError,
)

__all__ = ["ARENA_NAME", "BotClient", "GrpcBotClient", "channel_options", "rpc_status"]

ARENA_NAME = "nardy-arena 0.2.0"
"""Sent to bots in ``GetInfoRequest.arena``."""

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""Largest message the arena sends or accepts (gRPC's own default receive limit)."""

_M = TypeVar("_M", bound=Message)


def channel_options(max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> list[tuple[str, Any]]:
    """gRPC channel/server options shared by the arena and the SDK: message size limits."""
    return [
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.max_receive_message_length", max_message_bytes),
    ]


def rpc_status(exc: grpc.RpcError) -> tuple[grpc.StatusCode | None, str]:
    """The status code and details of a failed call (``RpcError`` raised by a call is also a
    ``grpc.Call``, which the stubs cannot express)."""
    code = getattr(exc, "code", None)
    details = getattr(exc, "details", None)
    return (code() if callable(code) else None, details() if callable(details) else str(exc))


class BotClient(abc.ABC):
    """One bot as the arena sees it: three decision calls, each bounded by ``timeout`` seconds.

    Implementations raise a :class:`BotError` subclass for every failure and never anything else.
    """

    @abc.abstractmethod
    def choose_play(
        self, request: _bot_pb2.ChoosePlayRequest, timeout: float
    ) -> _bot_pb2.ChoosePlayResponse:
        """Ask for the play of one segment."""

    @abc.abstractmethod
    def decide_double(
        self, request: _bot_pb2.DecideDoubleRequest, timeout: float
    ) -> _bot_pb2.DecideDoubleResponse:
        """Ask whether to double."""

    @abc.abstractmethod
    def respond_to_double(
        self, request: _bot_pb2.RespondToDoubleRequest, timeout: float
    ) -> _bot_pb2.RespondToDoubleResponse:
        """Ask for take, drop or beaver."""

    def game_ended(self, message: _arena_pb2.GameEnded) -> None:  # noqa: B027 - optional hook
        """Tell the bot a game it played is over (only dial-out bots are told)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


class _Undecodable:
    """What the safe deserializer returns for bytes that are not the expected message."""

    __slots__ = ("error", "size")

    def __init__(self, size: int, error: str) -> None:
        self.size = size
        self.error = error


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _safe_parser(cls: type[_M]) -> Callable[[bytes], _M | _Undecodable]:
    def parse(data: bytes) -> _M | _Undecodable:
        try:
            return cls.FromString(data)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return _Undecodable(len(data), str(exc))

    return parse


class GrpcBotClient(BotClient):
    """Calls a ``BotService`` server at ``address``, sending ``authorization: Bearer <token>``.

    Responses are decoded by a tolerant deserializer so that undecodable bytes are reported as
    :class:`BotMalformedError`, not as a generic RPC failure. ``address`` may be changed (a
    restarted local bot listens on a new port): :meth:`retarget` swaps the channel.
    """

    def __init__(
        self,
        address: str,
        token: str = "",
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._max_message_bytes = max_message_bytes
        self.address = address
        self._channel: grpc.Channel | None = None
        self.last_ok: float | None = None
        """When a call last succeeded (``time.time()``), for the operator's bot list."""
        self.last_code: grpc.StatusCode | None = None
        """The status of the last call (OK, or the failure's code); None before the first."""
        self._connect(address)

    def _connect(self, address: str) -> None:
        channel = grpc.insecure_channel(address, options=channel_options(self._max_message_bytes))
        prefix = f"/{BOT_SERVICE_NAME}/"

        def method(name: str, response: type[_M]) -> grpc.UnaryUnaryMultiCallable[Any, Any]:
            return channel.unary_unary(
                prefix + name,
                request_serializer=_serialize,
                response_deserializer=_safe_parser(response),
            )

        self._get_info = method("GetInfo", _bot_pb2.GetInfoResponse)
        self._choose_play = method("ChoosePlay", _bot_pb2.ChoosePlayResponse)
        self._decide_double = method("DecideDouble", _bot_pb2.DecideDoubleResponse)
        self._respond_to_double = method("RespondToDouble", _bot_pb2.RespondToDoubleResponse)
        old, self._channel = self._channel, channel
        self.address = address
        if old is not None:
            old.close()

    def retarget(self, address: str) -> None:
        """Point the client at a new address (e.g. a restarted local bot)."""
        self._connect(address)

    def _call(
        self,
        method: grpc.UnaryUnaryMultiCallable[Any, Any],
        request: Message,
        timeout: float,
        expected: type[_M],
        wait_for_ready: bool = False,
    ) -> _M:
        try:
            response = method(
                request,
                timeout=max(timeout, 0.001),
                metadata=self._metadata,
                wait_for_ready=wait_for_ready or None,
            )
        except grpc.RpcError as exc:
            code, details = rpc_status(exc)
            self.last_code = code
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise BotTimeoutError(f"no answer within {timeout:.3f}s") from None
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise BotMalformedError(f"oversized answer: {details}") from None
            name = code.name if code is not None else "UNKNOWN"
            raise BotCrashedError(f"{name}: {details}") from None
        except Exception as exc:  # pragma: no cover - grpc raises RpcError for call failures
            raise BotCrashedError(f"{type(exc).__name__}: {exc}") from exc
        if isinstance(response, _Undecodable):
            raise BotMalformedError(
                f"undecodable {expected.DESCRIPTOR.name} ({response.size} bytes): {response.error}"
            )
        assert isinstance(response, expected)
        self.last_code, self.last_ok = grpc.StatusCode.OK, time.time()
        return response

    def get_info(self, timeout: float = 5.0, *, wait_for_ready: bool = False) -> _bot_pb2.BotInfo:
        """The bot's ``GetInfo``; raises :class:`BotError` if it cannot answer. With
        ``wait_for_ready`` a bot that is not listening yet is waited for (up to ``timeout``)."""
        request = _bot_pb2.GetInfoRequest(protocol=BOT_PROTOCOL, arena=ARENA_NAME)
        return self._call(
            self._get_info, request, timeout, _bot_pb2.GetInfoResponse, wait_for_ready
        ).info

    def choose_play(
        self, request: _bot_pb2.ChoosePlayRequest, timeout: float
    ) -> _bot_pb2.ChoosePlayResponse:
        return self._call(self._choose_play, request, timeout, _bot_pb2.ChoosePlayResponse)

    def decide_double(
        self, request: _bot_pb2.DecideDoubleRequest, timeout: float
    ) -> _bot_pb2.DecideDoubleResponse:
        return self._call(self._decide_double, request, timeout, _bot_pb2.DecideDoubleResponse)

    def respond_to_double(
        self, request: _bot_pb2.RespondToDoubleRequest, timeout: float
    ) -> _bot_pb2.RespondToDoubleResponse:
        return self._call(
            self._respond_to_double, request, timeout, _bot_pb2.RespondToDoubleResponse
        )

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None


# Re-exported for callers that catch the whole family.
__all__ += ["BotError"]
