"""The plugin's own test suite: nardy's conformance battery on nackgammon, plus its layout."""

from __future__ import annotations

from typing import Any

from nardy.core import load_variant
from nardy.testing import conformance_test

test_conformance = conformance_test("nackgammon")


def test_layout_and_checker_count() -> None:
    variant = load_variant("nackgammon")
    assert variant.checkers == 15
    assert variant.start_position().side(0, "opposite") == {24: 2, 23: 2, 13: 4, 8: 3, 6: 4}


def test_battery_through_the_fixture(nardy_check_variant: Any) -> None:
    report = nardy_check_variant("nackgammon", {"cube": False})
    assert report.games >= 1 and report.plays > 0
