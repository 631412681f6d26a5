"""The ``heuristic`` bot: one-ply search with a hand-written evaluation of every legal play's
resulting position, with feature weights chosen per geometry and variant; a pip-count cube policy.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from nardy.bots.base import Bot
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.position import Geometry, Position
from nardy.core.variant import Variant

__all__ = ["HeuristicBot"]


# ------------------------------------------------------------------------------------------------
# HeuristicBot: evaluation tables
# ------------------------------------------------------------------------------------------------

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


def _opp_same(point: int) -> int:
    """RULES.md §1.2, same direction: my point in the opponent's coordinates (an involution)."""
    return point + 12 if point <= 12 else point - 12


# Same direction: for the opponent's checker on my point index i (0-based), my point indexes of the
# next six points of his path (his r-1 … r-6 while ≥ 1), nearest first.
_SAME_AHEAD_OPP: tuple[tuple[int, ...], ...] = tuple(
    tuple(_opp_same(r - k) - 1 for k in range(1, 7) if r - k >= 1)
    for r in (_opp_same(i + 1) for i in range(24))
)
# Same direction, for my checker on index i: my next six points (i-1 … i-6 while ≥ 0).
_AHEAD_MINE: tuple[tuple[int, ...], ...] = tuple(
    tuple(i - k for k in range(1, 7) if i - k >= 0) for i in range(24)
)
# Opposite direction, for the opponent's checker on my index i: his next six points, my i+1 … i+6.
_OPPOSITE_AHEAD_OPP: tuple[tuple[int, ...], ...] = tuple(
    tuple(i + k for k in range(1, 7) if i + k <= 23) for i in range(24)
)

# Value of blocking k of the six points in front of an opposing checker (convex: primes count most).
_BLOCK_VALUE = (0.0, 0.4, 1.2, 2.6, 4.6, 7.5, 11.0)


@dataclass(frozen=True, slots=True)
class _Weights:
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
    """Scale of :data:`_BLOCK_VALUE` for my points in front of opposing checkers."""
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
    """The variant pins instead of hitting: :meth:`HeuristicBot._evaluate_pin` evaluates."""
    mother: str = "off"
    """The variant's mother rule (``standard``, ``simple``, ``off``)."""
    pin_base: float = 0.0
    """Value of one pinned checker (his: a gain, mine: a loss), beyond the pips it stays back."""
    pin_depth: float = 0.0
    """Extra for a pin the further the pinned checker is from its home (his path still to run)."""
    mother_value: float = 0.0
    """A mother end (the game won or lost at once, 2 points), in pip-equivalents."""


