"""The one game loop: two deciders play a game to its end, under a clock and a fault policy
given as values.

:class:`GameLoop` asks each decision of a :class:`~nardy.core.game.Game` of the seat that decides
it (:func:`nardy.bots.decider.ask`), measures how long the answer took, checks it and gives it to
the game. Every caller plays its games here: :func:`nardy.bots.play_game` (``nardy play``, the
environments' opponents), the tournament's in-process games
(:func:`nardy.arena.competition.tournament.play_local_game`) and the arena's games with remote bots
(:func:`nardy.arena.clients.runner.run_game`). What differs between them is values:

* ``policy`` (:class:`~nardy.bots.faults.FaultPolicy`): None, a fault is the caller's error (it
  propagates, as an illegal answer raises the game's error); else a fault forfeits the game or is
  answered at random for the decider, and counts toward disqualification (``counters``);
* ``time_control`` (:class:`TimeControl`): None, untimed; else each seat has a clock, every
  question a :class:`Limit`, and an answer past its deadline is a timeout;
* ``record``: whether each decision is written down (answer, latency, fault) for the record.

::

    from nardy.bots import make_bot
    from nardy.bots.faults import FaultPolicy
    from nardy.bots.loop import GameLoop, TimeControl
    from nardy.core import load_variant
    from nardy.core.dice import SeededDice
    from nardy.core.game import Game

    game = Game(load_variant("long"), SeededDice(7))
    played = GameLoop(
        game,
        (make_bot("heuristic"), make_bot("random", seed=1)),
        policy=FaultPolicy(on_fault="random"),
        time_control=TimeControl(per_decision=1.0),
    ).play()
    played.game.result.winner, len(played.decisions), played.forfeit
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from nardy.bots.decider import (
    Answer,
    Decider,
    Reply,
    answer_text,
    ask,
    check_answer,
    decision_kind,
    fallback_answer,
)
from nardy.bots.faults import (
    FAULT_KINDS,
    BotCrashedError,
    BotError,
    BotTimeoutError,
    FaultCounter,
    FaultKind,
    FaultPolicy,
)
from nardy.core.game import COLOURS, Decision, Game

__all__ = ["Forfeit", "GameLoop", "Limit", "Played", "TimeControl"]

_MESSAGE_CHARS = 1024
"""A fault's message and a forfeit's reason are cut to this many characters in the record: a
bot's exception text is its own, and may be any length."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The clock of one seat in one game.

    Each decision may take ``per_decision`` seconds free of charge; time beyond that is taken
    from the ``reserve`` (a per-game bank). The deadline of a question is ``per_decision`` plus
    what is left of the reserve, plus ``slack`` for the network (not told to the decider).
    """

    per_decision: float = 5.0
    reserve: float = 0.0
    slack: float = 0.05


@dataclass(frozen=True, slots=True)
class Limit:
    """What one question may take (python-chess's ``Limit``), from its seat's clock."""

    time_left: float
    """What the answer may take: ``per_decision`` plus the reserve left (told to the decider)."""
    per_decision: float
    deadline: float
    """``time_left`` plus the slack: an answer later than this is a timeout."""
    previous_latency: float | None
    """How long this seat's previous answer took (None before its first)."""


class _Clock:
    __slots__ = ("previous_latency", "reserve_left", "tc")

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.reserve_left = tc.reserve
        self.previous_latency: float | None = None

    def limit(self) -> Limit:
        allowance = self.tc.per_decision + self.reserve_left
        return Limit(
            allowance, self.tc.per_decision, allowance + self.tc.slack, self.previous_latency
        )

    def charge(self, latency: float) -> None:
        self.previous_latency = latency
        over = latency - self.tc.per_decision
        if over > 0:
            self.reserve_left = max(0.0, self.reserve_left - over)


@dataclass(frozen=True, slots=True)
class Forfeit:
    """A game lost by a seat's fault: its colour, the fault (None: the seat was disqualified
    before the question) and the reason, as the record gives it."""

    loser: int
    fault: FaultKind | None
    reason: str

    @property
    def termination(self) -> Literal["time_forfeit", "bot_failure"]:
        """How the arena names the ending: a timeout forfeits on time, anything else is a bot
        failure."""
        return "time_forfeit" if self.fault == "timeout" else "bot_failure"


@dataclass(slots=True)
class Played:
    """What the loop did: the game (over, unless forfeited or aborted), each decision as the
    record writes it, each seat's faults in this game, and how it ended if not by the rules."""

    game: Game
    decisions: list[dict[str, Any]] = field(default_factory=list)
    faults: tuple[dict[FaultKind, int], dict[FaultKind, int]] = field(
        default_factory=lambda: (dict.fromkeys(FAULT_KINDS, 0), dict.fromkeys(FAULT_KINDS, 0))
    )
    forfeit: Forfeit | None = None
    aborted: str | None = None
    """Why the game stopped before its end (the arena shutting down, an internal error)."""
    elapsed: float = 0.0


class GameLoop:
    """One game between two deciders (``deciders[0]`` plays White). See the module's text.

    While a question is asked, :attr:`sequence` is its number in the game and :attr:`limit` the
    asked seat's :class:`Limit` (None untimed): a remote decider puts both into its request.
    """

    def __init__(
        self,
        game: Game,
        deciders: Sequence[Decider],
        *,
        names: tuple[str, str] | None = None,
        policy: FaultPolicy | None = None,
        time_control: TimeControl | None = None,
        counters: tuple[FaultCounter, FaultCounter] | None = None,
        fallback: random.Random | None = None,
        match: tuple[int | None, tuple[int, int]] | None = None,
        stop: threading.Event | None = None,
        record: bool = True,
    ) -> None:
        """:param names: the seats' names in a forfeit's reason (default: the deciders').
        :param counters: each seat's faults over all its games (disqualification); None: only
            this game's are counted.
        :param fallback: the random source of the ``random`` fault policy's answers.
        :param match: (length, None for money play; (White, Black) score) before the game, told
            to each decider by ``set_match`` in its own view; None: nothing is told.
        :param stop: when set, the game stops before its next question (``aborted``)."""
        if len(deciders) != 2:
            raise ValueError(f"a game needs two deciders (White, Black), not {len(deciders)}")
        self.game = game
        self.deciders = (deciders[0], deciders[1])
        self.names = names or (deciders[0].name, deciders[1].name)
        self.policy = policy
        self.counters = counters
        self.clocks = None if time_control is None else (_Clock(time_control), _Clock(time_control))
        self.fallback = fallback or random.Random()
        self.match = match
        self.stop = stop
        self.record = record
        self.sequence = 0
        self.limit: Limit | None = None
        self.played = Played(game)

    def play(self, started: Callable[[Game], None] | None = None) -> Played:
        """Play the game to its end (or its forfeit, or a stop). ``started`` is called with the
        game once the deciders know it, before the first question."""
        played = self.played
        t0 = time.perf_counter()
        if self.policy is None:
            self._start()
            if started is not None:
                started(self.game)
            self._questions()
        else:
            try:
                self._start()
                if started is not None:
                    started(self.game)
                self._questions()
            except _Forfeited:
                pass
            except Exception as exc:
                played.aborted = f"internal error: {type(exc).__name__}: {exc}"
        played.elapsed = time.perf_counter() - t0
        return played

    # -- the steps ----------------------------------------------------------------------------

    def _start(self) -> None:
        variant = self.game.variant
        for colour, decider in enumerate(self.deciders):
            try:
                if self.match is not None:
                    length, score = self.match
                    decider.set_match(length, (score[colour], score[1 - colour]))
                decider.start_game(variant, colour)
            except Exception as exc:
                if self.policy is None:
                    raise
                self._forfeit(colour, "crash", f"start_game: {type(exc).__name__}: {exc}")

    def _questions(self) -> None:
        game = self.game
        while True:
            decision = game.decision
            if decision is None:
                return
            if self.stop is not None and self.stop.is_set():
                self.played.aborted = "interrupted: arena shut down"
                return
            if self.policy is None and not self.record and self.clocks is None:
                answer = ask(self.deciders[decision.player], decision)
                game.decide(answer.answer if isinstance(answer, Reply) else answer)
            else:
                self._question(decision)

    def _question(self, decision: Decision) -> None:
        me = decision.player
        counters = self.counters
        if counters is not None and counters[me].disqualified:
            self._forfeit(me, None, f"{self.names[me]} is disqualified")
        self.sequence += 1
        clock = None if self.clocks is None else self.clocks[me]
        self.limit = None if clock is None else clock.limit()
        entry: dict[str, Any] = {"seq": self.sequence, "player": COLOURS[me]}
        entry["kind"] = decision_kind(decision)
        started = time.perf_counter()
        try:
            reply = self._ask(decision)
        except BotError as exc:
            latency = time.perf_counter() - started
            if clock is not None:
                clock.charge(latency)
            self._fault(decision, entry, latency, exc)
            return
        latency = time.perf_counter() - started
        if clock is not None:
            clock.charge(latency)
        answer, info = (reply.answer, reply.info) if isinstance(reply, Reply) else (reply, None)
        if self.record:
            entry["answer"] = answer_text(decision, answer)
            entry["latency_ms"] = round(latency * 1000, 3)
            if info:
                entry["info"] = dict(info)
            self.played.decisions.append(entry)
        self.game.decide(answer)

    def _ask(self, decision: Decision) -> Answer | Reply:
        """The decider's answer, checked: a fault of any kind is a :class:`BotError` (an
        in-process decider's exception a crash) unless the loop has no policy, when what went
        wrong is the caller's to see as it is."""
        decider = self.deciders[decision.player]
        if self.policy is None:
            reply = ask(decider, decision)
        else:
            started = time.perf_counter()
            try:
                reply = ask(decider, decision)
            except BotError:
                raise
            except Exception as exc:
                raise BotCrashedError(f"{type(exc).__name__}: {exc}") from exc
            limit = self.limit
            if limit is not None:
                latency = time.perf_counter() - started
                if latency > limit.deadline:
                    # A late answer let through (a stream answer racing its deadline, an
                    # in-process bot that cannot be interrupted).
                    raise BotTimeoutError(
                        f"answer after {latency:.3f}s, limit {limit.deadline:.3f}s"
                    )
        if self.policy is not None:
            if isinstance(reply, Reply):
                return Reply(check_answer(decision, reply.answer), reply.info)
            return check_answer(decision, reply)
        return reply

    def _fault(
        self, decision: Decision, entry: dict[str, Any], latency: float, exc: BotError
    ) -> None:
        me = decision.player
        policy = self.policy
        if policy is None:
            raise exc
        entry["latency_ms"] = round(latency * 1000, 3)
        entry["fault"] = {"kind": exc.kind, "message": str(exc)[:_MESSAGE_CHARS]}
        self.played.decisions.append(entry)
        self.played.faults[me][exc.kind] += 1
        counter = None if self.counters is None else self.counters[me]
        disqualified = counter is not None and counter.record(exc.kind, policy)
        if policy.on_fault == "forfeit" or disqualified:
            why = f"{self.names[me]}: {exc.kind}: {exc}"
            if disqualified and policy.on_fault != "forfeit":
                assert counter is not None
                why += f" (disqualified after {counter.total} faults)"
            self._forfeit(me, exc.kind, why)
        answer = fallback_answer(decision, self.fallback)
        entry["fallback"] = True
        entry["answer"] = answer_text(decision, answer)
        self.game.decide(answer)

    def _forfeit(self, loser: int, fault: FaultKind | None, reason: str) -> None:
        """End the game here: ``loser`` forfeits it (the loop stops asking)."""
        self.played.forfeit = Forfeit(loser, fault, reason[:_MESSAGE_CHARS])
        raise _Forfeited


class _Forfeited(Exception):
    """Stops the loop at a forfeit (caught in :meth:`GameLoop.play`)."""
