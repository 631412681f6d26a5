"""Games played in the browser: a human seat against a bot or a friend, refereed by the kernel.

The server is the referee. A turn's segment is one :class:`~nardy.core.game.PlayDecision` of the
kernel's own :class:`~nardy.core.game.Game` (progressions, re-rolls and transferred steps are each
their own segment there, so this module never re-codes a turn plan); the player enters it one
step at a time, and :func:`next_steps` says which steps may come next. RULES.md §2.3: "an engine
that accepts a play step by step MUST accept a step only if it is the first step of some
remaining candidate from the current state, so that every completed input is a legal play".

The kernel gives the legal plays (``Variant.legal_plays``: maximum dice, larger die, head rule,
six-block, pins), each with one representative step order (§2.3 item 7: "An engine MAY keep one
representative step list per result"), not every candidate sequence. So a step is offered when

* it follows the representative order of some legal play (a candidate by construction), or
* it is a step the kernel allows as a one-die segment from the board it is played on (§2.2's
  per-step rules: bar first, bearing off only when home, blocked points, pins, the runner and
  per-step block rules, which read the position only), and the dice left can go on that way to
  a legal play's result (judged by result with :func:`~nardy.core.variant.apply_steps`: the
  same steps in another order reach the same play).

A one-die segment also applies the end-of-segment checks (a six-block, §3.3.5; Fevga's quarter
and trap rules) to the board after the step, which a sequence needs only at its end; and it
counts head steps afresh, which the result catches (the head steps of a play are "determined by
the segment's start and final positions"). So the second kind is a subset of the candidates'
first steps, and the first kind keeps every legal play enterable even where every other order
passes through such a board (a six-block made and broken within the segment).

Sessions are stored as JSON in a SQLite file after every change (the seed and every answer:
the game is rebuilt by replaying them, dice included), so a restarted server loses nothing.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from nardy.bots import make_bot
from nardy.bots.base import Bot
from nardy.bots.registry import installed_bots
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.errors import (
    GameStateError,
    IllegalPlayError,
    InvalidPositionError,
    NardyError,
)
from nardy.core.game import (
    COLOURS,
    DoubleDecision,
    Game,
    GameResult,
    PlayDecision,
    TakeDecision,
)
from nardy.core.match import Match
from nardy.core.movegen import BoardKey, board_of
from nardy.core.notation import BAR, OFF, Step
from nardy.core.position import Position
from nardy.core.record import outcome_of
from nardy.core.variant import LegalPlays, Variant, apply_steps
from nardy.web.arena_bots import PREFIX as ARENA_PREFIX
from nardy.web.arena_bots import ArenaBot, ArenaBots

__all__ = [
    "LastPlay",
    "PlayError",
    "PlayForbidden",
    "PlaySession",
    "PlayStorageError",
    "PlayStore",
    "SeatSpec",
    "next_steps",
]

SeatKind = Literal["human", "bot"]
BotMaker = Callable[[str, int, "PlaySession"], Bot]
"""Seats a bot by its name (and seed) in a session: an installed bot's by default
(:func:`~nardy.bots.make_bot`); the store adds the arena's (:mod:`nardy.web.arena_bots`)."""


def installed_bot(name: str, seed: int, session: PlaySession) -> Bot:
    """The installed bot ``name`` (``heuristic``, ``neural:1``, a plugin's)."""
    return make_bot(name, seed)


IN_MEMORY = 200
"""How many sessions a server keeps in memory at most (the others wait in the file)."""


class PlayError(NardyError, ValueError):
    """A request the game refuses (an illegal step, an answer out of turn): HTTP 400."""


class PlayStorageError(NardyError, RuntimeError):
    """The played games' file cannot be opened or written: HTTP 503."""


class PlayForbidden(PlayError):
    """A move asked without the seat's secret: HTTP 403."""


# -- the referee of one segment ------------------------------------------------------------------


def _key(position: Position) -> BoardKey:
    return tuple(board_of(position))


def _destination(src: int, die: int) -> int:
    """Where a checker from ``src`` goes with ``die``: every variant's mover walks 24 → 1 in his
    own coordinates (RULES.md §1.1), entering from the bar (25) and bearing off past 1."""
    dst = src - die
    return OFF if dst <= 0 else dst


