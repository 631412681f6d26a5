"""Run one game between two bots with the kernel: the remote decider, the outcome and the record.

:func:`run_game` plays a :class:`nardy.core.game.Game` through the one game loop
(:class:`nardy.bots.loop.GameLoop`), with the seats' clock (:class:`TimeControl`) and the
:class:`FaultPolicy` as values. A remote bot sits in its seat as a :class:`RemoteDecider`: at each
question it builds the request (:mod:`nardy.arena.clients.convert`), asks its :class:`BotClient` with the
loop's deadline and turns the response into the kernel's answer; an in-process bot sits there as
itself. Every failure is a :class:`~nardy.bots.faults.BotError`; the policy says what happens
then: forfeit the game (the default) or play a random legal answer and count a strike, and
disqualify the bot after ``max_faults`` faults. Whatever a bot does, the game ends with the
kernel's record of it (:class:`nardy.core.record.GameRecord`, :func:`played_record`): the one
game-record type, whose JSON line (``to_json``) is the arena's stored record.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import BotClient
from nardy.arena.protocol import arena_pb2 as _arena_pb2
from nardy.arena.protocol import bot_pb2 as _bot_pb2
from nardy.arena.protocol import game_pb2 as _game_pb2
from nardy.bots.decider import Decider, Reply
from nardy.bots.faults import FaultCounter, FaultPolicy
from nardy.bots.loop import GameLoop, Limit, Played, TimeControl
from nardy.core.dice import DiceSource, SeededDice
from nardy.core.game import (
    BLACK,
    WHITE,
    CubeSettings,
    DoubleDecision,
    Game,
    GameEvent,
    PlayDecision,
    TakeDecision,
)
from nardy.core.record import (
    Answer,
    GameRecord,
    MatchInfo,
    Outcome,
    Player,
    Setup,
    of_game,
    outcome_of,
)
from nardy.core.variant import Variant

__all__ = [
    "RemoteDecider",
    "Seat",
    "loop_outcome",
    "play_request",
    "played_record",
    "run_game",
    "take_request",
]


@dataclass(slots=True)
class Seat:
    """A bot in one game."""

    bot_id: str
    name: str
    client: BotClient | None
    """The remote bot's client (None for an in-process ``bot``)."""
    faults: FaultCounter = field(default_factory=FaultCounter)
    bot: Decider | None = None
    """An in-process decider (a :class:`~nardy.bots.Bot`) sitting here instead of a client."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """What the record says about the bot besides its id and name (a tournament's player's
    ``kind``, version ...), written before them in the record's seat."""

    def record_seat(self) -> Player:
        """The seat as the game's record holds it."""
        return Player(self.name, {**self.info, "bot_id": self.bot_id, "name": self.name})


def turn_facts(events: list[GameEvent], player: int) -> tuple[int, list[int], str]:
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


def play_request(decision: PlayDecision, events: list[GameEvent]) -> _bot_pb2.ChoosePlayRequest:
    """The request for ``decision`` but for its context's game, clock and match (the asker's):
    the position, this turn's dice, the segment and its legal plays, the opponent's last play.
    The arena's games and the web's arena bots (:mod:`nardy.web.arena_bots`) both ask so."""
    request = _bot_pb2.ChoosePlayRequest()
    ctx = request.context
    convert.position_to_proto(decision.position, ctx.position)
    number, dice, opponent_play = turn_facts(events, decision.player)
    if decision.segment.kind != "transfer":
        ctx.dice.extend(dice)
    convert.segment_to_proto(decision.segment, number, ctx.segment)
    ctx.opponent_last_play = opponent_play
    for index, play in enumerate(decision.plays):
        convert.legal_play(index, play, ctx.legal_plays.add())
    return request


def take_request(decision: TakeDecision, game: Game) -> _bot_pb2.RespondToDoubleRequest:
    """The request for a take ``decision`` but for its context's game, clock and match: the
    position seen from the doubler, the mover (bot.proto), the cube offered, the opponent's
    last play."""
    request = _bot_pb2.RespondToDoubleRequest()
    convert.position_to_proto(game.position, request.context.position)
    # decision.cube is the cube before this double (2v after a beaver): taking doubles it.
    request.offered_value = 2 * decision.cube.value
    request.beaver_allowed = decision.beaver_allowed
    request.answering_beaver = decision.after_beaver
    request.context.opponent_last_play = turn_facts(game.events, decision.player)[2]
    return request


