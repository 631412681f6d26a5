"""``fevga`` — «Fevga – Спешить» (RULES.md §3.9).

Long nardy's board without its head limit and six-block rule, and with three rules of its own:
the **runner rule** («с головы позволительно снять только 1 шашку и ходить только ею. Как только она
пройдет голову соперника – разрешено снимать с головы сколько угодно шашек»), the **quarter rule** (the
mover may not hold all six points 19…24; option ``quarter_timing``) and the **trap rule** (a six-block
right in front of all the opponent's checkers must be opened when a maximum-dice play does it). Scoring
1 / 2, no cube.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import MATCH_LENGTH, OPENING, QUARTER_TIMING
from nardy.core.rules import BlockRule, CubeRule, FevgaScoring, HeadRule
from nardy.core.variant import VariantInfo

NAME = "fevga"

INFO = VariantInfo(
    name=NAME,
    base="long",
    title="Fevga (февга, «спешить»)",
    summary="Runner rule instead of a head limit; blocks free but for the quarter and trap rules; 1/2.",
    options=(QUARTER_TIMING, OPENING, MATCH_LENGTH),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_head_rule(variant: str, options: Options) -> HeadRule | None:
    return HeadRule(limit=None, runner=True) if variant == NAME else None


@hookimpl
def nardy_block_rule(variant: str, options: Options) -> BlockRule | None:
    if variant != NAME:
        return None
    if options.get("quarter_timing") == "every_step":
        return BlockRule(six_block="none", quarter="step", trap=True)
    return BlockRule(six_block="none", quarter="end", trap=True)


@hookimpl
def nardy_scoring(variant: str, options: Options) -> FevgaScoring | None:
    return FevgaScoring() if variant == NAME else None


@hookimpl
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    return CubeRule(available=False) if variant == NAME else None
