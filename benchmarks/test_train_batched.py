"""The batched trainer's speed (pytest-benchmark): self-play games per CPU-second of
``nardy train --method batched-td`` with a 128-unit net, from fresh weights (issue 37's goal: at
least 300 in backgammon and 150 in long; docs/bots.md has measured figures).

    pytest benchmarks/test_train_batched.py --benchmark-group-by=group
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

# Single-threaded BLAS (as nardy train sets it), which counts only before numpy is imported: the
# products are a few thousand rows, where waking BLAS threads costs more than they save (measured:
# 111 games per CPU-second in backgammon with threads, 428 without).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

pytest.importorskip("numpy", reason="the trainer needs numpy")

from nardy.core import load_variant
from nardy.train.batched import BatchedConfig, train

GAMES = {"backgammon": 5_000, "long": 3_000}
"""Enough games that the games dropped at a chunk's end (at most one per lockstep game, 256)
cost little of the figure."""


@pytest.mark.benchmark(group="train-batched")
@pytest.mark.parametrize("name", sorted(GAMES))
def test_batched_training_games_per_cpu_second(benchmark: Any, tmp_path: Path, name: str) -> None:
    variant = load_variant(name)
    games = GAMES[name]
    config = BatchedConfig(name, games=games, chunk=games, seed=1, hidden=128, envs=256)
    cpu: list[float] = []

    def run() -> int:
        started = time.process_time()
        net = train(variant, config, tmp_path / f"{name}.npz")
        cpu.append(time.process_time() - started)
        return int(net.meta["games"])

    assert benchmark.pedantic(run, rounds=1, warmup_rounds=0) == games
    benchmark.extra_info["games_per_cpu_second"] = round(games / min(cpu))
