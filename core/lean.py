"""The kernel's lean game flow: one money game stepped on board keys, without game objects.

The learning environments, the batched self-play trainer and anything else that plays many games
fast run this flow; its turn plan is :mod:`nardy.core.turnplan`'s, as :class:`~nardy.core.game.Game`'s
is, so no turn rule lives outside the kernel. Most learning episodes are one money game without the cube. Their flow is a loop — an opening throw, then
each turn's transferred steps, roll, segments (one, or a double's progression stages or re-roll
chain), flip, until a bear-off (or plakoto's mother rule) ends the game — so :class:`LeanGame`
runs it on the move generator's board keys alone: no :class:`~nardy.core.game.Game` generator
frame, no ``Play``, ``PlayDecision`` or ``GameEvent`` objects, no play text. The profile of an AEC
step showed those (and the collector's work on the events they leave) at about a third of the
env's own time (docs/learning.md, "Speed").

A lean game records its rolls and answers; :meth:`LeanGame.materialise` replays them through
:class:`~nardy.core.game.Game` for anything else (rendering, copies, the game record), so the
kernel's game stays the one reference for the rules: tests compare the two flows episode by
episode for every eligible variant.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from operator import neg
from typing import TYPE_CHECKING, Any, Final

from nardy.core.dice import DiceSource, Roll
from nardy.core.game import (
    ROLL_SEGMENTS,
    WHITE,
    Game,
    GameResult,
    PlayDecision,
    Segment,
    cube_settings_for,
    pinning_end,
)
from nardy.core.movegen import BoardKey, SegmentPlays, position_of
from nardy.core.position import Position, opposite_point
from nardy.core.turnplan import (
    SegmentKind,
    after_stage,
    all_home,
    chain_handover,
    describe,
    later_steps,
    opening_outcome,
    reroll_plan,
    roll_plan,
    stage_handover,
    transfer_groups,
)
from nardy.core.variant import LegalPlays, Play

if TYPE_CHECKING:
    from nardy.core.rules import Rules
    from nardy.core.variant import Variant


def eligible(variant: Variant, dice: DiceSource | None, whole_match: bool) -> bool:
    """Whether a driver's game may run lean: a dice source (no chance nodes), money play, no
    cube in use. Every doubles rule runs lean (four steps, progression, re-roll; transfer)."""
    return (
        dice is not None
        and variant.options.get("match_length") is None
        and not cube_settings_for(variant, match_length=None).enabled
    )


class ReplayDice:
    """The recorded rolls, then the live source (materialising a lean game)."""

    def __init__(self, rolls: list[Roll], then: DiceSource) -> None:
        self._rolls = rolls[::-1]
        self.then = then

    def roll(self) -> Roll:
        return self._rolls.pop() if self._rolls else self.then.roll()


_set_points: Final = Position.__dict__["points"].__set__
_set_bar: Final = Position.__dict__["bar"].__set__
_set_off: Final = Position.__dict__["off"].__set__
_set_pinned: Final = Position.__dict__["pinned"].__set__


def _position(points: tuple[int, ...], bar: tuple[int, int], off: tuple[int, int]) -> Position:
    """``Position(points, bar, off)`` without the frozen dataclass's ``__init__`` (four
    ``object.__setattr__`` calls in a Python frame), as the move generator builds its results."""
    position: Position = object.__new__(Position)
    _set_points(position, points)
    _set_bar(position, bar)
    _set_off(position, off)
    _set_pinned(position, ())
    return position


def forced_once_home(rules: Rules) -> bool:
    """Whether every segment of an all-home side is forced: the exact bear-off with no moves
    inside home once all home (``mad``; RULES.md §3.5: each step bears a checker off its die's
    point or nothing)."""
    return rules.bear_off.rule == "exact" and rules.bear_off.home_moves != "always"


_HOMES: Final = {
    geometry: (tuple(range(6)), tuple(opposite_point(d, geometry) - 1 for d in range(1, 7)))
    for geometry in ("same", "opposite")
}
"""By geometry, the indexes in the mover's points of his points 1…6 and of the opponent's."""

_MY_HOME: Final = _HOMES["same"][0]


def _bear_off(points: list[int], dice: Sequence[int], home: Sequence[int], sign: int) -> int:
    """Each step of ``dice`` bearing a checker of the side ``sign`` (1 the mover's, −1 the
    opponent's) off its die's point (``home[die - 1]``, an index of ``points``) if one is there,
    as an all-home side's steps are under :func:`forced_once_home` rules; how many were borne
    off (``points`` changed in place)."""
    used = 0
    for die in dice:
        point = home[die - 1]
        if points[point] * sign > 0:
            points[point] -= sign
            used += 1
    return used


class LeanGame:
    """One eligible game (:func:`eligible`), from the opening throw to its result, stopping at
    every play decision with more than one legal play (every one without ``auto_forced``).

    The same dice give the same decisions, results and positions as ``Game(variant, dice)``: the
    flow is :meth:`Game._flow <nardy.core.game.Game._flow>`'s for these rules (RULES.md §2.1,
    §2.3, §2.6, §2.8-§2.11), tested against it. A turn is a sequence of segments: the
    transferred steps' groups, then the roll's segment — or a double's progression stages
    (§2.8) or re-roll chain (§2.9); :attr:`kind` says which the current one is."""

    __slots__ = (
        "_count",
        "_dice",
        "_exact",
        "_first",
        "_group",
        "_groups",
        "_keys",
        "_last",
        "_opposite",
        "_pending",
        "_pins",
        "_segment",
        "_sorted",
        "_start",
        "_used",
        "answers",
        "auto_forced",
        "awaiting",
        "deferred",
        "dice",
        "final",
        "kind",
        "mover",
        "position",
        "result",
        "rolls",
        "turn",
        "variant",
    )

    def __init__(
        self,
        variant: Variant,
        dice: DiceSource,
        *,
        auto_forced: bool = True,
        deferred: bool = False,
    ) -> None:
        """``deferred``: the game does not generate its legal plays itself; it stops
        :attr:`awaiting` them and :meth:`give` hands them over (a vector env generates every
        game's segment in one batch)."""
        variant.single_game()
        self._fields(variant, variant.start_position(), dice, auto_forced, deferred)
        first: Roll | None = None
        if self.turn.opening != "white_starts":
            # RULES.md §2.11: each throws one die, ties thrown again (no cube: no automatic doubles).
            while True:
                white, black = self._roll()
                if white != black:
                    break
            starter, first = opening_outcome(self.turn, white, black)
            if starter:
                self._switch()
        self._begin(first)
        self.enter()

    @classmethod
    def at_segment(
        cls,
        variant: Variant,
        dice: DiceSource,
        position: Position,
        mover: int,
        kind: SegmentKind,
        steps: tuple[int, ...],
        final: bool,
        *,
        auto_forced: bool = True,
    ) -> LeanGame:
        """A game at ``mover``'s segment of ``kind`` with ``steps`` at ``position`` (his view),
        ``final`` if it ends the turn whatever is played, later rolls from ``dice``; a turn plan's
        other fields (a progression's, transferred groups) are the caller's to set. A whole-batch
        flow plays a game on from its arrays in one (:mod:`~nardy.env.batchflow`)."""
        game: LeanGame = object.__new__(cls)
        game._fields(variant, position, dice, auto_forced, False)
        game.mover = mover
        game.kind, game.dice, game.final = kind, steps, final
        return game

    def _fields(
        self,
        variant: Variant,
        position: Position,
        dice: DiceSource,
        auto_forced: bool,
        deferred: bool,
    ) -> None:
        """Every field of a game at ``position``, White to move (the start: before the opening
        throw)."""
        self.variant = variant
        rules = variant.rules
        self.turn = rules.turn
        self._opposite = rules.geometry == "opposite"
        self._pins = rules.hitting.pins
        self._exact = forced_once_home(rules)
        """Once all home, a step is an exact bear-off or nothing (:meth:`_home_play`)."""
        self._dice = dice
        self.auto_forced = auto_forced
        self.deferred = deferred
        self.awaiting = False
        """Deferred only: the legal plays of (:attr:`position`, :attr:`dice`) are wanted."""
        self.rolls: list[Roll] = []
        """Every roll drawn, in order (the opening throw's and re-rolls included)."""
        self.answers: list[BoardKey] = []
        """The result board key chosen at each decision, in order."""
        self.position = position
        """From the mover's view; after the end, the winner's view of the final board."""
        self.mover = WHITE
        self.result: GameResult | None = None
        self.dice: tuple[int, ...] = ()
        """The current segment's dice (the decision's)."""
        self.kind: SegmentKind = "roll"
        """The current segment's kind: a roll, a progression stage, a re-roll or transferred
        steps (:class:`~nardy.core.game.Segment`)."""
        self._count = 0
        """The current decision's legal plays (0 while awaiting them and once the game is over)."""
        self._used = 0
        """How many dice every legal play of the current segment uses (N of RULES.md §2.3)."""
        self._segment: SegmentPlays | None = None
        self._keys: dict[BoardKey, Any] | None = None
        self._sorted: list[BoardKey] | None = None
        self.final = True
        """The current segment ends the turn whatever is played (a roll of two dice or of four
        steps, a re-roll of two dice): the next mover's view is built straight from the key."""
        self._pending: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
        """Each colour's transferred steps (value, count), played at the start of his turn."""
        self._groups: list[tuple[int, int]] = []
        """This turn's transferred groups, ascending (§2.10 item 3)."""
        self._group = 0
        """The index in :attr:`_groups` of the current transferred group."""
        self._first = 0
        """A progression's rolled value d (its stages are d…6)."""
        self._last = False
        """The progression's current stage is its last (§2.8 item 4)."""
        self._start: Position = self.position
        """The mover's position at the start of the current stage."""

    # -- the decision ------------------------------------------------------------------------

    def count(self) -> int:
        """How many legal plays the current decision has (0 once the game is over)."""
        return self._count

    def segment(self) -> SegmentPlays:
        """The current decision's legal plays (generated again if they were handed over)."""
        if self._segment is None:
            assert self._count, "no decision now"
            self._segment = self.variant.generator.checked_segment(self.position, self.dice)
            assert self._segment is not None
            self._keys = self._segment.plays
        return self._segment

    def _plays(self) -> dict[BoardKey, Any]:
        if self._keys is None:
            self.segment()
            assert self._keys is not None
        return self._keys

    def sorted_keys(self) -> list[BoardKey]:
        """The current decision's result keys in the canonical action order (ascending)."""
        if self._sorted is None:
            self._sorted = sorted(self._plays())
        return self._sorted

    def key_at(self, index: int) -> BoardKey:
        """The result key of the ``index``-th play in the generator's order (``LegalPlays``)."""
        return next(islice(self._plays(), index, None))

    def play_of(self, key: BoardKey) -> Play:
        return Play(self._plays()[key], position_of(key))

    def later(self) -> tuple[int, ...]:
        """The steps planned after the current segment in this turn, as the kernel's context of
        the decision states them (:func:`nardy.encoding.context_of`): a progression's later
        stages unless the stage starts all home, the later transferred groups; else none."""
        kind = self.kind
        home = kind == "stage" and all_home(self.position)
        return later_steps(kind, self.dice, home, self._groups)

    def described(self) -> Segment:
        """The current segment as the kernel's game states it."""
        kind, dice, mover = self.kind, self.dice, self.mover
        if kind == "roll":
            return ROLL_SEGMENTS[mover][dice[0], dice[1]]
        return Segment(mover, dice, kind, describe(kind, dice, self._first))

    def decision(self) -> PlayDecision | None:
        """The current decision as the kernel's game states it (for bots and afterstates)."""
        if not self._count:
            return None
        legal = LegalPlays(self.position, self.segment(), self._pins)
        return PlayDecision(self.mover, self.described(), self.position, legal)

    def choose(self, key: Sequence[int]) -> None:
        """Play the legal play that ends at ``key`` and go on to the next decision."""
        self.answers.append(tuple(key))
        if not self._play(key, self._used):
            self.enter()

    def give(self, count: int, first: Sequence[int], used: int) -> None:
        """Deferred: the awaited segment has ``count`` legal plays that use ``used`` dice,
        ``first`` the result key of the first (the one played when it is forced)."""
        self.awaiting = False
        self._used = used
        if count == 1 and self.auto_forced:
            if not self._play(first, used):
                self.enter()
            return
        self._count = count

    # -- the flow ----------------------------------------------------------------------------

    def _roll(self) -> Roll:
        roll = self._dice.roll()
        self.rolls.append(roll)
        return roll

    def _switch(self) -> None:
        self.position = self.position.flip(self.variant.rules.geometry)
        self.mover = 1 - self.mover

    def enter(self) -> None:
        """Stop at the current segment's decision, playing forced segments on (deferred: stop
        awaiting the segment's plays)."""
        variant = self.variant
        generator = variant.generator
        home_plays = self._exact and self.auto_forced
        while True:
            if self.deferred:
                self.awaiting = True
                return
            if home_plays:
                forced = self._home_play()
                if forced is not None:
                    if self._race():
                        continue  # (to the roll that ends the game)
                    if self._play(*forced):
                        return
                    continue
            segment = generator.checked_segment(self.position, self.dice)
            if segment is None:  # not in a game that goes on: let legal_plays say why
                variant.legal_plays(self.position, self.dice)
                raise AssertionError("unreachable")  # pragma: no cover
            keys = segment.plays
            if len(keys) == 1 and self.auto_forced:
                if self._play(next(iter(keys)), segment.dice_used):
                    return
                continue
            self._segment, self._keys, self._count = segment, keys, len(keys)
            self._used = segment.dice_used
            return

    def _home_play(self) -> tuple[list[int], int] | None:
        """The current segment's one legal play (its result key and dice used), told without
        generating it, where the bear-off is exact and moves inside home are forbidden once all
        home (``mad``) and the mover is all home; else None. RULES.md §3.5: "a checker bears off
        only with the die equal to its point" and "once all home, a die matching an empty point
        cannot be played at all", so each step bears a checker off its die's point if one is
        there and the steps do not compete: the play is forced. A ``mad`` ending is hundreds of
        these segments (a pass or a forced bear-off each roll), each a generator call otherwise."""
        position = self.position
        if position.bar[0] or max(position.points[6:]) > 0:
            return None
        points = list(position.points)
        off = position.off[0] + _bear_off(points, self.dice, _MY_HOME, 1)
        # §2.3 item 2: bearing off the last checker "counts as having used all dice".
        used = len(self.dice) if off == self.variant.checkers else off - position.off[0]
        return [off, *points, 0, position.bar[1], position.off[1]], used

    def _race(self) -> bool:
        """Where both sides are all home (the mover is, :meth:`_home_play`) and a turn is one
        roll's steps (no re-roll, nothing transferred): every segment of the game left is forced
        for both, so the turns are played on counts — each step bears a checker off its die's
        point if one is there — up to the roll that bears off a side's last checker, left as the
        current segment for :meth:`_play` to score. False (nothing done) where the opponent is
        not all home or the current segment ends the game. Most of a ``mad`` game's segments are
        these."""
        position = self.position
        points = list(position.points)
        homes = _HOMES["opposite" if self._opposite else "same"]
        theirs = homes[1]
        if position.bar[1] or sum(points[i] for i in theirs) != sum(p for p in points if p < 0):
            return False
        turn = self.turn
        if turn.transfer or turn.doubles == "reroll":
            return False
        off = list(position.off)
        checkers = self.variant.checkers
        side, dice, roll = 0, self.dice, None
        while True:
            after = points.copy()
            used = _bear_off(after, dice, homes[side], 1 - 2 * side)
            if off[side] + used == checkers:
                break
            points = after
            off[side] += used
            side ^= 1
            roll = self._roll()
            a, b = roll
            dice = (a, b) if a != b else (a, a, a, a)
        if roll is None:
            return False  # (the current segment ends the game: _play scores it)
        self.position = _position(tuple(points), (0, 0), (off[0], off[1]))
        if side:
            self._switch()
        self._rolled(roll)
        return True

    def _begin(self, first: Roll | None) -> None:
        """The mover's turn: his transferred steps first, else his roll (``first``: the opening
        throw's numbers), as the turn plan says (:mod:`nardy.core.turnplan`)."""
        pending = self._pending[self.mover]
        if pending:
            self._groups = transfer_groups(pending)
            pending.clear()
            self._transferred(0)
            return
        self._rolled(first if first is not None else self._roll())

    def _transferred(self, index: int) -> None:
        value, count = self._groups[index]
        self._group = index
        self.kind, self.dice, self.final = "transfer", (value,) * count, False

    def _rolled(self, roll: Roll) -> None:
        """The first segment of a roll (:func:`~nardy.core.turnplan.roll_plan`)."""
        self.kind, self.dice, self.final = roll_plan(self.turn, *roll)
        if self.kind == "stage":
            self._first, self._start = roll[0], self.position
            self._last = all_home(self.position)

    def _next(self, used: int) -> bool:
        """After a segment of the turn that used ``used`` dice (the game goes on): set up the
        turn's next segment, or say the turn is over (handing unplayed steps over where they
        transfer), as :meth:`Game._transferred_steps`, ``_progression`` and ``_reroll_chain``
        do, by the turn plan."""
        kind = self.kind
        if kind == "transfer":
            if self._group + 1 < len(self._groups):
                self._transferred(self._group + 1)
            else:
                self._rolled(self._roll())
            return True
        transfer = self.turn.transfer
        x = self.dice[0]
        if kind == "stage":
            start, position = self._start, self.position
            start_home = self._last or all_home(start)  # (as Game._progression reads it)
            go_on, next_last, short, self._last = after_stage(
                x,
                self._first,
                used,
                self._last,
                start_home,
                not start_home and all_home(position),
                position.off[0] == start.off[0],
                self.turn.progression_stop == "fourth_step_extra",
            )
            if short and transfer:
                self._pending[1 - self.mover].extend(stage_handover(x, used, self._last))
            if not go_on:
                return False
            self.dice, self._start, self._last = (x + 1,) * 4, position, next_last
            return True
        if used < 4:
            if transfer:
                self._pending[1 - self.mover].extend(chain_handover(x, used))
            return False
        self.kind, self.dice, self.final = reroll_plan(*self._roll())
        return True

    def _next_after(self, key: Sequence[int], used: int) -> bool:
        """:meth:`_next` after a segment that does not end the turn, played to ``key`` (the
        position it reads set from the key; where the turn ends, :meth:`_play` builds the next
        mover's view from the key)."""
        self.position = position_of(key)
        return self._next(used)

    def _play(self, key: Sequence[int], used: int) -> bool:
        """Make the play ending at ``key`` (of a segment that uses ``used`` dice) and set up the
        next segment (its turn's, or the next turn's); True when it ended the game (RULES.md
        §2.6, and §3.12.2's mother rule where checkers pin)."""
        self._segment, self._keys, self._sorted, self._count = None, None, None, 0
        variant = self.variant
        if key[0] == variant.checkers:
            self.position = position = position_of(key)
            loser = variant.loser_side(position, 1)
            jacoby = cube_settings_for(variant, match_length=None).jacoby
            scored = variant.game_points(loser, 1, cube_centred=True, jacoby=jacoby)
            self.result = GameResult(self.mover, scored, variant.game_value(loser), 1, "bear_off")
            return True
        if self._pins:
            self.position = position = position_of(key)
            end = pinning_end(variant, position, self.mover, 1, used)
            if end is not None:
                self.result = end
                return True
            if not self.final and self._next(used):
                return False
            self._switch()  # (the pinned checkers flip with the position)
        elif not self.final and self._next_after(key, used):
            return False
        else:
            # The next mover's view straight from the key: Position.flip of position_of(key)
            # without the position in between (tested equal).
            if self._opposite:
                points = tuple(map(neg, key[24:0:-1]))
            else:
                points = tuple(map(neg, [*key[13:25], *key[1:13]]))
            self.position = _position(points, (key[26], key[25]), (key[27], key[0]))
            self.mover = 1 - self.mover
        self._begin(None)
        return False

    # -- the kernel's game -------------------------------------------------------------------

    def materialise(self) -> Game:
        """The same game as a :class:`~nardy.core.game.Game` (its rolls and answers replayed),
        at the same decision, drawing later rolls from the same dice source."""
        game = Game(self.variant, ReplayDice(self.rolls, self._dice), auto_forced=self.auto_forced)
        for key in self.answers:
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            game.decide(decision.plays.board_keys().index(key))
        game.dice.source = self._dice
        assert game.position == self.position and game.result == self.result
        return game


def position_for(lean: LeanGame, colour: int) -> Position:
    """The lean game's board from ``colour``'s view."""
    if colour == lean.mover:
        return lean.position
    return lean.position.flip(lean.variant.rules.geometry)
