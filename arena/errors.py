"""The typed errors of talking to a bot (python-chess ``EngineError`` / Temporal ``RPCError`` shape).

Every way a bot can fail a decision is one subclass of :class:`BotError`, and each carries a
:attr:`BotError.kind`, the name under which the arena counts it (:data:`FAULT_KINDS`). The
transports (:mod:`nardy.arena.bot_client`, :mod:`nardy.arena.dial_out`) raise them; the game
runner (:mod:`nardy.arena.runner`) applies the fault policy to them.
"""

from __future__ import annotations

from typing import ClassVar, Literal

FaultKind = Literal["illegal", "malformed", "timeout", "crash", "disconnect", "flood"]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "illegal",
    "malformed",
    "timeout",
    "crash",
    "disconnect",
    "flood",
)
"""Every fault kind, in report order."""


class BotError(Exception):
    """A bot failed to give a valid answer in time."""

    kind: ClassVar[FaultKind] = "crash"


class BotTimeoutError(BotError):
    """No answer before the deadline (gRPC ``DEADLINE_EXCEEDED``, or ``answer_within`` passed)."""

    kind = "timeout"


class BotIllegalAnswerError(BotError):
    """A well-formed answer the rules do not allow: an index out of range, an illegal play text,
    a beaver that is not allowed."""

    kind = "illegal"


class BotMalformedError(BotError):
    """An answer that cannot be understood: undecodable bytes, no choice set, the wrong kind of
    answer, an ``_UNSPECIFIED`` action."""

    kind = "malformed"


class BotCrashedError(BotError):
    """The bot's server failed the call or cannot be reached (any gRPC error but a deadline)."""

    kind = "crash"


class BotDisconnectedError(BotError):
    """A dial-out bot's stream broke and it did not come back within the reconnect grace."""

    kind = "disconnect"


class BotFloodError(BotError):
    """A dial-out bot sent far more messages than it was asked for; its stream was closed."""

    kind = "flood"
