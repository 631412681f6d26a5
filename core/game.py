"""One game: who starts, turns made of segments, the cube, the end and its score (RULES.md §2).

A :class:`Game` advances by itself through every chance event (dice) and every forced decision, and
stops at the next real decision, which :attr:`Game.decision` describes; :meth:`Game.decide` answers it.
The turn logic is written as one straight generator (:meth:`Game._flow`), so the order of §2.1 is
visible in one place: transferred steps, cube action, roll, segments, end of turn.

Given no dice source (``dice=None``), the game stops at every throw too: :attr:`Game.chance` names
the throw and :meth:`Game.roll` makes it (explicit chance nodes, for search and OpenSpiel). A game
pickles and deep-copies by replaying its inputs (the generator itself cannot be copied): the copy
has the same decisions, events and — its dice source copied too — the same future.
"""

from __future__ import annotations

import copy
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

from nardy.core.dice import DiceSource, RecordingDice, Roll, ScriptedDice
from nardy.core.errors import CubeError, GameStateError, IllegalPlayError
from nardy.core.position import Position
from nardy.core.turnplan import (
    SegmentKind,
    after_stage,
    all_home,
    chain_handover,
    describe,
    opening_outcome,
    reroll_plan,
    roll_plan,
    roll_plans,
    stage_handover,
    transfer_groups,
)
from nardy.core.variant import LegalPlays, Play, Variant

if TYPE_CHECKING:
    from nardy.core.rules import TurnPlan

WHITE = 0
BLACK = 1
COLOURS = ("White", "Black")

