"""The feature sets of the pinning and the same-direction families (nardy.engines.features:
``pinning_v1`` for plakoto, ``blocking_v1`` for the long family, fevga and giul), each checked on
played positions against a direct count from the position or against the kernel's legal plays."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game
from nardy.core.position import Position, opposite_point
from nardy.core.variant import Variant
from nardy.encoding import encode_batch
from nardy.engines.features import blocking_v1, feature_set, pinning_v1
from nardy.engines.heuristic import pips

PLAKOTO = load_variant("plakoto")
ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def _afterstates(variant: Variant, games: int, seed: int = 3) -> list[Position]:
    """The positions after every turn of ``games`` games of random plays (the mover's view)."""
    rng = random.Random(seed)
    out = []
    for game_seed in range(games):
        game = Game(variant, SeededDice(game_seed))
        while game.decision is not None:
            decision = game.decision
            plays = getattr(decision, "plays", None)
            index = rng.randrange(len(plays)) if plays else 0
            if plays:
                out.append(plays[index].result)
            game.decide(index)
    return out


def _longest(flags: list[bool]) -> int:
    best = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


# -- pinning_v1 (plakoto, RULES.md §3.12.2) -------------------------------------------------------


def _sides(position: Position) -> tuple[list[int], list[int], set[int], set[int]]:
    """Free checkers per point (1…24) of the mover and the opponent, and where each has one pinned."""
    mine = [max(c, 0) for c in position.points]
    theirs = [max(-c, 0) for c in position.points]
    mine_pinned = {p for p in position.pinned if position.points[p - 1] < 0}
    theirs_pinned = {p for p in position.pinned if position.points[p - 1] > 0}
    return mine, theirs, mine_pinned, theirs_pinned


def _rolls_that_pin(position: Position, where: set[int] | None = None) -> int:
    """Of the 36 rolls, those with which some legal play of the opponent (on roll) pins a checker of
    the mover (``where``: only one standing there), by the kernel."""
    opponent = PLAKOTO.flip(position)  # his view: the mover's point p is his 25 − p

    def under_his_stacks(view: Position) -> set[int]:
        return {p for p in view.pinned if view.points[p - 1] > 0}

    before = under_his_stacks(opponent)
    count = 0
    for a, b in ROLLS:
        for play in PLAKOTO.legal_plays(opponent, (a, b)):
            new = under_his_stacks(play.result) - before
            if where is not None:
                new &= {25 - p for p in where}
            if new:
                count += 1 if a == b else 2
                break
    return count


def test_pinning_features_agree_with_the_rules_on_played_positions() -> None:
    positions = _afterstates(PLAKOTO, 8)
    assert any(p.pinned for p in positions), "the sample must hold pins"
    features = pinning_v1(encode_batch(positions))
    checked = 0
    for position, row in zip(positions, features, strict=True):
        mine, theirs, mine_pinned, theirs_pinned = _sides(position)
        # Pips: a pinned checker still has its whole way to run.
        my_pips = sum(p * n for p, n in enumerate(mine, 1)) + sum(mine_pinned)
        their_pips = sum((25 - p) * n for p, n in enumerate(theirs, 1))
        their_pips += sum(25 - p for p in theirs_pinned)
        assert row[0] * 100 == pytest.approx(my_pips)
        assert row[1] * 100 == pytest.approx(their_pips)
        mine_at = [p for p in range(1, 25) if mine[p - 1] or p in mine_pinned]
        theirs_at = [p for p in range(1, 25) if theirs[p - 1] or p in theirs_pinned]
        assert row[2] == bool(mine_at and theirs_at and max(mine_at) > min(theirs_at))
        assert row[3] * 3 == pytest.approx(len(mine_pinned))
        assert row[4] * 3 == pytest.approx(len(theirs_pinned))
        assert row[5] == (24 in mine_pinned)
        assert row[6] == (1 in theirs_pinned)
        my_blots = {p for p in range(1, 25) if mine[p - 1] == 1 and p not in theirs_pinned}
        their_blots = {p for p in range(1, 25) if theirs[p - 1] == 1 and p not in mine_pinned}
        assert row[10] * 5 == pytest.approx(len(my_blots))
        assert row[11] * 5 == pytest.approx(len(their_blots))
        closed_to_them = [mine[p - 1] >= 2 or p in theirs_pinned for p in range(1, 25)]
        closed_to_me = [theirs[p - 1] >= 2 or p in mine_pinned for p in range(1, 25)]
        assert row[12] * 6 == pytest.approx(_longest(closed_to_them))
        assert row[13] * 6 == pytest.approx(_longest(closed_to_me))
        over = PLAKOTO.mother_end(position) is not None or 15 in position.off
        if checked < 60 and my_blots and not over:
            # Every roll with which the kernel lets the opponent pin is counted (the feature may
            # count more: it does not apply the maximum-dice and larger-die rules).
            assert row[7] * 36 >= _rolls_that_pin(position) - 1e-6
            if 24 in my_blots:
                assert row[8] * 36 >= _rolls_that_pin(position, {24}) - 1e-6
            else:
                assert row[8] == 0
            checked += 1
    assert checked == 60


def test_the_pinning_rolls_are_the_shot_table_and_a_pin_closes_a_point() -> None:
    # A lone checker of the mover 5 pips in front of a lone checker of the opponent: 15 rolls,
    # the shot table's (the opponent's others are past it, on the mover's 20-point).
    lone = Position.from_sides({13: 1, 3: 14}, {8: 1, 20: 14})
    assert pinning_v1(encode_batch([lone]))[0, 7] * 36 == pytest.approx(15)
    # The kernel pins with 12 of them: with 5-5 and 6-5 the pinning checker must move on (the
    # others cannot play), which the feature, a count of shots, does not model.
    assert _rolls_that_pin(lone) == 12
    # 8 away: 6-2, 5-3, 4-4 and 2-2 (6 rolls). The mover pinning a checker on his 10-point closes
    # it (§3.12.2), which stops 2-2 and 2-6 played 2 first (6-2 still pins, 6 first); his lone
    # checker there pins, so it is no blot.
    open_ = Position.from_sides({16: 1, 3: 14}, {8: 1, 20: 14})
    closed = Position.from_sides({16: 1, 10: 1, 3: 13}, {8: 1, 20: 13}, pinned=(10,))
    assert pinning_v1(encode_batch([open_]))[0, 7] * 36 == pytest.approx(6)
    row = pinning_v1(encode_batch([closed]))[0]
    assert row[4] * 3 == 1  # the opponent's checker pinned on the mover's 10-point
    assert row[10] * 5 == 1  # one blot: the checker on 16
    assert row[7] * 36 == pytest.approx(5)
    assert _rolls_that_pin(closed) <= 5


def test_the_mothers_features() -> None:
    # The mover's mother alone on his 24-point with an opponent's checker two pips below it.
    exposed = Position.from_sides({24: 1, 6: 14}, {22: 1, 19: 14})
    row = pinning_v1(encode_batch([exposed]))[0]
    assert row[8] * 36 == pytest.approx(_rolls_that_pin(exposed, {24}))
    assert row[8] > 0
    assert row[5] == 0
    mother_pinned = Position.from_sides({6: 14}, {24: 1, 19: 13, 1: 1}, pinned=(24,))
    row = pinning_v1(encode_batch([mother_pinned]))[0]
    assert (row[5], row[6], row[3] * 3) == (1, 0, 1)


# -- blocking_v1 (the same direction, RULES.md §1.2, §3.3) ----------------------------------------

SAME = ["long", "fevga", "giul"]


def _path_of_opponent() -> list[int]:
    """The mover's points in the order the opponent passes them (his 24 … 1)."""
    return sorted(range(1, 25), key=lambda p: -opposite_point(p, "same"))


def _block_and_behind(held: list[bool], other: list[int]) -> tuple[int, int]:
    """The first longest run of ``held`` along a path and ``other``'s checkers before it."""
    best = run = end = 0
    for i, flag in enumerate(held):
        run = run + 1 if flag else 0
        if run > best:
            best, end = run, i
    return best, sum(other[: end - best + 1]) if best else 0


@pytest.mark.parametrize("name", SAME)
def test_blocking_features_agree_with_a_direct_count(name: str) -> None:
    variant = load_variant(name)
    positions = _afterstates(variant, 3)
    features = blocking_v1(encode_batch(positions))
    path = _path_of_opponent()
    for position, row in zip(positions, features, strict=True):
        mine = [max(c, 0) for c in position.points]
        theirs = [max(-c, 0) for c in position.points]
        assert (row[0] * 100, row[1] * 100) == pytest.approx(pips(position, False))
        assert row[2] * 15 == pytest.approx(mine[23])
        assert row[3] * 15 == pytest.approx(theirs[11])
        # Contact: a checker of one side still has to pass one of the other's.
        ahead_of_mine = any(
            mine[p - 1] and theirs[s - 1] for p in range(1, 25) for s in range(1, p)
        )
        theirs_own = {opposite_point(p, "same"): theirs[p - 1] for p in range(1, 25)}
        mine_own = {opposite_point(p, "same"): mine[p - 1] for p in range(1, 25)}
        ahead_of_theirs = any(
            theirs_own[q] and mine_own[r] for q in range(1, 25) for r in range(1, q)
        )
        assert row[4] == (ahead_of_mine or ahead_of_theirs)
        block, theirs_behind = _block_and_behind(
            [mine[p - 1] > 0 for p in path], [theirs[p - 1] for p in path]
        )
        mover_path = list(range(24, 0, -1))
        their_block, mine_behind = _block_and_behind(
            [theirs[p - 1] > 0 for p in mover_path], [mine[p - 1] for p in mover_path]
        )
        assert (row[5] * 6, row[6] * 6) == pytest.approx((block, their_block))
        assert (row[7] * 15, row[8] * 15) == pytest.approx((theirs_behind, mine_behind))
        assert row[9] * 15 == pytest.approx(sum(mine[:6]))
        assert row[10] * 15 == pytest.approx(sum(theirs[12:18]))
        assert (row[11] * 12, row[12] * 12) == pytest.approx(
            (sum(n > 0 for n in mine), sum(n > 0 for n in theirs))
        )


def test_a_block_counts_the_checkers_it_holds_back() -> None:
    # Long nardy: the mover holds his points 13…18 (six in a row, the opponent's 1…6 … no: his
    # own numbering 13…18 is the opponent's 1…6) — here a block of four on the mover's 9…6, which
    # the opponent passes as his 21…18, with his three checkers still on his 24 (the mover's 12).
    position = Position.from_sides({9: 3, 8: 3, 7: 3, 6: 3, 1: 3}, {12: 3, 24: 12})
    row = blocking_v1(encode_batch([position]))[0]
    assert row[5] * 6 == pytest.approx(4)
    assert row[7] * 15 == pytest.approx(3)  # the three on his head; his 12 others are past it
    assert row[3] * 15 == pytest.approx(3)


@pytest.mark.parametrize(
    ("name", "fits"),
    [("plakoto", ["pinning_v1"]), ("long", ["blocking_v1"]), ("giul", ["blocking_v1"])],
)
def test_each_family_set_fits_its_family_only(name: str, fits: list[str]) -> None:
    variant = load_variant(name)
    for set_name in ("hitting_v1", "pinning_v1", "blocking_v1"):
        if set_name in fits:
            assert feature_set(set_name, variant).size > 0
        else:
            with pytest.raises(ValueError, match=set_name):
                feature_set(set_name, variant)
    backgammon = load_variant("backgammon")
    with pytest.raises(ValueError, match="pinning instead of hitting"):
        feature_set("pinning_v1", backgammon)
    assert np.isfinite(pinning_v1(encode_batch(_afterstates(PLAKOTO, 1)))).all()


def test_contact_counts_either_side_still_to_pass() -> None:
    # The mover's checkers all in his home (1…6), the opponent's in his (the mover's 13…18): a race.
    race = Position.from_sides({1: 5, 3: 5, 6: 5}, {13: 5, 15: 5, 18: 5})
    # One checker of the opponent still on his head (the mover's 12): he must pass the mover's
    # checkers on his 13…18, though the mover has nothing left to pass.
    behind = Position.from_sides({1: 5, 3: 5, 6: 5}, {12: 1, 13: 4, 15: 5, 18: 5})
    # One checker of the mover still on his head: he must pass the opponent's.
    mine_behind = Position.from_sides({24: 1, 3: 9, 6: 5}, {13: 5, 15: 5, 18: 5})
    # The opponent on the mover's 24 (his 12) must still pass the mover's on 22 (his 10).
    across = Position.from_sides({22: 15}, {24: 15})
    rows = blocking_v1(encode_batch([race, behind, mine_behind, across]))
    assert list(rows[:, 4]) == [0, 1, 1, 1]
