"""A stored game, decision by decision: what each bot saw, what it chose and what else it could do.

:func:`game_steps` replays an arena game record (:class:`nardy.core.record.GameRecord`, or the
runner's JSON of it) through the one replayer and returns one :class:`DecisionStep` per recorded
decision plus a last one for the final position. The web
spectator, ``nardy arena replay --show`` and ``--svg`` all read games through it.

Positions are kept from the deciding player's view (as the kernel gives them) and from White's
view (absolute numbering, RULES.md §1.3), which is how a spectator's board stays put.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nardy.core.errors import NardyError
from nardy.core.game import COLOURS, DoubleDecision, GameEvent, PlayDecision
from nardy.core.notation import Step, parse_steps
from nardy.core.position import Geometry, Position, opposite_point
from nardy.core.record import ACTIONS, GameRecord, MatchInfo, RecordError, Replay, from_json
from nardy.core.variant import Play, Variant, pin_marked_text
from nardy.svg import CubeOwner, SvgBoard, board

__all__ = [
    "DecisionStep",
    "GameSteps",
    "ReplayViewError",
    "game_steps",
    "renumbered_play",
]


class ReplayViewError(NardyError, ValueError):
    """The record cannot be replayed into steps (incomplete, or its decisions do not fit)."""


StepKind = Literal["play", "double", "take", "end"]


@dataclass(frozen=True, slots=True)
class DecisionStep:
    """One decision of a game (or, with ``kind == "end"``, the final position)."""

    number: int
    """1, 2, …; the final position has the number after the last decision."""
    kind: StepKind
    player: str
    """"White" or "Black": who decides (for ``end``: who won, or who was to move)."""
    position: Position
    """The position from ``player``'s view, before the decision."""
    white_view: Position
    """The same position from White's view."""
    cube: tuple[int, str | None]
    """Cube value and owner colour ("White", "Black") or None when centred."""
    roll: tuple[int, ...] | None = None
    """The player's last roll of this turn (plays only)."""
    dice: tuple[int, ...] | None = None
    """The steps of the segment to play (plays only)."""
    segment: str = ""
    """The kernel's words: "roll 6-5", "stage 5 of a 3-3 progression", "re-roll 4-4", …"""
    segment_kind: str = ""
    choices: int | None = None
    """How many legal plays (distinct results) the segment had."""
    answer: str | None = None
    """The chosen play's text, "double"/"roll", "take"/"drop"/"beaver"; None for a forfeit."""
    steps: tuple[Step, ...] = ()
    """The chosen play's steps, in ``player``'s coordinates."""
    shown: str | None = None
    """The chosen play as shown: its text with ``^`` on each step that pins in a pinning variant
    (RULES.md §3.12.2, ``8/5^ 1/off``); else :attr:`answer`."""
    info: Mapping[str, Any] | None = None
    """The bot's ``DecisionInfo`` (``comment``, ``values``) as recorded."""
    latency_ms: float | None = None
    fault: Mapping[str, Any] | None = None
    fallback: bool = False
    """The arena played a random answer after the bot's fault."""
    before: tuple[str, ...] = ()
    """First decision only: what happened automatically before it (e.g. forced opening plays)."""
    after: tuple[str, ...] = ()
    """What happened automatically after this decision (forced plays, transfers, the end)."""
    before_shown: tuple[str, ...] = ()
    """:attr:`before` with every play written in ``player``'s numbers, as the board is numbered
    (a forced play of the opponent is recorded in his own)."""
    after_shown: tuple[str, ...] = ()
    """:attr:`after` in ``player``'s numbers, for the same reason (the game page's "Then")."""
    result: Mapping[str, Any] | None = field(default=None)
    """The record's result (``end`` only)."""
    offered: int | None = None
    """A take decision: the cube value the player is offered (2 × cube, 4 × after a beaver)."""

    def board_cube(self) -> tuple[int, CubeOwner]:
        """The cube as the board draws it: its value, and its owner from the decider's side."""
        value, colour = self.cube
        owner: CubeOwner = (
            None if colour is None else "mover" if colour == self.player else "opponent"
        )
        return value, owner

    def svg(
        self,
        variant: Variant,
        *,
        size: int | None = None,
        names: tuple[str, str] | None = None,
        match: MatchInfo | None = None,
    ) -> SvgBoard:
        """The board from White's seat, numbered in the coordinates of the player to decide (so
        his play, written in his coordinates, reads on it: GNU Backgammon's rule), with the
        chosen play as arrows, the dice, a cube on offer, both pip counts and the match score."""
        flipped = self.player == "Black"
        score, match_length, crawford = (match or MatchInfo()).board_score()
        return board(
            self.position,
            variant,
            flipped=flipped,
            mover="black" if flipped else "white",
            numbering="mover",
            last_play=self.steps or None,
            dice=self.dice,
            cube=self.board_cube() if variant.rules.cube.available else None,
            offered=self.offered,
            size=size,
            pips=True,
            names=names,
            score=score,
            match_length=match_length,
            crawford=crawford,
        )


