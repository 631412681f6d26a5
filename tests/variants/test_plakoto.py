"""Plakoto and portes (RULES.md §3.12): pinned checkers in positions, the mother rule, draws, and
whole games cross-checked against an independent reference (tests/variants/plakoto_reference.py)."""

from __future__ import annotations

import random
from collections import Counter

import plakoto_reference as ref
import pytest
import rules_cases as rc
from hypothesis import given, settings
from hypothesis import strategies as st

from nardy.core import load_variant
from nardy.core.dice import ScriptedDice, SeededDice
from nardy.core.errors import GameStateError, InvalidPositionError
from nardy.core.game import WHITE, Game, GameResult, PlayDecision, pinning_end
from nardy.core.match import Match
from nardy.core.movegen import PINS, MoveGenerator, board_of
from nardy.core.position import Position
from nardy.core.variant import Variant

PLAKOTO = load_variant("plakoto")
DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]


def segment_dice(a: int, b: int) -> tuple[int, ...]:
    return (a, b) if a != b else (a,) * 4


# -- positions -------------------------------------------------------------------------------------

PINNED = Position.from_sides({9: 1, 2: 13}, {6: 1, 19: 14}, pinned=[6])  # PL-03's start


def test_pinned_position_round_trips() -> None:
    assert PINNED.pinned == (6,) and PINNED.pinned_counts == (1, 0)
    assert PINNED.to_json()["pinned"] == [6]
    assert Position.from_json(PINNED.to_json()) == PINNED
    assert PINNED.id() == "-M---a/--A---/------/n-----^6"
    assert Position.from_id(PINNED.id()) == PINNED
    flipped = PINNED.flip("opposite")
    assert flipped.pinned == (19,) and flipped.pinned_counts == (0, 1)
    assert flipped.flip("opposite") == PINNED
    assert PINNED.pinned_of(0, "opposite") == [6]
    assert flipped.pinned_of(1, "opposite") == [6]


def test_positions_without_pins_keep_their_json_and_id() -> None:
    start = load_variant("backgammon").start_position()
    assert start.to_json() == {
        "points": list(start.points),
        "bar": [0, 0],
        "off": [0, 0],
    }
    assert start.id() == "b----E/-C---e/E---c-/e----B"


@pytest.mark.parametrize(
    ("json", "message"),
    [
        ({"points": [0] * 24, "pinned": [3]}, "pinned"),
        ({"points": [-1] + [0] * 22 + [14], "off": [1, 14], "pinned": [1]}, "checkers"),
        ({"points": [1] + [0] * 23, "pinned": "1"}, "pinned"),
    ],
)
def test_bad_pins_are_refused(json: dict, message: str) -> None:
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_json(json)


def test_a_variant_without_pinning_refuses_pins() -> None:
    with pytest.raises(InvalidPositionError, match="does not pin"):
        load_variant("backgammon").validate(PINNED)


# -- the reference against the generator, on chosen positions -----------------------------------


@pytest.mark.parametrize("mother", ["standard", "simple", "off"])
def test_mother_positions_agree_with_the_reference(mother: str) -> None:
    variant = load_variant("plakoto", {"mother": mother})
    # White's mother alone on his 24, Black's alone on White's 1, which White can reach; then
    # the same with White's mother pinned (a finished game under mother: simple).
    positions = [Position.from_sides({24: 1, 7: 3, 5: 3, 3: 8}, {1: 1, 19: 14})]
    if mother != "simple":
        positions.append(
            Position.from_sides({7: 3, 5: 3, 3: 8}, {24: 1, 1: 1, 19: 13}, pinned=[24])
        )
    for position in positions:
        for a, b in DICE:
            dice = segment_dice(a, b)
            plays = variant.legal_plays(position, dice)
            used, results = ref.legal_results(position, dice, mother)
            assert (plays.dice_used, plays.results) == (used, results), dice


# -- whole games -------------------------------------------------------------------------------------


