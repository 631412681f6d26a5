"""The neural bot: a small value network over afterstates, numpy only.

The network estimates **U(r)**: the points per game (divided by the variant's ``scale``) that the
player who has just played expects from the afterstate ``r`` (a play's result, still from his view).
Its inputs are the shared board encoding ``nardy196_v1`` of :mod:`nardy.encoding` plus one prior
unit, the hand-written evaluation of :class:`~nardy.bots.heuristic.HeuristicBot` divided by
:data:`PRIOR_SCALE`::

    U(r) = v · tanh(W [x; g] + b) + c + a · g        x = encode(r), g = heuristic(r) / PRIOR_SCALE

The skip term ``a · g`` makes an untrained network play like the heuristic; training then learns
the corrections in the hidden layer, by Monte Carlo policy iteration from the heuristic's play
(:mod:`nardy.train.policy_iteration`, the default) or by TD(λ) self-play (:mod:`nardy.train.td`). A decision evaluates all
legal results in one batch (one ``(n, 197) @ (197, H)`` product) and plays the best.

Cube (backgammon; a documented rule, not a cubeful evaluation): the equity of the player on roll is
``E = −U(flip(position)) · scale`` in points of a single game, cubeless. He doubles when
``DOUBLE_FROM ≤ E ≤ TOO_GOOD`` (above, he plays on for the gammon), takes while his own
``E ≥ TAKE_FROM`` (the 25 % take point of a gammonless game is −0.5) and beavers at ``E ≥ BEAVER_FROM``.
It never turns the cube beyond ``MAX_REDOUBLE`` (8): against a bot that takes and redoubles freely,
an unbounded cube turns a few swingy games into results of thousands of points.

Weights are an ``.npz`` (arrays only, loaded with ``allow_pickle=False``) with a JSON sidecar of the
same stem holding what is needed to use and trust them (format, encoder, sizes, variant, scale,
training record, sha256 of the ``.npz``).
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.bots import _blas  # noqa: F401  # isort: skip

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nardy.bots.base import Bot
from nardy.bots.heuristic import HeuristicBot
from nardy.bots.heuristic_batch import evaluate_many
from nardy.core.game import CubeAnswer, DoubleDecision, PlayDecision, TakeDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.encoding import BOARD_ENCODER, BOARD_SIZE, encode_batch, encode_plays

__all__ = [
    "FORMAT",
    "PRIOR_SCALE",
    "NeuralBot",
    "ValueNet",
    "scale_for",
    "shipped_weights",
]

Array = npt.NDArray[np.float64]

FORMAT = "nardy-td-v1"
"""The weights format written in every sidecar; a loader refuses any other."""
PRIOR_SCALE = 50.0
"""The heuristic's evaluation is in pip-equivalents; 50 pips ≈ one point is the prior's unit."""
INPUTS = BOARD_SIZE + 1


def scale_for(variant: Variant) -> float:
    """Points that the network's output 1.0 stands for: 15 under per-checker scoring (the stake is
    paid per checker not borne off), else 3 (the largest ordinary game value: backgammon, koks)."""
    return 15.0 if variant.rules.scoring.per_checker else 3.0


@dataclass(slots=True)
class ValueNet:
    """The network's parameters and its batched forward pass (see the module docstring)."""

    w: Array
    """Hidden weights, shape (H, 197)."""
    b: Array
    """Hidden biases, shape (H,)."""
    v: Array
    """Output weights, shape (H,)."""
    c: float
    """Output bias."""
    a: float
    """Weight of the skip connection from the prior unit."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The sidecar's content (variant, scale, training record …)."""

    @classmethod
    def initial(cls, hidden: int, rng: np.random.Generator, meta: dict[str, Any]) -> ValueNet:
        """Small random hidden weights and a skip weight that makes the net play like its prior."""
        w = rng.normal(0.0, 0.1 / np.sqrt(INPUTS), size=(hidden, INPUTS))
        v = rng.normal(0.0, 0.01, size=hidden)
        return cls(w, np.zeros(hidden), v, 0.0, 0.3, meta)

    @property
    def hidden(self) -> int:
        return int(self.w.shape[0])

    def params(self) -> dict[str, Array]:
        return {
            "w": self.w,
            "b": self.b,
            "v": self.v,
            "c": np.array([self.c]),
            "a": np.array([self.a]),
        }

    @classmethod
    def from_params(cls, params: dict[str, Array], meta: dict[str, Any]) -> ValueNet:
        """The inverse of :meth:`params` (the arrays are used as they are, not copied)."""
        return cls(
            params["w"],
            params["b"],
            params["v"],
            float(params["c"][0]),
            float(params["a"][0]),
            meta,
        )

    def values(self, inputs: Array) -> Array:
        """U for each row of ``inputs`` (shape (n, 197)): one matrix product for the batch."""
        hidden = np.tanh(inputs @ self.w.T + self.b)
        result: Array = hidden @ self.v + self.c + self.a * inputs[:, -1]
        return result

    # -- files -----------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write ``path`` (.npz) and its sidecar ``path.with_suffix('.json')``."""
        path = Path(path)
        params = self.params()
        with path.open("wb") as fh:
            np.savez(fh, w=params["w"], b=params["b"], v=params["v"], c=params["c"], a=params["a"])
        meta = dict(self.meta)
        meta.setdefault("prior", "linear")
        meta.setdefault("prior_scale", PRIOR_SCALE)
        meta.update(
            format=FORMAT,
            encoder=BOARD_ENCODER,
            inputs=INPUTS,
            hidden=self.hidden,
            sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> ValueNet:
        """Read weights written by :meth:`save`; a clear :class:`ValueError` for anything else.

        Loaded files are cached by path and modification time (a tournament makes a bot per game);
        each call returns its own copy."""
        path = Path(path)
        try:
            key = (str(path.resolve()), path.stat().st_mtime_ns)
        except OSError:
            key = None
        cached = _CACHE.get(key) if key else None
        if cached is None:
            cached = cls._read(path)
            if key:
                _CACHE[key] = cached
        return cls(
            cached.w.copy(), cached.b.copy(), cached.v.copy(), cached.c, cached.a, dict(cached.meta)
        )

    @classmethod
    def _read(cls, path: Path) -> ValueNet:
        sidecar = path.with_suffix(".json")
        if not path.is_file():
            raise ValueError(f"no weights file {str(path)!r}")
        if not sidecar.is_file():
            raise ValueError(f"weights {str(path)!r} have no sidecar {sidecar.name!r}")
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{sidecar}: not JSON ({error})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError(f"{sidecar}: not a {FORMAT} sidecar")
        if meta.get("encoder") != BOARD_ENCODER or meta.get("inputs") != INPUTS:
            raise ValueError(f"{sidecar}: encoder {meta.get('encoder')!r} is not {BOARD_ENCODER}")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
            raise ValueError(f"{path}: sha256 differs from the sidecar's (file changed?)")
        try:
            with np.load(path, allow_pickle=False) as arrays:
                params = {name: np.asarray(arrays[name], dtype=np.float64) for name in "wbvca"}
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"{path}: not a weights archive ({error})") from None
        hidden = int(meta.get("hidden", -1))
        if params["w"].shape != (hidden, INPUTS) or params["b"].shape != (hidden,):
            raise ValueError(f"{path}: array shapes do not match the sidecar")
        return cls.from_params(params, meta)


