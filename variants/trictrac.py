"""``trictrac`` — "traditional tric-trac" (RULES.md §3.2, seed 002).

Backgammon's board, hitting, bar, four-step doubles and standard bear-off, with three differences:
White starts every game by rolling two dice (no opening throw), there is no cube, and a game scores
1 / 2 / 4 / 8 («Если противник не перевел все свои фишки в свой дом, то он дает 4 очка … если, кроме
того, противник имеет хотя бы одну фишку на борту доски, то он дает 8 очков»).
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import MATCH_LENGTH
from nardy.core.rules import CubeRule, TrictracScoring, TurnPlan
from nardy.core.variant import VariantInfo

NAME = "trictrac"

INFO = VariantInfo(
    name=NAME,
    base="backgammon",
    title="Tric-trac (традиционный трик-трак)",
    summary="Backgammon movement; White always starts; no cube; scoring 1 / 2 / 4 / 8.",
    options=(MATCH_LENGTH,),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    # «Ходят по очереди, начинают белые»: White rolls two dice, in every game.
    if variant != NAME:
        return None
    return TurnPlan(doubles="four", opening="white_starts", later_games="white_starts")


@hookimpl
def nardy_scoring(variant: str, options: Options) -> TrictracScoring | None:
    return TrictracScoring() if variant == NAME else None


@hookimpl
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    return CubeRule(available=False) if variant == NAME else None
