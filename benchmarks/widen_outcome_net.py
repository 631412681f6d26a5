"""Widen a trained outcome net: every hidden unit copied once, so a net of H units becomes one of
2H that values every position as before (Net2Net), and training goes on from there with the
larger net's capacity (docs/bots.md, *A wider net from the shipped one*).

    python benchmarks/widen_outcome_net.py nardy/engines/weights/backgammon.npz \\
        --out backgammon.w512.npz --noise 0.05
    nardy train -v backgammon --method batched-td --hidden 512 --init backgammon.w512.npz \\
        --features hitting_v1 --learn-forced --learning-rate 0.0002 --games 300000 --out w.npz

A copy keeps its unit's incoming weights and bias, and each of the two takes half the unit's
outgoing weights: ``tanh`` of the same sum, twice, times half the weight is the unit's own term.
Two exact copies would also get the same gradient at every step and stay copies for ever, so the
copies' incoming weights get Gaussian noise of ``--noise`` times their row's root mean square. At
the default 0.05 backgammon's shipped net moves by 0.020 points on average over the afterstates of
a few played games (0.086 at most; 0.004 and 0.018 at 0.01).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nardy.engines.outcome_net import OutcomeNet

_KEPT = ("kind", "variant", "scale", "levels")
"""The source sidecar's fields that describe the widened net too (not its training record)."""


def widen(net: OutcomeNet, noise: float, seed: int = 1) -> OutcomeNet:
    """``net`` with each hidden unit copied once (the module docstring); ``noise`` 0 keeps every
    value exactly, up to float32 rounding."""
    if noise < 0:
        raise ValueError(f"--noise must be at least 0, not {noise}")
    rng = np.random.default_rng(seed)
    row_rms = np.sqrt(np.mean(net.w1.astype(np.float64) ** 2, axis=1, keepdims=True))
    jitter = rng.normal(0.0, 1.0, size=net.w1.shape) * noise * row_rms
    w1 = np.concatenate([net.w1, net.w1 + jitter.astype(np.float32)])
    w2 = np.concatenate([net.w2 / 2, net.w2 / 2], axis=1)
    meta = {key: net.meta[key] for key in _KEPT if key in net.meta}
    meta["method"] = "widen"
    meta["widened"] = {"sha256": net.meta.get("sha256"), "hidden": net.hidden, "noise": noise}
    return OutcomeNet(
        w1.astype(np.float32),
        np.concatenate([net.b1, net.b1]),
        w2.astype(np.float32),
        net.b2.copy(),
        meta,
        net.features,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("weights", type=Path, help="the outcome net to widen (.npz)")
    parser.add_argument("--out", required=True, type=Path, help="the widened net (.npz)")
    parser.add_argument(
        "--noise",
        type=float,
        default=0.05,
        help="the copies' incoming weights' noise, times their row's RMS (default 0.05)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the noise's seed (default 1)")
    args = parser.parse_args(argv)
    if args.out.suffix != ".npz":
        parser.error("--out must end in .npz")
    try:
        net, _ = OutcomeNet.load(args.weights)
        wide = widen(net, args.noise, args.seed)
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    wide.save(args.out)
    print(f"wrote {args.out}: {net.hidden} → {wide.hidden} hidden units", file=sys.stderr)


if __name__ == "__main__":
    main()
