"""``backgammon`` — short nardy (RULES.md §3.1): standard backgammon as GNU Backgammon plays it.

Opposite directions, each side ``{24: 2, 13: 5, 8: 3, 6: 5}``; two or more checkers close a point and a
lone checker is hit to the bar, which must be re-entered first; doubles are four steps; standard
bear-off; single 1 / gammon 2 / backgammon 3, times the cube. The opening throw's two numbers are the
first roll, in every game.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import CUBE_ON, CUBE_OPTIONS, MATCH_LENGTH
from nardy.core.rules import (
    BackgammonScoring,
    BearOff,
    Blocking,
    BlockRule,
    CubeRule,
    HeadRule,
    Hitting,
    Layout,
    TurnPlan,
)
from nardy.core.variant import VariantInfo

NAME = "backgammon"

INFO = VariantInfo(
    name=NAME,
    title="Backgammon (короткие нарды)",
    summary="Standard backgammon: hitting and the bar, doubling cube, gammons and backgammons.",
    options=(CUBE_ON, MATCH_LENGTH, *CUBE_OPTIONS),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    if variant != NAME:
        return None
    return Layout("opposite", {24: 2, 13: 5, 8: 3, 6: 5})


@hookimpl
def nardy_blocking(variant: str, options: Options) -> Blocking | None:
    return Blocking(closed_by=2) if variant == NAME else None


@hookimpl
def nardy_hitting(variant: str, options: Options) -> Hitting | None:
    return Hitting(hits=True) if variant == NAME else None


@hookimpl
def nardy_bear_off(variant: str, options: Options) -> BearOff | None:
    return BearOff("standard", "always") if variant == NAME else None


@hookimpl
def nardy_head_rule(variant: str, options: Options) -> HeadRule | None:
    return HeadRule(limit=None) if variant == NAME else None


@hookimpl
def nardy_block_rule(variant: str, options: Options) -> BlockRule | None:
    # "Six-block: none (a six-point prime is legal)."
    return BlockRule() if variant == NAME else None


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    if variant != NAME:
        return None
    return TurnPlan(doubles="four", opening="numbers_used", later_games="opening")


@hookimpl
def nardy_scoring(variant: str, options: Options) -> BackgammonScoring | None:
    return BackgammonScoring() if variant == NAME else None


@hookimpl
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    return CubeRule(available=bool(options.get("cube", True))) if variant == NAME else None
