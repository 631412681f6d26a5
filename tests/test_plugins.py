"""Variants as plugins: registration, inheritance of aspects, entry points, and clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pluggy
import pytest

from nardy.core import (
    InvalidOptionError,
    UnknownVariantError,
    VariantInfo,
    hookimpl,
    hookspecs,
    load_variant,
    variant_names,
)
from nardy.core.hookspecs import Options, Register
from nardy.core.plugins import DEFAULT_PLUGINS, PluginError, compile_rules, registry
from nardy.core.rules import BlockRule, Layout

BUILT_INS = [
    "backgammon",
    "trictrac",
    "long",
    "nardgammon",
    "mad",
    "gulbar",
    "mad_gulbar",
    "khachapuri",
    "fevga",
    "giul",
]


def manager(*extra: object) -> pluggy.PluginManager:
    """A plugin manager with the built-ins and ``extra`` plugins, and no entry points."""
    import importlib

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    for plugin in extra:
        pm.register(plugin)
    return pm


def test_built_ins_are_registered_in_order() -> None:
    assert variant_names()[: len(BUILT_INS)] == BUILT_INS


class OneAspectPlugin:
    """A variant that overrides one aspect of long nardy: its six-block check after every step."""

    @hookimpl
    def nardy_register_variants(self, register: Register) -> None:
        register(VariantInfo("strict_long", "Strict long", "long + per-step blocks", base="long"))

    @hookimpl
    def nardy_block_rule(self, variant: str, options: Options) -> BlockRule | None:
        return BlockRule(six_block="step") if variant == "strict_long" else None


def test_a_variant_overrides_one_aspect_and_inherits_the_rest() -> None:
    pm = manager(OneAspectPlugin())
    rules = compile_rules("strict_long", {}, pm)
    assert rules == compile_rules("nardgammon", {"first_turn_head": "principle"}, pm)
    assert rules.blocks.six_block == "step"
    assert rules.layout == Layout("same", {24: 15})


def test_duplicate_and_orphan_registrations_are_errors() -> None:
    class Duplicate:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("long", "again", "again"))

    with pytest.raises(PluginError, match="registered twice"):
        registry(manager(Duplicate()))

    class Orphan:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("orphan", "Orphan", "no base", base="nonexistent"))

    with pytest.raises(PluginError, match="nonexistent"):
        registry(manager(Orphan()))


def test_an_aspect_nobody_answers_is_an_error() -> None:
    class Bare:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("bare", "Bare", "answers nothing"))

    with pytest.raises(PluginError, match="no plugin answers nardy_layout"):
        compile_rules("bare", {}, manager(Bare()))


def test_unknown_variant_and_options_are_clear_errors() -> None:
    with pytest.raises(UnknownVariantError, match=r"unknown variant 'chess'.*backgammon"):
        load_variant("chess")
    with pytest.raises(InvalidOptionError, match="has no option 'colour'"):
        load_variant("long", {"colour": "red"})
    with pytest.raises(InvalidOptionError, match=r"principle \| fixed \| head_only"):
        load_variant("long", {"first_turn_head": "sometimes"})
    assert load_variant("long", {"koks": "false"}).options["koks"] is False


def test_hook_specs_are_documented() -> None:
    """Every hook and its signature appear in the variant-writing guide (datasette's rule)."""
    guide = (Path(__file__).parent.parent / "docs" / "writing-a-variant.md").read_text()
    for name in dir(hookspecs):
        if name.startswith("nardy_"):
            assert f"`{name}(" in guide, f"hook {name} is missing from docs/writing-a-variant.md"


def _example_installed() -> bool:
    return any(ep.name == "nackgammon" for ep in metadata.entry_points(group="nardy"))


@pytest.mark.skipif(
    not _example_installed() and not os.environ.get("CI"),
    reason="the example plugin is not installed (pip install ./examples/nardy-nackgammon; CI installs it)",
)
def test_example_third_party_plugin_is_discovered_and_plays() -> None:
    assert "nackgammon" in variant_names()
    out = subprocess.run(
        [sys.executable, "-m", "nardy", "variants"], capture_output=True, text=True, check=True
    ).stdout
    assert "nackgammon" in out
    from nardy.core.dice import SeededDice
    from nardy.core.game import DoubleDecision, Game

    variant = load_variant("nackgammon")
    assert variant.start_position().side(0, "opposite") == {24: 2, 23: 2, 13: 4, 8: 3, 6: 4}
    game = Game(variant, SeededDice(5))
    while game.decision is not None:
        game.decide(False if isinstance(game.decision, DoubleDecision) else 0)
    assert game.result is not None and game.result.points >= 1
