"""Match equity tables for the cube variants, computed from a model (no published table is copied).

The model is Tom Keith's construction (bkgm.com/articles/met.html): two equal players, a fixed
gammon rate ``g`` (the share of the games that end, not by a pass, as gammons; backgammons are
counted as gammons; Keith uses 20 %) and a perfectly efficient cube — the game is a continuous
martingale of the cubeless winning chance ``p``, so a player doubles exactly at his opponent's
take point and the value of a game is linear in ``p`` between the points where the cube moves.
The table is computed backwards from the end of the match:

* **post-Crawford** (leader 1-away, trailer ``t``-away): the leader's cube is dead, so the trailer
  doubles at once; the leader takes or passes, whichever is better (no free-drop allowance):
  ``P(t) = max(½ + ½·[(1−g)·P(t−2) + g·P(t−4)], P(t−1))``, ``P(1) = ½`` (double match point);
* **Crawford game** (no cube): ``C(t) = ½ + ½·[(1−g)·P(t−1) + g·P(t−2)]``;
* **before the Crawford game** (both 2-away or more): at each cube level ``v``, a player who owns
  the cube doubles at the opponent's take point (if that beats never doubling, when gammons make
  playing on better), and a cube that cannot help its owner (``v ≥`` his points to go) is dead:
  the game's value is then ``p·W + (1−p)·L`` with ``W``, ``L`` the match winning chances after a
  win or a loss at ``v`` (gammons at rate ``g``). With the cube centred each player doubles at the
  other's take point; the match winning chance of the score is the value at ``p = ½``.

Match winning chances (MWC) are probabilities; ``mwc(me, opponent)`` takes the points each needs.
The figures lie within about 2 % of the published tables of the same era (Woolsey's, for
example; ``tests/analysis/test_analysis_match.py`` checks a few).

**Other variants** (:func:`table_for`). The model needs a game worth 1 or 2 (× the cube), with a
third outcome counted as the second: backgammon's single/gammon/backgammon, and long nardy's
family's oin/mars/koks (RULES.md §6: 1, 2, 3; ``koks: false`` scores a koks as a mars), so each
variant with one of these two scorings gets the table of its own gammon (mars) rate
(:data:`GAMMON_RATES`). Per-checker stakes (``khachapuri``, ``scoring: per_checker``: 1 to 15
points a game) have no table: the model would need the distribution of a game's size, which an
equity alone does not give, so their match cube decisions are not rated.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from itertools import pairwise

from nardy.core.rules import BackgammonScoring, LongScoring
from nardy.core.variant import Variant

__all__ = [
    "GAMMON_RATE",
    "GAMMON_RATES",
    "MAX_AWAY",
    "MatchEquityTable",
    "default_table",
    "table",
    "table_for",
]

GAMMON_RATE = 0.20
"""Keith's gammon rate (the share of games ending as gammons)."""
MAX_AWAY = 64
"""The longest distance to go the table answers (a 64-point match)."""

Curve = tuple[tuple[float, float], ...]
"""A piecewise-linear, nondecreasing function of ``p`` on [0, 1]: its (p, value) corners."""


def _at(curve: Curve, p: float) -> float:
    for (p0, y0), (p1, y1) in pairwise(curve):
        if p <= p1:
            return y0 if p1 == p0 else y0 + (y1 - y0) * (p - p0) / (p1 - p0)
    return curve[-1][1]


def _reach(curve: Curve, target: float) -> float:
    """The least ``p`` where the nondecreasing ``curve`` reaches ``target`` (1 if it never does)."""
    if curve[0][1] >= target:
        return 0.0
    for (p0, y0), (p1, y1) in pairwise(curve):
        if y1 >= target:
            return p0 if y1 == y0 else p0 + (p1 - p0) * (target - y0) / (y1 - y0)
    return 1.0


