"""Variants as plugins: registration, inheritance of aspects, entry points, and clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pluggy
import pytest

from nardy.core import (
    InvalidOptionError,
    InvalidPositionError,
    Position,
    UnknownVariantError,
    VariantInfo,
    hookimpl,
    hookspecs,
    load_variant,
    variant_names,
)
from nardy.core.hookspecs import Options, Register
from nardy.core.plugins import (
    DEFAULT_PLUGINS,
    PluginError,
    broken_plugins,
    compile_rules,
    registry,
)
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
    "hypergammon",
    "portes",
    "plakoto",
    "tavli",
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


def test_duplicate_and_orphan_registrations_skip_that_plugin_only() -> None:
    class Duplicate:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("mine", "Mine", "fine"))
            register(VariantInfo("long", "again", "again"))

    pm = manager(Duplicate())
    assert "mine" not in registry(pm) and registry(pm)["long"].title.startswith("Long")
    (broken,) = broken_plugins(pm)
    assert "'long' is registered twice (first by 'nardy.variants.long')" in broken.error
    assert "NARDY_DISABLE_PLUGIN_AUTOLOAD=1" in broken.message()

    class Orphan:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("orphan", "Orphan", "no base", base="nonexistent"))

    pm = manager(Orphan())
    assert "orphan" not in registry(pm)
    assert "'nonexistent', which is not registered" in broken_plugins(pm)[0].error


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
    guide = (Path(__file__).parents[2] / "docs" / "writing-a-variant.md").read_text()
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


# -- RULES.md §3.11: the checker count comes from the layout ------------------------------------------


def _layout_plugin(layout: object, name: str = "odd") -> object:
    class LayoutPlugin:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo(name, name.title(), "a layout", base="backgammon"))

        @hookimpl
        def nardy_layout(self, variant: str, options: Options) -> object:
            return layout if variant == name else None

    return LayoutPlugin()


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        (
            Layout("opposite", {24: 2, 13: 5, 8: 3, 6: 6}),
            "16 checkers a side; the kernel holds 1…15",
        ),
        (
            Layout("opposite", {24: 1, 1: 1}),
            "start points collide: own point 24 is the opponent's 1",
        ),
        (Layout("same", {24: 1, 12: 1}), "own point 24 is the opponent's 12"),
        (Layout("opposite", {25: 1}), "point 25 is not one of 1…24"),
        (Layout("opposite", {24: 0}), "counts must be positive integers"),
        (Layout("diagonal", {24: 1}), "geometry='diagonal' is not one of"),  # type: ignore[arg-type]
        ({24: 15}, "expected a Layout, got dict"),
    ],
)
def test_a_layout_the_kernel_cannot_hold_is_refused_naming_the_plugin(
    layout: object, message: str
) -> None:
    plugin = _layout_plugin(layout)
    pm = manager(plugin)
    with pytest.raises(PluginError, match=message) as caught:
        load_variant("odd", None, pm)
    assert "answers nardy_layout for variant 'odd'" in str(caught.value)
    assert repr(pm.get_name(plugin)) in str(caught.value)


def test_nonsense_aspect_values_and_raising_hooks_name_the_plugin() -> None:
    from nardy.core.rules import BearOff

    class Nonsense:
        @hookimpl
        def nardy_register_variants(self, register: Register) -> None:
            register(VariantInfo("weird", "Weird", "nonsense", base="backgammon"))
            register(VariantInfo("raising", "Raising", "raises", base="backgammon"))

        @hookimpl
        def nardy_bear_off(self, variant: str, options: Options) -> BearOff | None:
            if variant == "raising":
                raise ZeroDivisionError("oops")
            return BearOff("sideways") if variant == "weird" else None  # type: ignore[arg-type]

    plugin = Nonsense()
    pm = manager(plugin)
    with pytest.raises(PluginError, match=r"rule='sideways' is not one of \('standard', 'exact'\)"):
        load_variant("weird", None, pm)
    with pytest.raises(PluginError, match="failed in nardy_bear_off for variant 'raising'"):
        load_variant("raising", None, pm)
    assert load_variant("backgammon", None, pm).checkers == 15  # the others still work


def test_checker_count_follows_the_layout() -> None:
    from nardy.core.rules import Loser

    pm = manager(_layout_plugin(Layout("same", {24: 5}), "five"))
    class_five = load_variant("five", None, pm)
    assert class_five.checkers == 5
    start = class_five.start_position()
    assert start.off == (0, 0) and start.checkers == 5
    assert class_five.position_from_id(start.id()) == start
    with pytest.raises(InvalidPositionError, match="each side has exactly 5 in five"):
        class_five.validate(Position.from_id(start.id()))  # read as 15 a side: 10 off
    hyper = load_variant("hypergammon")
    assert hyper.checkers == 3 and load_variant("hypergammon", {"checkers": 1}).checkers == 1
    with pytest.raises(InvalidOptionError, match=r"checkers must be one of 1 \| 2 \| 3"):
        load_variant("hypergammon", {"checkers": 4})
    # A 3-checker game: nothing borne off is a gammon, a checker in the winner's home a backgammon.
    won = Position.from_sides({}, {1: 3}, off=(3, 0), checkers=3)
    assert hyper.is_finished(won)
    assert hyper.game_value(hyper.loser_side(won, 1)) == 3
    gammon = Position.from_sides({}, {20: 3}, off=(3, 0), checkers=3)
    assert hyper.game_value(hyper.loser_side(gammon, 1)) == 2
    single = Position.from_sides({}, {20: 2}, off=(3, 1), checkers=3)
    assert hyper.game_value(hyper.loser_side(single, 1)) == 1
    # Per-checker stakes pay N − off.
    from nardy.core.rules import PerCheckerScoring

    assert PerCheckerScoring().value(Loser({6: 2}, 0, 1, checkers=3)) == 2


def test_hypergammon_3_scores_gammons() -> None:
    from nardy.core.dice import SeededDice
    from nardy.core.game import DoubleDecision, Game

    variant = load_variant("hypergammon", {"cube": False})
    values: dict[int, int] = {}
    for seed in range(60):
        game = Game(variant, SeededDice(seed))
        while game.decision is not None:
            game.decide(False if isinstance(game.decision, DoubleDecision) else 0)
        assert game.result is not None
        assert game.position.off[0] == 3 and game.position.off[1] < 3
        values[game.result.points] = values.get(game.result.points, 0) + 1
    assert set(values) == {1, 2, 3}, values


# -- a broken third-party plugin costs one line, not the tool --------------------------------------


def _fake_distribution(root: Path, module: str, source: str) -> None:
    """An installed-looking distribution with one module in the entry-point group ``nardy``."""
    (root / f"{module}.py").write_text(source)
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[nardy]\n{module} = {module}\n")


BROKEN_SOURCES = {
    "nardy_raises": "raise RuntimeError('this plugin is broken on purpose')\n",
    "nardy_sixteen": """
