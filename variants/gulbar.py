"""``gulbar`` — «Гюльбар» of the seed (RULES.md §3.6), not the public Gul bara.

Long nardy whose fully played doubles are re-rolled («При выпадении дубля если игрок смог сделать все 4
хода, то он бросает кости снова»), without limit, each roll with its own head step; a double that was
started but not finished hands its unplayed steps to the opponent («не доигранные ходы должен сделать
соперник»), who plays them before his own roll.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.rules import TurnPlan
from nardy.core.variant import VariantInfo
from nardy.variants.long import OPTIONS, turn_plan

NAME = "gulbar"

INFO = VariantInfo(
    name=NAME,
    base="long",
    title="Gulbar (гюльбар)",
    summary="Long nardy with a re-roll after a fully played double and transfer of unplayed double steps.",
    options=OPTIONS,
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    return turn_plan(options, doubles="reroll", transfer=True) if variant == NAME else None
