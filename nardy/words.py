"""Results and cube actions in the words players use (RULES.md §2.12, §3 scoring, §6).

"Black wins a gammon, 2 × cube 4 = 8 points" instead of "Black won 8 (borne_off)": the kind of
win comes from the variant's scoring (backgammon's single/gammon/backgammon, long nardy's
oin/mars/koks, tric-trac's 1/2/4/8, the per-checker stake) and the record's ``multiplier`` (the
game's value before the cube), the points from the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nardy.core.rules import (
    BackgammonScoring,
    FevgaScoring,
    LongScoring,
    PerCheckerScoring,
    TrictracScoring,
)
from nardy.core.variant import Variant

__all__ = ["cube_action", "points", "result_words", "win_kind"]

_KINDS: tuple[tuple[type, Mapping[int, str]], ...] = (
    (BackgammonScoring, {1: "single game", 2: "gammon", 3: "backgammon"}),
    (LongScoring, {1: "oin", 2: "mars", 3: "koks"}),
    (FevgaScoring, {1: "single game", 2: "mars"}),
    (
        TrictracScoring,
        {
            1: "single game",
            2: "2-point game (nothing borne off)",
            4: "4-point game (nothing borne off, a checker outside home)",
            8: "8-point game (nothing borne off, a checker on the bar)",
        },
    ),
)


def points(n: int) -> str:
    """``1 point``, ``8 points``."""
    return f"{n} point" if n == 1 else f"{n} points"


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou8" or noun.startswith("11") else "a ") + noun


def win_kind(variant: Variant, multiplier: int) -> str:
    """The name of a win worth ``multiplier`` before the cube: ``gammon``, ``mars``, …"""
    scoring = variant.rules.scoring
    if isinstance(scoring, FevgaScoring) and variant.rules.geometry == "opposite":
        # portes and plakoto (RULES.md §3.12): 1 or 2 as in fevga, in backgammon's words.
        return {1: "single game", 2: "gammon"}.get(multiplier, f"{multiplier}-point game")
    for kind, names in _KINDS:
        if isinstance(scoring, kind) and multiplier in names:
            return names[multiplier]
    return f"{multiplier}-point game"


def _who(colour: str, names: Mapping[str, str] | None) -> str:
    name = (names or {}).get(colour)
    return f"{colour} ({name})" if name and name != colour else colour


def result_words(
    result: Mapping[str, Any] | None,
    variant: Variant,
    *,
    cube: int = 1,
    names: Mapping[str, str] | None = None,
) -> str:
    """One sentence for an arena record's ``result`` (``winner``, ``points``, ``multiplier``,
    ``termination``, ``reason``); ``cube``: the cube's value at the end; ``names``: colour → name.
    """
    if not result:
        return "Not finished."
    winner = result.get("winner")
    termination = str(result.get("termination") or "")
    reason = str(result.get("reason") or "")
    if termination == "draw":  # plakoto (RULES.md §3.12.2): both mothers pinned
        return "A draw: both mothers are pinned; nobody scores."
    if winner not in ("White", "Black"):
        return f"No result: the game was {termination or 'not finished'}" + (
            f" ({reason})." if reason else "."
        )
    loser = "Black" if winner == "White" else "White"
    won = int(result.get("points") or 0)
    who, other = _who(winner, names), _who(loser, names)
    if termination == "double_dropped":
        return f"{other} drops the double: {who} wins {points(won)}."
    if termination in ("time_forfeit", "bot_failure"):
        why = "on time" if termination == "time_forfeit" else "(its bot failed)"
        return f"{other} forfeits {why}: {who} wins {points(won)}."
    if termination == "mother":  # plakoto (RULES.md §3.12.2)
        return f"{who} wins by the mother rule ({loser}'s mother is pinned): {points(won)}."
    multiplier = int(result.get("multiplier") or 1)
    cube = max(cube, 1)
    if isinstance(variant.rules.scoring, PerCheckerScoring):
        stake = f"{points(multiplier)} for the checkers {loser} has not borne off"
        if cube > 1:
            return f"{who} wins: {multiplier} × cube {cube} = {points(won)} (per checker)."
        return f"{who} wins {stake}."
    kind = win_kind(variant, multiplier)
    if won == cube and multiplier > 1:  # Jacoby: the cube stayed centred (RULES.md §2.12)
        return (
            f"{who} wins {_a(kind)}, counted single (Jacoby: the cube stayed in the middle): "
            f"{points(won)}."
        )
    if cube == 1:
        return f"{who} wins {_a(kind)}: {points(won)}."
    return f"{who} wins {_a(kind)}, {multiplier} × cube {cube} = {points(won)}."


def cube_action(
    kind: str,
    answer: str | None,
    player: str,
    cube: int,
    offered: int | None = None,
) -> str:
    """A cube decision in words: "White doubles to 2", "Black takes (cube 2)", "White rolls"."""
    if answer is None:
        return f"{player} gave no answer"
    if kind == "double":
        return f"{player} doubles to {2 * cube}" if answer == "double" else f"{player} rolls"
    value = offered if offered is not None else 2 * cube
    if answer == "take":
        return f"{player} takes (cube {value}, {player} owns it)"
    if answer == "drop":
        return f"{player} drops"
    if answer == "beaver":
        return f"{player} beavers (cube {2 * value}, {player} owns it)"
    return f"{player}: {answer}"