class _Segment:
    """The search of :func:`next_steps` for one segment: memoised reachability of the legal
    results from a board with some dice left."""

    def __init__(self, variant: Variant, plays: LegalPlays) -> None:
        self.variant = variant
        self.pins = variant.rules.hitting.pins
        self.targets = frozenset(plays.board_keys())
        self.need = plays.dice_used
        self._single: dict[tuple[BoardKey, int], frozenset[BoardKey]] = {}
        self._reach: dict[tuple[BoardKey, tuple[int, ...], int], frozenset[BoardKey]] = {}

    def one_die(self, position: Position, die: int) -> frozenset[BoardKey]:
        """The results of the one-die segment ``die`` from ``position``: the steps the kernel
        allows on their own (empty when the die cannot be played)."""
        k = (_key(position), die)
        found = self._single.get(k)
        if found is None:
            try:
                plays = self.variant.legal_plays(position, (die,))
            except (GameStateError, InvalidPositionError):
                # A step ended the game (plakoto's mother rule, §3.12.2), or the board cannot
                # occur (a checker borne off with another outside home): nothing follows.
                plays = None
            found = frozenset(plays.board_keys()) if plays and plays.dice_used else frozenset()
            self._single[k] = found
        return found

    def moves(self, position: Position, die: int) -> list[tuple[Step, Position]]:
        """The steps of one checker by ``die`` that the kernel allows as a one-die segment."""
        b = board_of(position)
        sources = [BAR] if b[BAR] > 0 else []
        sources += [p for p in range(24, 0, -1) if b[p] > 0]
        allowed = self.one_die(position, die)
        out = []
        for src in sources:
            step = Step(src, _destination(src, die), die)
            try:
                after = apply_steps(position, [step], pins=self.pins)
            except IllegalPlayError:
                continue
            if _key(after) not in allowed:
                continue
            out.append((step, after))
        return out

    def reach(self, position: Position, dice: tuple[int, ...], left: int) -> frozenset[BoardKey]:
        """The legal results reachable from ``position`` with at most ``left`` more steps of
        ``dice`` (fewer only where the position itself is a legal result: a play the mother
        rule ends before its last die, RULES.md §3.12.2)."""
        key = _key(position)
        own = frozenset([key]) & self.targets
        if left == 0 or own:
            return own
        memo = (key, dice, left)
        found = self._reach.get(memo)
        if found is not None:
            return found
        out: set[BoardKey] = set()
        for die in sorted(set(dice)):
            rest = _without(dice, die)
            for _, after in self.moves(position, die):
                out |= self.reach(after, rest, left - 1)
        found = self._reach[memo] = frozenset(out)
        return found


def _without(dice: tuple[int, ...], die: int) -> tuple[int, ...]:
    i = dice.index(die)
    return dice[:i] + dice[i + 1 :]


def remaining_dice(dice: Sequence[int], steps: Iterable[Step]) -> tuple[int, ...]:
    """The dice of the segment not yet used by ``steps`` (each step names its die)."""
    left = tuple(sorted(dice))
    for step in steps:
        if step.die not in left:
            raise PlayError(f"no die {step.die} is left to play")
        left = _without(left, step.die)
    return left


def next_steps(
    variant: Variant,
    decision: PlayDecision,
    entered: Sequence[Step],
    segment: _Segment | None = None,
) -> tuple[list[Step], bool]:
    """The steps that may follow ``entered`` in the segment of ``decision``, and whether the
    entered steps already make a legal play (then nothing may follow: every legal play of a
    segment uses the same number of dice, RULES.md §2.3 "N"). ``segment``: the search of an
    earlier call for the same decision, whose memory of what is reachable serves this one too
    (:meth:`PlaySession.offered`)."""
    seg = segment or _Segment(variant, decision.plays)
    position = apply_steps(decision.position, entered, pins=seg.pins)
    left = seg.need - len(entered)
    if left <= 0 or _key(position) in seg.targets:
        return [], _key(position) in seg.targets
    dice = remaining_dice(decision.segment.dice, entered)
    offered: dict[Step, None] = {}  # an ordered set
    done = len(entered)
    said = [(s.src, s.dst, s.die) for s in entered]
    for play in decision.plays:
        steps = play.steps
        if len(steps) > done and [(s.src, s.dst, s.die) for s in steps[:done]] == said:
            step = steps[done]
            offered[Step(step.src, step.dst, step.die)] = None
    for die in sorted(set(dice)):
        rest = _without(dice, die)
        for step, after in seg.moves(position, die):
            if seg.reach(after, rest, left - 1):
                offered[step] = None
    return list(offered), False


