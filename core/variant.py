"""A compiled variant: its rules as plain data, its move generator, and the legal-plays view.

:class:`Variant` is what the rest of the framework uses. It is built by :func:`nardy.core.load_variant`,
which asks the plugins' hooks once and compiles their answers.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise
from typing import Any, Literal

from nardy.core.errors import (
    GameStateError,
    IllegalPlayError,
    InvalidPlayError,
    InvalidPositionError,
    MatchVariantError,
)
from nardy.core.movegen import (
    PINS,
    BoardKey,
    MoveGenerator,
    SegmentPlays,
    board_of,
    pin_move,
    position_of,
)
from nardy.core.notation import BAR, OFF, Step, format_steps, parse_steps, play_text
from nardy.core.options import OptionSpec
from nardy.core.position import Position, opposite_point
from nardy.core.rules import Loser, Rules


@dataclass(frozen=True, slots=True)
class VariantInfo:
    """What a plugin registers: a variant's name, the variant it builds on, and its options."""

    name: str
    """The id used everywhere (``long``, ``backgammon``, …)."""
    title: str
    """A short human name («Длинные нарды» — long nardy)."""
    summary: str
    """One paragraph: how this variant differs from its base."""
    base: str | None = None
    """The variant whose aspects this one inherits (aspects it does not answer itself)."""
    options: tuple[OptionSpec, ...] = ()
    """Every option the variant accepts, with defaults."""
    cycle: tuple[str, ...] = ()
    """A **match variant**: its matches play games of these variants in turn, each by its own
    rules (RULES.md §3.12.3, ``tavli``: portes → plakoto → fevga); it is played only as a match
    (:meth:`nardy.core.match.Match.of`), and its own rules are those of its first game's variant.
    Empty for an ordinary variant."""


@dataclass(frozen=True, slots=True)
class Play:
    """One legal play of a segment: its steps (one representative order) and the resulting position."""

    steps: tuple[Step, ...]
    result: Position
    """The position after the play, still from the mover's view (not flipped)."""

    @property
    def text(self) -> str:
        """Play text as RULES.md writes it (``24/18 13/11``); the empty play is ``""``."""
        return play_text(self.steps)

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __str__(self) -> str:
        return self.text or "(no move)"


