"""Short runs of the batched trainer for its tests: one small hypergammon configuration, and the
comparison of two nets' weights array by array (the trainer's determinism is bit for bit)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nardy.core import load_variant
from nardy.engines.outcome_net import OutcomeNet
from nardy.train.batched import BatchedConfig, train

SMALL = {"variant": "hypergammon", "seed": 4, "hidden": 8, "envs": 8}


def run_small(
    out: Path, games: int, chunk: int = 20, resume: bool = False, **kw: object
) -> OutcomeNet:
    """Train the small configuration (``kw`` overrides its fields) into ``out``."""
    config = BatchedConfig(**{**SMALL, "games": games, "chunk": chunk, **kw})  # type: ignore[arg-type]
    return train(load_variant("hypergammon"), config, out, resume=resume)


def same_weights(a: OutcomeNet, b: OutcomeNet) -> bool:
    return all(np.array_equal(x, b.params()[k]) for k, x in a.params().items())