def play_of(decision: PlayDecision, variant: Variant, entered: Sequence[Step]) -> int:
    """The index of the legal play that ``entered`` makes (by result); raises when none."""
    result = apply_steps(decision.position, entered, pins=variant.rules.hitting.pins)
    try:
        return decision.plays.index_of(result)
    except IllegalPlayError:
        raise PlayError("those steps are not a whole legal play") from None


# -- a session ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """Who sits at one colour: a human (with the secret that lets him move) or a bot by name."""

    kind: SeatKind
    bot: str = ""
    secret: str = ""
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "bot": self.bot, "secret": self.secret, "name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeatSpec:
        return cls(data["kind"], data.get("bot", ""), data.get("secret", ""), data.get("name", ""))


def new_secret() -> str:
    return secrets.token_urlsafe(18)


@dataclass(slots=True)
class _GameLog:
    """What replays one game: its dice seed and every answer given, in order. An answer is a
    play's text, ``True``/``False`` for a double decision, ``"take"``/``"drop"``/``"beaver"``,
    or ``{"resign": colour}``."""

    seed: int
    answers: list[Any] = field(default_factory=list)
    record: dict[str, Any] | None = None
    setup: dict[str, Any] = field(default_factory=dict)
    """How the match set the game up (starter, cube, match score), as an arena record's."""
    decisions: list[dict[str, Any]] = field(default_factory=list)
    """Each answered kernel decision: player, kind and answer, as an arena record's."""


@dataclass(frozen=True, slots=True)
class LastPlay:
    """The latest play decided (not forced), for showing it step by step."""

    player: int
    number: int
    """Its number among the game's play events (1, 2, …)."""
    before: Position
    """The position it was played from, from ``player``'s view."""
    steps: tuple[Step, ...]


