"""Transferred steps in the look-ahead (RULES.md §2.10): a turn that hands unplayed double steps
to the opponent carries them in its options, and ``V₁`` of its afterstate lets the receiver play
them before his roll, as brute force over the kernel's own game says."""

from __future__ import annotations

from typing import Any

import pytest
from test_analysis import NO_FILTER, HashEvaluator, _v0

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice
from nardy.core.game import CubeSettings, Game, PlayDecision
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.engines import search
from nardy.engines.search import ROLLS, Searcher, handed_over


@pytest.fixture(scope="module")
def gulbar() -> Variant:
    return load_variant("gulbar")


@pytest.fixture(autouse=True)
def _no_rerolls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fully played double's re-rolls are not enumerated (the turn is valued where it stands):
    what is tested here does not depend on them, and 21 × 21 re-rolled turns per double would
    make brute force slow."""
    monkeypatch.setattr(search, "MAX_REROLLS", 0)


def _blocked(variant: Variant) -> Position:
    """White to roll with a checker on 20 (its 6 blocked on 14), one on 10 (free to 4) and
    13 on his 1-point: of a 6-6 only 10/4 plays, and the other three sixes pass over."""
    position = Position.from_sides({20: 1, 10: 1, 1: 13}, {14: 3, 2: 6, 3: 6}, checkers=15)
    variant.validate(position)
    return position


def test_a_partly_played_double_hands_its_other_steps_over(gulbar: Variant) -> None:
    searcher = Searcher(gulbar, HashEvaluator())
    [[(probability, afterstate, handed)]] = searcher.options(_blocked(gulbar), (6, 6))
    # N = 1 of a rolled 6-6 played: 4 − N = 3 sixes for the opponent (§2.10 items 1-2).
    assert probability == 1.0 and handed == ((6, 3),)
    # The kernel's game hands over the same and has the receiver play them first.
    game = Game(
        gulbar,
        ScriptedDice([(6, 6), (2, 1)]),
        position=_blocked(gulbar),
        mover=0,
        auto_forced=False,
    )
    assert isinstance(game.decision, PlayDecision) and len(game.decision.plays) == 1
    game.decide(0)  # 10/4, the only play
    assert gulbar.flip(game.position) == afterstate
    assert isinstance(game.decision, PlayDecision) and game.decision.player == 1
    assert game.decision.segment.kind == "transfer" and game.decision.segment.dice == (6,) * 3
    # A non-double hands nothing over.
    assert all(h == () for option in searcher.options(_blocked(gulbar), (6, 5)) for *_, h in option)


def _receiver_ends(variant: Variant) -> list[Position]:
    """The receiver's ways to play the three sixes, from the kernel's game (its transfer
    segment's legal plays), after White's 6-6."""
    game = Game(
        variant,
        ScriptedDice([(6, 6), (2, 1)]),
        position=_blocked(variant),
        mover=0,
        cube=CubeSettings(),
        auto_forced=False,
    )
    while isinstance(game.decision, PlayDecision) and game.decision.segment.kind != "transfer":
        game.decide(0)  # White's forced 10/4
    assert isinstance(game.decision, PlayDecision)
    return [play.result for play in game.decision.plays]


def test_one_ply_lets_the_receiver_play_the_handed_steps_first(gulbar: Variant) -> None:
    evaluator = HashEvaluator()
    searcher = Searcher(gulbar, evaluator, NO_FILTER, NO_FILTER)
    [[(_, afterstate, handed)]] = searcher.options(_blocked(gulbar), (6, 6))
    got = float(searcher.values([afterstate], 1, [handed])[0])
    # Brute force: the receiver picks the way to play his three sixes that gives him the best
    # expectation over his 21 rolls, each roll's turn then played at its best by V0.
    ends = _receiver_ends(gulbar)
    assert len(ends) > 1  # a real choice

    def best_turn(start: Position, a: int, b: int) -> float:
        if a != b:  # one segment: the kernel's legal plays
            return max(_v0(gulbar, evaluator, p.result) for p in gulbar.legal_plays(start, (a, b)))
        # a double's re-roll chain, played as the search plays turns (unchanged here)
        return max(
            sum(q * _v0(gulbar, evaluator, end) for q, end, _ in option)
            for option in searcher.options(start, (a, b))
        )

    expected = -max(sum(w * best_turn(end, *roll) for roll, w in ROLLS) for end in ends)
    assert got == pytest.approx(expected, abs=1e-12)
    # Without the handed steps the value is another one (what the look-ahead used to give).
    assert float(searcher.values([afterstate], 1)[0]) != pytest.approx(got)
    # Inside the search a 6-6 from here is valued with the steps it hands over.
    assert searcher.roll_values(_blocked(gulbar), 1)[(6, 6)] == pytest.approx(got)


def test_the_gnubg_style_search_chooses_the_handed_play_at_0_ply(gulbar: Variant) -> None:
    """With the default reply filter the receiver's play of the handed steps is chosen by his
    0-ply equity on roll (as a reply is) and valued deeper."""
    evaluator = HashEvaluator()
    exact = Searcher(gulbar, evaluator, NO_FILTER, NO_FILTER)
    default = Searcher(gulbar, evaluator, NO_FILTER)
    [[(_, afterstate, handed)]] = exact.options(_blocked(gulbar), (6, 6))
    ends = _receiver_ends(gulbar)
    chosen = max(ends, key=lambda end: -_v0(gulbar, evaluator, gulbar.flip(end)))
    expected = -sum(
        w
        * max(sum(q * _v0(gulbar, evaluator, e) for q, e, _ in o) for o in exact.options(chosen, r))
        for r, w in ROLLS
    )
    assert float(default.values([afterstate], 1, [handed])[0]) == pytest.approx(expected, abs=1e-12)


def test_what_a_segment_hands_over(gulbar: Variant) -> None:
    six = (6, 6, 6, 6)
    assert handed_over(gulbar, six, "roll", 1) == ((6, 3),)
    assert handed_over(gulbar, six, "reroll", 3) == ((6, 1),)
    assert handed_over(gulbar, six, "roll", 4) == ()  # played in full: re-rolled, not passed
    assert handed_over(gulbar, six, "roll", 0) == ()  # not started: nothing passes (§2.10 item 1)
    assert handed_over(gulbar, (6, 5), "roll", 1) == ()  # a non-double never passes
    assert handed_over(gulbar, (6, 6, 6), "transfer", 1) == ()  # never passed on again (item 4)
    assert handed_over(load_variant("khachapuri"), six, "roll", 2) == ((6, 2),)
    assert handed_over(load_variant("long"), six, "roll", 1) == ()  # no transfer in long
    # A progression stage passes its later stages too, unless he is home (before or after it).
    mad_gulbar = load_variant("mad_gulbar")
    out = _blocked(mad_gulbar)  # a checker on 20: not home
    [play] = mad_gulbar.legal_plays(out, six)
    fours = ((6, 3),)  # stage 6 is the last stage anyway
    assert handed_over(mad_gulbar, six, "stage", 1, start=out, result=play.result) == fours
    five = (5, 5, 5, 5)
    assert handed_over(mad_gulbar, five, "stage", 2, start=out, result=out, first_stage=False) == (
        (5, 2),
        (6, 4),
    )
    home = Position.from_sides({1: 15}, {14: 3, 2: 6, 3: 6}, checkers=15)
    assert handed_over(mad_gulbar, five, "stage", 2, start=home, result=home) == ((5, 2),)
    assert handed_over(mad_gulbar, five, "stage", 0, start=out, result=out) == ()  # not started
    assert handed_over(mad_gulbar, five, "stage", 0, start=out, result=out, first_stage=False) == (
        (5, 4),
        (6, 4),
    )
    # The kernel agrees on the blocked 6-6.
    plays = gulbar.legal_plays(_blocked(gulbar), six)
    assert handed_over(gulbar, six, "roll", plays.dice_used) == ((6, 3),)


def test_a_decision_that_hands_steps_over_is_ranked_with_them(gulbar: Variant) -> None:
    searcher = Searcher(gulbar, HashEvaluator(), NO_FILTER, NO_FILTER)
    handed = ((6, 3),)
    [ranked] = searcher.rank(_blocked(gulbar), (6, 6, 6, 6), 1, handed=handed)
    [[(_, afterstate, _)]] = searcher.options(_blocked(gulbar), (6, 6))
    assert ranked.equity == pytest.approx(float(searcher.values([afterstate], 1, [handed])[0]))
    [plain] = searcher.rank(_blocked(gulbar), (6, 6, 6, 6), 1)
    assert plain.equity != pytest.approx(ranked.equity)


@pytest.mark.parametrize("name", ["gulbar", "mad_gulbar", "giul"])
def test_the_analysis_ranks_each_play_with_what_it_hands_over(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Played games: the play made at every decision is ranked with what the kernel's game
    then passed over (the record's transfer events), and nothing elsewhere."""
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import from_kernel_record
    from nardy.bots import make_bot, play_game
    from nardy.core.dice import SeededDice

    variant = load_variant(name)
    for seed in range(1, 80):
        bots = (make_bot("random", seed), make_bot("random", seed + 1))
        record = play_game(variant, bots, SeededDice(seed), cube=CubeSettings()).record()
        passed = [e["steps"] for e in record["events"] if e["kind"] == "transfer"]
        if passed:
            break
    else:
        pytest.fail("no game passed steps over")
    seen: list[tuple[tuple[int, int], ...]] = []
    real = Searcher.rank

    def spy(self: Searcher, *args: Any, **kwargs: Any) -> Any:
        handed = kwargs.get("handed_by_play") or ()
        seen.append(handed[kwargs["include"]] if handed else ())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Searcher, "rank", spy)
    game = from_kernel_record("g", record, ("random", "random"), CubeSettings())
    analyse_game(game, Searcher(variant, HashEvaluator()))
    assert [h for h in seen if h] == [tuple(tuple(s) for s in steps) for steps in passed]


