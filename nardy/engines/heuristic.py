"""The ``heuristic`` evaluation: a hand-written value of a position for the player who has just
played, in pip-equivalents, with feature weights chosen per geometry and variant.

The ``heuristic`` bot (:class:`~nardy.bots.heuristic.HeuristicBot`) plays the legal result it values
most; the value nets take it as their prior unit (:mod:`nardy.engines.net`), and
:mod:`nardy.engines.heuristic_batch` computes the same values for many positions at once.

Features, both geometries: pip counts (mine vs the opponent's), borne-off checkers (weighted
heavily, the first one extra), stacking (checkers beyond three on a point), blocking — the
points I hold among the six in front of each opposing checker (convex, so primes count most).
Opposite direction (backgammon, trictrac): made points (home-board and bar points most,
anchors), hits (opposing checkers on the bar, more against a strong home board), blots exposed
to shots (the number of the 36 rolls that hit, times the pips and tempo lost), my own checkers
on the bar. Pinning variants (plakoto, :func:`evaluate_pin`): pinned checkers kept in their
owner's pips, points closed by a pin, pins valued (his: a gain, mine: a loss, more the further
the pinned checker has to run), blots costing the rolls that pin them, and the mother rule's
stake (a pinned mother, or mine left alone in reach). Same direction (long-nardy family): checkers
left on the head, spreading (distinct points held), my own checkers blocked by the opponent, home
spreading (most for exact bear-off), checkers stuck outside home or in the start quarter late
(mars/koks). In a pure race (opposite direction, no contact) only pips and borne-off checkers
count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from nardy.core.position import Position
from nardy.core.variant import Variant

__all__ = [
    "AHEAD_MINE",
    "BLOCK_VALUE",
    "SAME_AHEAD_OPP",
    "HeuristicEvaluation",
    "Weights",
    "evaluate_opposite",
    "evaluate_pin",
    "evaluate_same",
    "evaluation_for",
    "opp_same",
    "pips",
    "weights_for",
]


# -- tables ---------------------------------------------------------------------------------------

# The 21 distinct rolls with their weights out of 36, and for each the distances (as a bit mask) at
# which it can hit a blot, ignoring blocked intermediate points (a double d hits at d, 2d, 3d, 4d).
_ROLLS: tuple[tuple[int, int], ...] = tuple(
    (
        (1 << a) | (1 << b) | (1 << (a + b)) if a != b else sum(1 << (a * k) for k in range(1, 5)),
        1 if a == b else 2,
    )
    for a in range(1, 7)
    for b in range(a, 7)
)
_SHOTS_CACHE: dict[int, int] = {}


def _shots(mask: int) -> int:
    """How many of the 36 rolls hit at one of the distances in ``mask`` (bit d = distance d)."""
    shots = _SHOTS_CACHE.get(mask)
    if shots is None:
        shots = sum(weight for hits, weight in _ROLLS if hits & mask)
        _SHOTS_CACHE[mask] = shots
    return shots


def opp_same(point: int) -> int:
    """RULES.md §1.2, same direction: my point in the opponent's coordinates (an involution)."""
    return point + 12 if point <= 12 else point - 12


# Same direction: for the opponent's checker on my point index i (0-based), my point indexes of the
# next six points of his path (his r-1 … r-6 while ≥ 1), nearest first.
SAME_AHEAD_OPP: tuple[tuple[int, ...], ...] = tuple(
    tuple(opp_same(r - k) - 1 for k in range(1, 7) if r - k >= 1)
    for r in (opp_same(i + 1) for i in range(24))
)
# Same direction, for my checker on index i: my next six points (i-1 … i-6 while ≥ 0).
AHEAD_MINE: tuple[tuple[int, ...], ...] = tuple(
    tuple(i - k for k in range(1, 7) if i - k >= 0) for i in range(24)
)
# Opposite direction, for the opponent's checker on my index i: his next six points, my i+1 … i+6,
# as a bit mask of my point indexes (bit j = index j).
_OPPOSITE_AHEAD_OPP: tuple[int, ...] = tuple(
    sum(1 << (i + k) for k in range(1, 7) if i + k <= 23) for i in range(24)
)

# Value of blocking k of the six points in front of an opposing checker (convex: primes count most).
BLOCK_VALUE = (0.0, 0.4, 1.2, 2.6, 4.6, 7.5, 11.0)