_CACHE: dict[tuple[str, int], ValueNet] = {}


def shipped_weights(variant_name: str) -> Path:
    """The path of the weights shipped in the package for ``variant_name``."""
    path = Path(str(resources.files("nardy.bots") / "weights" / f"{variant_name}.npz"))
    if not path.is_file():
        raise ValueError(
            f"no shipped neural weights for variant {variant_name!r}; "
            f"train some with: nardy train --variant {variant_name} --out FILE.npz"
        )
    return path


def shipped_consistent_weights(variant_name: str) -> Path | None:
    """The self-consistent refit of ``variant_name``'s shipped weights, where one ships
    (``VARIANT.consistent.npz``: its 0-ply value fitted to its own 1-ply, docs/analysis.md)."""
    path = Path(str(resources.files("nardy.bots") / "weights" / f"{variant_name}.consistent.npz"))
    return path if path.is_file() else None


MAX_PLY = 3
"""The deepest search ``neural:PLY`` accepts (2-ply already costs about 20× a 1-ply decision)."""


class NeuralBot(Bot):
    """Plays the legal result of highest network value; cube by the rule of the module docstring.

    ``weights``: a path (``neural:FILE``) or ``None`` for the weights shipped for the game's variant,
    loaded at :meth:`start_game` (or :meth:`bind`); a number 0…:data:`MAX_PLY` instead
    (``neural:1``) is the search depth ``ply`` with the shipped weights. At ``ply`` n > 0 a play is
    chosen by the n-ply search of :mod:`nardy.analysis.search` (gnubg-style move filtering) over
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
        if isinstance(weights, str) and weights.strip().isdigit():
            ply, weights = int(weights), None
        if not 0 <= ply <= MAX_PLY:
            raise ValueError(f"neural:PLY needs a ply 0-{MAX_PLY}, not {ply}")
        self.ply = ply
        self.name = f"neural:{ply}" if ply else "neural"
        self._searcher: Any = None
        self.seed = seed
        self.weights_path = Path(weights) if weights is not None else None
        self.net: ValueNet | None = None
        if self.weights_path is not None:
            self.net = ValueNet.load(self.weights_path)
        self._heuristic = HeuristicBot(seed)
        self._variant: Variant | None = None
        self._scale = 3.0
        if variant is not None:
            self.bind(variant)

    def bind(self, variant: Variant, net: ValueNet | None = None) -> None:
        """Use ``variant``'s rules (and ``net``, or the loaded or shipped weights)."""
        if net is not None:
            self.net = net
        elif self.net is None or (
            self.weights_path is None and self.net.meta.get("variant") != variant.name
        ):
            self.net = ValueNet.load(shipped_weights(variant.name))
        trained_for = self.net.meta.get("variant")
        if trained_for is not None and trained_for != variant.name:
            raise ValueError(
                f"these neural weights were trained for {trained_for!r}, not {variant.name!r}"
            )
        self._variant = variant
        self._heuristic.bind(variant)
        self._scale = float(self.net.meta.get("scale", scale_for(variant)))
        self._searcher = None

    def start_game(self, variant: Variant, colour: int) -> None:
        if self._variant is not variant:
            self.bind(variant)

    def _net(self) -> ValueNet:
        if self.net is None or self._variant is None:
            raise RuntimeError(
                "NeuralBot needs the variant: call bind(variant) or start_game first"
            )
        return self.net

    # -- evaluation --------------------------------------------------------------------------------

    def inputs_of_plays(self, decision: PlayDecision) -> Array:
        """The network inputs of every legal result of ``decision`` (one row each)."""
        plays = decision.plays
        out = np.empty((len(plays), INPUTS))
        out[:, :BOARD_SIZE] = encode_plays(plays)
        out[:, BOARD_SIZE] = evaluate_many(self._heuristic, plays.positions())
        self._squash(out)
        return out

    def _squash(self, out: Array) -> None:
        """The prior unit: heuristic / scale, through tanh for nets trained with ``prior: tanh``."""
        net = self._net()
        column = out[:, BOARD_SIZE] / float(net.meta.get("prior_scale", PRIOR_SCALE))
        out[:, BOARD_SIZE] = np.tanh(column) if net.meta.get("prior") == "tanh" else column

    def inputs_of(self, positions: list[Position]) -> Array:
        """The network inputs of afterstates given as positions (each from its mover's view)."""
        out = np.empty((len(positions), INPUTS))
        out[:, :BOARD_SIZE] = encode_batch(positions)
        out[:, BOARD_SIZE] = evaluate_many(self._heuristic, positions)
        self._squash(out)
        return out

    def afterstate_equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of ``position``'s mover, who has just played."""
        return float(self._net().values(self.inputs_of([position]))[0]) * self._scale

    def equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of the player on roll in ``position``: minus
        that of the opponent's afterstate."""
        self._net()
        assert self._variant is not None
        return -self.afterstate_equity(self._variant.flip(position))

    def net_values(self, decision: PlayDecision) -> Array:
        """U of every legal result of ``decision``, in one batch."""
        return self._net().values(self.inputs_of_plays(decision))

    def choose_play(self, decision: PlayDecision) -> int:
        """The legal result of highest U; with weights whose sidecar names ``candidates`` k > 0,
        the highest among the k results the heuristic prior ranks best (the network re-ranks the
        heuristic's short list: :mod:`nardy.train.policy_iteration`)."""
        if len(decision.plays) == 1:
            return 0
        if self.ply:
            return self._search(decision)
        net = self._net()
        inputs = self.inputs_of_plays(decision)
        values = net.values(inputs)
        k = int(net.meta.get("candidates", 0))
        if 0 < k < len(values):
            short_list = np.argsort(-inputs[:, BOARD_SIZE], kind="stable")[:k]
            return int(short_list[np.argmax(values[short_list])])
        return int(np.argmax(values))

    def _search(self, decision: PlayDecision) -> int:
        """The best play by the ``ply``-deep search over the bot's search net
        (:meth:`search_weights`)."""
        if self._searcher is None:
            from nardy.analysis.evaluator import NeuralEvaluator
            from nardy.analysis.search import Searcher

            assert self._variant is not None
            weights = self.search_weights()
            if weights is None:
                evaluator = NeuralEvaluator(self._variant, bot=self)
            else:
                evaluator = NeuralEvaluator(self._variant, weights)
            self._searcher = Searcher(self._variant, evaluator)
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
        if self.weights_path is not None or self._variant is None:
            return None
        path = shipped_consistent_weights(self._variant.name)
        if path is None or not ValueNet.load(path).meta.get("search"):
            return None
        return path

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