def _ends(variant: Variant, start: Position, group: tuple[int, int]) -> list[Position]:
    """Every end of one handed group (value, count) from ``start``: the kernel's legal plays."""
    value, count = group
    return list(dict.fromkeys(p.result for p in variant.legal_plays(start, (value,) * count)))


def test_handed_groups_are_played_on_from_the_ends_the_filter_keeps(gulbar: Variant) -> None:
    """Several handed groups (a progression's, RULES.md §2.10 item 3: ascending, one after
    another): with an unbounded filter the receiver's best way through all of them; with the
    default one, each group played on from the best end of the one before by his 0-ply equity on
    roll, as a reply is chosen (every way through a giul progression's six groups is millions)."""
    evaluator = HashEvaluator()
    exact = Searcher(gulbar, evaluator, NO_FILTER, NO_FILTER)
    default = Searcher(gulbar, evaluator, NO_FILTER)
    [[(_, afterstate, _)]] = exact.options(_blocked(gulbar), (6, 6))
    handed = ((1, 2), (2, 2))
    receiver = gulbar.flip(afterstate)

    def on_roll(end: Position) -> float:
        return -_v0(gulbar, evaluator, gulbar.flip(end))

    def rolled(end: Position) -> float:  # his expectation over his rolls, each turn at its best
        return sum(
            w
            * max(
                sum(q * _v0(gulbar, evaluator, e) for q, e, _ in o) for o in exact.options(end, r)
            )
            for r, w in ROLLS
        )

    first = _ends(gulbar, receiver, handed[0])
    assert len(first) > 1  # a real choice in the first group
    every = [end for start in first for end in _ends(gulbar, start, handed[1])]
    got = float(exact.values([afterstate], 1, [handed])[0])
    assert got == pytest.approx(-max(rolled(end) for end in every), abs=1e-12)
    kept = max(first, key=on_roll)
    chosen = max(_ends(gulbar, kept, handed[1]), key=on_roll)
    assert chosen != max(every, key=on_roll)  # the way group by group is not the best overall
    got = float(default.values([afterstate], 1, [handed])[0])
    assert got == pytest.approx(-rolled(chosen), abs=1e-12)