class LegalPlays(Sequence[Play]):
    """The legal plays of one segment, deduplicated by resulting position (python-chess style view).

    Iterable and sized; indexable in a stable order; ``in`` accepts a :class:`Play`, a resulting
    :class:`Position` or play text, in constant time for the first two.
    """

    __slots__ = ("_first", "_items", "_keys", "_pins", "_plays", "dice", "dice_used", "position")

    def __init__(self, position: Position, segment: SegmentPlays, pins: bool = False) -> None:
        self.position = position
        self._pins = pins
        """Whether landing on a lone opposing checker pins it (for reading play text)."""
        self.dice = segment.dice
        self.dice_used = segment.dice_used
        """How many dice every legal play uses (``N`` of RULES.md §2.3)."""
        self._keys = segment.plays
        self._items: list[tuple[BoardKey, tuple[Step, ...]]] | None = None
        self._plays: list[Play | None] | None = None
        """The plays built so far, by index (None until a second one is asked for)."""
        self._first: tuple[int, Play] | None = None
        """The first play asked for, with its index."""

    def _play(self, index: int) -> Play:
        # Plays are built one by one when asked for: a game loop usually needs only the chosen
        # one, found by walking the results once; a second one lists them all.
        plays = self._plays
        if plays is None:
            first = self._first
            if first is None:
                key, steps = next(islice(self._keys.items(), index, None))
                play = Play(steps, position_of(key))
                self._first = (index, play)
                return play
            if first[0] == index:
                return first[1]
            plays = self._plays = [None] * len(self._keys)
            plays[first[0]] = first[1]
        known = plays[index]
        if known is not None:
            return known
        if self._items is None:
            self._items = list(self._keys.items())
        key, steps = self._items[index]
        play = plays[index] = Play(steps, position_of(key))
        return play

    def _materialise(self) -> list[Play]:
        return [self._play(i) for i in range(len(self._keys))]

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[Play]:
        return iter(self._materialise())

    def __getitem__(self, index: int) -> Play:  # type: ignore[override]
        if index < 0:
            index += len(self._keys)
        if not 0 <= index < len(self._keys):
            raise IndexError(f"play index {index} out of range")
        return self._play(index)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Play):
            item = item.result
        if isinstance(item, Position):
            return tuple(board_of(item)) in self._keys
        if isinstance(item, str):
            try:
                self.find(item)
            except (InvalidPlayError, IllegalPlayError):
                return False
            return True
        return False

    def keyed(self) -> ItemsView[BoardKey, tuple[Step, ...]]:
        """``(result board key, steps)`` of every play, in order, without building a :class:`Play`
        or :class:`Position` (for serialisers; a key is :func:`~nardy.core.movegen.board_of`'s list
        as a tuple)."""
        return self._keys.items()

    def board_keys(self) -> list[BoardKey]:
        """The result board keys of :meth:`keyed` alone, in order (the environments sort them
        for their canonical action order)."""
        return list(self._keys)

    def positions(self) -> list[Position]:
        """The resulting position of every play, in order, without building a :class:`Play` (a
        search values hundreds of thousands of results and reads nothing else)."""
        return [position_of(key) for key in self._keys]

    @property
    def results(self) -> frozenset[Position]:
        """The distinct resulting positions."""
        return frozenset(p.result for p in self._materialise())

    def index_of(self, result: Position) -> int:
        """Index of the play that reaches ``result``; raises :class:`IllegalPlayError` if none does."""
        for index, play in enumerate(self._materialise()):
            if play.result == result:
                return index
        raise IllegalPlayError("no legal play reaches that position")

    def find(self, text: str) -> Play:
        """The legal play written ``text`` (any order of its steps, any legal spelling).

        Raises :class:`InvalidPlayError` for malformed text and :class:`IllegalPlayError` when the
        steps are not a legal play of this segment.
        """
        steps = parse_steps(text)
        result = apply_steps(self.position, steps, pins=self._pins)
        key = tuple(board_of(result))
        if key not in self._keys:
            dice = "-".join(map(str, self.dice))
            raise IllegalPlayError(f"{text or '(no move)'!r} is not a legal play with {dice}")
        for play in self._materialise():
            if play.result == result:
                return play
        raise AssertionError("unreachable")  # pragma: no cover


def apply_steps(position: Position, steps: Sequence[Step], *, pins: bool = False) -> Position:
    """Move checkers as the steps say, without checking legality (python-chess ``push``).

    A step onto a lone opposing checker hits it, or with ``pins`` pins it (RULES.md §3.12.2: the
    last checker leaving a point frees the one pinned beneath). Raises :class:`IllegalPlayError`
    only when a step is physically impossible (no checker of the mover on its source, landing on
    two or more opposing checkers, or on one that pins a checker of the mover).
    """
    b = board_of(position)
    if pins:
        return _apply_pinning(b, steps)
    for step in steps:
        src, dst = step.src, step.dst
        if b[src] <= 0:
            where = "the bar" if src == BAR else f"point {src}"
            raise IllegalPlayError(
                f"step {format_steps([step])}: the mover has no checker on {where}"
            )
        b[src] -= 1
        if dst == OFF:
            b[0] += 1
            continue
        if b[dst] < -1:
            raise IllegalPlayError(f"step {format_steps([step])}: point {dst} is closed")
        if b[dst] == -1:
            b[dst] = 1
            b[26] += 1
        else:
            b[dst] += 1
    return position_of(b)


def _apply_pinning(b: list[int], steps: Sequence[Step]) -> Position:
    """:func:`apply_steps` of a pinning variant."""
    if len(b) == PINS:
        b.append(0)
    for step in steps:
        src, dst = step.src, step.dst
        if src == BAR or b[src] <= 0:
            where = "the bar" if src == BAR else f"point {src}"
            raise IllegalPlayError(
                f"step {format_steps([step])}: the mover has no free checker on {where}"
            )
        if dst != OFF and (b[dst] < -1 or (b[dst] == -1 and (b[PINS] >> dst) & 1)):
            raise IllegalPlayError(f"step {format_steps([step])}: point {dst} is closed")
        pin_move(b, src, dst)
    return position_of(b if b[PINS] else b[:PINS])


