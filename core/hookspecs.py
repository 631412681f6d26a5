"""Every hook of nardy, in one module (pytest's shape).

A variant is a plugin: a module or object with ``@nardy.core.hookimpl`` functions. It registers its name
with :func:`nardy_register_variants` and answers the **rule aspects** for its own name. The aspect hooks
are ``firstresult``: the kernel asks them for the variant, then for its base, its base's base, and so on,
and takes the first answer. So a variant derived from another one implements only the aspects that
differ (nardgammon = long + :func:`nardy_block_rule`), and inherits the rest without copying it.

The kernel calls the aspect hooks **once per variant and options** and compiles the answers into
:class:`~nardy.core.rules.Rules`; the move generator and the game loop never call a hook.

Every aspect hook receives ``variant`` (the name being asked about: the variant itself or one of its
bases) and ``options`` (the variant's options, validated, with defaults filled in). Return ``None`` for a
name that is not yours.

Built-in variants register through these same hooks; a third party registers through the entry-point
group ``nardy`` (see ``docs/writing-a-variant.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from nardy.core.rules import (
        BearOff,
        Blocking,
        BlockRule,
        CubeRule,
        GameEnd,
        HeadRule,
        Hitting,
        Layout,
        Scoring,
        TurnPlan,
    )
    from nardy.core.variant import VariantInfo

PROJECT = "nardy"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Options = Mapping[str, Any]
"""The options a hook receives: validated, with defaults filled in."""
Register = Callable[["VariantInfo"], None]
"""The callback :func:`nardy_register_variants` receives."""

# -- registration ----------------------------------------------------------------------------------


@hookspec
def nardy_register_variants(register: Register) -> None:
    """Register variants by calling ``register(VariantInfo(...))`` once per variant.

    :param register: call it with a :class:`~nardy.core.variant.VariantInfo` (name, base, summary,
        options). Registering a name twice is an error.
    """


# -- rule aspects (firstresult; asked once per variant and options) --------------------------------


@hookspec(firstresult=True)
def nardy_layout(variant: str, options: Options) -> Layout | None:
    """Return the starting layout and board geometry of ``variant``.

    Return ``None`` to let the variant's base (or another plugin) answer.
    Stops at first non-None result.

    :param variant: the variant name asked about.
    :param options: the variant's options, with defaults.
    """


@hookspec(firstresult=True)
def nardy_blocking(variant: str, options: Options) -> Blocking | None:
    """Return which points are closed to the mover (how many opposing checkers close a point).

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_hitting(variant: str, options: Options) -> Hitting | None:
    """Return what landing on a lone opposing checker does: hit it to the bar, pin it in place
    (``Hitting(mode="pin")``, RULES.md §3.12.2), or nothing.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_bear_off(variant: str, options: Options) -> BearOff | None:
    """Return when and how checkers are borne off, and whether moves inside home are restricted.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_head_rule(variant: str, options: Options) -> HeadRule | None:
    """Return the head rule: head steps per segment, the first-turn exception, the runner rule.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_block_rule(variant: str, options: Options) -> BlockRule | None:
    """Return the six-block rule and its timing (end of segment or every step), and Fevga's quarter
    and trap rules.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    """Return the dice and turn plan: doubles (four steps, progression, re-roll), transfer, the
    progression stop, and who starts.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_scoring(variant: str, options: Options) -> Scoring | None:
    """Return the scoring of a finished game: an object with ``value(loser) -> int`` and
    ``per_checker``. The kernel calls ``value`` once per game.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    """Return whether the doubling cube is in use.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def nardy_game_end(variant: str, options: Options) -> GameEnd | None:
    """Return the game ends besides the last checker borne off: the mother rule and its draw
    (RULES.md §2.6, §3.12.2). Optional: when no plugin answers, games end only by bear-off.

    Stops at first non-None result.
    """
