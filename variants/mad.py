"""``mad`` — «Бешеные» (RULES.md §3.5): long nardy with a doubles progression and exact bear-off.

A double d-d is played as the stages d, d+1, …, 6, each its own segment with its own head step («С
головы легально снимать по одной шашке на каждый дубль»). A double that cannot be started is not played;
a stage that cannot be completed ends the turn and the rest is lost (no transfer). The stage in which the
last checker comes home is the last one. Bear-off is exact only («выносить их лишь с полей,
соответствующих выброшенным костям»), and moves inside home follow option ``home_moves``.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import HOME_MOVES
from nardy.core.rules import BearOff, TurnPlan
from nardy.core.variant import VariantInfo
from nardy.variants.long import OPTIONS, turn_plan

NAME = "mad"

INFO = VariantInfo(
    name=NAME,
    base="long",
    title="Mad nardy (бешеные)",
    summary="Long nardy with a doubles progression up to 6-6, exact bear-off, no moves inside home.",
    options=(*OPTIONS, HOME_MOVES),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_bear_off(variant: str, options: Options) -> BearOff | None:
    if variant != NAME:
        return None
    return BearOff("exact", options.get("home_moves", "until_all_home"))


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    return (
        turn_plan(options, doubles="progression", transfer=False, progression_stop="entry_stage")
        if variant == NAME
        else None
    )