def pin_marked_text(position: Position, text: str) -> str:
    """A pinning variant's play text, as written, with ``^`` after each landing that pins (RULES.md
    §3.12.2 writes ``13/7^``; PL-02: ``8/5^ 1/off``), for showing a play. A step pins when it lands
    on a lone free opposing checker of the board the earlier steps left (a checker freed by an
    earlier step may be pinned again); in a repeated chain (``24/22(2)``) a landing is marked
    when any repetition pins there. Play texts themselves stay unmarked; :func:`parse_steps`
    reads both. Raises :class:`InvalidPlayError` for text it cannot read."""
    parse_steps(text)  # a clear error for malformed text before walking it
    b = board_of(position)
    if len(b) == PINS:
        b.append(0)
    tokens = []
    for token in text.split():
        chain, _, repeat = token.partition("(")
        parts = [part.rstrip("*^") for part in chain.split("/")]
        steps = parse_steps(chain)
        points = [step.src for step in steps] + [steps[-1].dst]
        pins = [False] * (len(points) - 1)
        for _ in range(int(repeat.rstrip(")") or 1)):
            for i, (src, dst) in enumerate(pairwise(points)):
                if dst != OFF and b[dst] == -1 and not (b[PINS] >> dst) & 1:
                    pins[i] = True
                pin_move(b, src, dst)
        landed = [part + ("^" if pin else "") for part, pin in zip(parts[1:], pins, strict=True)]
        tokens.append("/".join([parts[0], *landed]) + (f"({repeat}" if repeat else ""))
    return " ".join(tokens)


Outcome = Literal["win", "loss", "draw"]


@dataclass(frozen=True, slots=True)
class GameEndResult:
    """How a position ended the game (:meth:`Variant.outcome`), from its mover's view."""

    outcome: Outcome
    """``win`` / ``loss`` for the position's mover, or ``draw``."""
    value: int
    """What the winner scores before the cube (0 for a draw)."""
    reason: Literal["bear_off", "mother", "draw"]


class _NoPlays:
    """The move generator of a match variant (``tavli``): asking it for plays is asking a single
    game of the match variant, which :meth:`Variant.single_game` refuses."""

    def __init__(self, variant: Variant) -> None:
        self._variant = variant

    def checked_segment(self, position: Position, dice: Sequence[int]) -> Any:
        self._variant.single_game("legal plays of one game")
        raise AssertionError("unreachable: a match variant")

    segment = checked_segment


