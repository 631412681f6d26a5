"""One decider protocol: the three questions of a game, asked one way (python-chess's
``chess.engine``: one protocol, values in and out).

A game asks whoever sits in a seat one of three questions (:data:`nardy.core.game.Decision`):

* a play — :class:`~nardy.core.game.PlayDecision`, answered by an index into ``decision.plays``;
* a double offer — :class:`~nardy.core.game.DoubleDecision`, answered True to double;
* a take — :class:`~nardy.core.game.TakeDecision`, answered ``"take"``, ``"drop"`` or ``"beaver"``.

A :class:`Decider` answers them: an in-process :class:`~nardy.bots.Bot`, a remote bot over gRPC or
its dial-out stream (:class:`nardy.arena.clients.runner.RemoteDecider`), a person at the terminal
(``human``). :func:`ask` is the one place a decision is dispatched to the method that answers it;
a decider that has more to say for the record (a comment, its values) answers with a
:class:`Reply`. :func:`check_answer` is what an answer must be before the game is given it, and a
decider that fails a question raises one of the typed faults of :mod:`nardy.bots.faults`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from nardy.bots.faults import BotIllegalAnswerError
from nardy.core.game import CubeAnswer, Decision, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.variant import Variant

__all__ = [
    "Answer",
    "Decider",
    "Reply",
    "answer_text",
    "ask",
    "check_answer",
    "decision_kind",
    "fallback_answer",
]

Answer = int | bool | str
"""A play's index, a double offer (True) or not, a take answer."""


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer with what its decider said about it (python-chess's ``PlayResult``): ``info``,
    JSON-ready, goes into the game's record beside the answer."""

    answer: Answer
    info: Mapping[str, Any] | None = None


class Decider(Protocol):
    """Whoever answers the decisions of one seat. :class:`~nardy.bots.Bot` is the in-process
    decider (its defaults: never double, always take); a remote bot implements the same methods
    and raises :class:`~nardy.bots.faults.BotError` when it fails a question."""

    @property
    def name(self) -> str: ...

    def set_match(self, length: int | None, score: tuple[int, int]) -> None:
        """The match before the next game (None: money play) and (my, opponent's) score."""

    def start_game(self, variant: Variant, colour: int) -> None:
        """A game starts, and this decider plays ``colour`` (0 White, 1 Black)."""

    def choose_play(self, decision: PlayDecision) -> int | Reply:
        """The index of the chosen play in ``decision.plays``."""

    def offer_double(self, decision: DoubleDecision) -> bool | Reply:
        """Before rolling: True to offer a double."""

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer | Reply:
        """The opponent doubled: ``"take"``, ``"drop"`` or (if allowed) ``"beaver"``."""


def ask(decider: Decider, decision: Decision) -> Answer | Reply:
    """Ask ``decider`` the question ``decision`` is: the one dispatch from a decision to the
    method that answers it. A double offer's plain answer is read as a truth value (a bot may
    answer 1 or None), as every caller has read it."""
    if isinstance(decision, PlayDecision):
        return decider.choose_play(decision)
    if isinstance(decision, DoubleDecision):
        offer = decider.offer_double(decision)
        return offer if isinstance(offer, Reply) else bool(offer)
    return decider.respond_to_double(decision)


def decision_kind(decision: Decision) -> str:
    """The record's word for a question: ``play``, ``double`` or ``take``."""
    if isinstance(decision, PlayDecision):
        return "play"
    return "double" if isinstance(decision, DoubleDecision) else "take"


def check_answer(decision: Decision, answer: Answer) -> Answer:
    """``answer`` if the rules allow it as the answer to ``decision``, else
    :class:`~nardy.bots.faults.BotIllegalAnswerError` (a fault of the decider, not the game's
    error): a play is an index into ``decision.plays``, a take one of the answers allowed."""
    if isinstance(decision, PlayDecision):
        if (
            isinstance(answer, bool)
            or not isinstance(answer, int)
            or not 0 <= answer < len(decision.plays)
        ):
            raise BotIllegalAnswerError(
                f"play index {answer!r} is not in 0-{len(decision.plays) - 1}"
            )
        return answer
    if isinstance(decision, DoubleDecision):
        return bool(answer)
    allowed = {"take", "drop"} | ({"beaver"} if decision.beaver_allowed else set())
    if answer not in allowed:
        raise BotIllegalAnswerError(f"answer {answer!r} is not one of {sorted(allowed)}")
    return answer


def answer_text(decision: Decision, answer: Answer) -> str:
    """How the record writes an answer: the play's text, ``double`` or ``roll``, the take word."""
    if isinstance(decision, PlayDecision):
        assert isinstance(answer, int)
        return decision.plays[answer].text
    if isinstance(decision, DoubleDecision):
        return "double" if answer else "roll"
    return str(answer)


def fallback_answer(decision: Decision, rng: random.Random) -> Answer:
    """What is played for a decider that failed a question, under the ``random`` fault policy: a
    uniformly random legal play; no double; a take (the answer that ends nothing)."""
    if isinstance(decision, PlayDecision):
        return rng.randrange(len(decision.plays))
    if isinstance(decision, DoubleDecision):
        return False
    return "take"
