"""Cube decisions, money and match play: no double, double/take, double/pass, with equities.

The evaluators give cubeless numbers; the cubeful equities come from Janowski's model (cube life
``x`` = :data:`~nardy.engines.gnubg.CUBE_LIFE`, the same model as the gnubg bot's cube), all
normalised to the current cube value and from the doubler's side:

* ``no_double`` — the cubeful equity if he rolls (cube centred or his);
* ``double_take`` — twice his cubeful equity with the cube at 2v owned by the taker;
* ``double_pass`` — 1 (he wins the current cube).

He should double when ``min(double_take, double_pass) > no_double``; the taker should take when
``double_take ≤ double_pass``. An evaluator with probabilities (gnubg) gives them; for one with an
equity only (the neural nets), gammonless probabilities are derived from the equity ``E``:
``P(win) = (1 + E) / 2`` within ±1, and beyond, a sure win (loss) with gammon rate ``|E| − 1``.

Match play (:func:`analyse_match_cube`; the table of the variant, :func:`~nardy.analysis.met.table_for`): the same three actions valued in match
winning chances (MWC, :mod:`nardy.analysis.met`), with Janowski's interpolation carried over to
match play: ``x · live + (1 − x) · dead``, ``x`` the same cube life. The dead part sums the MWC
over the game's outcomes (single, gammon, backgammon, from the evaluator's probabilities) at the
cube (``ND``) or twice the cube (``DT``); the live part is the table model's perfectly efficient
cube at the doubler's cubeless winning chance (:meth:`~nardy.analysis.met.MatchEquityTable.live`:
cube centred or his for ``ND``, the taker's at twice the value for ``DT``). ``DP`` is the MWC
after winning the cube. Post-Crawford the cube is dead after the trailer's double (the leader
cannot use it), so only the dead part counts. The three are then converted to money-equivalent
equities (gnubg's "EMG"): ``2·(MWC − L)/(W − L) − 1`` with ``W``, ``L`` the MWC after winning,
losing the current cube, so ``DP = +1`` as in money play and the same thresholds mark losses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nardy.analysis.met import MatchEquityTable, default_table
from nardy.engines.evaluator import Probabilities
from nardy.engines.gnubg import CUBE_LIFE, janowski
from nardy.engines.gnubg import Probabilities as Outcomes

__all__ = [
    "CubeAnalysis",
    "MatchScore",
    "analyse_cube",
    "analyse_match_cube",
    "probabilities_from_equity",
]

Owner = Literal["centre", "me", "opponent"]


def probabilities_from_equity(equity: float) -> Outcomes:
    """Gammonless (within ±1) cubeless probabilities that have ``equity`` (module doc)."""
    if equity >= 1.0:
        return Outcomes(1.0, min(equity - 1.0, 1.0), 0.0, 0.0, 0.0)
    if equity <= -1.0:
        return Outcomes(0.0, 0.0, 0.0, min(-equity - 1.0, 1.0), 0.0)
    return Outcomes((1.0 + equity) / 2.0, 0.0, 0.0, 0.0, 0.0)


def _outcomes(probabilities: Probabilities) -> Outcomes:
    """The evaluator's five probabilities as gnubg's :class:`Outcomes`, whose methods (the
    outcomes' points, the gammonless ``single``) the cube models read."""
    return Outcomes(
        probabilities.win,
        probabilities.win_gammon,
        probabilities.win_backgammon,
        probabilities.lose_gammon,
        probabilities.lose_backgammon,
    )


@dataclass(frozen=True, slots=True)
class CubeAnalysis:
    """Cubeful equities of one cube decision, normalised to the cube, from the doubler's side."""

    no_double: float
    double_take: float
    double_pass: float
    mwc: tuple[float, float, float] | None = None
    """In match play: the same three as the doubler's match winning chances."""

    @property
    def should_double(self) -> bool:
        return min(self.double_take, self.double_pass) > self.no_double

    @property
    def should_take(self) -> bool:
        return self.double_take <= self.double_pass

    @property
    def best(self) -> str:
        """``no double``, ``double, take`` or ``double, pass`` (the proper cube action)."""
        if not self.should_double:
            return "no double"
        return "double, take" if self.should_take else "double, pass"

    def double_loss(self, doubled: bool) -> float:
        """The doubler's equity lost by his decision (normalised)."""
        if_doubled = min(self.double_take, self.double_pass)
        best = max(self.no_double, if_doubled)
        return best - (if_doubled if doubled else self.no_double)

    def take_loss(self, taken: bool) -> float:
        """The taker's equity lost by his decision (normalised; a beaver counts as a take)."""
        take, drop = -self.double_take, -self.double_pass
        return max(take, drop) - (take if taken else drop)


def analyse_cube(
    probabilities: Probabilities, owner: Owner, *, jacoby: bool = False
) -> CubeAnalysis:
    """The cube decision of the player on roll with these cubeless ``probabilities``; ``owner``
    is the cube's before the double (``centre`` or ``me``). Jacoby: gammons count single while
    the cube is centred."""
    p = _outcomes(probabilities)
    centred = p.single() if jacoby and owner == "centre" else p
    return CubeAnalysis(janowski(centred, owner), 2.0 * janowski(p, "opponent"), 1.0)


@dataclass(frozen=True, slots=True)
class MatchScore:
    """The doubler's match situation: the points he and his opponent need, and whether the
    Crawford game has been played (the game is then post-Crawford)."""

    me: int
    opponent: int
    crawford_done: bool


def analyse_match_cube(
    probabilities: Probabilities,
    score: MatchScore,
    cube_value: int,
    owner: Owner = "centre",
    table: MatchEquityTable | None = None,
    *,
    cube_life: float = CUBE_LIFE,
) -> CubeAnalysis:
    """The match-play cube decision of the player on roll (module doc): equities in EMG, and
    the match winning chances in :attr:`CubeAnalysis.mwc`."""
    met = table or default_table()
    p = _outcomes(probabilities)
    me, opponent = score.me, score.opponent
    # The game's end makes the next game the Crawford game only if nobody was 1-away before.
    done = score.crawford_done or me == 1 or opponent == 1

    def mwc_after(won: int) -> float:
        if won > 0:
            return met.after(me - won, opponent, crawford_done=done)
        return met.after(me, opponent + won, crawford_done=done)

    def dead(cube: int) -> float:
        return sum(chance * mwc_after(points * cube) for points, chance in p.outcomes())

    win, lose = mwc_after(cube_value), mwc_after(-cube_value)
    no_double, take, drop = dead(cube_value), dead(2 * cube_value), win
    if not done:  # before the Crawford game: both can use the cube
        x, chance = cube_life, p.win
        live_nd = met.live(me, opponent, cube_value, owner, chance)
        live_dt = met.live(me, opponent, 2 * cube_value, "opponent", chance)
        no_double = x * live_nd + (1 - x) * no_double
        take = x * live_dt + (1 - x) * take

    def emg(x: float) -> float:
        return 2.0 * (x - lose) / (win - lose) - 1.0 if win > lose else 0.0

    return CubeAnalysis(emg(no_double), emg(take), emg(drop), (no_double, take, drop))
