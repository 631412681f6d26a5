"""pytest plugin of nardy (entry point ``pytest11``): options for the conformance battery.

``--nardy-games N`` and ``--nardy-seed S`` scale the tests made by
:func:`nardy.testing.conformance_test`; the fixture ``nardy_check_variant`` runs the battery on a
variant by name and fails the test with every failure listed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nardy", "nardy conformance battery")
    group.addoption(
        "--nardy-games",
        dest="nardy_games",
        type=int,
        default=None,
        help="random games per variant in nardy's conformance tests (default 6)",
    )
    group.addoption(
        "--nardy-seed",
        dest="nardy_seed",
        type=int,
        default=None,
        help="first seed of nardy's conformance games (default 0)",
    )


@pytest.fixture
def nardy_check_variant(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``nardy_check_variant(name, options=None)``: run the battery, fail on any broken invariant."""
    from nardy.testing import DEFAULT_GAMES, check_variant

    def run(name: str, options: dict[str, Any] | None = None) -> Any:
        games = request.config.getoption("nardy_games") or DEFAULT_GAMES
        seed = request.config.getoption("nardy_seed") or 0
        report = check_variant(name, options, games=games, seed=seed)
        if not report.ok:
            pytest.fail("\n".join(report.failures), pytrace=False)
        return report

    return run
