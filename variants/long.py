"""``long`` — classic long nardy («Длинные нарды», RULES.md §3.3).

Same direction, all 15 checkers on the head (own 24); any opposing checker closes a point and nothing is
hit; one head step per segment («снять с головы за один ход можно только 1 раз») with the first-turn
exception of option ``first_turn_head``; a six-block with no opposing checker ahead of it is illegal at
the end of a segment (transient blocks are allowed); doubles are four steps; standard bear-off; oin 1 /
mars 2 / koks 3, or per checker. The opening-throw winner rolls two dice; later games the previous
winner starts.
"""

from __future__ import annotations

from typing import Any

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import (
    CUBE,
    CUBE_OPTIONS,
    FIRST_TURN_HEAD,
    KOKS,
    MATCH_LENGTH,
    OPENING,
    SCORING,
)
from nardy.core.rules import (
    BearOff,
    Blocking,
    BlockRule,
    CubeRule,
    HeadRule,
    Hitting,
    Layout,
    LongScoring,
    Opening,
    PerCheckerScoring,
    Scoring,
    TurnPlan,
)
from nardy.core.variant import VariantInfo

NAME = "long"

OPTIONS = (FIRST_TURN_HEAD, SCORING, KOKS, OPENING, CUBE, MATCH_LENGTH, *CUBE_OPTIONS)
"""The long-nardy options, shared by the variants of RULES.md §4 that have "as long"."""

INFO = VariantInfo(
    name=NAME,
    title="Long nardy (длинные нарды)",
    summary="Classic long nardy: same direction, no hitting, head rule, six-block rule, oin/mars/koks.",
    options=OPTIONS,
)


def turn_plan(options: Options, **doubles: Any) -> TurnPlan:
    """Long nardy's turn plan with ``doubles`` fields changed; who starts comes from the ``opening``
    option (RULES.md §2.11: the opening-throw winner rolls, or plays the thrown numbers; later games
    the previous winner starts)."""
    style: Opening = (
        "numbers_used" if options.get("opening") == "backgammon_style" else "winner_rolls"
    )
    return TurnPlan(opening=style, later_games="previous_winner", **doubles)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    return Layout("same", {24: 15}) if variant == NAME else None


@hookimpl
def nardy_blocking(variant: str, options: Options) -> Blocking | None:
    # «на поле, где стоит хотя бы одна фишка противника, вступать нельзя»
    return Blocking(closed_by=1) if variant == NAME else None


@hookimpl
def nardy_hitting(variant: str, options: Options) -> Hitting | None:
    return Hitting(hits=False) if variant == NAME else None


@hookimpl
def nardy_bear_off(variant: str, options: Options) -> BearOff | None:
    return BearOff("standard", "always") if variant == NAME else None


@hookimpl
def nardy_head_rule(variant: str, options: Options) -> HeadRule | None:
    if variant != NAME:
        return None
    return HeadRule(limit=1, first_turn=options.get("first_turn_head", "principle"))


@hookimpl
def nardy_block_rule(variant: str, options: Options) -> BlockRule | None:
    # Classic timing: "the rule is an end-of-segment check".
    return BlockRule(six_block="end") if variant == NAME else None


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    return turn_plan(options) if variant == NAME else None


@hookimpl
def nardy_scoring(variant: str, options: Options) -> Scoring | None:
    if variant != NAME:
        return None
    if options.get("scoring") == "per_checker":
        return PerCheckerScoring()
    return LongScoring(koks=bool(options.get("koks", True)))


@hookimpl
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    return CubeRule(available=bool(options.get("cube", False))) if variant == NAME else None
