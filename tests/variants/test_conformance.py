"""The conformance battery (:mod:`nardy.testing`) over every registered variant, and the battery's
own ability to catch a broken variant."""

from __future__ import annotations

import random

import pytest

from nardy.core import Position, game_variant_names, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision
from nardy.testing import (
    ConformanceError,
    check_position,
    check_variant,
    conformance_test,
)

test_every_variant_conforms = conformance_test(*game_variant_names())


@pytest.mark.parametrize("checkers", [1, 2])
def test_small_hypergammon_forms_conform(checkers: int) -> None:
    report = check_variant("hypergammon", {"checkers": checkers}, games=20)
    assert report.ok, report.failures
    assert report.games == 20 and report.plays > 0


@pytest.mark.parametrize("name", game_variant_names())
def test_same_seed_same_game(name: str) -> None:
    variant = load_variant(name)
    records = []
    for _ in range(2):
        rng = random.Random(3)
        game = Game(variant, SeededDice(11))
        while game.decision is not None:
            if isinstance(game.decision, DoubleDecision):
                game.decide(False)
                continue
            assert isinstance(game.decision, PlayDecision)
            game.decide(rng.randrange(len(game.decision.plays)))
        records.append(game.record())
    assert records[0] == records[1]


def test_the_battery_catches_a_bad_position() -> None:
    variant = load_variant("backgammon")
    broken = Position((2, *([0] * 22), -2), (0, 0), (13, 13))  # fine: 2 + 13 each
    check_position(variant, broken)
    with pytest.raises(ConformanceError, match="each side has exactly 15"):
        check_position(variant, Position((2, *([0] * 22), -2), (0, 0), (12, 13)))


def test_the_battery_catches_a_variant_that_scores_nothing() -> None:
    import importlib

    import pluggy

    from nardy.core import VariantInfo, hookimpl, hookspecs
    from nardy.core.plugins import DEFAULT_PLUGINS
    from nardy.core.rules import Loser
    from nardy.testing import check_game
    from nardy.variants.hypergammon import INFO as HYPER

    class Nothing:
        per_checker = False

        def value(self, loser: Loser) -> int:
            return 0

    class ZeroPlugin:
        @hookimpl
        def nardy_register_variants(self, register: object) -> None:
            options = HYPER.options
            register(VariantInfo("zero", "Zero", "0", base="hypergammon", options=options))  # type: ignore[operator]

        @hookimpl
        def nardy_scoring(self, variant: str, options: object) -> object:
            return Nothing() if variant == "zero" else None

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    pm.register(ZeroPlugin())
    variant = load_variant("zero", {"cube": False}, pm)
    with pytest.raises(ConformanceError, match="seed 4: the game scored 0"):
        check_game(variant, 4)


def test_check_variant_command() -> None:
    import json

    from click.testing import CliRunner

    from nardy.cli import cli

    runner = CliRunner()
    done = runner.invoke(cli, ["check-variant", "hypergammon", "--games", "5", "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)
    assert summary["ok"] and summary["games"] == 5 and summary["plays_checked"] > 0
    assert sum(summary["game_values"].values()) == 5
    done = runner.invoke(cli, ["check-variant", "chess"])
    assert done.exit_code == 2 and "unknown variant 'chess'" in done.output
    done = runner.invoke(cli, ["check-variant", "long", "--seed", "-1"])
    assert done.exit_code == 2


def test_a_match_variant_is_not_checked_as_one_game() -> None:
    """tavli (RULES.md §3.12.3) has no game of its own: the battery refuses it and names the
    variants whose games it plays (each is checked above)."""
    from click.testing import CliRunner

    from nardy.cli import cli
    from nardy.core.errors import MatchVariantError

    with pytest.raises(MatchVariantError, match="tavli is a match of portes → plakoto → fevga"):
        check_variant("tavli", games=1)
    result = CliRunner().invoke(cli, ["check-variant", "tavli"])
    assert result.exit_code == 2 and "nardy check-variant portes" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
