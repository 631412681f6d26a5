"""One game record, typed, and its one replayer (the shape of python-chess's ``pgn.Game``).

A :class:`GameRecord` is a played game as data: its setup (variant, options, seed, players, who
starts, the cube), where it stands in its match (:class:`MatchInfo`), the kernel's log of it
(every roll, play, cube action, transfer and the end: :class:`Event`), the answers the deciders
gave with their latency and faults (:class:`Answer`, arena games), and its outcome. It is frozen;
what the layers above add and do not interpret (a tournament's unit, round and leg, a dice
commitment) rides along as ordered ``tags``, as a PGN file's headers do.

Codecs, each a pair of functions over the one record:

* JSON lines: :meth:`GameRecord.to_json` / :func:`from_json` write and read the dictionaries of
  ``nardy play --jsonl`` (the kernel's record with its seed and bots) and of arena games (the
  runner's envelope with the kernel's record under ``game``) with exactly the keys, in exactly
  the order, that they have always had, so a file read and written again is byte for byte the
  same.
* ``.mat`` (:mod:`nardy.core.mat`): :func:`~nardy.core.mat.mat_game` writes a backgammon record
  as a ``.mat`` game; :func:`~nardy.core.mat.from_mat` reads a ``.mat`` match back into records
  (their rolls and actions, which :class:`Replay` plays).
* The kernel: :func:`of_game` is the record of a :class:`~nardy.core.game.Game` as it stands.

:class:`Replay` plays a record back through the kernel's :class:`~nardy.core.game.Game`, one
decision at a time, so that a reader (the arena's verifier, the spectator, the analysis) sees
every decision in its position; :func:`replay` plays it to the end and checks that the game gives
the recorded log and result. Every record that does not fit raises :class:`RecordError`, one line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from nardy.core.dice import Roll, ScriptedDice
from nardy.core.errors import NardyError
from nardy.core.game import (
    COLOURS,
    CubeSettings,
    Decision,
    DoubleDecision,
    Game,
    GameEvent,
    GameResult,
    PlayDecision,
    cube_settings_for,
)
from nardy.core.plugins import load_variant
from nardy.core.variant import Play, Variant

__all__ = [
    "TERMINATION",
    "Answer",
    "Event",
    "GameRecord",
    "MatchInfo",
    "Outcome",
    "Player",
    "RecordError",
    "Replay",
    "Result",
    "Setup",
    "Step",
    "from_json",
    "of_game",
    "outcome_of",
    "replay",
]


class RecordError(NardyError, ValueError):
    """A record that cannot be read, or that the kernel does not replay as recorded."""


# ==================================================================================================
# The parts
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """Where a game stands in its match or money session, in White's view.

    ``length`` 0 is money play (a single game or a session). ``match_id`` names the match its
    games share (an arena unit), so that a reader can sum them into the match's result."""

    length: int = 0
    score: tuple[int, int] = (0, 0)
    """Before this game: (White's, Black's)."""
    game_no: int = 1
    crawford: bool = False
    match_id: str = ""

    @property
    def post_crawford(self) -> bool:
        """A side is at ``length − 1`` and this is not the Crawford game, so the Crawford game
        has been played (RULES.md §2.12: "every later game is post-Crawford"); never in a
        1-point match, which has no Crawford game."""
        return not self.crawford and self.length > 1 and max(self.score) == self.length - 1

    def away(self, colour: int) -> int:
        """The points ``colour`` still needs."""
        return self.length - self.score[colour]

    def board_score(self) -> tuple[tuple[int, int] | None, int, bool]:
        """``score``, ``match_length`` and ``crawford`` as :func:`nardy.svg.board` takes them
        (no score in money play)."""
        return (self.score if self.length else None), self.length, self.crawford

    def setup_json(self) -> dict[str, Any]:
        """The arena setup's ``match``."""
        return {
            "length": self.length,
            "score": list(self.score),
            "game_no": self.game_no,
            "crawford": self.crawford,
            "post_crawford": self.post_crawford,
        }