@dataclass(frozen=True, slots=True)
class GameSteps:
    """A replayed game: its variant and its steps."""

    variant: Variant
    steps: tuple[DecisionStep, ...]
    match: MatchInfo = field(default_factory=MatchInfo)


def renumbered_play(text: str, geometry: Geometry) -> str:
    """A play's text with every point renumbered in the opponent's coordinates (RULES.md §1.2:
    ``24/18*(2)`` of Black is ``1/7*(2)`` in White's backgammon numbers); ``bar``, ``off``, hit
    and pin marks and repeat counts stay. The result is for reading beside a board numbered on
    the other side, not a play of the mover (it runs the other way)."""

    def point(part: str) -> str:
        core = part.rstrip("*^")
        if core.isdigit() and 1 <= int(core) <= 24:
            return str(opposite_point(int(core), geometry)) + part[len(core) :]
        return part

    tokens = []
    for token in text.split():
        chain, bracket, count = token.partition("(")
        tokens.append("/".join(map(point, chain.split("/"))) + bracket + count)
    return " ".join(tokens)


def _event_text(
    event: Mapping[str, Any], numbered: str | None = None, geometry: Geometry = "opposite"
) -> str:
    """An automatic event in words; a play of the other player than ``numbered`` (when given)
    renumbered in ``numbered``'s coordinates."""
    kind = event.get("kind")
    player = event.get("player", "?")
    if kind == "play":
        play = event.get("play") or "(no move)"
        if numbered is not None and player != numbered and event.get("play"):
            play = renumbered_play(str(play), geometry)
        return f"{player} {event.get('segment', '')}: {play} (forced)"
    if kind == "transfer":
        steps = ", ".join(f"{n}×{v}" for v, n in event.get("steps", []))
        return f"{player} hands over unplayed steps {steps}"
    if kind == "end":
        won = event.get("points")
        how = "the double is dropped" if event.get("reason") == "drop" else "all borne off"
        return f"{player} wins {won} point{'' if won == 1 else 's'} ({how})"
    if kind in ("double", "take", "drop", "beaver"):
        return f"{player} {kind}s"
    return ""


def _event_json(event: GameEvent) -> dict[str, Any]:
    """A kernel event as the record writes it."""
    return {"kind": event.kind, "player": COLOURS[event.player], **event.data}


def _shown(events: list[dict[str, Any]], numbered: str, geometry: Geometry) -> tuple[str, ...]:
    return tuple(t for t in (_event_text(e, numbered, geometry) for e in events) if t)


