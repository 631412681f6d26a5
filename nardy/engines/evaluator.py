"""Evaluators: what the analysis asks of a position — the cubeless equity of the player who has
just moved (an *afterstate*), in points of a single game — and where evaluators come from.

Every evaluator answers for a batch of afterstates at once (one matrix product for a net). The
equity of the player *on roll* in a position ``P`` is minus the afterstate equity of ``P`` seen by
the other player: ``E(P) = −A(flip(P))`` (:func:`equity_on_roll`).

Built in: ``neural`` (the shipped value nets of :mod:`nardy.engines.net`, or ``neural:FILE``),
``neural-consistent`` (the shipped nets refitted so that their 0-ply value matches their own 1-ply
value, :mod:`nardy.train.consistency`: the analysis evaluator with the least luck-adjusted
variance where no gnubg is at hand),
``heuristic`` (the hand-written evaluation of :mod:`nardy.engines.heuristic` squashed into ±1: a deliberately
weak evaluator, useful to show that luck adjustment stays unbiased whatever the evaluator), and
``gnubg`` (backgammon; the optional extra ``nardy[gnubg]``). A plugin adds its own with
:func:`register_evaluator` or an entry point of the group ``nardy.evaluators``
(``name = "module:factory"``, a function ``factory(variant, argument) -> Evaluator``).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from nardy.engines import blas  # noqa: F401  # isort: skip  # single-threaded BLAS, before numpy
import numpy as np
import numpy.typing as npt

from nardy.core.movegen import BoardKey, position_of
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines.heuristic import HeuristicEvaluation
from nardy.engines.heuristic_batch import evaluate_keys, evaluate_many
from nardy.engines.net import (
    Engine,
    NetEngine,
    engine_for,
    load_net,
    shipped_consistent_weights,
    shipped_weights,
)

if TYPE_CHECKING:
    from nardy.engines.gnubg import Probabilities as GnubgProbabilities

__all__ = [
    "ENTRY_POINT_GROUP",
    "Evaluator",
    "EvaluatorFactory",
    "GnubgEvaluator",
    "HeuristicEvaluator",
    "NeuralEvaluator",
    "Probabilities",
    "consistent_weights",
    "equity_on_roll",
    "evaluator_names",
    "key_equities",
    "make_evaluator",
    "neural_bot_argument",
    "register_evaluator",
    "shortlist",
    "shortlists",
]

Array = npt.NDArray[np.float64]
ENTRY_POINT_GROUP = "nardy.evaluators"


class Probabilities(Protocol):
    """Cubeless outcome probabilities of the player on roll (gnubg's five numbers)."""

    @property
    def win(self) -> float: ...

    @property
    def win_gammon(self) -> float: ...

    @property
    def win_backgammon(self) -> float: ...

    @property
    def lose_gammon(self) -> float: ...

    @property
    def lose_backgammon(self) -> float: ...


@runtime_checkable
class Evaluator(Protocol):
    """What the analysis needs from an evaluation function. Optional methods, found by name:
    ``shortlist`` and ``shortlist_keys`` (a net that chooses among a short list) and
    ``key_equities`` (:func:`key_equities`)."""

    name: str
    """A short name for reports (``neural``, ``gnubg``)."""

    def afterstate_equities(self, positions: Sequence[Position]) -> Array:
        """The cubeless equity, in points of a single game, of the player who has just moved into
        each position (seen from his side; the opponent is to roll). Never asked for a finished
        position (the analysis scores those exactly)."""
        ...

    def probabilities(self, position: Position) -> Probabilities | None:
        """The cubeless probabilities of the player on roll in ``position``, or None if the
        evaluator gives an equity only (then the cube analysis derives gammonless ones)."""
        ...


def shortlist(evaluator: Evaluator, positions: Sequence[Position]) -> list[int] | None:
    """The afterstates among which a choice is made (an evaluator's optional ``shortlist``
    method: a net trained on a short list of candidates), or None for all of them."""
    method = getattr(evaluator, "shortlist", None)
    return None if method is None else method(positions)


def shortlists(
    evaluator: Evaluator, groups: Sequence[Sequence[BoardKey]]
) -> list[list[int] | None]:
    """:func:`shortlist` of each group of results given as generator board keys (a decision's 21
    rolls): in one batch where the evaluator has ``shortlist_keys``, else group by group."""
    method = getattr(evaluator, "shortlist_keys", None)
    if method is not None:
        chosen: list[list[int] | None] = method(groups)
        return chosen
    if getattr(evaluator, "shortlist", None) is None:
        return [None] * len(groups)
    return [shortlist(evaluator, [position_of(key) for key in keys]) for keys in groups]


def key_equities(evaluator: Evaluator, keys: Sequence[BoardKey]) -> Array:
    """``afterstate_equities`` of afterstates given as generator board keys: read from the keys
    where the evaluator has ``key_equities`` (a net: the search values most results of 21 rolls
    and made a position of each), else of their positions."""
    method = getattr(evaluator, "key_equities", None)
    if method is not None:
        values: Array = method(keys)
        return values
    return evaluator.afterstate_equities([position_of(key) for key in keys])


def equity_on_roll(evaluator: Evaluator, variant: Variant, position: Position) -> float:
    """The 0-ply cubeless equity of the player on roll in ``position``."""
    return -float(evaluator.afterstate_equities([variant.flip(position)])[0])


class NeuralEvaluator:
    """A value net (:class:`~nardy.engines.net.NetEngine`): ``U(r) × scale``."""

    name = "neural"

    def __init__(
        self,
        variant: Variant,
        weights: str | Path | None = None,
        engine: Engine | None = None,
        name: str = "neural",
    ) -> None:
        """``engine``: a net already bound to ``variant`` (a bot's own); else the weights at
        ``weights``, or those shipped for ``variant``."""
        if engine is None:
            net = load_net(Path(weights) if weights else shipped_weights(variant.name))
            engine = engine_for(net, variant)
        self.name = name
        self.variant = variant
        self.engine = engine
        self.candidates = engine.candidates
        """Weights trained to re-rank the heuristic's ``k`` best results choose among those only
        (as :meth:`~nardy.bots.neural.NeuralBot.choose_play` does); 0: among all."""

    def shortlist(self, positions: Sequence[Position]) -> list[int] | None:
        """The indexes of the afterstates a choice may take (the heuristic's ``candidates`` best,
        in the bot's order), or None for all."""
        k = self.candidates
        if not 0 < k < len(positions):
            return None
        assert isinstance(self.engine, NetEngine)  # an outcome net has no short list
        return _first_k(evaluate_many(self.engine.heuristic, positions), [len(positions)], k)[0]

    def shortlist_keys(self, groups: Sequence[Sequence[BoardKey]]) -> list[list[int] | None]:
        """:meth:`shortlist` of each group of results given as board keys, the heuristic of all
        groups in one batch (the same values, so the same lists)."""
        k = self.candidates
        out: list[list[int] | None] = [None] * len(groups)
        long_groups = [i for i, keys in enumerate(groups) if 0 < k < len(keys)]
        if not long_groups:
            return out
        assert isinstance(self.engine, NetEngine)  # an outcome net has no short list
        priors = evaluate_keys(
            self.engine.heuristic, [key for i in long_groups for key in groups[i]]
        )
        chosen = _first_k(priors, [len(groups[i]) for i in long_groups], k)
        for i, indexes in zip(long_groups, chosen, strict=True):
            out[i] = indexes
        return out

    def afterstate_equities(self, positions: Sequence[Position]) -> Array:
        if not positions:
            return np.empty(0)
        return self.engine.afterstate_equities(positions)

    def key_equities(self, keys: Sequence[BoardKey]) -> Array:
        """:meth:`afterstate_equities` of afterstates given as the generator's board keys."""
        if not keys:
            return np.empty(0)
        return self.engine.key_equities(keys)

    def probabilities(self, position: Position) -> Probabilities | None:
        return None


def _first_k(priors: Array, sizes: Sequence[int], k: int) -> list[list[int]]:
    """For consecutive groups of ``sizes`` rows of ``priors``, the indexes (within its group) of
    each group's ``k`` highest, ties to the earlier: one stable sort by (group, −prior)."""
    owner = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((-priors, owner)).tolist()
    out: list[list[int]] = []
    start = 0
    for size in sizes:
        out.append([j - start for j in order[start : start + k]])
        start += size
    return out


class HeuristicEvaluator:
    """``tanh(h / 50)`` of the heuristic evaluation ``h`` (pip-equivalents): an equity in
    ±1 that knows nothing of gammons. Weak on purpose (tests, control-variate demonstrations)."""

    name = "heuristic"

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.evaluation = HeuristicEvaluation.of(variant)

    def afterstate_equities(self, positions: Sequence[Position]) -> Array:
        # The heuristic of the batch at once (equal to one by one, value for value): a khachapuri
        # analysis asks for 425,629 afterstates to value 87 decisions' luck, and one by one they
        # were a tenth of its time. ``math.tanh`` of each, as before: numpy's may differ in the
        # last bit.
        return self._squashed(evaluate_many(self.evaluation, positions))

    def key_equities(self, keys: Sequence[BoardKey]) -> Array:
        """:meth:`afterstate_equities` of afterstates given as the generator's board keys."""
        return self._squashed(evaluate_keys(self.evaluation, keys))

    @staticmethod
    def _squashed(heuristic: Array) -> Array:
        return np.array([math.tanh(value / 50.0) for value in heuristic.tolist()], dtype=np.float64)

    def probabilities(self, position: Position) -> Probabilities | None:
        return None


class GnubgEvaluator:
    """GNU Backgammon's 0-ply net (cubeless), for backgammon."""

    name = "gnubg"

    def __init__(self, variant: Variant) -> None:
        if variant.name != "backgammon":
            raise ValueError(f"the gnubg evaluator is for backgammon only, not {variant.name}")
        from nardy.engines.gnubg import load_gnubg

        self.variant = variant
        self._gnubg = load_gnubg()
        self._context = self._gnubg.evalcontext(0, 0, 1, 0, 0.0)  # cubeless, 0-ply
        # A centred cube of 1, money play, the player on roll as gnubg's player 0.
        self._cubeinfo = self._gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0, 0)

    def afterstate_equities(self, positions: Sequence[Position]) -> Array:
        from nardy.engines.gnubg import cubeless_probabilities_of

        # gnubg evaluates the player on roll: the opponent, in the flipped position.
        flipped = [self.variant.flip(p) for p in positions]
        found = cubeless_probabilities_of(self._gnubg, flipped, self._cubeinfo, self._context)
        return np.array([-p.equity for p in found], dtype=np.float64)

    def probabilities(self, position: Position) -> Probabilities | None:
        return self._probabilities(position)

    def _probabilities(self, position: Position) -> GnubgProbabilities:
        from nardy.engines.gnubg import cubeless_probabilities

        return cubeless_probabilities(self._gnubg, position, self._cubeinfo, self._context)


