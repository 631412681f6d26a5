"""GNU Backgammon as a bot for ``backgammon`` (the optional extra ``nardy[gnubg]``).

Checker play is gnubg's own: ``gnubg.findbestmoves`` at the configured ply (cubeful evaluation,
gnubg's default move filters) ranks every play, and the bot plays the first. Its move tuples are
mapped back to the legal play with the same result. The binding cuts a tuple short at the first
bear-off (it stops at gnubg's ``-1`` for "off"); for such a move the bot scores every legal result
itself with ``gnubg.evaluate`` at the same ply (the opponent's equity after the play, lowest
first): the same ranking for 0-ply, and in bear-offs, where this happens, also in practice for more.

Cube decisions come from gnubg's cubeless probabilities at the configured ply (win, gammon and
backgammon rates of both sides). gnubg's Python bindings expose no cubeful cube analysis (the
``hint`` of a cube decision is "not yet implemented", ``gnubg_nn.evaluate_cube_decision`` is
"not implemented for money"), so these probabilities go into the classical models:

* money play — Janowski's cubeful equities with cube life ``x = 0.68`` (normalised to the cube):
  no double ``ND``, double/take ``DT``, double/pass ``DP = 1``; double when ``min(DT, DP) > ND``,
  take when ``DT ≤ DP`` from the doubler's side, beaver when ``DT < 0``. Under Jacoby gammons
  count single while the cube is centred.
* match play — match winning chances from gnubg's own match equity table (``gnubg.met``,
  post-Crawford rows once a side is 1-away), dead cube: ``ND``, ``DT`` (each outcome's score at
  the doubled cube) and ``DP`` (the doubler wins the cube).

Like ``neural``, the bot never turns the cube beyond ``MAX_CUBE`` (8): against a bot that takes
and redoubles freely (``heuristic``), an unbounded cube lets a few games decide the mean.

The score of a match is given by :meth:`GnubgBot.set_match` (``nardy play --match`` does it).
"""

from __future__ import annotations

import contextlib
from typing import Any

from nardy.bots.base import Bot
from nardy.core.errors import IllegalPlayError
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.gnubg import board_from_position, position_from_board
from nardy.core.position import CHECKERS, Position
from nardy.core.variant import Variant
from nardy.engines.gnubg import Probabilities, cubeless_probabilities, janowski, load_gnubg
from nardy.quiet import quiet_stdout

__all__ = ["MAX_CUBE", "GnubgBot"]

MAX_PLY = 4
MAX_CUBE = 8