@dataclass(frozen=True, slots=True)
class Weights:
    """Per-variant weights of the evaluation, in pip-equivalents (one pip of race = 1.0)."""

    opposite: bool
    off: float
    """Per checker borne off (on top of the pips it saves)."""
    first_off: float
    """Extra for the first checker borne off (it saves a gammon/mars)."""
    stack: float
    """Per checker beyond ``stack_free`` on one point."""
    stack_free: int
    block: float
    """Scale of :data:`BLOCK_VALUE` for my points in front of opposing checkers."""
    blocked: float
    """Scale of the same table for opposing points in front of my checkers (a penalty)."""
    # opposite direction
    point_value: tuple[float, ...]
    """Value of a made point (≥ 2 checkers) on my point index 0…23."""
    blot_base: float
    """Cost of being hit beyond the pips lost."""
    bar_value: float
    """Per opposing checker on the bar (beyond the pips it lost)."""
    # same direction
    head: float
    """Per checker on my head beyond the first (same direction)."""
    spread: float
    """Per distinct point I occupy (same direction)."""
    home_spread: float
    """Per distinct home point occupied (same direction; most with the exact bear-off of ``mad``)."""
    back: float
    """Per checker still in my start quarter 19…24 while the opponent is bearing in (koks risk)."""
    # pinning (plakoto, RULES.md §3.12.2); read once from the rules, zero/off elsewhere
    pins: bool = False
    """The variant pins instead of hitting: :func:`evaluate_pin` evaluates."""
    mother: str = "off"
    """The variant's mother rule (``standard``, ``simple``, ``off``)."""
    pin_base: float = 0.0
    """Value of one pinned checker (his: a gain, mine: a loss), beyond the pips it stays back."""
    pin_depth: float = 0.0
    """Extra for a pin the further the pinned checker is from its home (his path still to run)."""
    mother_value: float = 0.0
    """A mother end (the game won or lost at once, 2 points), in pip-equivalents."""


def weights_for(variant: Variant) -> Weights:
    """The evaluation weights for a variant, from its compiled rules (geometry, head limit,
    bear-off rule)."""
    rules = variant.rules
    if rules.geometry == "opposite":
        home = (1.0, 2.0, 3.0, 4.0, 5.0, 4.5)
        outer = (4.0, 2.5, 1.5, 1.0, 0.8, 0.8)
        mid = (0.5, 0.5, 0.5, 0.5, 0.5, 1.5)
        anchors = (2.5, 2.0, 1.5, 1.0, 1.0, 1.0)
        weights = Weights(
            opposite=True,
            off=6.0,
            first_off=6.0,
            stack=1.0,
            stack_free=3,
            block=1.0,
            blocked=0.0,
            point_value=home + outer + mid + anchors,
            blot_base=6.0,
            bar_value=6.0,
            head=0.0,
            spread=0.0,
            home_spread=0.0,
            back=0.0,
        )
        if rules.hitting.pins:
            weights = replace(
                weights,
                pins=True,
                mother=rules.game_end.mother,
                pin_base=14.0,
                pin_depth=12.0,
                mother_value=120.0,
            )
        return weights
    exact = rules.bear_off.rule == "exact"
    head_limited = rules.head.limit is not None
    return Weights(
        opposite=False,
        off=6.0,
        first_off=8.0,
        stack=1.5,
        stack_free=3,
        block=1.0,
        blocked=0.6,
        point_value=(0.0,) * 24,
        blot_base=0.0,
        bar_value=0.0,
        head=3.0 if head_limited else 1.5,
        spread=1.5,
        home_spread=3.0 if exact else 0.5,
        back=4.0,
    )


# -- evaluation -----------------------------------------------------------------------------------


def _scan(
    points: tuple[int, ...],
    stack_free: int,
    my_pips: int,
    opp_pips: int,
    my_back: int,
    opp_back: int,
) -> tuple[int, int, int, int, int]:
    """One pass over the points of an opposite-direction board (the mover's coordinates), from
    the given starting counts (the bar's): both pip counts, my rearmost and his rearmost checker
    (in my numbering), and my checkers above ``stack_free`` on a point."""
    stack = 0
    for index, count in enumerate(points):
        if count > 0:
            my_pips += (index + 1) * count
            my_back = index + 1
            if count > stack_free:
                stack += count - stack_free
        elif count < 0:
            opp_pips -= (24 - index) * count
            if opp_back > index + 1:
                opp_back = index + 1
    return my_pips, opp_pips, my_back, opp_back, stack


def _blocking(points: tuple[int, ...], closed: int) -> float:
    """The opposite-direction blocking score: :data:`BLOCK_VALUE` of each opposing checker (on
    the board) by how many of the six points in front of it are closed to it (``closed``: bit i
    = my point index i closed; made points, and in a pinning variant a point where I pin)."""
    block = 0.0
    for index, count in enumerate(points):
        if count < 0:
            block -= count * BLOCK_VALUE[(closed & _OPPOSITE_AHEAD_OPP[index]).bit_count()]
    return block