CONSISTENT_SUFFIX = ".consistent"
"""The shipped self-consistent nets are ``nardy/engines/weights/VARIANT.consistent.npz``."""


def consistent_weights(variant_name: str) -> Path:
    """The path of the self-consistent analysis net shipped for ``variant_name``."""
    path = shipped_consistent_weights(variant_name)
    if path is None:
        raise ValueError(
            f"no self-consistent analysis net for variant {variant_name!r}; fit one with: "
            f"python -m nardy.train.consistency --variant {variant_name} --out FILE.npz "
            "(then use the evaluator neural:FILE)"
        )
    return path


def _consistent(variant: Variant, argument: str | None) -> Evaluator:
    if argument:
        raise ValueError("the neural-consistent evaluator takes no argument (use neural:FILE)")
    return NeuralEvaluator(variant, consistent_weights(variant.name), name="neural-consistent")


EvaluatorFactory = Callable[[Variant, str | None], Evaluator]
"""Makes an evaluator for a variant; the argument is what follows ``name:`` (or None)."""

_REGISTRY: dict[str, EvaluatorFactory] = {
    "neural": lambda variant, argument: NeuralEvaluator(variant, argument or None),
    "heuristic": lambda variant, argument: HeuristicEvaluator(variant),
    "gnubg": lambda variant, argument: GnubgEvaluator(variant),
    "neural-consistent": _consistent,
}


