"""``giul`` — «Fevga бешеные – Giul» (RULES.md §3.10): fevga with a doubles progression and transfer.

«Если игрок не может начать играть выброшенный дубль, он не играется и к противнику не переходит.
Соперник дохаживает все не сыгранные ходы»: a started progression that cannot be completed hands every
unplayed step to the opponent. The stage in which the last checker comes home is the last one (no 4th-step
exception). Runner, quarter and trap rules apply in every stage and in transferred steps.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.rules import TurnPlan
from nardy.core.variant import VariantInfo
from nardy.variants.fevga import INFO as FEVGA
from nardy.variants.long import turn_plan

NAME = "giul"

INFO = VariantInfo(
    name=NAME,
    base="fevga",
    title="Giul (февга бешеные)",
    summary="Fevga with a doubles progression up to 6-6 and transfer of every unplayed step.",
    options=FEVGA.options,
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    return (
        turn_plan(options, doubles="progression", transfer=True, progression_stop="entry_stage")
        if variant == NAME
        else None
    )
