"""What several ``nardy`` commands share: their options and the helpers that read them, the
progress bar they draw (:func:`progress_bar`), and the group whose subcommands are a lazy table
(:class:`TableGroup`: ``nardy`` itself, ``nardy arena``, ``nardy bot``).

A command module takes its shared options from here (``@VARIANT_OPTION``, ``@OPTIONS_OPTION``,
…) instead of copying their names, defaults and help, so that ``--variant`` or ``--executor``
read the same in every command. Only click is imported (rich when a bar is drawn): the command modules
load this module when their command is looked up (``nardy.cli``'s table of commands), not the
package behind it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from nardy.core.errors import InvalidOptionError, UnknownVariantError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn

    from nardy.core.variant import Variant

FC = TypeVar("FC", bound=Callable[..., object])

__all__ = [
    "OPTIONS_OPTION",
    "VARIANT_OPTION",
    "TableGroup",
    "check_ray_address",
    "complete_variants",
    "evaluator_option",
    "executor_option",
    "load_variant",
    "one_game_variant",
    "one_line",
    "ply_option",
    "progress_bar",
    "ray_address_option",
]


def load_variant(name: str, assignments: Sequence[str], name_hint: str = "'--variant'") -> Variant:
    """The variant ``--variant NAME`` and ``-o KEY=VALUE`` … name; a bad name or option is a
    usage error on the option that gave it (``name_hint``: where the name came from, for a
    command that takes it as an argument), one line, no traceback. Every command's one way to
    load a variant by name with options."""
    from nardy.core.options import parse_option_assignments
    from nardy.core.plugins import load_variant as load

    try:
        options = parse_option_assignments(assignments)
        return load(name, options)
    except UnknownVariantError as error:
        raise click.BadParameter(one_line(str(error)), param_hint=name_hint) from None
    except InvalidOptionError as error:
        raise click.BadParameter(one_line(str(error)), param_hint="'-o'") from None


def one_line(text: str) -> str:
    """An error's text on one line (a message that lists choices may span several)."""
    return " ".join(text.split())


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


# -- where the work runs, and what evaluates -------------------------------------------------------
# The name, type, choices and default are shared; the help says what the option does in that
# command (games played, games analysed), so each command passes its own.


def executor_option(help: str) -> Callable[[FC], FC]:
    """``--executor local|ray``: this process, or a Ray cluster (docs/distributed.md)."""
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help=help,
    )


def ray_address_option(help: str) -> Callable[[FC], FC]:
    """``--ray-address ADDR``: the Ray cluster's head, with ``--executor ray`` only
    (:func:`check_ray_address`)."""
    return click.option("--ray-address", default=None, metavar="ADDR", help=help)


def check_ray_address(executor: str, ray_address: str | None) -> None:
    """A usage error for ``--ray-address`` without ``--executor ray``."""
    if ray_address is not None and executor != "ray":
        raise click.UsageError("--ray-address goes with --executor ray")


def evaluator_option(default: str, help: str) -> Callable[[FC], FC]:
    """``--evaluator SPEC``: an evaluator by name (``nardy.engines.make_evaluator``)."""
    return click.option("--evaluator", default=default, show_default=True, help=help)


def ply_option(maximum: int, help: str) -> Callable[[FC], FC]:
    """``--ply N``: the depth of a search, 0 (the evaluator alone) to ``maximum``."""
    return click.option(
        "--ply", type=click.IntRange(0, maximum), default=0, show_default=True, help=help
    )


# -- progress ---------------------------------------------------------------------------------------


def progress_bar(
    console: Console, quiet: bool, *times: ProgressColumn, transient: bool = True
) -> Progress:
    """A command's progress bar on ``console`` (standard error): the task, the bar, done of
    total, then ``times`` (rich's time columns: spent, left). Drawn only on a terminal and unless
    ``quiet``, so that piped output and logs carry no bar; ``transient``: gone once done, leaving
    the command's own output alone on the screen."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as RichProgress

    return RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *times,
        console=console,
        disable=quiet or not console.is_terminal,
        transient=transient,
    )


# -- command groups ---------------------------------------------------------------------------------


class TableGroup(click.Group):
    """A group whose commands are a table, name → ``module:attribute`` of a click command, each
    imported when it is used or listed: the one way a command joins a group (``nardy.cli.COMMANDS``,
    ``nardy.arena.cli.ARENA_COMMANDS``). ``@click.group(cls=TableGroup, table=…)``."""

    def __init__(self, *args: Any, table: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table: Mapping[str, str] = table if table is not None else {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.table})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.table:
            command = self.load(cmd_name)
        return command

    def load(self, name: str) -> click.Command | None:
        """The command the table names (its module imported now)."""
        module_name, _, attribute = self.table[name].partition(":")
        command = getattr(importlib.import_module(module_name), attribute, None)
        return command if isinstance(command, click.Command) else None
