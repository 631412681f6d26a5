"""``mad_gulbar`` — «Бешеный гюльбар» (RULES.md §3.7).

Long nardy with the doubles progression of ``mad``, but every unplayed step of a started progression is
transferred to the opponent, and when the last checker comes home on the 4th step of a stage exactly one
more stage is played («При заходе в дом последней шашки на последнем же (четвертом) ходе куша разрешается
игра следующего по очереди куша»). Once all home only bear-offs are legal («Ходить в доме можно, пока
последняя шашка не заведена в дом»), by the standard rule.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.rules import BearOff, TurnPlan
from nardy.core.variant import VariantInfo
from nardy.variants.long import OPTIONS, turn_plan

NAME = "mad_gulbar"

INFO = VariantInfo(
    name=NAME,
    base="long",
    title="Mad gulbar (бешеный гюльбар)",
    summary="Doubles progression with transfer of every unplayed step and the 4th-step extra stage.",
    options=OPTIONS,
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_bear_off(variant: str, options: Options) -> BearOff | None:
    return BearOff("standard", "until_all_home") if variant == NAME else None


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    return (
        turn_plan(
            options, doubles="progression", transfer=True, progression_stop="fourth_step_extra"
        )
        if variant == NAME
        else None
    )