def _weights_for(variant: Variant) -> _Weights:
    """The evaluation weights for a variant, from its compiled rules (geometry, head limit,
    bear-off rule)."""
    rules = variant.rules
    if rules.geometry == "opposite":
        home = (1.0, 2.0, 3.0, 4.0, 5.0, 4.5)
        outer = (4.0, 2.5, 1.5, 1.0, 0.8, 0.8)
        mid = (0.5, 0.5, 0.5, 0.5, 0.5, 1.5)
        anchors = (2.5, 2.0, 1.5, 1.0, 1.0, 1.0)
        weights = _Weights(
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
    return _Weights(
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


# ------------------------------------------------------------------------------------------------
# HeuristicBot
# ------------------------------------------------------------------------------------------------


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


def _pips(position: Position, opposite: bool) -> tuple[int, int]:
    """(mover's, opponent's) pip counts; the bar counts 25 (opposite direction)."""
    mine = 25 * position.bar[0]
    theirs = 25 * position.bar[1]
    for index, count in enumerate(position.points):
        if count > 0:
            mine += (index + 1) * count
        elif count < 0:
            theirs -= (24 - index if opposite else _opp_same(index + 1)) * count
    return mine, theirs


class HeuristicBot(Bot):
    """One-ply search with a hand-written evaluation, for every variant.

    For each legal play it evaluates the resulting position from the mover's view
    (pip-equivalents, larger is better) and picks the best (ties broken by its
    ``random.Random(seed)``). The evaluation needs the variant: :meth:`start_game` (called by
    :func:`play_game`) or :meth:`bind` compiles its weights; a variant may also be given at
    construction.

    Features, both geometries: pip counts (mine vs the opponent's), borne-off checkers (weighted
    heavily, the first one extra), stacking (checkers beyond three on a point), blocking — the
    points I hold among the six in front of each opposing checker (convex, so primes count most).
    Opposite direction (backgammon, trictrac): made points (home-board and bar points most,
    anchors), hits (opposing checkers on the bar, more against a strong home board), blots exposed
    to shots (the number of the 36 rolls that hit, times the pips and tempo lost), my own checkers
    on the bar. Pinning variants (plakoto, :meth:`_evaluate_pin`): pinned checkers kept in their
    owner's pips, points closed by a pin, pins valued (his: a gain, mine: a loss, more the further
    the pinned checker has to run), blots costing the rolls that pin them, and the mother rule's
    stake (a pinned mother, or mine left alone in reach). Same direction (long-nardy family): checkers left on the head, spreading (distinct
    points held), my own checkers blocked by the opponent, home spreading (most for exact
    bear-off), checkers stuck outside home or in the start quarter late (mars/koks). In a pure
    race (opposite direction, no contact) only pips and borne-off checkers count.

    Cube policy (a pip-count rule after the 8-9-12 rule of thumb for races, see :meth:`advantage`):
    the advantage is the pip lead of the player on roll relative to his own count, plus 0.04 per
    opposing checker on the bar, minus the same for his own. In a race (and always in the
    same-direction family) double at an advantage of at least 0.08 and take up to 0.12; with
    contact (backgammon family) double at 0.15 and take up to 0.25; a redouble needs 0.01 more.
    Beaver (if allowed) when the doubler is behind by at least 0.05.
    """

    name = "heuristic"

    DOUBLE_AT = 0.08
    TAKE_UP_TO = 0.12
    CONTACT_DOUBLE_AT = 0.15
    CONTACT_TAKE_UP_TO = 0.25
    REDOUBLE_EXTRA = 0.01
    BEAVER_BELOW = -0.05

    def __init__(self, seed: int | None = None, *, variant: Variant | None = None) -> None:
        self.seed = seed
        self._random = random.Random(seed)
        self._weights: _Weights | None = None
        if variant is not None:
            self.bind(variant)

    def bind(self, variant: Variant) -> None:
        """Compile the evaluation weights for ``variant`` (cheap: a few table look-ups)."""
        self._weights = _weights_for(variant)

    def start_game(self, variant: Variant, colour: int) -> None:
        self.bind(variant)

    def _w(self) -> _Weights:
        if self._weights is None:
            raise RuntimeError(
                "HeuristicBot needs the variant: call bind(variant) or start_game(variant, colour) "
                "first (play_game does), or pass variant= to the constructor"
            )
        return self._weights

    # -- plays ------------------------------------------------------------------------------------

    def choose_play(self, decision: PlayDecision) -> int:
        plays = decision.plays
        if len(plays) == 1:
            return 0
        weights = self._w()
        evaluate = self._evaluator(weights)
        best: list[int] = []
        best_value = float("-inf")
        for index, play in enumerate(plays):
            value = evaluate(play.result, weights)
            if value > best_value + 1e-9:
                best_value = value
                best = [index]
            elif value > best_value - 1e-9:
                best.append(index)
        return best[0] if len(best) == 1 else self._random.choice(best)

    def evaluate(self, position: Position) -> float:
        """The evaluation of ``position`` for its mover, in pip-equivalents (the mover has just
        played: it is the opponent's turn to roll)."""
        weights = self._w()
        return self._evaluator(weights)(position, weights)

    @classmethod
    def _evaluator(cls, weights: _Weights) -> Callable[[Position, _Weights], float]:
        """The evaluation for the variant's geometry and hitting mode (chosen once per decision,
        not per play)."""
        if weights.pins:
            return cls._evaluate_pin
        return cls._evaluate_opposite if weights.opposite else cls._evaluate_same

    @staticmethod
    def _evaluate_opposite(position: Position, w: _Weights) -> float:
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
        blots: list[int] = []
        shooters: list[int] = [0] if opp_bar else []
        for index, count in enumerate(points):
            if count >= 2:
                made += w.point_value[index]
                if index < 6:
                    home_points += 1
            elif count == 1:
                blots.append(index + 1)
            elif count < 0:
                shooters.append(index + 1)
                if count <= -2 and index >= 18:
                    opp_home_points += 1
        value += made
        block = 0.0
        for index, count in enumerate(points):
            if count < 0:
                held = 0
                for ahead in _OPPOSITE_AHEAD_OPP[index]:
                    if points[ahead] >= 2:
                        held += 1
                block -= count * _BLOCK_VALUE[held]
        if opp_bar:
            held = sum(1 for index in range(6) if points[index] >= 2)
            block += opp_bar * _BLOCK_VALUE[held]
            value += opp_bar * (w.bar_value + 1.5 * home_points)
        value += w.block * block
        if my_bar:
            value -= my_bar * (2.0 + 1.5 * opp_home_points)
        if blots and shooters:
            hit_cost = w.blot_base + 1.5 * opp_home_points
            risk = 0.0
            for blot in blots:
                mask = 0
                for shooter in shooters:
                    if shooter < blot:
                        mask |= 1 << (blot - shooter)
                if mask:
                    risk += _shots(mask) * (hit_cost + 25 - blot)
            value -= risk / 36.0
        return value

    @staticmethod
    def _mother_stake(w: _Weights, pinner_home_free: bool) -> float:
        """What a pinned mother is worth to the pinner (RULES.md §3.12.2): a whole mother end when
        it ends the game (``simple``; ``standard`` once the pinner has no free checker left on his
        own 24), part of one while it waits for that; nothing with ``mother: off``."""
        if w.mother == "off":
            return 0.0
        if w.mother == "simple" or not pinner_home_free:
            return w.mother_value
        return 0.4 * w.mother_value

    @staticmethod
    def _evaluate_pin(position: Position, w: _Weights) -> float:
        """The opposite-direction evaluation for a pinning variant (plakoto, RULES.md §3.12.2).

        Differences from :meth:`_evaluate_opposite`: pinned checkers count in their owner's pips;
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
                    value += HeuristicBot._mother_stake(w, points[23] > 0)
            else:  # my checker beneath his stack
                mine_pinned_at.add(point)
                my_pips += point
                my_back = max(my_back, point)
                value -= w.pin_base + w.pin_depth * point / 24
                if point == 24:  # my mother
                    value -= HeuristicBot._mother_stake(w, points[0] < 0)
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
        for index, count in enumerate(points):
            if closed[index] and count > 0:
                made += w.point_value[index]
            elif count == 1:
                blots.append(index + 1)
            elif count < 0:
                shooters.append(index + 1)
        value += made
        block = 0.0
        for index, count in enumerate(points):
            if count < 0:
                held = 0
                for ahead in _OPPOSITE_AHEAD_OPP[index]:
                    if closed[ahead]:
                        held += 1
                block -= count * _BLOCK_VALUE[held]
        value += w.block * block
        if blots and shooters:
            risk = 0.0
            for blot in blots:
                mask = 0
                for shooter in shooters:
                    if shooter < blot:
                        mask |= 1 << (blot - shooter)
                if mask:
                    cost = w.pin_base + w.pin_depth * blot / 24
                    if blot == 24:  # my mother, alone on my 24
                        cost += HeuristicBot._mother_stake(w, points[0] < 0)
                    risk += _shots(mask) * cost
            value -= risk / 36.0
        return value

    @staticmethod
    def _evaluate_same(position: Position, w: _Weights) -> float:
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
                opp_pips -= _opp_same(index + 1) * count
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
                for ahead in _SAME_AHEAD_OPP[index]:
                    if points[ahead] > 0:
                        held += 1
                block -= count * _BLOCK_VALUE[held]
            elif count > 0 and index >= 6:
                held = 0
                for ahead in _AHEAD_MINE[index]:
                    if points[ahead] < 0:
                        held += 1
                blocked += count * _BLOCK_VALUE[held]
        return value + w.block * block - w.blocked * blocked

    # -- cube -------------------------------------------------------------------------------------

    def advantage(self, position: Position) -> tuple[float, bool]:
        """The cube policy's measure for the mover of ``position``, who is on roll: his pip lead
        relative to his own pip count, plus 0.04 per opposing checker on the bar and minus 0.04 per
        own checker there; and whether there is still contact (backgammon family: a checker of his
        behind an opposing one; always ``False`` in the same-direction family, where nothing is hit).
        """
        opposite = self._w().opposite
        points = position.points
        mine, theirs = _pips(position, opposite)
        lead = (theirs - mine) / max(mine, 1) + 0.04 * (position.bar[1] - position.bar[0])
        contact = False
        if opposite:
            my_back = (
                25
                if position.bar[0]
                else max((i + 1 for i in range(24) if points[i] > 0), default=0)
            )
            opp_back = (
                0
                if position.bar[1]
                else min((i + 1 for i in range(24) if points[i] < 0), default=25)
            )
            contact = my_back > opp_back
        return lead, contact

    def _thresholds(self, contact: bool) -> tuple[float, float]:
        """(double at, take up to) for a race or a contact position."""
        if contact:
            return self.CONTACT_DOUBLE_AT, self.CONTACT_TAKE_UP_TO
        return self.DOUBLE_AT, self.TAKE_UP_TO

    def offer_double(self, decision: DoubleDecision) -> bool:
        if self.dead_cube(decision):  # the score makes the double worthless (Bot.dead_cube)
            return False
        lead, contact = self.advantage(decision.position)
        double_at, _ = self._thresholds(contact)
        if decision.cube.owner == decision.player:
            double_at += self.REDOUBLE_EXTRA
        return lead >= double_at

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        position = decision.position
        if decision.after_beaver:
            # I doubled and was beavered; I am on roll: play on unless clearly behind.
            lead, contact = self.advantage(position)
            return "take" if -lead <= self._thresholds(contact)[1] else "drop"
        # The doubler (my opponent) is on roll: his advantage, from his side of the board.
        geometry: Geometry = "opposite" if self._w().opposite else "same"
        lead, contact = self.advantage(position.flip(geometry))
        if decision.beaver_allowed and lead <= self.BEAVER_BELOW:
            return "beaver"
        return "take" if lead <= self._thresholds(contact)[1] else "drop"
