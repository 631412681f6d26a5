"""``hypergammon`` — backgammon with 1, 2 or 3 checkers a side (RULES.md §3.11).

"backgammon (§3.1) in every rule, with N = 3 checkers each on his own points ``{24: 1, 23: 1, 22: 1}``
(the 2- and 1-checker forms: ``{24: 1, 23: 1}`` and ``{24: 1}``)", as GNU Backgammon's variations
``1-chequer``, ``2-chequer`` and ``3-chequer hypergammon``. The option ``checkers`` picks the form; the
checker count follows from the layout, so a gammon is "the loser bore off none of his N". Every other
aspect is backgammon's: this plugin answers one hook.
"""

from __future__ import annotations

from nardy.core import hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.options import OptionSpec
from nardy.core.rules import Layout
from nardy.core.variant import VariantInfo
from nardy.variants.backgammon import INFO as BACKGAMMON

NAME = "hypergammon"

CHECKERS = OptionSpec(
    "checkers",
    3,
    "checkers a side: 3 on 24/23/22, 2 on 24/23, or 1 on 24",
    choices=(1, 2, 3),
    kind=int,
)

INFO = VariantInfo(
    name=NAME,
    base="backgammon",
    title="Hypergammon",
    summary="Backgammon with 3 (or 2, or 1) checkers a side, starting on the 24, 23 and 22 points.",
    options=(CHECKERS, *BACKGAMMON.options),
)

LAYOUTS = {3: {24: 1, 23: 1, 22: 1}, 2: {24: 1, 23: 1}, 1: {24: 1}}
"""RULES.md §3.11: the start points of each form, in each player's own coordinates."""


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(INFO)


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    if variant != NAME:
        return None
    return Layout("opposite", LAYOUTS[int(options.get("checkers", 3))])
