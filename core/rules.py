"""The rule aspects that plugins return from the hooks, and :class:`Rules`, their compiled form.

Each hook of :mod:`nardy.core.hookspecs` answers one aspect with one small frozen dataclass below. The
kernel asks the hooks once per variant and options and merges the answers into :class:`Rules`, plain data
that the move generator and the game loop read; they never call a hook themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, Literal, Protocol, Union, get_args, get_origin, get_type_hints

from nardy.core.position import MAX_CHECKERS, Geometry


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Layout:
    """Starting layout (RULES.md §3, "Layout"), the same for both players in their own coordinates."""

    geometry: Geometry
    """``opposite`` (backgammon family) or ``same`` (long-nardy family), RULES.md §1.2."""
    points: Mapping[int, int]
    """``{own point: checkers}`` of one player; its total is N, the checkers of each side (§3.11)."""

    @property
    def checkers(self) -> int:
        """N of RULES.md §3.11: "the number of checkers in the variant's layout"."""
        return sum(self.points.values())

    def problems(self) -> list[str]:
        """Every reason why the kernel cannot hold this layout (empty if it can)."""
        if self.geometry not in ("opposite", "same"):
            return [f"geometry must be 'opposite' or 'same', not {self.geometry!r}"]
        points: object = self.points  # a plugin may hand anything
        if not isinstance(points, Mapping):
            return [f"points must be a mapping {{point: checkers}}, not {type(points).__name__}"]
        found: list[str] = []
        for point, count in self.points.items():
            if not _is_int(point) or not 1 <= point <= 24:
                found.append(f"point {point!r} is not one of 1…24")
            if not _is_int(count) or count < 1:
                found.append(f"point {point!r} holds {count!r}; counts must be positive integers")
        if found:
            return found
        total = self.checkers
        if total > MAX_CHECKERS:
            found.append(
                f"{total} checkers a side; the kernel holds 1…{MAX_CHECKERS} "
                "(position ids and gnubg's formats encode at most 15)"
            )
        for point in self.points:
            mirror = 25 - point if self.geometry == "opposite" else (point + 12 - 1) % 24 + 1
            if mirror in self.points:
                found.append(
                    f"the players' start points collide: own point {point} is the opponent's "
                    f"{mirror} ({self.geometry} geometry)"
                )
                break
        return found


@dataclass(frozen=True, slots=True)
class Blocking:
    """Which points are closed to the mover (RULES.md §2.2 item 2)."""

    closed_by: int
    """A point is closed when it holds at least this many opposing checkers (2 or 1)."""


HitMode = Literal["bar", "pin", "none"]


@dataclass(frozen=True, slots=True)
class Hitting:
    """What landing on a lone opposing checker does: hit it to the bar, pin it in place, or nothing
    (where a lone checker closes its point anyway).

    ``Hitting(hits=True)`` is ``Hitting(mode="bar")`` and ``Hitting(hits=False)`` is
    ``Hitting(mode="none")``; ``Hitting(mode="pin")`` pins (RULES.md §3.12.2): the checker stays on
    its point beneath the lander's stack, cannot move, and is freed when that stack leaves.
    """

    hits: bool = False
    """True: the checker is hit and goes to its owner's bar (which the mover must re-enter first)."""
    mode: HitMode | None = None
    """``bar``, ``pin`` or ``none``; left out, it follows ``hits``."""

    def __post_init__(self) -> None:
        if self.mode is None:
            object.__setattr__(self, "mode", "bar" if self.hits is True else "none")

    @property
    def pins(self) -> bool:
        """Whether landing on a lone opposing checker pins it (RULES.md §3.12.2)."""
        return self.mode == "pin"


BearOffRule = Literal["standard", "exact"]
HomeMoves = Literal["always", "until_all_home", "never"]


@dataclass(frozen=True, slots=True)
class BearOff:
    """When and how checkers are borne off (RULES.md §2.2, §2.5)."""

    rule: BearOffRule = "standard"
    """``standard``: exact die, or a higher die from the highest occupied point; ``exact``: exact only."""
    home_moves: HomeMoves = "always"
    """Steps from one home point to another: always legal, illegal once all home, or never legal."""


FirstTurnHead = Literal["principle", "fixed", "head_only"]


@dataclass(frozen=True, slots=True)
class HeadRule:
    """How many checkers may leave the head (own point 24) per segment (RULES.md §3.3.3–§3.3.4, §3.9)."""

    limit: int | None = None
    """Head steps allowed per segment; ``None`` = no limit."""
    first_turn: FirstTurnHead = "principle"
    """How the first-turn exception (segment starting with all N on the head) raises the limit to 2."""
    runner: bool = False
    """Fevga's runner rule: until a checker has passed, only the head checker or the one runner moves."""


BlockTiming = Literal["none", "end", "step"]