def _cross_check_games(seeds: range, mother: str) -> Counter[str]:
    variant = load_variant("plakoto", {"mother": mother})
    reasons: Counter[str] = Counter()
    segments = 0
    for seed in seeds:
        rng = random.Random(seed)
        game = Game(variant, SeededDice(seed), auto_forced=False)
        while game.decision is not None:
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            plays = decision.plays
            used, results = ref.legal_results(decision.position, plays.dice, mother)
            assert plays.dice_used == used, (decision.position.id(), plays.dice)
            assert plays.results == results, (decision.position.id(), plays.dice)
            segments += 1
            game.decide(rng.randrange(len(plays)))
        assert game.result is not None
        reasons[game.result.reason] += 1
    reasons["segments"] = segments
    return reasons


def test_plakoto_games_agree_with_the_reference() -> None:
    """Every segment of 20 seeded random games (the slow test plays 2,000)."""
    found = _cross_check_games(range(20), "standard")
    assert found["segments"] > 1000


@pytest.mark.slow
@pytest.mark.parametrize(("mother", "games"), [("standard", 2000), ("simple", 300), ("off", 100)])
def test_plakoto_games_agree_with_the_reference_slow(mother: str, games: int) -> None:
    found = _cross_check_games(range(1000, 1000 + games), mother)
    print(f"plakoto mother={mother}: {games} games, {found}")


def _mother_position(rng: random.Random) -> Position:
    """A random plakoto position whose opponent has his mother on the mover's 1-point, free or
    pinned beneath a checker of the mover; the mover's 15 spread over a random range of points,
    sometimes some on his own 24 (which the standard mother rule looks at)."""
    while True:
        mover: dict[int, int] = {}
        opponent: dict[int, int] = {1: 1}
        pinned: list[int] = []
        low, high = rng.choice([(2, 7), (2, 12), (2, 23), (7, 23)])
        head = rng.choice([0, 0, 1, 2, 3])
        if head:
            mover[24] = head
        for _ in range(15 - head):
            p = rng.randint(low, high)
            mover[p] = mover.get(p, 0) + 1
        if rng.random() < 0.3:  # she is pinned beneath one of his checkers moved to 1
            del opponent[1]
            pinned.append(1)
            source = rng.choice(sorted(mover))
            mover[source] -= 1
            mover[1] = 1
        free = [p for p in range(2, 25) if not mover.get(p)]
        for _ in range(14):
            p = rng.choice(free)
            opponent[p] = opponent.get(p, 0) + 1
        position = Position.from_sides(
            {p: c for p, c in mover.items() if c}, opponent, pinned=pinned
        )
        if not PLAKOTO.is_finished(position):
            return position


@pytest.mark.parametrize("mother", ["standard", "simple"])
def test_equal_dice_near_the_mother_agree_with_every_order(mother: str) -> None:
    """Where the mother rule can end the game inside a segment the order of the steps matters;
    the pinning search still plays equal dice in one order (highest source first) where that
    finds every play (MoveGenerator._mother_order) and every order elsewhere. Both must give the
    plays of the search over every order (fast=False), on random positions around a mother."""
    variant = load_variant("plakoto", {"mother": mother})
    own = MoveGenerator(variant.rules)
    every = MoveGenerator(variant.rules, fast=False)
    rng = random.Random(f"mother-{mother}")
    one_order = 0
    problems: list[str] = []
    for _ in range(40):
        position = _mother_position(rng)
        board = board_of(position)
        if len(board) == PINS:
            board.append(0)
        for die in range(1, 7):
            for count in (2, 3, 4):
                steps = (die,) * count
                one_order += own._mother_order(board, die, die, count, False) == 1
                mine = own.segment(position, steps)
                theirs = every.segment(position, steps)
                if (mine.dice_used, set(mine.plays)) != (theirs.dice_used, set(theirs.plays)):
                    problems.append(f"{position.to_json()} {steps}")
    assert one_order > 100  # the shortcut was taken, and checked
    assert not problems, f"{len(problems)} segments differ, first: {problems[:2]}"