CubeAnswer = Literal["take", "drop", "beaver"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment of a turn (RULES.md §1.4): the dice it plays and why."""

    player: int
    """Colour of the player making it (0 White, 1 Black)."""
    dice: tuple[int, ...]
    kind: SegmentKind
    description: str
    """E.g. "roll 6-5", "stage 5 of a 3-3 progression", "3 sixes transferred from the opponent"."""


def _roll_segment(player: int, a: int, b: int) -> Segment:
    """The segment of an ordinary roll: two dice, or a double's four steps (RULES.md §2.3)."""
    return Segment(player, (a, b) if a != b else (a,) * 4, "roll", f"roll {a}-{b}")


ROLL_SEGMENTS: tuple[Mapping[Roll, Segment], ...] = tuple(
    {(a, b): _roll_segment(player, a, b) for a in range(1, 7) for b in range(1, 7)}
    for player in (WHITE, BLACK)
)
"""``ROLL_SEGMENTS[player][roll]``: segments are immutable, so turns share these 72 instead of
building one each (a frozen dataclass and its text: 0.6 µs, 3 % of a random-bot backgammon turn)."""


@cache
def _whole_turn_segments(turn: TurnPlan) -> tuple[Mapping[Roll, Segment], ...]:
    """By player, the rolls whose first segment is the whole turn by the turn plan (every roll
    where doubles are four steps, the non-doubles elsewhere), each with its shared segment: the
    game's hot path is one lookup, and a roll missing here starts a plan (or is faulty)."""
    plans = roll_plans(turn)
    return tuple(
        {roll: ROLL_SEGMENTS[player][roll] for roll, (_, _, final) in plans.items() if final}
        for player in (WHITE, BLACK)
    )


@dataclass(slots=True)
class Cube:
    """The doubling cube (RULES.md §2.12): value and owner (None = centred)."""

    value: int = 1
    owner: int | None = None


@dataclass(frozen=True, slots=True)
class CubeSettings:
    """How the cube may be used in this game (decided by the match or session)."""

    enabled: bool = False
    max_cube: int | None = None
    beavers: bool = False
    jacoby: bool = False
    auto_doubles_limit: int = 0
    """Automatic doubles on opening-throw ties (0 = off)."""


@dataclass(frozen=True, slots=True)
class PlayDecision:
    """Choose one of the legal plays of the current segment."""

    player: int
    segment: Segment
    position: Position
    """The position from the deciding player's view."""
    plays: LegalPlays


@dataclass(frozen=True, slots=True)
class DoubleDecision:
    """Before rolling: double, or roll."""

    player: int
    position: Position
    cube: Cube


@dataclass(frozen=True, slots=True)
class TakeDecision:
    """The opponent doubled (or beavered): take, drop, or (if offered) beaver."""

    player: int
    position: Position
    cube: Cube
    """The cube before the pending double."""
    beaver_allowed: bool
    after_beaver: bool = False


Decision = PlayDecision | DoubleDecision | TakeDecision


@dataclass(frozen=True, slots=True)
class ChanceNode:
    """A throw of two dice that a game without a dice source waits for (:meth:`Game.roll`)."""

    player: int
    """Who throws (White for the opening throw, where each throws one die: White's first)."""
    kind: Literal["opening", "roll", "reroll"]


_CHANCE_NODES: Final = {
    (kind, player): ChanceNode(player, kind)
    for kind in ("opening", "roll", "reroll")
    for player in (WHITE, BLACK)
}


class _ChanceDice:
    """The dice source of a game whose throws are chance nodes: asking it is a programming error."""

    def roll(self) -> Roll:
        raise GameStateError("this game's dice are chance nodes: answer them with Game.roll()")


class _ReplayDice:
    """The recorded rolls, then the original source (rebuilding a copied game)."""

    def __init__(self, rolls: list[Roll], then: DiceSource) -> None:
        self.recorded = ScriptedDice(rolls)
        self.then = then

    def roll(self) -> Roll:
        if self.recorded.remaining:
            return self.recorded.roll()
        return self.then.roll()


def cube_settings_for(
    variant: Variant, *, match_length: int | None, crawford: bool = False
) -> CubeSettings:
    """The cube of one game (RULES.md §2.12): off without a cube, in a 1-point match and in the Crawford
    game; Jacoby, beavers and automatic doubles only in money play ("ignored in match play")."""
    options = variant.options
    money = match_length is None
    auto = bool(options.get("auto_doubles")) and money
    return CubeSettings(
        enabled=variant.rules.cube.available and match_length != 1 and not crawford,
        max_cube=options.get("max_cube"),
        beavers=money and bool(options.get("beavers")),
        jacoby=money and bool(options.get("jacoby")),
        auto_doubles_limit=int(options.get("auto_doubles_limit") or 0) if auto else 0,
    )


GameEndReason = Literal["bear_off", "drop", "mother", "draw"]


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended.

    A **draw** (plakoto's double mother pin, RULES.md §2.6, §3.12.2) has ``draw`` set, ``reason``
    ``"draw"`` and 0 points; its ``winner`` is then only the player whose step ended the game, so
    a reader of results checks ``draw`` first (a match adds 0, statistics count half a win).
    """

    winner: int
    points: int
    """What the winner scores, cube included (0 for a draw)."""
    base_value: int
    """The game's value before the cube (1 for a drop, 0 for a draw)."""
    cube_value: int
    reason: GameEndReason
    resigned: bool = False
    draw: bool = False
    """True for a draw: nobody won, nobody scores."""


@dataclass(slots=True)
class GameEvent:
    """One entry of a game's record."""

    kind: Literal["opening", "roll", "play", "transfer", "double", "take", "drop", "beaver", "end"]
    player: int
    data: dict[str, Any] = field(default_factory=dict)


def pinning_end(
    variant: Variant, position: Position, mover: int, cube_value: int, dice_used: int
) -> GameResult | None:
    """How a play of a pinning variant ended the game other than by the last checker off, or None:
    the mother rule (RULES.md §3.12.2: a win, or a draw when both mothers are pinned), or a board
    on which neither player can ever move again (``dice_used == 0`` and no roll moves either side).

    RULES.md §2.6 ends such a frozen board as a draw, 0 points to each player: «neither player can
    ever move again: the same position recurs with no legal step for either side whatever the
    dice, e.g. both mothers pinned under `mother: off`».

    :param position: the position after the play, from ``mover``'s view (not flipped).
    """
    end = variant.mother_end(position)
    if end is not None:
        if end.outcome == "draw":
            return GameResult(mover, 0, 0, cube_value, "draw", draw=True)
        winner = mover if end.outcome == "win" else 1 - mover
        return GameResult(winner, end.value * cube_value, end.value, cube_value, "mother")
    if dice_used == 0 and _frozen(variant, position):
        return GameResult(mover, 0, 0, cube_value, "draw", draw=True)
    return None


def _frozen(variant: Variant, position: Position) -> bool:
    """Whether no roll has a legal play for either side."""
    for seen in (position, variant.flip(position)):
        for a in range(1, 7):
            for b in range(a, 7):
                if variant.legal_plays(seen, (a, b) if a != b else (a,) * 4).dice_used:
                    return False
    return True


class Game:
    """A single game of a variant, from the opening throw to its result."""

    def __init__(
        self,
        variant: Variant,
        dice: DiceSource | None,
        *,
        position: Position | None = None,
        mover: int = WHITE,
        starter: int | None = None,
        cube: CubeSettings | None = None,
        first_turn: bool | None = None,
        auto_forced: bool = True,
    ) -> None:
        """Start a game.

        :param position: a start position from the view of ``mover`` (default: the variant's layout);
            with a position given, ``mover`` is to roll at once (no opening throw).
        :param starter: colour that starts by rolling, skipping the opening throw (later games of a
            match: the previous winner, RULES.md §2.11).
        :param cube: the cube settings (default: :func:`cube_settings_for` the variant's options).
        :param first_turn: whether the cube may not yet be offered (default: True for a new game).
        :param auto_forced: play segments with a single legal play without asking.
        :param dice: where the dice come from; None: every throw is a chance node (:meth:`roll`).
        """
        self._init_args = {
            "position": position,
            "mover": mover,
            "starter": starter,
            "cube": cube,
            "first_turn": first_turn,
            "auto_forced": auto_forced,
        }
        variant.single_game()  # a match variant (tavli) is no game's rules: Match.of plays it
        self._explicit_chance = dice is None
        self.chance: ChanceNode | None = None
        """The throw the game waits for (only without a dice source)."""
        self._inputs: list[tuple[bool, Any]] = []
        """Everything sent into the flow, in order: (True, roll) or (False, resolved answer)."""
        self.variant = variant
        self.rules = variant.rules
        # Read at every turn, so read once here.
        self._checkers = variant.checkers
        self._whole_turns = _whole_turn_segments(self.rules.turn)
        self._geometry = self.rules.geometry
        self._pins = self.rules.hitting.pins
        self.dice = RecordingDice(_ChanceDice() if dice is None else dice)
        self.cube_settings = cube or cube_settings_for(
            variant, match_length=variant.options.get("match_length")
        )
        self.cube = Cube()
        self.auto_forced = auto_forced
        self.events: list[GameEvent] = []
        self.result: GameResult | None = None
        self.turns = 0
        self.pending_transfer: dict[int, list[tuple[int, int]]] = {WHITE: [], BLACK: []}
        if position is not None:
            variant.validate(position)
            self.position = position
            self.mover = mover
            self._opening = False
            self._starter = mover
        else:
            self.position = variant.start_position()
            self.mover = WHITE
            self._opening = starter is None and self.rules.turn.opening != "white_starts"
            self._starter = WHITE if starter is None else starter
        self._no_cube_yet = position is None if first_turn is None else first_turn
        self._flow_iter: Generator[Decision | ChanceNode, Any, None] = self._flow()
        self.decision: Decision | None = None
        self._advance()

    # -- public API ---------------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.result is not None

    def legal_plays(self) -> LegalPlays:
        """The legal plays of the current segment (raises when the decision is not a play)."""
        if not isinstance(self.decision, PlayDecision):
            raise GameStateError("no play is to be chosen now")
        return self.decision.plays

    def decide(self, answer: Play | int | str | bool) -> None:
        """Answer the current decision: a play (object, index or text), a bool to double, or
        ``"take"`` / ``"drop"`` / ``"beaver"``. Raises on an answer the rules do not allow."""
        decision = self.decision
        if decision is None:
            if self.chance is not None:
                raise GameStateError("the game waits for a throw of the dice (Game.roll)")
            raise GameStateError("the game is over")
        if isinstance(decision, PlayDecision):
            answer = self._resolve_play(decision.plays, answer)
        elif isinstance(decision, DoubleDecision):
            if not isinstance(answer, bool):
                raise CubeError("answer a double decision with True (double) or False (roll)")
        else:
            allowed = {"take", "drop"} | ({"beaver"} if decision.beaver_allowed else set())
            if answer == "beaver" and not decision.beaver_allowed:
                raise CubeError(self._why_no_beaver(decision))
            if answer not in allowed:
                raise CubeError(
                    f"answer must be one of {', '.join(sorted(allowed))}, not {answer!r}"
                )
        self._inputs.append((False, answer))
        self._advance(answer)

    def roll(self, a: int, b: int) -> None:
        """Make the throw the game waits for (:attr:`chance`): White's die and Black's for the
        opening throw, else the two dice of the player who rolls."""
        if self.chance is None:
            raise GameStateError(
                "the game does not wait for a throw"
                + ("" if self._explicit_chance else " (its dice come from a dice source)")
            )
        if not (isinstance(a, int) and isinstance(b, int) and 1 <= a <= 6 and 1 <= b <= 6):
            raise ValueError(f"a die shows 1-6, not {(a, b)}")
        self.dice.rolls.append((a, b))
        self._inputs.append((True, (a, b)))
        self.chance = None
        self._advance((a, b))

    def position_for(self, colour: int) -> Position:
        """The current position from ``colour``'s view."""
        return self.position if colour == self.mover else self.variant.flip(self.position)

    # -- internals ----------------------------------------------------------------------------------

    def _resolve_play(self, plays: LegalPlays, answer: Play | int | str | bool) -> Play:
        if isinstance(answer, bool):
            if answer:
                raise CubeError(
                    f"{COLOURS[self.mover]} cannot double now: {self.why_no_double(self.mover)}"
                )
            raise IllegalPlayError("a play is expected, not a cube answer")
        if isinstance(answer, int):
            if not 0 <= answer < len(plays):
                raise IllegalPlayError(f"play index {answer} is out of range 0-{len(plays) - 1}")
            return plays[answer]
        if isinstance(answer, str):
            return plays.find(answer)
        if answer not in plays:
            raise IllegalPlayError(f"{answer.text!r} is not a legal play")
        return answer

    def _advance(self, answer: Any = None) -> None:
        """Run the flow to its next decision; ``answer`` answers the one it stopped at (the first
        ``send(None)`` starts it)."""
        try:
            node = self._flow_iter.send(answer)
        except StopIteration:
            self.decision = None
            return
        if isinstance(node, ChanceNode):
            self.chance = node
            self.decision = None
        else:
            self.decision = node

    def _throw(
        self, kind: Literal["opening", "roll", "reroll"]
    ) -> Generator[ChanceNode, Roll, Roll]:
        """A throw: from the dice source, or (without one) a chance node answered by :meth:`roll`."""
        if self._explicit_chance:
            roll: Roll = yield _CHANCE_NODES[kind, WHITE if kind == "opening" else self.mover]
            return roll
        return self.dice.roll()

    # -- copies: a generator cannot be copied, so a copy replays the game's inputs --------------------

    def __getstate__(self) -> dict[str, Any]:
        source = self.dice.source
        return {
            "variant": self.variant,
            "source": None if self._explicit_chance else source,
            "rolls": [] if self._explicit_chance else list(self.dice.rolls),
            "inputs": list(self._inputs),
            "init": dict(self._init_args),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        source = state["source"]
        dice = None if source is None else _ReplayDice(state["rolls"], source)
        self.__init__(state["variant"], dice, **state["init"])  # type: ignore[misc]
        for is_roll, value in state["inputs"]:
            self._inputs.append((is_roll, value))
            if is_roll:
                self.dice.rolls.append(value)
                self.chance = None
            self._advance(value)
        if source is not None:
            self.dice.source = source

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        state = self.__getstate__()
        memo[id(self.variant)] = self.variant  # immutable: shared by the copies
        state["source"] = copy.deepcopy(state["source"], memo)
        new = Game.__new__(Game)
        new.__setstate__(state)
        return new

    def _log(self, event: Any, player: int, data: dict[str, Any] | None = None) -> None:
        # The data as a dict argument, not **kwargs: two events a turn, and a keyword call costs more.
        self.events.append(GameEvent(event, player, {} if data is None else data))

    def _switch(self) -> None:
        # What variant.flip does, without its two calls (it reads the geometry) at every turn.
        self.position = self.position.flip(self._geometry)
        self.mover = 1 - self.mover

    def _finish(self, winner: int, base: int, points: int, reason: GameEndReason) -> None:
        self.result = GameResult(winner, points, base, self.cube.value, reason)
        self._log("end", winner, {"points": points, "reason": reason})

    # -- the flow -----------------------------------------------------------------------------------

    def _flow(self) -> Generator[Decision | ChanceNode, Any, None]:
        """The whole game, one turn per pass of the loop in the order of RULES.md §2.1 (a turn is
        not a generator of its own: every decision would pass through one more frame)."""
        first_roll: Roll | None = None
        if self._opening:
            first_roll = yield from self._opening_throw()
        else:
            if self._starter != self.mover:
                self._switch()
        while True:
            self.turns += 1
            player = self.mover
            # 1. Transferred steps (§2.10 item 3).
            if self.pending_transfer[player]:
                yield from self._transferred_steps(player)
                if self.result is not None:
                    return
            # 2. Cube action, before rolling: the offer, then (if he doubles) the answer.
            if first_roll is None and not self._no_cube_yet and self.may_double(player):
                cube = Cube(self.cube.value, self.cube.owner)
                if (yield DoubleDecision(player, self.position, cube)):
                    dropped = yield from self._doubled(player)
                    if dropped:
                        return
            # 3. Roll, 4. segments.
            if first_roll is not None:
                (a, b), first_roll = first_roll, None
            elif self._explicit_chance:
                a, b = yield _CHANCE_NODES["roll", player]
            else:
                a, b = self.dice.roll()
            self._log("roll", player, {"dice": [a, b]})
            segment = self._whole_turns[player].get((a, b))
            if segment is not None:
                yield from self._segment(segment)
            else:
                kind, _, final = roll_plan(self.rules.turn, a, b)
                if final:  # dice outside 1-6 (a faulty source): legal_plays says what is wrong
                    yield from self._segment(_roll_segment(player, a, b))
                elif kind == "stage":
                    yield from self._progression(a)
                else:
                    yield from self._reroll_chain(a)
            if self.result is not None:
                return
            # 5. End of turn.
            self._switch()
            self._no_cube_yet = False

    def _opening_throw(self) -> Generator[ChanceNode, Roll, Roll | None]:
        """RULES.md §2.11: each throws one die; ties are thrown again (automatic doubles on ties)."""
        auto_done = 0
        while True:
            white, black = yield from self._throw("opening")
            self._log("opening", WHITE, {"dice": [white, black]})
            if white != black:
                break
            if auto_done < self.cube_settings.auto_doubles_limit and self.cube_settings.enabled:
                auto_done += 1
                self.cube.value *= 2
        starter, first_roll = opening_outcome(self.rules.turn, white, black)
        if starter != self.mover:
            self._switch()
        return first_roll

    def _transferred_steps(self, player: int) -> Generator[Decision, Any, None]:
        """RULES.md §2.10 item 3: the steps the opponent could not play, "grouped by value in
        ascending order", each group its own segment (:func:`~nardy.core.turnplan.transfer_groups`)."""
        transfer = self.pending_transfer[player]
        self.pending_transfer[player] = []
        for value, count in transfer_groups(transfer):
            steps = (value,) * count
            yield from self._segment(
                Segment(player, steps, "transfer", describe("transfer", steps))
            )
            if self.result is not None:
                return

    def _segment(self, segment: Segment) -> Generator[Decision, Any, int]:
        """Play one segment; returns the number of dice used (N of §2.3)."""
        plays = self.variant.legal_plays(self.position, segment.dice)
        choices = len(plays)
        if choices == 1 and self.auto_forced:
            play = plays[0]
        else:
            play = yield PlayDecision(self.mover, segment, self.position, plays)
        self._log(
            "play",
            self.mover,
            {
                "dice": list(segment.dice),
                "segment_kind": segment.kind,
                "segment": segment.description,
                "play": play.text,
                "choices": choices,
            },
        )
        self.position = play.result
        if self.position.off[0] == self._checkers:
            # §2.6: "The game ends the instant a player bears off his 15th checker" (N, §3.11).
            loser = self.variant.loser_side(self.position, 1)
            points = self.variant.game_points(
                loser,
                self.cube.value,
                cube_centred=self.cube.owner is None,
                jacoby=self.cube_settings.jacoby,
            )
            self._finish(self.mover, self.variant.game_value(loser), points, "bear_off")
        elif self._pins:
            end = pinning_end(
                self.variant, self.position, self.mover, self.cube.value, plays.dice_used
            )
            if end is not None:
                self.result = end
                data: dict[str, Any] = {"points": end.points, "reason": end.reason}
                if end.draw:
                    data["draw"] = True
                self._log("end", end.winner, data)
        return plays.dice_used

    def _progression(self, d: int) -> Generator[Decision, Any, None]:
        """RULES.md §2.8: stages d, d+1, …, 6, each its own segment, as the turn plan says
        (:func:`~nardy.core.turnplan.after_stage`)."""
        player = self.mover
        extra_stage = self.rules.turn.progression_stop == "fourth_step_extra"
        last = all_home(self.position)  # "all home when the progression starts": the last stage
        x = d
        while True:
            start = self.position
            steps = (x,) * 4
            label = describe("stage", steps, d)
            used = yield from self._segment(Segment(player, steps, "stage", label))
            if self.result is not None:
                return
            position = self.position
            # Entry needs the stage not yet the last and begun away from home: read the board
            # only when the answer can change (a mad game is mostly such stages).
            start_home = last or all_home(start)
            go_on, next_last, short, last = after_stage(
                x,
                d,
                used,
                last,
                start_home,
                not start_home and all_home(position),
                position.off[0] == start.off[0],
                extra_stage,
            )
            if short and self.rules.turn.transfer:
                self._hand_over(list(stage_handover(x, used, last)))
            if not go_on:
                return
            x, last = x + 1, next_last

    def _reroll_chain(self, d: int) -> Generator[Decision | ChanceNode, Any, None]:
        """RULES.md §2.9: a fully played double is re-rolled; a partly played one transfers the rest
        (:func:`~nardy.core.turnplan.chain_handover`)."""
        player = self.mover
        kind: SegmentKind = "roll"
        while True:
            steps = (d,) * 4
            used = yield from self._segment(Segment(player, steps, kind, describe(kind, steps)))
            if self.result is not None:
                return
            if used < 4:
                owed = chain_handover(d, used)
                if owed and self.rules.turn.transfer:
                    self._hand_over(list(owed))
                return
            roll = yield from self._throw("reroll")
            self._log("roll", player, {"dice": list(roll), "reroll": True})
            kind, dice, final = reroll_plan(*roll)
            if final:
                yield from self._segment(Segment(player, dice, kind, describe(kind, dice)))
                return
            d = roll[0]

    def _hand_over(self, steps: list[tuple[int, int]]) -> None:
        opponent = 1 - self.mover
        self.pending_transfer[opponent].extend(steps)
        self._log("transfer", self.mover, {"steps": [list(s) for s in steps]})

    # -- cube (RULES.md §2.12) ----------------------------------------------------------------------

    def may_double(self, player: int) -> bool:
        """Whether ``player`` has access to the cube (he may double before one of his rolls)."""
        return not self.why_no_double(player)

    def why_no_double(self, player: int) -> str:
        """Why ``player`` may not double, or ``""`` if he may (before one of his rolls)."""
        settings = self.cube_settings
        if self.result is not None:
            return "the game is over"
        if not settings.enabled:
            return "the cube is not in use in this game (variant, 1-point match or Crawford game)"
        if self.cube.owner not in (None, player):
            return f"{COLOURS[1 - player]} owns the cube"
        if settings.max_cube is not None and 2 * self.cube.value > settings.max_cube:
            return f"the cube is at {self.cube.value} and max_cube is {settings.max_cube}"
        return ""

    def _why_no_beaver(self, decision: TakeDecision) -> str:
        if decision.after_beaver:
            return "a beaver cannot be beavered (no raccoons)"
        if not self.cube_settings.beavers:
            return "beavers are not allowed (option beavers, money play only)"
        return f"a beaver would pass max_cube {self.cube_settings.max_cube}"

    def _doubled(self, player: int) -> Generator[Decision, Any, bool]:
        """``player`` doubled: the take decision (and a beaver's); returns whether one dropped."""
        self._log("double", player, {"value": 2 * self.cube.value})
        taker = 1 - player
        settings = self.cube_settings
        beaver_ok = settings.beavers and (
            settings.max_cube is None or 4 * self.cube.value <= settings.max_cube
        )
        answer = yield TakeDecision(
            taker, self.position_for(taker), Cube(self.cube.value, self.cube.owner), beaver_ok
        )
        if answer == "drop":
            self._log("drop", taker)
            self._finish(player, 1, self._drop_value(taker, 1), "drop")
            return True
        if answer == "take":
            self._log("take", taker)
            self.cube = Cube(2 * self.cube.value, taker)
            return False
        # Beaver: "v := 4v, the beaverer owns the cube, and the original doubler must take … or drop (he
        # pays 2v)".
        self._log("beaver", taker)
        answer = yield TakeDecision(
            player,
            self.position,
            Cube(2 * self.cube.value, taker),
            beaver_allowed=False,
            after_beaver=True,
        )
        if answer == "drop":
            self._log("drop", player)
            self._finish(taker, 1, self._drop_value(player, 2), "drop")
            return True
        self._log("take", player)
        self.cube = Cube(4 * self.cube.value, taker)
        return False

    def _drop_value(self, dropper: int, factor: int) -> int:
        """A drop scores the cube value before the double (× 2 after a beaver): "the doubler wins v
        points … under per_checker scoring the dropper pays v × (15 − his borne-off count)"."""
        value = self.cube.value * factor
        if self.rules.scoring.per_checker:
            return value * (self.variant.checkers - self.position_for(dropper).off[0])
        return value

    # -- conveniences -------------------------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """The game as JSON-ready data: variant, options, every roll and event, and the result."""
        return {
            "variant": self.variant.name,
            "options": self.variant.options,
            "rolls": [list(r) for r in self.dice.rolls],
            "events": [
                {"kind": e.kind, "player": COLOURS[e.player], **e.data} for e in self.events
            ],
            "result": None
            if self.result is None
            else {
                "winner": None if self.result.draw else COLOURS[self.result.winner],
                "points": self.result.points,
                "reason": self.result.reason,
                "cube": self.result.cube_value,
                **({"draw": True} if self.result.draw else {}),
            },
        }
