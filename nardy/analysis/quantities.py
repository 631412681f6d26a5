"""Figures per decision that analysis averages for each player, beside its own: the extension point
for a new analysis quantity (docs/architecture.md, "Adding an analysis quantity").

A :class:`Quantity` says what one decision contributes (a number, or None where the decision does
not count for it); analysis averages it over each player's decisions that count, in one game
(:class:`~nardy.analysis.game.PlayerStats`) and over many (a tournament's totals add the sums and
counts, so a mean over games weighs every decision the same). A registered quantity appears in
``nardy analyze``'s JSON (``"quantities"``), its table and the spectator's analysis pages; with none
registered, every output is what it was without this module.

Quantities join by :func:`register_quantity` or, from an installed package, by the entry-point
group ``nardy.analysis_quantities`` (name = ``module:QUANTITY``), loaded once on first use."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nardy.analysis.game import DecisionAnalysis

__all__ = ["ENTRY_POINT_GROUP", "Quantity", "quantities", "register_quantity"]

ENTRY_POINT_GROUP = "nardy.analysis_quantities"
"""Installed packages add quantities here: ``name = "package.module:QUANTITY"``."""

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Quantity:
    """One figure per decision, averaged per player."""

    name: str
    """Its key in the JSON (a lower-case identifier, unique)."""
    heading: str
    """Its column heading in the tables."""
    of_decision: Callable[[DecisionAnalysis], float | None]
    """What one decision contributes; None: the decision does not count for this quantity."""
    digits: int = 3
    """Decimals shown and written (the mean is rounded to them in the JSON)."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a quantity's name is a lower-case identifier, not {self.name!r}")


_REGISTERED: dict[str, Quantity] = {}


def register_quantity(quantity: Quantity) -> None:
    """Make ``quantity`` part of every analysis from now on; :class:`ValueError` for a name
    already taken by another quantity (registering the same one twice is harmless)."""
    known = _REGISTERED.get(quantity.name) or _installed().get(quantity.name)
    if known is not None and known != quantity:
        raise ValueError(f"an analysis quantity named {quantity.name!r} is already registered")
    _REGISTERED[quantity.name] = quantity


def unregister_quantity(name: str) -> None:
    """Forget a quantity :func:`register_quantity` added (tests; an installed one stays)."""
    _REGISTERED.pop(name, None)


@cache
def _installed() -> dict[str, Quantity]:
    """The quantities of installed packages' entry points, by name; one that cannot be loaded or
    is not a :class:`Quantity` is a :class:`ValueError` naming it."""
    from importlib import metadata

    found: dict[str, Quantity] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        module_name, _, attribute = entry.value.partition(":")
        try:
            quantity = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"cannot load analysis quantity {entry.value!r}: {error}") from None
        if not isinstance(quantity, Quantity):
            raise ValueError(f"{entry.value!r} is not a nardy.analysis.quantities.Quantity")
        found[quantity.name] = quantity
    return found


def quantities() -> tuple[Quantity, ...]:
    """Every quantity in use, installed ones first, each group in name order."""
    installed = _installed()
    own = {name: q for name, q in _REGISTERED.items() if name not in installed}
    return tuple(installed[n] for n in sorted(installed)) + tuple(own[n] for n in sorted(own))
