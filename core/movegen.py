"""Legal plays of one segment (RULES.md §2.2–§2.3), on plain lists of ints.

This module knows nothing of pluggy or of variant names: :class:`MoveGenerator` is built once from a
variant's compiled :class:`~nardy.core.rules.Rules` and then only reads local attributes.

The board is a list of 28 ints seen from the mover: ``b[0]`` the mover's borne-off count, ``b[1..24]``
the points (positive = mover, negative = opponent), ``b[25]`` the mover's bar, ``b[26]`` the opponent's
bar, ``b[27]`` the opponent's borne-off count. A search applies and undoes steps on one such list
(make/unmake) and keys every candidate by ``tuple(b)``, so plays are deduplicated by resulting position
(§2.3 item 7) as they are found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nardy.core.notation import Step
from nardy.core.position import CHECKERS, Position
from nardy.core.rules import Rules

Board = list[int]
BoardKey = tuple[int, ...]

BAR = 25
OPP_BAR = 26
OPP_OFF = 27
HEAD = 24

# Same-direction geometry: the opponent's point q (his coordinates) is my point ORDER[q - 1], so walking
# ORDER walks his path 1, 2, … 24 (RULES.md §3.3.5: "In M's coordinates O's path is 12, 11, …, 1, 24,
# 23, …, 13").
_ON_OPPONENT_PATH = tuple(q + 12 if q <= 12 else q - 12 for q in range(1, 25))


def board_of(position: Position) -> Board:
    """The generator's list form of a position."""
    return [position.off[0], *position.points, position.bar[0], position.bar[1], position.off[1]]


def position_of(key: Sequence[int]) -> Position:
    """The position of a board key (inverse of :func:`board_of`)."""
    return Position(tuple(key[1:25]), (key[BAR], key[OPP_BAR]), (key[0], key[OPP_OFF]))


@dataclass(frozen=True, slots=True)
class SegmentPlays:
    """The legal plays of one segment: every distinct result with one representative step list."""

    dice_used: int
    """``N`` of §2.3: how many of the segment's dice every legal play uses."""
    plays: dict[BoardKey, tuple[Step, ...]]
    """Result board key → the steps of one play reaching it (the empty play when ``N = 0``)."""
    head_limit: int | None
    """The head limit the segment was generated with (after the first-turn exception)."""


