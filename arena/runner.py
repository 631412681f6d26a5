"""Run one game between two bots with the kernel: the clock, the fault policy and the record.

:func:`run_game` drives a :class:`nardy.core.game.Game`. At each real decision it builds the
request (:mod:`nardy.arena.convert`), asks the deciding bot's :class:`BotClient` with a deadline,
measures the latency, checks the answer, and applies it. Every failure is a
:class:`~nardy.arena.errors.BotError`; :class:`FaultPolicy` says what happens then: forfeit the
game (the default) or play a random legal answer and count a strike, and disqualify the bot after
``max_faults`` faults. Whatever a bot does, the game ends with a :class:`GameRecord` that is valid
JSON-ready data.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nardy.arena import convert
from nardy.arena.bot_client import BotClient
from nardy.arena.errors import FAULT_KINDS, BotError, BotTimeoutError, FaultKind
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.core.dice import DiceSource, SeededDice
from nardy.core.game import (
    BLACK,
    COLOURS,
    WHITE,
    CubeSettings,
    DoubleDecision,
    Game,
    GameEvent,
    GameResult,
    PlayDecision,
    TakeDecision,
)
from nardy.core.record import MatchInfo
from nardy.core.variant import Variant

__all__ = [
    "FaultCounter",
    "FaultPolicy",
    "GameOutcome",
    "GameRecord",
    "Seat",
    "Termination",
    "TimeControl",
    "kernel_outcome",
    "run_game",
]

Termination = Literal[
    "borne_off", "double_dropped", "time_forfeit", "bot_failure", "aborted", "mother", "draw"
]

TERMINATION_PROTO: dict[Termination, _game_pb2.Termination.ValueType] = {
    "borne_off": _game_pb2.TERMINATION_BORNE_OFF,
    "double_dropped": _game_pb2.TERMINATION_DOUBLE_DROPPED,
    "time_forfeit": _game_pb2.TERMINATION_TIME_FORFEIT,
    "bot_failure": _game_pb2.TERMINATION_BOT_FAILURE,
    "aborted": _game_pb2.TERMINATION_ABORTED,
    "mother": _game_pb2.TERMINATION_MOTHER,
    "draw": _game_pb2.TERMINATION_DRAW,
}

_KERNEL_TERMINATION: dict[str, Termination] = {
    "bear_off": "borne_off",
    "drop": "double_dropped",
    "mother": "mother",
    "draw": "draw",
}
"""The kernel's :attr:`~nardy.core.game.GameResult.reason` → the arena's termination."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """The clock of one bot in one game.

    Each decision may take ``per_decision`` seconds free of charge; time beyond that is taken
    from the ``reserve`` (a per-game bank). The deadline of a call is ``per_decision`` plus what
    is left of the reserve, plus ``slack`` for the network (not told to the bot).
    """

    per_decision: float = 5.0
    reserve: float = 0.0
    slack: float = 0.05


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """What a fault costs.

    ``on_fault="forfeit"``: the faulty bot loses the game at once. ``on_fault="random"``: the
    arena plays a random legal answer for it and counts a strike. Either way, a bot whose faults
    (over all its games in this arena) reach ``max_faults`` is disqualified: it forfeits the game
    in progress and gets no new games. ``max_faults=0`` never disqualifies.
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

    def count_stale(self) -> None:
        with self._lock:
            self.stale_answers += 1

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


@dataclass(slots=True)
class Seat:
    """A bot in one game."""

    bot_id: str
    name: str
    client: BotClient
    faults: FaultCounter = field(default_factory=FaultCounter)


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """How an arena game ended (kernel result, forfeit or abort)."""

    winner: int | None
    points: int
    multiplier: int
    termination: Termination
    reason: str = ""

    def to_proto(self) -> _game_pb2.GameResult:
        return _game_pb2.GameResult(
            winner=(
                convert.COLOR_OF[self.winner]
                if self.winner is not None
                else _game_pb2.COLOR_UNSPECIFIED
            ),
            points=self.points,
            multiplier=self.multiplier,
            result_name=self.termination,
            termination=TERMINATION_PROTO[self.termination],
            reason=self.reason,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": None if self.winner is None else COLOURS[self.winner],
            "points": self.points,
            "multiplier": self.multiplier,
            "termination": self.termination,
            "reason": self.reason,
        }