def test_portes_plays_backgammons_moves_and_scores_one_or_two() -> None:
    """Portes = backgammon's legal plays, scored 1 / 2 (no triple game), no cube."""
    _portes_against_backgammon(range(20))


@pytest.mark.slow  # 2,000 whole games, every segment against the backgammon generator
def test_portes_against_backgammon_in_2000_games() -> None:
    _portes_against_backgammon(range(20, 2020))


def _portes_against_backgammon(seeds: range) -> None:
    """Every segment of random portes games (seeded) has backgammon's legal plays, in the same
    order, and every game scores 1, or 2 when the loser bore nothing off (RULES.md §3.12.1)."""
    portes = load_variant("portes")
    backgammon = load_variant("backgammon")
    assert not portes.rules.cube.available
    values: Counter[int] = Counter()
    for seed in seeds:
        rng = random.Random(seed)
        game = Game(portes, SeededDice(seed), auto_forced=False)
        while game.decision is not None:
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            same = backgammon.legal_plays(decision.position, decision.plays.dice)
            assert [p.result for p in decision.plays] == [p.result for p in same]
            game.decide(rng.randrange(len(decision.plays)))
        result = game.result
        assert result is not None and result.reason == "bear_off"
        loser_off = game.position.off[1]
        assert result.points == (1 if loser_off else 2)
        values[result.points] += 1
    assert set(values) == {1, 2}


# -- properties ---------------------------------------------------------------------------------------


def _opponent_pins(position: Position) -> set[int]:
    return {p for p in position.pinned if position.points[p - 1] > 0}


def _mover_pins(position: Position) -> set[int]:
    return {p for p in position.pinned if position.points[p - 1] < 0}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mother=st.sampled_from(["standard", "simple", "off"]))
def test_pin_invariants_hold_in_random_games(seed: int, mother: str) -> None:
    variant = load_variant("plakoto", {"mother": mother})
    rng = random.Random(seed)
    game = Game(variant, SeededDice(seed), auto_forced=False)
    while game.decision is not None:
        decision = game.decision
        assert isinstance(decision, PlayDecision)
        before = decision.position
        play = decision.plays[rng.randrange(len(decision.plays))]
        after = play.result
        # Checker counts are conserved, pinned checkers included.
        for position in (before, after):
            free = position.side(0, "opposite"), position.side(1, "opposite")
            pins = position.pinned_counts
            for side in (0, 1):
                assert sum(free[side].values()) + pins[side] + position.off[side] == 15
        # A pinned checker of the mover never moves (only the opponent's stack could free it).
        assert _mover_pins(before) <= _mover_pins(after)
        # A freed checker becomes a blot (freeing happens when the pinning stack leaves).
        for p in _opponent_pins(before) - _opponent_pins(after):
            assert after.points[p - 1] == -1
        # No bear-off while a checker of the mover is pinned.
        if _mover_pins(before):
            assert after.off[0] == before.off[0]
        game.decide(play)


def test_the_mother_rules_three_outcomes_occur_in_seeded_games() -> None:
    """win (a mother end), continue (a pinned mother while the pinner still holds his own 24)
    and draw (both mothers pinned), all reached by seeded random games."""
    reasons: Counter[str] = Counter()
    continued = 0
    for seed in range(80):
        rng = random.Random(seed)
        game = Game(PLAKOTO, SeededDice(seed), auto_forced=False)
        while game.decision is not None:
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            position = decision.position
            # The mover's opponent pinned the mover's mother, yet the game goes on.
            if 24 in position.pinned and position.points[23] < 0:
                continued += 1
            game.decide(rng.randrange(len(decision.plays)))
        assert game.result is not None
        reasons[game.result.reason] += 1
        if game.result.draw:
            assert game.result.points == 0
    assert reasons["mother"] and reasons["draw"] and continued


# -- PL-06: the mother exception and the draw, scripted ---------------------------------------------


