"""The engine's hint on one position: its legal plays ranked at a ply, and the cube decision.

What ``nardy hint`` prints and the analysis board shows: the same :class:`~nardy.engines.search.
Searcher` ranking and the same cube model (:mod:`nardy.analysis.cube`) that ``nardy analyze`` rates
played decisions with, asked of a position nobody played. Equities are cubeless points of one
game from the mover's side (after each play for the plays, before the roll for the position);
the cube's three equities are normalised to the cube value, as in the analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nardy.analysis.cube import CubeAnalysis, analyse_cube, probabilities_from_equity
from nardy.core.position import Position
from nardy.core.variant import Variant, pin_marked_text
from nardy.engines.evaluator import make_evaluator
from nardy.engines.search import RankedPlay, Searcher

__all__ = ["CubeOwner", "Hint", "hint"]

CubeOwner = Literal["centre", "mover", "opponent"]


@dataclass(frozen=True, slots=True)
class Hint:
    """An engine's view of one position (module doc)."""

    variant: str
    position: Position
    evaluator: str
    ply: int
    equity: float
    """The mover's cubeless equity before his roll, at ``ply``."""
    dice: tuple[int, ...] | None
    """The segment's steps the plays are for; None: no dice given (the cube decision only)."""
    plays: tuple[RankedPlay, ...]
    """Every legal play of ``dice``, best first (empty without dice)."""
    texts: tuple[str, ...]
    """Each ranked play's text as shown (a pinning step marked ``^``, RULES.md §3.12.2)."""
    cube: CubeAnalysis | None
    """The mover's cube decision, where the variant has a cube and he may double."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form (docs/play.md)."""
        return {
            "variant": self.variant,
            "position": self.position.id(),
            "evaluator": self.evaluator,
            "ply": self.ply,
            "equity": round(self.equity, 6),
            "dice": list(self.dice) if self.dice is not None else None,
            "plays": [
                {
                    "rank": rank,
                    "play": text,
                    "equity": round(play.equity, 6),
                    "loss": round(play.loss, 6),
                    "ply": play.ply,
                }
                for rank, (play, text) in enumerate(zip(self.plays, self.texts, strict=True), 1)
            ],
            "cube": None
            if self.cube is None
            else {
                "action": self.cube.best,
                "no_double": round(self.cube.no_double, 6),
                "double_take": round(self.cube.double_take, 6),
                "double_pass": round(self.cube.double_pass, 6),
            },
        }


def hint(
    variant: Variant,
    position: Position,
    *,
    dice: Sequence[int] | None = None,
    ply: int = 0,
    evaluator: str = "neural",
    cube_owner: CubeOwner = "centre",
) -> Hint:
    """Rank the legal plays of ``position`` with the segment ``dice`` (none: the cube only) at
    ``ply`` by ``evaluator`` (a :func:`~nardy.engines.evaluator.make_evaluator` spec).

    The cube decision is given where the variant has a cube and ``cube_owner`` lets the mover
    double (centred or his: the kernel's :class:`~nardy.core.game.Cube`). Raises
    :class:`ValueError` for an unknown evaluator and the kernel's errors for an illegal position
    or dice."""
    variant.validate(position)
    searcher = Searcher(variant, make_evaluator(evaluator, variant))
    equity = searcher.equity(position, ply)
    ranked: tuple[RankedPlay, ...] = ()
    texts: tuple[str, ...] = ()
    if dice is not None:
        ranked = tuple(searcher.rank(position, dice, ply))
        pins = variant.rules.hitting.pins
        texts = tuple(
            (pin_marked_text(position, play.text) if pins and play.text else play.text)
            or "(no move)"
            for play in ranked
        )
    cube = None
    if variant.rules.cube.available and cube_owner != "opponent":
        # As the analysis rates a double: the evaluator's probabilities where it has them, else
        # gammonless ones from the equity at the ply (nardy.analysis.cube).
        probabilities = searcher.evaluator.probabilities(position)
        if probabilities is None:
            probabilities = probabilities_from_equity(equity)
        jacoby = bool(variant.options.get("jacoby"))
        cube = analyse_cube(
            probabilities, "centre" if cube_owner == "centre" else "me", jacoby=jacoby
        )
    return Hint(
        variant.name,
        position,
        evaluator,
        ply,
        equity,
        tuple(dice) if dice is not None else None,
        ranked,
        texts,
        cube,
    )
