"""The ``heuristic`` bot: one-ply search with the hand-written evaluation of
:mod:`nardy.engines.heuristic` over every legal play's resulting position; a pip-count cube policy.
"""

from __future__ import annotations

import random

from nardy.bots.base import Bot
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.position import Geometry, Position
from nardy.core.variant import Variant
from nardy.engines.heuristic import HeuristicEvaluation, pips

__all__ = ["HeuristicBot"]


class HeuristicBot(Bot):
    """One-ply search with a hand-written evaluation, for every variant.

    For each legal play it evaluates the resulting position from the mover's view
    (pip-equivalents, larger is better) and picks the best (ties broken by its
    ``random.Random(seed)``). The evaluation needs the variant: :meth:`start_game` (called by
    :func:`play_game`) or :meth:`bind` compiles its weights; a variant may also be given at
    construction.

    The evaluation is the engine's :mod:`nardy.engines.heuristic` (its module docstring lists the
    features).

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
        self._evaluation: HeuristicEvaluation | None = None
        if variant is not None:
            self.bind(variant)

    def bind(self, variant: Variant) -> None:
        """Compile the evaluation weights for ``variant`` (cheap: a few table look-ups)."""
        self._evaluation = HeuristicEvaluation.of(variant)

    def start_game(self, variant: Variant, colour: int) -> None:
        self.bind(variant)

    @property
    def evaluation(self) -> HeuristicEvaluation:
        """The evaluation compiled for the bound variant; a :class:`RuntimeError` before
        :meth:`bind`. A subclass may set its own (``benchmarks/measure_plakoto_heuristic.py``)."""
        if self._evaluation is None:
            raise RuntimeError(
                "HeuristicBot needs the variant: call bind(variant) or start_game(variant, colour) "
                "first (play_game does), or pass variant= to the constructor"
            )
        return self._evaluation

    @evaluation.setter
    def evaluation(self, evaluation: HeuristicEvaluation) -> None:
        self._evaluation = evaluation

    # -- plays ------------------------------------------------------------------------------------

    def choose_play(self, decision: PlayDecision) -> int:
        plays = decision.plays
        if len(plays) == 1:
            return 0
        evaluation = self.evaluation
        weights = evaluation.weights
        evaluate = evaluation.function
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
        return self.evaluation.evaluate(position)

    # -- cube -------------------------------------------------------------------------------------

    def advantage(self, position: Position) -> tuple[float, bool]:
        """The cube policy's measure for the mover of ``position``, who is on roll: his pip lead
        relative to his own pip count, plus 0.04 per opposing checker on the bar and minus 0.04 per
        own checker there; and whether there is still contact (backgammon family: a checker of his
        behind an opposing one; always ``False`` in the same-direction family, where nothing is hit).
        """
        opposite = self.evaluation.weights.opposite
        points = position.points
        mine, theirs = pips(position, opposite)
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
        geometry: Geometry = "opposite" if self.evaluation.weights.opposite else "same"
        lead, contact = self.advantage(position.flip(geometry))
        if decision.beaver_allowed and lead <= self.BEAVER_BELOW:
            return "beaver"
        return "take" if lead <= self._thresholds(contact)[1] else "drop"
