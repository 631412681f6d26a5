"""A stored game, decision by decision: what each bot saw, what it chose and what else it could do.

:func:`game_steps` replays an arena game record (the runner's JSON: ``decisions``, ``game`` with
the kernel's rolls and events, ``setup``) on a fresh :class:`~nardy.core.game.Game` and returns
one :class:`DecisionStep` per recorded decision plus a last one for the final position. The web
spectator, ``nardy arena replay --show`` and ``--svg`` all read games through it.

Positions are kept from the deciding player's view (as the kernel gives them) and from White's
view (absolute numbering, RULES.md §1.3), which is how a spectator's board stays put.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.errors import NardyError
from nardy.core.game import (
    COLOURS,
    CubeSettings,
    DoubleDecision,
    Game,
    PlayDecision,
)
from nardy.core.notation import Step, parse_steps
from nardy.core.position import Geometry, Position, opposite_point
from nardy.core.variant import Variant, pin_marked_text
from nardy.svg import CubeOwner, SvgBoard, board

__all__ = [
    "DecisionStep",
    "GameSteps",
    "MatchSetup",
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
        match: MatchSetup | None = None,
    ) -> SvgBoard:
        """The board from White's seat, numbered in the coordinates of the player to decide (so
        his play, written in his coordinates, reads on it: GNU Backgammon's rule), with the
        chosen play as arrows, the dice, a cube on offer, both pip counts and the match score."""
        flipped = self.player == "Black"
        score, match_length, crawford = (match or MatchSetup()).board_score()
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
class MatchSetup:
    """Where a game stands in its match (the record's ``setup.match``), White's view."""

    length: int = 0
    """0: money play (a single game or a money session)."""
    score: tuple[int, int] = (0, 0)
    """Before this game: (White's, Black's)."""
    game_no: int = 1
    crawford: bool = False

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> MatchSetup:
        match = (record.get("setup") or {}).get("match") or {}
        try:
            score = match.get("score") or (0, 0)
            return cls(
                int(match.get("length") or 0),
                (int(score[0]), int(score[1])),
                int(match.get("game_no") or 1),
                bool(match.get("crawford")),
            )
        except (TypeError, ValueError, IndexError):
            return cls()

    def board_score(self) -> tuple[tuple[int, int] | None, int, bool]:
        """``score``, ``match_length`` and ``crawford`` as :func:`nardy.svg.board` takes them (no
        score in money play)."""
        return (self.score if self.length else None), self.length, self.crawford


@dataclass(frozen=True, slots=True)
class GameSteps:
    """A replayed game: its variant and its steps."""

    variant: Variant
    steps: tuple[DecisionStep, ...]
    match: MatchSetup = field(default_factory=MatchSetup)


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


def _shown(events: list[dict[str, Any]], numbered: str, geometry: Geometry) -> tuple[str, ...]:
    return tuple(t for t in (_event_text(e, numbered, geometry) for e in events) if t)


def game_steps(record: Mapping[str, Any]) -> GameSteps:
    """Replay ``record`` into its decision steps; :class:`ReplayViewError` if it does not fit."""
    try:
        kernel = record["game"]
        rolls = [tuple(r) for r in kernel["rolls"]]
        decisions = record["decisions"]
        setup = record.get("setup") or {}
        variant = load_variant(record["variant"], record.get("options") or {})
        cube = CubeSettings(**setup["cube"]) if "cube" in setup else None
        game = Game(variant, ScriptedDice(rolls), starter=setup.get("starter"), cube=cube)
    except (KeyError, TypeError, ValueError, NardyError) as exc:
        raise ReplayViewError(f"the record cannot be replayed: {exc}") from None

    def cube_now() -> tuple[int, str | None]:
        owner = game.cube.owner
        return game.cube.value, None if owner is None else COLOURS[owner]

    geometry = variant.rules.geometry

    def white_view(position: Position, colour: int) -> Position:
        return position if colour == 0 else variant.flip(position)

    steps: list[DecisionStep] = []
    for entry in decisions:
        decision = game.decision
        if decision is None:
            raise ReplayViewError(f"decision {entry.get('seq')} comes after the end of the game")
        player = COLOURS[decision.player]
        seen = len(game.events)
        common: dict[str, Any] = {
            "number": len(steps) + 1,
            "player": player,
            "position": decision.position,
            "white_view": white_view(decision.position, decision.player),
            "cube": cube_now(),
            "info": entry.get("info"),
            "latency_ms": entry.get("latency_ms"),
            "fault": entry.get("fault"),
            "fallback": bool(entry.get("fallback")),
        }
        if not steps:
            earlier = [{"kind": e.kind, "player": COLOURS[e.player], **e.data} for e in game.events]
            common["before"] = tuple(t for t in map(_event_text, earlier) if t)
            common["before_shown"] = _shown(earlier, player, geometry)
        answer = entry.get("answer")
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
        if entry.get("player") not in (None, player) or entry.get("kind") not in (
            None,
            fields["kind"],
        ):
            raise ReplayViewError(
                f"decision {entry.get('seq')}: the record has {entry.get('player')} "
                f"{entry.get('kind')}, the game asks {player} {fields['kind']}"
            )
        if answer is None:  # a fault that forfeited the game: nothing was applied
            steps.append(DecisionStep(**common, **fields))
            break
        try:
            if fields["kind"] == "play":
                chosen = decision.plays.find(str(answer))  # type: ignore[union-attr]
                fields["steps"] = tuple(parse_steps(chosen.text)) if chosen.text else ()
                if variant.rules.hitting.pins and chosen.text:
                    fields["shown"] = pin_marked_text(decision.position, chosen.text)
                game.decide(chosen)
            elif fields["kind"] == "double":
                game.decide(answer == "double")
            else:
                game.decide(str(answer))
        except NardyError as exc:
            raise ReplayViewError(f"decision {entry.get('seq')}: {exc}") from None
        # The events after the chosen action that no bot decided (forced plays, transfers, …).
        later = [
            {"kind": e.kind, "player": COLOURS[e.player], **e.data} for e in game.events[seen:]
        ]
        own = 1 if later and later[0]["kind"] in ("play", "double", "take", "drop", "beaver") else 0
        after = tuple(t for t in map(_event_text, later[own:]) if t)
        shown = _shown(later[own:], player, geometry)
        steps.append(
            DecisionStep(**common, **fields, answer=str(answer), after=after, after_shown=shown)
        )
    final_colour = game.mover
    final = game.position
    result = record.get("result")
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
    return GameSteps(variant, tuple(steps), MatchSetup.of(record))
