"""Cube decisions for money play: no double, double/take, double/pass, with equities.

The evaluators give cubeless numbers; the cubeful equities come from Janowski's model (cube life
``x`` = :data:`~nardy.bots.gnubg_bot.CUBE_LIFE`, the same model as the gnubg bot's cube), all
normalised to the current cube value and from the doubler's side:

* ``no_double`` — the cubeful equity if he rolls (cube centred or his);
* ``double_take`` — twice his cubeful equity with the cube at 2v owned by the taker;
* ``double_pass`` — 1 (he wins the current cube).

He should double when ``min(double_take, double_pass) > no_double``; the taker should take when
``double_take ≤ double_pass``. An evaluator with probabilities (gnubg) gives them; for one with an
equity only (the neural nets), gammonless probabilities are derived from the equity ``E``:
``P(win) = (1 + E) / 2`` within ±1, and beyond, a sure win (loss) with gammon rate ``|E| − 1``.
Match play is not analysed (the cube is scored by money equities only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nardy.analysis.evaluator import Probabilities
from nardy.bots.gnubg_bot import Probabilities as Outcomes
from nardy.bots.gnubg_bot import janowski

__all__ = ["CubeAnalysis", "analyse_cube", "probabilities_from_equity"]

Owner = Literal["centre", "me", "opponent"]


def probabilities_from_equity(equity: float) -> Outcomes:
    """Gammonless (within ±1) cubeless probabilities that have ``equity`` (module doc)."""
    if equity >= 1.0:
        return Outcomes(1.0, min(equity - 1.0, 1.0), 0.0, 0.0, 0.0)
    if equity <= -1.0:
        return Outcomes(0.0, 0.0, 0.0, min(-equity - 1.0, 1.0), 0.0)
    return Outcomes((1.0 + equity) / 2.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class CubeAnalysis:
    """Cubeful equities of one cube decision, normalised to the cube, from the doubler's side."""

    no_double: float
    double_take: float
    double_pass: float

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
    p = Outcomes(
        probabilities.win,
        probabilities.win_gammon,
        probabilities.win_backgammon,
        probabilities.lose_gammon,
        probabilities.lose_backgammon,
    )
    centred = p.single() if jacoby and owner == "centre" else p
    return CubeAnalysis(janowski(centred, owner), 2.0 * janowski(p, "opponent"), 1.0)