def _hit_mask(blot: int, shooters: list[int]) -> int:
    """The distances (bit d = distance d) from which opposing checkers on ``shooters`` (my point
    numbers, 0 for the bar; opposite direction, so a shooter hits upwards) reach my ``blot``."""
    mask = 0
    for shooter in shooters:
        if shooter < blot:
            mask |= 1 << (blot - shooter)
    return mask


def pips(position: Position, opposite: bool) -> tuple[int, int]:
    """(mover's, opponent's) pip counts; the bar counts 25 (opposite direction)."""
    mine = 25 * position.bar[0]
    theirs = 25 * position.bar[1]
    for index, count in enumerate(position.points):
        if count > 0:
            mine += (index + 1) * count
        elif count < 0:
            theirs -= (24 - index if opposite else opp_same(index + 1)) * count
    return mine, theirs


def evaluate_opposite(position: Position, w: Weights) -> float:
    points = position.points
    my_bar, opp_bar = position.bar
    my_off, opp_off = position.off
    my_pips, opp_pips, my_back, opp_back, stack = _scan(
        points,
        w.stack_free,
        25 * my_bar,
        25 * opp_bar,
        25 if my_bar else 0,  # my rearmost checker (highest point)
        0 if opp_bar else 25,  # the opponent's rearmost checker, in my coordinates
    )
    value = float(opp_pips - my_pips) + w.off * (my_off - opp_off) - w.stack * stack
    if my_off:
        value += w.first_off
    if my_back <= opp_back:
        return value  # pure race: no contact left
    # Contact: made points, blocking, hits and blots.
    home_points = 0
    opp_home_points = 0
    made = 0.0
    closed = 0  # my made points (bit i = index i)
    blots: list[int] = []
    shooters: list[int] = [0] if opp_bar else []
    for index, count in enumerate(points):
        if count >= 2:
            made += w.point_value[index]
            closed |= 1 << index
            if index < 6:
                home_points += 1
        elif count == 1:
            blots.append(index + 1)
        elif count < 0:
            shooters.append(index + 1)
            if count <= -2 and index >= 18:
                opp_home_points += 1
    value += made
    block = _blocking(points, closed)
    if opp_bar:
        held = sum(1 for index in range(6) if points[index] >= 2)
        block += opp_bar * BLOCK_VALUE[held]
        value += opp_bar * (w.bar_value + 1.5 * home_points)
    value += w.block * block
    if my_bar:
        value -= my_bar * (2.0 + 1.5 * opp_home_points)
    if blots and shooters:
        hit_cost = w.blot_base + 1.5 * opp_home_points
        risk = 0.0
        for blot in blots:
            mask = _hit_mask(blot, shooters)
            if mask:
                risk += _shots(mask) * (hit_cost + 25 - blot)
        value -= risk / 36.0
    return value


def _mother_stake(w: Weights, pinner_home_free: bool) -> float:
    """What a pinned mother is worth to the pinner (RULES.md §3.12.2): a whole mother end when
    it ends the game (``simple``; ``standard`` once the pinner has no free checker left on his
    own 24), part of one while it waits for that; nothing with ``mother: off``."""
    if w.mother == "off":
        return 0.0
    if w.mother == "simple" or not pinner_home_free:
        return w.mother_value
    return 0.4 * w.mother_value


