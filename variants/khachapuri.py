"""``khachapuri`` — «Хачапури / Тбилисские нарды» (RULES.md §3.8), a modified ``gulbar``.

«В шестой лунке дома находится 11 шашек, 4 в голове. С головы за один ход можно снимать сколько угодно
шашек. Традиционно играют со ставкой за не выброшенные шашки»: each side starts with 11 on his 6-point
and 4 on the head, any number may leave the head, and the loser pays per checker not borne off. Doubles,
re-rolls and transfer are gulbar's.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import CUBE, CUBE_OPTIONS, MATCH_LENGTH, OPENING
from nardy.core.rules import HeadRule, Layout, PerCheckerScoring
from nardy.core.variant import VariantInfo

NAME = "khachapuri"

INFO = VariantInfo(
    name=NAME,
    base="gulbar",
    title="Khachapuri (хачапури, тбилисские нарды)",
    summary="Gulbar from 11 checkers on the 6-point and 4 on the head; no head limit; per-checker stake.",
    options=(OPENING, CUBE, MATCH_LENGTH, *CUBE_OPTIONS),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    return Layout("same", {24: 4, 6: 11}) if variant == NAME else None


@hookimpl
def nardy_head_rule(variant: str, options: Options) -> HeadRule | None:
    return HeadRule(limit=None) if variant == NAME else None


@hookimpl
def nardy_scoring(variant: str, options: Options) -> PerCheckerScoring | None:
    return PerCheckerScoring() if variant == NAME else None