def register_evaluator(name: str, factory: EvaluatorFactory) -> None:
    """Make ``name`` (and ``name:ARGUMENT``) known to :func:`make_evaluator`."""
    if not name or ":" in name:
        raise ValueError(f"an evaluator name is a word without ':', not {name!r}")
    _REGISTRY[name] = factory


@cache
def _entry_points() -> dict[str, str]:
    """The installed evaluators' entry points, read once per process (as the bots' are,
    :func:`nardy.bots.registry.installed_bots`); callers do not change the dict."""
    from importlib import metadata

    return {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def evaluator_names() -> list[str]:
    """Every evaluator known by name (built in, registered, installed)."""
    return sorted({*_REGISTRY, *_entry_points()})


def make_evaluator(spec: str, variant: Variant) -> Evaluator:
    """The evaluator ``spec`` names (``neural``, ``neural:FILE``, ``gnubg``, a registered or
    installed one) for ``variant``; :class:`ValueError` if unknown or unusable."""
    name, colon, argument = spec.partition(":")
    factory = _REGISTRY.get(name)
    if factory is None:
        reference = _entry_points().get(name)
        if reference is None:
            raise ValueError(f"unknown evaluator {spec!r}; known: {', '.join(evaluator_names())}")
        module_name, _, attribute = reference.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"cannot load evaluator {reference!r}: {error}") from None
    evaluator = factory(variant, argument if colon else None)
    if not isinstance(evaluator, Evaluator):
        raise ValueError(f"evaluator {spec!r} does not provide afterstate_equities/probabilities")
    return evaluator