def kernel_outcome(result: GameResult) -> GameOutcome:
    """The arena outcome of a game the kernel ended: a draw (plakoto, RULES.md §3.12.2) has no
    winner and scores 0."""
    if result.draw:
        return GameOutcome(None, 0, 0, "draw")
    return GameOutcome(
        result.winner, result.points, result.base_value, _KERNEL_TERMINATION[result.reason]
    )


@dataclass(slots=True)
class GameRecord:
    """Everything about one arena game, JSON-ready through :meth:`to_json`."""

    game_id: str
    match_id: str
    variant: str
    options: dict[str, Any]
    seed: int | None
    bots: tuple[dict[str, str], dict[str, str]]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    faults: tuple[dict[FaultKind, int], dict[FaultKind, int]] = field(
        default_factory=lambda: (dict.fromkeys(FAULT_KINDS, 0), dict.fromkeys(FAULT_KINDS, 0))
    )
    outcome: GameOutcome | None = None
    kernel: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    elapsed: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "match_id": self.match_id,
            "variant": self.variant,
            "options": {k: v for k, v in self.options.items()},
            "seed": self.seed,
            "white": self.bots[0],
            "black": self.bots[1],
            "result": None if self.outcome is None else self.outcome.to_json(),
            "faults": {"white": dict(self.faults[0]), "black": dict(self.faults[1])},
            "decisions": self.decisions,
            "game": self.kernel,
            "started": self.started,
            "elapsed_s": round(self.elapsed, 6),
        }

    def latencies(self) -> list[float]:
        """Latency (seconds) of every answered decision."""
        return [d["latency_ms"] / 1000 for d in self.decisions if "latency_ms" in d]


class _Clock:
    __slots__ = ("previous_latency", "reserve_left", "tc")

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.reserve_left = tc.reserve
        self.previous_latency: float | None = None

    @property
    def allowance(self) -> float:
        """What the next decision may take (told to the bot as ``time_left``)."""
        return self.tc.per_decision + self.reserve_left

    def charge(self, latency: float) -> None:
        self.previous_latency = latency
        over = latency - self.tc.per_decision
        if over > 0:
            self.reserve_left = max(0.0, self.reserve_left - over)


def _turn_facts(events: list[GameEvent], player: int) -> tuple[int, list[int], str]:
    """(segment number in this turn, dice rolled this turn, opponent's last play text)."""
    segment_no = 1
    dice: list[int] | None = None
    i = len(events) - 1
    while i >= 0:
        e = events[i]
        if e.player != player and e.kind in ("play", "roll", "opening"):
            break
        if e.player == player:
            if e.kind == "play":
                segment_no += 1
            elif e.kind == "roll" and dice is None:
                dice = list(e.data.get("dice", ()))
        i -= 1
    # The opponent's most recent turn with plays: its play events, oldest first.
    texts: list[str] = []
    while i >= 0:
        e = events[i]
        if e.player == player and e.kind in ("play", "roll"):
            if texts:
                break
        elif e.kind == "play":
            texts.append(str(e.data.get("play", "")))
        i -= 1
    opponent_play = " | ".join(t for t in reversed(texts) if t)
    return segment_no, dice or [], opponent_play


