"""The outcome network: a value net over afterstates that stands on its own (no heuristic input).

The net reads an afterstate's board encoding ``nardy196_v1`` (:mod:`nardy.encoding`, the mover's
view, after his play) and answers the probabilities of the outcomes the variant scores, from the
mover's side, through one hidden ``tanh`` layer and sigmoid outputs::

    p = sigmoid(W2 · tanh(W1 x + b1) + b2)

For a variant whose games are worth at most ``L`` points before the cube (RULES.md §6: backgammon
3 — single, gammon, backgammon; long 3 — oyn, mars, koks; fevga 2; khachapuri 15, per checker), the
``2L − 1`` outputs are cumulative: ``p[k−1] = P(the mover wins ≥ k points)`` for k = 1…L, then
``P(he loses ≥ k points)`` for k = 2…L (losing ≥ 1 is 1 − winning ≥ 1). The cubeless equity in
points is their combination::

    E = Σₖ P(win ≥ k) − Σₖ P(lose ≥ k) = 2 p₁ − 1 + Σ_{k≥2} (P(win ≥ k) − P(lose ≥ k))

and :meth:`OutcomeNet.values` answers ``E / scale`` — the same unit as the prior-input
:class:`~nardy.engines.net.ValueNet`'s ``U`` — so the ``neural`` bot and evaluator use either.

Weights are an ``.npz`` (float32 arrays ``w1 b1 w2 b2``, loaded with ``allow_pickle=False``) with a
JSON sidecar of the same stem: :data:`FORMAT`, the encoder, sizes, levels, variant, scale, the
training record and the sha256 of the ``.npz``. :func:`is_outcome_sidecar` tells such a sidecar
from the older format's, so one loader reads both.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from nardy.core.movegen import BoardKey
from nardy.core.position import Position
from nardy.core.variant import LegalPlays, Variant
from nardy.encoding import BOARD_ENCODER, BOARD_SIZE, encode_batch, encode_keys, encode_plays
from nardy.engines.features import feature_set, feature_width

__all__ = [
    "FORMAT",
    "OutcomeEngine",
    "OutcomeNet",
    "cross_entropy",
    "flip_outcomes",
    "is_outcome_sidecar",
    "outcome_targets",
]

F32 = npt.NDArray[np.float32]
Floats = TypeVar("Floats", np.float32, np.float64)

FORMAT = "nardy-outcome-v1"
"""The weights format written in every outcome net's sidecar; its loader refuses any other."""
INPUTS = BOARD_SIZE


def is_outcome_sidecar(meta: object) -> bool:
    """Whether a loaded sidecar is an outcome net's (the loader of older weights reads the rest)."""
    return isinstance(meta, dict) and meta.get("format") == FORMAT


def _flip_map(levels: int) -> tuple[npt.NDArray[np.intp], F32, F32]:
    """Column permutation, signs and offsets of the view change (see :func:`flip_outcomes`)."""
    k = 2 * levels - 1
    perm = np.arange(k)
    perm[1:levels] = np.arange(levels, k)
    perm[levels:] = np.arange(1, levels)
    sign = np.ones(k, dtype=np.float32)
    offset = np.zeros(k, dtype=np.float32)
    sign[0], offset[0] = -1.0, 1.0
    return perm, sign, offset


def flip_outcomes(p: npt.NDArray[Floats], levels: int) -> npt.NDArray[Floats]:
    """Outcome probabilities (rows of ``p``, float32 or float64, kept) seen from the other
    side: his P(win ≥ 1) is 1 − mine, his P(win ≥ k) my P(lose ≥ k) and the reverse (k ≥ 2)."""
    perm, sign, offset = _flip_map(levels)
    out: npt.NDArray[Floats] = p[..., perm] * sign + offset
    return out


def outcome_targets(points: npt.NDArray[Any], levels: int) -> F32:
    """The outcome vectors of finished games from one side: ``points`` > 0 won, < 0 lost, 0 a
    draw (plakoto's frozen board, RULES.md §3.12.2: an even chance of a single game)."""
    points = np.asarray(points, dtype=np.float64)
    k = np.arange(1, levels + 1)
    out = np.zeros((points.shape[0], 2 * levels - 1), dtype=np.float32)
    out[:, :levels] = points[:, None] >= k
    out[:, levels:] = -points[:, None] >= k[1:]
    out[points == 0, 0] = 0.5
    return out