def test_pl06_mother_exception_and_draw() -> None:
    # White: his mother alone on his 24, 14 at home; Black: her mother alone on her 24 (White's 1).
    start = Position.from_sides({24: 1, 2: 7, 3: 7}, {1: 1, 19: 7, 20: 7})
    # White plays 3/1 (pins Black's mother) with 2-1 … keeping his mother on his 24.
    game = Game(PLAKOTO, ScriptedDice([(2, 1), (5, 1)]), position=start, auto_forced=False)
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    game.decide("3/1 3/2")
    assert game.result is None  # White still has a checker on his own 24: the game goes on
    # Black (to move) pins White's mother: Black's 1-point is White's 24 … a draw.
    after = game.position  # Black's view
    assert 24 in after.pinned  # her mother, pinned
    black = PLAKOTO.legal_plays(after, (5, 1))
    draw = next(p for p in black if 24 in p.result.pinned and 1 in p.result.pinned)
    end = PLAKOTO.outcome(draw.result)
    assert end is not None and (end.outcome, end.value) == ("draw", 0)
    # If instead White's mother leaves his 24 while Black's is pinned: White wins 2.
    leave = Position.from_sides({24: 1, 1: 1, 2: 6, 3: 7}, {19: 7, 20: 7}, pinned=[1])
    plays = PLAKOTO.legal_plays(leave, (6, 5))
    won = [PLAKOTO.outcome(p.result) for p in plays if p.result.points[23] == 0]
    assert won and all(w is not None and (w.outcome, w.value) == ("win", 2) for w in won)
    # mother: simple: the first pin already ends the game, 2 to White.
    simple = load_variant("plakoto", {"mother": "simple"})
    pinned = simple.legal_plays(start, (2, 1)).find("3/1 3/2").result
    end = simple.outcome(pinned)
    assert end is not None and (end.outcome, end.value) == ("win", 2)
    with pytest.raises(GameStateError):
        simple.legal_plays(pinned.flip("opposite"), (6, 5))


def test_a_draw_scores_nothing_and_the_next_game_opens_with_a_throw() -> None:
    start = Position.from_sides({24: 1, 2: 7, 3: 7}, {1: 1, 19: 7, 20: 7})
    game = Game(PLAKOTO, ScriptedDice([(2, 1), (5, 1)]), position=start, auto_forced=False)
    game.decide("3/1 3/2")
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    draw = next(p for p in decision.plays if 24 in p.result.pinned and 1 in p.result.pinned)
    game.decide(draw)
    result = game.result
    assert result is not None and result.draw and result.points == 0
    assert result.reason == "draw" and game.record()["result"]["winner"] is None
    match = Match(PLAKOTO, length=5)
    match.add_result(result)
    assert match.score == [0, 0] and match.starter() is None  # a new opening throw


# -- TV-01: the tavli cycle and its score -------------------------------------------------------------


def _tavli_match(length: int) -> Match:
    return Match.of(load_variant("tavli"), length)


def _tv01_result(text: str) -> tuple[str, GameResult]:
    """``"portes: White 2"`` / ``"plakoto: draw"`` (RULES.md TV-01's ``given.results``)."""
    variant, outcome = (part.strip() for part in text.split(":"))
    if outcome == "draw":
        return variant, GameResult(WHITE, 0, 0, 1, "draw", draw=True)
    colour, points = outcome.split()
    return variant, GameResult(("White", "Black").index(colour), int(points), 1, 1, "bear_off")


def _tv01_starter(text: str) -> int | None:
    """``"White (won game 1)"`` → White; ``"opening throw (draw)"`` → None (an opening throw)."""
    return None if text.startswith("opening throw") else ("White", "Black").index(text.split()[0])