from nardy.core import VariantInfo, hookimpl
from nardy.core.rules import Layout

@hookimpl
def nardy_register_variants(register):
    register(VariantInfo("sixteen", "Sixteen", "16 checkers", base="backgammon"))

@hookimpl
def nardy_layout(variant, options):
    return Layout("opposite", {24: 2, 13: 5, 8: 3, 6: 6}) if variant == "sixteen" else None
""",
}


def _nardy(args: list[str], root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "100", **env}
    environ.pop("NARDY_DISABLE_PLUGIN_AUTOLOAD", None)
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "nardy", *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=120,
    )


@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_a_broken_plugin_costs_one_line(tmp_path: Path) -> None:
    for module, source in BROKEN_SOURCES.items():
        _fake_distribution(tmp_path, module, source)
    play = ["play", "-v", "backgammon", "--bots", "random,random", "--games", "2", "--json"]
    done = _nardy([*play, "--quiet"], tmp_path)
    assert done.returncode == 0, done.stderr
    warning_lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert warning_lines == [
        "nardy: warning: plugin 'nardy_raises' is broken and was skipped: RuntimeError: this "
        "plugin is broken on purpose (set NARDY_DISABLE_PLUGIN_AUTOLOAD=1 to start without "
        "third-party plugins)"
    ]
    listing = _nardy(["variants"], tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "Broken plugins (skipped):" in listing.stdout
    assert "nardy_raises: RuntimeError: this plugin is broken on purpose" in listing.stdout
    assert "BROKEN: plugin 'nardy_sixteen' answers nardy_layout" in " ".join(listing.stdout.split())
    as_json = json.loads(_nardy(["variants", "--json"], tmp_path).stdout)
    assert all("name" in entry for entry in as_json)  # a plugin broken at import: name null
    status = {entry["name"] or entry["plugin"]: entry["status"] for entry in as_json}
    assert status["nardy_raises"] == status["sixteen"] == "broken"
    raises = next(entry for entry in as_json if entry.get("plugin") == "nardy_raises")
    assert raises["name"] is None
    jsonschema = pytest.importorskip("jsonschema")
    from nardy.schemas import schema

    jsonschema.validate(as_json, schema("variants"))
    assert status["backgammon"] == "ok"
    sixteen = _nardy(["play", "-v", "sixteen", "--games", "1", "--quiet"], tmp_path)
    assert sixteen.returncode != 0
    assert "Traceback" not in sixteen.stderr
    assert "plugin 'nardy_sixteen'" in sixteen.stderr and "16 checkers a side" in sixteen.stderr
    quiet = _nardy([*play, "--quiet"], tmp_path, NARDY_DISABLE_PLUGIN_AUTOLOAD="1")
    assert quiet.returncode == 0 and quiet.stderr.strip() == ""


@pytest.mark.slow  # 40 plugin managers, each compiling every variant
def test_a_plugin_manager_never_inherits_a_freed_ones_registry() -> None:
    """Managers made one after another each see their own plugins: a registry cached by ``id()``
    once gave a later manager an earlier one's variants (CPython reuses a freed object's address).

    Whether an address is reused is up to the allocator (a CI run reused none of 40), so the test
    does not wait for it: it asserts what rules the stale answer out, that a freed manager leaves
    nothing behind in the caches, whatever address the next one gets."""
    import gc
    import weakref

    from nardy.core import plugins

    caches = (plugins._registry_cache, plugins._broken)
    for round_ in range(40):
        gc.collect()  # managers earlier tests left as garbage leave the caches before the count
        sizes_before = [len(cache) for cache in caches]
        with_plugin = round_ % 2 == 0
        pm = manager(OneAspectPlugin()) if with_plugin else manager()
        assert ("strict_long" in registry(pm)) is with_plugin
        assert pm in plugins._registry_cache
        freed = weakref.ref(pm)
        del pm
        gc.collect()
        assert freed() is None, "a cache keeps a freed plugin manager alive"
        assert [len(cache) for cache in caches] == sizes_before, "a freed manager's entry stays"


@pytest.mark.parametrize("width", [40, 80, 200])
def test_the_listing_shows_a_broken_plugins_whole_reason(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """However narrow the terminal, the reason wraps and is never cut short."""
    import nardy.listing
    from nardy.core.plugins import BrokenPlugin

    reason = "ImportError: " + " ".join(f"word{i}" for i in range(60)) + " the-end-of-the-reason"
    monkeypatch.setattr(nardy.listing, "broken_plugins", lambda: [BrokenPlugin("p", reason)])
    text = nardy.listing.variants_text(width)
    assert f"p: {reason}" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= max(width, 60)