@dataclass(frozen=True, slots=True)
class BlockRule:
    """Six-block rules (RULES.md §3.3.5, §3.4, §3.9)."""

    six_block: BlockTiming = "none"
    """Illegal blocks (six in a row with no opposing checker ahead): not checked, checked at the end of
    each segment (classic), or after every step (nardgammon)."""
    quarter: BlockTiming = "none"
    """Fevga's quarter rule (the mover may not hold all of his 19…24)."""
    trap: bool = False
    """Fevga's trap filter (§2.3 item 6)."""


Doubles = Literal["four", "progression", "reroll"]
ProgressionStop = Literal["entry_stage", "fourth_step_extra"]
Opening = Literal["numbers_used", "winner_rolls", "white_starts"]
LaterGames = Literal["opening", "white_starts", "previous_winner"]


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """Dice and turn plan (RULES.md §2.4, §2.8–§2.11)."""

    doubles: Doubles = "four"
    """A double is four steps, a progression d…6, or four steps and a re-roll when all four were played."""
    transfer: bool = False
    """Unplayed steps of a started double pass to the opponent (§2.10)."""
    progression_stop: ProgressionStop = "entry_stage"
    """All-home stop (§2.8 item 4): after the stage of entry, or one more stage when entry is on step 4."""
    opening: Opening = "winner_rolls"
    """Who starts the first game (§2.11)."""
    later_games: LaterGames = "previous_winner"
    """Who starts later games of a match or session."""


@dataclass(frozen=True, slots=True)
class Loser:
    """The loser's side when a game ends, in his own coordinates (RULES.md §6)."""

    points: Mapping[int, int]
    bar: int
    off: int
    checkers: int = 15
    """N, the loser's checkers in all (RULES.md §3.11)."""

    def has_checker_on(self, low: int, high: int) -> bool:
        """Whether the loser has a checker on one of his points ``low…high``."""
        return any(low <= p <= high and n > 0 for p, n in self.points.items())


class Scoring(Protocol):
    """What a finished game is worth (before the cube)."""

    @property
    def per_checker(self) -> bool:
        """True when the stake is per checker (a drop then costs ``v × (N − off)``)."""
        ...

    def value(self, loser: Loser) -> int:
        """Points the winner scores, cube value 1, no Jacoby."""
        ...


@dataclass(frozen=True, slots=True)
class BackgammonScoring:
    """Single 1, gammon 2 (nothing borne off), backgammon 3 (also on the bar or on his 19…24)."""

    per_checker: bool = False

    def value(self, loser: Loser) -> int:
        if loser.off:
            return 1
        return 3 if loser.bar or loser.has_checker_on(19, 24) else 2


@dataclass(frozen=True, slots=True)
class TrictracScoring:
    """RULES.md §3.2: 8 (nothing off, on the bar) / 4 (nothing off, outside home) / 2 / 1."""

    per_checker: bool = False

    def value(self, loser: Loser) -> int:
        if loser.off:
            return 1
        if loser.bar:
            return 8
        return 4 if loser.has_checker_on(7, 24) else 2


@dataclass(frozen=True, slots=True)
class LongScoring:
    """RULES.md §3.3.7: oin 1, mars 2 (nothing off), koks 3 (mars with a checker on his 19…24)."""

    koks: bool = True
    per_checker: bool = False

    def value(self, loser: Loser) -> int:
        if loser.off:
            return 1
        return 3 if self.koks and loser.has_checker_on(19, 24) else 2


@dataclass(frozen=True, slots=True)
class PerCheckerScoring:
    """The loser pays one point per checker not borne off: ``N − off`` (``15 − off``, §3.11)."""

    per_checker: bool = True

    def value(self, loser: Loser) -> int:
        return loser.checkers - loser.off


@dataclass(frozen=True, slots=True)
class FevgaScoring:
    """RULES.md §3.9: 1, or 2 if the loser bore off none; no triple game."""

    per_checker: bool = False

    def value(self, loser: Loser) -> int:
        return 1 if loser.off else 2


MotherRule = Literal["off", "standard", "simple"]


@dataclass(frozen=True, slots=True)
class GameEnd:
    """Game ends besides the last checker borne off (RULES.md §2.6, §3.12.2's mother rule).

    A player's **mother** is his checker on his own point 24 when it is the only one of his there;
    she is pinned when an opposing stack stands on her (only with pinning, :class:`Hitting`). After
    every step, ``standard``: both mothers pinned is a draw; one pinned while the other player has no
    checker left on his own 24 wins ``mother_points`` for him. ``simple``: a pinned mother at once
    wins ``mother_points`` for the pinner. ``off``: games end by bear-off, or as a draw on a frozen
    board (RULES.md §2.6; :func:`nardy.core.game.pinning_end`).
    """

    mother: MotherRule = "off"
    mother_points: int = 2
    """What a mother end is worth to the winner (before the cube)."""


