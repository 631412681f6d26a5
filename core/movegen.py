"""Legal plays of one segment (RULES.md §2.2-§2.3), on plain lists of ints.

This module knows nothing of pluggy or of variant names: :class:`MoveGenerator` is built once from
a variant's compiled :class:`~nardy.core.rules.Rules` and then only reads local attributes.

The board is a list of 28 ints seen from the mover: ``b[0]`` the mover's borne-off count,
``b[1..24]`` the points (positive = mover, negative = opponent), ``b[25]`` the mover's bar,
``b[26]`` the opponent's bar, ``b[27]`` the opponent's borne-off count; and, only when a checker
is pinned (RULES.md §3.12.2), ``b[28]``: bit ``p`` set when point ``p`` holds a checker pinned
beneath its stack (it belongs to the side not owning the stack). Plays are keyed by ``tuple(b)``
of their final board, so they are deduplicated by resulting position (§2.3 item 7); a key has 29
entries exactly when something is pinned.

There are three searches (docs/performance.md explains the choices and their measurements):

* **The fast path**, for rule sets whose steps do not depend on the order of the other steps
  (:attr:`Rules.order_free <nardy.core.rules.Rules.order_free>`, e.g. backgammon, trictrac, long,
  gulbar, khachapuri) and have no Fevga quarter or trap rule. Two different dice are played in
  both orders, and a pair of steps already found in the first order is not replayed in the
  second; equal dice are played from non-increasing source points only (one order per multiset of
  steps). Only the leaves of the search are keyed, and only when they use at least as many dice
  as the best leaf so far. The end-of-segment six-block check is applied to the plays that use the
  most dice; when none of them passes (a rare case), the general search below answers instead.
  ``core/_batchgen.c`` is a C translation of this path for the batch API (nardy.core.batch): a
  change here is made there too (tests/core/test_batchgen.py compares the two).
* **The ordered search**, for rule sets without hitting whose steps depend on their order
  (per-step six-block, the runner rule, restricted home moves, per-step quarter; nardgammon, mad,
  mad_gulbar, fevga, giul). Two different dice are played by two nested loops with every per-step
  rule inline and the end checks on the results only; when no play uses both dice, the general
  search answers. Equal dice go to the fast path's multiset search when no order-dependent rule
  can bind in the segment (:meth:`MoveGenerator._order_free_now`), else to a depth-first search
  over every order whose states are keyed by one integer updated per step.
  ``core/_batchgen.c`` translates this search too (with the general search for two different
  dice without hitting, where it falls back to it); a change here is made there too.
* **The pinning search**, for rule sets that pin instead of hitting (RULES.md §3.12.2, plakoto):
  the board carries a 29th entry, the points holding a pinned checker (:data:`PINS`). A point's
  closedness cannot change in the mover's segment, so each die's sources are chosen once. Two
  different dice are played by two nested loops in both orders (a pair of steps once); equal dice
  by one loop (:class:`_PinSearch`) as the fast path's multiset search, or over every order
  (states keyed by the multiset of their sources) only where the mother rule can end the game at
  a step the multiset search would play too early (:meth:`MoveGenerator._mother_order`). ``core/_batchgen.c`` translates this search too (the
  pinned points' bits in each result's key); a change here is made there too.
* **The general search**, for everything else and for comparison (``MoveGenerator(rules,
  fast=False)``): a make/unmake depth-first search over every order of the steps that records
  every node as a candidate and skips states it has already expanded.

What the searches share, each in one place: the equal-dice searches' state and their bookkeeping
of the plays of the most dice (:class:`_EqualDice`, the base of :class:`_MultisetSearch`,
:class:`_OrderedSearch` and :class:`_PinSearch`); a step made and taken back in place, with a hit
(:func:`_hit_step`, :func:`_hit_unstep`: the fast path and the general search) or with pins
(:func:`_pin_step`, :func:`_pin_unstep`, the end of the game by the mother rule
:func:`_pin_ends_game`: the pinning search); the per-step six-block check (:func:`_step_blocks`:
the ordered and the general search); the one-die candidates of two different dice and the
larger-die rule (:class:`_OneDie`); and in the three two-dice loops
(:meth:`MoveGenerator._fast_two`, :meth:`MoveGenerator._ordered_two`,
:meth:`MoveGenerator._pin_two`) one record of the pairs of steps already played in the first
order, a bit mask per source. Each equal-dice search makes the last die's steps in the loop of the
others. The two-dice loops themselves stay apart, each with only its rule set's checks inline (one
loop would test the others' at every step; not tried yet: docs/performance.md, "One search's parts
in one place").

All searches return the same plays (results and dice used). The fast path and the ordered search
also give the general search's order and representative steps, with one exception: a result
that one die and two dice both reach (a bear-off from a lower point, e.g. ``6/off`` and
``6/5/off`` with 6-1) may come later and with the other step list in the fast path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from nardy.core.notation import Step
from nardy.core.position import MAX_CHECKERS, Position
from nardy.core.rules import Rules

Board = list[int]
BoardKey = tuple[int, ...]
Plays = dict[BoardKey, tuple[Step, ...]]

# Final: the compiled build (mypyc) inlines these and reads the tables without a dict lookup.
BAR: Final = 25
OPP_BAR: Final = 26
OPP_OFF: Final = 27
HEAD: Final = 24
PINS: Final = 28
"""The index of the pinned points' bits in a board of a pinning rule set (absent from a key
without pins)."""

# Same-direction geometry: the opponent's point q (his coordinates) is my point
# _ON_OPPONENT_PATH[q - 1], so walking it walks his path 1, 2, … 24 (RULES.md §3.3.5: "In M's
# coordinates O's path is 12, 11, …, 1, 24, 23, …, 13").
_ON_OPPONENT_PATH: Final = tuple(q + 12 if q <= 12 else q - 12 for q in range(1, 25))


def _step_tables() -> tuple[tuple[tuple[Step, ...], ...], tuple[tuple[Step, ...], ...]]:
    """Every possible step, made once: ``plain[die][src]`` and ``hitting[die][src]``."""
    plain: list[tuple[Step, ...]] = []
    hitting: list[tuple[Step, ...]] = []
    for die in range(7):
        dst = [src - die if src - die >= 1 else 0 for src in range(26)]
        plain.append(tuple(Step(src, dst[src], die, False) for src in range(26)))
        hitting.append(tuple(Step(src, dst[src], die, True) for src in range(26)))
    return tuple(plain), tuple(hitting)


# Steps are immutable; the searches share these instead of creating one per node.
_STEP_TABLES = _step_tables()
_PLAIN: Final = _STEP_TABLES[0]
_HITTING: Final = _STEP_TABLES[1]
_NO_STEP: Final = _PLAIN[0][0]
"""A placeholder in a search's path of steps (never part of a play)."""

# The ordered search keys a state by the mover's checker counts, 4 bits per point (0 = off).
_WEIGHT: Final = tuple(1 << (4 * p) for p in range(25))


def board_of(position: Position) -> Board:
    """The generator's list form of a position (28 ints, and the pinned points' bits when a
    checker is pinned)."""
    board = [position.off[0], *position.points, position.bar[0], position.bar[1], position.off[1]]
    if position.pinned:
        board.append(_pin_mask(position.pinned))
    return board


def _pin_mask(pinned: tuple[int, ...]) -> int:
    mask = 0
    for p in pinned:
        mask |= 1 << p
    return mask


def _pinned_points(mask: int) -> tuple[int, ...]:
    return tuple([p for p in range(1, 25) if (mask >> p) & 1])


def position_of(key: Sequence[int]) -> Position:
    """The position of a board key (inverse of :func:`board_of`)."""
    pinned: tuple[int, ...] = ()
    if len(key) > PINS and key[PINS]:
        pinned = _pinned_points(key[PINS])
    return _position(tuple(key[1:25]), (key[BAR], key[OPP_BAR]), (key[0], key[OPP_OFF]), pinned)


# The positions built here skip the dataclass's __init__ (a Python frame and three
# object.__setattr__ calls, 0.4 µs: a third of reading a position's JSON) and set its slots
# directly, as that __init__ does; Position has no __post_init__ to skip.
_new_object: Final = object.__new__
_set_points: Final = Position.__dict__["points"].__set__
_set_bar: Final = Position.__dict__["bar"].__set__
_set_off: Final = Position.__dict__["off"].__set__
_set_pinned: Final = Position.__dict__["pinned"].__set__
_NO_PINS: Final[tuple[int, ...]] = ()


def _position(
    points: tuple[int, ...],
    bar: tuple[int, int],
    off: tuple[int, int],
    pinned: tuple[int, ...] = _NO_PINS,
) -> Position:
    """``Position(points, bar, off, pinned)``, built without calling ``__init__`` (trusted, as
    the plain constructor is)."""
    position: Position = _new_object(Position)
    _set_points(position, points)
    _set_bar(position, bar)
    _set_off(position, off)
    _set_pinned(position, pinned)
    return position


_COUNT_TEXT: Final = tuple(str(n) for n in range(16)) + tuple(str(n) for n in range(-15, 0))
"""``_COUNT_TEXT[n]`` is ``str(n)`` for every count -15…15 (a negative index counts from the end)."""


def result_json(key: BoardKey) -> str:
    """The compact position JSON of a board key, ``json.dumps(position_of(key).to_json(),
    separators=(",", ":"))``, joined from the text of each count (``nardy plays --jsonl`` writes it
    for every play). Compiled, this is about twice as fast as one ``%`` format of the 28 integers;
    in pure Python slower, so the pure build's writer formats instead (nardy.core.jsonl)."""
    text = _COUNT_TEXT
    parts: list[str] = []
    for i in range(1, 25):
        count = key[i]
        parts.append(text[count] if -16 < count < 16 else str(count))
    pins = ""
    if len(key) > PINS and key[PINS]:
        pins = ',"pinned":[' + ",".join([str(p) for p in _pinned_points(key[PINS])]) + "]"
    return (
        '{"points":['
        + ",".join(parts)
        + '],"bar":['
        + _count_text(key[BAR])
        + ","
        + _count_text(key[OPP_BAR])
        + '],"off":['
        + _count_text(key[0])
        + ","
        + _count_text(key[OPP_OFF])
        + "]"
        + pins
        + "}"
    )