def test_tv01_the_cycle_and_the_score() -> None:
    """TV-01 read from RULES.md (tests/data/rules_cases.yaml): the games' variants, the score after
    each, the match winner and who starts each later game."""
    case = next(c for c in rc.load_cases() if c["id"] == "TV-01")
    given, expect = case["given"], case["expect"]
    match = _tavli_match(given["match_length"])
    names, scores, starters = [], [], []
    for name, result in map(_tv01_result, given["results"]):
        names.append(match.game_variant.name)
        assert match.game_variant.name == name  # the case's own label agrees with the cycle
        assert not match.cube_settings().enabled  # no cube in tavli
        match.add_result(result)
        scores.append(list(match.score))
        if not match.is_over:
            starters.append(match.starter())
    assert names == expect["games"]
    assert scores == expect["score_after_each"]
    assert match.is_over and match.winner == ("White", "Black").index(expect["winner"])
    assert starters == [_tv01_starter(t) for t in expect["starters_after_game_1"]]


def test_a_tavli_match_has_no_crawford_game() -> None:
    """RULES.md §3.12.3: "No cube, no Crawford rule": at 2-0 in a match to 3 the next game is no
    Crawford game (the records and the spectator say none), unlike a match of one variant."""
    tavli = _tavli_match(3)
    tavli.add_result(GameResult(WHITE, 2, 2, 1, "bear_off"))
    assert tavli.score == [2, 0] and not tavli.crawford_game
    plain = Match(load_variant("backgammon"), 3)
    plain.add_result(GameResult(WHITE, 2, 2, 1, "bear_off"))
    assert plain.crawford_game


def test_a_tavli_match_plays_each_game_by_its_own_rules() -> None:
    match = _tavli_match(3)
    rng = random.Random(7)
    names = []
    seed = 0
    while not match.is_over:
        game = match.new_game(SeededDice(seed))
        names.append(game.variant.name)
        while game.decision is not None:
            game.decide(rng.randrange(len(game.legal_plays())))
        assert game.result is not None
        match.add_result(game.result)
        seed += 1
    assert names[:3] == ["portes", "plakoto", "fevga"][: len(names[:3])]
    assert max(match.score) >= 3


def test_variants_are_registered() -> None:
    plakoto: Variant = load_variant("plakoto")
    assert plakoto.rules.hitting.pins and not plakoto.rules.hitting.hits
    assert plakoto.start_position().id() == "o-----/------/------/-----O"
    assert load_variant("portes").rules.hitting.hits


def test_text_board_shows_the_pinned_checker_and_counts_its_pips() -> None:
    from nardy.core.board_text import pip_counts, render_board

    text = render_board(PINNED, PLAKOTO)
    assert " 1Ox " in text and "Pinned:" in text
    assert pip_counts(PINNED, "opposite") == (9 + 2 * 13 + 6, 6 * 14 + 19)


def test_svg_draws_the_pinned_checker_beneath_the_stack() -> None:
    from nardy.svg import board

    svg = str(board(PINNED, PLAKOTO))
    assert svg.count("pinned") >= 1
    assert 'class="checker white pinned"' in svg or 'class="checker black pinned"' in svg


def test_gnubg_position_ids_refuse_pins() -> None:
    from nardy.core.gnubg import GnubgFormatError, position_id_of

    with pytest.raises(GnubgFormatError, match="pinned"):
        position_id_of(PINNED)
    assert position_id_of(load_variant("backgammon").start_position()) == "4HPwATDgc/ABMA"


def test_mat_export_refuses_plakoto() -> None:
    from nardy.core.mat import mat_game
    from nardy.core.record import of_game

    game = Game(PLAKOTO, SeededDice(3), auto_forced=False)
    with pytest.raises(GameStateError, match="cannot hold plakoto"):
        mat_game(of_game(game), (0, 0))


def test_plays_jsonl_writes_pins_as_json_dumps_would() -> None:
    import json

    from nardy.core.jsonl import _formatted_plays_text, _joined_plays_text

    start = Position.from_sides({8: 1, 1: 14}, {5: 1, 20: 7, 21: 7})  # PL-02
    plays = PLAKOTO.legal_plays(start, (3, 1))
    expected = ",".join(
        json.dumps({"text": p.text, "result": p.result.to_json()}, separators=(",", ":"))
        for p in plays
    )
    assert '"pinned":[5]' in expected
    assert _formatted_plays_text(plays) == expected == _joined_plays_text(plays)