class Variant:
    """A variant with its options, compiled: rules as plain data and a move generator."""

    def __init__(self, info: VariantInfo, options: dict[str, Any], rules: Rules) -> None:
        self.info = info
        self.name = info.name
        self.options = options
        self.rules = rules
        self.checkers = rules.checkers
        """N, the checkers of each side, from the layout (RULES.md §3.11)."""
        # A match variant has no plays of its own: each game is played by its own variant.
        self.generator: MoveGenerator | _NoPlays = (
            _NoPlays(self) if info.cycle else MoveGenerator(rules)
        )
        self._pins = rules.hitting.pins
        self._mother = rules.game_end.mother

    @property
    def is_match_variant(self) -> bool:
        """Whether this variant is played only as a match of other variants (RULES.md §3.12.3)."""
        return bool(self.info.cycle)

    def single_game(self, where: str = "a single game") -> Variant:
        """This variant, for playing one game by its rules; a match variant raises
        :class:`~nardy.core.errors.MatchVariantError` (its rules are only its first game's)."""
        if self.info.cycle:
            raise MatchVariantError(
                f"{self.name} is a match of {' → '.join(self.info.cycle)} (each game by its own "
                f"variant's rules), not playable as {where}: play it as a match (a match length)"
            )
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # The compiled move generator does not pickle; it is rebuilt from the rules.
        return (Variant, (self.info, self.options, self.rules))

    def __deepcopy__(self, memo: dict[int, Any]) -> Variant:
        return self  # immutable once compiled: copies of games and environments share it

    def max_game_value(self) -> int:
        """The most one game can be worth before the cube (RULES.md §6): the value of a loser with
        nothing borne off and every checker on the bar or on one of his points, the worst taken."""
        n = self.checkers
        scoring = self.rules.scoring
        losers = [Loser({p: n}, 0, 0, n) for p in range(1, 25)]
        if self.rules.hitting.hits:
            losers.append(Loser({}, n, 0, n))
        return max(scoring.value(loser) for loser in losers)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if v != _default(self.info, k)}
        return (
            f"load_variant({self.name!r}, {changed!r})"
            if changed
            else f"load_variant({self.name!r})"
        )

    # -- positions -------------------------------------------------------------------------------------

    def start_position(self) -> Position:
        """The starting position, from the view of the first mover."""
        layout = self.rules.layout
        return Position.from_sides(
            layout.points,
            {opposite_point(p, layout.geometry): n for p, n in layout.points.items()},
            checkers=self.checkers,
        )

    def position_from_id(self, text: str) -> Position:
        """Parse a position id of this variant (its N gives the borne-off counts) and validate it."""
        position = Position.from_id(text, self.checkers)
        self.validate(position)
        return position

    def position_from_json(self, obj: Any) -> Position:
        """Build a position from the position JSON and validate it for this variant."""
        position = Position.from_json(obj, self.checkers)
        if not self._needs_variant_checks(position):
            return position  # from_json checked the count of checkers; nothing else can be wrong
        self.validate(position)
        return position

    def _needs_variant_checks(self, position: Position) -> bool:
        """Whether a position with the right count of checkers may still break a rule of this
        variant (a bar without hitting, a borne-off checker with checkers outside home)."""
        if position.bar != (0, 0) and not self.rules.hitting.hits:
            return True
        if position.pinned:
            return True
        return self.rules.geometry == "same" and position.off != (0, 0)

    def validate(self, position: Position) -> None:
        """Raise :class:`InvalidPositionError` if ``position`` cannot occur in this variant."""
        if position.balanced(self.checkers) and not self._needs_variant_checks(position):
            return
        problems = position.problems(self.checkers)
        if problems and self.checkers != 15:
            problems[-1] += f" in {self.name}"
        if not self.rules.hitting.hits and position.bar != (0, 0):
            problems.append(f"{self.name} has no bar, but the position has checkers on it")
        if position.pinned and not self.rules.hitting.pins:
            problems.append(f"{self.name} does not pin, but the position has pinned checkers")
        if self.rules.geometry == "same":
            # A same-direction checker never leaves home once there (no hitting), so a side that has
            # borne off has every board checker at home.
            for side in (0, 1):
                if position.off[side] and any(p > 6 for p in position.side(side, "same")):
                    who = "mover" if side == 0 else "opponent"
                    problems.append(f"the {who} has borne off but has checkers outside home")
        if problems:
            raise InvalidPositionError("; ".join(problems))

    def flip(self, position: Position) -> Position:
        """The same position seen by the other player."""
        return position.flip(self.rules.geometry)

    # -- plays -----------------------------------------------------------------------------------------

    def legal_plays(self, position: Position, dice: Sequence[int]) -> LegalPlays:
        """The legal plays of one segment with these dice: two different values for an ordinary roll,
        or 1–4 equal values (a double's steps, a progression stage, transferred steps).

        Raises :class:`ValueError` for impossible dice and :class:`GameStateError` for a finished
        position (§2.6: the game ended when a side bore off its last checker; nobody moves again).
        """
        if self._mother and self.mother_end(position) is not None:
            raise GameStateError("the game is over: the mother rule ended it (RULES.md §3.12.2)")
        segment = self.generator.checked_segment(position, dice)
        if segment is None:
            # Not the common case (checked in one pass by the compiled generator): say why, or
            # accept what passes (a bool is an int).
            if self.checkers in position.off:
                who = "mover" if position.off[0] == self.checkers else "opponent"
                raise GameStateError(
                    f"the game is over: the {who} has borne off all {self.checkers} checkers, "
                    "so there is no play to make"
                )
            dice = tuple(dice)
            if (
                not dice
                or len(dice) > 4
                or any(not isinstance(d, int) or not 1 <= d <= 6 for d in dice)
            ):
                raise InvalidPlayError(f"dice must be 1-4 values in 1-6, not {list(dice)}")
            if len(dice) != 2 and len(set(dice)) != 1:
                raise InvalidPlayError(
                    f"a segment is two different dice or equal steps, not {list(dice)}"
                )
            segment = self.generator.segment(position, dice)
        return LegalPlays(position, segment, self._pins)

    def play(self, position: Position, dice: Sequence[int], text: str) -> Play:
        """The legal play written ``text``; raises :class:`InvalidPlayError` / :class:`IllegalPlayError`."""
        return self.legal_plays(position, dice).find(text)

    # -- scoring ---------------------------------------------------------------------------------------

    def loser_side(self, position: Position, loser: int) -> Loser:
        """The loser's side (0 = the position's mover, 1 = the opponent) in his own coordinates."""
        return Loser(
            position.side(loser, self.rules.geometry),
            position.bar[loser],
            position.off[loser],
            self.checkers,
        )

    def game_value(self, loser: Loser) -> int:
        """What the finished game is worth to the winner, before the cube (RULES.md §6)."""
        return self.rules.scoring.value(loser)

    def game_points(
        self,
        loser: Loser,
        cube_value: int = 1,
        *,
        cube_centred: bool = True,
        jacoby: bool | None = None,
    ) -> int:
        """What the winner scores for a game ended by a bear-off: value × cube, with Jacoby.

        RULES.md §2.12: "if the game ends (not by a drop) with the cube centred, the result multiplier is
        1 … Not applicable to per_checker scoring." ``jacoby=None`` takes the variant's option, which
        applies to money play only (no ``match_length``).
        """
        if jacoby is None:
            jacoby = bool(self.options.get("jacoby")) and self.options.get("match_length") is None
        base = self.game_value(loser)
        if jacoby and cube_centred and not self.rules.scoring.per_checker:
            base = 1
        return base * cube_value

    def is_finished(self, position: Position) -> bool:
        """Whether the game is over: a side has borne off all its N checkers, or (plakoto) the
        mother rule ended it."""
        if self.checkers in position.off:
            return True
        return self._mother != "off" and self.mother_end(position) is not None

    def mother_end(self, position: Position) -> GameEndResult | None:
        """The mother rule's end (RULES.md §3.12.2) of a position reached by a step, from its
        mover's view (the player who just moved, the position not flipped), or None.

        ``standard``: both mothers pinned is a draw; one pinned while the other player has no
        checker on his own 24 is a win for that other player. ``simple``: a pinned mother is a win
        for the pinner. A mother is a player's only checker on his own point 24; pinned, she lies
        beneath an opposing stack.
        """
        mode = self._mother
        if mode == "off" or not position.pinned:
            return None
        points = position.points
        pinned = position.pinned
        top = opposite_point(24, self.rules.geometry)  # the opponent's own 24, mover's coordinates
        # Pinned checkers are the only checker of their side on their point: a mother.
        opponent_pinned = top in pinned and points[top - 1] > 0
        mover_pinned = 24 in pinned and points[23] < 0
        if not (opponent_pinned or mover_pinned):
            return None
        points_won = self.rules.game_end.mother_points
        if mode == "simple":
            return GameEndResult("win" if opponent_pinned else "loss", points_won, "mother")
        if opponent_pinned and mover_pinned:
            return GameEndResult("draw", 0, "draw")
        if opponent_pinned and points[23] <= 0:
            return GameEndResult("win", points_won, "mother")  # the mover has none on his 24
        if mover_pinned and points[top - 1] >= 0:
            return GameEndResult("loss", points_won, "mother")  # the opponent has none on his 24
        return None

    def outcome(self, position: Position) -> GameEndResult | None:
        """How ``position`` (reached by a step of its mover, not flipped) ends the game, from its
        mover's view, or None while the game goes on."""
        if position.off[0] == self.checkers:
            value = self.game_value(self.loser_side(position, 1))
            return GameEndResult("win", value, "bear_off")
        if position.off[1] == self.checkers:
            value = self.game_value(self.loser_side(position, 0))
            return GameEndResult("loss", value, "bear_off")
        return self.mother_end(position)


def _default(info: VariantInfo, name: str) -> Any:
    for spec in info.options:
        if spec.name == name:
            return spec.default
    return None