def _count_text(count: int) -> str:
    return _COUNT_TEXT[count] if -16 < count < 16 else str(count)


_NO_CHECKERS: Final = [0, 0]
"""``bar`` and ``off`` where the position JSON leaves them out (read only)."""


def position_from_json(obj: object, checkers: int | None) -> Position | None:
    """The fast path of :meth:`Position.from_json
    <nardy.core.position.Position.from_json>`, here because this module is the compiled one: a
    ``dict`` of known fields whose ``points``, ``bar`` and ``off`` are lists of exact ``int``s
    (``bar`` and ``off`` may be left out) and whose counts balance, read in one pass.

    Returns None for anything else, valid or not: the full checks then decide, and name every
    problem (``Position.from_json``'s slow path; the two agree, tests/core/test_position.py).
    """
    if type(obj) is not dict:
        return None
    points = obj.get("points")
    if type(points) is not list or len(points) != 24:
        return None
    mover = 0  # the mover's checkers on the board
    opponent = 0
    for value in points:
        if type(value) is not int:
            return None
        count: int = value
        if count > 0:
            mover += count
        else:
            opponent -= count
    bar = obj.get("bar", _NO_CHECKERS)
    off = obj.get("off", _NO_CHECKERS)
    # No other fields but "state" (counted, not iterated: cheaper).
    if len(obj) != 1 + (bar is not _NO_CHECKERS) + (off is not _NO_CHECKERS) + ("state" in obj):
        return None
    bar0, bar1 = _json_pair(bar)
    off0, off1 = _json_pair(off)
    if bar0 < 0 or bar1 < 0 or off0 < 0 or off1 < 0:
        return None  # also a pair that is not two exact ints (-1, -1)
    mover += bar0 + off0
    if mover != opponent + bar1 + off1:
        return None
    if checkers is None:
        if not 1 <= mover <= MAX_CHECKERS:
            return None
    elif mover != checkers:
        return None
    return _position(tuple(points), (bar0, bar1), (off0, off1))


def _json_pair(value: object) -> tuple[int, int]:
    """``bar`` or ``off`` of the position JSON as two ints; (-1, -1) when not a list of two exact
    ints."""
    if type(value) is not list or len(value) != 2:
        return -1, -1
    first = value[0]
    second = value[1]
    if type(first) is not int or type(second) is not int:
        return -1, -1
    return first, second


class SegmentPlays:
    """The legal plays of one segment: every distinct result with one representative step list.

    A plain class, not a frozen dataclass: the compiled build makes it a native class whose
    constructor is a C call, where a frozen dataclass's ``__init__`` runs in Python (about
    0.4 µs of a segment that can take 1 µs). Read-only by convention.
    """

    __slots__ = ("dice", "dice_used", "head_limit", "plays")

    def __init__(
        self, dice: tuple[int, ...], dice_used: int, plays: Plays, head_limit: int | None
    ) -> None:
        self.dice = dice
        """The segment's dice (RULES.md §2.2): two different values, or 1-4 equal steps."""
        self.dice_used = dice_used
        """``N`` of §2.3: how many of the segment's dice every legal play uses."""
        self.plays = plays
        """Result board key → the steps of one play reaching it (the empty play when ``N = 0``)."""
        self.head_limit = head_limit
        """The head limit the segment was generated with (after the first-turn exception)."""

    def __repr__(self) -> str:
        return (
            f"SegmentPlays(dice={self.dice}, dice_used={self.dice_used}, "
            f"plays=<{len(self.plays)} results>, head_limit={self.head_limit})"
        )


_BAR_ONLY: Final = [BAR]
"""The only source while the mover has a checker on the bar (§2.2: enter first); never changed. A
list, not a tuple: the compiled build indexes a ``list[int]`` directly."""


def _occupied(b: Board) -> tuple[list[int], int]:
    """The mover's points, descending, and how many of his checkers lie outside his home
    (points 7…24; the bar not counted)."""
    occupied: list[int] = []
    outside = 0
    for p in range(24, 0, -1):
        c = b[p]
        if c > 0:
            occupied.append(p)
            if p > 6:
                outside += c
    return occupied, outside


def _with_point(occupied: list[int], t: int) -> list[int]:
    """``occupied`` (descending) with ``t``, which it lacks, in its place: the sources after a
    step landed on a point the mover did not hold."""
    k = 0
    n = len(occupied)
    while k < n and occupied[k] > t:
        k += 1
    found = occupied[:k]
    found.append(t)
    found.extend(occupied[k:])
    return found


class _OneDie:
    """The one-die candidates of two different dice (:meth:`MoveGenerator._fast_two`,
    :meth:`MoveGenerator._pin_two`): boards after a first step that no second step can follow.
    They are plays only when no play uses both dice (§2.3 item 4, the maximum-dice rule), so one
    is made only where a segment has such a board (most have a two-dice play)."""

    def __init__(self, larger: int) -> None:
        self.larger = larger
        self.plays: Plays = {}
        self.by_larger: set[BoardKey] = set()
        """The results the larger die reaches (§2.3 item 5)."""

    def add(self, key: BoardKey, die: int, step: Step) -> None:
        """A candidate: the board ``key`` after ``step`` of ``die``. A result both dice reach
        keeps its first place and the larger die's step."""
        if die == self.larger:
            if key not in self.by_larger:
                self.by_larger.add(key)
                self.plays[key] = (step,)
        elif key not in self.plays:
            self.plays[key] = (step,)

    def kept(self, block_points: tuple[int, ...] | None) -> tuple[int, Plays] | None:
        """The one-die plays: the candidates passing the six-block end check (§3.3.5, its points
        given where it applies), of the larger die where it has one (§2.3 item 5: "if N = 1, D
        consists of two different values and a remaining candidate uses the larger value, only
        candidates using the larger value remain"); None when every candidate fails the check."""
        plays = self.plays
        if block_points is not None:
            plays = {k: s for k, s in plays.items() if not _has_run_of_six(k, block_points)}
            if not plays:
                return None
        if self.by_larger:
            larger = {k: s for k, s in plays.items() if k in self.by_larger}
            if larger:
                return 1, larger
        return 1, plays


def _hit_step(b: Board, p: int, t: int, blot: int) -> int:
    """Moves the mover's checker from ``p`` to ``t`` (``t < 1``: off), a legal step of a rule set
    without pins: a ``blot`` there (-1 where the rule set hits, else a value no point has) goes to
    the opponent's bar. Returns ``t``'s count before the step (0 for a bear-off), for
    :func:`_hit_unstep`."""
    b[p] -= 1
    if t < 1:
        b[0] += 1
        return 0
    v = b[t]
    if v == blot:
        b[t] = 1
        b[OPP_BAR] += 1
    else:
        b[t] = v + 1
    return v


def _hit_unstep(b: Board, p: int, t: int, v: int, blot: int) -> None:
    """Takes back :func:`_hit_step` from ``p`` to ``t``, which held ``v``."""
    b[p] += 1
    if t < 1:
        b[0] -= 1
    else:
        b[t] = v
        if v == blot:
            b[OPP_BAR] -= 1


def _checker_above(b: Board, p: int) -> bool:
    """Whether the mover has a checker on a home point higher than ``p`` (standard bear-off)."""
    return any(b[q] > 0 for q in range(p + 1, 7))


def _has_run_of_six(key: Sequence[int], points: Sequence[int]) -> bool:
    """Whether six consecutive ``points`` (in this order) all hold the mover's checkers."""
    run = 0
    for p in points:
        if key[p] > 0:
            run += 1
            if run == 6:
                return True
        else:
            run = 0
    return False


def _block_through(b: Board, t: int, lowest: int) -> bool:
    """Whether my newly occupied point ``t`` is part of six consecutive points of mine on O's path
    below O's lowest checker ``lowest`` (an illegal block, §3.3.5)."""
    q = t + 12 if t <= 12 else t - 12  # t on O's path
    if q >= lowest:
        return False
    run = 1
    r = q - 1
    while r >= 1 and b[_ON_OPPONENT_PATH[r - 1]] > 0:
        run += 1
        r -= 1
    r = q + 1
    while r < lowest and b[_ON_OPPONENT_PATH[r - 1]] > 0:
        run += 1
        r += 1
    return run >= 6


def _step_blocks(
    b: Board, t: int, v: int, full: bool, points: tuple[int, ...], lowest: int
) -> bool:
    """Whether a step landing on ``t`` (which held ``v``) leaves a six-block that the per-step
    rule forbids (§3.3.5): with ``full`` (the start has a block already) any block among
    ``points``, else one through ``t`` when it was empty (a step onto a held point makes none)."""
    return _has_run_of_six(b, points) if full else v == 0 and _block_through(b, t, lowest)


def _held_after(held: int, p: int, c: int, t: int, v: int) -> int:
    """The mover's points among 19…24 (Fevga's quarter, RULES.md §3.9: closed when he holds all
    six), ``held`` before a step from ``p``, which held ``c`` of his checkers, to ``t`` (on the
    board), which held ``v``."""
    if p >= 19 and c == 1:
        held -= 1
    if t >= 19 and v == 0:
        held += 1
    return held


def _quarter_may_close(b: Board, steps: int) -> bool:
    """Whether ``steps`` steps can make the mover hold all of his points 19…24 (Fevga's quarter,
    RULES.md §3.9): each step newly holds at most one point."""
    held = (b[19] > 0) + (b[20] > 0) + (b[21] > 0) + (b[22] > 0) + (b[23] > 0) + (b[24] > 0)
    return held + steps >= 6


