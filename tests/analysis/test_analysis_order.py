"""Error rate against strength: on a small ladder the weaker bot makes the larger errors, in
three variants (``benchmarks/measure_error_order.py`` runs the whole ladder with more games)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "measure_error_order.py"


def _ladder(*args: Any) -> dict[str, tuple[float, float, int]]:
    """The benchmark's ladder (loaded from its file: benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("measure_error_order", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result: dict[str, tuple[float, float, int]] = module.ladder(*args)
    return result


@pytest.mark.slow  # games played and analysed
@pytest.mark.parametrize("variant", ["backgammon", "long", "fevga"])
def test_error_rate_order_matches_the_points_order(variant: str) -> None:
    results = _ladder(variant, ["random", "heuristic"], 2, "neural", 0, 1)
    (random_points, random_rate, random_n), (heuristic_points, heuristic_rate, heuristic_n) = (
        results["random"],
        results["heuristic"],
    )
    assert random_n > 20 and heuristic_n > 20
    assert heuristic_points > random_points
    assert heuristic_rate < random_rate
