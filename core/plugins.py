"""The plugin manager: built-in and third-party variants, and their compilation into :class:`Variant`.

Built-in variants are plugins listed in :data:`DEFAULT_PLUGINS`; third-party packages add theirs through
the entry-point group ``nardy``. Set ``NARDY_DISABLE_PLUGIN_AUTOLOAD=1`` to skip entry points. A broken
third-party plugin (it raises on import or while registering) is skipped and listed by
:func:`broken_plugins`; a hook answer the kernel cannot use is a :class:`PluginError` naming the plugin
when that variant is loaded.
"""

from __future__ import annotations

import importlib
import os
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

import pluggy

from nardy.core import hookspecs
from nardy.core.errors import NardyError, UnknownVariantError
from nardy.core.options import resolve_options
from nardy.core.rules import Rules, aspect_problems
from nardy.core.variant import Variant, VariantInfo

DEFAULT_PLUGINS = (
    "nardy.variants.backgammon",
    "nardy.variants.trictrac",
    "nardy.variants.long",
    "nardy.variants.nardgammon",
    "nardy.variants.mad",
    "nardy.variants.gulbar",
    "nardy.variants.mad_gulbar",
    "nardy.variants.khachapuri",
    "nardy.variants.fevga",
    "nardy.variants.giul",
    "nardy.variants.hypergammon",
    "nardy.variants.portes",
    "nardy.variants.plakoto",
    "nardy.variants.tavli",
)
"""Modules of the built-in variants; they register through the same hooks as any third party."""

ENTRY_POINT_GROUP = hookspecs.PROJECT


class PluginError(NardyError, RuntimeError):
    """A plugin is broken: a duplicate variant name, a missing base, an aspect nobody answers."""


# Hook name → Rules field, in the order the kernel asks them.
_ASPECTS: tuple[tuple[str, str], ...] = (
    ("nardy_layout", "layout"),
    ("nardy_blocking", "blocking"),
    ("nardy_hitting", "hitting"),
    ("nardy_bear_off", "bear_off"),
    ("nardy_head_rule", "head"),
    ("nardy_block_rule", "blocks"),
    ("nardy_turn_plan", "turn"),
    ("nardy_scoring", "scoring"),
    ("nardy_cube_rule", "cube"),
    ("nardy_game_end", "game_end"),
)


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """A plugin that could not be loaded or registered: it is skipped, everything else works."""

    name: str
    """The entry-point name (or plugin name) of the plugin."""
    error: str
    """What went wrong, in one line."""

    def message(self) -> str:
        """One line for a user: the plugin, the error, and how to start without plugins."""
        return (
            f"plugin {self.name!r} is broken and was skipped: {self.error} "
            f"(set {DISABLE_AUTOLOAD}=1 to start without third-party plugins)"
        )


DISABLE_AUTOLOAD = "NARDY_DISABLE_PLUGIN_AUTOLOAD"
_broken: weakref.WeakKeyDictionary[pluggy.PluginManager, list[BrokenPlugin]] = (
    weakref.WeakKeyDictionary()
)
"""Per plugin manager, keyed weakly: keyed by ``id()``, a manager made after another was freed could
inherit its entry (CPython reuses addresses)."""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with the built-ins and (unless disabled) entry points loaded.

    An entry-point plugin that fails to import or to register is skipped and listed by
    :func:`broken_plugins` (and reported once with :class:`PluginWarning`); it breaks nothing else.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    broken = _broken.setdefault(pm, [])
    if not os.environ.get(DISABLE_AUTOLOAD):
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if pm.get_plugin(entry_point.name) is not None or pm.is_blocked(entry_point.name):
                continue
            try:
                plugin = entry_point.load()
                pm.register(plugin, name=entry_point.name)
            except Exception as exc:  # a third party's bug must not break the tool
                broken.append(BrokenPlugin(entry_point.name, _one_line(exc)))
    registry(pm)  # registration errors are found (and reported) now, not on first use
    for item in broken:
        warnings.warn(item.message(), PluginWarning, stacklevel=2)
    return pm


class PluginWarning(UserWarning):
    """A third-party plugin is broken and was skipped."""


def broken_plugins(pm: pluggy.PluginManager | None = None) -> list[BrokenPlugin]:
    """The plugins that failed to import or to register their variants (skipped)."""
    pm = pm or plugin_manager()
    registry(pm)
    return list(_broken.get(pm, []))


