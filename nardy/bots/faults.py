"""What a decider can do wrong, and what it costs: the typed faults, the fault policy, the count.

Every way a decider can fail a question is one subclass of :class:`BotError` (python-chess's
``EngineError`` shape), and each carries a :attr:`BotError.kind`, the name under which faults are
counted (:data:`FAULT_KINDS`). A remote bot's transport raises them (:mod:`nardy.arena.clients.bot_client`,
:mod:`nardy.arena.clients.dial_out`); the game loop (:mod:`nardy.bots.loop`) turns an in-process bot's
exception into one, and applies a :class:`FaultPolicy` to them. They live here, below the arena,
so that one loop serves in-process and remote deciders, and the arena imports them from here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

__all__ = [
    "FAULT_KINDS",
    "BotCrashedError",
    "BotDisconnectedError",
    "BotError",
    "BotFloodError",
    "BotIllegalAnswerError",
    "BotMalformedError",
    "BotTimeoutError",
    "FaultCounter",
    "FaultKind",
    "FaultPolicy",
]

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
    """The bot raised, or its server failed the call or cannot be reached (any gRPC error but a
    deadline)."""

    kind = "crash"


class BotDisconnectedError(BotError):
    """A dial-out bot's stream broke and it did not come back within the reconnect grace."""

    kind = "disconnect"


class BotFloodError(BotError):
    """A dial-out bot sent far more messages than it was asked for; its stream was closed."""

    kind = "flood"


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """What a fault costs.

    ``on_fault="forfeit"``: the faulty bot loses the game at once. ``on_fault="random"``: the
    loop plays a random legal answer for it and counts a strike. Either way, a bot whose faults
    (over all its games, counted by its :class:`FaultCounter`) reach ``max_faults`` is
    disqualified: it forfeits the game in progress and gets no new games. ``max_faults=0`` never
    disqualifies.
    """

    on_fault: Literal["forfeit", "random"] = "forfeit"
    max_faults: int = 3


class FaultCounter:
    """A bot's fault counts, shared by all its games (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[FaultKind, int] = dict.fromkeys(FAULT_KINDS, 0)
        self.stale_answers = 0
        """Answers ignored because their sequence was not pending (not a fault)."""
        self.disqualified = False
        self.on_change: Callable[[dict[FaultKind, int], bool], None] | None = None
        """Called with the counts and the disqualification after every counted fault, under
        the counter's lock (so the calls come in the order of the counts): the arena stores
        them there, so that a restarted arena keeps counting."""

    def restore(self, counts: Mapping[str, int], disqualified: bool) -> None:
        """Start from counts kept by an earlier process (unknown kinds are ignored)."""
        with self._lock:
            for kind in FAULT_KINDS:
                self.counts[kind] = int(counts.get(kind, 0))
            self.disqualified = disqualified

    def record(self, kind: FaultKind, policy: FaultPolicy) -> bool:
        """Count one fault; return whether the bot is now disqualified. Once disqualified a
        bot's faults are no longer counted: with games in parallel, faults that happen after
        the one that reached ``max_faults`` (in games already running) leave the count at
        exactly ``max_faults``; those games are forfeited all the same."""
        with self._lock:
            if self.disqualified:
                return True
            self.counts[kind] += 1
            if policy.max_faults and sum(self.counts.values()) >= policy.max_faults:
                self.disqualified = True
            if self.on_change is not None:
                self.on_change(dict(self.counts), self.disqualified)
            return self.disqualified

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                **{k: v for k, v in self.counts.items()},
                "stale_answers": self.stale_answers,
                "disqualified": self.disqualified,
            }
