"""Averaged weights: one outcome net whose arrays are the mean of several nets of one lineage.

Self-play TD ends wherever its last steps left the weights, and those steps are noisy: two nets
trained on from the same net (or one run's chunk ends, ``nardy train --keep-chunks``) play about
equally well, yet their mean plays better than either (stochastic weight averaging, "model
soups"). The nets must share the variant, the hidden size and the outputs; a net without the
feature set another reads gains it at zero weight first (:meth:`OutcomeNet.with_features
<nardy.engines.outcome_net.OutcomeNet.with_features>`: it values every position as before).
Averaging nets that did not start from one net is refused by nothing here, and is useless: their
hidden units are not in the same order.

    python -m nardy.train.average --out averaged.npz run.c1.npz run.c2.npz run.c3.npz

The sidecar records each net averaged (file name, sha256, and its own training record: method,
games, configuration and curve) as the recipe.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nardy.engines.outcome_net import OutcomeNet

__all__ = ["average", "main"]

_RECORD = ("method", "games", "config", "history", "averaged")
"""What each averaged net's sidecar says of its training, kept in the average's: its recipe."""


def average(paths: Sequence[Path]) -> OutcomeNet:
    """The mean of the outcome nets in ``paths`` (the module docstring); a :class:`ValueError`
    naming the file for fewer than two nets, an unreadable one or one that does not match."""
    if len(paths) < 2:
        raise ValueError("averaging needs two weights files or more")
    nets = [OutcomeNet.load(Path(path))[0] for path in paths]
    first = nets[0]
    for path, net in zip(paths[1:], nets[1:], strict=True):
        mine = (net.meta.get("variant"), net.hidden, net.levels)
        theirs = (first.meta.get("variant"), first.hidden, first.levels)
        if mine != theirs:
            raise ValueError(
                f"{path}: variant, hidden units and levels {mine}, not {theirs} as {paths[0]}"
            )
    named = {net.features for net in nets} - {""}
    if len(named) > 1:
        raise ValueError(f"the nets read different feature sets: {', '.join(sorted(named))}")
    features = named.pop() if named else ""
    nets = [net.with_features(features) if features and not net.features else net for net in nets]
    arrays = {
        name: (sum(getattr(net, name).astype(np.float64) for net in nets) / len(nets)).astype(
            np.float32
        )
        for name in ("w1", "b1", "w2", "b2")
    }
    sources: list[dict[str, Any]] = [
        {
            "file": Path(path).name,
            "sha256": net.meta.get("sha256"),
            **{key: net.meta[key] for key in _RECORD if key in net.meta},
        }
        for path, net in zip(paths, nets, strict=True)
    ]
    meta = {
        "kind": "weights",
        "variant": first.meta.get("variant"),
        "scale": first.scale,
        "levels": first.levels,
        "method": "average",
        "averaged": sources,
    }
    return OutcomeNet(arrays["w1"], arrays["b1"], arrays["w2"], arrays["b2"], meta, features)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m nardy.train.average",
        description="Average outcome nets of one lineage into one (docs/bots.md, Averaged "
        "weights): e.g. the chunk ends of nardy train --keep-chunks.",
    )
    parser.add_argument("weights", nargs="+", type=Path, help="the nets to average (.npz)")
    parser.add_argument("--out", required=True, type=Path, help="the averaged net (.npz)")
    args = parser.parse_args(argv)
    if args.out.suffix != ".npz":
        parser.error("--out must end in .npz")
    try:
        net = average(args.weights)
    except ValueError as error:
        parser.exit(2, f"error: {error}\n")
    net.save(args.out)
    print(f"wrote {args.out}: the mean of {len(args.weights)} nets", file=sys.stderr)


if __name__ == "__main__":
    main()