def report_broken_plugins(echo: Callable[[str], object]) -> None:
    """Give each broken plugin's one-line message to ``echo`` (the CLI's stderr), once per process,
    instead of a :class:`PluginWarning` (whose default display adds a second line)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        broken = broken_plugins()
    if not _reported:
        _reported.append(True)
        for item in broken:
            echo(item.message())


_reported: list[bool] = []


def _impls(pm: pluggy.PluginManager, hook_name: str) -> list[Any]:
    """The implementations of a hook in the order pluggy calls them (last registered first)."""
    caller: Any = getattr(pm.hook, hook_name)
    return [impl for impl in reversed(caller.get_hookimpls()) if not impl.hookwrapper]


def _call(impl: Any, **kwargs: Any) -> Any:
    return impl.function(*(kwargs[name] for name in impl.argnames))


def _collect(pm: pluggy.PluginManager) -> dict[str, VariantInfo]:
    found: dict[str, VariantInfo] = {}
    owner: dict[str, str] = {}
    broken = _broken.setdefault(pm, [])
    # pluggy calls the last registered plugin first; register in registration order instead, so
    # built-ins come first and a later plugin cannot take a name an earlier one holds.
    for impl in reversed(_impls(pm, "nardy_register_variants")):
        mine: dict[str, VariantInfo] = {}

        def register(
            info: VariantInfo, mine: dict[str, VariantInfo] = mine, plugin: str = impl.plugin_name
        ) -> None:
            if not isinstance(info, VariantInfo):
                raise PluginError(f"register() takes a VariantInfo, not {type(info).__name__}")
            if info.name in found or info.name in mine:
                first = owner.get(info.name, plugin)
                raise PluginError(f"variant {info.name!r} is registered twice (first by {first!r})")
            mine[info.name] = info

        try:
            _call(impl, register=register)
        except Exception as exc:
            broken.append(BrokenPlugin(impl.plugin_name, _one_line(exc)))
            continue
        found.update(mine)
        owner.update(dict.fromkeys(mine, impl.plugin_name))
    for name, info in list(found.items()):
        chain = [name]
        base = info.base
        while base is not None and base in found and base not in chain:
            chain.append(base)
            base = found[base].base
        if base is not None:
            problem = (
                f"variant {name!r} has a cyclic base chain: {' → '.join([*chain, base])}"
                if base in chain
                else f"variant {name!r} builds on {base!r}, which is not registered"
            )
            broken.append(BrokenPlugin(owner[name], problem))
    for item in broken:
        for name in [n for n, plugin in owner.items() if plugin == item.name]:
            found.pop(name, None)
    return found


_registry_cache: weakref.WeakKeyDictionary[pluggy.PluginManager, dict[str, VariantInfo]] = (
    weakref.WeakKeyDictionary()
)
"""Per plugin manager, keyed weakly (not by ``id()``: see ``_broken``)."""


def registry(pm: pluggy.PluginManager | None = None) -> dict[str, VariantInfo]:
    """Every registered variant by name."""
    pm = pm or plugin_manager()
    if pm not in _registry_cache:
        _registry_cache[pm] = {}  # re-entry from plugin_manager() while collecting
        _registry_cache[pm] = _collect(pm)
    return _registry_cache[pm]


def variant_names() -> list[str]:
    """Names of all registered variants, built-ins first."""
    return list(registry())


def game_variant_names() -> list[str]:
    """Names of the registered variants that play a single game: all but the match variants
    (``VariantInfo.cycle``, e.g. ``tavli``, whose games are played by the variants they cycle)."""
    return [name for name, info in registry().items() if not info.cycle]


def lineage(name: str, pm: pluggy.PluginManager | None = None) -> list[str]:
    """``[name, base, base's base, …]``."""
    infos = registry(pm)
    chain: list[str] = []
    current: str | None = name
    while current is not None:
        if current in chain:
            raise PluginError(f"variant {name!r} has a cyclic base chain: {' → '.join(chain)}")
        chain.append(current)
        current = infos[current].base
    return chain


def compile_rules(
    name: str, options: Mapping[str, Any], pm: pluggy.PluginManager | None = None
) -> Rules:
    """Ask every aspect hook once — for the variant, then for its bases — and build :class:`Rules`.

    An answer of the wrong type or with a value the kernel does not know, a layout it cannot hold
    (RULES.md §3.11) and a hook that raises are :class:`PluginError`\\s naming the plugin.
    """
    pm = pm or plugin_manager()
    chain = lineage(name, pm)
    answers: dict[str, Any] = {}
    for hook_name, field_name in _ASPECTS:
        impls = _impls(pm, hook_name)
        for asked in chain:
            answer, plugin = None, ""
            for impl in impls:
                plugin = impl.plugin_name
                try:
                    answer = _call(impl, variant=asked, options=options)
                except Exception as exc:
                    raise PluginError(
                        f"plugin {plugin!r} failed in {hook_name} for variant {asked!r}: "
                        f"{_one_line(exc)}"
                    ) from exc
                if answer is not None:
                    break
            if answer is not None:
                problems = aspect_problems(field_name, answer)
                if problems:
                    raise PluginError(
                        f"plugin {plugin!r} answers {hook_name} for variant {asked!r} with "
                        f"{answer!r}: {'; '.join(problems)}"
                    )
                answers[field_name] = answer
                break
        else:
            if field_name in ("cube", "game_end"):
                continue  # the cube is off, and games end by bear-off only, unless a variant says so
            raise PluginError(f"no plugin answers {hook_name} for variant {name!r} (asked {chain})")
    rules = Rules(**answers)
    problems = rules.problems()
    if problems:
        raise PluginError(
            f"variant {name!r} combines rules the kernel cannot play: {'; '.join(problems)}"
        )
    return rules


def load_variant(
    name: str, options: Mapping[str, Any] | None = None, pm: pluggy.PluginManager | None = None
) -> Variant:
    """The compiled variant ``name`` with ``options`` (unknown names and values raise clear errors)."""
    infos = registry(pm)
    info = infos.get(name)
    if info is None:
        raise UnknownVariantError(f"unknown variant {name!r}; installed: {', '.join(infos)}")
    resolved = resolve_options(name, info.options, options)
    if pm is None:
        return _load_cached(name, tuple(sorted(resolved.items(), key=lambda kv: kv[0])))
    return Variant(info, resolved, compile_rules(name, resolved, pm))


@cache
def _load_cached(name: str, options: tuple[tuple[str, Any], ...]) -> Variant:
    resolved = dict(options)
    return Variant(registry()[name], resolved, compile_rules(name, resolved))