class _EqualDice:
    """What the three equal-dice searches share (:class:`_MultisetSearch`, :class:`_OrderedSearch`,
    :class:`_PinSearch`): the board they step on in place, the die and the
    number of steps, the points a checker can step from, the plays of the most dice so far (§2.3
    item 4, the maximum-dice rule) and the path of steps of the node being searched.

    Each search is a class rather than a closure so that the compiled build calls its ``search``
    method directly (a nested function is called through the Python calling convention, its
    arguments boxed at every node); the state every node shares lives in attributes.
    """

    def __init__(
        self,
        generator: MoveGenerator,
        b: Board,
        die: int,
        total: int,
        movable: list[int],
        board_end: int,
        mother: int = 0,
        every_order: bool = False,
    ) -> None:
        self.b = b
        self.die = die
        self.total = total
        self.last = total - 1
        self.movable = movable
        """Points a checker can step from, descending (each search says which)."""
        self.count = len(movable)
        self.board_end = board_end
        """The index in :attr:`movable` where the bear-off points begin, for the searches that
        list them last (:class:`_MultisetSearch`, :class:`_PinSearch`; the other gives
        :attr:`count`)."""
        self.all_checkers = generator.checkers  # §3.11: N, the checkers of the layout
        self.exact = generator.exact_bear_off
        self.plain = _PLAIN[die]
        self.hitting = _HITTING[die]
        self.blot = -1 if generator.hits else 99  # a landing point's value that means a hit
        self.mother = mother
        """The pinning searches: the mother rule (:attr:`MoveGenerator.mother`) where it can end
        the game in this segment, else 0 (see :meth:`MoveGenerator._mother_order`)."""
        self.o = generator.opp_head
        self.every_order = every_order
        """:class:`_PinSearch`: every order of the steps, not one per multiset of steps."""
        self.reached: set[int] = set()
        """:class:`_PinSearch` in every order: the states already reached (each a product of
        primes, never 1: the start is not reached again)."""
        self.plays: Plays = {}
        """The plays of the most dice so far (replaced when a longer play is found)."""
        self.best = -1
        """The most dice of a play so far."""
        self.path: list[Step] = [_NO_STEP] * 4
        """The steps of the node being searched, one per depth: a play's tuple is built once,
        when it is recorded (``(*path, step)`` at every node built a list and a tuple)."""

    def every_die(self) -> None:
        """A play of every die is found: the plays of fewer dice so far are dropped."""
        if self.best < self.total:
            self.best = self.total
            self.plays = {}

    def ending(self, key: BoardKey, depth: int, step: Step) -> None:
        """Keeps a play of every die: its step at ``depth`` is the last die's, or it ends the game,
        which counts as using every die (§2.3 item 2: the last checker off "counts as having used
        all dice"; §3.12.2, the mother)."""
        if self.best < self.total:
            self.every_die()
        self.plays.setdefault(key, _steps_with(self.path, depth, step))

    def short(self, key: BoardKey, depth: int) -> None:
        """Keeps a leaf of ``depth`` dice, short of the segment's (no step could follow), unless a
        play of more dice is known (only the longest leaves are plays)."""
        if depth >= self.best:
            if depth > self.best:
                self.best = depth
                self.plays = {}
            self.plays.setdefault(key, _steps_of(self.path, depth))


class _MultisetSearch(_EqualDice):
    """The fast path's search of equal dice (:meth:`MoveGenerator._fast_equal`): steps from
    non-increasing source points, one order per multiset of steps.
    """

    def search(self, start: int, depth: int, outside: int, head_left: int) -> None:
        b = self.b
        die = self.die
        movable = self.movable
        exact = self.exact
        # The die's steps, and the value of a landing point that makes a hit.
        plain, hitting, blot = self.plain, self.hitting, self.blot
        stop = 1 if b[BAR] else self.board_end if outside else self.count
        last = depth == self.last  # the last die: every legal step ends a play
        moved = False
        for j in range(start, stop):
            p = movable[j]
            if b[p] <= 0 or (p == HEAD and head_left <= 0):
                continue
            t = p - die
            if t < 0 and (exact or _checker_above(b, p)):
                continue
            moved = True
            v = _hit_step(b, p, t, blot)
            step = hitting[p] if v == blot else plain[p]
            if last or b[0] == self.all_checkers:
                # The last die, or the last checker off (which counts as using every die).
                # (Inline: a call at every leaf costs the pure build.)
                if self.best < self.total:
                    self.every_die()
                self.plays.setdefault(tuple(b), _steps_with(self.path, depth, step))
            else:
                self.path[depth] = step
                self.search(
                    j,
                    depth + 1,
                    outside - 1 if p > 6 and t <= 6 else outside,
                    head_left - 1 if p == HEAD else head_left,
                )
            _hit_unstep(b, p, t, v, blot)
        if not moved and depth >= self.best:
            self.short(tuple(b), depth)


class _OrderedSearch(_EqualDice):
    """The ordered search's equal dice (:meth:`MoveGenerator._ordered_equal`): every order of the
    steps, depth first, with the per-step rules inline; states keyed by one integer.
    """

    def __init__(
        self, generator: MoveGenerator, b: Board, die: int, total: int, movable: list[int]
    ) -> None:
        # movable: the points that can ever step by die (see MoveGenerator._ordered_equal).
        super().__init__(generator, b, die, total, movable, len(movable))
        self.home_never = generator.home_moves == "never"
        self.home_until = generator.home_moves == "until_all_home"
        block = generator._block_setup(b)
        self.lowest = block[0]
        self.block_points = block[1]
        self.block_step = block[2]
        self.block_end = block[3]
        self.block_full = block[4]
        self.quarter_step = generator.quarter_step
        self.quarter_end = generator.quarter_end
        self.seen: set[int] = set()
        """State keys already recorded (or failing an end check). A key's dice are fixed by the
        key, so one never comes back with more dice."""
        self.visited: set[int] = set()
        """State keys already expanded."""

    def end_fails(self, held: int) -> bool:
        """Whether the board fails an end-of-segment check (six-block, Fevga's quarter)."""
        return (self.block_end and _has_run_of_six(self.b, self.block_points)) or (
            self.quarter_end and held == 6
        )

    def record(self, used: int, steps: tuple[Step, ...]) -> None:
        """Keeps the board as a play of ``used`` dice, if no play so far uses more."""
        if used > self.best:
            self.best = used
            self.plays = {}
        self.plays[tuple(self.b)] = steps

    def search(
        self, depth: int, h: int, outside: int, held: int, passed: bool, head_left: int
    ) -> None:
        b = self.b
        die = self.die
        seen = self.seen
        all_checkers = self.all_checkers
        plain = self.plain
        last = self.last
        # The per-step checks (§3.3.5, §3.9).
        block_step, block_full, block_points = self.block_step, self.block_full, self.block_points
        quarter_step = self.quarter_step
        # This position is a candidate (unless it fails an end check); only the ones with the
        # most dice so far are kept.
        if depth >= self.best and h not in seen:
            seen.add(h)
            if not self.end_fails(held):
                self.record(depth, _steps_of(self.path, depth))
        # Expanded once: a second arrival at a state (the parent skips it) would change nothing,
        # as its first arrival recorded it already.
        self.visited.add(h)
        home_blocked = self.home_never or (self.home_until and not outside)
        for p in self.movable:
            c = b[p]
            if c <= 0:
                continue
            if p == HEAD and (head_left <= 0 or (not passed and c != all_checkers)):
                continue
            t = p - die
            if t >= 1:
                if p <= 6 and home_blocked:
                    continue
                v = b[t]
                b[p] = c - 1
                b[t] = v + 1
                held1 = _held_after(held, p, c, t, v)
                if not (
                    (block_step and _step_blocks(b, t, v, block_full, block_points, self.lowest))
                    or (quarter_step and held1 == 6)
                ):
                    h1 = h + _WEIGHT[t] - _WEIGHT[p]
                    if depth == last:
                        if h1 not in seen:
                            seen.add(h1)
                            if not self.end_fails(held1):
                                self.record(self.total, _steps_with(self.path, depth, plain[p]))
                    elif h1 not in self.visited:
                        self.path[depth] = plain[p]
                        self.search(
                            depth + 1,
                            h1,
                            outside - 1 if p > 6 and t <= 6 else outside,
                            held1,
                            passed or t <= 11,
                            head_left - 1 if p == HEAD else head_left,
                        )
                b[p] = c
                b[t] = v
            else:
                if outside or (t < 0 and (self.exact or _checker_above(b, p))):
                    continue
                b[p] = c - 1
                b[0] += 1
                if not (
                    (block_full and _has_run_of_six(b, block_points))
                    or (quarter_step and held == 6)
                ):
                    h1 = h + 1 - _WEIGHT[p]
                    if b[0] == all_checkers or depth == last:
                        # §2.3 item 2: bearing off the last checker "counts as having used all
                        # dice".
                        if h1 not in seen:
                            seen.add(h1)
                            if b[0] == all_checkers or not self.end_fails(held):
                                self.record(self.total, _steps_with(self.path, depth, plain[p]))
                    elif h1 not in self.visited:
                        self.path[depth] = plain[p]
                        self.search(depth + 1, h1, 0, held, True, head_left)
                b[p] = c
                b[0] -= 1


def _steps_of(path: list[Step], depth: int) -> tuple[Step, ...]:
    """The first ``depth`` steps of ``path`` as one tuple."""
    if depth == 0:
        return ()
    if depth == 1:
        return (path[0],)
    if depth == 2:
        return (path[0], path[1])
    if depth == 3:
        return (path[0], path[1], path[2])
    return (path[0], path[1], path[2], path[3])


def _steps_with(path: list[Step], depth: int, step: Step) -> tuple[Step, ...]:
    """The first ``depth`` steps of ``path`` and then ``step``, as one tuple (one allocation)."""
    if depth == 0:
        return (step,)
    if depth == 1:
        return (path[0], step)
    if depth == 2:
        return (path[0], path[1], step)
    return (path[0], path[1], path[2], step)