class MoveGenerator:
    """Legal-play generation for one compiled rule set."""

    def __init__(self, rules: Rules) -> None:
        self.closed_at = -rules.blocking.closed_by  # b[t] <= closed_at: the point is closed
        self.hits = rules.hitting.hits
        self.exact_bear_off = rules.bear_off.rule == "exact"
        self.home_moves = rules.bear_off.home_moves
        self.head_limit = rules.head.limit
        self.first_turn = rules.head.first_turn
        self.runner = rules.head.runner
        self.block_step = rules.blocks.six_block == "step"
        self.block_end = rules.blocks.six_block == "end"
        self.quarter_step = rules.blocks.quarter == "step"
        self.quarter_end = rules.blocks.quarter == "end"
        self.trap = rules.blocks.trap
        self.order_free = rules.order_free

    # -- public entry point -------------------------------------------------------------------------

    def segment(self, position: Position, dice: Sequence[int]) -> SegmentPlays:
        """All legal plays of a segment with these dice (2 different values, or up to 4 equal ones)."""
        board = board_of(position)
        limit = self.head_limit
        if limit is not None and board[HEAD] == CHECKERS:
            limit = self._first_turn_limit(board, tuple(dice))
        return self._search(board, tuple(dice), limit)

    # -- RULES.md §3.3.4 -----------------------------------------------------------------------------

    def _first_turn_limit(self, board: Board, dice: tuple[int, ...]) -> int:
        """The head limit of a segment starting with all 15 checkers on the head (§3.3.4)."""
        if self.first_turn == "principle":
            # "L = 2 if M2 > M1, otherwise L = 1", with M the maximum number of dice of §2.3 items 1–4.
            one = self._search(list(board), dice, 1).dice_used
            two = self._search(list(board), dice, 2).dice_used
            return 2 if two > one else 1
        die = dice[0]
        fixed = all(d == die for d in dice) and die in (3, 4, 6)
        if self.first_turn == "fixed" or not fixed:
            return 2 if fixed else 1
        # head_only: "none of the mover's points 24 − d, 24 − 2d, …, 12 + d holds an opposing checker".
        free = all(board[p] >= 0 for p in range(HEAD - die, 12 + die - 1, -die))
        return 2 if free else 1

    # -- block rules (RULES.md §3.3.5, §3.9) --------------------------------------------------------

    @staticmethod
    def _lowest_opponent_point(board: Board) -> int:
        """The opponent's lowest occupied board point in his coordinates; 25 if none can be ahead."""
        if board[OPP_OFF]:
            # "If O has borne off any checker, no block is illegal."
            return 0
        for q, p in enumerate(_ON_OPPONENT_PATH, 1):
            if board[p] < 0:
                return q
        # "If O has no checker on the board … MUST treat every block as legal."
        return 0

    @staticmethod
    def _has_any_illegal_block(board: Board, lowest: int) -> bool:
        """A run of ≥ 6 of the mover's points on O's path that starts below O's lowest checker."""
        run = 0
        for q in range(1, 25):
            if board[_ON_OPPONENT_PATH[q - 1]] > 0:
                run += 1
                if run >= 6 and q - run + 1 < lowest:
                    return True
            else:
                run = 0
        return False

    @staticmethod
    def _holds_start_quarter(board: Board) -> bool:
        """Fevga's quarter rule: the mover holds every one of his points 19…24."""
        return board[19] > 0 and board[20] > 0 and board[21] > 0 and board[22] > 0 and board[23] > 0 and (
            board[24] > 0
        )

    @staticmethod
    def _trap_point(board: Board) -> int:
        """The opponent's single occupied point in his coordinates, or 0 (RULES.md §3.9, trap rule)."""
        found = 0
        for q, p in enumerate(_ON_OPPONENT_PATH, 1):
            if board[p] < 0:
                if found:
                    return 0
                found = q
        return found

    @staticmethod
    def _is_trap(key: BoardKey, s: int) -> bool:
        """"M has a block {k … e} with e = s − 1": the six points below ``s`` on O's path are mine."""
        if s < 7:
            return False
        return all(key[_ON_OPPONENT_PATH[q - 1]] > 0 for q in range(s - 6, s))

    # -- the search (RULES.md §2.3) -----------------------------------------------------------------

    def _search(self, board: Board, dice: tuple[int, ...], head_limit: int | None) -> SegmentPlays:
        b = board
        total = len(dice)
        nondouble = total == 2 and dice[0] != dice[1]
        larger = max(dice) if dice else 0
        closed_at = self.closed_at
        hits = self.hits
        exact = self.exact_bear_off
        home_never = self.home_moves == "never"
        home_until = self.home_moves == "until_all_home"
        limit = 99 if head_limit is None else head_limit
        runner = self.runner
        lowest = self._lowest_opponent_point(b) if (self.block_step or self.block_end) else 0
        block_step = self.block_step and lowest > 0
        block_end = self.block_end and lowest > 0
        quarter_step = self.quarter_step
        quarter_end = self.quarter_end
        end_checks = block_end or quarter_end
        canonical = self.order_free and not nondouble
        illegal_block = self._has_any_illegal_block
        holds_quarter = self._holds_start_quarter
        visited: set[tuple[BoardKey, tuple[int, ...], int]] | None = (
            None if self.order_free else set()
        )

        # best[key] = [dice used, representative steps, reachable by the larger die alone]
        best: dict[BoardKey, list[object]] = {}
        steps: list[Step] = []

        def record(key: BoardKey, used: int) -> None:
            by_larger = used == 1 and nondouble and steps[0].die == larger
            entry = best.get(key)
            if entry is None:
                best[key] = [used, tuple(steps), by_larger]
                return
            if used > entry[0] or (by_larger and not entry[2]):  # type: ignore[operator]
                entry[0] = used
                entry[1] = tuple(steps)
            if by_larger:
                entry[2] = True

        def node(remaining: tuple[int, ...], head_used: int, outside: int, last_src: int) -> None:
            key = tuple(b)
            if b[0] == CHECKERS:
                # §2.3 item 2: bearing off the 15th checker "counts as having used all dice".
                record(key, total)
                return
            if not end_checks or not (
                (block_end and illegal_block(b, lowest)) or (quarter_end and holds_quarter(b))
            ):
                record(key, total - len(remaining))
            if not remaining:
                return
            if visited is not None:
                state = (key, remaining, head_used)
                if state in visited:
                    return
                visited.add(state)

            # Which points may move at all.
            if b[BAR]:
                sources: Sequence[int] = (BAR,)  # §2.2 item 1: "p MUST be 25"
            else:
                top = last_src if canonical else 24
                sources = [p for p in range(top, 0, -1) if b[p] > 0]
                if runner and not b[0] and not any(b[p] > 0 for p in range(1, 12)):
                    # Fevga runner rule: before passing, only the head checker (all on the head) or
                    # the one runner may move.
                    on_head = b[HEAD] == CHECKERS
                    sources = [p for p in sources if (p == HEAD) == on_head]

            tried: set[int] = set()
            for i, die in enumerate(remaining):
                if die in tried:
                    continue
                tried.add(die)
                rest = remaining[:i] + remaining[i + 1 :]
                for p in sources:
                    at_head = p == HEAD
                    if at_head and head_used >= limit:
                        continue
                    t = p - die
                    if t >= 1:
                        v = b[t]
                        if v <= closed_at:
                            continue
                        if p <= 6 and (home_never or (home_until and not outside)):
                            continue
                        hit = hits and v == -1
                        b[p] -= 1
                        if hit:
                            b[t] = 1
                            b[OPP_BAR] += 1
                        else:
                            b[t] = v + 1
                        entered = 1 if (p > 6 and t <= 6) else 0
                        if (block_step and illegal_block(b, lowest)) or (quarter_step and holds_quarter(b)):
                            ok = False
                        else:
                            ok = True
                        if ok:
                            steps.append(Step(p, t, die, hit))
                            node(rest, head_used + at_head, outside - entered, p)
                            steps.pop()
                        b[p] += 1
                        if hit:
                            b[t] = -1
                            b[OPP_BAR] -= 1
                        else:
                            b[t] = v
                    else:
                        if outside:
                            continue  # bear-off only while all home (§2.5)
                        if t < 0 and (exact or any(b[q] > 0 for q in range(p + 1, 7))):
                            continue
                        b[p] -= 1
                        b[0] += 1
                        if (block_step and illegal_block(b, lowest)) or (quarter_step and holds_quarter(b)):
                            ok = False
                        else:
                            ok = True
                        if ok:
                            steps.append(Step(p, 0, die, False))
                            node(rest, head_used + at_head, outside, p)
                            steps.pop()
                        b[p] += 1
                        b[0] -= 1

        outside = b[BAR] + sum(c for c in b[7:25] if c > 0)
        node(dice, 0, outside, BAR)

        if not best:
            # Only reachable from a start position that itself fails the end-of-segment checks,
            # which §2.7 excludes; nothing moves.
            return SegmentPlays(0, {tuple(board): ()}, head_limit)
        used = max(e[0] for e in best.values())  # type: ignore[type-var]
        # §2.3 item 4, the maximum-dice rule.
        kept = {k: e for k, e in best.items() if e[0] == used}
        # §2.3 item 5: "if N = 1, D consists of two different values and a remaining candidate uses the
        # larger value, only candidates using the larger value remain".
        if used == 1 and nondouble and any(e[2] for e in kept.values()):
            kept = {k: e for k, e in kept.items() if e[2]}
        if self.trap:
            # §2.3 item 6: "if a remaining candidate ends in a position without a trap, candidates
            # ending in a trap are discarded".
            s = self._trap_point(board)
            if s:
                free = {k: e for k, e in kept.items() if not self._is_trap(k, s)}
                if free:
                    kept = free
        return SegmentPlays(
            used,  # type: ignore[arg-type]
            {k: e[1] for k, e in kept.items()},  # type: ignore[misc]
            head_limit,
        )
