"""The kernel's turn plan (core/turnplan.py) against RULES.md §2.3, §2.8-§2.11, case by case, and
its one stage transition run over numpy rows against the same transition on Python numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core.rules import TurnPlan
from nardy.core.turnplan import (
    after_stage,
    chain_handover,
    describe,
    later_steps,
    opening_outcome,
    reroll_follows,
    roll_plan,
    stage_handover,
    transfer_groups,
)

FOUR = TurnPlan()
PROGRESSION = TurnPlan(doubles="progression", transfer=True)
REROLL = TurnPlan(doubles="reroll", transfer=True)


def test_a_roll_is_two_dice_or_a_doubles_four_steps_and_doubles_follow_the_variants_plan() -> None:
    assert roll_plan(FOUR, 6, 5) == ("roll", (6, 5), True)
    assert roll_plan(FOUR, 3, 3) == ("roll", (3, 3, 3, 3), True)
    # §2.8: a rolled double is the progression's first stage; §2.9: the chain's first double.
    assert roll_plan(PROGRESSION, 3, 3) == ("stage", (3, 3, 3, 3), False)
    assert roll_plan(REROLL, 3, 3) == ("roll", (3, 3, 3, 3), False)
    assert roll_plan(PROGRESSION, 2, 5) == ("roll", (2, 5), True)


def stage(
    value: int,
    used: int,
    *,
    first: int | None = None,
    last: bool = False,
    start_home: bool = False,
    home: bool = False,
    kept_off: bool = True,
    extra: bool = False,
) -> tuple[bool, bool, bool, bool]:
    return after_stage(
        value, value if first is None else first, used, last, start_home, home, kept_off, extra
    )


def test_a_first_stage_not_started_ends_the_turn_with_nothing_owed() -> None:
    """§2.8 item 2: "nothing is played; no later stage, nothing is transferred"."""
    go_on, _, short, _ = stage(3, 0)
    assert (go_on, short) == (False, False)
    # A later stage with N = 0 is an incomplete stage (item 3), not "not started".
    go_on, _, short, last = stage(4, 0, first=3)
    assert (go_on, short, last) == (False, True, False)
    assert stage_handover(4, 0, last) == ((4, 4), (5, 4), (6, 4))


def test_an_incomplete_stage_owes_its_rest_and_the_later_stages_unless_it_is_the_last() -> None:
    """§2.8 item 3 and §2.10 item 2: the rest of this stage plus every later stage."""
    go_on, _, short, last = stage(2, 3)
    assert (go_on, short, last) == (False, True, False)
    assert stage_handover(2, 3, last) == ((2, 1), (3, 4), (4, 4), (5, 4), (6, 4))
    # Coming home in it makes it the last: "later stages that would have been played" is empty.
    _, _, short, last = stage(2, 3, home=True)
    assert short and last
    assert stage_handover(2, 3, last) == ((2, 1),)


def test_a_full_stage_is_followed_by_the_next_up_to_six() -> None:
    assert stage(3, 4)[0] is True
    assert stage(6, 4)[0] is False  # "6-6 is a single stage"; 6 is the last value


def test_all_home_when_the_progression_starts_makes_the_rolled_stage_the_last() -> None:
    go_on, _, short, _ = stage(3, 4, last=True, start_home=True, home=True)
    assert (go_on, short) == (False, False)


def test_entry_ends_the_progression_but_mad_gulbars_entry_on_step_4_earns_one_more_stage() -> None:
    """§2.8 item 4: in mad and giul the stage of entry is the last; in mad_gulbar an entry on step 4
    (all four played, not home at the start, home at the end, nothing borne off) plays exactly one
    more stage, which is the last."""
    assert stage(3, 4, home=True)[0] is False
    go_on, next_last, _, _ = stage(3, 4, home=True, extra=True)
    assert (go_on, next_last) == (True, True)
    # Bearing off in it means the entry came earlier: that stage is the last.
    assert stage(3, 4, home=True, kept_off=False, extra=True)[0] is False
    # The extra stage itself, played in full, ends the progression.
    assert stage(4, 4, first=3, last=True, start_home=True, home=True, extra=True)[0] is False


def test_a_reroll_chains_double_owes_its_unplayed_steps_only_when_started() -> None:
    """§2.9: 1 ≤ N < 4 transfers 4 − N; N = 0 transfers nothing; N = 4 is re-rolled."""
    assert chain_handover(5, 2) == ((5, 2),)
    assert chain_handover(5, 0) == ()
    assert chain_handover(5, 4) == ()


def test_transferred_steps_are_grouped_by_value_ascending() -> None:
    """§2.10 item 3: "grouped by value in ascending order", each group one segment."""
    assert transfer_groups([(6, 4), (2, 1), (4, 4)]) == [(2, 1), (4, 4), (6, 4)]
    assert transfer_groups([(3, 1), (3, 2)]) == [(3, 3)]
    assert later_steps("transfer", (2,), False, [(2, 1), (4, 2)]) == (4, 4)
    assert later_steps("stage", (5, 5, 5, 5), False, []) == (6, 6, 6, 6)
    assert later_steps("stage", (5, 5, 5, 5), True, []) == ()


def test_the_opening_throws_higher_die_starts_and_plays_both_numbers_where_used() -> None:
    """§2.11: backgammon's winner plays the two numbers; long's winner rolls again."""
    assert opening_outcome(TurnPlan(opening="numbers_used"), 2, 5) == (1, (5, 2))
    assert opening_outcome(TurnPlan(opening="numbers_used"), 6, 1) == (0, (6, 1))
    assert opening_outcome(TurnPlan(opening="winner_rolls"), 2, 5) == (1, None)


def test_segments_in_words() -> None:
    assert describe("roll", (6, 5)) == "roll 6-5"
    assert describe("reroll", (3, 3, 3, 3)) == "re-roll 3-3"
    assert describe("stage", (5, 5, 5, 5), 3) == "stage 5 of a 3-3 progression"
    assert describe("stage", (6, 6, 6, 6), 6) == "6-6"
    assert describe("transfer", (6, 6, 6)) == "3 sixes transferred from the opponent"
    assert describe("transfer", (2,)) == "1 two transferred from the opponent"


rows = st.lists(
    st.tuples(
        st.integers(1, 6),
        st.integers(1, 6),
        st.integers(0, 4),
        st.booleans(),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(rows=rows, extra=st.booleans())
def test_the_stage_transition_over_numpy_rows_is_the_one_over_numbers(
    rows: list[tuple[int, int, int, bool, bool, bool, bool]], extra: bool
) -> None:
    """The batched flow runs :func:`after_stage` over arrays: the same code must give, row by row,
    what it gives one game at a time."""
    columns = list(zip(*rows, strict=True))
    value, first, used = (np.array(c, dtype=np.int64) for c in columns[:3])
    last, start_home, home, kept_off = (np.array(c, dtype=np.bool_) for c in columns[3:])
    batched = after_stage(value, first, used, last, start_home, home, kept_off, extra)
    for i, row in enumerate(rows):
        one = after_stage(*row, extra)
        assert tuple(bool(column[i]) for column in batched) == one
        assert all(type(x) is bool for x in one)


@pytest.mark.parametrize("used", [0, 1, 2, 3])
def test_no_stage_played_in_part_earns_the_extra_stage(used: int) -> None:
    """The extra stage needs all four steps (§2.8 item 4), so a short stage never has one."""
    assert stage(3, used, home=True, extra=True)[1] is False


def test_only_a_reroll_chains_double_is_followed_by_a_reroll() -> None:
    """§2.9 for the decision's context: a chain's rolled or re-rolled double, nothing else."""
    assert reroll_follows(REROLL, "roll", (3, 3, 3, 3))
    assert reroll_follows(REROLL, "reroll", (5, 5, 5, 5))
    assert not reroll_follows(REROLL, "roll", (3, 4))
    assert not reroll_follows(REROLL, "transfer", (3, 3, 3, 3))
    assert not reroll_follows(FOUR, "roll", (3, 3, 3, 3))
    assert not reroll_follows(PROGRESSION, "stage", (3, 3, 3, 3))