class GnubgBot(Bot):
    """gnubg at ``ply`` plies (0 = its neural net alone; ``gnubg:2`` is 2-ply). Checker play ranks
    plays by cubeful equity (gnubg's own default); ``cubeful=False`` ranks them cubeless."""

    name = "gnubg"

    def __init__(self, seed: int | None = None, ply: int = 0, *, cubeful: bool = True) -> None:
        if not 0 <= ply <= MAX_PLY:
            raise ValueError(f"gnubg ply must be 0-{MAX_PLY}, not {ply}")
        self.seed = seed
        self.ply = ply
        self.name = f"gnubg:{ply}" if ply else "gnubg"
        self._gnubg = load_gnubg()
        self._context = self._gnubg.evalcontext(int(cubeful), ply, 1, 0, 0.0)
        self._cubeless = self._gnubg.evalcontext(0, ply, 1, 0, 0.0)
        self.match: tuple[int, int, int] | None = None
        """(match length, my score, the opponent's score), or None for money play."""
        self.jacoby = False
        self.beavers = False
        self._met: Any = None

    @classmethod
    def from_argument(cls, seed: int | None, argument: str | None = None) -> GnubgBot:
        """``gnubg`` or ``gnubg:PLY`` as :func:`~nardy.bots.make_bot` spells it."""
        if argument is None or argument == "":
            return cls(seed)
        if not argument.isdigit():
            raise ValueError(f"gnubg:PLY needs a ply 0-{MAX_PLY}, not {argument!r}")
        return cls(seed, int(argument))

    def start_game(self, variant: Variant, colour: int) -> None:
        if variant.name != "backgammon":
            raise ValueError(f"the gnubg bot plays backgammon only, not {variant.name}")
        money = variant.options.get("match_length") is None and self.match is None
        self.jacoby = money and bool(variant.options.get("jacoby"))
        self.beavers = money and bool(variant.options.get("beavers"))

    def set_match(self, length: int | None, score: tuple[int, int]) -> None:
        """The match before the next game: its length (None: money play) and (my, opponent's)
        score."""
        self.match = None if length is None else (length, score[0], score[1])

    # -- checker play ------------------------------------------------------------------------------

    def _cubeinfo(self, cube_value: int, owner: int) -> Any:
        """gnubg's cube info with the mover as gnubg's player 0 (owner 0 = mover, 1 = opponent,
        -1 = centred)."""
        length, mine, theirs = self.match or (0, 0, 0)
        info = self._gnubg.cubeinfo(cube_value, owner, 0, length, (mine, theirs), 0, 0)
        # gnubg's money play assumes the Jacoby rule (gammons worth nothing with the cube centred:
        # its gammon price 0), where nardy plays it only with the option ``jacoby`` (RULES.md
        # §2.12): without it the bot would play for single wins whenever the cube is centred,
        # and so in every game without the cube.
        # gnubg works out the gammon price from this flag (its ``gammonprice`` is not read).
        info["jacoby"] = int(self.jacoby)
        return info

    def choose_play(self, decision: PlayDecision) -> int:
        plays = decision.plays
        if len(plays) == 1:
            return 0
        position = decision.position
        board = board_from_position(position.points, position.bar)
        dice = decision.segment.dice
        info = self._cubeinfo(1, -1)
        with quiet_stdout():
            ranked = self._gnubg.findbestmoves(board, info, self._context, (dice[0], dice[-1]))
        if ranked:
            move = tuple(ranked[0]["move"])
            if len(move) % 2 == 0:
                with contextlib.suppress(IllegalPlayError):
                    return plays.index_of(_apply(board, move))
        return self._best_by_evaluation(decision)

    def _best_by_evaluation(self, decision: PlayDecision) -> int:
        """The play after which gnubg gives the opponent the lowest equity."""
        best, best_equity = 0, float("inf")
        info = self._cubeinfo(1, -1)
        for index, play in enumerate(decision.plays):
            after = play.result.flip("opposite")
            if after.off[1] == CHECKERS:
                return index  # the play bears off the last checker: the game is won
            board = board_from_position(after.points, after.bar)
            with quiet_stdout():
                equity = float(self._gnubg.evaluate(board, info, self._cubeless)[5])
            if equity < best_equity:
                best, best_equity = index, equity
        return best

    # -- cube --------------------------------------------------------------------------------------

    def probabilities(self, position: Position) -> Probabilities:
        """gnubg's cubeless probabilities for the player on roll in ``position``."""
        return cubeless_probabilities(self._gnubg, position, self._cubeinfo(1, -1), self._cubeless)

    def cube_equities(
        self, position: Position, cube_value: int, owner: str
    ) -> tuple[float, float, float]:
        """(no double, double/take, double/pass) for the player on roll: money equities normalised
        to the cube, or match winning chances in match play."""
        p = self.probabilities(position)
        if self.match is not None:
            return self._match_equities(p, cube_value)
        centred = p.single() if self.jacoby and owner == "centre" else p
        no_double = janowski(centred, owner)
        double_take = 2.0 * janowski(p, "opponent")
        return no_double, double_take, 1.0

    def _mwc(self, me_away: int, opp_away: int) -> float:
        """My match winning chance at (me, opponent) points away, from gnubg's table."""
        if me_away <= 0:
            return 1.0
        if opp_away <= 0:
            return 0.0
        if self._met is None:
            with quiet_stdout():
                self._met = self._gnubg.met(64)
        # pre[i][j]: (i + 1)-away against (j + 1)-away; post[k]: the trailer's chance at
        # (k + 1)-away against a leader 1-away after the Crawford game.
        pre, post, _post1 = self._met
        if opp_away == 1 and me_away > 1:
            return float(post[me_away - 1])
        if me_away == 1 and opp_away > 1:
            return 1.0 - float(post[opp_away - 1])
        return float(pre[me_away - 1][opp_away - 1])

    def _match_equities(self, p: Probabilities, cube_value: int) -> tuple[float, float, float]:
        assert self.match is not None
        length, mine, theirs = self.match
        me, opp = length - mine, length - theirs

        def dead(cube: int) -> float:
            total = 0.0
            for points, chance in p.outcomes():
                if points > 0:
                    total += chance * self._mwc(me - points * cube, opp)
                else:
                    total += chance * self._mwc(me, opp + points * cube)
            return total

        return dead(cube_value), dead(2 * cube_value), self._mwc(me - cube_value, opp)

    def offer_double(self, decision: DoubleDecision) -> bool:
        if 2 * decision.cube.value > MAX_CUBE:
            return False
        owner = "centre" if decision.cube.owner is None else "me"
        no_double, take, drop = self.cube_equities(decision.position, decision.cube.value, owner)
        return min(take, drop) > no_double

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        if decision.after_beaver:
            # I doubled and was beavered; I am on roll with the cube at 4v owned by the opponent.
            p = self.probabilities(decision.position)
            # Take: 4v with the cube against me (4 J); drop: lose 2v. Take while 4 J >= -2.
            return "take" if janowski(p, "opponent") >= -0.5 else "drop"
        doubler_view = decision.position.flip("opposite")
        owner = "centre" if decision.cube.owner is None else "me"
        _no_double, take, drop = self.cube_equities(doubler_view, decision.cube.value, owner)
        if self.match is None and decision.beaver_allowed and take < 0.0:
            return "beaver"
        return "take" if take <= drop else "drop"


def _apply(board: Any, move: tuple[int, ...]) -> Position:
    """The position after gnubg's move tuple (``from, to`` pairs, 1-based, 25 = bar, 0 = off)."""
    opponent, mover = list(board[0]), list(board[1])
    for i in range(0, len(move), 2):
        src, dst = move[i], move[i + 1]
        mover[src - 1] -= 1
        if dst >= 1:
            mover[dst - 1] += 1
            if opponent[24 - dst] == 1:
                opponent[24 - dst] = 0
                opponent[24] += 1
    points, bar = position_from_board((tuple(opponent), tuple(mover)))
    off = (CHECKERS - sum(mover), CHECKERS - sum(opponent))
    return Position(points, bar, off)