class MatchEquityTable:
    """Match winning chances at every score (module doc) for gammon rate ``gammon_rate``."""

    def __init__(self, gammon_rate: float = GAMMON_RATE) -> None:
        if not 0.0 <= gammon_rate < 1.0:
            raise ValueError(f"the gammon rate must be in [0, 1), not {gammon_rate}")
        self.gammon_rate = g = gammon_rate
        post = [0.0, 0.5]  # post[t]: the leader's MWC, trailer t-away (post[0]: trailer won)
        for t in range(2, MAX_AWAY + 1):
            take = 0.5 + 0.5 * ((1 - g) * post[max(t - 2, 0)] + g * post[max(t - 4, 0)])
            post.append(max(take, post[t - 1]))
        self._post = tuple(post)
        self._crawford = tuple(
            [0.5, 0.5]
            + [
                0.5 + 0.5 * ((1 - g) * post[t - 1] + g * post[max(t - 2, 0)])
                for t in range(2, MAX_AWAY + 1)
            ]
        )
        self._pre: dict[tuple[int, int], float] = {}
        self._scores: dict[tuple[int, int], _Score] = {}

    # -- the table ------------------------------------------------------------------------------

    def mwc(self, me: int, opponent: int, *, crawford_done: bool = False) -> float:
        """My chance to win the match before a game when I need ``me`` points and the opponent
        ``opponent`` (0 or less: that player has won). With one of us 1-away, the game is the
        Crawford game unless ``crawford_done`` (then it is post-Crawford)."""
        if me <= 0:
            return 1.0
        if opponent <= 0:
            return 0.0
        if max(me, opponent) > MAX_AWAY:
            raise ValueError(f"the table goes to {MAX_AWAY} points away, not {max(me, opponent)}")
        if me == 1 and opponent == 1:
            return 0.5
        if me == 1 or opponent == 1:
            table = self._post if crawford_done else self._crawford
            leader = table[max(me, opponent)]
            return leader if me == 1 else 1.0 - leader
        return self._pre_crawford(me, opponent)

    def after(self, me: int, opponent: int, *, crawford_done: bool) -> float:
        """My MWC before the next game once the points to go are ``me``, ``opponent``; the game
        just ended was the Crawford game or after it when ``crawford_done``, else before it (a
        first 1-away then makes the next game the Crawford game)."""
        return self.mwc(me, opponent, crawford_done=crawford_done)

    def live(self, me: int, opponent: int, cube: int, owner: str, p: float) -> float:
        """My MWC under the model's perfectly efficient cube, before the Crawford game (both
        2-away or more), with my cubeless winning chance ``p`` and the cube at ``cube`` owned by
        ``owner`` (``centre``, ``me`` or ``opponent``)."""
        if min(me, opponent) < 2 or max(me, opponent) > MAX_AWAY:
            raise ValueError(f"no live cube at {me}-away, {opponent}-away before Crawford")
        self._pre_crawford(me, opponent)
        score = self._scores.get((me, opponent))
        if score is None:
            score = self._scores[(me, opponent)] = _Score(self, me, opponent)
        if owner == "centre":
            curve = score.centred(cube)
        else:
            curve = score.owned(cube, "A" if owner == "me" else "B")
        return _at(curve, min(max(p, 0.0), 1.0))

    # -- before the Crawford game --------------------------------------------------------------

    def _pre_crawford(self, a: int, b: int) -> float:
        known = self._pre.get((a, b))
        if known is not None:
            return known
        # Fill every score with fewer points to go first (no deep recursion).
        for total in range(4, a + b + 1):
            for x in range(2, total - 1):
                y = total - x
                if (x, y) not in self._pre and y >= 2 and x <= max(a, b) and y <= max(a, b):
                    self._pre[(x, y)] = _Score(self, x, y).value()
        return self._pre[(a, b)]