class RemoteDecider:
    """A remote bot as the decider of one seat of one game: the one decider protocol
    (:class:`nardy.bots.decider.Decider`) over a :class:`BotClient` (a gRPC ``BotService`` or a
    dial-out stream, alike).

    Each question becomes the protocol's request, with the number and the :class:`Limit` the
    loop gives it (:attr:`loop`), is asked with the limit's deadline, and its response becomes
    the kernel's answer, with the bot's comment and values as the record's ``info``. A failure is
    the client's :class:`~nardy.bots.faults.BotError` (timeout, malformed, crash, disconnect) or
    the answer's (:mod:`nardy.arena.clients.convert`: illegal, malformed).
    """

    def __init__(
        self, seat: Seat, opponent: str, game_id: str, match: MatchInfo, spec: _game_pb2.VariantSpec
    ) -> None:
        assert seat.client is not None
        self.client: BotClient = seat.client
        self.name = seat.name
        self.opponent = opponent
        self.game_id = game_id
        self.match = match
        self.spec = spec
        self.loop: GameLoop | None = None
        """The loop asking (set by :func:`run_game`): the game, the question's number and limit."""

    def set_match(self, length: int | None, score: tuple[int, int]) -> None:
        """Nothing: every request carries the match (:class:`MatchInfo`)."""
        return None

    def start_game(self, variant: Variant, colour: int) -> None:
        """Nothing: every request carries the variant and the colour."""
        return None

    # -- requests -----------------------------------------------------------------------------

    def _asking(self) -> tuple[Game, Limit]:
        loop = self.loop
        assert loop is not None and loop.limit is not None, "a remote bot plays on a clock"
        return loop.game, loop.limit

    def _context(self, ctx: _bot_pb2.DecisionContext, me: int, on_roll: bool) -> float:
        """Fill a request's context; return the call's deadline (seconds)."""
        game, limit = self._asking()
        assert self.loop is not None
        ctx.game_id = self.game_id
        ctx.match_id = self.match.match_id
        ctx.sequence = self.loop.sequence
        ctx.variant.CopyFrom(self.spec)
        ctx.on_roll = on_roll
        ctx.color = convert.COLOR_OF[me]
        ctx.turn_number = game.turns
        ctx.opponent_name = self.opponent
        convert.cube_state(game.cube, game.cube_settings, me, ctx.cube)
        m = ctx.match
        m.match_length = self.match.length
        m.score_self, m.score_opponent = self.match.score if me == WHITE else self.match.score[::-1]
        m.crawford = self.match.crawford
        m.post_crawford = self.match.post_crawford
        m.game_number = self.match.game_no
        ctx.time_left.CopyFrom(convert.duration(limit.time_left))
        ctx.decision_time_limit.CopyFrom(convert.duration(limit.per_decision))
        if limit.previous_latency is not None:
            ctx.previous_answer_latency.CopyFrom(convert.duration(limit.previous_latency))
        return limit.deadline

    @staticmethod
    def _reply(answer: int | bool | str, info: _bot_pb2.DecisionInfo) -> Reply:
        return Reply(answer, convert.info_to_json(info) if info.comment or info.values else None)

    # -- the three questions ------------------------------------------------------------------

    def choose_play(self, decision: PlayDecision) -> Reply:
        game, _ = self._asking()
        request = play_request(decision, game.events)
        timeout = self._context(request.context, decision.player, on_roll=True)
        response = self.client.choose_play(request, timeout)
        return self._reply(convert.play_index(response, decision.plays), response.info)

    def offer_double(self, decision: DoubleDecision) -> Reply:
        request = _bot_pb2.DecideDoubleRequest()
        timeout = self._context(request.context, decision.player, on_roll=True)
        convert.position_to_proto(decision.position, request.context.position)
        response = self.client.decide_double(request, timeout)
        return self._reply(convert.double_answer(response), response.info)

    def respond_to_double(self, decision: TakeDecision) -> Reply:
        game, _ = self._asking()
        request = take_request(decision, game)
        me = decision.player
        timeout = self._context(request.context, me, on_roll=me == game.mover)
        response = self.client.respond_to_double(request, timeout)
        return self._reply(convert.cube_answer(response, decision.beaver_allowed), response.info)


