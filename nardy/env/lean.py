"""The common game of a learning environment, stepped without the kernel's game objects.

Most episodes are one money game without the cube, of a variant whose doubles are four steps, that
does not transfer steps (backgammon, long, nardgammon, trictrac, fevga, hypergammon, plakoto).
Their flow is a straight loop — an opening throw, then roll, one segment, flip, until a bear-off
(or plakoto's mother rule) ends the game — so :class:`LeanGame` runs it on the move generator's board keys alone: no
:class:`~nardy.core.game.Game` generator frame, no ``Play``, ``PlayDecision`` or ``GameEvent``
objects, no play text. The profile of an AEC step showed those (and the collector's work on the
events they leave) at about a third of the env's own time (docs/learning.md, "Speed").

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
    WHITE,
    Game,
    GameResult,
    PlayDecision,
    Segment,
    cube_settings_for,
    pinning_end,
)
from nardy.core.movegen import BoardKey, SegmentPlays, position_of
from nardy.core.position import Position
from nardy.core.variant import LegalPlays, Play

if TYPE_CHECKING:
    from nardy.core.variant import Variant


def eligible(variant: Variant, dice: DiceSource | None, whole_match: bool) -> bool:
    """Whether a driver's game may run lean: a dice source (no chance nodes), money play, no
    cube in use, doubles played as four steps (no progression, re-roll or transfer)."""
    return (
        dice is not None
        and variant.options.get("match_length") is None
        and not cube_settings_for(variant, match_length=None).enabled
        and variant.rules.turn.doubles == "four"
    )


class _Replay:
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


_SEGMENTS: Final = {
    (player, a, b): Segment(player, (a, b) if a != b else (a,) * 4, "roll", f"roll {a}-{b}")
    for player in (0, 1)
    for a in range(1, 7)
    for b in range(1, 7)
}
"""The roll segments, equal to the kernel game's (immutable, shared)."""


class LeanGame:
    """One eligible game (:func:`eligible`), from the opening throw to its result, stopping at
    every play decision with more than one legal play (every one without ``auto_forced``).

    The same dice give the same decisions, results and positions as ``Game(variant, dice)``: the
    flow is :meth:`Game._flow <nardy.core.game.Game._flow>`'s for these rules (RULES.md §2.1,
    §2.3, §2.6, §2.11), tested against it."""

    __slots__ = (
        "_count",
        "_dice",
        "_keys",
        "_opposite",
        "_pins",
        "_segment",
        "_sorted",
        "_used",
        "answers",
        "auto_forced",
        "awaiting",
        "deferred",
        "dice",
        "mover",
        "position",
        "result",
        "rolls",
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
        self.variant = variant
        self._opposite = variant.rules.geometry == "opposite"
        self._pins = variant.rules.hitting.pins
        self._dice = dice
        self.auto_forced = auto_forced
        self.deferred = deferred
        self.awaiting = False
        """Deferred only: the legal plays of (:attr:`position`, :attr:`dice`) are wanted."""
        self.rolls: list[Roll] = []
        """Every roll drawn, in order (the opening throw's included)."""
        self.answers: list[BoardKey] = []
        """The result board key chosen at each decision, in order."""
        self.position = variant.start_position()
        """From the mover's view; after the end, the winner's view of the final board."""
        self.mover = WHITE
        self.result: GameResult | None = None
        self.dice: tuple[int, ...] = ()
        """The current segment's dice (the decision's)."""
        self._count = 0
        """The current decision's legal plays (0 while awaiting them and once the game is over)."""
        self._segment: SegmentPlays | None = None
        self._keys: dict[BoardKey, Any] | None = None
        self._sorted: list[BoardKey] | None = None
        self._used = 0
        """Deferred only: the dice every play of the handed-over segment uses (RULES.md §2.3's
        N; a pinning game's end needs it, §3.12.2)."""
        rules = variant.rules
        first: Roll | None = None
        if rules.turn.opening != "white_starts":
            # RULES.md §2.11: each throws one die, ties thrown again (no cube: no automatic doubles).
            while True:
                white, black = self._roll()
                if white != black:
                    break
            if black > white:
                self._switch()
            if rules.turn.opening == "numbers_used":
                first = (white, black) if white > black else (black, white)
        self._turn(first)

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

    def decision(self) -> PlayDecision | None:
        """The current decision as the kernel's game states it (for bots and afterstates)."""
        if not self._count:
            return None
        a, b = self.dice[0], self.dice[1]
        segment = _SEGMENTS[self.mover, a, b]
        legal = LegalPlays(self.position, self.segment(), self._pins)
        return PlayDecision(self.mover, segment, self.position, legal)

    def choose(self, key: Sequence[int]) -> None:
        """Play the legal play that ends at ``key`` and go on to the next decision."""
        self.answers.append(tuple(key))
        used = 0
        if self._pins:
            used = self._used if self.deferred else self.segment().dice_used
        if not self._play(key, used):
            self._turn(None)

    def give(self, count: int, first: Sequence[int], used: int = 0) -> None:
        """Deferred: the awaited segment has ``count`` legal plays using ``used`` dice each,
        ``first`` the result key of the first (the one played when it is forced)."""
        self.awaiting = False
        self._used = used
        if count == 1 and self.auto_forced:
            if not self._play(first, used):
                self._turn(None)
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

    def _turn(self, first: Roll | None) -> None:
        """Roll (or use the opening numbers) and stop at the segment's decision, playing forced
        segments on (deferred: stop awaiting the segment's plays)."""
        variant = self.variant
        generator = variant.generator
        while True:
            a, b = first if first is not None else self._roll()
            first = None
            dice = self.dice = (a, b) if a != b else (a, a, a, a)
            if self.deferred:
                self.awaiting = True
                return
            segment = generator.checked_segment(self.position, dice)
            if segment is None:  # not in a game that goes on: let legal_plays say why
                variant.legal_plays(self.position, dice)
                raise AssertionError("unreachable")  # pragma: no cover
            keys = segment.plays
            if len(keys) == 1 and self.auto_forced:
                if self._play(next(iter(keys)), segment.dice_used):
                    return
                continue
            self._segment, self._keys, self._count = segment, keys, len(keys)
            return

    def _play(self, key: Sequence[int], used: int = 0) -> bool:
        """Make the play ending at ``key`` (of a segment that uses ``used`` dice); True when it
        ended the game (RULES.md §2.6, and §3.12.2's mother rule where checkers pin)."""
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
            position = position_of(key)
            end = pinning_end(variant, position, self.mover, 1, used)
            if end is not None:
                self.position, self.result = position, end
                return True
            self.position = position.flip(variant.rules.geometry)
            self.mover = 1 - self.mover
            return False
        # The next mover's view straight from the key: Position.flip of position_of(key) without
        # the position in between (tested equal).
        if self._opposite:
            points = tuple(map(neg, key[24:0:-1]))
        else:
            points = tuple(map(neg, [*key[13:25], *key[1:13]]))
        self.position = _position(points, (key[26], key[25]), (key[27], key[0]))
        self.mover = 1 - self.mover
        return False

    # -- the kernel's game -------------------------------------------------------------------

    def materialise(self) -> Game:
        """The same game as a :class:`~nardy.core.game.Game` (its rolls and answers replayed),
        at the same decision, drawing later rolls from the same dice source."""
        game = Game(self.variant, _Replay(self.rolls, self._dice), auto_forced=self.auto_forced)
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
