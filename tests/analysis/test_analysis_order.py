"""Error rate against strength: on a small ladder the weaker bot makes the larger errors, in
three variants (``benchmarks/measure_error_order.py`` runs the whole ladder with more games)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from script_modules import load_module

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "measure_error_order.py"


def _ladder(*args: Any) -> dict[str, tuple[float, float, int]]:
    """The benchmark's ladder (loaded from its file: benchmarks/ is not a package)."""
    module = load_module("measure_error_order", SCRIPT)
    result: dict[str, tuple[float, float, int]] = module.ladder(*args)
    return result


@pytest.mark.slow  # games played and analysed
@pytest.mark.parametrize(
    ("variant", "games"),
    # fevga's outcome net (shipped after 0.2.0) judges random's few decisive errors against
    # heuristic's many small ones less steadily: over 2 games two seeds of three put random
    # ahead, over 6 none.
    [("backgammon", 2), ("long", 2), ("fevga", 6)],
)
def test_error_rate_order_matches_the_points_order(variant: str, games: int) -> None:
    results = _ladder(variant, ["random", "heuristic"], games, "neural", 0, 1)
    (random_points, random_rate, random_n), (heuristic_points, heuristic_rate, heuristic_n) = (
        results["random"],
        results["heuristic"],
    )
    assert random_n > 20 and heuristic_n > 20
    assert heuristic_points > random_points
    assert heuristic_rate < random_rate
