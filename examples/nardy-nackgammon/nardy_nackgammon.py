"""``nackgammon`` — backgammon from Nack Ballard's deeper layout: ``{24: 2, 23: 2, 13: 4, 8: 3, 6: 4}``.

Everything but the starting layout is backgammon's: this plugin registers the variant with
``base="backgammon"`` and answers one hook, :func:`nardy_layout`; the kernel asks ``backgammon``'s
plugin for every other aspect (blocking, hitting, bear-off, turn plan, scoring, cube).
"""

from __future__ import annotations

from nardy.core import VariantInfo, hookimpl
from nardy.core.hookspecs import Options, Register
from nardy.core.rules import Layout
from nardy.variants.backgammon import INFO as BACKGAMMON

NAME = "nackgammon"


@hookimpl
def nardy_register_variants(register: Register) -> None:
    register(
        VariantInfo(
            name=NAME,
            base="backgammon",
            title="Nackgammon",
            summary="Backgammon with two more back checkers: 24:2 23:2 13:4 8:3 6:4.",
            options=BACKGAMMON.options,
        )
    )


@hookimpl
def nardy_layout(variant: str, options: Options) -> Layout | None:
    if variant != NAME:
        return None
    return Layout("opposite", {24: 2, 23: 2, 13: 4, 8: 3, 6: 4})
