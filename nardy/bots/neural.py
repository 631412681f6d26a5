"""The neural bot: plays by the value network of :mod:`nardy.engines.net`, numpy only.

A decision evaluates all legal results in one batch (the net's ``U(r)``, the mover's points per
game after the play divided by the variant's scale) and plays the best; ``neural:PLY`` searches
deeper with :mod:`nardy.engines.search`.

Cube (backgammon; a documented rule, not a cubeful evaluation): the equity of the player on roll is
``E = −U(flip(position)) · scale`` in points of a single game, cubeless. He doubles when
``DOUBLE_FROM ≤ E ≤ TOO_GOOD`` (above, he plays on for the gammon), takes while his own
``E ≥ TAKE_FROM`` (the 25 % take point of a gammonless game is −0.5) and beavers at ``E ≥ BEAVER_FROM``.
It never turns the cube beyond ``MAX_REDOUBLE`` (8): against a bot that takes and redoubles freely,
an unbounded cube turns a few swingy games into results of thousands of points.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

from pathlib import Path

import numpy as np
import numpy.typing as npt

from nardy.bots.base import Bot
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.encoding import BOARD_SIZE
from nardy.engines.evaluator import NeuralEvaluator, neural_bot_argument
from nardy.engines.net import (
    Engine,
    Net,
    engine_for,
    fitted_from,
    load_net,
    shipped_consistent_weights,
    shipped_weights,
)
from nardy.engines.search import Searcher

__all__ = ["MAX_PLY", "NeuralBot"]

Array = npt.NDArray[np.float64]

MAX_PLY = 3
"""The deepest search ``neural:PLY`` accepts (2-ply already costs about 20× a 1-ply decision)."""


class NeuralBot(Bot):
    """Plays the legal result of highest network value; cube by the rule of the module docstring.

    ``weights``: a path (``neural:FILE``) or ``None`` for the weights shipped for the game's variant,
    loaded at :meth:`start_game` (or :meth:`bind`); a number 0…:data:`MAX_PLY` instead
    (``neural:1``) is the search depth ``ply`` with the shipped weights, and ``PLY:FILE``
    (``neural:1:FILE``) both, a search over that file's net. At ``ply`` n > 0 a play is
    chosen by the n-ply search of :mod:`nardy.engines.search` (gnubg-style move filtering) over
    :meth:`search_weights`: the shipped net's self-consistent refit where one ships, else the
    bot's own net; cube decisions stay 0-ply.
    """

    name = "neural"

    DOUBLE_FROM = 0.6
    TOO_GOOD = 1.0
    TAKE_FROM = -0.5
    BEAVER_FROM = 0.1
    MAX_REDOUBLE = 8

    def __init__(
        self,
        seed: int | None = None,
        weights: str | Path | None = None,
        *,
        variant: Variant | None = None,
        ply: int = 0,
    ) -> None:
        if isinstance(weights, str):
            depth, weights = neural_bot_argument(weights)
            ply = ply if depth is None else depth
        if not 0 <= ply <= MAX_PLY:
            raise ValueError(f"neural:PLY needs a ply 0-{MAX_PLY}, not {ply}")
        self.ply = ply
        self.name = f"neural:{ply}" if ply else "neural"
        self._searcher: Searcher | None = None
        self.seed = seed
        self.weights_path = Path(weights) if weights is not None else None
        self.net: Net | None = None
        if self.weights_path is not None:
            self.net = load_net(self.weights_path)
        self._engine: Engine | None = None
        if variant is not None:
            self.bind(variant)

    def bind(self, variant: Variant, net: Net | None = None) -> None:
        """Use ``variant``'s rules (and ``net``, or the loaded or shipped weights)."""
        if net is not None:
            self.net = net
        elif self.net is None or (
            self.weights_path is None and self.net.meta.get("variant") != variant.name
        ):
            self.net = load_net(shipped_weights(variant.name))
        self._engine = engine_for(self.net, variant)
        self._searcher = None

    def start_game(self, variant: Variant, colour: int) -> None:
        if self._engine is None or self._engine.variant is not variant:
            self.bind(variant)

    @property
    def engine(self) -> Engine:
        """The bot's net bound to its variant (:class:`~nardy.engines.net.NetEngine`), which the
        ``neural`` evaluator and the trainers share; a :class:`RuntimeError` before :meth:`bind`."""
        if self._engine is None:
            raise RuntimeError(
                "NeuralBot needs the variant: call bind(variant) or start_game first"
            )
        return self._engine

    # -- evaluation --------------------------------------------------------------------------------

    def inputs_of_plays(self, decision: PlayDecision) -> Array:
        """The network inputs of every legal result of ``decision`` (one row each)."""
        return self.engine.inputs_of_plays(decision.plays)

    def inputs_of(self, positions: list[Position]) -> Array:
        """The network inputs of afterstates given as positions (each from its mover's view)."""
        return self.engine.inputs_of(positions)

    def afterstate_equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of ``position``'s mover, who has just played."""
        return self.engine.afterstate_equity(position)

    def equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of the player on roll in ``position``: minus
        that of the opponent's afterstate."""
        return -self.afterstate_equity(self.engine.variant.flip(position))

    def choose_play(self, decision: PlayDecision) -> int:
        """The legal result of highest U; with weights whose sidecar names ``candidates`` k > 0,
        the highest among the k results the heuristic prior ranks best (the network re-ranks the
        heuristic's short list: :mod:`nardy.train.policy_iteration`)."""
        if len(decision.plays) == 1:
            return 0
        if self.ply:
            return self._search(decision)
        engine = self.engine
        inputs = engine.inputs_of_plays(decision.plays)
        values = engine.net.values(inputs)
        k = engine.candidates
        if 0 < k < len(values):
            short_list = np.argsort(-inputs[:, BOARD_SIZE], kind="stable")[:k]
            return int(short_list[np.argmax(values[short_list])])
        return int(np.argmax(values))

    def _search(self, decision: PlayDecision) -> int:
        """The best play by the ``ply``-deep search over the bot's search net
        (:meth:`search_weights`)."""
        if self._searcher is None:
            variant = self.engine.variant
            weights = self.search_weights()
            if weights is None:
                evaluator = NeuralEvaluator(variant, engine=self.engine)
            else:
                evaluator = NeuralEvaluator(variant, weights)
            self._searcher = Searcher(variant, evaluator)
        segment = decision.segment
        ranking = self._searcher.rank(decision.position, segment.dice, self.ply, kind=segment.kind)
        return int(ranking[0].index)

    def search_weights(self) -> Path | None:
        """The net a search deeper than 0-ply reads, where it is not the bot's own (None): with the
        shipped weights, the variant's self-consistent refit of them where one ships and its
        sidecar says ``"search": true`` (``VARIANT.consistent.npz``, docs/analysis.md). A search
        averages the net over the opponent's replies, which helps only a net whose value agrees
        with its own look-ahead: over fevga's shipped play net ``neural:1`` lost to ``neural``
        (−0.09 ± 0.06 points a game, 250 duplicate pairs), over its refit it won (+0.25 ± 0.07,
        150 pairs; +0.33 ± 0.07 since the filtered ranking's fix); the flag marks the refits
        measured so (docs/analysis.md, "Search depth")."""
        if self.weights_path is not None or self._engine is None:
            return None
        name = self._engine.variant.name
        path = shipped_consistent_weights(name)
        if path is None or not fitted_from(path, shipped_weights(name)):
            return None  # no refit, or the refit of a net no longer shipped for `neural`
        return path if load_net(path).meta.get("search") else None

    def offer_double(self, decision: DoubleDecision) -> bool:
        if 2 * decision.cube.value > self.MAX_REDOUBLE or self.dead_cube(decision):
            return False
        equity = self.equity(decision.position)
        return self.DOUBLE_FROM <= equity <= self.TOO_GOOD

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        if decision.after_beaver:
            # The original doubler, on roll, was beavered.
            return "take" if self.equity(decision.position) >= self.TAKE_FROM else "drop"
        # The doubler is on roll: the position is the taker's afterstate.
        equity = self.afterstate_equity(decision.position)
        if decision.beaver_allowed and equity >= self.BEAVER_FROM:
            return "beaver"
        return "take" if equity >= self.TAKE_FROM else "drop"