class _GameRun:
    """The state of one running game (kept off :func:`run_game`'s locals for readability)."""

    def __init__(
        self,
        variant: Variant,
        seats: tuple[Seat, Seat],
        dice: DiceSource,
        seed: int | None,
        game_id: str,
        match: MatchInfo,
        time_control: TimeControl,
        policy: FaultPolicy,
        cube: CubeSettings | None,
        stop: threading.Event | None,
        starter: int | None = None,
    ) -> None:
        self.variant = variant
        self.seats = seats
        self.game = Game(variant, dice, starter=starter, cube=cube)
        self.match = match
        self.policy = policy
        self.stop = stop
        self.clocks = (_Clock(time_control), _Clock(time_control))
        self.rng = random.Random(f"{seed}:{game_id}:fallback")
        self.sequence = 0
        self.spec = convert.variant_spec(variant)
        self.record = GameRecord(
            game_id=game_id,
            match_id=match.match_id,
            variant=variant.name,
            options=dict(variant.options),
            seed=seed,
            bots=(
                {"bot_id": seats[0].bot_id, "name": seats[0].name},
                {"bot_id": seats[1].bot_id, "name": seats[1].name},
            ),
            started=time.time(),
        )

    # -- requests -----------------------------------------------------------------------------

    def _context(self, ctx: _bot_pb2.DecisionContext, me: int, on_roll: bool) -> None:
        game = self.game
        clock = self.clocks[me]
        ctx.game_id = self.record.game_id
        ctx.match_id = self.match.match_id
        ctx.sequence = self.sequence
        ctx.variant.CopyFrom(self.spec)
        ctx.on_roll = on_roll
        ctx.color = convert.COLOR_OF[me]
        ctx.turn_number = game.turns
        ctx.opponent_name = self.seats[1 - me].name
        convert.cube_state(game.cube, game.cube_settings, me, ctx.cube)
        m = ctx.match
        m.match_length = self.match.length
        m.score_self, m.score_opponent = self.match.score if me == WHITE else self.match.score[::-1]
        m.crawford = self.match.crawford
        m.post_crawford = self.match.post_crawford
        m.game_number = self.match.game_no
        ctx.time_left.CopyFrom(convert.duration(clock.allowance))
        ctx.decision_time_limit.CopyFrom(convert.duration(clock.tc.per_decision))
        if clock.previous_latency is not None:
            ctx.previous_answer_latency.CopyFrom(convert.duration(clock.previous_latency))

    # -- the loop -----------------------------------------------------------------------------

    def run(self) -> GameRecord:
        game = self.game
        t0 = time.perf_counter()
        try:
            while not game.is_over:
                if self.stop is not None and self.stop.is_set():
                    self._end(GameOutcome(None, 0, 0, "aborted", "interrupted: arena shut down"))
                    break
                decision = game.decision
                assert decision is not None
                if not self._decide(decision):
                    break
            if self.record.outcome is None and game.result is not None:
                self._end(kernel_outcome(game.result))
        except Exception as exc:
            self._end(
                GameOutcome(None, 0, 0, "aborted", f"internal error: {type(exc).__name__}: {exc}")
            )
        self.record.kernel = game.record()
        self.record.elapsed = time.perf_counter() - t0
        return self.record

    def _end(self, outcome: GameOutcome) -> None:
        if self.record.outcome is None:
            self.record.outcome = outcome

    def _decide(self, decision: PlayDecision | DoubleDecision | TakeDecision) -> bool:
        """Ask for and apply one decision; False if the game ended by forfeit."""
        me = decision.player
        seat = self.seats[me]
        if seat.faults.disqualified:
            self._forfeit(me, "bot_failure", f"{seat.name} is disqualified")
            return False
        self.sequence += 1
        clock = self.clocks[me]
        timeout = clock.allowance + clock.tc.slack
        entry: dict[str, Any] = {"seq": self.sequence, "player": COLOURS[me]}
        answer: Any
        started = time.perf_counter()
        try:
            if isinstance(decision, PlayDecision):
                entry["kind"] = "play"
                play_request = self._play_request(decision)
                play_response = seat.client.choose_play(play_request, timeout)
                latency = self._check_time(started, timeout)
                answer = convert.play_index(play_response, decision.plays)
                entry["answer"] = decision.plays[answer].text
                info = play_response.info
            elif isinstance(decision, DoubleDecision):
                entry["kind"] = "double"
                double_request = _bot_pb2.DecideDoubleRequest()
                self._context(double_request.context, me, on_roll=True)
                position = double_request.context.position
                convert.position_to_proto(decision.position, position)
                double_response = seat.client.decide_double(double_request, timeout)
                latency = self._check_time(started, timeout)
                answer = convert.double_answer(double_response)
                entry["answer"] = "double" if answer else "roll"
                info = double_response.info
            else:
                entry["kind"] = "take"
                take_request = self._take_request(decision)
                take_response = seat.client.respond_to_double(take_request, timeout)
                latency = self._check_time(started, timeout)
                answer = convert.cube_answer(take_response, decision.beaver_allowed)
                entry["answer"] = answer
                info = take_response.info
        except BotError as exc:
            latency = time.perf_counter() - started
            entry["latency_ms"] = round(latency * 1000, 3)
            entry["fault"] = {"kind": exc.kind, "message": str(exc)[:1024]}
            self.record.decisions.append(entry)
            self.record.faults[me][exc.kind] += 1
            clock.charge(latency)
            disqualified = seat.faults.record(exc.kind, self.policy)
            if self.policy.on_fault == "forfeit" or disqualified:
                termination: Termination = (
                    "time_forfeit" if exc.kind == "timeout" else "bot_failure"
                )
                why = f"{seat.name}: {exc.kind}: {exc}"
                if disqualified and self.policy.on_fault != "forfeit":
                    why += f" (disqualified after {seat.faults.total} faults)"
                self._forfeit(me, termination, why)
                return False
            answer = self._fallback(decision)
            entry["fallback"] = True
            entry["answer"] = self._answer_text(decision, answer)
            self.game.decide(answer)
            return True
        clock.charge(latency)
        entry["latency_ms"] = round(latency * 1000, 3)
        if info.comment or info.values:
            entry["info"] = convert.info_to_json(info)
        self.record.decisions.append(entry)
        self.game.decide(answer)
        return True

    def _check_time(self, started: float, timeout: float) -> float:
        latency = time.perf_counter() - started
        if latency > timeout:
            # The transport let a late answer through (a stream answer racing its deadline).
            raise BotTimeoutError(f"answer after {latency:.3f}s, limit {timeout:.3f}s")
        return latency

    def _play_request(self, decision: PlayDecision) -> _bot_pb2.ChoosePlayRequest:
        request = _bot_pb2.ChoosePlayRequest()
        ctx = request.context
        me = decision.player
        self._context(ctx, me, on_roll=True)
        convert.position_to_proto(decision.position, ctx.position)
        number, dice, opponent_play = _turn_facts(self.game.events, me)
        if decision.segment.kind != "transfer":
            ctx.dice.extend(dice)
        convert.segment_to_proto(decision.segment, number, ctx.segment)
        ctx.opponent_last_play = opponent_play
        for index, play in enumerate(decision.plays):
            convert.legal_play(index, play, ctx.legal_plays.add())
        return request

    def _take_request(self, decision: TakeDecision) -> _bot_pb2.RespondToDoubleRequest:
        request = _bot_pb2.RespondToDoubleRequest()
        me = decision.player
        mover = self.game.mover
        self._context(request.context, me, on_roll=me == mover)
        # The position is seen from the doubler, the mover (bot.proto).
        convert.position_to_proto(self.game.position, request.context.position)
        # decision.cube is the cube before this double (2v after a beaver): taking doubles it.
        request.offered_value = 2 * decision.cube.value
        request.beaver_allowed = decision.beaver_allowed
        request.answering_beaver = decision.after_beaver
        _, _, opponent_play = _turn_facts(self.game.events, me)
        request.context.opponent_last_play = opponent_play
        return request

    def _fallback(self, decision: PlayDecision | DoubleDecision | TakeDecision) -> Any:
        if isinstance(decision, PlayDecision):
            return self.rng.randrange(len(decision.plays))
        if isinstance(decision, DoubleDecision):
            return False
        return "take"

    @staticmethod
    def _answer_text(decision: PlayDecision | DoubleDecision | TakeDecision, answer: Any) -> str:
        if isinstance(decision, PlayDecision):
            return decision.plays[answer].text
        if isinstance(decision, DoubleDecision):
            return "double" if answer else "roll"
        return str(answer)

    def _forfeit(self, loser: int, termination: Termination, reason: str) -> None:
        value = self.game.cube.value
        self._end(GameOutcome(1 - loser, value, 1, termination, reason))