class _Score:
    """One pre-Crawford score: A needs ``a``, B needs ``b``; values are A's MWC as a function of
    A's cubeless winning chance ``p``."""

    def __init__(self, table: MatchEquityTable, a: int, b: int) -> None:
        self.table, self.a, self.b = table, a, b
        self.owned = cache(self._owned)

    def _mwc(self, a: int, b: int) -> float:
        return self.table.mwc(a, b, crawford_done=False)

    def win(self, v: int) -> float:
        """A wins the game played out at cube ``v``."""
        g = self.table.gammon_rate
        return (1 - g) * self._mwc(self.a - v, self.b) + g * self._mwc(self.a - 2 * v, self.b)

    def loss(self, v: int) -> float:
        g = self.table.gammon_rate
        return (1 - g) * self._mwc(self.a, self.b - v) + g * self._mwc(self.a, self.b - 2 * v)

    def _owned(self, v: int, owner: str) -> Curve:
        """A's value with the cube at ``v`` owned by ``owner`` (``A`` or ``B``)."""
        a, b = self.a, self.b
        dead: Curve = ((0.0, self.loss(v)), (1.0, self.win(v)))
        if owner == "A":
            if v >= a:
                return dead
            cash = self._mwc(a - v, b)  # B passes A's double
            c = _reach(self.owned(2 * v, "B"), cash)  # B's take point (B takes below it)
            if c <= 0.0:
                return ((0.0, cash), (1.0, cash))
            # Doubling at c beats playing on unless gammons make the dead cube's slope steeper.
            if (cash - dead[0][1]) / c >= dead[1][1] - dead[0][1]:
                return ((0.0, dead[0][1]), (c, cash), (1.0, cash))
            return dead
        if v >= b:
            return dead
        cash = self._mwc(a, b - v)  # A passes B's double
        d = _reach(self.owned(2 * v, "A"), cash)  # A's take point (A takes above it)
        if d >= 1.0:
            return ((0.0, cash), (1.0, cash))
        if (dead[1][1] - cash) / (1.0 - d) >= dead[1][1] - dead[0][1]:
            return ((0.0, cash), (d, cash), (1.0, dead[1][1]))
        return dead

    def centred(self, v: int) -> Curve:
        """A's value with the cube centred at ``v``: B doubles at A's take point ``d``, A at
        B's take point ``c``, linear in between."""
        a, b = self.a, self.b
        cash_a, cash_b = self._mwc(a - v, b), self._mwc(a, b - v)
        c = _reach(self.owned(2 * v, "B"), cash_a)  # A doubles here (B's take point)
        d = _reach(self.owned(2 * v, "A"), cash_b)  # B doubles here (A's take point)
        if c <= d:  # each would double at once and be passed: no such score in practice
            middle = 0.5 * (cash_a + cash_b)
            return ((0.0, cash_b), (c, middle), (1.0, cash_a)) if c > 0 else ((0.0, middle),)
        return ((0.0, cash_b), (d, cash_b), (c, cash_a), (1.0, cash_a))

    def value(self) -> float:
        """A's MWC at the start of a game (cube centred at 1, ``p = ½``)."""
        return _at(self.centred(1), 0.5)


@cache
def table(gammon_rate: float = GAMMON_RATE) -> MatchEquityTable:
    """The table at ``gammon_rate`` (built once per rate)."""
    return MatchEquityTable(gammon_rate)


def default_table() -> MatchEquityTable:
    """The table at :data:`GAMMON_RATE` (backgammon's)."""
    return table(GAMMON_RATE)


GAMMON_RATES: Mapping[str, float] = {
    "long": 0.22,  # 44 of 200 games
    "nardgammon": 0.57,  # 34 of 60
    "mad": 0.37,  # 22 of 60
    "gulbar": 0.53,  # 32 of 60
    "mad_gulbar": 0.77,  # 46 of 60
}
"""The share of games (played out, no cube) won by a mars or a koks, per variant of long nardy's
scoring; measured in self-play of the shipped ``neural`` bot, no cube (seed 17; standard errors
2.9 % for long, about 6 % for the others: docs/analysis.md). A variant of
that scoring not listed takes long nardy's; a variant of backgammon's scoring (backgammon,
``nackgammon``, ``hypergammon``: RULES.md §3.11, "backgammon in every rule") takes Keith's
:data:`GAMMON_RATE`, as GNU Backgammon, their oracle, uses one table for all of them."""


def table_for(variant: Variant) -> MatchEquityTable | None:
    """The match equity table of ``variant``'s matches (None: its scoring has no table, e.g.
    per-checker stakes; module doc)."""
    scoring = variant.rules.scoring
    if scoring.per_checker:
        return None
    if type(scoring) is BackgammonScoring:
        return default_table()
    if type(scoring) is LongScoring:
        return table(GAMMON_RATES.get(variant.name, GAMMON_RATES["long"]))
    return None