# -- ``^`` marks a pin in the play's text as shown (RULES.md §3.12.2: ``13/7^``) -------------------


@pytest.mark.parametrize(
    "case",
    [c for c in rc.load_cases() if c["variant"] == "plakoto" and c.get("plays")],
    ids=lambda c: c["id"],
)
def test_pin_marks_match_the_rules_cases(case: dict) -> None:
    """Every play of the §3.12.2 cases (PL-02 ``8/5^ 1/off``, PL-05 ``7/1^`` …) written from its
    unmarked steps gets exactly the ``^`` marks RULES.md writes, and names a legal play."""
    from nardy.core.variant import pin_marked_text

    position = Position.from_json(rc.case_position(case))
    plays = PLAKOTO.legal_plays(position, tuple(case["dice"]))
    for play in case["plays"]:
        text = play["steps"]
        assert pin_marked_text(position, text.replace("^", "")) == text
        assert plays.find(text) is not None  # the marked text is read back as the legal play


def test_a_freed_checker_pinned_again_is_marked_each_time() -> None:
    """Moving the pinning checker on frees the blot at once (RULES.md §3.12.2 ambiguity 4); a
    later step landing there pins it again, and both pinning steps carry ``^``."""
    from nardy.core.variant import pin_marked_text

    position = Position.from_sides({8: 1, 1: 14}, {5: 1, 20: 7, 21: 7})  # PL-02: a blot on my 5
    assert pin_marked_text(position, "8/5/4 1/off") == "8/5^/4 1/off"
    board = Position.from_sides({8: 1, 6: 1, 1: 13}, {5: 1, 20: 7, 21: 7})
    assert pin_marked_text(board, "8/5/4 6/5") == "8/5^/4 6/5^"
    # A repeated chain is marked where one of its repetitions pins; the text keeps its form.
    two = Position.from_sides({8: 1, 6: 2, 1: 12}, {5: 1, 20: 7, 21: 7})
    assert pin_marked_text(two, "6/5(2)") == "6/5^(2)"


# -- RULES.md §2.6: a frozen board is a draw ---------------------------------------------------------


def test_a_frozen_board_ends_the_game_as_a_draw() -> None:
    """RULES.md §2.6: "a frozen board (neither player can ever move again …) e.g. both mothers
    pinned under `mother: off`" ends the game as a draw, 0 points to each player."""
    off = load_variant("plakoto", {"mother": "off"})
    # White: 13 on his 1, one on his 2, his mother pinned on his 24 under Black's 14 (Black's 1);
    # Black's mother pinned on her 24 (White's 1) under White's stack. No bear-off while pinned.
    start = Position.from_sides({2: 1, 1: 13}, {24: 14}, pinned=[24, 1])
    game = Game(off, ScriptedDice([(1, 1), (6, 5)]), position=start, auto_forced=False)
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    assert [str(p) for p in decision.plays] == ["2/1"]  # only one step of the four can be played
    game.decide(0)
    # Black cannot move with her 6-5 (nor any roll), and neither can White: the board is frozen.
    black = game.decision
    assert isinstance(black, PlayDecision) and [str(p) for p in black.plays] == ["(no move)"]
    game.decide(0)
    assert game.result is not None and game.decision is None
    assert (game.result.draw, game.result.points, game.result.reason) == (True, 0, "draw")
    frozen = Position.from_sides({1: 14}, {24: 14}, pinned=[24, 1])
    for seen in (frozen, frozen.flip("opposite")):
        assert all(not off.legal_plays(seen, segment_dice(a, b)).dice_used for a, b in DICE)
    # The same board one checker short of frozen is no draw: White's 2/1 is still to come.
    assert pinning_end(off, start, WHITE, 1, 0) is None
    result = pinning_end(off, frozen, WHITE, 1, 0)
    assert result is not None and result.draw and result.points == 0