def _pin_key(b: Board) -> BoardKey:
    """The key of a pinning rule set's board: its 28 ints, and the pinned points' bits only when
    something is pinned (so a position without pins has the same key in every rule set)."""
    if b[PINS]:
        return tuple(b)
    return tuple(b[:PINS])


def pin_move(b: Board, p: int, t: int) -> None:
    """Moves the mover's checker from ``p`` to ``t`` (0 = off), a legal step: a lone opposing
    checker on ``t`` is pinned; the last checker leaving ``p`` frees the one pinned beneath.
    (:class:`~nardy.core.variant.Variant` applies steps with it; the searches with
    :func:`_pin_step`.)"""
    _pin_step(b, p, b[p], t, b[PINS])


def _pin_step(b: Board, p: int, c: int, t: int, mask: int) -> int:
    """:func:`pin_move` in a search: ``c`` is ``b[p]`` and ``mask`` the pinned bits ``b[PINS]``;
    returns the pinned bits after the step (written to ``b[PINS]`` only when they change, which
    few steps do). :func:`_pin_unstep` takes it back."""
    m = mask
    if c == 1 and (mask >> p) & 1 == 1:
        b[p] = -1  # the last checker of a pinning stack frees the one beneath
        m ^= 1 << p
    else:
        b[p] = c - 1
    if t >= 1:
        v = b[t]
        if v == -1:
            b[t] = 1
            m |= 1 << t
        else:
            b[t] = v + 1
    else:
        b[0] += 1
    if m != mask:
        b[PINS] = m
    return m


def _pin_unstep(b: Board, p: int, c: int, t: int, v: int, mask: int, m: int) -> None:
    """Takes back :func:`_pin_step` from ``p`` (which held ``c``) to ``t`` (which held ``v``),
    the pinned bits going from ``mask`` to ``m``."""
    if t >= 1:
        b[t] = v
    else:
        b[0] -= 1
    b[p] = c
    if m != mask:
        b[PINS] = mask


def _pin_ends_game(b: Board, m: int, checkers: int, mother: int, o: int) -> bool:
    """Whether the board after a step of the mover ends the game: his last checker is off (§2.3
    item 2), or the mother rule (§3.12.2; ``mother`` as :attr:`MoveGenerator.mother`, 0 where it
    cannot end this segment) with the opponent's mother on ``o`` pinned (``m``, the pinned bits)
    and, under the standard rule, none of the mover's checkers left on his 24."""
    return b[0] == checkers or (
        mother != 0 and b[o] > 0 and (m >> o) & 1 == 1 and (mother == 2 or b[HEAD] <= 0)
    )


def _pin_open(b: Board, t: int, mask: int, stuck: bool) -> bool:
    """Whether a step of the mover to ``t`` (``t < 1``: off the board) can be legal under pinning
    whatever his other steps: ``t`` is not closed (§3.12.2: two or more opposing checkers, or one
    pinning his), or it is a bear-off and none of his checkers is pinned."""
    if t < 1:
        return not stuck
    v = b[t]
    return v >= 0 or (v == -1 and (mask >> t) & 1 == 0)


def _pin_movable(b: Board, die: int, stuck: bool) -> tuple[list[int], int, int]:
    """The points a checker can step from by ``die`` under pinning, descending, the index where
    the bear-off points (``p <= die``) begin, and the mover's checkers outside his home.

    A point's state for landing cannot change during the mover's segment: his steps add his own
    checkers, pin a free opposing blot (the point becomes his) or free one (an open blot again);
    an opposing stack of two or more, or one pinning his checker, stays. So a point is listed when
    it holds a free checker of his now or is reached by a listed point, and its landing point is
    open; the bear-off points only when nothing of his is pinned (``stuck``)."""
    mask = b[PINS]
    movable: list[int] = []
    reached = [False] * 25
    outside = 0
    for p in range(24, die, -1):
        c = b[p]
        if c > 0 and p > 6:
            outside += c
        if c > 0 or reached[p]:
            t = p - die
            v = b[t]
            if v >= 0 or (v == -1 and (mask >> t) & 1 == 0):
                movable.append(p)
                reached[t] = True
    board_end = len(movable)
    for p in range(die, 0, -1):
        c = b[p]
        if c > 0 and p > 6:
            outside += c
        if not stuck and (c > 0 or reached[p]):
            movable.append(p)
    return movable, board_end, outside


_SOURCE_PRIME: Final = (
    1,
    2,
    3,
    5,
    7,
    11,
    13,
    17,
    19,
    23,
    29,
    31,
    37,
    41,
    43,
    47,
    53,
    59,
    61,
    67,
    71,
    73,
    79,
    83,
    89,
)
"""``_SOURCE_PRIME[p]``: a distinct prime for each point 1…24. The every-order search of equal dice
keys a state by the product over its steps of their sources' primes: the multiset of sources
(unique factorisation), which decides the board (below), in a small int (at most 89**4)."""


class _PinSearch(_EqualDice):
    """The pinning search's equal dice (:meth:`MoveGenerator._pinning`), the pinned points' bits
    kept at :data:`PINS`, in one of two ways (:attr:`every_order`):

    * steps from non-increasing source points (one order per multiset of steps, as
      :class:`_MultisetSearch`), unless the mother rule can end the game at a step this plays too
      early (:meth:`MoveGenerator._mother_order`);
    * where it can, which makes the order of the steps matter (or when asked to, for the tests
      comparing both ways), every order, each state reached once.

    Every order keys a state by the multiset of its steps' sources (:data:`_SOURCE_PRIME`): with
    one die ``d`` the board decides that multiset and the other way round (a point ``x`` gains the
    steps from ``x + d`` and loses those from ``x``, so the counts of sources follow from the
    board from 24 down), and the pinned bits follow from the counts (an opposing blot is pinned
    exactly while the mover holds its point). A step to a state already reached is not made
    again: the first arrival recorded it (as a play) or expanded it."""

    def search(self, start: int, depth: int, outside: int, h: int) -> None:
        """Expands a node: its steps from the source ``movable[start]`` on (every order: from the
        first); ``h`` its state, reached for the first time (every order only)."""
        b = self.b
        die = self.die
        movable = self.movable
        plain = self.plain
        every_order = self.every_order
        # The bear-off points (from board_end on) only when the mover is all home.
        stop = self.board_end if outside else self.count
        last = depth == self.last  # the last die: every legal step ends a play
        mask = b[PINS]
        moved = False
        for j in range(start, stop):
            p = movable[j]
            c = b[p]
            if c <= 0:
                continue
            t = p - die
            if t < 0 and (self.exact or _checker_above(b, p)):
                continue
            moved = True
            h1 = h
            if every_order:
                h1 = h * _SOURCE_PRIME[p]
                if h1 in self.reached:
                    continue
                self.reached.add(h1)
            # The step (legal: its landing point is open, see _pin_movable).
            v = b[t] if t >= 1 else 0
            m = _pin_step(b, p, c, t, mask)
            if last or _pin_ends_game(b, m, self.all_checkers, self.mother, self.o):
                self.ending(tuple(b) if m else tuple(b[:PINS]), depth, plain[p])
            else:
                self.path[depth] = plain[p]
                self.search(
                    0 if every_order else j,
                    depth + 1,
                    outside - 1 if p > 6 and t <= 6 else outside,
                    h1,
                )
            _pin_unstep(b, p, c, t, v, mask, m)
        if not moved and depth >= self.best:
            self.short(_pin_key(b), depth)


