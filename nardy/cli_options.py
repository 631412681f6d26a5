"""The options that several ``nardy`` commands share, and the helpers that read them.

A command module takes its shared options from here (``@VARIANT_OPTION``, ``@OPTIONS_OPTION``,
…) instead of copying their names, defaults and help, so that ``--variant`` or ``--executor``
read the same in every command. Only click is imported: the command modules load this module when
their command is looked up (``nardy.cli``'s table of commands), not the package behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from nardy.core.errors import InvalidOptionError, UnknownVariantError

if TYPE_CHECKING:
    from nardy.core.variant import Variant

__all__ = [
    "OPTIONS_OPTION",
    "VARIANT_OPTION",
    "complete_variants",
    "load_variant",
    "one_game_variant",
]


def load_variant(name: str, assignments: Sequence[str]) -> Variant:
    """The variant ``--variant NAME`` and ``-o KEY=VALUE`` … name; a bad name or option is a
    usage error on the option that gave it (one line, no traceback)."""
    from nardy.core.options import parse_option_assignments
    from nardy.core.plugins import load_variant as load

    try:
        options = parse_option_assignments(assignments)
        return load(name, options)
    except UnknownVariantError as error:
        raise click.BadParameter(str(error), param_hint="'--variant'") from None
    except InvalidOptionError as error:
        raise click.BadParameter(str(error), param_hint="'-o'") from None


def one_game_variant(variant: Variant, what: str) -> Variant:
    """``variant``, unless it is a match variant (tavli, RULES.md §3.12.3): its games have their
    own variants' rules and boards, so a command about one game or position names one of them."""
    if variant.is_match_variant:
        raise click.BadParameter(
            f"{variant.name} is a match of {' → '.join(variant.info.cycle)}, each game by its "
            f"own variant's rules: {what} needs one of those variants "
            f"(--variant {variant.info.cycle[0]})",
            param_hint="'--variant'",
        )
    return variant


def complete_variants(incomplete: str) -> list[click.shell_completion.CompletionItem]:
    """Shell completion of variant names (click: _NARDY_COMPLETE=bash_source nardy)."""
    from nardy.core.plugins import registry

    return [
        click.shell_completion.CompletionItem(name, help=info.title)
        for name, info in registry().items()
        if name.startswith(incomplete)
    ]


VARIANT_OPTION = click.option(
    "--variant",
    "-v",
    "variant_name",
    default="backgammon",
    show_default=True,
    metavar="NAME",
    help="Variant (see 'nardy variants').",
    shell_complete=lambda ctx, param, incomplete: complete_variants(incomplete),
)

OPTIONS_OPTION = click.option(
    "-o",
    "--option",
    "option_items",
    multiple=True,
    metavar="KEY=VALUE",
    help="A variant option, e.g. -o first_turn_head=fixed (repeatable).",
)