def test_the_receivers_segment_is_valued_as_he_rolls_next(gulbar: Variant) -> None:
    """Steps handed to a player are his before his roll (§2.10 item 3): at 1-ply each way to play
    them is valued by the mean over his 21 rolls of his best turn, not as if his opponent
    rolled next; with more groups handed (``then``), he plays those first."""
    evaluator = HashEvaluator()
    searcher = Searcher(gulbar, evaluator, NO_FILTER, NO_FILTER)
    game = Game(
        gulbar,
        ScriptedDice([(6, 6)]),
        position=_blocked(gulbar),
        mover=0,
        cube=CubeSettings(),
        auto_forced=False,
    )
    game.decide(0)  # White's forced 10/4; three sixes pass to Black
    decision = game.decision
    assert isinstance(decision, PlayDecision) and decision.segment.kind == "transfer"
    receiver = decision.position
    ranking = searcher.rank(receiver, decision.segment.dice, 1, kind="transfer")
    assert len(ranking) > 1

    def rolled(start: Position) -> float:  # his expectation over his rolls, each turn at its best
        return sum(
            w
            * max(
                sum(q * _v0(gulbar, evaluator, e) for q, e, _ in o)
                for o in searcher.options(start, r)
            )
            for r, w in ROLLS
        )

    for ranked in ranking:
        result = decision.plays[ranked.index].result
        assert ranked.equity == pytest.approx(rolled(result), abs=1e-12)
    # Two fives still handed to him: his best way through them, then his roll.
    then = ((5, 2),)
    ranking = searcher.rank(receiver, decision.segment.dice, 1, kind="transfer", then=then)
    for ranked in ranking:
        result = decision.plays[ranked.index].result
        expected = max(rolled(end) for end in _ends(gulbar, result, then[0]))
        assert ranked.equity == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", ["giul", "mad_gulbar"])