class MoveGenerator:
    """Legal-play generation for one compiled rule set.

    ``fast=False`` forces the general search for every rule set (tests compare the searches).
    """

    def __init__(self, rules: Rules, *, fast: bool = True, shortcuts: bool = True) -> None:
        self.checkers = rules.checkers
        """N of RULES.md §3.11: the checkers of each side (the layout's total)."""
        self.closed_at = -rules.blocking.closed_by  # b[t] <= closed_at: the point is closed
        self.hits = rules.hitting.hits
        self.exact_bear_off = rules.bear_off.rule == "exact"
        self.home_moves = rules.bear_off.home_moves
        self.head_limit = rules.head.limit
        self.first_turn = rules.head.first_turn
        self.runner = rules.head.runner
        self.block_step = rules.blocks.six_block == "step"
        self.block_end = rules.blocks.six_block == "end"
        self.quarter_step = rules.blocks.quarter == "step"
        self.quarter_end = rules.blocks.quarter == "end"
        self.trap = rules.blocks.trap
        self.order_free = rules.order_free
        self.pins = rules.hitting.pins
        """RULES.md §3.12.2: landing on a lone opposing checker pins it (the pinning search)."""
        mother = rules.game_end.mother
        self.mother = 0 if mother == "off" else 1 if mother == "standard" else 2
        """The mother rule (§3.12.2): 0 off, 1 standard, 2 simple."""
        self.opp_head = 1 if rules.geometry == "opposite" else 12
        self.canonical = fast
        """Whether the pinning search may play equal dice from non-increasing sources only."""
        """The opponent's own point 24 in the mover's coordinates (where his mother stands)."""
        self.fast = (
            fast
            and rules.order_free
            and rules.blocks.quarter == "none"
            and not rules.blocks.trap
            and not self.pins
        )
        """Whether the fast path answers (falling back to the general search when it must)."""
        self.ordered = fast and not self.fast and not self.hits and not self.pins
        """Whether the ordered search answers (order-dependent rules without hitting)."""
        self.shortcuts = shortcuts
        """Whether the ordered search may hand a segment in which no order-dependent rule can bind
        to the fast path's loops (off only in tests, to exercise its own loops on every segment)."""

    # -- public entry points ------------------------------------------------------------------

    def checked_segment(self, position: Position, dice: object) -> SegmentPlays | None:
        """:meth:`segment` where the arguments are not known to be good, for the common case
        only, checked in one pass: a game not over (§2.6) and dice (a tuple or list) of two
        different values or one to four equal values (§2.2), exact ``int``s 1…6.

        Returns None for anything else, for the caller to say what is wrong (or to accept, as a
        bool is an int): ``Variant.legal_plays``.
        """
        if type(dice) is tuple:
            given: tuple[object, ...] = dice
        elif type(dice) is list:
            given = tuple(dice)
        else:
            return None
        n = len(given)
        if n == 0 or n > 4:
            return None
        first = given[0]
        for value in given:
            if type(value) is not int or not 1 <= value <= 6:
                return None
            if n != 2 and value != first:
                return None  # not two different values, nor equal steps
        off = position.off
        if off[0] == self.checkers or off[1] == self.checkers:
            return None
        return self.segment(position, cast("tuple[int, ...]", given))

    def segment(self, position: Position, dice: Sequence[int]) -> SegmentPlays:
        """All legal plays of a segment with these dice (2 different values, or up to 4 equal)."""
        off = position.off
        bar = position.bar
        board = [off[0], *position.points, bar[0], bar[1], off[1]]
        dice = tuple(dice)
        limit = self.head_limit
        all_checkers = self.checkers
        if board[0] == all_checkers:
            return SegmentPlays(
                dice, len(dice), {tuple(board): ()}, limit
            )  # the game is over (§2.6)
        if limit is not None and board[HEAD] == all_checkers:
            limit = self._first_turn_limit(board, dice)
        if self.pins:
            board.append(_pin_mask(position.pinned) if position.pinned else 0)
            return self._pinning(board, dice)
        return self._generate(board, dice, limit)

    def _generate(self, board: Board, dice: tuple[int, ...], limit: int | None) -> SegmentPlays:
        if self.fast:
            found = self._fast(board, dice, limit)
            if found is not None:
                return found
        elif self.ordered:
            return self._ordered(board, dice, limit)
        return self._search(board, dice, limit)

    # -- RULES.md §3.3.4 ------------------------------------------------------------------------

    def _first_turn_limit(self, board: Board, dice: tuple[int, ...]) -> int:
        """The head limit of a segment starting with all N checkers on the head (§3.3.4)."""
        if self.first_turn == "principle":
            # "L = 2 if M2 > M1, otherwise L = 1", M the maximum number of dice of §2.3 items 1-4.
            one = self._generate(list(board), dice, 1).dice_used
            two = self._generate(list(board), dice, 2).dice_used
            return 2 if two > one else 1
        die = dice[0]
        fixed = all(d == die for d in dice) and die in (3, 4, 6)
        if self.first_turn == "fixed" or not fixed:
            return 2 if fixed else 1
        # head_only: "none of the mover's points 24 - d, 24 - 2d, …, 12 + d holds an opposing
        # checker".
        free = all(board[p] >= 0 for p in range(HEAD - die, 12 + die - 1, -die))
        return 2 if free else 1

    # -- block rules (RULES.md §3.3.5, §3.9) ----------------------------------------------------

    @staticmethod
    def _lowest_opponent_point(board: Board) -> int:
        """The opponent's lowest occupied board point in his coordinates; 0 if no block can be
        illegal."""
        if board[OPP_OFF]:
            # "If O has borne off any checker, no block is illegal."
            return 0
        for q, p in enumerate(_ON_OPPONENT_PATH, 1):
            if board[p] < 0:
                return q
        # "If O has no checker on the board … MUST treat every block as legal."
        return 0

    @staticmethod
    def _trap_point(board: Board) -> int:
        """The opponent's single occupied point in his coordinates, or 0 (RULES.md §3.9, trap)."""
        found = 0
        for q, p in enumerate(_ON_OPPONENT_PATH, 1):
            if board[p] < 0:
                if found:
                    return 0
                found = q
        return found

    @staticmethod
    def _is_trap(key: BoardKey, s: int) -> bool:
        """ "M has a block {k … e} with e = s - 1": the six points below ``s`` on O's path are
        mine."""
        if s < 7:
            return False
        return all(key[_ON_OPPONENT_PATH[q - 1]] > 0 for q in range(s - 6, s))

    # -- the fast path (order-free rule sets) ---------------------------------------------------

    def _fast(
        self, board: Board, dice: tuple[int, ...], head_limit: int | None
    ) -> SegmentPlays | None:
        """The plays of an order-free rule set, or None when the general search must answer."""
        limit = 99 if head_limit is None else head_limit
        # The six-block end check (§3.3.5). An illegal block lies wholly below O's lowest checker
        # (the point of that checker is closed to me), so it needs O's lowest point ≥ 7: six of my
        # points on O's path 1 … lowest - 1.
        block_points: tuple[int, ...] | None = None
        if self.block_end:
            lowest = self._lowest_opponent_point(board)
            if lowest >= 7:
                block_points = _ON_OPPONENT_PATH[: lowest - 1]
        if len(dice) == 2 and dice[0] != dice[1]:
            found = self._fast_two(board, dice[0], dice[1], limit, block_points)
        else:
            found = self._fast_equal(board, dice[0], len(dice), limit, block_points)
        if found is None:
            return None
        return SegmentPlays(dice, found[0], found[1], head_limit)

    def _fast_two(
        self, b: Board, d1: int, d2: int, limit: int, block_points: tuple[int, ...] | None
    ) -> tuple[int, Plays] | None:
        """Two different dice: both orders, each pair of steps played once."""
        all_checkers = self.checkers  # §3.11: N, the checkers of the layout
        closed_at = self.closed_at
        blot = -1 if self.hits else 99  # a landing point's value that means a hit
        exact = self.exact_bear_off
        larger = d1 if d1 > d2 else d2
        on_bar = b[BAR]
        occupied, outside = _occupied(b)
        outside += on_bar
        # Board sources after a first step that landed on a point the mover did not hold.
        merged: dict[int, list[int]] = {}
        plays: Plays = {}
        singles: _OneDie | None = None
        firsts = [0] * 26  # the pairs played in the first order (see _pin_two), the bar's too
        first_sources = _BAR_ONLY if on_bar else occupied
        for order in range(2):  # (not over a tuple of pairs: the compiled build boxes them)
            first_order = order == 0
            x = d2 if order else d1
            y = d1 if order else d2
            plain_x, plain_y = _PLAIN[x], _PLAIN[y]
            hitting_y = _HITTING[y]
            for p in first_sources:
                t = p - x
                if t >= 1:
                    if b[t] <= closed_at:
                        continue
                elif outside or (t < 0 and (exact or _checker_above(b, p))):
                    continue
                v = _hit_step(b, p, t, blot)
                s1 = _HITTING[x][p] if v == blot else plain_x[p]
                out1 = outside - 1 if p > 6 and t <= 6 else outside
                if b[0] == all_checkers:
                    # §2.3 item 2: bearing off the last checker "counts as having used all dice".
                    plays.setdefault(tuple(b), (s1,))
                else:
                    # The second step, sources in descending order as the general search has them.
                    if b[BAR]:
                        sources: list[int] = _BAR_ONLY
                    elif t >= 1 and v <= 0:
                        found = merged.get(t)
                        if found is None:
                            found = merged[t] = _with_point(occupied, t)
                        sources = found
                    else:
                        sources = occupied
                    head_left = limit - 1 if p == HEAD else limit
                    more = False
                    bits = 0
                    for q in sources:
                        if b[q] <= 0 or (q == HEAD and head_left <= 0):
                            continue
                        u = q - y
                        if u >= 1:
                            w = b[u]
                            if w <= closed_at:
                                continue
                        elif out1 or (u < 0 and (exact or _checker_above(b, q))):
                            continue
                        else:
                            w = 0
                        more = True
                        if first_order:
                            bits |= 1 << q
                        elif (firsts[q] >> p) & 1 == 1:
                            continue  # the same two steps in the other order: the same result
                        b[q] -= 1
                        if u < 1:
                            b[0] += 1
                            plays.setdefault(tuple(b), (s1, plain_y[q]))
                            b[0] -= 1
                        elif w == blot:
                            b[u] = 1
                            b[OPP_BAR] += 1
                            plays.setdefault(tuple(b), (s1, hitting_y[q]))
                            b[OPP_BAR] -= 1
                            b[u] = w
                        else:
                            b[u] = w + 1
                            plays.setdefault(tuple(b), (s1, plain_y[q]))
                            b[u] = w
                        b[q] += 1
                    if bits:
                        firsts[p] = bits
                    if not more and not plays:
                        if singles is None:
                            singles = _OneDie(larger)
                        singles.add(tuple(b), x, s1)
                _hit_unstep(b, p, t, v, blot)

        if plays:
            if block_points is not None:
                plays = {k: s for k, s in plays.items() if not _has_run_of_six(k, block_points)}
                if not plays:
                    return None  # every two-dice play fails the end check: candidates are shorter
            return 2, plays
        if singles is not None:
            one = singles.kept(block_points)
            if one is not None:
                return one
        return 0, {tuple(b): ()}

    def _fast_equal(
        self, b: Board, die: int, total: int, limit: int, block_points: tuple[int, ...] | None
    ) -> tuple[int, Plays] | None:
        """Equal dice: steps from non-increasing source points, one order per multiset
        (:class:`_MultisetSearch`)."""
        closed_at = self.closed_at
        # Points a checker can step from by ``die``: held now, or reachable by earlier steps, and
        # with an open landing point or a bear-off. Whether a point is closed to the mover cannot
        # change during the segment (his own steps only add his checkers; a hit blot's point
        # stays open), so this list holds for the whole search. Descending: the bar first, the
        # bear-off points (``p <= die``) last, from index ``board_end`` on.
        movable: list[int] = []
        reached = [False] * 26
        outside = b[BAR]
        if outside:
            if b[BAR - die] <= closed_at:
                return 0, {tuple(b): ()}  # closed out
            movable.append(BAR)
            reached[BAR - die] = True
        for p in range(24, die, -1):
            c = b[p]
            if c > 0 or reached[p]:
                if c > 0 and p > 6:
                    outside += c
                if b[p - die] > closed_at:
                    movable.append(p)
                    reached[p - die] = True
        board_end = len(movable)
        for p in range(die, 0, -1):
            if b[p] > 0 or reached[p]:
                movable.append(p)
        search = _MultisetSearch(self, b, die, total, movable, board_end)
        search.search(0, 0, outside, limit)
        used = search.best
        plays = search.plays
        if block_points is not None and used:
            plays = {k: s for k, s in plays.items() if not _has_run_of_six(k, block_points)}
            if not plays:
                return None
        return used, plays

    # -- the ordered search (order-dependent rules without hitting) -----------------------------

    def _ordered(self, board: Board, dice: tuple[int, ...], head_limit: int | None) -> SegmentPlays:
        """The plays of a rule set whose steps depend on their order (per-step six-block, runner
        rule, restricted home moves, per-step quarter) and that has no hitting: the general
        search's semantics, with two different dice played by two nested loops and equal dice by
        a depth-first search keyed by an incremental integer."""
        limit = 99 if head_limit is None else head_limit
        if len(dice) == 2 and dice[0] != dice[1]:
            found = (
                self._ordered_fast_two(board, dice[0], dice[1], limit) if self.shortcuts else None
            )
            if found is None:
                found = self._ordered_two(board, dice[0], dice[1], limit)
            if found is None:
                # No play uses both dice: the general search settles the one-die plays
                # (larger-die rule) or the empty play.
                return self._search(board, dice, head_limit)
            used, plays = found
        else:
            quick = (
                self._ordered_fast_equal(board, dice[0], len(dice), limit)
                if self.shortcuts
                else None
            )
            if quick is None:
                quick = self._ordered_equal(board, dice[0], len(dice), limit)
            used, plays = quick
        if self.trap:
            # §2.3 item 6: "if a remaining candidate ends in a position without a trap,
            # candidates ending in a trap are discarded".
            s = self._trap_point(board)
            if s >= 7:
                free = {k: e for k, e in plays.items() if not self._is_trap(k, s)}
                if free:
                    plays = free
        return SegmentPlays(dice, used, plays, head_limit)

    def _order_free_now(self, b: Board, total: int) -> tuple[bool, tuple[int, ...] | None]:
        """Whether no order-dependent rule can bind in a segment of ``total`` steps from ``b``,
        and the fast path's six-block end-check points.

        The rules that make the order matter are inactive when: the runner rule once a checker has
        passed (it stays passed); the per-step six-block rule while no block can be illegal (O's
        lowest point below 7, which O's checkers cannot change: they do not move); the
        restriction of home moves "until all home" while more checkers are outside home than the
        segment has steps (each step brings at most one home, so the mover is never all home
        before a step); and there is no per-step quarter check.
        """
        if self.quarter_step or self.home_moves == "never":
            return False, None
        if self.home_moves == "until_all_home" and sum(c for c in b[7:25] if c > 0) <= total:
            return False, None
        if self.runner and not b[0] and max(b[1:12]) <= 0:
            return False, None
        _, block_points, block_step, block_end, _ = self._block_setup(b)
        return not block_step, block_points if block_end else None

    def _ordered_fast_two(self, b: Board, d1: int, d2: int, limit: int) -> tuple[int, Plays] | None:
        """Two different dice by the fast path's two-dice loops when no order-dependent rule can
        bind in this segment (:meth:`_order_free_now`) and no bear-off is possible (two or more
        checkers outside home), or None. Without bear-offs the fast path lists the general
        search's results in its order with its steps. The quarter end check is applied to plays of
        both dice; when every one fails it, or at most one die can be played, the caller's
        searches answer."""
        if sum(c for c in b[7:25] if c > 0) < 2:
            return None
        free, block_points = self._order_free_now(b, 2)
        if not free:
            return None
        found = self._fast_two(b, d1, d2, limit, block_points)
        if found is not None and self.quarter_end and _quarter_may_close(b, 2):
            if found[0] < 2:
                return None
            plays = {k: s for k, s in found[1].items() if min(k[19:25]) <= 0}
            found = (2, plays) if plays else None
        return found

    def _ordered_fast_equal(
        self, b: Board, die: int, total: int, limit: int
    ) -> tuple[int, Plays] | None:
        """Equal dice by the fast path's multiset search when no order-dependent rule can bind in
        this segment (:meth:`_order_free_now`), or None. The end-of-segment quarter check is
        applied to the plays using the most dice, as the fast path applies the six-block end
        check; when every one of them fails it, the caller's search answers.
        """
        free, block_points = self._order_free_now(b, total)
        if not free:
            return None
        found = self._fast_equal(b, die, total, limit, block_points)
        if found is not None and self.quarter_end and found[0] and _quarter_may_close(b, total):
            plays = {k: s for k, s in found[1].items() if min(k[19:25]) <= 0}
            found = (found[0], plays) if plays else None
        return found

    def _block_setup(self, b: Board) -> tuple[int, tuple[int, ...], bool, bool, bool]:
        """(O's lowest point, the block points, per-step check, end check, start has a block)."""
        lowest = self._lowest_opponent_point(b) if (self.block_step or self.block_end) else 0
        if lowest < 7:
            return lowest, (), False, False, False
        points = _ON_OPPONENT_PATH[: lowest - 1]
        return lowest, points, self.block_step, self.block_end, _has_run_of_six(b, points)

    def _ordered_two(self, b: Board, d1: int, d2: int, limit: int) -> tuple[int, Plays] | None:
        """Two different dice, both orders, with the per-step rules inline; the plays using both
        dice (or bearing off the last checker), or None when there is none."""
        all_checkers = self.checkers  # §3.11: N, the checkers of the layout
        closed_at = self.closed_at
        exact = self.exact_bear_off
        home_never = self.home_moves == "never"
        home_until = self.home_moves == "until_all_home"
        lowest, block_points, block_step, block_end, block_full = self._block_setup(b)
        quarter_step = self.quarter_step
        quarter_end = self.quarter_end
        # The mover's points among 19…24 (the quarter is closed when all six are held).
        held = (b[19] > 0) + (b[20] > 0) + (b[21] > 0) + (b[22] > 0) + (b[23] > 0) + (b[24] > 0)
        occupied, outside = _occupied(b)
        # Fevga runner rule (§3.9): until a checker has passed (is on 1…11 or borne off), the
        # head moves only while it holds every checker.
        passed = not self.runner or b[0] > 0 or occupied[-1] <= 11
        home_blocked = home_never or (home_until and not outside)
        merged: dict[int, list[int]] = {}
        firsts = [0] * 25  # the legal pairs of the first order (see _pin_two)
        # Result → steps; None marks a one-die result of the first order that a two-dice play
        # may reach later (a bear-off), keeping the general search's order of results.
        plays: dict[BoardKey, tuple[Step, ...] | None] = {}
        for order in range(2):  # (not over a tuple of pairs: the compiled build boxes them)
            first = order == 0
            x = d2 if order else d1
            y = d1 if order else d2
            plain_x, plain_y = _PLAIN[x], _PLAIN[y]
            for p in occupied:
                at_head = p == HEAD
                if at_head and (limit <= 0 or (not passed and b[HEAD] != all_checkers)):
                    continue
                t = p - x
                if t >= 1:
                    v = b[t]
                    if v <= closed_at or (p <= 6 and home_blocked):
                        continue
                    held1 = _held_after(held, p, b[p], t, v)
                    b[p] -= 1
                    b[t] = v + 1
                    if (block_step and _step_blocks(b, t, v, block_full, block_points, lowest)) or (
                        quarter_step and held1 == 6
                    ):
                        b[p] += 1
                        b[t] = v
                        continue
                    out1 = outside - 1 if p > 6 and t <= 6 else outside
                else:
                    if outside or (t < 0 and (exact or _checker_above(b, p))):
                        continue
                    v = 0
                    b[p] -= 1
                    b[0] += 1
                    held1 = held
                    if (block_full and _has_run_of_six(b, block_points)) or (
                        quarter_step and held1 == 6
                    ):
                        b[p] += 1
                        b[0] -= 1
                        continue
                    out1 = 0
                s1 = plain_x[p]
                if b[0] == all_checkers:
                    # §2.3 item 2: bearing off the last checker "counts as having used all dice".
                    key = tuple(b)
                    if plays.get(key) is None:
                        plays[key] = (s1,)
                else:
                    if first and t < 1:
                        # Keep this one-die result's place (see ``plays``).
                        key = tuple(b)
                        if key not in plays and not (
                            (block_end and block_full and _has_run_of_six(b, block_points))
                            or (quarter_end and held1 == 6)
                        ):
                            plays[key] = None
                    passed1 = passed or t <= 11
                    blocked1 = home_never or (home_until and not out1)
                    head_left = limit - 1 if at_head else limit
                    if t >= 1 and not v:
                        sources = merged.get(t)
                        if sources is None:
                            sources = merged[t] = _with_point(occupied, t)
                    else:
                        sources = occupied
                    bits = 0
                    for q in sources:
                        c = b[q]
                        if c <= 0 or (not first and (firsts[q] >> p) & 1 == 1):
                            # (The same two steps were legal in the first order: the same result,
                            # as the board edits of two steps commute.)
                            continue
                        if q == HEAD and (head_left <= 0 or (not passed1 and c != all_checkers)):
                            continue
                        u = q - y
                        if u >= 1:
                            w = b[u]
                            if w <= closed_at or (q <= 6 and blocked1):
                                continue
                            b[q] = c - 1
                            b[u] = w + 1
                            held2 = _held_after(held1, q, c, u, w)
                            fails = block_step and _step_blocks(
                                b, u, w, block_full, block_points, lowest
                            )
                            new = 0 if w else u  # the point the second step newly holds
                        else:
                            if out1 or (u < 0 and (exact or _checker_above(b, q))):
                                continue
                            b[q] = c - 1
                            b[0] += 1
                            held2 = held1
                            fails = block_full and _has_run_of_six(b, block_points)
                            new = 0
                        if not (fails or (quarter_step and held2 == 6)):
                            if first:
                                bits |= 1 << q
                            key = tuple(b)
                            if key not in plays:
                                # The end-of-segment checks (§2.3 item 3). A block the start did
                                # not have runs through a newly held point.
                                if b[0] == all_checkers or not (
                                    (
                                        block_end
                                        and (
                                            _has_run_of_six(b, block_points)
                                            if block_full
                                            else (new > 0 and _block_through(b, new, lowest))
                                            or (
                                                t >= 1
                                                and not v
                                                and b[t] > 0
                                                and _block_through(b, t, lowest)
                                            )
                                        )
                                    )
                                    or (quarter_end and held2 == 6)
                                ):
                                    plays[key] = (s1, plain_y[q])
                            elif plays[key] is None:
                                plays[key] = (s1, plain_y[q])
                        b[q] = c
                        if u >= 1:
                            b[u] = w
                        else:
                            b[0] -= 1
                    if bits:
                        firsts[p] = bits
                # Undo the first step.
                b[p] += 1
                if t >= 1:
                    b[t] = v
                else:
                    b[0] -= 1
        kept = {k: s for k, s in plays.items() if s is not None}
        if not kept:
            return None
        return 2, kept

    def _ordered_equal(self, b: Board, die: int, total: int, limit: int) -> tuple[int, Plays]:
        """Equal dice: every order of the steps, depth first, with the per-step rules inline.

        A state is keyed by one integer, the mover's checker counts (4 bits per point, borne off
        at bit 0), updated per step; the opponent's checkers never move (no hitting). That key
        alone decides everything the rest of the segment depends on: the head steps used (the
        checkers gone from the head), and the dice used (each checker's number of steps is fixed
        by its start and end point: ``(p - r) / d`` to point ``r``, and off after ``ceil(p / d)``
        steps, which sums to the same total over any matching of equal start and end points).
        """
        closed_at = self.closed_at
        held = (b[19] > 0) + (b[20] > 0) + (b[21] > 0) + (b[22] > 0) + (b[23] > 0) + (b[24] > 0)
        # Points that can ever step by ``die`` (held now or reachable; an open landing point or a
        # bear-off), descending. A point's closedness cannot change (no hitting).
        movable: list[int] = []
        reached = [False] * 26
        h = b[0]
        outside = 0
        low = 25
        for p in range(24, 0, -1):
            c = b[p]
            if c > 0:
                h += c << (4 * p)
                low = p
                if p > 6:
                    outside += c
            if c > 0 or reached[p]:
                t = p - die
                if t < 1:
                    movable.append(p)
                elif b[t] > closed_at:
                    movable.append(p)
                    reached[t] = True
        passed = not self.runner or b[0] > 0 or low <= 11
        search = _OrderedSearch(self, b, die, total, movable)
        search.search(0, h, outside, held, passed, limit)
        if not search.plays:
            # Only from a start position that itself fails the end checks (§2.7 excludes it).
            return 0, {tuple(b): ()}
        return search.best, search.plays

    # -- the pinning search (RULES.md §3.12.2) ---------------------------------------------------

    def _pinning(self, b: Board, dice: tuple[int, ...]) -> SegmentPlays:
        """The plays of a pinning rule set; ``b`` has the pinned points' bits at :data:`PINS`."""
        mask = b[PINS]
        # The mover's own pinned checkers stay pinned for his whole segment (only the opponent's
        # stack above them could free them), and while one is pinned he cannot bear off.
        stuck = False
        bits = mask
        while bits:
            low = bits & -bits
            if b[low.bit_length() - 1] < 0:
                stuck = True
                break
            bits ^= low
        total = len(dice)
        two = total == 2 and dice[0] != dice[1]
        order = self._mother_order(b, dice[0], dice[1] if two else dice[0], total, stuck)
        mother = self.mother if order else 0  # the mother rule where it can end this segment
        if two:
            used, plays = self._pin_two(b, dice[0], dice[1], stuck, mother)
            return SegmentPlays(dice, used, plays, None)
        die = dice[0]
        movable, board_end, outside = _pin_movable(b, die, stuck)
        # Every order when the mother rule may end the game in the segment at a step the
        # multiset search would play earlier (or when asked to, for the tests comparing both
        # searches).
        every_order = order == 2 or not self.canonical
        search = _PinSearch(self, b, die, total, movable, board_end, mother, every_order)
        search.search(0, 0, outside, 1)
        return SegmentPlays(dice, search.best, search.plays, None)

    def _mother_order(self, b: Board, d1: int, d2: int, total: int, stuck: bool) -> int:
        """Whether the mother rule (RULES.md §3.12.2) may end the game in a segment of ``total``
        steps of ``d1`` and ``d2`` (equal for equal dice): 0 if it cannot; 1 if it can, and the
        multiset search (steps from non-increasing sources, stopping where the game ends) finds
        every play; 2 if every order must be searched.

        It can only where the opponent has a mother (one checker on his own 24, the mover's
        ``o``). Free, she ends the game when a step of the mover lands on her and, under the
        standard rule, every checker of his own 24 has left it (one step each; no step does both,
        a step from 24 lands on 18 or higher): so a checker of his must stand a few steps above
        her. Pinned beneath his stack (standard rule: he still has checkers on his 24), the game
        ends when they have all left.

        The game ends at the first step after which the board is an end (the board after some
        steps does not depend on their order), so a play that ends it has its ending step last.
        The multiset search plays a multiset of steps in one order, from the highest source down,
        and stops at the first end: it misses a play only when that order reaches an end before
        its last step while another order does not. With one die ``d`` and her on the mover's
        1-point (opposite directions), the steps landing on her come from ``1 + d``, after every
        higher source and before the bear-offs only; the steps from his 24 come first. So the
        multiset search suffices when no bear-off can come before the landing (a pinned checker
        of his, or too many checkers outside his home), and either the landing ends the game by
        itself (simple rule, or his 24 empty) or his 24's checkers take every step but one; and,
        she already pinned, when his 24's checkers take every step. The tests' general search
        (``fast=False``) asks only whether she is there, checking these shortcuts."""
        if self.mother == 0:
            return 0
        mask = b[PINS]
        o = self.opp_head
        v = b[o]
        simple = self.mother == 2
        if not self.canonical:
            free = v == -1 and not (mask >> o) & 1
            return 2 if free or (v > 0 and (mask >> o) & 1 == 1) else 0
        head = b[HEAD] if b[HEAD] > 0 else 0
        equal = d1 == d2
        if v > 0 and (mask >> o) & 1 == 1:
            if simple:
                return 2
            if head > total:
                return 0
            return 1 if equal and head == total and o == 1 else 2
        if v != -1 or (mask >> o) & 1 == 1:
            return 0
        first = 0 if simple else head  # steps from his 24 before the game can end
        left = total - first  # steps left for reaching her
        if left < 1:
            return 0
        # A checker of his that some of the steps can bring onto her.
        if equal:
            found = False
            for k in range(1, left + 1):
                p = o + k * d1
                if p > 24:
                    break
                if b[p] > 0:
                    found = True
                    break
            if not found:
                return 0
            if o != 1 or (first and first + 1 < total):
                return 2
            if stuck:
                return 1
            outside = 0
            for p in range(7, 25):
                if b[p] > 0:
                    outside += b[p]
            return 1 if outside + 2 > total else 2
        found = (
            (o + d1 <= 24 and b[o + d1] > 0)
            or (o + d2 <= 24 and b[o + d2] > 0)
            or (left >= 2 and o + d1 + d2 <= 24 and b[o + d1 + d2] > 0)
        )
        return 2 if found else 0

    def _pin_two(self, b: Board, d1: int, d2: int, stuck: bool, mother: int) -> tuple[int, Plays]:
        """Two different dice, both orders; the one-die plays only when no play uses both.

        Each step is made in place: landing on a free opposing blot pins it (its bit set), the last
        checker leaving a pinning stack frees the one beneath (an opposing blot again). Whether a
        point is closed cannot change during the segment (see :func:`_pin_movable`), so the
        sources of each die are the points whose step by it lands on an open point (or bears off,
        unless the mover has a pinned checker), chosen once. ``mother``: the mother rule where it
        can end the game in this segment, else 0."""
        all_checkers = self.checkers
        exact = self.exact_bear_off
        o = self.opp_head
        larger = d1 if d1 > d2 else d2
        mask = b[PINS]
        occupied, outside = _occupied(b)
        plays: Plays = {}
        singles: _OneDie | None = None
        # The pairs of steps played in the first order: bit q of firsts[p] for p by x, then q by y
        # (a list of ints, not a set of pairs: the compiled build makes no object per pair).
        firsts = [0] * 25
        for order in range(2):  # (not over a tuple of pairs: the compiled build boxes them)
            first_order = order == 0
            x = d2 if order else d1
            y = d1 if order else d2
            plain_x, plain_y = _PLAIN[x], _PLAIN[y]
            # Sources of the second step (the first step's landing point added where it was not
            # held before and can step on), descending.
            second = [q for q in occupied if _pin_open(b, q - y, mask, stuck)]
            merged: dict[int, list[int]] = {}
            for p in occupied:
                t = p - x
                if t < 1 and (stuck or outside or (t < 0 and (exact or _checker_above(b, p)))):
                    continue
                if not _pin_open(b, t, mask, stuck):
                    continue
                c = b[p]
                v = b[t] if t >= 1 else 0
                m1 = _pin_step(b, p, c, t, mask)
                s1 = plain_x[p]
                if _pin_ends_game(b, m1, all_checkers, mother, o):
                    # §2.3 item 2 and §3.12.2: a step that ends the game ends the segment and
                    # counts as using every die.
                    plays.setdefault(tuple(b) if m1 else tuple(b[:PINS]), (s1,))
                else:
                    out1 = outside - 1 if p > 6 and t <= 6 else outside
                    more = False
                    bits = 0
                    sources = second
                    if t >= 1 and v <= 0:
                        found = merged.get(t)
                        if found is None:
                            found = second
                            if _pin_open(b, t - y, mask, stuck):
                                found = _with_point(second, t)
                            merged[t] = found
                        sources = found
                    for q in sources:
                        cq = b[q]
                        if cq <= 0:
                            continue  # (p, emptied by the first step)
                        u = q - y
                        if u < 1 and (out1 or (u < 0 and (exact or _checker_above(b, q)))):
                            continue
                        more = True
                        if first_order:
                            bits |= 1 << q
                        elif (firsts[q] >> p) & 1 == 1:
                            # The same two steps in the other order: the same board (a point's
                            # pinned state follows from its counts), and neither ended the game.
                            continue
                        w = b[u] if u >= 1 else 0
                        if u >= 1 and w != -1 and (cq > 1 or (m1 >> q) & 1 == 0):
                            # The common step, which pins and frees nothing (inline: most leaves
                            # make it, and the compiled build's calls of _pin_step cost 4 %).
                            b[q] = cq - 1
                            b[u] = w + 1
                            plays.setdefault(tuple(b) if m1 else tuple(b[:PINS]), (s1, plain_y[q]))
                            b[u] = w
                            b[q] = cq
                            continue
                        m2 = _pin_step(b, q, cq, u, m1)
                        plays.setdefault(tuple(b) if m2 else tuple(b[:PINS]), (s1, plain_y[q]))
                        _pin_unstep(b, q, cq, u, w, m1, m2)
                    if bits:
                        firsts[p] = bits
                    if not more and not plays:
                        if singles is None:
                            singles = _OneDie(larger)
                        singles.add(tuple(b) if m1 else tuple(b[:PINS]), x, s1)
                _pin_unstep(b, p, c, t, v, mask, m1)
        if plays:
            return 2, plays
        if singles is not None:
            one = singles.kept(None)
            if one is not None:
                return one
        return 0, {_pin_key(b): ()}

    # -- the general search (RULES.md §2.3) -----------------------------------------------------

    def _search(self, board: Board, dice: tuple[int, ...], head_limit: int | None) -> SegmentPlays:
        b = board
        total = len(dice)
        nondouble = total == 2 and dice[0] != dice[1]
        larger = max(dice) if dice else 0
        all_checkers = self.checkers  # §3.11: N, the checkers of the layout
        closed_at = self.closed_at
        blot = -1 if self.hits else 99  # a landing point's value that means a hit
        exact = self.exact_bear_off
        home_never = self.home_moves == "never"
        home_until = self.home_moves == "until_all_home"
        limit = 99 if head_limit is None else head_limit
        runner = self.runner
        # Six-block checks (§3.3.5): an illegal block lies wholly below O's lowest checker, so
        # only with O's lowest point ≥ 7, and only among my points on O's path 1 … lowest - 1.
        lowest = self._lowest_opponent_point(b) if (self.block_step or self.block_end) else 0
        block_points = _ON_OPPONENT_PATH[: lowest - 1] if lowest >= 7 else ()
        block_step = self.block_step and lowest >= 7
        block_end = self.block_end and lowest >= 7
        # Fevga's quarter rule (§3.9): the mover holds all of his points 19…24, i.e.
        # min(b[19:25]) > 0.
        quarter_step = self.quarter_step
        quarter_end = self.quarter_end
        end_checks = block_end or quarter_end
        # Per-step checks: when the start position passes them (§2.7), every position of the
        # search passes them before its step, so only a step onto an empty point can make a
        # block (one through that point) or close the quarter (a point of 19…23). Otherwise
        # every step is checked in full.
        block_full = block_step and _has_run_of_six(b, block_points)
        quarter_full = quarter_step and min(b[19:25]) > 0
        canonical = self.order_free and not nondouble
        # States already expanded. Two different dice never reach one state twice (the first
        # steps of one die leave different boards), so only equal dice need the set.
        visited: set[tuple[BoardKey, tuple[int, ...], int]] | None = (
            None if self.order_free or nondouble else set()
        )

        # best[key] = [dice used, representative steps, reachable by the larger die alone]
        best: dict[BoardKey, list[object]] = {}
        failed: set[BoardKey] = set()  # final positions that fail an end check
        steps: list[Step] = []

        def record(key: BoardKey, used: int) -> None:
            by_larger = used == 1 and nondouble and steps[0].die == larger
            entry = best.get(key)
            if entry is None:
                best[key] = [used, tuple(steps), by_larger]
                return
            # A play's dice are the most it can be reached with (a bear-off from a lower point
            # can reach one result with one die or with two); among one-die plays, by the larger
            # die.
            if used > entry[0] or (  # type: ignore[operator]
                by_larger and used == entry[0] and not entry[2]
            ):
                entry[0] = used
                entry[1] = tuple(steps)
            if by_larger:
                entry[2] = True

        def node(
            remaining: tuple[int, ...],
            head_used: int,
            outside: int,
            last_src: int,
            occupied: list[int],
        ) -> None:
            # Record this position (a candidate unless it fails an end check), then step on.
            # Positions after the last die are recorded by their parent without a call.
            key = tuple(b)
            if not end_checks or not (
                (block_end and _has_run_of_six(b, block_points))
                or (quarter_end and min(b[19:25]) > 0)
            ):
                record(key, total - len(remaining))
            if visited is not None:
                state = (key, remaining, head_used)
                if state in visited:
                    return
                visited.add(state)

            # Which points may move at all (descending).
            if b[BAR]:
                sources: Sequence[int] = (BAR,)  # §2.2 item 1: "p MUST be 25"
            else:
                sources = [p for p in occupied if p <= last_src] if canonical else occupied
                if runner and not b[0] and max(b[1:12]) <= 0:
                    # Fevga runner rule: before passing, only the head checker (all on the head) or
                    # the one runner may move.
                    on_head = b[HEAD] == all_checkers
                    sources = [p for p in sources if (p == HEAD) == on_head]
            home_blocked = home_never or (home_until and not outside)

            tried: list[int] = []
            for i, die in enumerate(remaining):
                if die in tried:
                    continue
                tried.append(die)
                rest = remaining[:i] + remaining[i + 1 :]
                plain = _PLAIN[die]
                hitting = _HITTING[die]
                for p in sources:
                    at_head = p == HEAD
                    if at_head and head_used >= limit:
                        continue
                    t = p - die
                    if t >= 1:
                        if b[t] <= closed_at or (p <= 6 and home_blocked):
                            continue
                    elif outside or (t < 0 and (exact or _checker_above(b, p))):
                        continue  # bear-off only while all home (§2.5)
                    v = _hit_step(b, p, t, blot)
                    step = hitting[p] if v == blot else plain[p]
                    if t >= 1:
                        # Per-step checks (§2.2 item 3).
                        ok = not (
                            block_step and _step_blocks(b, t, v, block_full, block_points, lowest)
                        ) and not (
                            quarter_step
                            and (quarter_full or (v == 0 and t >= 19))
                            and min(b[19:25]) > 0
                        )
                        entered = 1 if p > 6 and t <= 6 else 0
                    else:
                        # A bear-off adds no point to the mover's: it makes no block and closes
                        # no quarter that the position before it did not have.
                        ok = not (
                            (block_full and _has_run_of_six(b, block_points))
                            or (quarter_full and min(b[19:25]) > 0)
                        )
                        entered = 0
                    if ok:
                        steps.append(step)
                        if b[0] == all_checkers:
                            # §2.3 item 2: bearing off the last checker "counts as having used
                            # all dice".
                            record(tuple(b), total)
                        elif rest:
                            # The mover's occupied points after the step, still descending.
                            child = occupied
                            if b[p] == 0 and p != BAR:
                                child = [q for q in child if q != p]
                            if t >= 1 and v <= 0:
                                child = [*child, t]
                                child.sort(reverse=True)
                            node(rest, head_used + at_head, outside - entered, p, child)
                        else:
                            # After the last die: a candidate unless it fails an end check.
                            # Different orders of a double reach one result many times; a
                            # result seen before needs no second check.
                            key = tuple(b)
                            entry = best.get(key)
                            if entry is None:
                                if key not in failed:
                                    if end_checks and (
                                        (block_end and _has_run_of_six(b, block_points))
                                        or (quarter_end and min(b[19:25]) > 0)
                                    ):
                                        failed.add(key)
                                    else:
                                        best[key] = [total, tuple(steps), False]
                            elif entry[0] < total:  # type: ignore[operator]
                                entry[0] = total
                                entry[1] = tuple(steps)
                        steps.pop()
                    _hit_unstep(b, p, t, v, blot)

        outside = b[BAR] + sum(c for c in b[7:25] if c > 0)
        node(dice, 0, outside, BAR, [p for p in range(24, 0, -1) if b[p] > 0])

        if not best:
            # Only reachable from a start position that itself fails the end-of-segment checks,
            # which §2.7 excludes; nothing moves.
            return SegmentPlays(dice, 0, {tuple(board): ()}, head_limit)
        used = max(e[0] for e in best.values())  # type: ignore[type-var]
        # §2.3 item 4, the maximum-dice rule.
        kept = {k: e for k, e in best.items() if e[0] == used}
        # §2.3 item 5: "if N = 1, D consists of two different values and a remaining candidate
        # uses the larger value, only candidates using the larger value remain".
        if used == 1 and nondouble and any(e[2] for e in kept.values()):
            kept = {k: e for k, e in kept.items() if e[2]}
        if self.trap:
            # §2.3 item 6: "if a remaining candidate ends in a position without a trap,
            # candidates ending in a trap are discarded".
            s = self._trap_point(board)
            if s:
                free = {k: e for k, e in kept.items() if not self._is_trap(k, s)}
                if free:
                    kept = free
        return SegmentPlays(
            dice,
            used,  # type: ignore[arg-type]
            {k: e[1] for k, e in kept.items()},  # type: ignore[misc]
            head_limit,
        )
