"""Learning benchmarks (pytest-benchmark): encodings per second, batched against a per-position
loop, and environment steps per second per variant (docs/learning.md has measured figures).

    pytest benchmarks/test_learning.py --benchmark-group-by=group
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

np = pytest.importorskip("numpy", reason="the rl extra (numpy) is not installed")

from nardy import encoding  # noqa: E402
from nardy.core import load_variant  # noqa: E402
from nardy.core.position import Position  # noqa: E402
from nardy.core.variant import LegalPlays  # noqa: E402


def _positions(get: Callable[[str], list[tuple[Position, tuple[int, ...]]]]) -> list[Position]:
    return [p for name in ("backgammon", "long") for p, _ in get(name)]


@pytest.mark.benchmark(group="encode")
@pytest.mark.parametrize("mode", ["batch", "loop"])
def test_encode_positions(benchmark, variant_corpus, mode: str) -> None:
    """The positions of seeded random backgammon and long games, ``nardy196_v1``."""
    positions = _positions(variant_corpus)

    def run() -> int:
        if mode == "batch":
            return len(encoding.encode_batch(positions))
        return len([encoding.encode(p) for p in positions])

    assert benchmark.pedantic(run, rounds=5, warmup_rounds=1) == len(positions)
    if benchmark.stats is not None:
        benchmark.extra_info["encodings_per_s"] = round(
            len(positions) / benchmark.stats.stats.median
        )


@pytest.mark.benchmark(group="encode-plays")
@pytest.mark.parametrize("mode", ["encode_plays", "loop"])
def test_encode_all_plays(benchmark, variant_corpus, mode: str) -> None:
    """Every legal result of the decisions of seeded random long games, ``nardy226_v1``."""
    variant = load_variant("long")
    decisions: list[LegalPlays] = [variant.legal_plays(p, d) for p, d in variant_corpus("long")]
    context = encoding.Context(phase="roll")
    total = sum(len(plays) for plays in decisions)

    def run() -> int:
        if mode == "encode_plays":
            return sum(len(encoding.encode_plays(plays, context)) for plays in decisions)
        return sum(len([encoding.encode(p.result, context) for p in plays]) for plays in decisions)

    assert benchmark.pedantic(run, rounds=3, warmup_rounds=1) == total
    if benchmark.stats is not None:
        benchmark.extra_info["encodings_per_s"] = round(total / benchmark.stats.stats.median)