class PlaySession:
    """One game or match in the browser: the kernel's :class:`Match` and current :class:`Game`,
    the seats, the steps entered so far, and the answers that rebuild it all."""

    def __init__(
        self,
        session_id: str,
        variant_name: str,
        options: dict[str, Any],
        match_length: int | None,
        seats: tuple[SeatSpec, SeatSpec],
        seed: int,
        *,
        created: float | None = None,
        rematch_of: str = "",
        bot_maker: BotMaker = installed_bot,
    ) -> None:
        self.id = session_id
        self.bot_maker = bot_maker
        self.variant_name = variant_name
        self.options = dict(options)
        self.match_length = match_length
        self.seats = seats
        self.seed = seed
        self.created = time.time() if created is None else created
        self.rematch_of = rematch_of
        self.rematch = ""
        """The id of the rematch session, once one was asked for."""
        if match_length is not None:
            self.options["match_length"] = match_length
        self.variant = load_variant(variant_name, self.options)
        self.match = Match.of(self.variant, match_length)
        self.logs: list[_GameLog] = []
        self.results: list[GameResult] = []
        self.entered: list[Step] = []
        self.last_play: LastPlay | None = None
        self.version = 0
        """Grows by one with every change of what a seat or a spectator sees (:meth:`bump`):
        an answer (a bot's included), a step entered or undone, a new game, a rematch asked, a
        bot's failure. Stored with the session, so it keeps growing across a restart."""
        self.lock = threading.RLock()
        self._listeners: list[Callable[[], None]] = []
        self._listen_lock = threading.Lock()
        self.bots: list[Bot | None] = [None, None]
        self.bot_error = ""
        self._offered: (
            tuple[PlayDecision, _Segment, dict[tuple[Step, ...], tuple[list[Step], bool]]] | None
        ) = None
        """:meth:`offered`'s memory: the decision, its search, the answers by steps entered."""
        self.game: Game = self._start_game(seed)

    # -- building and replaying -------------------------------------------------------------------

    def _bot(self, colour: int) -> Bot | None:
        seat = self.seats[colour]
        if seat.kind != "bot":
            return None
        bot = self.bots[colour]
        if bot is None:
            bot = self.bots[colour] = self.bot_maker(seat.bot, self.seed + colour, self)
        return bot

    def _start_game(self, seed: int) -> Game:
        match = self.match
        setup: dict[str, Any] = {
            "starter": match.starter(),
            "cube": dataclasses.asdict(match.cube_settings()),
        }
        if match.length is not None:
            setup["match"] = {
                "length": match.length,
                "score": list(match.score),
                "game_no": len(match.games) + 1,
                "crawford": match.crawford_game,
            }
        game = match.new_game(SeededDice(seed))
        self.logs.append(_GameLog(seed, setup=setup))
        self.last_play = None
        self.entered = []
        for colour in (0, 1):
            bot = self._bot(colour)
            if bot is not None:
                bot.start_game(game.variant, colour)
        self.game = game
        return game

    @property
    def game_result(self) -> GameResult | None:
        """The current game's result (a resignation's too)."""
        if len(self.results) == len(self.logs):
            return self.results[-1]
        return self.game.result

    def _answer(self, answer: Any) -> None:
        """Give the current decision ``answer`` and log it (the one way the game advances)."""
        game = self.game
        if isinstance(answer, dict):
            self._resign(int(answer["resign"]))
        else:
            self._note(answer)
            decision = game.decision
            steps: tuple[Step, ...] = ()
            if isinstance(decision, PlayDecision):
                steps = decision.plays.find(str(answer)).steps
            game.decide(answer)
            if isinstance(decision, PlayDecision):
                number = sum(1 for e in game.events if e.kind == "play")
                self.last_play = LastPlay(decision.player, number, decision.position, steps)
        self.logs[-1].answers.append(answer)
        self._after_answer()

    def _note(self, answer: Any) -> None:
        """Log the decision ``answer`` answers, in the arena record's words."""
        decision = self.game.decision
        if decision is None:
            return
        if isinstance(decision, PlayDecision):
            kind, said = "play", str(answer)
        elif isinstance(decision, DoubleDecision):
            kind, said = "double", "double" if answer else "roll"
        else:
            kind, said = "take", str(answer)
        self.logs[-1].decisions.append(
            {"player": COLOURS[decision.player], "kind": kind, "answer": said}
        )

    def _after_answer(self) -> None:
        """Record a finished game (its record and its result in the match)."""
        self.entered = []
        result = self.game_result
        if result is not None and self.logs[-1].record is None:
            record = self.game.record()
            if len(self.results) == len(self.logs):
                record["result"] = _result_json(result)
            self.logs[-1].record = record
            if len(self.results) < len(self.logs):
                self.results.append(result)
            self.match.add_result(result)
        self.bump()

    def _resign(self, loser: int) -> None:
        """Resigning concedes the game at what it would score if the opponent finished now
        (RULES.md §2.6's scoring of the board as it stands: a gammon stays a gammon). Resignation
        itself is outside RULES.md ("Resignation is outside these rules"), so this is the web's."""
        game = self.game
        if game.result is not None:
            raise PlayError("the game is over")
        winner = 1 - loser
        variant = game.variant
        position = game.position_for(winner)
        side = variant.loser_side(position, 1)
        points = variant.game_points(
            side,
            game.cube.value,
            cube_centred=game.cube.owner is None,
            jacoby=game.cube_settings.jacoby,
        )
        self.results.append(
            GameResult(
                winner,
                points,
                variant.game_value(side),
                game.cube.value,
                "drop",
                resigned=True,
            )
        )

    def replay(self, logs: list[dict[str, Any]]) -> None:
        """Rebuild from stored logs: every game replayed from its seed and answers."""
        for n, data in enumerate(logs):
            if n:
                self._start_game(int(data["seed"]))
            for answer in data["answers"]:
                self._answer(answer)

    # -- changes, and who waits for them ---------------------------------------------------------

    def bump(self) -> None:
        """One change more: the version grows and every listener is told (once), from the
        thread that made the change (an action's worker, a bot's thread)."""
        with self._listen_lock:
            self.version += 1
        self.wake()

    def wake(self) -> None:
        """Tell every listener now (a change, or the session leaving memory: its listeners ask
        the store again)."""
        with self._listen_lock:
            listeners, self._listeners = self._listeners, []
        for notify in listeners:
            notify()

    def listen(self, notify: Callable[[], None]) -> int:
        """Have ``notify`` called at the next change, and return the version now: both under
        one lock with :meth:`bump`, so no change can fall between the version read and the
        listening (a long poll that saw version V is woken by V + 1)."""
        with self._listen_lock:
            self._listeners.append(notify)
            return self.version

    def unlisten(self, notify: Callable[[], None]) -> None:
        """Stop listening (a long poll that timed out); nothing if already told."""
        with self._listen_lock:
            if notify in self._listeners:
                self._listeners.remove(notify)

    # -- what the players do ------------------------------------------------------------------------

    @property
    def decision(self) -> PlayDecision | DoubleDecision | TakeDecision | None:
        return None if self.game_result is not None else self.game.decision

    def seat_of(self, secret: str) -> int | None:
        """The colour whose secret this is (None: a spectator)."""
        for colour, seat in enumerate(self.seats):
            if seat.kind == "human" and secret and secrets.compare_digest(seat.secret, secret):
                return colour
        return None

    def _require_turn(self, colour: int | None) -> PlayDecision | DoubleDecision | TakeDecision:
        if colour is None:
            raise PlayForbidden("only a seated player may move: this link has no seat's secret")
        decision = self.decision
        if decision is None:
            raise PlayError("the game is over" if self.game_result else "nothing to decide now")
        if decision.player != colour:
            raise PlayError(f"it is {COLOURS[decision.player]}'s turn, not yours")
        return decision

    def offered(self, decision: PlayDecision) -> tuple[list[Step], bool]:
        """:func:`next_steps` after the steps entered, for the current ``decision``, remembered:
        a step is checked against what the page was offered, which the state computed already,
        and each step's search goes on from the last one's (one search per decision). Called
        with :attr:`lock` held."""
        memo = self._offered
        if memo is None or memo[0] is not decision:
            memo = self._offered = (decision, _Segment(self.game.variant, decision.plays), {})
        key = tuple(self.entered)
        found = memo[2].get(key)
        if found is None:
            found = memo[2][key] = next_steps(self.game.variant, decision, key, memo[1])
        return found

    def step(self, colour: int | None, src: int, dst: int, die: int | None) -> None:
        """Enter one step of the current segment; refused unless :func:`next_steps` offers it."""
        with self.lock:
            decision = self._require_turn(colour)
            if not isinstance(decision, PlayDecision):
                raise PlayError("a cube decision is pending, not a play")
            offered, _ = self.offered(decision)
            matching = [
                s
                for s in offered
                if s.src == src and s.dst == dst and (die is None or s.die == die)
            ]
            if not matching:
                raise PlayError(_refusal(src, dst, offered))
            # Two dice bearing off the same checker: the smaller die, as the higher one is the
            # more useful left over (the other is still offered when it alone leads on).
            self.entered.append(min(matching, key=lambda s: s.die))
            self.bump()

    def undo(self, colour: int | None) -> None:
        with self.lock:
            self._require_turn(colour)
            if self.entered:
                self.entered.pop()
                self.bump()

    def confirm(self, colour: int | None) -> None:
        with self.lock:
            decision = self._require_turn(colour)
            if not isinstance(decision, PlayDecision):
                raise PlayError("a cube decision is pending, not a play")
            index = play_of(decision, self.game.variant, self.entered)
            self._answer(decision.plays[index].text)

    def cube(self, colour: int | None, action: str) -> None:
        """``double`` / ``roll`` before rolling; ``take`` / ``drop`` / ``beaver`` when doubled."""
        with self.lock:
            decision = self._require_turn(colour)
            if isinstance(decision, DoubleDecision) and action in ("double", "roll"):
                self._answer(action == "double")
            elif isinstance(decision, TakeDecision) and action in ("take", "drop", "beaver"):
                try:
                    self.game.decide(action)  # checks beaver_allowed before logging
                except NardyError as exc:
                    raise PlayError(str(exc)) from None
                self.logs[-1].decisions.append(
                    {"player": COLOURS[decision.player], "kind": "take", "answer": action}
                )
                self.logs[-1].answers.append(action)
                self._after_answer()
            else:
                raise PlayError(f"{action!r} does not answer the decision now")

    def resign(self, colour: int | None) -> None:
        with self.lock:
            if colour is None:
                raise PlayForbidden("only a seated player may resign")
            if self.game_result is not None:
                raise PlayError("the game is over")
            self._answer({"resign": colour})

    def next_game(self, colour: int | None) -> None:
        """Start the match's next game (both humans may; a bot's seat needs nobody)."""
        with self.lock:
            if colour is None:
                raise PlayForbidden("only a seated player may start the next game")
            if self.game_result is None:
                raise PlayError("the game is not over")
            if self.match.is_over or self.match.length is None:
                raise PlayError("the match is over: ask for a rematch")
            self._start_game(self.seed + 1000 * len(self.logs))
            self.bump()

    # -- bots ---------------------------------------------------------------------------------------

    def bot_to_move(self) -> bool:
        decision = self.decision
        return decision is not None and self.seats[decision.player].kind == "bot"

    def bot_move(self) -> bool:
        """Let the bot answer the current decision (called in a worker thread); False when it is
        no bot's turn. The bot thinks outside the lock, so the page keeps answering."""
        with self.lock:
            decision = self.decision
            if decision is None or self.seats[decision.player].kind != "bot":
                return False
            bot = self._bot(decision.player)
            version = self.version
        assert bot is not None
        if isinstance(decision, PlayDecision):
            answer: Any = decision.plays[bot.choose_play(decision)].text
        elif isinstance(decision, DoubleDecision):
            answer = bool(bot.offer_double(decision))
        else:
            answer = bot.respond_to_double(decision)
        with self.lock:
            if self.version != version:
                return True  # something else moved meanwhile (a resignation): ask again
            self._answer(answer)
        return True

    # -- storage --------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "variant": self.variant_name,
            "options": {k: v for k, v in self.options.items() if k != "match_length"},
            "match_length": self.match_length,
            "seats": [seat.to_json() for seat in self.seats],
            "seed": self.seed,
            "created": self.created,
            "rematch_of": self.rematch_of,
            "rematch": self.rematch,
            "games": [{"seed": log.seed, "answers": log.answers} for log in self.logs],
            "entered": [list(step[:3]) for step in self.entered],
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], bot_maker: BotMaker = installed_bot) -> PlaySession:
        seats = tuple(SeatSpec.from_json(s) for s in data["seats"])
        session = cls(
            data["id"],
            data["variant"],
            data["options"],
            data["match_length"],
            (seats[0], seats[1]),
            int(data["seed"]),
            created=float(data["created"]),
            rematch_of=data.get("rematch_of", ""),
            bot_maker=bot_maker,
        )
        session.rematch = data.get("rematch", "")
        session.replay(data["games"])
        # The steps of a turn being entered: a restart keeps them too (refereed when entered).
        session.entered = [Step(a, b, c) for a, b, c in data.get("entered", [])]
        # The version goes on from where it was (a page's long poll names the version it saw);
        # a file written before versions were stored goes on from the replay's answers.
        session.version = int(data.get("version", session.version))
        return session

    def arena_record(self, number: int) -> dict[str, Any]:
        """Game ``number`` (1, 2, …) as the arena stores a game (the kernel's
        :class:`~nardy.core.record.GameRecord` as JSON: seats, setup, decisions, the kernel's
        record under ``game``, the outcome), so the spectator's replay and analysis read it as
        they read a tournament's."""

        if not 1 <= number <= len(self.logs):
            raise KeyError(number)
        log = self.logs[number - 1]
        kernel = self.records()[number - 1]
        game_variant = (
            self.match.cycle[(number - 1) % len(self.match.cycle)]
            if self.match.cycle
            else self.variant
        )
        result = self.results_by_game().get(number)
        outcome = None
        if result is not None:
            outcome = outcome_of(result).to_json()
            if result.resigned:
                outcome["termination"] = "resigned"
        names = []
        for colour, seat in enumerate(self.seats):
            names.append(
                {
                    "name": seat.bot
                    if seat.kind == "bot"
                    else seat.name or f"{COLOURS[colour]} player"
                }
            )
        return {
            "game_id": f"{self.id}-{number}",
            "match_id": self.id,
            "variant": game_variant.name,
            "options": dict(game_variant.options),
            "seed": log.seed,
            "white": names[0],
            "black": names[1],
            "setup": log.setup,
            "decisions": [dict(d, seq=i + 1) for i, d in enumerate(log.decisions)],
            "game": kernel,
            "result": outcome,
        }

    def results_by_game(self) -> dict[int, GameResult]:
        """The results of the finished games, by game number."""
        out: dict[int, GameResult] = {}
        finished = [n for n, log in enumerate(self.logs, 1) if log.record is not None]
        for n, result in zip(finished, self.match.games, strict=False):
            out[n] = result
        return out

    def records(self) -> list[dict[str, Any]]:
        """Every game's record as :meth:`Game.record` writes it (the arena's record format's
        game part), the current one included."""
        out = []
        for n, log in enumerate(self.logs):
            if log.record is not None:
                out.append(log.record)
            elif n == len(self.logs) - 1:
                out.append(self.game.record())
        return out


