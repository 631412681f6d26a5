"""``nardgammon`` — long nardy with the six-block rule checked after every step (RULES.md §3.4).

«Запрещен блок из шести «пробегом», то есть строить глухой блок, в любой момент хода»: a step after which
the position holds an illegal block is illegal, even if a later step would dissolve it. Everything else
is inherited from ``long``: this plugin answers one hook.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.rules import BlockRule
from nardy.core.variant import VariantInfo
from nardy.variants.long import OPTIONS

NAME = "nardgammon"

INFO = VariantInfo(
    name=NAME,
    base="long",
    title="Nardgammon (нардгаммон)",
    summary="Long nardy with the six-block rule checked after every step (no transient blocks).",
    options=OPTIONS,
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_block_rule(variant: str, options: Options) -> BlockRule | None:
    return BlockRule(six_block="step") if variant == NAME else None
