"""A variant's options as the web's forms offer them: the analysis board's option box
(:mod:`nardy.web.board`) and the Play form's (:mod:`nardy.web.play`) both build their inputs
from this list, with the same script (``static/options.js``)."""

from __future__ import annotations

from typing import Any

from nardy.core.variant import VariantInfo

__all__ = ["option_specs"]


def option_specs(info: VariantInfo) -> list[dict[str, Any]]:
    """``info``'s options (name, default, choices, kind, help) but ``match_length``: the board
    shows one game's position, with no match to play, and the Play form asks the match length
    in a field of its own."""
    return [
        {
            "name": o.name,
            "default": o.default,
            "choices": list(o.choices),
            "kind": o.kind.__name__,
            "help": o.help,
        }
        for o in info.options
        if o.name != "match_length"
    ]