@dataclass(frozen=True, slots=True)
class CubeRule:
    """Whether the doubling cube is used (RULES.md §2.12)."""

    available: bool = False


@dataclass(frozen=True, slots=True)
class Rules:
    """Every aspect of one variant with its options, compiled once; plain data for the hot paths."""

    layout: Layout
    blocking: Blocking
    hitting: Hitting
    bear_off: BearOff
    head: HeadRule
    blocks: BlockRule
    turn: TurnPlan
    scoring: Scoring
    cube: CubeRule = field(default_factory=CubeRule)
    game_end: GameEnd = field(default_factory=GameEnd)

    @property
    def geometry(self) -> Geometry:
        """Shortcut for ``layout.geometry``."""
        return self.layout.geometry

    @property
    def checkers(self) -> int:
        """N, the checkers of each side, from the layout (RULES.md §3.11)."""
        return self.layout.checkers

    @property
    def order_free(self) -> bool:
        """True when every step's legality is independent of the order of the other steps of a double.

        Then the generator plays a double's steps from non-increasing source points only (a multiset,
        not every ordering). Per-step block checks, the runner rule and restricted home moves depend on
        the intermediate positions, so those variants search every order.
        """
        return (
            self.blocks.six_block != "step"
            and self.blocks.quarter != "step"
            and not self.head.runner
            and self.bear_off.home_moves == "always"
        )

    def problems(self) -> list[str]:
        """Combinations of aspects the kernel cannot play (empty if it can play them all).

        Pinning (RULES.md §3.12.2) is implemented for rule sets of the plakoto kind: no head limit,
        six-block, quarter, trap or runner rule, and moves inside home always legal; a lone
        opposing checker must be pinnable, so two checkers close a point.
        """
        found: list[str] = []
        if self.hitting.pins:
            if self.blocking.closed_by != 2:
                found.append("pinning needs closed_by=2 (a lone opposing checker is pinned)")
            if self.head.limit is not None or self.head.runner:
                found.append("pinning with a head limit or the runner rule is not supported")
            if self.blocks != BlockRule():
                found.append("pinning with six-block, quarter or trap rules is not supported")
            if self.bear_off.home_moves != "always":
                found.append("pinning with restricted moves inside home is not supported")
            if self.turn.doubles != "four" or self.turn.transfer:
                found.append("pinning with progressions, re-rolls or transfers is not supported")
        elif self.game_end.mother != "off":
            found.append("the mother rule needs pinning (Hitting(mode='pin'))")
        if self.game_end.mother_points < 1:
            found.append("mother_points must be at least 1")
        return found


_ASPECT_TYPES: dict[str, type] = {
    "layout": Layout,
    "blocking": Blocking,
    "hitting": Hitting,
    "bear_off": BearOff,
    "head": HeadRule,
    "blocks": BlockRule,
    "turn": TurnPlan,
    "cube": CubeRule,
    "game_end": GameEnd,
}


def _fits(hint: Any, value: Any) -> bool:
    """Whether ``value`` is of the (simple) annotated type ``hint``."""
    origin = get_origin(hint)
    if origin is Literal:
        return value in get_args(hint)
    if origin in (UnionType, Union):
        return any(_fits(arg, value) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return _is_int(value)
    return True  # containers (the layout's points) are checked by their owner


def aspect_problems(aspect: str, answer: Any) -> list[str]:
    """Why a hook's answer for ``aspect`` (a :class:`Rules` field) is unusable (empty if usable)."""
    if aspect == "scoring":
        found = []
        if not callable(getattr(answer, "value", None)):
            found.append("a scoring answer needs a value(loser) method")
        if not isinstance(getattr(answer, "per_checker", None), bool):
            found.append("a scoring answer needs a per_checker flag (True or False)")
        return found
    expected = _ASPECT_TYPES[aspect]
    if not isinstance(answer, expected):
        return [f"expected a {expected.__name__}, got {type(answer).__name__}"]
    found = []
    for name, hint in get_type_hints(expected).items():
        value = getattr(answer, name)
        if not _fits(hint, value):
            allowed = get_args(hint) if get_origin(hint) is Literal else hint
            found.append(f"{name}={value!r} is not one of {allowed}")
    if isinstance(answer, Hitting) and answer.mode in ("pin", "none") and answer.hits:
        found.append(f"hits=True contradicts mode={answer.mode!r}")
    if isinstance(answer, Blocking) and _is_int(answer.closed_by) and answer.closed_by < 1:
        found.append(f"closed_by={answer.closed_by} must be at least 1")
    if isinstance(answer, HeadRule) and answer.limit is not None and answer.limit < 1:
        found.append(f"limit={answer.limit} must be at least 1 (or None for no limit)")
    if isinstance(answer, Layout) and not found:
        found.extend(answer.problems())
    return found
