"""The value network of the neural bots and analysis: a small net over afterstates, numpy only.

The network estimates **U(r)**: the points per game (divided by the variant's ``scale``) that the
player who has just played expects from the afterstate ``r`` (a play's result, still from his view).
Its inputs are the shared board encoding ``nardy196_v1`` of :mod:`nardy.encoding` plus one prior
unit, the hand-written evaluation of :mod:`nardy.engines.heuristic` divided by
:data:`PRIOR_SCALE`::

    U(r) = v · tanh(W [x; g] + b) + c + a · g        x = encode(r), g = heuristic(r) / PRIOR_SCALE

The skip term ``a · g`` makes an untrained network play like the heuristic; training then learns
the corrections in the hidden layer, by Monte Carlo policy iteration from the heuristic's play
(:mod:`nardy.train.policy_iteration`, the default) or by TD(λ) self-play (:mod:`nardy.train.td`).
A decision evaluates all legal results in one batch (one ``(n, 197) @ (197, H)`` product).

:class:`ValueNet` is the parameters and the forward pass; :class:`NetEngine` is a net bound to a
variant, which builds the inputs of afterstates and answers their equities in points: the one
thing both the ``neural`` bot (:mod:`nardy.bots.neural`) and the ``neural`` evaluator
(:mod:`nardy.engines.evaluator`) ask of a net.

Weights are an ``.npz`` (arrays only, loaded with ``allow_pickle=False``) with a JSON sidecar of the
same stem holding what is needed to use and trust them (format, encoder, sizes, variant, scale,
training record, sha256 of the ``.npz``). The shipped ones are in ``nardy/engines/weights/``.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nardy.core.movegen import BoardKey
from nardy.core.position import Position
from nardy.core.variant import LegalPlays, Variant
from nardy.encoding import BOARD_ENCODER, BOARD_SIZE, encode_batch, encode_keys, encode_plays
from nardy.engines.heuristic import HeuristicEvaluation
from nardy.engines.heuristic_batch import evaluate_keys, evaluate_many
from nardy.engines.outcome_net import OutcomeEngine, OutcomeNet, is_outcome_sidecar, read_sidecar

__all__ = [
    "FORMAT",
    "INPUTS",
    "PRIOR_SCALE",
    "Engine",
    "Net",
    "NetEngine",
    "ValueNet",
    "engine_for",
    "fitted_from",
    "load_net",
    "scale_for",
    "shipped_consistent_weights",
    "shipped_value_weights",
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
        meta = read_sidecar(path)
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


def _weights_file(name: str) -> Path:
    return Path(str(resources.files("nardy.engines") / "weights" / name))


def shipped_weights(variant_name: str) -> Path:
    """The path of the net ``neural`` plays for ``variant_name`` (``VARIANT.npz``): an outcome net
    of batched TD where one has been measured stronger and shipped, else the value net of policy
    iteration (docs/bots.md)."""
    path = _weights_file(f"{variant_name}.npz")
    if not path.is_file():
        raise ValueError(
            f"no shipped neural weights for variant {variant_name!r}; "
            f"train some with: nardy train --variant {variant_name} --out FILE.npz"
        )
    return path


def shipped_value_weights(variant_name: str) -> Path:
    """The value net of policy iteration shipped for ``variant_name`` (the format
    :class:`ValueNet` reads, which the self-consistent refits start from): ``VARIANT.value.npz``
    where an outcome net has taken its place as ``VARIANT.npz``, else ``VARIANT.npz``."""
    kept = _weights_file(f"{variant_name}.value.npz")
    return kept if kept.is_file() else shipped_weights(variant_name)


def _sha256_of_sidecar(path: Path) -> object:
    try:
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta.get("sha256") if isinstance(meta, dict) else None


def shipped_consistent_weights(variant_name: str) -> Path | None:
    """The self-consistent refit shipped for ``variant_name``, where one ships
    (``VARIANT.consistent.npz``: a value net's 0-ply value fitted to its own 1-ply,
    docs/analysis.md); :func:`fitted_from` says which net it is a refit of."""
    path = _weights_file(f"{variant_name}.consistent.npz")
    return path if path.is_file() else None


def fitted_from(refit: Path, net: Path) -> bool:
    """Whether the refit at ``refit`` was fitted from the net at ``net`` (its sidecar's
    ``shipped_sha256`` is ``net``'s sha256; a refit that does not say is taken to be). A refit
    stands for the net it was fitted from only: once an outcome net ships in a value net's place,
    the value net's refit is not the new net's."""
    try:
        meta = json.loads(refit.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # a broken refit is reported by the loader that reads it
    consistency = meta.get("consistency") if isinstance(meta, dict) else None
    base = consistency.get("shipped_sha256") if isinstance(consistency, dict) else None
    return base is None or base == _sha256_of_sidecar(net)


class NetEngine:
    """A :class:`ValueNet` bound to a variant: the inputs of afterstates (the board encoding and the
    heuristic prior) and their cubeless equities, ``U(r) × scale`` in points of a single game.

    It holds ``net`` itself, not a copy: a trainer that updates the net's arrays in place sees the
    engine follow. A :class:`ValueError` for a net trained for another variant."""

    def __init__(self, net: ValueNet, variant: Variant) -> None:
        trained_for = net.meta.get("variant")
        if trained_for is not None and trained_for != variant.name:
            raise ValueError(
                f"these neural weights were trained for {trained_for!r}, not {variant.name!r}"
            )
        self.net = net
        self.variant = variant
        self.heuristic = HeuristicEvaluation.of(variant)
        """The heuristic evaluation, the prior unit."""
        self.scale = float(net.meta.get("scale", scale_for(variant)))
        """Points of a single game that the net's output 1.0 stands for."""

    @property
    def candidates(self) -> int:
        """Weights trained to re-rank the heuristic's ``k`` best results choose among those only
        (:mod:`nardy.train.policy_iteration`); 0: among all. Read from the net's sidecar at each
        use (a trainer may change it)."""
        return int(self.net.meta.get("candidates", 0))

    def inputs_of_plays(self, plays: LegalPlays) -> Array:
        """The network inputs of every legal result in ``plays`` (one row each)."""
        out = np.empty((len(plays), INPUTS))
        out[:, :BOARD_SIZE] = encode_plays(plays)
        out[:, BOARD_SIZE] = evaluate_many(self.heuristic, plays.positions())
        self._squash(out)
        return out

    def inputs_of(self, positions: Sequence[Position]) -> Array:
        """The network inputs of afterstates given as positions (each from its mover's view)."""
        out = np.empty((len(positions), INPUTS))
        out[:, :BOARD_SIZE] = encode_batch(positions)
        out[:, BOARD_SIZE] = evaluate_many(self.heuristic, positions)
        self._squash(out)
        return out

    def inputs_of_keys(self, keys: Sequence[BoardKey]) -> Array:
        """:meth:`inputs_of` afterstates given as the generator's board keys, equal row for row,
        without a :class:`Position` each (:func:`~nardy.encoding.encode_keys`)."""
        out = np.empty((len(keys), INPUTS))
        out[:, :BOARD_SIZE] = encode_keys(keys)
        out[:, BOARD_SIZE] = evaluate_keys(self.heuristic, keys)
        self._squash(out)
        return out

    def _squash(self, out: Array) -> None:
        """The prior unit: heuristic / scale, through tanh for nets trained with ``prior: tanh``."""
        net = self.net
        column = out[:, BOARD_SIZE] / float(net.meta.get("prior_scale", PRIOR_SCALE))
        out[:, BOARD_SIZE] = np.tanh(column) if net.meta.get("prior") == "tanh" else column

    def afterstate_equities(self, positions: Sequence[Position]) -> Array:
        """The cubeless equity (points of a single game) of each afterstate's mover, in one batch."""
        values: Array = self.net.values(self.inputs_of(positions)) * self.scale
        return values

    def key_equities(self, keys: Sequence[BoardKey]) -> Array:
        """:meth:`afterstate_equities` of afterstates given as the generator's board keys."""
        values: Array = self.net.values(self.inputs_of_keys(keys)) * self.scale
        return values

    def afterstate_equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of ``position``'s mover, who has just played."""
        return float(self.net.values(self.inputs_of([position]))[0]) * self.scale

    def equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of the player on roll in ``position``: minus
        that of the opponent's afterstate."""
        return -self.afterstate_equity(self.variant.flip(position))


Net = ValueNet | OutcomeNet
"""Either format of weights: the prior-input net, or the outcome net of ``nardy train --method
batched-td`` (:mod:`nardy.engines.outcome_net`, no heuristic input)."""
Engine = NetEngine | OutcomeEngine

_OUTCOME_CACHE: dict[tuple[str, int], OutcomeNet] = {}


def load_net(path: Path) -> Net:
    """The weights at ``path`` in whichever format its sidecar names (a clear
    :class:`ValueError` for a missing, corrupt or mismatched file, as :meth:`ValueNet.load`);
    outcome nets are cached by path and modification time like :meth:`ValueNet.load`'s."""
    path = Path(path)
    sidecar = path.with_suffix(".json")
    meta: object = None
    if path.is_file() and sidecar.is_file():
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            meta = None  # ValueNet.load names the fault
    if not is_outcome_sidecar(meta):
        return ValueNet.load(path)
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    cached = _OUTCOME_CACHE.get(key)
    if cached is None:
        cached = _OUTCOME_CACHE[key] = OutcomeNet.from_file(path, meta)[0]
    return cached.copy()


def engine_for(net: Net, variant: Variant) -> Engine:
    """``net`` bound to ``variant``: the engine of its format."""
    if isinstance(net, OutcomeNet):
        return OutcomeEngine(net, variant)
    return NetEngine(net, variant)
