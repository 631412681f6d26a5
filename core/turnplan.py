"""The turn plan: which segments one turn is made of (RULES.md §2.3, §2.8-§2.10), written once.

A turn is one segment — a roll's two dice, or a double's four steps — unless the variant's doubles
are a progression (§2.8: the stages d, d+1, …, 6) or a re-roll chain (§2.9), or steps were handed
over to the mover (§2.10: his transferred groups, before his roll). What follows a segment depends
on a few numbers only: its dice, how many of them every legal play uses (N of §2.3), whether the
mover was all home at the stage's start and is at its end, and whether the stage bore a checker off
(§2.3: "everything the rules later derive from a segment ... is determined by the segment's start
and final positions").

This module is the one place those rules are written. The kernel's :class:`~nardy.core.game.Game`,
the learning environments' lean and batched flows and the analysis search all ask it, so a new turn
rule is one edit here. :func:`after_stage` uses only comparisons and ``&``, ``|``, ``^``: it takes
Python numbers for one game or numpy rows for a batch of games alike (the kernel itself needs no
numpy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from nardy.core.position import Position

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from nardy.core.rules import TurnPlan

    Rows = npt.NDArray[np.bool_]
    Values = npt.NDArray[np.integer[Any]]

SegmentKind = Literal["roll", "stage", "reroll", "transfer"]
"""Why a segment is played: a roll, a progression's stage, a re-roll of the chain, transferred steps."""

Transfer = tuple[tuple[int, int], ...]
"""Steps handed to the opponent (RULES.md §2.10): ``(value, count)`` groups; () for none."""

NO_TRANSFER: Final[Transfer] = ()

LAST_VALUE: Final = 6
"""A progression's stages run up to 6 (§2.8: "6-6 is a single stage")."""


def all_home(position: Position) -> bool:
    """RULES.md §1.4: "no checker on his points 7…24 and none on the bar" (one ``max`` over
    the points, not a generator: the lean flow reads it after every progression stage)."""
    return position.bar[0] == 0 and max(position.points[6:]) <= 0


def one_segment_turns(turn: TurnPlan) -> bool:
    """Whether every turn is one segment: doubles are four steps (§2.3), so nothing is planned —
    no progression stage, no re-roll, nothing transferred (§2.10 needs a double not played out,
    which only the progression and re-roll variants transfer)."""
    return turn.doubles == "four"


def roll_plan(turn: TurnPlan, a: int, b: int) -> tuple[SegmentKind, tuple[int, ...], bool]:
    """A roll's first segment: its kind, its dice and whether it is the turn's last whatever is
    played. Two dice, or a double's four steps (§2.3); a progression's first stage (§2.8); a
    re-roll chain's first double, followed by a re-roll when played in full (§2.9)."""
    if a != b:
        return "roll", (a, b), True
    doubles = turn.doubles
    if doubles == "four":
        return "roll", (a, a, a, a), True
    if doubles == "progression":
        return "stage", (a, a, a, a), False
    return "roll", (a, a, a, a), False


@cache
def roll_plans(
    turn: TurnPlan,
) -> Mapping[tuple[int, int], tuple[SegmentKind, tuple[int, ...], bool]]:
    """:func:`roll_plan` of each of the 36 rolls, once per turn plan (a game reads it every turn)."""
    return {(a, b): roll_plan(turn, a, b) for a in range(1, 7) for b in range(1, 7)}


def reroll_plan(a: int, b: int) -> tuple[SegmentKind, tuple[int, ...], bool]:
    """A re-roll of the chain (§2.9): a double is the chain's next double (re-rolled again when
    played in full); "a non-double ends the chain normally"."""
    if a != b:
        return "reroll", (a, b), True
    return "reroll", (a, a, a, a), False


