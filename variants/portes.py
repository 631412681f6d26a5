"""``portes`` — Greek backgammon, the first game of Tavli (RULES.md §3.12.1).

Backgammon (§3.1) in every rule except the score and the start: single 1, gammon 2 and no triple
game (a loser on the bar or in the winner's home still loses 2); no doubling cube; the opening
throw's winner rolls two dice for his first turn, and in later games of a match the previous
winner starts. This plugin answers only those aspects.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import MATCH_LENGTH
from nardy.core.rules import CubeRule, FevgaScoring, TurnPlan
from nardy.core.variant import VariantInfo

NAME = "portes"

INFO = VariantInfo(
    name=NAME,
    base="backgammon",
    title="Portes (Πόρτες)",
    summary="Backgammon without the cube or the triple game (1 / 2); the opening throw's winner rolls.",
    options=(MATCH_LENGTH,),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_turn_plan(variant: str, options: Options) -> TurnPlan | None:
    if variant != NAME:
        return None
    # "opening throw, winner rolls … Later games of a match: the previous winner rolls".
    return TurnPlan(doubles="four", opening="winner_rolls", later_games="previous_winner")


@hookimpl
def nardy_scoring(variant: str, options: Options) -> FevgaScoring | None:
    # "1 (single: the loser bore off ≥ 1), 2 (the loser bore off none)": Fevga's 1 / 2.
    return FevgaScoring() if variant == NAME else None


@hookimpl
def nardy_cube_rule(variant: str, options: Options) -> CubeRule | None:
    return CubeRule(available=False) if variant == NAME else None