def loop_outcome(played: Played) -> Outcome | None:
    """The arena outcome of a game the loop played: aborted, forfeited (the winner scores the
    cube's value, single) or ended by the rules (:func:`~nardy.core.record.outcome_of`); None if
    none of these."""
    if played.aborted is not None:
        return Outcome(None, 0, 0, "aborted", played.aborted)
    forfeit = played.forfeit
    if forfeit is not None:
        return Outcome(
            1 - forfeit.loser, played.game.cube.value, 1, forfeit.termination, forfeit.reason
        )
    result = played.game.result
    return None if result is None else outcome_of(result)


def played_record(
    played: Played,
    *,
    game_id: str,
    seed: int | None,
    players: tuple[Player, Player],
    match: MatchInfo,
    started: float,
    setup: Setup | None = None,
    tags: tuple[tuple[str, Any], ...] = (),
) -> GameRecord:
    """The kernel's record of an arena game the one loop played: the game's log and result, the
    answers with their latency and faults, the faults counted, the outcome; ``setup`` and
    ``tags`` are a tournament's (its ids, and how it set the game up)."""
    return of_game(
        played.game,
        seed=seed,
        players=players,
        match=match,
        setup=setup,
        outcome=loop_outcome(played),
        answers=tuple(Answer.from_json(entry) for entry in played.decisions),
        faults=played.faults,
        game_id=game_id,
        started=started,
        elapsed=played.elapsed,
        tags=tags,
    )


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
    setup: Setup | None = None,
    tags: tuple[tuple[str, Any], ...] = (),
) -> GameRecord:
    """Play one game; ``seats[0]`` is White. Never raises for anything a bot does.

    A seat with a ``bot`` plays in-process (told the match by ``set_match``, on the same clock);
    any other is asked through its client (:class:`RemoteDecider`).

    :param dice: the dice (default: :class:`SeededDice` of ``seed``; same seed, same dice).
    :param starter: the colour that starts by rolling, without an opening throw: later games of
        a match (:meth:`nardy.core.match.Match.starter`, e.g. the previous winner in long nardy).
        None: the variant's own start (an opening throw, or White where White always starts).
    :param stop: when set, the game stops before its next decision and is recorded as aborted.
    :param on_end: called with the finished record before the bots are told the game ended.
    :param setup: the record's setup, and ``tags`` its tags (:func:`played_record`).
    """
    match = match or MatchInfo()
    game = Game(variant, dice if dice is not None else SeededDice(seed), starter=starter, cube=cube)
    started = time.time()
    spec = convert.variant_spec(variant)
    deciders: list[Decider] = []
    remotes: list[RemoteDecider] = []
    for colour, seat in enumerate(seats):
        if seat.bot is not None:
            deciders.append(seat.bot)
        else:
            remotes.append(RemoteDecider(seat, seats[1 - colour].name, game_id, match, spec))
            deciders.append(remotes[-1])
    loop = GameLoop(
        game,
        deciders,
        names=(seats[0].name, seats[1].name),
        policy=policy or FaultPolicy(),
        time_control=time_control or TimeControl(),
        counters=(seats[0].faults, seats[1].faults),
        fallback=random.Random(f"{seed}:{game_id}:fallback"),
        match=(match.length or None, match.score),  # 0: money play
        stop=stop,
    )
    for remote in remotes:
        remote.loop = loop
    record = played_record(
        loop.play(),
        game_id=game_id,
        seed=seed,
        players=(seats[0].record_seat(), seats[1].record_seat()),
        match=match,
        started=started,
        setup=setup,
        tags=tags,
    )
    if on_end is not None:
        on_end(record)
    assert record.outcome is not None
    result = convert.outcome_to_proto(record.outcome)
    for colour in (WHITE, BLACK):
        client = seats[colour].client
        if client is None:
            continue
        message = _arena_pb2.GameEnded(
            game_id=game_id,
            match_id=match.match_id,
            color=convert.COLOR_OF[colour],
            result=result,
            match_over=True,
        )
        with contextlib.suppress(Exception):
            client.game_ended(message)
    return record
