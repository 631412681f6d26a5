"""``nardy variants``: the installed variants, their options, and the plugins that are broken.

Plain text that reads the same in a terminal and through a pipe: nothing is cut off (long texts
wrap at the terminal width, 80 columns when piped), and an option that several variants share is
described once, with each variant's default shown next to the variant.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from nardy.core.options import OptionSpec
from nardy.core.plugins import PluginError, broken_plugins, compile_rules, registry
from nardy.core.variant import VariantInfo

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "UNLIMITED_WIDTH",
    "option_allowed",
    "table_console",
    "value_text",
    "variant_problems",
    "variants_json",
    "variants_text",
]

UNLIMITED_WIDTH = 1_000_000
"""The width :func:`table_console` gives rich when the output is not a terminal: wider than any
table, so rich cuts nothing off (its tables are as wide as their contents, never wider)."""


def value_text(value: Any) -> str:
    """An option value as written on the command line (``-o name=value``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def option_allowed(spec: OptionSpec) -> str:
    """The values an option takes, in words."""
    if spec.choices:
        return " | ".join(value_text(c) for c in spec.choices)
    if spec.kind is bool:
        return "true | false"
    if spec.kind is int:
        return "positive integer" + (" or none" if spec.default is None else "")
    return "text"


def variant_problems() -> dict[str, str]:
    """Variants whose plugins answer the rule hooks with something unusable: name → error."""
    found: dict[str, str] = {}
    for name in registry():
        try:
            compile_rules(name, {spec.name: spec.default for spec in registry()[name].options})
        except PluginError as error:
            found[name] = str(error)
    return found


def _info_json(info: VariantInfo, problem: str | None) -> dict[str, Any]:
    return {
        "name": info.name,
        "title": info.title,
        "base": info.base,
        "summary": info.summary,
        **({"cycle": list(info.cycle)} if info.cycle else {}),
        "status": "broken" if problem else "ok",
        "error": problem,
        "options": [
            {
                "name": spec.name,
                "default": spec.default,
                "choices": list(spec.choices),
                "type": spec.kind.__name__,
                "help": spec.help,
            }
            for spec in info.options
        ],
    }


def variants_json() -> list[dict[str, Any]]:
    """Every variant (``status`` ``ok`` or ``broken`` with its ``error``), then one entry per broken
    plugin: ``{"name": null, "plugin": NAME, "status": "broken", "error": …}`` (its variants are
    unknown; every entry has a ``name``, so ``.[].name`` reads every entry)."""
    problems = variant_problems()
    found = [_info_json(info, problems.get(info.name)) for info in registry().values()]
    found += [
        {"name": None, "plugin": b.name, "status": "broken", "error": b.error}
        for b in broken_plugins()
    ]
    return found


def table_console(*, stderr: bool = False) -> Console:
    """The console the commands print their tables on: a terminal's own width on a terminal;
    through a pipe or into a file :data:`UNLIMITED_WIDTH`. Rich otherwise takes 80 columns where
    there is no terminal and cuts a wider table's cells to fit (``blotb…``, ``+64.0…``): a file
    or a script must get every character, and lines may be as long as they need."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, width=UNLIMITED_WIDTH)


def variants_text(width: int = 80) -> str:
    """The listing: one block per variant, then each option once, then broken plugins."""
    width = max(width, 60)
    problems = variant_problems()
    infos = list(registry().values())
    name_width = max(len(info.name) for info in infos) + 2
    indent = " " * name_width
    lines = ["Variants (nardy play --variant NAME -o OPTION=VALUE):", ""]

    def wrap(text: str, first: str) -> list[str]:
        return textwrap.wrap(
            text, width, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False
        ) or [first.rstrip()]

    for info in infos:
        if info.cycle:  # a match variant: its base only lends its first game's rules
            title = f"{info.title} — a match of {' → '.join(info.cycle)}"
        else:
            title = info.title + (f" — builds on {info.base}" if info.base else "")
        lines += wrap(title, info.name.ljust(name_width))
        lines += wrap(info.summary, indent)
        if info.options:
            defaults = ", ".join(f"{spec.name}={value_text(spec.default)}" for spec in info.options)
            lines += wrap(f"options: {defaults}", indent)
        if info.name in problems:
            lines += wrap(f"BROKEN: {problems[info.name]}", indent)
        lines.append("")
    specs: dict[str, OptionSpec] = {}
    for info in infos:
        for spec in info.options:
            specs.setdefault(spec.name, spec)
    if specs:
        lines += ["Options (the default of each variant is listed above):", ""]
        option_width = max(len(name) for name in specs) + 4
        for name, spec in specs.items():
            lines += textwrap.wrap(
                f"{spec.help}. Values: {option_allowed(spec)}.",
                width,
                initial_indent=f"  {name}".ljust(option_width),
                subsequent_indent=" " * option_width,
                break_on_hyphens=False,
            )
        lines.append("")
    broken = broken_plugins()
    if broken:
        lines += ["Broken plugins (skipped):", ""]
        for item in broken:
            lines += textwrap.wrap(
                f"{item.name}: {item.error}", width, initial_indent="  ", subsequent_indent="    "
            )
        lines += [
            "",
            *textwrap.wrap(
                "Set NARDY_DISABLE_PLUGIN_AUTOLOAD=1 to start without third-party plugins.", width
            ),
        ]
    return "\n".join(lines).rstrip() + "\n"