EventKind = Literal[
    "opening", "roll", "play", "transfer", "double", "take", "drop", "beaver", "end"
]
ACTIONS: Final = ("play", "double", "take", "drop", "beaver")
"""The kinds of event that answer a decision."""


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the kernel's log of a game (:attr:`nardy.core.game.Game.events`).

    Which fields an event has depends on its kind: ``opening`` and ``roll`` their ``dice`` (a
    roll of a re-rolled double, RULES.md §2.9, ``reroll``); ``play`` the segment's ``dice``,
    ``segment_kind`` and ``segment`` (the kernel's words), the ``play`` and how many
    ``choices`` the segment had; ``transfer`` its ``steps`` (value, count); ``double`` the
    cube's new ``value``; ``end`` the ``points``, the ``reason`` and ``draw``."""

    kind: EventKind
    player: int
    dice: tuple[int, ...] = ()
    reroll: bool = False
    segment_kind: str = ""
    segment: str = ""
    play: str = ""
    choices: int = 0
    steps: tuple[tuple[int, int], ...] = ()
    value: int = 0
    points: int = 0
    reason: str = ""
    draw: bool = False

    def to_json(self) -> dict[str, Any]:
        """The event as :meth:`nardy.core.game.Game.record` writes it."""
        out: dict[str, Any] = {"kind": self.kind, "player": COLOURS[self.player]}
        kind = self.kind
        if kind in ("opening", "roll"):
            out["dice"] = list(self.dice)
            if self.reroll:
                out["reroll"] = True
        elif kind == "play":
            out["dice"] = list(self.dice)
            out["segment_kind"] = self.segment_kind
            out["segment"] = self.segment
            out["play"] = self.play
            out["choices"] = self.choices
        elif kind == "transfer":
            out["steps"] = [list(s) for s in self.steps]
        elif kind == "double":
            out["value"] = self.value
        elif kind == "end":
            out["points"] = self.points
            out["reason"] = self.reason
            if self.draw:
                out["draw"] = True
        return out

    @classmethod
    def of(cls, event: GameEvent) -> Event:
        """An entry of a game's log as the kernel wrote it (:attr:`nardy.core.game.Game.events`),
        taken as it is: :meth:`from_json` checks what a file says, the kernel's own data needs
        no check, and the arena makes a record of every game it plays (this costs a quarter)."""
        data = event.data
        if "dice" in data or "steps" in data:
            data = dict(data)
            if "dice" in data:
                data["dice"] = tuple(data["dice"])
            if "steps" in data:
                data["steps"] = tuple(tuple(step) for step in data["steps"])  # (value, count)
        return cls(event.kind, event.player, **data)

    def __reduce__(self) -> tuple[type[Event], tuple[Any, ...]]:
        """Pickled as its fields in order: an arena game's record crosses to the tournament's
        engine from a worker process or a Ray node, and the dataclass's own pickling of a
        frozen, slotted event costs several times more."""
        return Event, tuple([getattr(self, name) for name in _EVENT_FIELDS])

    @classmethod
    def from_json(cls, data: Any) -> Event:
        if not isinstance(data, Mapping):
            raise RecordError(f"an event is a JSON object, not {data!r}")
        kind = data.get("kind")
        keys = _EVENT_KEYS.get(kind)  # type: ignore[arg-type]
        if keys is None:
            raise RecordError(f"unknown event kind {kind!r}")
        extra = set(data) - keys - {"kind", "player"}
        if extra:
            raise RecordError(f"a {kind} event has no {', '.join(sorted(extra))}")
        try:
            return cls(
                kind,  # type: ignore[arg-type]  # one of _EVENT_KEYS', checked above
                _colour(data.get("player")),
                dice=tuple(int(d) for d in data.get("dice", ())),
                reroll=bool(data.get("reroll", False)),
                segment_kind=str(data.get("segment_kind", "")),
                segment=str(data.get("segment", "")),
                play=str(data.get("play", "")),
                choices=int(data.get("choices", 0)),
                steps=tuple((int(v), int(n)) for v, n in data.get("steps", ())),
                value=int(data.get("value", 0)),
                points=int(data.get("points", 0)),
                reason=str(data.get("reason", "")),
                draw=bool(data.get("draw", False)),
            )
        except (TypeError, ValueError) as error:
            raise RecordError(f"a malformed {kind} event ({error})") from None


_EVENT_FIELDS: Final = tuple(f.name for f in dataclasses.fields(Event))

_EVENT_KEYS: Final[dict[str, set[str]]] = {
    "opening": {"dice"},
    "roll": {"dice", "reroll"},
    "play": {"dice", "segment_kind", "segment", "play", "choices"},
    "transfer": {"steps"},
    "double": {"value"},
    "take": set(),
    "drop": set(),
    "beaver": set(),
    "end": {"points", "reason", "draw"},
}


@dataclass(frozen=True, slots=True)
class Result:
    """How the kernel ended the game (:class:`nardy.core.game.GameResult` as recorded): no
    ``winner`` for a draw (RULES.md §2.6)."""

    winner: int | None
    points: int
    reason: str
    cube: int
    draw: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "winner": None if self.winner is None else COLOURS[self.winner],
            "points": self.points,
            "reason": self.reason,
            "cube": self.cube,
        }
        if self.draw:
            out["draw"] = True
        return out

    @classmethod
    def from_json(cls, data: Any) -> Result | None:
        if data is None:
            return None
        try:
            winner = data.get("winner")
            return cls(
                None if winner is None else _colour(winner),
                int(data["points"]),
                str(data["reason"]),
                int(data["cube"]),
                bool(data.get("draw", False)),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise RecordError(f"a malformed result ({error!r})") from None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the game ended as its players are scored: the kernel's end, or a forfeit or abort
    (``termination``: ``borne_off``, ``double_dropped``, ``mother``, ``draw``, ``time_forfeit``,
    ``bot_failure``, ``aborted``); ``multiplier`` is the game's value before the cube."""

    winner: int | None
    points: int
    multiplier: int
    termination: str
    reason: str = ""
    """Why a game was forfeited or aborted (empty otherwise)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": None if self.winner is None else COLOURS[self.winner],
            "points": self.points,
            "multiplier": self.multiplier,
            "termination": self.termination,
            "reason": self.reason,
        }


TERMINATION: Final[Mapping[str, str]] = {
    "bear_off": "borne_off",
    "drop": "double_dropped",
    "mother": "mother",
    "draw": "draw",
}
"""The kernel's ``GameResult.reason`` as an outcome's ``termination``."""


def outcome_of(result: GameResult) -> Outcome:
    """The outcome of a game the kernel ended: a draw (plakoto, RULES.md §3.12.2) has no winner
    and scores 0; ``multiplier`` is the value before the cube."""
    if result.draw:
        return Outcome(None, 0, 0, "draw")
    return Outcome(result.winner, result.points, result.base_value, TERMINATION[result.reason])


@dataclass(frozen=True, slots=True)
class Answer:
    """A decider's answer to one decision of an arena game, as the arena recorded it: the
    ``answer`` in words (a play's text, ``double``/``roll``, ``take``/``drop``/``beaver``; None
    when a fault forfeited the game), how long it took, the decider's ``info``, and its fault
    (``kind``, ``message``) with ``fallback`` when the arena answered for it."""

    seq: int
    player: int
    kind: Literal["play", "double", "take"]
    answer: str | None = None
    latency_ms: float | None = None
    info: Mapping[str, Any] | None = None
    fault: Mapping[str, Any] | None = None
    fallback: bool = False

    def to_json(self) -> dict[str, Any]:
        """The arena's decision entry: the answer before its latency, unless a fault came first
        (then the fault, and the arena's answer for it last)."""
        out: dict[str, Any] = {"seq": self.seq, "player": COLOURS[self.player], "kind": self.kind}
        if self.fault is None:
            if self.answer is not None:
                out["answer"] = self.answer
            if self.latency_ms is not None:
                out["latency_ms"] = self.latency_ms
            if self.info is not None:
                out["info"] = self.info
            return out
        if self.latency_ms is not None:
            out["latency_ms"] = self.latency_ms
        out["fault"] = self.fault
        if self.fallback:
            out["fallback"] = True
        if self.answer is not None:
            out["answer"] = self.answer
        return out

    def __reduce__(self) -> tuple[type[Answer], tuple[Any, ...]]:
        """Pickled as its fields in order (as :meth:`Event.__reduce__`, and why)."""
        return Answer, (
            self.seq,
            self.player,
            self.kind,
            self.answer,
            self.latency_ms,
            self.info,
            self.fault,
            self.fallback,
        )

    @classmethod
    def from_json(cls, data: Any) -> Answer:
        try:
            kind = data["kind"]
            if kind not in ("play", "double", "take"):
                raise ValueError(f"kind {kind!r}")
            answer = data.get("answer")
            latency = data.get("latency_ms")
            return cls(
                int(data["seq"]),
                _colour(data.get("player")),
                kind,
                None if answer is None else str(answer),
                latency,
                data.get("info"),
                data.get("fault"),
                bool(data.get("fallback", False)),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise RecordError(f"a malformed decision entry ({error})") from None


@dataclass(frozen=True, slots=True)
class Player:
    """Who played a colour: a name, and for an arena game its seat as recorded (``bot_id``,
    ``name``, the kind of bot and how to reach it)."""

    name: str
    seat: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Setup:
    """How an arena game was set up (its record's ``setup``): who starts by rolling (None: an
    opening throw), the cube, and the seeds of the two bots."""

    starter: int | None
    cube: CubeSettings
    bot_seeds: tuple[int, int] | None = None


# ==================================================================================================
# The record
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One played game (see the module docstring). A record with a ``game_id`` is an arena
    game's; one without is a ``nardy play`` game's: they differ only in how they are written."""

    variant: str
    options: Mapping[str, Any]
    rolls: tuple[Roll, ...] = ()
    events: tuple[Event, ...] = ()
    result: Result | None = None
    seed: int | None = None
    players: tuple[Player, Player] = (Player("White"), Player("Black"))
    match: MatchInfo = field(default_factory=MatchInfo)
    setup: Setup | None = None
    """An arena game's setup; None: the variant's own start and cube (``starter`` below)."""
    starter: int | None = None
    """Who started by rolling without an opening throw, when there is no :attr:`setup` (read
    from the log: a log that does not begin with the opening throw begins with the starter)."""
    outcome: Outcome | None = None
    answers: tuple[Answer, ...] = ()
    faults: tuple[Mapping[str, int], Mapping[str, int]] | None = None
    game_id: str = ""
    index: int | None = None
    """``nardy play``: the number of the game (money) or of its match (a match) in the run."""
    interrupted: bool = False
    started: float = 0.0
    elapsed: float = 0.0
    tags: tuple[tuple[str, Any], ...] = ()
    """What the layers above wrote before the setup (a tournament's id, pool, unit, round,
    leg), in order; kept and written back, never interpreted by the kernel."""
    tags_after: tuple[tuple[str, Any], ...] = ()
    """Tags written after the setup (the dice commitment stamped when the game is stored)."""

    # -- reading ----------------------------------------------------------------------------------

    def variant_object(self) -> Variant:
        """The variant the game was played by, with its options."""
        try:
            return load_variant(self.variant, dict(self.options))
        except (NardyError, TypeError, ValueError) as error:
            raise RecordError(f"the record's variant cannot be loaded: {error}") from None

    def game_start(self) -> tuple[int | None, CubeSettings | None]:
        """Who starts by rolling and the cube, for a new :class:`~nardy.core.game.Game`."""
        if self.setup is not None:
            return self.setup.starter, self.setup.cube
        return self.starter, None

    def actions(self) -> tuple[Event, ...]:
        """The events that answered a decision (plays and cube actions), in order."""
        return tuple(e for e in self.events if e.kind in ACTIONS)

    def winner_points(self) -> tuple[int | None, int]:
        """Who won and what he scored: the outcome (a forfeit included), else the kernel's
        result; (None, 0) for a draw or a game not over."""
        if self.outcome is not None:
            return (
                self.outcome.winner,
                self.outcome.points if self.outcome.winner is not None else 0,
            )
        if self.result is not None and self.result.winner is not None:
            return self.result.winner, self.result.points
        return None, 0

    @property
    def is_arena(self) -> bool:
        return bool(self.game_id)

    def latencies(self) -> list[float]:
        """Seconds each decision of an arena game took (its answers' latency), in order."""
        return [a.latency_ms / 1000 for a in self.answers if a.latency_ms is not None]

    # -- JSON -------------------------------------------------------------------------------------

    def kernel_json(self) -> dict[str, Any]:
        """The kernel's part, as :meth:`nardy.core.game.Game.record` gives it."""
        return {
            "variant": self.variant,
            "options": self.options,
            "rolls": [list(r) for r in self.rolls],
            "events": [e.to_json() for e in self.events],
            "result": None if self.result is None else self.result.to_json(),
        }

    def to_json(self) -> dict[str, Any]:
        """The record as its JSON line holds it (an arena game's, or a ``nardy play`` game's)."""
        return self._arena_json() if self.is_arena else self._play_json()

    def _play_json(self) -> dict[str, Any]:
        out = self.kernel_json()
        if self.interrupted:
            out["interrupted"] = True
        elif out["result"] is not None and self.outcome is not None:
            # The arena records' words (docs/tournaments.md) beside the kernel's.
            out["result"]["termination"] = self.outcome.termination
            out["result"]["multiplier"] = self.outcome.multiplier
        out["seed"] = self.seed
        out["bots"] = {"White": self.players[0].name, "Black": self.players[1].name}
        if not self.match.length:
            out["game"] = self.index
        else:
            out["match"] = self.index
            out["game"] = self.match.game_no - 1
            out["match_length"] = self.match.length
            out["score"] = list(self.match.score)
            out["crawford"] = self.match.crawford
        return out

    def _arena_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game_id": self.game_id,
            "match_id": self.match.match_id,
            "variant": self.variant,
            "options": dict(self.options),
            "seed": self.seed,
            "white": _seat_json(self.players[0]),
            "black": _seat_json(self.players[1]),
            "result": None if self.outcome is None else self.outcome.to_json(),
            "faults": {
                "white": dict(self.faults[0]) if self.faults else {},
                "black": dict(self.faults[1]) if self.faults else {},
            },
            "decisions": [a.to_json() for a in self.answers],
            "game": self.kernel_json(),
            "started": self.started,
            "elapsed_s": round(self.elapsed, 6),
        }
        out.update(self.tags)
        if self.setup is not None:
            out["game_no"] = self.match.game_no
            out["setup"] = {
                "starter": self.setup.starter,
                "cube": dataclasses.asdict(self.setup.cube),
                "match": self.match.setup_json(),
                "bot_seeds": None if self.setup.bot_seeds is None else list(self.setup.bot_seeds),
            }
        out.update(self.tags_after)
        return out

    def line(self) -> str:
        """The record as one line of a JSON-lines file (``nardy play --jsonl``: UTF-8 kept)."""
        return json.dumps(self.to_json(), ensure_ascii=False)


def _seat_json(player: Player) -> dict[str, Any]:
    if player.seat is not None:
        return dict(player.seat)
    return {"bot_id": player.name, "name": player.name}


def _colour(name: Any) -> int:
    if name not in COLOURS:
        raise RecordError(f"player {name!r} is not White or Black")
    return COLOURS.index(name)


_ARENA_KEYS: Final = (
    "game_id",
    "match_id",
    "variant",
    "options",
    "seed",
    "white",
    "black",
    "result",
    "faults",
    "decisions",
    "game",
    "started",
    "elapsed_s",
)


def from_json(data: Any) -> GameRecord:
    """The record of a JSON line: an arena game (the kernel's record under ``game``) or a
    ``nardy play --jsonl`` game. :class:`RecordError` for anything else."""
    if not isinstance(data, Mapping):
        raise RecordError("a game record is a JSON object")
    if isinstance(data.get("game"), Mapping) and "decisions" in data:
        return _from_arena(data)
    if "events" in data and "rolls" in data:
        return _from_play(data)
    raise RecordError("neither a `nardy play --jsonl` line nor an arena game record")


def _kernel_fields(
    kernel: Mapping[str, Any], events: tuple[Event, ...] | None = None
) -> dict[str, Any]:
    """The record's fields of the kernel's record; ``events``: its log, typed already."""
    try:
        variant = kernel["variant"]
        options = kernel.get("options") or {}
        rolls = tuple((int(a), int(b)) for a, b in kernel["rolls"])
        if events is None:
            events = tuple(Event.from_json(e) for e in kernel["events"])
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"not a game record ({error!r})") from None
    if not isinstance(variant, str) or not isinstance(options, Mapping):
        raise RecordError("not a game record (variant or options)")
    starter = None
    if events and events[0].kind != "opening":
        starter = events[0].player
    return {
        "variant": variant,
        "options": options,
        "rolls": rolls,
        "events": events,
        "result": Result.from_json(kernel.get("result")),
        "starter": starter,
    }


def _from_play(data: Mapping[str, Any]) -> GameRecord:
    fields = _kernel_fields(data)
    result = data.get("result") or {}
    outcome = None
    if "termination" in result:
        kernel = fields["result"]
        outcome = Outcome(
            kernel.winner, kernel.points, int(result["multiplier"]), str(result["termination"])
        )
    bots = data.get("bots") or {}
    players = (Player(str(bots.get("White", "White"))), Player(str(bots.get("Black", "Black"))))
    if data.get("match_length"):
        score = data.get("score") or (0, 0)
        match = MatchInfo(
            int(data["match_length"]),
            (int(score[0]), int(score[1])),
            int(data.get("game") or 0) + 1,  # `nardy play` counts a match's games from 0
            bool(data.get("crawford")),
        )
        index = data.get("match")
    else:
        match = MatchInfo()
        index = data.get("game")
    return GameRecord(
        **fields,
        seed=data.get("seed"),
        players=players,
        match=match,
        outcome=outcome,
        index=index,
        interrupted=bool(data.get("interrupted", False)),
    )


def _from_arena(data: Mapping[str, Any]) -> GameRecord:
    # The runner writes the variant in both places; a record written by hand may name it once.
    kernel = {"variant": data.get("variant"), "options": data.get("options"), **data["game"]}
    fields = _kernel_fields(kernel)
    if data.get("variant") != fields["variant"]:
        raise RecordError(
            f"the record's variant {data.get('variant')!r} is not its game's {fields['variant']!r}"
        )
    seats = []
    for colour in ("white", "black"):
        seat = data.get(colour) or {}
        if not isinstance(seat, Mapping):
            raise RecordError(f"the {colour} seat is not a JSON object")
        seats.append(Player(str(seat.get("name") or seat.get("bot_id") or colour.title()), seat))
    outcome = None
    result = data.get("result")
    if isinstance(result, Mapping):
        winner = result.get("winner")
        try:
            outcome = Outcome(
                None if winner is None else _colour(winner),
                int(result.get("points") or 0),
                int(result.get("multiplier") or 0),
                str(result.get("termination")),
                str(result.get("reason") or ""),
            )
        except (TypeError, ValueError) as error:
            raise RecordError(f"a malformed result ({error})") from None
    faults = data.get("faults") or {}
    setup_json = data.get("setup")
    match_json: Mapping[str, Any] = {}
    setup = None
    if isinstance(setup_json, Mapping):
        match_json = setup_json.get("match") or {}
        try:
            cube = CubeSettings(**setup_json["cube"]) if "cube" in setup_json else None
        except TypeError as error:
            raise RecordError(f"bad cube setup ({error})") from None
        starter = setup_json.get("starter")
        if starter not in (None, 0, 1):
            raise RecordError(f"bad starter {starter!r} in the setup")
        seeds = setup_json.get("bot_seeds")
        setup = Setup(
            starter,
            cube
            if cube is not None
            else cube_settings_for(
                load_variant(fields["variant"], dict(fields["options"])), match_length=None
            ),
            None if seeds is None else (int(seeds[0]), int(seeds[1])),
        )
    try:
        score = match_json.get("score") or (0, 0)
        match = MatchInfo(
            int(match_json.get("length") or 0),
            (int(score[0]), int(score[1])),
            int(data.get("game_no") or match_json.get("game_no") or 1),
            bool(match_json.get("crawford")),
            str(data.get("match_id") or ""),
        )
    except (TypeError, ValueError, IndexError) as error:
        raise RecordError(f"bad match setup ({error})") from None
    before: list[tuple[str, Any]] = []
    after: list[tuple[str, Any]] = []
    passed_setup = False
    for key, value in data.items():
        if key in ("game_no", "setup"):
            passed_setup = passed_setup or key == "setup"
            continue
        if key in _ARENA_KEYS:
            continue
        (after if passed_setup else before).append((key, value))
    return GameRecord(
        **fields,
        seed=data.get("seed"),
        players=(seats[0], seats[1]),
        match=match,
        setup=setup,
        outcome=outcome,
        answers=tuple(Answer.from_json(d) for d in data.get("decisions") or ()),
        faults=(dict(faults.get("white") or {}), dict(faults.get("black") or {})),
        game_id=str(data.get("game_id") or ""),
        started=data.get("started", 0.0),
        elapsed=data.get("elapsed_s", 0.0),
        tags=tuple(before),
        tags_after=tuple(after),
    )


def of_game(game: Game, **fields: Any) -> GameRecord:
    """The record of ``game`` as it stands (its log so far and its result), with ``fields`` of
    the record (seed, players, match, …) as the caller knows them."""
    kernel = _kernel_fields(game.record(), tuple(Event.of(e) for e in game.events))
    if "setup" in fields:
        kernel.pop("starter")
    kernel.update(fields)
    return GameRecord(**kernel)


# ==================================================================================================
# Replaying
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class Step:
    """A decision met while replaying, before its answer is applied: the kernel's ``decision``
    (its position, dice, legal plays, cube), the recorded ``action`` answering it (None: a
    double decision answered by rolling, or the record ends here) and the ``answer`` applied
    (a play, True/False for a double, ``take``/``drop``/``beaver``; None: the record ends here,
    unanswered, as after a forfeit)."""

    number: int
    """1, 2, … in the order the game asked."""
    decision: Decision
    action: Event | None
    answer: Play | bool | str | None

    @property
    def text(self) -> str | None:
        """The answer in the arena's words: the play's text as logged, ``double``/``roll``,
        ``take``/``drop``/``beaver``; None when unanswered."""
        if self.answer is None:
            return None
        if isinstance(self.answer, bool):
            return "double" if self.answer else "roll"
        if self.action is not None and self.action.kind == "play":
            return self.action.play
        return str(self.answer)


class Replay:
    """A record played back through a fresh :class:`~nardy.core.game.Game`.

    Iterating yields a :class:`Step` at every decision, before its answer is applied (the
    game, :attr:`game`, is then in the decision's state); resuming applies the answer. The
    answers are the record's actions in order: at a play, the next action must be a play of
    that player, found among the legal plays by its text; at a double decision the player
    doubled if his next action is a double, else he rolled (when no action follows, if the
    log goes on). ``auto_forced=False`` stops at forced plays too (the analysis rates them)."""

    def __init__(
        self, record: GameRecord, *, auto_forced: bool = True, variant: Variant | None = None
    ) -> None:
        """:param variant: the record's variant, when the caller has it loaded already (a
        tournament's verifier replays many games of one)."""
        self.record = record
        starter, cube = record.game_start()
        try:
            self.game = Game(
                variant or record.variant_object(),
                ScriptedDice(record.rolls),
                starter=starter,
                cube=cube,
                auto_forced=auto_forced,
            )
        except (NardyError, TypeError, ValueError) as error:
            raise RecordError(f"the record cannot be replayed: {error}") from None
        self.steps = 0
        """Decisions answered so far."""

    def __iter__(self) -> Iterator[Step]:
        game = self.game
        actions = self.record.actions()
        done = 0  # the actions the game has logged
        seen = 0  # the events counted
        while game.decision is not None:
            for event in game.events[seen:]:
                done += event.kind in ACTIONS
            seen = len(game.events)
            decision = game.decision
            action = actions[done] if done < len(actions) else None
            answer = self._answer(decision, action)
            if isinstance(decision, DoubleDecision) and answer is False:
                action = None
            yield Step(self.steps + 1, decision, action, answer)
            if answer is None:
                return
            try:
                game.decide(answer)
            except NardyError as error:
                raise RecordError(f"decision {self.steps + 1}: {error}") from None
            self.steps += 1

    def _answer(self, decision: Decision, action: Event | None) -> Play | bool | str | None:
        player = COLOURS[decision.player]
        if isinstance(decision, DoubleDecision):
            if action is None:
                # No action follows: he rolled if the log goes on past this point (to his roll,
                # then a forfeit or an interruption), else the record ends here.
                return False if len(self.record.events) > len(self.game.events) else None
            return action.kind == "double" and action.player == decision.player
        if action is None:
            return None
        asked = "play" if isinstance(decision, PlayDecision) else "take"
        kind = "take" if action.kind in ("take", "drop", "beaver") else action.kind
        if kind != asked or action.player != decision.player:
            raise RecordError(
                f"decision {self.steps + 1}: the record has {COLOURS[action.player]} "
                f"{action.kind} where the game asks {player} to {asked}"
            )
        if isinstance(decision, PlayDecision):
            try:
                return decision.plays.find(action.play)
            except NardyError as error:
                raise RecordError(
                    f"decision {self.steps + 1}: {player}'s play {action.play!r} with "
                    f"{'-'.join(map(str, decision.segment.dice))}: {error}"
                ) from None
        return action.kind

    def run(self) -> Game:
        """Replay to the end of the record."""
        for _ in self:
            pass
        return self.game

    def check(self) -> None:
        """After :meth:`run`: the replayed game's log, dice and result are the record's."""
        record, game = self.record, self.game
        got = of_game(game)
        for i, (want, have) in enumerate(zip(record.events, got.events, strict=False)):
            if want != have:
                raise RecordError(
                    f"event {i + 1} differs: record {json.dumps(want.to_json())}, "
                    f"replay {json.dumps(have.to_json())}"
                )
        if len(record.events) != len(got.events):
            raise RecordError(
                f"the record has {len(record.events)} events, the replay {len(got.events)}"
            )
        if len(game.dice.rolls) != len(record.rolls):
            raise RecordError(
                f"the replay used {len(game.dice.rolls)} of the {len(record.rolls)} recorded rolls"
            )
        if got.result != record.result:
            want_text = None if record.result is None else record.result.to_json()
            have_text = None if got.result is None else got.result.to_json()
            raise RecordError(f"result differs: record {want_text}, replay {have_text}")


def replay(record: GameRecord) -> Game:
    """Replay ``record`` through the kernel and check it: every play legal with its dice, and
    the game's log, dice and result those recorded. Returns the replayed game (over, unless
    the record ends early); :class:`RecordError`, one line, at the first thing that differs."""
    run = Replay(record)
    run.run()
    run.check()
    return run.game
