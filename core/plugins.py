"""The plugin manager: built-in and third-party variants, and their compilation into :class:`Variant`.

Built-in variants are plugins listed in :data:`DEFAULT_PLUGINS`; third-party packages add theirs through
the entry-point group ``nardy``. Set ``NARDY_DISABLE_PLUGIN_AUTOLOAD=1`` to skip entry points.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import pluggy

from nardy.core import hookspecs
from nardy.core.errors import NardyError, UnknownVariantError
from nardy.core.options import resolve_options
from nardy.core.rules import Rules
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
)


@cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with the built-ins and (unless disabled) entry points loaded."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    if not os.environ.get("NARDY_DISABLE_PLUGIN_AUTOLOAD"):
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    return pm


def _collect(pm: pluggy.PluginManager) -> dict[str, VariantInfo]:
    found: dict[str, VariantInfo] = {}

    def register(info: VariantInfo) -> None:
        if not isinstance(info, VariantInfo):
            raise PluginError(f"register() takes a VariantInfo, not {type(info).__name__}")
        if info.name in found:
            raise PluginError(f"variant {info.name!r} is registered twice")
        found[info.name] = info

    pm.hook.nardy_register_variants(register=register)
    # pluggy calls implementations last-registered first; list variants in registration order.
    found = dict(reversed(found.items()))
    for info in found.values():
        if info.base is not None and info.base not in found:
            raise PluginError(
                f"variant {info.name!r} builds on {info.base!r}, which is not registered"
            )
    return found


_registry_cache: dict[int, dict[str, VariantInfo]] = {}


def registry(pm: pluggy.PluginManager | None = None) -> dict[str, VariantInfo]:
    """Every registered variant by name."""
    pm = pm or plugin_manager()
    key = id(pm)
    if key not in _registry_cache:
        _registry_cache[key] = _collect(pm)
    return _registry_cache[key]


def variant_names() -> list[str]:
    """Names of all registered variants, built-ins first."""
    return list(registry())


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
    """Ask every aspect hook once — for the variant, then for its bases — and build :class:`Rules`."""
    pm = pm or plugin_manager()
    chain = lineage(name, pm)
    answers: dict[str, Any] = {}
    for hook_name, field in _ASPECTS:
        hook: Callable[..., Any] = getattr(pm.hook, hook_name)
        for asked in chain:
            answer = hook(variant=asked, options=options)
            if answer is not None:
                answers[field] = answer
                break
        else:
            if field == "cube":
                continue  # the cube is off unless a variant says otherwise
            raise PluginError(f"no plugin answers {hook_name} for variant {name!r} (asked {chain})")
    return Rules(**answers)


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