def transfer_groups(steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The receiver's transferred steps as his turn's first segments (§2.10 item 3): "grouped by
    value in ascending order", each group ``(value, count)`` one segment of equal steps."""
    merged: dict[int, int] = {}
    for value, count in steps:
        merged[value] = merged.get(value, 0) + count
    return sorted(merged.items())


@overload
def after_stage(
    value: int,
    first: int,
    used: int,
    last: bool,
    start_home: bool,
    home: bool,
    kept_off: bool,
    extra_stage: bool,
) -> tuple[bool, bool, bool, bool]: ...


@overload
def after_stage(
    value: Values,
    first: Values,
    used: Values,
    last: Rows,
    start_home: Rows,
    home: Rows,
    kept_off: Rows,
    extra_stage: bool,
) -> tuple[Rows, Rows, Rows, Rows]: ...


def after_stage(
    value: Any,
    first: Any,
    used: Any,
    last: Any,
    start_home: Any,
    home: Any,
    kept_off: Any,
    extra_stage: bool,
) -> tuple[Any, Any, Any, Any]:
    """After a progression's stage of ``value`` (its first stage ``first``) in which ``used`` dice
    were played: ``(go_on, next_last, short, last)``.

    ``last``: the stage was already known to be the last; ``start_home`` / ``home``: the mover was
    all home at the stage's start / is at its end; ``kept_off``: nothing was borne off in it;
    ``extra_stage``: ``progression_stop == "fourth_step_extra"`` (``mad_gulbar``).

    * ``go_on``: the stage ``value + 1`` follows, the last stage when ``next_last``;
    * ``short``: the stage was played in part (§2.8 item 3), so its unplayed steps — and, unless
      ``last`` (now updated), the later stages' — are lost or transferred (:func:`stage_handover`);
    * neither: the turn ends with nothing owed (not started, item 2; or the last stage played out).

    §2.8 item 4: *entry* is the mover coming all home during a stage he did not start all home;
    that stage is the last, but in ``mad_gulbar`` an entry on step 4 — "all four steps of the stage
    were played, the mover was not all home at the start of the stage, is all home at its end and
    bore nothing off during it" — earns exactly one more stage, the last.
    """
    started = (value != first) | (used != 0)  # item 2, "not started": the first stage's N = 0
    entered = (last ^ True) & (start_home ^ True) & home
    extra = entered & (used == 4) & kept_off & extra_stage
    last = last | (entered & (extra ^ True))
    go_on = started & (used == 4) & (last ^ True) & (value != LAST_VALUE)
    short = started & (used < 4)
    return go_on, extra, short, last


def stage_handover(value: int, used: int, last: bool) -> Transfer:
    """The unplayed steps of a progression's stage of ``value`` played in part (``used < 4``,
    started): the rest of the stage "plus every later stage that would have been played" — none
    once the stage is the ``last`` (§2.8 items 3-4, §2.10 item 2)."""
    later = () if last else tuple((y, 4) for y in range(value + 1, LAST_VALUE + 1))
    return ((value, 4 - used), *later)


def chain_handover(value: int, used: int) -> Transfer:
    """A re-roll chain's double of ``value`` with ``used`` steps played (§2.9): in full, nothing
    (it is re-rolled); "a double with 1 ≤ N < 4 transfers its 4 − N unplayed steps"; with N = 0,
    nothing."""
    return ((value, 4 - used),) if 1 <= used < 4 else NO_TRANSFER


def later_steps(
    kind: SegmentKind, dice: tuple[int, ...], home: bool, groups: Sequence[tuple[int, int]]
) -> tuple[int, ...]:
    """The steps planned after a segment of ``kind`` with ``dice`` in its turn (what a decision's
    context states): a progression stage's later stages (each four steps, up to 6) unless the
    mover is ``home`` at its start (§2.8 item 4: the stage is then the last), a transferred group's
    later ``groups`` (ascending, §2.10 item 3); else none."""
    if kind == "stage":
        return (
            () if home else tuple(v for v in range(dice[0] + 1, LAST_VALUE + 1) for _ in range(4))
        )
    if kind == "transfer":
        value = dice[0]
        return tuple(v for v, n in groups if v > value for _ in range(n))
    return ()


_DIE_NAMES: Final = ("", "one", "two", "three", "four", "five", "six")
_DIE_PLURALS: Final = ("", "ones", "twos", "threes", "fours", "fives", "sixes")


def describe(kind: SegmentKind, dice: tuple[int, ...], first: int = 0) -> str:
    """A segment in words, as game records state it: "roll 6-5", "re-roll 3-3", "stage 5 of a 3-3
    progression" (``first``: the progression's rolled value; its only stage 6-6 is "6-6"), "3 sixes
    transferred from the opponent"."""
    if kind == "roll":
        return f"roll {dice[0]}-{dice[1]}"
    if kind == "reroll":
        return f"re-roll {dice[0]}-{dice[1]}"
    if kind == "stage":
        return f"stage {dice[0]} of a {first}-{first} progression" if first < LAST_VALUE else "6-6"
    count = len(dice)
    name = _DIE_NAMES[dice[0]] if count == 1 else _DIE_PLURALS[dice[0]]
    return f"{count} {name} transferred from the opponent"


def opening_outcome(turn: TurnPlan, white: int, black: int) -> tuple[int, tuple[int, int] | None]:
    """RULES.md §2.11's opening throw, once it is not a tie ("each throws one die; ties are thrown
    again"): who starts (0 White, 1 Black), and his first roll where the opening's numbers are
    used (``numbers_used``: the higher die first), else None (he rolls)."""
    starter = 0 if white > black else 1
    if turn.opening == "numbers_used":
        return starter, (white, black) if starter == 0 else (black, white)
    return starter, None


def reroll_follows(turn: TurnPlan, kind: str, dice: Sequence[int]) -> bool:
    """Whether a segment is a re-roll chain's double, which is re-rolled when played in full
    (§2.9: "if all four steps of a rolled double were played ... the same player rolls again");
    a decision's context states it."""
    return turn.doubles == "reroll" and len(dice) == 4 and (kind == "roll" or kind == "reroll")
