"""The typed errors of talking to a bot (python-chess ``EngineError`` / Temporal ``RPCError`` shape).

They are the faults of the one decider protocol and live with it, below the arena
(:mod:`nardy.bots.faults`), so that the one game loop (:mod:`nardy.bots.loop`) counts an
in-process bot's faults and a remote bot's alike; this module names them for the arena. The
transports (:mod:`nardy.arena.bot_client`, :mod:`nardy.arena.dial_out`) raise them.
"""

from __future__ import annotations

from nardy.bots.faults import (
    FAULT_KINDS,
    BotCrashedError,
    BotDisconnectedError,
    BotError,
    BotFloodError,
    BotIllegalAnswerError,
    BotMalformedError,
    BotTimeoutError,
    FaultKind,
)

__all__ = [
    "FAULT_KINDS",
    "BotCrashedError",
    "BotDisconnectedError",
    "BotError",
    "BotFloodError",
    "BotIllegalAnswerError",
    "BotMalformedError",
    "BotTimeoutError",
    "FaultKind",
]
