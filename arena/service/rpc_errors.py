"""The arena's domain errors and the one place that turns them into gRPC status codes.

The arena (:class:`nardy.arena.service.core.Arena`) raises plain exceptions; the servicer's handlers
are wrapped in :func:`grpc_errors`, which ends the call with the status :func:`status_of` gives
(``KeyError`` → ``NOT_FOUND``, :class:`~nardy.arena.records.storage.StorageError` → ``UNAVAILABLE``,
``ValueError`` → ``INVALID_ARGUMENT`` …). The same decorator serves the synchronous unary
handlers (run on the server's thread pool) and the ``grpc.aio`` coroutines and async generators
(the streams), so no handler repeats an ``except … context.abort`` ladder.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast

import grpc

from nardy.arena.records.storage import StorageError
from nardy.arena.service.limits import LimitError
from nardy.bots.faults import BotError

__all__ = [
    "ArenaClosedError",
    "BotExistsError",
    "BotNotReadyError",
    "NotFound",
    "Refused",
    "TournamentExistsError",
    "grpc_errors",
    "status_of",
]


class ArenaClosedError(RuntimeError):
    """The arena is shutting down and starts no new games."""


class BotNotReadyError(RuntimeError):
    """A bot of a new tournament cannot play now (a server bot refuses its token, a dial-out bot
    is not connected)."""


class BotExistsError(ValueError):
    """A bot with the same name is registered already."""


class TournamentExistsError(ValueError):
    """A tournament with the same id (same bots, variant, format and seed) is already known."""


class Refused(Exception):
    """End the call with exactly this status (an admin check, a stored-but-not-live tournament)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


NotFound = Callable[[Any, KeyError], str]
"""What to say for a ``KeyError`` raised by a handler: ``(request, error) -> details``."""


def _key(exc: KeyError) -> str:
    return str(exc.args[0]) if exc.args else "?"


_STATUS: tuple[tuple[type[BaseException], grpc.StatusCode, Callable[[BaseException], str]], ...] = (
    (BotExistsError, grpc.StatusCode.ALREADY_EXISTS, str),
    (TournamentExistsError, grpc.StatusCode.ALREADY_EXISTS, str),
    (BotNotReadyError, grpc.StatusCode.FAILED_PRECONDITION, str),
    (ArenaClosedError, grpc.StatusCode.UNAVAILABLE, str),
    (StorageError, grpc.StatusCode.UNAVAILABLE, lambda e: f"the arena database: {e}"),
    (BotError, grpc.StatusCode.UNAVAILABLE, lambda e: f"the bot did not answer: {e}"),
    (LimitError, grpc.StatusCode.INVALID_ARGUMENT, str),
    (NotImplementedError, grpc.StatusCode.UNIMPLEMENTED, str),
    (KeyError, grpc.StatusCode.NOT_FOUND, lambda e: f"not found: {_key(cast(KeyError, e))}"),
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT, str),
)
"""Domain error → status and details, most specific first (the first match wins);
:class:`Refused` carries its own."""


def status_of(
    exc: BaseException, request: Any = None, not_found: NotFound | None = None
) -> tuple[grpc.StatusCode, str] | None:
    """The status that ends a call which raised ``exc``; None for an error that is a bug (left
    to gRPC, which answers ``UNKNOWN`` and logs it). ``not_found`` words a ``KeyError``."""
    if isinstance(exc, Refused):
        return exc.code, exc.details
    if isinstance(exc, KeyError) and not_found is not None:
        return grpc.StatusCode.NOT_FOUND, not_found(request, exc)
    for kind, code, details in _STATUS:
        if isinstance(exc, kind):
            return code, details(exc)
    return None


def _status_or_raise(
    exc: Exception, request: Any, not_found: NotFound | None
) -> tuple[grpc.StatusCode, str]:
    """:func:`status_of`, or ``exc`` raised again (a bug: gRPC answers ``UNKNOWN`` and logs it)."""
    status = status_of(exc, request, not_found)
    if status is None:
        raise exc
    return status


F = TypeVar("F", bound=Callable[..., Any])


def grpc_errors(not_found: NotFound | None = None) -> Callable[[F], F]:
    """Wrap a servicer method ``(self, request, context)``: a domain error it raises ends the
    call with :func:`status_of`'s status. Works on plain methods, coroutines and async
    generators (for a stream, an error after some messages were sent ends it the same way)."""

    def wrap(handler: F) -> F:
        if inspect.isasyncgenfunction(handler):

            @functools.wraps(handler)
            async def stream(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
                try:
                    async for item in handler(self, request, context):
                        yield item
                except Exception as exc:
                    await context.abort(*_status_or_raise(exc, request, not_found))

            return cast(F, stream)
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def coroutine(self: Any, request: Any, context: Any) -> Any:
                try:
                    return await handler(self, request, context)
                except Exception as exc:
                    await context.abort(*_status_or_raise(exc, request, not_found))

            return cast(F, coroutine)

        @functools.wraps(handler)
        def unary(self: Any, request: Any, context: Any) -> Any:
            try:
                return handler(self, request, context)
            except Exception as exc:
                context.abort(*_status_or_raise(exc, request, not_found))

        return cast(F, unary)

    return wrap