def game_steps(record: Mapping[str, Any] | GameRecord) -> GameSteps:
    """Replay ``record`` (an arena game's JSON, or its typed record) into its decision steps,
    through the one replayer (:class:`nardy.core.record.Replay`); :class:`ReplayViewError` if it
    does not fit. A step is shown for each of the arena's decision entries (its latency, info
    and fault beside it)."""
    try:
        typed = record if isinstance(record, GameRecord) else from_json(record)
        if not typed.is_arena:
            raise RecordError("not an arena game record (no game_id)")
        run = Replay(typed)
    except (RecordError, NardyError) as exc:
        raise ReplayViewError(f"the record cannot be replayed: {exc}") from None
    game = run.game
    variant = game.variant
    entries = typed.answers

    def cube_now() -> tuple[int, str | None]:
        owner = game.cube.owner
        return game.cube.value, None if owner is None else COLOURS[owner]

    geometry = variant.rules.geometry

    def white_view(position: Position, colour: int) -> Position:
        return position if colour == 0 else variant.flip(position)

    steps: list[DecisionStep] = []
    pending: tuple[dict[str, Any], int] | None = None
    """The step whose answer the replay applies when it is resumed, and the log's length then."""

    def close(pending: tuple[dict[str, Any], int]) -> None:
        # The events after the chosen action that no bot decided (forced plays, transfers, …).
        fields, seen = pending
        later = [_event_json(e) for e in game.events[seen:]]
        own = 1 if later and later[0]["kind"] in ACTIONS else 0
        after = tuple(t for t in map(_event_text, later[own:]) if t)
        shown = _shown(later[own:], fields["player"], geometry)
        steps.append(DecisionStep(**fields, after=after, after_shown=shown))

    replayed = iter(run)
    for number, entry in enumerate(entries, start=1):
        try:
            step = next(replayed, None)
        except RecordError as exc:
            raise ReplayViewError(str(exc)) from None
        if pending is not None:
            close(pending)
            pending = None
        if step is None:
            raise ReplayViewError(f"decision {entry.seq} comes after the end of the game")
        decision = step.decision
        player = COLOURS[decision.player]
        seen = len(game.events)
        common: dict[str, Any] = {
            "number": number,
            "player": player,
            "position": decision.position,
            "white_view": white_view(decision.position, decision.player),
            "cube": cube_now(),
            "info": entry.info,
            "latency_ms": entry.latency_ms,
            "fault": entry.fault,
            "fallback": entry.fallback,
        }
        if number == 1:
            earlier = [_event_json(e) for e in game.events]
            common["before"] = tuple(t for t in map(_event_text, earlier) if t)
            common["before_shown"] = _shown(earlier, player, geometry)
        if isinstance(decision, PlayDecision):
            rolls_so_far = [
                e for e in game.events if e.kind == "roll" and e.player == decision.player
            ]
            fields: dict[str, Any] = {
                "kind": "play",
                "roll": tuple(rolls_so_far[-1].data["dice"]) if rolls_so_far else None,
                "dice": decision.segment.dice,
                "segment": decision.segment.description,
                "segment_kind": decision.segment.kind,
                "choices": len(decision.plays),
            }
        elif isinstance(decision, DoubleDecision):
            fields = {"kind": "double"}
        else:
            fields = {"kind": "take", "offered": 2 * decision.cube.value}
        if entry.player != decision.player or entry.kind != fields["kind"]:
            raise ReplayViewError(
                f"decision {entry.seq}: the record has {COLOURS[entry.player]} "
                f"{entry.kind}, the game asks {player} {fields['kind']}"
            )
        if entry.answer is None or step.answer is None:
            # A fault that forfeited the game (nothing was applied), or the log ends here.
            steps.append(DecisionStep(**common, **fields))
            break
        if entry.answer != step.text:
            raise ReplayViewError(
                f"decision {entry.seq}: {player} answered {entry.answer!r}, the game's log has "
                f"{step.text!r}"
            )
        if isinstance(step.answer, Play):
            chosen = step.answer
            fields["steps"] = tuple(parse_steps(chosen.text)) if chosen.text else ()
            if variant.rules.hitting.pins and chosen.text:
                fields["shown"] = pin_marked_text(decision.position, chosen.text)
        pending = ({**common, **fields, "answer": entry.answer}, seen)
    if pending is not None:
        try:
            next(replayed, None)  # applies the last answer
        except RecordError as exc:
            raise ReplayViewError(str(exc)) from None
        close(pending)
    final_colour = game.mover
    final = game.position
    result = None if typed.outcome is None else typed.outcome.to_json()
    winner = (result or {}).get("winner")
    steps.append(
        DecisionStep(
            number=len(steps) + 1,
            kind="end",
            player=winner if winner in COLOURS else COLOURS[final_colour],
            position=final if winner in (None, COLOURS[final_colour]) else variant.flip(final),
            white_view=white_view(final, final_colour),
            cube=cube_now(),
            result=result,
        )
    )
    return GameSteps(variant, tuple(steps), typed.match)