def cross_entropy(p: npt.NDArray[Any], y: npt.NDArray[Any]) -> float:
    """The mean over rows of the outcomes' summed binary cross-entropy of targets ``y`` (each
    output a probability: a game's 0/1 outcome or a search's expectation) by predictions ``p``,
    clipped away from 0 and 1 as the trainer's step clips them."""
    if not len(p):
        return 0.0
    clipped = np.clip(p, 1e-6, 1 - 1e-6)
    total = -(y * np.log(clipped) + (1 - y) * np.log(1 - clipped)).sum()
    return float(total / p.shape[0])


def read_sidecar(path: Path) -> object:
    """The JSON sidecar (``PATH.json``) of the weights file ``path``, as read: one clear
    :class:`ValueError` for a missing file, a missing sidecar or one that is not JSON. Both
    weights formats read theirs here; each then checks the fields it needs."""
    sidecar = path.with_suffix(".json")
    if not path.is_file():
        raise ValueError(f"no weights file {str(path)!r}")
    if not sidecar.is_file():
        raise ValueError(f"weights {str(path)!r} have no sidecar {sidecar.name!r}")
    try:
        return json.loads(sidecar.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{sidecar}: not JSON ({error})") from None


@dataclass(slots=True)
class OutcomeNet:
    """The parameters (float32) and the batched forward pass (the module docstring)."""

    w1: F32
    """Hidden weights, shape (H, inputs)."""
    b1: F32
    """Hidden biases, shape (H,)."""
    w2: F32
    """Output weights, shape (2L − 1, H)."""
    b2: F32
    """Output biases, shape (2L − 1,)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The sidecar's content (variant, scale, levels, training record …)."""
    features: str = ""
    """The feature set (:mod:`nardy.engines.features`) read beside the board units; empty: none.
    Its columns follow the 196 board units in ``w1``."""

    @classmethod
    def initial(
        cls,
        hidden: int,
        levels: int,
        rng: np.random.Generator,
        meta: dict[str, Any],
        features: str = "",
    ) -> OutcomeNet:
        """Small random weights (Glorot-scaled hidden layer, tiny outputs: every outcome ≈ ½)."""
        inputs = INPUTS + feature_width(features)
        w1 = rng.normal(0.0, 1.0 / np.sqrt(INPUTS), size=(hidden, INPUTS)).astype(np.float32)
        if inputs > INPUTS:  # drawn after the board's columns: a net without features unchanged
            extra = rng.normal(0.0, 1.0 / np.sqrt(inputs), size=(hidden, inputs - INPUTS))
            w1 = np.concatenate([w1, extra.astype(np.float32)], axis=1)
        w2 = rng.normal(0.0, 0.1 / np.sqrt(hidden), size=(2 * levels - 1, hidden))
        b2 = np.zeros(2 * levels - 1, dtype=np.float32)
        return cls(
            w1,
            np.zeros(hidden, dtype=np.float32),
            w2.astype(np.float32),
            b2,
            {**meta, "levels": levels},
            features,
        )

    def with_features(self, features: str) -> OutcomeNet:
        """This net reading ``features`` too, their weights zero: it values every position as
        before, and training goes on from there (``nardy train --init NET --features NAME``)."""
        if self.features:
            raise ValueError(f"the net already reads the feature set {self.features!r}")
        extra = np.zeros((self.hidden, feature_set(features).size), dtype=np.float32)
        w1 = np.concatenate([self.w1, extra], axis=1)
        return OutcomeNet(
            w1, self.b1.copy(), self.w2.copy(), self.b2.copy(), dict(self.meta), features
        )

    @property
    def hidden(self) -> int:
        return int(self.w1.shape[0])

    @property
    def levels(self) -> int:
        return int(self.meta["levels"])

    @property
    def scale(self) -> float:
        return float(self.meta["scale"])

    def params(self) -> dict[str, F32]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}

    def copy(self) -> OutcomeNet:
        return OutcomeNet(
            self.w1.copy(),
            self.b1.copy(),
            self.w2.copy(),
            self.b2.copy(),
            dict(self.meta),
            self.features,
        )

    @property
    def inputs(self) -> int:
        """The width of the first layer's input: the board units and the features."""
        return int(self.w1.shape[1])

    def expand(self, inputs: npt.NDArray[Floats]) -> npt.NDArray[Floats]:
        """The first layer's input of each row of ``inputs`` (board units first; a prior column
        beyond them is not read): the board units, then the net's features of them."""
        board = inputs[:, :INPUTS]
        if not self.features:
            return board
        extra = feature_set(self.features).compute(board)
        return np.concatenate([board, extra.astype(board.dtype)], axis=1)

    # -- the forward pass ------------------------------------------------------------------------

    def hidden_of(self, inputs: npt.NDArray[Any]) -> F32:
        """The hidden layer's activations of each row of ``inputs`` (one matrix product)."""
        return self.hidden_of_expanded(self.expand(np.asarray(inputs, dtype=np.float32)))

    def hidden_of_expanded(self, x: F32) -> F32:
        """:meth:`hidden_of` of rows already :meth:`expand`-ed (the trainer's step keeps them for
        the gradient)."""
        out: F32 = np.tanh(x @ self.w1.T + self.b1)
        return out

    def outcomes_of_hidden(self, hidden: F32) -> F32:
        out: F32 = 1.0 / (1.0 + np.exp(-(hidden @ self.w2.T + self.b2)))
        return out

    def outcomes(self, inputs: npt.NDArray[Any]) -> F32:
        """The outcome probabilities (the module docstring) of each row of ``inputs``."""
        return self.outcomes_of_hidden(self.hidden_of(inputs))

    def equity_of_outcomes(self, p: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Cubeless equity in points of each row of outcome probabilities (in their dtype)."""
        levels = self.levels
        out: npt.NDArray[Any] = (
            2.0 * p[:, 0] - 1.0 + p[:, 1:levels].sum(axis=1) - p[:, levels:].sum(axis=1)
        )
        return out

    def values(self, inputs: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """``U`` (equity / scale, the unit of the prior-input net) of each row of ``inputs``:
        rows may carry a prior column beyond the encoding (it is not read). What play and
        analysis read, so computed in float64 from the float32 weights: a float32 product's
        rounding depends on the other rows multiplied with it, and one position's value would
        then differ between a local analysis and a Ray worker's batches (the trainer's
        :meth:`outcomes` stays float32)."""
        out: npt.NDArray[np.float64] = (
            self.equity_of_outcomes(self.probabilities(inputs)) / self.scale
        )
        return out

    def probabilities(self, inputs: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """The outcome probabilities of each row of ``inputs`` in float64, as :meth:`values`
        computes them (so a search's targets and its values agree to the last bit)."""
        x = self.expand(np.asarray(inputs, dtype=np.float64))
        hidden = np.tanh(x @ self.w1.T.astype(np.float64) + self.b1)
        p: npt.NDArray[np.float64] = 1.0 / (
            1.0 + np.exp(-(hidden @ self.w2.T.astype(np.float64) + self.b2))
        )
        return p

    # -- files -----------------------------------------------------------------------------------

    def save(self, path: Path, extra: dict[str, F32] | None = None) -> None:
        """Write ``path`` (.npz, plus ``extra`` arrays such as a checkpoint's optimiser state) and
        its sidecar ``path.with_suffix('.json')``."""
        path = Path(path)
        arrays = {**self.params(), **(extra or {})}
        partial = path.with_name(path.name + ".partial")
        with partial.open("wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        data = partial.read_bytes()
        meta = dict(self.meta)
        meta.pop("features", None)
        if self.features:
            meta["features"] = self.features
        meta.update(
            format=FORMAT,
            encoder=BOARD_ENCODER,
            inputs=self.inputs,
            hidden=self.hidden,
            outputs=int(self.w2.shape[0]),
            sha256=hashlib.sha256(data).hexdigest(),
        )
        sidecar = path.with_suffix(".json")
        side_partial = sidecar.with_name(sidecar.name + ".partial")
        side_partial.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        # Both replaced at once (an interrupt between the two leaves a stale pair: the sha256
        # check then names it).
        partial.replace(path)
        side_partial.replace(sidecar)

    @classmethod
    def load(cls, path: Path, extra: tuple[str, ...] = ()) -> tuple[OutcomeNet, dict[str, F32]]:
        """Read weights written by :meth:`save` (and the named ``extra`` arrays); one clear
        :class:`ValueError` for a missing, corrupt or mismatched file."""
        path = Path(path)
        return cls.from_file(path, read_sidecar(path), extra)

    @classmethod
    def from_file(
        cls, path: Path, meta: object, extra: tuple[str, ...] = ()
    ) -> tuple[OutcomeNet, dict[str, F32]]:
        """:meth:`load` with the sidecar already read (``meta``)."""
        if not is_outcome_sidecar(meta):
            raise ValueError(f"{path.with_suffix('.json')}: not a {FORMAT} sidecar")
        assert isinstance(meta, dict)
        features = meta.get("features", "")
        try:
            inputs = INPUTS + feature_width(features)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path.with_suffix('.json')}: {error}") from None
        if meta.get("encoder") != BOARD_ENCODER or meta.get("inputs") != inputs:
            raise ValueError(
                f"{path.with_suffix('.json')}: encoder {meta.get('encoder')!r} with "
                f"{meta.get('inputs')!r} inputs is not {BOARD_ENCODER} with {inputs}"
            )
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
            raise ValueError(f"{path}: sha256 differs from the sidecar's (file changed?)")
        try:
            with np.load(path, allow_pickle=False) as arrays:
                params = {
                    k: np.asarray(arrays[k], dtype=np.float32)
                    for k in ("w1", "b1", "w2", "b2", *extra)
                }
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"{path}: not a weights archive ({error})") from None
        try:
            hidden, levels = int(meta["hidden"]), int(meta["levels"])
            float(meta["scale"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path.with_suffix('.json')}: no hidden, levels or scale") from None
        outputs = 2 * levels - 1
        shapes = {
            "w1": (hidden, inputs),
            "b1": (hidden,),
            "w2": (outputs, hidden),
            "b2": (outputs,),
        }
        for name, shape in shapes.items():
            if params[name].shape != shape:
                raise ValueError(
                    f"{path}: array {name} has shape {params[name].shape}, the sidecar says {shape}"
                )
        net = cls(params["w1"], params["b1"], params["w2"], params["b2"], meta, features)
        return net, {k: params[k] for k in extra}


class OutcomeEngine:
    """An :class:`OutcomeNet` bound to a variant, with the interface of the prior-input net's
    engine (:class:`~nardy.engines.net.NetEngine`): the inputs of afterstates (their encoding
    alone: no heuristic is evaluated) and their cubeless equities in points. It holds ``net``
    itself (a trainer updating it in place is followed); a :class:`ValueError` for a net trained
    for another variant."""

    candidates = 0
    """Every legal result is ranked (no heuristic short list)."""

    def __init__(self, net: OutcomeNet, variant: Variant) -> None:
        trained_for = net.meta.get("variant")
        if trained_for is not None and trained_for != variant.name:
            raise ValueError(
                f"these neural weights were trained for {trained_for!r}, not {variant.name!r}"
            )
        levels = int(variant.max_game_value())
        if net.levels != levels:
            raise ValueError(
                f"these weights score games of up to {net.levels} points; {variant.name}'s are "
                f"worth up to {levels}"
            )
        if net.features:
            feature_set(net.features, variant)  # a ValueError for another family's features
        self.net = net
        self.variant = variant
        self.scale = net.scale

    def inputs_of_plays(self, plays: LegalPlays) -> npt.NDArray[np.float64]:
        """The encoding of every legal result in ``plays`` (one row each; float64, the other
        engine's type)."""
        return encode_plays(plays).astype(np.float64)

    def inputs_of(self, positions: Sequence[Position]) -> npt.NDArray[np.float64]:
        """The encoding of afterstates given as positions (each from its mover's view)."""
        return encode_batch(list(positions)).astype(np.float64)

    def afterstate_equities(self, positions: Sequence[Position]) -> npt.NDArray[np.float64]:
        """The cubeless equity (points of a single game) of each afterstate's mover."""
        return self.net.values(self.inputs_of(positions)) * self.scale

    def key_equities(self, keys: Sequence[BoardKey]) -> npt.NDArray[np.float64]:
        """:meth:`afterstate_equities` of afterstates given as the generator's board keys."""
        return self.net.values(encode_keys(keys).astype(np.float64)) * self.scale

    def afterstate_equity(self, position: Position) -> float:
        """Cubeless equity (points of a single game) of ``position``'s mover, who has just played."""
        return float(self.afterstate_equities([position])[0])

    def equity(self, position: Position) -> float:
        """Cubeless equity of the player on roll in ``position``: minus that of the opponent's
        afterstate."""
        return -self.afterstate_equity(self.variant.flip(position))
