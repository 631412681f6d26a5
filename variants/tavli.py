"""``tavli`` — the Tavli match (RULES.md §3.12.3): games of portes, plakoto and fevga in turn.

A match variant: it answers no rule of its own (each game is played by its own variant's rules, so
its compiled rules are its first game's, portes), it only declares the cycle
(``VariantInfo.cycle``), which :meth:`nardy.core.match.Match.of` turns into the match's games. Who
starts each game (the previous winner; after a draw a new opening throw) and the absence of a cube
come from the game variants themselves.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Register
from nardy.core.options import MATCH_LENGTH
from nardy.core.variant import VariantInfo

NAME = "tavli"

INFO = VariantInfo(
    name=NAME,
    base="portes",
    title="Tavli (Τάβλι)",
    summary="A match (only): portes, plakoto and fevga in turn, each by its own rules, to N points.",
    options=(MATCH_LENGTH,),
    cycle=("portes", "plakoto", "fevga"),
)


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)
