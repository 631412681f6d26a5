"""A cloneable game state with explicit chance nodes, for search algorithms (OpenSpiel's MCTS).

:class:`~nardy.core.game.Game` runs the turn plan as a generator that draws its own dice; a search
needs to copy a state and to see every roll as a chance node. :class:`GameState` is the same turn
plan of RULES.md §2 — opening throw (§2.11), transferred steps (§2.10), cube action (§2.12), roll,
segments of a plain roll, a progression (§2.8) or a re-roll chain (§2.9) — written as an explicit
state machine: plain fields, ``clone()`` in a few microseconds, and three kinds of node:

* chance (``chance_outcomes()``: ordered pairs ``(a, b)`` with their probabilities; the opening
  throw is one ordered pair White-Black, later rolls are written high die first);
* decision (``decision``: a :class:`PlayDecision`, :class:`DoubleDecision` or
  :class:`TakeDecision` exactly as the kernel's game makes them);
* terminal (``result``).

``tests/test_openspiel.py`` plays it side by side with :class:`Game` on the same dice and answers
and requires the same decisions, positions and results.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from nardy.core.game import (
    _DIE_NAMES,
    _DIE_PLURALS,
    COLOURS,
    WHITE,
    Cube,
    CubeSettings,
    DoubleDecision,
    GameResult,
    PlayDecision,
    Segment,
    SegmentKind,
    TakeDecision,
    all_home,
    cube_settings_for,
    pinning_end,
)
from nardy.core.position import Position
from nardy.core.variant import LegalPlays, Variant

Decision = PlayDecision | DoubleDecision | TakeDecision
Roll = tuple[int, int]
_Next = Literal["turn", "transfer", "cube", "roll", "end_turn"] | None
"""Where the flow goes next; None: it waits (a decision or chance node is set, or a nested call
already went on)."""


class GameState:
    """One game of a variant as an explicit, cloneable state machine (see the module docstring)."""

    def __init__(self, variant: Variant, *, cube: CubeSettings | None = None) -> None:
        self.variant = variant
        self.rules = variant.rules
        self.checkers = sum(self.rules.layout.points.values())
        self.cube_settings = cube or cube_settings_for(
            variant, match_length=variant.options.get("match_length")
        )
        self.cube = Cube()
        self.position = variant.start_position()
        self.mover = WHITE
        self.result: GameResult | None = None
        self.decision: Decision | None = None
        self.pending_transfer: list[list[tuple[int, int]]] = [[], []]
        self.no_cube_yet = True
        self.first_roll: Roll | None = None
        self.auto_doubles = 0
        # Where the turn is: the chance node to resolve ("opening" / "roll" / "reroll" / None) and
        # the continuation after the current segment.
        self.chance: Literal["opening", "roll", "reroll"] | None = None
        self.transfer_groups: list[tuple[int, int]] = []
        self.after: Literal["transfer", "end_turn", "stage", "reroll"] = "end_turn"
        self.segment: Segment | None = None
        self.plays: LegalPlays | None = None
        self.stage_start: Position | None = None
        self.progression: tuple[int, int, bool] = (0, 0, False)
        """(rolled value d, current stage x, last stage reached)."""
        self._used = 0
        if self.rules.turn.opening == "white_starts":
            self._run("turn")
        else:
            self.chance = "opening"

    # -- copying -------------------------------------------------------------------------------

    def clone(self) -> GameState:
        """An independent copy (positions, plays and the variant are immutable and shared)."""
        new = copy.copy(self)
        new.cube = Cube(self.cube.value, self.cube.owner)
        new.pending_transfer = [list(self.pending_transfer[0]), list(self.pending_transfer[1])]
        new.transfer_groups = list(self.transfer_groups)
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> GameState:
        return self.clone()

    # -- queries -------------------------------------------------------------------------------

    @property
    def is_chance(self) -> bool:
        return self.chance is not None

    @property
    def is_terminal(self) -> bool:
        return self.result is not None

    def chance_outcomes(self) -> list[tuple[Roll, float]]:
        """The possible throws now: 36 ordered White-Black pairs for the opening throw, else the
        21 distinct rolls (high die first) with their probabilities."""
        if self.chance == "opening":
            return [((a, b), 1 / 36) for a in range(1, 7) for b in range(1, 7)]
        if self.chance is None:
            raise ValueError("not a chance node")
        return [
            ((a, b), (1 if a == b else 2) / 36) for a in range(6, 0, -1) for b in range(a, 0, -1)
        ]

    def points(self) -> tuple[int, int]:
        """(White, Black) game points: + for the winner, − for the loser; 0 while playing."""
        if self.result is None:
            return (0, 0)
        sign = 1 if self.result.winner == WHITE else -1
        return (sign * self.result.points, -sign * self.result.points)

    # -- transitions ---------------------------------------------------------------------------

    def apply_roll(self, roll: Roll) -> None:
        """Resolve the chance node with ``roll`` (ordered White-Black for the opening throw)."""
        a, b = roll
        if not (1 <= a <= 6 and 1 <= b <= 6):
            raise ValueError(f"a die shows 1-6, not {roll}")
        kind, self.chance = self.chance, None
        if kind == "opening":
            self._opening(a, b)
        elif kind == "roll":
            self._rolled(a, b, "roll")
        elif kind == "reroll":
            self._rolled(a, b, "reroll")
        else:
            raise ValueError("not a chance node")

    def apply(self, answer: int | bool | str) -> None:
        """Answer the decision: a play index, a bool (double), "take" / "drop" / "beaver"."""
        decision = self.decision
        self.decision = None
        if isinstance(decision, PlayDecision):
            assert isinstance(answer, int) and not isinstance(answer, bool)
            self._played(decision.plays[answer].result, decision.plays.dice_used)
        elif isinstance(decision, DoubleDecision):
            if answer:
                taker = 1 - self.mover
                s = self.cube_settings
                beaver_ok = s.beavers and (s.max_cube is None or 4 * self.cube.value <= s.max_cube)
                self.decision = TakeDecision(
                    taker, self._view(taker), Cube(self.cube.value, self.cube.owner), beaver_ok
                )
            else:
                self._run("roll")
        elif isinstance(decision, TakeDecision):
            self._answered(decision, str(answer))
        else:
            raise ValueError("no decision to answer")

    # -- the flow ------------------------------------------------------------------------------

    def _view(self, colour: int) -> Position:
        return self.position if colour == self.mover else self.variant.flip(self.position)

    def _switch(self) -> None:
        self.position = self.variant.flip(self.position)
        self.mover = 1 - self.mover

    def _opening(self, white: int, black: int) -> None:
        if white == black:
            # §2.12: automatic doubles on ties of the opening throw.
            s = self.cube_settings
            if self.auto_doubles < s.auto_doubles_limit and s.enabled:
                self.auto_doubles += 1
                self.cube.value *= 2
            self.chance = "opening"
            return
        starter = WHITE if white > black else 1 - WHITE
        if starter != self.mover:
            self._switch()
        if self.rules.turn.opening == "numbers_used":
            self.first_roll = (white, black) if starter == WHITE else (black, white)
        self._run("turn")

    def _run(self, step: _Next) -> None:
        """Advance from ``step`` to the next decision, chance node or the end."""
        while step is not None:
            if step == "turn":
                self.transfer_groups = sorted(self.pending_transfer[self.mover])
                self.pending_transfer[self.mover] = []
                step = "transfer"
            elif step == "transfer":
                if not self.transfer_groups:
                    step = "cube"
                    continue
                value, count = self.transfer_groups.pop(0)
                die = _DIE_NAMES[value] if count == 1 else _DIE_PLURALS[value]
                name = f"{count} {die} transferred from the opponent"  # as Game says it
                if self._start_segment((value,) * count, "transfer", name, "transfer"):
                    return
                step = self._continuation()
            elif step == "cube":
                if self.first_roll is None and not self.no_cube_yet and self._may_double():
                    self.decision = DoubleDecision(
                        self.mover, self.position, Cube(self.cube.value, self.cube.owner)
                    )
                    return
                step = "roll"
            elif step == "roll":
                if self.first_roll is not None:
                    roll, self.first_roll = self.first_roll, None
                    self._rolled(*roll, "roll")
                    return
                self.chance = "roll"
                return
            elif step == "end_turn":
                if self.result is not None:
                    return
                self._switch()
                self.no_cube_yet = False
                step = "turn"

    def _may_double(self) -> bool:
        s = self.cube_settings
        return (
            s.enabled
            and self.cube.owner in (None, self.mover)
            and (s.max_cube is None or 2 * self.cube.value <= s.max_cube)
        )

    def _rolled(self, a: int, b: int, kind: SegmentKind) -> None:
        """Segments of a roll (``kind`` "roll") or of a re-roll of a chain (§2.9)."""
        doubles = self.rules.turn.doubles
        label = "roll" if kind == "roll" else "re-roll"
        if a != b:
            if not self._start_segment((a, b), kind, f"{label} {a}-{b}", "end_turn"):
                self._run(self._continuation())
            return
        if doubles == "progression" and kind == "roll":
            self.progression = (a, a, all_home(self.position))
            self._start_stage()
            return
        after: Literal["end_turn", "reroll"] = "reroll" if doubles == "reroll" else "end_turn"
        if doubles == "reroll":
            self.progression = (a, a, False)
        if not self._start_segment((a,) * 4, kind, f"{label} {a}-{a}", after):
            self._run(self._continuation())

    def _start_stage(self) -> None:
        d, x, _ = self.progression
        self.stage_start = self.position
        label = f"stage {x} of a {d}-{d} progression" if d < 6 else "6-6"
        if not self._start_segment((x,) * 4, "stage", label, "stage"):
            self._run(self._continuation())

    def _start_segment(
        self,
        dice: tuple[int, ...],
        kind: SegmentKind,
        description: str,
        after: Literal["transfer", "end_turn", "stage", "reroll"],
    ) -> bool:
        """Set up a segment; True if it waits for a decision, False if it was played (forced)."""
        plays = self.variant.legal_plays(self.position, dice)
        self.segment = Segment(self.mover, dice, kind, description)
        self.plays = plays
        self.after = after
        if len(plays) == 1:
            self._apply_play(plays[0].result, plays.dice_used)
            return False
        self.decision = PlayDecision(self.mover, self.segment, self.position, plays)
        return True

    def _played(self, result: Position, used: int) -> None:
        self._apply_play(result, used)
        self._run(self._continuation())

    def _apply_play(self, result: Position, used: int) -> None:
        self.position = result
        self._used = used
        if result.off[0] == self.checkers:
            # §2.6: the game ends the instant a player bears off his last checker.
            loser = self.variant.loser_side(result, 1)
            points = self.variant.game_points(
                loser,
                self.cube.value,
                cube_centred=self.cube.owner is None,
                jacoby=self.cube_settings.jacoby,
            )
            self.result = GameResult(
                self.mover, points, self.variant.game_value(loser), self.cube.value, "bear_off"
            )
        elif self.rules.hitting.pins:
            # RULES.md §3.12.2: the mother rule (a win or a draw), or a frozen board.
            self.result = pinning_end(self.variant, result, self.mover, self.cube.value, used)

    def _continuation(self) -> _Next:
        """What follows the segment just played (its dice used are in ``self._used``)."""
        if self.result is not None:
            return "end_turn"
        used = self._used
        if self.after == "transfer":
            return "transfer"
        if self.after == "stage":
            return self._after_stage(used)
        if self.after == "reroll":
            d = self.progression[0]
            if used < 4:
                if used >= 1 and self.rules.turn.transfer:
                    self.pending_transfer[1 - self.mover].append((d, 4 - used))
                return "end_turn"
            self.chance = "reroll"
            return None
        return "end_turn"

    def _after_stage(self, used: int) -> _Next:
        """RULES.md §2.8 after stage x: not started, incomplete, the all-home stop, next stage."""
        d, x, last = self.progression
        start = self.stage_start
        assert start is not None
        if x == d and used == 0:
            return "end_turn"  # "Not started": nothing played, nothing transferred.
        extra_next = False
        if not last and not all_home(start) and all_home(self.position):
            on_fourth = used == 4 and self.position.off[0] == start.off[0]
            if self.rules.turn.progression_stop == "fourth_step_extra" and on_fourth:
                extra_next = True
            else:
                last = True
        if used < 4:
            lost = [(x, 4 - used)]
            if not last:
                later = [(y, 4) for y in range(x + 1, 7)]
                lost += later[:1] if extra_next else later
            if self.rules.turn.transfer:
                self.pending_transfer[1 - self.mover].extend(lost)
            return "end_turn"
        if last or x == 6:
            return "end_turn"
        if extra_next:
            last = True
        self.progression = (d, x + 1, last)
        self._start_stage()
        return None

    def _answered(self, decision: TakeDecision, answer: str) -> None:
        """§2.12: take, drop or beaver (and the doubler's answer to a beaver)."""
        allowed = {"take", "drop"} | ({"beaver"} if decision.beaver_allowed else set())
        if answer not in allowed:
            raise ValueError(f"answer must be one of {', '.join(sorted(allowed))}, not {answer!r}")
        doubler = 1 - decision.player
        if decision.after_beaver:
            # The original doubler answers the beaver: "take (play continues at 4v) or drop (2v)".
            if answer == "drop":
                self._drop(decision.player, 2, winner=doubler)
                return
            self.cube = Cube(4 * self.cube.value, doubler)
            self._run("roll")
            return
        if answer == "drop":
            self._drop(decision.player, 1, winner=doubler)
        elif answer == "take":
            self.cube = Cube(2 * self.cube.value, decision.player)
            self._run("roll")
        else:
            self.decision = TakeDecision(
                doubler,
                self._view(doubler),
                Cube(2 * self.cube.value, decision.player),
                beaver_allowed=False,
                after_beaver=True,
            )

    def _drop(self, dropper: int, factor: int, *, winner: int) -> None:
        value = self.cube.value * factor
        if self.rules.scoring.per_checker:
            value *= self.checkers - self._view(dropper).off[0]
        self.result = GameResult(winner, value, 1, self.cube.value, "drop")

    def __str__(self) -> str:
        who = COLOURS[self.mover]
        if self.result is not None:
            return f"{self.position.id()} over: {COLOURS[self.result.winner]} +{self.result.points}"
        return f"{self.position.id()} {who} to move, cube {self.cube.value}"
