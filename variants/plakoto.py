"""``plakoto`` — the pinning game of Tavli (RULES.md §3.12.2).

Backgammon's board and directions with every checker starting on the opponent's 1-point, no bar
and no hitting: a checker landing on a lone opposing checker **pins** it (the kernel's
``Hitting(mode="pin")``); a pinned checker cannot move and stops its owner's bear-off until the
stack above it leaves. The **mother rule** (option ``mother``, the kernel's :class:`GameEnd`):
pinning a player's last checker on his own 24 ends the game, or makes it a draw when both mothers
are pinned. A frozen board (nobody can ever move again, RULES.md §2.6) is a draw under every
mother rule. Single 1, double 2 (also a mother end), no cube; the opening throw's winner rolls.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import MATCH_LENGTH, OptionSpec
from nardy.core.rules import GameEnd, Hitting, Layout
from nardy.core.variant import VariantInfo

NAME = "plakoto"

MOTHER = OptionSpec(
    "mother",
    "standard",
    "the mother rule: standard (the pinner wins unless he still has a checker on his own 24; "
    "both mothers pinned is a draw), simple (a pinned mother always wins), or off",
    choices=("standard", "simple", "off"),
)

INFO = VariantInfo(
    name=NAME,
    base="portes",
    title="Plakoto (Πλακωτό)",
    summary="All 15 start on the opponent's 1-point; a lone checker is pinned, not hit; the mother rule.",
    options=(MOTHER, MATCH_LENGTH),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    return Layout("opposite", {24: 15}) if variant == NAME else None


@hookimpl
def nardy_hitting(variant: str, options: Options) -> Hitting | None:
    return Hitting(mode="pin") if variant == NAME else None


@hookimpl
def nardy_game_end(variant: str, options: Options) -> GameEnd | None:
    if variant != NAME:
        return None
    return GameEnd(mother=options.get("mother", "standard"), mother_points=2)