def evaluate_pin(position: Position, w: Weights) -> float:
    """The opposite-direction evaluation for a pinning variant (plakoto, RULES.md §3.12.2).

    Differences from :func:`evaluate_opposite`: pinned checkers count in their owner's pips;
    a point is closed to a side when the other side stacks two there or pins one of his
    checkers there; pins are valued (his checker pinned: a gain, mine: a loss, more the further
    the pinned checker has still to run, most for a mother); a blot costs the number of the 36
    rolls that pin it times what that pin would cost (no bar: nothing is hit, so no pips are
    lost); the mother (my last checker on my 24) left in reach costs the mother end.
    """
    points = position.points
    my_off, opp_off = position.off
    # closed[i]: point index i is closed to the opponent (my stack ≥ 2, or mine pinning his).
    closed = [count >= 2 for count in points]
    my_pips, opp_pips, my_back, opp_back, stack = _scan(points, w.stack_free, 0, 0, 0, 25)
    value = 0.0
    mine_pinned_at: set[int] = set()
    for point in position.pinned:
        if points[point - 1] > 0:  # his checker beneath my stack
            closed[point - 1] = True
            opp_pips += 25 - point
            opp_back = min(opp_back, point)
            value += w.pin_base + w.pin_depth * (25 - point) / 24
            if point == 1:  # his mother (his only checker on his own 24)
                value += _mother_stake(w, points[23] > 0)
        else:  # my checker beneath his stack
            mine_pinned_at.add(point)
            my_pips += point
            my_back = max(my_back, point)
            value -= w.pin_base + w.pin_depth * point / 24
            if point == 24:  # my mother
                value -= _mother_stake(w, points[0] < 0)
    if w.mother == "standard" and 1 in position.pinned and 24 in mine_pinned_at:
        return 0.0  # both mothers pinned: the game is a draw
    value += float(opp_pips - my_pips) + w.off * (my_off - opp_off) - w.stack * stack
    if my_off:
        value += w.first_off
    if my_back <= opp_back:
        return value  # pure race: no contact left
    blots: list[int] = []
    shooters: list[int] = []
    made = 0.0
    closed_bits = 0  # ``closed`` as bits (bit i = index i): a closed point holds my checker
    for index, count in enumerate(points):
        if closed[index] and count > 0:
            made += w.point_value[index]
            closed_bits |= 1 << index
        elif count == 1:
            blots.append(index + 1)
        elif count < 0:
            shooters.append(index + 1)
    value += made
    value += w.block * _blocking(points, closed_bits)
    if blots and shooters:
        risk = 0.0
        for blot in blots:
            mask = _hit_mask(blot, shooters)
            if mask:
                cost = w.pin_base + w.pin_depth * blot / 24
                if blot == 24:  # my mother, alone on my 24
                    cost += _mother_stake(w, points[0] < 0)
                risk += _shots(mask) * cost
        value -= risk / 36.0
    return value


def evaluate_same(position: Position, w: Weights) -> float:
    points = position.points
    my_off, opp_off = position.off
    my_pips = 0
    opp_pips = 0
    stack = 0
    occupied = 0
    outside = 0
    back = 0
    for index, count in enumerate(points):
        if count > 0:
            my_pips += (index + 1) * count
            occupied += 1
            if index >= 6:
                outside += count
                if index >= 18:
                    back += count
            if count > w.stack_free and index != 23:
                stack += count - w.stack_free
        elif count < 0:
            opp_pips -= opp_same(index + 1) * count
    value = float(opp_pips - my_pips) + w.off * (my_off - opp_off) - w.stack * stack
    if my_off:
        value += w.first_off
    head = points[23]
    if head > 1:
        value -= w.head * (head - 1)
    # Spread: distinct points held (blocking, flexibility); distinct home points for the bear-off.
    home_held = sum(1 for count in points[:6] if count > 0)
    value += w.home_spread * home_held
    if outside:
        value += w.spread * occupied
    if opp_pips < 90 and my_off == 0:
        # The opponent is bearing in or off: a mars (koks) looms; hurry the stragglers.
        value -= w.back * back + 0.5 * w.back * outside * (90 - opp_pips) / 90
    block = 0.0
    blocked = 0.0
    for index, count in enumerate(points):
        if count < 0:
            held = 0
            for ahead in SAME_AHEAD_OPP[index]:
                if points[ahead] > 0:
                    held += 1
            block -= count * BLOCK_VALUE[held]
        elif count > 0 and index >= 6:
            held = 0
            for ahead in AHEAD_MINE[index]:
                if points[ahead] < 0:
                    held += 1
            blocked += count * BLOCK_VALUE[held]
    return value + w.block * block - w.blocked * blocked


Evaluation = Callable[[Position, Weights], float]
"""An evaluation function: a position (its mover has just played) and the weights → the value."""


def evaluation_for(weights: Weights) -> Evaluation:
    """The evaluation for the variant's geometry and hitting mode (chosen once per decision,
    not per play)."""
    if weights.pins:
        return evaluate_pin
    return evaluate_opposite if weights.opposite else evaluate_same


class HeuristicEvaluation:
    """The evaluation compiled for one variant: its :class:`Weights` and the function for its
    geometry."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.function = evaluation_for(weights)

    @classmethod
    def of(cls, variant: Variant) -> HeuristicEvaluation:
        """The evaluation for ``variant`` (cheap: a few table look-ups)."""
        return cls(weights_for(variant))

    def evaluate(self, position: Position) -> float:
        """The value of ``position`` for its mover, in pip-equivalents (the mover has just played:
        it is the opponent's turn to roll)."""
        return self.function(position, self.weights)