STRONGEST = "strongest"
"""The evaluator name that stands for the strongest one available for each game's variant."""

JUDGES: dict[str, tuple[str, ...]] = {"backgammon": ("gnubg", "neural")}
"""By variant, the evaluators to judge with, strongest first, as measured (docs/analysis.md,
"Evaluators"): GNU Backgammon's net where it is installed, then nardy's shipped net; a variant
not listed is judged by its shipped net (``neural``), and one without a net by ``heuristic``."""


def strongest_evaluator(variant: Variant) -> str:
    """The name of the strongest evaluator available for ``variant`` (:data:`JUDGES`): the first
    that loads here (gnubg needs its package; ``neural`` a shipped net), else ``heuristic``."""
    for name in (*JUDGES.get(variant.name, ("neural",)), "heuristic"):
        try:
            make_evaluator(name, variant)
        except (ValueError, ImportError, OSError):
            continue
        return name
    raise ValueError(f"no evaluator can judge variant {variant.name!r}")  # pragma: no cover


def neural_bot_argument(argument: str) -> tuple[int | None, str | None]:
    """The ``neural`` bot's argument read as ``PLY``, ``PLY:FILE`` or ``FILE``: (the search
    depth or None, the weights file or None for the shipped net). A file named like a number is
    still reachable as ``./3``. The bot and :func:`judges_itself` both read it here."""
    head, colon, tail = argument.strip().partition(":")
    if head.isdigit() and not colon:
        return int(head), None
    if head.isdigit() and tail:
        return int(head), tail
    return None, argument


def judges_itself(bot: str, evaluator: str) -> bool:
    """Whether a bot named ``bot`` plays by the very net the evaluator ``evaluator`` judges with:
    its errors then measure disagreement with itself (0 at 0-ply), not skill. The ``neural`` bot
    (any depth, ``neural:PLY``) plays the shipped net, as the ``neural`` evaluator judges; a bot
    ``neural:FILE`` (or ``neural:PLY:FILE``) the file ``neural:FILE`` names; the ``gnubg`` bot (any ply) plays GNU
    Backgammon's net, which the ``gnubg`` evaluator judges with."""
    bot_name, _, bot_argument = bot.partition(":")
    name, _, argument = evaluator.partition(":")
    if bot_name == "gnubg" and name == "gnubg":
        return True
    if bot_name != "neural" or name != "neural":
        return False
    bot_file = neural_bot_argument(bot_argument)[1] if bot_argument else None
    if bot_file is None:  # the shipped net, at any depth
        return not argument
    return Path(bot_file).resolve() == Path(argument).resolve() if argument else False