def test_the_analysis_passes_the_groups_still_handed(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each transfer segment of played games is ranked with the groups handed over that follow
    it (the latest transfer event's steps of higher value), and no other segment with any."""
    from nardy.analysis.game import analyse_game
    from nardy.analysis.records import from_kernel_record
    from nardy.bots import make_bot, play_game
    from nardy.core.dice import SeededDice

    variant = load_variant(name)
    seen: list[tuple[str, tuple[int, ...], Any]] = []
    real = Searcher.rank

    def spy(self: Searcher, *args: Any, **kwargs: Any) -> Any:
        seen.append((kwargs["kind"], tuple(args[1]), kwargs.get("then", ())))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Searcher, "rank", spy)
    for seed in range(1, 200):
        bots = (make_bot("random", seed), make_bot("random", seed + 1))
        record = play_game(variant, bots, SeededDice(seed), cube=CubeSettings()).record()
        groups = [e["steps"] for e in record["events"] if e["kind"] == "transfer"]
        if any(len(steps) > 1 for steps in groups):
            break
    else:
        pytest.fail("no game handed over two groups at once")
    game = from_kernel_record("g", record, ("random", "random"), CubeSettings())
    analyse_game(game, Searcher(variant, HashEvaluator()), ply=0)
    transfers = [(dice, then) for kind, dice, then in seen if kind == "transfer"]
    assert all(then == () for kind, _, then in seen if kind != "transfer")
    expected = []
    for steps in groups:
        ordered = sorted((v, c) for v, c in steps)
        expected += [((v,) * c, tuple(ordered[k + 1 :])) for k, (v, c) in enumerate(ordered)]
    # Each group handed over that asked for a decision is ranked with those after it.
    assert transfers and all(t in expected for t in transfers)
    assert any(then for _, then in transfers)