def run_game(
    variant: Variant,
    seats: tuple[Seat, Seat],
    *,
    game_id: str,
    seed: int | None = None,
    dice: DiceSource | None = None,
    match: MatchInfo | None = None,
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
    cube: CubeSettings | None = None,
    stop: threading.Event | None = None,
    on_end: Callable[[GameRecord], None] | None = None,
    starter: int | None = None,
) -> GameRecord:
    """Play one game; ``seats[0]`` is White. Never raises for anything a bot does.

    :param dice: the dice (default: :class:`SeededDice` of ``seed``; same seed, same dice).
    :param starter: the colour that starts by rolling, without an opening throw: later games of
        a match (:meth:`nardy.core.match.Match.starter`, e.g. the previous winner in long nardy).
        None: the variant's own start (an opening throw, or White where White always starts).
    :param stop: when set, the game stops before its next decision and is recorded as aborted.
    :param on_end: called with the finished record before the bots are told the game ended.
    """
    run = _GameRun(
        variant,
        seats,
        dice if dice is not None else SeededDice(seed),
        seed,
        game_id,
        match or MatchInfo(),
        time_control or TimeControl(),
        policy or FaultPolicy(),
        cube,
        stop,
        starter,
    )
    record = run.run()
    if on_end is not None:
        on_end(record)
    assert record.outcome is not None
    for colour in (WHITE, BLACK):
        message = _arena_pb2.GameEnded(
            game_id=game_id,
            match_id=run.match.match_id,
            color=convert.COLOR_OF[colour],
            result=record.outcome.to_proto(),
            match_over=True,
        )
        with contextlib.suppress(Exception):
            seats[colour].client.game_ended(message)
    return record
