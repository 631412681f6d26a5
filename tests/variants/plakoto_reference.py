"""An independent reference of plakoto's legal plays (RULES.md §3.12.2, §2.3), for the tests.

Written from the rules text alone, sharing no code with the move generator: a state is two
count lists and two sets of pinned points, every order of the dice is tried step by step, every
sequence is a candidate, and §2.3's maximum-dice and larger-die rules then pick the plays.
"""

from __future__ import annotations

from dataclasses import dataclass

from nardy.core.position import Position

N = 15


@dataclass(frozen=True)
class State:
    """Everything in the mover's coordinates (1…24); index 0 unused."""

    mover: tuple[int, ...]
    """The mover's free checkers per point."""
    opponent: tuple[int, ...]
    """The opponent's free checkers per point."""
    mover_pinned: frozenset[int]
    """Points where a checker of the mover lies pinned (beneath an opposing stack)."""
    opponent_pinned: frozenset[int]
    mover_off: int
    opponent_off: int


def state_of(position: Position) -> State:
    mover = [0] * 25
    opponent = [0] * 25
    mover_pinned = set()
    opponent_pinned = set()
    for i, count in enumerate(position.points, 1):
        if count > 0:
            mover[i] = count
        elif count < 0:
            opponent[i] = -count
    for p in position.pinned:
        (mover_pinned if position.points[p - 1] < 0 else opponent_pinned).add(p)
    assert position.bar == (0, 0)
    return State(
        tuple(mover),
        tuple(opponent),
        frozenset(mover_pinned),
        frozenset(opponent_pinned),
        position.off[0],
        position.off[1],
    )


def position_of_state(state: State) -> Position:
    return Position.from_sides(
        {p: c for p, c in enumerate(state.mover) if c},
        {p: c for p, c in enumerate(state.opponent) if c},
        off=(state.mover_off, state.opponent_off),
        pinned=sorted(state.mover_pinned | state.opponent_pinned),
    )


def step(state: State, p: int, die: int) -> State | None:
    """The state after the mover's checker on ``p`` moves ``die``, or None if illegal."""
    if state.mover[p] < 1:
        return None  # only free checkers move; a pinned checker MUST NOT move
    t = p - die
    if t >= 1:
        # Closed: an opposing stack of two or more, or one that pins a checker of the mover.
        if state.opponent[t] >= 2 or (state.opponent[t] >= 1 and t in state.mover_pinned):
            return None
    else:
        # All home: every checker not borne off on 1…6, none pinned.
        if state.mover_pinned or any(state.mover[7:]):
            return None
        if t < 0 and any(state.mover[p + 1 : 7]):
            return None
    mover = list(state.mover)
    opponent = state.opponent
    opponent_pinned = state.opponent_pinned
    off = state.mover_off
    mover[p] -= 1
    if mover[p] == 0 and p in opponent_pinned:
        # The last checker of the pinning stack leaves: the one beneath is freed at once.
        opponent_pinned = opponent_pinned - {p}
        opponent = (*opponent[:p], opponent[p] + 1, *opponent[p + 1 :])
    if t >= 1:
        if opponent[t] == 1:  # a blot: pinned by this step
            opponent = (*opponent[:t], 0, *opponent[t + 1 :])
            opponent_pinned = opponent_pinned | {t}
        mover[t] += 1
    else:
        off += 1
    return State(
        tuple(mover), opponent, state.mover_pinned, opponent_pinned, off, state.opponent_off
    )


def game_over(state: State, mother: str) -> bool:
    """Whether the game ended after a step of the mover (15th off, or the mother rule)."""
    if state.mover_off == N:
        return True
    if mother == "off":
        return False
    my_mother_pinned = 24 in state.mover_pinned  # my own 24
    her_mother_pinned = 1 in state.opponent_pinned  # her own 24 is my 1
    if mother == "simple":
        return my_mother_pinned or her_mother_pinned
    if my_mother_pinned and her_mother_pinned:
        return True  # a draw
    if her_mother_pinned and state.mover[24] == 0 and 24 not in state.mover_pinned:
        return True
    return my_mother_pinned and state.opponent[1] == 0 and 1 not in state.opponent_pinned


def legal_results(
    position: Position, dice: tuple[int, ...], mother: str = "standard"
) -> tuple[int, set[Position]]:
    """(N, the distinct results) of RULES.md §2.3 for a plakoto segment."""
    start = state_of(position)
    total = len(dice)
    # candidate: (final state, dice used, the die of a one-step candidate)
    candidates: set[tuple[State, int, int]] = set()
    seen: set[tuple[State, tuple[int, ...], int]] = set()

    def walk(state: State, remaining: tuple[int, ...], used: int, first_die: int) -> None:
        key = (state, remaining, first_die)
        if key in seen:
            return
        seen.add(key)
        candidates.add((state, used, first_die))
        sources = [p for p in range(1, 25) if state.mover[p]]
        for i, die in enumerate(remaining):
            if die in remaining[:i]:
                continue  # the same die again: the same children
            rest = remaining[:i] + remaining[i + 1 :]
            for p in sources:
                after = step(state, p, die)
                if after is None:
                    continue
                first = die if used == 0 else first_die
                if game_over(after, mother):
                    candidates.add((after, total, first))  # counts as using every die
                else:
                    walk(after, rest, used + 1, first)

    walk(start, dice, 0, 0)
    most = max(used for _, used, _ in candidates)
    kept = [(s, first) for s, used, first in candidates if used == most]
    if most == 1 and total == 2 and dice[0] != dice[1]:
        larger = max(dice)
        if any(first == larger for _, first in kept):
            kept = [(s, first) for s, first in kept if first == larger]
    return most, {position_of_state(s) for s, _ in kept}