def _result_json(result: GameResult) -> dict[str, Any]:
    return {
        "winner": None if result.draw else COLOURS[result.winner],
        "points": result.points,
        "reason": "resign" if result.resigned else result.reason,
        "cube": result.cube_value,
        **({"resigned": True} if result.resigned else {}),
        **({"draw": True} if result.draw else {}),
    }


def _point_words(point: int) -> str:
    return "the bar" if point == BAR else "off" if point == OFF else f"point {point}"


def _refusal(src: int, dst: int, offered: Sequence[Step]) -> str:
    """Why a step is refused, in words the player can act on."""
    if not offered:
        return "no step is possible now: confirm or undo"
    froms = sorted({s.src for s in offered}, reverse=True)
    if src not in froms:
        where = ", ".join(_point_words(p) for p in froms)
        return (
            f"no legal play moves a checker from {_point_words(src)} now; you may move from {where}"
        )
    dsts = sorted({s.dst for s in offered if s.src == src}, reverse=True)
    return (
        f"from {_point_words(src)} the checker may go to "
        f"{', '.join(_point_words(d) for d in dsts)}, not {_point_words(dst)}"
    )


# -- storage ---------------------------------------------------------------------------------------


class PlayStore:
    """Sessions as JSON rows of a SQLite file, written after every change; sessions in memory,
    loaded on first use (after a restart, from the file), bots run in worker threads."""

    def __init__(
        self, path: str | Path, *, module_bots: bool = False, arena: ArenaBots | None = None
    ) -> None:
        """:param module_bots: also seat ``module:Class`` bots (imports any module a request
        names: for a trusted caller, such as tests; the web page seats installed bots only).
        :param arena: the arena the web is attached to, whose registered bots are seated as
            ``@NAME`` (:mod:`nardy.web.arena_bots`)."""
        self.path = Path(path)
        self.module_bots = module_bots
        self.arena = arena
        self._connection: sqlite3.Connection | None = None
        self._db_lock = threading.Lock()
        self._sessions: OrderedDict[str, PlaySession] = OrderedDict()
        """The sessions in memory, least recently used first (the file holds them all)."""
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}

    @property
    def _db(self) -> sqlite3.Connection:
        """The file, opened on first use (a spectator whose folder cannot be written still
        serves its tournaments; only the Play page then answers 503). Called with
        ``_db_lock`` held. Raises :class:`PlayStorageError`."""
        if self._connection is None:
            try:
                db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                # As the arena's file (nardy.arena.records.storage): a killed or restarted
                # server loses no committed action; only a power cut may lose the last few. With
                # the default (FULL) every action waited for the disk, one game after another
                # under the file's one lock: 1 ms idle, far more under load.
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS play_sessions (id TEXT PRIMARY KEY, "
                    "data TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0, "
                    "updated REAL NOT NULL)"
                )
            except sqlite3.Error as exc:
                raise PlayStorageError(f"the played games' file cannot be opened: {exc}") from None
            self._connection = db
        return self._connection

    def close(self) -> None:
        with self._db_lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def save(self, session: PlaySession) -> None:
        data = json.dumps(session.to_json(), separators=(",", ":"))
        done = int(session.game_result is not None)
        with self._db_lock:
            self._db.execute(
                "INSERT INTO play_sessions (id, data, finished, updated) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET data = excluded.data, "
                "finished = excluded.finished, updated = excluded.updated",
                (session.id, data, done, time.time()),
            )

    def create(
        self,
        variant: str,
        options: dict[str, Any],
        match_length: int | None,
        seats: tuple[SeatSpec, SeatSpec],
        *,
        seed: int | None = None,
        rematch_of: str = "",
    ) -> PlaySession:
        for seat in seats:
            if seat.kind == "bot":
                self._check_bot(seat.bot)
        session = PlaySession(
            secrets.token_hex(8),
            variant,
            options,
            match_length,
            seats,
            secrets.randbits(48) if seed is None else seed,
            rematch_of=rematch_of,
            bot_maker=self.make_bot,
        )
        with self._lock:
            self._sessions[session.id] = session
            self._evict()
        self.save(session)
        self.kick(session)
        return session

    def get(self, session_id: str) -> PlaySession:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                with self._db_lock:
                    row = self._db.execute(
                        "SELECT data FROM play_sessions WHERE id = ?", (session_id,)
                    ).fetchone()
                if row is None:
                    raise KeyError(session_id)
                session = PlaySession.from_json(json.loads(row[0]), self.make_bot)
                self._sessions[session_id] = session
                self._evict()
            self._sessions.move_to_end(session_id)
        self.kick(session)
        return session

    def _check_bot(self, name: str) -> None:
        """A bot the page may seat (raises :class:`PlayError` otherwise): an installed one
        (:func:`_check_bot`), or ``@NAME`` registered in the arena."""
        if not name.startswith(ARENA_PREFIX):
            _check_bot(name, self.module_bots)
        elif self.arena is None:
            raise PlayError(f"no bot {name!r}: this server is attached to no arena (--arena)")
        elif name[len(ARENA_PREFIX) :] not in self.arena.names():
            raise PlayError(
                f"no bot {name!r} in the arena at {self.arena.address} (its bots: "
                f"{', '.join(self.arena.names()) or 'none now'})"
            )

    def make_bot(self, name: str, seed: int, session: PlaySession) -> Bot:
        """The sessions' :data:`BotMaker`: ``@NAME`` asks the arena's bot, any other name is an
        installed bot. A game stored with an arena bot and reopened by a server attached to no
        arena says so when the bot is to move (the page shows the bot's failure)."""
        if not name.startswith(ARENA_PREFIX):
            return make_bot(name, seed)
        return ArenaBot(self.arena, name[len(ARENA_PREFIX) :], session)

    def _evict(self) -> None:
        """Keep at most :data:`IN_MEMORY` sessions (each may hold a bot, a net's weights): the
        least recently used ones whose bot is not thinking leave memory, not the file (their
        next request reloads them). Called with ``_lock`` held."""
        for old in list(self._sessions)[: max(0, len(self._sessions) - IN_MEMORY)]:
            thread = self._threads.get(old)
            if thread is None or not thread.is_alive():
                self._sessions.pop(old).wake()  # a long poll on it asks for the reloaded one
                self._threads.pop(old, None)

    def ids(self) -> list[tuple[str, dict[str, Any], bool, float]]:
        with self._db_lock:
            rows = self._db.execute(
                "SELECT id, data, finished, updated FROM play_sessions ORDER BY updated DESC"
            ).fetchall()
        return [(r[0], json.loads(r[1]), bool(r[2]), float(r[3])) for r in rows]

    def changed(self, session: PlaySession) -> None:
        """After a player's action: store it, let a bot answer if it is a bot's turn."""
        self.save(session)
        self.kick(session)

    def kick(self, session: PlaySession) -> None:
        """Start the bot's worker thread when a bot is to decide (one thread per session)."""
        if not session.bot_to_move():
            return
        with self._lock:
            running = self._threads.get(session.id)
            if running is not None and running.is_alive():
                return
            thread = threading.Thread(
                target=self._bot_loop, args=(session,), name=f"play-bot-{session.id}", daemon=True
            )
            self._threads[session.id] = thread
        thread.start()

    def _bot_loop(self, session: PlaySession) -> None:
        try:
            while session.bot_to_move():
                if not session.bot_move():
                    break
                self.save(session)
        except Exception as exc:  # a broken plugin bot: say so on the page, keep the server up
            with session.lock:
                session.bot_error = f"the bot failed: {type(exc).__name__}: {exc}"
                session.bump()


@lru_cache(maxsize=64)
def _check_bot(name: str, module_bots: bool = False) -> None:
    """A bot name the page may seat (raises :class:`PlayError` otherwise): an installed bot
    (``heuristic``, ``neural:1``, a plugin's entry point), which loads. A ``module:Class`` name
    would make the server import whatever module a request names, so it is refused unless
    ``module_bots``."""
    base = name.split(":", 1)[0]
    if not module_bots and base not in installed_bots():
        raise PlayError(
            f"no bot {name!r}: the page seats installed bots ({', '.join(installed_bots())}), "
            "with their argument (neural:1)"
        )
    try:
        make_bot(name, 0)
    except (ValueError, ImportError) as exc:
        raise PlayError(f"no bot {name!r}: {exc}") from None
